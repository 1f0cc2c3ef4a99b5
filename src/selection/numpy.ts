/**
 * h5grove's `selection` parameter: numpy basic indexing written as text (`5`, `1, 2:5`,
 * `0:10:5, 2, 3:`; h5grove's `parse_slice`), turned into the store's selection grammar
 * (select.ts, `[start:stop:step,...]`) and the shape numpy gives the result.
 *
 * numpy's rules, as h5py applies them to datasets: a member is an index `i` (negative counts from
 * the end; the dimension is dropped from the result) or a slice `start:stop[:step]` (missing parts
 * default to the whole extent; negative bounds count from the end and bounds are clipped to the
 * extent, as Python's `slice.indices`; the step must be positive, as h5py requires); dimensions
 * without a member are taken whole. Pure; every invalid input throws 422 with a message.
 */
import { H5StoreError } from '../errors.js';
import { printable } from './select.js';

/** A parsed selection: the store's `select` text (undefined: everything) and numpy's result shape. */
export interface NumpySelection {
  /** `[a:b:c,...]` for the store, or undefined for the whole dataset. */
  select: string | undefined;
  /** numpy's shape of the result (dimensions indexed by an integer dropped). */
  shape: number[];
  /** Elements selected (0 for an empty slice: nothing to read). */
  count: number;
}

const INT = /^[+-]?\d+$/;

function invalid(msg: string): H5StoreError {
  return new H5StoreError('UnprocessableEntity', `Invalid selection: ${printable(msg)}`);
}

/** A Python int from text (`int()`: optional sign, digits, surrounding blanks). */
function pyInt(text: string, what: string): number {
  const t = text.trim();
  if (!INT.test(t)) throw invalid(`${JSON.stringify(what.slice(0, 80))} is not an integer or a slice`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw invalid(`${t.slice(0, 40)} is too large`);
  return n;
}

/**
 * Parse h5grove's `selection` against a dataset's `dims` (`[]` for a scalar dataset).
 * @param text undefined or empty: the whole dataset
 * @throws H5StoreError UnprocessableEntity (422) for a malformed member, more members than
 *   dimensions, an index out of range or a step below 1
 */
export function parseNumpySelection(text: string | undefined, dims: readonly number[]): NumpySelection {
  const all = (): NumpySelection => ({ select: undefined, shape: [...dims], count: dims.reduce((a, b) => a * b, 1) });
  if (text === undefined || text.trim() === '') return all();
  const members = text.split(',');
  if (members.length > dims.length) {
    throw invalid(`${text.slice(0, 80)} has ${members.length} members: too many to slice a ${dims.length}-D dataset`);
  }
  const parts: string[] = [];
  const shape: number[] = [];
  let count = 1;
  for (let d = 0; d < dims.length; d++) {
    const extent = dims[d]!;
    const m = members[d];
    if (m === undefined) {
      parts.push(`0:${extent}`);
      shape.push(extent);
      count *= extent;
      continue;
    }
    if (!m.includes(':')) {
      let i = pyInt(m, m);
      if (i < 0) i += extent;
      if (i < 0 || i >= extent) throw invalid(`index ${m.trim()} is out of range for dimension ${d} of extent ${extent}`);
      parts.push(`${i}:${i + 1}`);
      continue;
    }
    const bits = m.split(':');
    if (bits.length > 3) throw invalid(`${JSON.stringify(m.slice(0, 80))} is not a valid slice`);
    const [a, b, c] = bits.map((x) => (x.trim() === '' ? undefined : pyInt(x, m)));
    const step = c ?? 1;
    if (step < 1) throw invalid(`step ${step} in ${JSON.stringify(m.trim())}: the step must be at least 1`);
    // Python's slice.indices(extent) for a positive step
    const clip = (v: number | undefined, dflt: number) => (v === undefined ? dflt : v < 0 ? Math.max(0, v + extent) : Math.min(v, extent));
    const start = clip(a, 0);
    const stop = clip(b, extent);
    const n = stop > start ? Math.ceil((stop - start) / step) : 0;
    parts.push(n > 0 ? `${start}:${start + (n - 1) * step + 1}${step === 1 ? '' : `:${step}`}` : '0:1');
    shape.push(n);
    count *= n;
  }
  return { select: dims.length ? `[${parts.join(',')}]` : undefined, shape, count };
}
