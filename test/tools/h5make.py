#!/usr/bin/env python3
"""Write reference datasets with h5py itself, for "as if h5py had written it" comparisons.

usage: h5make.py OUT.h5 SPEC_JSON
SPEC_JSON is a list of {"name", "shape", "dtype", "data"?, and any h5py create_dataset keyword:
"chunks", "maxshape", "compression", "compression_opts", "shuffle", "fletcher32", "scaleoffset",
"fillvalue", "track_order", "fillvalue"}. Lists given for compression_opts become tuples.
Prints {"available": {filter id: bool}} for the ids listed in the optional "filter_ids" entry
of an element {"filter_ids": [...]}.
"""
import os

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import json  # noqa: E402
import sys  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402


def main():
    out, spec = sys.argv[1], json.loads(sys.argv[2])
    avail = {}
    with h5py.File(out, "w") as f:
        for item in spec:
            if "filter_ids" in item:
                for i in item["filter_ids"]:
                    avail[str(i)] = bool(h5py.h5z.filter_avail(i))
                continue
            kw = {k: v for k, v in item.items() if k not in ("name", "shape", "dtype", "data")}
            if isinstance(kw.get("compression_opts"), list):
                kw["compression_opts"] = tuple(kw["compression_opts"])
            for k in ("chunks", "maxshape"):
                if isinstance(kw.get(k), list):
                    kw[k] = tuple(kw[k])
            ds = f.create_dataset(item["name"], shape=tuple(item["shape"]), dtype=np.dtype(item["dtype"]), **kw)
            if "data" in item:
                ds[...] = np.array(item["data"], dtype=ds.dtype)
    print(json.dumps({"available": avail}))


main()
