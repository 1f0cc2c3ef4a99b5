#!/usr/bin/python3
"""Dump an HDF5 file as JSON, as h5py (Debian's python3-h5py) reads it.

Usage: /usr/bin/python3 test/tools/dump_h5.py FILE

Independent reference for the API tests: nothing here comes from the server. Types are described
in the REST API's canonical type JSON (wire-reference 3.1), computed from h5py's low-level type API
(h5py.h5t); values follow the REST API's JSON value conventions (wire-reference 3.1 value table).

Output:
{
  "file": <file name>,
  "root": "<addr>",                      # object header address of the root group (decimal string)
  "objects": {                           # every object reachable from "/" by hard links
    "<addr>": {
      "kind": "group" | "dataset" | "datatype",
      "paths": [...],                    # sorted; one per hard link met while walking (see walk())
      "attributeCount": n,
      "attributes": [ {"name", "type", "committed"?, "shape", "value"} ... ],   # name order
      "attributesByCreation": [names],   # only when the object tracks attribute creation order
      # groups:
      "links": [ {"title", "class", ...target...} ... ],                         # name order
      "linksByCreation": [titles],       # only when the group tracks link creation order
      #   hard: "addr": "<addr>", "kind"; soft: "h5path"; external: "file", "h5path";
      #   user-defined: "linkClass": <int>
      # datasets:
      "type", "committed"?, "shape", "layout": {"class", "dims"?},
      "filters": [ {"id", "name", "flags", "cd_values"} ... ], "fillValue"? (user-defined only),
      "value"
      # datatypes:
      "type"
    }
  }
}
"committed": "<addr>" is given when the type is a committed (named) datatype (the object address
of that datatype). Shapes: {"class": "H5S_NULL"} | {"class": "H5S_SCALAR"} |
{"class": "H5S_SIMPLE", "dims": [...], "maxdims": [... None for unlimited ...]}.

Values: numbers as numbers (float32 widened exactly to float64; NaN/Infinity as Python's json
emits them); strings decoded as UTF-8 (invalid bytes replaced), fixed-length ones with padding
stripped as the type says (NULLTERM: cut at the first NUL; NULLPAD: trailing NULs stripped;
SPACEPAD: trailing spaces stripped); compound -> list of field values; array type -> nested lists;
h5py's boolean enum -> true/false, other enums -> integer; vlen sequence -> list; opaque -> base64
of the bytes; object reference -> {"$ref": "<addr>"} or {"$ref": null} for a null reference;
region reference -> {"$regionref": "<addr>"}; null dataspace -> null.
"""
import base64
import json
import sys

import h5py
import numpy as np
from h5py import h5, h5a, h5d, h5l, h5o, h5p, h5r, h5s, h5t

KIND = {h5o.TYPE_GROUP: 'group', h5o.TYPE_DATASET: 'dataset', h5o.TYPE_NAMED_DATATYPE: 'datatype'}


def addr_of(objid):
    return str(h5o.get_info(objid).addr)


# ---------------------------------------------------------------------------------------------
# types

def order_suffix(tid):
    o = tid.get_order()
    if o == h5t.ORDER_LE:
        return 'LE'
    if o == h5t.ORDER_BE:
        return 'BE'
    raise ValueError('unsupported byte order %r' % o)


def describe_type(tid):
    """Canonical REST type JSON of an h5py TypeID (nested committed types carry "committed")."""
    return _describe(tid)


def committed_addr(tid):
    try:
        if tid.committed():
            return addr_of(tid)
    except Exception:
        pass
    return None


def _describe(tid):
    cls = tid.get_class()
    size = tid.get_size()
    if cls == h5t.INTEGER:
        sign = 'I' if tid.get_sign() == h5t.SGN_2 else 'U'
        return {'class': 'H5T_INTEGER', 'base': 'H5T_STD_%s%d%s' % (sign, size * 8, order_suffix(tid))}
    if cls == h5t.FLOAT:
        return {'class': 'H5T_FLOAT', 'base': 'H5T_IEEE_F%d%s' % (size * 8, order_suffix(tid))}
    if cls == h5t.BITFIELD:
        return {'class': 'H5T_BITFIELD', 'base': 'H5T_STD_B%d%s' % (size * 8, order_suffix(tid))}
    if cls == h5t.STRING:
        cset = {h5t.CSET_ASCII: 'H5T_CSET_ASCII', h5t.CSET_UTF8: 'H5T_CSET_UTF8'}[tid.get_cset()]
        pad = {h5t.STR_NULLTERM: 'H5T_STR_NULLTERM', h5t.STR_NULLPAD: 'H5T_STR_NULLPAD',
               h5t.STR_SPACEPAD: 'H5T_STR_SPACEPAD'}[tid.get_strpad()]
        length = 'H5T_VARIABLE' if tid.is_variable_str() else size
        return {'class': 'H5T_STRING', 'charSet': cset, 'strPad': pad, 'length': length}
    if cls == h5t.COMPOUND:
        fields = []
        for i in range(tid.get_nmembers()):
            fields.append({'name': tid.get_member_name(i).decode('utf-8'), 'type': _describe_member(tid.get_member_type(i))})
        return {'class': 'H5T_COMPOUND', 'fields': fields}
    if cls == h5t.ARRAY:
        return {'class': 'H5T_ARRAY', 'base': _describe_member(tid.get_super()), 'dims': [int(d) for d in tid.get_array_dims()]}
    if cls == h5t.ENUM:
        mapping = {}
        for i in range(tid.get_nmembers()):
            mapping[tid.get_member_name(i).decode('utf-8')] = int(tid.get_member_value(i))
        return {'class': 'H5T_ENUM', 'base': _describe_member(tid.get_super()), 'mapping': mapping}
    if cls == h5t.VLEN:
        return {'class': 'H5T_VLEN', 'base': _describe_member(tid.get_super())}
    if cls == h5t.OPAQUE:
        tag = tid.get_tag()
        if isinstance(tag, bytes):
            tag = tag.decode('utf-8', 'replace')
        return {'class': 'H5T_OPAQUE', 'size': size, 'tag': tag}
    if cls == h5t.REFERENCE:
        if tid.equal(h5t.STD_REF_OBJ):
            return {'class': 'H5T_REFERENCE', 'base': 'H5T_STD_REF_OBJ'}
        if tid.equal(h5t.STD_REF_DSETREG):
            return {'class': 'H5T_REFERENCE', 'base': 'H5T_STD_REF_DSETREG'}
        raise ValueError('unsupported reference type of size %d' % size)
    raise ValueError('unsupported type class %r' % cls)


def _describe_member(tid):
    """A nested type: its JSON, with "committed" when the nested type is itself committed."""
    out = _describe(tid)
    c = committed_addr(tid)
    if c is not None:
        out['committed'] = c
    return out


def native_order(t):
    """False if a numeric type anywhere in t has the non-native byte order."""
    native = 'LE' if sys.byteorder == 'little' else 'BE'
    c = t['class']
    if c in ('H5T_INTEGER', 'H5T_FLOAT', 'H5T_BITFIELD'):
        return t['base'].endswith(native) or t['base'][-4:-2] in ('I8', 'U8', 'B8')
    if c in ('H5T_ARRAY', 'H5T_VLEN', 'H5T_ENUM'):
        return native_order(t['base'])
    if c == 'H5T_COMPOUND':
        return all(native_order(f['type']) for f in t['fields'])
    return True


def is_bool_enum(t):
    return (t['class'] == 'H5T_ENUM' and t['base']['base'][-4:-2] in ('I8', 'U8')
            and t['mapping'] == {'FALSE': 0, 'TRUE': 1})


# ---------------------------------------------------------------------------------------------
# values

def strip_fixed(raw, pad):
    if pad == 'H5T_STR_NULLTERM':
        i = raw.find(b'\0')
        return raw if i < 0 else raw[:i]
    if pad == 'H5T_STR_NULLPAD':
        return raw.rstrip(b'\0')
    # SPACEPAD (numpy has already dropped trailing NULs, if any)
    return raw.rstrip(b'\0').rstrip(b' ')


class Converter:
    def __init__(self, fid):
        self.fid = fid

    def element(self, t, v):
        c = t['class']
        if c in ('H5T_INTEGER', 'H5T_BITFIELD'):
            return int(v)
        if c == 'H5T_FLOAT':
            return float(v)
        if c == 'H5T_STRING':
            if isinstance(v, str):
                return v
            if isinstance(v, np.ndarray):  # numpy S element from a 0-d array
                v = v.tobytes()
            raw = bytes(v)
            if t['length'] != 'H5T_VARIABLE':
                raw = strip_fixed(raw, t['strPad'])
            return raw.decode('utf-8', 'replace')
        if c == 'H5T_COMPOUND':
            return [self.element(f['type'], v[i]) for i, f in enumerate(t['fields'])]
        if c == 'H5T_ARRAY':
            # h5py reads an array-type element as a numpy sub-array shaped like dims
            a = np.asarray(v)
            if list(a.shape) != t['dims']:
                raise ValueError('array element of shape %r for dims %r' % (a.shape, t['dims']))
            return self.nested(t['base'], a, a.ndim)
        if c == 'H5T_ENUM':
            if is_bool_enum(t):
                return bool(v)
            return int(v)
        if c == 'H5T_VLEN':
            if not native_order(t['base']):
                # h5py 3.7 hands back the file's bytes unswapped here: refuse rather than dump wrong values
                raise ValueError('h5py cannot read vlen sequences of non-native byte order: %r' % (t,))
            return [self.element(t['base'], x) for x in np.asarray(v).reshape(-1)]
        if c == 'H5T_OPAQUE':
            return base64.b64encode(np.asarray(v).tobytes()).decode('ascii')
        if c == 'H5T_REFERENCE':
            if t['base'] == 'H5T_STD_REF_OBJ':
                if not v:
                    return {'$ref': None}
                return {'$ref': addr_of(h5r.dereference(v, self.fid))}
            if not v:
                return {'$regionref': None}
            return {'$regionref': addr_of(h5r.dereference(v, self.fid))}
        raise ValueError('no value conversion for %s' % c)

    def nested(self, t, arr, rank):
        """Nested lists (C order) over the first `rank` axes of a numpy array. Axes beyond `rank`
        belong to the elements (h5py folds array types into the array's shape)."""
        if rank == 0:
            return self.element(t, arr)
        if rank == 1:
            return [self.element(t, arr[i]) for i in range(arr.shape[0])]
        return [self.nested(t, arr[i], rank - 1) for i in range(arr.shape[0])]

    def value(self, t, shape, data):
        if shape['class'] == 'H5S_NULL' or isinstance(data, h5py.Empty):
            return None
        if shape['class'] == 'H5S_SCALAR':
            if isinstance(data, np.ndarray) and data.ndim == 0:
                return self.element(t, data[()])
            return self.element(t, data)
        arr = data if isinstance(data, np.ndarray) else np.asarray(data)
        rank = len(shape['dims'])
        if list(arr.shape[:rank]) != shape['dims']:
            raise ValueError('h5py value of shape %r for dims %r' % (arr.shape, shape['dims']))
        return self.nested(t, arr, rank)


# ---------------------------------------------------------------------------------------------
# objects

def shape_json(space):
    cls = space.get_simple_extent_type()
    if cls == h5s.NULL:
        return {'class': 'H5S_NULL'}
    if cls == h5s.SCALAR:
        return {'class': 'H5S_SCALAR'}
    dims = [int(d) for d in space.get_simple_extent_dims()]
    maxdims = [None if m == h5s.UNLIMITED else int(m) for m in space.get_simple_extent_dims(maxdims=True)]
    return {'class': 'H5S_SIMPLE', 'dims': dims, 'maxdims': maxdims}


def attributes_of(obj, conv):
    names = []
    h5a.iterate(obj.id, lambda name, *rest: names.append(name) and None, index_type=h5.INDEX_NAME, order=h5.ITER_INC)
    out = []
    for bname in names:
        aid = h5a.open(obj.id, bname)
        tid = aid.get_type()
        t = describe_type(tid)
        shape = shape_json(aid.get_space())
        name = bname.decode('utf-8')
        data = obj.attrs[name]
        item = {'name': name, 'type': t, 'shape': shape, 'value': conv.value(t, shape, data)}
        c = committed_addr(tid)
        if c is not None:
            item['committed'] = c
        out.append(item)
    return out


LAYOUTS = {h5d.COMPACT: 'H5D_COMPACT', h5d.CONTIGUOUS: 'H5D_CONTIGUOUS', h5d.CHUNKED: 'H5D_CHUNKED', h5d.VIRTUAL: 'H5D_VIRTUAL'}


def dataset_info(ds, conv):
    dsid = ds.id
    tid = dsid.get_type()
    t = describe_type(tid)
    shape = shape_json(dsid.get_space())
    dcpl = dsid.get_create_plist()
    layout = {'class': LAYOUTS[dcpl.get_layout()]}
    if dcpl.get_layout() == h5d.CHUNKED:
        layout['dims'] = [int(x) for x in dcpl.get_chunk()]
    filters = []
    for i in range(dcpl.get_nfilters()):
        code, flags, values, name = dcpl.get_filter(i)
        filters.append({'id': int(code), 'flags': int(flags), 'cd_values': [int(x) for x in values],
                        'name': name.decode('utf-8', 'replace') if isinstance(name, bytes) else name})
    out = {'type': t, 'shape': shape, 'layout': layout, 'filters': filters}
    c = committed_addr(tid)
    if c is not None:
        out['committed'] = c
    if dcpl.fill_value_defined() == h5d.FILL_VALUE_USER_DEFINED:
        fv = ds.fillvalue
        out['fillValue'] = conv.element(t, fv)
    if shape['class'] == 'H5S_NULL':
        out['value'] = None
    else:
        out['value'] = conv.value(t, shape, ds[()])
    return out


def walk(f):
    """Breadth-first walk over hard links, each group's links in name order. An object's paths are
    <first path of the parent group> + "/" + <link name> for every hard link met ("/" for root)."""
    conv = Converter(f.id)
    root_addr = addr_of(f['/'].id)
    objects = {root_addr: {'kind': 'group', 'paths': ['/']}}
    first_path = {root_addr: '/'}
    queue = [root_addr]
    handles = {root_addr: f['/']}
    while queue:
        addr = queue.pop(0)
        grp = handles.pop(addr)
        gpath = first_path[addr]
        infos = []
        # h5py reuses one LinkInfo for every callback: copy its fields inside the callback
        grp.id.links.iterate(lambda name, info: infos.append((name, info.type, info.u)) and None, info=True,
                             idx_type=h5.INDEX_NAME, order=h5.ITER_INC)
        links = []
        for bname, ltype, lu in infos:
            name = bname.decode('utf-8')
            child_path = (gpath.rstrip('/') + '/' + name)
            if ltype == h5l.TYPE_HARD:
                hl = grp.get(name, getlink=True)
                assert isinstance(hl, h5py.HardLink)
                caddr = str(lu)
                oinfo = h5o.get_info(grp.id, bname)
                assert str(oinfo.addr) == caddr
                kind = KIND[oinfo.type]
                links.append({'title': name, 'class': 'H5L_TYPE_HARD', 'addr': caddr, 'kind': kind})
                if caddr in objects:
                    objects[caddr]['paths'].append(child_path)
                else:
                    objects[caddr] = {'kind': kind, 'paths': [child_path]}
                    first_path[caddr] = child_path
                    if kind == 'group':
                        handles[caddr] = grp[name]
                        queue.append(caddr)
            elif ltype == h5l.TYPE_SOFT:
                sl = grp.get(name, getlink=True)
                links.append({'title': name, 'class': 'H5L_TYPE_SOFT', 'h5path': sl.path})
            elif ltype == h5l.TYPE_EXTERNAL:
                el = grp.get(name, getlink=True)
                links.append({'title': name, 'class': 'H5L_TYPE_EXTERNAL', 'file': el.filename, 'h5path': el.path})
            else:
                links.append({'title': name, 'class': 'H5L_TYPE_USER_DEFINED', 'linkClass': int(ltype)})
        objects[addr]['links'] = links
        # groups that track link creation order: the titles in that order
        if grp.id.get_create_plist().get_link_creation_order() & h5p.CRT_ORDER_TRACKED:
            crt = []
            grp.id.links.iterate(lambda name: crt.append(name.decode('utf-8')) and None,
                                 idx_type=h5.INDEX_CRT_ORDER, order=h5.ITER_INC)
            objects[addr]['linksByCreation'] = crt
    # details of every object
    for addr, o in objects.items():
        path = o['paths'][0]
        obj = f[path]
        o['attributeCount'] = h5a.get_num_attrs(obj.id)
        o['attributes'] = attributes_of(obj, conv)
        if obj.id.get_create_plist().get_attr_creation_order() & h5p.CRT_ORDER_TRACKED:
            crt = []
            h5a.iterate(obj.id, lambda name, *rest: crt.append(name.decode('utf-8')) and None,
                        index_type=h5.INDEX_CRT_ORDER, order=h5.ITER_INC)
            o['attributesByCreation'] = crt
        if o['kind'] == 'dataset':
            o.update(dataset_info(obj, conv))
        elif o['kind'] == 'datatype':
            o['type'] = describe_type(obj.id)
        o['paths'].sort()
    return {'root': root_addr, 'objects': objects}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write('usage: dump_h5.py FILE\n')
        sys.exit(2)
    fname = sys.argv[1]
    with h5py.File(fname, 'r') as f:
        out = walk(f)
    out['file'] = fname
    # one write: json.dump writes each token on its own, a system call each where stdout is
    # unbuffered (PYTHONUNBUFFERED): millions for the larger fixtures
    sys.stdout.write(json.dumps(out, allow_nan=True, separators=(',', ':')) + '\n')


if __name__ == '__main__':
    main()
