/**
 * One domain entry: a domain name and the file it leads to, with everything learnt from that
 * file in the three parts fileState.ts describes: the object index (objectIndex.ts), the kept
 * state (the reserved group's ACL and given state, written through) and the view (every cache
 * derived from the file's content). The open libhdf5 handle and its locks are the `FileHandle`
 * (fileHandle.ts, shared by every domain name of one file); what happens to the file is told by
 * the file cache (files.ts) alone, through `apply`.
 *
 * Every method here is synchronous and runs with the domain lock held (see `FileCache`): the
 * file is open (`fid` set) when they are called. Object operations live in the sibling modules
 * (groups, links, datasets, datatypes, attributes) and use this class for id resolution and for
 * the state they declared (`state`).
 */
import { H5StoreError, badRequest } from '../../errors.js';
import type { ClientIds } from './clientIds.js';
import type { Hid } from '../../hdf5/lib.js';
import type { RefCodec } from '../../hdf5/memory.js';
import * as h5 from '../../hdf5/objects.js';
import type { LinkRecord, ObjectKind } from '../../hdf5/objects.js';
import { AddrMap } from './addrMap.js';
import { symbolTableLinks } from '../session/fileBytes.js';
import type { FileHandle, FileStamp, FileUser } from '../session/fileHandle.js';
import { AFTER, type FileEvent, FileView, SlotStore, StateSlot } from '../session/fileState.js';
import { ObjectIndex } from './objectIndex.js';
import type { ReachContext } from './paths.js';
import { regionFromJson, regionToJson } from './regionRefs.js';
import { RESERVED, type ReservedGroup } from './reserved.js';
import type { RWLock } from '../session/rwlock.js';

const MAX_SAFE_ADDR = BigInt(Number.MAX_SAFE_INTEGER);

export { GENERATIONS, RESERVED } from './reserved.js';

/** Times of an object, seconds since the epoch. */
export interface Times {
  created: number;
  lastModified: number;
}

/** Cached, sorted links of one group. */
export interface LinkList {
  links: LinkRecord[];
  index: Map<string, number>;
  /** REST JSON of each link, filled in as pages are asked for (owned by links.ts). */
  json: unknown[];
  /** The same as JSON text pieces, filled in as pages are asked for (owned by links.ts). */
  text: unknown[];
}

/** A link list with its name index. */
function listOf(links: LinkRecord[]): LinkList {
  const index = new Map<string, number>();
  links.forEach((l, i) => index.set(l.name, i));
  return { links, index, json: [], text: [] };
}

/** Most GET results one view remembers (`remembered`); all are dropped past it. */
const JSON_CACHE_ENTRIES = 4096;

/** The links of groups by address, in name order and in creation order (`links`). */
const LINK_LISTS = new StateSlot('link lists', 'view', () => ({ byName: new AddrMap<LinkList>(), byCrt: new AddrMap<LinkList>() }));
/** GET results by request (`remembered`). */
const REMEMBERED = new StateSlot('remembered answers', 'view', () => new Map<string, unknown>());
/** One path of every object (`aliasOf`), made by one traversal. */
const ALIAS_PATHS = new StateSlot('alias paths', 'view', () => ({ paths: undefined as Map<bigint, string> | undefined }));

export class DomainFile implements FileUser {
  readonly domain: string;
  readonly path: string;
  /** The open file behind this domain (shared by every domain name of the same file). */
  readonly handle: FileHandle;
  /** Where the files a dataset reaches are judged from (reach.ts). */
  readonly reach: ReachContext;
  /**
   * Links and attributes deleted while the server runs (`<owner id>/links/<name>`...: 410): the
   * domain name's, outliving every event, shared with the cluster's other workers (files.ts).
   * Objects deleted by an id h5store made need no entry: their address generations say so
   * (objectIndex.ts); client-given ids of deleted objects have one.
   */
  private readonly deleted: Set<string>;
  private index_: ObjectIndex;
  private view_: FileView;
  private kept_ = new SlotStore();

  constructor(domain: string, path: string, deleted: Set<string>, handle: FileHandle, reach: ReachContext) {
    this.domain = domain;
    this.path = path;
    this.deleted = deleted;
    this.handle = handle;
    this.reach = reach;
    this.index_ = new ObjectIndex(domain, handle, deleted);
    this.view_ = new FileView();
  }

  /**
   * What happened to the file: each part of what was learnt is kept or replaced as fileState.ts's
   * table (`AFTER`) says. Called by the file cache (files.ts) alone.
   */
  apply(event: FileEvent): void {
    const row = AFTER[event];
    if (row.index === 'new') this.index_ = new ObjectIndex(this.domain, this.handle, this.deleted);
    if (row.kept === 'new') this.kept_ = new SlotStore();
    this.view_ = new FileView(row.view === 'transient');
  }

  /** The object index (replaced whole by the events that drop it). */
  get index(): ObjectIndex {
    return this.index_;
  }

  /** The view of the file's content (replaced whole by every event). */
  get view(): FileView {
    return this.view_;
  }

  /** The value of a slot (fileState.ts) in the part its lifetime names. */
  state<T>(slot: StateSlot<T>): T {
    switch (slot.lifetime) {
      case 'view':
        return this.view_.get(slot);
      case 'index':
        return this.index_.state(slot);
      case 'kept':
        return this.kept_.get(slot);
    }
  }

  /** Whether a client id, or a link or attribute (`<owner id>/links/<name>`...), was deleted while the server runs. */
  isDeleted(what: string): boolean {
    return this.deleted.has(what);
  }

  /** Note that a link or attribute was deleted (it answers 410 until made again). */
  noteDeleted(what: string): void {
    this.deleted.add(what);
  }

  /** Note that a link or attribute deleted earlier was made again. */
  noteRecreated(what: string): void {
    this.deleted.delete(what);
  }

  /** The domain's readers-writer lock (the file's, shared by its other domain names). */
  get lock(): RWLock {
    return this.handle.lock;
  }

  /** The libhdf5 file id while the file is open. */
  get fid(): Hid | undefined {
    return this.handle.fid;
  }

  /** True while the file is open read-write (inside a write). */
  get writable(): boolean {
    return this.handle.writable;
  }

  /** The file's size, times and inode when last seen. */
  get stamp(): FileStamp | undefined {
    return this.handle.stamp;
  }

  /** The domain key of the open file (objectIndex.ts). */
  get key(): string {
    return this.index_.key;
  }

  get h(): Hid {
    if (this.fid === undefined) throw new Error(`domain ${this.domain} is not open`);
    return this.fid;
  }

  /**
   * The JSON of a GET (an object, a link) that `compute` builds for `key` (the id and the
   * request's options), remembered in the view (until the next event): a repeated GET of an
   * unchanged object makes no libhdf5 call. Errors are not remembered, nor results `worth`
   * refuses (large values). Callers must not mutate the result (handlers spread it).
   */
  remembered<T>(key: string, compute: () => T, worth: (v: T) => boolean = () => true): T {
    const hit = this.rememberedOnly<T>(key);
    if (hit !== undefined) return hit;
    const cache = this.view_.get(REMEMBERED);
    const v = compute();
    if (!worth(v)) return v;
    if (cache.size >= JSON_CACHE_ENTRIES) cache.clear();
    cache.set(key, v);
    return v;
  }

  /**
   * What `remembered` holds for `key` in the current view, computing nothing (undefined when it
   * holds nothing, or while a write changes the file: its view is transient). Callers must not
   * mutate the result.
   */
  rememberedOnly<T>(key: string): T | undefined {
    if (this.view_.transient) return undefined;
    return this.view_.get(REMEMBERED).get(key) as T | undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Ids (the object index)

  /** The reserved group (reserved.ts) of the file. */
  get reserved(): ReservedGroup {
    return this.index_.reserved;
  }

  get rootAddr(): bigint {
    return this.index_.rootAddr;
  }

  get rootId(): string {
    return this.index_.idOf(this.index_.rootAddr, 'group');
  }

  /** The id of the object at `addr`. */
  idOf(addr: bigint, kind: ObjectKind): string {
    return this.index_.idOf(addr, kind);
  }

  /** The key of an object's ACL and given state (objectIndex.ts `objectKey`). */
  objectKey(addr: bigint): string {
    return this.index_.objectKey(addr);
  }

  /** Whether an object key still names an object of the file. */
  isCurrentObjectKey(key: string): boolean {
    return this.index_.isCurrentObjectKey(key);
  }

  /** Record an object met by traversal or creation. */
  noteObject(addr: bigint, kind: ObjectKind | undefined): void {
    this.index_.noteObject(addr, kind);
  }

  /** Resolve a client id to an object address (objectIndex.ts `resolve`: 400, 404, 410). */
  resolve(id: string, expected?: ObjectKind): bigint {
    return this.index_.resolve(id, expected);
  }

  /** Addresses of all objects in the file (full traversal), without internal objects. */
  allObjects(walked?: Map<bigint, ObjectKind | undefined>): Map<bigint, ObjectKind | undefined> {
    return this.index_.allObjects(walked);
  }

  /** Record freed objects: their ids answer 410, their addresses get a new generation. */
  markFreed(freed: Map<bigint, ObjectKind | undefined>): void {
    this.index_.markFreed(freed);
  }

  /** Register an object just created, with the id its client gave it if any (objectIndex.ts `registerNew`). */
  registerNew(oid: Hid, kind: ObjectKind, linked: boolean, clientId?: string): { addr: bigint; id: string } {
    return this.index_.registerNew(oid, kind, linked, clientId);
  }

  /** The ids clients gave objects of the file (clientIds.ts, in the object index). */
  get clientIds(): ClientIds {
    return this.index_.clientIds;
  }

  /** Whether `id` names an object of this file now (a client may not give it to a new one). */
  idTaken(id: string): boolean {
    try {
      this.resolve(id);
      return true;
    } catch (e) {
      if (e instanceof H5StoreError && (e.code === 'NotFound' || e.code === 'Gone' || e.code === 'BadRequest')) return false;
      throw e;
    }
  }

  /** Kind of the object a hard link points to (learnt once, objectIndex.ts). */
  kindOfAddr(gid: Hid, link: LinkRecord): ObjectKind | undefined {
    return this.index_.kindOfAddr(gid, link);
  }

  /** Learn the kinds of several hard-link targets at once (objectIndex.ts `learnKinds`). */
  learnKinds(links: readonly LinkRecord[]): void {
    this.index_.learnKinds(links);
  }

  /** True when `name` in the group `gaddr` is the hidden reserved group. */
  isReservedName(gaddr: bigint, name: string): boolean {
    return this.index_.isReservedName(gaddr, name);
  }

  /** `linkCount` of an open group: libhdf5's count minus the reserved group in root. */
  linkCount(gid: Hid, gaddr: bigint): number {
    return this.index_.linkCount(gid, gaddr);
  }

  /**
   * The paths of an object for `getalias=1` (wire-reference 2.1): one absolute path (the first
   * `H5Ovisit` meets), `/` for the root, [] for objects held only by the reserved group.
   */
  aliasOf(addr: bigint): string[] {
    if (addr === this.rootAddr) return ['/'];
    const cache = this.view_.get(ALIAS_PATHS);
    cache.paths ??= h5.objectPaths(this.h);
    const p = cache.paths.get(addr);
    if (p === undefined || p.startsWith(RESERVED + '/') || p === RESERVED) return [];
    return ['/' + p];
  }

  /** Open an object by id (after `resolve`); the caller closes it. */
  open(id: string, expected?: ObjectKind): Hid {
    return h5.openByAddr(this.h, this.resolve(id, expected));
  }

  /** Run `fn` with the object named by `id` open. */
  withId<T>(id: string, expected: ObjectKind | undefined, fn: (oid: Hid, addr: bigint) => T): T {
    const addr = this.resolve(id, expected);
    const oid = h5.openByAddr(this.h, addr);
    try {
      return fn(oid, addr);
    } finally {
      h5.closeObject(oid);
    }
  }

  /** Object references <-> `groups/g-...` strings for value conversion. */
  readonly refs: RefCodec = {
    toWire: (addr: bigint): string => this.index_.refToWire(addr),
    fromWire: (s: string): bigint => {
      const m = /^(?:(groups|datasets|datatypes)\/)?([gdt]-[0-9a-f-]{36})$/.exec(s);
      if (!m) throw badRequest(`Invalid object reference ${JSON.stringify(s)}`);
      try {
        return this.resolve(m[2]);
      } catch (e) {
        // A value naming no object of this domain is bad input of the write, not a missing resource.
        const code = (e as { code?: string }).code;
        if (code === 'NotFound' || code === 'Gone') throw badRequest(`Object reference ${JSON.stringify(s)} names no object of this domain`);
        throw e;
      }
    },
    regionToWire: (ref: Buffer): string => regionToJson(this, ref),
    regionFromWire: (json: string): Buffer => regionFromJson(this, json),
  };

  /** Map a committed datatype (open type id) to its id, for `type.id`. */
  readonly committedId = (tid: Hid): string | undefined => {
    const addr = h5.objectAddr(tid);
    return this.idOf(addr, 'datatype');
  };

  // -------------------------------------------------------------------------------------------
  // Times

  /** The file's own times (seconds). */
  fileTimes(): Times {
    const st = this.stamp;
    if (!st) return { created: 0, lastModified: 0 };
    const created = (st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs) / 1000;
    return { created: Math.min(created, st.mtimeMs / 1000), lastModified: st.mtimeMs / 1000 };
  }

  /** Times of an open object: HDF5 object times where tracked, else the file's. */
  objectTimes(info: h5.ObjectInfo): Times {
    const ft = this.fileTimes();
    const created = info.btime || info.ctime || ft.created;
    const modified = Math.max(info.mtime, info.ctime) || ft.lastModified;
    return { created, lastModified: Math.max(created, modified) };
  }

  // -------------------------------------------------------------------------------------------
  // Links (kept in the view)

  /**
   * Links of an open group in ascending name order, or in creation order when `order` is 'crt'
   * and the group tracks it (every link then carries its creation order; the name order is
   * returned otherwise). The reserved group is left out. Both orders are kept in the view;
   * creation order is sorted from the link records, so groups that track but do not index
   * creation order work too.
   */
  links(gid: Hid, gaddr: bigint, order: 'name' | 'crt' = 'name'): LinkList {
    const cache = this.view_.get(LINK_LISTS);
    let byName = cache.byName.get(gaddr);
    if (!byName) {
      let links = this.symbolTableLinks(gaddr) ?? h5.listLinks(gid, 'name');
      if (gaddr === this.rootAddr && this.reserved.exists) links = links.filter((l) => l.name !== RESERVED);
      byName = listOf(links);
      cache.byName.set(gaddr, byName);
    }
    if (order === 'name' || byName.links.length < 2 || byName.links.some((l) => l.corder === undefined)) return byName;
    let byCrt = cache.byCrt.get(gaddr);
    if (!byCrt) {
      byCrt = listOf([...byName.links].sort((a, b) => a.corder! - b.corder!));
      cache.byCrt.set(gaddr, byCrt);
    }
    return byCrt;
  }

  /**
   * The links of a symbol table group read from the file's bytes (fileBytes.ts) when libhdf5
   * has the file open read-only outside a write session (the bytes on disk are then what
   * libhdf5 sees), as `h5.listLinks` by name gives them; the targets the entries say are groups
   * (cache type 1) become known as groups. Undefined when the group is stored otherwise or the
   * bytes do not decide: the caller asks libhdf5.
   */
  private symbolTableLinks(gaddr: bigint): LinkRecord[] | undefined {
    const h = this.handle;
    if (!h.bytesAreCurrent || gaddr > MAX_SAFE_ADDR) return undefined;
    const table = symbolTableLinks(h.realPath, h.dev, h.ino, Number(gaddr));
    if (!table) return undefined;
    const reserved = gaddr === this.rootAddr && this.reserved.exists ? table.links.find((l) => l.name === RESERVED) : undefined;
    this.index_.learnGroups(table.groups, reserved?.cls === 'H5L_TYPE_HARD' ? Number(reserved.addr) : -1);
    return table.links;
  }
}
