/**
 * Object ids that clients made (issue #25). h5pyd 1.0 and HSDS 1.0 clients name the objects they
 * create themselves (`POST /groups` with `{"id": "g-<16 hex of the root id>-<16 hex>"}`, `PUT /`
 * with `root_id`) and use those ids from then on, in URLs, links, object references and ACL
 * routes, also after the server restarts. h5store's own ids come from object addresses
 * (ids.ts), so a client's id is an alias: a durable map from the id to the object's address and
 * address generation, kept in the reserved group (docs/storage-format.md) as the uint64 table
 * `client_ids`, rows `(high 64 bits of the id's 32 hex digits, low 64 bits, object header
 * address, generation << 8 | kind)`, written by the same request (the same journaled
 * transaction) that creates the object.
 *
 * An object with an alias answers to it everywhere (`ObjectIndex.idOf` gives the alias). The
 * aliases of freed objects are forgotten (`ObjectIndex.markFreed`); their rows stay until the
 * table is compacted, and are ignored meanwhile: a freed address gets a new generation, so a row
 * whose generation is not the address's current one names nothing. New rows are written by
 * `save` (the creating request calls it once, before its transaction commits: one append for a
 * batch of 300 objects, not 300). The map is an `index` slot of the object index
 * (objectIndex.ts, fileState.ts: replaced whole with it), which asks it in `resolve`, `idOf`,
 * `registerNew` and `markFreed` only.
 */
import { badRequest, conflict } from '../../errors.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { AddrMap } from './addrMap.js';
import { StateSlot } from '../session/fileState.js';
import { COLLECTION } from './ids.js';

/** Name of the table in the reserved group. */
export const CLIENT_IDS = 'client_ids';
/** Columns of a row: id high bits, id low bits, address, generation << 8 | kind code. */
const WIDTH = 4;
const KIND_CODE: Record<ObjectKind, bigint> = { group: 0n, dataset: 1n, datatype: 2n };
const KINDS: ObjectKind[] = ['group', 'dataset', 'datatype'];
const PREFIX: Record<ObjectKind, string> = { group: 'g', dataset: 'd', datatype: 't' };

/**
 * The form of ids clients make (HSDS's "v2" ids, h5json `createObjId`): prefix, then 32
 * lower-case hex digits grouped 8-8-4-6-6.
 */
const CLIENT_ID_RE = /^([gdt])-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{6})-([0-9a-f]{6})$/;

/** What an alias names: an object header address, its generation, its kind. */
export interface Alias {
  addr: bigint;
  gen: number;
  kind: ObjectKind;
}

/** The reserved group's uint64 tables (reserved.ts `readTable`/`writeTable`). */
export interface AliasTables {
  readTable(name: string, width: number): bigint[][] | undefined;
  writeTable(name: string, rows: readonly (readonly bigint[])[], width: number, from?: number): void;
}

/** The 32 hex digits of an id of the client form. */
function hexOf(id: string): string {
  return id.slice(2).replace(/-/g, '');
}

/** The id of a row's two id columns and kind. */
function idOfRow(hi: bigint, lo: bigint, kind: ObjectKind): string {
  const h = hi.toString(16).padStart(16, '0') + lo.toString(16).padStart(16, '0');
  return `${PREFIX[kind]}-${h.slice(0, 8)}-${h.slice(8, 16)}-${h.slice(16, 20)}-${h.slice(20, 26)}-${h.slice(26, 32)}`;
}

/**
 * Check the id a client gives a new object: the client form (`g-`/`d-`/`t-` and 32 lower-case
 * hex digits as 8-8-4-6-6), the prefix of the collection it is created in, and the first 16 hex
 * digits of the domain's root id (HSDS 1.0 `createObject`: an id "is not valid for root"
 * otherwise).
 * @returns the id
 * @throws H5StoreError BadRequest naming what is wrong
 */
export function checkClientId(id: unknown, kind: ObjectKind, rootId: string): string {
  if (typeof id !== 'string') throw badRequest('"id" must be a string');
  const shown = JSON.stringify(id.length > 80 ? id.slice(0, 80) + '...' : id);
  const m = CLIENT_ID_RE.exec(id);
  if (!m) throw badRequest(`Invalid id ${shown}: expected ${PREFIX[kind]}- and 32 lower-case hex digits grouped 8-8-4-6-6`);
  if (m[1] !== PREFIX[kind]) throw badRequest(`Invalid id ${shown} for the ${COLLECTION[kind]} collection (its prefix must be ${PREFIX[kind]}-)`);
  if (hexOf(id).slice(0, 16) !== hexOf(rootId).slice(0, 16)) {
    throw badRequest(`Invalid id ${shown}: its first 16 hex digits must be those of the root id ${rootId}`);
  }
  return id;
}

/** Whether a string has the form of a client-made id (for a root id given to `PUT /`). */
export function isClientIdForm(id: string, kind: ObjectKind): boolean {
  const m = CLIENT_ID_RE.exec(id);
  return !!m && m[1] === PREFIX[kind];
}

/** The aliases of one open file (see the module comment). */
export class ClientIds {
  private readonly byId = new Map<string, Alias>();
  private readonly byAddr = new AddrMap<string>();
  /** Rows in the stored table (appends start there); undefined until loaded. */
  private stored: number | undefined;
  /** Rows of aliases added by the running write, not stored yet (`save`). */
  private pending: bigint[][] = [];

  /** Number of aliases. */
  get size(): number {
    return this.byId.size;
  }


  /**
   * Read the table (once per open file). Rows whose generation is not the address's current
   * one (`genOf`) name a freed object and are skipped.
   */
  load(tables: AliasTables, genOf: (addr: bigint) => number): void {
    this.byId.clear();
    this.byAddr.clear();
    const rows = tables.readTable(CLIENT_IDS, WIDTH) ?? [];
    this.stored = rows.length;
    for (const [hi, lo, addr, tag] of rows) {
      const kind = KINDS[Number(tag & 0xffn)];
      const gen = Number(tag >> 8n);
      if (kind === undefined || gen !== genOf(addr)) continue;
      const id = idOfRow(hi, lo, kind);
      this.byId.set(id, { addr, gen, kind });
      this.byAddr.set(addr, id);
    }
  }

  /** The object an alias names, if `id` is one. */
  lookup(id: string): Alias | undefined {
    return this.byId.size === 0 ? undefined : this.byId.get(id);
  }

  /** The alias of the object at `addr`, if it has one. */
  idAt(addr: bigint): string | undefined {
    return this.byId.size === 0 ? undefined : this.byAddr.get(addr);
  }

  /**
   * Give the object at `addr` the alias `id`: known at once; stored by `save`, which the write
   * that creates the object calls before it commits.
   */
  add(id: string, alias: Alias): void {
    this.pending.push(rowOf(id, alias));
    this.byId.set(id, alias);
    this.byAddr.set(alias.addr, id);
  }

  /** Store the aliases added since the last `save` (one append to the table; nothing when none). */
  save(tables: AliasTables): void {
    if (this.pending.length === 0) return;
    tables.writeTable(CLIENT_IDS, this.pending, WIDTH, this.stored ?? 0);
    this.stored = (this.stored ?? 0) + this.pending.length;
    this.pending = [];
  }

  /**
   * Forget the aliases of freed objects (by address). Their rows stay, ignored (their generation
   * is no longer the address's), until they outnumber the live ones: then the table is
   * rewritten with the live rows only (amortized: deleting objects one by one does not rewrite
   * the whole table each time).
   * @returns the aliases forgotten
   */
  drop(tables: AliasTables, addrs: Iterable<bigint>): string[] {
    const dropped: string[] = [];
    if (this.byId.size === 0) return dropped;
    for (const a of addrs) {
      const id = this.byAddr.get(a);
      if (id === undefined) continue;
      this.byAddr.delete(a);
      this.byId.delete(id);
      dropped.push(id);
    }
    if (dropped.length === 0) return dropped;
    const gone = new Set(dropped);
    this.pending = this.pending.filter((r) => !gone.has(idOfRow(r[0]!, r[1]!, KINDS[Number(r[3]! & 0xffn)]!)));
    const stale = (this.stored ?? 0) - (this.byId.size - this.pending.length);
    if (stale > Math.max(COMPACT_MIN_STALE, this.byId.size)) {
      const rows = [...this.byId].map(([id, al]) => rowOf(id, al));
      tables.writeTable(CLIENT_IDS, rows, WIDTH, 0);
      this.stored = rows.length;
      this.pending = [];
    }
    return dropped;
  }
}

/** Stale rows (of freed objects) tolerated before the table is compacted. */
const COMPACT_MIN_STALE = 64;

/** The table row of an alias. */
function rowOf(id: string, alias: Alias): bigint[] {
  const hex = hexOf(id);
  return [BigInt('0x' + hex.slice(0, 16)), BigInt('0x' + hex.slice(16)), alias.addr, (BigInt(alias.gen) << 8n) | KIND_CODE[alias.kind]];
}

/** What `givenId` needs of the file (DomainFile). */
export interface IdOwner {
  readonly rootId: string;
  idTaken(id: string): boolean;
}

/**
 * The id a create request gives its new object (`"id"` of the body), checked (`checkClientId`)
 * and free, or undefined when the body gives none (the object then gets an id made from its
 * address).
 * @throws H5StoreError BadRequest for a malformed id; Conflict when the id names an object already
 */
export function givenId(f: IdOwner, body: { id?: unknown }, kind: ObjectKind): string | undefined {
  if (body.id === undefined || body.id === null) return undefined;
  const id = checkClientId(body.id, kind, f.rootId);
  if (f.idTaken(id)) throw conflict(`${COLLECTION[kind].slice(0, -1)} id ${id} is taken: it names an object of this domain already`);
  return id;
}

/**
 * The aliases of one object index (fileState.ts: an `index` slot, replaced whole with the index
 * by every event other than this process's own writes through the domain's name).
 */
export const CLIENT_ID_ALIASES = new StateSlot('client-id aliases', 'index', () => new ClientIds());
