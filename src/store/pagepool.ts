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

  /**
   * @param pageBytes size of every buffer handed out (bytes)
   * @param maxIdle how many returned buffers are kept for reuse
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

  /** Return a buffer taken from `take` (one-offs are dropped). */
  give(buf: Buffer): void {
    if (buf.length === this.pageBytes && this.idle.length < this.maxIdle) this.idle.push(buf);
  }
}
