/**
 * Numeric values as numpy sees them, for h5grove's `/data/` and `/stats/` (issue #28 item 7):
 * which types are numeric (numpy's `np.number` or `np.bool_`, as h5grove's `is_numeric_data`),
 * their numpy `descr`, the `dtype=safe` conversion to a type JavaScript has a typed array for,
 * the `.npy` file format, CSV text, and running statistics. Pure functions on wire bytes
 * (wire-reference 3.5: elements packed in the dataset's own type and byte order).
 *
 * Sources: numpy's `.npy` format (NEP 1, format version 1.0: magic `\x93NUMPY`, version, a
 * little-endian uint16 header length, a Python dict literal padded with spaces to a multiple of
 * 64 bytes, ending in a newline); h5grove's `_sanitize_dtype` (float16 -> float32, big-endian ->
 * little-endian) and `get_array_stats`.
 */
import { badRequest } from '../errors.js';
import { float32ToString, float64ToString, halfToNumber } from './float.js';
import { type NumericBase, type TypeJson, numericBase } from './types.js';
import { readInt64 } from './values.js';

/** A numeric type's element layout: what numpy calls its kind, and the base of its parts. */
export interface NumpyNumeric {
  /** `b` bool, `i` signed, `u` unsigned (bitfields too), `f` float, `c` complex (two floats). */
  kind: 'b' | 'i' | 'u' | 'f' | 'c';
  /** One number of the element (a complex has two). */
  part: NumericBase;
  /** Bytes per element. */
  size: number;
}

/** The two-float compound h5py reads as complex (fields `r` and `i` of one float type). */
function complexPart(t: TypeJson): NumericBase | undefined {
  if (t.class !== 'H5T_COMPOUND' || t.fields.length !== 2) return undefined;
  const [r, i] = t.fields;
  if (r!.name !== 'r' || i!.name !== 'i' || r!.type.class !== 'H5T_FLOAT' || i!.type.class !== 'H5T_FLOAT') return undefined;
  if (r!.type.base !== i!.type.base) return undefined;
  const part = numericBase(r!.type.base);
  return part && part.size >= 4 ? part : undefined;
}

/** The `FALSE`/`TRUE` enum h5py reads as numpy's bool. */
function isBoolEnum(t: TypeJson): boolean {
  if (t.class !== 'H5T_ENUM') return false;
  const names = Object.keys(t.mapping);
  return names.length === 2 && t.mapping.FALSE === 0 && t.mapping.TRUE === 1;
}

/**
 * The numeric layout of a type numpy reads as a number or a bool: integers, floats, bitfields
 * (unsigned), enums (their base; the FALSE/TRUE enum as bool), two-float `r`/`i` compounds
 * (complex). Undefined for anything else (strings, other compounds, arrays, opaque, ...).
 */
export function numpyNumeric(t: TypeJson): NumpyNumeric | undefined {
  if (t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT' || t.class === 'H5T_BITFIELD') {
    const part = numericBase(t.base);
    if (!part) return undefined;
    const kind = part.kind === 'float' ? 'f' : part.kind === 'int' ? 'i' : 'u';
    return { kind, part, size: part.size };
  }
  if (t.class === 'H5T_ENUM') {
    const base = numpyNumeric(t.base);
    if (!base) return undefined;
    return isBoolEnum(t) && base.size === 1 ? { kind: 'b', part: base.part, size: 1 } : base;
  }
  const part = complexPart(t);
  return part ? { kind: 'c', part, size: 2 * part.size } : undefined;
}

/** numpy's `descr` of a numeric layout (`<f4`, `|u1`, `|b1`, `>c16`). */
export function numpyDescr(n: NumpyNumeric): string {
  const order = n.size === 1 ? '|' : n.part.littleEndian ? '<' : '>';
  return `${order}${n.kind}${n.size}`;
}

/**
 * h5grove's `dtype=safe`: the layout JavaScript has a typed array for (float16 -> float32,
 * big-endian -> little-endian; complex stays complex, little-endian), and the conversion of wire
 * bytes to it (`convert` returns its input when nothing changes).
 */
export function safeNumeric(n: NumpyNumeric): { to: NumpyNumeric; convert: (wire: Buffer) => Buffer } {
  const p = n.part;
  const half = n.kind === 'f' && p.size === 2;
  if (!half && (p.littleEndian || p.size === 1)) return { to: n, convert: (w) => w };
  const toPart: NumericBase = { ...p, size: half ? 4 : p.size, littleEndian: true };
  const to: NumpyNumeric = { kind: n.kind, part: toPart, size: n.kind === 'c' ? 2 * toPart.size : toPart.size };
  if (half) {
    return {
      to,
      convert: (w) => {
        const k = w.length / 2;
        const out = Buffer.allocUnsafe(4 * k);
        for (let i = 0; i < k; i++) out.writeFloatLE(halfToNumber(p.littleEndian ? w.readUInt16LE(2 * i) : w.readUInt16BE(2 * i)), 4 * i);
        return out;
      },
    };
  }
  const width = p.size;
  return {
    to,
    convert: (w) => {
      const out = Buffer.from(w);
      if (width === 2) out.swap16();
      else if (width === 4) out.swap32();
      else out.swap64();
      return out;
    },
  };
}

/**
 * The header of a `.npy` file (format 1.0) of a C-ordered array of `shape` (`[]` a scalar).
 * The data follows it as is (numpy reads the element bytes with the `descr` given).
 */
export function npyHeader(descr: string, shape: readonly number[]): Buffer {
  const tuple = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${tuple}, }`;
  const fixed = 6 + 2 + 2; // magic, version, header length
  const pad = 64 - ((fixed + dict.length + 1) % 64);
  const text = dict + ' '.repeat(pad === 64 ? 0 : pad) + '\n';
  const out = Buffer.alloc(fixed + text.length);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(text.length, 8);
  out.write(text, fixed, 'latin1');
  return out;
}

/** Reads element `i` of a numeric layout's wire bytes as a number, or a bigint for 64-bit integers beyond 2^53. */
export function numberReader(n: NumpyNumeric): (dv: DataView, i: number) => number | bigint {
  const p = n.part;
  const le = p.littleEndian;
  const s = p.size;
  if (n.kind === 'b') return (dv, i) => (dv.getUint8(i) !== 0 ? 1 : 0);
  if (n.kind === 'f' || n.kind === 'c') {
    if (s === 2) return (dv, i) => halfToNumber(dv.getUint16(i * 2, le));
    if (s === 4) return (dv, i) => dv.getFloat32(i * 4, le);
    return (dv, i) => dv.getFloat64(i * 8, le);
  }
  const signed = n.kind === 'i';
  if (s === 1) return signed ? (dv, i) => dv.getInt8(i) : (dv, i) => dv.getUint8(i);
  if (s === 2) return signed ? (dv, i) => dv.getInt16(i * 2, le) : (dv, i) => dv.getUint16(i * 2, le);
  if (s === 4) return signed ? (dv, i) => dv.getInt32(i * 4, le) : (dv, i) => dv.getUint32(i * 4, le);
  return (dv, i) => readInt64(dv, i * 8, le, signed);
}

/** A number as CSV text: the shortest that reads back exactly in its own type; `nan`, `inf`, `-inf` as numpy writes them. */
function csvNumber(v: number | bigint, n: NumpyNumeric): string {
  if (typeof v === 'bigint') return v.toString();
  if (v !== v) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (n.kind === 'f' && n.part.size === 4) return float32ToString(v);
  if (n.kind === 'f') return float64ToString(v);
  return String(v);
}

/**
 * CSV text of a 1-D (one value per line) or 2-D (one row per line, values separated by commas)
 * numeric array, in parts of about 1 MiB: integers exact, floats in the shortest form that
 * reads back as the same value of their type, NaN and infinities as `nan`/`inf`/`-inf` (what
 * numpy's `savetxt` writes and `loadtxt`/`genfromtxt` read), bools as 0 and 1.
 * @throws BadRequest-class errors are the caller's: this takes only 1-D or 2-D shapes of
 *   non-complex numbers
 */
export class CsvWriter {
  private readonly read: (dv: DataView, i: number) => number | bigint;
  private readonly cols: number;
  private col = 0;

  constructor(
    private readonly n: NumpyNumeric,
    shape: readonly number[],
  ) {
    if (n.kind === 'c') throw badRequest('CSV cannot hold complex numbers');
    if (shape.length < 1 || shape.length > 2) throw badRequest(`CSV holds 1-D and 2-D arrays, not ${shape.length}-D ones`);
    this.read = numberReader(n);
    this.cols = shape.length === 2 ? shape[1]! : 1;
  }

  /** The text of the next `count` elements (C order) from `wire`. */
  write(wire: Buffer, count: number): Buffer[] {
    const dv = new DataView(wire.buffer, wire.byteOffset, wire.byteLength);
    const out: Buffer[] = [];
    let text = '';
    for (let i = 0; i < count; i++) {
      text += csvNumber(this.read(dv, i), this.n);
      this.col++;
      if (this.col === this.cols) {
        text += '\n';
        this.col = 0;
      } else text += ',';
      if (text.length >= 1 << 20) {
        out.push(Buffer.from(text, 'latin1'));
        text = '';
      }
    }
    if (text) out.push(Buffer.from(text, 'latin1'));
    return out;
  }
}

/** h5grove's `/stats/` answer. */
export interface ValueStats {
  strict_positive_min: number | bigint | null;
  positive_min: number | bigint | null;
  min: number | bigint | null;
  max: number | bigint | null;
  mean: number | null;
  std: number | null;
}

/**
 * Statistics of numeric values given page by page, as h5grove's `get_array_stats` computes them
 * on the finite values (NaN and infinities of float data left out): smallest value above 0, at
 * least 0, smallest, largest, mean and population standard deviation (ddof 0); for data that is
 * not floating point, every figure is an integer (numpy's result truncated, as `int()` does).
 * The mean is a compensated (Neumaier) sum over the count and the variance Welford's, both in
 * float64 (numpy sums pairwise, in the data's precision for float16/32: they agree to its
 * rounding); minima and maxima are exact, 64-bit integers too.
 */
export class StatsAccumulator {
  private readonly read: (dv: DataView, i: number) => number | bigint;
  private readonly float: boolean;
  private n = 0;
  /** Running mean and sum of squared deviations (Welford), for the variance. */
  private mean = 0;
  private m2 = 0;
  /** Compensated sum (Neumaier), for the mean: exact where numpy's pairwise sum is (0 for -1, 1). */
  private sum = 0;
  private carry = 0;
  private min: number | bigint | undefined;
  private max: number | bigint | undefined;
  private posMin: number | bigint | undefined;
  private strictMin: number | bigint | undefined;

  constructor(n: NumpyNumeric) {
    if (n.kind === 'c') throw badRequest('Statistics of complex values are not defined (no order)');
    this.read = numberReader(n);
    this.float = n.kind === 'f';
  }

  /** Take the next `count` elements of `wire`. */
  add(wire: Buffer, count: number): void {
    const dv = new DataView(wire.buffer, wire.byteOffset, wire.byteLength);
    for (let i = 0; i < count; i++) {
      const v = this.read(dv, i);
      let x: number;
      if (typeof v === 'number') {
        if (this.float && v - v !== 0) continue; // NaN, +-Infinity
        x = v;
      } else x = Number(v);
      if (this.min === undefined || v < this.min) this.min = v;
      if (this.max === undefined || v > this.max) this.max = v;
      if (v >= 0 && (this.posMin === undefined || v < this.posMin)) this.posMin = v;
      if (v > 0 && (this.strictMin === undefined || v < this.strictMin)) this.strictMin = v;
      this.n++;
      const t = this.sum + x;
      this.carry += Math.abs(this.sum) >= Math.abs(x) ? this.sum - t + x : x - t + this.sum;
      this.sum = t;
      const d = x - this.mean;
      this.mean += d / this.n;
      this.m2 += d * (x - this.mean);
    }
  }

  /** The statistics (all null for no finite value). */
  result(): ValueStats {
    if (this.n === 0) return { strict_positive_min: null, positive_min: null, min: null, max: null, mean: null, std: null };
    // 64-bit integers beyond 2^53 stay exact (bigint; JSON writes their digits)
    const exact = (v: number | bigint | undefined): number | bigint | null => (v === undefined ? null : typeof v === 'bigint' ? v : this.float ? v : Math.trunc(v));
    const cast = (v: number): number => (this.float ? v : Math.trunc(v));
    const std = Math.sqrt(this.m2 / this.n);
    return {
      strict_positive_min: exact(this.strictMin),
      positive_min: exact(this.posMin),
      min: exact(this.min),
      max: exact(this.max),
      mean: cast((this.sum + this.carry) / this.n),
      std: cast(std),
    };
  }
}
