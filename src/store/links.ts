/**
 * Links and path lookup (service spec 2.2, 4.2, 4.3; wire-reference 2.2).
 *
 * Link records come from libhdf5 in ascending name order (UTF-8 byte order = code-point order)
 * or creation order; the reserved group is hidden. External links are never followed by
 * libhdf5: `h5domain` is the target file as a domain path, resolved against the folder of the
 * link's own domain when the stored file name is relative (as libhdf5 itself would, relative to
 * the parent file's directory).
 */
import path from 'node:path';
import { badRequest, conflict, forbidden, gone, notFound } from '../errors.js';
import type { Hid } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import type { LinkRecord, ObjectKind } from '../hdf5/objects.js';
import type { DomainFile, Times } from './domainFile.js';
import { RESERVED as RESERVED_NAME } from './domainFile.js';
import { COLLECTION } from './ids.js';

/** A link as the REST API shows it (without hrefs). */
export interface LinkJson {
  title: string;
  class: string;
  id?: string;
  collection?: string;
  h5path?: string;
  h5domain?: string;
  created?: number;
  lastModified?: number;
}

/**
 * Validate a link name from a client: non-empty, no `/`, not `.`, no NUL.
 * @throws H5StoreError BadRequest
 */
export function checkLinkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw badRequest('Link name must be a non-empty string');
  if (name.includes('/')) throw badRequest(`Link name ${JSON.stringify(name)} must not contain "/"`);
  if (name === '.' ) throw badRequest('Link name "." is not allowed');
  if (name.includes('\u0000')) throw badRequest('Link name must not contain NUL characters');
  return name;
}

/** The domain path an external link's file name refers to, seen from `domain`. */
export function externalDomain(domain: string, file: string): string {
  if (file.startsWith('/')) return path.posix.normalize(file);
  return path.posix.resolve(path.posix.dirname(domain), file);
}

/** The file name to store for an external link to domain `target` from `domain`. */
export function externalFileName(domain: string, target: string): string {
  if (!target.startsWith('/')) return target;
  return path.posix.relative(path.posix.dirname(domain), path.posix.normalize(target)) || path.posix.basename(target);
}

/** REST JSON of one link record of an open group. */
export function linkJson(f: DomainFile, gid: Hid, rec: LinkRecord, times?: Times): LinkJson {
  const out: LinkJson = { title: rec.name, class: rec.cls };
  switch (rec.cls) {
    case 'H5L_TYPE_HARD': {
      const kind = f.kindOfAddr(gid, rec);
      if (kind) {
        out.id = f.idOf(rec.addr!, kind);
        out.collection = COLLECTION[kind];
      }
      break;
    }
    case 'H5L_TYPE_SOFT':
      out.h5path = rec.path;
      break;
    case 'H5L_TYPE_EXTERNAL':
      out.h5path = rec.path;
      out.h5domain = externalDomain(f.domain, rec.file ?? '');
      break;
    default:
      // User-defined links: only title and class (spec 2.2).
      return out;
  }
  if (times) {
    out.created = times.created;
  }
  return out;
}

/** Times of an open group (links use their owner's times, DESIGN.md section 4). */
export function groupTimes(f: DomainFile, gid: Hid): Times {
  return f.objectTimes(h5.objectInfo(gid));
}

/** Options for listing links. */
export interface LinkListOptions {
  limit?: number;
  marker?: string;
  createOrder?: boolean;
  /** Shell glob on the title (wire-reference 2.2 `pattern`). */
  pattern?: (name: string) => boolean;
}

/**
 * The links of a group, paged: ascending name order (or creation order when asked and the
 * group tracks it), starting after `marker` (with or without surrounding double quotes).
 * @throws H5StoreError NotFound when the marker is not a link of the group (wire-reference 0.9).
 */
export function listLinks(f: DomainFile, groupId: string, opts: LinkListOptions): LinkJson[] {
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const useCrt = !!opts.createOrder && h5.groupTracksOrder(gid);
    const list = f.links(gid, gaddr, useCrt ? 'crt' : 'name');
    const { links, index } = list;
    const cache = list.json as (LinkJson | undefined)[];
    let start = 0;
    if (opts.marker !== undefined && opts.marker !== '') {
      let i = index.get(opts.marker);
      if (i === undefined && /^".*"$/s.test(opts.marker)) i = index.get(opts.marker.slice(1, -1));
      if (i === undefined) throw notFound(`Marker ${JSON.stringify(opts.marker)} is not a link of this group`);
      start = i + 1;
    }
    const times = groupTimes(f, gid);
    const out: LinkJson[] = [];
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    for (let i = start; i < links.length && out.length < limit; i++) {
      if (opts.pattern && !opts.pattern(links[i].name)) continue;
      // Cached per link until the next write; callers copy before adding request-specific hrefs.
      out.push((cache[i] ??= linkJson(f, gid, links[i], times)));
    }
    return out;
  });
}

/**
 * `follow_links=1` (wire-reference 2.2): the links of every group reachable from `groupId` by
 * hard links, keyed by group id, each group once; `limit` caps the total number of links.
 * Items carry no `collection`, `target` or `href`.
 */
export function listLinksDeep(f: DomainFile, groupId: string, opts: { limit?: number; pattern?: (name: string) => boolean }): Record<string, LinkJson[]> {
  const out: Record<string, LinkJson[]> = {};
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  let total = 0;
  const queue: bigint[] = [f.resolve(groupId, 'group')];
  const seen = new Set<bigint>(queue);
  while (queue.length && total < limit) {
    const gaddr = queue.shift()!;
    h5.withObject(f.h, gaddr, (gid) => {
      const times = groupTimes(f, gid);
      const items: LinkJson[] = [];
      for (const rec of f.links(gid, gaddr).links) {
        if (rec.cls === 'H5L_TYPE_HARD' && f.kindOfAddr(gid, rec) === 'group' && !seen.has(rec.addr!)) {
          seen.add(rec.addr!);
          queue.push(rec.addr!);
        }
        if (total >= limit || (opts.pattern && !opts.pattern(rec.name))) continue;
        const item = linkJson(f, gid, rec, times);
        delete item.collection;
        items.push(item);
        total++;
      }
      out[f.idOf(gaddr, 'group')] = items;
    });
  }
  return out;
}

/** One link of a group: `{link, created, lastModified}` (spec 2.2). */
export function getLink(f: DomainFile, groupId: string, name: string): { link: LinkJson; created: number; lastModified: number } {
  checkLinkName(name);
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const rec = findLink(f, gid, gaddr, name, groupId);
    const times = groupTimes(f, gid);
    return { link: linkJson(f, gid, rec), created: times.created, lastModified: times.lastModified };
  });
}

function findLink(f: DomainFile, gid: Hid, gaddr: bigint, name: string, groupId: string): LinkRecord {
  const rec = f.isReservedName(gaddr, name) ? undefined : h5.getLink(gid, name);
  if (!rec) {
    if (f.goneIds.has(`${groupId}/links/${name}`)) throw gone(`Link ${JSON.stringify(name)} has been deleted`);
    throw notFound(`Link ${JSON.stringify(name)} not found`);
  }
  return rec;
}

/** A link to create (PUT link body, wire-reference 2.2). */
export type LinkSpec = { id: string } | { h5path: string } | { h5path: string; h5domain: string };

/**
 * Parse a PUT link body: `{"id"}` hard, `{"h5path"}` soft, `{"h5path","h5domain"}` external
 * (a `class` key is ignored). User-defined classes are refused.
 * @throws H5StoreError BadRequest
 */
export function parseLinkSpec(body: unknown): LinkSpec {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Link body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.class === 'string' && !['H5L_TYPE_HARD', 'H5L_TYPE_SOFT', 'H5L_TYPE_EXTERNAL'].includes(b.class)) {
    throw badRequest(`invalid link class ${b.class}: only hard, soft and external links can be created`);
  }
  const hasId = b.id !== undefined;
  const hasPath = b.h5path !== undefined;
  if (hasId && hasPath) throw badRequest('Link body must have either "id" or "h5path", not both');
  if (hasId) {
    if (typeof b.id !== 'string') throw badRequest('"id" must be a string');
    return { id: b.id };
  }
  if (!hasPath) throw badRequest('Link body must have "id" (hard link) or "h5path" (soft or external link)');
  if (typeof b.h5path !== 'string' || b.h5path === '') throw badRequest('"h5path" must be a non-empty string');
  if (b.h5path.includes('\u0000')) throw badRequest('"h5path" must not contain NUL');
  if (b.h5domain !== undefined) {
    if (typeof b.h5domain !== 'string' || b.h5domain === '') throw badRequest('"h5domain" must be a non-empty string');
    if (b.h5domain.includes('\u0000')) throw badRequest('"h5domain" must not contain NUL');
    return { h5path: b.h5path, h5domain: b.h5domain };
  }
  return { h5path: b.h5path };
}

/** Whether an existing link record is the same link as a spec. */
function sameLink(f: DomainFile, rec: LinkRecord, spec: LinkSpec, targetAddr?: bigint): boolean {
  if ('id' in spec) return rec.cls === 'H5L_TYPE_HARD' && rec.addr === targetAddr;
  if ('h5domain' in spec) {
    return (
      rec.cls === 'H5L_TYPE_EXTERNAL' &&
      rec.path === spec.h5path &&
      externalDomain(f.domain, rec.file ?? '') === externalDomain(f.domain, spec.h5domain)
    );
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
    if (sameLink(f, existing, spec, targetAddr)) return { name, spec, targetAddr, exists: true };
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
    f.releaseAnonymous(spec.id);
  } else if ('h5domain' in spec) {
    h5.createExternalLink(gid, name, externalFileName(f.domain, spec.h5domain), spec.h5path);
  } else {
    h5.createSoftLink(gid, name, spec.h5path);
  }
  f.goneIds.delete(`${groupId}/links/${name}`);
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
    if (todo.length) f.invalidateCaches();
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
 * Delete one link. When it was the last hard link to an object, libhdf5 frees the object (and,
 * for a group, whatever only it held): those ids then answer 410.
 * @throws H5StoreError NotFound when there is no such link.
 */
export function deleteLink(f: DomainFile, groupId: string, name: string): void {
  checkLinkName(name);
  f.withId(groupId, 'group', (gid, gaddr) => {
    // Deleting an already-deleted link succeeds (wire-reference 2.2, HSDS behaviour).
    if (f.goneIds.has(`${groupId}/links/${name}`) && !h5.linkExists(gid, name)) return;
    const rec = findLink(f, gid, gaddr, name, groupId);
    let freedCandidates: Map<bigint, ObjectKind | undefined> | undefined;
    if (rec.cls === 'H5L_TYPE_HARD' && rec.addr !== undefined) {
      const info = h5.objectInfoByName(gid, name);
      if (info.rc <= 1) freedCandidates = subtree(f, gid, name, info);
    }
    h5.deleteLink(gid, name);
    f.goneIds.add(`${groupId}/links/${name}`);
    f.invalidateCaches();
    if (freedCandidates) settleFreed(f, freedCandidates);
  });
}

/** The object named `name` in `gid` and, for a group, everything reachable from it. */
export function subtree(f: DomainFile, gid: Hid, name: string, info: h5.ObjectInfo): Map<bigint, ObjectKind | undefined> {
  if (info.kind !== 'group') return new Map([[info.addr, info.kind]]);
  const oid = h5.openByName(gid, name);
  try {
    return h5.visitObjects(oid);
  } finally {
    h5.closeObject(oid);
  }
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

// ---------------------------------------------------------------------------------------------
// Path lookup

const MAX_SOFT_DEPTH = 16;

/**
 * Resolve an HDF5 path to an object: absolute from the root, or relative to `startAddr`.
 * Soft links are followed (up to 16 deep); external links are not followed by libhdf5: a path
 * crossing one is a 400 naming the target domain; user-defined links and dangling soft links
 * end in 404.
 */
export function resolvePath(f: DomainFile, h5path: string, startAddr?: bigint, depth = 0): { addr: bigint; kind: ObjectKind } {
  if (depth > MAX_SOFT_DEPTH) throw badRequest('Too many levels of soft links');
  if (h5path.includes('\u0000')) throw badRequest('"h5path" must not contain NUL characters');
  const absolute = h5path.startsWith('/');
  let cur = absolute || startAddr === undefined ? f.rootAddr : startAddr;
  let kind: ObjectKind = 'group';
  if (startAddr !== undefined && !absolute) {
    kind = h5.withObject(f.h, cur, (o) => h5.objectInfo(o).kind) ?? 'group';
  }
  const parts = h5path.split('/').filter((p) => p !== '' && p !== '.');
  for (const part of parts) {
    if (kind !== 'group') throw notFound(`Path ${h5path} not found: ${part} is below a ${kind}`);
    const gaddr = cur;
    const next = h5.withObject(f.h, gaddr, (gid) => {
      if (f.isReservedName(gaddr, part)) return undefined;
      const rec = h5.getLink(gid, part);
      if (!rec) return undefined;
      if (rec.cls === 'H5L_TYPE_HARD') {
        const k = f.kindOfAddr(gid, rec);
        return k ? { addr: rec.addr!, kind: k } : undefined;
      }
      if (rec.cls === 'H5L_TYPE_SOFT') {
        try {
          return resolvePath(f, rec.path!, gaddr, depth + 1);
        } catch (e) {
          if ((e as { code?: string }).code === 'NotFound') return undefined;
          throw e;
        }
      }
      if (rec.cls === 'H5L_TYPE_EXTERNAL') {
        throw badRequest(
          `Path ${h5path} crosses external link ${part} to domain ${externalDomain(f.domain, rec.file ?? '')} (${rec.path}); look it up there`,
        );
      }
      return undefined;
    });
    if (!next) throw notFound(`Path ${h5path} not found`);
    cur = next.addr;
    kind = next.kind;
  }
  return { addr: cur, kind };
}

/** Where a new object goes, worked out without changing the file (see `planObjectPlace`). */
export interface PlacePlan {
  /** The deepest existing group on the way (the parent itself when `missing` is empty). */
  parent: bigint;
  /** Groups to create below `parent`, in order (`implicit=1`), before linking `name`. */
  missing: string[];
  /** The new link's name. */
  name: string;
}

/**
 * Where a new object goes: `{link: {id, name}}` or `{h5path, parent_id}`, or undefined for an
 * anonymous object. Nothing is written: missing intermediate groups (allowed with `implicit`,
 * wire-reference 2.1) are listed, and the name is checked to be free, so that a create request
 * either fails before changing the file or succeeds whole (`linkNewObject`).
 * @throws BadRequest (bad body, reserved name, a path component that is not a group, a path
 *   through an external link), NotFound (parent missing without implicit), Conflict (name taken)
 */
export function planObjectPlace(
  f: DomainFile,
  body: { link?: unknown; h5path?: unknown; parent_id?: unknown },
  implicit: boolean,
): PlacePlan | undefined {
  if (body.link !== undefined && body.h5path !== undefined) throw badRequest('Give "link" or "h5path", not both');
  let plan: PlacePlan | undefined;
  if (body.link !== undefined) {
    const l = body.link as { id?: unknown; name?: unknown };
    if (!l || typeof l !== 'object') throw badRequest('"link" must be an object with "id" and "name"');
    if (typeof l.id !== 'string') throw badRequest('"link.id" (the parent group id) is required');
    if (l.name === undefined) throw badRequest('no h5path given: "link.name" is required');
    const name = checkLinkName(l.name);
    plan = { parent: f.resolve(l.id, 'group'), missing: [], name };
  } else if (body.h5path !== undefined) {
    if (typeof body.h5path !== 'string' || body.h5path.replace(/\/+/g, '') === '') throw badRequest('"h5path" must name an object');
    if (body.h5path.includes('\u0000')) throw badRequest('"h5path" must not contain NUL characters');
    const start = body.parent_id !== undefined ? f.resolve(String(body.parent_id), 'group') : f.rootAddr;
    const absolute = body.h5path.startsWith('/');
    const parts = body.h5path.split('/').filter((p) => p !== '' && p !== '.');
    const name = checkLinkName(parts.pop()!);
    let cur = absolute ? f.rootAddr : start;
    const missing: string[] = [];
    for (const part of parts) {
      if (missing.length) {
        missing.push(checkLinkName(part));
        continue;
      }
      let found: { addr: bigint; kind: ObjectKind } | undefined;
      try {
        found = resolvePath(f, part, cur);
      } catch (e) {
        if ((e as { code?: string }).code !== 'NotFound') throw e;
      }
      if (!found) {
        if (!implicit) throw notFound(`Parent group ${part} of ${body.h5path} not found (use implicit=1 to create it)`);
        if (f.isReservedName(cur, part) || (cur === f.rootAddr && part === RESERVED_NAME)) throw badRequest(`${part} is a reserved name`);
        missing.push(checkLinkName(part));
        continue;
      }
      if (found.kind !== 'group') throw badRequest(`${part} in ${body.h5path} is not a group`);
      cur = found.addr;
    }
    plan = { parent: cur, missing, name };
  }
  if (plan && plan.missing.length === 0) h5.withObject(f.h, plan.parent, (pg) => checkFreeName(f, pg, plan!.parent, plan!.name));
  return plan;
}

/**
 * Link a new (anonymous) object where `plan` says, creating the missing groups first. Objects
 * are created anonymous and linked last, so a create that fails leaves no link behind.
 * @returns the parent group's address
 */
export function linkNewObject(f: DomainFile, oid: Hid, plan: PlacePlan): bigint {
  let cur = plan.parent;
  for (const part of plan.missing) {
    cur = h5.withObject(f.h, cur, (pg) => {
      const g = h5.createGroup(pg, part);
      try {
        const addr = h5.objectAddr(g);
        f.noteObject(addr, 'group');
        return addr;
      } finally {
        h5.closeObject(g);
      }
    });
  }
  h5.withObject(f.h, cur, (pg) => h5.linkObject(oid, pg, plan.name));
  f.invalidateCaches();
  return cur;
}

/**
 * Refuse to create `name` in group `parent` when a link of that name exists (409), or when it is
 * the reserved name in the root group (400).
 */
export function checkFreeName(f: DomainFile, gid: Hid, parent: bigint, name: string): void {
  if (parent === f.rootAddr && name === '__h5store__') throw badRequest(`${name} is a reserved name`);
  if (h5.linkExists(gid, name)) throw conflict(`Link ${JSON.stringify(name)} already exists`);
}

/** 403 for deleting the root group. */
export function refuseRoot(f: DomainFile, addr: bigint): void {
  if (addr === f.rootAddr) throw forbidden('The root group cannot be deleted');
}
