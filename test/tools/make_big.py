#!/usr/bin/python3
"""Write a larger HDF5 file for the S3 mount tests and benchmarks.

Usage: /usr/bin/python3 test/tools/make_big.py OUT [MIB]

  /data      float32, contiguous, MIB MiB (default 24): data[i] = i (exact below 2**24)
  /chunked   int32 (1024, 1024), chunks (128, 1024), gzip 1: chunked[r, c] = r * 1024 + c
  /meta      a group with 50 subgroups, each with 4 attributes (a metadata-heavy part)
"""
import sys

import h5py
import numpy as np

out = sys.argv[1]
mib = int(sys.argv[2]) if len(sys.argv) > 2 else 24
n = mib * 1024 * 1024 // 4
with h5py.File(out, 'w') as f:
    f.create_dataset('data', data=np.arange(n, dtype=np.float32))
    f.create_dataset('chunked', data=np.arange(1024 * 1024, dtype=np.int32).reshape(1024, 1024), chunks=(128, 1024), compression='gzip', compression_opts=1)
    meta = f.create_group('meta')
    for i in range(50):
        g = meta.create_group(f'g{i:02d}')
        for j in range(4):
            g.attrs[f'a{j}'] = np.arange(j + 1, dtype=np.int64) * i
