#!/usr/bin/python3
"""Write, with h5py, files whose datasets keep their values in other files (issue 7 item 1).

Usage: /usr/bin/python3 test/tools/make_reach_fixtures.py ROOT OUTSIDE

ROOT is a data directory; the files go to ROOT/reach/. OUTSIDE is a directory outside ROOT that
receives the "secret" files a hostile dropped-in file points at. Every dataset holds int32
values; 10 elements unless said otherwise. Prints JSON: {name: {"file", "values"?}} describing
what each file is expected to read when allowed.

External raw storage (contiguous layout with an external file list, `H5Pset_external`):
  efl_inside.h5      "efl_inside.bin" next to it (allowed)
  efl_subdir.h5      "raw/efl_sub.bin" (allowed)
  efl_abs_inside.h5  the absolute path of ROOT/reach/efl_inside.bin (allowed)
  efl_abs_out.h5     OUTSIDE/secret.bin by absolute path
  efl_rel_out.h5     "../../<outside>/secret.bin" (relative, leaves the root)
  efl_dotdot.h5      "raw/../../../<outside>/secret.bin" (`..` inside the stored name)
  efl_symlink.h5     "link_to_secret.bin", a symlink in ROOT/reach to OUTSIDE/secret.bin
  efl_dir_symlink.h5 "outdir/secret.bin" where ROOT/reach/outdir -> OUTSIDE
  efl_domain.h5      "other_domain.h5": an HDF5 file of the root used as raw storage
  efl_cwd_name.h5    "cwd_secret.bin": a bare name (libhdf5 resolves it against the process's
                     working directory unless a prefix is set); OUTSIDE/cwd_secret.bin exists
Virtual datasets (`H5Pset_virtual`):
  vds_same.h5        sources in the same file (".")
  vds_inside.h5      sources "src_a.h5" and "sub/src_b.h5" of the root (relative)
  vds_abs_inside.h5  source by absolute path inside the root
  vds_abs_out.h5     source OUTSIDE/src_out.h5 by absolute path
  vds_rel_out.h5     source "../../<outside>/src_out.h5"
  vds_symlink.h5     source "link_to_src.h5", a symlink to OUTSIDE/src_out.h5
  vds_missing.h5     source "nope.h5" that does not exist (reads the fill value)
  vds_cwd_name.h5    source "cwd_src.h5": not in the root, but OUTSIDE/cwd_src.h5 exists (libhdf5
                     tries the working directory last: run the server in OUTSIDE to see it)
  vds_printf_in.h5   unlimited mapping "blk_%b.h5" (blk_0.h5, blk_1.h5 in the root)
  vds_printf_out.h5  unlimited mapping "<OUTSIDE>/oblk_%b.h5" (oblk_0.h5 .. oblk_2.h5 outside)
  vds_mixed.h5       one source inside and one outside
  vds_dotdot.h5      source "sub/../../<outside>/src_out.h5"
  vds_via_elink.h5   source "src_elink.h5":/data where /data is an external link to OUTSIDE
  vds_nested_efl.h5  source "efl_abs_out.h5":/data (itself external storage outside the root)
  vds_nested_ok.h5   source "vds_inside.h5":/data (a virtual dataset of the root, 20 elements)
External links:
  elink.h5           "to_out" -> OUTSIDE/src_out.h5:/data, "to_in" -> src_a.h5:/data
"""
import json
import os
import sys

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import h5py  # noqa: E402
import numpy as np  # noqa: E402
from h5py import h5d, h5p, h5s, h5t  # noqa: E402

N = 10


def ints(base, n=N):
    return (np.arange(n, dtype='<i4') + base)


def write_raw(path, values):
    with open(path, 'wb') as fh:
        fh.write(values.astype('<i4').tobytes())


def efl_file(path, name, values=None):
    with h5py.File(path, 'w') as f:
        f.create_dataset('data', shape=(N,), dtype='<i4', external=[(name, 0, N * 4)])
    return values


def src_file(path, values, name='data'):
    with h5py.File(path, 'w') as f:
        f.create_dataset(name, data=values)


def vds_file(path, sources, fill=-1):
    """sources: list of (file name as stored, dataset name); each maps N elements in a row."""
    layout = h5py.VirtualLayout(shape=(N * len(sources),), dtype='<i4')
    for i, (fname, dname) in enumerate(sources):
        layout[i * N:(i + 1) * N] = h5py.VirtualSource(fname, dname, shape=(N,))
    with h5py.File(path, 'w', libver='latest') as f:
        f.create_virtual_dataset('data', layout, fillvalue=fill)


def vds_printf(path, pattern, fill=-1):
    """An unlimited VDS: block b of N elements comes from file pattern % b (libhdf5's %b)."""
    with h5py.File(path, 'w', libver='latest') as f:
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_fill_value(np.array(fill, dtype='<i4'))
        vspace = h5s.create_simple((0,), (h5s.UNLIMITED,))
        vspace.select_hyperslab((0,), (1,), stride=(N,), block=(N,))
        # count UNLIMITED: block b at b*N
        vspace.select_hyperslab((0,), (h5s.UNLIMITED,), stride=(N,), block=(N,))
        sspace = h5s.create_simple((N,), (N,))
        dcpl.set_virtual(vspace, pattern.encode(), b'data', sspace)
        h5d.create(f.id, b'data', h5t.STD_I32LE, h5s.create_simple((0,), (h5s.UNLIMITED,)), dcpl=dcpl)


def main(root, outside):
    d = os.path.join(root, 'reach')
    os.makedirs(os.path.join(d, 'raw'), exist_ok=True)
    os.makedirs(os.path.join(d, 'sub'), exist_ok=True)
    os.makedirs(outside, exist_ok=True)
    out = {}
    # the secret files outside the root
    write_raw(os.path.join(outside, 'secret.bin'), ints(7000))
    write_raw(os.path.join(outside, 'cwd_secret.bin'), ints(8000))
    src_file(os.path.join(outside, 'src_out.h5'), ints(9000))
    src_file(os.path.join(outside, 'cwd_src.h5'), ints(9500))
    for b in range(3):
        src_file(os.path.join(outside, 'oblk_%d.h5' % b), ints(9100 + 10 * b))
    rel_out = os.path.relpath(outside, d)  # ../../<...>/outside
    # raw files inside
    write_raw(os.path.join(d, 'efl_inside.bin'), ints(100))
    write_raw(os.path.join(d, 'raw', 'efl_sub.bin'), ints(200))
    os.symlink(os.path.join(outside, 'secret.bin'), os.path.join(d, 'link_to_secret.bin'))
    os.symlink(outside, os.path.join(d, 'outdir'))
    src_file(os.path.join(d, 'other_domain.h5'), ints(300))

    efl = {
        'efl_inside.h5': ('efl_inside.bin', list(range(100, 110))),
        'efl_subdir.h5': ('raw/efl_sub.bin', list(range(200, 210))),
        'efl_abs_inside.h5': (os.path.join(os.path.realpath(d), 'efl_inside.bin'), list(range(100, 110))),
        'efl_abs_out.h5': (os.path.join(outside, 'secret.bin'), None),
        'efl_rel_out.h5': (os.path.join(rel_out, 'secret.bin'), None),
        'efl_dotdot.h5': (os.path.join('raw', '..', '..', rel_out, 'secret.bin'), None),
        'efl_symlink.h5': ('link_to_secret.bin', None),
        'efl_dir_symlink.h5': ('outdir/secret.bin', None),
        'efl_domain.h5': ('other_domain.h5', 'domain'),
        'efl_cwd_name.h5': ('cwd_secret.bin', None),
    }
    for name, (stored, values) in efl.items():
        efl_file(os.path.join(d, name), stored)
        out[name] = {'stored': [stored], 'values': values}

    src_file(os.path.join(d, 'src_a.h5'), ints(400))
    src_file(os.path.join(d, 'sub', 'src_b.h5'), ints(500))
    for b in range(2):
        src_file(os.path.join(d, 'blk_%d.h5' % b), ints(600 + 10 * b))
    os.symlink(os.path.join(outside, 'src_out.h5'), os.path.join(d, 'link_to_src.h5'))
    with h5py.File(os.path.join(d, 'src_elink.h5'), 'w') as f:
        f['data'] = h5py.ExternalLink(os.path.join(outside, 'src_out.h5'), '/data')

    with h5py.File(os.path.join(d, 'vds_same.h5'), 'w', libver='latest') as f:
        f.create_dataset('s1', data=ints(10))
        f.create_dataset('s2', data=ints(20))
        layout = h5py.VirtualLayout(shape=(2 * N,), dtype='<i4')
        layout[0:N] = h5py.VirtualSource('.', 's1', shape=(N,))
        layout[N:2 * N] = h5py.VirtualSource('.', 's2', shape=(N,))
        f.create_virtual_dataset('data', layout, fillvalue=-1)
    out['vds_same.h5'] = {'stored': ['.', '.'], 'values': list(range(10, 20)) + list(range(20, 30))}

    vds = {
        'vds_inside.h5': ([('src_a.h5', 'data'), ('sub/src_b.h5', 'data')], list(range(400, 410)) + list(range(500, 510))),
        'vds_abs_inside.h5': ([(os.path.join(os.path.realpath(d), 'src_a.h5'), 'data')], list(range(400, 410))),
        'vds_abs_out.h5': ([(os.path.join(outside, 'src_out.h5'), 'data')], None),
        'vds_rel_out.h5': ([(os.path.join(rel_out, 'src_out.h5'), 'data')], None),
        'vds_symlink.h5': ([('link_to_src.h5', 'data')], None),
        'vds_missing.h5': ([('nope.h5', 'data')], [-1] * N),
        'vds_cwd_name.h5': ([('cwd_src.h5', 'data')], None),
        'vds_mixed.h5': ([('src_a.h5', 'data'), (os.path.join(outside, 'src_out.h5'), 'data')], None),
        'vds_dotdot.h5': ([(os.path.join('sub', '..', rel_out, 'src_out.h5'), 'data')], None),
        'vds_via_elink.h5': ([('src_elink.h5', 'data')], None),
        'vds_nested_efl.h5': ([('efl_abs_out.h5', 'data')], None),
    }
    for name, (sources, values) in vds.items():
        vds_file(os.path.join(d, name), sources)
        out[name] = {'stored': [s[0] for s in sources], 'values': values}

    layout = h5py.VirtualLayout(shape=(2 * N,), dtype='<i4')
    layout[0:2 * N] = h5py.VirtualSource('vds_inside.h5', 'data', shape=(2 * N,))
    with h5py.File(os.path.join(d, 'vds_nested_ok.h5'), 'w', libver='latest') as f:
        f.create_virtual_dataset('data', layout, fillvalue=-1)
    out['vds_nested_ok.h5'] = {'stored': ['vds_inside.h5'], 'values': out['vds_inside.h5']['values']}

    vds_printf(os.path.join(d, 'vds_printf_in.h5'), 'blk_%b.h5')
    out['vds_printf_in.h5'] = {'stored': ['blk_%b.h5'], 'values': list(range(600, 610)) + list(range(610, 620))}
    vds_printf(os.path.join(d, 'vds_printf_out.h5'), os.path.join(outside, 'oblk_%b.h5'))
    out['vds_printf_out.h5'] = {'stored': [os.path.join(outside, 'oblk_%b.h5')], 'values': None}

    with h5py.File(os.path.join(d, 'elink.h5'), 'w') as f:
        f['to_out'] = h5py.ExternalLink(os.path.join(outside, 'src_out.h5'), '/data')
        f['to_in'] = h5py.ExternalLink('src_a.h5', '/data')
    out['elink.h5'] = {'stored': [os.path.join(outside, 'src_out.h5'), 'src_a.h5']}
    print(json.dumps(out))


main(sys.argv[1], sys.argv[2])
