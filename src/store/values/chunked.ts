/**
 * Reads of compressed chunks outside libhdf5 (issues #9 target 3 and #29): a hyperslab read of a
 * chunked dataset whose filters are all deflate (1), shuffle (2) or Fletcher-32 (3) reads the
 * stored (filtered) chunks it touches with `H5Dread_chunk` on the main thread and decodes them
 * (inflate, unshuffle, Fletcher-32 check: decodeChunks.ts) either on the main thread or, in
 * batches, on the value threads (threadPool.ts), each chunk's part of the selection copied
 * straight into the result; or it leaves the read to libhdf5, which decodes chunks one after the
 * other on the calling thread. `chooseDecode` says which, from what was measured.
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
 * 20:1: they inflate at memory speed, threads only add hand-offs) are read by libhdf5 the first
 * time, decoded on the main thread the second and kept in a bounded cache of decoded chunks
 * (chunkCache.ts), which later reads of the same chunks copy from.
 *
 * Memory: the stored bytes and the result are pooled pages (store/values/pagepool.ts; shared memory when
 * the value threads decode them), and the decoders reuse their scratch space, so a read touches no fresh memory (issue #29: fresh memory
 * costs a page fault per 4 KiB, ~3.5 us each on the VM, a third of the decoding time before).
 */
import type { TypeJson } from '../../codec/types.js';
import { H5StoreError } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import { RAW_CHUNKS, chunkInfo, readRawChunkInto } from '../../hdf5/chunks.js';
import * as io from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import { type ChunkRun, type Slab, chunkCount, copyChunkPart, forEachChunk, slabRuns } from '../../selection/chunks.js';
import type { PagePool } from './pagepool.js';
import { decodedChunks } from './chunkCache.js';
import { DECODE_THREADS, decodeOnThread, idleValueThreads, spareCores } from './threadPool.js';
import { type StoredChunk, chunkError, decodeChunk } from './decodeChunks.js';

/** Filters decoded here: deflate, shuffle, Fletcher-32. */
const HANDLED_FILTERS = new Set([C.H5Z_FILTER_DEFLATE, C.H5Z_FILTER_SHUFFLE, C.H5Z_FILTER_FLETCHER32]);
/**
 * Stored bytes of a read below which libhdf5 decodes it rather than the value threads (the
 * hand-off, two thread wake-ups and the answers, costs ~0.2-0.4 ms on the VM).
 */
const THREAD_MIN_STORED = 256 * 1024;
/**
 * Stored bytes per chunk (on average) below which libhdf5 decodes the read: measured, 4096x4096
 * int32 with 10 noisy low bits (~2:1), a 1024x1024 region: chunks of 64x64 (~8 KiB stored, 256
 * chunks) took this thread 8.9 ms of CPU for their libhdf5 calls against libhdf5's whole read in
 * 14.9 ms, and lost; 128x128 (~32 KiB) broke even; 256x256 (~130 KiB) won.
 */
const THREAD_MIN_STORED_PER_CHUNK = 48 * 1024;
/** Cores other processes must leave unused for the value threads to decode a read (`spareCores`; the default of `parallelChunkSpareCores`). */
const MIN_SPARE_CORES = 1.5;
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
  /** Cores other processes must leave unused for the value threads to be used (`spareCores`); default MIN_SPARE_CORES. */
  spareCores?: number;
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
 * read section with libhdf5 idle; it reads every touched chunk's stored bytes before its first
 * await (so libhdf5 is not called after one).
 *
 * How the chunks are decoded is chosen per read (`chooseDecode`, measured in issue #29):
 * - all in the cache of decoded chunks (`cacheScope`): copied from it, no libhdf5 call;
 * - compressed more than MAX_RATIO:1 (inflating runs at memory speed: threads only add
 *   hand-offs), with `cacheScope`: their first read is libhdf5's, the second decodes them on this
 *   thread (codec/inflate.ts) into the cache, which later reads copy from;
 * - otherwise on the value threads, in one batch per idle thread, straight into a pooled shared
 *   result, when at least two threads are idle and the stored bytes are worth the hand-off
 *   (THREAD_MIN_STORED); else libhdf5 (undefined: the caller's pages).
 * @returns the result in the wire format (`bytes` bytes; `pooled` names the pool's buffer it
 *   lives in, to give back once sent), or undefined without having awaited anything when a
 *   touched chunk is not allocated, when more than MAX_CHUNKS are touched, or (with `minBytes`
 *   > 0) when fewer than two are, or the choice is libhdf5: the caller then reads the ordinary way
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
  const stored = todo.reduce((a, t) => a + t.size, 0);
  const how = chooseDecode({ chunks: n, stored, decoded: n * chunkBytes, forced: limits.minBytes === 0, cached: c.cacheScope !== undefined, idleThreads: idleValueThreads(true), spareCores: spareCores(), minSpareCores: limits.spareCores ?? MIN_SPARE_CORES });
  if (how === 'libhdf5') return undefined;
  if (how === 'main') {
    // The first read of highly compressed chunks goes to libhdf5, whose pages are sent while it
    // decodes the next (a first read decoded here instead had equal server CPU, issue #29, and
    // no wall-time difference the shared machine could show); the second decodes them here into
    // the cache (memory of their own per chunk, faulted in once), and later reads copy from it.
    const keys = todo.map((t) => keyOf(t.pick));
    if (!keys.every((k) => seenOnce.has(k))) {
      if (seenOnce.size + keys.length > SEEN_ONCE_MAX) seenOnce.clear();
      for (const k of keys) seenOnce.add(k);
      return undefined;
    }
  }

  // the stored bytes, one after the other (a pooled page when they fit; shared memory for the threads)
  const shared = how === 'threads';
  const storedPage = c.pool && stored <= c.pool.pageBytes ? (shared ? c.pool.takeShared(stored) : c.pool.take(stored)) : undefined;
  const storedMem = storedPage ?? (shared ? Buffer.from(new SharedArrayBuffer(Math.max(1, stored))) : Buffer.allocUnsafeSlow(Math.max(1, stored)));
  const { wire, pooled } = resultBuffer(c, shared);
  const filters = c.creation.filters.map((f) => ({ id: f.id, cd0: f.cdValues[0] ?? 0 }));
  const shape = { itemSize: c.itemSize, chunkDims, outShape: c.slab.count, filters };
  let ok = false;
  let at = 0;
  /** Read the stored bytes of `todo[from, until)` into `storedMem` (libhdf5: not after an await). */
  const readStored = (from: number, until: number): StoredChunk[] =>
    todo.slice(from, until).map((t) => {
      const mask = readRawChunkInto(c.did, t.offset, t.size, storedMem.subarray(at, at + t.size));
      const ch = { at, size: t.size, mask, pick: t.pick, offset: Array.from(t.offset, Number) };
      at += t.size;
      return ch;
    });
  try {
    if (how === 'main') {
      for (const ch of readStored(0, todo.length)) {
        let chunk: Buffer;
        try {
          chunk = Buffer.from(decodeChunk(storedMem.subarray(ch.at, ch.at + ch.size), ch.mask, filters, chunkBytes, c.itemSize)); // memory of its own: kept
        } catch (e) {
          throw new H5StoreError('Internal', chunkError(ch.offset, e));
        }
        decodedChunks.set(keyOf(ch.pick), chunk);
        copyChunkPart(chunk, wire, ch.pick, chunkDims, c.slab.count, c.itemSize);
      }
      decodedReads++;
      ok = true;
      return { wire, pooled };
    }
    // Batches of about equal counts of chunks, two per thread: each is posted as soon as its
    // stored bytes are read, so the threads start while this thread reads the next batch.
    const threads = limits.minBytes === 0 ? DECODE_THREADS : Math.max(2, idleValueThreads());
    const count = Math.min(todo.length, 2 * threads);
    const out = wire.buffer as SharedArrayBuffer;
    const answers: Promise<string | undefined>[] = [];
    try {
      for (let k = 0; k < count; k++) {
        const chunks = readStored(Math.floor((k * todo.length) / count), Math.floor(((k + 1) * todo.length) / count));
        answers.push(
          decodeOnThread({ out, outAt: wire.byteOffset, stored: storedMem.buffer as SharedArrayBuffer, ...shape, chunks }).catch(
            (e: unknown) => `Decoding chunks failed: ${(e as Error).message}`,
          ),
        );
      }
    } catch (e) {
      // a libhdf5 failure after some batches were posted: their threads still use the pooled
      // memory, which goes back to the pool (finally) only once they are done with it
      await Promise.all(answers);
      throw e;
    }
    const error = (await Promise.all(answers)).find((a) => a !== undefined);
    if (error !== undefined) throw new H5StoreError('Internal', error);
    parallelReads++;
    ok = true;
    return { wire, pooled };
  } finally {
    if (storedPage) c.pool!.give(storedPage);
    if (!ok && pooled) c.pool!.give(pooled);
  }
}

/** Where the chunks of one read are decoded (see `readChunksParallel`). */
export type DecodeChoice = 'threads' | 'main' | 'libhdf5';

/**
 * The choice of `readChunksParallel`, from what the read touches and how busy the value threads
 * are (issue #29, measured on the 2-core VM: bench/README.md "Issue #29"):
 * - compressed more than MAX_RATIO:1 (decoded / stored bytes): `main` (inflating runs at memory
 *   speed; a hand-off to threads costs more than it saves) when the decoded chunks can be cached
 *   (`cached`; `readChunksParallel` still leaves their first read to libhdf5), else `libhdf5`;
 * - fewer than THREAD_MIN_STORED stored bytes, or fewer than THREAD_MIN_STORED_PER_CHUNK per
 *   chunk (each chunk costs this thread two libhdf5 calls, ~20-30 us, that libhdf5's own read
 *   does not pay), fewer than two chunks or two idle value threads: `libhdf5` (queued behind
 *   other jobs or a thread's warm-up, the decode would wait longer than libhdf5 takes to do it);
 * - fewer than `minSpareCores` (MIN_SPARE_CORES, the setting `parallelChunkSpareCores`) cores left
 *   unused by other processes (`spareCores`): `libhdf5`
 *   (threads that share busy cores decode no faster than one thread, and the hand-off costs);
 * - else `threads`.
 * `forced` (`parallelChunkMinBytes` 0, for tests) always gives `threads`.
 */
export function chooseDecode(r: { chunks: number; stored: number; decoded: number; forced: boolean; cached: boolean; idleThreads: number; spareCores: number; minSpareCores?: number }): DecodeChoice {
  if (r.forced) return 'threads';
  if (r.stored * MAX_RATIO < r.decoded) return r.cached ? 'main' : 'libhdf5';
  if (r.chunks < 2 || r.idleThreads < 2 || r.spareCores < (r.minSpareCores ?? MIN_SPARE_CORES)) return 'libhdf5';
  if (r.stored < THREAD_MIN_STORED || r.stored < r.chunks * THREAD_MIN_STORED_PER_CHUNK) return 'libhdf5';
  return 'threads';
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
/** Reads whose highly compressed chunks were decoded on the main thread and cached. */
export function decodedChunkReads(): number {
  return decodedReads;
}


/**
 * The result buffer of a read: a pooled page when it fits (shared memory for `shared`, which the
 * value threads write), else a buffer of its own.
 */
function resultBuffer(c: ChunkedReadCandidate, shared = false): { wire: Buffer; pooled?: Buffer } {
  if (c.pool && c.bytes <= c.pool.pageBytes) {
    const pooled = shared ? c.pool.takeShared(c.bytes) : c.pool.take(c.bytes);
    return { wire: pooled.subarray(0, c.bytes), pooled };
  }
  return { wire: shared ? Buffer.from(new SharedArrayBuffer(c.bytes)) : Buffer.allocUnsafeSlow(c.bytes) };
}
