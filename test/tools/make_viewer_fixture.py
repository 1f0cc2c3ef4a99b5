#!/usr/bin/env python3
"""Write the files the browser test of the web viewer opens, with h5py.

usage: make_viewer_fixture.py DIR
Writes DIR/viewer.h5 (a compound table, fixed and variable-length strings, a 3-D chunked gzip
dataset, an LZF dataset, a soft link and an external link) and DIR/ext_target.h5 (the external
link's target). Prints JSON with the values the test compares against what the browser shows.
"""
import os

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import json  # noqa: E402
import sys  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    with h5py.File(os.path.join(out, "ext_target.h5"), "w") as f:
        f["data"] = np.arange(20, dtype="<f8") / 4

    n = 40
    table_dtype = np.dtype([("id", "<i4"), ("temperature", "<f8"), ("station", "S12")])
    table = np.zeros(n, dtype=table_dtype)
    table["id"] = np.arange(n) + 1000
    table["temperature"] = np.round(15 + 10 * np.sin(np.arange(n) / 5), 3)
    table["station"] = [("st-%02d" % (i % 7)).encode() for i in range(n)]

    z, y, x = np.meshgrid(np.arange(6), np.arange(40), np.arange(50), indexing="ij")
    cube = (np.sin(x / 7.0 + z) * np.cos(y / 5.0) * 100).astype("<f4")
    lzf = ((np.arange(100 * 80).reshape(100, 80) * 37) % 1000 - 500).astype("<i2")

    with h5py.File(os.path.join(out, "viewer.h5"), "w") as f:
        f.create_dataset("table", data=table)
        g = f.create_group("strings")
        g.create_dataset("fixed", data=np.array([b"alpha", b"beta", b"gamma", b"delta"], dtype="S8"))
        g.create_dataset("vlen", data=["température", "Zoë", "plain ascii", "日本語"], dtype=h5py.string_dtype("utf-8"))
        f.create_dataset("cube_gzip", data=cube, chunks=(2, 20, 25), compression="gzip", compression_opts=4)
        f.create_dataset("lzf", data=lzf, chunks=(25, 40), compression="lzf")
        f["soft"] = h5py.SoftLink("/cube_gzip")
        f["external"] = h5py.ExternalLink("ext_target.h5", "/data")
        f.attrs["title"] = "written by h5py for the viewer test"

    with h5py.File(os.path.join(out, "viewer.h5"), "r") as f:
        info = {
            "table": [[int(r["id"]), float(r["temperature"]), r["station"].decode()] for r in f["table"][:5]],
            "fields": list(f["table"].dtype.names),
            "fixed": [s.decode() for s in f["strings/fixed"][...]],
            "vlen": [s.decode() for s in f["strings/vlen"][...]],
            "cube": {"shape": list(f["cube_gzip"].shape), "chunks": list(f["cube_gzip"].chunks), "compression": f["cube_gzip"].compression},
            "lzf": {"compression": f["lzf"].compression, "row0": [int(v) for v in f["lzf"][0, :6]]},
        }
    print(json.dumps(info))


main()
