#!/usr/bin/env python3
"""Compare two HDF5 files with h5py (for the h5pyd tests: hsload then hsget must give back what
h5py wrote). Prints JSON {"differences": [...], "checked": {...}}.

usage: h5compare.py A.h5 B.h5 [--no-filters]

Compared: the object tree (groups, datasets, committed datatypes, and soft/external/hard links by
path), dataset dtypes, shapes, maxshapes, values (object references by the path of their target,
region references by target path and selection, vlen elements by value), fill values, the
compression filter and its options, shuffle, chunking (present or not), attributes (names,
dtypes, values). File locking is off for this process only.
"""
import os

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import json  # noqa: E402
import sys  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402


def norm(f, v):
    """A JSON-comparable form of a value read by h5py."""
    if isinstance(v, h5py.RegionReference):
        if not v:
            return None
        t = f[v]
        sel = h5py.h5r.get_region(v, t.id)
        return {"target": t.name, "type": int(sel.get_select_type()), "n": int(sel.get_select_npoints())}
    if isinstance(v, h5py.Reference):
        return f[v].name if v else ""
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O" or v.dtype.names:
            return [norm(f, x) for x in v.tolist()] if v.ndim else norm(f, v[()])
        return norm(f, v.tolist())
    if isinstance(v, (list, tuple)):
        return [norm(f, x) for x in v]
    if isinstance(v, np.void):
        return [norm(f, v[n]) for n in v.dtype.names] if v.dtype.names else v.tobytes().hex()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.generic):
        return norm(f, v.item())
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def dtype_key(dt):
    """dtype identity as h5py sees it (string kind/size/order, enum and vlen and ref metadata)."""
    out = {"str": dt.str, "names": list(dt.names) if dt.names else None}
    if dt.names:
        out["fields"] = [dtype_key(dt.fields[n][0]) for n in dt.names]
    enum = h5py.check_enum_dtype(dt)
    if enum is not None:
        out["enum"] = {k: int(v) for k, v in enum.items()}
    vlen = h5py.check_vlen_dtype(dt)
    if vlen is not None:
        out["vlen"] = str(vlen)
    ref = h5py.check_ref_dtype(dt)
    if ref is not None:
        out["ref"] = ref.__name__
    s = h5py.check_string_dtype(dt)
    if s is not None:
        out["string"] = [s.encoding, s.length]
    return out


def attrs(f, o):
    out = {}
    for k in o.attrs:
        v = o.attrs[k]
        dt = o.attrs.get_id(k).dtype
        out[k] = {"dtype": dtype_key(dt), "value": norm(f, v)}
    return out


def tree(f, no_filters):
    out = {}

    def link_info(g, name):
        lk = g.get(name, getlink=True)
        if isinstance(lk, h5py.SoftLink):
            return {"link": "soft", "path": lk.path}
        if isinstance(lk, h5py.ExternalLink):
            return {"link": "external", "file": lk.filename, "path": lk.path}
        return None

    seen = {}

    def walk(g, prefix):
        for name in g:
            p = prefix + name
            li = link_info(g, name)
            if li:
                out[p] = li
                continue
            o = g[name]
            addr = h5py.h5o.get_info(o.id).addr
            if addr in seen:
                out[p] = {"link": "hard", "same_as": seen[addr]}
                continue
            seen[addr] = p
            if isinstance(o, h5py.Group):
                out[p] = {"kind": "group", "attrs": attrs(f, o)}
                walk(o, p + "/")
            elif isinstance(o, h5py.Datatype):
                out[p] = {"kind": "datatype", "dtype": dtype_key(o.dtype), "attrs": attrs(f, o)}
            else:
                d = {"kind": "dataset", "dtype": dtype_key(o.dtype), "shape": o.shape, "maxshape": o.maxshape, "attrs": attrs(f, o)}
                d["chunked"] = o.chunks is not None
                if not no_filters:
                    d["compression"] = o.compression
                    d["compression_opts"] = o.compression_opts
                    d["shuffle"] = o.shuffle
                if o.shape is not None:
                    d["value"] = norm(f, o[()])
                    if h5py.check_vlen_dtype(o.dtype) is None and o.dtype.kind != "O":
                        d["fillvalue"] = norm(f, o.fillvalue)
                out[p] = d

    out["/"] = {"kind": "group", "attrs": attrs(f, f)}
    walk(f, "/")
    return out


def main():
    a, b = sys.argv[1], sys.argv[2]
    no_filters = "--no-filters" in sys.argv
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        ta, tb = tree(fa, no_filters), tree(fb, no_filters)
    diffs = []
    for p in sorted(set(ta) | set(tb)):
        if p not in ta or p not in tb:
            diffs.append({"path": p, "only_in": "a" if p in ta else "b"})
            continue
        x, y = ta[p], tb[p]
        for k in sorted(set(x) | set(y)):
            if json.dumps(x.get(k), sort_keys=True, default=str) != json.dumps(y.get(k), sort_keys=True, default=str):
                diffs.append({"path": p, "key": k, "a": x.get(k), "b": y.get(k)})
    print(json.dumps({"differences": diffs, "checked": sorted(ta)}, default=str))


main()
