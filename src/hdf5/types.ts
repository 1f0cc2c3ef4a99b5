/**
 * HDF5 datatypes <-> canonical type JSON (`TypeJson`, wire-reference 3.1).
 *
 * `describeType` turns any datatype found in a file into the REST API's type JSON; types the
 * JSON grammar has no exact name for are mapped to the nearest standard type (e.g. a 12-bit
 * integer in 2 bytes is reported as `H5T_STD_I16LE`, an 80-bit long double as
 * `H5T_IEEE_F64LE`), and libhdf5 converts values on read and write.
 *
 * `createType` builds the HDF5 datatype for a type JSON; the same type serves as the file type
 * of new objects and as the memory type of reads and writes. Compounds are packed (no padding,
 * as numpy/h5py write them), so for types without variable-length parts or references the
 * memory layout is exactly the binary wire layout of wire-reference 3.5.
 */
import type { TypeJson } from '../codec/types.js';
import { badRequest, notImplemented } from '../errors.js';
import * as C from './constants.js';
import { G, H5, type Hid, takeCString } from './lib.js';

const INT_BASES: Record<string, Hid> = {
  H5T_STD_I8LE: G.T_STD_I8LE,
  H5T_STD_I8BE: G.T_STD_I8BE,
  H5T_STD_I16LE: G.T_STD_I16LE,
  H5T_STD_I16BE: G.T_STD_I16BE,
  H5T_STD_I32LE: G.T_STD_I32LE,
  H5T_STD_I32BE: G.T_STD_I32BE,
  H5T_STD_I64LE: G.T_STD_I64LE,
  H5T_STD_I64BE: G.T_STD_I64BE,
  H5T_STD_U8LE: G.T_STD_U8LE,
  H5T_STD_U8BE: G.T_STD_U8BE,
  H5T_STD_U16LE: G.T_STD_U16LE,
  H5T_STD_U16BE: G.T_STD_U16BE,
  H5T_STD_U32LE: G.T_STD_U32LE,
  H5T_STD_U32BE: G.T_STD_U32BE,
  H5T_STD_U64LE: G.T_STD_U64LE,
  H5T_STD_U64BE: G.T_STD_U64BE,
};
const BITFIELD_BASES: Record<string, Hid> = {
  H5T_STD_B8LE: G.T_STD_B8LE,
  H5T_STD_B8BE: G.T_STD_B8BE,
  H5T_STD_B16LE: G.T_STD_B16LE,
  H5T_STD_B16BE: G.T_STD_B16BE,
  H5T_STD_B32LE: G.T_STD_B32LE,
  H5T_STD_B32BE: G.T_STD_B32BE,
  H5T_STD_B64LE: G.T_STD_B64LE,
  H5T_STD_B64BE: G.T_STD_B64BE,
};
const FLOAT_BASES: Record<string, Hid> = {
  H5T_IEEE_F32LE: G.T_IEEE_F32LE,
  H5T_IEEE_F32BE: G.T_IEEE_F32BE,
  H5T_IEEE_F64LE: G.T_IEEE_F64LE,
  H5T_IEEE_F64BE: G.T_IEEE_F64BE,
};

/** Read the name of member `i` of a compound or enum type. */
function memberName(tid: Hid, i: number): string {
  return takeCString(H5.H5Tget_member_name(tid, i));
}

function orderSuffix(tid: Hid): 'LE' | 'BE' {
  return H5.H5Tget_order(tid) === C.H5T_ORDER_BE ? 'BE' : 'LE';
}

/** Decode an integer of the enum base type held in `buf` (size/order/sign of `base`). */
function readInt(buf: Buffer, size: number, be: boolean, signed: boolean): number {
  switch (size) {
    case 1:
      return signed ? buf.readInt8(0) : buf.readUInt8(0);
    case 2:
      return signed ? (be ? buf.readInt16BE(0) : buf.readInt16LE(0)) : be ? buf.readUInt16BE(0) : buf.readUInt16LE(0);
    case 4:
      return signed ? (be ? buf.readInt32BE(0) : buf.readInt32LE(0)) : be ? buf.readUInt32BE(0) : buf.readUInt32LE(0);
    default: {
      const v = signed ? (be ? buf.readBigInt64BE(0) : buf.readBigInt64LE(0)) : be ? buf.readBigUInt64BE(0) : buf.readBigUInt64LE(0);
      return Number(v);
    }
  }
}

function writeInt(buf: Buffer, value: number, size: number, be: boolean, signed: boolean): void {
  switch (size) {
    case 1:
      if (signed) buf.writeInt8(value, 0);
      else buf.writeUInt8(value, 0);
      return;
    case 2:
      if (signed) be ? buf.writeInt16BE(value, 0) : buf.writeInt16LE(value, 0);
      else be ? buf.writeUInt16BE(value, 0) : buf.writeUInt16LE(value, 0);
      return;
    case 4:
      if (signed) be ? buf.writeInt32BE(value, 0) : buf.writeInt32LE(value, 0);
      else be ? buf.writeUInt32BE(value, 0) : buf.writeUInt32LE(value, 0);
      return;
    default:
      if (signed) be ? buf.writeBigInt64BE(BigInt(value), 0) : buf.writeBigInt64LE(BigInt(value), 0);
      else be ? buf.writeBigUInt64BE(BigInt(value), 0) : buf.writeBigUInt64LE(BigInt(value), 0);
  }
}

function intBaseName(tid: Hid): string {
  const size = Number(H5.H5Tget_size(tid));
  const signed = H5.H5Tget_sign(tid) === C.H5T_SGN_2;
  const bits = size <= 1 ? 8 : size <= 2 ? 16 : size <= 4 ? 32 : 64;
  return `H5T_STD_${signed ? 'I' : 'U'}${bits}${orderSuffix(tid)}`;
}

/** True when a 2-byte float type is IEEE binary16 (what h5py writes for float16). */
function isHalf(tid: Hid): boolean {
  const f = [0], e = [0], es = [0], m = [0], ms = [0];
  H5.H5Tget_fields(tid, f, e, es, m, ms);
  return Number(H5.H5Tget_precision(tid)) === 16 && es[0] === 5 && ms[0] === 10;
}

/**
 * The type JSON of an HDF5 datatype (wire-reference 3.1 canonical form).
 *
 * @param tid an open datatype id (not closed here)
 * @param committedId when given and `tid` is a committed (named) datatype, called with the
 *        type's object-header address to obtain its REST id, which is added as `id`.
 * @throws H5StoreError NotImplemented for classes the REST API cannot express (H5T_TIME).
 */
export function describeType(tid: Hid, committedId?: (tid: Hid) => string | undefined): TypeJson {
  const t = describeInner(tid);
  if (committedId && H5.H5Tcommitted(tid)) {
    const id = committedId(tid);
    if (id) (t as { id?: string }).id = id;
  }
  return t;
}

function describeInner(tid: Hid): TypeJson {
  const cls = H5.H5Tget_class(tid) as number;
  switch (cls) {
    case C.H5T_INTEGER:
      return { class: 'H5T_INTEGER', base: intBaseName(tid) };
    case C.H5T_FLOAT: {
      const size = Number(H5.H5Tget_size(tid));
      const bits = size === 2 && isHalf(tid) ? 16 : size <= 4 ? 32 : 64;
      return { class: 'H5T_FLOAT', base: `H5T_IEEE_F${bits}${orderSuffix(tid)}` };
    }
    case C.H5T_STRING: {
      const variable = H5.H5Tis_variable_str(tid) as boolean;
      const cset = H5.H5Tget_cset(tid) === C.H5T_CSET_UTF8 ? 'H5T_CSET_UTF8' : 'H5T_CSET_ASCII';
      const pad = H5.H5Tget_strpad(tid) as number;
      const strPad = pad === C.H5T_STR_NULLPAD ? 'H5T_STR_NULLPAD' : pad === C.H5T_STR_SPACEPAD ? 'H5T_STR_SPACEPAD' : 'H5T_STR_NULLTERM';
      return {
        class: 'H5T_STRING',
        charSet: cset,
        strPad,
        length: variable ? 'H5T_VARIABLE' : Number(H5.H5Tget_size(tid)),
      };
    }
    case C.H5T_BITFIELD: {
      const size = Number(H5.H5Tget_size(tid));
      const bits = size <= 1 ? 8 : size <= 2 ? 16 : size <= 4 ? 32 : 64;
      return { class: 'H5T_BITFIELD', base: `H5T_STD_B${bits}${orderSuffix(tid)}` };
    }
    case C.H5T_OPAQUE: {
      const tag = takeCString(H5.H5Tget_tag(tid));
      return { class: 'H5T_OPAQUE', size: Number(H5.H5Tget_size(tid)), tag };
    }
    case C.H5T_REFERENCE: {
      const isObj = H5.H5Tequal(tid, G.T_STD_REF_OBJ) as boolean;
      return { class: 'H5T_REFERENCE', base: isObj ? 'H5T_STD_REF_OBJ' : 'H5T_STD_REF_DSETREG' };
    }
    case C.H5T_COMPOUND: {
      const n = H5.H5Tget_nmembers(tid) as number;
      const fields: { name: string; type: TypeJson }[] = [];
      for (let i = 0; i < n; i++) {
        const mt = H5.H5Tget_member_type(tid, i);
        try {
          fields.push({ name: memberName(tid, i), type: describeInner(mt) });
        } finally {
          H5.H5Tclose(mt);
        }
      }
      return { class: 'H5T_COMPOUND', fields };
    }
    case C.H5T_ENUM: {
      const base = H5.H5Tget_super(tid);
      try {
        const baseJson = describeInner(base);
        const size = Number(H5.H5Tget_size(base));
        const be = H5.H5Tget_order(base) === C.H5T_ORDER_BE;
        const signed = H5.H5Tget_sign(base) === C.H5T_SGN_2;
        const n = H5.H5Tget_nmembers(tid) as number;
        const mapping: Record<string, number> = {};
        const buf = Buffer.alloc(Math.max(8, size));
        for (let i = 0; i < n; i++) {
          H5.H5Tget_member_value(tid, i, buf);
          mapping[memberName(tid, i)] = readInt(buf, size, be, signed);
        }
        return { class: 'H5T_ENUM', base: baseJson, mapping };
      } finally {
        H5.H5Tclose(base);
      }
    }
    case C.H5T_VLEN: {
      const base = H5.H5Tget_super(tid);
      try {
        return { class: 'H5T_VLEN', base: describeInner(base) };
      } finally {
        H5.H5Tclose(base);
      }
    }
    case C.H5T_ARRAY: {
      const nd = H5.H5Tget_array_ndims(tid) as number;
      const dims = new BigUint64Array(Math.max(nd, 1));
      H5.H5Tget_array_dims2(tid, dims);
      const base = H5.H5Tget_super(tid);
      try {
        return { class: 'H5T_ARRAY', base: describeInner(base), dims: Array.from(dims.slice(0, nd), Number) };
      } finally {
        H5.H5Tclose(base);
      }
    }
    default:
      throw notImplemented(`HDF5 datatype class ${cls === C.H5T_TIME ? 'H5T_TIME' : cls} is not supported`);
  }
}

/** An IEEE binary16 float type (HDF5 1.10 has no predefined one; same layout as h5py's). */
function createHalf(be: boolean): Hid {
  const t = H5.H5Tcopy(be ? G.T_IEEE_F32BE : G.T_IEEE_F32LE);
  try {
    H5.H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5.H5Tset_size(t, 2);
    H5.H5Tset_precision(t, 16);
    H5.H5Tset_ebias(t, 15);
    return t;
  } catch (e) {
    H5.H5Tclose(t);
    throw e;
  }
}

/**
 * Build the HDF5 datatype for a canonical type JSON. The caller closes the returned id.
 * Committed types (`id` present) are built from their description; sharing the committed type
 * in the file is the store's job (it opens the committed type and uses it as the file type).
 *
 * @throws H5StoreError BadRequest for bases the JSON grammar allows but HDF5 rejects.
 */
export function createType(t: TypeJson): Hid {
  switch (t.class) {
    case 'H5T_INTEGER': {
      const base = INT_BASES[t.base];
      if (base === undefined) throw badRequest(`Invalid integer base ${t.base}`);
      return H5.H5Tcopy(base);
    }
    case 'H5T_FLOAT': {
      if (t.base === 'H5T_IEEE_F16LE' || t.base === 'H5T_IEEE_F16BE') return createHalf(t.base.endsWith('BE'));
      const base = FLOAT_BASES[t.base];
      if (base === undefined) throw badRequest(`Invalid float base ${t.base}`);
      return H5.H5Tcopy(base);
    }
    case 'H5T_BITFIELD': {
      const base = BITFIELD_BASES[t.base];
      if (base === undefined) throw badRequest(`Invalid bitfield base ${t.base}`);
      return H5.H5Tcopy(base);
    }
    case 'H5T_STRING': {
      const s = H5.H5Tcopy(G.T_C_S1);
      try {
        H5.H5Tset_size(s, t.length === 'H5T_VARIABLE' ? C.H5T_VARIABLE : BigInt(t.length));
        H5.H5Tset_cset(s, t.charSet === 'H5T_CSET_UTF8' ? C.H5T_CSET_UTF8 : C.H5T_CSET_ASCII);
        const pad = t.strPad === 'H5T_STR_NULLPAD' ? C.H5T_STR_NULLPAD : t.strPad === 'H5T_STR_SPACEPAD' ? C.H5T_STR_SPACEPAD : C.H5T_STR_NULLTERM;
        H5.H5Tset_strpad(s, pad);
        return s;
      } catch (e) {
        H5.H5Tclose(s);
        throw e;
      }
    }
    case 'H5T_OPAQUE': {
      const o = H5.H5Tcreate(C.H5T_OPAQUE, BigInt(t.size));
      try {
        if (t.tag) H5.H5Tset_tag(o, t.tag);
        return o;
      } catch (e) {
        H5.H5Tclose(o);
        throw e;
      }
    }
    case 'H5T_REFERENCE':
      return H5.H5Tcopy(t.base === 'H5T_STD_REF_OBJ' ? G.T_STD_REF_OBJ : G.T_STD_REF_DSETREG);
    case 'H5T_COMPOUND': {
      const members = t.fields.map((f) => createType(f.type));
      try {
        let size = 0;
        const sizes = members.map((m) => Number(H5.H5Tget_size(m)));
        for (const s of sizes) size += s;
        const c = H5.H5Tcreate(C.H5T_COMPOUND, BigInt(Math.max(size, 1)));
        try {
          let off = 0;
          t.fields.forEach((f, i) => {
            H5.H5Tinsert(c, f.name, BigInt(off), members[i]);
            off += sizes[i];
          });
          return c;
        } catch (e) {
          H5.H5Tclose(c);
          throw e;
        }
      } finally {
        for (const m of members) H5.H5Tclose(m);
      }
    }
    case 'H5T_ARRAY': {
      const base = createType(t.base);
      try {
        return H5.H5Tarray_create2(base, t.dims.length, new BigUint64Array(t.dims.map(BigInt)));
      } finally {
        H5.H5Tclose(base);
      }
    }
    case 'H5T_VLEN': {
      const base = createType(t.base);
      try {
        return H5.H5Tvlen_create(base);
      } finally {
        H5.H5Tclose(base);
      }
    }
    case 'H5T_ENUM': {
      const base = createType(t.base);
      try {
        const e = H5.H5Tenum_create(base);
        try {
          const size = Number(H5.H5Tget_size(base));
          const be = H5.H5Tget_order(base) === C.H5T_ORDER_BE;
          const signed = H5.H5Tget_sign(base) === C.H5T_SGN_2;
          const buf = Buffer.alloc(Math.max(8, size));
          for (const [name, value] of Object.entries(t.mapping)) {
            writeInt(buf, value, size, be, signed);
            H5.H5Tenum_insert(e, name, buf);
          }
          return e;
        } catch (err) {
          H5.H5Tclose(e);
          throw err;
        }
      } finally {
        H5.H5Tclose(base);
      }
    }
    default:
      throw badRequest(`Invalid type class ${(t as { class: string }).class}`);
  }
}

/**
 * Bytes of a datatype's encoded description (`H5Tencode`: its datatype message plus a 2-byte
 * header). An HDF5 file stores a type in one object header message, whose size field has 16
 * bits, and an attribute message records its type's size in 2 bytes too.
 */
export function encodedTypeSize(tid: Hid): number {
  const n = [0n];
  H5.H5Tencode(tid, null, n);
  return Number(n[0]);
}

/** Largest encoded type (`encodedTypeSize`) a file can hold: 65535 bytes, 8-byte aligned, + 2. */
export const MAX_ENCODED_TYPE = 65528 + 2;

// ---------------------------------------------------------------------------------------------
// Types as h5py describes them (the h5grove API, issue #28 item 7)

/** numpy's `dtype.str` of a type, or for a structured type its fields' (h5grove `stringify_dtype`). */
export type NumpyDtype = string | { [field: string]: NumpyDtype };

/**
 * An HDF5 datatype as h5py's type objects describe it (h5grove's `get_type_metadata`): the class
 * code (`H5T_class_t`), numpy's `dtype`, the size in bytes, then per class `order` (0 LE, 1 BE;
 * integers, floats, bitfields), `sign` (0 unsigned, 1 two's complement), `cset` (0 ASCII, 1
 * UTF-8), `strpad` (0 null-terminated, 1 null-padded, 2 space-padded) and `vlen` (strings),
 * `tag` (opaque), `members` (compound: a list of `{name, ...type}`; enum: `{name: value}`),
 * `base` (enum, vlen, array) and `dims` (array). Keys in this order, as h5grove writes them.
 */
export interface H5pyType {
  class: number;
  dtype: NumpyDtype;
  size: number;
  order?: number;
  sign?: number;
  cset?: number;
  strpad?: number;
  vlen?: boolean;
  tag?: string;
  members?: (H5pyType & { name: string })[] | Record<string, number>;
  base?: H5pyType;
  dims?: number[];
}

/** numpy's byte-order character of a type of `size` bytes. */
function numpyOrder(tid: Hid, size: number): string {
  return size === 1 ? '|' : H5.H5Tget_order(tid) === C.H5T_ORDER_BE ? '>' : '<';
}

/** The enum h5py reads as numpy's bool: exactly `FALSE` = 0 and `TRUE` = 1. */
function isBoolEnum(members: Record<string, number>): boolean {
  const names = Object.keys(members);
  return names.length === 2 && members.FALSE === 0 && members.TRUE === 1;
}

/**
 * Describe an HDF5 datatype as h5py does (see `H5pyType`); numpy dtypes as h5py maps them:
 * `<i4`, `|u1`, `>f8`, `<f2`, `<f16` (long double), bitfields as unsigned integers, the
 * `FALSE`/`TRUE` enum as `|b1`, other enums as their base, fixed strings `|S<n>`, variable
 * strings, sequences and references `|O`, opaque and array types `|V<size>`, a compound of two
 * floats `r` and `i` as complex (`<c8`, `<c16`), other compounds as the dict of their fields.
 * @param tid an open datatype id (not closed here)
 */
export function describeH5pyType(tid: Hid): H5pyType {
  const cls = H5.H5Tget_class(tid) as number;
  const size = Number(H5.H5Tget_size(tid));
  const head = (dtype: NumpyDtype): H5pyType => ({ class: cls, dtype, size });
  const withSuper = <T>(fn: (base: Hid) => T): T => {
    const base = H5.H5Tget_super(tid);
    try {
      return fn(base);
    } finally {
      H5.H5Tclose(base);
    }
  };
  switch (cls) {
    case C.H5T_INTEGER: {
      const sign = H5.H5Tget_sign(tid) as number;
      return { ...head(`${numpyOrder(tid, size)}${sign === C.H5T_SGN_2 ? 'i' : 'u'}${size}`), order: H5.H5Tget_order(tid) as number, sign };
    }
    case C.H5T_FLOAT:
      return { ...head(`${numpyOrder(tid, size)}f${size}`), order: H5.H5Tget_order(tid) as number };
    case C.H5T_BITFIELD:
      return { ...head(`${numpyOrder(tid, size)}u${size}`), order: H5.H5Tget_order(tid) as number };
    case C.H5T_STRING: {
      const vlen = H5.H5Tis_variable_str(tid) as boolean;
      return { ...head(vlen ? '|O' : `|S${size}`), cset: H5.H5Tget_cset(tid) as number, strpad: H5.H5Tget_strpad(tid) as number, vlen };
    }
    case C.H5T_OPAQUE:
      return { ...head(`|V${size}`), tag: takeCString(H5.H5Tget_tag(tid)) };
    case C.H5T_REFERENCE:
      return head('|O');
    case C.H5T_COMPOUND: {
      const n = H5.H5Tget_nmembers(tid) as number;
      const members: (H5pyType & { name: string })[] = [];
      for (let i = 0; i < n; i++) {
        const mt = H5.H5Tget_member_type(tid, i);
        try {
          members.push({ name: memberName(tid, i), ...describeH5pyType(mt) });
        } finally {
          H5.H5Tclose(mt);
        }
      }
      const [r, im] = members;
      const complex = n === 2 && r!.name === 'r' && im!.name === 'i' && r!.class === C.H5T_FLOAT && im!.dtype === r!.dtype && (r!.size === 4 || r!.size === 8);
      const dtype: NumpyDtype = complex ? `${(r!.dtype as string)[0]}c${2 * r!.size}` : Object.fromEntries(members.map((m) => [m.name, m.dtype]));
      return { ...head(dtype), members };
    }
    case C.H5T_ENUM: {
      const base = withSuper((b) => describeH5pyType(b));
      const be = base.order === C.H5T_ORDER_BE;
      const signed = base.sign === C.H5T_SGN_2;
      const n = H5.H5Tget_nmembers(tid) as number;
      const members: Record<string, number> = {};
      const buf = Buffer.alloc(Math.max(8, base.size));
      for (let i = 0; i < n; i++) {
        H5.H5Tget_member_value(tid, i, buf);
        members[memberName(tid, i)] = readInt(buf, base.size, be, signed);
      }
      return { ...head(isBoolEnum(members) ? '|b1' : base.dtype), members, base };
    }
    case C.H5T_VLEN:
      return { ...head('|O'), base: withSuper((b) => describeH5pyType(b)) };
    case C.H5T_ARRAY: {
      const nd = H5.H5Tget_array_ndims(tid) as number;
      const dims = new BigUint64Array(Math.max(nd, 1));
      H5.H5Tget_array_dims2(tid, dims);
      return { ...head(`|V${size}`), dims: Array.from(dims.slice(0, nd), Number), base: withSuper((b) => describeH5pyType(b)) };
    }
    default:
      return head(`|V${size}`);
  }
}
