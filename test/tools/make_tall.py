"""Write a file shaped like the classic tall.h5 (used by HSDS and h5pyd tests) with h5py.

usage: /usr/bin/python3 test/tools/make_tall.py OUT.h5

Used by the tests when ../shared/fixtures is not beside the clone, so a plain clone still runs
every suite: groups g1, g1/g1.1, g1/g1.2, g1/g1.2/g1.2.1, g2; datasets dset1.1.1 (10x10 >i4),
dset1.1.2 (20 >i4), dset2.1 (10 >f4), dset2.2 (3x5 >f4); root attributes attr1 (10 >i1) and
attr2 (2x2 >i4); a soft link and an external link.
"""
import sys

import h5py
import numpy as np

with h5py.File(sys.argv[1], 'w', libver='earliest') as f:
    f.attrs.create('attr1', np.frombuffer(b'abcdefghi\0', dtype='i1').astype('>i1'))
    f.attrs.create('attr2', np.arange(4, dtype='>i4').reshape(2, 2))
    g11 = f.create_group('g1/g1.1')
    d = g11.create_dataset('dset1.1.1', data=np.fromfunction(lambda i, j: i * j, (10, 10), dtype='i4').astype('>i4'))
    d.attrs.create('attr1', np.frombuffer(b'1st attribute of dset1.1.1\0', dtype='i1').astype('>i1'))
    d.attrs.create('attr2', np.frombuffer(b'2nd attribute of dset1.1.1\0', dtype='i1').astype('>i1'))
    g11.create_dataset('dset1.1.2', data=np.arange(20, dtype='>i4'))
    g121 = f.create_group('g1/g1.2/g1.2.1')
    f['g1/g1.2'].attrs['note'] = 'external link below'
    f['g1/g1.2']['extlink'] = h5py.ExternalLink('somefile', 'somepath')
    g121['slink'] = h5py.SoftLink('somevalue')
    g2 = f.create_group('g2')
    g2.create_dataset('dset2.1', data=(1 + np.arange(10) / 10).astype('>f4'))
    g2.create_dataset('dset2.2', data=np.fromfunction(lambda i, j: i * 0.1 + j * 0.01, (3, 5)).astype('>f4'))
