/**
 * A pool of page buffers for streamed value reads.
 *
 * Allocating a fresh multi-MiB Buffer per page makes V8 count "external memory pressure" and
 * run full garbage collections every few pages (measured: 10-70 ms event-loop stalls during a
 * 256 MiB read). Pages are therefore read into buffers taken from this pool and given back once
 * the socket has taken their bytes, so a long read allocates nothing after its first pages.
 */
export class PagePool {
  private readonly idle: Buffer[] = [];
  private readonly idleShared: Buffer[] = [];

  /**
   * @param pageBytes size of every buffer handed out (bytes)
   * @param maxIdle how many returned buffers of each kind are kept for reuse
   */
  constructor(
    readonly pageBytes: number,
    private readonly maxIdle = 8,
  ) {}

  /** A buffer of at least `bytes` (exactly `pageBytes` when it fits; a one-off otherwise). */
  take(bytes: number): Buffer {
    if (bytes > this.pageBytes) return Buffer.allocUnsafeSlow(bytes);
    return this.idle.pop() ?? Buffer.allocUnsafeSlow(this.pageBytes);
  }

  /**
   * A page of shared memory (a `SharedArrayBuffer`, `pageBytes` long) that value threads can
   * write too (the chunk reads, store/values/chunked.ts). Kept apart from `take`'s pages:
   * copying into shared memory measured ~25% slower here (4 MiB `set`: 0.145 against 0.115 ms),
   * which the other reads need not pay.
   * @throws RangeError when `bytes` is over `pageBytes`
   */
  takeShared(bytes: number): Buffer {
    if (bytes > this.pageBytes) throw new RangeError(`${bytes} bytes are over a page (${this.pageBytes})`);
    return this.idleShared.pop() ?? Buffer.from(new SharedArrayBuffer(this.pageBytes));
  }

  /** Return a buffer taken from `take` or `takeShared` (one-offs are dropped). */
  give(buf: Buffer): void {
    if (buf.length !== this.pageBytes) return;
    const list = buf.buffer instanceof SharedArrayBuffer ? this.idleShared : this.idle;
    if (list.length < this.maxIdle) list.push(buf);
  }
}

/**
 * Large reusable buffers in power-of-two size classes (request bodies of value writes), for the
 * same reason as `PagePool`: a fresh 16 MiB Buffer per request costs more in garbage collection
 * than the copy itself (measured: ~6 ms of GC per 16 MiB PUT).
 */
export class BufferPool {
  private readonly idle = new Map<number, Buffer[]>();
  private idleBytes = 0;

  /** @param maxIdleBytes total bytes kept for reuse; @param minClass smallest class (bytes) */
  constructor(
    private readonly maxIdleBytes = 256 * 1024 * 1024,
    private readonly minClass = 1024 * 1024,
  ) {}

  private classOf(bytes: number): number {
    let c = this.minClass;
    while (c < bytes) c *= 2;
    return c;
  }

  /** A buffer of exactly `bytes` (a view of a pooled buffer); give it back with `give`. */
  take(bytes: number): Buffer {
    const cls = this.classOf(bytes);
    const list = this.idle.get(cls);
    const buf = list?.pop();
    if (buf) {
      this.idleBytes -= cls;
      return buf.subarray(0, bytes);
    }
    return Buffer.allocUnsafeSlow(cls).subarray(0, bytes);
  }

  /** Return a buffer from `take`. */
  give(view: Buffer): void {
    const whole = Buffer.from(view.buffer, 0, view.buffer.byteLength);
    const cls = whole.length;
    if (cls < this.minClass || (cls & (cls - 1)) !== 0 || this.idleBytes + cls > this.maxIdleBytes) return;
    let list = this.idle.get(cls);
    if (!list) this.idle.set(cls, (list = []));
    list.push(whole);
    this.idleBytes += cls;
  }
}
