/**
 * Element values: binary wire format (wire-reference 3.5) <-> JS values, and JSON request values
 * (nested lists) <-> flat element lists.
 *
 * JS value of an element, by class (wire-reference 3.1 "JSON value representation", HSDS arrayUtil):
 * - integer, bitfield: number; 64-bit values outside the safe range as `bigint`;
 * - float (16/32/64): number (NaN/±Infinity included);
 * - string: JS string, UTF-8 decoded for both charsets (invalid bytes become U+FFFD). Fixed strings:
 *   NULLTERM cut at the first NUL, NULLPAD trailing NULs stripped, SPACEPAD trailing spaces (and
 *   NULs) stripped;
 * - enum: the integer; h5py's boolean enum (`isBooleanEnum`) as `true`/`false`;
 * - compound: array of field values in field order;
 * - array type: nested arrays shaped like `dims`;
 * - vlen sequence: array of base values; vlen string: string;
 * - reference: the 48 bytes up to the first NUL as a string (`"groups/g-..."`, `""` for null; a
 *   region reference is whatever the bytes hold);
 * - opaque: the element's bytes as a base64 string. HSDS 0.9.4 turns the numpy void bytes into a
 *   UTF-8 string (`bytesArrayToList`), which fails or garbles for binary data; hdf5-json (h5json)
 *   stores opaque values as one base64 string per element. We use the h5json form.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { badRequest, H5StoreError, internal } from '../errors.js';
import { halfToNumber, numberToHalf } from './float.js';
import {
  integerRange,
  isBooleanEnum,
  isVariableLength,
  numericBase,
  REFERENCE_SIZE,
  type NumericBase,
  type TypeJson,
  typeKey,
} from './types.js';

// ---------------------------------------------------------------------------------------------
// cursors

/** Read position over a wire-format buffer. */
export class Cursor {
  readonly buf: Buffer;
  readonly dv: DataView;
  pos: number;
  readonly end: number;
  constructor(buf: Buffer, pos = 0) {
    this.buf = buf;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = pos;
    this.end = buf.length;
  }
  /** 400 unless `n` more bytes are available. */
  need(n: number): void {
    if (this.pos + n > this.end) throw truncated();
  }
}

const truncated = () => badRequest('Invalid binary data: truncated (fewer bytes than the elements need)');

/** Growable output buffer for the wire format. */
export class ByteWriter {
  buf: Buffer;
  dv: DataView;
  pos = 0;
  constructor(capacity: number, zeroed = false) {
    this.buf = zeroed ? Buffer.alloc(capacity) : Buffer.allocUnsafe(capacity);
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }
  ensure(n: number): void {
    if (this.pos + n > this.buf.length) {
      let cap = Math.max(64, this.buf.length * 2);
      while (cap < this.pos + n) cap *= 2;
      const nb = Buffer.allocUnsafe(cap);
      this.buf.copy(nb, 0, 0, this.pos);
      this.buf = nb;
      this.dv = new DataView(nb.buffer, nb.byteOffset, nb.byteLength);
    }
  }
  result(): Buffer {
    return this.pos === this.buf.length ? this.buf : this.buf.subarray(0, this.pos);
  }
}

// ---------------------------------------------------------------------------------------------
// codecs

/** Per-type element codec (compiled once per type object). */
export interface Codec {
  /** Bytes per element, or -1 for variable-length types. */
  readonly size: number;
  /** Decode one element at `c.pos` and advance. */
  read(c: Cursor): unknown;
  /** Validate and encode one element at `w.pos` and advance (variable codecs ensure room themselves). */
  write(w: ByteWriter, v: unknown): void;
}

const describe = (v: unknown): string => {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 37) + '...' : v);
  if (typeof v === 'bigint') return String(v);
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 60 ? s.slice(0, 57) + '...' : s;
  } catch {
    return String(v);
  }
};

const cache = new WeakMap<TypeJson, Codec>();

/**
 * The element codec of a canonical type.
 * A vlen sequence whose base is itself variable-length has no binary form in the REST API; its
 * codec reads and writes h5store's inner form (`nestedVlenCodec`).
 */
export function codecFor(t: TypeJson): Codec {
  let c = cache.get(t);
  if (!c) {
    // Types described from files are fresh objects each time: fall back to a structural key.
    const key = typeKey(t);
    c = keyCache.get(key);
    if (!c) {
      if (keyCache.size > 512) keyCache.clear();
      c = compile(t);
      keyCache.set(key, c);
    }
    cache.set(t, c);
  }
  return c;
}

const keyCache = new Map<string, Codec>();

function compile(t: TypeJson): Codec {
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_BITFIELD':
      return intCodec(numericBase(t.base)!, t.base);
    case 'H5T_FLOAT':
      return floatCodec(numericBase(t.base)!, t.base);
    case 'H5T_STRING':
      return t.length === 'H5T_VARIABLE' ? vlenStringCodec() : fixedStringCodec(t.length, t.strPad);
    case 'H5T_ENUM':
      return enumCodec(t);
    case 'H5T_COMPOUND':
      return compoundCodec(t);
    case 'H5T_ARRAY':
      return arrayCodec(t.base, t.dims);
    case 'H5T_VLEN':
      return vlenCodec(t.base);
    case 'H5T_REFERENCE':
      return t.base === 'H5T_STD_REF_DSETREG' ? regionReferenceCodec() : referenceCodec();
    case 'H5T_OPAQUE':
      return opaqueCodec(t.size);
  }
}

/** Wrap a fixed-size child used inside a variable-length parent so reads are bounds-checked. */
function checked(c: Codec): Codec {
  if (c.size < 0) return c;
  const size = c.size;
  return {
    size,
    read(cur) {
      cur.need(size);
      return c.read(cur);
    },
    write(w, v) {
      w.ensure(size);
      c.write(w, v);
    },
  };
}

// --- numbers

const TWO32 = 4294967296;
const TWO63 = 9223372036854775808;
const TWO64 = 18446744073709551616;

function intCodec(info: NumericBase, name: string): Codec {
  const le = info.littleEndian;
  const signed = info.kind === 'int';
  const size = info.size;
  if (size === 8) return int64Codec(le, signed, name);
  const { min, max } = integerRange(info);
  const lo = Number(min);
  const hi = Number(max);
  const check = (v: unknown): number => {
    let n: number;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'bigint') {
      if (v < min || v > max) throw badRequest(`Value ${v} out of range for ${name}`);
      return Number(v);
    } else throw badRequest(`Invalid value ${describe(v)} for ${name}: expected an integer`);
    if (!Number.isInteger(n)) throw badRequest(`Invalid value ${describe(v)} for ${name}: not an integer`);
    if (n < lo || n > hi) throw badRequest(`Value ${n} out of range for ${name}`);
    return n;
  };
  switch (size) {
    case 1:
      return signed
        ? { size, read: (c) => c.dv.getInt8(c.pos++), write: (w, v) => w.dv.setInt8(w.pos++, check(v)) }
        : { size, read: (c) => c.buf[c.pos++], write: (w, v) => w.dv.setUint8(w.pos++, check(v)) };
    case 2:
      return {
        size,
        read: signed
          ? (c) => {
              const v = c.dv.getInt16(c.pos, le);
              c.pos += 2;
              return v;
            }
          : (c) => {
              const v = c.dv.getUint16(c.pos, le);
              c.pos += 2;
              return v;
            },
        write: (w, v) => {
          w.dv.setUint16(w.pos, check(v) & 0xffff, le);
          w.pos += 2;
        },
      };
    default:
      return {
        size,
        read: signed
          ? (c) => {
              const v = c.dv.getInt32(c.pos, le);
              c.pos += 4;
              return v;
            }
          : (c) => {
              const v = c.dv.getUint32(c.pos, le);
              c.pos += 4;
              return v;
            },
        write: (w, v) => {
          w.dv.setUint32(w.pos, check(v) >>> 0, le);
          w.pos += 4;
        },
      };
  }
}

/** Read a 64-bit integer as a number when safe, else as a bigint. */
export function readInt64(dv: DataView, pos: number, le: boolean, signed: boolean): number | bigint {
  const lo = dv.getUint32(le ? pos : pos + 4, le);
  const hi = signed ? dv.getInt32(le ? pos + 4 : pos, le) : dv.getUint32(le ? pos + 4 : pos, le);
  if (hi >= -0x200000 && hi < 0x200000) return hi * TWO32 + lo;
  return signed ? dv.getBigInt64(pos, le) : dv.getBigUint64(pos, le);
}

function int64Codec(le: boolean, signed: boolean, name: string): Codec {
  const min = signed ? -TWO63 : 0;
  const max = signed ? TWO63 : TWO64; // exclusive
  const bmin = signed ? -(1n << 63n) : 0n;
  const bmax = signed ? (1n << 63n) - 1n : (1n << 64n) - 1n;
  return {
    size: 8,
    read(c) {
      const v = readInt64(c.dv, c.pos, le, signed);
      c.pos += 8;
      return v;
    },
    write(w, v) {
      if (typeof v === 'number') {
        if (!Number.isInteger(v)) throw badRequest(`Invalid value ${describe(v)} for ${name}: not an integer`);
        if (v < min || v >= max) throw badRequest(`Value ${v} out of range for ${name}`);
        // exact for every integral double: division by 2^32 and floor are exact
        const hi = Math.floor(v / TWO32);
        const lo = v - hi * TWO32;
        w.dv.setUint32(le ? w.pos : w.pos + 4, lo, le);
        w.dv.setUint32(le ? w.pos + 4 : w.pos, hi >>> 0, le);
      } else if (typeof v === 'bigint') {
        if (v < bmin || v > bmax) throw badRequest(`Value ${v} out of range for ${name}`);
        w.dv.setBigUint64(w.pos, BigInt.asUintN(64, v), le);
      } else {
        throw badRequest(`Invalid value ${describe(v)} for ${name}: expected an integer`);
      }
      w.pos += 8;
    },
  };
}

const FLOAT_WORDS = new Map<string, number>([
  ['nan', NaN],
  ['-nan', NaN],
  ['+nan', NaN],
  ['inf', Infinity],
  ['+inf', Infinity],
  ['-inf', -Infinity],
  ['infinity', Infinity],
  ['+infinity', Infinity],
  ['-infinity', -Infinity],
]);

/**
 * A float from a JSON request value: a number, a bigint, or one of the strings `nan`, `inf`,
 * `-inf`, `infinity`, `-infinity` (any case, optional `+`); 400 otherwise.
 */
export function toFloat(v: unknown, name: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const f = FLOAT_WORDS.get(v.toLowerCase());
    if (f !== undefined) return f;
  } else if (typeof v === 'bigint') return Number(v);
  throw badRequest(`Invalid value ${describe(v)} for ${name}: expected a number`);
}

function floatCodec(info: NumericBase, name: string): Codec {
  const le = info.littleEndian;
  switch (info.size) {
    case 2:
      return {
        size: 2,
        read(c) {
          const v = halfToNumber(c.dv.getUint16(c.pos, le));
          c.pos += 2;
          return v;
        },
        write(w, v) {
          w.dv.setUint16(w.pos, numberToHalf(toFloat(v, name)), le);
          w.pos += 2;
        },
      };
    case 4:
      return {
        size: 4,
        read(c) {
          const v = c.dv.getFloat32(c.pos, le);
          c.pos += 4;
          return v;
        },
        write(w, v) {
          w.dv.setFloat32(w.pos, toFloat(v, name), le);
          w.pos += 4;
        },
      };
    default:
      return {
        size: 8,
        read(c) {
          const v = c.dv.getFloat64(c.pos, le);
          c.pos += 8;
          return v;
        },
        write(w, v) {
          w.dv.setFloat64(w.pos, toFloat(v, name), le);
          w.pos += 8;
        },
      };
  }
}

// --- strings

/** Length in bytes of the fixed string element starting at `start` after removing its padding. */
/** End of the text of a fixed-length string at `start` (`len` bytes) by its padding rule. */
export function unpaddedEnd(buf: Buffer, start: number, len: number, strPad: string): number {
  let end = start + len;
  if (strPad === 'H5T_STR_NULLTERM') {
    const z = buf.indexOf(0, start);
    return z >= 0 && z < end ? z : end;
  }
  if (strPad === 'H5T_STR_SPACEPAD') {
    while (end > start && (buf[end - 1] === 0x20 || buf[end - 1] === 0)) end--;
    return end;
  }
  while (end > start && buf[end - 1] === 0) end--;
  return end;
}

function fixedStringCodec(len: number, strPad: string): Codec {
  const pad = strPad === 'H5T_STR_SPACEPAD' ? 0x20 : 0;
  return {
    size: len,
    read(c) {
      const start = c.pos;
      c.pos += len;
      return c.buf.toString('utf8', start, unpaddedEnd(c.buf, start, len, strPad));
    },
    write(w, v) {
      if (typeof v !== 'string') throw badRequest(`Invalid value ${describe(v)} for a fixed-length string: expected a string`);
      if (v.length > len || (v.length * 3 > len && Buffer.byteLength(v) > len)) {
        // Longer than the type: truncated as HDF5's string conversion does (H5T__conv_s_s): the
        // first `len` bytes, or `len - 1` and a terminating NUL for NULLTERM.
        const bytes = Buffer.from(v, 'utf8');
        const keep = strPad === 'H5T_STR_NULLTERM' ? len - 1 : len;
        bytes.copy(w.buf, w.pos, 0, keep);
        w.buf.fill(pad, w.pos + keep, w.pos + len);
        w.pos += len;
        return;
      }
      const n = w.buf.write(v, w.pos, len, 'utf8');
      if (n < len) w.buf.fill(pad, w.pos + n, w.pos + len);
      w.pos += len;
    },
  };
}

function vlenStringCodec(): Codec {
  return {
    size: -1,
    read(c) {
      const n = readCount(c);
      const start = c.pos;
      c.pos += n;
      return c.buf.toString('utf8', start, start + n);
    },
    write(w, v) {
      if (typeof v !== 'string') throw badRequest(`Invalid value ${describe(v)} for a variable-length string: expected a string`);
      const n = Buffer.byteLength(v);
      if (n > 0x7fffffff) throw badRequest('Variable-length string too long');
      w.ensure(4 + n);
      w.dv.setInt32(w.pos, n, true);
      w.buf.write(v, w.pos + 4, n, 'utf8');
      w.pos += 4 + n;
    },
  };
}

/** Read a vlen byte count (4-byte LE int32, wire-reference 3.5) and check the payload is there. */
function readCount(c: Cursor): number {
  c.need(4);
  const n = c.dv.getInt32(c.pos, true);
  if (n < 0) throw badRequest(`Invalid binary data: negative variable-length byte count ${n}`);
  c.pos += 4;
  c.need(n);
  return n;
}

// --- enum

function enumCodec(t: Extract<TypeJson, { class: 'H5T_ENUM' }>): Codec {
  const base = codecFor(t.base);
  const name = 'enum ' + JSON.stringify(t.mapping);
  const values = new Set(Object.values(t.mapping));
  if (isBooleanEnum(t)) {
    return {
      size: base.size,
      read: (c) => base.read(c) !== 0,
      write(w, v) {
        if (v === true || v === 1 || v === 'TRUE') base.write(w, 1);
        else if (v === false || v === 0 || v === 'FALSE') base.write(w, 0);
        else throw badRequest(`Invalid value ${describe(v)} for a boolean: expected true or false`);
      },
    };
  }
  return {
    size: base.size,
    read: (c) => base.read(c),
    write(w, v) {
      if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(t.mapping, v)) return base.write(w, t.mapping[v]);
      const n = typeof v === 'bigint' ? Number(v) : v;
      if (typeof n === 'number' && values.has(n)) return base.write(w, n);
      throw badRequest(`Invalid value ${describe(v)} for ${name}: not a member value or name`);
    },
  };
}

// --- compound

function compoundCodec(t: Extract<TypeJson, { class: 'H5T_COMPOUND' }>): Codec {
  const variable = isVariableLength(t);
  const fields = t.fields.map((f) => (variable ? checked(codecFor(f.type)) : codecFor(f.type)));
  const names = t.fields.map((f) => f.name);
  const n = fields.length;
  let size = 0;
  if (!variable) for (const f of fields) size += f.size;
  return {
    size: variable ? -1 : size,
    read(c) {
      const out = new Array<unknown>(n);
      for (let i = 0; i < n; i++) out[i] = fields[i].read(c);
      return out;
    },
    write(w, v) {
      if (Array.isArray(v)) {
        if (v.length !== n)
          throw badRequest(`Invalid compound value ${describe(v)}: expected ${n} field values (${names.join(', ')}), got ${v.length}`);
        for (let i = 0; i < n; i++) fields[i].write(w, v[i]);
      } else if (typeof v === 'object' && v !== null && !ArrayBuffer.isView(v)) {
        const o = v as Record<string, unknown>;
        for (const k of Object.keys(o))
          if (!names.includes(k)) throw badRequest(`Invalid compound value: unknown field '${k}'`);
        for (let i = 0; i < n; i++) {
          if (!Object.prototype.hasOwnProperty.call(o, names[i])) throw badRequest(`Invalid compound value: missing field '${names[i]}'`);
          fields[i].write(w, o[names[i]]);
        }
      } else {
        throw badRequest(`Invalid compound value ${describe(v)}: expected a list of ${n} field values`);
      }
    },
  };
}

// --- array type

function arrayCodec(baseType: TypeJson, dims: number[]): Codec {
  const variable = isVariableLength(baseType);
  const base = variable ? checked(codecFor(baseType)) : codecFor(baseType);
  let count = 1;
  for (const d of dims) count *= d;
  return {
    size: variable ? -1 : count * base.size,
    read(c) {
      const flat = new Array<unknown>(count);
      for (let i = 0; i < count; i++) flat[i] = base.read(c);
      return nestValues(flat, dims);
    },
    write(w, v) {
      const flat = flattenNested(v, dims, 'array-type value');
      for (let i = 0; i < count; i++) base.write(w, flat[i]);
    },
  };
}

// --- vlen sequence

function vlenCodec(baseType: TypeJson): Codec {
  if (isVariableLength(baseType)) return nestedVlenCodec(baseType);
  const base = codecFor(baseType);
  const bs = base.size;
  return {
    size: -1,
    read(c) {
      const n = readCount(c);
      if (n % bs !== 0) throw badRequest(`Invalid binary data: variable-length byte count ${n} is not a multiple of the base size ${bs}`);
      const k = n / bs;
      const out = new Array<unknown>(k);
      for (let i = 0; i < k; i++) out[i] = base.read(c);
      return out;
    },
    write(w, v) {
      if (!Array.isArray(v)) throw badRequest(`Invalid value ${describe(v)} for a variable-length sequence: expected a list`);
      const n = v.length * bs;
      if (n > 0x7fffffff) throw badRequest('Variable-length sequence too long');
      w.ensure(4 + n);
      w.dv.setInt32(w.pos, n, true);
      w.pos += 4;
      for (let i = 0; i < v.length; i++) base.write(w, v[i]);
    },
  };
}

/**
 * A vlen sequence whose base is variable-length (a vlen of compounds with vlen fields, of vlen
 * strings, of sequences). The REST API defines no binary form for it (`lacksBinaryForm`): this
 * is h5store's inner form, which HTTP never sends or takes: a 4-byte LE int32 byte count `n`,
 * then the base elements one after another, each in its own form, exactly `n` bytes in all (so
 * the element count is found by reading them). An empty sequence is `00 00 00 00`.
 */
function nestedVlenCodec(baseType: TypeJson): Codec {
  const base = codecFor(baseType);
  return {
    size: -1,
    read(c) {
      const n = readCount(c);
      const end = c.pos + n;
      // the elements may not read past the sequence's own bytes
      const inner = new Cursor(c.buf.subarray(0, end), c.pos);
      const out: unknown[] = [];
      while (inner.pos < end) {
        const at = inner.pos;
        out.push(base.read(inner));
        if (inner.pos === at) throw badRequest('Invalid binary data: an element of a variable-length sequence takes no bytes');
      }
      c.pos = end;
      return out;
    },
    write(w, v) {
      if (!Array.isArray(v)) throw badRequest(`Invalid value ${describe(v)} for a variable-length sequence: expected a list`);
      w.ensure(4);
      const at = w.pos;
      w.pos += 4;
      for (let i = 0; i < v.length; i++) base.write(w, v[i]);
      const n = w.pos - at - 4;
      if (n > 0x7fffffff) throw badRequest('Variable-length sequence too long');
      w.dv.setInt32(at, n, true);
    },
  };
}

// --- reference

const COLLECTION: Record<string, string> = { g: 'groups', d: 'datasets', t: 'datatypes' };

function referenceCodec(): Codec {
  return {
    size: REFERENCE_SIZE,
    read(c) {
      const start = c.pos;
      c.pos += REFERENCE_SIZE;
      const z = c.buf.indexOf(0, start);
      return c.buf.toString('utf8', start, z >= 0 && z < start + REFERENCE_SIZE ? z : start + REFERENCE_SIZE);
    },
    write(w, v) {
      if (typeof v !== 'string') throw badRequest(`Invalid reference value ${describe(v)}: expected a string such as "groups/g-..."`);
      // a bare object id gets its collection prefix
      if (/^[gdt]-[0-9a-fA-F-]+$/.test(v)) v = `${COLLECTION[v[0]]}/${v}`;
      const s = v as string;
      if (Buffer.byteLength(s) > REFERENCE_SIZE) throw badRequest(`Invalid reference value ${describe(s)}: longer than ${REFERENCE_SIZE} bytes`);
      const n = w.buf.write(s, w.pos, REFERENCE_SIZE, 'utf8');
      w.buf.fill(0, w.pos + n, w.pos + REFERENCE_SIZE);
      w.pos += REFERENCE_SIZE;
    },
  };
}

// --- region reference

/** Selection types of a region reference (HDF5 `H5S_sel_type` names). */
export const REGION_SELECT_TYPES = ['H5S_SEL_NONE', 'H5S_SEL_POINTS', 'H5S_SEL_HYPERSLABS', 'H5S_SEL_ALL'] as const;
export type RegionSelectType = (typeof REGION_SELECT_TYPES)[number];

/**
 * A region reference value in hdf5-json's form (issue #12): the dataset's id, the selection type,
 * and for points the coordinates `[[i, j], ...]`, for hyperslabs the blocks as their first
 * element and the corner one past their last `[[[i0, j0], [i1 + 1, j1 + 1]], ...]` (as the
 * hdf5-json corpus writes them, issue #25). A null reference is JSON `null`.
 */
export interface RegionRef {
  id: string;
  select_type: RegionSelectType;
  selection?: number[][] | number[][][];
}

const coordList = (v: unknown, what: string): number[] => {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) {
    throw badRequest(`Invalid region reference: ${what} must be a list of non-negative integers, got ${describe(v)}`);
  }
  return v as number[];
};

/**
 * Validate a region reference value from a request: `null`, `""` or `{}` for a null reference,
 * else `{"id", "select_type", "selection"}` (`class` is accepted for `select_type`, and
 * hyperslab blocks as `{"start", "opposite"}` objects, as older hdf5-json files have them, the
 * opposite corner being the last element). Bounds are checked against the dataset later
 * (store/objects/regionRefs.ts).
 * @returns the canonical value, or null for a null reference.
 */
export function parseRegionRef(v: unknown): RegionRef | null {
  if (v === null || v === '') return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`Invalid region reference ${describe(v)}: expected an object {"id", "select_type", "selection"}`);
  const o = v as Record<string, unknown>;
  if (Object.keys(o).length === 0) return null;
  const st = o.select_type ?? o.class;
  if (typeof st !== 'string' || !(REGION_SELECT_TYPES as readonly string[]).includes(st)) {
    throw badRequest(`Invalid region reference: select_type must be one of ${REGION_SELECT_TYPES.join(', ')}, got ${describe(st)}`);
  }
  const selectType = st as RegionSelectType;
  if (o.id === undefined || o.id === null) {
    if (selectType === 'H5S_SEL_NONE') return null;
    throw badRequest('Invalid region reference: "id" (the dataset) is missing');
  }
  if (typeof o.id !== 'string') throw badRequest(`Invalid region reference: "id" must be a dataset id, got ${describe(o.id)}`);
  const id = o.id.replace(/^datasets\//, '');
  const sel = o.selection;
  if (selectType === 'H5S_SEL_ALL' || selectType === 'H5S_SEL_NONE') {
    if (sel !== undefined && sel !== null && !(Array.isArray(sel) && sel.length === 0)) {
      throw badRequest(`Invalid region reference: ${selectType} takes no selection`);
    }
    return { id, select_type: selectType };
  }
  if (!Array.isArray(sel)) throw badRequest(`Invalid region reference: ${selectType} needs a "selection" list`);
  if (selectType === 'H5S_SEL_POINTS') {
    return { id, select_type: selectType, selection: sel.map((p, i) => coordList(p, `point ${i}`)) };
  }
  const blocks = sel.map((b, i) => {
    let start: unknown;
    let end: unknown;
    // hdf5-json's end corner is one past the block (its corpus: rows 0..0 as [0, ...] to [1, ...]);
    // its older {"start", "opposite"} form names the last element itself (normalized to one past)
    let past = 0;
    if (Array.isArray(b) && b.length === 2) [start, end] = b;
    else if (b && typeof b === 'object' && !Array.isArray(b)) {
      const o = b as Record<string, unknown>;
      start = o.start;
      if (o.opposite !== undefined) {
        end = o.opposite;
        past = 1;
      } else end = o.end;
    } else throw badRequest(`Invalid region reference: block ${i} must be [start corner, end corner], got ${describe(b)}`);
    const s0 = coordList(start, `block ${i} start`);
    const e0 = coordList(end, `block ${i} end`).map((x) => x + past);
    if (s0.length !== e0.length) throw badRequest(`Invalid region reference: block ${i} corners differ in rank`);
    s0.forEach((x, d) => {
      if (e0[d] <= x) throw badRequest(`Invalid region reference: block ${i} is empty in dimension ${d} (its end corner is one past its last element)`);
    });
    return [s0, e0];
  });
  return { id, select_type: selectType, selection: blocks };
}

/**
 * Region references on the wire (docs/architecture.md): a 4-byte LE byte count and the UTF-8
 * JSON text of the region (`parseRegionRef` form); count 0 for a null reference. HSDS's 48-byte
 * reference strings cannot hold a selection.
 */
function regionReferenceCodec(): Codec {
  return {
    size: -1,
    read(c) {
      const n = readCount(c);
      const start = c.pos;
      c.pos += n;
      if (n === 0) return null;
      try {
        return JSON.parse(c.buf.toString('utf8', start, start + n));
      } catch {
        throw badRequest('Invalid binary data: a region reference is not JSON text');
      }
    },
    write(w, v) {
      const r = parseRegionRef(v);
      const text = r ? JSON.stringify(r) : '';
      const n = Buffer.byteLength(text);
      w.ensure(4 + n);
      w.dv.setInt32(w.pos, n, true);
      w.buf.write(text, w.pos + 4, n, 'utf8');
      w.pos += 4 + n;
    },
  };
}

// --- opaque

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

function opaqueCodec(size: number): Codec {
  return {
    size,
    read(c) {
      const start = c.pos;
      c.pos += size;
      return c.buf.toString('base64', start, start + size);
    },
    write(w, v) {
      let bytes: Uint8Array;
      if (typeof v === 'string') {
        const s = v.replace(/\s+/g, '');
        if (!BASE64_RE.test(s) || s.length % 4 === 1) throw badRequest(`Invalid opaque value ${describe(v)}: expected a base64 string`);
        bytes = Buffer.from(s, 'base64');
      } else if (v instanceof Uint8Array) {
        bytes = v;
      } else {
        throw badRequest(`Invalid opaque value ${describe(v)}: expected a base64 string of ${size} bytes`);
      }
      if (bytes.length !== size) throw badRequest(`Invalid opaque value: ${bytes.length} bytes, the type has ${size}`);
      w.buf.set(bytes, w.pos);
      w.pos += size;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// public API

/**
 * Decode `count` elements of `type` from the wire format (wire-reference 3.5) starting at byte
 * `offset`. Returns the JS values (see the module doc for each class) and the byte offset after the
 * last element.
 *
 * @throws badRequest if the buffer is too short or malformed (negative or inconsistent vlen counts).
 */
export function decodeElements(buf: Buffer, type: TypeJson, count: number, offset = 0): { values: unknown[]; end: number } {
  const codec = codecFor(type);
  const c = new Cursor(buf, offset);
  if (codec.size >= 0 && offset + count * codec.size > buf.length) throw truncated();
  const values = new Array<unknown>(count);
  for (let i = 0; i < count; i++) values[i] = codec.read(c);
  return { values, end: c.pos };
}

/**
 * Encode JS element values of `type` into the wire format (wire-reference 3.5). Strict: integers
 * must be integral and in range of their type (bigint accepted); floats accept numbers and the
 * strings `nan`, `inf`, `-inf`, `Infinity`, `-Infinity` (any case); the boolean enum accepts
 * true/false/0/1; other enums a member value or member name; fixed strings must fit `length`
 * bytes (UTF-8); compounds an array with one entry per field or an object keyed by field name;
 * array types nested lists matching `dims`; vlen sequences lists of the base; references strings
 * of at most 48 bytes (a bare id `g-...` gets its `groups/` prefix); opaque a base64 string of
 * exactly `size` bytes.
 *
 * @throws badRequest naming the offending value (and its element index when there are several).
 */
export function encodeElements(values: readonly unknown[], type: TypeJson): Buffer {
  const codec = codecFor(type);
  const count = values.length;
  const w = codec.size >= 0 ? new ByteWriter(count * codec.size) : new ByteWriter(Math.max(64, count * 16));
  let i = 0;
  try {
    for (; i < count; i++) codec.write(w, values[i]);
  } catch (e) {
    if (count > 1 && e instanceof H5StoreError && e.code === 'BadRequest') throw badRequest(`${e.message} (element ${i})`);
    throw e;
  }
  return w.result();
}

/** True when the type holds strings anywhere. */
function hasStrings(t: TypeJson): boolean {
  switch (t.class) {
    case 'H5T_STRING':
      return true;
    case 'H5T_ARRAY':
    case 'H5T_VLEN':
      return hasStrings(t.base);
    case 'H5T_COMPOUND':
      return t.fields.some((f) => hasStrings(f.type));
    default:
      return false;
  }
}

/**
 * True when some string of `count` wire-format elements is not valid UTF-8 (after removing the
 * padding of fixed strings): such values cannot be JSON strings and are sent as base64 with
 * `"encoding": "base64"` instead (wire-reference 2.6, as HSDS does). Other types: false.
 * @throws badRequest for malformed wire data (as `decodeElements`).
 */
export function hasInvalidUtf8(buf: Buffer, type: TypeJson, count: number): boolean {
  if (!hasStrings(type) || isAscii(buf)) return false;
  const c = new Cursor(buf);
  const bad = (t: TypeJson): boolean => {
    switch (t.class) {
      case 'H5T_STRING': {
        if (t.length === 'H5T_VARIABLE') {
          const n = readCount(c);
          const ok = isUtf8(c.buf.subarray(c.pos, c.pos + n));
          c.pos += n;
          return !ok;
        }
        c.need(t.length);
        const start = c.pos;
        c.pos += t.length;
        return !isUtf8(c.buf.subarray(start, unpaddedEnd(c.buf, start, t.length, t.strPad)));
      }
      case 'H5T_COMPOUND': {
        let any = false;
        for (const f of t.fields) if (bad(f.type)) any = true;
        return any;
      }
      case 'H5T_ARRAY': {
        const n = t.dims.reduce((a, b) => a * b, 1);
        let any = false;
        for (let i = 0; i < n; i++) if (bad(t.base)) any = true;
        return any;
      }
      case 'H5T_VLEN': {
        const nbytes = readCount(c);
        const end = c.pos + nbytes;
        let any = false;
        while (c.pos < end) if (bad(t.base)) any = true;
        return any;
      }
      default: {
        const size = codecFor(t).size;
        c.need(size);
        c.pos += size;
        return false;
      }
    }
  };
  for (let i = 0; i < count; i++) if (bad(type)) return true;
  return false;
}

/** Does `v` look like one element of `type` (as opposed to a list wrapping elements)? */
function looksLikeElement(v: unknown, t: TypeJson): boolean {
  switch (t.class) {
    case 'H5T_COMPOUND':
      return Array.isArray(v)
        ? v.length === t.fields.length && v.every((x, i) => looksLikeElement(x, t.fields[i].type))
        : typeof v === 'object' && v !== null;
    case 'H5T_ARRAY':
      return Array.isArray(v) && v.length === t.dims[0];
    case 'H5T_VLEN':
      return Array.isArray(v) && v.every((x) => looksLikeElement(x, t.base));
    default:
      return !Array.isArray(v);
  }
}

/** `what` is '' for request values, or the name of the thing being validated (e.g. an array-type element). */
const mismatch = (what: string, msg: string) =>
  badRequest(what ? `Invalid ${what}: ${msg}` : `input data doesn't match selection: ${msg}`);

/** Flatten `value` nested exactly like `dims` (C order), validating every level. */
function flattenNested(value: unknown, dims: readonly number[], what: string): unknown[] {
  const rank = dims.length;
  if (rank === 1) {
    if (!Array.isArray(value)) throw mismatch(what, `expected a list of ${dims[0]} elements, got ${describe(value)}`);
    if (value.length !== dims[0]) throw mismatch(what, `expected ${dims[0]} elements, got ${value.length}`);
    return value;
  }
  let count = 1;
  for (const d of dims) count *= d;
  const out = new Array<unknown>(count);
  let k = 0;
  const walk = (v: unknown, level: number): void => {
    const n = dims[level];
    if (!Array.isArray(v)) throw mismatch(what, `expected a list of ${n} at dimension ${level}, got ${describe(v)}`);
    if (v.length !== n) throw mismatch(what, `expected ${n} items at dimension ${level}, got ${v.length}`);
    if (level === rank - 1) {
      for (let i = 0; i < n; i++) out[k++] = v[i];
    } else {
      for (let i = 0; i < n; i++) walk(v[i], level + 1);
    }
  };
  walk(value, 0);
  return out;
}

/**
 * Turn a JSON request `value` nested like `shape` into the flat list of its elements in C order
 * (wire-reference 2.4 PUT value, 2.6 PUT attribute; HSDS `jsonToArray`).
 *
 * Nesting is driven by `shape`, not by the value (compound, array-type and vlen elements are lists
 * themselves): every level must be a list of exactly the extent of its dimension. Shape `[]`
 * (scalar) takes the bare element, or a one-element list around it. When the shape has exactly one
 * element, a bare element is accepted too (HSDS: "a bare value for a scalar or single element").
 * For rank 1 the input array itself is returned (not copied).
 *
 * @throws badRequest `input data doesn't match selection: ...` naming the level and extent.
 */
export function flattenValue(value: unknown, shape: readonly number[], type: TypeJson): unknown[] {
  if (shape.length === 0) {
    if (!looksLikeElement(value, type) && Array.isArray(value) && value.length === 1) return [value[0]];
    return [value];
  }
  let count = 1;
  for (const d of shape) count *= d;
  if (count === 1 && looksLikeElement(value, type)) {
    // a bare element for a one-element selection, unless it also reads as the properly nested form
    let v = value;
    let nested = true;
    for (let i = 0; i < shape.length; i++) {
      if (!Array.isArray(v) || v.length !== 1) {
        nested = false;
        break;
      }
      v = v[0];
    }
    if (!nested || !looksLikeElement(v, type)) return [value];
  }
  return flattenNested(value, shape, '');
}

/**
 * The elements of a JSON request value written to a selection of `shape` holding `count`
 * elements (wire-reference 2.4 PUT value): the value nested like `shape` (`flattenValue`), or,
 * when it is not, the same elements given flat or nested any other way, as long as there are
 * exactly `count` of them (a flat list written into an N-D selection, HSDS/numpy reshape). With
 * `count` smaller than the selection (`element_count` broadcast) the value holds `count`
 * elements, flat or nested.
 * @throws badRequest `input data doesn't match selection: ...` when the count differs.
 */
export function selectionValues(value: unknown, shape: readonly number[], count: number, type: TypeJson): unknown[] {
  let selCount = 1;
  for (const d of shape) selCount *= d;
  let nestedError: unknown;
  if (selCount === count) {
    try {
      return flattenValue(value, shape, type);
    } catch (e) {
      nestedError = e;
    }
  }
  const flat: unknown[] = [];
  const walk = (v: unknown): boolean => {
    if (looksLikeElement(v, type) || !Array.isArray(v)) {
      flat.push(v);
      return flat.length <= count;
    }
    for (const x of v) if (!walk(x)) return false;
    return true;
  };
  if (count === 1 && looksLikeElement(value, type)) return [value];
  if (Array.isArray(value) && walk(value) && flat.length === count) return flat;
  if (nestedError) throw nestedError;
  throw mismatch('', `expected ${count} elements, got ${Array.isArray(value) ? (flat.length > count ? 'more' : flat.length) : 1}`);
}

/**
 * A JSON value for a compound of one field (a write of one named field, `fields=x`) with plain
 * values where its elements should be: each such value becomes the one-field element `[v]`
 * (HSDS takes `[1, 2, 3]` for field `x` as well as `[[1], [2], [3]]`; issue #25). Values of other
 * types, and elements already given as lists or objects, are returned as they are.
 */
export function wrapSingleFieldValues(value: unknown, t: TypeJson): unknown {
  if (t.class !== 'H5T_COMPOUND' || t.fields.length !== 1) return value;
  const field = t.fields[0]!.type;
  const wrap = (v: unknown): unknown => {
    if (looksLikeElement(v, t)) return v;
    if (looksLikeElement(v, field) && !Array.isArray(v)) return [v];
    return Array.isArray(v) ? v.map(wrap) : v;
  };
  return wrap(value);
}

/**
 * Nest a flat C-order element list into lists shaped like `shape` (the inverse of `flattenValue`).
 * Shape `[]` returns the bare element; rank 1 returns `flat` itself.
 * @throws internal if `flat` has the wrong length.
 */
export function nestValues(flat: unknown[], shape: readonly number[]): unknown {
  let count = 1;
  for (const d of shape) count *= d;
  if (flat.length !== count) throw internal(`nestValues: ${flat.length} values for shape [${shape.join(',')}]`);
  if (shape.length === 0) return flat[0];
  if (shape.length === 1) return flat;
  let k = 0;
  const build = (level: number): unknown[] => {
    const n = shape[level];
    const out = new Array<unknown>(n);
    if (level === shape.length - 1) for (let i = 0; i < n; i++) out[i] = flat[k++];
    else for (let i = 0; i < n; i++) out[i] = build(level + 1);
    return out;
  };
  return build(0);
}
