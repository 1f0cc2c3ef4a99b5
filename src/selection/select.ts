/**
 * Dataspace selections of the value endpoints: the `select=` grammar, the JSON body forms
 * (`select`, `start`/`stop`/`step`, `points`), binary point lists, and the geometry the store
 * needs (element coordinates for `H5Sselect_elements`, paging of large hyperslab reads).
 *
 * Pure functions, no HDF5 calls. Every invalid client input throws `badRequest` (400) with a
 * message naming the problem; results too large for a configured cap throw `tooLarge` (413).
 *
 * Sources: wire-reference section 2.4 (grammar, bounds, body forms, binary points) and HSDS
 * `dsetUtil.getSelectionList` / `getSelectionShape` (checked in its source), with the
 * deliberate differences listed on `parseSelect`.
 */
import { showJson, stringifyJson } from '../codec/json.js';
import { badRequest, internal, tooLarge } from '../errors.js';

/** One dimension of a selection. */
export type DimSel =
  /**
   * A regular slice: `count` indices `start, start+step, ...` (dataset coordinates).
   * `index` is true when it was written as a single index `i` (HSDS keeps the dimension, with
   * extent 1, in the result).
   */
  | { kind: 'slice'; start: number; step: number; count: number; index?: boolean }
  /** A coordinate list `[i,j,k]` (fancy selection), in the order given. */
  | { kind: 'list'; coords: number[] };

/** A validated selection of a dataspace. */
export interface Selection {
  /** Dataset extent the selection was validated against (`[]` for a scalar dataspace). */
  dims: number[];
  /** One entry per dimension of `dims`. */
  sel: DimSel[];
  /**
   * Shape of the result, i.e. what a JSON reply is nested to. A slice gives its `count`; all
   * coordinate lists together give one dimension of their (common) length, placed where the
   * first list dimension is (HSDS `getSelectionShape`). `[]` for a scalar dataspace.
   */
  shape: number[];
  /** Number of selected elements: product of `shape` (1 for a scalar dataspace). */
  count: number;
  /** True when there is no coordinate list: one regular hyperslab (start/step/count per dim). */
  isHyperslab: boolean;
}

/** One page of a paged hyperslab read (see `pageHyperslab`), in dataset coordinates. */
export interface HyperslabPage {
  start: number[];
  step: number[];
  count: number[];
  /** Number of elements in the page (product of `count`). */
  elements: number;
}

const DIGITS = /^\d+$/;
const NEGATIVE = /^-\d+$/;

/**
 * 400 with the common prefix every selection error carries. Control characters are escaped,
 * since the message also becomes the HTTP reason phrase.
 */
function invalid(msg: string) {
  return badRequest(`Invalid selection: ${printable(msg)}`);
}

/** Escape control characters so client text can be echoed in a message. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Client text shortened for an error message. */
function excerpt(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** Build the `Selection` record (shape, count, isHyperslab) from validated per-dim parts. */
function makeSelection(dims: number[], sel: DimSel[]): Selection {
  const shape: number[] = [];
  let listLen = -1;
  let isHyperslab = true;
  for (let d = 0; d < sel.length; d++) {
    const s = sel[d]!;
    if (s.kind === 'slice') {
      shape.push(s.count);
    } else {
      isHyperslab = false;
      if (listLen < 0) {
        listLen = s.coords.length;
        shape.push(listLen);
      } else if (s.coords.length !== listLen) {
        throw invalid(
          `coordinate lists must have equal lengths to be combined, got ${listLen} and ` +
            `${s.coords.length} (dimension ${d})`,
        );
      }
    }
  }
  let count = 1;
  for (const n of shape) count *= n;
  return { dims: [...dims], sel, shape, count, isHyperslab };
}

/** The selection of the whole extent (`:` in every dimension; a scalar gives shape [] count 1). */
export function allSelection(dims: number[]): Selection {
  return makeSelection(
    dims,
    dims.map((extent) => ({ kind: 'slice', start: 0, step: 1, count: extent })),
  );
}

/**
 * A hyperslab selection from explicit start/count/step vectors (e.g. the region a resize or an
 * append added, for the `{"selection": "[4:6,:]"}` reply of `PUT /datasets/{id}/shape`).
 * @param dims dataset extent; @param start first index per dim; @param count elements per dim;
 * @param step stride per dim (default 1).
 * @throws badRequest when the hyperslab does not fit in `dims` or the vectors have the wrong rank.
 */
export function hyperslabSelection(
  dims: number[],
  start: number[],
  count: number[],
  step?: number[],
): Selection {
  const rank = dims.length;
  if (start.length !== rank || count.length !== rank || (step && step.length !== rank)) {
    throw invalid(`hyperslab rank does not match the dataspace rank ${rank}`);
  }
  const sel: DimSel[] = [];
  for (let d = 0; d < rank; d++) {
    const st = step ? step[d]! : 1;
    const s = start[d]!;
    const c = count[d]!;
    if (!Number.isInteger(s) || !Number.isInteger(c) || !Number.isInteger(st) || st < 1 ||
        s < 0 || c < 0 || (c > 0 && s + (c - 1) * st >= dims[d]!)) {
      throw invalid(
        `hyperslab start ${s} count ${c} step ${st} does not fit dimension ${d} of extent ${dims[d]}`,
      );
    }
    sel.push({ kind: 'slice', start: s, step: st, count: c });
  }
  return makeSelection(dims, sel);
}

/** Parse a non-negative decimal integer written in a selection; `what` names it in errors. */
function parseIndex(text: string, what: string, dim: number): number {
  if (DIGITS.test(text)) return Number(text);
  if (NEGATIVE.test(text)) {
    throw invalid(`negative ${what} ${text} for dimension ${dim} is not supported`);
  }
  throw invalid(`${what} '${text}' for dimension ${dim} is not a non-negative integer`);
}

/**
 * Parse one dimsel (whitespace already removed) against `extent` (wire-reference 2.4):
 * `:`, `start:stop`, `start:stop:step` (bounds may be empty), `i`, or `[i,j,k]`.
 */
function parseDimSel(text: string, dim: number, extent: number): DimSel {
  if (text === '') throw invalid(`empty selection for dimension ${dim}`);

  if (text.startsWith('[')) {
    if (!text.endsWith(']')) throw invalid(`unterminated coordinate list for dimension ${dim}`);
    const body = text.slice(1, -1);
    if (body === '') throw invalid(`empty coordinate list for dimension ${dim}`);
    const parts = body.split(',');
    const coords = new Array<number>(parts.length);
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (p === '') throw invalid(`empty coordinate in the list for dimension ${dim}`);
      const c = parseIndex(p, 'coordinate', dim);
      if (c >= extent) {
        throw invalid(`coordinate ${p} out of range for dimension ${dim} of extent ${extent}`);
      }
      coords[i] = c;
    }
    return { kind: 'list', coords };
  }

  if (!text.includes(':')) {
    const i = parseIndex(text, 'index', dim);
    if (i >= extent) throw invalid(`index ${text} out of range for dimension ${dim} of extent ${extent}`);
    return { kind: 'slice', start: i, step: 1, count: 1, index: true };
  }

  const parts = text.split(':');
  if (parts.length > 3) throw invalid(`too many ':' in '${text}' for dimension ${dim}`);
  const [startText, stopText, stepText] = parts as [string, string, string | undefined];
  const step = stepText === undefined || stepText === '' ? 1 : parseIndex(stepText, 'step', dim);
  if (step < 1) throw invalid(`step ${stepText} for dimension ${dim} must be at least 1`);
  if (startText === '' && stopText === '') {
    // `:` (or `::k`): the whole extent, the only valid form for a zero extent.
    return { kind: 'slice', start: 0, step, count: Math.ceil(extent / step) };
  }
  const start = startText === '' ? 0 : parseIndex(startText, 'start', dim);
  const stop = stopText === '' ? extent : parseIndex(stopText, 'stop', dim);
  if (start >= extent) {
    throw invalid(`start ${start} out of range for dimension ${dim} of extent ${extent}`);
  }
  if (stop > extent) {
    throw invalid(`stop ${stop} out of range for dimension ${dim} of extent ${extent}`);
  }
  if (stop <= start) {
    throw invalid(`stop ${stop} must be greater than start ${start} for dimension ${dim}`);
  }
  return { kind: 'slice', start, step, count: Math.ceil((stop - start) / step) };
}

/** Split the inside of `[...]` at top-level commas; coordinate lists may hold commas. */
function splitDimSels(inner: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i];
    if (ch === '[') {
      if (depth > 0) throw invalid('nested coordinate lists are not allowed');
      depth = 1;
    } else if (ch === ']') {
      if (depth === 0) throw invalid(`unbalanced ']' at position ${i + 1}`);
      depth = 0;
    } else if (ch === ',' && depth === 0) {
      out.push(inner.slice(from, i));
      from = i + 1;
    }
  }
  if (depth !== 0) throw invalid('unterminated coordinate list');
  out.push(inner.slice(from));
  return out;
}

/**
 * Parse the HSDS `select=` grammar (wire-reference 2.4, HSDS `dsetUtil.getSelectionList`):
 * `[dimsel,dimsel,...]`, one dimsel per dimension, each one of
 * - `:` — the whole extent (also `::step`); the only valid form for a zero extent (count 0);
 * - `start:stop` or `start:stop:step` — either bound may be empty (`:5`, `3:`);
 *   `0 <= start < extent`, `start < stop <= extent`, `step >= 1`;
 * - `i` — a single index `< extent`; the dimension stays in the result with extent 1;
 * - `[i,j,k]` — a coordinate list, kept in the given order (duplicates allowed). Several lists
 *   must have equal lengths and are zipped numpy-style into one result dimension placed where
 *   the first list is.
 *
 * `undefined`, `null` or empty (after trimming) text selects the whole extent. Whitespace
 * anywhere is ignored (as HSDS does).
 *
 * Scalar dataspace (`dims` = []): HSDS treats it as dims [1], so `[]`, `[0]`, `[:]`, `[0:1]`
 * are accepted; the result has shape [] and count 1.
 *
 * Deliberate differences from HSDS:
 * - the outer brackets are checked (HSDS drops the first and last characters unseen, so
 *   `0:2,1:3` silently selects something else);
 * - negative indices get a specific message (HSDS: generic `Invalid selection`).
 *
 * @throws badRequest (400) for any syntax error, wrong number of dimsels, or bound out of range.
 */
export function parseSelect(text: string | undefined | null, dims: number[]): Selection {
  if (text === undefined || text === null) return allSelection(dims);
  const compact = text.replace(/\s+/g, '');
  if (compact === '') return allSelection(dims);
  if (!compact.startsWith('[') || !compact.endsWith(']') || compact.length < 2) {
    throw invalid(`expected '[dimsel,...]' in brackets, got '${excerpt(text)}'`);
  }
  const inner = compact.slice(1, -1);

  if (dims.length === 0) {
    // Scalar: accept `[]`, or a one-dimensional selection of the single element (dims [1]).
    if (inner !== '') {
      const parts = splitDimSels(inner);
      if (parts.length !== 1) {
        throw invalid(`expected 0 or 1 dimension selections for a scalar dataset, got ${parts.length}`);
      }
      const s = parseDimSel(parts[0]!, 0, 1);
      if (s.kind === 'list' && s.coords.length !== 1) {
        throw invalid('a scalar dataset has exactly one element');
      }
    }
    return allSelection([]);
  }

  const parts = inner === '' ? [] : splitDimSels(inner);
  if (parts.length !== dims.length) {
    throw invalid(`expected ${dims.length} dimension selections, got ${parts.length}`);
  }
  const sel = parts.map((p, d) => parseDimSel(p, d, dims[d]!));
  return makeSelection(dims, sel);
}

/** Read a `start`/`stop`/`step` body value: an int (rank 1) or a list of ints (one per dim). */
function bodyVector(value: unknown, key: string, rank: number): number[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (!Array.isArray(value) && rank !== 1) {
    throw invalid(`'${key}' must be a list of ${rank} integers`);
  }
  if (list.length !== rank) {
    throw invalid(`'${key}' has ${list.length} values, expected ${rank} (the dataset rank)`);
  }
  for (const v of list) {
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      throw invalid(`'${key}' values must be integers, got ${showJson(v)}`);
    }
    if (v < 0) throw invalid(`negative '${key}' value ${v} is not supported`);
  }
  return list as number[];
}

/**
 * A `select` given as a JSON list, one item per dimension (HSDS accepts it in a POST .../value
 * body, issue #25): an index (`3`), a slice as text (`"0:10"`, `"0:10:2"`, `":"`), or a list of
 * coordinates (`[1, 5, 7]`), written as the `select=` text the parser reads (`[3,0:10,[1,5,7]]`).
 * @throws H5StoreError BadRequest for any other item
 */
export function selectFromList(items: unknown[]): string {
  const parts = items.map((it, d) => {
    if (typeof it === 'number' && Number.isSafeInteger(it)) return String(it);
    if (typeof it === 'string' && /^[-0-9: ]*$/.test(it)) return it;
    if (Array.isArray(it) && it.every((x) => typeof x === 'number' && Number.isSafeInteger(x))) return `[${it.join(',')}]`;
    throw invalid(`'select' item ${d} must be an index, a slice such as "0:10", or a list of coordinates`);
  });
  return `[${parts.join(',')}]`;
}

/**
 * The JSON body forms of a selection (wire-reference 2.4, `PUT`/`POST …/value`):
 * - `{"select": "[...]"}` — the string grammar of `parseSelect`, or a list with one item per
 *   dimension (`selectFromList`);
 * - `{"start": s, "stop": e, "step": k}` — ints (rank-1 datasets) or lists of ints, one per
 *   dimension; any of them may be left out (defaults 0, extent, 1). Same bounds as the string
 *   form: `0 <= start < extent`, `start < stop <= extent`, `step >= 1`.
 *
 * A scalar dataspace is treated as dims [1] (HSDS) and gives the scalar selection.
 *
 * @returns the selection, or `undefined` when the body has none of these keys.
 * @throws badRequest (400) for a malformed value, `select` together with `start`/`stop`/`step`,
 *   or bounds out of range.
 */
export function selectionFromBody(
  body: { select?: unknown; start?: unknown; stop?: unknown; step?: unknown },
  dims: number[],
): Selection | undefined {
  const has = (v: unknown) => v !== undefined && v !== null;
  const hasSlab = has(body.start) || has(body.stop) || has(body.step);
  if (has(body.select)) {
    if (hasSlab) throw invalid("'select' cannot be combined with 'start', 'stop' or 'step'");
    if (Array.isArray(body.select)) return parseSelect(selectFromList(body.select), dims);
    if (typeof body.select !== 'string') throw invalid("'select' must be a string such as '[0:10,:]' or a list with one item per dimension");
    return parseSelect(body.select, dims);
  }
  if (!hasSlab) return undefined;

  const vdims = dims.length === 0 ? [1] : dims;
  const rank = vdims.length;
  const start = bodyVector(body.start, 'start', rank);
  const stop = bodyVector(body.stop, 'stop', rank);
  const step = bodyVector(body.step, 'step', rank);
  const sel: DimSel[] = [];
  for (let d = 0; d < rank; d++) {
    const extent = vdims[d]!;
    const k = step ? step[d]! : 1;
    if (k < 1) throw invalid(`step ${k} for dimension ${d} must be at least 1`);
    if (!start && !stop) {
      sel.push({ kind: 'slice', start: 0, step: k, count: Math.ceil(extent / k) });
      continue;
    }
    const s = start ? start[d]! : 0;
    const e = stop ? stop[d]! : extent;
    if (s >= extent) throw invalid(`start ${s} out of range for dimension ${d} of extent ${extent}`);
    if (e > extent) throw invalid(`stop ${e} out of range for dimension ${d} of extent ${extent}`);
    if (e <= s) throw invalid(`stop ${e} must be greater than start ${s} for dimension ${d}`);
    sel.push({ kind: 'slice', start: s, step: k, count: Math.ceil((e - s) / k) });
  }
  if (dims.length === 0) return allSelection([]);
  return makeSelection(dims, sel);
}

/**
 * The HSDS string form of a selection, e.g. `[4:6,:]` (for the `{"selection": ...}` reply of a
 * resize, wire-reference 2.3). A whole-extent dimension is `:`, a single index `i`, a slice
 * `start:stop` (`start:stop:step` when step > 1, with the tightest `stop`), a list `[i,j]`.
 * Scalar: `[]`. `parseSelect(formatSelection(s), s.dims)` gives back an equivalent selection.
 */
export function formatSelection(sel: Selection): string {
  const parts = sel.sel.map((s, d) => {
    if (s.kind === 'list') return `[${s.coords.join(',')}]`;
    if (s.index) return String(s.start);
    const extent = sel.dims[d]!;
    if (s.start === 0 && s.step === 1 && s.count === extent) return ':';
    if (s.count === 0) return ':';
    const stop = s.start + (s.count - 1) * s.step + 1;
    return s.step > 1 ? `${s.start}:${stop}:${s.step}` : `${s.start}:${stop}`;
  });
  return `[${parts.join(',')}]`;
}

// ---------------------------------------------------------------------------------------------
// Element coordinates (hsize_t = uint64) for H5Sselect_elements.

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Word offsets of the low / high 32 bits of a uint64 in a Uint32Array view of native memory. */
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const TWO32 = 4294967296;

/** Per result axis: its length and, per dataset dim on that axis, the coordinates by index. */
interface Axis {
  len: number;
  dims: number[];
  coords: Float64Array[];
}

/** The result axes of a selection, in result (C) order. */
function resultAxes(sel: Selection): Axis[] {
  const axes: Axis[] = [];
  let listAxis: Axis | undefined;
  sel.sel.forEach((s, d) => {
    if (s.kind === 'slice') {
      const c = new Float64Array(s.count);
      for (let i = 0; i < s.count; i++) c[i] = s.start + i * s.step;
      axes.push({ len: s.count, dims: [d], coords: [c] });
    } else {
      const c = Float64Array.from(s.coords);
      if (!listAxis) {
        listAxis = { len: c.length, dims: [d], coords: [c] };
        axes.push(listAxis);
      } else {
        listAxis.dims.push(d);
        listAxis.coords.push(c);
      }
    }
  });
  return axes;
}

/**
 * Coordinates of every selected element, in result (C) order, as a flat `BigUint64Array` of
 * `count * rank` values (row-major: point 0's coordinates first) — the `hsize_t` buffer that
 * `H5Sselect_elements(space, H5S_SELECT_SET, count, coords)` takes.
 *
 * Written through a 32-bit view (no per-element BigInt allocation): 1e6 points of rank 2 take a
 * few milliseconds. A scalar selection gives an empty array (rank 0).
 *
 * @param maxPoints cap on `sel.count`; above it throws `tooLarge` (413).
 */
export function expandPoints(sel: Selection, maxPoints: number = Number.MAX_SAFE_INTEGER): BigUint64Array {
  if (sel.count > maxPoints) {
    throw tooLarge(`Selection of ${sel.count} elements exceeds the limit of ${maxPoints} points`);
  }
  const rank = sel.dims.length;
  const n = sel.count;
  const out = new BigUint64Array(n * rank);
  if (n === 0 || rank === 0) return out;
  const w = new Uint32Array(out.buffer, out.byteOffset, out.length * 2);

  const axes = resultAxes(sel);
  const last = axes.length - 1;
  const inner = axes[last]!;
  // Low/high words of each coordinate, per dataset dim, indexed by position on its axis.
  const lo: Uint32Array[] = new Array(rank);
  const hi: Uint32Array[] = new Array(rank);
  const axisOf = new Int32Array(rank);
  axes.forEach((ax, a) => {
    ax.dims.forEach((d, j) => {
      const c = ax.coords[j]!;
      const l = new Uint32Array(c.length);
      const h = new Uint32Array(c.length);
      for (let i = 0; i < c.length; i++) {
        l[i] = c[i]! >>> 0;
        h[i] = Math.floor(c[i]! / TWO32);
      }
      lo[d] = l;
      hi[d] = h;
      axisOf[d] = a;
    });
  });
  const innerDims = inner.dims;
  const outerDims: number[] = [];
  for (let d = 0; d < rank; d++) if (axisOf[d] !== last) outerDims.push(d);
  const outerLo = new Uint32Array(rank);
  const outerHi = new Uint32Array(rank);
  const idx = new Int32Array(axes.length);
  const stride = 2 * rank;
  let p = 0;
  for (;;) {
    for (const d of outerDims) {
      const j = idx[axisOf[d]!]!;
      outerLo[d] = lo[d]![j]!;
      outerHi[d] = hi[d]![j]!;
    }
    const rowStart = p;
    for (let o = 0; o < outerDims.length; o++) {
      const d = outerDims[o]!;
      const l = outerLo[d]!, h = outerHi[d]!;
      for (let q = rowStart + 2 * d, i = 0; i < inner.len; i++, q += stride) {
        w[q + LO] = l;
        w[q + HI] = h;
      }
    }
    for (let o = 0; o < innerDims.length; o++) {
      const d = innerDims[o]!;
      const l = lo[d]!, h = hi[d]!;
      for (let q = rowStart + 2 * d, i = 0; i < inner.len; i++, q += stride) {
        w[q + LO] = l[i]!;
        w[q + HI] = h[i]!;
      }
    }
    p += stride * inner.len;
    let a = last - 1;
    while (a >= 0) {
      if (++idx[a]! < axes[a]!.len) break;
      idx[a] = 0;
      a--;
    }
    if (a < 0) break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Point lists (POST …/value `points`, JSON or binary).

/** A client value shortened for an error message (bigints and nested values included). */
function shown(v: unknown): string {
  return excerpt(printable(stringifyJson(v)));
}

/**
 * Validate one coordinate of point `i` (JSON form). Integers of 16+ digits arrive as `bigint`
 * from the JSON parser; those are out of range of any extent a number can hold.
 */
function pointCoord(v: unknown, i: number, d: number, extent: number): number {
  if (typeof v === 'bigint') {
    throw badRequest(`Invalid points: point ${i} coordinate ${v} out of range for dimension ${d} of extent ${extent}`);
  }
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw badRequest(`Invalid points: point ${i} has a non-integer coordinate ${shown(v)}`);
  }
  if (v < 0 || v >= extent) {
    throw badRequest(
      `Invalid points: point ${i} coordinate ${v} out of range for dimension ${d} of extent ${extent}`,
    );
  }
  return v;
}

/**
 * The JSON `points` of `POST`/`PUT …/value` (wire-reference 2.4): `[i, ...]` for a rank-1
 * dataset (`[[i], ...]` is accepted too), `[[i, j], ...]` otherwise, one entry per point.
 * @returns flat uint64 coordinates (n*rank, row-major) for `H5Sselect_elements`, and n.
 * @throws badRequest (400) for a scalar or null dataspace, an empty or malformed list, a point
 *   of the wrong rank, or a coordinate out of range (HSDS: "point out of range").
 */
export function parsePoints(points: unknown, dims: number[]): { coords: BigUint64Array; count: number } {
  const rank = dims.length;
  if (rank === 0) throw badRequest('Invalid points: point selection is not supported for scalar datasets');
  if (!Array.isArray(points)) throw badRequest('Invalid points: expected a list of points');
  const n = points.length;
  if (n === 0) throw badRequest('Invalid points: the list of points is empty');
  const coords = new BigUint64Array(n * rank);
  const w = new Uint32Array(coords.buffer);
  for (let i = 0; i < n; i++) {
    const pt: unknown = points[i];
    if (rank === 1 && !Array.isArray(pt)) {
      const c = pointCoord(pt, i, 0, dims[0]!);
      w[2 * i + LO] = c >>> 0;
      w[2 * i + HI] = Math.floor(c / TWO32);
      continue;
    }
    if (!Array.isArray(pt) || pt.length !== rank) {
      throw badRequest(`Invalid points: point ${i} must be a list of ${rank} coordinates, got ${shown(pt)}`);
    }
    for (let d = 0; d < rank; d++) {
      const c = pointCoord(pt[d], i, d, dims[d]!);
      const k = 2 * (i * rank + d);
      w[k + LO] = c >>> 0;
      w[k + HI] = Math.floor(c / TWO32);
    }
  }
  return { coords, count: n };
}

/**
 * Binary point list of `POST …/value` with `Content-Type: application/octet-stream`
 * (wire-reference 2.4 and 3.5; h5pyd sends points this way): uint64 little-endian, n*rank values,
 * row-major.
 * @returns the coordinates in native byte order (aliasing `buf` when it is aligned on a
 *   little-endian host) and n.
 * @throws badRequest (400) for a scalar dataspace, an empty body, a size that is not a multiple
 *   of 8*rank, or a coordinate out of range.
 */
export function pointsFromBinary(buf: Buffer, dims: number[]): { coords: BigUint64Array; count: number } {
  const rank = dims.length;
  if (rank === 0) throw badRequest('Invalid points: point selection is not supported for scalar datasets');
  const unit = 8 * rank;
  if (buf.length === 0 || buf.length % unit !== 0) {
    throw badRequest(
      `Invalid points: binary point list of ${buf.length} bytes is not a non-zero multiple of ` +
        `${unit} (8 bytes x rank ${rank})`,
    );
  }
  const n = buf.length / unit;
  let coords: BigUint64Array;
  if (LITTLE_ENDIAN) {
    coords =
      buf.byteOffset % 8 === 0
        ? new BigUint64Array(buf.buffer, buf.byteOffset, n * rank)
        : new BigUint64Array(Uint8Array.prototype.slice.call(buf).buffer);
  } else {
    coords = new BigUint64Array(n * rank);
    for (let k = 0; k < n * rank; k++) coords[k] = buf.readBigUInt64LE(8 * k);
  }
  const w = new Uint32Array(coords.buffer, coords.byteOffset, coords.length * 2);
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < rank; d++) {
      const k = 2 * (i * rank + d);
      const v = w[k + HI]! * TWO32 + w[k + LO]!;
      if (v >= dims[d]!) {
        const exact = coords[i * rank + d]!;
        throw badRequest(
          `Invalid points: point ${i} coordinate ${exact} out of range for dimension ${d} of extent ${dims[d]}`,
        );
      }
    }
  }
  return { coords, count: n };
}

/** Points ready for libhdf5: sorted, each once, and where each requested point went. */
export interface SortedPoints {
  /** Coordinates (n*rank, row-major) in C order of the dataset, without repeats. */
  coords: BigUint64Array;
  count: number;
  /**
   * `order[i]` is the index in `coords` of the i-th point asked for; undefined when the points
   * asked for were already sorted and unique (then `coords` is the request's own array).
   */
  order?: Uint32Array;
  /**
   * `last[u]` is the index of the last requested point at `coords` point u (for writes: a point
   * given twice gets the value given last, as if the points were written one after the other).
   */
  last?: Uint32Array;
}

/**
 * Sort point coordinates into the dataset's C order and drop repeats, remembering where each
 * requested point went so results can be returned in the order asked (repeats included).
 *
 * Why: libhdf5 1.10.8 reads a point selection of a virtual dataset with a repeated point by
 * crashing the process (segfault in `H5S_select_project_intersection`) and fails on unordered
 * points ("src and dest dataspaces have different number of elements selected"); sorted,
 * unique points work on every layout. Already sorted input costs one pass and no copy.
 * @param coords n*rank coordinates, each checked against `dims` already
 */
export function sortPoints(coords: BigUint64Array, count: number, dims: number[]): SortedPoints {
  const rank = dims.length;
  const w = new Uint32Array(coords.buffer, coords.byteOffset, coords.length * 2);
  // compare point a with point b: <0, 0, >0
  const cmp = (a: number, b: number): number => {
    for (let d = 0; d < rank; d++) {
      const ka = 2 * (a * rank + d);
      const kb = 2 * (b * rank + d);
      if (w[ka + HI] !== w[kb + HI]) return w[ka + HI]! - w[kb + HI]!;
      if (w[ka + LO] !== w[kb + LO]) return w[ka + LO]! - w[kb + LO]!;
    }
    return 0;
  };
  let sorted = true;
  for (let i = 1; i < count && sorted; i++) if (cmp(i - 1, i) >= 0) sorted = false;
  if (sorted) return { coords, count };

  // Linear C-order index as a double when the whole extent fits in 2^53 (sorts natively).
  let total = 1;
  for (const x of dims) total *= x;
  const idx = new Uint32Array(count);
  for (let i = 0; i < count; i++) idx[i] = i;
  if (total <= Number.MAX_SAFE_INTEGER) {
    const lin = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      let v = 0;
      for (let d = 0; d < rank; d++) {
        const k = 2 * (i * rank + d);
        v = v * dims[d]! + (w[k + HI]! * TWO32 + w[k + LO]!);
      }
      lin[i] = v;
    }
    idx.sort((a, b) => lin[a]! - lin[b]! || a - b);
  } else {
    idx.sort((a, b) => cmp(a, b) || a - b);
  }
  const order = new Uint32Array(count);
  const keep: number[] = [];
  const lastOf: number[] = [];
  for (let j = 0; j < count; j++) {
    const i = idx[j]!;
    if (j === 0 || cmp(idx[j - 1]!, i) !== 0) keep.push(i);
    order[i] = keep.length - 1;
    lastOf[keep.length - 1] = i;
  }
  const out = new BigUint64Array(keep.length * rank);
  keep.forEach((i, u) => out.set(coords.subarray(i * rank, (i + 1) * rank), u * rank));
  return { coords: out, count: keep.length, order, last: Uint32Array.from(lastOf) };
}

// ---------------------------------------------------------------------------------------------
// Paging of large hyperslab reads.

/**
 * Split a hyperslab selection into pages of about `pageBytes` each, whose concatenation in order
 * is exactly the C-order result of the whole selection (DESIGN section 1: large reads are paged
 * so the event loop is not stalled; binary responses are streamed page by page).
 *
 * Method: pick the outermost dimension k such that one "row" (the product of the counts of the
 * dimensions after k) fits in `pageBytes`. Dimensions before k advance one index per page,
 * dimension k takes m indices per page, dimensions after k are whole. A single element larger
 * than `pageBytes` still makes a page of one element.
 *
 * Chunk alignment: when `chunkDims` is given and the step along k is 1, page boundaries along k
 * are moved to multiples of `chunkDims[k]` in dataset coordinates (so a chunk is not decompressed
 * twice) as long as a page stays within 2x `pageBytes`.
 *
 * A selection that fits gives one page; a zero-count selection gives none; a scalar selection
 * gives one page with empty vectors.
 *
 * @param itemSize bytes per element (> 0); @param pageBytes target page size in bytes (> 0).
 * @throws internal (500) when called with a coordinate-list selection (a programming error).
 */
export function* pageHyperslab(
  sel: Selection,
  itemSize: number,
  pageBytes: number,
  chunkDims?: number[],
): Generator<HyperslabPage> {
  if (!sel.isHyperslab) throw internal('pageHyperslab needs a hyperslab selection');
  if (sel.count === 0) return;
  const slabs = sel.sel as Extract<DimSel, { kind: 'slice' }>[];
  const rank = slabs.length;
  const start = slabs.map((s) => s.start);
  const step = slabs.map((s) => s.step);
  const count = slabs.map((s) => s.count);
  const item = Math.max(1, itemSize);
  const budget = Math.max(1, pageBytes);

  if (rank === 0 || sel.count * item <= budget) {
    yield { start, step, count, elements: sel.count };
    return;
  }

  // rowElems[k] = product of counts of dims after k.
  const rowElems = new Array<number>(rank);
  let acc = 1;
  for (let d = rank - 1; d >= 0; d--) {
    rowElems[d] = acc;
    acc *= count[d]!;
  }
  let k = 0;
  while (k < rank - 1 && rowElems[k]! * item > budget) k++;
  const rowBytes = rowElems[k]! * item;
  const m = Math.max(1, Math.min(count[k]!, Math.floor(budget / rowBytes)));
  const chunk = chunkDims && step[k] === 1 ? chunkDims[k] : undefined;

  const idx = new Array<number>(k).fill(0);
  for (;;) {
    let i = 0; // index along dim k, in selection units
    while (i < count[k]!) {
      let n = Math.min(m, count[k]! - i);
      if (chunk && chunk > 0 && i + n < count[k]!) {
        const lo = start[k]! + i; // dataset coordinate of the page start (step 1)
        const target = lo + n;
        const down = Math.floor(target / chunk) * chunk;
        const up = down + chunk;
        if (down > lo && 2 * (down - lo) >= n) n = down - lo;
        else if ((up - lo) * rowBytes <= 2 * budget) n = up - lo;
        else if (down > lo) n = down - lo;
        n = Math.min(n, count[k]! - i);
      }
      const pStart = start.slice();
      const pCount = count.slice();
      for (let d = 0; d < k; d++) {
        pStart[d] = start[d]! + idx[d]! * step[d]!;
        pCount[d] = 1;
      }
      pStart[k] = start[k]! + i * step[k]!;
      pCount[k] = n;
      yield { start: pStart, step: step.slice(), count: pCount, elements: n * rowElems[k]! };
      i += n;
    }
    let a = k - 1;
    while (a >= 0) {
      if (++idx[a]! < count[a]!) break;
      idx[a] = 0;
      a--;
    }
    if (a < 0) return;
  }
}

/**
 * The selected elements of a hyperslab selection as one run of consecutive elements of the
 * dataset in C (row-major) order, when they are one: every dimension after the outermost one
 * selecting more than one index is selected whole (start 0, its full extent), and that one is
 * read with step 1. E.g. `[1000:1512, 0:8192]` of (8192, 8192) is the run of 512 * 8192
 * elements from element 1000 * 8192; `[5, 10:20]` of (8, 100) the 10 elements from 510;
 * `[0:4, 10:20]` of (8, 100) is no run. Such a selection's bytes are one byte range of
 * contiguously stored data (store/values/read.ts reads them straight from the file).
 * @returns the index of the first selected element in C order and the number of elements, or
 *   undefined (coordinate lists, a scalar dataspace, no elements, or not one run)
 */
export function contiguousRun(sel: Selection): { first: number; count: number } | undefined {
  if (!sel.isHyperslab || sel.dims.length === 0 || sel.count === 0) return undefined;
  const slabs = sel.sel as Extract<DimSel, { kind: 'slice' }>[];
  const rank = slabs.length;
  let k = 0; // the outermost dimension selecting more than one index (rank - 1 when none does)
  while (k < rank - 1 && slabs[k]!.count === 1) k++;
  if (slabs[k]!.count > 1 && slabs[k]!.step !== 1) return undefined;
  for (let d = k + 1; d < rank; d++) {
    const s = slabs[d]!;
    if (s.start !== 0 || s.count !== sel.dims[d] || (s.count > 1 && s.step !== 1)) return undefined;
  }
  let first = 0;
  for (let d = 0; d < rank; d++) first = first * sel.dims[d]! + slabs[d]!.start;
  return { first, count: sel.count };
}

/**
 * Whether paging `sel` with `pageBytes` (as `pageHyperslab` does, aligned to `chunkDims`) reads
 * every touched chunk in one page only: the split dimension k (the outermost one whose "row", the
 * product of the counts after it, fits the page) is the first dimension with a count over 1, is
 * read with step 1, and one chunk's extent along it fits twice the page (the alignment limit of
 * `pageHyperslab`). A read paged so decompresses no chunk twice (libhdf5's chunk cache of a
 * dataset open for one read holds 1 MiB), which makes small stream pages safe on chunked data.
 * A selection that fits one page trivially keeps chunks whole.
 * @param itemSize bytes per element (> 0); @param pageBytes page size in bytes (> 0)
 * @returns true when no chunk is split between pages
 */
export function pagesKeepChunksWhole(sel: Selection, itemSize: number, pageBytes: number, chunkDims: number[]): boolean {
  if (!sel.isHyperslab) return false;
  const slabs = sel.sel as Extract<DimSel, { kind: 'slice' }>[];
  const rank = slabs.length;
  const item = Math.max(1, itemSize);
  const budget = Math.max(1, pageBytes);
  if (rank === 0 || sel.count * item <= budget) return true;
  if (chunkDims.length !== rank) return false;
  const rowElems = new Array<number>(rank);
  let acc = 1;
  for (let d = rank - 1; d >= 0; d--) {
    rowElems[d] = acc;
    acc *= slabs[d]!.count;
  }
  let k = 0;
  while (k < rank - 1 && rowElems[k]! * item > budget) k++;
  for (let d = 0; d < k; d++) if (slabs[d]!.count > 1) return false;
  if (slabs[k]!.step !== 1) return false;
  return chunkDims[k]! * rowElems[k]! * item <= 2 * budget;
}
