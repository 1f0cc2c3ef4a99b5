/**
 * Parallel reads of compressed chunks (issue #9 target 3): a hyperslab read of a chunked dataset
 * whose filters are all deflate (1), shuffle (2) or Fletcher-32 (3) reads the stored (filtered)
 * chunks it touches with `H5Dread_chunk` on the main thread and hands them, in batches, to
 * value threads (threadPool.ts) that inflate (Node's zlib), undo the shuffle, check the
 * Fletcher-32 trailer and copy each chunk's part of the selection straight into the shared
 * result. libhdf5 itself decodes chunks one after the other on the calling thread.
 *
 * Why threads of our own rather than `zlib.inflate` on the libuv pool: measured on 2 cores, 16
 * chunks of 256 KiB took longer through async `inflate` (a stream object per call, results
 * handed back to the main thread, which then still had to copy 4 MiB row by row) than one
 * thread inflating them one after the other; a decoding thread does inflate and copy together
 * and the main thread only reads stored bytes.
 *
 * The bytes are those `H5Dread` gives: only datasets whose file type is exactly the memory type
 * the ordinary read would use (fixed-size integers and floats in their stored byte order, which is
 * the wire's) take this path, and only when every touched chunk is allocated (otherwise libhdf5
 * fills with the fill value: the ordinary read is used). Everything else, and reads too small to
 * pay, go through `H5Dread` as before (`planRead` in read.ts). Highly compressed chunks (over
 * 20:1: libhdf5 inflates them at memory speed, threads only add hand-offs) are decoded on the
 * main thread instead and kept in a bounded cache of decoded chunks (chunkCache.ts), which later
 * reads of the same chunks copy from.
 */
import type { TypeJson } from '../../codec/types.js';
import { H5StoreError } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import { RAW_CHUNKS, chunkInfo, readRawChunk } from '../../hdf5/chunks.js';
import { hdf5Busy, whenIdle } from '../../hdf5/heavy.js';
import * as io from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import { type ChunkRun, type Slab, chunkCount, copyChunkPart, forEachChunk, slabRuns } from '../../selection/chunks.js';
import type { PagePool } from '../pagepool.js';
import { decodedChunks } from './chunkCache.js';
import { DECODE_THREADS, decodeOnThread } from './threadPool.js';
import { chunkError, decodeChunk } from './decodeChunks.js';

/** Filters decoded here: deflate, shuffle, Fletcher-32. */
const HANDLED_FILTERS = new Set([C.H5Z_FILTER_DEFLATE, C.H5Z_FILTER_SHUFFLE, C.H5Z_FILTER_FLETCHER32]);
/** Decoded bytes of the chunks of one batch sent to a decoding thread, at most (one chunk at least). */
const BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Most chunks one read looks up here (each costs two B-tree lookups on the main thread, about
 * 15 us; a selection with large steps can touch a chunk per element): beyond, the ordinary read.
 */
const MAX_CHUNKS = 1024;
/** Compression ratio (decoded / stored bytes of the touched chunks) above which libhdf5 reads. */
const MAX_RATIO = 20;

let parallelReads = 0;
/** Reads served by this module since the process started (for the metrics). */
export function parallelChunkReads(): number {
  return parallelReads;
}

/** What the ordinary read planned, as far as this path needs it. */
export interface ChunkedReadCandidate {
  did: Hid;
  /** The dataset's type JSON (no `fields=` subset) and its memory type from `io.createType`. */
  type: TypeJson;
  memType: Hid;
  creation: io.DatasetCreation;
  /** The hyperslab, in dataset coordinates. */
  slab: Slab;
  /** Bytes per element (memory = wire for these types) and bytes of the result. */
  itemSize: number;
  bytes: number;
  /** The file is local (not a read-only S3 mount). */
  local: boolean;
  /**
   * Where decoded chunks of this dataset are cached (`chunkScope`: the file's version and the
   * dataset); without it, nothing is cached.
   */
  cacheScope?: string;
  /** Pool for the result of reads assembled on this thread (the caller gives it back). */
  pool?: PagePool;
}

/** A result of `readChunksParallel`: the wire bytes, and the pooled buffer they live in. */
export interface ChunkedReadResult {
  wire: Buffer;
  pooled?: Buffer;
}

/** Settings: reads under `minBytes` (0: any) or beyond `maxBytes` use the ordinary read. */
export interface ChunkedReadLimits {
  minBytes: number;
  maxBytes: number;
  /** Chunks larger than this (bytes, decoded) are left to the ordinary read (heavy.ts). */
  maxChunkBytes: number;
}

/**
 * Whether a read can take the parallel path: libhdf5 has the raw-chunk calls, the file is local,
 * the layout is chunked with a non-empty pipeline of handled filters, the type is a fixed-size
 * integer or float identical to its file type, and the size is within the limits. Calls libhdf5
 * (`H5Dget_type`, `H5Tequal`): the caller holds the read section.
 * @returns the chunk shape, or undefined when the ordinary read must be used
 */
export function parallelEligible(c: ChunkedReadCandidate, limits: ChunkedReadLimits): number[] | undefined {
  const cr = c.creation;
  if (!RAW_CHUNKS || !c.local || cr.layout !== C.H5D_CHUNKED || !cr.chunks) return undefined;
  if (cr.filters.length === 0 || cr.filters.length > 32 || !cr.filters.every((f) => HANDLED_FILTERS.has(f.id))) return undefined;
  if (c.type.class !== 'H5T_INTEGER' && c.type.class !== 'H5T_FLOAT') return undefined;
  if (c.bytes === 0 || c.bytes < limits.minBytes || c.bytes > limits.maxBytes) return undefined;
  const chunkBytes = cr.chunks.reduce((a, b) => a * b, 1) * c.itemSize;
  if (chunkBytes > limits.maxChunkBytes) return undefined;
  if (!io.datasetTypeEquals(c.did, c.memType)) return undefined;
  return cr.chunks;
}

/**
 * Read the selection through the parallel path. Starts on the main thread inside the caller's
 * read section with libhdf5 idle; between its libhdf5 calls it awaits, and waits for the worker
 * thread to be idle again before each call (`hdf5Busy`/`whenIdle`).
 *
 * With `cacheScope`, a read whose touched chunks are all in the cache of decoded chunks
 * (chunkCache.ts) is copied from it without calling libhdf5, and chunks compressed more than
 * MAX_RATIO:1 (which threads do not speed up) are read and decoded on this thread, kept in the
 * cache and copied into the result (as fast as libhdf5's own read, and the next read of them
 * only copies).
 * @returns the result in the wire format (`bytes` bytes; `pooled` names the pool's buffer it
 *   lives in, to give back once sent), or undefined without having awaited anything when a
 *   touched chunk is not allocated, when more than MAX_CHUNKS are touched, or (with `minBytes`
 *   > 0) when fewer than two are, or they are compressed more than MAX_RATIO:1 and there is no
 *   `cacheScope`: the caller then reads the ordinary way
 * @throws H5StoreError Internal (500) naming the chunk when a stored chunk cannot be decoded
 *   (deflate error, Fletcher-32 mismatch, wrong decoded size), as libhdf5's read fails then too;
 *   Hdf5Error when libhdf5 fails
 */
export async function readChunksParallel(c: ChunkedReadCandidate, chunkDims: number[], limits: ChunkedReadLimits): Promise<ChunkedReadResult | undefined> {
  const runs = slabRuns(c.slab, chunkDims);
  const n = chunkCount(runs);
  if ((n < 2 && limits.minBytes > 0) || n > MAX_CHUNKS) return undefined;
  const rank = chunkDims.length;
  const chunkBytes = chunkDims.reduce((a, b) => a * b, 1) * c.itemSize;
  const keyOf = (pick: ChunkRun[]) => `${c.cacheScope}/${pick.map((r, d) => r.chunk * chunkDims[d]!).join(',')}`;
  // every touched chunk decoded before (same file version): copied from the cache
  if (c.cacheScope !== undefined) {
    const hits: { pick: ChunkRun[]; chunk: Buffer }[] = [];
    let all = true;
    forEachChunk(runs, (pick) => {
      const chunk = all ? decodedChunks.get(keyOf(pick)) : undefined;
      if (chunk) hits.push({ pick: [...pick], chunk });
      else all = false;
    });
    if (all) {
      const { wire, pooled } = resultBuffer(c);
      for (const h of hits) copyChunkPart(h.chunk, wire, h.pick, chunkDims, c.slab.count, c.itemSize);
      cachedReads++;
      return { wire, pooled };
    }
  }
  // every touched chunk must be stored: an unallocated one reads as the fill value (H5Dread)
  const todo: { pick: ChunkRun[]; offset: BigUint64Array; size: number }[] = [];
  let missing = false;
  forEachChunk(runs, (pick) => {
    if (missing) return;
    const offset = new BigUint64Array(rank);
    for (let d = 0; d < rank; d++) offset[d] = BigInt(pick[d]!.chunk * chunkDims[d]!);
    const info = chunkInfo(c.did, offset);
    if (!info) missing = true;
    else todo.push({ pick: [...pick], offset, size: info.size });
  });
  if (missing) return undefined;
  // Highly compressible chunks inflate at memory speed in libhdf5 too (0.1 ms per 256 KiB chunk
  // at 60:1, measured): threads would only add hand-offs. Only `minBytes` 0 (tests) takes them.
  const stored = todo.reduce((a, t) => a + t.size, 0);
  if (limits.minBytes > 0 && stored * MAX_RATIO < todo.length * chunkBytes) {
    if (c.cacheScope === undefined) return undefined;
    // The first read of these chunks goes to libhdf5, which is faster than a decode and copy
    // here (measured: 0.8 against 0.5 of h5py in-process); a second read decodes them into the
    // cache, and later reads only copy.
    const keys = todo.map((t) => keyOf(t.pick));
    if (!keys.every((k) => seenOnce.has(k))) {
      if (seenOnce.size + keys.length > SEEN_ONCE_MAX) seenOnce.clear();
      for (const k of keys) seenOnce.add(k);
      return undefined;
    }
    // Decoded here, as fast as libhdf5 would (Node's zlib), and kept for the next read.
    const filters = c.creation.filters.map((f) => ({ id: f.id, cd0: f.cdValues[0] ?? 0 }));
    const { wire, pooled } = resultBuffer(c);
    try {
      for (const t of todo) {
        const raw = readRawChunk(c.did, t.offset, t.size);
        let chunk: Buffer;
        try {
          chunk = decodeChunk(raw.bytes, raw.filterMask, filters, chunkBytes, c.itemSize, true);
        } catch (e) {
          throw new H5StoreError('Internal', chunkError(Array.from(t.offset, Number), e));
        }
        // memory of its own (`own`): kept as it is, unless it is a small view of a larger buffer
        // (Node's pool for small outputs), which the cache would keep alive whole
        if (chunk.byteLength * 2 < chunk.buffer.byteLength) {
          const own = Buffer.allocUnsafeSlow(chunk.length);
          chunk.copy(own);
          chunk = own;
        }
        decodedChunks.set(keyOf(t.pick), chunk);
        copyChunkPart(chunk, wire, t.pick, chunkDims, c.slab.count, c.itemSize);
      }
    } catch (e) {
      if (pooled) c.pool!.give(pooled);
      throw e;
    }
    decodedReads++;
    return { wire, pooled };
  }

  // Batches of stored chunks (one per thread when they fit BATCH_BYTES: few wake-ups) go to the
  // decoding threads, which write into the shared result;
  // at most 2 batches per thread are outstanding (bounding the stored bytes held), and a batch
  // holds at most BATCH_BYTES of decoded chunks.
  const out = new SharedArrayBuffer(c.bytes);
  const filters = c.creation.filters.map((f) => ({ id: f.id, cd0: f.cdValues[0] ?? 0 }));
  const perBatch = Math.max(1, Math.min(Math.ceil(todo.length / DECODE_THREADS), Math.floor(BATCH_BYTES / chunkBytes)));
  const running = new Set<Promise<void>>();
  let failure: unknown;
  for (let i = 0; i < todo.length && failure === undefined; i += perBatch) {
    while (running.size >= 2 * DECODE_THREADS) await Promise.race(running);
    if (failure !== undefined) break;
    while (hdf5Busy()) await whenIdle(); // libhdf5 free until the next await (heavy.ts)
    const chunks = todo.slice(i, i + perBatch).map((t) => {
      const raw = readRawChunk(c.did, t.offset, t.size);
      return { raw: raw.bytes.buffer as ArrayBuffer, size: t.size, mask: raw.filterMask, pick: t.pick, offset: Array.from(t.offset, Number) };
    });
    const p: Promise<void> = decodeOnThread({ out, itemSize: c.itemSize, chunkDims, outShape: c.slab.count, filters, chunks })
      .then((error) => {
        if (error !== undefined) failure ??= new H5StoreError('Internal', error);
      })
      .catch((e: unknown) => {
        failure ??= e instanceof H5StoreError ? e : new H5StoreError('Internal', `Decoding chunks failed: ${(e as Error).message}`);
      })
      .finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure;
  parallelReads++;
  return { wire: Buffer.from(out, 0, c.bytes) };
}

/** Keys of highly compressed chunks read once (through libhdf5), bounded by SEEN_ONCE_MAX. */
const seenOnce = new Set<string>();
const SEEN_ONCE_MAX = 65_536;

let cachedReads = 0;
let decodedReads = 0;
/** Reads served from the cache of decoded chunks alone since the process started. */
export function cachedChunkReads(): number {
  return cachedReads;
}
/** Reads whose highly compressed chunks were decoded on the main thread (and cached). */
export function decodedChunkReads(): number {
  return decodedReads;
}

/** The result buffer of a read assembled on this thread: pooled when it fits a page. */
function resultBuffer(c: ChunkedReadCandidate): { wire: Buffer; pooled?: Buffer } {
  if (c.pool && c.bytes <= c.pool.pageBytes) {
    const pooled = c.pool.take(c.bytes);
    return { wire: pooled.subarray(0, c.bytes), pooled };
  }
  return { wire: Buffer.allocUnsafeSlow(c.bytes) };
}

