/**
 * The store: domains and folders on disk, and every object operation, behind locks.
 *
 * This is the one entry point of the HTTP handlers (DESIGN.md section 7). Methods take a domain
 * path (already normalised by `normalizeDomain`) and return plain data; they know nothing of
 * Koa or HTTP statuses. Reads run under the domain's shared lock, writes under its exclusive
 * lock plus the cross-process file lock, and are flushed before the lock is released.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Acl, droppedInAcl } from '../auth/acl.js';
import { RawJson } from '../codec/json.js';
import { H5StoreError, badRequest, conflict, gone, notFound } from '../errors.js';
import { hdf5Busy, hdf5Pause, hdf5Turn } from '../hdf5/heavy.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LIB_INFO, openObjectCount } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import type { ObjectKind } from '../hdf5/objects.js';
import { FolderAcls, type FileAcl, type FolderAcl, keptFileAcl, readFileAcl, writeFileAcl } from './access/acls.js';
import type { ChangeEvent, ChangeFeed } from './session/changeFeed.js';
import { fileStatus } from './session/fileStatus.js';
import { STAMP_TICK_MS } from './session/fileHandle.js';
import * as attrs from './objects/attributes.js';
import * as dsets from './objects/datasets.js';
import * as dtypes from './objects/datatypes.js';
import type { DomainFile } from './objects/domainFile.js';
import { FileCache, type FileLog, type StoreObserver } from './session/files.js';
import * as grove from './objects/grove.js';
import * as groups from './objects/groups.js';
import * as links from './objects/links.js';
import * as linkWrites from './objects/linkWrites.js';
import * as h5paths from './objects/h5paths.js';
import { type Mount, isUnder, readOnly } from './mounts/mount.js';
import { isHdf5Name } from './mounts/mountspec.js';
import { BufferPool, PagePool } from './values/pagepool.js';
import { domainKey, fileIdentity, noteDomainKey } from './objects/ids.js';
import { DomainPaths, FOLDER_META, LOCK_SUFFIX, isServiceName, normalizeDomain, parentDomain } from './objects/paths.js';
import { serviceName } from './session/servicefiles.js';
import { StatCache } from './session/statCache.js';
import { type Access, type AccessMode, type AclView, FLAG_FOR_MODE, allowAll } from './access/access.js';
import { DEFAULT_LIMITS, type Limits } from './access/limits.js';
import { type ReachedFile, storageKindOf } from './access/reach.js';
import * as values from './values.js';
import { type FileSnapshot, openSnapshot } from './session/download.js';
import { DOMAIN_OBJS_MAX, type DomainStats, type ObjectJsonOptions, computeDomainStats, domainObjects, objectJsonOf } from './objects/domainObjects.js';
import { type DomainQuery, rootAttributeRow } from './objects/domainQuery.js';
import { LRUCache } from 'lru-cache';
import { pageLimit, startAfterOrdered } from './objects/paging.js';
import { checkClientId, isClientIdForm } from './objects/clientIds.js';
import { entriesInCreatedOrder } from './objects/createdTimes.js';
import { extraCreationProperties, storeCreationProperties } from './objects/cprops.js';
import { DomainFeeds, type FeedObject, type FeedSnapshot, type Follower } from './session/liveFeed.js';

/** Most objects one batch create (POST /groups etc. with a list) makes (h5pyd 1.0 sends at most 300). */
export const MAX_BATCH_OBJECTS = 1000;

/** Children of a group described per turn of the event loop (h5grove's `/meta/` of large groups). */
const GROVE_SLICE = 500;

/** How long a value operation waits for the locks of the other domains it reaches (ms). */
const REACH_LOCK_WAIT_MS = 2000;

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

/** Domain or folder record (GET /, wire-reference 1.3). */
export interface DomainJson {
  class: 'domain' | 'folder';
  owner: string;
  created: number;
  lastModified: number;
  root?: string;
}

/** A folder listing item (GET /domains). */
export interface FolderItem extends DomainJson {
  name: string;
  /** File size in bytes (domains only). */
  size?: number;
  /** Another program holds the file open for writing (store/session/fileStatus.ts; listed from its status only). */
  beingWritten?: true;
}

export type { AclView } from './access/access.js';

/**
 * The object an ACL request is about: the domain/folder itself, an object of the domain by id
 * or by address, or the object at `h5path` (relative to the group `parentId`, else absolute).
 * With `place`, the group a new link at `h5path` goes into: the deepest existing group on the
 * way to its parent path (`h5paths.placeOfPath`; `implicit=1` creates the rest below it).
 */
export interface AclTarget {
  id?: string;
  h5path?: string;
  parentId?: string;
  addr?: bigint;
  place?: boolean;
}

/** Longest run of a walk over a domain's objects between two turns of the event loop (ms; `readWalked`). */
const WALK_SLICE_MS = 10;

/** The cache key of one version of a file: path, inode, size, mtime, ctime. */
function statsKey(p: string, st: fs.Stats): string {
  return `${p}\u0000${st.ino}\u0000${st.size}\u0000${st.mtimeMs}\u0000${st.ctimeMs}`;
}

export { DOMAIN_OBJS_MAX };

/** A change feed follows at most this many objects of a domain (liveFeed.ts; beyond: only ids asked for). */
export const FEED_MAX_OBJECTS = 2000;

/** An attribute JSON small enough to remember: no value, a scalar, at most 256 elements/characters, or value text of at most 64 KiB. */
function smallValue(a: { value?: unknown }): boolean {
  const v = a.value;
  if (typeof v === 'string') return v.length <= 4096;
  if (v instanceof RawJson) return v.text.length + (v.ignoreNanText?.length ?? 0) <= 64 * 1024;
  return !Array.isArray(v) || (v.length <= 256 && v.every((x) => !Array.isArray(x) || x.length <= 16));
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

export class Store {
  readonly paths: DomainPaths;
  readonly files: FileCache;
  readonly limits: Limits;
  /** Page buffers reused by streamed value reads (see pagepool.ts). */
  readonly pagePool: PagePool;
  /** Buffers reused for binary request bodies of value writes. */
  readonly bodyPool = new BufferPool();
  private readonly goneDomains = new Set<string>();
  /** Folder ACL sidecars (cached briefly). */
  readonly folders: FolderAcls;
  readonly mounts: Mount[];
  /** `verbose=1` statistics by file version (see `domainStats`). */
  private readonly statsCache = new LRUCache<string, DomainStats>({ max: 4096 });
  /**
   * `datasetIsLocal`'s answers, keyed by the file's version (fileVersion's tag: a write or
   * another program's change makes new keys), the domain and the dataset id; bounded.
   */
  private readonly localDatasets = new LRUCache<string, boolean>({ max: 8192 });
  /** `fileVersion`'s answers by the stat result they were made of (statCache.ts reuses one for a few ms). */
  private readonly versions = new WeakMap<fs.Stats, FileVersion>();
  /** ACL views of the last `statCacheMs` (see `aclView`). */
  private readonly recentViews = new Map<string, { view: AclView; at: number; generation: number }>();
  /** The change feeds of followed domains (`follow`). */
  private readonly feeds: DomainFeeds;

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
    this.limits = {
      pageBytes: opts.pageBytes,
      maxPoints: opts.maxPoints,
      maxChunkBytes: opts.maxChunkBytes ?? DEFAULT_LIMITS.maxChunkBytes,
      maxDatasetBytes: opts.maxDatasetBytes ?? DEFAULT_LIMITS.maxDatasetBytes,
      maxSelectionBytes: opts.maxSelectionBytes ?? DEFAULT_LIMITS.maxSelectionBytes,
      maxAttributeBytes: opts.maxAttributeBytes ?? DEFAULT_LIMITS.maxAttributeBytes,
      maxBroadcastBytes: opts.maxBroadcastBytes ?? DEFAULT_LIMITS.maxBroadcastBytes,
      maxInitializerBytes: opts.maxInitializerBytes ?? DEFAULT_LIMITS.maxInitializerBytes,
      parallelChunkMinBytes: opts.parallelChunkMinBytes ?? DEFAULT_LIMITS.parallelChunkMinBytes,
      parallelChunkSpareCores: opts.parallelChunkSpareCores ?? DEFAULT_LIMITS.parallelChunkSpareCores,
      maxObjectsPerAnswer: opts.maxObjectsPerAnswer ?? DEFAULT_LIMITS.maxObjectsPerAnswer,
      maxPathDepth: opts.maxPathDepth ?? DEFAULT_LIMITS.maxPathDepth,
    };
    this.pagePool = new PagePool(opts.pageBytes);
    h5paths.pathLimits.maxDepth = this.limits.maxPathDepth;
    this.feeds = new DomainFeeds(
      {
        snapshot: (domain, ids, max) => this.feedSnapshot(domain, ids, max),
        check: (domain) => this.read(domain, () => undefined),
        watch: (listener) => this.files.watch(listener),
      },
      { pollMs: opts.eventPollMs ?? 100, maxObjects: FEED_MAX_OBJECTS, maxFollowers: opts.maxEventStreams ?? 1000 },
    );
  }

  /**
   * Apply what the other workers of the cluster changed since the last call (changeFeed.ts):
   * deleted and created domains and folders, deleted and re-created links and attributes, ACL
   * changes; any of them drops this process's short-lived stats, ACL views and path checks.
   * Called at the start of every request's first store call (`aclView`, `statOf`, `fileFor`):
   * one `fstat` when nothing changed. A no-op in a single process.
   */
  private syncCluster(): void {
    const events = this.opts.changes?.poll();
    if (!events?.length) return;
    this.files.stats.clear();
    for (const e of events) this.applyChange(e);
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
  private publish(e: ChangeEvent): void {
    this.opts.changes?.publish(e);
  }

  /** The HDF5 library in use. */
  get libraryVersion(): string {
    return LIB_INFO.version;
  }

  /** Check that libhdf5 answers a call (readiness); returns its version. */
  checkLibrary(): string {
    // a call running on the worker thread (heavy.ts) shows it answers; asking would wait for it
    if (!hdf5Busy()) openObjectCount();
    return LIB_INFO.version;
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

  /** Close every open file (shutdown). Call with libhdf5 free (`closeWhenIdle` otherwise). */
  close(): void {
    this.feeds.close();
    this.files.closeAll();
    for (const m of this.mounts) m.close();
  }

  /** `close` once a libhdf5 call still running on the worker thread (heavy.ts) has ended (a server's shutdown). */
  async closeWhenIdle(): Promise<void> {
    await hdf5Turn(() => this.close());
  }

  /** The ACL of the local folder a mount point is in (it governs everything in the mount). */
  private mountFolderAcl(m: Mount): FolderAcl | null {
    const p = this.paths.resolve(parentDomain(m.at));
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(p);
    } catch {
      st = undefined;
    }
    return this.governingFolder(p, st);
  }

  /** The mount that serves `domain`, if any (mounts shadow the data directory). */
  mountOf(domain: string): Mount | undefined {
    for (const m of this.mounts) if (isUnder(domain, m.at)) return m;
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Domains and folders

  /**
   * The file system path and stat of a domain or folder.
   * @throws Gone when deleted earlier in this process, NotFound otherwise when missing.
   */
  private statOf(domain: string): { p: string; st: fs.Stats } {
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
   * The ACL that governs a dropped-in file from its governing folder's (`droppedInAcl`); none
   * when no folder up to the data root has an ACL (then `default_acl` decides, as for folders).
   */
  private droppedIn(folder: FolderAcl | null): Acl {
    return folder ? droppedInAcl(folder.acls, { private: !!this.opts.droppedInPrivate }) : {};
  }

  /**
   * `h5store repair DOMAIN` (issue #26 item 1): what only an administrator may have repaired in a
   * domain file (files.ts `adminRepair`: status flags a crashed program left, an older h5store's
   * stale lock, an interrupted h5store write). Never done by a read or a write.
   * @returns what was repaired (empty: nothing needed it)
   * @throws H5StoreError NotFound, BadRequest (a folder), Forbidden (under a mount), Conflict
   *   (the file changed while watched: a program still writes it), Unavailable (held by another process)
   */
  async repairDomain(domain: string, opts: { quietMs?: number; force?: boolean } = {}): Promise<string[]> {
    const m = this.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    if (!st.isFile()) throw badRequest(`${domain} is not a regular file`);
    return this.files.adminRepair(domain, p, opts);
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

  /**
   * Whether what a dataset's routes answer (its extent, its values) comes from its domain file
   * alone: not for datasets whose values live in other files (external storage, virtual
   * datasets: reach.ts `storageKindOf`, learnt once per dataset). For the ETags of conditional.ts.
   * @throws H5StoreError NotFound/Gone, BadRequest (not a dataset id)
   */
  async datasetIsLocal(domain: string, id: string): Promise<boolean> {
    // Asked before every conditional GET of a dataset: answered from the memo while the file's
    // version (its stats) is the one it was learnt under, without a read of its own (a second
    // lock and file check per GET made dataset GETs 2.4x slower).
    const v = this.fileVersion(domain, 0);
    const key = v && `${v.tag}\u0000${domain}\u0000${id}`;
    const known = key === undefined ? undefined : this.localDatasets.get(key);
    if (known !== undefined) return known;
    const local = await this.read(domain, (f) => f.withId(id, 'dataset', (did, addr) => storageKindOf(f, did, addr) === 'plain'));
    if (key !== undefined) this.localDatasets.set(key, local);
    return local;
  }

  /**
   * Follow the changes of a domain (`GET /events`, liveFeed.ts): `f.change` hears its objects and
   * dataset shapes now (`initial`), then what changes, as soon as this process learns of it
   * (its writes at once; other programs' changes within `eventPollMs`). `ids`: only these objects.
   * @returns the function that stops following
   * @throws H5StoreError NotFound/Gone, BadRequest (a folder), Unavailable (too many followers)
   */
  async follow(domain: string, ids: string[] | undefined, f: Follower): Promise<() => void> {
    const { st } = this.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder: changes are followed per domain`);
    return this.feeds.follow(domain, ids, f);
  }

  /** The snapshot of a followed domain (liveFeed.ts `FeedSource.snapshot`). */
  private feedSnapshot(domain: string, ids: string[] | undefined, max: number): Promise<FeedSnapshot> {
    return this.read(domain, (f) => {
      const objects = new Map<string, FeedObject>();
      const add = (id: string, kind: ObjectKind) => {
        const collection = `${kind}s` as FeedObject['collection'];
        const o: FeedObject = { id, collection };
        if (kind === 'dataset') o.shape = dsets.getTypeAndShape(f, id).shape;
        objects.set(id, o);
      };
      let truncated = false;
      if (ids) {
        for (const id of ids) {
          const kind = id.startsWith('d-') ? 'dataset' : id.startsWith('g-') ? 'group' : id.startsWith('t-') ? 'datatype' : undefined;
          if (!kind) continue;
          try {
            f.resolve(id, kind);
            add(id, kind);
          } catch (e) {
            if (!(e instanceof H5StoreError) || e.status >= 500) throw e; // gone or not of this domain: left out
          }
        }
      } else {
        const all = f.allObjects();
        truncated = all.size > max;
        if (!truncated) {
          add(f.rootId, 'group');
          for (const [addr, kind] of all) if (kind && addr !== f.rootAddr) add(f.idOf(addr, kind), kind);
        }
      }
      return { objects, truncated, lastModified: (f.stamp?.mtimeMs ?? 0) / 1000 };
    });
  }

  /** Lookup of a domain file (not a folder): 404/410 when missing, 400 for a folder. */
  private fileOf(domain: string): DomainFile {
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    if (!st.isFile()) throw badRequest(`${domain} is not a regular file`);
    return this.files.entry(domain, p);
  }

  /**
   * The file entry of a domain: a local file, or an object of a read-only mount (whose datasets
   * may reach no other file: reach.ts refuses them, `FileSource.reachRefusal`).
   */
  private async fileFor(domain: string): Promise<DomainFile> {
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
   * A GET's JSON remembered in the domain's view under `key` (`DomainFile.remembered`): answered
   * without the file's locks and libhdf5 when the file did not change since a read under its
   * locks verified it (files.ts `unchangedSinceVerified`), else computed (and remembered) by a
   * read as `read` runs it. `worth` as `remembered`'s. Callers must not mutate the result.
   * @throws as `read` and `compute`
   */
  private async readRemembered<T>(domain: string, key: string, compute: (f: DomainFile) => T, worth?: (v: T) => boolean): Promise<T> {
    const f = await this.fileFor(domain);
    if (this.files.unchangedSinceVerified(f)) {
      const hit = f.rememberedOnly<T>(key);
      if (hit !== undefined) return hit;
    }
    return this.files.read(f, (ff) => ff.remembered(key, () => compute(ff), worth));
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
   * Run a write on a domain file (flushed before the locks are released); waits as `read`; 403
   * under a mount.
   */
  async write<T>(domain: string, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    const m = this.mountOf(domain);
    if (m) throw readOnly(m, domain);
    return this.files.write(this.fileOf(domain), fn);
  }

  private folderJson(p: string, st: fs.Stats): DomainJson {
    return {
      class: 'folder',
      owner: this.folders.effective(p)?.owner || this.opts.defaultOwner,
      created: (st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs) / 1000,
      lastModified: st.mtimeMs / 1000,
    };
  }

  /**
   * A domain's file as bytes (GET /file, download.ts): a local file is opened while the domain's
   * read lock is held (no write of this or another h5store process, nor of an HDF5 program that
   * locks the file, is under way), then read by ranges without the lock, each block checked
   * against the version opened; an object of a read-only mount is read from its store by ranges
   * of the version its headers name. The caller closes the snapshot.
   *
   * The bytes hold every object of the file, so `access` must allow reading each object that
   * has an ACL of its own (issue #24 items 3-4: whatever its id would refuse, the file's bytes
   * must not give); the route's guard checked the domain. (The bytes also hold the file's ACL
   * state, the reserved group, which whoever may read every object therefore sees.)
   * @throws H5StoreError NotFound/Gone (missing), BadRequest (a folder, not an HDF5 file),
   *   Unavailable (the file held by a writer longer than `lockWaitMs`), Forbidden/Unauthorized
   *   (an object of the file the requester may not read)
   */
  async openFileBytes(domain: string, access: Access = allowAll): Promise<FileSnapshot> {
    const m = this.mountOf(domain);
    if (m) return m.snapshot(domain);
    return this.read(domain, (f) => {
      if (!access.all) {
        const root = this.viewInFile(f);
        for (const [key, acl] of Object.entries(readFileAcl(f)?.objects ?? {})) {
          access.check({ ...root, object: acl }, 'read', { domain, what: `${domain} as a file (object ${key} in it has an ACL of its own)` });
        }
      }
      return openSnapshot(f.handle.realPath, f.handle.dev, f.handle.ino, domain);
    });
  }

  /** GET /: the domain (with its root id) or folder record. */
  async getDomain(domain: string): Promise<DomainJson> {
    const m = this.mountOf(domain);
    if (m) {
      const e = await m.stat(domain);
      const owner = this.mountFolderAcl(m)?.owner || this.opts.defaultOwner;
      if (e.kind === 'folder') return { class: 'folder', owner, created: e.created, lastModified: e.lastModified };
      return this.read(domain, (f) => {
        const t = f.fileTimes();
        return { class: 'domain', owner, root: f.rootId, created: t.created, lastModified: t.lastModified };
      });
    }
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) return this.folderJson(p, st);
    const known = await this.readRemembered(domain, 'domain', (f) => {
      const t = f.fileTimes();
      return { root: f.rootId, created: t.created, lastModified: t.lastModified, owner: readFileAcl(f)?.owner };
    });
    // the folder's owner is not the file's: looked up on every request (its sidecar may change)
    const owner = known.owner || this.folders.effective(path.dirname(p))?.owner || this.opts.defaultOwner;
    return { class: 'domain', owner, root: known.root, created: known.created, lastModified: known.lastModified };
  }

  // -------------------------------------------------------------------------------------------
  // Owners and ACLs (acls.ts; spec 5)

  /** The folder that governs a path: its own directory when a folder, else the nearest existing one up. */
  private governingFolder(p: string, st: fs.Stats | undefined): FolderAcl | null {
    let dir = st?.isDirectory() ? p : path.dirname(p);
    while (!st?.isDirectory()) {
      try {
        st = this.files.stats.stat(dir);
        if (st.isDirectory()) break;
      } catch {
        /* missing: go up */
      }
      const up = path.dirname(dir);
      if (up === dir || !dir.startsWith(this.paths.realRoot)) return null;
      dir = up;
      st = undefined;
    }
    return this.folders.effective(dir);
  }

  /**
   * The ACL state of a domain file, as its entry keeps it when the file did not change on disk
   * (no HDF5 call), else read under the shared lock. Null when the file holds none (or is not
   * HDF5). The entry drops it on every event but its own writes (fileState.ts), a write through
   * another name of the same file (a symlink) included.
   */
  private async fileAcl(domain: string, p: string, st: fs.Stats): Promise<FileAcl | null> {
    const known = this.knownFileAcl(domain, p, st);
    if (known !== undefined) return known;
    const f = this.files.entry(domain, p);
    try {
      return await this.files.read(f, (ff) => readFileAcl(ff));
    } catch (e) {
      // Gone, or not an HDF5 file: the folder governs (the operation answers 404/400 itself).
      // Anything else (a file busy past the lock wait, an I/O error) must not hand the decision
      // to the folder's rules: the file's own ACL may be stricter.
      if (e instanceof H5StoreError && (e.code === 'NotFound' || e.code === 'BadRequest')) return null;
      throw e;
    }
  }

  /**
   * The ACL state of a domain file as this process knows it without reading the file (see
   * `fileAcl`), or undefined when it must be read.
   */
  private knownFileAcl(domain: string, p: string, st: fs.Stats): FileAcl | null | undefined {
    const f = this.files.entry(domain, p);
    const kept = keptFileAcl(f);
    return kept !== undefined && this.files.unchangedOnDisk(f, st) ? kept : undefined;
  }

  /**
   * What the permission decision for a request on `domain` (and optionally one of its objects)
   * looks at. Never fails for a missing domain or an unknown object: the nearest folder, or the
   * domain's ACL, governs, and the operation itself answers 404 afterwards.
   * @throws BadRequest for a domain path that leads outside the data directory.
   */
  async aclView(domain: string, target: AclTarget = {}): Promise<AclView> {
    // The same question within `statCacheMs`, with no change by this process since, has the
    // same answer (the view is made of the stats, file ACL state and folder sidecars the
    // stat cache stands for): a stream of requests asks the disk once.
    this.syncCluster();
    const stats = this.files.stats;
    const key = `${domain}\u0000${target.id ?? ''}\u0000${target.h5path ?? ''}\u0000${target.parentId ?? ''}\u0000${target.addr ?? ''}\u0000${target.place ? 1 : 0}`;
    const hit = this.recentViews.get(key);
    const now = performance.now();
    if (hit && hit.generation === stats.generation && now - hit.at < stats.freshMs) return hit.view;
    const generation = stats.generation;
    const view = await this.computeAclView(domain, target);
    if (stats.generation === generation && stats.freshMs > 0) {
      if (this.recentViews.size >= 1024) this.recentViews.clear();
      this.recentViews.set(key, { view, at: now, generation });
    }
    return view;
  }

  private async computeAclView(domain: string, target: AclTarget): Promise<AclView> {
    const m = this.mountOf(domain);
    if (m) {
      // Read-only archives hold no ACLs of their own: the folder the mount point is in governs
      // (its files as dropped-in files).
      return this.computeMountView(m, domain);
    }
    const p = this.paths.resolve(domain);
    let st: fs.Stats | undefined;
    try {
      st = this.files.stats.stat(p);
    } catch {
      st = undefined;
    }
    if (st?.isFile()) {
      const state = await this.fileAcl(domain, p, st);
      if (state) {
        const hasObjectAcls = Object.keys(state.objects).length > 0;
        const view: AclView = { kind: 'domain', owner: state.owner || this.opts.defaultOwner, root: state.root, inherited: false, hasObjectAcls };
        if ((target.id || target.h5path !== undefined || target.addr !== undefined) && Object.keys(state.objects).length) view.object = await this.objectAcl(domain, state, target);
        else if (hasObjectAcls) view.objectAcls = Object.values(state.objects);
        return view;
      }
    }
    return this.folderView(p, st);
  }

  /**
   * The view of a path without ACL state of its own: a folder (its sidecar, or the nearest one
   * up), a missing path (the nearest existing folder governs, e.g. for PUT / of a new domain),
   * or a dropped-in file (`droppedInAcl` of its governing folder's).
   */
  private folderView(p: string, st: fs.Stats | undefined): AclView {
    const folder = this.governingFolder(p, st);
    const file = !!st?.isFile();
    return {
      kind: file ? 'domain' : st?.isDirectory() ? 'folder' : 'missing',
      owner: folder?.owner || this.opts.defaultOwner,
      root: file ? this.droppedIn(folder) : (folder?.acls ?? {}),
      inherited: true,
    };
  }

  /**
   * The ACL view of the object at `addr` (the domain's own for undefined or the root group) of
   * an open domain file whose lock the caller holds: from the file's ACL state (read from the
   * reserved group at most once), else from its governing folder. No lock is taken.
   */
  private viewInFile(f: DomainFile, addr?: bigint): AclView {
    const m = this.mountOf(f.domain);
    if (m) return this.computeMountView(m, f.domain);
    const state = readFileAcl(f);
    if (!state) {
      let st: fs.Stats | undefined;
      try {
        st = this.files.stats.stat(f.path);
      } catch {
        st = undefined;
      }
      return { ...this.folderView(f.path, st), kind: 'domain' };
    }
    const hasObjectAcls = Object.keys(state.objects).length > 0;
    const view: AclView = { kind: 'domain', owner: state.owner || this.opts.defaultOwner, root: state.root, inherited: false, hasObjectAcls };
    if (addr !== undefined && addr !== f.rootAddr && hasObjectAcls) view.object = state.objects[f.objectKey(addr)];
    return view;
  }

  /** The view of a domain or folder of a read-only mount (see `computeAclView`). */
  private computeMountView(m: Mount, domain: string): AclView {
    const folder = this.mountFolderAcl(m);
    const file = isHdf5Name(domain);
    return { kind: file ? 'domain' : 'folder', owner: folder?.owner || this.opts.defaultOwner, root: file ? this.droppedIn(folder) : (folder?.acls ?? {}), inherited: true };
  }

  /** The own ACL of the target object (undefined for the root group, unknown objects and none). */
  private async objectAcl(domain: string, state: FileAcl, target: AclTarget): Promise<Acl | undefined> {
    try {
      return await this.read(domain, (f) => {
        let addr: bigint;
        if (target.addr !== undefined) addr = target.addr;
        else if (target.h5path !== undefined) {
          const start = target.parentId ? f.resolve(target.parentId, 'group') : undefined;
          addr = target.place ? h5paths.placeOfPath(f, target.h5path, start, true).parent : h5paths.resolvePath(f, target.h5path, start).addr;
        } else addr = f.resolve(target.id!);
        return addr === f.rootAddr ? undefined : state.objects[f.objectKey(addr)];
      });
    } catch (e) {
      if (e instanceof H5StoreError) return undefined;
      throw e;
    }
  }

  /**
   * The stored ACL of a domain or folder (the root group's ACL), or of one object of a domain
   * (its own entries only; the root group's id means the domain's ACL).
   * @throws NotFound/Gone for a missing domain or object.
   */
  async getAcl(domain: string, target: AclTarget = {}): Promise<{ owner: string; acl: Acl }> {
    const m = this.mountOf(domain);
    if (m) {
      await m.stat(domain); // 404 for what the archive does not hold
      if (target.id) await this.read(domain, (f) => f.resolve(target.id!));
      const view = this.computeMountView(m, domain);
      return { owner: view.owner, acl: view.root };
    }
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) {
      const f = this.folders.effective(p);
      return { owner: f?.owner || this.opts.defaultOwner, acl: f?.acls ?? {} };
    }
    return this.read(domain, (f) => {
      const state = readFileAcl(f);
      const folder = state ? null : this.folders.effective(path.dirname(p));
      const owner = state?.owner || folder?.owner || this.opts.defaultOwner;
      if (target.id) {
        const addr = f.resolve(target.id);
        if (addr !== f.rootAddr) return { owner, acl: state?.objects[f.objectKey(addr)] ?? {} };
      }
      return { owner, acl: state?.root ?? this.droppedIn(folder) };
    });
  }

  /**
   * Change one ACL under the domain's write lock (or the folder's sidecar). `change` edits the
   * ACL in place; a domain file without ACL state starts from the ACL its folder gave it
   * (`droppedInAcl`, so the entries it was governed by are kept), a folder without a sidecar
   * from the one it inherited.
   * @throws NotFound/Gone for a missing domain or object.
   */
  async updateAcl(domain: string, target: AclTarget, change: (acl: Acl) => void): Promise<void> {
    const m = this.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) {
      const cur = this.folders.effective(p);
      const next: FolderAcl = { owner: cur?.owner || this.opts.defaultOwner, acls: structuredClone(cur?.acls ?? {}) };
      change(next.acls);
      this.folders.write(p, next);
      this.files.directoryChanged();
      this.publish({ t: 'acl', domain });
      return;
    }
    await this.write(domain, (f) => {
      const folder = this.folders.effective(path.dirname(p));
      const state: FileAcl = structuredClone(readFileAcl(f)) ?? { owner: folder?.owner || this.opts.defaultOwner, root: structuredClone(this.droppedIn(folder)), objects: {} };
      let acl = state.root;
      if (target.id) {
        const addr = f.resolve(target.id);
        if (addr !== f.rootAddr) acl = state.objects[f.objectKey(addr)] ??= {};
      }
      change(acl);
      writeFileAcl(f, state);
    });
    this.publish({ t: 'acl', domain });
  }

  /**
   * PUT /: create an empty HDF5 file, or a folder. The parent folder must exist. `rootId`: the id
   * the client gave the root group (h5pyd 1.0, HSDS 1.0 `root_id`; kept as its alias,
   * clientIds.ts); `rootCreation`: the root group's `creationProperties` other than
   * `CreateOrder` (kept as given, as `POST /groups` keeps them).
   * @throws Conflict when the domain or folder exists; NotFound when the parent is missing;
   *   BadRequest for a malformed `rootId` or creation properties.
   */
  async createDomain(
    domain: string,
    opts: { folder?: boolean; trackOrder?: boolean; owner?: string; acl?: Acl; rootId?: string; rootCreation?: Record<string, unknown> },
  ): Promise<DomainJson> {
    const m = this.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const p = this.paths.resolve(domain);
    const parent = this.paths.resolve(parentDomain(domain));
    let pst: fs.Stats;
    try {
      pst = fs.statSync(parent);
    } catch {
      throw notFound(`Parent folder ${parentDomain(domain)} not found`);
    }
    if (!pst.isDirectory()) throw badRequest('Parent domain must be a folder');
    if (opts.rootId !== undefined && (opts.folder || !isClientIdForm(opts.rootId, 'group'))) {
      throw badRequest(opts.folder ? 'A folder has no root group: "root_id" is for domains' : `Invalid root_id ${JSON.stringify(opts.rootId.slice(0, 80))}: expected g- and 32 lower-case hex digits grouped 8-8-4-6-6`);
    }
    const extra = extraCreationProperties(opts.rootCreation);
    if (DomainPaths.exists(p)) throw conflict(`${domain} already exists`);
    if (opts.folder) {
      try {
        fs.mkdirSync(p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw conflict(`${domain} already exists`);
        throw e;
      }
      this.goneDomains.delete(domain);
      this.paths.forget(domain);
      this.folders.forget(p);
      if (opts.owner !== undefined && opts.acl) this.folders.write(p, { owner: opts.owner, acls: opts.acl });
      this.publish({ t: 'made', domain });
      return this.folderJson(p, fs.statSync(p));
    }
    const tmp = path.join(path.dirname(p), serviceName(path.basename(p), `.${crypto.randomBytes(6).toString('hex')}.new`));
    if (!(await this.files.createFile(p, tmp, { trackOrder: opts.trackOrder }))) throw conflict(`${domain} already exists`);
    this.goneDomains.delete(domain);
    this.paths.forget(domain);
    this.files.forget(domain);
    try {
      if ((opts.owner !== undefined && opts.acl) || opts.rootId !== undefined || extra) {
        await this.write(domain, (f) => {
          if (opts.owner !== undefined && opts.acl) writeFileAcl(f, { owner: opts.owner, root: opts.acl, objects: {} });
          if (opts.rootId !== undefined) {
            f.clientIds.add(opts.rootId, { addr: f.rootAddr, gen: 0, kind: 'group' });
            f.clientIds.save(f.reserved);
          }
          if (extra) storeCreationProperties(f, f.rootAddr, extra);
        });
      }
    } finally {
      this.publish({ t: 'made', domain });
    }
    return this.getDomain(domain);
  }

  /**
   * DELETE /: remove a domain file, or an empty folder.
   * @throws Conflict for a folder with entries; NotFound/Gone when missing.
   */
  async deleteDomain(domain: string): Promise<void> {
    const m = this.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) {
      const names = fs.readdirSync(p);
      if (names.some((n) => !isServiceName(n))) throw conflict('folder has sub-items');
      // left-over service files (lock files of deleted domains, old lock directories), folder ACL
      for (const n of names) fs.rmSync(path.join(p, n), { recursive: true, force: true });
      const link = this.paths.joined(domain);
      if (link !== p && fs.lstatSync(link).isSymbolicLink()) fs.unlinkSync(link);
      else fs.rmdirSync(p);
      this.folders.forget(p);
      this.goneDomains.add(domain);
      this.paths.forget(domain);
      this.publish({ t: 'removed', domain });
      return;
    }
    // the domain key of the file deleted: its ids answer 410 (not 404) in the other workers too
    const key = domainKey(domain, fileIdentity(st));
    noteDomainKey(key, domain);
    // a symlinked domain: the link is removed, not its target
    await this.files.deleteFile(this.files.entry(domain, p), this.paths.joined(domain));
    this.files.forget(domain);
    this.goneDomains.add(domain);
    this.paths.forget(domain);
    this.publish({ t: 'removed', domain, key });
  }

  /**
   * GET /domains: entries of a folder in name order, after `marker` (a full domain path),
   * at most `limit`, only those `visible` accepts (the requester may read them; each is judged
   * by its own ACL view). Hidden service files are skipped. A domain file holds no domains: none
   * (HSDS lists no keys below it; h5pyd's `Folder` on a file).
   */
  async listFolder(
    folder: string,
    opts: {
      limit?: number;
      marker?: string;
      pattern?: (name: string) => boolean;
      verbose?: boolean;
      visible?: (view: AclView) => boolean;
      /** Only domains whose root attributes satisfy it (folders are left out). */
      query?: DomainQuery;
    },
  ): Promise<FolderItem[]> {
    const m = this.mountOf(folder);
    if (m) return this.listMounted(m, folder, opts);
    const p = this.paths.resolve(folder);
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      throw notFound(`Folder ${folder} not found`);
    }
    // a domain holds no domains (h5pyd's Folder on a file; HSDS lists no keys below it)
    if (!st.isDirectory()) return [];
    const names = [
      ...new Set([
        ...fs.readdirSync(p).filter((n) => !isServiceName(n)),
        // mount points in this folder are listed as folders (a local entry of the name is hidden)
        ...this.mounts.filter((mm) => parentDomain(mm.at) === folder).map((mm) => mm.at.slice(mm.at.lastIndexOf('/') + 1)),
      ]),
    ].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const base = folder === '/' ? '' : folder;
    // the names are in byte order (as S3 lists keys): the marker is compared the same way
    const start = startAfterOrdered(
      names.map((n) => `${base}/${n}`),
      opts.marker,
      (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0,
    );
    const limit = pageLimit(opts.limit);
    const out: FolderItem[] = [];
    for (let i = start; i < names.length && out.length < limit; i++) {
      const n = names[i];
      if (opts.pattern && !opts.pattern(n)) continue;
      const name = `${base}/${n}`;
      const mm = this.mountOf(name);
      if (mm) {
        // a mount point: a folder served from elsewhere
        const view = await this.aclView(name);
        if (opts.visible && !opts.visible(view)) continue;
        const e = await mm.stat(name);
        out.push({ name, class: 'folder', owner: view.owner, created: e.created, lastModified: e.lastModified });
        continue;
      }
      let est: fs.Stats;
      try {
        est = fs.statSync(path.join(p, n));
      } catch {
        continue;
      }
      if (!est.isDirectory() && !est.isFile()) continue;
      // Files are judged from their first bytes and lock, at once (fileStatus.ts): what is not
      // HDF5 is no domain and is not listed; a file another program is writing is listed from
      // its status (its own ACL cannot be read without waiting for the writer: unless this
      // process knows it, the folder governs whether its name is shown, as it governs a
      // dropped-in file, so its `default` entry shows it to nobody, issue #24 item 1; opening it
      // still checks its own).
      const status = est.isFile() ? fileStatus(path.join(p, n)) : undefined;
      if (status && !status.hdf5) continue;
      let view: AclView;
      try {
        const unknown = status?.beingWritten && this.knownFileAcl(name, this.paths.resolve(name), est) === undefined;
        view = unknown ? this.folderView(path.join(p, n), est) : await this.aclView(name);
      } catch {
        continue; // e.g. a symlink leading outside the data directory
      }
      if (opts.visible && !opts.visible(view)) continue;
      if (opts.query) {
        if (est.isDirectory() || status?.beingWritten) continue;
        const q = opts.query;
        let match = false;
        try {
          match = await this.read(name, (f) => {
            const row = rootAttributeRow(f, q.names);
            return row !== undefined && q.test(row);
          });
        } catch (e) {
          if (!(e instanceof H5StoreError)) throw e; // not HDF5: never matches
        }
        if (!match) continue;
      }
      if (est.isDirectory()) {
        out.push({ name, ...this.folderJson(path.join(p, n), est), owner: view.owner });
        continue;
      }
      const item: FolderItem = {
        name,
        class: 'domain',
        owner: view.owner,
        created: (est.birthtimeMs > 0 ? est.birthtimeMs : est.ctimeMs) / 1000,
        lastModified: est.mtimeMs / 1000,
        size: est.size,
      };
      if (status?.beingWritten) {
        item.beingWritten = true;
        out.push(item);
        continue;
      }
      if (opts.verbose) {
        try {
          item.root = await this.read(name, (f) => f.rootId);
          Object.assign(item, await this.domainStats(name));
        } catch (e) {
          if (!(e instanceof H5StoreError)) throw e; // not HDF5: listed without root and statistics
        }
      }
      out.push(item);
    }
    return out;
  }

  /** GET /domains of a folder under a mount (verbose: with root ids, each file opened). */
  private async listMounted(
    m: Mount,
    folder: string,
    opts: { limit?: number; marker?: string; pattern?: (name: string) => boolean; verbose?: boolean; visible?: (view: AclView) => boolean; query?: DomainQuery },
  ): Promise<FolderItem[]> {
    if (opts.query) throw badRequest('query= is not supported on folders of a read-only mount');
    // one ACL governs the whole mount: all items are visible, or none
    const view = await this.aclView(folder);
    if (opts.visible && !opts.visible(view)) return [];
    const items = await m.list(folder, opts);
    const out: FolderItem[] = [];
    for (const it of items) {
      const item: FolderItem = { name: it.name, class: it.kind, owner: view.owner, created: it.created, lastModified: it.lastModified };
      if (opts.verbose && it.kind === 'domain') {
        try {
          item.root = await this.read(it.name, (f) => f.rootId);
        } catch {
          /* not HDF5: listed without root */
        }
      }
      out.push(item);
    }
    return out;
  }

  /**
   * `verbose=1` statistics of a domain file (wire-reference 1.3; domainObjects.ts), computed once
   * per version of the file: cached by path, inode, size, mtime and ctime, so repeated requests
   * and listings of an unchanged file cost one stat. `rescan` recomputes them (PUT /?rescan=1).
   * @throws NotFound/Gone when missing, BadRequest for a folder or a file that is not HDF5.
   */
  async domainStats(domain: string, opts: { rescan?: boolean } = {}): Promise<DomainStats> {
    if (this.mountOf(domain)) return this.readWalked(domain, (f, all, _t, pause) => computeDomainStats(f, all, pause));
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    const key = statsKey(p, st);
    const hit = opts.rescan ? undefined : this.statsCache.get(key);
    if (hit) return hit;
    return this.readWalked(domain, async (f, all, _t, pause) => {
      const stats = await computeDomainStats(f, all, pause);
      const now = fs.statSync(p);
      this.statsCache.set(statsKey(p, now), stats);
      return stats;
    });
  }

  /**
   * `getobjs=1` (wire-reference 1.3): every object of a domain keyed by id, or undefined for a
   * domain with more than DOMAIN_OBJS_MAX objects.
   */
  domainObjects(domain: string, opts: { includeAttrs?: boolean } = {}) {
    // walked only as far as one object more than an answer may hold
    return this.readWalked(domain, (f, all, truncated) => (truncated ? undefined : domainObjects(f, opts, all)), DOMAIN_OBJS_MAX + 1);
  }

  /** `PUT /?flush=1`: flush libhdf5's buffers of the domain file to the operating system (H5Fflush). */
  async flushDomain(domain: string): Promise<void> {
    await this.read(domain, (f) => h5.flushFile(f.h));
  }

  // -------------------------------------------------------------------------------------------
  // Path lookup

  /**
   * GET /?h5path=, GET /{groups,datasets,datatypes}/?h5path=, POST / (wire-reference 1.3, 1.4):
   * the object at a path, absolute or relative to the group `parentId`. Soft links are crossed
   * only with `followSoft`, external links only with `followExternal`: the lookup then goes on
   * in the domain the link names (`links.externalTarget`), after `access` allowed reading that
   * domain (an external link never opens a domain the requester could not read directly). The
   * object found must be readable by its own ACL (issue #24 item 4: a path never shows what the
   * object's id would not). `object`: what the object's JSON holds (`include_links` for groups,
   * `include_attrs` with `IncludeData` and `max_data_size`, `CreateOrder`: h5web's batch
   * requests, issue #25).
   * @returns the object's kind, its JSON, and the domain it was found in.
   * @throws H5StoreError BadRequest (a link crossed without its flag, a malformed id), NotFound
   *   (path, domain), Forbidden/Unauthorized (from `access`).
   */
  async lookupPath(
    domain: string,
    h5path: string,
    parentId?: string,
    opts: h5paths.PathOptions & { access?: Access; object?: ObjectJsonOptions } = {},
  ): Promise<{ kind: ObjectKind; json: Record<string, unknown>; domain: string }> {
    const access = opts.access ?? allowAll;
    let dom = domain;
    let p = h5path;
    let parent = parentId;
    for (let hops = 0; ; hops++) {
      const r = await this.read(dom, (f) => {
        const start = parent ? f.resolve(parent, 'group') : undefined;
        const hit = h5paths.walkPath(f, p, start, opts);
        if ('external' in hit) return hit;
        return h5.withObject(f.h, hit.addr, (oid) => ({ kind: hit.kind, addr: hit.addr, json: objectJsonOf(f, hit.kind, oid, hit.addr, { ...opts.object, includeLinks: hit.kind === 'group' && !!opts.object?.includeLinks }) }));
      });
      if (!('external' in r)) {
        if (!access.all) access.check(await this.aclView(dom, { addr: r.addr }), 'read', { domain: dom, what: `${h5path}${dom === domain ? '' : ` (${p} of ${dom})`} in ${domain}` });
        return { kind: r.kind, json: r.json, domain: dom };
      }
      if (hops >= 8) throw badRequest(`Path ${h5path} crosses too many external links`);
      const target = links.externalTarget(dom, r.external.file, (d) => this.isDomainFile(d));
      let next: string;
      try {
        next = normalizeDomain(target);
      } catch {
        throw notFound(`External link ${JSON.stringify(r.external.title)} names ${JSON.stringify(r.external.file)}, which is not a domain here`);
      }
      if (!access.all) access.check(await this.aclView(next), 'read', { domain: next, what: `${next} (reached through the external link ${JSON.stringify(r.external.title)})` });
      dom = next;
      p = [r.external.h5path.replace(/\/+$/, ''), ...r.external.rest].join('/') || '/';
      if (!p.startsWith('/')) p = '/' + p;
      parent = undefined;
    }
  }

  /** Whether a domain path names an existing domain file (no error for bad or missing paths). */
  private isDomainFile(domain: string): boolean {
    try {
      return fs.statSync(this.paths.resolve(normalizeDomain(domain))).isFile();
    } catch {
      return false;
    }
  }

  // -------------------------------------------------------------------------------------------
  // h5grove's API (grove.ts; issue #28 item 7)

  /**
   * The domain an external link of `from` names (resolved beside it, `links.externalTarget`),
   * once `access` allowed reading it.
   * @throws H5StoreError NotFound (not a domain here), Forbidden/Unauthorized (from `access`)
   */
  private async externalDomain(from: string, file: string, access: Access): Promise<string> {
    const target = links.externalTarget(from, file, (d) => this.isDomainFile(d));
    let next: string;
    try {
      next = normalizeDomain(target);
    } catch {
      throw notFound(`The external link to ${JSON.stringify(file)} names no domain here`);
    }
    if (!this.isDomainFile(next) && !this.mountOf(next)) throw notFound(`The external link to ${JSON.stringify(file)} names no domain here`);
    if (!access.all) access.check(await this.aclView(next), 'read', { domain: next, what: `${next} (reached through an external link of ${from})` });
    return next;
  }

  /**
   * Check that `access` may read the object at `addr` of an open domain file (its own ACL, then
   * the domain's; issue #24 item 4): h5grove's lookups cross soft and external links the route's
   * guard did not, so the object they end at is checked where it is found. The caller holds the
   * file's lock; no libhdf5 call.
   * @throws H5StoreError Forbidden/Unauthorized (from `access`)
   */
  private checkFound(f: DomainFile, addr: bigint, access: Access, path: string): void {
    if (!access.all) access.check(this.viewInFile(f, addr), 'read', { domain: f.domain, what: `${path} in ${f.domain}` });
  }

  /**
   * The object at `path` of a domain with every link on the way followed, external links into
   * other domains (`access`-checked, at most 8), and `fn` run on it under the read lock of the
   * domain it is in (h5grove's `/attr/`, `/data/`, `/stats/`).
   * @throws H5StoreError NotFound (path, domain, a dangling link: "Cannot resolve"), BadRequest
   *   (a user-defined link), Forbidden/Unauthorized (from `access`)
   */
  async groveObject<T>(domain: string, path: string, access: Access, fn: (f: DomainFile, domain: string, addr: bigint, kind: ObjectKind) => T): Promise<T> {
    let dom = domain;
    let p = path;
    for (let hops = 0; ; hops++) {
      const r = await this.read(dom, (f): { hop: grove.ExternalHop } | { done: T } => {
        const hit = grove.locate(f, dom, p, 'all');
        if (hit.kind === 'hop') return { hop: hit.hop };
        if (hit.kind === 'link') {
          if (hit.cls === 'external') return { hop: { file: hit.file, path: hit.target } };
          throw notFound(`Cannot resolve soft link at ${path}`);
        }
        if (hit.kind === 'other') throw badRequest(`${path} is a user-defined link: h5store cannot resolve it`);
        this.checkFound(f, hit.addr, access, path);
        return { done: fn(f, dom, hit.addr, hit.objKind) };
      });
      if ('done' in r) return r.done;
      if (hops >= 8) throw badRequest(`Path ${path} crosses too many external links`);
      dom = await this.externalDomain(dom, r.hop.file, access);
      p = r.hop.path;
    }
  }

  /**
   * h5grove's `/meta/` of the entity at `path` (grove.ts): resolved as `resolve` says, across
   * external links (`access`-checked); a group with its children, each resolved when it can be
   * (external ones in their domain; an access refused or a target missing leaves the link).
   * `readable` (when given) decides whether a child object of the same domain may be described:
   * one that may not is listed as `{name, kind: "other"}`.
   * @throws H5StoreError NotFound (path or domain; with `all`, a link that does not resolve),
   *   Forbidden/Unauthorized (an intermediate external link the user may not follow)
   */
  async groveMeta(
    domain: string,
    path: string,
    resolve: grove.LinkResolution,
    access: Access,
    readable?: (domain: string, id: string) => Promise<boolean>,
  ): Promise<grove.EntityMeta> {
    const name = grove.entityName(grove.normalizePath(path));
    let dom = domain;
    let p = path;
    /** The metadata of the last link when it is an external link being followed (only_valid falls back to it). */
    let fallback: grove.EntityMeta | undefined;
    for (let hops = 0; ; hops++) {
      type Step = { hop: grove.ExternalHop; last: boolean; link?: grove.EntityMeta } | { meta: grove.EntityMeta; children?: grove.ChildEntry[] };
      let r: Step;
      try {
        r = await this.readInSteps(dom, async (f, pause): Promise<Step> => {
          const hit = grove.locate(f, dom, p, fallback ? 'all' : resolve);
          if (hit.kind === 'hop') return { hop: hit.hop, last: false };
          if (hit.kind === 'link' && hit.cls === 'external' && resolve !== 'none') return { hop: { file: hit.file, path: hit.target }, last: true, link: grove.linkMeta(name, hit) };
          if (hit.kind === 'link') return { meta: grove.linkMeta(name, hit) };
          if (hit.kind === 'other') return { meta: { name, kind: 'other' } };
          this.checkFound(f, hit.addr, access, path);
          if (hit.objKind !== 'group') return { meta: grove.objectMeta(f, hit.addr, hit.objKind, name) };
          // a group's children, GROVE_SLICE at a time with the event loop running in between
          const list = grove.groupLinks(f, hit.addr);
          const children: grove.ChildEntry[] = [];
          for (let i = 0; i < list.length; i += GROVE_SLICE) {
            if (i > 0) await pause();
            children.push(...grove.childrenOf(f, hit.addr, list.slice(i, i + GROVE_SLICE)));
          }
          return { meta: grove.objectMeta(f, hit.addr, 'group', name, []), children };
        });
        if ('hop' in r) {
          if (hops >= 8) throw badRequest(`Path ${path} crosses too many external links`);
          if (r.last) fallback ??= r.link;
          const next = await this.externalDomain(dom, r.hop.file, access);
          dom = next;
          p = r.hop.path;
          continue;
        }
      } catch (e) {
        if (!fallback || !(e instanceof H5StoreError) || e.status >= 500) throw e;
        if (resolve === 'all') throw notFound(`Cannot resolve external link at ${path}: ${e.message}`);
        return fallback;
      }
      if (!r.children) return r.meta;
      const children: grove.EntityMeta[] = [];
      for (const c of r.children) {
        let meta = c.meta;
        if (c.pending) {
          try {
            meta = await this.groveChild(dom, c.pending.file, c.pending.path, meta.name as string, access);
          } catch (e) {
            if (!(e instanceof H5StoreError) || e.status >= 500) throw e;
          }
        } else if (readable && c.id !== undefined && !(await readable(dom, c.id))) {
          meta = { name: meta.name, kind: 'other' };
        }
        children.push(meta);
      }
      r.meta.children = children;
      return r.meta;
    }
  }

  /**
   * Run `fn` on a domain file with its read lock held across `fn`'s awaits (long reads that let
   * other requests run: `pause()` yields to the event loop, then waits until libhdf5 is free,
   * heavy.ts). Writers of this process wait meanwhile, as for a streamed value read.
   */
  private async readInSteps<T>(domain: string, fn: (f: DomainFile, pause: () => Promise<void>) => Promise<T>): Promise<T> {
    const f = await this.fileFor(domain);
    const unlock = await this.files.acquireRead(f);
    try {
      return await hdf5Turn(() => fn(f, hdf5Pause));
    } finally {
      unlock();
    }
  }

  /** A child's metadata reached by an external link (h5grove resolves children `only_valid`). */
  private async groveChild(from: string, file: string, target: string, name: string, access: Access): Promise<grove.EntityMeta> {
    let dom = await this.externalDomain(from, file, access);
    let p = target;
    for (let hops = 1; ; hops++) {
      const r = await this.read(dom, (f): { hop: grove.ExternalHop } | { meta: grove.EntityMeta } => {
        const hit = grove.locate(f, dom, p, 'all');
        if (hit.kind === 'hop') return { hop: hit.hop };
        if (hit.kind === 'link' && hit.cls === 'external') return { hop: { file: hit.file, path: hit.target } };
        if (hit.kind !== 'object') throw notFound(`Cannot resolve ${target} in ${dom}`);
        this.checkFound(f, hit.addr, access, target);
        return { meta: grove.objectMeta(f, hit.addr, hit.objKind, name) };
      });
      if ('meta' in r) return r.meta;
      if (hops >= 8) throw badRequest(`${target} crosses too many external links`);
      dom = await this.externalDomain(dom, r.hop.file, access);
      p = r.hop.path;
    }
  }

  /**
   * h5grove's `/paths/`: the group at `path` and every path below it (grove.ts `pathsBelow`),
   * the group found across external links. With `resolve` `all`, a dangling soft link or an
   * external link that does not resolve is a 404. `readable` (when given) leaves out the links
   * of groups the user may not read.
   * @throws H5StoreError NotFound, BadRequest (the path is not a group)
   */
  async grovePaths(domain: string, path: string, resolve: grove.LinkResolution, access: Access, readable?: (domain: string, id: string) => Promise<boolean>): Promise<string[]> {
    const base = grove.normalizePath(path);
    let dom = domain;
    let p = path;
    for (let hops = 0; ; hops++) {
      const r = await this.read(dom, (f): { hop: grove.ExternalHop } | { found: ReturnType<typeof grove.pathsBelow> } => {
        const hit = grove.locate(f, dom, p, resolve);
        if (hit.kind === 'hop') return { hop: hit.hop };
        if (hit.kind === 'link' && hit.cls === 'external' && resolve !== 'none') return { hop: { file: hit.file, path: hit.target } };
        if (hit.kind !== 'object' || hit.objKind !== 'group') throw badRequest(`${path} is not a group`);
        this.checkFound(f, hit.addr, access, path);
        return { found: grove.pathsBelow(f, dom, hit.addr, base, resolve) };
      });
      if ('hop' in r) {
        if (hops >= 8) throw badRequest(`Path ${path} crosses too many external links`);
        dom = await this.externalDomain(dom, r.hop.file, access);
        p = r.hop.path;
        continue;
      }
      const { paths, groups: entered, externals } = r.found;
      for (const x of externals) {
        try {
          await this.groveChild(dom, x.file, x.target, '', access);
        } catch (e) {
          if (!(e instanceof H5StoreError) || e.status >= 500) throw e;
          throw notFound(`Cannot resolve external link at ${x.path}: ${e.message}`);
        }
      }
      if (!readable) return paths;
      const keep = paths.map(() => true);
      for (const g of entered) if (!(await readable(dom, g.id))) for (let i = g.from; i < g.to; i++) keep[i] = false;
      return paths.filter((_, i) => keep[i]);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Objects

  getGroup(domain: string, id: string, opts: groups.GroupJsonOptions) {
    const key = `g ${id} ${+!!opts.includeLinks}${+!!opts.includeAttrs}${+!!opts.alias}${+!!opts.createOrder}`;
    return this.readRemembered(domain, key, (f) => groups.getGroup(f, id, opts));
  }
  /** POST /groups: `create` is checked on the group the new link goes into (`mayPlace`). */
  createGroup(domain: string, body: Record<string, unknown>, implicit: boolean, access: Access = allowAll) {
    return this.createWrite(domain, (f) => this.createIn(f, 'group', body, implicit, access) as Promise<groups.GroupJson>);
  }
  /** A write that creates objects: the ids clients gave them are stored before it commits (clientIds.ts `save`). */
  private createWrite<T>(domain: string, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    return this.write(domain, async (f) => {
      const out = await fn(f);
      f.clientIds.save(f.reserved);
      return out;
    });
  }

  /**
   * Check that the requester may `create` in the group a new object's link goes into
   * (`link.id`, or the group `h5path` resolves to after soft links, or with `implicit` the
   * deepest existing group on the way, below which the missing groups are made): issue #24
   * item 2. Run inside the write, after the path is resolved in the locked file, so nothing can
   * change the path between the check and the create. Anonymous objects (no link), and files
   * without object ACLs (every group is governed by the domain's ACL), need nothing beyond the
   * route's check.
   * @throws H5StoreError Forbidden/Unauthorized (from `access`), or the create's own errors
   *   (bad parent id or path, missing parent) as `h5paths.planObjectPlace` throws them; a link
   *   name already taken is left to the create (after the check).
   */
  mayPlace(f: DomainFile, body: Record<string, unknown>, implicit: boolean, access: Access): void {
    if (access.all) return;
    // Without object ACLs every group's view is the domain's, which the route's guard decided.
    const state = readFileAcl(f);
    if (!state || Object.keys(state.objects).length === 0) return;
    // the group as the create resolves it (h5paths.planObjectPlace), before it looks at the name:
    // a refused requester learns nothing of the group's links
    let parent: bigint | undefined;
    const link = body.link as { id?: unknown } | undefined;
    if (link !== undefined) {
      if (link && typeof link === 'object' && typeof link.id === 'string') parent = f.resolve(link.id, 'group');
    } else if (body.h5path !== undefined) {
      const start = body.parent_id !== undefined ? f.resolve(String(body.parent_id), 'group') : undefined;
      parent = h5paths.placeOfPath(f, body.h5path, start, implicit).parent;
    }
    if (parent === undefined) return; // anonymous, or a body the create refuses
    const where = parent === f.rootAddr ? 'the root group' : `group ${f.idOf(parent, 'group')}`;
    const path = typeof body.h5path === 'string' ? ` (where ${JSON.stringify(body.h5path)} goes)` : '';
    access.check(this.viewInFile(f, parent), 'create', { domain: f.domain, what: `objects in ${where}${path} of ${f.domain}` });
  }
  /**
   * POST /groups, /datasets, /datatypes with a JSON list (HSDS 1.0's batch create, issue #25):
   * each item created as the single create makes it (its own `id` when it gives one, a link when
   * it asks for one, a dataset's initial `value`), in order, in one write: when one fails the
   * whole request is rolled back (files.ts), so all objects are created or none. Ids are checked
   * (form, collection, root prefix, given twice) before anything is written.
   * @returns each object's JSON, in the order given
   * @throws H5StoreError BadRequest (an item, an id), Conflict (an id taken or given twice),
   *   PayloadTooLarge (more than MAX_BATCH_OBJECTS items)
   */
  createObjects(domain: string, kind: ObjectKind, items: unknown[], implicit: boolean, access: Access = allowAll): Promise<Record<string, unknown>[]> {
    if (items.length > MAX_BATCH_OBJECTS) throw new H5StoreError('PayloadTooLarge', `${items.length} objects in one request: at most ${MAX_BATCH_OBJECTS}`);
    const bodies = items.map((it, i) => {
      if (!it || typeof it !== 'object' || Array.isArray(it)) throw badRequest(`Item ${i} of the list is not a JSON object`);
      return it as Record<string, unknown>;
    });
    const seen = new Set<string>();
    for (const b of bodies) {
      if (typeof b.id !== 'string') continue;
      if (seen.has(b.id)) throw conflict(`id ${b.id} is given twice`);
      seen.add(b.id);
    }
    return this.createWrite(domain, async (f) => {
      for (const b of bodies) if (b.id !== undefined && b.id !== null) checkClientId(b.id, kind, f.rootId);
      const out: Record<string, unknown>[] = [];
      for (const b of bodies) out.push((await this.createIn(f, kind, b, implicit, access)) as unknown as Record<string, unknown>);
      return out;
    });
  }
  /**
   * One object of a create request, in a running write: `create` checked on the group its link
   * goes into (`mayPlace`), then created (a dataset's `value` written after it).
   */
  private async createIn(f: DomainFile, kind: ObjectKind, body: Record<string, unknown>, implicit: boolean, access: Access) {
    this.mayPlace(f, body, implicit, access);
    if (kind === 'group') return groups.createGroup(f, body, implicit);
    if (kind === 'datatype') return dtypes.createDatatype(f, body, implicit);
    const ds = await dsets.createDataset(f, body, implicit, this.limits);
    if (body.value !== undefined && body.value !== null) {
      if (ds.shape.class === 'H5S_NULL') throw badRequest('A dataset with a null dataspace (H5S_NULL) cannot have a value');
      await values.writeValues(f, ds.id, { json: { value: body.value } }, this.limits, this.pagePool);
    }
    return ds;
  }
  deleteObject(domain: string, kind: ObjectKind, id: string) {
    return this.write(domain, (f) => groups.deleteObject(f, kind, id));
  }
  listCollection(domain: string, kind: ObjectKind, opts: { limit?: number; marker?: string }) {
    return this.readWalked(domain, (f, all, _t, pause) => groups.listCollection(f, kind, { ...opts, maxAnswer: this.limits.maxObjectsPerAnswer, pause }, all));
  }
  rootId(domain: string) {
    return this.read(domain, (f) => f.rootId);
  }

  listLinks(domain: string, groupId: string, opts: links.LinkListOptions) {
    return this.read(domain, (f) => links.listLinks(f, groupId, opts));
  }
  /** A page of links with their JSON text pieces (`links.listLinksPage`, GET .../links). */
  listLinksPage(domain: string, groupId: string, opts: links.LinkListOptions) {
    // a page asked again (a client paging the same group, a viewer polling it) is remembered,
    // except under a pattern (a function: no key); its pieces are the view's own
    if (opts.pattern) return this.read(domain, (f) => links.listLinksPage(f, groupId, opts));
    const key = `lp ${groupId} ${+!!opts.createOrder} ${opts.limit ?? ''} ${opts.marker === undefined ? '-' : `=${opts.marker}`}`;
    return this.readRemembered(domain, key, (f) => links.listLinksPage(f, groupId, opts));
  }
  listLinksDeep(domain: string, groupId: string, opts: Omit<links.LinkListOptions, 'marker'>) {
    return this.read(domain, (f) => links.listLinksDeep(f, groupId, { ...opts, maxAnswer: this.limits.maxObjectsPerAnswer }));
  }
  linksByTitles(domain: string, groupId: string, titles: string[]) {
    return this.read(domain, (f) => links.linksByTitles(f, groupId, titles));
  }
  linksOfGroups(domain: string, groups: { id: string; titles?: string[] }[], opts: Omit<links.LinkListOptions, 'marker'>) {
    return this.read(domain, (f) => links.linksOfGroups(f, groups, opts));
  }
  /** Bulk PUT of links in several groups (`grp_ids`): all checked first, then written under one lock. */
  putLinksBulk(domain: string, items: linkWrites.LinkPut[]) {
    return this.write(domain, (f) => linkWrites.putLinksBulk(f, items));
  }
  getLink(domain: string, groupId: string, name: string) {
    return this.readRemembered(domain, `l ${groupId} ${name}`, (f) => links.getLink(f, groupId, name));
  }
  putLink(domain: string, groupId: string, name: string, spec: linkWrites.LinkSpec) {
    return this.write(domain, (f) => linkWrites.putLink(f, groupId, name, spec));
  }
  deleteLink(domain: string, groupId: string, name: string) {
    return this.write(domain, (f) => linkWrites.deleteLink(f, groupId, name));
  }
  /** PUT several links: all checked first, then written under one lock (201 if any is new). */
  putLinks(domain: string, groupId: string, items: [string, linkWrites.LinkSpec][]) {
    return this.write(domain, (f) => linkWrites.putLinks(f, groupId, items));
  }
  /** DELETE several links: all must exist, then all are deleted under one lock. */
  deleteLinks(domain: string, groupId: string, names: string[]) {
    return this.write(domain, (f) => linkWrites.deleteLinks(f, groupId, names));
  }

  getDataset(domain: string, id: string, opts: dsets.DatasetOptions) {
    return this.readRemembered(domain, `d ${id} ${JSON.stringify(opts)}`, (f) => dsets.getDataset(f, id, opts));
  }
  getDatasetTypeAndShape(domain: string, id: string) {
    return this.read(domain, (f) => dsets.getTypeAndShape(f, id));
  }
  /** POST /datasets (with an initial `value` when given): `create` is checked on the group the new link goes into (`mayPlace`). */
  createDataset(domain: string, body: Record<string, unknown>, implicit: boolean, access: Access = allowAll) {
    return this.createWrite(domain, (f) => this.createIn(f, 'dataset', body, implicit, access) as Promise<dsets.DatasetJson>);
  }
  resizeDataset(domain: string, id: string, body: Record<string, unknown>) {
    return this.write(domain, (f) => dsets.resizeDataset(f, id, body, this.limits));
  }

  getDatatype(domain: string, id: string, opts: { includeAttrs?: boolean; alias?: boolean } = {}) {
    return this.readRemembered(domain, `t ${id} ${+!!opts.includeAttrs}${+!!opts.alias}`, (f) => dtypes.getDatatype(f, id, opts));
  }
  /** POST /datatypes: `create` is checked on the group the new link goes into (`mayPlace`). */
  createDatatype(domain: string, body: Record<string, unknown>, implicit: boolean, access: Access = allowAll) {
    return this.createWrite(domain, (f) => this.createIn(f, 'datatype', body, implicit, access) as Promise<dtypes.DatatypeJson>);
  }

  listAttributes(domain: string, kind: ObjectKind, id: string, opts: attrs.AttributeListOptions) {
    return this.read(domain, (f) => attrs.listAttributes(f, kind, id, opts));
  }
  attributesByName(domain: string, kind: ObjectKind, id: string, names: string[], includeData: boolean, vopts: attrs.ValueOptions = {}) {
    return this.read(domain, (f) => attrs.attributesByName(f, kind, id, names, includeData, vopts));
  }
  /** POST .../attributes with `obj_ids`: attributes of several objects, keyed by id. */
  attributesOfObjects(domain: string, items: { id: string; names?: string[] }[], opts: attrs.AttributeListOptions) {
    return this.read(domain, (f) => attrs.attributesOfObjects(f, items, opts));
  }
  /** GET /groups/<id>/attributes?follow_links=1: the group's and every object's below it, keyed by id. */
  attributesBelow(domain: string, groupId: string, opts: attrs.AttributeListOptions) {
    return this.read(domain, (f) => attrs.attributesBelow(f, groupId, opts));
  }
  getAttribute(domain: string, kind: ObjectKind, id: string, name: string, includeData = true, vopts: attrs.ValueOptions = {}) {
    const key = `a ${kind} ${id} ${name} ${+includeData}${+!!vopts.base64} ${vopts.maxDataSize ?? 0}`;
    return this.readRemembered<attrs.AttributeJson>(domain, key, (f) => attrs.attributeAsText(attrs.getAttribute(f, kind, id, name, includeData, vopts)), smallValue);
  }
  readAttributeValue(domain: string, kind: ObjectKind, id: string, name: string, vopts: attrs.ValueOptions = {}) {
    return this.read(domain, (f) => attrs.readAttributeValue(f, kind, id, name, vopts));
  }
  /**
   * PUT .../attributes with `obj_ids`: `{name: {type, shape?, value?}}` per object, all validated
   * and checked before anything is written (attrs.putAttributesMany).
   */
  putAttributesTo(domain: string, targets: { id: string; items: Record<string, unknown> }[], replace: boolean) {
    return this.write(domain, (f) => {
      const parsed = targets.map((t) => ({
        id: t.id,
        items: entriesInCreatedOrder(t.items, 'attribute').map(([n, b]) => [attrs.checkAttrName(n), attrs.parseAttributeBody(f, b)] as [string, attrs.AttributeSpec]),
      }));
      return attrs.putAttributesMany(f, parsed, replace);
    });
  }
  /** PUT one attribute (validated inside the write lock, before anything is written). */
  putAttribute(domain: string, kind: ObjectKind, id: string, name: string, body: unknown, replace: boolean) {
    return this.write(domain, (f) => attrs.putAttribute(f, kind, id, name, attrs.parseAttributeBody(f, body, this.limits), replace));
  }
  /** PUT several attributes: all validated first, then written (201 if any changed). */
  putAttributes(domain: string, kind: ObjectKind, id: string, items: Record<string, unknown>, replace: boolean) {
    return this.write(domain, (f) => {
      const specs = entriesInCreatedOrder(items, 'attribute').map(([n, b]) => [attrs.checkAttrName(n), attrs.parseAttributeBody(f, b, this.limits)] as [string, attrs.AttributeSpec]);
      return attrs.putAttributes(f, kind, id, specs, replace);
    });
  }
  deleteAttribute(domain: string, kind: ObjectKind, id: string, name: string) {
    return this.write(domain, (f) => attrs.deleteAttribute(f, kind, id, name));
  }
  deleteAttributes(domain: string, kind: ObjectKind, id: string, names: string[]) {
    return this.write(domain, (f) => attrs.deleteAttributes(f, kind, id, names));
  }
  writeAttributeValue(domain: string, kind: ObjectKind, id: string, name: string, value: { json?: unknown; wire?: Buffer; base64?: boolean }) {
    return this.write(domain, (f) => attrs.writeAttributeValue(f, kind, id, name, value, this.limits));
  }

  /**
   * A read of dataset values in `format`, for `GET`/`POST .../value` and any route that sends
   * values: a `ValueSource` (values/source.ts), an async iterator of buffers (the wire bytes, or
   * the JSON text of the elements) with `close()`. The domain stays read-locked until the source
   * has given its last page or is closed (a value of one page is read at once and the file let
   * go). When the dataset's values live in other files (external raw storage, virtual dataset
   * sources), each must be inside the data root (403 otherwise, before libhdf5 touches it) and
   * readable by the user (`access`), and their domains stay read-locked as long as the file.
   * @throws H5StoreError before anything is sent: BadRequest (selection, fields, points),
   *   Forbidden, NotFound, PayloadTooLarge (limits, `format.maxBytes`), UnsupportedMediaType
   *   (a filter this server cannot decode), Unavailable (locks)
   */
  async readValues(domain: string, id: string, req: values.ReadRequest, format: values.ValueFormat, access: Access = allowAll): Promise<values.ValueSource> {
    const f = await this.fileFor(domain);
    // A file verified unchanged: a value read whole (no longer than a page) is read without the
    // file's cross-process locks and stands if the file is still unchanged afterwards
    // (files.ts `beginUnlocked`); a stream, or a read the file changed under, takes the locks.
    const unlocked = this.files.beginUnlocked(f);
    if (unlocked !== undefined) {
      let src: values.ValueSource | undefined;
      try {
        src = await this.openValues(f, id, req, format, access, unlocked, true);
      } catch (e) {
        if (unlocked()) throw e;
      }
      if (src && unlocked()) return src;
      await src?.close();
    }
    return (await this.openValues(f, id, req, format, access, await this.files.acquireRead(f), false))!;
  }

  /**
   * `readValues` once the file is held (`unlock` lets it go: called once, when the value is
   * read or the read fails). `wholeOnly`: a value that would be streamed is not opened (the
   * file let go, undefined returned) before anything is read.
   */
  private async openValues(f: DomainFile, id: string, req: values.ReadRequest, format: values.ValueFormat, access: Access, unlock: () => void, wholeOnly: boolean): Promise<values.ValueSource | undefined> {
    let leave: (() => Promise<void>) | undefined;
    let plan: values.ReadPlan | undefined;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      plan!.close();
      void leave!();
      unlock();
    };
    try {
      leave = await this.enterReached(f, id, 'read', access);
      plan = await hdf5Turn(() => values.planRead(f, id, req, this.limits));
      if (wholeOnly && !values.readsWhole(plan, format)) {
        release();
        return undefined;
      }
      // a file another program writes: libhdf5 failing on it while the pages are read is the
      // file changing under the read (503, Retry-After), not a fault of the server (issue #26)
      return await values.openValueSource(plan, format, this.pagePool, release, { log: this.opts.log, mapError: (e) => this.files.liveFailure(f, e) });
    } catch (e) {
      if (!released) {
        released = true;
        plan?.close();
        if (leave) await leave();
        unlock();
      }
      throw this.files.liveFailure(f, e);
    }
  }
  /** GET .../value?query= (or POST with the selection in the body): matching rows (values in other files: as `readValues`). */
  async queryValues(domain: string, id: string, query: string, opts: values.QueryRequest, access: Access = allowAll) {
    const f = await this.fileFor(domain);
    const unlock = await this.files.acquireRead(f);
    try {
      const leave = await this.enterReached(f, id, 'read', access);
      try {
        return await hdf5Turn(() => values.queryRows(f, id, query, opts, this.limits, this.pagePool));
      } finally {
        await leave();
      }
    } catch (e) {
      throw this.files.liveFailure(f, e);
    } finally {
      unlock();
    }
  }
  /** PUT .../value?query=: update matching rows (values in other files need `write` access). */
  queryUpdate(domain: string, id: string, query: string, update: unknown, opts: { select?: string; limit?: number }, access: Access = allowAll) {
    return this.write(domain, async (f) => {
      const leave = await this.enterReached(f, id, 'write', access);
      try {
        return await hdf5Turn(() => values.queryUpdate(f, id, query, update, opts, this.limits, this.pagePool));
      } finally {
        await leave();
      }
    });
  }
  /** PUT .../value (values in other files need `write` access to each of their domains). */
  writeValues(domain: string, id: string, req: values.WriteRequest, access: Access = allowAll) {
    return this.write(domain, async (f) => {
      const leave = await this.enterReached(f, id, 'write', access);
      try {
        return await hdf5Turn(() => values.writeValues(f, id, req, this.limits, this.pagePool));
      } finally {
        await leave();
      }
    });
  }

  /**
   * Before a value operation on dataset `id` of `f` (whose own lock is held): work out the files
   * inside the root it reaches (reach.ts; 403 when one leads outside), check the user may `mode`
   * what it reaches in each (`mayReach`), and lock those domains in this process (read locks for
   * reads; write locks, the cross-process lock and no read-only handle of ours for writes, as
   * libhdf5 opens them read-write), waiting at most REACH_LOCK_WAIT_MS (503 after). The reach is
   * worked out again once the locks are held and must not have grown.
   * @returns the function that releases the locks (flushing our handles of written domains).
   */
  private async enterReached(f: DomainFile, id: string, mode: AccessMode, access: Access): Promise<() => Promise<void>> {
    const reached = values.reachFor(f, id);
    if (reached.length === 0) return async () => undefined;
    await this.mayReach(f, reached, mode, access);
    const first = reachedDomains(f, reached);
    if (first.length === 0) return async () => undefined;
    const held: { entry: DomainFile; release: () => Promise<void> }[] = [];
    const leave = async () => {
      for (const h of held.reverse()) await h.release();
      held.length = 0;
    };
    // libhdf5 opens the sources with the intent of the handle it reads through: a read through a
    // read-write handle (kept after a write) opens them read-write, so lock them as for a write.
    const handling: AccessMode = mode === 'read' && f.writable ? 'write' : mode;
    try {
      for (const d of first) {
        let entry: DomainFile;
        try {
          entry = this.files.entry(d.domain, this.paths.resolve(d.domain));
        } catch (e) {
          if (!d.exists && e instanceof H5StoreError && e.code === 'NotFound') continue; // a missing VDS source
          throw e;
        }
        held.push({ entry, release: await this.lockReached(entry, d, handling) });
      }
      const again = await hdf5Turn(() => reachedDomains(f, values.reachFor(f, id)));
      const locked = new Set(first.map((d) => d.domain));
      if (again.some((d) => !locked.has(d.domain))) {
        throw new H5StoreError('Unavailable', 'The files this dataset reaches changed meanwhile; try again', { retryAfter: 1 });
      }
      return leave;
    } catch (e) {
      await leave();
      throw e;
    }
  }

  /**
   * Check that the requester may `mode` (`read`, or `update` for writes) everything a value
   * operation on a dataset of `f` reaches (issue #24 item 3), as if each were asked for by its
   * own request: each source dataset of a virtual dataset by its own ACL (in the dataset's own
   * file too); a file read or written as raw bytes (external storage) by its domain's ACL and the
   * ACL of every object in it that has one, since any of them may lie in those bytes; a source
   * file in which no source dataset was found (libhdf5 still opens it) and a missing file
   * (created by a write) by their domain's or folder's ACL. The own file's views come from the
   * file itself (its lock is held); the others' from `aclView`.
   * @throws H5StoreError Forbidden/Unauthorized (from `access`) naming the first refused.
   */
  private async mayReach(f: DomainFile, reached: ReachedFile[], mode: AccessMode, access: Access): Promise<void> {
    if (access.all) return;
    const flag = FLAG_FOR_MODE[mode];
    for (const r of reached) {
      if (!r.domain) continue; // nothing there, and nothing can be made there
      const own = r.domain === f.domain || r.real === f.path;
      const domain = own ? f.domain : r.domain;
      const about = (what: string) => ({ domain, what: `${what} (reached from this dataset's values)` });
      const root = own ? this.viewInFile(f) : await this.aclView(domain);
      // without object ACLs every object of the file is governed by the domain's (or folder's)
      if (!root.hasObjectAcls || (r.sources.size === 0 && !r.raw)) {
        access.check(root, flag, about(domain));
        continue;
      }
      if (r.raw) {
        access.check(root, flag, about(domain));
        for (const [key, acl] of Object.entries(await this.objectAclsOf(own ? f : domain))) {
          access.check({ ...root, object: acl }, flag, about(`object ${key} of ${domain}, whose bytes its external storage covers`));
        }
      }
      for (const addr of r.sources) {
        const view = own ? this.viewInFile(f, addr) : await this.aclView(domain, { addr });
        access.check(view, flag, about(`a source dataset of ${domain}`));
      }
    }
  }

  /** The own ACLs of the objects of a domain file (`{}` without ACL state; `f`: its lock is held). */
  private async objectAclsOf(file: DomainFile | string): Promise<Record<string, Acl>> {
    if (typeof file !== 'string') return readFileAcl(file)?.objects ?? {};
    if (this.mountOf(file)) return {};
    const p = this.paths.resolve(file);
    let st: fs.Stats;
    try {
      st = this.files.stats.stat(p);
    } catch {
      return {};
    }
    return st.isFile() ? ((await this.fileAcl(file, p, st))?.objects ?? {}) : {};
  }

  /** Lock one reached domain (see `enterReached`); returns its release. */
  private async lockReached(entry: DomainFile, d: ReachedFile, mode: AccessMode): Promise<() => Promise<void>> {
    const lock = entry.lock;
    const t0 = performance.now();
    const busy = () =>
      new H5StoreError('Unavailable', `Domain ${d.domain}, which this dataset's values live in, is busy; try again`, { retryAfter: 1 });
    while (!(mode === 'read' ? lock.tryRead() : lock.tryWrite())) {
      if (performance.now() - t0 > REACH_LOCK_WAIT_MS) throw busy();
      await new Promise((r) => setTimeout(r, 5));
    }
    if (mode === 'read') return async () => lock.releaseRead();
    let release: (() => void) | undefined;
    try {
      // The cross-process lock, our read-only handle closed (libhdf5 opens the file read-write
      // itself, through the journaling driver of the dataset's file), and the driver told it
      // may write this file in place (vfd.ts allowDirectWrites).
      release = await this.files.holdForDirectWrite(entry, Math.max(0, REACH_LOCK_WAIT_MS - (performance.now() - t0)));
    } catch (e) {
      lock.releaseWrite();
      throw e;
    }
    return async () => {
      try {
        release?.();
      } finally {
        lock.releaseWrite();
      }
    };
  }

  /** Open HDF5 object ids over all open files (for leak tests; 0 between requests). */
  openIdCount(): number {
    return this.files.openIdCount();
  }
}

/**
 * The other domains among the files a dataset reaches, sorted (locks are taken in this order),
 * without its own domain and without files that do not exist and cannot be created.
 */
function reachedDomains(own: DomainFile, files: ReachedFile[]): ReachedFile[] {
  const by = new Map<string, ReachedFile>();
  for (const r of files) if (r.domain && r.domain !== own.domain && r.real !== own.path && !by.has(r.domain)) by.set(r.domain, r);
  return [...by.values()].sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
}
