/**
 * A bounded cache of decoded chunks (issue #9 target 3; HSDS data nodes keep one too): the
 * elements of stored chunks that the parallel chunk read (chunked.ts) inflated on this thread,
 * so a second read of the same chunks copies instead of inflating again.
 *
 * Entries are keyed by a scope that names the file's version and the dataset (`chunkScope`: the
 * serial of the view of the file, fileState.ts, which every write and every change seen on disk
 * replaces, and the dataset's address) and the chunk's offset. A write therefore never meets a
 * stale chunk: its new view makes new keys, and the old entries age out of the LRU order.
 * Memory is bounded by `maxBytes` (least recently used entries go first); a chunk larger than a
 * quarter of it is not kept.
 */

/** Bytes of decoded chunks kept at most, over all files (the default cache). */
export const DECODED_CHUNK_CACHE_BYTES = 64 * 1024 * 1024;

/** An LRU map of decoded chunks bounded in bytes. */
export class DecodedChunkCache {
  private readonly entries = new Map<string, Buffer>();
  private held = 0;

  /** @param maxBytes bytes of chunks kept at most (0: nothing is kept) */
  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** The decoded chunk under `key`, now the most recently used; undefined when not held. */
  get(key: string): Buffer | undefined {
    const b = this.entries.get(key);
    if (b !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, b);
    }
    return b;
  }

  /**
   * Keep `chunk` under `key` (the caller no longer changes it), dropping the least recently used
   * entries until it fits. Chunks over a quarter of `maxBytes` are not kept.
   */
  set(key: string, chunk: Buffer): void {
    if (chunk.length > this.maxBytes / 4) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.held -= old.length;
    }
    for (const [k, b] of this.entries) {
      if (this.held + chunk.length <= this.maxBytes) break;
      this.entries.delete(k);
      this.held -= b.length;
    }
    this.entries.set(key, chunk);
    this.held += chunk.length;
  }

  /** Drop everything. */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }
}

/** The process's cache of decoded chunks. */
export const decodedChunks = new DecodedChunkCache(DECODED_CHUNK_CACHE_BYTES);

/**
 * The cache scope of a dataset in a view of its file (fileState.ts): the view's serial, new for
 * every event of the file (every write, every change seen on disk, another file at the path),
 * and the dataset's address. Undefined in a transient view (inside a write): nothing is kept.
 */
export function chunkScope(view: { readonly serial: number | undefined }, addr: bigint): string | undefined {
  return view.serial === undefined ? undefined : `${view.serial}:${addr}`;
}
