/**
 * A very short-lived cache of `stat(2)` results for the read path (issue #9: a small GET used
 * to stat the same domain path four to six times).
 *
 * Results are kept `freshMs` (default 2 ms) and only successes are kept: a missing path is asked
 * again every time. Everything is dropped whenever this process changes the data directory (a
 * write, a domain created, deleted or moved: callers `clear()`), so a request always sees the
 * process's own changes. Changes made by other programs (a file deleted or replaced behind the
 * server's back) are seen at most `freshMs` later, the same as if the request had arrived that
 * much earlier; writes of other h5store processes and of libhdf5 programs are still detected by
 * the file locks and the change check (files.ts), not by this cache.
 */
import fs from 'node:fs';

export class StatCache {
  private readonly small = new Map<string, { st: fs.Stats; at: number }>();
  private readonly big = new Map<string, { st: fs.BigIntStats; at: number }>();

  /** Incremented by every `clear()`: results derived from stats (ACL views) compare it. */
  generation = 0;

  /** @param freshMs how long a result is reused (ms); 0 turns the cache off */
  constructor(readonly freshMs = 2) {}

  /**
   * `fs.statSync(p)`, reused for `freshMs`.
   * @throws the errors of `fs.statSync` (ENOENT etc.), never cached
   */
  stat(p: string): fs.Stats {
    const now = performance.now();
    const hit = this.small.get(p);
    if (hit && now - hit.at < this.freshMs) return hit.st;
    const st = fs.statSync(p);
    if (this.freshMs > 0) this.remember(this.small, p, st, now);
    return st;
  }

  /**
   * `fs.statSync(p, { bigint: true })` (device, inode and birth time exactly), reused for
   * `freshMs`.
   * @throws the errors of `fs.statSync`, never cached
   */
  statBig(p: string): fs.BigIntStats {
    const now = performance.now();
    const hit = this.big.get(p);
    if (hit && now - hit.at < this.freshMs) return hit.st;
    const st = fs.statSync(p, { bigint: true });
    if (this.freshMs > 0) this.remember(this.big, p, st, now);
    return st;
  }

  /** Forget everything (this process changed a file or the directory tree). */
  clear(): void {
    this.generation++;
    this.small.clear();
    this.big.clear();
  }

  private remember<S>(m: Map<string, { st: S; at: number }>, p: string, st: S, now: number): void {
    // Entries older than freshMs are useless: drop them all rather than track them one by one.
    if (m.size >= 1024) m.clear();
    m.set(p, { st, at: now });
  }
}
