/**
 * Loading libhdf5 through koffi, and the checked function table.
 *
 * This directory (`src/hdf5/`) is the only code that imports koffi (DESIGN.md section 1).
 * Every function here runs on the main thread: the HDF5 library is not thread-safe.
 *
 * Library discovery: `HDF5_LIBRARY` (a path or soname) first, then the usual names
 * (`libhdf5_serial.so.103` on Debian/Ubuntu, `libhdf5.so`, versioned sonames of 1.12/1.14,
 * `libhdf5.dylib`). The version is read with `H5get_libversion`; 1.10.3 or later is required
 * (for `H5Oget_info2`/`H5Ovisit2`). The 1.12+ renames (`H5Literate1`, `H5Lget_info1`) are the
 * one seam: see `linkSymbol()`.
 */
import koffi from 'koffi';
import { H5StoreError } from '../errors.js';
import { H5E_DEFAULT, H5E_WALK_DOWNWARD } from './constants.js';

/** An HDF5 identifier (`hid_t`). koffi returns 64-bit values as bigint when they exceed 2^53. */
export type Hid = bigint | number;

/**
 * Define a named koffi type once per process. Type names are global to koffi, and a process may
 * load this module twice (test runners that mix `require` and `import` get two instances): the
 * second definition reuses the first.
 */
export function named<T>(name: string, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (/Duplicate type name/.test(String((e as Error).message))) return koffi.resolve(name) as T;
    throw e;
  }
}

for (const [name, type] of [
  ['hid_t', 'int64_t'],
  ['herr_t', 'int'],
  ['htri_t', 'int'],
  ['hsize_t', 'uint64_t'],
  ['hssize_t', 'int64_t'],
  ['haddr_t', 'uint64_t'],
  ['hbool_t', 'bool'],
  ['ssize_t_', 'int64_t'],
]) {
  named(name, () => koffi.alias(name, type));
}

const CANDIDATES = [
  'libhdf5_serial.so.103',
  'libhdf5.so.103',
  'libhdf5_serial.so',
  'libhdf5.so',
  'libhdf5.so.310',
  'libhdf5.so.320',
  'libhdf5.so.200',
  'libhdf5_serial.so.310',
  'libhdf5_serial.so.200',
  '/usr/lib/x86_64-linux-gnu/hdf5/serial/libhdf5.so',
  '/usr/lib/aarch64-linux-gnu/hdf5/serial/libhdf5.so',
  'libhdf5.dylib',
  '/opt/homebrew/lib/libhdf5.dylib',
  '/usr/local/lib/libhdf5.dylib',
];

/** Raised when libhdf5 cannot be found or is too old; the message says what to install. */
export class Hdf5LoadError extends Error {}

function loadLibrary(): { lib: ReturnType<typeof koffi.load>; path: string } {
  const explicit = process.env.HDF5_LIBRARY;
  const names = explicit ? [explicit] : CANDIDATES;
  const failures: string[] = [];
  for (const name of names) {
    try {
      // RTLD_GLOBAL: filter plugins that do not link libhdf5 themselves resolve its symbols.
      return { lib: koffi.load(name, { global: true }), path: name };
    } catch (e) {
      failures.push(`${name}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  throw new Hdf5LoadError(
    `Cannot load the HDF5 C library (${explicit ? 'HDF5_LIBRARY=' + explicit : 'tried ' + names.length + ' names'}). ` +
      'Install it (Debian/Ubuntu: apt-get install libhdf5-103-1; macOS: brew install hdf5) ' +
      'or set HDF5_LIBRARY to the path of libhdf5.so. Details: ' +
      failures.slice(0, 3).join('; '),
  );
}

/**
 * Where libhdf5 looks for the files a dataset names (external raw storage, `H5Pset_external`;
 * virtual dataset sources, `H5Pset_virtual`): relative names are resolved against the directory
 * of the HDF5 file that names them (`${ORIGIN}`), never against the server's working directory.
 * libhdf5 reads these variables when a dataset is opened and they supersede the dataset access
 * property list (`H5Pset_efile_prefix`, `H5Pset_virtual_prefix`), which h5store could not pass
 * anyway: it opens objects by address (`H5Oopen_by_addr`, default access properties). They are
 * set before the library loads and override whatever the environment had, so the resolution
 * that `src/store/access/reach.ts` checks is the one libhdf5 performs.
 */
export const FILE_PREFIX = '${ORIGIN}';
process.env.HDF5_EXTFILE_PREFIX = FILE_PREFIX;
process.env.HDF5_VDS_PREFIX = FILE_PREFIX;

const loaded = loadLibrary();
const lib = loaded.lib;
/** The loaded libhdf5 (for modules of src/hdf5 that bind functions of their own). */
export const LIB = lib;

// Debian's LZF plugin (hdf5-plugin-lzf) calls lzf_compress without linking liblzf: make liblzf's
// symbols global before libhdf5 loads plugins, so the plugin resolves (h5py has its own copy).
// The handle must stay referenced for the life of the process: koffi unloads a library
// (dlclose) when its handle is garbage-collected, and the plugin would then lose lzf_compress and
// lzf_decompress (LZF data "cannot be decoded" after the first collection).
export const LIBLZF: ReturnType<typeof koffi.load> | undefined = (() => {
  for (const name of ['liblzf.so.1', 'liblzf.so']) {
    try {
      return koffi.load(name, { global: true });
    } catch {
      /* no liblzf: the LZF plugin stays unavailable */
    }
  }
  return undefined;
})();

const H5open = lib.func('herr_t H5open()');
if (H5open() < 0) throw new Hdf5LoadError('H5open() failed');
// Shut libhdf5 down while every library is still mapped. On a natural exit Node first runs
// koffi's finalizers (dlclose of each handle) and only then the C atexit handlers, where
// libhdf5's own shutdown closes the filter plugins it loaded: closing the last plugin then
// unmaps libhdf5 under its own feet (a segmentation fault at exit once a plugin was used).
const H5close = lib.func('herr_t H5close()');
process.once('exit', () => {
  H5close();
});
const H5get_libversion = lib.func(
  'herr_t H5get_libversion(_Out_ unsigned int *maj, _Out_ unsigned int *min, _Out_ unsigned int *rel)',
);
const vmaj = [0];
const vmin = [0];
const vrel = [0];
H5get_libversion(vmaj, vmin, vrel);

/** The loaded library's version and where it came from. */
export const LIB_INFO = {
  path: loaded.path,
  major: vmaj[0],
  minor: vmin[0],
  release: vrel[0],
  version: `${vmaj[0]}.${vmin[0]}.${vrel[0]}`,
};

if (LIB_INFO.major !== 1 || LIB_INFO.minor < 10 || (LIB_INFO.minor === 10 && LIB_INFO.release < 3)) {
  throw new Hdf5LoadError(`HDF5 ${LIB_INFO.version} is too old: h5store needs libhdf5 1.10.3 or later`);
}
const IS_110 = LIB_INFO.minor === 10;

/**
 * The one version seam: 1.10 exports `H5Literate`/`H5Lget_info`; 1.12+ keep the same
 * (address-based) signatures under the `1` suffix.
 */
function linkSymbol(name: string): string {
  return IS_110 ? name : name + '1';
}

// ---------------------------------------------------------------------------------------------
// Error stack capture (DESIGN.md section 1): automatic printing off; on a negative return the
// stack is walked into one H5StoreError and cleared.

const H5Eset_auto2 = lib.func('herr_t H5Eset_auto2(hid_t estack, void *func, void *client)');
const H5Eclear2 = lib.func('herr_t H5Eclear2(hid_t estack)');
const H5Ewalk_cb = named('H5E_walk2_t', () => koffi.proto('herr_t H5E_walk2_t(unsigned int n, void *err, void *client)'));
const H5Ewalk2 = lib.func('herr_t H5Ewalk2(hid_t estack, int direction, H5E_walk2_t *func, void *client)');
const H5Eget_msg = lib.func('ssize_t_ H5Eget_msg(hid_t msg_id, void *type, _Out_ uint8_t *msg, size_t size)');
H5Eset_auto2(H5E_DEFAULT, null, null);

let walked: string[] = [];
const walkCallback = koffi.register((_n: number, err: bigint) => {
  try {
    const minNum = koffi.decode(err, 16, 'int64_t') as Hid;
    const func = koffi.decode(err, 32, 'const char *') as string;
    const desc = koffi.decode(err, 48, 'const char *') as string;
    const buf = Buffer.alloc(256);
    const n = Number(H5Eget_msg(minNum, null, buf, 256));
    const minor = n > 0 ? buf.toString('latin1', 0, Math.min(n, 255)) : '';
    walked.push(`${func}: ${desc}${minor ? ' (' + minor + ')' : ''}`);
  } catch {
    /* never throw into C */
  }
  return 0;
}, koffi.pointer(H5Ewalk_cb));

/** Read and clear the current HDF5 error stack; innermost (most specific) entry last. */
export function takeErrorStack(): string[] {
  walked = [];
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walkCallback, null);
  H5Eclear2(H5E_DEFAULT);
  const out = walked;
  walked = [];
  return out;
}

/**
 * A failed libhdf5 call. `stack` holds the HDF5 error stack (outermost first); the message names
 * the function and the innermost HDF5 messages. Default code `Internal`; callers that know
 * better (e.g. "not an HDF5 file") map it to another code.
 */
export class Hdf5Error extends H5StoreError {
  readonly fn: string;
  readonly stack_: string[];
  constructor(fn: string, stack: string[]) {
    const detail = stack.length ? stack.slice(-2).join('; ') : 'no HDF5 error stack';
    super('Internal', `HDF5 error in ${fn}: ${detail}`);
    this.fn = fn;
    this.stack_ = stack;
  }
  /** True when any stack entry contains `text` (case-insensitive). */
  mentions(text: string): boolean {
    const t = text.toLowerCase();
    return this.stack_.some((s) => s.toLowerCase().includes(t));
  }
}

// ---------------------------------------------------------------------------------------------
// Function table. Return-type conventions, checked automatically:
//   hid_t, herr_t, ssize_t_  -> negative throws Hdf5Error, else the value is returned
//   htri_t                   -> negative throws, else a boolean
//   anything else            -> returned unchecked

const PROTOS = [
  // library
  'herr_t H5free_memory(void *mem)',
  'herr_t H5garbage_collect()',
  // identifiers
  'int H5Iget_type(hid_t id)',
  'htri_t H5Iis_valid(hid_t id)',
  'hid_t H5Iget_file_id(hid_t id)',
  'int H5Iget_ref(hid_t id)',
  // files
  'hid_t H5Fopen(const char *name, unsigned int flags, hid_t fapl)',
  'hid_t H5Fcreate(const char *name, unsigned int flags, hid_t fcpl, hid_t fapl)',
  'herr_t H5Fclose(hid_t fid)',
  'herr_t H5Fflush(hid_t obj, int scope)',
  'ssize_t_ H5Fget_obj_count(hid_t fid, unsigned int types)',
  'ssize_t_ H5Fget_obj_ids(hid_t fid, unsigned int types, size_t max, void *ids)',
  'htri_t H5Fis_hdf5(const char *name)',
  'herr_t H5Fget_filesize(hid_t fid, _Out_ hsize_t *size)',
  'hid_t H5Fget_create_plist(hid_t fid)',
  'herr_t H5Pget_version(hid_t fcpl, _Out_ unsigned int *super, _Out_ unsigned int *freelist, _Out_ unsigned int *stab, _Out_ unsigned int *shhdr)',
  // property lists
  'hid_t H5Pcreate(hid_t cls)',
  'herr_t H5Pclose(hid_t plist)',
  'hid_t H5Pcopy(hid_t plist)',
  'herr_t H5Pset_fclose_degree(hid_t fapl, int degree)',
  'herr_t H5Pset_fapl_core(hid_t fapl, size_t increment, hbool_t backing_store)',
  'herr_t H5Pset_file_image(hid_t fapl, const void *buf, size_t len)',
  'herr_t H5Pset_sieve_buf_size(hid_t fapl, size_t size)',
  'herr_t H5Pset_libver_bounds(hid_t fapl, int low, int high)',
  'herr_t H5Pset_file_space_strategy(hid_t fcpl, int strategy, hbool_t persist, hsize_t threshold)',
  'herr_t H5Pset_link_creation_order(hid_t gcpl, unsigned int flags)',
  'herr_t H5Pget_link_creation_order(hid_t gcpl, _Out_ unsigned int *flags)',
  'herr_t H5Pset_attr_creation_order(hid_t ocpl, unsigned int flags)',
  'herr_t H5Pget_attr_creation_order(hid_t ocpl, _Out_ unsigned int *flags)',
  'herr_t H5Pset_obj_track_times(hid_t ocpl, hbool_t track)',
  'herr_t H5Pset_create_intermediate_group(hid_t lcpl, unsigned int crt)',
  'herr_t H5Pset_char_encoding(hid_t plist, int encoding)',
  'herr_t H5Pset_chunk(hid_t dcpl, int ndims, const void *dims)',
  'int H5Pget_chunk(hid_t dcpl, int max_ndims, void *dims)',
  'herr_t H5Pset_layout(hid_t dcpl, int layout)',
  'int H5Pget_layout(hid_t dcpl)',
  'herr_t H5Pset_deflate(hid_t dcpl, unsigned int level)',
  'herr_t H5Pset_shuffle(hid_t dcpl)',
  'herr_t H5Pset_fletcher32(hid_t dcpl)',
  'herr_t H5Pset_nbit(hid_t dcpl)',
  'herr_t H5Pset_scaleoffset(hid_t dcpl, int scale_type, int scale_factor)',
  'herr_t H5Pset_filter(hid_t dcpl, int filter, unsigned int flags, size_t cd_nelmts, const void *cd_values)',
  'int H5Pget_nfilters(hid_t dcpl)',
  'int H5Pget_filter2(hid_t dcpl, unsigned int idx, _Out_ unsigned int *flags, _Inout_ size_t *cd_nelmts, void *cd_values, size_t namelen, void *name, _Out_ unsigned int *config)',
  'htri_t H5Zfilter_avail(int filter)',
  'herr_t H5Zget_filter_info(int filter, _Out_ unsigned int *config)',
  'herr_t H5Pset_fill_value(hid_t dcpl, hid_t type, const void *value)',
  'herr_t H5Pget_fill_value(hid_t dcpl, hid_t type, void *value)',
  'herr_t H5Pfill_value_defined(hid_t dcpl, _Out_ int *status)',
  'herr_t H5Pset_fill_time(hid_t dcpl, int fill_time)',
  'herr_t H5Pget_fill_time(hid_t dcpl, _Out_ int *fill_time)',
  'herr_t H5Pset_alloc_time(hid_t dcpl, int alloc_time)',
  'herr_t H5Pget_alloc_time(hid_t dcpl, _Out_ int *alloc_time)',
  'herr_t H5Pset_chunk_cache(hid_t dapl, size_t nslots, size_t nbytes, double w0)',
  'herr_t H5Pset_elink_cb(hid_t lapl, void *func, void *op_data)',
  // external raw storage and virtual dataset mappings (dataset creation property lists)
  'int H5Pget_external_count(hid_t dcpl)',
  'herr_t H5Pget_external(hid_t dcpl, unsigned int idx, size_t name_size, void *name, _Out_ int64_t *offset, _Out_ hsize_t *size)',
  'herr_t H5Pget_virtual_count(hid_t dcpl, _Out_ size_t *count)',
  'ssize_t_ H5Pget_virtual_filename(hid_t dcpl, size_t index, void *name, size_t size)',
  'ssize_t_ H5Pget_virtual_dsetname(hid_t dcpl, size_t index, void *name, size_t size)',
  'hid_t H5Pget_virtual_vspace(hid_t dcpl, size_t index)',
  'hid_t H5Pget_virtual_srcspace(hid_t dcpl, size_t index)',
  // datasets
  'hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl)',
  'hid_t H5Dcreate_anon(hid_t loc, hid_t type, hid_t space, hid_t dcpl, hid_t dapl)',
  'hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl)',
  'herr_t H5Dclose(hid_t did)',
  'hid_t H5Dget_space(hid_t did)',
  'hid_t H5Dget_type(hid_t did)',
  'hid_t H5Dget_create_plist(hid_t did)',
  'herr_t H5Dread(hid_t did, hid_t memtype, hid_t memspace, hid_t filespace, hid_t xfer, void *buf)',
  'herr_t H5Dwrite(hid_t did, hid_t memtype, hid_t memspace, hid_t filespace, hid_t xfer, const void *buf)',
  'herr_t H5Dset_extent(hid_t did, const void *size)',
  'herr_t H5Dvlen_reclaim(hid_t type, hid_t space, hid_t xfer, void *buf)',
  'hsize_t H5Dget_storage_size(hid_t did)',
  'haddr_t H5Dget_offset(hid_t did)',
  // dataspaces
  'hid_t H5Screate(int cls)',
  'hid_t H5Screate_simple(int rank, const void *dims, const void *maxdims)',
  'herr_t H5Sclose(hid_t sid)',
  'hid_t H5Scopy(hid_t sid)',
  'int H5Sget_simple_extent_type(hid_t sid)',
  'int H5Sget_simple_extent_ndims(hid_t sid)',
  'int H5Sget_simple_extent_dims(hid_t sid, void *dims, void *maxdims)',
  'hssize_t H5Sget_simple_extent_npoints(hid_t sid)',
  'herr_t H5Sselect_hyperslab(hid_t sid, int op, const void *start, const void *stride, const void *count, const void *block)',
  'herr_t H5Sselect_elements(hid_t sid, int op, size_t num, const void *coords)',
  'herr_t H5Sselect_all(hid_t sid)',
  'herr_t H5Sselect_none(hid_t sid)',
  'hssize_t H5Sget_select_npoints(hid_t sid)',
  'int H5Sget_select_type(hid_t sid)',
  'hssize_t H5Sget_select_hyper_nblocks(hid_t sid)',
  'herr_t H5Sget_select_hyper_blocklist(hid_t sid, hsize_t start, hsize_t num, void *buf)',
  'hssize_t H5Sget_select_elem_npoints(hid_t sid)',
  'herr_t H5Sget_select_elem_pointlist(hid_t sid, hsize_t start, hsize_t num, void *buf)',
  'htri_t H5Sis_regular_hyperslab(hid_t sid)',
  'herr_t H5Sget_regular_hyperslab(hid_t sid, void *start, void *stride, void *count, void *block)',
  'herr_t H5Sget_select_bounds(hid_t sid, void *start, void *end)',
  // datatypes
  'hid_t H5Tcopy(hid_t tid)',
  'herr_t H5Tclose(hid_t tid)',
  'htri_t H5Tequal(hid_t a, hid_t b)',
  'int H5Tget_class(hid_t tid)',
  'size_t H5Tget_size(hid_t tid)',
  'herr_t H5Tset_size(hid_t tid, size_t size)',
  'int H5Tget_order(hid_t tid)',
  'herr_t H5Tset_order(hid_t tid, int order)',
  'int H5Tget_sign(hid_t tid)',
  'size_t H5Tget_precision(hid_t tid)',
  'herr_t H5Tset_precision(hid_t tid, size_t prec)',
  'int H5Tget_offset(hid_t tid)',
  'herr_t H5Tset_offset(hid_t tid, size_t offset)',
  'herr_t H5Tget_fields(hid_t tid, _Out_ size_t *spos, _Out_ size_t *epos, _Out_ size_t *esize, _Out_ size_t *mpos, _Out_ size_t *msize)',
  'herr_t H5Tset_fields(hid_t tid, size_t spos, size_t epos, size_t esize, size_t mpos, size_t msize)',
  'size_t H5Tget_ebias(hid_t tid)',
  'herr_t H5Tset_ebias(hid_t tid, size_t ebias)',
  'int H5Tget_norm(hid_t tid)',
  'herr_t H5Tset_norm(hid_t tid, int norm)',
  'herr_t H5Tset_inpad(hid_t tid, int pad)',
  'int H5Tget_strpad(hid_t tid)',
  'herr_t H5Tset_strpad(hid_t tid, int pad)',
  'int H5Tget_cset(hid_t tid)',
  'herr_t H5Tset_cset(hid_t tid, int cset)',
  'htri_t H5Tis_variable_str(hid_t tid)',
  'int H5Tget_nmembers(hid_t tid)',
  'void *H5Tget_member_name(hid_t tid, unsigned int idx)',
  'size_t H5Tget_member_offset(hid_t tid, unsigned int idx)',
  'hid_t H5Tget_member_type(hid_t tid, unsigned int idx)',
  'herr_t H5Tget_member_value(hid_t tid, unsigned int idx, void *value)',
  'hid_t H5Tcreate(int cls, size_t size)',
  'herr_t H5Tinsert(hid_t tid, const char *name, size_t offset, hid_t field)',
  'herr_t H5Tpack(hid_t tid)',
  'hid_t H5Tenum_create(hid_t base)',
  'herr_t H5Tenum_insert(hid_t tid, const char *name, const void *value)',
  'hid_t H5Tget_super(hid_t tid)',
  'hid_t H5Tvlen_create(hid_t base)',
  'hid_t H5Tarray_create2(hid_t base, unsigned int ndims, const void *dims)',
  'int H5Tget_array_ndims(hid_t tid)',
  'int H5Tget_array_dims2(hid_t tid, void *dims)',
  'void *H5Tget_tag(hid_t tid)',
  'herr_t H5Tset_tag(hid_t tid, const char *tag)',
  'herr_t H5Tencode(hid_t tid, void *buf, _Inout_ size_t *nalloc)',
  'herr_t H5Tcommit2(hid_t loc, const char *name, hid_t tid, hid_t lcpl, hid_t tcpl, hid_t tapl)',
  'herr_t H5Tcommit_anon(hid_t loc, hid_t tid, hid_t tcpl, hid_t tapl)',
  'htri_t H5Tcommitted(hid_t tid)',
  'hid_t H5Topen2(hid_t loc, const char *name, hid_t tapl)',
  'htri_t H5Tdetect_class(hid_t tid, int cls)',
  // groups
  'hid_t H5Gcreate2(hid_t loc, const char *name, hid_t lcpl, hid_t gcpl, hid_t gapl)',
  'hid_t H5Gcreate_anon(hid_t loc, hid_t gcpl, hid_t gapl)',
  'hid_t H5Gopen2(hid_t loc, const char *name, hid_t gapl)',
  'herr_t H5Gclose(hid_t gid)',
  'herr_t H5Gget_info(hid_t gid, void *info)',
  'hid_t H5Gget_create_plist(hid_t gid)',
  // links
  'herr_t H5Lcreate_hard(hid_t cur_loc, const char *cur_name, hid_t dst_loc, const char *dst_name, hid_t lcpl, hid_t lapl)',
  'herr_t H5Lcreate_soft(const char *target, hid_t loc, const char *name, hid_t lcpl, hid_t lapl)',
  'herr_t H5Lcreate_external(const char *file, const char *obj, hid_t loc, const char *name, hid_t lcpl, hid_t lapl)',
  'herr_t H5Ldelete(hid_t loc, const char *name, hid_t lapl)',
  'htri_t H5Lexists(hid_t loc, const char *name, hid_t lapl)',
  'herr_t H5Lget_info(hid_t loc, const char *name, void *info, hid_t lapl)',
  'herr_t H5Lget_val(hid_t loc, const char *name, void *buf, size_t size, hid_t lapl)',
  'herr_t H5Lunpack_elink_val(const void *val, size_t size, _Out_ unsigned int *flags, _Out_ void **file, _Out_ void **obj)',
  // objects
  'hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl)',
  'hid_t H5Oopen_by_addr(hid_t loc, haddr_t addr)',
  'herr_t H5Oclose(hid_t oid)',
  'herr_t H5Oget_info2(hid_t oid, void *info, unsigned int fields)',
  'herr_t H5Oget_info_by_name2(hid_t loc, const char *name, void *info, unsigned int fields, hid_t lapl)',
  'herr_t H5Olink(hid_t oid, hid_t new_loc, const char *new_name, hid_t lcpl, hid_t lapl)',
  // attributes
  'hid_t H5Acreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl, hid_t aapl)',
  'hid_t H5Aopen(hid_t obj, const char *name, hid_t aapl)',
  'hid_t H5Aopen_by_idx(hid_t loc, const char *obj_name, int idx_type, int order, hsize_t n, hid_t aapl, hid_t lapl)',
  'herr_t H5Aclose(hid_t aid)',
  'herr_t H5Adelete(hid_t loc, const char *name)',
  'htri_t H5Aexists(hid_t obj, const char *name)',
  'hid_t H5Aget_space(hid_t aid)',
  'hid_t H5Aget_type(hid_t aid)',
  'herr_t H5Aread(hid_t aid, hid_t memtype, void *buf)',
  'herr_t H5Awrite(hid_t aid, hid_t memtype, const void *buf)',
  'herr_t H5Aget_info(hid_t aid, void *info)',
  'ssize_t_ H5Aget_name(hid_t aid, size_t size, void *buf)',
  'herr_t H5Arename(hid_t loc, const char *old_name, const char *new_name)',
  // references
  'herr_t H5Rcreate(void *ref, hid_t loc, const char *name, int ref_type, hid_t space)',
  'hid_t H5Rdereference2(hid_t obj, hid_t oapl, int ref_type, const void *ref)',
  'herr_t H5Rget_obj_type2(hid_t id, int ref_type, const void *ref, _Out_ int *obj_type)',
  'hid_t H5Rget_region(hid_t dataset, int ref_type, const void *ref)',
] as const;

type AnyFn = (...args: any[]) => any;

/**
 * What the worker thread of `heavy.ts` is doing: 0 nothing; 1 a libhdf5 call whose file uses a
 * native driver (`sec2`); 2 a libhdf5 call on a file of the journaling driver (vfd.ts), whose
 * callbacks are JavaScript of this thread: koffi runs them here, from the event loop, while the
 * worker waits; 3 the call is done and its result not yet taken by this thread (the worker is out
 * of libhdf5; the caller's continuation goes before other waiting work). Every checked call
 * below waits while it is 1 or 2: two threads must never be in libhdf5 at once.
 */
export const BUSY = new Int32Array(new SharedArrayBuffer(4));

/**
 * The safety net of heavy.ts, for a libhdf5 call of this thread while the worker runs one (the
 * store waits asynchronously before its libhdf5 work, so this is rare): block until the worker
 * is out of libhdf5 (state 1). In state 2 blocking would deadlock (the worker waits for this
 * thread to run the journaling driver's callbacks), so the request is refused instead; a write it
 * was part of is rolled back.
 * @throws H5StoreError Unavailable (503, Retry-After: 1) in state 2
 */
export function waitIdleSync(): void {
  for (let v = Atomics.load(BUSY, 0); v === 1 || v === 2; v = Atomics.load(BUSY, 0)) {
    if (v === 2) {
      throw new H5StoreError('Unavailable', 'A long write into another file is running on the HDF5 worker thread; try again', { retryAfter: 1 });
    }
    Atomics.wait(BUSY, 0, v, 1000);
  }
}

/**
 * The libhdf5 function this thread is in (1 + its index in `CALL_NAMES`; 0: none), for the
 * watchdog (ops/watchdog.ts), which reads it from another thread when this one stops answering.
 */
export const CURRENT_CALL = new Int32Array(new SharedArrayBuffer(4));
/** Names of the functions `CURRENT_CALL` counts. */
export const CALL_NAMES: string[] = [];

/** Wrap a bound libhdf5 function with the worker gate and the return-value checks above. */
export function wrap(name: string, ret: string, fn: AnyFn): AnyFn {
  const inner = fn;
  const idx = CALL_NAMES.push(name);
  fn = (...args: unknown[]) => {
    const v = Atomics.load(BUSY, 0);
    if (v === 1 || v === 2) waitIdleSync();
    // nested through callbacks (H5Literate...): the outer call is current again after this one
    const outer = CURRENT_CALL[0];
    CURRENT_CALL[0] = idx;
    try {
      return inner(...args);
    } finally {
      CURRENT_CALL[0] = outer;
    }
  };
  if (ret === 'hid_t' || ret === 'herr_t' || ret === 'ssize_t_' || ret === 'hssize_t') {
    return (...args: unknown[]) => {
      const r = fn(...args);
      if (r < 0) throw new Hdf5Error(name, takeErrorStack());
      return r;
    };
  }
  if (ret === 'htri_t') {
    return (...args: unknown[]) => {
      const r = fn(...args);
      if (r < 0) throw new Hdf5Error(name, takeErrorStack());
      return r > 0;
    };
  }
  return fn;
}

/** Checked libhdf5 functions, keyed by their C names (1.10 names; see `linkSymbol`). */
export const H5: Record<string, AnyFn> = {};
for (const proto of PROTOS) {
  const m = /^\s*([\w ]+?\s*\*?)\s*(H5\w+)\(/.exec(proto);
  if (!m) throw new Error(`bad prototype ${proto}`);
  const ret = m[1].trim();
  const cname = m[2];
  const symbol = cname === 'H5Lget_info' ? linkSymbol(cname) : cname;
  H5[cname] = wrap(cname, ret, lib.func(proto.replace(cname + '(', symbol + '(')));
}

/** `H5Literate` (1.10 name; `H5Literate1` on 1.12+): iterate links with a JS callback. */
const H5L_iterate_t = named('H5L_iterate_t', () => koffi.proto('herr_t H5L_iterate_t(hid_t group, const char *name, void *info, void *op_data)'));
export const H5Literate = wrap(
  'H5Literate',
  'herr_t',
  lib.func(`herr_t ${linkSymbol('H5Literate')}(hid_t grp, int idx_type, int order, _Inout_ hsize_t *idx, H5L_iterate_t *op, void *op_data)`),
);
/**
 * `H5Dget_num_chunks` (libhdf5 1.10.5 and later; undefined on older libraries): the number of
 * allocated chunks of a chunked dataset.
 */
export const H5Dget_num_chunks: AnyFn | undefined = (() => {
  try {
    return wrap('H5Dget_num_chunks', 'herr_t', lib.func('herr_t H5Dget_num_chunks(hid_t did, hid_t fspace, _Out_ hsize_t *nchunks)'));
  } catch {
    return undefined;
  }
})();

/** `H5Ovisit2`: visit every object reachable by hard links, once per object. */
const H5O_iterate_t = named('H5O_iterate_t', () => koffi.proto('herr_t H5O_iterate_t(hid_t obj, const char *name, void *info, void *op_data)'));
export const H5Ovisit2 = wrap(
  'H5Ovisit2',
  'herr_t',
  lib.func('herr_t H5Ovisit2(hid_t obj, int idx_type, int order, H5O_iterate_t *op, void *op_data, unsigned int fields)'),
);
/** `H5Aiterate2`: iterate attributes with a JS callback. */
const H5A_operator2_t = named('H5A_operator2_t', () => koffi.proto('herr_t H5A_operator2_t(hid_t loc, const char *name, void *info, void *op_data)'));
export const H5Aiterate2 = wrap(
  'H5Aiterate2',
  'herr_t',
  lib.func('herr_t H5Aiterate2(hid_t loc, int idx_type, int order, _Inout_ hsize_t *idx, H5A_operator2_t *op, void *op_data)'),
);

/**
 * Bind a libhdf5 function that not every build has (e.g. `H5Pset_fapl_ros3`, only in builds with
 * the read-only S3 driver), checked like the table above.
 * @returns undefined when the library lacks the symbol.
 */
export function optionalFunction(proto: string): AnyFn | undefined {
  const m = /^\s*([\w ]+?\s*\*?)\s*(H5\w+)\(/.exec(proto);
  if (!m) throw new Error(`bad prototype ${proto}`);
  try {
    return wrap(m[2], m[1].trim(), lib.func(proto));
  } catch {
    return undefined;
  }
}

/** Read a global `hid_t` variable such as `H5T_NATIVE_INT_g` (valid after H5open). */
function globalId(name: string): Hid {
  return koffi.decode(lib.symbol(name), 'int64_t') as Hid;
}

/** Predefined datatypes and property list classes. */
export const G = {
  T_STD_I8LE: globalId('H5T_STD_I8LE_g'),
  T_STD_I8BE: globalId('H5T_STD_I8BE_g'),
  T_STD_I16LE: globalId('H5T_STD_I16LE_g'),
  T_STD_I16BE: globalId('H5T_STD_I16BE_g'),
  T_STD_I32LE: globalId('H5T_STD_I32LE_g'),
  T_STD_I32BE: globalId('H5T_STD_I32BE_g'),
  T_STD_I64LE: globalId('H5T_STD_I64LE_g'),
  T_STD_I64BE: globalId('H5T_STD_I64BE_g'),
  T_STD_U8LE: globalId('H5T_STD_U8LE_g'),
  T_STD_U8BE: globalId('H5T_STD_U8BE_g'),
  T_STD_U16LE: globalId('H5T_STD_U16LE_g'),
  T_STD_U16BE: globalId('H5T_STD_U16BE_g'),
  T_STD_U32LE: globalId('H5T_STD_U32LE_g'),
  T_STD_U32BE: globalId('H5T_STD_U32BE_g'),
  T_STD_U64LE: globalId('H5T_STD_U64LE_g'),
  T_STD_U64BE: globalId('H5T_STD_U64BE_g'),
  T_STD_B8LE: globalId('H5T_STD_B8LE_g'),
  T_STD_B8BE: globalId('H5T_STD_B8BE_g'),
  T_STD_B16LE: globalId('H5T_STD_B16LE_g'),
  T_STD_B16BE: globalId('H5T_STD_B16BE_g'),
  T_STD_B32LE: globalId('H5T_STD_B32LE_g'),
  T_STD_B32BE: globalId('H5T_STD_B32BE_g'),
  T_STD_B64LE: globalId('H5T_STD_B64LE_g'),
  T_STD_B64BE: globalId('H5T_STD_B64BE_g'),
  T_IEEE_F32LE: globalId('H5T_IEEE_F32LE_g'),
  T_IEEE_F32BE: globalId('H5T_IEEE_F32BE_g'),
  T_IEEE_F64LE: globalId('H5T_IEEE_F64LE_g'),
  T_IEEE_F64BE: globalId('H5T_IEEE_F64BE_g'),
  T_STD_REF_OBJ: globalId('H5T_STD_REF_OBJ_g'),
  T_STD_REF_DSETREG: globalId('H5T_STD_REF_DSETREG_g'),
  T_C_S1: globalId('H5T_C_S1_g'),
  T_NATIVE_UINT64: globalId('H5T_NATIVE_ULLONG_g'),
  P_FILE_CREATE: globalId('H5P_CLS_FILE_CREATE_ID_g'),
  P_FILE_ACCESS: globalId('H5P_CLS_FILE_ACCESS_ID_g'),
  P_DATASET_CREATE: globalId('H5P_CLS_DATASET_CREATE_ID_g'),
  P_DATASET_ACCESS: globalId('H5P_CLS_DATASET_ACCESS_ID_g'),
  P_DATASET_XFER: globalId('H5P_CLS_DATASET_XFER_ID_g'),
  P_GROUP_CREATE: globalId('H5P_CLS_GROUP_CREATE_ID_g'),
  P_LINK_CREATE: globalId('H5P_CLS_LINK_CREATE_ID_g'),
  P_LINK_ACCESS: globalId('H5P_CLS_LINK_ACCESS_ID_g'),
  P_ATTRIBUTE_CREATE: globalId('H5P_CLS_ATTRIBUTE_CREATE_ID_g'),
  P_DATATYPE_CREATE: globalId('H5P_CLS_DATATYPE_CREATE_ID_g'),
};

/** Decode a NUL-terminated C string that libhdf5 allocated, then free it with H5free_memory. */
export function takeCString(ptr: unknown): string {
  if (ptr === null || ptr === undefined || ptr === 0n) return '';
  const s = decodeString(ptr as bigint);
  H5.H5free_memory(ptr);
  return s;
}

/** Decode a NUL-terminated C string that must not be freed (points into libhdf5's buffer). */
export function peekCString(ptr: unknown): string {
  if (ptr === null || ptr === undefined || ptr === 0n) return '';
  return decodeString(ptr as bigint);
}

/** The UTF-8 string at `ptr` (NUL-terminated). */
function decodeString(ptr: bigint): string {
  return (koffi.decode as unknown as { string(p: bigint): string }).string(ptr);
}

/** Read an int32 / uint8 / uint64 of C memory at `ptr + offset` (callback struct fields). */
export function peekI32(ptr: bigint, offset: number): number {
  return koffi.decode(ptr, offset, 'int32_t') as number;
}
export function peekU8(ptr: bigint, offset: number): number {
  return koffi.decode(ptr, offset, 'uint8_t') as number;
}
export function peekU64(ptr: bigint, offset: number): number | bigint {
  return koffi.decode(ptr, offset, 'uint64_t') as number | bigint;
}

/** Address of the bytes of a Buffer (for building hvl_t/char* arrays that point into it). */
export function addressOf(buf: Buffer): bigint {
  return koffi.address(buf) as bigint;
}

/**
 * Link access property list whose external-link callback refuses every traversal: libhdf5 must
 * never open a file outside the data directory (DESIGN.md section 1). Used for every by-name
 * open; external links are resolved by the service as a new domain lookup.
 */
const H5L_elink_traverse_t = named('H5L_elink_traverse_t', () =>
  koffi.proto(
    'herr_t H5L_elink_traverse_t(const char *parent_file, const char *parent_group, const char *child_file, const char *child_obj, void *acc_flags, hid_t fapl, void *op_data)',
  ),
);
const denyElink = koffi.register(() => -1, koffi.pointer(H5L_elink_traverse_t));
export const LAPL_NO_ELINK: Hid = H5.H5Pcreate(G.P_LINK_ACCESS);
H5.H5Pset_elink_cb(LAPL_NO_ELINK, denyElink, null);

/**
 * Link access property list whose external-link callback records that a traversal was asked for
 * (and refuses it): tells "this path crosses an external link" apart from "no such object".
 */
let elinkAsked = false;
const recordElink = koffi.register(() => {
  elinkAsked = true;
  return -1;
}, koffi.pointer(H5L_elink_traverse_t));
const LAPL_RECORD_ELINK: Hid = H5.H5Pcreate(G.P_LINK_ACCESS);
H5.H5Pset_elink_cb(LAPL_RECORD_ELINK, recordElink, null);

/**
 * Open the object at `path` (relative to `loc`) the way libhdf5 opens a virtual dataset's source
 * dataset, except that external links are never followed.
 * @returns the open object (caller closes it), or `crossesExternal` when the path goes through
 *   an external link, or neither when there is no object at `path`.
 */
export function openPathNoElink(loc: Hid, path: string): { oid?: Hid; crossesExternal: boolean } {
  elinkAsked = false;
  try {
    return { oid: H5.H5Oopen(loc, path, LAPL_RECORD_ELINK), crossesExternal: false };
  } catch {
    return { crossesExternal: elinkAsked };
  } finally {
    elinkAsked = false;
  }
}

/** Link creation property list with UTF-8 names (what h5py writes). */
export const LCPL_UTF8: Hid = H5.H5Pcreate(G.P_LINK_CREATE);
H5.H5Pset_char_encoding(LCPL_UTF8, 1);
/** Attribute creation property list with UTF-8 names. */
export const ACPL_UTF8: Hid = H5.H5Pcreate(G.P_ATTRIBUTE_CREATE);
H5.H5Pset_char_encoding(ACPL_UTF8, 1);

/** Number of open identifiers of all kinds in all files (for leak tests). */
export function openObjectCount(fid?: Hid): number {
  // file_id H5F_OBJ_ALL (31) counts over every open file; types H5F_OBJ_ALL (31).
  return Number(H5.H5Fget_obj_count(fid ?? 31n, 31));
}

// libc strlen and memcpy, to copy C strings (vlen string elements) and vlen sequences out of
// libhdf5's memory byte-exactly, without a UTF-8 round trip or a view of the C memory.
const libc = (() => {
  for (const name of ['libc.so.6', 'libc.so', '/usr/lib/libSystem.B.dylib', 'libSystem.dylib']) {
    try {
      return koffi.load(name);
    } catch {
      /* try the next name */
    }
  }
  throw new Hdf5LoadError('cannot load the C library (libc) for strlen');
})();
const strlen = libc.func('size_t strlen(const void *s)');
const memcpy = libc.func('void *memcpy(void *dst, const void *src, size_t n)');
/** The C library (for modules of src/hdf5 that bind POSIX functions: locks, memory). */
export const LIBC = libc;

/** Bytes of the NUL-terminated C string at `ptr`, without the NUL (0 for NULL). */
export function cStringLength(ptr: bigint | null): number {
  return ptr === null || ptr === 0n ? 0 : Number(strlen(ptr));
}

/**
 * Copy `len` bytes of C memory at `ptr` into `into` at byte `at` (libc `memcpy`). The way to
 * take each element of a value out of libhdf5's memory: a view (`koffi.view`) is an external
 * ArrayBuffer whose ~220 bytes of native bookkeeping Node frees only on a later turn of the
 * event loop, so views made in one synchronous loop over many elements grow the process
 * (1.2 million: ~260 MiB, which glibc keeps once freed), and copying out of a view is ~6x slower.
 * @throws RangeError when `into` has fewer than `at + len` bytes
 */
export function copyMemory(ptr: bigint, len: number, into: Buffer, at = 0): void {
  if (len === 0) return;
  if (at < 0 || at + len > into.length) throw new RangeError(`copyMemory: ${len} bytes at ${at} do not fit in ${into.length}`);
  memcpy(into.subarray(at, at + len), ptr, len);
}


/** Prepend directories (':'-separated) to libhdf5's filter plugin search path. */
export function addPluginPath(paths: string): void {
  const H5PLprepend = lib.func('herr_t H5PLprepend(const char *path)');
  for (const p of paths.split(':').filter(Boolean).reverse()) {
    if (H5PLprepend(p) < 0) throw new Hdf5Error('H5PLprepend', takeErrorStack());
  }
}
