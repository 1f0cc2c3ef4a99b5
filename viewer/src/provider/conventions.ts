/**
 * Conventions of the files scientists write, read from attribute values (pure, no DOM):
 * - netCDF/CF packing and missing data: `_FillValue`, `missing_value`, `valid_min`/`valid_max`/
 *   `valid_range` (in packed units), `scale_factor`, `add_offset` (CF conventions 1.11, 8.1 and
 *   2.5.1; the order netCDF-4 and xarray apply: mask in stored units, then unpack);
 * - netCDF-4 dimension scales: `DIMENSION_LIST` (HDF5 dimension scale spec) naming one
 *   coordinate variable per dimension;
 * - pandas/PyTables tables: `values_block_<n>_kind` attributes naming the columns a compound
 *   field of array type holds (a pickle protocol 0 list of strings, as pandas' HDFStore writes it).
 */
import { numberOf } from './json.js';

/** How a CF variable's stored values become physical ones. */
export interface CfPacking {
  /** Stored values that mean "no data" (`_FillValue`, `missing_value`), compared exactly. */
  missing: number[];
  /** Stored values outside [min, max] are no data too. */
  validMin: number;
  validMax: number;
  scale: number;
  offset: number;
  /** True when scale_factor or add_offset is present: values are unpacked to floats. */
  unpack: boolean;
}

function numbersOf(v: unknown): number[] {
  const list = Array.isArray(v) ? v.flat(4) : [v];
  return list.map(numberOf).filter((x): x is number => x !== undefined);
}

/**
 * The CF packing of a variable from its attribute values, or undefined when it has nothing to
 * mask or unpack. A NaN `_FillValue` counts (NaN stays NaN). `missing_value` may be a list.
 */
export function cfPacking(attrs: Record<string, unknown>): CfPacking | undefined {
  const missing = [...numbersOf(attrs._FillValue), ...numbersOf(attrs.missing_value)];
  const scale = numbersOf(attrs.scale_factor)[0];
  const offset = numbersOf(attrs.add_offset)[0];
  const range = numbersOf(attrs.valid_range);
  let validMin = numbersOf(attrs.valid_min)[0] ?? -Infinity;
  let validMax = numbersOf(attrs.valid_max)[0] ?? Infinity;
  if (range.length === 2) [validMin, validMax] = range;
  const unpack = scale !== undefined || offset !== undefined;
  if (!unpack && missing.every((m) => Number.isNaN(m)) && validMin === -Infinity && validMax === Infinity) return undefined;
  return { missing: missing.filter((m) => !Number.isNaN(m)), validMin, validMax, scale: scale ?? 1, offset: offset ?? 0, unpack };
}

/**
 * Stored values as physical ones: missing and out-of-range values become NaN, the rest
 * `v * scale + offset`. Returns a Float64Array (Float32Array when the stored values are 32-bit
 * floats or narrower integers and `float32` is asked, as netCDF's rule for packed data).
 */
export function cfDecode(values: ArrayLike<number | bigint>, p: CfPacking, float32 = false): Float32Array | Float64Array {
  const n = values.length;
  const out = float32 ? new Float32Array(n) : new Float64Array(n);
  const miss = new Set(p.missing);
  for (let i = 0; i < n; i++) {
    const v = Number(values[i]);
    out[i] = miss.has(v) || v < p.validMin || v > p.validMax ? NaN : v * p.scale + p.offset;
  }
  return out;
}

/**
 * The strings of a pickle protocol 0 list of strings (`(lp0\nVstation\np1\na.`), as pandas
 * stores column names in PyTables attributes; undefined for anything else. Handles `V`
 * (unicode, raw-unicode-escape) and `S` (quoted str) items.
 */
export function pickledStrings(text: string): string[] | undefined {
  if (!text.startsWith('(l')) return undefined;
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    // APPEND ("a") and MARK ("(") opcodes may start the line of the next item
    const line = raw.replace(/^[a(]+/, '');
    if (line.startsWith('V')) out.push(line.slice(1).replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
    else if (/^S(['"]).*\1$/.test(line)) out.push(line.slice(2, -1));
  }
  return out;
}

/** The text of a string attribute value (h5store sends strings; a one-element list is unwrapped). */
export function textOf(v: unknown): string | undefined {
  if (Array.isArray(v) && v.length === 1) return textOf(v[0]);
  return typeof v === 'string' ? v : undefined;
}

/**
 * Column names of a PyTables table written by pandas: for each compound field named
 * `values_block_<n>` (or any field with a `<field>_kind` attribute), the names its elements
 * stand for. Empty when the dataset is no such table.
 */
export function pandasColumns(attrs: Record<string, unknown>, fieldNames: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of fieldNames) {
    const kind = textOf(attrs[`${f}_kind`]);
    const names = kind === undefined ? undefined : pickledStrings(kind);
    if (names && names.length) out.set(f, names);
  }
  return out;
}

/** The object id a reference value names (`"datasets/d-..."` or a bare id), or undefined. */
export function refId(v: unknown): string | undefined {
  const s = textOf(v);
  if (!s) return undefined;
  const m = /(?:^|\/)([gdt]-[0-9a-f-]+)$/.exec(s);
  return m ? m[1] : undefined;
}

/** The dimension scale ids of a `DIMENSION_LIST` attribute value: one id (or undefined) per dimension. */
export function dimensionScaleIds(v: unknown): (string | undefined)[] {
  if (!Array.isArray(v)) return [];
  return v.map((refs) => (Array.isArray(refs) ? refId(refs[0]) : refId(refs)));
}
