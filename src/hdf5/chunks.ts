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

const infoByCoord: AnyFn | undefined = optionalFunction(
  'herr_t H5Dget_chunk_info_by_coord(hid_t did, const void *offset, _Out_ unsigned int *filter_mask, _Out_ haddr_t *addr, _Out_ hsize_t *size)',
);
const readChunk: AnyFn | undefined = optionalFunction('herr_t H5Dread_chunk(hid_t did, hid_t dxpl, const void *offset, _Out_ uint32_t *filters, void *buf)');

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
  const mask = [0];
  const addr = [0n];
  const size = [0n];
  infoByCoord(did, offset, mask, addr, size);
  const n = Number(size[0]);
  if (n === 0) return undefined;
  return { size: n, filterMask: mask[0]! >>> 0 };
}

/**
 * The stored bytes of the chunk at `offset` (exactly `size` bytes, from `chunkInfo`).
 * @returns the bytes (a Buffer over an ArrayBuffer of its own, `Buffer.allocUnsafeSlow`, so it can be
 *   transferred to another thread) and the chunk's filter mask
 * @throws Hdf5Error when libhdf5 fails
 */
export function readRawChunk(did: Hid, offset: BigUint64Array, size: number): { bytes: Buffer; filterMask: number } {
  if (!readChunk) throw new Error('H5Dread_chunk is not in this libhdf5');
  const bytes = Buffer.allocUnsafeSlow(size);
  const filters = [0];
  readChunk(did, C.H5P_DEFAULT, offset, filters, bytes);
  return { bytes, filterMask: filters[0]! >>> 0 };
}
