/**
 * HDF REST API type and shape JSON (wire-reference 3) as h5web's `DType`/`Shape`, and binary
 * value bodies (`application/octet-stream`) as typed arrays. Pure (no DOM, no React).
 */
import { type DType, DTypeClass, type NumericType, type Shape, ShapeClass } from '@h5web/app';

/** An HDF REST API type: `{"class": "H5T_INTEGER", "base": "H5T_STD_I32LE"}` and the like. */
export interface ApiType {
  class: string;
  base?: string | ApiType;
  fields?: { name: string; type: ApiType }[];
  dims?: number[];
  mapping?: Record<string, number>;
  charSet?: string;
  strPad?: string;
  length?: number | string;
  size?: number;
  order?: string;
  tag?: string;
}

/** An HDF REST API shape: `{"class": "H5S_SIMPLE", "dims": [..], "maxdims": [..]}`, scalar or null. */
export interface ApiShape {
  class: string;
  dims?: number[];
  maxdims?: number[];
}

/** h5web's shape of an API shape. */
export function shapeOf(s: ApiShape | undefined): Shape {
  if (!s || s.class === 'H5S_NULL') return { class: ShapeClass.Null };
  if (s.class === 'H5S_SCALAR') return { class: ShapeClass.Scalar, dims: [] };
  return { class: ShapeClass.Array, dims: s.dims ?? [] };
}

const ENDIAN = { LE: 'little-endian', BE: 'big-endian' } as const;

/** A predefined numeric base name (`H5T_STD_U16BE`, `H5T_IEEE_F32LE`) as h5web's numeric type. */
export function numericBase(base: string): NumericType | undefined {
  const m = /^H5T_(?:IEEE|STD)_([IUF])(\d+)(BE|LE)$/.exec(base);
  if (!m) return undefined;
  const size = Number(m[2]);
  const endianness = ENDIAN[m[3] as 'LE' | 'BE'];
  if (m[1] === 'F') return { class: DTypeClass.Float, size, endianness };
  return { class: DTypeClass.Integer, signed: m[1] === 'I', size, endianness };
}

/** h5web's type of an API type (unknown classes become `Unknown`, as in h5web's HSDS provider). */
export function dtypeOf(t: ApiType): DType {
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
      return (typeof t.base === 'string' && numericBase(t.base)) || { class: DTypeClass.Unknown };
    case 'H5T_STRING': {
      const cs = (t.charSet ?? 'H5T_CSET_ASCII').replace(/^H5T_CSET_/, '');
      const pad = (t.strPad ?? 'H5T_STR_NULLTERM').replace(/^H5T_STR_/, '');
      return {
        class: DTypeClass.String,
        charSet: cs === 'UTF8' ? 'UTF-8' : 'ASCII',
        strPad: pad === 'NULLPAD' ? 'null-padded' : pad === 'SPACEPAD' ? 'space-padded' : 'null-terminated',
        ...(typeof t.length === 'number' ? { length: t.length } : {}),
      };
    }
    case 'H5T_COMPOUND': {
      const fields = new Map((t.fields ?? []).map((f) => [f.name, dtypeOf(f.type)]));
      const r = fields.get('r');
      const i = fields.get('i');
      if (fields.size === 2 && r && i && isNumeric(r) && isNumeric(i)) return { class: DTypeClass.Complex, realType: r, imagType: i };
      return { class: DTypeClass.Compound, fields };
    }
    case 'H5T_ARRAY':
      return { class: DTypeClass.Array, base: dtypeOf(t.base as ApiType), dims: t.dims ?? [] };
    case 'H5T_VLEN':
      return { class: DTypeClass.VLen, base: dtypeOf(t.base as ApiType) };
    case 'H5T_ENUM': {
      const base = dtypeOf(t.base as ApiType);
      if (!isNumeric(base)) return { class: DTypeClass.Unknown };
      const m = t.mapping ?? {};
      if (Object.keys(m).length === 2 && m.FALSE === 0 && m.TRUE === 1) return { class: DTypeClass.Bool, base };
      return { class: DTypeClass.Enum, base, mapping: Object.fromEntries(Object.entries(m).map(([k, v]) => [v, k])) };
    }
    case 'H5T_REFERENCE':
      return { class: DTypeClass.Reference };
    case 'H5T_OPAQUE':
      return { class: DTypeClass.Opaque, tag: t.tag ?? '' };
    case 'H5T_BITFIELD':
      return { class: DTypeClass.Bitfield, endianness: typeof t.base === 'string' && t.base.endsWith('BE') ? 'big-endian' : 'little-endian' };
    case 'H5T_TIME':
      return { class: DTypeClass.Time };
    default:
      return { class: DTypeClass.Unknown };
  }
}

function isNumeric(t: DType): t is NumericType {
  return t.class === DTypeClass.Integer || t.class === DTypeClass.Float;
}

/**
 * The numeric base whose binary values a dataset of this API type holds, when binary transfer
 * suits it: integers, floats, enums and booleans of 8 to 64 bits (not 16-bit floats: no typed
 * array for them in Chromium 120). Undefined for anything else (strings, compounds, ...).
 */
export function binaryBase(t: ApiType): NumericType | undefined {
  const base = t.class === 'H5T_ENUM' && typeof t.base === 'object' ? t.base : t;
  if (base.class !== 'H5T_INTEGER' && base.class !== 'H5T_FLOAT') return undefined;
  const n = typeof base.base === 'string' ? numericBase(base.base) : undefined;
  if (!n || (n.class === DTypeClass.Float && n.size < 32)) return undefined;
  return n;
}

/**
 * A binary body of `count` values of a numeric type as a typed array (a copy in the platform's
 * little-endian order; big-endian data are swapped). 64-bit integers come as BigInt64Array /
 * BigUint64Array, as h5web's h5grove provider gives them.
 * @throws Error when the body's length is not `count` values
 */
export function decodeBinary(buf: ArrayBuffer, t: NumericType, count: number) {
  const bytes = t.size / 8;
  if (buf.byteLength !== count * bytes) throw new Error(`Expected ${count} values of ${bytes} bytes, got ${buf.byteLength} bytes`);
  const be = t.endianness === 'big-endian';
  const dv = new DataView(buf);
  const make = () => {
    if (t.class === DTypeClass.Float) return t.size === 64 ? new Float64Array(count) : new Float32Array(count);
    switch (t.size) {
      case 8:
        return t.signed ? new Int8Array(count) : new Uint8Array(count);
      case 16:
        return t.signed ? new Int16Array(count) : new Uint16Array(count);
      case 32:
        return t.signed ? new Int32Array(count) : new Uint32Array(count);
      default:
        return t.signed ? new BigInt64Array(count) : new BigUint64Array(count);
    }
  };
  const out = make();
  if (!be || bytes === 1) {
    new Uint8Array(out.buffer).set(new Uint8Array(buf));
    return out;
  }
  for (let i = 0; i < count; i++) {
    const o = i * bytes;
    if (t.class === DTypeClass.Float) (out as Float64Array)[i] = t.size === 64 ? dv.getFloat64(o) : dv.getFloat32(o);
    else if (bytes === 2) (out as Int16Array)[i] = t.signed ? dv.getInt16(o) : dv.getUint16(o);
    else if (bytes === 4) (out as Int32Array)[i] = t.signed ? dv.getInt32(o) : dv.getUint32(o);
    else (out as BigInt64Array)[i] = t.signed ? dv.getBigInt64(o) : dv.getBigUint64(o);
  }
  return out;
}

/** Number of elements a selection (`"0,:,3:7"` as h5web writes it, or none) picks from `dims`. */
export function selectionCount(dims: number[], selection: string | undefined): number {
  if (!selection) return dims.reduce((a, b) => a * b, 1);
  const parts = selection.split(',');
  let n = 1;
  parts.forEach((p, i) => {
    const s = p.trim();
    if (s === ':' || s === '') n *= dims[i];
    else if (s.includes(':')) {
      const [a, b] = s.split(':');
      const lo = a === '' ? 0 : Number(a);
      const hi = b === '' || b === undefined ? dims[i] : Number(b);
      n *= Math.max(0, Math.min(hi, dims[i]) - lo);
    }
  });
  for (let i = parts.length; i < dims.length; i++) n *= dims[i];
  return n;
}
