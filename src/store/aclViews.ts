/**
 * Who may do what, as the store sees it (a part of the `Store` facade, store.ts; spec 5): the
 * ACL views the permission decision looks at (`aclView`: a domain's or folder's, an object's by
 * id, address or path), the stored ACLs (`getAcl`, `updateAcl`), and the checks made inside an
 * operation once the file is locked: the group a new object goes into (`mayPlace`), what a
 * value operation reaches (`mayReach`). The views come from the file's ACL state (the reserved
 * group, access/acls.ts), else from the governing folder's sidecar.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Acl, droppedInAcl } from '../auth/acl.js';
import { H5StoreError } from '../errors.js';
import { type Access, type AccessMode, type AclView, FLAG_FOR_MODE } from './access/access.js';
import { type FileAcl, type FolderAcl, keptFileAcl, readFileAcl, writeFileAcl } from './access/acls.js';
import type { ReachedFile } from './access/reach.js';
import type { DomainFiles } from './domainFiles.js';
import { type Mount, readOnly } from './mounts/mount.js';
import { isHdf5Name } from './mounts/mountspec.js';
import type { DomainFile } from './objects/domainFile.js';
import * as h5paths from './objects/h5paths.js';
import { parentDomain } from './objects/paths.js';

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

export class AclViews {
  /** ACL views of the last `statCacheMs` (see `aclView`). */
  private readonly recentViews = new Map<string, { view: AclView; at: number; generation: number }>();

  constructor(private readonly core: DomainFiles) {}

  /** The ACL of the local folder a mount point is in (it governs everything in the mount). */
  mountFolderAcl(m: Mount): FolderAcl | null {
    const p = this.core.paths.resolve(parentDomain(m.at));
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(p);
    } catch {
      st = undefined;
    }
    return this.governingFolder(p, st);
  }

  /**
   * The ACL that governs a dropped-in file from its governing folder's (`droppedInAcl`); none
   * when no folder up to the data root has an ACL (then `default_acl` decides, as for folders).
   */
  private droppedIn(folder: FolderAcl | null): Acl {
    return folder ? droppedInAcl(folder.acls, { private: !!this.core.opts.droppedInPrivate }) : {};
  }

  /** The folder that governs a path: its own directory when a folder, else the nearest existing one up. */
  private governingFolder(p: string, st: fs.Stats | undefined): FolderAcl | null {
    let dir = st?.isDirectory() ? p : path.dirname(p);
    while (!st?.isDirectory()) {
      try {
        st = this.core.files.stats.stat(dir);
        if (st.isDirectory()) break;
      } catch {
        /* missing: go up */
      }
      const up = path.dirname(dir);
      if (up === dir || !dir.startsWith(this.core.paths.realRoot)) return null;
      dir = up;
      st = undefined;
    }
    return this.core.folders.effective(dir);
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
    const f = this.core.files.entry(domain, p);
    try {
      return await this.core.files.read(f, (ff) => readFileAcl(ff));
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
  knownFileAcl(domain: string, p: string, st: fs.Stats): FileAcl | null | undefined {
    const f = this.core.files.entry(domain, p);
    const kept = keptFileAcl(f);
    return kept !== undefined && this.core.files.unchangedOnDisk(f, st) ? kept : undefined;
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
    this.core.syncCluster();
    const stats = this.core.files.stats;
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
    const m = this.core.mountOf(domain);
    if (m) {
      // Read-only archives hold no ACLs of their own: the folder the mount point is in governs
      // (its files as dropped-in files).
      return this.computeMountView(m, domain);
    }
    const p = this.core.paths.resolve(domain);
    let st: fs.Stats | undefined;
    try {
      st = this.core.files.stats.stat(p);
    } catch {
      st = undefined;
    }
    if (st?.isFile()) {
      const state = await this.fileAcl(domain, p, st);
      if (state) {
        const hasObjectAcls = Object.keys(state.objects).length > 0;
        const view: AclView = { kind: 'domain', owner: state.owner || this.core.opts.defaultOwner, root: state.root, inherited: false, hasObjectAcls };
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
  folderView(p: string, st: fs.Stats | undefined): AclView {
    const folder = this.governingFolder(p, st);
    const file = !!st?.isFile();
    return {
      kind: file ? 'domain' : st?.isDirectory() ? 'folder' : 'missing',
      owner: folder?.owner || this.core.opts.defaultOwner,
      root: file ? this.droppedIn(folder) : (folder?.acls ?? {}),
      inherited: true,
    };
  }

  /**
   * The ACL view of the object at `addr` (the domain's own for undefined or the root group) of
   * an open domain file whose lock the caller holds: from the file's ACL state (read from the
   * reserved group at most once), else from its governing folder. No lock is taken.
   */
  viewInFile(f: DomainFile, addr?: bigint): AclView {
    const m = this.core.mountOf(f.domain);
    if (m) return this.computeMountView(m, f.domain);
    const state = readFileAcl(f);
    if (!state) {
      let st: fs.Stats | undefined;
      try {
        st = this.core.files.stats.stat(f.path);
      } catch {
        st = undefined;
      }
      return { ...this.folderView(f.path, st), kind: 'domain' };
    }
    const hasObjectAcls = Object.keys(state.objects).length > 0;
    const view: AclView = { kind: 'domain', owner: state.owner || this.core.opts.defaultOwner, root: state.root, inherited: false, hasObjectAcls };
    if (addr !== undefined && addr !== f.rootAddr && hasObjectAcls) view.object = state.objects[f.objectKey(addr)];
    return view;
  }

  /** The view of a domain or folder of a read-only mount (see `computeAclView`). */
  private computeMountView(m: Mount, domain: string): AclView {
    const folder = this.mountFolderAcl(m);
    const file = isHdf5Name(domain);
    return { kind: file ? 'domain' : 'folder', owner: folder?.owner || this.core.opts.defaultOwner, root: file ? this.droppedIn(folder) : (folder?.acls ?? {}), inherited: true };
  }

  /** The own ACL of the target object (undefined for the root group, unknown objects and none). */
  private async objectAcl(domain: string, state: FileAcl, target: AclTarget): Promise<Acl | undefined> {
    try {
      return await this.core.read(domain, (f) => {
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
    const m = this.core.mountOf(domain);
    if (m) {
      await m.stat(domain); // 404 for what the archive does not hold
      if (target.id) await this.core.read(domain, (f) => f.resolve(target.id!));
      const view = this.computeMountView(m, domain);
      return { owner: view.owner, acl: view.root };
    }
    const { p, st } = this.core.statOf(domain);
    if (st.isDirectory()) {
      const f = this.core.folders.effective(p);
      return { owner: f?.owner || this.core.opts.defaultOwner, acl: f?.acls ?? {} };
    }
    return this.core.read(domain, (f) => {
      const state = readFileAcl(f);
      const folder = state ? null : this.core.folders.effective(path.dirname(p));
      const owner = state?.owner || folder?.owner || this.core.opts.defaultOwner;
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
    const m = this.core.mountOf(domain);
    if (m) throw readOnly(m, domain);
    const { p, st } = this.core.statOf(domain);
    if (st.isDirectory()) {
      const cur = this.core.folders.effective(p);
      const next: FolderAcl = { owner: cur?.owner || this.core.opts.defaultOwner, acls: structuredClone(cur?.acls ?? {}) };
      change(next.acls);
      this.core.folders.write(p, next);
      this.core.files.directoryChanged();
      this.core.publish({ t: 'acl', domain });
      return;
    }
    await this.core.write(domain, (f) => {
      const folder = this.core.folders.effective(path.dirname(p));
      const state: FileAcl = structuredClone(readFileAcl(f)) ?? { owner: folder?.owner || this.core.opts.defaultOwner, root: structuredClone(this.droppedIn(folder)), objects: {} };
      let acl = state.root;
      if (target.id) {
        const addr = f.resolve(target.id);
        if (addr !== f.rootAddr) acl = state.objects[f.objectKey(addr)] ??= {};
      }
      change(acl);
      writeFileAcl(f, state);
    });
    this.core.publish({ t: 'acl', domain });
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
  mayPlace(f: DomainFile, body: h5paths.NewObjectPlace, implicit: boolean, access: Access): void {
    if (access.all) return;
    // Without object ACLs every group's view is the domain's, which the route's guard decided.
    const state = readFileAcl(f);
    if (!state || Object.keys(state.objects).length === 0) return;
    // the group as the create resolves it (h5paths.planObjectPlace), before it looks at the name:
    // a refused requester learns nothing of the group's links
    let parent: bigint | undefined;
    if (body.link) parent = f.resolve(body.link.id, 'group');
    else if (body.h5path !== undefined) {
      const start = body.parent_id !== undefined ? f.resolve(body.parent_id, 'group') : undefined;
      parent = h5paths.placeOfPath(f, body.h5path, start, implicit).parent;
    }
    if (parent === undefined) return; // anonymous
    const where = parent === f.rootAddr ? 'the root group' : `group ${f.idOf(parent, 'group')}`;
    const path = typeof body.h5path === 'string' ? ` (where ${JSON.stringify(body.h5path)} goes)` : '';
    access.check(this.viewInFile(f, parent), 'create', { domain: f.domain, what: `objects in ${where}${path} of ${f.domain}` });
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
  async mayReach(f: DomainFile, reached: ReachedFile[], mode: AccessMode, access: Access): Promise<void> {
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
    if (this.core.mountOf(file)) return {};
    const p = this.core.paths.resolve(file);
    let st: fs.Stats;
    try {
      st = this.core.files.stats.stat(p);
    } catch {
      return {};
    }
    return st.isFile() ? ((await this.fileAcl(file, p, st))?.objects ?? {}) : {};
  }
}
