/**
 * One domain file: its object ids, and what is learnt from it until it changes (link and
 * attribute caches, times). The open libhdf5 handle and its locks are the `FileHandle`
 * (fileHandle.ts, shared by every domain name of one file); the reserved group is
 * `ReservedGroup` (reserved.ts).
 *
 * Every method here is synchronous and runs with the domain lock held (see `FileCache`): the
 * file is open (`fid` set) when they are called. Object operations live in the sibling modules
 * (groups, links, datasets, datatypes, attributes) and use this class for id resolution.
 */
import fs from 'node:fs';
import { badRequest, gone, notFound } from '../errors.js';
import * as C from '../hdf5/constants.js';
import type { TypeJson } from '../codec/types.js';
import type { RawJson } from '../codec/json.js';
import type { FileAcl } from './acls.js';
import type { GivenState } from './given.js';
import type { SpaceInfo } from '../hdf5/io.js';
import type { Hid } from '../hdf5/lib.js';
import type { RefCodec } from '../hdf5/memory.js';
import * as h5 from '../hdf5/objects.js';
import type { LinkRecord, ObjectKind } from '../hdf5/objects.js';
import { COLLECTION, domainKey, domainOfKey, fileIdentity, makeId, noteDomainKey, parseId } from './ids.js';
import type { ReachContext, StorageKind } from './reach.js';
import { regionFromJson, regionToJson } from './regionRefs.js';
import type { FileHandle } from './fileHandle.js';
import type { RWLock } from './rwlock.js';
import { RESERVED, ReservedGroup } from './reserved.js';
import { headerKinds, symbolTableLinks } from './fileBytes.js';
import { AddrMap } from './addrMap.js';

const MAX_SAFE_ADDR = BigInt(Number.MAX_SAFE_INTEGER);

export { GENERATIONS, RESERVED } from './reserved.js';

/** What identifies a version of a file on disk (a change means someone else wrote it). */
export interface FileStamp {
  size: number;
  mtimeMs: number;
  ino: number;
  ctimeMs: number;
  birthtimeMs: number;
  /** Version tag of a file that is not local (an S3 object's ETag). */
  etag?: string;
}

/**
 * Where a domain's bytes come from when they are not a local file (a read-only S3 mount, see
 * s3mount.ts). The file cache opens such a file with `open()` instead of libhdf5's local driver,
 * never for writing, and takes `stamp` as the current version instead of stat(2).
 */
export interface FileSource {
  /** The version as last checked (no I/O). */
  readonly stamp: FileStamp;
  /** Open the current version read-only. */
  open(): Hid;
  /** Close the handle after this long without requests (ms). */
  readonly idleCloseMs: number;
  /** Message of the 403 every write gets. */
  readonly readOnlyMessage: string;
}

export function stampOf(st: fs.Stats): FileStamp {
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs, birthtimeMs: st.birthtimeMs };
}

export function sameStamp(a: FileStamp | undefined, b: FileStamp): boolean {
  return !!a && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs && a.etag === b.etag;
}

/** Times of an object, seconds since the epoch. */
export interface Times {
  created: number;
  lastModified: number;
}

/**
 * What a read learnt about one attribute: type, dataspace, (small) value in wire format, and the
 * value as the REST API shows it (attributes.ts: JSON text made once, base64, or null).
 */
export interface AttrFacts {
  type: TypeJson;
  space: SpaceInfo;
  wire?: Buffer;
  shown?: { value: unknown; encoding?: 'base64' };
  /** `type` and `shape` as JSON text, written once for listings (attributes.ts `headOf`). */
  head?: { type: RawJson; shape: RawJson };
  /**
   * The item of attribute listings, with and without its value (attributes.ts `attributesOf`):
   * the same object for every listing until the file changes (kept bytes, http/present.ts).
   */
  listed?: { created: number };
  listedBare?: { created: number };
}

/** Most GET results one domain entry remembers (`remembered`); all are dropped past it. */
const JSON_CACHE_ENTRIES = 4096;

/** Most bytes of attribute values one file keeps cached; larger single values are not cached. */
export const ATTR_CACHE_BYTES = 32 * 1024 * 1024;
export const ATTR_CACHE_VALUE_MAX = 256 * 1024;

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

export class DomainFile {
  readonly domain: string;
  readonly path: string;
  /** The domain key of the file now at `path` (ids.ts); computed from `stamp` on first use. */
  private key_: string | undefined;
  /** Ids deleted in this process (answer 410); survives reopening the file. */
  readonly goneIds: Set<string>;
  /** The open file behind this domain (shared by every domain name of the same file). */
  readonly handle: FileHandle;
  /** The handle's `epoch` this entry's state was learnt at (see `FileCache.syncEpoch`). */
  seenEpoch = 0;
  /**
   * The stat result (statCache.ts: the same object while it is fresh) this entry was last found
   * to match by `FileCache.entry`: the same object again needs no new comparison.
   */
  matchedStat: object | undefined;

  private known = new AddrMap<ObjectKind | undefined>();
  private fullyVisited = false;
  private gens = new AddrMap<number>();
  private rootAddr_: bigint | undefined;
  /** The reserved group (reserved.ts): objects held without a link, address generations. */
  readonly reserved = new ReservedGroup({
    file: () => this.h,
    ensureLoaded: () => this.ensureLoaded(),
    becameInternal: (addr) => this.known.delete(addr),
    changed: () => this.invalidateCaches(),
  });
  private linkCache = new Map<bigint, LinkList>();
  private readonly jsonCache = new Map<string, unknown>();
  private linkCacheCrt = new Map<bigint, LinkList>();
  private pathCache: Map<bigint, string> | undefined;
  /** Attribute names (per object and order) and facts (per object and name), until a write. */
  readonly attrNames = new Map<string, string[]>();
  readonly attrFacts = new Map<bigint, Map<string, AttrFacts>>();
  /** Bytes of attribute values held in `attrFacts` (bounded by ATTR_CACHE_BYTES). */
  attrCacheBytes = 0;
  /** ACL state stored in the file (acls.ts): null = none, undefined = not read yet. */
  aclState: FileAcl | null | undefined;
  /**
   * Storage kind of datasets by address (plain, or values in other files: see reach.ts). A
   * dataset's layout never changes, so this lives until the file changes or the address is freed.
   */
  readonly storageKinds = new Map<bigint, StorageKind>();
  /** Where the files a dataset reaches are judged from (set by the store). */
  reach: ReachContext | undefined;
  /** What clients gave that the file cannot express (given.ts): undefined = not read yet. */
  givenState: GivenState | undefined;

  constructor(domain: string, path: string, goneIds: Set<string>, handle: FileHandle) {
    this.domain = domain;
    this.path = path;
    this.goneIds = goneIds;
    this.handle = handle;
    this.seenEpoch = handle.epoch;
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

  /** Where the bytes come from when the file is not local (read-only mounts), else undefined. */
  get source(): FileSource | undefined {
    return this.handle.source;
  }

  /** When the file was last used (performance.now() ms). */
  get lastUsed(): number {
    return this.handle.lastUsed;
  }

  /**
   * The domain key of the open file: its domain path and its identity on disk (inode and birth
   * time, ids.ts `fileIdentity`), so a file deleted and created again at the same path gives
   * new ids. Only valid while the file is open (the stamp is that of the open file).
   */
  get key(): string {
    if (this.key_ === undefined) {
      const st = this.stamp;
      const key = domainKey(this.domain, st ? fileIdentity(st) : '');
      if (!st) return key; // not open: not kept (the identity is not known yet)
      this.key_ = key;
      noteDomainKey(key, this.domain);
    }
    return this.key_;
  }

  /** Forget everything learnt from the file (after it changed on disk or was reopened). */
  resetState(): void {
    this.key_ = undefined;
    this.known.clear();
    this.fullyVisited = false;
    this.gens.clear();
    this.rootAddr_ = undefined;
    this.reserved.reset();
    this.storageKinds.clear();
    this.aclState = undefined;
    this.givenState = undefined;
    this.invalidateCaches();
  }

  /**
   * The JSON of a GET (an object, a link) that `compute` builds for `key` (the id and the
   * request's options), remembered until this file is written or changes on disk
   * (`invalidateCaches`): a repeated GET of an unchanged object makes no libhdf5 call. Errors
   * are not remembered, nor results `worth` refuses (large values). Callers must not mutate the
   * result (handlers spread it).
   */
  remembered<T>(key: string, compute: () => T, worth: (v: T) => boolean = () => true): T {
    const hit = this.jsonCache.get(key);
    if (hit !== undefined) return hit as T;
    const v = compute();
    if (!worth(v)) return v;
    if (this.jsonCache.size >= JSON_CACHE_ENTRIES) this.jsonCache.clear();
    this.jsonCache.set(key, v);
    return v;
  }

  /**
   * Drop caches that a write may have made stale (ids and known addresses stay). The file's ACL
   * and given state stay too: a write of this process changes them only through `writeFileAcl`
   * and `writeGiven`, which keep them up to date; a write that fails, a change by another
   * program and a write through another name of the file all go through `resetState`.
   */
  invalidateCaches(): void {
    this.jsonCache.clear();
    this.linkCache.clear();
    this.linkCacheCrt.clear();
    this.pathCache = undefined;
    this.attrNames.clear();
    this.attrFacts.clear();
    this.attrCacheBytes = 0;
  }

  get h(): Hid {
    if (this.fid === undefined) throw new Error(`domain ${this.domain} is not open`);
    return this.fid;
  }

  // -------------------------------------------------------------------------------------------
  // Ids

  get rootAddr(): bigint {
    if (this.rootAddr_ === undefined) {
      this.rootAddr_ = h5.objectAddr(this.h);
      this.known.set(this.rootAddr_, 'group');
      for (const [addr, gen] of this.reserved.load()) this.gens.set(addr, gen);
    }
    return this.rootAddr_;
  }

  /** Read the root address, the reserved group and the generations once per open file. */
  private ensureLoaded(): void {
    if (this.rootAddr_ === undefined) void this.rootAddr;
  }

  get rootId(): string {
    return this.idOf(this.rootAddr, 'group');
  }

  /** The id of the object at `addr`. */
  idOf(addr: bigint, kind: ObjectKind): string {
    if (!this.known.has(addr)) this.known.set(addr, kind);
    return makeId(kind, this.key, addr, this.gens.get(addr) ?? 0);
  }

  /**
   * The key of an object's ACL (acls.ts): header address and address generation, so an ACL never
   * passes to a later object at a reused address.
   */
  objectKey(addr: bigint): string {
    return `${addr.toString(16)}.${this.gens.get(addr) ?? 0}`;
  }

  /** Whether an ACL key still names an object of the file (its address holds that generation). */
  isCurrentObjectKey(key: string): boolean {
    const m = /^([0-9a-f]+)\.(\d+)$/.exec(key);
    if (!m) return false;
    const addr = BigInt('0x' + m[1]);
    if ((this.gens.get(addr) ?? 0) !== Number(m[2])) return false;
    if (!this.known.has(addr) && !this.fullyVisited) this.fullVisit();
    return this.known.has(addr);
  }

  /** Record an object met by traversal or creation. */
  noteObject(addr: bigint, kind: ObjectKind | undefined): void {
    if (kind !== undefined || !this.known.has(addr)) this.known.set(addr, kind);
  }

  /**
   * Resolve a client id to an object address (DESIGN.md section 3): syntax (400), domain
   * membership (400), deleted in this process (410), generation and address known to be an
   * object of this file (404), prefix matching the object's type (404).
   * @param expected the kind the route implies; a different prefix is a 400.
   */
  resolve(id: string, expected?: ObjectKind): bigint {
    const p = parseId(id);
    if (expected && p.kind !== expected) {
      throw badRequest(`${id} is not a ${expected} id (the ${COLLECTION[p.kind]} collection holds it)`);
    }
    if (p.foreign) throw notFound(`${p.kind} ${id} not found`);
    if (p.key !== this.key) {
      const owner = domainOfKey(p.key);
      if (owner === this.domain) throw gone(`${p.kind} ${id} belonged to an earlier file at ${this.domain}, which was deleted or replaced`);
      if (owner !== undefined) throw badRequest('Object id is not a member of the given domain');
      throw notFound(`${p.kind} ${id} not found in this domain`);
    }
    if (this.goneIds.has(id)) throw gone(`${p.kind} ${id} has been deleted`);
    this.ensureLoaded();
    const gen = this.gens.get(p.addr) ?? 0;
    if (p.gen !== gen || this.reserved.isInternal(p.addr)) throw notFound(`${p.kind} ${id} not found`);
    let kind = this.known.get(p.addr);
    if (kind === undefined && !this.known.has(p.addr)) {
      if (!this.fullyVisited) this.fullVisit();
      if (!this.known.has(p.addr)) throw notFound(`${p.kind} ${id} not found`);
      kind = this.known.get(p.addr);
    }
    if (kind === undefined) {
      kind = h5.withObject(this.h, p.addr, (o) => h5.objectInfo(o).kind);
      this.known.set(p.addr, kind);
    }
    if (kind !== p.kind) throw notFound(`${p.kind} ${id} not found`);
    return p.addr;
  }

  /** Visit every object of the file once and remember its address. */
  fullVisit(): void {
    const all = h5.visitObjects(this.h);
    for (const [addr, kind] of all) {
      if (!this.reserved.isInternal(addr)) this.known.set(addr, kind);
    }
    this.fullyVisited = true;
  }

  /** Addresses of all objects in the file (full traversal), without internal objects. */
  allObjects(): Map<bigint, ObjectKind | undefined> {
    const all = h5.visitObjects(this.h);
    for (const a of all.keys()) if (this.reserved.isInternal(a)) all.delete(a);
    return all;
  }

  /**
   * The paths of an object for `getalias=1` (wire-reference 2.1): one absolute path (the first
   * `H5Ovisit` meets), `/` for the root, [] for objects held only by the reserved group.
   */
  aliasOf(addr: bigint): string[] {
    if (addr === this.rootAddr) return ['/'];
    this.pathCache ??= h5.objectPaths(this.h);
    const p = this.pathCache.get(addr);
    if (p === undefined || p.startsWith(RESERVED + '/') || p === RESERVED) return [];
    return ['/' + p];
  }

  /**
   * Record that the objects at `addrs` were freed: their ids answer 410 for the rest of this
   * process, and the next object libhdf5 puts at one of these addresses gets a new generation
   * (persisted in the reserved group) so an old id never names it.
   */
  markFreed(freed: Map<bigint, ObjectKind | undefined>): void {
    if (freed.size === 0) return;
    for (const [addr, kind] of freed) {
      if (kind) this.goneIds.add(makeId(kind, this.key, addr, this.gens.get(addr) ?? 0));
      this.known.delete(addr);
      this.storageKinds.delete(addr);
      this.gens.set(addr, (this.gens.get(addr) ?? 0) + 1);
    }
    this.reserved.saveGenerations(this.gens);
  }

  /**
   * Register an object just created: remember its address, give it an id, and hold it in the
   * reserved group when it was created without a link (DESIGN.md section 4).
   */
  registerNew(oid: Hid, kind: ObjectKind, linked: boolean): { addr: bigint; id: string } {
    const addr = h5.objectAddr(oid);
    this.noteObject(addr, kind);
    const id = this.idOf(addr, kind);
    if (!linked) this.reserved.hold(oid, id);
    this.invalidateCaches();
    return { addr, id };
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
    toWire: (addr: bigint): string => {
      let kind = this.known.get(addr);
      if (kind === undefined) {
        if (!this.known.has(addr) && !this.fullyVisited) this.fullVisit();
        if (!this.known.has(addr)) return '';
        kind = h5.withObject(this.h, addr, (o) => h5.objectInfo(o).kind);
        if (!kind) return '';
        this.known.set(addr, kind);
      }
      return `${COLLECTION[kind]}/${this.idOf(addr, kind)}`;
    },
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
  // Links (cached per group; the cache is dropped on every write)

  /**
   * Links of an open group in ascending name order, or in creation order when `order` is 'crt'
   * and the group tracks it (every link then carries its creation order; the name order is
   * returned otherwise). The reserved group is left out. Both orders are cached until the next
   * write; creation order is sorted from the link records, so groups that track but do not
   * index creation order work too.
   */
  links(gid: Hid, gaddr: bigint, order: 'name' | 'crt' = 'name'): LinkList {
    let byName = this.linkCache.get(gaddr);
    if (!byName) {
      let links = this.symbolTableLinks(gaddr) ?? h5.listLinks(gid, 'name');
      if (gaddr === this.rootAddr && this.reserved.exists) links = links.filter((l) => l.name !== RESERVED);
      byName = listOf(links);
      this.linkCache.set(gaddr, byName);
    }
    if (order === 'name' || byName.links.length < 2 || byName.links.some((l) => l.corder === undefined)) return byName;
    let byCrt = this.linkCacheCrt.get(gaddr);
    if (!byCrt) {
      byCrt = listOf([...byName.links].sort((a, b) => a.corder! - b.corder!));
      this.linkCacheCrt.set(gaddr, byCrt);
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
    const skip = reserved?.cls === 'H5L_TYPE_HARD' ? Number(reserved.addr) : -1;
    for (const a of table.groups) if (a !== skip && this.known.getNumber(a) === undefined) this.known.setNumber(a, 'group');
    return table.links;
  }

  /** Kind of the object a hard link points to (cached in the known-address map). */
  kindOfAddr(gid: Hid, link: LinkRecord): ObjectKind | undefined {
    const addr = link.addr!;
    let kind = this.known.get(addr);
    if (kind === undefined) {
      kind = h5.objectKindByName(gid, link.name).kind;
      this.known.set(addr, kind);
    }
    return kind;
  }

  /**
   * Learn at once the kinds of the hard-link targets among `links` that are not known yet, from
   * their object headers read in a few large reads (fileBytes.ts) when libhdf5 has the file
   * open read-only (outside a write session, the bytes on disk are what libhdf5 sees); targets
   * left undecided are asked of libhdf5 one by one later (`kindOfAddr`). Costs nothing for
   * fewer than two unknown targets.
   */
  learnKinds(links: readonly LinkRecord[]): void {
    const h = this.handle;
    if (!h.bytesAreCurrent) return;
    const todo: number[] = [];
    for (const l of links) if (l.cls === 'H5L_TYPE_HARD' && this.known.get(l.addr!) === undefined && l.addr! <= MAX_SAFE_ADDR) todo.push(Number(l.addr!));
    if (todo.length < 2) return;
    for (const [addr, kind] of headerKinds(h.realPath, h.dev, h.ino, todo)) this.known.set(BigInt(addr), kind);
  }

  /** True when `name` in the group `gaddr` is the hidden reserved group. */
  isReservedName(gaddr: bigint, name: string): boolean {
    return name === RESERVED && gaddr === this.rootAddr && this.reserved.exists;
  }

  /** `linkCount` of an open group: libhdf5's count minus the reserved group in root. */
  linkCount(gid: Hid, gaddr: bigint): number {
    const n = h5.linkCount(gid);
    return gaddr === this.rootAddr && this.reserved.exists ? n - 1 : n;
  }

  /** Object ids open in this file (leak checks; 0 between requests). */
  openIds(): number {
    return this.fid === undefined ? 0 : h5.openIdCount(this.fid);
  }

  /** Layout constants re-exported for presenters. */
  static readonly LAYOUT = C.LAYOUT_NAMES;
}
