"""Native floors of the issue #9 scenarios a server cannot beat (bench/README.md "floors").

usage: /usr/bin/python3 bench/floors.py BIG_H5 SCRATCH_DIR

libhdf5 in-process (h5py) and plain file I/O on this machine, no HTTP: what the bytes of each
missed target cost before any server work. Prints one JSON object per line: name, ms (median
of the rounds after a warm-up), rounds.

- inner block: `[100:2148,1000:3048]` of the 8192x8192 float32 `data` (2,048 runs of 8 KiB,
  32 KiB apart) read into a preallocated array with the sieve buffer h5store's read-only handles
  use (4 KiB, src/hdf5/vfd.ts) and libhdf5's default (64 KiB); whole rows `[1000:1512,:]` (one
  16 MiB run) beside them.
- 16 MiB write: into a new 4096x1024 float32 dataset chunked 1024x256 (the chunks h5store gives
  it), by `H5Dwrite` and by `H5Dwrite_chunk` of gathered chunks (the copy into the page cache
  included, nothing made durable), and by `H5Dwrite` made durable (`H5Fflush`, `fdatasync`: what
  h5store's `fsync: always` promises before it answers).
- gzip region again: the 16 decoded 256x256 int32 chunks of `[1024:2048,512:1536]` gathered
  into the 4 MiB result (numpy copies: what h5store's cache of decoded chunks leaves to do).
"""
import json
import os
import sys
import time

import h5py
import numpy as np

big, scratch = sys.argv[1], sys.argv[2]
ROUNDS = 9


def timed(name, fn, setup=None):
    ts = []
    for _ in range(ROUNDS + 1):
        arg = setup() if setup else None
        t = time.perf_counter()
        fn(arg)
        ts.append((time.perf_counter() - t) * 1000)
    ts = ts[1:]
    print(json.dumps({"name": name, "ms": sorted(ts)[len(ts) // 2], "rounds": [round(x, 2) for x in ts]}), flush=True)


def with_sieve(size):
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_sieve_buf_size(size)
    return h5py.File(h5py.h5f.open(big.encode(), h5py.h5f.ACC_RDONLY, fapl=fapl))


block = np.empty((2048, 2048), np.float32)
rows = np.empty((512, 8192), np.float32)
for sieve in (4096, 65536):
    with with_sieve(sieve) as f:
        d = f["data"]
        d.read_direct(block, np.s_[100:2148, 1000:3048])  # page cache warm
        timed(f"inner block 16 MiB, sieve {sieve // 1024} KiB", lambda _: d.read_direct(block, np.s_[100:2148, 1000:3048]))
        if sieve == 4096:
            timed("whole rows 16 MiB", lambda _: d.read_direct(rows, np.s_[1000:1512, :]))

values = (np.arange(4096 * 1024, dtype=np.float32) * 0.5).reshape(4096, 1024)
path = os.path.join(scratch, "floors-write.h5")
with h5py.File(path, "w") as f:
    n = [0]

    def fresh(_=None):
        n[0] += 1
        return f.create_dataset(f"d{n[0]}", (4096, 1024), "f4", chunks=(1024, 256))

    def write_all(d):
        d[...] = values

    def write_chunks(d):
        for r in range(4):
            for c in range(4):
                d.id.write_direct_chunk((r * 1024, c * 256), np.ascontiguousarray(values[r * 1024:(r + 1) * 1024, c * 256:(c + 1) * 256]))

    def write_durable(d):
        d[...] = values
        f.flush()
        os.fdatasync(f.id.get_vfd_handle())

    timed("16 MiB into a new chunked dataset, H5Dwrite", write_all, fresh)
    timed("16 MiB into a new chunked dataset, H5Dwrite + H5Fflush + fdatasync", write_durable, fresh)
    timed("16 MiB into a new chunked dataset, H5Dwrite_chunk", write_chunks, fresh)
os.remove(path)

with h5py.File(big, "r") as f:
    d = f["chunked"]
    chunks = [d[r:r + 256, c:c + 256].copy() for r in range(1024, 2048, 256) for c in range(512, 1536, 256)]
out = np.empty((1024, 1024), np.int32)


def gather(_):
    for i, ch in enumerate(chunks):
        r, c = divmod(i, 4)
        out[r * 256:(r + 1) * 256, c * 256:(c + 1) * 256] = ch


timed("gather 16 decoded chunks into 4 MiB", gather)
