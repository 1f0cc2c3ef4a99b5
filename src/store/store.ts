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
import { badRequest, conflict, gone, notFound } from '../errors.js';
import { LIB_INFO } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import type { ObjectKind } from '../hdf5/objects.js';
import * as attrs from './attributes.js';
import * as dsets from './datasets.js';
import * as dtypes from './datatypes.js';
import type { DomainFile } from './domainFile.js';
import { FileCache, type FileLog } from './files.js';
import * as groups from './groups.js';
import * as links from './links.js';
import { BufferPool, PagePool } from './pagepool.js';
import { DomainPaths, FOLDER_META, LOCK_SUFFIX, parentDomain } from './paths.js';
import { serviceName } from './servicefiles.js';
import * as values from './values.js';

export interface StoreOptions {
  root: string;
  idleCloseMs: number;
  maxOpenFiles: number;
  /** Owner reported for domains and folders that record none. */
  defaultOwner: string;
  pageBytes: number;
  maxPoints: number;
  /** Longest wait for a file another process holds, then 503 (ms; default 5000). */
  lockWaitMs?: number;
  /** fsync policy of writes (default `always`). */
  fsync?: 'always' | 'never';
  /** Where repairs of crashed writes are reported. */
  log?: FileLog;
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
  readonly limits: values.ValueLimits;
  /** Page buffers reused by streamed value reads (see pagepool.ts). */
  readonly pagePool: PagePool;
  /** Buffers reused for binary request bodies of value writes. */
  readonly bodyPool = new BufferPool();
  private readonly goneDomains = new Set<string>();

  constructor(readonly opts: StoreOptions) {
    this.paths = new DomainPaths(opts.root);
    this.files = new FileCache({
      idleCloseMs: opts.idleCloseMs,
      maxOpenFiles: opts.maxOpenFiles,
      lockWaitMs: opts.lockWaitMs,
      fsync: opts.fsync,
      log: opts.log,
    });
    this.limits = { pageBytes: opts.pageBytes, maxPoints: opts.maxPoints };
    this.pagePool = new PagePool(opts.pageBytes);
  }

  /** The HDF5 library in use. */
  get libraryVersion(): string {
    return LIB_INFO.version;
  }

  /**
   * Start-up scan of the data directory: repair every domain file whose write a crash
   * interrupted (an active journal in its lock file, or a stale lock directory of an earlier
   * version of h5store), and remove temporary files of domain creations a crash interrupted.
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
    return this.files.entry(domain, p);
  }

  /** Run a read on a domain file. */
  read<T>(domain: string, fn: (f: DomainFile) => T): Promise<T> {
    return this.files.read(this.fileOf(domain), fn);
  }

  /** Run a write on a domain file (flushed before the locks are released). */
  write<T>(domain: string, fn: (f: DomainFile) => T): Promise<T> {
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
    const tmp = path.join(path.dirname(p), serviceName(path.basename(p), `.${crypto.randomBytes(6).toString('hex')}.new`));
    if (!this.files.createFile(p, tmp, { trackOrder: opts.trackOrder })) throw conflict(`${domain} already exists`);
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
      const all = fs.readdirSync(p);
      const entries = all.filter((n) => n !== FOLDER_META && !n.endsWith(LOCK_SUFFIX));
      if (entries.length) throw conflict('folder has sub-items');
      // Left-over service files: lock files of deleted domains, old lock directories.
      for (const n of all) if (n.endsWith(LOCK_SUFFIX)) fs.rmSync(path.join(p, n), { recursive: true, force: true });
      fs.rmSync(path.join(p, FOLDER_META), { force: true });
      fs.rmdirSync(p);
    } else {
      await this.files.deleteFile(this.files.entry(domain, p));
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

  getDataset(domain: string, id: string, opts: { includeAttrs?: boolean; alias?: boolean }) {
    return this.read(domain, (f) => dsets.getDataset(f, id, opts));
  }
  getDatasetTypeAndShape(domain: string, id: string) {
    return this.read(domain, (f) => dsets.getTypeAndShape(f, id));
  }
  createDataset(domain: string, body: Record<string, unknown>, implicit: boolean) {
    return this.write(domain, (f) => dsets.createDataset(f, body, implicit));
  }
  resizeDataset(domain: string, id: string, body: Record<string, unknown>) {
    return this.write(domain, (f) => dsets.resizeDataset(f, id, body));
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
    return this.write(domain, (f) => attrs.putAttribute(f, kind, id, name, attrs.parseAttributeBody(f, body), replace));
  }
  /** PUT several attributes: all validated first, then written (201 if any changed). */
  putAttributes(domain: string, kind: ObjectKind, id: string, items: Record<string, unknown>, replace: boolean) {
    return this.write(domain, (f) => {
      const specs = Object.entries(items).map(([n, b]) => [attrs.checkAttrName(n), attrs.parseAttributeBody(f, b)] as const);
      let created = false;
      for (const [n, s] of specs) if (attrs.putAttribute(f, kind, id, n, s, replace) === 'created') created = true;
      return created ? 'created' : 'exists';
    });
  }
  deleteAttribute(domain: string, kind: ObjectKind, id: string, name: string) {
    return this.write(domain, (f) => attrs.deleteAttribute(f, kind, id, name));
  }
  deleteAttributes(domain: string, kind: ObjectKind, id: string, names: string[]) {
    return this.write(domain, (f) => attrs.deleteAttributes(f, kind, id, names));
  }
  writeAttributeValue(domain: string, kind: ObjectKind, id: string, name: string, value: { json?: unknown; wire?: Buffer }) {
    return this.write(domain, (f) => attrs.writeAttributeValue(f, kind, id, name, value));
  }

  /**
   * Plan a dataset value read while holding the domain's read lock; the lock is held until the
   * returned `release` is called (after the last page was sent).
   */
  async openValueRead(domain: string, id: string, req: values.ReadRequest): Promise<{ plan: values.ReadPlan; release: () => void }> {
    const f = this.fileOf(domain);
    const unlock = await this.files.acquireRead(f);
    try {
      const plan = values.planRead(f, id, req, this.limits);
      return {
        plan,
        release: () => {
          plan.close();
          unlock();
        },
      };
    } catch (e) {
      unlock();
      throw e;
    }
  }
  queryValues(domain: string, id: string, query: string, opts: { select?: string; limit?: number; fields?: string }) {
    return this.read(domain, (f) => values.queryRows(f, id, query, opts, this.limits, this.pagePool));
  }
  queryUpdate(domain: string, id: string, query: string, update: unknown, opts: { select?: string; limit?: number }) {
    return this.write(domain, (f) => values.queryUpdate(f, id, query, update, opts, this.limits, this.pagePool));
  }
  writeValues(domain: string, id: string, req: values.WriteRequest) {
    return this.write(domain, (f) => values.writeValues(f, id, req, this.limits, this.pagePool));
  }

  /** Open HDF5 object ids over all open files (for leak tests; 0 between requests). */
  openIdCount(): number {
    return this.files.openIdCount();
  }
}
