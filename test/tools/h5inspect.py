#!/usr/bin/env python3
"""Dump what h5py (and the low-level HDF5 API) sees in a file, as JSON, for the API write tests.

usage: h5inspect.py FILE            -> {"objects": {path: description}} for every object
       h5inspect.py FILE PATH...    -> {"objects": {...}} for those paths only

File locking is turned off for this process only (the server may hold the file open; it flushes
after every write). Values are converted to JSON the way the REST API writes them:
numbers, strings (bytes decoded as UTF-8), lists for arrays/compounds/vlen, booleans for h5py's
boolean enum, base64 for opaque elements, the target path for object references ("" for null),
and {"target", "select_type", "selection"} for region references. NaN/Infinity are written as
the literals Python's json emits (the test harness parses them).
"""
import os

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import base64  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402

h5t = h5py.h5t

CLASS_NAMES = {
    h5t.INTEGER: "INTEGER",
    h5t.FLOAT: "FLOAT",
    h5t.STRING: "STRING",
    h5t.BITFIELD: "BITFIELD",
    h5t.OPAQUE: "OPAQUE",
    h5t.COMPOUND: "COMPOUND",
    h5t.REFERENCE: "REFERENCE",
    h5t.ENUM: "ENUM",
    h5t.VLEN: "VLEN",
    h5t.ARRAY: "ARRAY",
}
PADS = {h5t.STR_NULLTERM: "NULLTERM", h5t.STR_NULLPAD: "NULLPAD", h5t.STR_SPACEPAD: "SPACEPAD"}
CSETS = {h5t.CSET_ASCII: "ASCII", h5t.CSET_UTF8: "UTF8"}
LAYOUTS = {h5py.h5d.COMPACT: "COMPACT", h5py.h5d.CONTIGUOUS: "CONTIGUOUS", h5py.h5d.CHUNKED: "CHUNKED"}
FILL_TIMES = {h5py.h5d.FILL_TIME_ALLOC: "ALLOC", h5py.h5d.FILL_TIME_NEVER: "NEVER", h5py.h5d.FILL_TIME_IFSET: "IFSET"}


def order(tid):
    return "BE" if tid.get_order() == h5t.ORDER_BE else "LE"


def describe_type(tid, top=True):
    """Low-level description of an HDF5 datatype (recursive)."""
    cls = tid.get_class()
    out = {"class": CLASS_NAMES.get(cls, str(cls)), "size": tid.get_size()}
    if top:
        out["committed"] = bool(tid.committed())
    if cls in (h5t.INTEGER, h5t.BITFIELD):
        out["order"] = order(tid)
        if cls == h5t.INTEGER:
            out["signed"] = tid.get_sign() == h5t.SGN_2
    elif cls == h5t.FLOAT:
        out["order"] = order(tid)
        out["precision"] = tid.get_precision()
        out["fields"] = list(tid.get_fields())  # sign pos, exp pos, exp size, mantissa pos, size
        out["ebias"] = tid.get_ebias()
    elif cls == h5t.STRING:
        out["variable"] = bool(tid.is_variable_str())
        out["cset"] = CSETS.get(tid.get_cset(), str(tid.get_cset()))
        out["strpad"] = PADS.get(tid.get_strpad(), str(tid.get_strpad()))
        if out["variable"]:
            del out["size"]
    elif cls == h5t.COMPOUND:
        out["members"] = [
            {
                "name": tid.get_member_name(i).decode("utf-8"),
                "offset": tid.get_member_offset(i),
                "type": describe_type(tid.get_member_type(i), False),
            }
            for i in range(tid.get_nmembers())
        ]
    elif cls == h5t.ARRAY:
        out["dims"] = list(tid.get_array_dims())
        out["base"] = describe_type(tid.get_super(), False)
    elif cls == h5t.ENUM:
        out["base"] = describe_type(tid.get_super(), False)
        out["members"] = {tid.get_member_name(i).decode("utf-8"): int(tid.get_member_value(i)) for i in range(tid.get_nmembers())}
    elif cls == h5t.VLEN:
        out["base"] = describe_type(tid.get_super(), False)
        del out["size"]
    elif cls == h5t.OPAQUE:
        out["tag"] = tid.get_tag().decode("utf-8")
    elif cls == h5t.REFERENCE:
        out["ref"] = "OBJ" if tid.equal(h5t.STD_REF_OBJ) else "DSETREG"
    return out


def has_vlen(tid):
    cls = tid.get_class()
    if cls == h5t.VLEN:
        return True
    if cls == h5t.STRING:
        return bool(tid.is_variable_str())
    if cls == h5t.COMPOUND:
        return any(has_vlen(tid.get_member_type(i)) for i in range(tid.get_nmembers()))
    if cls == h5t.ARRAY:
        return has_vlen(tid.get_super())
    return False


class Conv:
    def __init__(self, f):
        self.f = f

    def ref_name(self, ref):
        if not ref:
            return ""
        try:
            return self.f[ref].name
        except Exception as e:  # pragma: no cover - reported to the test
            return "<bad reference: %s>" % e

    def region(self, ref):
        if not ref:
            return None
        target = self.f[ref]
        sid = h5py.h5r.get_region(ref, target.id)
        kind = sid.get_select_type()
        out = {"target": target.name}
        if kind == h5py.h5s.SEL_POINTS:
            out["select_type"] = "H5S_SEL_POINTS"
            out["selection"] = [list(map(int, p)) for p in sid.get_select_elem_pointlist()]
        elif kind == h5py.h5s.SEL_HYPERSLABS:
            out["select_type"] = "H5S_SEL_HYPERSLABS"
            out["selection"] = [[list(map(int, b[0])), list(map(int, b[1]))] for b in sid.get_select_hyper_blocklist()]
        else:
            out["select_type"] = str(kind)
        return out

    def __call__(self, x):
        if isinstance(x, h5py.RegionReference):
            return self.region(x)
        if isinstance(x, h5py.Reference):
            return self.ref_name(x)
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                return self(x[()])
            return [self(e) for e in x]
        if isinstance(x, np.void):
            if x.dtype.names:
                return [self(x[n]) for n in x.dtype.names]
            return base64.b64encode(x.tobytes()).decode("ascii")
        if isinstance(x, (bool, np.bool_)):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            return float(x)
        if isinstance(x, bytes):
            return x.decode("utf-8", "replace")
        if isinstance(x, (list, tuple)):
            return [self(e) for e in x]
        if isinstance(x, h5py.Empty):
            return {"empty": True}
        return x


def filters_of(dcpl):
    out = []
    for i in range(dcpl.get_nfilters()):
        code, flags, cd, name = dcpl.get_filter(i)
        out.append({"id": int(code), "flags": int(flags), "cd_values": [int(v) for v in cd], "name": name.decode("latin-1")})
    return out


def attrs_of(obj, conv):
    out = {}
    for name in obj.attrs:  # h5py lists in creation order when tracked, else name order
        aid = obj.attrs.get_id(name)
        space = aid.get_space()
        stype = space.get_simple_extent_type()
        a = {"type": describe_type(aid.get_type()), "dtype": aid.dtype.str}
        if stype == h5py.h5s.NULL:
            a["shape"] = None
            a["space"] = "NULL"
        else:
            a["space"] = "SCALAR" if stype == h5py.h5s.SCALAR else "SIMPLE"
            a["shape"] = list(space.shape)
            try:
                a["value"] = conv(obj.attrs[name])
            except Exception as e:
                atid = aid.get_type()
                if atid.get_class() == h5t.OPAQUE:
                    arr = np.empty(space.shape, dtype="V%d" % atid.get_size())
                    aid.read(arr, mtype=atid)
                    a["value"] = conv(arr)
                else:
                    a["value_error"] = "%s: %s" % (type(e).__name__, e)
        out[name] = a
    return {"names": list(obj.attrs), "items": out}


def describe_dataset(ds, conv):
    tid = ds.id.get_type()
    dcpl = ds.id.get_create_plist()
    out = {
        "kind": "dataset",
        "dtype": ds.dtype.str,
        "dtype_descr": ds.dtype.descr if ds.dtype.names else None,
        "type": describe_type(tid),
        "shape": None if ds.shape is None else list(ds.shape),
        "maxshape": None if ds.maxshape is None else list(ds.maxshape),
        "chunks": None if ds.chunks is None else list(ds.chunks),
        "layout": LAYOUTS.get(dcpl.get_layout(), str(dcpl.get_layout())),
        "compression": ds.compression,
        "compression_opts": ds.compression_opts,
        "shuffle": ds.shuffle,
        "fletcher32": ds.fletcher32,
        "scaleoffset": ds.scaleoffset,
        "filters": filters_of(dcpl),
        "fill_time": FILL_TIMES.get(dcpl.get_fill_time(), str(dcpl.get_fill_time())),
        "fill_defined": int(dcpl.fill_value_defined()),
        "attrs": attrs_of(ds, conv),
    }
    if tid.committed():
        out["type_addr"] = h5py.h5o.get_info(tid).addr
    if has_vlen(tid):
        out["fillvalue_skipped"] = True  # h5py 3.7 crashes reading a vlen fill value (own files too)
    else:
        try:
            out["fillvalue"] = conv(ds.fillvalue)
        except Exception as e:  # region references and the like
            out["fillvalue_error"] = str(e)
    space = ds.id.get_space()
    if space.get_simple_extent_type() == h5py.h5s.NULL:
        out["space"] = "NULL"
    else:
        out["space"] = "SCALAR" if space.get_simple_extent_type() == h5py.h5s.SCALAR else "SIMPLE"
        try:
            out["value"] = conv(ds[()])
        except Exception as e:
            if tid.get_class() == h5t.OPAQUE:
                # h5py has no conversion for tagged opaque types: read the raw bytes
                arr = np.empty(ds.shape, dtype="V%d" % tid.get_size())
                ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, arr, mtype=tid)
                out["value"] = conv(arr)
            else:
                out["value_error"] = "%s: %s" % (type(e).__name__, e)
    return out


def describe(obj, conv):
    if isinstance(obj, h5py.Dataset):
        d = describe_dataset(obj, conv)
    elif isinstance(obj, h5py.Group):
        d = {"kind": "group", "links": sorted(obj.keys()), "attrs": attrs_of(obj, conv)}
    elif isinstance(obj, h5py.Datatype):
        d = {"kind": "datatype", "dtype": obj.dtype.str, "type": describe_type(obj.id), "attrs": attrs_of(obj, conv)}
    else:
        d = {"kind": type(obj).__name__}
    d["addr"] = h5py.h5o.get_info(obj.id).addr
    return d


def main():
    path = sys.argv[1]
    wanted = sys.argv[2:]
    with h5py.File(path, "r") as f:
        conv = Conv(f)
        objects = {}
        if wanted:
            for p in wanted:
                objects[p] = describe(f[p], conv) if p in f else None
        else:
            objects["/"] = describe(f, conv)

            def visit(name, obj):
                objects["/" + name] = describe(obj, conv)

            f.visititems(visit)
        print(json.dumps({"objects": objects}, default=repr))


main()
