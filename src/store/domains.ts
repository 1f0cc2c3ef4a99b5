/**
 * Domains and folders (a part of the `Store` facade, store.ts): their records (`GET /`),
 * creation and deletion (`PUT /`, `DELETE /`), folder listings (`GET /domains`), a domain's
 * statistics and objects (`verbose=1`, `getobjs=1`), flushes and administrators' repairs, a
 * domain's file as bytes (`GET /file`), change feeds (`GET /events`), and whether a dataset's
 * answers come from its domain file alone (ETags).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { H5StoreError, badRequest, conflict, notFound } from '../errors.js';
import * as h5 from '../hdf5/objects.js';
import type { ObjectKind } from '../hdf5/objects.js';
import { type Access, type AclView, allowAll } from './access/access.js';
import { readFileAcl, writeFileAcl } from './access/acls.js';
import { storageKindOf } from './access/reach.js';
import type { Acl } from '../auth/acl.js';
import type { AclViews } from './aclViews.js';
import type { DomainFiles } from './domainFiles.js';
import { type Mount, readOnly } from './mounts/mount.js';
import { isClientIdForm } from './objects/clientIds.js';
import { extraCreationProperties, storeCreationProperties } from './objects/cprops.js';
import * as dsets from './objects/datasets.js';
import { DOMAIN_OBJS_MAX, type DomainStats, computeDomainStats, domainObjects } from './objects/domainObjects.js';
import { type DomainQuery, rootAttributeRow } from './objects/domainQuery.js';
import { domainKey, fileIdentity, noteDomainKey } from './objects/ids.js';
import { pageLimit, startAfterOrdered } from './objects/paging.js';
import { DomainPaths, isServiceName, parentDomain } from './objects/paths.js';
import { type FileSnapshot, openSnapshot } from './session/download.js';
import { fileStatus } from './session/fileStatus.js';
import { DomainFeeds, type FeedObject, type FeedSnapshot, type Follower } from './session/liveFeed.js';
import { serviceName } from './session/servicefiles.js';

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

/** The cache key of one version of a file: path, inode, size, mtime, ctime. */
function statsKey(p: string, st: fs.Stats): string {
  return `${p}\u0000${st.ino}\u0000${st.size}\u0000${st.mtimeMs}\u0000${st.ctimeMs}`;
}

/** A change feed follows at most this many objects of a domain (liveFeed.ts; beyond: only ids asked for). */
export const FEED_MAX_OBJECTS = 2000;

export class Domains {
  /** `verbose=1` statistics by file version (see `domainStats`). */
  private readonly statsCache = new LRUCache<string, DomainStats>({ max: 4096 });
  /**
   * `datasetIsLocal`'s answers, keyed by the file's version (fileVersion's tag: a write or
   * another program's change makes new keys), the domain and the dataset id; bounded.
   */
  private readonly localDatasets = new LRUCache<string, boolean>({ max: 8192 });
  /** The change feeds of followed domains (`follow`). */
  private readonly feeds: DomainFeeds;

  constructor(
    private readonly core: DomainFiles,
    private readonly acls: AclViews,
  ) {
    this.feeds = new DomainFeeds(
      {
        snapshot: (domain, ids, max) => this.feedSnapshot(domain, ids, max),
        check: (domain) => this.core.read(domain, () => undefined),
        watch: (listener) => this.core.files.watch(listener),
      },
      { pollMs: core.opts.eventPollMs ?? 100, maxObjects: FEED_MAX_OBJECTS, maxFollowers: core.opts.maxEventStreams ?? 1000 },
    );
  }

  /** Stop every change feed (shutdown). */
  close(): void {
    this.feeds.close();
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
    const m = this.core.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const { p, st } = this.core.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    if (!st.isFile()) throw badRequest(`${domain} is not a regular file`);
    return this.core.files.adminRepair(domain, p, opts);
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
    const v = this.core.fileVersion(domain, 0);
    const key = v && `${v.tag}\u0000${domain}\u0000${id}`;
    const known = key === undefined ? undefined : this.localDatasets.get(key);
    if (known !== undefined) return known;
    const local = await this.core.read(domain, (f) => f.withId(id, 'dataset', (did, addr) => storageKindOf(f, did, addr) === 'plain'));
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
    const { st } = this.core.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder: changes are followed per domain`);
    return this.feeds.follow(domain, ids, f);
  }

  /** The snapshot of a followed domain (liveFeed.ts `FeedSource.snapshot`). */
  private feedSnapshot(domain: string, ids: string[] | undefined, max: number): Promise<FeedSnapshot> {
    return this.core.read(domain, (f) => {
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

  private folderJson(p: string, st: fs.Stats): DomainJson {
    return {
      class: 'folder',
      owner: this.core.folders.effective(p)?.owner || this.core.opts.defaultOwner,
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
    const m = this.core.mountOf(domain);
    if (m) return m.snapshot(domain);
    return this.core.read(domain, (f) => {
      if (!access.all) {
        const root = this.acls.viewInFile(f);
        for (const [key, acl] of Object.entries(readFileAcl(f)?.objects ?? {})) {
          access.check({ ...root, object: acl }, 'read', { domain, what: `${domain} as a file (object ${key} in it has an ACL of its own)` });
        }
      }
      return openSnapshot(f.handle.realPath, f.handle.dev, f.handle.ino, domain);
    });
  }

  /** GET /: the domain (with its root id) or folder record. */
  async getDomain(domain: string): Promise<DomainJson> {
    const m = this.core.mountOf(domain);
    if (m) {
      const e = await m.stat(domain);
      const owner = this.acls.mountFolderAcl(m)?.owner || this.core.opts.defaultOwner;
      if (e.kind === 'folder') return { class: 'folder', owner, created: e.created, lastModified: e.lastModified };
      return this.core.read(domain, (f) => {
        const t = f.fileTimes();
        return { class: 'domain', owner, root: f.rootId, created: t.created, lastModified: t.lastModified };
      });
    }
    const { p, st } = this.core.statOf(domain);
    if (st.isDirectory()) return this.folderJson(p, st);
    const known = await this.core.readRemembered(domain, 'domain', (f) => {
      const t = f.fileTimes();
      return { root: f.rootId, created: t.created, lastModified: t.lastModified, owner: readFileAcl(f)?.owner };
    });
    // the folder's owner is not the file's: looked up on every request (its sidecar may change)
    const owner = known.owner || this.core.folders.effective(path.dirname(p))?.owner || this.core.opts.defaultOwner;
    return { class: 'domain', owner, root: known.root, created: known.created, lastModified: known.lastModified };
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
    const m = this.core.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const p = this.core.paths.resolve(domain);
    const parent = this.core.paths.resolve(parentDomain(domain));
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
      this.core.noteGone(domain, false);
      this.core.paths.forget(domain);
      this.core.folders.forget(p);
      if (opts.owner !== undefined && opts.acl) this.core.folders.write(p, { owner: opts.owner, acls: opts.acl });
      this.core.publish({ t: 'made', domain });
      return this.folderJson(p, fs.statSync(p));
    }
    const tmp = path.join(path.dirname(p), serviceName(path.basename(p), `.${crypto.randomBytes(6).toString('hex')}.new`));
    if (!(await this.core.files.createFile(p, tmp, { trackOrder: opts.trackOrder }))) throw conflict(`${domain} already exists`);
    this.core.noteGone(domain, false);
    this.core.paths.forget(domain);
    this.core.files.forget(domain);
    try {
      if ((opts.owner !== undefined && opts.acl) || opts.rootId !== undefined || extra) {
        await this.core.write(domain, (f) => {
          if (opts.owner !== undefined && opts.acl) writeFileAcl(f, { owner: opts.owner, root: opts.acl, objects: {} });
          if (opts.rootId !== undefined) {
            f.clientIds.add(opts.rootId, { addr: f.rootAddr, gen: 0, kind: 'group' });
            f.clientIds.save(f.reserved);
          }
          if (extra) storeCreationProperties(f, f.rootAddr, extra);
        });
      }
    } finally {
      this.core.publish({ t: 'made', domain });
    }
    return this.getDomain(domain);
  }

  /**
   * DELETE /: remove a domain file, or an empty folder.
   * @throws Conflict for a folder with entries; NotFound/Gone when missing.
   */
  async deleteDomain(domain: string): Promise<void> {
    const m = this.core.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const { p, st } = this.core.statOf(domain);
    if (st.isDirectory()) {
      const names = fs.readdirSync(p);
      if (names.some((n) => !isServiceName(n))) throw conflict('folder has sub-items');
      // left-over service files (lock files of deleted domains, old lock directories), folder ACL
      for (const n of names) fs.rmSync(path.join(p, n), { recursive: true, force: true });
      const link = this.core.paths.joined(domain);
      if (link !== p && fs.lstatSync(link).isSymbolicLink()) fs.unlinkSync(link);
      else fs.rmdirSync(p);
      this.core.folders.forget(p);
      this.core.noteGone(domain, true);
      this.core.paths.forget(domain);
      this.core.publish({ t: 'removed', domain });
      return;
    }
    // the domain key of the file deleted: its ids answer 410 (not 404) in the other workers too
    const key = domainKey(domain, fileIdentity(st));
    noteDomainKey(key, domain);
    // a symlinked domain: the link is removed, not its target
    await this.core.files.deleteFile(this.core.files.entry(domain, p), this.core.paths.joined(domain));
    this.core.files.forget(domain);
    this.core.noteGone(domain, true);
    this.core.paths.forget(domain);
    this.core.publish({ t: 'removed', domain, key });
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
    const m = this.core.mountOf(folder);
    if (m) return this.listMounted(m, folder, opts);
    const p = this.core.paths.resolve(folder);
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
        ...this.core.mounts.filter((mm) => parentDomain(mm.at) === folder).map((mm) => mm.at.slice(mm.at.lastIndexOf('/') + 1)),
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
      const mm = this.core.mountOf(name);
      if (mm) {
        // a mount point: a folder served from elsewhere
        const view = await this.acls.aclView(name);
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
        const unknown = status?.beingWritten && this.acls.knownFileAcl(name, this.core.paths.resolve(name), est) === undefined;
        view = unknown ? this.acls.folderView(path.join(p, n), est) : await this.acls.aclView(name);
      } catch {
        continue; // e.g. a symlink leading outside the data directory
      }
      if (opts.visible && !opts.visible(view)) continue;
      if (opts.query) {
        if (est.isDirectory() || status?.beingWritten) continue;
        const q = opts.query;
        let match = false;
        try {
          match = await this.core.read(name, (f) => {
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
          item.root = await this.core.read(name, (f) => f.rootId);
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
    const view = await this.acls.aclView(folder);
    if (opts.visible && !opts.visible(view)) return [];
    const items = await m.list(folder, opts);
    const out: FolderItem[] = [];
    for (const it of items) {
      const item: FolderItem = { name: it.name, class: it.kind, owner: view.owner, created: it.created, lastModified: it.lastModified };
      if (opts.verbose && it.kind === 'domain') {
        try {
          item.root = await this.core.read(it.name, (f) => f.rootId);
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
    if (this.core.mountOf(domain)) return this.core.readWalked(domain, (f, all, _t, pause) => computeDomainStats(f, all, pause));
    const { p, st } = this.core.statOf(domain);
    if (st.isDirectory()) throw badRequest(`${domain} is a folder, not a domain`);
    const key = statsKey(p, st);
    const hit = opts.rescan ? undefined : this.statsCache.get(key);
    if (hit) return hit;
    return this.core.readWalked(domain, async (f, all, _t, pause) => {
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
    return this.core.readWalked(domain, (f, all, truncated) => (truncated ? undefined : domainObjects(f, opts, all)), DOMAIN_OBJS_MAX + 1);
  }

  /** `PUT /?flush=1`: flush libhdf5's buffers of the domain file to the operating system (H5Fflush). */
  async flushDomain(domain: string): Promise<void> {
    await this.core.read(domain, (f) => h5.flushFile(f.h));
  }
}
