#!/usr/bin/python3
"""Write an HDF5 file of edge cases with h5py (Debian's /usr/bin/python3), for the fixture API test.

Usage: /usr/bin/python3 test/tools/make_edge_fixture.py OUT.h5

The shared fixtures (hdf5-json corpus) leave out several things the REST API has to get right;
this file adds them, written by h5py/libhdf5 exactly as a user would:
- one object under several hard-link paths, and a hard-link cycle back to an ancestor;
- a group that tracks link creation order (links created out of name order) and an object that
  tracks attribute creation order;
- soft links (existing and dangling), external links (relative and absolute file names);
- link and attribute names with spaces, non-ASCII, '%', '?', '#';
- every integer size/sign/byte order with extreme values (uint64 max, int64 min);
- float16/32/64 in both byte orders with NaN, +-Infinity, -0.0, subnormals and extremes;
- fixed strings with NULLTERM (embedded NUL), NULLPAD and SPACEPAD padding, ASCII and UTF-8;
  variable-length UTF-8 strings including the empty string;
- compound with nested compound, array and variable-length string fields; arrays of strings;
- non-boolean enum (big-endian base), vlen sequences (with an empty one), opaque, bitfield;
  (vlen bases are little-endian: h5py 3.7 misreads vlen sequences of big-endian numbers)
- object references to a group, a dataset and a committed datatype, and a null reference;
- chunked + shuffle + deflate(5) + fletcher32 with a user-defined fill value and unwritten
  chunks; a compound fill value; a NaN fill value; compact layout; unlimited and zero-sized dims;
- a committed datatype used by a dataset and an attribute, with an attribute of its own.
"""
import sys

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t


def fixed_string_dataset(parent, name, size, pad, cset, values):
    """A dataset of fixed strings with an explicit padding (h5py alone always writes NULLPAD)."""
    tid = h5t.C_S1.copy()
    tid.set_size(size)
    tid.set_strpad(pad)
    tid.set_cset(cset)
    space = h5s.create_simple((len(values),))
    dsid = h5d.create(parent.id, name.encode('utf-8'), tid, space)
    raw = np.array(values, dtype='S%d' % size)
    dsid.write(h5s.ALL, h5s.ALL, raw, mtype=tid)
    return dsid


def main(out):
    with h5py.File(out, 'w') as f:
        # ---- structure: aliases, a cycle, creation order, soft/external links, odd names
        a = f.create_group('a')
        b = a.create_group('b')
        f['c'] = b                      # /c and /a/b: one group, two paths
        b['up'] = a                     # cycle: /a/b/up is /a
        b.attrs['where'] = 'inside b'
        ordered = f.create_group('ordered', track_order=True)
        for name in ('zeta', 'alpha', 'mu'):
            ordered.create_group(name)
        ordered['soft_to_b'] = h5py.SoftLink('/a/b')
        f['dangling'] = h5py.SoftLink('/no/such/object')
        f['ext_rel'] = h5py.ExternalLink('sub/other.h5', '/x/y')
        f['ext_abs'] = h5py.ExternalLink('/abs/elsewhere.h5', '/z')
        odd = f.create_group('names with space ü%41?#')
        odd.attrs['température ?#%'] = np.float64(21.5)
        odd.attrs['with space'] = np.int16(-7)

        # ---- numbers
        nums = f.create_group('numbers')
        for kind in ('i', 'u'):
            for size in (1, 2, 4, 8):
                for order in (('<',) if size == 1 else ('<', '>')):
                    dt = np.dtype('%s%s%d' % (order, kind, size))
                    info = np.iinfo(dt)
                    vals = np.array([info.min, info.max, 0, 1, info.max // 3], dtype=dt)
                    nums.create_dataset('%s%d%s' % (kind, size * 8, '' if size == 1 else 'le' if order == '<' else 'be'), data=vals)
        for size in (2, 4, 8):
            for order in ('<', '>'):
                dt = np.dtype('%sf%d' % (order, size))
                fi = np.finfo(dt)
                vals = np.array([np.nan, np.inf, -np.inf, -0.0, fi.tiny, fi.tiny / 4, fi.max, -fi.max, 0.1, 1 / 3], dtype=dt)
                nums.create_dataset('f%d%s' % (size * 8, 'le' if order == '<' else 'be'), data=vals)
        nums.attrs['nan'] = np.float64(np.nan)
        nums.attrs['f32 grid'] = np.arange(12, dtype='<f4').reshape(3, 4) / np.float32(7)
        nums.attrs['u64max'] = np.uint64(2 ** 64 - 1)
        nums.attrs['i64min'] = np.int64(-2 ** 63)
        bits = h5t.STD_B8LE.copy()
        space = h5s.create_simple((4,))
        bf = h5d.create(nums.id, b'bitfield8', bits, space)
        bf.write(h5s.ALL, h5s.ALL, np.array([0, 1, 0x80, 0xff], dtype='u1'), mtype=h5t.NATIVE_B8)

        # ---- strings
        s = f.create_group('strings')
        fixed_string_dataset(s, 'nullterm', 8, h5t.STR_NULLTERM, h5t.CSET_ASCII, [b'ab\0cd', b'full8chr', b'', b'x'])
        fixed_string_dataset(s, 'nullpad', 6, h5t.STR_NULLPAD, h5t.CSET_ASCII, [b'ab', b'abcdef', b' lead', b''])
        fixed_string_dataset(s, 'spacepad', 6, h5t.STR_SPACEPAD, h5t.CSET_ASCII, [b'ab    ', b'abcdef', b' a b  ', b''])
        fixed_string_dataset(s, 'utf8_fixed', 12, h5t.STR_NULLPAD, h5t.CSET_UTF8,
                             ['héllo'.encode(), '日本'.encode(), 'ascii'.encode(), ''.encode()])
        vstr = h5py.string_dtype('utf-8')
        s.create_dataset('vlen_utf8', data=np.array(['', 'ünïcödé', 'emoji \U0001F600', 'plain'], dtype=object), dtype=vstr)
        s.create_dataset('scalar_fixed', data=np.bytes_(b'scalar'))
        s.attrs['vlen ascii list'] = np.array([b'one', b'', b'three'], dtype=h5py.string_dtype('ascii'))
        s.attrs['fixed'] = np.array([b'abc', b'de'], dtype='S4')
        s.attrs['empty null'] = h5py.Empty('<f4')

        # ---- compound, array, enum, vlen, opaque
        t = f.create_group('types')
        inner = np.dtype([('x', '<i2'), ('y', '>f4')])
        comp = np.dtype([('id', '<u8'), ('pos', inner), ('arr', '<i4', (2, 3)), ('name', vstr), ('tag', 'S3')])
        cv = np.zeros(3, dtype=comp)
        for i in range(3):
            cv[i]['id'] = 2 ** 63 + i
            cv[i]['pos'] = (i - 1, i / 4)
            cv[i]['arr'] = np.arange(6).reshape(2, 3) * (i + 1)
            cv[i]['name'] = ['first', '', 'thïrd'][i]
            cv[i]['tag'] = [b'AB', b'ABC', b''][i]
        t.create_dataset('compound', data=cv)
        t.attrs['compound 2d'] = np.zeros((2, 2), dtype=inner)
        # an array type of fixed strings (h5py turns a sub-array dtype into an H5T_ARRAY)
        aos = t.create_dataset('array_of_strings', shape=(2,), dtype=np.dtype(('S3', (2,))))
        aos[...] = np.array([[b'a', b'bb'], [b'ccc', b'']], dtype='S3')
        enum = h5py.enum_dtype({'RED': 0, 'GREEN': 7, 'BLUE': -3}, basetype='>i2')
        t.create_dataset('enum_be', data=np.array([[0, 7], [-3, 0]], dtype='>i2'), dtype=enum)
        t.create_dataset('bool', data=np.array([True, False, True]))
        # (little-endian base: h5py 3.7 reads vlen sequences of a big-endian base without byte-swapping)
        vl = h5py.vlen_dtype(np.dtype('<i2'))
        vv = np.empty(3, dtype=object)
        vv[0] = np.array([1, -2, 3], dtype='<i2')
        vv[1] = np.array([], dtype='<i2')
        vv[2] = np.array([32767], dtype='<i2')
        t.create_dataset('vlen_i16', data=vv, dtype=vl)
        vf = np.empty(2, dtype=object)
        vf[0] = np.array([0.5, np.nan, -np.inf], dtype='<f8')
        vf[1] = np.array([1e300], dtype='<f8')
        t.attrs.create('vlen f64', data=vf, dtype=h5py.vlen_dtype(np.dtype('<f8')))
        t.create_dataset('opaque', data=np.array([b'\x00\x01\x02\x03', b'\xff\xfe\xfd\xfc'], dtype='V4'))

        # ---- references and committed types
        r = f.create_group('refs')
        r['ctype'] = np.dtype([('a', '<i4'), ('b', '<f8')])
        ct = r['ctype']
        ct.attrs['about'] = 'a committed compound'
        r.create_dataset('typed', data=np.array([(1, 1.5), (2, -2.5)], dtype=ct.dtype), dtype=ct)
        r.attrs.create('typed attr', data=np.array((3, 3.5), dtype=ct.dtype), dtype=ct)
        refs = np.empty(4, dtype=h5py.ref_dtype)
        refs[0] = b.ref
        refs[1] = f['numbers/u64le'].ref
        refs[2] = ct.ref
        refs[3] = h5py.Reference()
        r.create_dataset('objrefs', data=refs)

        # ---- creation properties
        cpg = f.create_group('props')
        d = cpg.create_dataset('chunked_filters', shape=(20, 30), maxshape=(None, 30), chunks=(10, 10), dtype='<f4',
                               shuffle=True, compression='gzip', compression_opts=5, fletcher32=True, fillvalue=-1.5)
        d[0:10, 0:10] = np.arange(100, dtype='<f4').reshape(10, 10) / 3
        cpg.create_dataset('compound_fill', shape=(2,), dtype=np.dtype([('a', '<i4'), ('b', 'S2')]),
                           fillvalue=np.array((42, b'zz'), dtype=[('a', '<i4'), ('b', 'S2')]))
        cpg.create_dataset('nan_fill', shape=(3,), dtype='>f8', fillvalue=np.nan)
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_layout(h5d.COMPACT)
        sp = h5s.create_simple((5,))
        cid = h5d.create(cpg.id, b'compact', h5t.STD_I32BE, sp, dcpl=dcpl)
        cid.write(h5s.ALL, h5s.ALL, np.arange(5, dtype='>i4'))
        cpg.create_dataset('empty_unlimited', shape=(0, 4), maxshape=(None, None), dtype='<i8', chunks=(8, 4))
        cpg.create_dataset('scalar_f64', data=np.float64(-0.0))
        tracked = cpg.create_group('attr_order', track_order=True)
        for name in ('z', 'b', 'y'):
            tracked.attrs[name] = np.int8(ord(name))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.stderr.write('usage: make_edge_fixture.py OUT.h5\n')
        sys.exit(2)
    main(sys.argv[1])
