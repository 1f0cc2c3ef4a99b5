/**
 * The object index of one domain entry (DESIGN.md section 3): what ids are made of and what
 * they resolve to. The domain key, the addresses known to be objects (with their kinds), the
 * address generations, the reserved group (reserved.ts), and the `index` slots other modules
 * declare (fileState.ts: the storage kinds of datasets, client-id aliases).
 *
 * It survives this process's own writes through its domain name (they keep it current:
 * `registerNew`, `noteObject`, `markFreed`) and is replaced whole by any other event
 * (fileState.ts `AFTER`). Synchronous, with the domain lock held and the file open.
 */
import { badRequest, gone, notFound } from '../../errors.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { LinkRecord, ObjectKind } from '../../hdf5/objects.js';
import { AddrMap } from './addrMap.js';
import { headerKinds } from '../session/fileBytes.js';
import type { FileHandle } from '../session/fileHandle.js';
import { SlotStore, type StateSlot } from '../session/fileState.js';
import { COLLECTION, type ParsedId, domainKey, domainOfKey, fileIdentity, makeId, noteDomainKey, parseId } from './ids.js';
import { CLIENT_ID_ALIASES, type ClientIds } from './clientIds.js';
import { RESERVED, ReservedGroup } from './reserved.js';

const MAX_SAFE_ADDR = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * What a client with an id of another file at the same path should do (issue #24 item 15;
 * docs/architecture.md "Ids after a copy or a restore").
 */
const REFIND = 'ids are made from the file now at the path, and a file restored from a backup or copied there gets new ones: look the object up again by its path (h5path)';

export class ObjectIndex {
  /** The domain key of the file now at the domain's path (ids.ts); computed from the stamp on first use. */
  private key_: string | undefined;
  private readonly known = new AddrMap<ObjectKind | undefined>();
  private fullyVisited = false;
  private readonly gens = new AddrMap<number>();
  private rootAddr_: bigint | undefined;
  /** The `index` slots (fileState.ts). */
  private readonly slots = new SlotStore();
  /** Ids clients gave objects (clientIds.ts, an `index` slot): aliases of address-made ids. */
  readonly clientIds: ClientIds = this.slots.get(CLIENT_ID_ALIASES);
  /** The reserved group (reserved.ts): objects held without a link, address generations. */
  readonly reserved = new ReservedGroup({
    file: () => this.h,
    ensureLoaded: () => this.ensureLoaded(),
    becameInternal: (addr) => this.known.delete(addr),
  });

  constructor(
    private readonly domain: string,
    private readonly handle: FileHandle,
    /**
     * Names deleted while the server runs (410), the domain's (domainFile.ts): here the client
     * ids of freed objects (their rows leave the file's table; ids made from addresses need no
     * entry, their address generations say so).
     */
    private readonly deleted: Set<string>,
  ) {}

  private get h(): Hid {
    const fid = this.handle.fid;
    if (fid === undefined) throw new Error(`domain ${this.domain} is not open`);
    return fid;
  }

  /** The value of an `index` slot (fileState.ts). */
  state<T>(slot: StateSlot<T>): T {
    return this.slots.get(slot);
  }

  /**
   * The domain key of the open file: its domain path and its identity on disk (inode and birth
   * time, ids.ts `fileIdentity`), so a file deleted and created again at the same path gives
   * new ids. Only valid while the file is open (the stamp is that of the open file).
   */
  get key(): string {
    if (this.key_ === undefined) {
      const st = this.handle.stamp;
      const key = domainKey(this.domain, st ? fileIdentity(st) : '');
      if (!st) return key; // not open: not kept (the identity is not known yet)
      this.key_ = key;
      noteDomainKey(key, this.domain);
    }
    return this.key_;
  }

  get rootAddr(): bigint {
    if (this.rootAddr_ === undefined) {
      this.rootAddr_ = h5.objectAddr(this.h);
      this.known.set(this.rootAddr_, 'group');
      for (const [addr, gen] of this.reserved.load()) this.gens.set(addr, gen);
      this.clientIds.load(this.reserved, (a) => this.gens.get(a) ?? 0);
    }
    return this.rootAddr_;
  }

  /** Read the root address, the reserved group and the generations once per index. */
  private ensureLoaded(): void {
    if (this.rootAddr_ === undefined) void this.rootAddr;
  }

  /** The id of the object at `addr`: the id its client gave it (clientIds.ts), else the one made from its address. */
  idOf(addr: bigint, kind: ObjectKind): string {
    if (!this.known.has(addr)) this.known.set(addr, kind);
    return this.clientIds.idAt(addr) ?? makeId(kind, this.key, addr, this.gens.get(addr) ?? 0);
  }

  /** The address generation of `addr` (0 unless an object was freed there). */
  generation(addr: bigint): number {
    return this.gens.get(addr) ?? 0;
  }

  /**
   * The key of an object's ACL (acls.ts) and given state (given.ts): header address and address
   * generation, so such state never passes to a later object at a reused address.
   */
  objectKey(addr: bigint): string {
    return `${addr.toString(16)}.${this.gens.get(addr) ?? 0}`;
  }

  /** Whether an object key still names an object of the file (its address holds that generation). */
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
   * Resolve a client id to an object address (DESIGN.md section 3): syntax (400); an id a client
   * gave the object (clientIds.ts), else one made from its address: domain membership (400),
   * freed by h5store (an older generation of its address: 410, in every process and after a
   * restart; a client id of a deleted object: 410 in the process that deleted it), generation
   * and address known to be an object of this file (404); prefix matching the object's type (404).
   * @param expected the kind the route implies; a different prefix is a 400.
   */
  resolve(id: string, expected?: ObjectKind): bigint {
    const p = parseId(id);
    if (expected && p.kind !== expected) {
      throw badRequest(`${id} is not a ${expected} id (the ${COLLECTION[p.kind]} collection holds it)`);
    }
    if (p.foreign) throw notFound(`${p.kind} ${id} not found`);
    this.ensureLoaded();
    const addr = this.clientIds.lookup(id)?.addr ?? this.addrOfMadeId(id, p);
    let kind = this.known.get(addr);
    if (kind === undefined && !this.known.has(addr)) {
      if (!this.fullyVisited) this.fullVisit();
      if (!this.known.has(addr)) throw notFound(`${p.kind} ${id} not found`);
      kind = this.known.get(addr);
    }
    if (kind === undefined) {
      kind = h5.withObject(this.h, addr, (o) => h5.objectInfo(o).kind);
      this.known.set(addr, kind);
    }
    if (kind !== p.kind) throw notFound(`${p.kind} ${id} not found`);
    return addr;
  }

  /** The address an id of h5store's own form names (see `resolve`). */
  private addrOfMadeId(id: string, p: ParsedId): bigint {
    if (this.deleted.has(id)) throw gone(`${p.kind} ${id} has been deleted`);
    if (p.key !== this.key) {
      const owner = domainOfKey(p.key);
      if (owner === this.domain) throw gone(`${p.kind} ${id} belonged to an earlier file at ${this.domain}, which was deleted or replaced: ${REFIND}`);
      if (owner !== undefined) throw badRequest('Object id is not a member of the given domain');
      throw notFound(`${p.kind} ${id} not found in this domain (${REFIND})`);
    }
    const gen = this.gens.get(p.addr) ?? 0;
    // An older generation of its address: h5store freed the object there (markFreed), which the
    // file itself records, so every process says so (every worker, and after a restart); also
    // when the address now holds an object of the reserved group (its generations dataset often
    // takes the first address freed).
    if (p.gen < gen) throw gone(`${p.kind} ${id} has been deleted`);
    if (p.gen !== gen || this.reserved.isInternal(p.addr)) throw notFound(`${p.kind} ${id} not found`);
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

  /**
   * Addresses of all objects in the file (full traversal, or the result of one `walked`),
   * without internal objects.
   */
  allObjects(walked?: Map<bigint, ObjectKind | undefined>): Map<bigint, ObjectKind | undefined> {
    const all = walked ?? h5.visitObjects(this.h);
    for (const a of all.keys()) if (this.reserved.isInternal(a)) all.delete(a);
    return all;
  }

  /**
   * Record that the objects at `addrs` were freed: each address gets a new generation, persisted
   * in the reserved group in the same write, so the old ids answer 410 (in every process, also
   * after a restart: `resolve`) and never name the next object libhdf5 puts there.
   */
  markFreed(freed: Map<bigint, ObjectKind | undefined>): void {
    if (freed.size === 0) return;
    for (const [addr, kind] of freed) {
      if (kind) this.deleted.add(makeId(kind, this.key, addr, this.gens.get(addr) ?? 0));
      const alias = this.clientIds.idAt(addr);
      if (alias !== undefined) this.deleted.add(alias);
      this.known.delete(addr);
      this.gens.set(addr, (this.gens.get(addr) ?? 0) + 1);
    }
    this.reserved.saveGenerations(this.gens);
    this.clientIds.drop(this.reserved, freed.keys());
  }

  /**
   * Register an object just created: remember its address, give it an id, and hold it in the
   * reserved group when it was created without a link (DESIGN.md section 4). `clientId`: the id
   * the client gave it (checked to be free), its alias (clientIds.ts; the creating write stores
   * the aliases it made with `clientIds.save` before it commits).
   */
  registerNew(oid: Hid, kind: ObjectKind, linked: boolean, clientId?: string): { addr: bigint; id: string } {
    const addr = h5.objectAddr(oid);
    this.noteObject(addr, kind);
    if (clientId !== undefined) {
      this.clientIds.add(clientId, { addr, gen: this.gens.get(addr) ?? 0, kind }); // stored by clientIds.save
      this.deleted.delete(clientId);
    }
    const id = this.idOf(addr, kind);
    if (!linked) this.reserved.hold(oid, id);
    return { addr, id };
  }

  /** Object references <-> `groups/g-...` strings: the object reference part of `DomainFile.refs`. */
  refToWire(addr: bigint): string {
    let kind = this.known.get(addr);
    if (kind === undefined) {
      if (!this.known.has(addr) && !this.fullyVisited) this.fullVisit();
      if (!this.known.has(addr)) return '';
      kind = h5.withObject(this.h, addr, (o) => h5.objectInfo(o).kind);
      if (!kind) return '';
      this.known.set(addr, kind);
    }
    return `${COLLECTION[kind]}/${this.idOf(addr, kind)}`;
  }

  /** Kind of the object a hard link of the open group `gid` points to (learnt once). */
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

  /** Note the group addresses a symbol table read from the file's bytes named (fileBytes.ts). */
  learnGroups(addrs: readonly number[], skip: number): void {
    for (const a of addrs) if (a !== skip && this.known.getNumber(a) === undefined) this.known.setNumber(a, 'group');
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
}
