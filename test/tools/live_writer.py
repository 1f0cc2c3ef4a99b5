#!/usr/bin/env python3
"""A detector-like writer of a live acquisition file (issue #26), for tests and bench/live.ts.

    live_writer.py FILE MODE FRAMES [--rate HZ] [--size N] [--libver V] [--hold-stdin]

MODE:
  plain    h5py with HDF5_USE_FILE_LOCKING=FALSE and libver="latest" (or --libver), no SWMR: the
           superblock says "open for writing" while it runs (with libver "earliest" nothing
           does: only the file changing shows the writer); each frame is appended and the file
           flushed
  swmr     the same file layout in SWMR mode (libver="latest", swmr_mode after creation)
  reopen   h5py with file locking on (its default): the file is created when missing, then
           opened for each frame ("a"), a frame appended, the file closed; an open the lock
           refuses (BlockingIOError) is tried again at once; each frame's line gives how long
           the open took ("openMs") and how many tries it needed ("tries")

The dataset `/frames` is (n, N, N) uint32, chunked one frame per chunk, growing along axis 0;
frame i holds `frame_value(i)`: (i + 1) * 100000 + (the element's flat index % 100000), so a
reader can check every element of a frame it gets. Prints one JSON object per line to stdout:
{"ready": ...} once the file exists, {"frame": i, "t": epoch seconds} after frame i is written
and flushed, {"closed": t} once the file is closed. With --hold-stdin the writer keeps the file
open after the last frame until its standard input closes.
"""
import json
import os
import sys
import time

if sys.argv[2] in ("plain", "swmr"):
    os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import h5py  # noqa: E402  (after the locking choice: libhdf5 reads it when a file is opened)
import numpy  # noqa: E402


def frame_value(i, n):
    return ((i + 1) * 100000 + (numpy.arange(n * n, dtype=numpy.uint32) % 100000)).reshape(n, n).astype(numpy.uint32)


def say(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


def main():
    path, mode, frames = sys.argv[1], sys.argv[2], int(sys.argv[3])
    args = sys.argv[4:]
    rate = float(args[args.index("--rate") + 1]) if "--rate" in args else 10.0
    n = int(args[args.index("--size") + 1]) if "--size" in args else 64
    hold = "--hold-stdin" in args
    libver = args[args.index("--libver") + 1] if "--libver" in args else "latest"
    period = 1.0 / rate
    if mode == "reopen":
        if not os.path.exists(path):
            with h5py.File(path, "w") as f:
                f.create_dataset("frames", shape=(0, n, n), maxshape=(None, n, n), dtype="<u4", chunks=(1, n, n))
        say(ready=True)
        start = time.time()
        for _ in range(frames):
            t0 = time.perf_counter()
            tries = 0
            while True:
                tries += 1
                try:
                    f = h5py.File(path, "a")
                    break
                except BlockingIOError:
                    if time.perf_counter() - t0 > 30:
                        raise
            opened = time.perf_counter() - t0
            d = f["frames"]
            i = d.shape[0]
            d.resize((i + 1, n, n))
            d[i] = frame_value(i, n)
            f.close()
            say(frame=i, t=time.time(), openMs=opened * 1000, tries=tries)
            time.sleep(max(0.0, start + (i + 1) * period - time.time()))
        say(closed=time.time())
        return
    f = h5py.File(path, "w", libver="latest" if mode == "swmr" else libver)
    d = f.create_dataset("frames", shape=(0, n, n), maxshape=(None, n, n), dtype="<u4", chunks=(1, n, n))
    if mode == "swmr":
        f.swmr_mode = True
    f.flush()
    say(ready=True)
    start = time.time()
    for i in range(frames):
        d.resize((i + 1, n, n))
        d[i] = frame_value(i, n)
        if mode == "swmr":
            d.flush()
        f.flush()
        say(frame=i, t=time.time())
        time.sleep(max(0.0, start + (i + 1) * period - time.time()))
    if hold:
        sys.stdin.read()
    f.close()
    say(closed=time.time())


main()
