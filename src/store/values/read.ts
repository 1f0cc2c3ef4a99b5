/**
 * Reads of dataset values: a read request (selection, fields, points) planned into pages of
 * wire-format bytes (wire-reference 2.4, 3.5).
 *
 * A read plan keeps the dataset open and is consumed page by page; the caller holds the domain's
 * read lock until the plan is released, so libhdf5 work is split into pages of `pageBytes` and
 * the event loop runs between them.
 */
import type { TypeJson } from '../../codec/types.js';
import { badRequest, tooLarge } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import * as io from '../../hdf5/io.js';
import type { SpaceSelection } from '../../hdf5/io.js';
import { fixedWireSize, hasIndirect, isVariable, memSize } from '../../hdf5/memory.js';
import * as h5 from '../../hdf5/objects.js';
import { contiguousRun, type Selection, pageHyperslab, pagesKeepChunksWhole, parsePoints, parseSelect, pointsFromBinary, selectionFromBody } from '../../selection/select.js';
import type { DomainFile } from '../domainFile.js';
import { rangePages } from '../fileBytes.js';
import { bytesOf, checkSelectionBytes } from '../limits.js';
import type { PagePool } from '../pagepool.js';
import { chunkScope } from './chunkCache.js';
import { type ChunkedReadCandidate, parallelEligible, readChunksParallel } from './chunked.js';
import { fieldSubset, pickElements, pointSelection, refuseMissingFilters, storageErrors, toSpaceSelection, type ValueLimits } from './common.js';

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
   * `pageBytes` (default and upper bound: the configured `pageBytes`) asks for smaller pages of
   * hyperslab reads; chunked datasets get them only when no chunk would be split between pages
   * (`pagesKeepChunksWhole`), otherwise the configured size.
   */
  pages(pool?: PagePool, pageBytes?: number): Generator<ValuePage>;
  /** Close the dataset. Idempotent. */
  close(): void;
  /**
   * For reads that may keep libhdf5 busy long (chunks over the chunk limit): read the (single
   * page) result on the worker thread now; `pages()` then yields it. The store awaits it.
   */
  prefetch?: () => Promise<void>;
  /**
   * For a selection that is one run of a contiguously stored dataset whose stored type is the
   * wire type (`contiguousRun`, `io.storedContiguous`) in a local file libhdf5 has open
   * read-only: the same bytes as `pages()`, read from the file on the thread pool
   * (fileBytes.ts `rangePages`) in pages of about `pageBytes` (whole elements), each in a pooled
   * buffer. Undefined (the property, or its result) when the data cannot be read so: the
   * caller uses `pages()`. Call it while the plan is open.
   */
  filePages?: (pool: PagePool, pageBytes: number) => AsyncGenerator<ValuePage> | undefined;
}

/** Pages of raw bytes as value pages of `itemSize`-byte elements. */
async function* valuePages(pages: AsyncGenerator<{ wire: Buffer; pooled: Buffer }>, itemSize: number): AsyncGenerator<ValuePage> {
  // stopping this generator early stops `pages` too (the for-await loop's exit returns it)
  for await (const p of pages) yield { wire: p.wire, count: p.wire.length / itemSize, pooled: p.pooled };
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
 * Plan a value read. Throws (400/413) before anything is read when the request is invalid.
 * The returned plan owns an open dataset id: consume its pages and call `close()`. `pool`
 * (optional) holds the result of a chunked read assembled on this thread (`prefetch`): its page
 * then names the pooled buffer to give back once the bytes are sent.
 */
export function planRead(f: DomainFile, id: string, req: ReadRequest, limits: ValueLimits, pool?: PagePool): ReadPlan {
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
    let prefetch: (() => Promise<void>) | undefined =
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
    // A read of a deflate/shuffle/Fletcher-32 chunked dataset: chunks decoded in parallel off
    // the main thread (chunked.ts); when it declines (an unallocated chunk, chunks compressed
    // more than 20:1, too many or too few chunks), the pages below.
    if (!prefetch && !points && !scalar && sel!.isHyperslab && count > 0 && f.handle.local) {
      const s = sel!.sel as { start: number; step: number; count: number }[];
      const candidate: ChunkedReadCandidate = {
        did,
        type,
        memType,
        creation,
        slab: { start: s.map((x) => x.start), step: s.map((x) => x.step), count: s.map((x) => x.count) },
        itemSize: msize,
        bytes,
        local: true,
        cacheScope: chunkScope(f.view, h5.objectAddr(did)),
        pool,
      };
      const lim = { minBytes: limits.parallelChunkMinBytes, maxBytes: limits.pageBytes, maxChunkBytes: limits.maxChunkBytes, spareCores: limits.parallelChunkSpareCores };
      const dims = parallelEligible(candidate, lim);
      if (dims) {
        prefetch = async () => {
          const r = await readChunksParallel(candidate, dims, lim);
          if (r) prefetched = { wire: r.wire, count, pooled: r.pooled };
        };
      }
    }
    /** The hyperslab pages of a read of `pageBytes` pages (see `ReadPlan.pages`). */
    const slabPages = (pageBytes: number | undefined) => {
      let budget = limits.pageBytes;
      if (pageBytes !== undefined && pageBytes > 0 && pageBytes < budget && (!chunkDims || pagesKeepChunksWhole(sel!, msize, pageBytes, chunkDims))) budget = pageBytes;
      return pageHyperslab(sel!, msize, budget, chunkDims);
    };
    function* pages(pool?: PagePool, pageBytes?: number): Generator<ValuePage> {
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
      for (const p of slabPages(pageBytes)) {
        yield readPage({ kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, pool);
      }
    }
    // One run of contiguously stored elements, bytes as stored: plain file reads (see ReadPlan.filePages).
    let filePages: ReadPlan['filePages'];
    const h = f.handle;
    const run = !prefetch && !points && !scalar && fixed && itemSize === msize && h.bytesAreCurrent ? contiguousRun(sel!) : undefined;
    if (run) {
      // asked only for streamed reads: small ones skip the libhdf5 calls of `storedContiguous`
      filePages = (pool, pageBytes) => {
        const stored = io.storedContiguous(did, memType, creation);
        if (!stored || (run.first + run.count) * msize > stored.bytes) return undefined;
        const pages = rangePages(h.realPath, h.dev, h.ino, stored.offset + run.first * msize, run.count * msize, Math.max(1, Math.floor(pageBytes / msize)) * msize, pool);
        return pages && valuePages(pages, msize);
      };
    }
    if (sel && !sel.isHyperslab && !scalar && sel.count > limits.maxPoints) {
      throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
    }
    return { type, shape, count, itemSize, bytes, pages, close, prefetch, filePages };
  } catch (e) {
    h5.closeObject(did);
    throw e;
  }
}
