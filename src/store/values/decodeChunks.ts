/**
 * Decoding stored chunks, the job value threads (threadPool.ts, threadWorker.ts) do for the
 * parallel chunk reads (chunked.ts): undo deflate (zlib), shuffle and Fletcher-32 on stored
 * chunks, last filter first, skipping those a chunk's filter mask names, and copy each chunk's
 * part of the selection into the shared result. No libhdf5 here: the main thread read the stored
 * bytes (`H5Dread_chunk`).
 */
import { inflateSync } from 'node:zlib';
import { stripFletcher32, unshuffle } from '../../codec/filters.js';
import { type ChunkRun, copyChunkPart } from '../../selection/chunks.js';

/** One batch of chunks of one read (the pool's message). */
export interface DecodeBatch {
  kind: 'decode';
  id: number;
  /** The result, `prod(outShape) * itemSize` bytes, shared with the main thread. */
  out: SharedArrayBuffer;
  itemSize: number;
  chunkDims: number[];
  outShape: number[];
  /** The pipeline in file order: filter id and client data value 0 (shuffle: element size). */
  filters: { id: number; cd0: number }[];
  chunks: { raw: ArrayBuffer; size: number; mask: number; pick: ChunkRun[]; offset: number[] }[];
}

/** The answer: `error` names the first chunk that could not be decoded, and why. */
export interface DecodeDone {
  id: number;
  error?: string;
}

/** Scratch space of this thread for unshuffled chunks (the result of `decodeChunk` may live here). */
let scratch = Buffer.alloc(0);

/**
 * Decode one stored chunk.
 * @param own the result must be memory of its own (not the scratch space), e.g. to be kept
 * @returns the chunk's elements (`chunkBytes` bytes); without `own`, may be this thread's
 *   scratch space, valid until the next call; with it, `raw` itself or new memory
 * @throws Error with the reason (the caller names the chunk)
 */
export function decodeChunk(raw: Buffer, mask: number, filters: { id: number; cd0: number }[], chunkBytes: number, itemSize: number, own = false): Buffer {
  let buf = raw;
  for (let i = filters.length - 1; i >= 0; i--) {
    if ((mask >>> i) & 1) continue;
    const f = filters[i]!;
    if (f.id === 3) {
      const data = stripFletcher32(buf);
      if (!data) throw new Error('data error detected by Fletcher32 checksum');
      buf = data;
    } else if (f.id === 1) {
      try {
        buf = inflateSync(buf, { chunkSize: Math.max(64, chunkBytes + 64), maxOutputLength: Math.max(1, chunkBytes) });
      } catch (e) {
        throw new Error(`deflate: ${(e as Error).message}`);
      }
    } else if (f.id === 2) {
      // into this thread's scratch buffer (no fresh allocation per chunk); used before the next
      let into: Buffer;
      if (own) into = Buffer.allocUnsafeSlow(buf.length);
      else {
        if (scratch.length < buf.length) scratch = Buffer.from(new ArrayBuffer(buf.length));
        into = scratch.subarray(0, buf.length);
      }
      buf = unshuffle(buf, f.cd0 || itemSize, buf === into ? undefined : into);
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

/** Decode a batch into its shared result. @returns the answer to post */
export function decodeBatch(b: DecodeBatch): DecodeDone {
  const out = new Uint8Array(b.out);
  const chunkBytes = b.chunkDims.reduce((a, x) => a * x, 1) * b.itemSize;
  for (const c of b.chunks) {
    let chunk: Buffer;
    try {
      chunk = decodeChunk(Buffer.from(c.raw, 0, c.size), c.mask, b.filters, chunkBytes, b.itemSize);
    } catch (e) {
      return { id: b.id, error: chunkError(c.offset, e) };
    }
    copyChunkPart(chunk, out, c.pick, b.chunkDims, b.outShape, b.itemSize);
  }
  return { id: b.id };
}
