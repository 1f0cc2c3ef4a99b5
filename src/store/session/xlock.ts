/**
 * Locks across processes: other h5store processes on the same data directory, and programs
 * that use libhdf5 directly (h5py, h5dump, ...). DESIGN.md section 5; README "Working with files
 * while the server runs".
 *
 * Two kinds of kernel locks, both released by the kernel when their process dies (a crashed
 * server never leaves a stale lock behind, and the next process takes over at once):
 *
 * - On the domain file itself, `flock(2)` as libhdf5 1.10 takes it (shared to read, exclusive to
 *   write), but only while a request uses the file: the server keeps no lock while it idles, so
 *   h5py can open a served file for writing between requests, and a request waits (bounded) while
 *   h5py has the file open for writing.
 * - On the domain's lock file (a hidden sibling, see `lockFileOf`), byte-range locks of the open
 *   file description (`F_OFD_SETLK`): byte 0 is held exclusively by the one h5store process that
 *   writes the file; byte 1 is held shared by processes waiting for byte 0. Readers do not start
 *   while another process holds byte 0 (so a stream of reads in one process cannot starve a
 *   writer in another), and a process that just wrote does not take byte 0 again at once while
 *   another waits (so two busy processes alternate instead of one locking the other out).
 *
 * Waiting is polling with a short back-off, bounded by `waitMs`; past it the request gets 503
 * with a `Retry-After` of how long the file has been busy so far (at least 1 s).
 */
import fs from 'node:fs';
import path from 'node:path';
import { H5StoreError } from '../../errors.js';
import { type HeaderState, readHeader } from '../../hdf5/journal.js';
import { hasOfdLocks, rangeLockedByOthers, tryFlock, tryRangeLock, unflock } from '../../hdf5/posix.js';
import { legacyLockState } from './servicefiles.js';

/** Byte of the lock file held by the writing process, and byte held by waiting processes. */
const WRITER_BYTE = 0;
const WAITER_BYTE = 1;
/** Byte held (shared) by processes whose reads wait for the writer byte: a writer lets them go first. */
const READER_WAIT_BYTE = 2;
/**
 * Bytes that tell the processes of one `serve --workers N` (a family) apart from others:
 * `FAMILY_BASE + 2 * family` is held (shared) by a member while it writes the file,
 * `FAMILY_BASE + 2 * family + 1` while it holds the file's shared lock to read. A member that
 * waits for the file learns from them whether it waits for a sibling (then it waits as long as
 * the sibling works, as it would for a request of its own process) or for a foreign process
 * (then 503 after `waitMs`).
 */
const FAMILY_BASE = 2 ** 32;
/** Longest wait for a sibling of the family before answering 503 anyway (ms). */
const FAMILY_WAIT_MS = 60_000;
/** A process that released the writer byte less than this long ago yields to a waiter. */
const COURTESY_MS = 40;

export interface XLockOptions {
  /** Longest wait for a lock before answering 503 (ms). */
  waitMs: number;
  /** fsync policy `always`: make a new lock file's directory entry durable. */
  durable: boolean;
  /** Keep the shared flock this long after the last read ended (the read lease; ms; 0: none). */
  leaseMs?: number;
  /** While reads continue, look for a writer in another process at most this often (ms). */
  recheckMs?: number;
  /**
   * Hold the shared flock at most this long in one piece (ms; 0: no limit), then let it go for
   * `gapMs` once the reads in flight end: a program that does not wait in line for the file
   * (h5py tries its exclusive lock once and fails) gets in between reads (issue #26 item 3).
   */
  holdMaxMs?: number;
  /** The shortest gap between two holds when a hold reached `holdMaxMs` (ms). */
  gapMs?: number;
  /**
   * The processes of one `serve --workers N` share this number (1..2^30): waits for one another
   * are not refused after `waitMs` (see FAMILY_BASE).
   */
  family?: number;
  /**
   * Told once per wait that goes on past `waitMs` because a sibling holds the file (the wait
   * goes on as long as it works, FAMILY_WAIT_MS at most): for the log.
   */
  onLongWait?: (info: { file: string; lock: 'read' | 'write'; waitedMs: number }) => void;
}

/** What holds a file we are waiting for (for the 503 message); `sibling`: a process of our family. */
type Blocker = 'h5store' | 'program' | 'legacy' | 'sibling';

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Open a file, or undefined when it does not exist. */
function openIfExists(p: string, flags: string): number | undefined {
  // The common case (no lock file: no h5store process ever wrote the file) without an exception.
  if (!fs.existsSync(p)) return undefined;
  try {
    return fs.openSync(p, flags);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * The cross-process locks of one domain file (one per open-file identity in the process). The
 * caller serializes use within the process (a readers-writer lock): many `acquireShared` or one
 * `acquireExclusive` at a time.
 */
export class CrossProcessLock {
  /** Descriptor of the domain file: flock, and the journal's reads and writes. */
  dataFd: number | undefined;
  dataWritable = false;
  /** Descriptor of the lock file (undefined until one exists). */
  lockFd: number | undefined;
  private shared = 0;
  private sharedWait: Promise<void> | undefined;
  /** The shared flock is still held although no read holds it (the read lease). */
  private leased = false;
  /** When the last read ended (ms, performance.now). */
  private lastReadEnd = 0;
  /** When a continuous shared hold last looked for a writer in another process (ms). */
  private writerCheckedAt = 0;
  /** A writer elsewhere waits: no new read joins the hold, which ends with the last read. */
  private draining = false;
  /** When this process took the shared flock it holds (ms, performance.now). */
  private heldSince = 0;
  /** When the hold began to step aside after `holdMaxMs` (a gap for programs that do not wait in line); 0: it does not. */
  private asideSince = 0;
  /** This hold gave up stepping aside (a long read holds it): it does not try again before it ends. */
  private asideGivenUp = false;
  /** No read takes the shared flock again before this (ms, performance.now): the gap after a hold of `holdMaxMs`. */
  private gapUntil = 0;
  private leaseTimer: NodeJS.Timeout | undefined;
  private exclusive = false;
  private lastRelease = -Infinity;
  /** Since when (ms, performance.now) the file has been seen busy; undefined when not busy. */
  private busySince: number | undefined;
  /** When the lock file was last found missing (ms, performance.now). */
  private lockMissingAt = -Infinity;
  /** This process holds its family's read marker (while it holds the shared flock). */
  private readMarked = false;

  constructor(
    readonly file: string,
    readonly lockPath: string,
    /** Inode of the file these locks are for: a descriptor of another file is refused. */
    private readonly ino: bigint,
    private readonly opts: XLockOptions,
  ) {}

  /**
   * Open the domain file's descriptor: read-only for reads, read-write for a write (then kept).
   * A read never opens the file for writing (issue #26: tools that watch a file, fanotify's
   * close-write, would count the server as one of its writers). @throws ENOENT etc.
   */
  private ensureDataFd(write: boolean): number {
    if (this.dataFd !== undefined && (this.dataWritable || !write)) return this.dataFd;
    let fd: number;
    try {
      fd = fs.openSync(this.file, write ? 'r+' : 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (write && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')) throw new H5StoreError('Forbidden', 'The domain file is read-only on the server');
      throw e;
    }
    const writable = write;
    if (fs.fstatSync(fd, { bigint: true }).ino !== this.ino) {
      fs.closeSync(fd);
      throw new H5StoreError('Unavailable', 'The domain file was replaced during the request; try again', { retryAfter: 1 });
    }
    if (this.dataFd !== undefined) fs.closeSync(this.dataFd);
    this.dataFd = fd;
    this.dataWritable = writable;
    return fd;
  }

  /** Open (creating it when `create`) the lock file; undefined when absent and not created. */
  private ensureLockFd(create: boolean): number | undefined {
    if (this.lockFd !== undefined) return this.lockFd;
    // A missing lock file is looked for again after `recheckMs` (each read asks twice; a
    // process that creates it to write also takes the file's exclusive flock, which reads wait for)
    const now = performance.now();
    if (!create && now - this.lockMissingAt < (this.opts.recheckMs ?? 1)) return undefined;
    let fd = openIfExists(this.lockPath, 'r+');
    if (fd === undefined && create) {
      fd = fs.openSync(this.lockPath, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
      if (this.opts.durable) syncDir(path.dirname(this.lockPath));
    }
    if (fd === undefined) this.lockMissingAt = now;
    this.lockFd = fd;
    return fd;
  }

  /** The lock file's header (counter, journal state); `none` when there is no lock file. */
  header(): HeaderState {
    const fd = this.ensureLockFd(false);
    if (fd === undefined) return { kind: 'none' };
    return readHeader(fd);
  }

  /** True when another process waits to write this file (a write burst of ours ends then). */
  othersWaiting(): boolean {
    return this.waitingElsewhere(WAITER_BYTE);
  }

  /** True when another process waits to read this file while we write it. */
  private readersWaiting(): boolean {
    return this.waitingElsewhere(READER_WAIT_BYTE);
  }

  private waitingElsewhere(byte: number): boolean {
    if (this.lockFd === undefined || !hasOfdLocks()) return false;
    try {
      return rangeLockedByOthers(this.lockFd, 'exclusive', byte);
    } catch {
      return false;
    }
  }

  /** Whether another process of our family holds the marker at `offset` (0: writing, 1: reading). */
  private siblingHolds(offset: 0 | 1): boolean {
    const family = this.opts.family;
    if (family === undefined || this.lockFd === undefined || !hasOfdLocks()) return false;
    try {
      return rangeLockedByOthers(this.lockFd, 'exclusive', FAMILY_BASE + 2 * family + offset);
    } catch {
      return false;
    }
  }

  /** Take or drop our family's marker at `offset` (best effort: without it we count as foreign). */
  private familyMark(offset: 0 | 1, on: boolean): void {
    const family = this.opts.family;
    if (family === undefined || this.lockFd === undefined || !hasOfdLocks()) return;
    try {
      tryRangeLock(this.lockFd, on ? 'shared' : 'unlock', FAMILY_BASE + 2 * family + offset);
    } catch {
      /* no marker */
    }
  }

  /** The shared flock of the file is held (`on`) or let go: our family's read marker follows it. */
  private readMark(on: boolean): void {
    if (on === this.readMarked) return;
    if (on && this.lockFd === undefined) return; // no lock file: no writer to tell
    this.readMarked = on;
    this.familyMark(1, on);
  }

  /** True when another process holds the writer byte (a writer is at work or about to be). */
  private writerElsewhere(): boolean {
    const fd = this.ensureLockFd(false);
    if (fd === undefined || !hasOfdLocks()) return false;
    try {
      return rangeLockedByOthers(fd, 'shared', WRITER_BYTE);
    } catch {
      return false;
    }
  }

  /**
   * The refusal of a wait that lasted past `deadline`, or undefined while it may go on. A wait
   * for a sibling (a process of our family) goes on as long as the sibling works (it is one
   * server with us), up to FAMILY_WAIT_MS from `started`.
   */
  private busy(blocker: Blocker, deadline: number, started: number, lock: 'read' | 'write', long: { told: boolean }): H5StoreError | undefined {
    const now = performance.now();
    this.busySince ??= now;
    if (blocker === 'sibling' && now >= deadline && !long.told) {
      long.told = true;
      this.opts.onLongWait?.({ file: this.file, lock, waitedMs: Math.round(now - started) });
    }
    if (now < (blocker === 'sibling' ? started + FAMILY_WAIT_MS : deadline)) return undefined;
    const secs = Math.min(60, Math.max(1, Math.ceil((now - this.busySince) / 1000)));
    const who =
      blocker === 'h5store'
        ? 'another h5store process is writing the file'
        : blocker === 'sibling'
          ? 'another worker of this server has been working on the file too long'
          : blocker === 'legacy'
            ? 'an older h5store process holds its lock on the file'
            : 'another program (h5py?) has the file open for writing';
    return new H5StoreError('Unavailable', `The domain is busy: ${who}; try again in ${secs} s`, { retryAfter: secs });
  }

  /**
   * Shared lock for a read: waits while another process writes (or is about to).
   *
   * The flock is held continuously while reads of this process overlap, and kept `leaseMs`
   * after the last one ended (the read lease), so a stream of small reads takes it (and checks
   * the file for changes) once rather than per request: while it is held, no writer that locks
   * (another h5store process, a libhdf5 program) can change the file. A writer of another
   * h5store process announces itself on the lock file's writer byte; a continuous hold looks
   * for it at most every `recheckMs` and then lets no new read join, so the hold ends with the
   * reads in flight and the writer goes next.
   * @returns true when this call took the lock (no other read of this process held it and no
   *   lease was left): only then can the file have changed since the last request looked
   * @throws H5StoreError Unavailable (503 with Retry-After) after `waitMs`; ENOENT errors when
   *   the file vanished
   */
  async acquireShared(started?: number): Promise<boolean> {
    if ((this.shared > 0 || this.leased) && !this.draining) {
      const now = performance.now();
      if (now - this.writerCheckedAt >= (this.opts.recheckMs ?? 1)) {
        this.writerCheckedAt = now;
        if (this.writerElsewhere()) this.drain();
      }
      if (this.opts.holdMaxMs && now - this.heldSince >= this.opts.holdMaxMs && !this.draining && !this.asideGivenUp) this.stepAside(now);
      if (!this.draining) {
        this.shared++;
        this.leased = false;
        return false;
      }
    }
    started ??= performance.now();
    while (this.shared > 0 || this.sharedWait) {
      // Draining for a writer elsewhere (wait for the reads in flight), or another read of this
      // process is taking the lock: go after it.
      if (this.sharedWait) await this.sharedWait;
      else await sleep(1);
      if (this.shared > 0 && this.asideSince > 0 && performance.now() - this.asideSince > 2 * (this.opts.holdMaxMs ?? 0)) {
        // a long read (a stream) holds the file: no gap can come before it ends, so the others
        // go on with it (a writer of another h5store process still drains the hold: recheckMs)
        this.asideSince = 0;
        this.asideGivenUp = true;
        this.draining = false;
      }
      if (this.shared > 0 && !this.draining) return this.acquireShared(started);
    }
    let done!: () => void;
    this.sharedWait = new Promise<void>((r) => (done = r));
    // The deadline counts from when this read began to wait, also behind other reads of this
    // process that tried first (each used to start a deadline of its own: the k-th waited k times).
    const deadline = started + this.opts.waitMs;
    const long = { told: false };
    let announced = false;
    try {
      this.asideSince = 0;
      const gap = this.gapUntil - performance.now();
      if (gap > 0) await sleep(gap); // the flock was let go after a long hold: leave the gap
      const fd = this.ensureDataFd(false);
      let delay = 1;
      for (;;) {
        const writer = this.writerElsewhere();
        if (!writer && tryFlock(fd, false)) break;
        if (writer && !announced && this.lockFd !== undefined && hasOfdLocks()) {
          // tell the writer a reader waits: it lets readers go before its next write
          try {
            announced = tryRangeLock(this.lockFd, 'shared', READER_WAIT_BYTE);
          } catch {
            /* less fair, still correct */
          }
        }
        const err = this.busy(writer ? (this.siblingHolds(0) ? 'sibling' : 'h5store') : 'program', deadline, started, 'read', long);
        if (err) throw err;
        await sleep(jitter(delay));
        delay = Math.min(delay * 1.6, 5);
      }
      this.busySince = undefined;
      this.draining = false;
      this.shared = 1;
      this.writerCheckedAt = this.heldSince = performance.now();
      this.asideGivenUp = false;
      this.readMark(true);
    } finally {
      if (announced && this.lockFd !== undefined) tryRangeLock(this.lockFd, 'unlock', READER_WAIT_BYTE);
      this.sharedWait = undefined;
      done();
    }
    return true;
  }

  /** The hold reached `holdMaxMs`: drain it, and leave a gap of `gapMs` before the next. */
  private stepAside(now: number): void {
    this.asideSince = now;
    this.drain();
  }

  /** Let no new read join the shared hold; drop the lease now if no read holds it. */
  private drain(): void {
    this.draining = true;
    if (this.shared === 0) this.endLease();
  }

  /** Give back a lease (the flock) unless a read or the exclusive lock holds the file. */
  private endLease(): void {
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    this.leaseTimer = undefined;
    if (!this.leased) return;
    this.leased = false;
    if (this.shared === 0 && !this.exclusive && this.dataFd !== undefined) this.letGo();
  }

  /**
   * Let the shared flock go (no read holds it, no lease) and the family's read marker with it:
   * after a hold of `holdMaxMs` or more, the next read waits for the gap (`gapMs`).
   */
  private letGo(): void {
    unflock(this.dataFd!);
    this.readMark(false);
    const now = performance.now();
    const max = this.opts.holdMaxMs ?? 0;
    if (max > 0 && now - this.heldSince >= max) this.gapUntil = now + (this.opts.gapMs ?? 1);
  }

  /** Release one shared hold; the flock goes with the last (after the lease, if any). */
  releaseShared(): void {
    if (this.shared <= 0) return;
    this.shared--;
    if (this.shared > 0 || this.exclusive || this.dataFd === undefined) return;
    const leaseMs = this.opts.leaseMs ?? 0;
    const now = performance.now();
    const left = this.holdLeft(now);
    if (leaseMs <= 0 || this.draining || left <= 0) {
      this.letGo();
      return;
    }
    this.leased = true;
    this.lastReadEnd = now;
    if (!this.leaseTimer) this.armLease(Math.min(leaseMs, left));
  }

  /** How much longer the shared flock may be held in one piece (ms; Infinity without `holdMaxMs`). */
  private holdLeft(now: number): number {
    const max = this.opts.holdMaxMs ?? 0;
    return max > 0 ? this.heldSince + max - now : Infinity;
  }

  /**
   * One timer per lease (not per read): it ends the lease once `leaseMs` passed without a read,
   * or the hold reached `holdMaxMs`.
   */
  private armLease(ms: number): void {
    // also look for a writer of another process every few ms: it need not wait for the lease to
    // run out when no read comes meanwhile (a read would let it go at once, `acquireShared`)
    const look = Math.max(2, this.opts.recheckMs ?? 2);
    this.leaseTimer = setTimeout(() => {
      this.leaseTimer = undefined;
      if (!this.leased) return;
      const now = performance.now();
      const left = Math.min((this.opts.leaseMs ?? 0) - (now - this.lastReadEnd), this.holdLeft(now));
      if (left <= 0.5 || this.writerElsewhere()) this.endLease();
      else this.armLease(left);
    }, Math.max(1, Math.ceil(Math.min(ms, look))));
    this.leaseTimer.unref();
  }

  /**
   * Exclusive lock for a write: the writer byte of the lock file (fair between h5store
   * processes), then an exclusive flock of the domain file (waits for readers elsewhere and for
   * programs that have it open). Creates the lock file when missing.
   * @throws H5StoreError Unavailable after `waitMs`, Forbidden when the file is read-only
   */
  /**
   * @param waitMs the longest wait (default `waitMs` of the options)
   * @param familyWaits whether a sibling is waited for longer than that (not for files a write
   *   reaches beyond its own: a sibling may hold one of them while it waits for ours)
   */
  async acquireExclusive(waitMs = this.opts.waitMs, familyWaits = true): Promise<void> {
    if (this.exclusive) return;
    // A lease of this process's reads: the flock is converted below, and readers after the
    // write take (and check) the file again.
    if (this.leased) {
      if (this.leaseTimer) clearTimeout(this.leaseTimer);
      this.leaseTimer = undefined;
      this.leased = false;
      if (this.shared === 0 && this.dataFd !== undefined) {
        unflock(this.dataFd);
        this.readMark(false);
      }
    }
    const started = performance.now();
    const deadline = started + waitMs;
    const long = { told: false };
    const dataFd = this.ensureDataFd(true);
    let waiting = false;
    let delay = 1;
    try {
      for (;;) {
        const lockFd = this.ensureLockFd(true)!;
        // after a write (or a burst of writes) of ours, a process waiting to write or to read goes first
        const yieldToOthers = performance.now() - this.lastRelease < COURTESY_MS && (this.othersWaiting() || this.readersWaiting());
        if (!yieldToOthers && this.tryWriterByte(lockFd)) {
          // The lock file may have been deleted and recreated (DELETE of the domain elsewhere):
          // a lock on an unlinked inode protects nothing.
          if (sameInode(lockFd, this.lockPath)) {
            this.familyMark(0, true);
            break;
          }
          this.dropWriterByte(lockFd);
          this.closeLockFd();
          continue;
        }
        if (!waiting && hasOfdLocks()) {
          try {
            waiting = tryRangeLock(lockFd, 'shared', WAITER_BYTE);
          } catch {
            /* no waiter flag: less fair, still correct */
          }
        }
        const err = this.busy(this.siblingHolds(0) && familyWaits ? 'sibling' : 'h5store', deadline, started, 'write', long);
        if (err) throw err;
        await sleep(jitter(delay));
        delay = Math.min(delay * 1.6, 5);
      }
    } finally {
      if (waiting && this.lockFd !== undefined) tryRangeLock(this.lockFd, 'unlock', WAITER_BYTE);
    }
    try {
      for (;;) {
        const legacy = legacyLockState(this.file);
        if (legacy !== 'live' && tryFlock(dataFd, true)) break;
        // readers of a sibling hold the shared flock: they end soon (a writer waits, so no new read starts)
        const err = this.busy(legacy === 'live' ? 'legacy' : this.siblingHolds(1) && familyWaits ? 'sibling' : 'program', deadline, started, 'write', long);
        if (err) throw err;
        await sleep(jitter(delay));
        delay = Math.min(delay * 1.6, 5);
      }
    } catch (e) {
      this.dropWriterByte(this.lockFd!);
      this.lastRelease = performance.now();
      throw e;
    }
    this.busySince = undefined;
    this.exclusive = true;
  }

  /** Release the exclusive lock (after the file was closed and the journal committed). */
  releaseExclusive(): void {
    if (!this.exclusive) return;
    this.exclusive = false;
    this.lastRelease = performance.now();
    if (this.dataFd !== undefined) {
      try {
        if (this.shared > 0) tryFlock(this.dataFd, false);
        else unflock(this.dataFd);
      } catch {
        /* the descriptor's locks go with it (close) */
      }
    }
    if (this.lockFd !== undefined) this.dropWriterByte(this.lockFd);
  }

  get holdsExclusive(): boolean {
    return this.exclusive;
  }

  /** No read or write holds the locks (a read lease may: `close` ends it). */
  get idle(): boolean {
    return !this.exclusive && this.shared === 0 && !this.sharedWait;
  }

  private tryWriterByte(fd: number): boolean {
    if (hasOfdLocks()) {
      try {
        return tryRangeLock(fd, 'exclusive', WRITER_BYTE);
      } catch {
        /* fall through to flock when OFD locks turn out to be unsupported */
      }
    }
    return tryFlock(fd, true);
  }

  private dropWriterByte(fd: number): void {
    this.familyMark(0, false);
    if (hasOfdLocks()) {
      try {
        tryRangeLock(fd, 'unlock', WRITER_BYTE);
        return;
      } catch {
        /* flock fallback */
      }
    }
    unflock(fd);
  }

  private closeLockFd(): void {
    if (this.lockFd !== undefined) fs.closeSync(this.lockFd); // its byte-range locks go with it
    this.lockFd = undefined;
    this.readMarked = false;
  }

  /** Close the descriptors (releases every lock). Only when idle. */
  close(): void {
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    this.leaseTimer = undefined;
    this.leased = false;
    this.draining = false;
    if (this.dataFd !== undefined) fs.closeSync(this.dataFd);
    this.dataFd = undefined;
    this.dataWritable = false;
    this.closeLockFd();
    this.shared = 0;
    this.exclusive = false;
  }
}

function jitter(ms: number): number {
  return ms * (0.5 + Math.random());
}

function sameInode(fd: number, p: string): boolean {
  try {
    return fs.fstatSync(fd).ino === fs.statSync(p).ino;
  } catch {
    return false;
  }
}

/** fsync a directory (makes a new or removed entry durable); best effort. */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    /* not supported on this file system */
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
