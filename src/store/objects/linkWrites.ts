/**
 * Link writes (service spec 4.2; wire-reference 2.2): creating links one by one and in bulk, deleting
 * them, and freeing what lost its last link (ids answer 410 then).
 */
import { badRequest, conflict } from '../../errors.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { LinkRecord, ObjectKind } from '../../hdf5/objects.js';
import type { DomainFile } from './domainFile.js';
import { RESERVED as RESERVED_NAME } from './domainFile.js';
import { parseId } from './ids.js';
import { inCreatedOrder } from './createdTimes.js';
import { checkLinkName, findLink } from './links.js';

/** A link to create (PUT link body, wire-reference 2.2). */
export type LinkSpec = { id: string } | { h5path: string } | { h5path: string; h5domain: string };

/** The group ids a bulk links body names (`grp_ids` as a list or as the keys of a dict), for ACL checks. */
export function groupIdsIn(body: Record<string, unknown>): string[] {
  const g = body.grp_ids;
  if (Array.isArray(g)) return g.filter((x): x is string => typeof x === 'string');
  if (g && typeof g === 'object') return Object.keys(g);
  return [];
}

/** What a POST .../links body asks for (wire-reference 2.2). */
export interface LinksPost {
  /** Titles of the group of the path (or of each group of a `grp_ids` list). */
  titles?: string[];
  /** Several groups, each with its titles (undefined: all its links). */
  groups?: { id: string; titles?: string[] }[];
}

/** Whether an existing link record is the same link as a spec. */
function sameLink(rec: LinkRecord, spec: LinkSpec, targetAddr?: bigint): boolean {
  if ('id' in spec) return rec.cls === 'H5L_TYPE_HARD' && rec.addr === targetAddr;
  if ('h5domain' in spec) {
    return rec.cls === 'H5L_TYPE_EXTERNAL' && rec.path === spec.h5path && rec.file === spec.h5domain;
  }
  return rec.cls === 'H5L_TYPE_SOFT' && rec.path === spec.h5path;
}

/** A link to make, checked: its target address (hard links) and whether it is there already. */
interface LinkPlan {
  name: string;
  spec: LinkSpec;
  targetAddr?: bigint;
  exists: boolean;
}

/**
 * Check one link of a PUT before anything is written: name, reserved name, hard-link target,
 * and an existing link of that name (identical: nothing to do; different: 409).
 */
function planLink(f: DomainFile, gid: Hid, gaddr: bigint, name: string, spec: LinkSpec): LinkPlan {
  checkLinkName(name);
  if (f.isReservedName(gaddr, name) || (gaddr === f.rootAddr && name === RESERVED_NAME)) {
    throw badRequest(`${name} is a reserved name`);
  }
  let targetAddr: bigint | undefined;
  if ('id' in spec) targetAddr = f.resolve(spec.id);
  const existing = h5.getLink(gid, name);
  if (existing) {
    if (sameLink(existing, spec, targetAddr)) return { name, spec, targetAddr, exists: true };
    throw conflict(`Link ${JSON.stringify(name)} already exists with a different target`);
  }
  return { name, spec, targetAddr, exists: false };
}

/** Make a checked link. */
function makeLink(f: DomainFile, gid: Hid, groupId: string, p: LinkPlan): void {
  const { name, spec } = p;
  if ('id' in spec) {
    const oid = h5.openByAddr(f.h, p.targetAddr!);
    try {
      h5.linkObject(oid, gid, name);
    } finally {
      h5.closeObject(oid);
    }
    // held under the id it answers to (its alias, clientIds.ts), whatever form the client gave
    const held = f.idOf(p.targetAddr!, parseId(spec.id).kind);
    f.reserved.release(held);
    if (held !== spec.id) f.reserved.release(spec.id);
  } else if ('h5domain' in spec) {
    h5.createExternalLink(gid, name, spec.h5domain, spec.h5path);
  } else {
    h5.createSoftLink(gid, name, spec.h5path);
  }
  f.noteRecreated(`${groupId}/links/${name}`);
}

/**
 * Create a link (wire-reference 2.2 PUT): 'created' when new, 'exists' when an identical link
 * is already there.
 * @throws H5StoreError Conflict when the name exists with another target; NotFound for an
 *   unknown hard-link target; BadRequest for a bad name or body.
 */
export function putLink(f: DomainFile, groupId: string, name: string, spec: LinkSpec): 'created' | 'exists' {
  return putLinks(f, groupId, [[name, spec]]);
}

/**
 * Create several links of one group (PUT /groups/<id>/links): every link is checked first (as
 * `putLink`), and only when all pass are they written, so a bad one leaves the group as it was.
 * @returns 'created' when any link was made, 'exists' when all were there already.
 */
export function putLinks(f: DomainFile, groupId: string, items: [string, LinkSpec][]): 'created' | 'exists' {
  for (const [name] of items) checkLinkName(name);
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const plans = items.map(([name, spec]) => planLink(f, gid, gaddr, name, spec));
    const todo = plans.filter((p) => !p.exists);
    for (const p of todo) makeLink(f, gid, groupId, p);
    return todo.length ? 'created' : 'exists';
  });
}

/**
 * Delete several links of one group (DELETE /groups/<id>/links?titles=): all must exist (404
 * before anything is deleted), then each is deleted as `deleteLink`.
 */
export function deleteLinks(f: DomainFile, groupId: string, names: string[]): void {
  for (const n of names) checkLinkName(n);
  f.withId(groupId, 'group', (gid, gaddr) => {
    for (const n of names) findLink(f, gid, gaddr, n, groupId);
  });
  for (const n of names) deleteLink(f, groupId, n);
}

/**
 * Delete one link. When it was the last hard link to an object, the object is not freed: it
 * becomes anonymous, held in the reserved group under its id as objects created without a link
 * are (issue #25: `g = f["a"]; del f["a"]; f["b"] = g` works in h5py and HSDS), reachable by id
 * and linked again by a PUT of a hard link, until it is deleted by id (`DELETE /groups/<id>`).
 * @throws H5StoreError NotFound when there is no such link.
 */
export function deleteLink(f: DomainFile, groupId: string, name: string): void {
  checkLinkName(name);
  f.withId(groupId, 'group', (gid, gaddr) => {
    // Deleting an already-deleted link succeeds (wire-reference 2.2, HSDS behaviour).
    if (f.isDeleted(`${groupId}/links/${name}`) && !h5.linkExists(gid, name)) return;
    const rec = findLink(f, gid, gaddr, name, groupId);
    if (rec.cls === 'H5L_TYPE_HARD' && rec.addr !== undefined) {
      const info = h5.objectInfoByName(gid, name);
      if (info.rc <= 1 && info.kind !== undefined) {
        const oid = h5.openByName(gid, name);
        try {
          f.noteObject(info.addr, info.kind);
          f.reserved.hold(oid, f.idOf(info.addr, info.kind));
        } finally {
          h5.closeObject(oid);
        }
      }
    }
    h5.deleteLink(gid, name);
    f.noteDeleted(`${groupId}/links/${name}`);
  });
}

/** One link of a bulk PUT: the group, the title and what it points to. */
export interface LinkPut {
  groupId: string;
  title: string;
  spec: LinkSpec;
  /** When the client made it (seconds; createdTimes.ts): the group's links are made in this order. */
  created?: number;
}

/**
 * Create links in several groups, all or nothing (bulk PUT with `grp_ids`, wire-reference 2.2):
 * every link of every group is checked first (as `putLink`), and nothing is written when one is
 * invalid or conflicts; a title given twice for one group must name the same target. The links
 * of a group are made in the order of the `created` times given (createdTimes.ts), so its
 * creation order is the client's.
 * @returns 'created' when a link was new (201), 'exists' when every link was already there
 *   identically (200).
 * @throws H5StoreError BadRequest, NotFound (group or hard-link target), Conflict.
 */
export function putLinksBulk(f: DomainFile, items: LinkPut[]): 'created' | 'exists' {
  const byGroup = new Map<string, [string, LinkSpec][]>();
  for (const it of inCreatedOrder(items, (i) => i.created)) {
    checkLinkName(it.title);
    let list = byGroup.get(it.groupId);
    if (!list) byGroup.set(it.groupId, (list = []));
    const twice = list.find(([t]) => t === it.title);
    if (twice) {
      if (JSON.stringify(twice[1]) !== JSON.stringify(it.spec)) throw conflict(`Link ${JSON.stringify(it.title)} is given twice with different targets`);
      continue;
    }
    list.push([it.title, it.spec]);
  }
  // check everything (and resolve each group) before writing anything
  const plans = [...byGroup].map(([groupId, list]) =>
    f.withId(groupId, 'group', (gid, gaddr) => ({ groupId, gaddr, todo: list.map(([name, spec]) => planLink(f, gid, gaddr, name, spec)).filter((p) => !p.exists) })),
  );
  let made = 0;
  for (const g of plans) {
    if (!g.todo.length) continue;
    h5.withObject(f.h, g.gaddr, (gid) => {
      for (const p of g.todo) makeLink(f, gid, g.groupId, p);
    });
    made += g.todo.length;
  }
  return made ? 'created' : 'exists';
}

/** After deletes: of the candidate objects, those no longer reachable were freed. */
export function settleFreed(f: DomainFile, candidates: Map<bigint, ObjectKind | undefined>): void {
  let freed = candidates;
  if (candidates.size > 1 || [...candidates.values()][0] === 'group') {
    const alive = f.allObjects();
    freed = new Map([...candidates].filter(([a]) => !alive.has(a)));
  }
  f.markFreed(freed);
}
