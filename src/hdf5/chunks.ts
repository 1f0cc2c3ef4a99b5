/**
 * Raw chunks of a chunked dataset, bypassing libhdf5's filter pipeline: where a chunk is
 * (`H5Dget_chunk_info_by_coord`, libhdf5 1.10.5+) and its stored, still filtered bytes
 * (`H5Dread_chunk`, 1.10.2+). The parallel chunk reads of src/store/values/chunked.ts decode them
 * off the main thread. Like every libhdf5 call, these run on the main thread while the caller's
 * read section is open and no call runs on the worker (src/hdf5/heavy.ts).
 */
import * as C from './constants.js';
import { type Hid, optionalFunction } from './lib.js';

type AnyFn = NonNullable<ReturnType<typeof optionalFunction>>;

// The out-parameters are typed arrays of this module passed as plain pointers: koffi's `_Out_`
// arrays cost a few microseconds more per call, and a read can touch a thousand chunks.
const infoByCoord: AnyFn | undefined = optionalFunction('herr_t H5Dget_chunk_info_by_coord(hid_t did, const void *offset, void *filter_mask, void *addr, void *size)');
const readChunk: AnyFn | undefined = optionalFunction('herr_t H5Dread_chunk(hid_t did, hid_t dxpl, const void *offset, void *filters, void *buf)');
const outMask = new Uint32Array(1);
const outAddr = new BigUint64Array(1);
const outSize = new BigUint64Array(1);

/** Whether this libhdf5 has both calls (1.10.5 and later). */
export const RAW_CHUNKS = infoByCoord !== undefined && readChunk !== undefined;

/** A stored chunk: its bytes in the file (filtered) and the mask of the filters it skipped. */
export interface ChunkInfo {
  /** Stored (filtered) bytes; 0 never happens here (see `chunkInfo`). */
  size: number;
  /** Bit i set: filter i of the pipeline was not applied to this chunk. */
  filterMask: number;
}

/**
 * Where the chunk that starts at `offset` (element coordinates, one per dimension, on a chunk
 * boundary) is stored.
 * @returns undefined when the chunk was never written (not allocated: it reads as the fill value)
 * @throws Hdf5Error when libhdf5 fails (or lacks the call: check `RAW_CHUNKS` first)
 */
export function chunkInfo(did: Hid, offset: BigUint64Array): ChunkInfo | undefined {
  if (!infoByCoord) throw new Error('H5Dget_chunk_info_by_coord is not in this libhdf5');
  outSize[0] = 0n;
  infoByCoord(did, offset, outMask, outAddr, outSize);
  const n = Number(outSize[0]);
  if (n === 0) return undefined;
  return { size: n, filterMask: outMask[0]! };
}

/**
 * Read the stored bytes of the chunk at `offset` (exactly `size` bytes, from `chunkInfo`) into
 * `into` (at least `size` bytes; any memory koffi can pass, shared memory included).
 * @returns the chunk's filter mask
 * @throws Hdf5Error when libhdf5 fails; RangeError when `into` is too small
 */
export function readRawChunkInto(did: Hid, offset: BigUint64Array, size: number, into: Uint8Array): number {
  if (!readChunk) throw new Error('H5Dread_chunk is not in this libhdf5');
  if (into.length < size) throw new RangeError(`${size} bytes do not fit ${into.length}`);
  readChunk(did, C.H5P_DEFAULT, offset, outMask, into);
  return outMask[0]!;
}
