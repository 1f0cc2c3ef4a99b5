/*
 * Vlen sequences of variable-length elements written and read by libhdf5 itself, for
 * test/api/nested-vlen.test.ts: Debian's h5py 3.7 crashes on a vlen of compounds with vlen fields
 * (h5py's own test_nested_compound_vlen), so the C library is the oracle for those.
 *
 *   nested_vlen write FILE           datasets "ints" and "strs" and the root attribute "ints_attr"
 *   nested_vlen read FILE NAME       one JSON line: the values of dataset NAME ("ints" or "strs")
 *
 * "ints": compound {f1: vlen of compound {a: vlen of int32, b: vlen of int32}, f2: int64}, shape (3,)
 * "strs": compound {f: vlen of compound {a: vlen string, b: vlen string}}, shape (2,)
 * Build: gcc -I/usr/include/hdf5/serial nested_vlen.c -lhdf5_serial
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { hvl_t a, b; } inner_t;
typedef struct { hvl_t f1; long long f2; } outer_t;
typedef struct { char *a, *b; } sinner_t;
typedef struct { hvl_t f; } souter_t;

static hid_t ints_type(void) {
  hid_t vi = H5Tvlen_create(H5T_NATIVE_INT32);
  hid_t in = H5Tcreate(H5T_COMPOUND, sizeof(inner_t));
  H5Tinsert(in, "a", HOFFSET(inner_t, a), vi);
  H5Tinsert(in, "b", HOFFSET(inner_t, b), vi);
  hid_t vin = H5Tvlen_create(in);
  hid_t out = H5Tcreate(H5T_COMPOUND, sizeof(outer_t));
  H5Tinsert(out, "f1", HOFFSET(outer_t, f1), vin);
  H5Tinsert(out, "f2", HOFFSET(outer_t, f2), H5T_NATIVE_LLONG);
  H5Tclose(vi); H5Tclose(in); H5Tclose(vin);
  return out;
}

static hid_t strs_type(void) {
  hid_t vs = H5Tcopy(H5T_C_S1);
  H5Tset_size(vs, H5T_VARIABLE);
  H5Tset_cset(vs, H5T_CSET_UTF8);
  hid_t in = H5Tcreate(H5T_COMPOUND, sizeof(sinner_t));
  H5Tinsert(in, "a", HOFFSET(sinner_t, a), vs);
  H5Tinsert(in, "b", HOFFSET(sinner_t, b), vs);
  hid_t vin = H5Tvlen_create(in);
  hid_t out = H5Tcreate(H5T_COMPOUND, sizeof(souter_t));
  H5Tinsert(out, "f", HOFFSET(souter_t, f), vin);
  H5Tclose(vs); H5Tclose(in); H5Tclose(vin);
  return out;
}

static hvl_t ints(int n, int first) {
  hvl_t v; v.len = n; v.p = n ? malloc(n * sizeof(int)) : NULL;
  for (int i = 0; i < n; i++) ((int *)v.p)[i] = first + i;
  return v;
}

static int write_file(const char *path) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t t = ints_type();
  /* row 0: two inner elements; row 1: none; row 2: one with an empty a */
  inner_t r0[2] = {{ints(2, 1), ints(3, 6)}, {ints(4, 10), ints(5, 16)}};
  inner_t r2[1] = {{ints(0, 0), ints(1, -7)}};
  outer_t rows[3] = {{{2, r0}, 2}, {{0, NULL}, 3}, {{1, r2}, -4}};
  hsize_t dims[1] = {3};
  hid_t s = H5Screate_simple(1, dims, NULL);
  hid_t d = H5Dcreate2(f, "ints", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) return 1;
  H5Dclose(d); H5Sclose(s);
  hid_t as = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "ints_attr", t, as, H5P_DEFAULT, H5P_DEFAULT);
  if (H5Awrite(a, t, &rows[0]) < 0) return 1;
  H5Aclose(a); H5Sclose(as); H5Tclose(t);

  t = strs_type();
  sinner_t q0[2] = {{"apples", "bananas"}, {"peaches", ""}};
  sinner_t q1[1] = {{"\xc3\xa9t\xc3\xa9", "\"q\""}};
  souter_t srows[2] = {{{2, q0}}, {{1, q1}}};
  dims[0] = 2;
  s = H5Screate_simple(1, dims, NULL);
  d = H5Dcreate2(f, "strs", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, srows) < 0) return 1;
  H5Dclose(d); H5Sclose(s); H5Tclose(t);
  return H5Fclose(f) < 0;
}

static void print_ints(hvl_t v) {
  printf("[");
  for (size_t i = 0; i < v.len; i++) printf("%s%d", i ? "," : "", ((int *)v.p)[i]);
  printf("]");
}

/* a JSON string of UTF-8 text (quotes and backslashes escaped; the test's strings need no more) */
static void print_str(const char *s) {
  printf("\"");
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\");
    printf("%c", *s);
  }
  printf("\"");
}

static int read_file(const char *path, const char *name) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0) return 1;
  hid_t s = H5Dget_space(d);
  hssize_t n = H5Sget_simple_extent_npoints(s);
  int strs = strcmp(name, "strs") == 0;
  hid_t t = strs ? strs_type() : ints_type();
  void *buf = calloc(n ? n : 1, strs ? sizeof(souter_t) : sizeof(outer_t));
  if (H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) return 1;
  printf("[");
  for (hssize_t i = 0; i < n; i++) {
    printf("%s[", i ? "," : "");
    hvl_t seq = strs ? ((souter_t *)buf)[i].f : ((outer_t *)buf)[i].f1;
    printf("[");
    for (size_t k = 0; k < seq.len; k++) {
      printf("%s[", k ? "," : "");
      if (strs) {
        sinner_t *e = &((sinner_t *)seq.p)[k];
        print_str(e->a); printf(","); print_str(e->b);
      } else {
        inner_t *e = &((inner_t *)seq.p)[k];
        print_ints(e->a); printf(","); print_ints(e->b);
      }
      printf("]");
    }
    printf("]");
    if (!strs) printf(",%lld", ((outer_t *)buf)[i].f2);
    printf("]");
  }
  printf("]\n");
  H5Dvlen_reclaim(t, s, H5P_DEFAULT, buf);
  free(buf);
  H5Tclose(t); H5Sclose(s); H5Dclose(d);
  return H5Fclose(f) < 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "write") == 0) return write_file(argv[2]);
  if (argc == 4 && strcmp(argv[1], "read") == 0) return read_file(argv[2], argv[3]);
  fprintf(stderr, "usage: nested_vlen write FILE | nested_vlen read FILE NAME\n");
  return 2;
}
