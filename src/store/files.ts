/**
 * The open-file cache, locks and the file-change check (DESIGN.md section 5).
 *
 * - Files are opened read-only on first use and kept open; a write reopens them read-write.
 * - A handle idle for `idleCloseMs` is closed, so other programs (h5py) can open the file for
 *   writing: libhdf5's own file lock stays on (a writer excludes everyone, readers exclude
 *   writers), and the server never holds a file that nobody is using for more than about a second.
 * - Before every use the file's stamp (size, mtime, inode, ctime) is compared with the one seen
 *   last; a difference means another program changed it, and everything learnt is forgotten.
 * - Within the process each domain has a readers-writer lock; across processes a writer holds a
 *   `proper-lockfile` lock beside the file while it writes, and flushes before releasing it.
 */
import fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { H5StoreError, notFound } from '../errors.js';
import { hdf5Busy } from '../hdf5/heavy.js';
import { Hdf5Error } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import { DomainFile, sameStamp, stampOf } from './domainFile.js';
import { LOCK_SUFFIX } from './paths.js';

export interface FileCacheOptions {
  /** Close a handle after this long without use (ms). */
  idleCloseMs: number;
  /** At most this many files open at once (least recently used idle ones are closed). */
  maxOpenFiles: number;
}

/** The `proper-lockfile` lock path for a domain file: a hidden sibling directory. */
export function lockPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}${LOCK_SUFFIX}`);
}

export class FileCache {
  private readonly files = new Map<string, DomainFile>();
  private readonly goneIds = new Map<string, Set<string>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: FileCacheOptions) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(50, Math.floor(opts.idleCloseMs / 4)));
    this.sweeper.unref();
  }

  /** The cached entry of a domain (no file access). */
  entry(domain: string, fsPath: string): DomainFile {
    let f = this.files.get(domain);
    if (!f || f.path !== fsPath) {
      let gone = this.goneIds.get(domain);
      if (!gone) this.goneIds.set(domain, (gone = new Set()));
      f = new DomainFile(domain, fsPath, gone);
      this.files.set(domain, f);
    }
    return f;
  }

  /**
   * Make sure the file is open (read-write when `writable`), reopening it when it changed on
   * disk. Throws NotFound when the file does not exist.
   */
  private ensureOpen(f: DomainFile, writable: boolean): void {
    let st: fs.Stats;
    try {
      st = fs.statSync(f.path);
    } catch {
      this.close(f);
      f.resetState();
      throw notFound(`Domain ${f.domain} not found`);
    }
    if (!st.isFile()) throw notFound(`Domain ${f.domain} not found`);
    const stamp = stampOf(st);
    if (f.fid !== undefined && !sameStamp(f.stamp, stamp) && !f.writable) {
      // Changed by someone else while open read-only: start afresh.
      this.close(f);
    }
    if (f.fid !== undefined && writable && !f.writable) this.close(f);
    if (f.fid === undefined) {
      if (!sameStamp(f.stamp, stamp)) f.resetState();
      if (this.openCount() >= this.opts.maxOpenFiles) this.closeLeastRecent();
      f.fid = h5.openFile(f.path, writable);
      f.writable = writable;
      f.stamp = stamp;
    }
    f.lastUsed = performance.now();
  }

  /**
   * Run a read against a domain: shared lock, file open, `fn` (synchronous HDF5 work).
   * @throws H5StoreError NotFound when the file is missing; BadRequest when it is not HDF5.
   */
  async read<T>(f: DomainFile, fn: (f: DomainFile) => T): Promise<T> {
    if (!f.lock.tryRead()) await f.lock.read();
    try {
      this.ensureOpen(f, false);
      return fn(f);
    } finally {
      f.lastUsed = performance.now();
      f.lock.releaseRead();
    }
  }

  /**
   * Hold a read lock across asynchronous work (streaming). Call the returned release exactly once.
   */
  async acquireRead(f: DomainFile): Promise<() => void> {
    if (!f.lock.tryRead()) await f.lock.read();
    try {
      this.ensureOpen(f, false);
    } catch (e) {
      f.lock.releaseRead();
      throw e;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      f.lastUsed = performance.now();
      f.lock.releaseRead();
    };
  }

  /**
   * Run a write: exclusive lock in this process, `proper-lockfile` lock across processes, file
   * open read-write, `fn`, then flush (even when `fn` failed part-way) and unlock.
   */
  async write<T>(f: DomainFile, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    await f.lock.write();
    let release: (() => Promise<void>) | undefined;
    let failed = false;
    try {
      if (!fs.existsSync(f.path)) throw notFound(`Domain ${f.domain} not found`);
      release = await this.crossProcessLock(f.path);
      this.ensureOpen(f, true);
      try {
        return await fn(f);
      } catch (e) {
        // After a libhdf5 failure its in-memory state of the file may be off: start afresh on
        // the next request (the handle is flushed and closed below).
        if (e instanceof Hdf5Error) failed = true;
        throw e;
      } finally {
        f.invalidateCaches();
        if (f.fid !== undefined) {
          h5.flushFile(f.fid);
          try {
            f.stamp = stampOf(fs.statSync(f.path));
          } catch {
            /* deleted meanwhile */
          }
          if (failed) {
            this.close(f);
            f.resetState();
          }
        }
      }
    } finally {
      f.lastUsed = performance.now();
      if (release) await release().catch(() => undefined);
      f.lock.releaseWrite();
    }
  }

  /** Take the cross-process lock of a file (waits up to a few seconds, then 503). */
  async crossProcessLock(file: string): Promise<() => Promise<void>> {
    try {
      return await lockfile.lock(file, {
        lockfilePath: lockPathFor(file),
        realpath: false,
        stale: 10000,
        retries: { retries: 40, factor: 1.3, minTimeout: 10, maxTimeout: 250 },
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ELOCKED') {
        throw new H5StoreError('Unavailable', 'The domain is being written by another server process; try again', {
          'Retry-After': '1',
        });
      }
      throw e;
    }
  }

  /** Close a domain's handle now (e.g. before deleting the file). */
  close(f: DomainFile): void {
    if (f.fid === undefined) return;
    const fid = f.fid;
    f.fid = undefined;
    f.writable = false;
    h5.closeFile(fid);
    try {
      f.stamp = stampOf(fs.statSync(f.path));
    } catch {
      f.stamp = undefined;
    }
  }

  /** Forget a domain entirely (after DELETE /). */
  forget(domain: string): void {
    const f = this.files.get(domain);
    if (f) this.close(f);
    this.files.delete(domain);
  }

  private openCount(): number {
    let n = 0;
    for (const f of this.files.values()) if (f.fid !== undefined) n++;
    return n;
  }

  private closeLeastRecent(): void {
    let oldest: DomainFile | undefined;
    for (const f of this.files.values()) {
      if (f.fid !== undefined && f.lock.idle && (!oldest || f.lastUsed < oldest.lastUsed)) oldest = f;
    }
    if (oldest) this.close(oldest);
  }

  /** Close handles idle for longer than `idleCloseMs`. */
  closeIdle(now = performance.now()): void {
    if (hdf5Busy()) return; // a long libhdf5 call runs on the worker thread: next sweep
    for (const f of this.files.values()) {
      if (f.fid !== undefined && f.lock.idle && now - f.lastUsed >= this.opts.idleCloseMs) this.close(f);
    }
  }

  /** Open object ids over all files, for leak checks. */
  openIdCount(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.openIds();
    return n;
  }

  /** Number of files currently open. */
  get openFiles(): number {
    return this.openCount();
  }

  /** Close everything (shutdown). */
  closeAll(): void {
    clearInterval(this.sweeper);
    for (const f of this.files.values()) this.close(f);
  }
}
