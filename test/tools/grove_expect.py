#!/usr/bin/env python3
"""What h5grove's API answers for a file, worked out here with h5py from h5grove's documented
behaviour (its OpenAPI description, content.py/utils.py/encoders.py: metadata keys sorted,
attributes sorted by name, children in keys() order resolved 'only_valid', types as h5py's type
objects describe them; JSON as orjson writes it: NaN and infinities null, bytes decoded, complex
[re, im]). Test oracle of test/api/grove.test.ts; written here, not copied from h5grove.

  grove_expect.py FILE              -> {"paths": [...], "meta": {path: meta}, "attr": {path: {..}},
                                        "data": {path: value}, "flat": {path: value},
                                        "stats": {path: stats}}
  grove_expect.py --check FILE DIR  -> checks DIR/<n>.<format> files (bin, safe.bin, npy, csv)
                                        written by the test against h5py; prints the problems
"""
import json
import math
import os
import sys

import h5py
import numpy as np


def dtype_str(dt):
    if dt.fields is None:
        return dt.str
    return {k: dtype_str(v[0]) for k, v in dt.fields.items()}


def type_meta(t):
    out = {'class': t.get_class(), 'dtype': dtype_str(t.dtype), 'size': t.get_size()}
    if isinstance(t, h5py.h5t.TypeIntegerID):
        out.update(order=t.get_order(), sign=t.get_sign())
    elif isinstance(t, h5py.h5t.TypeFloatID):
        out.update(order=t.get_order())
    elif isinstance(t, h5py.h5t.TypeStringID):
        out.update(cset=t.get_cset(), strpad=t.get_strpad(), vlen=bool(t.is_variable_str()))
    elif isinstance(t, h5py.h5t.TypeBitfieldID):
        out.update(order=t.get_order())
    elif isinstance(t, h5py.h5t.TypeOpaqueID):
        out.update(tag=t.get_tag().decode())
    elif isinstance(t, h5py.h5t.TypeCompoundID):
        out['members'] = [{'name': t.get_member_name(i).decode(), **type_meta(t.get_member_type(i))} for i in range(t.get_nmembers())]
    elif isinstance(t, h5py.h5t.TypeEnumID):
        out['members'] = {t.get_member_name(i).decode(): t.get_member_value(i) for i in range(t.get_nmembers())}
        out['base'] = type_meta(t.get_super())
    elif isinstance(t, h5py.h5t.TypeVlenID):
        out['base'] = type_meta(t.get_super())
    elif isinstance(t, h5py.h5t.TypeArrayID):
        out.update(dims=list(t.get_array_dims()), base=type_meta(t.get_super()))
    return out


def attrs_meta(obj):
    out = []
    for name in sorted(obj.attrs.keys()):
        aid = obj.attrs.get_id(name)
        shape = aid.shape
        out.append({'name': name, 'shape': None if shape is None else list(shape), 'type': type_meta(aid.get_type())})
    return out


def entity(f, path, resolve='only_valid', depth=1):
    name = path.split('/')[-1]
    if path != '/':
        link = f.get(path, getlink=True)
        if link is None:
            return None
        if isinstance(link, (h5py.SoftLink, h5py.ExternalLink)):
            target = None
            if resolve != 'none':
                try:
                    target = f[path]
                except (KeyError, OSError):
                    target = None
            if target is None:
                if isinstance(link, h5py.SoftLink):
                    return {'kind': 'soft_link', 'name': name, 'target_path': link.path}
                return {'kind': 'external_link', 'name': name, 'target_file': link.filename, 'target_path': link.path}
    obj = f[path]
    if isinstance(obj, h5py.Dataset):
        filters = None
        pl = obj.id.get_create_plist()
        if pl.get_nfilters() > 0:
            filters = [{'id': pl.get_filter(i)[0], 'name': pl.get_filter(i)[3].decode()} for i in range(pl.get_nfilters())]
        return {'attributes': attrs_meta(obj), 'chunks': list(obj.chunks) if obj.chunks else None, 'filters': filters, 'kind': 'dataset',
                'name': name, 'shape': None if obj.shape is None else list(obj.shape), 'type': type_meta(obj.id.get_type())}
    if isinstance(obj, h5py.Datatype):
        return {'attributes': attrs_meta(obj), 'kind': 'datatype', 'name': name, 'type': type_meta(obj.id)}
    meta = {'attributes': attrs_meta(obj), 'kind': 'group', 'name': name}
    if depth > 0:
        base = '' if path == '/' else path
        meta = {'attributes': meta['attributes'], 'children': [entity(f, f'{base}/{k}', 'only_valid', 0) for k in obj.keys()], 'kind': 'group', 'name': name}
    return meta


def jsonable(v):
    """orjson's view of a value h5py read."""
    if isinstance(v, h5py.Empty):
        return None
    if isinstance(v, (h5py.Reference, h5py.RegionReference)):
        return str(v)
    if isinstance(v, bytes):
        return v.decode('utf-8', 'replace')
    if isinstance(v, str):
        return v
    if isinstance(v, np.ndarray):
        if v.dtype.kind == 'c':
            return [jsonable(x) for x in v.tolist()] if v.ndim else [v.real.item(), v.imag.item()]
        return [jsonable(x) for x in v] if v.ndim else jsonable(v[()])
    if isinstance(v, (complex, np.complexfloating)):
        return [float(v.real), float(v.imag)]
    if isinstance(v, np.void) and v.dtype.fields:
        return [jsonable(x) for x in v.tolist()]
    if isinstance(v, tuple):
        return [jsonable(x) for x in v]
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        x = float(v)
        return None if (math.isnan(x) or math.isinf(x)) else x
    return v


def comparable(obj):
    """Datasets whose values the test compares (references and opaque data are shown differently by design)."""
    t = obj.id.get_type()
    def ok(t):
        if isinstance(t, (h5py.h5t.TypeReferenceID, h5py.h5t.TypeOpaqueID)):
            return False
        if isinstance(t, h5py.h5t.TypeCompoundID):
            return all(ok(t.get_member_type(i)) for i in range(t.get_nmembers()))
        if isinstance(t, (h5py.h5t.TypeVlenID, h5py.h5t.TypeArrayID, h5py.h5t.TypeEnumID)):
            return ok(t.get_super())
        return True
    return ok(t)


def stats(data):
    data = np.asarray(data)
    if not (np.issubdtype(data.dtype, np.number) or np.issubdtype(data.dtype, np.bool_)) or np.issubdtype(data.dtype, np.complexfloating):
        return None
    if np.issubdtype(data.dtype, np.floating):
        data = data[np.isfinite(data)]
    if data.size == 0:
        return {k: None for k in ['strict_positive_min', 'positive_min', 'min', 'max', 'mean', 'std']}
    cast = float if np.issubdtype(data.dtype, np.floating) else int
    sp = data[data > 0]
    pos = data[data >= 0]
    return {'strict_positive_min': cast(np.min(sp)) if sp.size else None, 'positive_min': cast(np.min(pos)) if pos.size else None,
            'min': cast(np.min(data)), 'max': cast(np.max(data)), 'mean': cast(np.mean(data)), 'std': cast(np.std(data))}


def expect(file):
    out = {'paths': ['/'], 'meta': {}, 'attr': {}, 'data': {}, 'flat': {}, 'stats': {}}
    with h5py.File(file, 'r') as f:
        f.id.links.visit(lambda n: out['paths'].append('/' + n.decode()))
        for p in out['paths']:
            out['meta'][p] = entity(f, p)
            try:
                obj = f[p]
            except (KeyError, OSError):
                continue
            if not isinstance(obj, h5py.Datatype):
                out['attr'][p] = {k: jsonable(obj.attrs[k]) for k in obj.attrs.keys()}
            if isinstance(obj, h5py.Dataset) and comparable(obj) and (obj.size or 0) < 200000:
                v = obj[()]
                out['data'][p] = jsonable(v)
                if isinstance(v, np.ndarray) and v.ndim > 0:
                    out['flat'][p] = jsonable(np.ravel(v))
                try:
                    out['stats'][p] = stats(v) if not isinstance(v, h5py.Empty) else None
                except TypeError:
                    out['stats'][p] = None
    return out


def check(file, folder):
    """The encoded answers the test saved (<index>.<format>, with index.json naming them) against h5py."""
    problems = []
    wanted = json.load(open(os.path.join(folder, 'index.json')))
    with h5py.File(file, 'r') as f:
        for item in wanted:
            p, fmt, sel = item['path'], item['format'], item.get('selection')
            blob = open(os.path.join(folder, item['file']), 'rb').read()
            ds = f[p]
            ref = ds[eval('np.index_exp[%s]' % sel)] if sel else ds[()]
            ref = np.asarray(ref)
            try:
                if fmt == 'bin':
                    got = np.frombuffer(blob, dtype=ref.dtype).reshape(ref.shape)
                    ok = blob == ref.tobytes()
                elif fmt == 'safe':
                    want = ref.astype(ref.dtype.newbyteorder('<') if ref.dtype.kind != 'f' or ref.dtype.itemsize >= 4 else '<f4')
                    ok = blob == want.tobytes()
                elif fmt == 'npy':
                    import io
                    got = np.load(io.BytesIO(blob))
                    ok = got.dtype == ref.dtype and got.shape == ref.shape and np.array_equal(got, ref, equal_nan=ref.dtype.kind in 'fc')
                elif fmt == 'csv':
                    got = np.genfromtxt(blob.decode().splitlines(), delimiter=',', dtype=ref.dtype if ref.dtype.kind != 'b' else 'i1')
                    got = got.reshape(ref.shape)
                    ok = np.array_equal(got, ref, equal_nan=ref.dtype.kind == 'f')
                else:
                    ok = False
            except Exception as e:  # noqa: BLE001 - reported as a problem
                ok = False
                problems.append('%s %s: %s' % (p, fmt, e))
                continue
            if not ok:
                problems.append('%s %s%s: differs from h5py' % (p, fmt, ' [%s]' % sel if sel else ''))
    print(json.dumps(problems))


if __name__ == '__main__':
    if sys.argv[1] == '--check':
        check(sys.argv[2], sys.argv[3])
    else:
        print(json.dumps(expect(sys.argv[1])))
