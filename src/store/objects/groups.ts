/**
 * Groups and the object collections (wire-reference 2.1).
 */
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { type AttrValueOptions, attributesDict } from './attributes.js';
import { extraCreationProperties, groupCreationProperties, storeCreationProperties } from './cprops.js';
import type { DomainFile } from './domainFile.js';
import { RESERVED } from './domainFile.js';
import { type LinkJson, linkJson } from './links.js';
import { settleFreed } from './linkWrites.js';
import { type NewObjectPlace, linkNewObject, planObjectPlace, refuseRoot } from './h5paths.js';
import { checkAnswerSize } from '../access/limits.js';
import { pageLimit, startAfterOrdered } from './paging.js';
import { givenId } from './clientIds.js';

/** A group as GET /groups/<id> shows it (without hrefs). */
export interface GroupJson {
  id: string;
  root: string;
  created: number;
  lastModified: number;
  linkCount: number;
  attributeCount: number;
  creationProperties?: Record<string, unknown>;
  links?: Record<string, Omit<LinkJson, 'title'>>;
  attributes?: Record<string, unknown>;
  alias?: string[];
  domain: string;
}

/** What GET /groups/<id> adds to a group's JSON (wire-reference 2.1). */
export interface GroupJsonOptions {
  includeLinks?: boolean;
  includeAttrs?: boolean;
  alias?: boolean;
  /** `links` and `attributes` dicts in creation order (for objects that track it). */
  createOrder?: boolean;
  /** Values in the `attributes` dict (`IncludeData`, `max_data_size`). */
  attrValues?: AttrValueOptions;
}

/** JSON of an open group. */
export function groupJsonOf(f: DomainFile, gid: Hid, gaddr: bigint, opts: GroupJsonOptions = {}): GroupJson {
  const info = h5.objectInfo(gid);
  const t = f.objectTimes(info);
  const out: GroupJson = {
    id: f.idOf(gaddr, 'group'),
    root: f.rootId,
    created: t.created,
    lastModified: t.lastModified,
    linkCount: f.linkCount(gid, gaddr),
    attributeCount: info.numAttrs,
    domain: f.domain,
  };
  const cp = groupCreationProperties(f, gid, gaddr);
  if (cp) out.creationProperties = cp;
  if (opts.includeLinks) {
    const links: Record<string, Omit<LinkJson, 'title'>> = {};
    for (const rec of f.links(gid, gaddr, opts.createOrder ? 'crt' : 'name').links) {
      const { title, ...rest } = linkJson(f, gid, rec, t);
      links[title] = rest;
    }
    out.links = links;
  }
  if (opts.includeAttrs) out.attributes = attributesDict(f, gid, gaddr, !!opts.createOrder, opts.attrValues);
  if (opts.alias) out.alias = f.aliasOf(gaddr);
  return out;
}

/** GET /groups/<id>. */
export function getGroup(f: DomainFile, id: string, opts: GroupJsonOptions): GroupJson {
  return f.withId(id, 'group', (gid, gaddr) => groupJsonOf(f, gid, gaddr, opts));
}

/**
 * A group to create (POST /groups; parsed by http/bodies.ts `groupBody`): the id its client gave
 * it (h5pyd 1.0; clientIds.ts), where it goes, and its `creationProperties` (`CreateOrder`;
 * other keys kept as given, cprops.ts).
 */
export type GroupCreate = NewObjectPlace & { id?: string; creationProperties?: Record<string, unknown> };

/**
 * POST /groups: anonymous (held in the reserved group) or linked via `link`/`h5path`.
 * @throws BadRequest (id, link name, path, creation properties), NotFound (parent), Conflict (name or id exists)
 */
export function createGroup(f: DomainFile, body: GroupCreate, implicit: boolean): GroupJson {
  const clientId = givenId(f, body, 'group');
  const cp = body.creationProperties;
  const trackOrder = !!cp?.CreateOrder;
  const extra = extraCreationProperties(cp);
  const place = planObjectPlace(f, body, implicit);
  const gid = h5.createGroup(f.h, undefined, { trackOrder });
  try {
    if (place) linkNewObject(f, gid, place);
    const { addr } = f.registerNew(gid, 'group', !!place, clientId);
    if (extra) storeCreationProperties(f, addr, extra);
    return groupJsonOf(f, gid, addr);
  } finally {
    h5.closeObject(gid);
  }
}

/**
 * Delete an object by id: every hard link to it is removed (so libhdf5 frees it and whatever
 * only it held), soft links to its path dangle. The ids of freed objects answer 410.
 * @throws Forbidden for the root group.
 */
export function deleteObject(f: DomainFile, kind: ObjectKind, id: string): void {
  const addr = f.resolve(id, kind);
  refuseRoot(f, addr);
  const before = f.allObjects();
  const candidates: Map<bigint, ObjectKind | undefined> =
    kind === 'group' ? h5.withObject(f.h, addr, (o) => h5.visitObjects(o)) : new Map([[addr, kind]]);
  // Every group that may hold a hard link to the object: all groups, and the reserved group.
  const holders: bigint[] = [];
  for (const [a, k] of before) if (k === 'group') holders.push(a);
  if (f.reserved.exists) {
    const rg = f.reserved.open(false)!;
    try {
      holders.push(h5.objectAddr(rg));
    } finally {
      h5.closeObject(rg);
    }
  }
  // Keep the object and every holder open while links are removed: libhdf5 frees an object
  // whose last link goes only when its last id closes, so no address is freed under our feet.
  const target = h5.openByAddr(f.h, addr);
  const open: Hid[] = [];
  try {
    const removals: [Hid, string][] = [];
    for (const g of holders) {
      const gid = h5.openByAddr(f.h, g);
      open.push(gid);
      for (const rec of h5.listLinks(gid)) {
        if (rec.cls === 'H5L_TYPE_HARD' && rec.addr === addr && !(g === f.rootAddr && rec.name === RESERVED)) removals.push([gid, rec.name]);
      }
    }
    for (const [gid, name] of removals) h5.deleteLink(gid, name);
  } finally {
    for (const gid of open) h5.closeObject(gid);
    h5.closeObject(target);
  }
  f.reserved.dropIfEmpty();
  settleFreed(f, candidates);
}

/**
 * GET /groups, /datasets, /datatypes: ids of the objects of one kind reachable from the root by
 * hard links, excluding the root and objects held only by the reserved group (as HSDS), in id
 * order, paged by `Limit` and `Marker` (an id; exclusive).
 * @param all every object of the file (Store `readWalked`), else found here
 * @param opts.pause awaited every 4,096 objects (the ids are made in pieces, the event loop
 *   running between them: Store `readWalked`)
 * @throws PayloadTooLarge when the page would hold more than `opts.maxAnswer` ids
 */
export async function listCollection(
  f: DomainFile,
  kind: ObjectKind,
  opts: { limit?: number; marker?: string; maxAnswer?: number; pause?: () => Promise<void> },
  all = f.allObjects(),
): Promise<string[]> {
  const ids: string[] = [];
  const root = f.rootAddr;
  const held = new Set<bigint>();
  if (f.reserved.exists) {
    const rg = f.reserved.open(false)!;
    try {
      for (const rec of h5.listLinks(rg)) if (rec.addr !== undefined) held.add(rec.addr);
    } finally {
      h5.closeObject(rg);
    }
  }
  let n = 0;
  for (const [addr, k] of all) {
    f.noteObject(addr, k);
    if (opts.pause && (++n & 4095) === 0) await opts.pause();
    if (k !== kind || addr === root || held.has(addr)) continue;
    ids.push(f.idOf(addr, k));
  }
  ids.sort();
  const start = startAfterOrdered(ids, opts.marker);
  const page = ids.slice(start, start + Math.min(pageLimit(opts.limit), ids.length));
  checkAnswerSize(page.length, opts.maxAnswer, `${kind} ids`);
  return page;
}
