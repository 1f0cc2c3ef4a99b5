/**
 * The store's domains as files (a part of the `Store` facade, store.ts): a domain name to its
 * file (a local file, or an object of a read-only mount), and reads and writes run on it under
 * its locks (`read`, `readRemembered`, `readWalked`, `readInSteps`, `write`); what the
 * cluster's other workers changed (`syncCluster`, `publish`); the start-up recovery of
 * interrupted writes; the version of a file as the read path sees it. Owns the data
 * directory's paths, the file cache, the folder ACL sidecars and the mounts, and which domains
 * were deleted in this process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { badRequest, gone, notFound } from '../errors.js';
import { hdf5Pause, hdf5Turn } from '../hdf5/heavy.js';
import * as h5 from '../hdf5/objects.js';
import type { ObjectKind } from '../hdf5/objects.js';
import { FolderAcls } from './access/acls.js';
import { type Mount, isUnder, readOnly } from './mounts/mount.js';
import type { DomainFile } from './objects/domainFile.js';
import { noteDomainKey } from './objects/ids.js';
import { DomainPaths, FOLDER_META, LOCK_SUFFIX, normalizeDomain } from './objects/paths.js';
import type { ChangeEvent, ChangeFeed } from './session/changeFeed.js';
import { FileCache, type FileLog, type StoreObserver } from './session/files.js';
import { serviceName } from './session/servicefiles.js';
import { StatCache } from './session/statCache.js';
import { STAMP_TICK_MS } from './session/fileHandle.js';

export interface StoreOptions {
  root: string;
  idleCloseMs: number;
  maxOpenFiles: number;
  /** Owner reported for domains and folders that record none. */
  defaultOwner: string;
  pageBytes: number;
  maxPoints: number;
  /** Told about lock waits and refusals (metrics). */
  observer?: StoreObserver;
  /** Read-only subtrees served from elsewhere (S3 archives, see mount.ts). */
  mounts?: Mount[];
  /** The other limits (src/store/access/limits.ts); defaults for those not given. */
  maxChunkBytes?: number;
  maxDatasetBytes?: number;
  maxSelectionBytes?: number;
  maxAttributeBytes?: number;
  maxBroadcastBytes?: number;
  maxInitializerBytes?: number;
  parallelChunkMinBytes?: number;
  parallelChunkSpareCores?: number;
  maxObjectsPerAnswer?: number;
  maxPathDepth?: number;
  /** Longest wait for a file another process holds, then 503 (ms; default 5000). */
  lockWaitMs?: number;
  /** fsync policy of writes (default `always`). */
  fsync?: 'always' | 'never';
  /** How long a stat of a domain path is reused by reads (ms; statCache.ts; default 2, 0: never). */
  statCacheMs?: number;
  /** How long the shared lock of a file is kept after its last read (ms; xlock.ts; default 0). */
  readLeaseMs?: number;
  /** Longest hold of a file's shared lock in one piece, and the gap after it (ms; xlock.ts; defaults 10, 1). */
  readHoldMs?: number;
  readGapMs?: number;
  /** Change feeds (`follow`, liveFeed.ts): how often a followed domain is looked at (ms; default 100), followers at most (default 1000). */
  eventPollMs?: number;
  maxEventStreams?: number;
  /** Where repairs of crashed writes are reported. */
  log?: FileLog;
  /**
   * Dropped-in files are private to those their folder's ACL names (its `default` entry does
   * not apply to them; `droppedInAcl`): true when the server has users and `defaultPublic` is
   * off. Default false (no users: everyone is `default`).
   */
  droppedInPrivate?: boolean;
  /**
   * The other workers of `serve --workers N` (changeFeed.ts): deletions, creations and ACL
   * changes are told to them, and theirs applied here, before each request's first store call.
   */
  changes?: ChangeFeed;
  /** The number the workers of one `serve --workers N` share (xlock.ts): no 503 for waiting on a sibling. */
  lockFamily?: number;
}

/** A local domain file's version as `Store.fileVersion` gives it (conditional.ts's ETags). */
export interface FileVersion {
  /** The file's inode, size, mtime and ctime, as text. */
  tag: string;
  /** Its mtime (ms since the epoch). */
  mtimeMs: number;
  /** Its mtime as an HTTP date, once a second old (HTTP dates have whole seconds); else undefined. */
  lastModified: string | undefined;
}

/** Longest run of a walk over a domain's objects between two turns of the event loop (ms; `readWalked`). */
const WALK_SLICE_MS = 10;

export class DomainFiles {
  readonly paths: DomainPaths;
  readonly files: FileCache;
  /** Folder ACL sidecars (cached briefly). */
  readonly folders: FolderAcls;
  readonly mounts: Mount[];
  /** Domains and folders deleted in this process (or by another worker): their paths answer 410. */
  private readonly goneDomains = new Set<string>();
  /** `fileVersion`'s answers by the stat result they were made of (statCache.ts reuses one for a few ms). */
  private readonly versions = new WeakMap<fs.Stats, FileVersion>();

  constructor(readonly opts: StoreOptions) {
    const stats = new StatCache(opts.statCacheMs);
    this.paths = new DomainPaths(opts.root, undefined, stats);
    this.folders = new FolderAcls(this.paths.realRoot, stats);
    this.files = new FileCache({
      paths: this.paths,
      stats,
      onDeleted: opts.changes ? (domain, what, g) => opts.changes!.publish({ t: g ? 'gone' : 'back', domain, what }) : undefined,
      idleCloseMs: opts.idleCloseMs,
      maxOpenFiles: opts.maxOpenFiles,
      lockWaitMs: opts.lockWaitMs,
      fsync: opts.fsync,
      readLeaseMs: opts.readLeaseMs,
      readHoldMs: opts.readHoldMs,
      readGapMs: opts.readGapMs,
      lockFamily: opts.lockFamily,
      log: opts.log,
      observer: opts.observer,
    });
    this.mounts = opts.mounts ?? [];
  }

  /** Note that `domain` was deleted (`gone`: its paths answer 410 instead of 404) or made again by this process. */
  noteGone(domain: string, gone: boolean): void {
    if (gone) this.goneDomains.add(domain);
    else this.goneDomains.delete(domain);
  }

  /** Close every open file and every mount (shutdown). Call with libhdf5 free. */
  close(): void {
    this.files.closeAll();
    for (const m of this.mounts) m.close();
  }

  /**
   * Apply what the other workers of the cluster changed since the last call (changeFeed.ts):
   * deleted and created domains and folders, deleted and re-created links and attributes, ACL
   * changes; any of them drops this process's short-lived stats, ACL views and path checks.
   * Called at the start of every request's first store call (`aclView`, `statOf`, `fileFor`):
   * one `fstat` when nothing changed. A no-op in a single process.
   */
  syncCluster(): void {
    const events = this.opts.changes?.poll();
    if (!events?.length) return;
    this.files.stats.clear();
    for (const e of events) this.applyChange(e);
  }

  /**
   * A GET's JSON remembered in the domain's view under `key` (`DomainFile.remembered`): answered
   * without the file's locks and libhdf5 when the file did not change since a read under its
   * locks verified it (files.ts `unchangedSinceVerified`), else computed (and remembered) by a
   * read as `read` runs it. `worth` as `remembered`'s. Callers must not mutate the result.
   * @throws as `read` and `compute`
   */
  async readRemembered<T>(domain: string, key: string, compute: (f: DomainFile) => T, worth?: (v: T) => boolean): Promise<T> {
    const f = await this.fileFor(domain);
    if (this.files.unchangedSinceVerified(f)) {
      const hit = f.rememberedOnly<T>(key);
      if (hit !== undefined) return hit;
    }
    return this.files.read(f, (ff) => ff.remembered(key, () => compute(ff), worth));
  }

  private applyChange(e: ChangeEvent): void {
    switch (e.t) {
      case 'removed':
        this.goneDomains.add(e.domain);
        if (e.key) noteDomainKey(e.key, e.domain);
        this.files.forget(e.domain);
        this.paths.forget(e.domain);
        this.folders.forget(this.paths.resolve(e.domain));
        break;
      case 'made':
        this.goneDomains.delete(e.domain);
        this.paths.forget(e.domain);
        this.folders.forget(this.paths.resolve(e.domain));
        break;
      case 'acl':
        this.folders.forget(this.paths.resolve(e.domain));
        break;
      case 'gone':
      case 'back':
        this.files.noteDeletedElsewhere(e.domain, e.what, e.t === 'gone');
        break;
    }
  }

  /** Tell the cluster's other workers (before the request that made the change is answered). */
  publish(e: ChangeEvent): void {
    this.opts.changes?.publish(e);
  }

  /**
   * Start-up scan of the data directory: roll back every write of an h5store process a crash
   * interrupted (an active journal in its lock file; what other programs left is repaired only
   * by `h5store repair`, `repairDomain`), and remove temporary files of domain creations a crash
   * interrupted.
   * Yields to the event loop between folders. @returns the number of files repaired
   */
  async recoverInterrupted(): Promise<number> {
    let repaired = 0;
    const walk = async (dir: string): Promise<void> => {
      let names: string[];
      try {
        names = await fs.promises.readdir(dir);
      } catch {
        return;
      }
      const present = new Set(names);
      for (const n of names) {
        const full = path.join(dir, n);
        if (n.endsWith(LOCK_SUFFIX)) {
          if (n.endsWith(`.new${LOCK_SUFFIX}`)) {
            try {
              if (Date.now() - fs.statSync(full).mtimeMs > 60_000) fs.rmSync(full, { force: true });
            } catch {
              /* gone */
            }
          }
          continue;
        }
        if (n === FOLDER_META) continue;
        let st: fs.Stats;
        try {
          st = fs.lstatSync(full);
        } catch {
          continue;
        }
        if (st.isDirectory()) {
          await walk(full);
          continue;
        }
        if (!st.isFile()) continue;
        if (!present.has(serviceName(n)) && !present.has(`.${n}${LOCK_SUFFIX}`)) continue;
        if (await this.files.recoverIfInterrupted(this.paths.toDomain(full), full)) repaired++;
      }
      await new Promise((r) => setImmediate(r));
    };
    await walk(this.paths.resolve('/'));
    return repaired;
  }

  /** The mount that serves `domain`, if any (mounts shadow the data directory). */
  mountOf(domain: string): Mount | undefined {
    for (const m of this.mounts) if (isUnder(domain, m.at)) return m;
    return undefined;
  }

  /**
   * The file system path and stat of a domain or folder.
   * @throws Gone when deleted earlier in this process, NotFound otherwise when missing.
   */
  statOf(domain: string): { p: string; st: fs.Stats } {
    this.syncCluster();
    const p = this.paths.resolve(domain);
    try {
      return { p, st: this.files.stats.stat(p) };
    } catch {
      if (this.goneDomains.has(domain)) throw gone(`Domain ${domain} has been deleted`);
      throw notFound(`Domain ${domain} not found`);
    }
  }

  /**
   * The version of a local domain file as the read path sees it now (its stat, reused for
   * `statCacheMs`): a tag of the file's inode, size, mtime and ctime, and its mtime (ms). An
   * answer made after this call is of this version or a later one, never an earlier one (the
   * read path compares the same stats), so the tag may label it (ETag, issue #26 item 4).
   * Undefined for folders, mounted objects, missing files, and files changed in the last
   * `settleMs` (a change in the same clock tick as the last could leave the stamp as it was).
   */
  fileVersion(domain: string, settleMs = STAMP_TICK_MS): FileVersion | undefined {
    if (this.mountOf(domain)) return undefined;
    let st: fs.Stats;
    try {
      st = this.files.stats.stat(this.paths.resolve(domain));
    } catch {
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const now = Date.now();
    if (now - st.mtimeMs < settleMs) return undefined;
    // the stat cache hands out the same result for a few ms: its version is made once
    let v = this.versions.get(st);
    if (v === undefined || (v.lastModified === undefined && now - st.mtimeMs >= 1000)) {
      v = {
        tag: `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`,
        mtimeMs: st.mtimeMs,
        lastModified: now - st.mtimeMs >= 1000 ? new Date(st.mtimeMs).toUTCString() : undefined,
      };
      this.versions.set(st, v);
    }
    return v;
  }

  /** Lookup of a domain file (not a folder): 404/410 when missing, 400 for a folder. */
  fileOf(domain: string): DomainFile {
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    if (!st.isFile()) throw badRequest(`${domain} is not a regular file`);
    return this.files.entry(domain, p);
  }

  /**
   * The file entry of a domain: a local file, or an object of a read-only mount (whose datasets
   * may reach no other file: reach.ts refuses them, `FileSource.reachRefusal`).
   */
  async fileFor(domain: string): Promise<DomainFile> {
    this.syncCluster();
    const m = this.mountOf(domain);
    if (!m) return this.fileOf(domain);
    return m.file(domain, this.files);
  }

  /**
   * Run a read on a domain file (the file cache waits while a long libhdf5 call runs on the
   * worker thread, src/hdf5/heavy.ts, so the event loop stays free meanwhile).
   */
  async read<T>(domain: string, fn: (f: DomainFile) => T): Promise<T> {
    const f = await this.fileFor(domain);
    return this.files.read(f, fn);
  }

  /**
   * Run a read that needs every object of the domain (`all`: address -> kind, without the
   * reserved group's internal objects), found first by a walk in slices of `WALK_SLICE_MS`
   * with the event loop running between them, the read lock held throughout (issue #24 item 9:
   * one walk of a large or deep file kept every other request waiting for seconds).
   * @param max stop the walk after this many objects (`truncated` then tells)
   * @param fn may return a promise (the lock is held until it settles) and call `pause` between
   *   pieces of long work that needs no libhdf5 call: the event loop runs, then libhdf5 is free
   */
  async readWalked<T>(
    domain: string,
    fn: (f: DomainFile, all: Map<bigint, ObjectKind | undefined>, truncated: boolean, pause: () => Promise<void>) => T | Promise<T>,
    max?: number,
  ): Promise<T> {
    const f = await this.fileFor(domain);
    const release = await this.files.acquireRead(f);
    let walk: h5.ObjectWalk | undefined;
    try {
      for (;;) {
        const done = await hdf5Turn(() => (walk ??= new h5.ObjectWalk(f.h, { max })).step(WALK_SLICE_MS));
        if (done) break;
        await nextTurn();
      }
      const w = walk!;
      return await hdf5Turn(() => fn(f, f.allObjects(w.kinds), w.truncated, hdf5Pause));
    } finally {
      walk?.close();
      release();
    }
  }

  /**
   * Run `fn` on a domain file with its read lock held across `fn`'s awaits (long reads that let
   * other requests run: `pause()` yields to the event loop, then waits until libhdf5 is free,
   * heavy.ts). Writers of this process wait meanwhile, as for a streamed value read.
   */
  async readInSteps<T>(domain: string, fn: (f: DomainFile, pause: () => Promise<void>) => Promise<T>): Promise<T> {
    const f = await this.fileFor(domain);
    const unlock = await this.files.acquireRead(f);
    try {
      return await hdf5Turn(() => fn(f, hdf5Pause));
    } finally {
      unlock();
    }
  }

  /**
   * Run a write on a domain file (flushed before the locks are released); waits as `read`; 403
   * under a mount.
   */
  async write<T>(domain: string, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    const m = this.mountOf(domain);
    if (m) throw readOnly(m, domain);
    return this.files.write(this.fileOf(domain), fn);
  }

  /** Whether a domain path names an existing domain file (no error for bad or missing paths). */
  isDomainFile(domain: string): boolean {
    try {
      return fs.statSync(this.paths.resolve(normalizeDomain(domain))).isFile();
    } catch {
      return false;
    }
  }
}
