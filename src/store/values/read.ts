/**
 * Reads of dataset values (wire-reference 2.4, 3.5): a read request (selection, fields, points)
 * is planned (`planRead`: the dataset opened, the request checked before anything is read), and
 * its result is read as pages of wire-format bytes by one of four page sources, which
 * `pagesFor` chooses:
 * - `onePageRead`: the whole result in one libhdf5 read (points, coordinate lists, scalars; on
 *   the worker thread for chunks over the chunk limit, `onePageOnWorker`);
 * - `libhdf5Pages`: a hyperslab page by page (`H5Dread`, pages of `pageBytes`);
 * - `fileBytePages`: one run of contiguously stored values, read from the file's bytes on the
 *   thread pool (fileBytes.ts `rangePages`);
 * - `decodedChunks`: deflate/shuffle/Fletcher-32 chunks decoded outside libhdf5 (chunked.ts).
 * The store hands the pages to HTTP as a `ValueSource` (source.ts), which holds the locks.
 */
import { type TypeJson, isVariableLength, typeSize } from '../../codec/types.js';
import { badRequest, tooLarge } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import * as io from '../../hdf5/io.js';
import type { SpaceSelection } from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import { hasIndirect, memSize } from '../../hdf5/memory.js';
import * as h5 from '../../hdf5/objects.js';
import { contiguousRun, type Selection, pageHyperslab, pagesKeepChunksWhole, parsePoints, parseSelect, pointsFromBinary, selectionFromBody } from '../../selection/select.js';
import type { DomainFile } from '../objects/domainFile.js';
import { rangePages } from '../session/fileBytes.js';
import { bytesOf, checkSelectionBytes } from '../access/limits.js';
import type { PagePool } from './pagepool.js';
import { hdf5Turn } from '../../hdf5/heavy.js';
import { chunkScope } from './chunkCache.js';
import { parallelEligible, readChunksParallel } from './chunked.js';
import { fieldSubset, pickElements, pointSelection, refuseMissingFilters, storageErrors, toSpaceSelection, type ValueLimits } from './common.js';

/**
 * The JSON body of `POST .../value` (parsed by http/bodies.ts `valueReadBody`; wire-reference
 * 2.4, 3.5): `points` (coordinates: selection/select.ts `parsePoints` checks them against the
 * extent), or a selection: `select` (the string grammar, or a list with one item per dimension)
 * or `start`/`stop`/`step` (`selectionFromBody`). Other keys are not the read's.
 */
export interface ValueReadBody {
  points?: unknown[];
  select?: string | unknown[] | null;
  start?: number | number[] | null;
  stop?: number | number[] | null;
  step?: number | number[] | null;
}

/** How a read selects elements. */
export interface ReadRequest {
  select?: string;
  body?: ValueReadBody;
  /** Binary uint64 LE coordinates (POST .../value). */
  pointsBinary?: Buffer;
  fields?: string;
}

/** One page of a read: `count` elements in the wire format. */
export interface ValuePage {
  wire: Buffer;
  count: number;
  /** The pooled buffer `wire` lives in: given back to the pool once the bytes are used. */
  pooled?: Buffer;
}

/** Pages of wire bytes of a planned read, in C order of the result. */
export interface PageSource {
  /** Which of the sources it is (`ValueSource.readBy`: tests, logs). */
  readonly name: 'none' | 'onePageRead' | 'onePageOnWorker' | 'libhdf5Pages' | 'fileBytePages' | 'decodedChunks';
  /** The next page, or undefined after the last. Call it with libhdf5 free (`hdf5Turn`). */
  next(): ValuePage | undefined | Promise<ValuePage | undefined>;
  /** Stop before the last page: a read in flight ends first and its buffer goes back. */
  stop(): Promise<void>;
}

/** How the caller will use the pages (see `pagesFor`). */
export interface PageUse {
  /** Pool of page buffers; chunk decoding always assembles its result in it. */
  pool: PagePool;
  /** Read libhdf5 pages of fixed-size types into the pool's buffers too. */
  pooled: boolean;
  /** Page size of hyperslab reads (default and upper bound: the `pageBytes` limit; see `libhdf5Pages`). */
  pageBytes?: number;
  /** Whether the values may be read from the file's bytes (`fileBytePages`: streamed binary reads). */
  fileBytes?: boolean;
}

/**
 * A planned read: the dataset open, the request checked, what the result is (`type`, `shape`,
 * `count`, `itemSize`, `bytes`) and what the page sources read it from. `close()` closes the
 * dataset (idempotent).
 */
export interface ReadPlan {
  /** Element type of the result (a `fields=` subset of the dataset's). */
  type: TypeJson;
  /** Result shape; [] for a scalar dataset. */
  shape: number[];
  count: number;
  /** Wire bytes per element, or undefined for variable-length types. */
  itemSize: number | undefined;
  /** Bytes of the whole result for fixed-size types; an estimate from memory sizes otherwise. */
  bytes: number;
  close(): void;
  readonly f: DomainFile;
  readonly did: Hid;
  /** The dataset's own type, and the memory type of the result (`io.createType(type)`). */
  readonly fullType: TypeJson;
  readonly memType: Hid;
  readonly dims: number[];
  readonly scalar: boolean;
  /** The selection, or the points of a point read. */
  readonly sel: Selection | undefined;
  readonly points: { coords: BigUint64Array; count: number } | undefined;
  readonly creation: io.DatasetCreation;
  /** Memory bytes per element, and whether memory and wire layouts are the same. */
  readonly msize: number;
  readonly fixed: boolean;
  readonly limits: ValueLimits;
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
    const s = selectionFromBody(b, dims);
    if (s && req.select) throw badRequest('Give the selection in the query or in the body, not both');
    if (s) return { sel: s };
    if (!req.select) throw badRequest('POST value needs "points" or a selection');
  }
  return { sel: parseSelect(req.select, dims) };
}

/**
 * Plan a value read: open dataset `id` of `f` and check the request (selection, fields, points,
 * sizes, filters) before anything is read. Call with libhdf5 free; read the result with a page
 * source (`pagesFor`), then `close()` the plan.
 * @throws H5StoreError BadRequest (400) for an invalid request or a null dataspace, PayloadTooLarge
 *   (413) above the limits, UnsupportedMediaType (415) for a filter this server cannot decode
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
    const itemSize = isVariableLength(type) ? undefined : typeSize(type);
    const msize = memSize(type);
    checkSelectionBytes(count, itemSize ?? msize, limits);
    const creation = io.describeCreationOf(did, fullType);
    refuseMissingFilters(creation);
    if (sel && !sel.isHyperslab && !scalar && sel.count > limits.maxPoints) {
      throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
    }
    const memType = io.createType(type);
    let closed = false;
    return {
      type,
      shape,
      count,
      itemSize,
      bytes: count * (itemSize ?? msize),
      close() {
        if (closed) return;
        closed = true;
        io.closeType(memType);
        h5.closeObject(did);
      },
      f,
      did,
      fullType,
      memType,
      dims: space.dims,
      scalar,
      sel,
      points,
      creation,
      msize,
      fixed: !hasIndirect(type),
      limits,
    };
  } catch (e) {
    h5.closeObject(did);
    throw e;
  }
}

/**
 * The page source of a planned read, the first that takes it: none for an empty result;
 * `onePageOnWorker` for a result of one page of a fixed-size type from chunks over the chunk
 * limit (one `H5Dread` of those can take a second); `decodedChunks` when it does not decline;
 * `onePageRead` for points, coordinate lists and scalars; `fileBytePages` (with `use.fileBytes`)
 * when it can; `libhdf5Pages` otherwise. Starts with libhdf5 free; awaits only the worker's read
 * and the chunk decode.
 */
export async function pagesFor(plan: ReadPlan, use: PageUse): Promise<PageSource> {
  if (plan.count === 0) return pagesOf('none', []);
  const c = plan.creation;
  const heavy = c.layout === C.H5D_CHUNKED && bytesOf(c.chunks ?? [], memSize(plan.fullType)) > plan.limits.maxChunkBytes;
  if (heavy && plan.fixed && plan.bytes <= plan.limits.pageBytes) return onePageOnWorker(plan);
  if (c.layout === C.H5D_CHUNKED && !plan.points && !plan.scalar && plan.sel!.isHyperslab && plan.f.handle.local) {
    const decoded = await decodedChunks(plan, use.pool);
    if (decoded) return decoded;
    return hdf5Turn(() => pagesOfLibhdf5(plan, use));
  }
  return pagesOfLibhdf5(plan, use);
}

/** The sources of `pagesFor` that read through libhdf5 or the file's bytes as the pages are asked for. */
function pagesOfLibhdf5(plan: ReadPlan, use: PageUse): PageSource {
  if (plan.points || plan.scalar || !plan.sel!.isHyperslab) return onePageRead(plan);
  return (use.fileBytes && fileBytePages(plan, use.pool, use.pageBytes ?? plan.limits.pageBytes)) || libhdf5Pages(plan, use.pooled ? use.pool : undefined, use.pageBytes);
}

/** A source of pages read already (by source `name`). */
export function pagesOf(name: PageSource['name'], pages: ValuePage[]): PageSource {
  let at = 0;
  return {
    name,
    next: () => pages[at++],
    stop: async () => {
      at = pages.length;
    },
  };
}

/** What one read of the whole result selects: points sorted and unique (libhdf5 crashes on repeats), with the `order` asked. */
function wholeSelection(plan: ReadPlan): { what: SpaceSelection; n: number; order?: Uint32Array } {
  if (plan.points) return pointsOf(pointSelection(plan.points, plan.dims));
  if (plan.scalar) return { what: { kind: 'all' }, n: plan.count };
  if (!plan.sel!.isHyperslab) return pointsOf(toSpaceSelection(plan.sel!, plan.limits) as ReturnType<typeof pointSelection>);
  return { what: toSpaceSelection(plan.sel!, plan.limits), n: plan.count };
}

function pointsOf(ps: ReturnType<typeof pointSelection>): { what: SpaceSelection; n: number; order?: Uint32Array } {
  return { what: ps, n: ps.count, order: ps.order };
}

/** The result of a read of the whole selection (`n` elements), put back in the order asked. */
function wholePage(plan: ReadPlan, wire: Buffer, n: number, order: Uint32Array | undefined): ValuePage {
  return { wire: order ? pickElements(wire, plan.type, n, order) : wire, count: plan.count };
}

/**
 * One source: the whole result in one libhdf5 read when the page is asked for (points and
 * coordinate lists, results put back in the order asked; scalars).
 */
function onePageRead(plan: ReadPlan): PageSource {
  let done = false;
  return {
    name: 'onePageRead',
    next() {
      if (done) return undefined;
      done = true;
      const { what, n, order } = wholeSelection(plan);
      return wholePage(plan, storageErrors(() => io.readDataset(plan.did, plan.type, plan.memType, what, n, plan.scalar, plan.f.refs)), n, order);
    },
    stop: async () => {
      done = true;
    },
  };
}

/**
 * One source: the whole result (one page of a fixed-size type) read now on the worker thread
 * (src/hdf5/heavy.ts), for chunks larger than the chunk limit (dropped-in files): one such read
 * can keep libhdf5 busy for a second, and the server answers others meanwhile.
 */
async function onePageOnWorker(plan: ReadPlan): Promise<PageSource> {
  const { what, n, order } = wholeSelection(plan);
  let wire: Buffer;
  try {
    wire = await io.readDatasetOnWorker(plan.did, plan.type, plan.memType, what, n, plan.scalar);
  } catch (e) {
    return storageErrors(() => {
      throw e;
    });
  }
  return pagesOf('onePageOnWorker', [wholePage(plan, wire, n, order)]);
}

/**
 * One source: a hyperslab read page by page with `H5Dread`, each page when asked for (into a
 * buffer of `pool` for fixed-size types). `pageBytes` (default and upper bound: the `pageBytes`
 * limit) asks for smaller pages; chunked datasets get them only when no chunk would be split
 * between pages (`pagesKeepChunksWhole`), otherwise the limit's size.
 */
function libhdf5Pages(plan: ReadPlan, pool: PagePool | undefined, pageBytes: number | undefined): PageSource {
  const sel = plan.sel!;
  const chunkDims = plan.creation.layout === C.H5D_CHUNKED ? plan.creation.chunks : undefined;
  let budget = plan.limits.pageBytes;
  if (pageBytes !== undefined && pageBytes > 0 && pageBytes < budget && (!chunkDims || pagesKeepChunksWhole(sel, plan.msize, pageBytes, chunkDims))) budget = pageBytes;
  const slabs = pageHyperslab(sel, plan.msize, budget, chunkDims);
  const size = plan.msize;
  return {
    name: 'libhdf5Pages',
    next() {
      const r = slabs.next();
      if (r.done) return undefined;
      const p = r.value;
      const what: SpaceSelection = { kind: 'hyperslab', start: p.start, step: p.step, count: p.count };
      const read = (into?: Buffer) => storageErrors(() => io.readDataset(plan.did, plan.type, plan.memType, what, p.elements, false, plan.f.refs, into));
      if (!pool || !plan.fixed) return { wire: read(), count: p.elements };
      const pooled = pool.take(p.elements * size);
      try {
        return { wire: read(pooled.subarray(0, p.elements * size)), count: p.elements, pooled };
      } catch (e) {
        pool.give(pooled);
        throw e;
      }
    },
    stop: async () => {
      slabs.return(undefined);
    },
  };
}

/**
 * One source, for a selection that is one run of a contiguously stored dataset whose stored type
 * is the wire type (`contiguousRun`, `io.storedContiguous`) in a local file libhdf5 has open
 * read-only: the same bytes as `libhdf5Pages`, read from the file on the thread pool
 * (fileBytes.ts `rangePages`) in pages of about `pageBytes` (whole elements), each in a buffer
 * of `pool`. Calls libhdf5 (`storedContiguous`).
 * @returns undefined when the data cannot be read so
 */
function fileBytePages(plan: ReadPlan, pool: PagePool, pageBytes: number): PageSource | undefined {
  const h = plan.f.handle;
  if (!plan.fixed || plan.itemSize !== plan.msize || !h.bytesAreCurrent) return undefined;
  const run = contiguousRun(plan.sel!);
  if (!run) return undefined;
  const size = plan.msize;
  const stored = io.storedContiguous(plan.did, plan.memType, plan.creation);
  if (!stored || (run.first + run.count) * size > stored.bytes) return undefined;
  const pages = rangePages(h.realPath, h.dev, h.ino, stored.offset + run.first * size, run.count * size, Math.max(1, Math.floor(pageBytes / size)) * size, pool);
  if (!pages) return undefined;
  return {
    name: 'fileBytePages',
    async next() {
      const r = await pages.next();
      return r.done ? undefined : { wire: r.value.wire, count: r.value.wire.length / size, pooled: r.value.pooled };
    },
    // a read in flight ends first (it holds the read lease's file), its buffer goes back
    stop: async () => {
      await pages.return(undefined);
    },
  };
}

/**
 * One source: the chunks of a hyperslab of a deflate/shuffle/Fletcher-32 chunked dataset decoded
 * outside libhdf5 (chunked.ts: on the value threads, or on this thread into the cache of decoded
 * chunks, or copied from it), the result in one page of `pool`.
 * @returns undefined when it declines (an unallocated chunk, chunks compressed more than 20:1 read
 *   the first time, too many or too few chunks, busy threads): the caller reads through libhdf5
 */
async function decodedChunks(plan: ReadPlan, pool: PagePool): Promise<PageSource | undefined> {
  const s = plan.sel!.sel as { start: number; step: number; count: number }[];
  const limits = plan.limits;
  const candidate = {
    did: plan.did,
    type: plan.type,
    memType: plan.memType,
    creation: plan.creation,
    slab: { start: s.map((x) => x.start), step: s.map((x) => x.step), count: s.map((x) => x.count) },
    itemSize: plan.msize,
    bytes: plan.bytes,
    local: true,
    cacheScope: chunkScope(plan.f.view, h5.objectAddr(plan.did)),
    pool,
  };
  const lim = { minBytes: limits.parallelChunkMinBytes, maxBytes: limits.pageBytes, maxChunkBytes: limits.maxChunkBytes, spareCores: limits.parallelChunkSpareCores };
  const dims = parallelEligible(candidate, lim);
  if (!dims) return undefined;
  const r = await readChunksParallel(candidate, dims, lim);
  return r && pagesOf('decodedChunks', [{ wire: r.wire, count: plan.count, pooled: r.pooled }]);
}
