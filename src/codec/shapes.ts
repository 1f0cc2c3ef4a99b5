/**
 * Dataspace ("shape") JSON: request forms -> canonical form (wire-reference 3.2, 2.3, 2.6;
 * service spec 2.1).
 */
import { badRequest } from '../errors.js';

/** Canonical shape JSON. In `maxdims`, `0` means unlimited (wire-reference 3.2, section 7 row 14). */
export type ShapeJson =
  | { class: 'H5S_NULL' }
  | { class: 'H5S_SCALAR' }
  | { class: 'H5S_SIMPLE'; dims: number[]; maxdims?: number[] };

/** HDF5's H5S_MAX_RANK. */
export const MAX_RANK = 32;

const describe = (v: unknown): string => {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 80 ? s.slice(0, 77) + '...' : s;
  } catch {
    return String(v);
  }
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseDim(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  throw badRequest(`Invalid shape: ${what} must be non-negative integers, got ${describe(v)}`);
}

function parseDims(v: unknown): number[] {
  if (typeof v === 'number') return [parseDim(v, 'dims')];
  if (!Array.isArray(v)) throw badRequest(`Invalid shape: expected dims as a list of integers, got ${describe(v)}`);
  if (v.length > MAX_RANK) throw badRequest(`Invalid shape: rank ${v.length} exceeds the maximum of ${MAX_RANK}`);
  const dims = v.map((d) => parseDim(d, 'dims'));
  if (elementCountOrInf(dims) > Number.MAX_SAFE_INTEGER)
    throw badRequest(`Invalid shape: ${describe(dims)} has more than 2^53 elements`);
  return dims;
}

function elementCountOrInf(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/**
 * Parse a request's `shape` (and optional separate `maxdims`) into the canonical form.
 *
 * Shape forms (wire-reference 3.2, 2.3, 2.6; spec 2.1): omitted/`null`, `[]`, `"H5S_SCALAR"` or
 * `{class:'H5S_SCALAR'}` -> scalar; `"H5S_NULL"` or `{class:'H5S_NULL'}` -> null space; an integer
 * `n` -> `[n]`; a list of non-negative integers; `{class:'H5S_SIMPLE', dims, maxdims?}`.
 *
 * Maxdims: an integer or a list of the same rank; each entry `0`, `"H5S_UNLIMITED"` or `null`
 * means unlimited (emitted as `0`), otherwise it must be >= the matching dim. `maxdims` is rejected
 * with null and scalar spaces. Given both inside the shape object and separately, they must agree.
 *
 * @throws badRequest for anything else (negative or non-integer dims, rank > 32, more than 2^53
 * elements, bad maxdims).
 */
export function parseShape(shape: unknown, maxdims?: unknown): ShapeJson {
  let dims: number[] | null; // null = H5S_NULL
  let innerMax: unknown = undefined;
  if (shape === undefined || shape === null || shape === 'H5S_SCALAR') {
    dims = [];
  } else if (shape === 'H5S_NULL') {
    dims = null;
  } else if (typeof shape === 'number' || Array.isArray(shape)) {
    dims = parseDims(shape);
  } else if (isObject(shape)) {
    const cls = shape.class;
    if (cls === 'H5S_NULL') dims = null;
    else if (cls === 'H5S_SCALAR') dims = [];
    else if (cls === 'H5S_SIMPLE') {
      if (shape.dims === undefined) throw badRequest("Invalid shape: H5S_SIMPLE requires 'dims'");
      dims = parseDims(shape.dims);
      if (dims.length === 0) throw badRequest('Invalid shape: H5S_SIMPLE needs at least one dimension');
      innerMax = shape.maxdims;
    } else throw badRequest(`Invalid shape: unknown shape class ${describe(cls)}`);
  } else {
    throw badRequest(`Invalid shape: ${describe(shape)}`);
  }

  const a = innerMax === undefined || innerMax === null ? undefined : parseMaxdims(innerMax, dims);
  const b = maxdims === undefined || maxdims === null ? undefined : parseMaxdims(maxdims, dims);
  if (a && b && !a.every((m, i) => m === b[i])) throw badRequest('Invalid maxdims: shape.maxdims and maxdims disagree');
  const max = a ?? b;

  if (dims === null) return { class: 'H5S_NULL' };
  if (dims.length === 0) return { class: 'H5S_SCALAR' };
  return max ? { class: 'H5S_SIMPLE', dims, maxdims: max } : { class: 'H5S_SIMPLE', dims };
}

function parseMaxdims(v: unknown, dims: number[] | null): number[] {
  if (dims === null) throw badRequest('Invalid maxdims: not allowed with H5S_NULL');
  if (dims.length === 0) throw badRequest('Invalid maxdims: not allowed with a scalar shape');
  const list = Array.isArray(v) ? v : [v];
  if (list.length !== dims.length)
    throw badRequest(`Invalid maxdims: rank ${list.length} does not match the shape's rank ${dims.length}`);
  return list.map((m, i) => {
    if (m === 0 || m === null || m === 'H5S_UNLIMITED') return 0;
    if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 0)
      throw badRequest(`Invalid maxdims: entries must be non-negative integers or H5S_UNLIMITED, got ${describe(m)}`);
    if (m < dims[i]) throw badRequest(`Invalid maxdims: maxdims ${m} is smaller than dim ${dims[i]} (dimension ${i})`);
    return m;
  });
}

/** Dims of a shape: `[]` for scalar, `null` for H5S_NULL. */
export function shapeDims(shape: ShapeJson): number[] | null {
  return shape.class === 'H5S_SIMPLE' ? shape.dims : shape.class === 'H5S_SCALAR' ? [] : null;
}

/** Number of elements of a dims list (`[]` -> 1). */
export function elementCount(dims: readonly number[]): number {
  return elementCountOrInf(dims);
}
