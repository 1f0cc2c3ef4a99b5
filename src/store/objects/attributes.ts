/**
 * Attributes of groups, datasets and committed datatypes (service spec 2.1, 4.1, 4.3;
 * wire-reference 2.6).
 */
import type { ShapeJson } from '../../codec/shapes.js';
import { parseShape } from '../../codec/shapes.js';
import type { TypeJson } from '../../codec/types.js';
import { lacksBinaryForm, parseType, refuseBinaryForm, typesEqual } from '../../codec/types.js';
import { RawJson, WireValue, stringifyJson, valueToJson } from '../../codec/json.js';
import { encodeElements, flattenValue, hasInvalidUtf8 } from '../../codec/values.js';
import { badRequest, conflict, gone, notFound, tooLarge } from '../../errors.js';
import * as io from '../../hdf5/io.js';
import type { SpaceInfo } from '../../hdf5/io.js';
import { Hdf5Error, type Hid } from '../../hdf5/lib.js';
import { memSize } from '../../hdf5/memory.js';
import * as h5 from '../../hdf5/objects.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { DEFAULT_LIMITS, type Limits } from '../access/limits.js';
import { type DomainFile, RESERVED, type Times } from './domainFile.js';
import { StateSlot } from '../session/fileState.js';
import { isUnsetAttribute, markUnsetAttribute } from '../access/given.js';
import { pageLimit, startAfterExact, takePage } from './paging.js';

/**
 * What a read learnt about one attribute: type, dataspace, (small) value in wire format, and the
 * value as the REST API shows it (JSON text made once, base64, or null).
 */
interface AttrFacts {
  type: TypeJson;
  space: SpaceInfo;
  wire?: Buffer;
  shown?: { value: unknown; encoding?: 'base64' };
  /** `type` and `shape` as JSON text, written once for listings (`headOf`). */
  head?: { type: RawJson; shape: RawJson };
  /**
   * The item of attribute listings, with and without its value (`attributesOf`): the same
   * object for every listing while the view lasts (kept bytes, http/present.ts).
   */
  listed?: { created: number };
  listedBare?: { created: number };
}

/** Most bytes of attribute values one view keeps; larger single values are not kept. */
const ATTR_CACHE_BYTES = 32 * 1024 * 1024;
const ATTR_CACHE_VALUE_MAX = 256 * 1024;

/**
 * Attribute names (per object and order) and facts (per object and name) learnt from a file,
 * with the bytes of values they hold (bounded by ATTR_CACHE_BYTES): a cache of the view
 * (fileState.ts), so it lives until the file's next event.
 */
const ATTRS = new StateSlot('attributes', 'view', () => ({
  names: new Map<string, string[]>(),
  facts: new Map<bigint, Map<string, AttrFacts>>(),
  bytes: 0,
}));

/** Shape JSON of a dataspace (wire-reference 3.2: unlimited is 0; maxdims only when extensible). */
export function shapeJson(space: SpaceInfo): ShapeJson {
  if (space.cls !== 'H5S_SIMPLE') return { class: space.cls };
  const out: ShapeJson = { class: 'H5S_SIMPLE', dims: space.dims };
  if (space.maxdims.some((m, i) => m !== space.dims[i])) {
    out.maxdims = space.maxdims.map((m) => (m === Infinity ? 0 : m));
  }
  return out;
}

/** Dataspace from a parsed shape JSON (maxdims 0 = unlimited). */
export function spaceOf(shape: ShapeJson): SpaceInfo {
  if (shape.class !== 'H5S_SIMPLE') return { cls: shape.class, dims: [], maxdims: [] };
  return {
    cls: 'H5S_SIMPLE',
    dims: shape.dims,
    maxdims: shape.maxdims ? shape.maxdims.map((m) => (m === 0 ? Infinity : m)) : [],
  };
}

/** Number of elements of a dataspace (0 for H5S_NULL, 1 for scalar). */
export function spaceCount(space: SpaceInfo): number {
  if (space.cls === 'H5S_NULL') return 0;
  return space.dims.reduce((a, b) => a * b, 1);
}

/** An attribute as the REST API shows it. */
export interface AttributeJson {
  name: string;
  /** Objects, or (in listings of cached attributes) their JSON text. */
  type: TypeJson | RawJson;
  shape: ShapeJson | RawJson;
  value?: unknown;
  /** `base64` when `value` is the base64 of the binary wire form (asked for, or not UTF-8). */
  encoding?: 'base64';
  created: number;
  lastModified?: number;
}

/** How attribute values are presented (wire-reference 2.6). */
export interface ValueOptions {
  /** `encoding=base64`: values as base64 of the binary wire form. */
  base64?: boolean;
  /** `max_data_size`: leave out values of more than this many bytes (0 or absent: no limit). */
  maxDataSize?: number;
}

/**
 * The `value` (and `encoding`) of an attribute as the REST API shows it, from its wire bytes:
 * `null` for H5S_NULL and for attributes created without a value (given.ts) that still hold only
 * zeros; base64 with `encoding` when asked for or when a string is not valid UTF-8 (HSDS);
 * undefined (left out) when larger than `maxDataSize` bytes.
 */
export function presentValue(
  f: DomainFile,
  addr: bigint,
  name: string,
  facts: { type: TypeJson; space: SpaceInfo; wire?: Buffer },
  opts: ValueOptions = {},
): { value: unknown; encoding?: 'base64' } | undefined {
  if (facts.space.cls === 'H5S_NULL' || !facts.wire) return { value: null };
  const wire = facts.wire;
  if (opts.maxDataSize && opts.maxDataSize > 0 && wire.length > opts.maxDataSize) return undefined;
  if (isUnsetAttribute(f, addr, name) && !wire.some((b) => b !== 0)) return { value: null };
  // base64 is of the binary form, which some types have not (`lacksBinaryForm`): those come as JSON
  if ((opts.base64 || hasInvalidUtf8(wire, facts.type, spaceCount(facts.space))) && !lacksBinaryForm(facts.type)) {
    return { value: wire.toString('base64'), encoding: 'base64' };
  }
  return { value: new WireValue(wire, facts.type, facts.space.dims) };
}

/**
 * `presentValue` for the facts of the file's attribute cache: the presented value of a cached
 * attribute is kept with its facts (JSON text written once, for both `ignoreNan` settings; its
 * size counts against ATTR_CACHE_BYTES), so listing the same attributes again only joins text.
 * Facts not in the cache, `base64` and `maxDataSize` behave as `presentValue`.
 */
function presentCached(
  f: DomainFile,
  addr: bigint,
  name: string,
  facts: AttrFacts,
  opts: ValueOptions,
): { value: unknown; encoding?: 'base64' } | undefined {
  const cache = f.state(ATTRS);
  if (opts.base64 || cache.facts.get(addr)?.get(name) !== facts) return presentValue(f, addr, name, facts, opts);
  if (opts.maxDataSize && opts.maxDataSize > 0 && facts.wire && facts.wire.length > opts.maxDataSize) return undefined;
  if (facts.shown) return facts.shown;
  let shown = presentValue(f, addr, name, facts)!;
  let bytes = typeof shown.value === 'string' ? shown.value.length : 0;
  if (shown.value instanceof WireValue) {
    const raw = wireText(shown.value);
    shown = { value: raw };
    bytes = raw.text.length + (raw.ignoreNanText === raw.text ? 0 : raw.ignoreNanText!.length);
  }
  if (cache.bytes + bytes <= ATTR_CACHE_BYTES) {
    facts.shown = shown;
    cache.bytes += bytes;
  }
  return shown;
}

/** A value's JSON text for both `ignore_nan` settings (the same string when it holds no NaN or Infinity). */
function wireText(v: WireValue): RawJson {
  const { wire, type, shape } = v;
  const text = valueToJson(wire, type, shape);
  const nanText = hasFloats(type) && /NaN|Infinity/.test(text) ? valueToJson(wire, type, shape, { ignoreNan: true }) : text;
  return new RawJson(text, nanText);
}

/**
 * The attribute with its type, shape and value as JSON text (`RawJson`, same keys in the same
 * order), for a GET result kept between requests (`Store.getAttribute`): a repeated GET then
 * joins text instead of walking the type and formatting the value again (issue #9, small GETs).
 */
export function attributeAsText(a: AttributeJson): AttributeJson {
  const out: AttributeJson = { ...a };
  if (!(a.type instanceof RawJson)) out.type = new RawJson(stringifyJson(a.type));
  if (!(a.shape instanceof RawJson)) out.shape = new RawJson(stringifyJson(a.shape));
  if (a.value instanceof WireValue) out.value = wireText(a.value);
  return out;
}

/**
 * An attribute's `type` and `shape` for a listing: JSON text written once and kept with the
 * facts of the file's attribute cache (counted against ATTR_CACHE_BYTES), so listing the same
 * attributes again does not walk the type objects (issue #9: 1,000 attributes in one GET).
 * Facts not in the cache get the objects.
 */
function headOf(f: DomainFile, addr: bigint, name: string, facts: AttrFacts): { type: TypeJson | RawJson; shape: ShapeJson | RawJson } {
  if (facts.head) return facts.head;
  const type = facts.type;
  const shape = shapeJson(facts.space);
  const cache = f.state(ATTRS);
  if (cache.facts.get(addr)?.get(name) !== facts) return { type, shape };
  const head = { type: new RawJson(stringifyJson(type)), shape: new RawJson(stringifyJson(shape)) };
  const bytes = head.type.text.length + head.shape.text.length;
  if (cache.bytes + bytes <= ATTR_CACHE_BYTES) {
    facts.head = head;
    cache.bytes += bytes;
  }
  return head;
}

/** True if values of `t` may hold floats (whose JSON depends on `ignoreNan`). */
function hasFloats(t: TypeJson): boolean {
  switch (t.class) {
    case 'H5T_FLOAT':
      return true;
    case 'H5T_COMPOUND':
      return t.fields.some((x) => hasFloats(x.type));
    case 'H5T_ARRAY':
    case 'H5T_VLEN':
    case 'H5T_ENUM':
      return hasFloats(t.base);
    default:
      return false;
  }
}

/** Put a presented value (and its encoding) into an attribute's JSON; nothing when left out. */
function withValue(item: AttributeJson, v: { value: unknown; encoding?: 'base64' } | undefined): void {
  if (!v) return;
  item.value = v.value;
  if (v.encoding) item.encoding = v.encoding;
}

/** Look up one attribute: 404 when missing, 410 when deleted earlier in this process. */
function openAttr(f: DomainFile, oid: Hid, ownerId: string, name: string): Hid {
  checkAttrName(name);
  if (!io.attributeExists(oid, name)) {
    if (f.isDeleted(`${ownerId}/attributes/${name}`)) throw gone(`Attribute ${JSON.stringify(name)} has been deleted`);
    throw notFound(`Attribute ${JSON.stringify(name)} not found`);
  }
  return io.openAttribute(oid, name);
}

/** Owner object times (attributes use their owner's times, DESIGN.md section 4). */
function ownerTimes(f: DomainFile, oid: Hid): Times {
  return f.objectTimes(h5.objectInfo(oid));
}

/**
 * One attribute with its value (wire-reference 2.6 GET .../attributes/<name>).
 */
export function getAttribute(f: DomainFile, kind: ObjectKind, ownerId: string, name: string, includeData = true, vopts: ValueOptions = {}): AttributeJson {
  return f.withId(ownerId, kind, (oid, addr) => {
    const aid = openAttr(f, oid, ownerId, name);
    try {
      const meta = io.describeAttribute(aid, name, f.committedId);
      const t = ownerTimes(f, oid);
      const out: AttributeJson = { name, type: meta.type, shape: shapeJson(meta.space), created: t.created, lastModified: t.lastModified };
      if (includeData) {
        const wire = meta.space.cls === 'H5S_NULL' ? undefined : io.readAttribute(aid, meta.type, spaceCount(meta.space), f.refs);
        withValue(out, presentValue(f, addr, name, { ...meta, wire }, vopts));
      }
      return out;
    } finally {
      io.closeAttribute(aid);
    }
  });
}

/** The values of the `attributes` dict of an object's JSON (`IncludeData`, default true; `max_data_size`). */
export interface AttrValueOptions {
  includeData?: boolean;
  maxDataSize?: number;
}

/** Options of attribute listings (wire-reference 2.6). */
export interface AttributeListOptions extends ValueOptions {
  limit?: number;
  marker?: string;
  createOrder?: boolean;
  includeData?: boolean;
  pattern?: (name: string) => boolean;
}

function attrNames(f: DomainFile, oid: Hid, addr: bigint, createOrder: boolean): string[] {
  const key = `${addr}:${createOrder ? 'c' : 'n'}`;
  const cache = f.state(ATTRS).names;
  const cached = cache.get(key);
  if (cached) return cached;
  let names: string[] | undefined;
  // Creation order only where the object tracks it: otherwise libhdf5 gives the order its
  // storage happens to have (a hash order for more than 8 attributes): name order then.
  if (createOrder && h5.tracksAttributeOrder(oid)) {
    try {
      names = io.listAttributeNames(oid, 'crt');
    } catch {
      /* creation order not readable: fall back to names */
    }
  }
  names ??= io.listAttributeNames(oid, 'name');
  cache.set(key, names);
  return names;
}

/**
 * Type, dataspace and (with `withValue`) the value of one attribute, from the file's attribute
 * cache when an earlier read left them there (the view's: replaced by every event of the file).
 */
function attrFacts(f: DomainFile, oid: Hid, addr: bigint, name: string, withValue: boolean): AttrFacts {
  const cache = f.state(ATTRS);
  let perObject = cache.facts.get(addr);
  const hit = perObject?.get(name);
  if (hit && (!withValue || hit.wire || hit.space.cls === 'H5S_NULL')) return hit;
  const aid = io.openAttribute(oid, name);
  try {
    const meta = hit ?? io.describeAttribute(aid, name, f.committedId);
    const facts: AttrFacts = { type: meta.type, space: meta.space };
    if (withValue && meta.space.cls !== 'H5S_NULL') facts.wire = io.readAttribute(aid, meta.type, spaceCount(meta.space), f.refs);
    const bytes = facts.wire?.length ?? 0;
    if (bytes <= ATTR_CACHE_VALUE_MAX && cache.bytes + bytes <= ATTR_CACHE_BYTES) {
      if (!perObject) cache.facts.set(addr, (perObject = new Map()));
      perObject.set(name, facts);
      cache.bytes += bytes;
    }
    return facts;
  } finally {
    io.closeAttribute(aid);
  }
}

/**
 * Attributes of an open object in the given order, with or without values. An item of a cached
 * attribute (values neither base64 nor limited by `maxDataSize`) is remembered with its facts and
 * returned again by later listings until the file changes (callers copy before changing it).
 */
export function attributesOf(f: DomainFile, oid: Hid, addr: bigint, opts: AttributeListOptions & { names?: string[] }): AttributeJson[] {
  const names = opts.names ?? attrNames(f, oid, addr, !!opts.createOrder);
  const start = startAfterExact(opts.marker, (name) => names.indexOf(name), 'an attribute of this object');
  const t = ownerTimes(f, oid);
  const plain = !opts.base64 && !(opts.maxDataSize && opts.maxDataSize > 0);
  const cache = f.state(ATTRS);
  return takePage(
    names,
    start,
    pageLimit(opts.limit),
    (name) => {
      const facts = attrFacts(f, oid, addr, name, !!opts.includeData);
      const keep = plain && cache.facts.get(addr)?.get(name) === facts;
      const kept = keep ? (opts.includeData ? facts.listed : facts.listedBare) : undefined;
      if (kept && kept.created === t.created) return kept as AttributeJson;
      const head = headOf(f, addr, name, facts);
      const item: AttributeJson = { name, type: head.type, shape: head.shape, created: t.created };
      if (opts.includeData) withValue(item, presentCached(f, addr, name, facts, opts));
      if (keep) {
        if (opts.includeData) facts.listed = item;
        else facts.listedBare = item;
      }
      return item;
    },
    opts.pattern,
  );
}

/** The attributes of an object (GET .../attributes). */
export function listAttributes(f: DomainFile, kind: ObjectKind, ownerId: string, opts: AttributeListOptions): AttributeJson[] {
  return f.withId(ownerId, kind, (oid, addr) => attributesOf(f, oid, addr, opts));
}

/**
 * Attributes by name (POST .../attributes `{"attr_names"}`), in the order asked.
 * @throws H5StoreError NotFound/Gone for a missing name.
 */
export function attributesByName(f: DomainFile, kind: ObjectKind, ownerId: string, names: string[], includeData: boolean, vopts: ValueOptions = {}): AttributeJson[] {
  return f.withId(ownerId, kind, (oid, addr) => {
    for (const n of names) openAttrCheck(f, oid, ownerId, n);
    return attributesOf(f, oid, addr, { ...vopts, names, includeData });
  });
}

/**
 * POST .../attributes with `obj_ids` (wire-reference 2.6): the attributes of several objects of
 * any collection, keyed by id: all of them (`names` undefined) or the given names (404 for a
 * missing one).
 */
export function attributesOfObjects(
  f: DomainFile,
  items: { id: string; names?: string[] }[],
  opts: AttributeListOptions,
): Record<string, AttributeJson[]> {
  const out: Record<string, AttributeJson[]> = {};
  for (const { id, names } of items) {
    out[id] = f.withId(id, undefined, (oid, addr) => {
      for (const n of names ?? []) openAttrCheck(f, oid, id, n);
      return attributesOf(f, oid, addr, names ? { ...opts, names, limit: undefined, marker: undefined } : opts);
    });
  }
  return out;
}

/**
 * GET /groups/<id>/attributes?follow_links=1 (wire-reference 2.6): the attributes of the group
 * and of every object below it reachable by hard links (each once), keyed by id, in traversal
 * order. `Marker` does not apply; `Limit` caps the total (as for links); the reserved group and
 * objects held only by it are left out.
 */
export function attributesBelow(f: DomainFile, groupId: string, opts: AttributeListOptions): Record<string, AttributeJson[]> {
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const out: Record<string, AttributeJson[]> = {};
    const paths = h5.objectPaths(gid);
    const fromRoot = gaddr === f.rootAddr;
    // `Limit` caps the total number of attributes, as for links (issue #25)
    let left = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const take = (oid: Hid, addr: bigint): AttributeJson[] => {
      if (left <= 0) return [];
      const items = attributesOf(f, oid, addr, { ...opts, marker: undefined, limit: left === Infinity ? undefined : left });
      left -= items.length;
      return items;
    };
    out[f.idOf(gaddr, 'group')] = take(gid, gaddr);
    for (const [addr, p] of paths) {
      if (addr === gaddr || f.reserved.isInternal(addr)) continue;
      if (fromRoot && (p === RESERVED || p.startsWith(RESERVED + '/'))) continue;
      h5.withObject(f.h, addr, (o) => {
        const kind = h5.objectInfo(o).kind;
        if (kind) out[f.idOf(addr, kind)] = take(o, addr);
      });
    }
    return out;
  });
}

function openAttrCheck(f: DomainFile, oid: Hid, ownerId: string, name: string): void {
  io.closeAttribute(openAttr(f, oid, ownerId, name));
}

/**
 * The `attributes` dict of `include_attrs` (storage form keyed by name, wire-reference 2.1), in
 * name order, or creation order with `createOrder` when the object tracks it.
 */
export function attributesDict(f: DomainFile, oid: Hid, addr: bigint, createOrder = false, values: AttrValueOptions = {}): Record<string, Omit<AttributeJson, 'name'>> {
  const out: Record<string, Omit<AttributeJson, 'name'>> = {};
  for (const a of attributesOf(f, oid, addr, { includeData: values.includeData ?? true, maxDataSize: values.maxDataSize, createOrder })) {
    const { name, ...rest } = a;
    out[name] = rest;
  }
  return out;
}

/** Attribute value only: wire bytes plus type/shape (GET .../attributes/<name>/value). */
export function readAttributeValue(
  f: DomainFile,
  kind: ObjectKind,
  ownerId: string,
  name: string,
  vopts: ValueOptions = {},
): { type: TypeJson; space: SpaceInfo; wire: Buffer; json: { value: unknown; encoding?: 'base64' } } {
  return f.withId(ownerId, kind, (oid, addr) => {
    const aid = openAttr(f, oid, ownerId, name);
    try {
      const meta = io.describeAttribute(aid, name);
      if (meta.space.cls === 'H5S_NULL') throw badRequest('The attribute has a null dataspace (H5S_NULL): it holds no value');
      const wire = io.readAttribute(aid, meta.type, spaceCount(meta.space), f.refs);
      const json = presentValue(f, addr, name, { ...meta, wire }, { base64: vopts.base64 })!;
      return { type: meta.type, space: meta.space, wire, json };
    } finally {
      io.closeAttribute(aid);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Writing

/** A validated attribute to create: type, dataspace, and the value in the wire format. */
export interface AttributeSpec {
  type: TypeJson;
  space: SpaceInfo;
  wire?: Buffer;
}

/**
 * Validate a PUT attribute body `{type, shape?, value?}` (spec 2.1): every error is a 400 before
 * anything is written.
 */
export function parseAttributeBody(f: DomainFile, body: unknown, limits: Limits = DEFAULT_LIMITS): AttributeSpec {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Attribute body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (b.type === undefined) throw badRequest('Attribute body needs a "type"');
  const type = parseType(b.type, (id) => committedType(f, id));
  const shape = parseShape(b.shape);
  const space = spaceOf(shape);
  if (space.cls === 'H5S_SIMPLE' && space.maxdims.length) throw badRequest('Attributes cannot have maxdims');
  checkAttributeBytes(spaceCount(space) * memSize(type), limits);
  let wire: Buffer | undefined;
  if (b.value !== undefined && b.value !== null) {
    if (space.cls === 'H5S_NULL') throw badRequest('A value cannot be given for an attribute with shape H5S_NULL');
    if (b.encoding === 'base64') {
      if (typeof b.value !== 'string') throw badRequest('A base64 value must be a string');
      refuseBinaryForm(type, 'base64');
      wire = Buffer.from(b.value, 'base64');
    } else {
      const flat = flattenValue(b.value, space.dims, type);
      wire = encodeElements(flat, type);
    }
  } else if (b.value === null && space.cls !== 'H5S_NULL') {
    wire = undefined;
  }
  if (wire) checkAttributeBytes(wire.length, limits);
  return { type, space, wire };
}

/** 413 when an attribute value would hold more than `maxAttributeBytes`. */
function checkAttributeBytes(n: number, limits: Limits): void {
  if (n > limits.maxAttributeBytes) {
    throw tooLarge(`The attribute value holds ${n} bytes, above the limit of ${limits.maxAttributeBytes} (max_attribute_size): store large values in a dataset`);
  }
}

/** The type of a committed datatype by id (for `"type": "t-..."`). */
export function committedType(f: DomainFile, id: string): TypeJson {
  return f.withId(id, 'datatype', (tid) => ({ ...io.describeCommitted(tid), id }));
}

/**
 * The file type for a new dataset or attribute: the committed datatype itself when `type.id` is
 * set (so the object shares it, as h5py's named types), else a new transient type. Close it with
 * `io.closeType`.
 */
export function fileTypeFor(f: DomainFile, type: TypeJson): Hid {
  if (type.id) return f.open(type.id, 'datatype');
  return io.createStorableType(type, f.h);
}

function sameAttribute(f: DomainFile, aid: Hid, addr: bigint, name: string, spec: AttributeSpec): boolean {
  const meta = io.describeAttribute(aid, name);
  if (!typesEqual(meta.type, spec.type)) return false;
  if (meta.space.cls !== spec.space.cls || meta.space.dims.join() !== spec.space.dims.join()) return false;
  const n = spaceCount(meta.space);
  if (n === 0) return true;
  const cur = io.readAttribute(aid, meta.type, n, f.refs);
  // without a value: identical to an attribute also created without one (and still unwritten);
  // with one: not identical to such an attribute, even when the value is all zeros
  const unset = isUnsetAttribute(f, addr, name) && !cur.some((b) => b !== 0);
  if (spec.wire === undefined) return unset;
  return !unset && cur.equals(spec.wire);
}

/** Suffix of the temporary name a new value is written under before it replaces the old one. */
const TEMP_SUFFIX = '\u0001h5store-new';

/**
 * Create or replace an attribute (spec 2.1 and 4.1: an existing name is replaced; DESIGN.md 6).
 * `replace=false` gives HSDS's behaviour instead (200 identical / 409 different).
 * @returns 'created' (201) or 'exists' (identical attribute already present).
 */
export function putAttribute(f: DomainFile, kind: ObjectKind, ownerId: string, name: string, spec: AttributeSpec, replace = true): 'created' | 'exists' {
  return putAttributes(f, kind, ownerId, [[name, spec]], replace);
}

/**
 * Create or replace several attributes of one object (PUT .../attributes, and one for PUT
 * .../attributes/<name>), all or none: every name is checked first (identical: nothing to do;
 * `replace=false` and different: 409), then every new value is written under a temporary name;
 * if one of those writes fails, the temporary attributes are deleted and the object is as it
 * was. Only when all are written are the old attributes deleted and the new ones renamed into
 * place. On objects that track attribute creation order the renames are avoided (libhdf5 1.10
 * corrupts the dense creation-order index): the trial writes are dropped and the attributes
 * written under their names, so a replaced one becomes the newest (as h5py's replace).
 * @returns 'created' when any attribute was written, 'exists' when all were there already.
 */
export function putAttributes(f: DomainFile, kind: ObjectKind, ownerId: string, items: [string, AttributeSpec][], replace = true): 'created' | 'exists' {
  for (const [name] of items) checkAttrName(name);
  return f.withId(ownerId, kind, (oid) => {
    const todo: { name: string; spec: AttributeSpec; exists: boolean }[] = [];
    for (const [name, spec] of items) {
      const exists = io.attributeExists(oid, name);
      if (exists) {
        const aid = io.openAttribute(oid, name);
        let same: boolean;
        try {
          same = sameAttribute(f, aid, h5.objectAddr(oid), name, spec);
        } finally {
          io.closeAttribute(aid);
        }
        if (same) continue;
        if (!replace) throw conflict(`Attribute ${JSON.stringify(name)} already exists`);
      }
      todo.push({ name, spec, exists });
    }
    const written: string[] = [];
    try {
      for (const t of todo) {
        const temp = t.name + TEMP_SUFFIX;
        if (io.attributeExists(oid, temp)) io.deleteAttribute(oid, temp); // left by a crash
        writeNewAttribute(f, oid, temp, t.spec);
        written.push(temp);
      }
    } catch (e) {
      for (const temp of written) io.deleteAttribute(oid, temp);
      throw e;
    }
    const addr = h5.objectAddr(oid);
    if (todo.length && h5.tracksAttributeOrder(oid)) {
      // libhdf5 1.10's H5Arename corrupts the creation-order index of dense attribute storage
      // (a later H5Adelete fails: "record is not in B-tree"; h5py's replace hits it too). The
      // trial writes above proved every value fits: drop them, then (re)create each attribute
      // under its name, in the order given (a replaced one becomes the newest, as with h5py).
      for (const t of todo) io.deleteAttribute(oid, t.name + TEMP_SUFFIX);
      for (const t of todo) {
        if (t.exists) io.deleteAttribute(oid, t.name);
        writeNewAttribute(f, oid, t.name, t.spec);
        f.noteRecreated(`${ownerId}/attributes/${t.name}`);
        markUnsetAttribute(f, addr, t.name, t.spec.wire === undefined && spaceCount(t.spec.space) > 0);
      }
      return 'created';
    }
    for (const t of todo) {
      if (t.exists) io.deleteAttribute(oid, t.name);
      io.renameAttribute(oid, t.name + TEMP_SUFFIX, t.name);
      f.noteRecreated(`${ownerId}/attributes/${t.name}`);
      markUnsetAttribute(f, addr, t.name, t.spec.wire === undefined && spaceCount(t.spec.space) > 0);
    }
    return todo.length ? 'created' : 'exists';
  });
}

function writeNewAttribute(f: DomainFile, oid: Hid, name: string, spec: AttributeSpec): void {
  const ft = fileTypeFor(f, spec.type);
  try {
    let aid: Hid;
    try {
      aid = io.createAttribute(oid, name, ft, spec.space);
    } catch (e) {
      // Objects of the original file format (version 1 object headers, h5py's default
      // `libver='earliest'`) keep every attribute in the header: 64 KiB at most. Newer headers
      // move large attributes to dense storage (domains created by h5store have them).
      if (e instanceof Hdf5Error && e.mentions('object header message is too large')) {
        throw tooLarge(
          `The attribute is too large for this object: objects written in the original HDF5 file format (version 1 object headers) ` +
            `hold at most 64 KiB per attribute (type and dataspace included); store large values in a dataset`,
        );
      }
      throw e;
    }
    try {
      const n = spaceCount(spec.space);
      if (n > 0 && spec.wire) io.writeAttribute(aid, spec.type, n, spec.wire, f.refs);
    } catch (e) {
      io.closeAttribute(aid);
      io.deleteAttribute(oid, name);
      throw e;
    }
    io.closeAttribute(aid);
  } finally {
    io.closeType(ft);
  }
}

/** Validate an attribute name. */
export function checkAttrName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw badRequest('Attribute name must be a non-empty string');
  if (name.includes('\u0000')) throw badRequest('Attribute name must not contain NUL');
  if (name.includes(TEMP_SUFFIX)) throw badRequest('Attribute name uses a reserved suffix');
  return name;
}

/** Delete one attribute. @throws NotFound/Gone */
export function deleteAttribute(f: DomainFile, kind: ObjectKind, ownerId: string, name: string): void {
  f.withId(ownerId, kind, (oid) => {
    io.closeAttribute(openAttr(f, oid, ownerId, name));
    io.deleteAttribute(oid, name);
    f.noteDeleted(`${ownerId}/attributes/${name}`);
    markUnsetAttribute(f, h5.objectAddr(oid), name, false);
  });
}

/**
 * Delete several attributes (DELETE .../attributes?attr_names=a/b); all must exist (404 before
 * anything is deleted). A name given twice is deleted once (libhdf5 fails the second delete).
 */
export function deleteAttributes(f: DomainFile, kind: ObjectKind, ownerId: string, given: string[]): void {
  const names = [...new Set(given)];
  f.withId(ownerId, kind, (oid) => {
    for (const n of names) io.closeAttribute(openAttr(f, oid, ownerId, n));
    for (const n of names) {
      io.deleteAttribute(oid, n);
      f.noteDeleted(`${ownerId}/attributes/${n}`);
      markUnsetAttribute(f, h5.objectAddr(oid), n, false);
    }
  });
}

/**
 * Replace the value of an existing attribute (PUT .../attributes/<name>/value), JSON or wire.
 * @throws BadRequest for H5S_NULL or a value that does not fit.
 */
export function writeAttributeValue(
  f: DomainFile,
  kind: ObjectKind,
  ownerId: string,
  name: string,
  value: { json?: unknown; wire?: Buffer; base64?: boolean },
  limits: Limits = DEFAULT_LIMITS,
): void {
  f.withId(ownerId, kind, (oid) => {
    const aid = openAttr(f, oid, ownerId, name);
    try {
      const meta = io.describeAttribute(aid, name);
      if (meta.space.cls === 'H5S_NULL') throw badRequest('The attribute has a null dataspace (H5S_NULL): it holds no value');
      const n = spaceCount(meta.space);
      if (value.wire) refuseBinaryForm(meta.type, value.base64 ? 'base64' : 'body');
      if (value.wire) checkAttributeBytes(value.wire.length, limits);
      const wire = value.wire ?? encodeElements(flattenValue(value.json, meta.space.dims, meta.type), meta.type);
      io.writeAttribute(aid, meta.type, n, wire, f.refs);
      markUnsetAttribute(f, h5.objectAddr(oid), name, false);
    } finally {
      io.closeAttribute(aid);
    }
  });
}

/** One object's share of a bulk attribute write (PUT .../attributes with `obj_ids`). */
export interface BulkAttributes {
  id: string;
  items: [string, AttributeSpec][];
}

/**
 * PUT .../attributes with `obj_ids` (wire-reference 2.6): write attributes to several objects.
 * Everything is checked before anything is written: every id resolves, every name is valid,
 * and, without `replace`, no existing attribute differs (409).
 * @returns 'created' (201) when anything changed, 'exists' (200) when everything was identical.
 */
export function putAttributesMany(f: DomainFile, targets: BulkAttributes[], replace: boolean): 'created' | 'exists' {
  for (const t of targets) {
    f.withId(t.id, undefined, (oid) => {
      for (const [name, spec] of t.items) {
        checkAttrName(name);
        if (replace || !io.attributeExists(oid, name)) continue;
        const aid = io.openAttribute(oid, name);
        try {
          if (!sameAttribute(f, aid, h5.objectAddr(oid), name, spec)) throw conflict(`Attribute ${JSON.stringify(name)} of ${t.id} already exists`);
        } finally {
          io.closeAttribute(aid);
        }
      }
    });
  }
  let created = false;
  for (const t of targets) {
    const kind = f.withId(t.id, undefined, (oid) => h5.objectInfo(oid).kind!);
    if (putAttributes(f, kind, t.id, t.items, replace) === 'created') created = true;
  }
  return created ? 'created' : 'exists';
}
