/**
 * The store: domains and folders on disk, and every object operation, behind locks.
 *
 * This is the one entry point of the HTTP handlers (DESIGN.md section 7). Methods take a domain
 * path (already normalised by `normalizeDomain`) and return plain data; they know nothing of
 * Koa or HTTP statuses. Reads run under the domain's shared lock, writes under its exclusive
 * lock plus the cross-process file lock, and are flushed before the lock is released.
 *
 * `Store` is the facade; its parts, one job each (docs/architecture.md): domainFiles.ts (a
 * domain to its file, reads and writes under its locks), aclViews.ts (ACL views, stored ACLs,
 * checks inside operations), domains.ts (domains and folders), lookups.ts (paths across
 * external links, h5grove's lookups), datasetValues.ts (values behind the locks of the files
 * they reach). The operations on groups, links, datasets, datatypes and attributes are here,
 * each one call of objects/ inside a read or a write.
 */
import { RawJson } from '../codec/json.js';
import { H5StoreError, badRequest, conflict } from '../errors.js';
import { hdf5Busy, hdf5Turn } from '../hdf5/heavy.js';
import { LIB_INFO, openObjectCount } from '../hdf5/lib.js';
import type { ObjectKind } from '../hdf5/objects.js';
import type { Acl } from '../auth/acl.js';
import { type Access, type AclView, allowAll } from './access/access.js';
import type { FolderAcls } from './access/acls.js';
import { DEFAULT_LIMITS, type Limits } from './access/limits.js';
import { type AclTarget, AclViews } from './aclViews.js';
import { DatasetValues } from './datasetValues.js';
import { DomainFiles, type FileVersion, type StoreOptions } from './domainFiles.js';
import { type DomainJson, Domains, type FolderItem } from './domains.js';
import { Lookups } from './lookups.js';
import type { Mount } from './mounts/mount.js';
import * as attrs from './objects/attributes.js';
import { checkClientId } from './objects/clientIds.js';
import { entriesInCreatedOrder } from './objects/createdTimes.js';
import * as dsets from './objects/datasets.js';
import * as dtypes from './objects/datatypes.js';
import type { DomainFile } from './objects/domainFile.js';
import type { DomainStats, ObjectJsonOptions } from './objects/domainObjects.js';
import type { DomainQuery } from './objects/domainQuery.js';
import type * as grove from './objects/grove.js';
import * as groups from './objects/groups.js';
import * as h5paths from './objects/h5paths.js';
import * as links from './objects/links.js';
import * as linkWrites from './objects/linkWrites.js';
import type { DomainPaths } from './objects/paths.js';
import type { FileSnapshot } from './session/download.js';
import type { FileCache } from './session/files.js';
import type { Follower } from './session/liveFeed.js';
import * as values from './values.js';
import { BufferPool, PagePool } from './values/pagepool.js';

export type { FileVersion, StoreOptions } from './domainFiles.js';
export type { DomainJson, FolderItem } from './domains.js';
export { FEED_MAX_OBJECTS } from './domains.js';
export type { AclTarget } from './aclViews.js';
export type { AclView } from './access/access.js';
export { DOMAIN_OBJS_MAX } from './objects/domainObjects.js';

/** Most objects one batch create (POST /groups etc. with a list) makes (h5pyd 1.0 sends at most 300). */
export const MAX_BATCH_OBJECTS = 1000;

/** @throws H5StoreError PayloadTooLarge when one create request would make more than MAX_BATCH_OBJECTS objects. */
export function checkBatchSize(n: number): void {
  if (n > MAX_BATCH_OBJECTS) throw new H5StoreError('PayloadTooLarge', `${n} objects in one request: at most ${MAX_BATCH_OBJECTS}`);
}

/** One object of a create request (POST /groups, /datasets, /datatypes; parsed by http/bodies.ts `newObject`): its kind and its body. */
export type NewObject = { kind: 'group'; body: groups.GroupCreate } | { kind: 'dataset'; body: dsets.DatasetCreate } | { kind: 'datatype'; body: dtypes.DatatypeCreate };

/** An attribute JSON small enough to remember: no value, a scalar, at most 256 elements/characters, or value text of at most 64 KiB. */
function smallValue(a: { value?: unknown }): boolean {
  const v = a.value;
  if (typeof v === 'string') return v.length <= 4096;
  if (v instanceof RawJson) return v.text.length + (v.ignoreNanText?.length ?? 0) <= 64 * 1024;
  return !Array.isArray(v) || (v.length <= 256 && v.every((x) => !Array.isArray(x) || x.length <= 16));
}

export class Store {
  readonly paths: DomainPaths;
  readonly files: FileCache;
  readonly limits: Limits;
  /** Page buffers reused by streamed value reads (see pagepool.ts). */
  readonly pagePool: PagePool;
  /** Buffers reused for binary request bodies of value writes. */
  readonly bodyPool = new BufferPool();
  /** Folder ACL sidecars (cached briefly). */
  readonly folders: FolderAcls;
  readonly mounts: Mount[];
  /** The parts (one job each; see the file's comment). */
  private readonly core: DomainFiles;
  private readonly acls: AclViews;
  private readonly domains: Domains;
  private readonly lookups: Lookups;
  private readonly datasetValues: DatasetValues;

  constructor(readonly opts: StoreOptions) {
    this.core = new DomainFiles(opts);
    this.paths = this.core.paths;
    this.files = this.core.files;
    this.folders = this.core.folders;
    this.mounts = this.core.mounts;
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
    this.acls = new AclViews(this.core);
    this.domains = new Domains(this.core, this.acls);
    this.lookups = new Lookups(this.core, this.acls);
    this.datasetValues = new DatasetValues(this.core, this.acls, this.limits, this.pagePool);
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

  /** Start-up scan of the data directory (`DomainFiles.recoverInterrupted`). @returns the number of files repaired */
  recoverInterrupted(): Promise<number> {
    return this.core.recoverInterrupted();
  }

  /** Close every open file (shutdown). Call with libhdf5 free (`closeWhenIdle` otherwise). */
  close(): void {
    this.domains.close();
    this.core.close();
  }

  /** `close` once a libhdf5 call still running on the worker thread (heavy.ts) has ended (a server's shutdown). */
  async closeWhenIdle(): Promise<void> {
    await hdf5Turn(() => this.close());
  }

  /** The mount that serves `domain`, if any (mounts shadow the data directory). */
  mountOf(domain: string): Mount | undefined {
    return this.core.mountOf(domain);
  }

  /** Run a read on a domain file under its read lock (`DomainFiles.read`). */
  read<T>(domain: string, fn: (f: DomainFile) => T): Promise<T> {
    return this.core.read(domain, fn);
  }

  /** Run a read that needs every object of the domain (`DomainFiles.readWalked`). */
  readWalked<T>(
    domain: string,
    fn: (f: DomainFile, all: Map<bigint, ObjectKind | undefined>, truncated: boolean, pause: () => Promise<void>) => T | Promise<T>,
    max?: number,
  ): Promise<T> {
    return this.core.readWalked(domain, fn, max);
  }

  /** Run a write on a domain file under its locks, flushed before they are released (`DomainFiles.write`); 403 under a mount. */
  write<T>(domain: string, fn: (f: DomainFile) => T | Promise<T>): Promise<T> {
    return this.core.write(domain, fn);
  }

  /** The version of a local domain file as the read path sees it (`DomainFiles.fileVersion`; ETags). */
  fileVersion(domain: string, settleMs?: number): FileVersion | undefined {
    return this.core.fileVersion(domain, settleMs);
  }

  // -------------------------------------------------------------------------------------------
  // Domains and folders (domains.ts)

  /** `h5store repair DOMAIN` (`Domains.repairDomain`). @returns what was repaired */
  repairDomain(domain: string, opts: { quietMs?: number; force?: boolean } = {}): Promise<string[]> {
    return this.domains.repairDomain(domain, opts);
  }
  /** Whether a dataset's answers come from its domain file alone (`Domains.datasetIsLocal`; ETags). */
  datasetIsLocal(domain: string, id: string): Promise<boolean> {
    return this.domains.datasetIsLocal(domain, id);
  }
  /** Follow the changes of a domain (`GET /events`, `Domains.follow`). @returns the function that stops following */
  follow(domain: string, ids: string[] | undefined, f: Follower): Promise<() => void> {
    return this.domains.follow(domain, ids, f);
  }
  /** A domain's file as bytes (`GET /file`, `Domains.openFileBytes`); the caller closes the snapshot. */
  openFileBytes(domain: string, access: Access = allowAll): Promise<FileSnapshot> {
    return this.domains.openFileBytes(domain, access);
  }
  /** GET /: the domain (with its root id) or folder record. */
  getDomain(domain: string): Promise<DomainJson> {
    return this.domains.getDomain(domain);
  }
  /** PUT /: create an empty HDF5 file, or a folder (`Domains.createDomain`). */
  createDomain(
    domain: string,
    opts: { folder?: boolean; trackOrder?: boolean; owner?: string; acl?: Acl; rootId?: string; rootCreation?: Record<string, unknown> },
  ): Promise<DomainJson> {
    return this.domains.createDomain(domain, opts);
  }
  /** DELETE /: remove a domain file, or an empty folder (`Domains.deleteDomain`). */
  deleteDomain(domain: string): Promise<void> {
    return this.domains.deleteDomain(domain);
  }
  /** GET /domains: entries of a folder the requester may see (`Domains.listFolder`). */
  listFolder(
    folder: string,
    opts: { limit?: number; marker?: string; pattern?: (name: string) => boolean; verbose?: boolean; visible?: (view: AclView) => boolean; query?: DomainQuery },
  ): Promise<FolderItem[]> {
    return this.domains.listFolder(folder, opts);
  }
  /** `verbose=1` statistics of a domain file, once per version of the file (`Domains.domainStats`). */
  domainStats(domain: string, opts: { rescan?: boolean } = {}): Promise<DomainStats> {
    return this.domains.domainStats(domain, opts);
  }
  /** `getobjs=1`: every object of a domain keyed by id, or undefined past DOMAIN_OBJS_MAX (`Domains.domainObjects`). */
  domainObjects(domain: string, opts: { includeAttrs?: boolean } = {}) {
    return this.domains.domainObjects(domain, opts);
  }
  /** `PUT /?flush=1`: flush libhdf5's buffers of the domain file (H5Fflush). */
  flushDomain(domain: string): Promise<void> {
    return this.domains.flushDomain(domain);
  }

  // -------------------------------------------------------------------------------------------
  // Owners and ACLs (aclViews.ts; spec 5)

  /** What the permission decision for a request on `domain` (and one of its objects) looks at (`AclViews.aclView`). */
  aclView(domain: string, target: AclTarget = {}): Promise<AclView> {
    return this.acls.aclView(domain, target);
  }
  /** The stored ACL of a domain, folder or object (`AclViews.getAcl`). */
  getAcl(domain: string, target: AclTarget = {}): Promise<{ owner: string; acl: Acl }> {
    return this.acls.getAcl(domain, target);
  }
  /** Change one ACL under the domain's write lock, or the folder's sidecar (`AclViews.updateAcl`). */
  updateAcl(domain: string, target: AclTarget, change: (acl: Acl) => void): Promise<void> {
    return this.acls.updateAcl(domain, target, change);
  }

  // -------------------------------------------------------------------------------------------
  // Paths across external links, h5grove's lookups (lookups.ts)

  /** The object at a path (`Lookups.lookupPath`): its kind, its JSON and the domain it was found in. */
  lookupPath(
    domain: string,
    h5path: string,
    parentId?: string,
    opts: h5paths.PathOptions & { access?: Access; object?: ObjectJsonOptions } = {},
  ): Promise<{ kind: ObjectKind; json: Record<string, unknown>; domain: string }> {
    return this.lookups.lookupPath(domain, h5path, parentId, opts);
  }
  /** `fn` run on the object at an h5grove path, links followed (`Lookups.groveObject`). */
  groveObject<T>(domain: string, path: string, access: Access, fn: (f: DomainFile, domain: string, addr: bigint, kind: ObjectKind) => T): Promise<T> {
    return this.lookups.groveObject(domain, path, access, fn);
  }
  /** h5grove's `/meta/` (`Lookups.groveMeta`). */
  groveMeta(domain: string, path: string, resolve: grove.LinkResolution, access: Access, readable?: (domain: string, id: string) => Promise<boolean>): Promise<grove.EntityMeta> {
    return this.lookups.groveMeta(domain, path, resolve, access, readable);
  }
  /** h5grove's `/paths/` (`Lookups.grovePaths`). */
  grovePaths(domain: string, path: string, resolve: grove.LinkResolution, access: Access, readable?: (domain: string, id: string) => Promise<boolean>): Promise<string[]> {
    return this.lookups.grovePaths(domain, path, resolve, access, readable);
  }

  // -------------------------------------------------------------------------------------------
  // Objects

  getGroup(domain: string, id: string, opts: groups.GroupJsonOptions) {
    const key = `g ${id} ${+!!opts.includeLinks}${+!!opts.includeAttrs}${+!!opts.alias}${+!!opts.createOrder}`;
    return this.core.readRemembered(domain, key, (f) => groups.getGroup(f, id, opts));
  }
  /** POST /groups: `create` is checked on the group the new link goes into (`AclViews.mayPlace`). */
  createGroup(domain: string, body: groups.GroupCreate, implicit: boolean, access: Access = allowAll) {
    return this.createWrite(domain, (f) => this.createIn(f, { kind: 'group', body }, implicit, access) as Promise<groups.GroupJson>);
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
   * POST /groups, /datasets, /datatypes with a JSON list (HSDS 1.0's batch create, issue #25):
   * each item created as the single create makes it (its own `id` when it gives one, a link when
   * it asks for one, a dataset's initial `value`), in order, in one write: when one fails the
   * whole request is rolled back (files.ts), so all objects are created or none. Ids are checked
   * (form, collection, root prefix, given twice) before anything is written.
   * @returns each object's JSON, in the order given
   * @throws H5StoreError BadRequest (an item, an id), Conflict (an id taken or given twice),
   *   PayloadTooLarge (more than MAX_BATCH_OBJECTS items)
   */
  createObjects(domain: string, items: NewObject[], implicit: boolean, access: Access = allowAll): Promise<Record<string, unknown>[]> {
    checkBatchSize(items.length);
    const seen = new Set<string>();
    for (const { body } of items) {
      if (body.id === undefined) continue;
      if (seen.has(body.id)) throw conflict(`id ${body.id} is given twice`);
      seen.add(body.id);
    }
    return this.createWrite(domain, async (f) => {
      for (const o of items) if (o.body.id !== undefined) checkClientId(o.body.id, o.kind, f.rootId);
      const out: Record<string, unknown>[] = [];
      for (const o of items) out.push((await this.createIn(f, o, implicit, access)) as unknown as Record<string, unknown>);
      return out;
    });
  }
  /**
   * One object of a create request, in a running write: `create` checked on the group its link
   * goes into (`mayPlace`), then created (a dataset's `value` written after it).
   */
  private async createIn(f: DomainFile, o: NewObject, implicit: boolean, access: Access) {
    this.acls.mayPlace(f, o.body, implicit, access);
    if (o.kind === 'group') return groups.createGroup(f, o.body, implicit);
    if (o.kind === 'datatype') return dtypes.createDatatype(f, o.body, implicit);
    const body = o.body;
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
    return this.core.readRemembered(domain, key, (f) => links.listLinksPage(f, groupId, opts));
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
    return this.core.readRemembered(domain, `l ${groupId} ${name}`, (f) => links.getLink(f, groupId, name));
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
    return this.core.readRemembered(domain, `d ${id} ${JSON.stringify(opts)}`, (f) => dsets.getDataset(f, id, opts));
  }
  getDatasetTypeAndShape(domain: string, id: string) {
    return this.read(domain, (f) => dsets.getTypeAndShape(f, id));
  }
  /** POST /datasets (with an initial `value` when given): `create` is checked on the group the new link goes into (`mayPlace`). */
  createDataset(domain: string, body: dsets.DatasetCreate, implicit: boolean, access: Access = allowAll) {
    return this.createWrite(domain, (f) => this.createIn(f, { kind: 'dataset', body }, implicit, access) as Promise<dsets.DatasetJson>);
  }
  resizeDataset(domain: string, id: string, body: dsets.Resize) {
    return this.write(domain, (f) => dsets.resizeDataset(f, id, body, this.limits));
  }

  getDatatype(domain: string, id: string, opts: { includeAttrs?: boolean; alias?: boolean } = {}) {
    return this.core.readRemembered(domain, `t ${id} ${+!!opts.includeAttrs}${+!!opts.alias}`, (f) => dtypes.getDatatype(f, id, opts));
  }
  /** POST /datatypes: `create` is checked on the group the new link goes into (`mayPlace`). */
  createDatatype(domain: string, body: dtypes.DatatypeCreate, implicit: boolean, access: Access = allowAll) {
    return this.createWrite(domain, (f) => this.createIn(f, { kind: 'datatype', body }, implicit, access) as Promise<dtypes.DatatypeJson>);
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
    return this.core.readRemembered<attrs.AttributeJson>(domain, key, (f) => attrs.attributeAsText(attrs.getAttribute(f, kind, id, name, includeData, vopts)), smallValue);
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

  // -------------------------------------------------------------------------------------------
  // Values (datasetValues.ts)

  /** A read of dataset values in `format`: a `ValueSource` the caller closes (`DatasetValues.readValues`). */
  readValues(domain: string, id: string, req: values.ReadRequest, format: values.ValueFormat, access: Access = allowAll): Promise<values.ValueSource> {
    return this.datasetValues.readValues(domain, id, req, format, access);
  }
  /** GET .../value?query= (or POST with the selection in the body): matching rows (`DatasetValues.queryValues`). */
  queryValues(domain: string, id: string, query: string, opts: values.QueryRequest, access: Access = allowAll) {
    return this.datasetValues.queryValues(domain, id, query, opts, access);
  }
  /** PUT .../value?query=: update matching rows (`DatasetValues.queryUpdate`). */
  queryUpdate(domain: string, id: string, query: string, update: Record<string, unknown>, opts: { select?: string; limit?: number }, access: Access = allowAll) {
    return this.datasetValues.queryUpdate(domain, id, query, update, opts, access);
  }
  /** PUT .../value (`DatasetValues.writeValues`). */
  writeValues(domain: string, id: string, req: values.WriteRequest, access: Access = allowAll) {
    return this.datasetValues.writeValues(domain, id, req, access);
  }

  /** Open HDF5 object ids over all open files (for leak tests; 0 between requests). */
  openIdCount(): number {
    return this.files.openIdCount();
  }
}
