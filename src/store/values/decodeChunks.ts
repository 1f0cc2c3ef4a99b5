/**
 * Decoding stored chunks, on the value threads (threadPool.ts, threadWorker.ts) or the main
 * thread (chunked.ts): undo deflate (codec/inflate.ts), shuffle and Fletcher-32 on stored
 * chunks, last filter first, skipping those a chunk's filter mask names, and copy each chunk's
 * part of the selection into the result. No libhdf5 here: the main thread read the stored bytes
 * (`H5Dread_chunk`).
 *
 * Nothing here allocates per chunk: a thread inflates and unshuffles into two scratch buffers of
 * its own, reused from chunk to chunk, and both the stored bytes and the result are shared
 * memory the main thread takes from its page pool (issue #29: fresh memory per chunk and per
 * request cost ~1,450 page faults per 4 MiB read, a third of the decoding time on the VM).
 */
import { stripFletcher32, unshuffle } from '../../codec/filters.js';
import { inflateInto } from '../../codec/inflate.js';
import { type ChunkRun, copyChunkPart } from '../../selection/chunks.js';

/** One stored chunk of a batch: its bytes are `stored[at, at + size)`. */
export interface StoredChunk {
  at: number;
  size: number;
  mask: number;
  pick: ChunkRun[];
  /** The chunk's first element (for messages). */
  offset: number[];
}

/** One batch of chunks of one read (the pool's message). */
export interface DecodeBatch {
  kind: 'decode';
  id: number;
  /** The result, `prod(outShape) * itemSize` bytes from `outAt`, shared with the main thread. */
  out: SharedArrayBuffer;
  outAt: number;
  /** The stored (filtered) chunks, shared with the main thread. */
  stored: SharedArrayBuffer;
  itemSize: number;
  chunkDims: number[];
  outShape: number[];
  /** The pipeline in file order: filter id and client data value 0 (shuffle: element size). */
  filters: { id: number; cd0: number }[];
  chunks: StoredChunk[];
}

/** The answer: `error` names the first chunk that could not be decoded, and why. */
export interface DecodeDone {
  id: number;
  error?: string;
}

/** This thread's scratch space: two buffers the filters alternate between. */
const scratch: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)];

/** Scratch buffer `k` (0 or 1) of at least `bytes`, grown (never shrunk) as needed. */
function scratchOf(k: 0 | 1, bytes: number): Buffer {
  if (scratch[k]!.length < bytes) scratch[k] = Buffer.allocUnsafeSlow(Math.max(bytes, scratch[k]!.length * 2));
  return scratch[k]!;
}

/**
 * Decode one stored chunk.
 * @param raw the stored bytes (not changed)
 * @returns the chunk's elements (`chunkBytes` bytes): a view of this thread's scratch space,
 *   valid until the next call on this thread, or of `raw` itself when every filter is skipped
 * @throws Error with the reason (the caller names the chunk)
 */
export function decodeChunk(raw: Uint8Array, mask: number, filters: { id: number; cd0: number }[], chunkBytes: number, itemSize: number): Buffer {
  let buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let next: 0 | 1 = buf.buffer === scratch[0]!.buffer ? 1 : 0;
  for (let i = filters.length - 1; i >= 0; i--) {
    if ((mask >>> i) & 1) continue;
    const f = filters[i]!;
    if (f.id === 3) {
      const data = stripFletcher32(buf);
      if (!data) throw new Error('data error detected by Fletcher32 checksum');
      buf = data;
    } else if (f.id === 1) {
      const into = scratchOf(next, Math.max(1, chunkBytes));
      let n: number;
      try {
        n = inflateInto(buf, into);
      } catch (e) {
        throw new Error(`deflate: ${(e as Error).message}`);
      }
      buf = into.subarray(0, n);
      next = next === 0 ? 1 : 0;
    } else if (f.id === 2) {
      const into = scratchOf(next, buf.length).subarray(0, buf.length);
      buf = unshuffle(buf, f.cd0 || itemSize, into);
      next = next === 0 ? 1 : 0;
    } else {
      throw new Error(`filter ${f.id} is not decoded here`);
    }
  }
  if (buf.length !== chunkBytes) throw new Error(`it decodes to ${buf.length} bytes instead of ${chunkBytes}`);
  return buf;
}

/** The message of a stored chunk (at element `offset`) that cannot be decoded, for `why`. */
export function chunkError(offset: number[], why: unknown): string {
  return `The stored chunk at [${offset.join(', ')}] of this dataset cannot be decoded (the file is damaged): ${(why as Error).message}`;
}

/**
 * Decode chunks into a result.
 * @param stored the memory holding the stored chunks (`StoredChunk.at`)
 * @param out the result (`prod(outShape) * itemSize` bytes)
 * @returns undefined, or the message naming the first chunk that could not be decoded (the
 *   chunks before it are in `out`)
 */
export function decodeInto(
  stored: Uint8Array,
  chunks: StoredChunk[],
  out: Uint8Array,
  b: { itemSize: number; chunkDims: number[]; outShape: number[]; filters: { id: number; cd0: number }[] },
): string | undefined {
  const chunkBytes = b.chunkDims.reduce((a, x) => a * x, 1) * b.itemSize;
  for (const c of chunks) {
    let chunk: Buffer;
    try {
      chunk = decodeChunk(stored.subarray(c.at, c.at + c.size), c.mask, b.filters, chunkBytes, b.itemSize);
    } catch (e) {
      return chunkError(c.offset, e);
    }
    copyChunkPart(chunk, out, c.pick, b.chunkDims, b.outShape, b.itemSize);
  }
  return undefined;
}

/** Decode a batch into its shared result (on a value thread). @returns the answer to post */
export function decodeBatch(b: DecodeBatch): DecodeDone {
  const bytes = b.outShape.reduce((a, x) => a * x, 1) * b.itemSize;
  const error = decodeInto(new Uint8Array(b.stored), b.chunks, new Uint8Array(b.out, b.outAt, bytes), b);
  return error === undefined ? { id: b.id } : { id: b.id, error };
}
