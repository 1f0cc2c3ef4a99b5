/**
 * `query=` reads (wire-reference 2.4): on 1-D compound tables the matching rows with their
 * indices, and `PUT .../value?query=` updating them; on datasets of a simple type (numbers,
 * fixed-length strings) of any rank, the matching elements themselves, `_` naming the element
 * (h5pyd 1.0's `dset[..., query="_ > 100.0 AND _ < 200.0"]`).
 */
import os from 'node:os';
import { type TypeJson, isVariableLength, typeSize } from '../../codec/types.js';
import { decodeElements, encodeElements } from '../../codec/values.js';
import { badRequest } from '../../errors.js';
import * as io from '../../hdf5/io.js';
import { type Hid } from '../../hdf5/lib.js';
import { hasIndirect, memSize } from '../../hdf5/memory.js';
import { type Column, type EncodedStrings, parseQuery } from '../../selection/query.js';
import { type Selection, expandPoints, pageHyperslab, parseSelect, selectionFromBody } from '../../selection/select.js';
import type { DomainFile } from '../objects/domainFile.js';
import type { PagePool } from './pagepool.js';
import * as h5 from '../../hdf5/objects.js';
import { DecodedChunkCache, chunkScope } from './chunkCache.js';
import { fieldSubset, pickElements, pointSelection, refuseMissingFilters, storageErrors, type ValueLimits } from './common.js';

/** Bytes of query columns kept at most (`queryColumns`). */
export const QUERY_COLUMN_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Columns of earlier query scans (numbers as float64 arrays, fixed-length strings as packed
 * bytes; `columnBytes`), keyed by the dataset's cache scope (`chunkScope`: the view of the file,
 * fileState.ts, replaced by every write and every change seen on disk, and the dataset; none
 * inside a write), the field and the page: a repeated query on a table (a viewer
 * or script filtering the same table again) computes its mask from them and reads only the rows
 * it returns. LRU, bounded in bytes (the byte LRU of the decoded-chunk cache).
 */
export const queryColumns = new DecodedChunkCache(QUERY_COLUMN_CACHE_BYTES);

/**
 * Result of a `query=` read: the matching rows as a compound with the element index prepended
 * as a first field `index` (HSDS sends each row as `[index, ...fields]`, wire-reference 2.4),
 * in the wire format, so JSON is written by the codec with each field's own formatting.
 */
export interface QueryResult {
  type: TypeJson;
  wire: Buffer;
  count: number;
  /** Row indices of the hits (compound tables; empty for a simple-type query). */
  indices: number[];
  /**
   * Simple-type queries only: the dataset coordinates of each hit, in row-major order (one
   * number per hit on a 1-D dataset, `[i, j, ...]` otherwise), sent as JSON `index`. Absent
   * for compound tables, whose rows carry their index as a first field.
   */
  coords?: (number | number[])[];
}

/**
 * What a `query=` read asks besides the query: the selection, as `select=` text (GET) or as the
 * `select` / `start`, `stop`, `step` of a `POST .../value` body (wire-reference 2.4; one of the
 * two), at most `limit` hits (`Limit`; none when absent), and compound `fields`.
 */
export interface QueryRequest {
  select?: string;
  selectBody?: { select?: unknown; start?: unknown; stop?: unknown; step?: unknown };
  limit?: number;
  fields?: string;
}

/** The name that stands for the element in a query on a dataset of a simple type. */
export const ELEMENT_NAME = '_';

const INDEX_FIELD = { name: 'index', type: { class: 'H5T_INTEGER', base: 'H5T_STD_U64LE' } as TypeJson };

/**
 * Evaluate `query` over a one-dimensional compound dataset, within `select` (a 1-D slice),
 * stopping after `limit` hits. The scan reads only the fields the query uses, one column at a
 * time (numbers land in typed arrays, no per-row objects); the matching rows are then read whole
 * with one point selection. On a dataset of a simple type (numbers, fixed-length strings) of any
 * rank, `_` names the element and the result is the matching elements with their coordinates
 * (`querySimple`).
 * @throws badRequest (400) for an invalid query or selection, or a dataset it cannot apply to.
 */
export function queryRows(
  f: DomainFile,
  id: string,
  query: string,
  opts: QueryRequest,
  limits: ValueLimits,
  pool?: PagePool,
): QueryResult {
  return storageErrors(() => queryRowsOf(f, id, query, opts, limits, pool));
}

function queryRowsOf(
  f: DomainFile,
  id: string,
  query: string,
  opts: QueryRequest,
  limits: ValueLimits,
  pool?: PagePool,
): QueryResult {
  return f.withId(id, 'dataset', (did) => {
    const { type, space } = io.datasetTypeAndSpace(did);
    if (type.class !== 'H5T_COMPOUND') return querySimple(f, did, type, space, query, opts, limits, pool);
    if (space.cls !== 'H5S_SIMPLE' || space.dims.length !== 1) throw badRequest('"query" on a compound dataset needs a one-dimensional dataset');
    refuseMissingFilters(io.describeCreationOf(did, type));
    const outType = fieldSubset(type, opts.fields);
    const names = type.fields.map((x) => x.name);
    const kinds = type.fields.map((x) => fieldKind(x.type));
    const compiled = parseQuery(query, names, kinds);
    const sel = hyperslabOf(opts, space.dims);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const resultType: TypeJson = { class: 'H5T_COMPOUND', fields: [INDEX_FIELD, ...(outType as { fields: { name: string; type: TypeJson }[] }).fields] };
    const found = hasIndirect(type)
      ? scanByColumns(f, did, type, outType, compiled, sel, limit, limits)
      : scanByRows(f, did, type, outType, compiled, sel, limit, limits, pool, chunkScope(f.view, h5.objectAddr(did)));
    return { type: resultType, wire: found.wire, count: found.hits.length, indices: found.hits };
  });
}

/** The selection of a query, from `select=` or the body's. @throws badRequest for one given in both places. */
function selectionOf(opts: QueryRequest, dims: number[]): Selection {
  const fromBody = opts.selectBody ? selectionFromBody(opts.selectBody, dims) : undefined;
  if (fromBody && opts.select) throw badRequest('Give the selection in the query or in the body, not both');
  return fromBody ?? parseSelect(opts.select, dims);
}

/** The selection of a query on a table: a hyperslab (slices and indices). @throws badRequest for coordinate lists. */
function hyperslabOf(opts: QueryRequest, dims: number[]): Selection {
  const sel = selectionOf(opts, dims);
  if (!sel.isHyperslab) throw badRequest('"select" with "query" on a compound dataset must be a hyperslab (slices or indices, no coordinate lists)');
  return sel;
}

/** Whether a query can name the element of a dataset of this type (numbers, fixed-length strings). */
function simpleQueryable(t: TypeJson): boolean {
  if (t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT') return NUM_READERS[t.base] !== undefined;
  return t.class === 'H5T_STRING' && typeof t.length === 'number';
}

/**
 * Query on a dataset of a simple type (numbers, fixed-length strings), any rank: `_` names the
 * element (h5pyd 1.0 `Dataset.__getitem__(..., query=)`, whose `hsds_plugin.getDatasetValues`
 * reads the answer as a 1-D array of the dataset's own type: JSON `value`, or binary elements).
 * The selection (`select`: a hyperslab, or coordinate lists as h5pyd 1.0 sends its fancy
 * selections, in the order of numpy's result) is scanned page by page in the result's order,
 * numbers as float64 columns (exact below 2^53), strings compared as bytes; scanning stops at
 * `limit` hits.
 * @returns the matching elements in the dataset's type, their coordinates in `coords`.
 * @throws badRequest (400) for a scalar or null dataspace, a type other than numbers or
 *   fixed-length strings, `fields`, or an invalid query or selection; tooLarge (413) for a
 *   coordinate-list selection of more than `max_points` elements.
 */
function querySimple(
  f: DomainFile,
  did: Hid,
  type: TypeJson,
  space: { cls: string; dims: number[] },
  query: string,
  opts: QueryRequest,
  limits: ValueLimits,
  pool: PagePool | undefined,
): QueryResult {
  if (!simpleQueryable(type)) {
    const what = type.class === 'H5T_STRING' ? 'variable-length strings' : type.class;
    throw badRequest(`"query" is supported on compound datasets and on numbers and fixed-length strings, not on ${what}`);
  }
  if (space.cls !== 'H5S_SIMPLE') throw badRequest(`"query" needs a dataset with a simple dataspace, not ${space.cls}`);
  if (opts.fields !== undefined) throw badRequest('"fields" with "query" needs a compound dataset');
  refuseMissingFilters(io.describeCreationOf(did, type));
  // float32 elements compare with float32 literals, as numpy (HSDS, and h5pyd 1.0's own
  // filtering of unflushed data) compares a float32 array with a scalar
  const float32 = type.class === 'H5T_FLOAT' && typeSize(type) === 4;
  const compiled = parseQuery(query, [ELEMENT_NAME], [fieldKind(type)], { float32: [float32] });
  const sel = selectionOf(opts, space.dims);
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const size = typeSize(type);
  const memType = io.createType(type);
  const coords: (number | number[])[] = [];
  const parts: Buffer[] = [];
  try {
    const budget = Number.isFinite(limit) ? Math.min(limits.pageBytes, 65536 * size) : limits.pageBytes;
    const cols: Column[] = [];
    const pages = sel.isHyperslab ? hyperslabElementPages(did, type, memType, sel, budget, pool) : listElementPages(did, type, memType, sel, budget, limits);
    for (const p of pages) {
      try {
        const n = p.count;
        cols[0] = rowColumn(p.wire, type, 0, size, n, 0);
        const at = maskHits(compiled.mask(cols, n), n, limit - coords.length);
        if (at.length === 0) continue;
        const out = Buffer.allocUnsafe(at.length * size);
        for (let k = 0; k < at.length; k++) {
          p.wire.copy(out, k * size, at[k] * size, (at[k] + 1) * size);
          coords.push(p.coordOf(at[k]));
        }
        parts.push(out);
      } finally {
        p.done();
      }
      if (coords.length >= limit) break;
    }
  } finally {
    io.closeType(memType);
  }
  return { type, wire: Buffer.concat(parts), count: coords.length, indices: [], coords };
}

/**
 * A page of the elements a simple-type query scans: `count` elements of the dataset's type in
 * `wire` (in the selection's result order), the dataset coordinate of each (a number in 1-D,
 * else `[i, j, ...]`), and `done()` to give a pooled buffer back once the page is used.
 */
interface ElementPage {
  wire: Buffer;
  count: number;
  coordOf(k: number): number | number[];
  done(): void;
}

/** The pages of a hyperslab (`pageHyperslab`, at most `budget` bytes each), read by libhdf5 into pooled buffers. */
function* hyperslabElementPages(did: Hid, type: TypeJson, memType: Hid, sel: Selection, budget: number, pool: PagePool | undefined): Generator<ElementPage> {
  const size = typeSize(type);
  const rank = sel.dims.length;
  for (const p of pageHyperslab(sel, size, budget)) {
    const n = p.elements;
    const pooled = pool?.take(n * size);
    let wire: Buffer;
    try {
      wire = io.readDataset(did, type, memType, { kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, n, false, undefined, pooled?.subarray(0, n * size));
    } catch (e) {
      if (pooled) pool!.give(pooled);
      throw e;
    }
    yield { wire, count: n, coordOf: (k) => pageCoord(p, k, rank), done: () => pooled && pool!.give(pooled) };
  }
}

/**
 * The pages of a selection with coordinate lists (h5pyd's fancy selections, `[[3,1,7],:]`), in
 * its result order (numpy's `a[[3,1,7], :]`, repeats included), at most `budget` bytes each:
 * every page's points read sorted and once (`pointSelection`: libhdf5 1.10 wants them so), then
 * put back in the order asked.
 * @throws tooLarge (413) for more than `max_points` elements
 */
function* listElementPages(did: Hid, type: TypeJson, memType: Hid, sel: Selection, budget: number, limits: ValueLimits): Generator<ElementPage> {
  const size = typeSize(type);
  const rank = sel.dims.length;
  const all = expandPoints(sel, limits.maxPoints);
  const per = Math.max(1, Math.floor(budget / size));
  for (let first = 0; first < sel.count; first += per) {
    const n = Math.min(per, sel.count - first);
    const mine = all.subarray(first * rank, (first + n) * rank);
    const ps = pointSelection({ coords: mine, count: n }, sel.dims);
    const read = io.readDataset(did, type, memType, ps, ps.count, false);
    const wire = ps.order ? pickElements(read, type, ps.count, ps.order) : read;
    const coordOf = (k: number): number | number[] => {
      if (rank === 1) return Number(mine[k]);
      return Array.from(mine.subarray(k * rank, (k + 1) * rank), Number);
    };
    yield { wire, count: n, coordOf, done: () => undefined };
  }
}

/** Dataset coordinate of element `k` (row-major) of a hyperslab page: a number in 1-D, else `[i, j, ...]`. */
function pageCoord(p: { start: number[]; step: number[]; count: number[] }, k: number, rank: number): number | number[] {
  if (rank === 1) return p.start[0] + k * p.step[0];
  const c = new Array<number>(rank);
  for (let d = rank - 1; d >= 0; d--) {
    const i = k % p.count[d];
    k = (k - i) / p.count[d];
    c[d] = p.start[d] + i * p.step[d];
  }
  return c;
}

/** Offsets of the fields of a compound in the wire layout (fixed-size types only). */
function fieldOffsets(t: TypeJson & { class: 'H5T_COMPOUND' }): number[] {
  const out: number[] = [];
  let o = 0;
  for (const fld of t.fields) {
    out.push(o);
    o += typeSize(fld.type);
  }
  return out;
}

/**
 * Query scan for fixed-size compounds: whole rows are read as they are stored (libhdf5 does no
 * conversion: extracting one field of a compound costs it ~10x more than reading whole rows),
 * the fields the query uses become columns (float64 arrays, byte-level strings), and matching
 * rows are copied out of the same pages, so no second read is needed.
 */
function scanByRows(
  f: DomainFile,
  did: Hid,
  type: TypeJson & { class: 'H5T_COMPOUND' },
  outType: TypeJson,
  compiled: ReturnType<typeof parseQuery>,
  sel: Selection,
  limit: number,
  limits: ValueLimits,
  pool: PagePool | undefined,
  scope: string | undefined,
): { hits: number[]; wire: Buffer } {
  const rowSize = typeSize(type);
  const offsets = fieldOffsets(type);
  const outFields = (outType as { fields: { name: string }[] }).fields.map((of) => type.fields.findIndex((x) => x.name === of.name));
  const outSize = 8 + typeSize(outType);
  // The output fields as runs of row bytes [offset, length, ...], adjacent fields merged (all
  // fields in order: one run of the whole row).
  const runs: number[] = [];
  for (const fi of outFields) {
    const off = offsets[fi];
    const size = typeSize(type.fields[fi].type);
    const last = runs.length - 2;
    if (last >= 0 && runs[last] + runs[last + 1] === off) runs[last + 1] += size;
    else runs.push(off, size);
  }
  const memType = io.createType(type);
  const hits: number[] = [];
  const parts: Buffer[] = [];
  try {
    const budget = Number.isFinite(limit) ? Math.min(limits.pageBytes, 16384 * rowSize) : limits.pageBytes;
    const cols: Column[] = new Array(type.fields.length);
    // columns are remembered only for queries that can take all of theirs from the cache
    const cacheable = scope !== undefined && compiled.fields.length > 0 && compiled.fields.every((fi) => cacheableField(type.fields[fi].type));
    for (const p of pageHyperslab(sel, Math.max(rowSize, 1), budget)) {
      const n = p.elements;
      const keys = cacheable ? compiled.fields.map((fi) => `${scope}|${fi}|${p.start[0]}:${p.step[0]}:${n}`) : [];
      const cached = keys.map((k) => queryColumns.get(k));
      if (cacheable && n > 0 && cached.every((b) => b !== undefined)) {
        // every column of the query known: the mask from them, then only the rows of the hits
        compiled.fields.forEach((fi, j) => (cols[fi] = cachedColumn(type.fields[fi].type, cached[j]!, n)));
        const pageHits = maskHits(compiled.mask(cols, n), n, limit - hits.length);
        if (pageHits.length) {
          // whole rows (no conversion), then the output fields picked as from a read page
          const rows = readRows(f, did, type, memType, Array.from(pageHits, (i) => p.start[0] + i * p.step[0]), limits);
          parts.push(copyHits(rows, pageHits, rowSize, runs, outSize, p.start[0], p.step[0], hits, true));
        }
        if (hits.length >= limit) break;
        continue;
      }
      // Rows go into a pooled page buffer (a fresh multi-MiB Buffer per query costs GC time).
      const pooled = pool?.take(n * rowSize);
      const rows = io.readDataset(did, type, memType, { kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, n, false, undefined, pooled?.subarray(0, n * rowSize));
      compiled.fields.forEach((fi, j) => {
        const ft = type.fields[fi].type;
        const col = rowColumn(rows, ft, offsets[fi], rowSize, n, j);
        cols[fi] = col;
        if (cacheable && n > 0) queryColumns.set(keys[j], columnBytes(ft, col, rows, offsets[fi], rowSize, n));
      });
      const mask = compiled.mask(cols, n);
      const pageHits = maskHits(mask, n, limit - hits.length);
      if (pageHits.length) parts.push(copyHits(rows, pageHits, rowSize, runs, outSize, p.start[0], p.step[0], hits));
      if (pooled) pool!.give(pooled);
      if (hits.length >= limit) break;
    }
  } finally {
    io.closeType(memType);
  }
  return { hits, wire: Buffer.concat(parts) };
}

/** Whether `rowColumn` of this field can be kept in `queryColumns`: numbers (float64 columns) and fixed-length strings. */
function cacheableField(t: TypeJson): boolean {
  if (t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT') return NUM_READERS[t.base] !== undefined;
  return t.class === 'H5T_STRING' && typeof t.length === 'number';
}

/**
 * The bytes kept for a column (`cacheableField`): a copy of the float64 column (the scratch
 * arrays are reused), or the field's bytes of each row packed together (fixed-length strings).
 */
function columnBytes(t: TypeJson, col: Column, rows: Buffer, offset: number, rowSize: number, n: number): Buffer {
  if (col instanceof Float64Array) return Buffer.from(col.slice(0, n).buffer);
  const width = (t as { length: number }).length;
  const out = Buffer.allocUnsafe(n * width);
  // byte loops: a few bytes per row, where Buffer.copy's native call costs more
  for (let k = 0, o = 0; k < n; k++) for (let b = offset + k * rowSize, e = b + width; b < e; b++) out[o++] = rows[b];
  return out;
}

/** A column back from the bytes `columnBytes` made. */
function cachedColumn(t: TypeJson, bytes: Buffer, n: number): Column {
  if (t.class === 'H5T_STRING' && typeof t.length === 'number') return fixedStrings(bytes, t.length, t.strPad, n);
  return new Float64Array(bytes.buffer, bytes.byteOffset, n);
}

/** Positions of the first `max` set entries of `mask[0, n)`. */
function maskHits(mask: Uint8Array, n: number, max: number): Int32Array {
  // sparse hits (the usual query): found by the native byte search; once they turn out dense
  // (64 or more, an average gap under 64 rows), by a plain loop (a call per hit costs more)
  const out: number[] = [];
  let i = 0;
  while (out.length < max) {
    const j = mask.indexOf(1, i);
    if (j < 0 || j >= n) break;
    out.push(j);
    i = j + 1;
    if (out.length >= 64 && i < out.length * 64) {
      for (; i < n && out.length < max; i++) if (mask[i]) out.push(i);
      break;
    }
  }
  return Int32Array.from(out);
}

/**
 * Result rows of the hits of one page: for each position, the uint64 LE row index (`start +
 * position * step`, also pushed to `indices`) and the `runs` ([offset, length, ...]) of its row.
 * `rows` holds the page's rows, or with `onlyHits` only the hit rows, in order.
 */
function copyHits(rows: Buffer, at: Int32Array, rowSize: number, runs: number[], outSize: number, start: number, step: number, indices: number[], onlyHits = false): Buffer {
  const out = Buffer.allocUnsafe(at.length * outSize);
  let o = 0;
  for (let k = 0; k < at.length; k++) {
    const i = at[k];
    const index = start + i * step;
    indices.push(index);
    // uint64 LE (exact: dataset extents stay below 2^53)
    out.writeUInt32LE(index % 4294967296, o);
    out.writeUInt32LE(Math.floor(index / 4294967296), o + 4);
    o += 8;
    const row = (onlyHits ? k : i) * rowSize;
    // byte loops: the runs are a few bytes, where Buffer.copy's native call costs more
    for (let r = 0; r < runs.length; r += 2) for (let b = row + runs[r], e = b + runs[r + 1]; b < e; b++) out[o++] = rows[b];
  }
  return out;
}

const NUM_READERS: Record<string, (dv: DataView, o: number) => number> = {
  H5T_STD_I8LE: (dv, o) => dv.getInt8(o),
  H5T_STD_I8BE: (dv, o) => dv.getInt8(o),
  H5T_STD_U8LE: (dv, o) => dv.getUint8(o),
  H5T_STD_U8BE: (dv, o) => dv.getUint8(o),
  H5T_STD_I16LE: (dv, o) => dv.getInt16(o, true),
  H5T_STD_I16BE: (dv, o) => dv.getInt16(o),
  H5T_STD_U16LE: (dv, o) => dv.getUint16(o, true),
  H5T_STD_U16BE: (dv, o) => dv.getUint16(o),
  H5T_STD_I32LE: (dv, o) => dv.getInt32(o, true),
  H5T_STD_I32BE: (dv, o) => dv.getInt32(o),
  H5T_STD_U32LE: (dv, o) => dv.getUint32(o, true),
  H5T_STD_U32BE: (dv, o) => dv.getUint32(o),
  // 64-bit integers as doubles (exact below 2^53): high word * 2^32 + low word
  H5T_STD_I64LE: (dv, o) => dv.getInt32(o + 4, true) * 4294967296 + dv.getUint32(o, true),
  H5T_STD_I64BE: (dv, o) => dv.getInt32(o) * 4294967296 + dv.getUint32(o + 4),
  H5T_STD_U64LE: (dv, o) => dv.getUint32(o + 4, true) * 4294967296 + dv.getUint32(o, true),
  H5T_STD_U64BE: (dv, o) => dv.getUint32(o) * 4294967296 + dv.getUint32(o + 4),
  H5T_IEEE_F32LE: (dv, o) => dv.getFloat32(o, true),
  H5T_IEEE_F32BE: (dv, o) => dv.getFloat32(o),
  H5T_IEEE_F64LE: (dv, o) => dv.getFloat64(o, true),
  H5T_IEEE_F64BE: (dv, o) => dv.getFloat64(o),
};

/**
 * Reused float64 columns (slot j of the query's fields): scans are synchronous, and a fresh
 * 800 KB array per column per query would show up as garbage-collection pauses.
 */
const scratchColumns: Float64Array[] = [];
function scratchColumn(slot: number, n: number): Float64Array {
  let c = scratchColumns[slot];
  if (!c || c.length < n) scratchColumns[slot] = c = new Float64Array(Math.max(n, 1024));
  return c.length === n ? c : c.subarray(0, n);
}

/** One field of `n` wire rows (stride `rowSize`, field at `offset`) as a query column. */
function rowColumn(rows: Buffer, t: TypeJson, offset: number, rowSize: number, n: number, slot: number): Column {
  const base = t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT' ? t.base : undefined;
  const read = base ? NUM_READERS[base] : undefined;
  if (read) {
    const dv = new DataView(rows.buffer, rows.byteOffset, rows.length);
    const col = scratchColumn(slot, n);
    // the common little-endian types in loops of their own (no call through `read` per row)
    switch (base) {
      case 'H5T_IEEE_F64LE':
        for (let i = 0, o = offset; i < n; i++, o += rowSize) col[i] = dv.getFloat64(o, true);
        break;
      case 'H5T_IEEE_F32LE':
        for (let i = 0, o = offset; i < n; i++, o += rowSize) col[i] = dv.getFloat32(o, true);
        break;
      case 'H5T_STD_I64LE':
        for (let i = 0, o = offset; i < n; i++, o += rowSize) col[i] = dv.getInt32(o + 4, true) * 4294967296 + dv.getUint32(o, true);
        break;
      case 'H5T_STD_I32LE':
        for (let i = 0, o = offset; i < n; i++, o += rowSize) col[i] = dv.getInt32(o, true);
        break;
      default:
        for (let i = 0, o = offset; i < n; i++, o += rowSize) col[i] = read(dv, o);
    }
    return col;
  }
  if (t.class === 'H5T_STRING' && typeof t.length === 'number') return fixedStrings(rows, t.length, t.strPad, n, offset, rowSize);
  const out: unknown[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = decodeElements(rows, t, 1, i * rowSize + offset).values[0];
  return out;
}

/**
 * Query scan for compounds with variable-length parts: the fields the query uses are read as
 * single-field columns (numbers converted to float64 by libhdf5), matching rows then whole.
 */
function scanByColumns(
  f: DomainFile,
  did: Hid,
  type: TypeJson & { class: 'H5T_COMPOUND' },
  outType: TypeJson,
  compiled: ReturnType<typeof parseQuery>,
  sel: Selection,
  limit: number,
  limits: ValueLimits,
): { hits: number[]; wire: Buffer } {
  const hits: number[] = [];
  const used = compiled.fields;
  const colTypes: TypeJson[] = used.map((i) => {
    const ft = type.fields[i];
    const numeric = ft.type.class === 'H5T_INTEGER' || ft.type.class === 'H5T_FLOAT';
    return { class: 'H5T_COMPOUND', fields: [numeric ? { name: ft.name, type: F64 } : ft] };
  });
  const memTypes = colTypes.map((t) => io.createType(t));
  try {
    const rowBytes = colTypes.reduce((a, t) => a + memSize(t), 0);
    const cols: Column[] = new Array(type.fields.length);
    const budget = Number.isFinite(limit) ? Math.min(limits.pageBytes, 16384 * Math.max(rowBytes, 1)) : limits.pageBytes;
    for (const p of pageHyperslab(sel, Math.max(rowBytes, 1), budget)) {
      const page = { kind: 'hyperslab', start: p.start, step: p.step, count: p.count } as const;
      used.forEach((fi, j) => {
        const t = colTypes[j];
        const wire = io.readDataset(did, t, memTypes[j], page, p.elements, false, f.refs, fixedColumnBuffer(t, p.elements));
        cols[fi] = column(wire, t, p.elements);
      });
      const mask = compiled.mask(cols, p.elements);
      for (let i = 0; i < p.elements && hits.length < limit; i++) if (mask[i]) hits.push(p.start[0] + i * p.step[0]);
      if (hits.length >= limit) break;
    }
  } finally {
    for (const m of memTypes) io.closeType(m);
  }
  if (hits.length === 0) return { hits, wire: Buffer.alloc(0) };
  const outMem = io.createType(outType);
  try {
    return { hits, wire: prependIndices(readRows(f, did, outType, outMem, hits, limits), outType, hits) };
  } finally {
    io.closeType(outMem);
  }
}

/** An 8-byte-aligned buffer for a fixed-size column (typed arrays need aligned offsets). */
function fixedColumnBuffer(t: TypeJson, n: number): Buffer | undefined {
  return hasIndirect(t) ? undefined : Buffer.allocUnsafeSlow(Math.max(n * memSize(t), 1));
}

const F64: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };

/**
 * The rows at `hits` (ascending indices of a 1-D dataset) in the wire format. Clustered hits
 * (the span at most 4x their number) are read as one hyperslab and picked out, which is much
 * cheaper in libhdf5 than a point selection; scattered hits use a point selection.
 */
function readRows(f: DomainFile, did: Hid, t: TypeJson, memType: Hid, hits: number[], limits: ValueLimits): Buffer {
  const first = hits[0];
  const span = hits[hits.length - 1] - first + 1;
  if (!isVariableLength(t) && span <= 4 * hits.length && span * memSize(t) <= limits.pageBytes) {
    const size = typeSize(t);
    const block = io.readDataset(did, t, memType, { kind: 'hyperslab', start: [first], step: [1], count: [span] }, span, false, f.refs);
    if (span === hits.length) return block;
    const out = Buffer.allocUnsafe(hits.length * size);
    hits.forEach((h, i) => block.copy(out, i * size, (h - first) * size, (h - first + 1) * size));
    return out;
  }
  const coords = new BigUint64Array(hits.map(BigInt));
  return io.readDataset(did, t, memType, { kind: 'points', coords, count: hits.length }, hits.length, false, f.refs);
}

/** Wire rows with a uint64 LE index in front of each element. */
function prependIndices(rows: Buffer, t: TypeJson, indices: number[]): Buffer {
  if (!isVariableLength(t)) {
    const size = typeSize(t);
    const out = Buffer.allocUnsafe(indices.length * (size + 8));
    indices.forEach((idx, i) => {
      const o = i * (size + 8);
      out.writeBigUInt64LE(BigInt(idx), o);
      rows.copy(out, o + 8, i * size, (i + 1) * size);
    });
    return out;
  }
  const parts: Buffer[] = [];
  let off = 0;
  const fixed = isVariableLength(t) ? undefined : typeSize(t);
  for (const idx of indices) {
    const end = fixed !== undefined ? off + fixed : decodeElements(rows, t, 1, off).end;
    const ix = Buffer.allocUnsafe(8);
    ix.writeBigUInt64LE(BigInt(idx));
    parts.push(ix, rows.subarray(off, end));
    off = end;
  }
  return Buffer.concat(parts);
}

/** A fixed-length string column kept encoded; end of row k's text per the padding rule. */
function fixedStrings(wire: Buffer, width: number, pad: string, n: number, offset = 0, stride = width): EncodedStrings {
  const end = (k: number): number => {
    const s0 = offset + k * stride;
    let e = s0 + width;
    if (pad === 'H5T_STR_NULLTERM') {
      const z = wire.indexOf(0, s0);
      return z >= 0 && z < e ? z : e;
    }
    const padByte = pad === 'H5T_STR_SPACEPAD' ? 0x20 : 0;
    while (e > s0 && wire[e - 1] === padByte) e--;
    return e;
  };
  const encodedCache = new Map<string, Buffer>();
  return {
    encoded: true,
    length: n,
    get: (k) => wire.toString('utf8', offset + k * stride, end(k)),
    equals: (k, s) => {
      let b = encodedCache.get(s);
      if (!b) encodedCache.set(s, (b = Buffer.from(s, 'utf8')));
      const s0 = offset + k * stride;
      const e = end(k);
      if (e - s0 !== b.length) return false;
      for (let i = 0; i < b.length; i++) if (wire[s0 + i] !== b[i]) return false;
      return true;
    },
    matchInto: (s, out, count) => {
      const b = Buffer.from(s, 'utf8');
      const len = b.length;
      if (len > width) return void out.fill(0, 0, count);
      // The stored bytes equal the literal when its bytes match and the rest is padding
      // (NUL, or spaces for SPACEPAD; NULLTERM: a NUL right after, or the end).
      const padByte = pad === 'H5T_STR_SPACEPAD' ? 0x20 : 0;
      for (let k = 0, s0 = offset; k < count; k++, s0 += stride) {
        let ok = 1;
        for (let i = 0; i < len; i++) {
          if (wire[s0 + i] !== b[i]) {
            ok = 0;
            break;
          }
        }
        if (ok && len < width) {
          if (pad === 'H5T_STR_NULLTERM') ok = wire[s0 + len] === 0 ? 1 : 0;
          else for (let i = len; i < width; i++) if (wire[s0 + i] !== padByte) { ok = 0; break; }
        }
        out[k] = ok;
      }
    },
  };
}

/**
 * The values of a single-field column in wire format: a Float64Array view for float64 fields
 * (how numbers are read for queries), decoded values otherwise.
 */
function column(wire: Buffer, t: TypeJson, n: number): Column {
  const ft = (t as { fields: { type: TypeJson }[] }).fields[0].type;
  if (ft.class === 'H5T_FLOAT' && ft.base === 'H5T_IEEE_F64LE' && os.endianness() === 'LE' && wire.byteOffset % 8 === 0) {
    return new Float64Array(wire.buffer as ArrayBuffer, wire.byteOffset, n);
  }
  if (ft.class === 'H5T_STRING' && typeof ft.length === 'number') return fixedStrings(wire, ft.length, ft.strPad, n);
  const { values } = decodeElements(wire, t, n);
  return values.map((v) => (v as unknown[])[0]);
}

function fieldKind(t: TypeJson): 'number' | 'string' | 'other' {
  if (t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT' || t.class === 'H5T_ENUM') return 'number';
  if (t.class === 'H5T_STRING') return 'string';
  return 'other';
}

/**
 * Query update (PUT .../value?query=...): set `fields` of every matching row to the given
 * values; returns the updated rows like a query read.
 */
export function queryUpdate(
  f: DomainFile,
  id: string,
  query: string,
  update: Record<string, unknown>,
  opts: { select?: string; limit?: number },
  limits: ValueLimits,
  pool?: PagePool,
): QueryResult {
  const isCompound = storageErrors(() => f.withId(id, 'dataset', (did) => io.datasetTypeAndSpace(did).type.class === 'H5T_COMPOUND'));
  if (!isCompound) throw badRequest('A query update ("query" on PUT) needs a compound dataset');
  const found = queryRows(f, id, query, opts, limits, pool);
  if (found.count === 0) return found;
  storageErrors(() => f.withId(id, 'dataset', (did) => {
    const { type } = io.datasetTypeAndSpace(did);
    if (type.class !== 'H5T_COMPOUND') throw badRequest('"query" needs a compound dataset');
    const names = Object.keys(update);
    const sub = fieldSubset(type, names.join(':'));
    const one = encodeElements([names.map((n) => update[n])], sub);
    const n = found.count;
    const wire = Buffer.concat(Array.from({ length: n }, () => one));
    const coords = new BigUint64Array(found.indices.map(BigInt));
    const mt = io.createType(sub);
    try {
      io.writeDataset(did, sub, mt, { kind: 'points', coords, count: n }, n, false, wire, f.refs);
    } finally {
      io.closeType(mt);
    }
  }));
  return queryRows(f, id, query, opts, limits, pool);
}
