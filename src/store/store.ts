/**
 * The store: domains and folders on disk, and every object operation, behind locks.
 *
 * This is the one entry point of the HTTP handlers (DESIGN.md section 7). Methods take a domain
 * path (already normalised by `normalizeDomain`) and return plain data; they know nothing of
 * Koa or HTTP statuses. Reads run under the domain's shared lock, writes under its exclusive
 * lock plus the cross-process file lock, and are flushed before the lock is released.
 */
import fs from 'node:fs';
import path from 'node:path';
import { H5StoreError, badRequest, conflict, gone, notFound } from '../errors.js';
import { hdf5Busy, whenIdle } from '../hdf5/heavy.js';
import { LIB_INFO } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import type { ObjectKind } from '../hdf5/objects.js';
import * as attrs from './attributes.js';
import * as dsets from './datasets.js';
import * as dtypes from './datatypes.js';
import type { DomainFile } from './domainFile.js';
import { FileCache, lockPathFor } from './files.js';
import * as groups from './groups.js';
import * as links from './links.js';
import { BufferPool, PagePool } from './pagepool.js';
import { DomainPaths, FOLDER_META, LOCK_SUFFIX, parentDomain } from './paths.js';
import { type AccessMode, type DomainAccess, allowAllDomains } from './access.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { type ReachedFile } from './reach.js';
import * as values from './values.js';

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
  /** The other limits (src/store/limits.ts); defaults for those not given. */
  maxChunkBytes?: number;
  maxDatasetBytes?: number;
  maxSelectionBytes?: number;
  maxAttributeBytes?: number;
  maxBroadcastBytes?: number;
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

  constructor(readonly opts: StoreOptions) {
    this.paths = new DomainPaths(opts.root);
    this.files = new FileCache({ idleCloseMs: opts.idleCloseMs, maxOpenFiles: opts.maxOpenFiles });
    this.limits = {
      pageBytes: opts.pageBytes,
      maxPoints: opts.maxPoints,
      maxChunkBytes: opts.maxChunkBytes ?? DEFAULT_LIMITS.maxChunkBytes,
      maxDatasetBytes: opts.maxDatasetBytes ?? DEFAULT_LIMITS.maxDatasetBytes,
      maxSelectionBytes: opts.maxSelectionBytes ?? DEFAULT_LIMITS.maxSelectionBytes,
      maxAttributeBytes: opts.maxAttributeBytes ?? DEFAULT_LIMITS.maxAttributeBytes,
      maxBroadcastBytes: opts.maxBroadcastBytes ?? DEFAULT_LIMITS.maxBroadcastBytes,
    };
    this.pagePool = new PagePool(opts.pageBytes);
  }

  /** The HDF5 library in use. */
  get libraryVersion(): string {
    return LIB_INFO.version;
  }

  /** Close every open file (shutdown). */
  close(): void {
    this.files.closeAll();
  }

  // -------------------------------------------------------------------------------------------
  // Domains and folders

  /**
   * The file system path and stat of a domain or folder.
   * @throws Gone when deleted earlier in this process, NotFound otherwise when missing.
   */
  private statOf(domain: string): { p: string; st: fs.Stats } {
    const p = this.paths.resolve(domain);
    try {
      return { p, st: fs.statSync(p) };
    } catch {
      if (this.goneDomains.has(domain)) throw gone(`Domain ${domain} has been deleted`);
      throw notFound(`Domain ${domain} not found`);
    }
  }

  /** Lookup of a domain file (not a folder): 404/410 when missing, 400 for a folder. */
  private fileOf(domain: string): DomainFile {
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    if (!st.isFile()) throw badRequest(`${domain} is not a regular file`);
    const f = this.files.entry(domain, p);
    f.reach ??= { paths: this.paths };
    return f;
  }

  /**
   * Run a read on a domain file. Waits first while a long libhdf5 call runs on the worker thread
   * (src/hdf5/heavy.ts), so the event loop stays free for requests that need no libhdf5.
   */
  async read<T>(domain: string, fn: (f: DomainFile) => T): Promise<T> {
    if (hdf5Busy()) await whenIdle();
    return this.files.read(this.fileOf(domain), fn);
  }

  /** Run a write on a domain file (flushed before the locks are released); waits as `read`. */
  async write<T>(domain: string, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    if (hdf5Busy()) await whenIdle();
    return this.files.write(this.fileOf(domain), fn);
  }

  private folderJson(p: string, st: fs.Stats): DomainJson {
    return {
      class: 'folder',
      owner: this.opts.defaultOwner,
      created: (st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs) / 1000,
      lastModified: st.mtimeMs / 1000,
    };
  }

  /** GET /: the domain (with its root id) or folder record. */
  async getDomain(domain: string): Promise<DomainJson> {
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) return this.folderJson(p, st);
    return this.read(domain, (f) => {
      const t = f.fileTimes();
      return { class: 'domain', owner: this.opts.defaultOwner, root: f.rootId, created: t.created, lastModified: t.lastModified };
    });
  }

  /**
   * PUT /: create an empty HDF5 file, or a folder. The parent folder must exist.
   * @throws Conflict when the domain or folder exists; NotFound when the parent is missing.
   */
  async createDomain(domain: string, opts: { folder?: boolean; trackOrder?: boolean }): Promise<DomainJson> {
    const p = this.paths.resolve(domain);
    const parent = this.paths.resolve(parentDomain(domain));
    let pst: fs.Stats;
    try {
      pst = fs.statSync(parent);
    } catch {
      throw notFound(`Parent folder ${parentDomain(domain)} not found`);
    }
    if (!pst.isDirectory()) throw badRequest('Parent domain must be a folder');
    if (DomainPaths.exists(p)) throw conflict(`${domain} already exists`);
    if (opts.folder) {
      try {
        fs.mkdirSync(p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw conflict(`${domain} already exists`);
        throw e;
      }
      this.goneDomains.delete(domain);
      return this.folderJson(p, fs.statSync(p));
    }
    const release = await this.files.crossProcessLock(p);
    try {
      if (DomainPaths.exists(p)) throw conflict(`${domain} already exists`);
      let fid;
      try {
        fid = h5.createFile(p, { trackOrder: opts.trackOrder });
      } catch (e) {
        if (DomainPaths.exists(p)) throw conflict(`${domain} already exists`);
        throw e;
      }
      h5.closeFile(fid);
    } finally {
      await release();
    }
    this.goneDomains.delete(domain);
    this.files.forget(domain);
    return this.getDomain(domain);
  }

  /**
   * DELETE /: remove a domain file, or an empty folder.
   * @throws Conflict for a folder with entries; NotFound/Gone when missing.
   */
  async deleteDomain(domain: string): Promise<void> {
    const { p, st } = this.statOf(domain);
    if (st.isDirectory()) {
      const entries = fs.readdirSync(p).filter((n) => n !== FOLDER_META && !n.endsWith(LOCK_SUFFIX));
      if (entries.length) throw conflict('folder has sub-items');
      fs.rmSync(path.join(p, FOLDER_META), { force: true });
      fs.rmdirSync(p);
    } else {
      const f = this.files.entry(domain, p);
      await f.lock.write();
      try {
        const release = await this.files.crossProcessLock(p);
        try {
          this.files.close(f);
          fs.unlinkSync(p);
        } finally {
          await release().catch(() => undefined);
          fs.rmSync(lockPathFor(p), { recursive: true, force: true });
        }
      } finally {
        f.lock.releaseWrite();
      }
      this.files.forget(domain);
    }
    this.goneDomains.add(domain);
  }

  /**
   * GET /domains: entries of a folder in name order, after `marker` (a full domain path),
   * at most `limit`. Hidden service files are skipped.
   */
  async listFolder(folder: string, opts: { limit?: number; marker?: string; pattern?: (name: string) => boolean; verbose?: boolean }): Promise<FolderItem[]> {
    const p = this.paths.resolve(folder);
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      throw notFound(`Folder ${folder} not found`);
    }
    if (!st.isDirectory()) throw badRequest(`${folder} is a domain, not a folder`);
    const names = fs
      .readdirSync(p)
      .filter((n) => n !== FOLDER_META && !n.endsWith(LOCK_SUFFIX))
      .sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
    const base = folder === '/' ? '' : folder;
    let start = 0;
    if (opts.marker) {
      const m = opts.marker.replace(/^"(.*)"$/s, '$1');
      start = names.findIndex((n) => `${base}/${n}` > m);
      if (start < 0) start = names.length;
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const out: FolderItem[] = [];
    for (let i = start; i < names.length && out.length < limit; i++) {
      const n = names[i];
      if (opts.pattern && !opts.pattern(n)) continue;
      let est: fs.Stats;
      try {
        est = fs.statSync(path.join(p, n));
      } catch {
        continue;
      }
      const name = `${base}/${n}`;
      if (est.isDirectory()) {
        out.push({ name, ...this.folderJson(path.join(p, n), est) });
      } else if (est.isFile()) {
        const item: FolderItem = {
          name,
          class: 'domain',
          owner: this.opts.defaultOwner,
          created: (est.birthtimeMs > 0 ? est.birthtimeMs : est.ctimeMs) / 1000,
          lastModified: est.mtimeMs / 1000,
        };
        if (opts.verbose) {
          try {
            item.root = await this.read(name, (f) => f.rootId);
          } catch {
            /* not HDF5: listed without root */
          }
        }
        out.push(item);
      }
    }
    return out;
  }

  /** `verbose=1` statistics of a domain (full traversal; wire-reference 1.3). */
  domainStats(domain: string): Promise<Record<string, number>> {
    return this.read(domain, (f) => {
      const all = f.allObjects();
      let g = 0;
      let ds = 0;
      let dt = 0;
      for (const k of all.values()) {
        if (k === 'group') g++;
        else if (k === 'dataset') ds++;
        else if (k === 'datatype') dt++;
      }
      const size = f.stamp?.size ?? 0;
      return { num_groups: g, num_datasets: ds, num_datatypes: dt, num_objects: all.size, total_size: size, allocated_bytes: size };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Path lookup

  /** GET /?h5path= and GET /{groups,datasets,datatypes}/?h5path=: the object at a path. */
  lookupPath(domain: string, h5path: string, parentId?: string): Promise<{ kind: ObjectKind; json: Record<string, unknown> }> {
    return this.read(domain, (f) => {
      const start = parentId ? f.resolve(parentId, 'group') : undefined;
      const { addr, kind } = links.resolvePath(f, h5path, start);
      return h5.withObject(f.h, addr, (oid) => {
        const json =
          kind === 'group'
            ? groups.groupJsonOf(f, oid, addr)
            : kind === 'dataset'
              ? dsets.datasetJsonOf(f, oid, addr)
              : dtypes.datatypeJsonOf(f, oid, addr);
        return { kind, json: json as unknown as Record<string, unknown> };
      });
    });
  }

  // -------------------------------------------------------------------------------------------
  // Objects

  getGroup(domain: string, id: string, opts: { includeLinks?: boolean; includeAttrs?: boolean; alias?: boolean }) {
    return this.read(domain, (f) => groups.getGroup(f, id, opts));
  }
  createGroup(domain: string, body: Record<string, unknown>, implicit: boolean) {
    return this.write(domain, (f) => groups.createGroup(f, body, implicit));
  }
  deleteObject(domain: string, kind: ObjectKind, id: string) {
    return this.write(domain, (f) => groups.deleteObject(f, kind, id));
  }
  listCollection(domain: string, kind: ObjectKind, opts: { limit?: number; marker?: string }) {
    return this.read(domain, (f) => groups.listCollection(f, kind, opts));
  }
  rootId(domain: string) {
    return this.read(domain, (f) => f.rootId);
  }

  listLinks(domain: string, groupId: string, opts: links.LinkListOptions) {
    return this.read(domain, (f) => links.listLinks(f, groupId, opts));
  }
  listLinksDeep(domain: string, groupId: string, opts: { limit?: number; pattern?: (name: string) => boolean }) {
    return this.read(domain, (f) => links.listLinksDeep(f, groupId, opts));
  }
  getLink(domain: string, groupId: string, name: string) {
    return this.read(domain, (f) => links.getLink(f, groupId, name));
  }
  putLink(domain: string, groupId: string, name: string, spec: links.LinkSpec) {
    return this.write(domain, (f) => links.putLink(f, groupId, name, spec));
  }
  deleteLink(domain: string, groupId: string, name: string) {
    return this.write(domain, (f) => links.deleteLink(f, groupId, name));
  }
  /** PUT several links: all checked first, then written under one lock (201 if any is new). */
  putLinks(domain: string, groupId: string, items: [string, links.LinkSpec][]) {
    return this.write(domain, (f) => links.putLinks(f, groupId, items));
  }
  /** DELETE several links: all must exist, then all are deleted under one lock. */
  deleteLinks(domain: string, groupId: string, names: string[]) {
    return this.write(domain, (f) => links.deleteLinks(f, groupId, names));
  }

  getDataset(domain: string, id: string, opts: { includeAttrs?: boolean; alias?: boolean }) {
    return this.read(domain, (f) => dsets.getDataset(f, id, opts));
  }
  getDatasetTypeAndShape(domain: string, id: string) {
    return this.read(domain, (f) => dsets.getTypeAndShape(f, id));
  }
  createDataset(domain: string, body: Record<string, unknown>, implicit: boolean) {
    return this.write(domain, (f) => dsets.createDataset(f, body, implicit, this.limits));
  }
  resizeDataset(domain: string, id: string, body: Record<string, unknown>) {
    return this.write(domain, (f) => dsets.resizeDataset(f, id, body, this.limits));
  }

  getDatatype(domain: string, id: string, opts: { includeAttrs?: boolean; alias?: boolean } = {}) {
    return this.read(domain, (f) => dtypes.getDatatype(f, id, opts));
  }
  createDatatype(domain: string, body: Record<string, unknown>, implicit: boolean) {
    return this.write(domain, (f) => dtypes.createDatatype(f, body, implicit));
  }

  listAttributes(domain: string, kind: ObjectKind, id: string, opts: attrs.AttributeListOptions) {
    return this.read(domain, (f) => attrs.listAttributes(f, kind, id, opts));
  }
  attributesByName(domain: string, kind: ObjectKind, id: string, names: string[], includeData: boolean) {
    return this.read(domain, (f) => attrs.attributesByName(f, kind, id, names, includeData));
  }
  getAttribute(domain: string, kind: ObjectKind, id: string, name: string, includeData = true) {
    return this.read(domain, (f) => attrs.getAttribute(f, kind, id, name, includeData));
  }
  readAttributeValue(domain: string, kind: ObjectKind, id: string, name: string) {
    return this.read(domain, (f) => attrs.readAttributeValue(f, kind, id, name));
  }
  /** PUT one attribute (validated inside the write lock, before anything is written). */
  putAttribute(domain: string, kind: ObjectKind, id: string, name: string, body: unknown, replace: boolean) {
    return this.write(domain, (f) => attrs.putAttribute(f, kind, id, name, attrs.parseAttributeBody(f, body, this.limits), replace));
  }
  /** PUT several attributes: all validated first, then written (201 if any changed). */
  putAttributes(domain: string, kind: ObjectKind, id: string, items: Record<string, unknown>, replace: boolean) {
    return this.write(domain, (f) => {
      const specs = Object.entries(items).map(([n, b]) => [attrs.checkAttrName(n), attrs.parseAttributeBody(f, b, this.limits)] as [string, attrs.AttributeSpec]);
      return attrs.putAttributes(f, kind, id, specs, replace);
    });
  }
  deleteAttribute(domain: string, kind: ObjectKind, id: string, name: string) {
    return this.write(domain, (f) => attrs.deleteAttribute(f, kind, id, name));
  }
  deleteAttributes(domain: string, kind: ObjectKind, id: string, names: string[]) {
    return this.write(domain, (f) => attrs.deleteAttributes(f, kind, id, names));
  }
  writeAttributeValue(domain: string, kind: ObjectKind, id: string, name: string, value: { json?: unknown; wire?: Buffer }) {
    return this.write(domain, (f) => attrs.writeAttributeValue(f, kind, id, name, value, this.limits));
  }

  /**
   * Plan a dataset value read while holding the domain's read lock; the lock is held until the
   * returned `release` is called (after the last page was sent). When the dataset's values live
   * in other files (external raw storage, virtual dataset sources), each must be inside the data
   * root (403 otherwise, before libhdf5 touches it) and readable by the user (`access`), and
   * their domains stay read-locked as long as the plan.
   */
  async openValueRead(domain: string, id: string, req: values.ReadRequest, access: DomainAccess = allowAllDomains): Promise<{ plan: values.ReadPlan; release: () => void }> {
    if (hdf5Busy()) await whenIdle();
    const f = this.fileOf(domain);
    const unlock = await this.files.acquireRead(f);
    let leave: (() => Promise<void>) | undefined;
    try {
      leave = await this.enterReached(f, id, 'read', access);
      const plan = values.planRead(f, id, req, this.limits);
      if (plan.prefetch) {
        try {
          await plan.prefetch();
        } catch (e) {
          plan.close();
          throw e;
        }
      }
      let released = false;
      return {
        plan,
        release: () => {
          if (released) return;
          released = true;
          plan.close();
          void leave!();
          unlock();
        },
      };
    } catch (e) {
      if (leave) await leave();
      unlock();
      throw e;
    }
  }
  /** GET .../value?query=: matching rows (values in other files: as `openValueRead`). */
  async queryValues(domain: string, id: string, query: string, opts: { select?: string; limit?: number; fields?: string }, access: DomainAccess = allowAllDomains) {
    if (hdf5Busy()) await whenIdle();
    const f = this.fileOf(domain);
    const unlock = await this.files.acquireRead(f);
    try {
      const leave = await this.enterReached(f, id, 'read', access);
      try {
        return values.queryRows(f, id, query, opts, this.limits, this.pagePool);
      } finally {
        await leave();
      }
    } finally {
      unlock();
    }
  }
  /** PUT .../value?query=: update matching rows (values in other files need `write` access). */
  queryUpdate(domain: string, id: string, query: string, update: unknown, opts: { select?: string; limit?: number }, access: DomainAccess = allowAllDomains) {
    return this.write(domain, async (f) => {
      const leave = await this.enterReached(f, id, 'write', access);
      try {
        return values.queryUpdate(f, id, query, update, opts, this.limits, this.pagePool);
      } finally {
        await leave();
      }
    });
  }
  /** PUT .../value (values in other files need `write` access to each of their domains). */
  writeValues(domain: string, id: string, req: values.WriteRequest, access: DomainAccess = allowAllDomains) {
    return this.write(domain, async (f) => {
      const leave = await this.enterReached(f, id, 'write', access);
      try {
        return await values.writeValues(f, id, req, this.limits, this.pagePool);
      } finally {
        await leave();
      }
    });
  }

  /**
   * Before a value operation on dataset `id` of `f` (whose own lock is held): work out the files
   * inside the root it reaches (reach.ts; 403 when one leads outside), check the user may `mode`
   * each of their domains (`access`), and lock those domains in this process (read locks for
   * reads; write locks, the cross-process lock and no read-only handle of ours for writes, as
   * libhdf5 opens them read-write), waiting at most REACH_LOCK_WAIT_MS (503 after). The reach is
   * worked out again once the locks are held and must not have grown.
   * @returns the function that releases the locks (flushing our handles of written domains).
   */
  private async enterReached(f: DomainFile, id: string, mode: AccessMode, access: DomainAccess): Promise<() => Promise<void>> {
    const first = reachedDomains(f, values.reachFor(f, id));
    if (first.length === 0) return async () => undefined;
    for (const d of first) await access(d.domain, mode);
    const held: { entry: DomainFile; release: () => Promise<void> }[] = [];
    const leave = async () => {
      for (const h of held.reverse()) await h.release();
      held.length = 0;
    };
    try {
      for (const d of first) {
        const entry = this.files.entry(d.domain, this.paths.resolve(d.domain));
        held.push({ entry, release: await this.lockReached(entry, d, mode) });
      }
      const again = reachedDomains(f, values.reachFor(f, id));
      const locked = new Set(first.map((d) => d.domain));
      if (again.some((d) => !locked.has(d.domain))) {
        throw new H5StoreError('Unavailable', 'The files this dataset reaches changed meanwhile; try again', { 'Retry-After': '1' });
      }
      return leave;
    } catch (e) {
      await leave();
      throw e;
    }
  }

  /** Lock one reached domain (see `enterReached`); returns its release. */
  private async lockReached(entry: DomainFile, d: ReachedFile, mode: AccessMode): Promise<() => Promise<void>> {
    const lock = entry.lock;
    const t0 = performance.now();
    const busy = () =>
      new H5StoreError('Unavailable', `Domain ${d.domain}, which this dataset's values live in, is busy; try again`, { 'Retry-After': '1' });
    while (!(mode === 'read' ? lock.tryRead() : lock.tryWrite())) {
      if (performance.now() - t0 > REACH_LOCK_WAIT_MS) throw busy();
      await new Promise((r) => setTimeout(r, 5));
    }
    if (mode === 'read') return async () => lock.releaseRead();
    let unlockFile: (() => Promise<void>) | undefined;
    try {
      if (d.exists) unlockFile = await this.files.crossProcessLock(entry.path);
      // libhdf5 opens the file read-write itself: a read-only handle of ours would make that
      // open fail ("file is already open for read-only"); a read-write one is shared.
      if (entry.fid !== undefined && !entry.writable) this.files.close(entry);
    } catch (e) {
      lock.releaseWrite();
      throw e;
    }
    return async () => {
      try {
        if (entry.fid !== undefined) h5.flushFile(entry.fid);
      } finally {
        if (unlockFile) await unlockFile().catch(() => undefined);
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
