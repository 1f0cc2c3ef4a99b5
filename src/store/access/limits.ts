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
import { H5StoreError, badRequest } from '../../errors.js';

export interface Limits {
  /** Bytes of one libhdf5 read or write page. */
  pageBytes: number;
  /** Largest number of coordinates of a point or coordinate-list selection. */
  maxPoints: number;
  /**
   * The chunk size this server prefers (bytes; `max_chunk_size` of `GET /`): the bound of the
   * chunks it chooses itself, and of what one allocation may fill. Chunks a client chooses may be
   * larger, up to libhdf5's own limit (`checkChunkBytes`); writes into chunks above this run on
   * the worker thread (src/hdf5/heavy.ts).
   */
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
  /**
   * Most objects (ids, links) one answer lists (issue #24 item 9): a listing of more without
   * a `Limit` to page it is a 413 naming `max_objects_per_answer`.
   */
  maxObjectsPerAnswer: number;
  /** Most components of an `h5path` in a request (lookups and creations; `max_path_depth`). */
  maxPathDepth: number;
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
  maxObjectsPerAnswer: 100_000,
  maxPathDepth: 512,
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

/**
 * 413 when one answer would list more than `max` objects or links (issue #24 item 9).
 * @param what what is listed, e.g. "group ids", "links"
 */
export function checkAnswerSize(n: number, max: number | undefined, what: string): void {
  if (max !== undefined && n > max) {
    throw new H5StoreError('PayloadTooLarge', `The answer would list ${n} ${what}, above the limit of ${max} per answer (max_objects_per_answer): ask for pages with Limit and Marker`);
  }
}

/**
 * 413 when an `h5path` has more than `max` components (issue #24 item 9: a group path 1,500
 * levels deep was made in one request). Empty components (`//`) do not count.
 */
export function checkPathDepth(h5path: string, max: number): void {
  let n = 0;
  let inName = false;
  for (let i = 0; i < h5path.length; i++) {
    const slash = h5path.charCodeAt(i) === 47;
    if (!slash && !inName) n++;
    inName = !slash;
  }
  if (n > max) throw new H5StoreError('PayloadTooLarge', `The path has ${n} levels, above the limit of ${max} (max_path_depth)`);
}

/**
 * libhdf5's own bound on a chunk (1.10: `H5Pset_chunk` "number of elements in chunk must be <
 * 4GB", `H5D__chunk_set_sizes` "chunk size must be < 4GB"): at most 2^32 - 1 elements and
 * 2^32 - 1 bytes. Past it libhdf5 refuses the dataset.
 */
export const HDF5_MAX_CHUNK = 2 ** 32 - 1;

/**
 * 400 when a chunk of `chunk` elements of `itemSize` bytes is larger than libhdf5 allows
 * (HDF5_MAX_CHUNK elements or bytes). Chunks above the server's preference (`maxChunkBytes`,
 * `max_chunk_size`) are accepted (issue #25: h5pyd 1.0 computes chunks up to ~8 MiB, and h5py
 * accepts a one-element chunk of a 100 MB string); writes into them run on the worker thread.
 */
export function checkChunkBytes(chunk: number[], itemSize: number): void {
  const elements = chunk.reduce((a, b) => a * b, 1);
  const n = elements * itemSize;
  if (elements > HDF5_MAX_CHUNK || n > HDF5_MAX_CHUNK) {
    throw badRequest(`Chunks of [${chunk.join(', ')}] hold ${n} bytes (${elements} elements), above libhdf5's limit of 2^32 - 1 of each per chunk`);
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
    max_objects_per_answer: limits.maxObjectsPerAnswer,
    max_path_depth: limits.maxPathDepth,
  };
}
