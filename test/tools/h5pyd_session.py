"""A user's whole session with a real h5pyd client (0.24 or 1.0, issue #25), and summaries of
what a file holds as h5pyd and as h5py read it, so a test can compare them.

  h5pyd_session.py write DOMAIN        create DOMAIN (mode "w"): groups, datasets of every type,
                                       attributes, links, a committed type; flush; close
  h5pyd_session.py append DOMAIN       reopen in mode "a": a new dataset, attribute and group,
                                       a value changed, a resize; close
  h5pyd_session.py summary DOMAIN      reopen read-only with h5pyd; print the summary (JSON)
  h5pyd_session.py h5py FILE           the same summary read with h5py from the file on disk
  h5pyd_session.py expected [appended] the summary the session should leave

The summary: every object by path (the reserved group /__h5store__ left out) with its kind,
dtype, shape, values, attributes, link classes and targets. Run with h5pyd (or h5py) on
PYTHONPATH; HS_ENDPOINT, HS_USERNAME and HS_PASSWORD name the server.
"""
import json
import sys

import numpy as np

RESERVED = "__h5store__"
CMP = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S4")])
POINT = np.dtype([("x", "<f8"), ("y", "<f8")])
ARR = np.dtype([("v", "<i2", (3,))])


def enum_dtype(mod):
    return mod.special_dtype(enum=(np.dtype("u1"), {"RED": 0, "GREEN": 1, "BLUE": 2}))


def write(mod, domain):
    vstr = mod.special_dtype(vlen=str)
    f = mod.File(domain, "w")
    g1 = f.create_group("g1")
    g2 = g1.create_group("g2", track_order=True)
    f.create_group("empty")
    f.create_dataset("i1", data=np.array([-1, 2, -3], dtype="i1"))
    f.create_dataset("u2", data=np.array([1, 65535], dtype="<u2"))
    f.create_dataset("i8", data=np.arange(-5, 5, dtype="<i8").reshape(2, 5))
    f.create_dataset("u8", data=np.array([0, 2 ** 63 + 5], dtype="<u8"))
    f.create_dataset("f4", data=np.linspace(0, 1, 6, dtype="<f4").reshape(2, 3))
    f.create_dataset("f8be", data=np.array([1.5, -2.25, 1e300], dtype=">f8"))
    f.create_dataset("fixstr", data=np.array([b"ab", b"cde", b""], dtype="S3"))
    f.create_dataset("vlstr", data=np.array(["hello", "w\u00f6rld", ""], dtype=object), dtype=vstr)
    f.create_dataset("cmp", data=np.array([(1, 2.5, b"x"), (-3, 4.5, b"yyyy")], dtype=CMP))
    f.create_dataset("arrfield", data=np.array([([1, 2, 3],), ([4, 5, 6],)], dtype=ARR))
    f.create_dataset("bools", data=np.array([True, False, True]))
    f.create_dataset("enum", data=np.array([0, 2, 1], dtype="u1"), dtype=enum_dtype(mod))
    f.create_dataset("scalar", data=np.float64(42.5))
    f.create_dataset("scalarstr", data=b"just bytes")
    f.create_dataset("chunked", data=np.arange(5000, dtype="<i4").reshape(50, 100), chunks=(10, 100), compression="gzip")
    f.create_dataset("big", data=np.arange(3_000_000, dtype="<f4"))
    r = f.create_dataset("resizable", (4,), maxshape=(None,), dtype="<i8")
    r[...] = np.arange(4)
    r.resize((7,))
    r[4:] = [4, 5, 6]
    f.create_dataset("fill", (4,), dtype="<i4", fillvalue=-7)
    f.create_dataset("partial", (6,), dtype="<i4")[1:3] = [11, 12]
    f["mytype"] = POINT
    f.create_dataset("typed", data=np.array([(1.0, 2.0), (3.0, 4.0)], dtype=POINT), dtype=f["mytype"])
    g1.create_dataset("nested", data=np.arange(3, dtype="<i2"))
    g1.attrs["int"] = np.int32(5)
    g1.attrs["floats"] = np.arange(6, dtype="<f8").reshape(2, 3)
    g1.attrs["text"] = "some text"
    g1.attrs["texts"] = np.array(["a", "bb"], dtype=object)
    g1.attrs["cmp"] = np.array([(7, 0.5, b"q")], dtype=CMP)
    f.attrs["title"] = "a session"
    for i in range(12):  # more than 8: dense attribute storage; the order they were made in
        g2.attrs[f"z{11 - i:02d}"] = i
    for name in ("c", "a", "b"):
        g2.create_group(name)
    f["soft"] = mod.SoftLink("/g1/nested")
    f["ext"] = mod.ExternalLink("other.h5", "/x")
    f.flush()
    f.close()


def append(mod, domain):
    f = mod.File(domain, "a")
    f.create_dataset("later", data=np.array([10, 20, 30], dtype="<i4"))
    f["i8"][0, 0] = 99
    f["resizable"].resize((8,))
    f["resizable"][7] = 7
    f["g1"].attrs["added"] = 1.25
    f.create_group("g3").attrs["n"] = np.int64(3)
    f.close()


def jsonable(v, f=None):
    """A value as JSON can hold it: bytes as text, numpy scalars and arrays as lists, object
    references as the path of their target, an empty (H5S_NULL) value as None."""
    if type(v).__name__ in ("Reference", "RegionReference"):
        try:
            return "ref:" + f[v].name
        except Exception:
            return "ref"
    if type(v).__name__ == "Empty":
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return [jsonable(x, f) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [jsonable(x, f) for x in v]
    if isinstance(v, np.generic):
        return jsonable(v.item(), f)
    if isinstance(v, float) and v != v:
        return "nan"
    return v


def dtype_name(dt):
    if dt.names:
        return [[n, dtype_name(dt.fields[n][0])] for n in dt.names]
    if dt.subdtype:
        return [dtype_name(dt.subdtype[0]), list(dt.subdtype[1])]
    if dt.kind == "O":
        return "vlen"
    return dt.str.replace("|", "=")


def summary(f, mod_name):
    out = {}

    def attrs_of(o):
        return {k: jsonable(o.attrs[k], f) for k in sorted(o.attrs)}

    def visit(path, o):
        if path.split("/")[0] == RESERVED:
            return
        if hasattr(o, "shape") and hasattr(o, "dtype") and not hasattr(o, "keys"):
            value = o[()] if o.shape is not None else None
            if value is not None and getattr(value, "size", 1) > 10000:
                flat = value.reshape(-1)  # large values as a digest: count, sum, first and last elements
                shown = {"n": int(flat.size), "sum": float(np.sum(flat, dtype="f8")), "head": jsonable(flat[:3]), "tail": jsonable(flat[-3:])}
            else:
                shown = jsonable(value, f)
            out["/" + path] = {"kind": "dataset", "dtype": dtype_name(o.dtype), "shape": list(o.shape) if o.shape is not None else None, "value": shown, "attrs": attrs_of(o)}
        elif hasattr(o, "keys"):
            links = {}
            for k in o.keys():
                if o is f and k == RESERVED:
                    continue
                try:
                    ln = o.get(k, getlink=True)
                except (TypeError, ValueError):  # a user-defined link: neither client nor h5py names it
                    links[k] = {"class": "UserDefined"}
                    continue
                cls = type(ln).__name__
                item = {"class": cls}
                if cls == "SoftLink":
                    item["path"] = ln.path
                elif cls == "ExternalLink":
                    item["file"] = ln.filename
                    item["path"] = ln.path
                links[k] = item
            out["/" + path if path else "/"] = {"kind": "group", "links": links, "attrs": attrs_of(o)}
        else:
            out["/" + path] = {"kind": "datatype", "dtype": dtype_name(o.dtype)}

    visit("", f)
    names = []
    f.visit(lambda n: names.append(n))
    for n in names:
        if n.split("/")[0] == RESERVED:
            continue
        try:
            o = f[n]
        except Exception:  # a soft link to nothing, an external link
            continue
        visit(n, o)
    # the order of the attributes of the group made with track_order (creation order)
    if "/g1/g2" in out:
        out["/g1/g2"]["attr_order"] = list(f["g1/g2"].attrs)
    return out


def expected(appended):
    vals = {
        "/i1": ("=i1", [3], [-1, 2, -3]),
        "/u2": ("<u2", [2], [1, 65535]),
        "/i8": ("<i8", [2, 5], [[-5, -4, -3, -2, -1], [0, 1, 2, 3, 4]]),
        "/u8": ("<u8", [2], [0, 2 ** 63 + 5]),
        "/f4": ("<f4", [2, 3], np.linspace(0, 1, 6, dtype="<f4").reshape(2, 3).tolist()),
        "/f8be": (">f8", [3], [1.5, -2.25, 1e300]),
        "/fixstr": ("=S3", [3], ["ab", "cde", ""]),
        "/vlstr": ("vlen", [3], ["hello", "w\u00f6rld", ""]),
        "/cmp": ([["a", "<i4"], ["b", "<f8"], ["c", "=S4"]], [2], [[1, 2.5, "x"], [-3, 4.5, "yyyy"]]),
        "/arrfield": ([["v", ["<i2", [3]]]], [2], [[[1, 2, 3]], [[4, 5, 6]]]),
        "/bools": ("=b1", [3], [True, False, True]),
        "/enum": ("=u1", [3], [0, 2, 1]),
        "/scalar": ("<f8", [], 42.5),
        "/scalarstr": ("vlen", [], "just bytes"),  # h5pyd stores bytes given alone as a variable-length string
        "/chunked": ("<i4", [50, 100], np.arange(5000).reshape(50, 100).tolist()),
        "/big": ("<f4", [3000000], {"n": 3000000, "sum": float(np.sum(np.arange(3_000_000, dtype="<f4"), dtype="f8")), "head": [0.0, 1.0, 2.0], "tail": [2999997.0, 2999998.0, 2999999.0]}),
        "/resizable": ("<i8", [7], [0, 1, 2, 3, 4, 5, 6]),
        "/fill": ("<i4", [4], [-7, -7, -7, -7]),
        "/partial": ("<i4", [6], [0, 11, 12, 0, 0, 0]),
        "/typed": ([["x", "<f8"], ["y", "<f8"]], [2], [[1.0, 2.0], [3.0, 4.0]]),
        "/g1/nested": ("<i2", [3], [0, 1, 2]),
    }
    if appended:
        vals["/i8"][2][0][0] = 99
        vals["/resizable"] = ("<i8", [8], [0, 1, 2, 3, 4, 5, 6, 7])
        vals["/later"] = ("<i4", [3], [10, 20, 30])
    return vals


def main():
    what, arg = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
    if what == "h5py":
        import h5py
        with h5py.File(arg, "r") as f:
            print(json.dumps(summary(f, "h5py")))
        return
    if what == "expected":
        print(json.dumps({k: {"dtype": v[0], "shape": v[1], "value": v[2]} for k, v in expected(arg == "appended").items()}))
        return
    import h5pyd
    if what == "write":
        write(h5pyd, arg)
    elif what == "append":
        append(h5pyd, arg)
    elif what == "summary":
        f = h5pyd.File(arg, "r")
        try:
            print(json.dumps(summary(f, "h5pyd")))
        finally:
            f.close()
    else:
        raise SystemExit(f"unknown command {what}")


if __name__ == "__main__":
    main()
