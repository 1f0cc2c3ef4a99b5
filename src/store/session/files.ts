/**
 * The open-file cache, locks, crash safety and the file-change check (DESIGN.md section 5;
 * README "Working with files while the server runs"; docs/storage-format.md "Lock file and
 * journal").
 *
 * - One `FileHandle` per file on disk (device + inode), shared by every domain name that leads
 *   to it, so libhdf5 never has one file open twice.
 * - Reads: the in-process shared lock, then a shared cross-process lock while reads overlap
 *   (xlock.ts), then the change check: the lock file's commit counter (writes of other
 *   h5store processes) and the file's stamp (size, mtime, inode, ctime: other programs). A
 *   change closes the read-only handle and drops what was learnt. The read-only handle stays
 *   open between requests, without any lock, and is closed after `idleCloseMs`.
 * - Writes: the in-process exclusive lock, the exclusive cross-process lock, then a transaction
 *   of the journal (journal.ts) around a read-write handle opened through the journaling driver
 *   (vfd.ts): `fn`, `H5Fflush`, commit (fsync per the policy), acknowledge. A failed request is
 *   rolled back: nothing of it stays in the file. The read-write handle and the locks are kept
 *   while more writes of this process wait for the file (a burst, at most `burstMs`, and never
 *   while another process waits), then the handle is closed and the locks released, so h5py and
 *   other processes can use the file at once.
 * - A write found unfinished (its journal active while no process holds the file: the writer
 *   died) is rolled back before the file is served, and logged. Nothing else is repaired unless
 *   an administrator asks (`adminRepair`, `h5store repair`): files left open by a crashed writer
 *   of another program (superblock status flags) or of an older h5store (stale proper-lockfile
 *   directory) look the same as files a program still writes.
 * - Files other programs are writing (issue #26; docs/architecture.md "Files other programs are
 *   writing") are read without being written: opened as their status flags say (`openRead`),
 *   checked on every read while a foreign writer is seen (`FileHandle.foreignWriter`), opened
 *   anew once a plain writer's flush is over (`settle`), a disturbed read answered 503
 *   (`liveFailure`); REST writes to them refused (`refuseForeignWriter`).
 * - It alone says what happened to a file (`happened`: fileState.ts's events, written by this
 *   process or changed under us), and tells every domain entry of the file, whose state then
 *   lives or goes as fileState.ts's table says. Nothing else decides whether what was learnt
 *   from a file is still current.
 */
import fs from 'node:fs';
import { H5StoreError, forbidden, internal, notFound } from '../../errors.js';
import { hdf5Busy, hdf5Turn, openSection } from '../../hdf5/heavy.js';
import { JournaledFile, applyRollback, readHeader, writeHeader, type JournalHeader } from '../../hdf5/journal.js';
import { Hdf5Error, type Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import { readModeOf } from '../../hdf5/objects.js';
import { allowDirectWrites, handleIdentity, openJournaled, repairStatusAndEoa, setDirectWriteDurability } from '../../hdf5/vfd.js';
import { DomainFile } from '../objects/domainFile.js';
import { parentOf, writersOf } from './openers.js';
import { FOREIGN_WRITER_MS, FileHandle, type FileSource, type FileStamp, STAMP_TICK_MS, sameStamp, stampOf } from './fileHandle.js';
import { AFTER, type FileEvent } from './fileState.js';
import type { DomainPaths, ReachContext } from '../objects/paths.js';
import { legacyLockOf, legacyLockState, lockFileOf } from './servicefiles.js';
import { StatCache } from './statCache.js';
import { CrossProcessLock, syncDir } from './xlock.js';

/** Where the cache reports what it repaired (pino's signature). */
export interface FileLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

const silent: FileLog = { warn() {}, info() {}, debug() {} };

export interface FileCacheOptions {
  /** The data directory's paths: where the files a dataset reaches are judged from (reach.ts). */
  paths: DomainPaths;
  /** Close a handle after this long without use (ms). */
  idleCloseMs: number;
  /** At most this many files open at once (least recently used idle ones are closed). */
  maxOpenFiles: number;
  /** Longest wait for another process's lock before a request gets 503 (ms). */
  lockWaitMs?: number;
  /** `always`: fdatasync the journal and the file before a write is acknowledged. */
  fsync?: 'always' | 'never';
  /** Longest write burst holding the file across requests of this process (ms). */
  burstMs?: number;
  /** Keep a file's shared lock this long after its last read (ms; xlock.ts; default 20). */
  readLeaseMs?: number;
  /** Hold a file's shared lock at most this long in one piece, then leave a gap of `readGapMs` (ms; xlock.ts; defaults 10, 1). */
  readHoldMs?: number;
  readGapMs?: number;
  log?: FileLog;
  /** Told about lock waits and refusals (metrics). */
  observer?: StoreObserver;
  /** Shared short-lived stat cache (statCache.ts); cleared by every event (`happened`). */
  stats?: StatCache;
  /**
   * Told when a link or attribute of a domain is noted deleted (`gone`) or made again, so the
   * other processes of a cluster answer 410 too (changeFeed.ts). Not told of `noteElsewhere`.
   */
  onDeleted?: (domain: string, what: string, gone: boolean) => void;
  /** The processes of one `serve --workers N` share this number: they wait for each other as for themselves (xlock.ts). */
  lockFamily?: number;
}

/**
 * The links and attributes of one domain name deleted while the server runs (they answer 410,
 * not 404, until made again; wire-reference 0.7), as `<owner id>/links/<name>` and
 * `<owner id>/attributes/<name>`. Every change is told to `tell` (the cluster's change feed).
 */
class DeletedNames extends Set<string> {
  constructor(
    private readonly domain: string,
    private readonly tell?: (domain: string, what: string, gone: boolean) => void,
  ) {
    super();
  }

  override add(what: string): this {
    if (!this.has(what)) {
      super.add(what);
      this.tell?.(this.domain, what, true);
    }
    return this;
  }

  override delete(what: string): boolean {
    if (!super.delete(what)) return false;
    this.tell?.(this.domain, what, false);
    return true;
  }

  /** The same, as another process of the cluster told it (not told again). */
  noteElsewhere(what: string, gone: boolean): void {
    if (gone) super.add(what);
    else super.delete(what);
  }
}

/**
 * What the store reports for monitoring (src/ops/metrics.ts implements it). Calls are
 * synchronous and must not throw.
 */
export interface StoreObserver {
  /**
   * A lock was waited for: `domain` = this process's readers-writer lock of a file (only when
   * it was held by someone else), `file` = the cross-process lock of a file (every write session).
   */
  lockWait(lock: 'domain' | 'file', seconds: number): void;
  /**
   * A lock could not be had within `lockWaitMs` (the request then answers 503 unless it can do
   * without, as the ACL lookup does): `file` = another h5store process held the file, `hdf5` =
   * another program (h5py...) has it open for writing.
   */
  lockRefused(lock: 'file' | 'hdf5'): void;
}

/**
 * What a file may need repaired: an interrupted write of an h5store process (its journal: rolled
 * back before the file is served), or, only when an administrator asks (`h5store repair`), what
 * a crashed program left: an older h5store's stale lock directory, superblock status flags.
 */
type Repair = 'journal' | 'legacy-lock' | 'status-flags';

class NeedsRepair extends Error {
  constructor(readonly why: Repair) {
    super(why);
  }
}

/** A read noticed a change while other reads of this process use the handle: it waits for them, then opens the file anew. */
class Reopen extends Error {}

/**
 * A file that another program writes without SWMR is opened anew only once its mtime is this old
 * (ms): a flush of the writer is then over, not half done. mtimes advance in clock ticks of up to
 * 4 ms (Linux's coarse clock), so this is a few ticks.
 */
export const LIVE_SETTLE_MS = 20;
/** Longest wait for such a file to settle before the read answers 503 (ms). */
const LIVE_SETTLE_WAIT_MS = 300;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** 503: a file another program writes was inconsistent while it was read (issue #26). */
function liveInconsistent(): H5StoreError {
  return new H5StoreError('Unavailable', 'The domain file is being written by another program and changed while it was read; try again', { retryAfter: 1 });
}

/**
 * 409: the file needs what only an administrator may do (`h5store repair`): status flags a
 * program set (it writes the file now, or crashed while it did), or the stale lock directory of
 * an older h5store process that died writing it.
 */
function needsAdminRepair(domain: string, why: 'legacy-lock' | 'status-flags', cause?: unknown, flags = 0): H5StoreError {
  const detail = cause instanceof Error ? ` (${cause.message})` : '';
  if (why === 'legacy-lock') {
    return new H5StoreError('Conflict', `The domain file was left incomplete by an older h5store process that died while writing it${detail}; an administrator can repair it with: h5store repair ${domain}`);
  }
  return new H5StoreError(
    'Conflict',
    `The domain file is open for ${flags & 4 ? 'SWMR ' : ''}writing by another program (its superblock says so; a program that crashed leaves the same flags): it is served read-only, and written again once that program closes it. If no program has it open, an administrator can clear the flags with: h5store repair ${domain}`,
    { retryAfter: 5 },
  );
}

/** The HDF5 signature; the superblock is at 0, 512, 1024, 2048, ... (HDF5 format spec II.A). */
const SIGNATURE = Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Version and file consistency flags of a file's superblock: the flags of a version-3
 * superblock (bit 0: open for writing, bit 2: open for SWMR writing), 0 for older versions
 * (libhdf5 1.10 keeps no flags there). HDF5 file format spec, section II.A.
 */
export function superblockInfo(fd: number): { version: number; flags: number } {
  const size = fs.fstatSync(fd).size;
  const b = Buffer.alloc(12);
  for (let at = 0; at + 12 <= size; at = at === 0 ? 512 : at * 2) {
    fs.readSync(fd, b, 0, 12, at);
    if (b.subarray(0, 8).equals(SIGNATURE)) return { version: b[8], flags: b[8] >= 3 ? b[11] : 0 };
  }
  return { version: 0, flags: 0 };
}


/** Whether the file at `p` is the one `st` describes (same device and inode). */
function isFileAt(p: string, st: fs.BigIntStats): boolean {
  try {
    const now = fs.statSync(p, { bigint: true });
    return now.dev === st.dev && now.ino === st.ino;
  } catch {
    return false;
  }
}

/** A domain's entry and the stat result (statCache.ts) it was last found to match by `entry`. */
interface Known {
  f: DomainFile;
  matched: object | undefined;
}

/** `readUnlocked`: the read must be made under the locks. */
const CHANGED = Symbol('changed');

export class FileCache {
  private readonly domains = new Map<string, Known>();
  private readonly handles = new Map<string, FileHandle>();
  /** Per domain name: links and attributes deleted while the server runs (410), outliving its entries. */
  private readonly goneIds = new Map<string, DeletedNames>();
  /** The reach context of local files (mounted ones refuse: `FileSource.reachRefusal`). */
  private readonly reach: ReachContext;
  private readonly sweeper: NodeJS.Timeout;
  private readonly log: FileLog;
  private readonly durable: boolean;
  private readonly lockWaitMs: number;
  private readonly burstMs: number;
  /** stat results of the last few ms (statCache.ts); cleared by every event (`happened`). */
  readonly stats: StatCache;

  constructor(private readonly opts: FileCacheOptions) {
    this.log = opts.log ?? silent;
    this.reach = { paths: opts.paths };
    this.stats = opts.stats ?? new StatCache();
    this.durable = (opts.fsync ?? 'always') === 'always';
    this.lockWaitMs = opts.lockWaitMs ?? 5000;
    this.burstMs = opts.burstMs ?? 50;
    setDirectWriteDurability(this.durable);
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(50, Math.floor(opts.idleCloseMs / 4)));
    this.sweeper.unref();
  }

  /** The fsync policy in force. */
  get fsyncPolicy(): 'always' | 'never' {
    return this.durable ? 'always' : 'never';
  }

  /**
   * The entry of a domain whose file is at `fsPath`: one per domain name, sharing the
   * `FileHandle` of the file (device + inode) with the file's other names.
   * @throws H5StoreError NotFound when the file does not exist
   */
  entry(domain: string, fsPath: string): DomainFile {
    let st: fs.BigIntStats;
    try {
      st = this.stats.statBig(fsPath);
    } catch {
      throw notFound(`Domain ${domain} not found`);
    }
    const known = this.domains.get(domain);
    const f = known?.f;
    // the stat cache's same result as the last request's: nothing to compare again
    if (f !== undefined && known!.matched === st && f.path === fsPath) return f;
    // Device and inode name the file; its birth time tells a reused inode from the file that had
    // it (deleted behind the server's back): that one's handle must never serve the new file.
    const key = `${st.dev}:${st.ino}:${st.birthtimeNs}`;
    if (f && f.path === fsPath && f.handle.key === key) {
      known!.matched = st;
      return f;
    }
    let h = this.handles.get(key);
    if (h && !isFileAt(h.realPath, st)) {
      // The inode was reused (on a file system without birth times): the file that handle opened
      // was deleted behind the server's back and this is another file. The old handle lives on
      // only in stale entries (closed now if idle, else when the last of them goes).
      this.handles.delete(key);
      if (h.idle) {
        this.closeHandle(h);
        h.xl.close();
      }
      h = undefined;
    }
    if (!h) {
      let real: string;
      try {
        real = fs.realpathSync(fsPath);
      } catch {
        throw notFound(`Domain ${domain} not found`);
      }
      h = new FileHandle(key, st.dev, st.ino, real, new CrossProcessLock(real, lockFileOf(real), st.ino, { waitMs: this.lockWaitMs, durable: this.durable, leaseMs: this.opts.readLeaseMs ?? 0, recheckMs: Math.max(1, this.stats.freshMs), holdMaxMs: this.opts.readHoldMs ?? 10, gapMs: this.opts.readGapMs ?? 1, family: this.opts.lockFamily, onLongWait: (w) => this.log.warn(w, 'waiting past lockWaitMs for another worker of this server that holds the file') }));
      this.handles.set(key, h);
    }
    return this.newEntry(domain, fsPath, h, f, this.reach);
  }

  /**
   * The entry of a domain served from a read-only mount (s3mount.ts): its handle is keyed by
   * `url`, opened with `source.open()`, never written, and takes no cross-process lock.
   */
  mountedEntry(domain: string, url: string, source: FileSource): DomainFile {
    const f = this.domains.get(domain)?.f;
    let h = this.handles.get(url);
    if (!h) {
      h = new FileHandle(url, 0n, 0n, url, undefined);
      this.handles.set(url, h);
    }
    h.source = source;
    h.lastUsed = performance.now(); // the sweeper stays away while the request gets to the file
    if (f && f.handle === h) return f;
    return this.newEntry(domain, url, h, f, { ...this.reach, refuse: source.reachRefusal });
  }

  /**
   * A new entry for `domain` (its first, or another file is at its path now: the `replaced`
   * event of fileState.ts, whose row is exactly this: nothing of `old` but the domain name's
   * deleted ids).
   */
  private newEntry(domain: string, path: string, h: FileHandle, old: DomainFile | undefined, reach: ReachContext): DomainFile {
    const gone = this.deletedNames(domain);
    const nf = new DomainFile(domain, path, gone, h, reach);
    h.users.add(nf);
    if (old) this.unref(old);
    this.domains.set(domain, { f: nf, matched: undefined });
    return nf;
  }

  private unref(f: DomainFile): void {
    const h = f.handle;
    h.users.delete(f);
    // Not while a libhdf5 call runs on the worker thread (heavy.ts): closing would wait for it
    // (or fail); the sweeper (`closeIdle`) drops the handle then.
    if (h.users.size === 0 && h.idle && !hdf5Busy()) this.dropHandle(h);
  }

  /**
   * What happened to a file, said here and nowhere else: every domain entry of the file hears it
   * (the entry `by` which this process wrote hears the event itself, the file's other names what
   * fileState.ts's table says they see; without `by`, all hear it), and the stat cache forgets
   * (a stat may now say something else).
   */
  private happened(h: FileHandle, event: FileEvent, by?: DomainFile): void {
    this.stats.clear();
    const others = AFTER[event].others;
    if (by !== undefined && !h.users.has(by)) by.apply(event); // a retired entry (`retiredUse`)
    for (const u of h.users) {
      const heard = by === undefined || u === by ? event : others;
      if (!heard) continue;
      u.apply(heard);
      if (this.watchers.size > 0 && u instanceof DomainFile) for (const w of this.watchers) w(u.domain, heard);
    }
  }

  /** Told what each domain name heard (`happened`); see `watch`. */
  private readonly watchers = new Set<(domain: string, event: FileEvent) => void>();

  /**
   * Be told every event a domain name hears (`happened`: this process's writes, changes noticed
   * on disk), as it hears it (synchronously, with the file's lock held: schedule work, do not do
   * it here). @returns the function that stops it
   */
  watch(listener: (domain: string, event: FileEvent) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /**
   * An entry that is no longer its domain's (another file took the path, or the path another
   * file, while a request that had it waited for the file's lock) no longer hears the file's
   * events: whenever such a request uses it, it hears `replaced` (knows nothing) first.
   */
  private retiredUse(f: DomainFile): void {
    if (!f.handle.users.has(f)) f.apply('replaced');
  }

  /**
   * Whether nothing changed on disk since this process last saw the file of `f` (`st`: its stat
   * now): what the entry learnt may be used without the file's locks (the ACL check,
   * aclViews.ts). Changes other programs made without changing the stamp are seen under the locks.
   */
  unchangedOnDisk(f: DomainFile, st: fs.Stats): boolean {
    return sameStamp(f.handle.stamp, stampOf(st));
  }

  /**
   * Whether the file of `f` is, by its stat now (not the stat cache's: a sibling worker's write
   * just answered must show; `fstat` of the descriptor the locks are taken on), the version that a read holding its shared lock last verified
   * (`FileHandle.verifiedAt`) at least a clock tick (`STAMP_TICK_MS`) after that version's mtime.
   * Then nothing changed the file since: any write moves its size, mtime or ctime, and a write
   * after the verification stamps a later tick. What the entry's view remembered
   * (`DomainFile.rememberedOnly`) may then be answered without the file's locks, its check and
   * libhdf5: the per-request shared lock (issue #26 item 3: h5py opens a served file right after
   * a REST read) made small GETs about 0.6x as fast. False for mounted objects, an entry that is
   * no longer its domain's, and when the stat fails.
   */
  unchangedSinceVerified(f: DomainFile): boolean {
    const h = f.handle;
    if (!h.local || h.stamp === undefined || h.verifiedAt - h.stamp.mtimeMs < STAMP_TICK_MS || !h.users.has(f)) return false;
    // fstat of the descriptor the locks are taken on: half a path's stat, and it sees the file
    // unlinked or renamed over too (its link count, so its ctime, changes)
    const fd = h.xl.dataFd;
    if (fd === undefined) return false;
    let st: fs.Stats;
    try {
      st = fs.fstatSync(fd);
    } catch {
      return false;
    }
    return sameStamp(h.stamp, stampOf(st));
  }

  /** This process changed the data directory (a domain or folder made or deleted, a folder's ACL written). */
  directoryChanged(): void {
    this.stats.clear();
  }

  private dropHandle(h: FileHandle): void {
    this.closeHandle(h);
    if (h.local) h.xl.close();
    if (this.handles.get(h.key) === h) this.handles.delete(h.key);
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  /**
   * Run a read against a domain: shared locks, change check, file open, `fn` (synchronous
   * HDF5 work). On a file another program is writing (`FileHandle.foreignWriter`), a read that
   * libhdf5 fails, or during which the file changed, is run once more on the file as it is then,
   * and answers 503 if that fails too (issue #26: never a 500, never values of a half-written
   * state).
   * @throws H5StoreError NotFound when the file is missing; BadRequest when it is not HDF5;
   *   Unavailable when another process holds the file for longer than `lockWaitMs`, or a file
   *   another program writes stays inconsistent
   */
  async read<T>(f: DomainFile, fn: (f: DomainFile) => T): Promise<T> {
    const seen = this.readUnlocked(f, fn);
    if (seen !== CHANGED) return seen;
    for (let attempt = 0; ; attempt++) {
      const release = await this.acquireRead(f);
      const h = f.handle;
      let result: T;
      try {
        result = await hdf5Turn(() => fn(f));
      } catch (e) {
        release();
        const live = this.liveFailure(f, e);
        if (live === e || attempt > 0) throw live;
        continue;
      }
      // A file written without kernel locks may have changed while it was read: the answer
      // may mix two states.
      const torn = h.local && h.foreignWriter() && h.readMode !== 'swmr' && this.changedOnDisk(h);
      release();
      if (!torn) return result;
      if (attempt > 0) throw liveInconsistent();
    }
  }

  /**
   * A read of a file verified unchanged (`unchangedSinceVerified`), without its cross-process
   * locks: `fn` runs on the open read-only handle under this process's read lock only, and its
   * result (or error) stands when the file's stat is still the verified one afterwards. A write
   * of another process that touched any byte `fn` read moved the stat before the bytes changed
   * (the kernel stamps mtime before it copies a write), in a later clock tick than the verified
   * mtime, so a read that raced one is seen and given up (`CHANGED`): the locked path then
   * notices the change and replaces what was learnt from the file, what `fn` may have cached
   * included. Writers of other programs are never locked out by these reads (issue #26 item 3).
   * Not for a handle another program writes without locks (`foreignWriter`: it changes too
   * often), a handle not open, a write of this process (it holds the file's write lock in the
   * process: `tryRead` fails; the read-write handle kept between writes is read as the locked path
   * reads it), or a mounted object. @returns `fn`'s result, or CHANGED when the locked path must run
   * @throws what `fn` threw, when the file did not change meanwhile
   */
  private readUnlocked<T>(f: DomainFile, fn: (f: DomainFile) => T): T | Promise<T> | typeof CHANGED {
    const done = this.beginUnlocked(f);
    if (done === undefined) return CHANGED;
    let result: T | Promise<T>;
    try {
      result = hdf5Turn(() => fn(f));
    } catch (e) {
      if (done()) throw e;
      return CHANGED;
    }
    if (!(result instanceof Promise)) return done() ? result : CHANGED;
    // libhdf5 was busy on the worker thread: the read ran later
    return result.then(
      (r) => (done() ? r : this.read(f, fn)),
      (e) => {
        if (done()) throw e;
        return this.read(f, fn);
      },
    );
  }

  /**
   * Begin a read of `f` without its cross-process locks (`readUnlocked`'s rules), for reads that
   * span `await`s (store.ts `readValues`: a value read whole).
   * @returns the read's end (idempotent): lets the file go and says whether what was read stands
   *   (the file's stat is still the verified one); undefined when the read must take the locks
   */
  beginUnlocked(f: DomainFile): (() => boolean) | undefined {
    const h = f.handle;
    if (h.fid === undefined || h.foreignWriter() || !this.unchangedSinceVerified(f) || !h.lock.tryRead()) return undefined;
    const end = openSection();
    let stands: boolean | undefined;
    return () => {
      if (stands === undefined) {
        end();
        h.lastUsed = performance.now();
        h.lock.releaseRead();
        stands = this.unchangedSinceVerified(f);
      }
      return stands;
    };
  }

  /**
   * What a failed read of `f` answers: a 503 (with Retry-After) when another program is writing
   * the file (`FileHandle.foreignWriter`) and the failure is an internal one (libhdf5 failing,
   * anything that is not an H5StoreError: the bytes changed under it); else `e` itself. For the
   * reads that hold the locks themselves (`acquireRead`).
   */
  liveFailure(f: DomainFile, e: unknown): unknown {
    const h = f.handle;
    if (!h.local || !h.foreignWriter()) return e;
    if (e instanceof H5StoreError && e.code !== 'Internal') return e;
    return liveInconsistent();
  }

  /** Whether the file's stamp on disk now (not the stat cache's) differs from the handle's. */
  private changedOnDisk(h: FileHandle): boolean {
    try {
      return !sameStamp(h.stamp, stampOf(fs.statSync(h.realPath)));
    } catch {
      return true;
    }
  }

  /**
   * Wait until a file that another program writes without SWMR has not changed for
   * LIVE_SETTLE_MS (its mtime), so that a new handle opens on what the writer flushed, not on a
   * flush half done. Returns at once when the file did not change since the handle was opened.
   * @throws H5StoreError Unavailable when it does not settle within LIVE_SETTLE_WAIT_MS
   */
  private async settle(f: DomainFile): Promise<void> {
    const h = f.handle;
    const t0 = performance.now();
    for (;;) {
      let st: fs.Stats;
      try {
        st = fs.statSync(f.path);
      } catch {
        return; // the read reports it
      }
      if (sameStamp(h.stamp, stampOf(st))) return;
      const age = Date.now() - st.mtimeMs;
      // a clock far off (a network file system): nothing to learn from the mtime
      if (age >= LIVE_SETTLE_MS || age < -1000) return;
      if (performance.now() - t0 > LIVE_SETTLE_WAIT_MS) throw liveInconsistent();
      await sleep(Math.max(1, LIVE_SETTLE_MS - age));
    }
  }

  /**
   * Hold the read locks across asynchronous work (streaming). Call the returned release exactly
   * once.
   */
  async acquireRead(f: DomainFile): Promise<() => void> {
    if (!f.handle.local) return this.acquireReadMounted(f);
    for (let attempt = 0; ; attempt++) {
      const h = f.handle;
      if (h.fid !== undefined && h.readMode !== 'swmr' && h.foreignWriter()) await this.settle(f);
      if (!h.lock.tryRead()) await this.waitRead(h);
      let shared = false;
      let endSection: (() => void) | undefined;
      let retry: 'journal' | 'reopen' | undefined;
      try {
        let first: boolean;
        try {
          first = await h.xl.acquireShared();
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`Domain ${f.domain} not found`);
          throw this.refused(e);
        }
        shared = true;
        const end = (endSection = openSection());
        await hdf5Turn(() => this.prepareRead(f, first));
        let released = false;
        return () => {
          if (released) return;
          released = true;
          end();
          h.lastUsed = performance.now();
          h.xl.releaseShared();
          h.lock.releaseRead();
        };
      } catch (e) {
        endSection?.();
        if (shared) h.xl.releaseShared();
        h.lastUsed = performance.now();
        h.lock.releaseRead();
        if (e instanceof NeedsRepair && attempt === 0) retry = 'journal';
        else if (e instanceof Reopen && attempt < 4) retry = 'reopen';
        else if (e instanceof NeedsRepair) throw internal(`Domain ${f.domain} could not be repaired (${e.why})`);
        else if (e instanceof Reopen) throw liveInconsistent();
        else throw e;
      }
      if (retry === 'journal') await this.repair(f, 'journal');
      else {
        // the reads in flight finish on the handle they have; then this one opens the file anew
        await h.lock.write();
        h.lock.releaseWrite();
      }
    }
  }

  /** `acquireRead` of a mounted object: the in-process lock, then its current version opened. */
  private async acquireReadMounted(f: DomainFile): Promise<() => void> {
    const h = f.handle;
    if (!h.lock.tryRead()) await this.waitRead(h);
    const endSection = openSection();
    try {
      await hdf5Turn(() => this.openMounted(f));
    } catch (e) {
      endSection();
      h.lock.releaseRead();
      throw e;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      endSection();
      h.lastUsed = performance.now();
      h.lock.releaseRead();
    };
  }

  /** Under the read lock of a mounted object: its current version opened (a new one is `changed`). */
  private openMounted(f: DomainFile): void {
    const h = f.handle;
    this.retiredUse(f);
    const src = h.source!;
    const stamp = src.stamp;
    if (h.fid !== undefined && !sameStamp(h.stamp, stamp)) this.closeHandle(h);
    if (h.fid === undefined) {
      if (this.openCount() >= this.opts.maxOpenFiles) this.closeLeastRecent();
      h.fid = src.open();
      h.writable = false;
      const changed = h.stamp !== undefined && !sameStamp(h.stamp, stamp);
      h.stamp = stamp;
      if (changed) this.happened(h, 'changed');
    }
    h.lastUsed = performance.now();
  }

  /** Wait for the in-process read lock (held or wanted by a writer), reported as a lock wait. */
  private async waitRead(h: FileHandle): Promise<void> {
    const t0 = performance.now();
    await h.lock.read();
    this.opts.observer?.lockWait('domain', (performance.now() - t0) / 1000);
  }

  /** A lock refusal (503) reported to the observer; other errors as they are. */
  private refused(e: unknown): unknown {
    if (e instanceof H5StoreError && e.code === 'Unavailable') {
      this.opts.observer?.lockRefused(/another program/.test(e.message) ? 'hdf5' : 'file');
    }
    return e;
  }

  /**
   * Check the file under the shared lock and open it read-only. The read that took the shared
   * lock (`first`) checks for changes of any kind; while other reads of this process hold it,
   * no writer that locks can have changed the file, but a program that writes without kernel
   * locks can: each new stat result (statCache.ts) is compared with the handle's stamp, and a
   * change reopens the file once the reads in flight are done with the old handle (`Reopen`).
   * Nothing here writes the file: one with status flags is opened as they say (`openRead`).
   * @throws NeedsRepair (an interrupted write of an h5store process: its journal), Reopen
   */
  private prepareRead(f: DomainFile, first: boolean): void {
    const h = f.handle;
    this.retiredUse(f);
    const st = this.statHandle(f);
    if (!first && h.fid !== undefined) {
      if (st === h.checkedStat || sameStamp(h.stamp, stampOf(st))) {
        h.checkedStat = st;
        h.lastUsed = performance.now();
        return;
      }
      if (h.lock.readerCount > 1) throw new Reopen();
    }
    const hdr = h.xl.header();
    // Under the shared lock no live writer can be in a transaction: an active journal was left
    // by a process that died while writing.
    if (hdr.kind === 'ok' && hdr.header.active) throw new NeedsRepair('journal');
    const counter = hdr.kind === 'ok' ? hdr.header.counter : hdr.kind === 'none' ? 0n : -2n;
    const stamp = stampOf(this.statNow(f, st));
    if (h.fid !== undefined && (counter !== h.counter || !sameStamp(h.stamp, stamp))) this.closeHandle(h);
    if (h.fid === undefined) {
      if (this.openCount() >= this.opts.maxOpenFiles) this.closeLeastRecent();
      const before = h.readMode;
      const fid = this.openRead(f);
      const id = handleIdentity(fid);
      if (id.ino !== h.ino || id.dev !== h.dev) {
        h5.closeFile(fid);
        throw new H5StoreError('Unavailable', 'The domain file was replaced during the request; try again', { retryAfter: 1 });
      }
      h.fid = fid;
      h.writable = false;
      // changed since this process last saw it (its first sight is no change)
      const seen = h.counter !== -1n || h.stamp !== undefined;
      const byProcess = seen && h.counter !== counter;
      const byProgram = seen && !byProcess && !sameStamp(h.stamp, stamp);
      h.counter = counter;
      h.stamp = stamp;
      if (byProgram) h.noteForeignChange();
      // A SWMR writer only appends (libhdf5 1.10 creates, deletes or renames nothing in SWMR mode)
      if (byProgram && before === 'swmr' && h.readMode === 'swmr') this.happened(h, 'appended');
      else if (byProcess || byProgram) this.happened(h, 'changed');
    }
    // the shared lock is held, the journal counter and a stat just read say `h.stamp`
    h.verifiedAt = Date.now();
    h.checkedStat = st;
    h.lastUsed = performance.now();
  }

  /**
   * Open the file read-only as its superblock's status flags say (objects.ts `ReadMode`) and
   * note the mode in `readMode`. The flags are looked at again when a writer opened or closed
   * the file between the look and the open.
   */
  private openRead(f: DomainFile): Hid {
    const h = f.handle;
    for (let i = 0; ; i++) {
      const mode = readModeOf(superblockInfo(h.xl.dataFd!).flags);
      try {
        const fid = h5.openFile(f.path, false, mode);
        h.readMode = mode;
        return fid;
      } catch (e) {
        if (i < 2 && e instanceof Hdf5Error && (e.mentions('already open for write') || e.mentions('not already open for SWMR'))) continue;
        if (legacyLockState(h.realPath) === 'stale') throw needsAdminRepair(f.domain, 'legacy-lock', e);
        throw e;
      }
    }
  }

  /** stat the domain's path; it must still be this handle's file. */
  private statHandle(f: DomainFile): fs.Stats {
    let st: fs.Stats;
    try {
      st = this.stats.stat(f.path);
    } catch {
      this.closeHandle(f.handle);
      throw notFound(`Domain ${f.domain} not found`);
    }
    if (!st.isFile()) throw notFound(`Domain ${f.domain} not found`);
    if (st.ino !== Number(f.handle.ino)) {
      throw new H5StoreError('Unavailable', 'The domain file was replaced during the request; try again', { retryAfter: 1 });
    }
    return st;
  }

  /**
   * The file's stat now, to go with the journal counter just read under the lock: the stat
   * cache's `st` may predate the last write of another h5store process (a sibling worker), and a
   * stale stamp paired with that write's counter made its next read take the write for another
   * program's (503s "being written by another program", issue #24 item 13 with issue #26).
   * Falls back to `st` when the file cannot be stat'ed now (the next request reports it).
   */
  private statNow(f: DomainFile, st: fs.Stats): fs.Stats {
    try {
      return fs.statSync(f.path);
    } catch {
      return st;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /**
   * Run a write: exclusive locks, a journal transaction around a read-write handle, `fn`,
   * `H5Fflush`, commit. When `fn` (or the flush or commit) fails, the transaction is rolled back
   * and the error rethrown: a failed request leaves the file as it was.
   * @throws H5StoreError NotFound when the file is missing; Unavailable (503, Retry-After) when
   *   another process holds it for longer than `lockWaitMs`; Forbidden when it is read-only
   */
  async write<T>(f: DomainFile, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    const h = f.handle;
    if (!h.local) throw forbidden(h.source!.readOnlyMessage);
    if (h.lock.idle) await h.lock.write();
    else {
      const t0 = performance.now();
      await h.lock.write();
      this.opts.observer?.lockWait('domain', (performance.now() - t0) / 1000);
    }
    let keep = false;
    let endSection: (() => void) | undefined;
    try {
      const fresh = !h.xl.holdsExclusive;
      if (fresh) {
        const t0 = performance.now();
        try {
          await h.xl.acquireExclusive();
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`Domain ${f.domain} not found`);
          throw this.refused(e);
        }
        this.opts.observer?.lockWait('file', (performance.now() - t0) / 1000);
        h.sessionStart = performance.now();
      }
      endSection = openSection();
      await hdf5Turn(() => this.prepareWrite(f, fresh));
      const jf = h.jf!;
      let result: T;
      try {
        result = await fn(f);
        keep = await hdf5Turn(() => {
          h5.flushFile(h.fid!);
          // Files with a version-3 superblock carry "open for writing" flags while open read-write:
          // they are closed (in the transaction) after every write.
          const kept = h.sbVersion < 3 && h.lock.writerWaiting && performance.now() - h.sessionStart < this.burstMs && !h.xl.othersWaiting();
          if (!kept && h.sbVersion >= 3) this.closeHandle(h);
          return kept;
        });
        h.counter = await jf.commit();
        if (h.fid === undefined) h.jf = undefined;
      } catch (e) {
        keep = false;
        try {
          await hdf5Turn(() => this.rollbackFailed(f, e));
        } catch (e2) {
          // The journal stays active on disk: the next request repairs the file.
          this.log.warn({ domain: f.domain, err: (e2 as Error).message }, 'rolling back a failed write failed; retried on next use');
        } finally {
          this.happened(h, 'writeFailed', f);
        }
        throw asStoreError(e);
      }
      try {
        h.stamp = stampOf(fs.statSync(f.path));
      } catch {
        h.stamp = undefined;
      }
      this.happened(h, 'written', f);
      return result;
    } finally {
      try {
        h.lastUsed = performance.now();
        if (!keep) await hdf5Turn(() => this.endSession(h));
      } finally {
        // whatever happened above, the file is let go: a lock kept here would hold every later
        // request of the file forever
        endSection?.();
        h.lock.releaseWrite();
      }
    }
  }

  /**
   * Under the exclusive lock: at the start of a session repair what needs it and notice changes
   * made by others; then begin a transaction on the read-write handle (reused when still
   * current, else opened through the journaling driver).
   */
  private prepareWrite(f: DomainFile, fresh: boolean): void {
    const h = f.handle;
    this.retiredUse(f);
    const st = this.statHandle(f);
    if (fresh) {
      const hdr = h.xl.header();
      if (hdr.kind === 'ok' && hdr.header.active) this.repairLocked(f, 'journal');
      const after = h.xl.header();
      const counter = after.kind === 'ok' ? after.header.counter : after.kind === 'none' ? 0n : -2n;
      const stamp = stampOf(this.statNow(f, st));
      if (h.counter !== counter || !sameStamp(h.stamp, stamp)) {
        // Written by someone else since this process last saw it (its first sight is no
        // change): a handle open on it has a stale view (closed writing nothing).
        this.closeHandle(h);
        const seen = h.counter !== -1n || h.stamp !== undefined;
        if (seen && h.counter === counter) h.noteForeignChange();
        h.counter = counter;
        h.stamp = stamp;
        if (seen) this.happened(h, 'changed');
      }
      if (h.fid !== undefined && !h.writable) this.closeHandle(h);
      this.refuseForeignWriter(f);
    }
    const counter = h.counter < 0n ? 0n : h.counter;
    if (h.fid === undefined) {
      const jf = new JournaledFile(h.xl.dataFd!, h.xl.lockFd!, { dev: h.dev, ino: h.ino }, this.durable, counter);
      jf.begin(counter);
      try {
        h.fid = h5Open(f.path, jf);
      } catch (e) {
        jf.rollback();
        // a program opened it for writing (without kernel locks) since the look at its flags
        if (e instanceof Hdf5Error && e.mentions('already open for write')) throw needsAdminRepair(f.domain, 'status-flags', undefined, superblockInfo(h.xl.dataFd!).flags);
        throw e;
      }
      h.jf = jf;
      h.writable = true;
      h.sbVersion = superblockInfo(h.xl.dataFd!).version;
    } else {
      h.jf!.begin(counter);
    }
    this.happened(h, 'writing', f);
  }

  /**
   * Under the exclusive lock, before a write session opens the file read-write: refuse it when
   * another program holds the file (issue #26: h5store never writes into a file another program
   * writes). Programs that lock (h5py's default) are kept out by the lock itself; the others show
   * as status flags in the superblock (409, until they close the file or an administrator
   * repairs it) or, without flags, as changes noticed close together (503).
   * @throws H5StoreError Conflict, Unavailable (both with Retry-After)
   */
  private refuseForeignWriter(f: DomainFile): void {
    const h = f.handle;
    if (legacyLockState(h.realPath) === 'stale') throw needsAdminRepair(f.domain, 'legacy-lock');
    const flags = superblockInfo(h.xl.dataFd!).flags;
    if (flags & 0b101) {
      this.opts.observer?.lockRefused('hdf5');
      throw needsAdminRepair(f.domain, 'status-flags', undefined, flags);
    }
    if (h.foreignWriterAtWork()) {
      // Changes of another program close together: one that writes without file locking may
      // still have it open, or one that locks wrote it several times and closed it (h5py
      // sessions one after the other). /proc tells them apart where it can.
      const held = this.writersElsewhere(h);
      if (held?.length === 0) return;
      this.opts.observer?.lockRefused('hdf5');
      const secs = Math.ceil(FOREIGN_WRITER_MS / 1000);
      const who = held ? `another program (pid ${held.join(', ')}) has the file open for writing without file locking` : `another program (without file locking) changed the file more than once in the last ${secs} s and may still be writing it`;
      throw new H5StoreError('Unavailable', `The domain is busy: ${who}; try again in ${secs} s`, { retryAfter: secs });
    }
  }

  /**
   * The other processes that have the file open for writing (openers.ts), not counting this
   * process and, under `serve --workers N`, its sibling workers (they keep a read-write handle
   * between their writes and wait for our lock); undefined when that cannot be known (no /proc,
   * or processes of other users that this one may not look at).
   */
  private writersElsewhere(h: FileHandle): number[] | undefined {
    const found = writersOf(Number(h.dev), Number(h.ino), new Set([process.pid]));
    if (!found || found.incomplete) return undefined;
    return this.opts.lockFamily === undefined ? found.pids : found.pids.filter((pid) => parentOf(pid) !== process.ppid);
  }

  /** After a failed write: close the handle (whatever libhdf5 flushes is journaled), roll back. */
  private rollbackFailed(f: DomainFile, cause: unknown): void {
    const h = f.handle;
    try {
      this.closeHandle(h);
    } catch {
      /* libhdf5's state may be off after the failure; the rollback restores the file */
    }
    const report = h.jf?.rollback();
    if (h.jf) h.counter = h.jf.commitCounter;
    h.jf = undefined;
    try {
      h.stamp = stampOf(fs.statSync(f.path));
    } catch {
      h.stamp = undefined;
    }
    if (report) {
      this.log.debug(
        { domain: f.domain, reason: cause instanceof Error ? cause.message : String(cause), ...report },
        'rolled back a failed write',
      );
    }
  }

  /**
   * End a write session: release the exclusive locks. The read-write handle stays open (it
   * serves the next requests while the file does not change; closing it later writes nothing).
   */
  private endSession(h: FileHandle): void {
    try {
      if (h.jf?.inTransaction) {
        try {
          this.closeHandle(h);
        } catch {
          /* the rollback restores the file */
        }
        try {
          h.jf?.rollback();
        } catch (e) {
          // The journal stays active on disk: the next use of the file repairs it (NeedsRepair).
          this.log.warn({ file: h.realPath, err: (e as Error).message }, 'rolling back an unfinished write failed; repaired on next use');
        }
        h.jf = undefined;
      }
    } finally {
      h.xl.releaseExclusive();
    }
  }

  /**
   * Hold a file (in-process write lock already taken by the caller) for libhdf5 to write in
   * place while it writes another file's virtual dataset: the exclusive cross-process lock, our
   * handle closed, the journaling driver allowed to open it read-write (vfd.ts
   * `allowDirectWrites`). Such writes are not journaled (docs/storage-format.md).
   * @param waitMs the longest wait for another process (default `lockWaitMs`; a sibling of
   *   `serve --workers N` is not waited for longer)
   * @returns the release (call once, after the write)
   * @throws H5StoreError Unavailable when another process holds the file past `waitMs`
   */
  async holdForDirectWrite(f: DomainFile, waitMs?: number): Promise<() => void> {
    const h = f.handle;
    if (!h.local) throw forbidden(h.source!.readOnlyMessage);
    const fresh = !h.xl.holdsExclusive;
    if (fresh) {
      try {
        // not longer than `waitMs`, also for a sibling: it may hold this file while it waits for
        // the one whose write reaches it (a wait in both directions ends only so)
        await h.xl.acquireExclusive(waitMs, false);
      } catch (e) {
        throw this.refused(e);
      }
    }
    let withdraw: (() => void) | undefined;
    // a section: libhdf5 writes this file on the main thread meanwhile (heavy.ts)
    const endSection = openSection();
    try {
      withdraw = await hdf5Turn(() => {
        // a source file another program writes is not written in place either (issue #26)
        if (fresh) this.refuseForeignWriter(f);
        this.closeHandle(h);
        return allowDirectWrites(h.dev, h.ino);
      });
    } catch (e) {
      endSection();
      if (fresh) this.endSession(h);
      throw e;
    }
    return () => {
      endSection();
      withdraw?.();
      // written behind the handle's back, by this process (not another program's change): a
      // new commit counter tells the other h5store processes so (a sibling worker took such a
      // write for another program's and refused writes for 2 s)
      if (fresh) this.countDirectWrite(h);
      h.stamp = currentStamp(h);
      this.happened(h, 'changed');
      h.lastUsed = performance.now();
      if (fresh) this.endSession(h);
    };
  }

  /**
   * Give a file libhdf5 wrote in place (`holdForDirectWrite`, exclusive lock held) a new commit
   * counter in its lock file's header, as a journaled write's commit does: other h5store
   * processes then see a change of an h5store process, not of another program (issue #26's
   * foreign-writer rules). Leaves a header with an active journal or a corrupt one alone.
   */
  private countDirectWrite(h: FileHandle): void {
    const fd = h.xl.lockFd;
    if (fd === undefined) return;
    const hdr = readHeader(fd);
    if (hdr.kind === 'corrupt' || (hdr.kind === 'ok' && hdr.header.active)) return;
    const base: JournalHeader = hdr.kind === 'ok' ? hdr.header : { counter: 0n, active: false, pid: process.pid, txn: 0n, baseEof: 0, dev: h.dev, ino: h.ino };
    const counter = base.counter + 1n;
    writeHeader(fd, { ...base, counter, txn: counter, pid: process.pid });
    h.counter = counter;
  }

  // -------------------------------------------------------------------------------------------
  // Repairs

  /** Take the file exclusively and roll back the interrupted write of an h5store process (read path, start-up). */
  private async repair(f: DomainFile, why: 'journal'): Promise<boolean> {
    const h = f.handle;
    await h.lock.write();
    try {
      await h.xl.acquireExclusive();
      try {
        return await hdf5Turn(() => {
          this.statHandle(f);
          return this.repairLocked(f, why);
        });
      } finally {
        this.endSession(h);
      }
    } finally {
      h.lock.releaseWrite();
    }
  }

  /**
   * Repair a file held exclusively, closed first: roll back an interrupted transaction of an
   * h5store process (its journal), or (only for `adminRepair`) clear the superblock status flags
   * and set the EOA a crashed writer left (`h5clear -s --increment=0`), and remove an older
   * h5store's stale lock directory. Logged at warn level. A no-op when the reason is gone
   * (another process repaired it first).
   * @returns true when the file was changed
   */
  private repairLocked(f: DomainFile, why: Repair): boolean {
    const h = f.handle;
    this.closeHandle(h);
    const dataFd = h.xl.dataFd!;
    const lockFd = h.xl.lockFd!;
    if (why === 'journal') {
      const hdr = h.xl.header();
      if (hdr.kind !== 'ok' || !hdr.header.active) return false;
      const jh: JournalHeader = hdr.header;
      if (jh.dev !== h.dev || jh.ino !== h.ino) {
        writeHeader(lockFd, { ...jh, active: false, counter: jh.txn });
        this.log.warn({ domain: f.domain, txn: jh.txn.toString(), pid: jh.pid }, 'discarded the journal of an interrupted write: it belongs to a file since replaced');
      } else {
        const report = applyRollback(dataFd, lockFd, jh, this.durable);
        this.log.warn({ domain: f.domain, ...report }, `rolled back a write interrupted when process ${jh.pid} died`);
      }
    } else {
      const flags = superblockInfo(dataFd).flags;
      if (why === 'status-flags' && !(flags & 0b101)) return false;
      const hdr = h.xl.header();
      const counter = hdr.kind === 'ok' ? hdr.header.counter : 0n;
      const jf = new JournaledFile(dataFd, lockFd, { dev: h.dev, ino: h.ino }, this.durable, counter);
      jf.begin();
      let report;
      try {
        report = repairStatusAndEoa(f.path, jf);
        jf.commitSync();
      } catch (e) {
        jf.rollback();
        throw e;
      }
      if (why === 'legacy-lock') {
        const legacy = legacyLockOf(h.realPath);
        if (legacy) fs.rmSync(legacy, { recursive: true, force: true });
      }
      this.log.warn(
        { domain: f.domain, statusFlags: flags, ...report },
        why === 'legacy-lock'
          ? 'repaired a file an older h5store process was writing when it died (EOA set to the end of file, stale lock removed)'
          : 'repaired a file a crashed program left open for writing (superblock status flags cleared, EOA set to the end of file)',
      );
    }
    const after = h.xl.header();
    h.counter = after.kind === 'ok' ? after.header.counter : 0n;
    h.stamp = currentStamp(h); // this process changed it (not another program)
    h.readMode = 'plain';
    this.happened(h, 'changed');
    return true;
  }

  /**
   * What an administrator asked for (`h5store repair DOMAIN`, issue #26 item 1): under the file's
   * exclusive locks, roll back an interrupted h5store write, repair what an older h5store left
   * (stale lock directory: EOA), and clear the status flags a crashed program left in the
   * superblock (`h5clear -s --increment=0`). The flags of a program still at work look the same:
   * unless `force`, the file must not change for `quietMs` first (a live writer without kernel
   * locks changes it; one with locks is waited for by the lock, then refused with 503).
   * Every repair is logged at warn level.
   * @returns what was repaired (empty: nothing needed it)
   * @throws H5StoreError NotFound; Conflict when the file changed while it was watched;
   *   Unavailable when another process holds it past `lockWaitMs`
   */
  async adminRepair(domain: string, fsPath: string, opts: { quietMs?: number; force?: boolean } = {}): Promise<Repair[]> {
    const f = this.entry(domain, fsPath);
    const h = f.handle;
    if (!h.local) throw forbidden(h.source!.readOnlyMessage);
    const quietMs = opts.force ? 0 : (opts.quietMs ?? 2000);
    if (quietMs > 0) {
      const before = stampOf(fs.statSync(fsPath));
      await sleep(quietMs);
      if (!sameStamp(before, stampOf(fs.statSync(fsPath)))) {
        throw new H5StoreError('Conflict', `${domain} changed during the ${quietMs} ms it was watched: a program is still writing it. Nothing was repaired (--force repairs anyway)`, { retryAfter: 5 });
      }
    }
    await h.lock.write();
    try {
      try {
        await h.xl.acquireExclusive();
      } catch (e) {
        throw this.refused(e);
      }
      try {
        return await hdf5Turn(() => {
          this.statHandle(f);
          const done: Repair[] = [];
          if (this.repairLocked(f, 'journal')) done.push('journal');
          if (legacyLockState(h.realPath) === 'stale' && this.repairLocked(f, 'legacy-lock')) done.push('legacy-lock');
          if (this.repairLocked(f, 'status-flags')) done.push('status-flags');
          return done;
        });
      } finally {
        this.endSession(h);
      }
    } finally {
      h.lock.releaseWrite();
    }
  }

  /**
   * Roll back, at start-up, a write of a domain file that an h5store process was doing when it
   * died (its journal is active). Waits for nothing: a file another process holds is left to it
   * (the first read rolls it back). Nothing else is repaired without an administrator
   * (`adminRepair`). @returns true when something was rolled back
   */
  async recoverIfInterrupted(domain: string, fsPath: string): Promise<boolean> {
    let real: string;
    try {
      real = fs.realpathSync(fsPath);
    } catch {
      return false;
    }
    let active = false;
    let fd: number | undefined;
    try {
      fd = fs.openSync(lockFileOf(real), 'r');
      const hdr = readHeader(fd);
      active = hdr.kind === 'ok' && hdr.header.active;
    } catch {
      /* no lock file */
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    if (!active) return false;
    try {
      return await this.repair(this.entry(domain, fsPath), 'journal');
    } catch (e) {
      this.log.warn({ domain, err: (e as Error).message }, 'could not repair an interrupted write at start-up (retried on first use)');
      return false;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Creating and deleting files

  /**
   * Create a new, empty HDF5 file at `fsPath` atomically: written under a hidden temporary
   * name beside it, made durable, then hard-linked to its name (which fails when the name
   * exists: no file is ever replaced) and the temporary name removed.
   * @returns false when `fsPath` exists
   */
  async createFile(fsPath: string, tmpPath: string, opts: { trackOrder?: boolean }): Promise<boolean> {
    // libhdf5 work like any other: never while a call runs on the worker thread (heavy.ts)
    const endSection = openSection();
    try {
      return await hdf5Turn(() => {
        const fid = h5.createFile(tmpPath, opts);
        h5.closeFile(fid);
        if (this.durable) {
          const fd = fs.openSync(tmpPath, 'r');
          try {
            fs.fdatasyncSync(fd);
          } finally {
            fs.closeSync(fd);
          }
        }
        try {
          fs.linkSync(tmpPath, fsPath);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
          throw e;
        }
        if (this.durable) syncDir(fsPath.slice(0, fsPath.lastIndexOf('/')) || '/');
        return true;
      });
    } finally {
      endSection();
      fs.rmSync(tmpPath, { force: true });
    }
  }

  /**
   * Delete a domain file: under the exclusive locks, close it, unlink it and its lock file
   * (and a legacy lock directory). When the domain is a symbolic link (`linkPath`), only the
   * link is removed.
   */
  async deleteFile(f: DomainFile, linkPath = f.path): Promise<void> {
    const h = f.handle;
    if (!h.local) throw forbidden(h.source!.readOnlyMessage);
    await h.lock.write();
    try {
      await h.xl.acquireExclusive();
      try {
        await hdf5Turn(() => {
          this.closeHandle(h);
          if (linkPath !== f.path && fs.lstatSync(linkPath).isSymbolicLink()) {
            fs.unlinkSync(linkPath); // the file stays, under its other names
            return;
          }
          fs.unlinkSync(f.path);
          fs.rmSync(h.xl.lockPath, { force: true });
          const legacy = legacyLockOf(h.realPath);
          if (legacy) fs.rmSync(legacy, { recursive: true, force: true });
          if (this.durable) syncDir(f.path.slice(0, f.path.lastIndexOf('/')) || '/');
        });
      } finally {
        this.endSession(h);
      }
    } finally {
      h.lock.releaseWrite();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Handles

  /**
   * Close a file's libhdf5 handle now (no-op when closed). A read-write handle closed outside a
   * transaction writes nothing (the journaling driver drops what `H5Fclose` would still write:
   * see `JournaledFile.dropped`), so it needs no lock; inside one, the close is journaled.
   */
  private closeHandle(h: FileHandle): void {
    if (h.fid === undefined) return;
    const fid = h.fid;
    const wasWritable = h.writable;
    h.fid = undefined;
    h.writable = false;
    const inTxn = !!h.jf?.inTransaction;
    try {
      h5.closeFile(fid);
    } catch (e) {
      // Outside a transaction nothing is written: a failing close (libhdf5 reading a file
      // another program changed meanwhile) loses nothing. Inside one, the caller rolls back.
      if (inTxn) throw e;
      this.log.debug({ file: h.realPath, err: (e as Error).message }, 'closing a stale handle failed');
    } finally {
      if (h.jf && !h.jf.inTransaction) {
        if (h.jf.dropped) this.log.debug({ file: h.realPath, writes: h.jf.dropped }, 'closed a read-write handle without writing');
        h.jf = undefined;
      }
    }
    // Closed inside a transaction, the close wrote the file (this process's write): its stamp
    // now. Outside one it wrote nothing, and the stamp stays the one last seen: a stat now
    // would take in what another program changed meanwhile, and hide that change.
    if (!wasWritable || !inTxn) return;
    try {
      h.stamp = stampOf(fs.statSync(h.realPath));
    } catch {
      h.stamp = undefined;
    }
  }

  /** The deleted links and attributes of a domain name (see `DeletedNames`). */
  private deletedNames(domain: string): DeletedNames {
    let gone = this.goneIds.get(domain);
    if (!gone) this.goneIds.set(domain, (gone = new DeletedNames(domain, this.opts.onDeleted)));
    return gone;
  }

  /**
   * A link or attribute of `domain` that another process of the cluster deleted (`gone`) or made
   * again (changeFeed.ts): answered 410 here too (or no longer).
   */
  noteDeletedElsewhere(domain: string, what: string, gone: boolean): void {
    this.deletedNames(domain).noteElsewhere(what, gone);
  }

  /** Forget a domain entirely (after DELETE /). */
  forget(domain: string): void {
    this.directoryChanged();
    const known = this.domains.get(domain);
    if (!known) return;
    this.domains.delete(domain);
    this.unref(known.f);
  }

  private openCount(): number {
    let n = 0;
    for (const h of this.handles.values()) if (h.fid !== undefined) n++;
    return n;
  }

  private closeLeastRecent(): void {
    let oldest: FileHandle | undefined;
    for (const h of this.handles.values()) {
      if (h.fid !== undefined && h.idle && (!oldest || h.lastUsed < oldest.lastUsed)) oldest = h;
    }
    if (oldest) this.closeHandle(oldest);
  }

  /** Close handles idle for longer than `idleCloseMs`, and the descriptors of unused files. */
  closeIdle(now = performance.now()): void {
    if (hdf5Busy()) return; // a long libhdf5 call runs on the worker thread: next sweep
    for (const h of [...this.handles.values()]) {
      // A burst whose next writer never came (should not happen): end it.
      if (h.local && h.xl.holdsExclusive && h.lock.idle && now - h.lastUsed >= this.burstMs) this.endSession(h);
      if (!h.idle || now - h.lastUsed < (h.source?.idleCloseMs ?? this.opts.idleCloseMs)) continue;
      if (h.users.size === 0) this.dropHandle(h);
      else {
        this.closeHandle(h);
        if (h.local) h.xl.close();
      }
    }
  }

  /** The last `openIdCount` (while the worker thread is in libhdf5, asking would have to wait). */
  private lastIdCount = 0;

  /**
   * Open object ids over all files, for leak checks and metrics; while a libhdf5 call runs on the
   * worker thread (heavy.ts) the count of the last time (a scrape never waits for, or fails on, it).
   */
  openIdCount(): number {
    if (hdf5Busy()) return this.lastIdCount;
    let n = 0;
    for (const h of this.handles.values()) if (h.fid !== undefined) n += h5.openIdCount(h.fid);
    this.lastIdCount = n;
    return n;
  }

  /** Number of files currently open. */
  get openFiles(): number {
    return this.openCount();
  }

  /** Close everything (shutdown). */
  closeAll(): void {
    clearInterval(this.sweeper);
    for (const h of this.handles.values()) {
      try {
        if (h.local && h.xl.holdsExclusive) this.endSession(h);
        this.closeHandle(h);
      } catch {
        /* shutting down */
      }
      if (h.local) h.xl.close();
    }
  }
}

/**
 * A file-system failure while writing (ENOSPC, EIO, ...) as an H5StoreError; anything else as is.
 */
function asStoreError(e: unknown): unknown {
  if (e instanceof H5StoreError) return e;
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return new H5StoreError('Internal', `The file system failed while writing (${code}); the write was rolled back`);
  }
  return e;
}

/** The stamp of a file on disk now (undefined when it cannot be stat'ed): after this process changed it. */
function currentStamp(h: FileHandle): FileStamp | undefined {
  try {
    return stampOf(fs.statSync(h.realPath));
  } catch {
    return undefined;
  }
}

/** Open read-write through the journaling driver; errors classified as for read-only opens. */
function h5Open(path: string, jf: JournaledFile) {
  try {
    return openJournaled(path, jf);
  } catch (e) {
    throw h5.openFailure(path, e, true);
  }
}
