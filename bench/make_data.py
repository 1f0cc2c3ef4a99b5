"""Write the benchmark data files with h5py (Debian's /usr/bin/python3).

usage: /usr/bin/python3 bench/make_data.py OUTDIR

- big.h5         /data: float32 (8192, 8192) contiguous = 256 MiB; /chunked: int32 (4096, 4096)
                 chunks (256, 256) gzip level 4 (64 MiB raw)
- groups10k.h5   10,000 groups g00000..g09999 in the root group (one link each), plus a 300 MB
                 float64 dataset, so the file is ~300 MB
- attrs1k.h5     a group with 1,000 attributes (float64 scalars, int arrays, strings)
- table.h5       /table: 100,000-row compound (time int64, temp float32, station S4, value float64)
- compressed.h5  three int32 (4096, 4096) datasets, chunks (256, 256), gzip level 4 (issue #29):
                 /noise: values i + n (i the element's index in C order, n random in [0, 1024): 10
                 noisy low bits; shuffle off; about 2:1), /noise_shuffle: the same values with the
                 shuffle filter (about 2.7:1), /pattern: i % 1000 + row block (about 60:1, as
                 big.h5's /chunked)
Existing files are kept.
"""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(42)


def make(name, fn):
    path = os.path.join(out, name)
    if os.path.exists(path):
        return
    tmp = path + '.tmp'
    with h5py.File(tmp, 'w') as f:
        fn(f)
    os.rename(tmp, path)
    print('wrote', path, os.path.getsize(path) // (1024 * 1024), 'MiB')


def big(f):
    d = f.create_dataset('data', shape=(8192, 8192), dtype='<f4')
    for i in range(0, 8192, 1024):
        d[i:i + 1024] = rng.random((1024, 8192), dtype=np.float32)
    c = f.create_dataset('chunked', shape=(4096, 4096), dtype='<i4', chunks=(256, 256), compression='gzip', compression_opts=4)
    for i in range(0, 4096, 512):
        c[i:i + 512] = (np.arange(512 * 4096, dtype=np.int64).reshape(512, 4096) % 1000 + i).astype('<i4')


def groups(f):
    for i in range(10000):
        f.create_group('g%05d' % i)
    d = f.create_dataset('payload', shape=(300 * 1024 * 1024 // 8,), dtype='<f8')
    step = 4 * 1024 * 1024
    for i in range(0, d.shape[0], step):
        n = min(step, d.shape[0] - i)
        d[i:i + n] = np.arange(i, i + n, dtype=np.float64)


def attrs(f):
    g = f.create_group('obj')
    for i in range(1000):
        k = i % 3
        if k == 0:
            g.attrs['a%04d' % i] = float(i) * 0.5
        elif k == 1:
            g.attrs['a%04d' % i] = np.arange(10, dtype='<i4') + i
        else:
            g.attrs['a%04d' % i] = 'attribute number %d' % i


def table(f):
    n = 100000
    dt = np.dtype([('time', '<i8'), ('temp', '<f4'), ('station', 'S4'), ('value', '<f8')])
    a = np.zeros(n, dtype=dt)
    a['time'] = np.arange(n)
    a['temp'] = (np.arange(n) % 1000).astype(np.float32) / 10.0
    a['station'] = np.array([b'KORD', b'KSFO', b'KLAX', b'PANC'])[np.arange(n) % 4]
    a['value'] = rng.random(n)
    f.create_dataset('table', data=a, chunks=(8192,), maxshape=(None,))


def compressed(f):
    kw = dict(shape=(4096, 4096), dtype='<i4', chunks=(256, 256), compression='gzip', compression_opts=4)
    noise = f.create_dataset('noise', **kw)
    shuffled = f.create_dataset('noise_shuffle', shuffle=True, **kw)
    pattern = f.create_dataset('pattern', **kw)
    noise_rng = np.random.default_rng(29)  # its own: the same values whichever files exist already
    for r in range(0, 4096, 512):
        i = np.arange(r * 4096, (r + 512) * 4096, dtype=np.int64).reshape(512, 4096)
        v = (i + noise_rng.integers(0, 1024, size=i.shape)).astype('<i4')
        noise[r:r + 512] = v
        shuffled[r:r + 512] = v
        pattern[r:r + 512] = (i % 1000 + r).astype('<i4')


make('big.h5', big)
make('groups10k.h5', groups)
make('attrs1k.h5', attrs)
make('table.h5', table)
make('compressed.h5', compressed)
