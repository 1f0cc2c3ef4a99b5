/**
 * One open file of the store: a file on disk (device + inode), whatever domain names lead to it
 * (a symlink, a hard link or a symlinked folder give one file several domains). Its libhdf5
 * handle, its locks and its journal belong here, so that two domains of one file never hold two
 * libhdf5 handles (libhdf5 refuses a read-write open of a file it has open read-only:
 * "file is already open for read-only").
 */
import type fs from 'node:fs';
import type { JournaledFile } from '../../hdf5/journal.js';
import type { Hid } from '../../hdf5/lib.js';
import type { ReadMode } from '../../hdf5/objects.js';
import type { FileEvent } from './fileState.js';
import { RWLock } from './rwlock.js';
import type { CrossProcessLock } from './xlock.js';

/** What identifies a version of a file on disk (a change means someone else wrote it). */
export interface FileStamp {
  size: number;
  mtimeMs: number;
  ino: number;
  ctimeMs: number;
  birthtimeMs: number;
  /** Version tag of a file that is not local (an S3 object's ETag). */
  etag?: string;
}

/**
 * Where a domain's bytes come from when they are not a local file (a read-only S3 mount, see
 * s3mount.ts). The file cache opens such a file with `open()` instead of libhdf5's local driver,
 * never for writing, and takes `stamp` as the current version instead of stat(2).
 */
export interface FileSource {
  /** The version as last checked (no I/O). */
  readonly stamp: FileStamp;
  /** Open the current version read-only. */
  open(): Hid;
  /** Close the handle after this long without requests (ms). */
  readonly idleCloseMs: number;
  /** Message of the 403 every write gets. */
  readonly readOnlyMessage: string;
  /**
   * Message of the 403 a value operation gets on a dataset whose values live in other files
   * (reach.ts): a mounted file's stored names would name files on this server's disk.
   */
  readonly reachRefusal: string;
}

/**
 * How long after the last change another program made to a file (one this process noticed) the
 * file counts as written by a live foreign writer (ms; issue #26): its reads check it on every
 * request, wait for it to settle and never read its bytes without libhdf5.
 */
export const FOREIGN_LIVE_MS = 10_000;
/**
 * Two changes of another program noticed at most this far apart, the last this recently, tell a
 * program at work on the file (ms): REST writes then answer 503 (a writer without kernel locks
 * and without status flags is seen no other way).
 */
export const FOREIGN_WRITER_MS = 2_000;

/** The stamp of a stat(2) result. */
/**
 * Longest step of the clock that stamps a file's mtime and ctime (ms; Linux stamps them with
 * its coarse clock, one scheduler tick: 1-10 ms): two versions of a file stamped less than this
 * apart may have the same stat. Kept for conditional.ts's ETags (store `fileVersion`) and the
 * reads without locks (files.ts `unchangedSinceVerified`).
 */
export const STAMP_TICK_MS = 20;

export function stampOf(st: fs.Stats): FileStamp {
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs, birthtimeMs: st.birthtimeMs };
}

/** Whether two stamps name the same version of a file (false when `a` is not known). */
export function sameStamp(a: FileStamp | undefined, b: FileStamp): boolean {
  return !!a && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs && a.etag === b.etag;
}

/**
 * What learnt something from a file and must hear what happens to it (a domain entry,
 * domainFile.ts): told by the file cache (files.ts) alone, as fileState.ts's table says.
 */
export interface FileUser {
  apply(event: FileEvent): void;
}

export class FileHandle {
  /** Readers-writer lock of the file inside this process. */
  readonly lock = new RWLock();
  /** The libhdf5 file id while open. */
  fid: Hid | undefined;
  /** True while `fid` is the read-write handle (only inside a write session). */
  writable = false;
  /** The file's stamp when last seen by this process (after its own writes too). */
  stamp: FileStamp | undefined;
  /** The lock file's commit counter when last seen (-1: never read). */
  counter = -1n;
  /** When the file was last used (performance.now() ms). */
  lastUsed = 0;
  /** The journaled view of the file while `fid` is the read-write handle. */
  jf: JournaledFile | undefined;
  /** Superblock version of the file opened read-write (3+: status flags, closed after writes). */
  sbVersion = 0;
  /** performance.now() when the current write session took the exclusive lock. */
  sessionStart = 0;
  /** The domain entries of this file (one per domain name that leads to it): told what happens to it. */
  readonly users = new Set<FileUser>();
  /** Where the bytes come from when the file is not local (read-only mounts; no `xl` then). */
  source: FileSource | undefined;
  /**
   * How the read-only handle was opened, after the superblock's status flags (objects.ts
   * `ReadMode`: `flagged` and `swmr` mean another program has the file open for writing, or
   * left it so when it crashed).
   */
  readMode: ReadMode = 'plain';
  /** performance.now() when this process last noticed a change another program made (0: never). */
  foreignAt = 0;
  /** performance.now() of the change of another program noticed before that one (0: none). */
  foreignBefore = 0;
  /**
   * The stat result (statCache.ts, reused for a few ms) the stamp was last compared with: a read
   * under the read lease compares each new one (programs that write without kernel locks are
   * not kept out by the lease).
   */
  checkedStat: object | undefined;
  /**
   * Wall-clock time (`Date.now()` ms) at which a read holding the file's shared lock last found
   * the file at `stamp` with the lock file's commit counter at `counter` (files.ts
   * `prepareRead`); 0: not since the stamp last changed. What the view remembered may be
   * answered without the locks while the file's stat still says `stamp`, once this is a clock
   * tick past the stamp's mtime (files.ts `unchangedSinceVerified`).
   */
  verifiedAt = 0;

  constructor(
    /** `dev:ino` (a local file) or the URL of a mounted object */
    readonly key: string,
    readonly dev: bigint,
    readonly ino: bigint,
    /** The file's real path (symlinks resolved): where its lock file lives. */
    readonly realPath: string,
    /** Cross-process locks of a local file; undefined for a mounted (read-only) object. */
    private readonly xl_: CrossProcessLock | undefined,
  ) {}

  /** The cross-process locks (local files only). @throws Error for a mounted object */
  get xl(): CrossProcessLock {
    if (!this.xl_) throw new Error(`${this.key} is a read-only mounted object: no cross-process locks`);
    return this.xl_;
  }

  /** True for a local file (with cross-process locks and a journal). */
  get local(): boolean {
    return this.xl_ !== undefined;
  }

  /**
   * True when the file's bytes on disk are what libhdf5 sees, so they may be read without it
   * (store/session/fileBytes.ts): a local file libhdf5 has open read-only, outside a write session (every
   * write session ends with `H5Fflush` and a commit; reads hold the read lease against writers
   * of other processes).
   */
  get bytesAreCurrent(): boolean {
    return this.local && !this.writable && this.fid !== undefined && !this.foreignWriter();
  }

  /**
   * True when another program may be writing the file now (issue #26): it is open with status
   * flags (`readMode`), or this process noticed a change of another program less than
   * FOREIGN_LIVE_MS ago. Its bytes may change under any read then: reads check the file on every
   * request and go through libhdf5 only.
   */
  foreignWriter(now = performance.now()): boolean {
    return this.readMode !== 'plain' || (this.foreignAt > 0 && now - this.foreignAt < FOREIGN_LIVE_MS);
  }

  /**
   * True when a program is seen at work on the file: two of its changes noticed close together,
   * the last one recently (files.ts `refuseForeignWriter` looks at the status flags besides): a
   * REST write must not go in.
   */
  foreignWriterAtWork(now = performance.now()): boolean {
    return this.foreignBefore > 0 && now - this.foreignAt < FOREIGN_WRITER_MS && this.foreignAt - this.foreignBefore < FOREIGN_WRITER_MS;
  }

  /** Note a change another program made, noticed now. */
  noteForeignChange(now = performance.now()): void {
    this.foreignBefore = this.foreignAt;
    this.foreignAt = now;
  }

  /** True when nothing in this process uses or waits for the file. */
  get idle(): boolean {
    return this.lock.idle && (this.xl_?.idle ?? true) && !this.jf?.inTransaction;
  }
}
