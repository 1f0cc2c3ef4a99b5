/**
 * Dataset values: planning reads (selection, fields, points) into pages of wire-format bytes,
 * and writes (hyperslabs, points, broadcast, append, fields) (wire-reference 2.4, 3.5).
 *
 * A read plan keeps the dataset open and is consumed page by page; the caller holds the domain's
 * read lock until the plan is released, so libhdf5 work is split into pages of `pageBytes` and
 * the event loop runs between them.
 */
import fs from 'node:fs';
import type { TypeJson } from '../codec/types.js';
import { decodeElements, encodeElements, flattenValue } from '../codec/values.js';
import { badRequest, conflict, tooLarge } from '../errors.js';
import * as C from '../hdf5/constants.js';
import * as io from '../hdf5/io.js';
import type { SpaceSelection } from '../hdf5/io.js';
import type { Hid } from '../hdf5/lib.js';
import { fixedWireSize, hasIndirect, isVariable, memSize } from '../hdf5/memory.js';
import * as h5 from '../hdf5/objects.js';
import { parseQuery } from '../selection/query.js';
import {
  type Selection,
  expandPoints,
  hyperslabSelection,
  pageHyperslab,
  parsePoints,
  parseSelect,
  pointsFromBinary,
  selectionFromBody,
} from '../selection/select.js';
import type { DomainFile } from './domainFile.js';
import type { PagePool } from './pagepool.js';

/** Limits of value requests (from config). */
export interface ValueLimits {
  /** Bytes of one libhdf5 read or write page. */
  pageBytes: number;
  /** Largest number of coordinates of a point or coordinate-list selection. */
  maxPoints: number;
}

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
  if (req.pointsBinary) return { sel: undefined, points: pointsFromBinary(req.pointsBinary, dims) };
  if (req.body) {
    const b = req.body;
    if (b.points !== undefined) {
      if (b.select !== undefined || b.start !== undefined) throw badRequest('Give "points" or a selection, not both');
      const p = parsePoints(b.points, dims);
      if (p.count > limits.maxPoints) throw tooLarge(`${p.count} points exceed the limit of ${limits.maxPoints}`);
      return { sel: undefined, points: p };
    }
    const s = selectionFromBody(b as { select?: unknown }, dims);
    if (s && req.select) throw badRequest('Give the selection in the query or in the body, not both');
    if (s) return { sel: s };
    if (!req.select) throw badRequest('POST value needs "points" or a selection');
  }
  return { sel: parseSelect(req.select, dims) };
}

/** libhdf5 selection for a parsed selection (coordinate lists become point selections). */
function toSpaceSelection(sel: Selection, limits: ValueLimits): SpaceSelection {
  if (sel.dims.length === 0) return { kind: 'all' };
  if (sel.isHyperslab) {
    const s = sel.sel as { start: number; step: number; count: number }[];
    return { kind: 'hyperslab', start: s.map((x) => x.start), step: s.map((x) => x.step), count: s.map((x) => x.count) };
  }
  if (sel.count > limits.maxPoints) throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
  return { kind: 'points', coords: expandPoints(sel, limits.maxPoints), count: sel.count };
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
    const memType = io.createType(type);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      io.closeType(memType);
      h5.closeObject(did);
    };
    const chunkDims = sel?.isHyperslab && !scalar ? chunkDimsOf(did) : undefined;
    const fixed = !hasIndirect(type);
    const readPage = (sel: SpaceSelection, n: number, pool?: PagePool): ValuePage => {
      if (pool && fixed) {
        const pooled = pool.take(n * msize);
        const wire = io.readDataset(did, type, memType, sel, n, scalar, f.refs, pooled.subarray(0, n * msize));
        return { wire, count: n, pooled };
      }
      return { wire: io.readDataset(did, type, memType, sel, n, scalar, f.refs), count: n };
    };
    function* pages(pool?: PagePool): Generator<ValuePage> {
      if (count === 0) return;
      if (points) {
        const wire = io.readDataset(did, type, memType, { kind: 'points', coords: points.coords, count: points.count }, count, false, f.refs);
        yield { wire, count };
        return;
      }
      if (scalar || !sel!.isHyperslab) {
        yield { wire: io.readDataset(did, type, memType, toSpaceSelection(sel!, limits), count, scalar, f.refs), count };
        return;
      }
      for (const p of pageHyperslab(sel!, msize, limits.pageBytes, chunkDims)) {
        yield readPage({ kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, pool);
      }
    }
    if (sel && !sel.isHyperslab && !scalar && sel.count > limits.maxPoints) {
      throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
    }
    return { type, shape, count, itemSize, bytes, pages, close };
  } catch (e) {
    h5.closeObject(did);
    throw e;
  }
}

function chunkDimsOf(did: Hid): number[] | undefined {
  const cr = io.describeCreationOf(did);
  return cr.layout === C.H5D_CHUNKED ? cr.chunks : undefined;
}

// ---------------------------------------------------------------------------------------------
// Query (1-D compound tables)

/** Result of a `query=` read: element indices and rows (`[index, ...fields]`, wire-reference 2.4). */
export interface QueryResult {
  rows: unknown[][];
}

/**
 * Evaluate `query` over a one-dimensional compound dataset, within `select` (a 1-D slice),
 * stopping after `limit` hits. Only the fields the query reads are read for the scan; the
 * matching rows are then read whole with one point selection.
 */
export function queryRows(f: DomainFile, id: string, query: string, opts: { select?: string; limit?: number; fields?: string }, limits: ValueLimits): QueryResult {
  return f.withId(id, 'dataset', (did) => {
    const { type, space } = io.datasetTypeAndSpace(did);
    if (type.class !== 'H5T_COMPOUND') throw badRequest('"query" needs a compound dataset');
    if (space.cls !== 'H5S_SIMPLE' || space.dims.length !== 1) throw badRequest('"query" needs a one-dimensional dataset');
    const outType = fieldSubset(type, opts.fields);
    const names = type.fields.map((x) => x.name);
    const kinds = type.fields.map((x) => fieldKind(x.type));
    // parseQuery also says which fields the query reads: the scan reads only those.
    const compiled = parseQuery(query, names, kinds);
    const scanType: TypeJson = { class: 'H5T_COMPOUND', fields: compiled.fields.map((i) => type.fields[i]) };
    const sel = parseSelect(opts.select, space.dims);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const hits: number[] = [];
    const memType = io.createType(scanType);
    const row: unknown[] = new Array(names.length);
    try {
      const msize = memSize(scanType);
      outer: for (const p of pageHyperslab(sel, msize, limits.pageBytes)) {
        const wire = io.readDataset(did, scanType, memType, { kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, false, f.refs);
        const { values } = decodeElements(wire, scanType, p.elements);
        for (let i = 0; i < p.elements; i++) {
          const v = values[i] as unknown[];
          for (let j = 0; j < compiled.fields.length; j++) row[compiled.fields[j]] = v[j];
          if (compiled.test(row)) {
            hits.push(p.start[0] + i * p.step[0]);
            if (hits.length >= limit) break outer;
          }
        }
      }
    } finally {
      io.closeType(memType);
    }
    if (hits.length === 0) return { rows: [] };
    const outMem = io.createType(outType);
    try {
      const coords = new BigUint64Array(hits.map(BigInt));
      const wire = io.readDataset(did, outType, outMem, { kind: 'points', coords, count: hits.length }, hits.length, false, f.refs);
      const { values } = decodeElements(wire, outType, hits.length);
      return { rows: values.map((v, i) => [hits[i], ...(v as unknown[])]) };
    } finally {
      io.closeType(outMem);
    }
  });
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
): QueryResult {
  if (!update || typeof update !== 'object' || Array.isArray(update)) throw badRequest('A query update needs a JSON object {field: value}');
  const upd = update as Record<string, unknown>;
  const found = queryRows(f, id, query, opts, limits);
  if (found.rows.length === 0) return found;
  f.withId(id, 'dataset', (did) => {
    const { type } = io.datasetTypeAndSpace(did);
    if (type.class !== 'H5T_COMPOUND') throw badRequest('"query" needs a compound dataset');
    const names = Object.keys(upd);
    const sub = fieldSubset(type, names.join(':'));
    const one = encodeElements([names.map((n) => upd[n])], sub);
    const n = found.rows.length;
    const wire = Buffer.concat(Array.from({ length: n }, () => one));
    const coords = new BigUint64Array(found.rows.map((r) => BigInt(r[0] as number)));
    const mt = io.createType(sub);
    try {
      io.writeDataset(did, sub, mt, { kind: 'points', coords, count: n }, n, false, wire, f.refs);
    } finally {
      io.closeType(mt);
    }
  });
  return queryRows(f, id, query, opts, limits);
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
}

function planWrite(f: DomainFile, did: Hid, req: WriteRequest, limits: ValueLimits): WritePlan {
  const { type: fullType, space } = io.datasetTypeAndSpace(did);
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
    newDims = space.dims.slice();
    newDims[appendDim] += append;
    if (newDims[appendDim] > space.maxdims[appendDim]) {
      throw conflict(`Cannot append: dimension ${appendDim} would grow to ${newDims[appendDim]}, beyond its maximum ${space.maxdims[appendDim]}`);
    }
    const start = space.dims.map((_, i) => (i === appendDim ? space.dims[i] : 0));
    const count = newDims.map((d, i) => (i === appendDim ? append! : d));
    sel = hyperslabSelection(newDims, start, count);
  } else if (body.points !== undefined) {
    if (req.select || bodySel) throw badRequest('Give "points" or a selection, not both');
    if (scalar) throw badRequest('Point writes are not supported for scalar datasets');
    points = parsePoints(body.points, space.dims);
    if (points.count > limits.maxPoints) throw tooLarge(`${points.count} points exceed the limit of ${limits.maxPoints}`);
  } else {
    if (req.select && bodySel) throw badRequest('Give the selection in the query or in the body, not both');
    sel = bodySel ?? parseSelect(req.select, space.dims);
  }
  const count = points ? points.count : sel!.count;
  if (count === 0) throw badRequest('Selection is empty');
  const elementCount = req.elementCount ?? (body.element_count as number | undefined);
  if (req.spool) {
    if (isVariable(type) || !sel || !sel.isHyperslab) {
      throw tooLarge('Bodies this large can only be written to a hyperslab of a fixed-size type; send smaller requests');
    }
    if (elementCount !== undefined && elementCount !== count) throw badRequest('"element_count" broadcast needs a small body');
    const need = count * fixedWireSize(type);
    if (req.spool.size !== need) throw badRequest(`Binary data is ${req.spool.size} bytes, expected ${need} (${count} elements of ${fixedWireSize(type)} bytes)`);
    return { type, sel, count, spool: req.spool, newDims, scalar };
  }
  let wire: Buffer;
  if (req.wire) {
    wire = req.wire;
  } else if (typeof body.value_base64 === 'string') {
    wire = Buffer.from(body.value_base64, 'base64');
  } else if (body.value !== undefined) {
    const shape = points ? [points.count] : elementCount === 1 ? [] : sel!.shape;
    wire = encodeElements(flattenValue(body.value, shape, type), type);
    if (elementCount === 1) return finish(broadcast(wire, type, 1, count));
  } else {
    throw badRequest('The write has no "value" (or binary body)');
  }
  if (elementCount !== undefined) {
    if (typeof elementCount !== 'number' || !Number.isSafeInteger(elementCount) || elementCount < 1) {
      throw badRequest('"element_count" must be a positive integer');
    }
    if (elementCount !== count) {
      if (count % elementCount !== 0) throw badRequest(`element_count ${elementCount} does not divide the selection of ${count} elements`);
      wire = broadcast(wire, type, elementCount, count);
    }
  }
  return finish(wire);

  function finish(w: Buffer): WritePlan {
    if (!isVariable(type)) {
      const need = count * fixedWireSize(type);
      if (w.length !== need) throw badRequest(`Binary data is ${w.length} bytes, expected ${need} (${count} elements of ${fixedWireSize(type)} bytes)`);
    }
    return { type, sel, points, count, wire: w, newDims, scalar };
  }
}

/** Repeat `n` elements of wire data to fill `total` elements. */
function broadcast(wire: Buffer, type: TypeJson, n: number, total: number): Buffer {
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
export function writeValues(f: DomainFile, id: string, req: WriteRequest, limits: ValueLimits, pool?: PagePool): void {
  f.withId(id, 'dataset', (did) => {
    const plan = planWrite(f, did, req, limits);
    if (plan.newDims) {
      const cr = io.describeCreationOf(did);
      if (cr.layout !== C.H5D_CHUNKED) throw badRequest('Dataset is not extensible (it is not chunked)');
      io.setExtent(did, plan.newDims);
    }
    const mt = io.createType(plan.type);
    try {
      if (plan.points) {
        io.writeDataset(did, plan.type, mt, { kind: 'points', coords: plan.points.coords, count: plan.count }, plan.count, false, plan.wire!, f.refs);
      } else if (plan.scalar || !plan.sel!.isHyperslab || isVariable(plan.type)) {
        io.writeDataset(did, plan.type, mt, toSpaceSelection(plan.sel!, limits), plan.count, plan.scalar, plan.wire!, f.refs);
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
            io.writeDataset(did, plan.type, mt, { kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, false, bytes, f.refs);
            if (pooled && pool) pool.give(pooled);
            off += n;
          }
        } finally {
          if (fd !== undefined) fs.closeSync(fd);
        }
      }
    } finally {
      io.closeType(mt);
    }
  });
}
