/**
 * Dataset values: planning reads (selection, fields, points) into pages of wire-format bytes,
 * and writes (hyperslabs, points, broadcast, append, fields) (wire-reference 2.4, 3.5).
 *
 * A read plan keeps the dataset open and is consumed page by page; the caller holds the domain's
 * read lock until the plan is released, so libhdf5 work is split into pages of `pageBytes` and
 * the event loop runs between them.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { TypeJson } from '../codec/types.js';
import { decodeElements, encodeElements, selectionValues } from '../codec/values.js';
import { badRequest, conflict, notFound, notImplemented, tooLarge } from '../errors.js';
import * as C from '../hdf5/constants.js';
import * as io from '../hdf5/io.js';
import type { SpaceSelection } from '../hdf5/io.js';
import { Hdf5Error, type Hid } from '../hdf5/lib.js';
import { fixedWireSize, hasIndirect, isVariable, memSize } from '../hdf5/memory.js';
import * as h5 from '../hdf5/objects.js';
import { type Column, type EncodedStrings, parseQuery } from '../selection/query.js';
import {
  type Selection,
  expandPoints,
  hyperslabSelection,
  pageHyperslab,
  parsePoints,
  parseSelect,
  pointsFromBinary,
  selectionFromBody,
  sortPoints,
} from '../selection/select.js';
import type { DomainFile } from './domainFile.js';
import { type Limits, bytesOf, checkDatasetBytes, checkSelectionBytes } from './limits.js';
import type { PagePool } from './pagepool.js';
import { type ReachedFile, reachOfDataset } from './reach.js';

/** Whether a long libhdf5 call runs on the worker thread, and waiting for it (for streams). */
export { hdf5Busy, whenIdle } from '../hdf5/heavy.js';

/** Limits of value requests (from config; src/store/limits.ts). */
export type ValueLimits = Limits;

/** How a read selects elements. */
export interface ReadRequest {
  select?: string;
  body?: Record<string, unknown>;
  /** Binary uint64 LE coordinates (POST .../value). */
  pointsBinary?: Buffer;
  fields?: string;
}

/** One page of a read: `count` elements in the wire format. */
export interface ValuePage {
  wire: Buffer;
  count: number;
  /** The pooled buffer `wire` lives in: give it back to the pool when done with the bytes. */
  pooled?: Buffer;
}

/** A planned read: element type and result shape, and the pages of wire bytes. */
export interface ReadPlan {
  type: TypeJson;
  /** Result shape; [] for a scalar dataset. */
  shape: number[];
  count: number;
  /** Wire bytes per element, or undefined for variable-length types. */
  itemSize: number | undefined;
  /** Bytes of the whole result for fixed-size types; an estimate from memory sizes otherwise. */
  bytes: number;
  /**
   * Pages of wire bytes in C order of the result; each call to next() does one libhdf5 read.
   * With a pool, fixed-size pages are read into pooled buffers (see `ValuePage.pooled`).
   */
  pages(pool?: PagePool): Generator<ValuePage>;
  /** Close the dataset. Idempotent. */
  close(): void;
  /**
   * For reads that may keep libhdf5 busy long (chunks over the chunk limit): read the (single
   * page) result on the worker thread now; `pages()` then yields it. The store awaits it.
   */
  prefetch?: () => Promise<void>;
}

/**
 * The files inside the root that a value operation on dataset `id` makes libhdf5 open (its
 * external raw data files, virtual dataset sources); [] for an ordinary dataset.
 * @throws H5StoreError Forbidden when one leads outside the data root (reach.ts).
 */
export function reachFor(f: DomainFile, id: string): ReachedFile[] {
  return f.withId(id, 'dataset', (did, addr) => reachOfDataset(f, did, addr));
}

/** Split `fields=a:b` and build the compound subset type (HDF5 converts by field name). */
function fieldSubset(type: TypeJson, fields: string | undefined): TypeJson {
  if (fields === undefined || fields === '') return type;
  if (type.class !== 'H5T_COMPOUND') throw badRequest('"fields" can only be used with compound datasets');
  const names = fields.split(':');
  const chosen = names.map((n) => {
    const fld = type.fields.find((x) => x.name === n);
    if (!fld) throw badRequest(`Unknown field ${JSON.stringify(n)} in "fields"`);
    return fld;
  });
  if (new Set(names).size !== names.length) throw badRequest('"fields" names a field twice');
  return { class: 'H5T_COMPOUND', fields: chosen };
}

/** Selection from a read request (query `select`, or body select/start/stop/points). */
function readSelection(req: ReadRequest, dims: number[], limits: ValueLimits): { sel: Selection | undefined; points?: { coords: BigUint64Array; count: number } } {
  if (req.pointsBinary) {
    const p = pointsFromBinary(req.pointsBinary, dims);
    if (p.count > limits.maxPoints) throw tooLarge(`${p.count} points exceed the limit of ${limits.maxPoints} (max_points)`);
    return { sel: undefined, points: p };
  }
  if (req.body) {
    const b = req.body;
    if (b.points !== undefined) {
      if (b.select !== undefined || b.start !== undefined) throw badRequest('Give "points" or a selection, not both');
      const p = parsePoints(b.points, dims);
      if (p.count > limits.maxPoints) throw tooLarge(`${p.count} points exceed the limit of ${limits.maxPoints} (max_points)`);
      return { sel: undefined, points: p };
    }
    const s = selectionFromBody(b as { select?: unknown }, dims);
    if (s && req.select) throw badRequest('Give the selection in the query or in the body, not both');
    if (s) return { sel: s };
    if (!req.select) throw badRequest('POST value needs "points" or a selection');
  }
  return { sel: parseSelect(req.select, dims) };
}

/**
 * libhdf5 selection for a parsed selection. Coordinate lists become point selections, sorted
 * and without repeats (`sortPoints`): the caller puts results back in the order asked with
 * `order` (reads) or picks each point's last value with `last` (writes).
 */
function toSpaceSelection(sel: Selection, limits: ValueLimits): SpaceSelection & { order?: Uint32Array; last?: Uint32Array } {
  if (sel.dims.length === 0) return { kind: 'all' };
  if (sel.isHyperslab) {
    const s = sel.sel as { start: number; step: number; count: number }[];
    return { kind: 'hyperslab', start: s.map((x) => x.start), step: s.map((x) => x.step), count: s.map((x) => x.count) };
  }
  if (sel.count > limits.maxPoints) throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
  const sp = sortPoints(expandPoints(sel, limits.maxPoints), sel.count, sel.dims);
  return { kind: 'points', coords: sp.coords, count: sp.count, order: sp.order, last: sp.last };
}

/** Point selection (sorted, unique) for a point list, with its `order`/`last` maps. */
function pointSelection(points: { coords: BigUint64Array; count: number }, dims: number[]): SpaceSelection & { kind: 'points'; order?: Uint32Array; last?: Uint32Array } {
  const sp = sortPoints(points.coords, points.count, dims);
  return { kind: 'points', coords: sp.coords, count: sp.count, order: sp.order, last: sp.last };
}

/**
 * The elements `pick[0], pick[1], ...` of `n` elements of type `t` in the wire format, in that
 * order (repeats allowed): results of sorted point reads put back in the order asked, or the
 * last value of each point of a write.
 */
export function pickElements(wire: Buffer, t: TypeJson, n: number, pick: Uint32Array): Buffer {
  if (!isVariable(t)) {
    const size = fixedWireSize(t);
    const out = Buffer.allocUnsafe(pick.length * size);
    for (let i = 0; i < pick.length; i++) wire.copy(out, i * size, pick[i]! * size, (pick[i]! + 1) * size);
    return out;
  }
  const starts = new Array<number>(n + 1);
  let off = 0;
  for (let k = 0; k < n; k++) {
    starts[k] = off;
    off = decodeElements(wire, t, 1, off).end;
  }
  starts[n] = off;
  return Buffer.concat(Array.from(pick, (k) => wire.subarray(starts[k]!, starts[k + 1]!)));
}

/**
 * Plan a value read. Throws (400/413) before anything is read when the request is invalid.
 * The returned plan owns an open dataset id: consume its pages and call `close()`.
 */
export function planRead(f: DomainFile, id: string, req: ReadRequest, limits: ValueLimits): ReadPlan {
  const did = f.open(id, 'dataset');
  try {
    const { type: fullType, space } = io.datasetTypeAndSpace(did);
    if (space.cls === 'H5S_NULL') throw badRequest('The dataset has a null dataspace (H5S_NULL): it holds no values');
    const type = fieldSubset(fullType, req.fields);
    const scalar = space.cls === 'H5S_SCALAR';
    if (scalar && (req.pointsBinary || req.body?.points !== undefined)) {
      throw badRequest('POST value not supported for datasets with SCALAR shape');
    }
    const { sel, points } = readSelection(req, space.dims, limits);
    const shape = points ? [points.count] : sel!.shape;
    const count = points ? points.count : sel!.count;
    const variable = isVariable(type);
    const itemSize = variable ? undefined : fixedWireSize(type);
    const msize = memSize(type);
    const bytes = count * (itemSize ?? msize);
    checkSelectionBytes(count, itemSize ?? msize, limits);
    const memType = io.createType(type);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      io.closeType(memType);
      h5.closeObject(did);
    };
    const creation = io.describeCreationOf(did, fullType);
    refuseMissingFilters(creation);
    const chunkDims = sel?.isHyperslab && !scalar && creation.layout === C.H5D_CHUNKED ? creation.chunks : undefined;
    const fixed = !hasIndirect(type);
    const readPage = (sel: SpaceSelection, n: number, pool?: PagePool): ValuePage => {
      if (pool && fixed) {
        const pooled = pool.take(n * msize);
        try {
          const wire = storageErrors(() => io.readDataset(did, type, memType, sel, n, scalar, f.refs, pooled.subarray(0, n * msize)));
          return { wire, count: n, pooled };
        } catch (e) {
          pool.give(pooled);
          throw e;
        }
      }
      return { wire: storageErrors(() => io.readDataset(did, type, memType, sel, n, scalar, f.refs)), count: n };
    };
    // A read from chunks larger than the chunk limit (dropped-in files) can keep libhdf5 busy
    // for a second in one call: a result of one page (fixed-size types) is read on the worker
    // thread by `prefetch` (src/hdf5/heavy.ts) before the pages are asked for.
    const heavy = creation.layout === C.H5D_CHUNKED && bytesOf(creation.chunks ?? [], memSize(fullType)) > limits.maxChunkBytes;
    let prefetched: ValuePage | undefined;
    const prefetch =
      heavy && fixed && count > 0 && bytes <= limits.pageBytes
        ? async (): Promise<void> => {
            const ps =
              points || (!scalar && !sel!.isHyperslab)
                ? points
                  ? pointSelection(points, space.dims)
                  : (toSpaceSelection(sel!, limits) as ReturnType<typeof pointSelection>)
                : undefined;
            const what: SpaceSelection = ps ?? (scalar ? { kind: 'all' } : (toSpaceSelection(sel!, limits) as SpaceSelection));
            const n = ps ? ps.count : count;
            let wire: Buffer;
            try {
              wire = await io.readDatasetOnWorker(did, type, memType, what, n, scalar);
            } catch (e) {
              return storageErrors(() => {
                throw e;
              });
            }
            prefetched = { wire: ps?.order ? pickElements(wire, type, ps.count, ps.order) : wire, count };
          }
        : undefined;
    function* pages(pool?: PagePool): Generator<ValuePage> {
      if (count === 0) return;
      if (prefetched) {
        yield prefetched;
        return;
      }
      if (points || (!scalar && !sel!.isHyperslab)) {
        // sorted, unique points (libhdf5 crashes on repeats), results put back in the order asked
        const ps = points ? pointSelection(points, space.dims) : (toSpaceSelection(sel!, limits) as ReturnType<typeof pointSelection>);
        const wire = storageErrors(() => io.readDataset(did, type, memType, ps, ps.count, false, f.refs));
        yield { wire: ps.order ? pickElements(wire, type, ps.count, ps.order) : wire, count };
        return;
      }
      if (scalar) {
        yield { wire: storageErrors(() => io.readDataset(did, type, memType, { kind: 'all' }, count, scalar, f.refs)), count };
        return;
      }
      for (const p of pageHyperslab(sel!, msize, limits.pageBytes, chunkDims)) {
        yield readPage({ kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, pool);
      }
    }
    if (sel && !sel.isHyperslab && !scalar && sel.count > limits.maxPoints) {
      throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
    }
    return { type, shape, count, itemSize, bytes, pages, close, prefetch };
  } catch (e) {
    h5.closeObject(did);
    throw e;
  }
}

/**
 * Run a libhdf5 read or write of dataset values, turning a missing external raw data file (the
 * dataset names a file inside the root that is not there, or a folder that does not exist) into
 * a 404 naming the cause instead of libhdf5's error.
 */
export function storageErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Hdf5Error && e.mentions('external raw data file')) {
      throw notFound('An external raw data file of this dataset is missing (its layout lists the files)');
    }
    throw e;
  }
}

/**
 * A dataset whose filter cannot be decoded here answers 501 naming the filter (DESIGN.md 1),
 * never garbage bytes or an opaque libhdf5 error.
 */
function refuseMissingFilters(creation: io.DatasetCreation): void {
  for (const fi of creation.filters) {
    if (!io.filterDecodable(fi.id)) {
      const known = C.FILTERS.find((k) => k.id === fi.id);
      const name = known?.name ?? (fi.name || 'unknown');
      throw notImplemented(
        `The dataset uses filter ${name} (id ${fi.id}), which this server cannot decode: install its HDF5 plugin (e.g. Debian hdf5-filter-plugin) or add its directory to pluginPath`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Query (1-D compound tables)

/**
 * Result of a `query=` read: the matching rows as a compound with the element index prepended
 * as a first field `index` (HSDS sends each row as `[index, ...fields]`, wire-reference 2.4),
 * in the wire format, so JSON is written by the codec with each field's own formatting.
 */
export interface QueryResult {
  type: TypeJson;
  wire: Buffer;
  count: number;
  indices: number[];
}

const INDEX_FIELD = { name: 'index', type: { class: 'H5T_INTEGER', base: 'H5T_STD_U64LE' } as TypeJson };

/**
 * Evaluate `query` over a one-dimensional compound dataset, within `select` (a 1-D slice),
 * stopping after `limit` hits. The scan reads only the fields the query uses, one column at a
 * time (numbers land in typed arrays, no per-row objects); the matching rows are then read whole
 * with one point selection.
 */
export function queryRows(
  f: DomainFile,
  id: string,
  query: string,
  opts: { select?: string; limit?: number; fields?: string },
  limits: ValueLimits,
  pool?: PagePool,
): QueryResult {
  return storageErrors(() => queryRowsOf(f, id, query, opts, limits, pool));
}

function queryRowsOf(
  f: DomainFile,
  id: string,
  query: string,
  opts: { select?: string; limit?: number; fields?: string },
  limits: ValueLimits,
  pool?: PagePool,
): QueryResult {
  return f.withId(id, 'dataset', (did) => {
    const { type, space } = io.datasetTypeAndSpace(did);
    if (type.class !== 'H5T_COMPOUND') throw badRequest('"query" needs a compound dataset');
    if (space.cls !== 'H5S_SIMPLE' || space.dims.length !== 1) throw badRequest('"query" needs a one-dimensional dataset');
    const outType = fieldSubset(type, opts.fields);
    const names = type.fields.map((x) => x.name);
    const kinds = type.fields.map((x) => fieldKind(x.type));
    const compiled = parseQuery(query, names, kinds);
    const sel = parseSelect(opts.select, space.dims);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const resultType: TypeJson = { class: 'H5T_COMPOUND', fields: [INDEX_FIELD, ...(outType as { fields: { name: string; type: TypeJson }[] }).fields] };
    const found = hasIndirect(type)
      ? scanByColumns(f, did, type, outType, compiled, sel, limit, limits)
      : scanByRows(did, type, outType, compiled, sel, limit, limits, pool);
    return { type: resultType, wire: found.wire, count: found.hits.length, indices: found.hits };
  });
}

/** Offsets of the fields of a compound in the wire layout (fixed-size types only). */
function fieldOffsets(t: TypeJson & { class: 'H5T_COMPOUND' }): number[] {
  const out: number[] = [];
  let o = 0;
  for (const fld of t.fields) {
    out.push(o);
    o += fixedWireSize(fld.type);
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
  did: Hid,
  type: TypeJson & { class: 'H5T_COMPOUND' },
  outType: TypeJson,
  compiled: ReturnType<typeof parseQuery>,
  sel: Selection,
  limit: number,
  limits: ValueLimits,
  pool?: PagePool,
): { hits: number[]; wire: Buffer } {
  const rowSize = fixedWireSize(type);
  const offsets = fieldOffsets(type);
  const outFields = (outType as { fields: { name: string }[] }).fields.map((of) => type.fields.findIndex((x) => x.name === of.name));
  const outSize = 8 + fixedWireSize(outType);
  const memType = io.createType(type);
  const hits: number[] = [];
  const parts: Buffer[] = [];
  try {
    const budget = Number.isFinite(limit) ? Math.min(limits.pageBytes, 16384 * rowSize) : limits.pageBytes;
    const cols: Column[] = new Array(type.fields.length);
    for (const p of pageHyperslab(sel, Math.max(rowSize, 1), budget)) {
      const n = p.elements;
      // Rows go into a pooled page buffer (a fresh multi-MiB Buffer per query costs GC time).
      const pooled = pool?.take(n * rowSize);
      const rows = io.readDataset(did, type, memType, { kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, n, false, undefined, pooled?.subarray(0, n * rowSize));
      compiled.fields.forEach((fi, j) => (cols[fi] = rowColumn(rows, type.fields[fi].type, offsets[fi], rowSize, n, j)));
      const mask = compiled.mask(cols, n);
      let pageHits = 0;
      for (let i = 0; i < n && hits.length + pageHits < limit; i++) if (mask[i]) pageHits++;
      if (pageHits) {
        const out = Buffer.allocUnsafe(pageHits * outSize);
        let o = 0;
        for (let i = 0; i < n && o < out.length; i++) {
          if (!mask[i]) continue;
          const index = p.start[0] + i * p.step[0];
          hits.push(index);
          out.writeBigUInt64LE(BigInt(index), o);
          o += 8;
          for (const fi of outFields) {
            const size = fixedWireSize(type.fields[fi].type);
            rows.copy(out, o, i * rowSize + offsets[fi], i * rowSize + offsets[fi] + size);
            o += size;
          }
        }
        parts.push(out);
      }
      if (pooled) pool!.give(pooled);
      if (hits.length >= limit) break;
    }
  } finally {
    io.closeType(memType);
  }
  return { hits, wire: Buffer.concat(parts) };
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
  const read = (t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT') ? NUM_READERS[t.base] : undefined;
  if (read) {
    const dv = new DataView(rows.buffer, rows.byteOffset, rows.length);
    const col = scratchColumn(slot, n);
    for (let i = 0, o = offset; i < n; i++, o += rowSize) col[i] = read(dv, o);
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
  if (!isVariable(t) && span <= 4 * hits.length && span * memSize(t) <= limits.pageBytes) {
    const size = fixedWireSize(t);
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
  if (!isVariable(t)) {
    const size = fixedWireSize(t);
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
  const fixed = isVariable(t) ? undefined : fixedWireSize(t);
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
  update: unknown,
  opts: { select?: string; limit?: number },
  limits: ValueLimits,
  pool?: PagePool,
): QueryResult {
  if (!update || typeof update !== 'object' || Array.isArray(update)) throw badRequest('A query update needs a JSON object {field: value}');
  const upd = update as Record<string, unknown>;
  const found = queryRows(f, id, query, opts, limits, pool);
  if (found.count === 0) return found;
  storageErrors(() => f.withId(id, 'dataset', (did) => {
    const { type } = io.datasetTypeAndSpace(did);
    if (type.class !== 'H5T_COMPOUND') throw badRequest('"query" needs a compound dataset');
    const names = Object.keys(upd);
    const sub = fieldSubset(type, names.join(':'));
    const one = encodeElements([names.map((n) => upd[n])], sub);
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

// ---------------------------------------------------------------------------------------------
// Writes

/** How a write selects and supplies elements. */
export interface WriteRequest {
  select?: string;
  fields?: string;
  /** `append=n` (grow `appendDim` by n and write there). */
  append?: number;
  appendDim?: number;
  /** Number of elements in the body when broadcasting (`element_count`). */
  elementCount?: number;
  /** Binary body (wire format). */
  wire?: Buffer;
  /** A large binary body spooled to a temporary file (fixed-size types, hyperslabs only). */
  spool?: { path: string; size: number };
  /** JSON body. */
  json?: Record<string, unknown>;
}

/** A validated write: everything checked, nothing written yet. */
interface WritePlan {
  type: TypeJson;
  sel?: Selection;
  points?: { coords: BigUint64Array; count: number };
  count: number;
  /** The data, in memory... */
  wire?: Buffer;
  /** ...or spooled to a file (then fixed-size and a hyperslab). */
  spool?: { path: string; size: number };
  newDims?: number[];
  scalar: boolean;
  /** The dataset's extent (before an append). */
  dims: number[];
  /** Chunks larger than `maxChunkBytes` (a dropped-in file): write on the worker thread. */
  heavy: boolean;
}

function planWrite(f: DomainFile, did: Hid, req: WriteRequest, limits: ValueLimits): WritePlan {
  const { type: fullType, space } = io.datasetTypeAndSpace(did);
  const creation = io.describeCreationOf(did, fullType);
  const heavy = creation.layout === C.H5D_CHUNKED && bytesOf(creation.chunks ?? [], memSize(fullType)) > limits.maxChunkBytes;
  if (space.cls === 'H5S_NULL') throw badRequest('The dataset has a null dataspace (H5S_NULL): it holds no values');
  const scalar = space.cls === 'H5S_SCALAR';
  const type = fieldSubset(fullType, req.fields ?? (req.json?.fields as string | undefined));
  const body = req.json ?? {};
  let append = req.append ?? (body.append as number | undefined);
  let appendDim = req.appendDim ?? (body.append_dim as number | undefined) ?? 0;
  let sel: Selection | undefined;
  let points: { coords: BigUint64Array; count: number } | undefined;
  let newDims: number[] | undefined;
  const bodySel = req.json ? selectionFromBody(body as { select?: unknown }, space.dims) : undefined;
  if (append !== undefined) {
    if (typeof append !== 'number' || !Number.isSafeInteger(append) || append < 1) throw badRequest('"append" must be a positive integer');
    if (req.select || bodySel || body.points !== undefined) throw badRequest('"append" cannot be combined with a selection or points');
    if (space.cls !== 'H5S_SIMPLE') throw badRequest('Only simple dataspaces can be appended to');
    if (!Number.isInteger(appendDim) || appendDim < 0 || appendDim >= space.dims.length) throw badRequest('"append_dim" is out of range');
    if (creation.layout !== C.H5D_CHUNKED) throw badRequest('Dataset is not extensible (it is not chunked)');
    newDims = space.dims.slice();
    newDims[appendDim] += append;
    if (newDims[appendDim] > space.maxdims[appendDim]) {
      throw conflict(`Cannot append: dimension ${appendDim} would grow to ${newDims[appendDim]}, beyond its maximum ${space.maxdims[appendDim]}`);
    }
    checkDatasetBytes(newDims, memSize(fullType), limits, `Appending ${append}`);
    const start = space.dims.map((_, i) => (i === appendDim ? space.dims[i] : 0));
    const count = newDims.map((d, i) => (i === appendDim ? append! : d));
    sel = hyperslabSelection(newDims, start, count);
  } else if (body.points !== undefined) {
    if (req.select || bodySel) throw badRequest('Give "points" or a selection, not both');
    if (scalar) throw badRequest('Point writes are not supported for scalar datasets');
    points = parsePoints(body.points, space.dims);
    if (points.count > limits.maxPoints) throw tooLarge(`${points.count} points exceed the limit of ${limits.maxPoints} (max_points)`);
  } else {
    if (req.select && bodySel) throw badRequest('Give the selection in the query or in the body, not both');
    sel = bodySel ?? parseSelect(req.select, space.dims);
  }
  const count = points ? points.count : sel!.count;
  if (count === 0) throw badRequest('Selection is empty');
  checkSelectionBytes(count, isVariable(type) ? memSize(type) : fixedWireSize(type), limits);
  const elementCount = req.elementCount ?? (body.element_count as number | undefined);
  if (req.spool) {
    if (isVariable(type) || !sel || !sel.isHyperslab) {
      throw tooLarge('Bodies this large can only be written to a hyperslab of a fixed-size type; send smaller requests');
    }
    if (elementCount !== undefined && elementCount !== count) throw badRequest('"element_count" broadcast needs a small body');
    const need = count * fixedWireSize(type);
    if (req.spool.size !== need) throw badRequest(`Binary data is ${req.spool.size} bytes, expected ${need} (${count} elements of ${fixedWireSize(type)} bytes)`);
    return { type, sel, count, spool: req.spool, newDims, scalar, dims: space.dims, heavy };
  }
  let wire: Buffer;
  if (req.wire) {
    wire = req.wire;
  } else if (typeof body.value_base64 === 'string') {
    wire = Buffer.from(body.value_base64, 'base64');
  } else if (body.value !== undefined) {
    const shape = points ? [points.count] : elementCount === 1 ? [] : sel!.shape;
    // A flat list fills an N-D selection when the count matches; with element_count > 1 the
    // value holds that many elements, broadcast below (selectionValues).
    const n = typeof elementCount === 'number' && elementCount > 1 ? elementCount : shape.reduce((a, b) => a * b, 1);
    wire = encodeElements(selectionValues(body.value, shape, n, type), type);
    if (elementCount === 1) return finish(broadcast(wire, type, 1, count, limits));
  } else {
    throw badRequest('The write has no "value" (or binary body)');
  }
  if (elementCount !== undefined) {
    if (typeof elementCount !== 'number' || !Number.isSafeInteger(elementCount) || elementCount < 1) {
      throw badRequest('"element_count" must be a positive integer');
    }
    if (elementCount !== count) {
      if (count % elementCount !== 0) throw badRequest(`element_count ${elementCount} does not divide the selection of ${count} elements`);
      wire = broadcast(wire, type, elementCount, count, limits);
    }
  }
  return finish(wire);

  function finish(w: Buffer): WritePlan {
    if (!isVariable(type)) {
      const need = count * fixedWireSize(type);
      if (w.length !== need) throw badRequest(`Binary data is ${w.length} bytes, expected ${need} (${count} elements of ${fixedWireSize(type)} bytes)`);
    } else {
      checkVariableWire(w, type, count);
    }
    return { type, sel, points, count, wire: w, newDims, scalar, dims: space.dims, heavy };
  }
}

/**
 * Check that `wire` holds exactly `count` elements of a variable-length type in the wire format
 * (length-prefixed parts), before anything is written: every element takes 4 bytes at least,
 * and the elements must end exactly at the end of the data.
 * @throws BadRequest naming the sizes.
 */
function checkVariableWire(wire: Buffer, type: TypeJson, count: number): void {
  if (count * 4 > wire.length) {
    throw badRequest(`Binary data is ${wire.length} bytes, too short for ${count} elements of a variable-length type (4 bytes each at least)`);
  }
  const { end } = decodeElements(wire, type, count);
  if (end !== wire.length) throw badRequest(`Binary data is ${wire.length} bytes, but its ${count} elements end after ${end}`);
}

/** Repeat `n` elements of wire data to fill `total` elements (at most `maxBroadcastBytes`). */
function broadcast(wire: Buffer, type: TypeJson, n: number, total: number, limits: ValueLimits): Buffer {
  const bytes = (wire.length / n) * total;
  if (bytes > limits.maxBroadcastBytes) {
    throw tooLarge(`The element_count broadcast would build ${bytes} bytes, above the limit of ${limits.maxBroadcastBytes} (maxBroadcastBytes): write smaller selections`);
  }
  if (!isVariable(type)) {
    const size = fixedWireSize(type);
    if (wire.length !== n * size) throw badRequest(`Binary data is ${wire.length} bytes, expected ${n * size} for ${n} elements`);
    const out = Buffer.allocUnsafe(total * size);
    for (let o = 0; o < out.length; o += wire.length) wire.copy(out, o);
    return out;
  }
  const reps = total / n;
  return Buffer.concat(Array.from({ length: reps }, () => wire));
}

/**
 * PUT /datasets/<id>/value: validate everything (selection, sizes, types) before writing, then
 * write in pages (reading a spooled body page by page). `append` grows the dataset first.
 * @throws BadRequest (sizes, selection, types), Conflict (append beyond maxdims), 413 (points)
 */
export async function writeValues(f: DomainFile, id: string, req: WriteRequest, limits: ValueLimits, pool?: PagePool): Promise<void> {
  try {
    await writeValuesOf(f, id, req, limits, pool);
  } catch (e) {
    storageErrors(() => {
      throw e;
    });
  }
}

async function writeValuesOf(f: DomainFile, id: string, req: WriteRequest, limits: ValueLimits, pool?: PagePool): Promise<void> {
  const did = f.open(id, 'dataset');
  try {
    const plan = planWrite(f, did, req, limits);
    if (plan.newDims) io.setExtent(did, plan.newDims);
    try {
      await writePlanned(f, did, plan, limits, pool);
    } catch (e) {
      // An append whose write failed after the extent grew: shrink it back.
      if (plan.newDims) io.setExtent(did, plan.dims);
      throw e;
    }
  } finally {
    h5.closeObject(did);
  }
}

/** The writes of a validated plan (see `writeValues`). */
async function writePlanned(f: DomainFile, did: Hid, plan: WritePlan, limits: ValueLimits, pool?: PagePool): Promise<void> {
  {
    const mt = io.createType(plan.type);
    // Into chunks larger than the chunk limit, one H5Dwrite can take a second: on the worker
    // thread (src/hdf5/heavy.ts), so the server answers other requests meanwhile.
    const put = (sel: SpaceSelection, n: number, scalar: boolean, wire: Buffer): void | Promise<void> =>
      plan.heavy ? io.writeDatasetOnWorker(did, plan.type, mt, sel, n, scalar, wire, f.refs) : io.writeDataset(did, plan.type, mt, sel, n, scalar, wire, f.refs);
    try {
      if (plan.points || (!plan.scalar && !plan.sel!.isHyperslab)) {
        // sorted, unique points; a point given twice gets the value given last
        const ps = plan.points ? pointSelection(plan.points, plan.dims) : (toSpaceSelection(plan.sel!, limits) as ReturnType<typeof pointSelection>);
        const wire = ps.last ? pickElements(plan.wire!, plan.type, plan.count, ps.last) : plan.wire!;
        await put(ps, ps.count, false, wire);
      } else if (plan.scalar || isVariable(plan.type)) {
        await put(toSpaceSelection(plan.sel!, limits), plan.count, plan.scalar, plan.wire!);
      } else {
        const size = fixedWireSize(plan.type);
        const fd = plan.spool ? fs.openSync(plan.spool.path, 'r') : undefined;
        try {
          let off = 0;
          for (const p of pageHyperslab(plan.sel!, size, limits.pageBytes)) {
            const n = p.elements * size;
            let bytes: Buffer;
            let pooled: Buffer | undefined;
            if (fd !== undefined) {
              pooled = pool ? pool.take(n) : Buffer.allocUnsafe(n);
              bytes = pooled.subarray(0, n);
              let got = 0;
              while (got < n) {
                const r = fs.readSync(fd, bytes, got, n - got, off + got);
                if (r <= 0) throw badRequest('The spooled request body ended early');
                got += r;
              }
            } else {
              bytes = plan.wire!.subarray(off, off + n);
            }
            try {
              await put({ kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, false, bytes);
            } finally {
              if (pooled && pool) pool.give(pooled);
            }
            off += n;
          }
        } finally {
          if (fd !== undefined) fs.closeSync(fd);
        }
      }
    } finally {
      io.closeType(mt);
    }
  }
}
