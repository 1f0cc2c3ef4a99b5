/**
 * Resource limits of the store (issue 7 item 5; docs/configuration.md): each is a config setting
 * with a safe default, reported in `GET /` `limits`, and enforced before libhdf5 is asked to do
 * anything: over a limit is a 413 (or a 400 for a creation parameter) naming the limit.
 *
 * Why these bound a request's cost: libhdf5 runs on the one thread that also answers every other
 * request, and it cannot be interrupted inside a call. The costliest single calls are writing
 * into a chunk (the whole chunk is filled, filtered and written: the chunk size bounds it) and
 * allocating contiguous storage with a fill value (the whole dataset is written at once: large
 * datasets are created chunked, and allocating or filling more than a chunk's worth in one go is
 * refused). Reads and writes of selections are split into pages (`pageBytes`).
 */
import { H5StoreError, badRequest } from '../errors.js';

export interface Limits {
  /** Bytes of one libhdf5 read or write page. */
  pageBytes: number;
  /** Largest number of coordinates of a point or coordinate-list selection. */
  maxPoints: number;
  /** Largest chunk of a dataset created here (bytes); also the most one allocation may fill. */
  maxChunkBytes: number;
  /** Largest dataset (extent x element size, bytes) created, resized or appended to here. */
  maxDatasetBytes: number;
  /** Largest selection one value request reads or writes (bytes of its elements). */
  maxSelectionBytes: number;
  /** Largest attribute value (bytes) written here. */
  maxAttributeBytes: number;
  /** Largest value built in memory from a broadcast (`element_count`) write (bytes). */
  maxBroadcastBytes: number;
  /**
   * Largest dataset (bytes of its elements) an `initializer` fills at creation: the values are
   * written into the file, so h5py and h5dump read them too (docs/architecture.md "Decisions").
   */
  maxInitializerBytes: number;
  /**
   * Smallest read (bytes) of a deflate/shuffle/Fletcher-32 chunked dataset whose chunks are
   * decoded in parallel off the main thread (src/store/values/chunked.ts); 0: every such read.
   */
  parallelChunkMinBytes: number;
  /**
   * Cores other processes must leave unused for the value threads to decode a read's chunks
   * (`chooseDecode`, src/store/values/chunked.ts); 0: whatever the machine's load.
   */
  parallelChunkSpareCores: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Defaults (docs/configuration.md). */
export const DEFAULT_LIMITS: Limits = {
  pageBytes: 4 * MiB,
  maxPoints: 10_000_000,
  maxChunkBytes: 4 * MiB,
  maxDatasetBytes: 1024 * GiB,
  maxSelectionBytes: 16 * GiB,
  maxAttributeBytes: 16 * MiB,
  maxBroadcastBytes: 256 * MiB,
  maxInitializerBytes: 256 * MiB,
  parallelChunkMinBytes: 1 * MiB,
  parallelChunkSpareCores: 1.5,
};

/** Bytes of `n` elements of `itemSize` bytes, as a number (may exceed 2^53 only in theory). */
export function bytesOf(dims: number[], itemSize: number): number {
  return dims.reduce((a, b) => a * b, 1) * itemSize;
}

/**
 * 413 when a dataset of extent `dims` would hold more than `maxDatasetBytes`.
 * @param what e.g. "The dataset" / "Appending 1000 rows"
 */
export function checkDatasetBytes(dims: number[], itemSize: number, limits: Limits, what: string): void {
  const n = bytesOf(dims, itemSize);
  if (n > limits.maxDatasetBytes) {
    throw new H5StoreError(
      'PayloadTooLarge',
      `${what} would make a dataset of ${n} bytes (extent [${dims.join(', ')}]), above the limit of ${limits.maxDatasetBytes} (max_dataset_size)`,
    );
  }
}

/**
 * 413 when an `initializer` would fill more than `maxInitializerBytes` at creation (it writes
 * every element into the file; issue #26 item 6: one arange of 10^9 elements wrote 8 GB).
 */
export function checkInitializerBytes(space: { cls: string; dims: number[] }, itemSize: number, limits: Limits): void {
  const n = space.cls === 'H5S_SIMPLE' ? bytesOf(space.dims, itemSize) : itemSize;
  if (n > limits.maxInitializerBytes) {
    throw new H5StoreError(
      'PayloadTooLarge',
      `The initializer would write all ${n} bytes of the dataset into the file at creation, above the limit of ${limits.maxInitializerBytes} (max_initializer_size): create it without an initializer (unwritten elements read the fill value) and write the values that matter, or ask the administrator for a larger maxInitializerBytes`,
    );
  }
}

/** 413 when one value request selects more than `maxSelectionBytes`. */
export function checkSelectionBytes(count: number, itemSize: number, limits: Limits): void {
  const n = count * itemSize;
  if (n > limits.maxSelectionBytes) {
    throw new H5StoreError(
      'PayloadTooLarge',
      `The selection holds ${n} bytes (${count} elements), above the limit of ${limits.maxSelectionBytes} per request (max_selection_size): use smaller selections`,
    );
  }
}

/** 400 when a chunk of `chunk` elements of `itemSize` bytes exceeds `maxChunkBytes`. */
export function checkChunkBytes(chunk: number[], itemSize: number, limits: Limits): void {
  const n = bytesOf(chunk, itemSize);
  if (n > limits.maxChunkBytes) {
    throw badRequest(`Chunks of [${chunk.join(', ')}] hold ${n} bytes, above the limit of ${limits.maxChunkBytes} (max_chunk_size)`);
  }
}

/** The `limits` object of `GET /` (HSDS's keys first, wire-reference 1.3; then h5store's). */
export function limitsJson(limits: Limits, extra: { maxJsonBodyBytes: number; maxBinaryBodyBytes: number; maxJsonValueBytes: number; maxJsonDepth: number }): Record<string, number> {
  return {
    min_chunk_size: Math.min(1 * MiB, limits.maxChunkBytes),
    max_chunk_size: limits.maxChunkBytes,
    max_request_size: extra.maxJsonBodyBytes,
    max_binary_request_size: extra.maxBinaryBodyBytes,
    max_json_response_size: extra.maxJsonValueBytes,
    max_dataset_size: limits.maxDatasetBytes,
    max_selection_size: limits.maxSelectionBytes,
    max_points: limits.maxPoints,
    max_attribute_size: limits.maxAttributeBytes,
    max_initializer_size: limits.maxInitializerBytes,
    max_json_depth: extra.maxJsonDepth,
  };
}
