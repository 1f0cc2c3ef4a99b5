/**
 * Path lookup (service spec 2.2, 4.3; wire-reference 1.3): walking an `h5path` across hard, soft
 * and external links with the depth limit, and placing a new object at a path (`implicit` parents).
 */
import { badRequest, conflict, forbidden, notFound } from '../../errors.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import type { DomainFile } from './domainFile.js';
import { RESERVED as RESERVED_NAME } from './domainFile.js';
import { DEFAULT_LIMITS, checkPathDepth } from '../access/limits.js';
import { checkLinkName } from './links.js';

// ---------------------------------------------------------------------------------------------
// Path lookup

const MAX_SOFT_DEPTH = 16;

/** Which links a path lookup may cross (wire-reference 1.3: `follow_soft_links`, `follow_external_links`). */
export interface PathOptions {
  followSoft?: boolean;
  followExternal?: boolean;
}

/** Where a path lookup ended: an object of this file, or an external link to follow. */
export type PathHit =
  | { addr: bigint; kind: ObjectKind }
  | { external: { file: string; h5path: string; rest: string[]; title: string } };

/**
 * Most components of a path walked or created (`maxPathDepth`, `max_path_depth`; set by the
 * Store from its limits; issue #24 item 9): deeper paths are a 413 before anything is walked.
 */
export const pathLimits = { maxDepth: DEFAULT_LIMITS.maxPathDepth };

/**
 * Walk an HDF5 path: absolute from the root, or relative to `startAddr`. Soft links are crossed
 * only with `followSoft` (up to 16 deep; a dangling one ends in 404); an external link ends the
 * walk with what to look up in the other file (its stored file name and object path, and the
 * components left), only with `followExternal`. libhdf5 itself never follows external links.
 * @throws H5StoreError BadRequest for a soft or external link crossed without its flag, or too
 *   deep soft links; NotFound for a missing component, a path below a dataset or datatype, or
 *   a user-defined link.
 */
export function walkPath(f: DomainFile, h5path: string, startAddr: bigint | undefined, opts: PathOptions, depth = 0): PathHit {
  if (depth > MAX_SOFT_DEPTH) throw badRequest('Too many levels of soft links');
  if (h5path.includes('\u0000')) throw badRequest('"h5path" must not contain NUL characters');
  checkPathDepth(h5path, pathLimits.maxDepth);
  const absolute = h5path.startsWith('/');
  let cur = absolute || startAddr === undefined ? f.rootAddr : startAddr;
  let kind: ObjectKind = 'group';
  if (startAddr !== undefined && !absolute) {
    kind = h5.withObject(f.h, cur, (o) => h5.objectInfo(o).kind) ?? 'group';
  }
  const parts = h5path.split('/').filter((p) => p !== '' && p !== '.');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (kind !== 'group') throw notFound(`Path ${h5path} not found: ${part} is below a ${kind}`);
    const gaddr = cur;
    const next = h5.withObject(f.h, gaddr, (gid): PathHit | undefined => {
      if (f.isReservedName(gaddr, part)) return undefined;
      const rec = h5.getLink(gid, part);
      if (!rec) return undefined;
      if (rec.cls === 'H5L_TYPE_HARD') {
        const k = f.kindOfAddr(gid, rec);
        return k ? { addr: rec.addr!, kind: k } : undefined;
      }
      if (rec.cls === 'H5L_TYPE_SOFT') {
        if (!opts.followSoft) throw badRequest(`Query found unexpected soft link ${JSON.stringify(part)} in ${h5path} (use follow_soft_links=1)`);
        try {
          return walkPath(f, rec.path!, gaddr, opts, depth + 1);
        } catch (e) {
          if ((e as { code?: string }).code === 'NotFound') return undefined;
          throw e;
        }
      }
      if (rec.cls === 'H5L_TYPE_EXTERNAL') {
        if (!opts.followExternal) {
          throw badRequest(`Query found unexpected external link ${JSON.stringify(part)} in ${h5path} to ${rec.file}:${rec.path} (use follow_external_links=1)`);
        }
        return { external: { file: rec.file ?? '', h5path: rec.path ?? '/', rest: [], title: part } };
      }
      return undefined;
    });
    if (!next) throw notFound(`Path ${h5path} not found`);
    if ('external' in next) return { external: { ...next.external, rest: [...next.external.rest, ...parts.slice(i + 1)] } };
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
 * Resolve a path to an object of this file for the service's own needs (object ACLs of path
 * lookups, parents of new objects): soft links are followed; crossing an external link is a 400.
 */
export function resolvePath(f: DomainFile, h5path: string, startAddr?: bigint): { addr: bigint; kind: ObjectKind } {
  const hit = walkPath(f, h5path, startAddr, { followSoft: true });
  if ('external' in hit) throw badRequest(`Path ${h5path} crosses an external link`);
  return hit;
}

/**
 * Where a create request puts the new object (POST /groups, /datasets, /datatypes; parsed by
 * http/bodies.ts): linked as `link.name` in the group `link.id`, at `h5path` (absolute, or
 * relative to the group `parent_id`; with `implicit=1` the missing groups on the way are made),
 * or nowhere (anonymous, held in the reserved group). `link` and `h5path` exclude each other.
 */
export type NewObjectPlace =
  | { link: { id: string; name: string }; h5path?: undefined; parent_id?: string }
  | { link?: undefined; h5path?: string; parent_id?: string };

/**
 * Where a new object goes (`NewObjectPlace`), or undefined for an anonymous object. Nothing is written: missing intermediate groups (allowed with `implicit`,
 * wire-reference 2.1) are listed, and the name is checked to be free, so that a create request
 * either fails before changing the file or succeeds whole (`linkNewObject`).
 * @throws BadRequest (a bad link name or path, reserved name, a path component that is not a
 *   group, a path through an external link), NotFound (parent missing without implicit),
 *   Conflict (name taken)
 */
export function planObjectPlace(f: DomainFile, body: NewObjectPlace, implicit: boolean): PlacePlan | undefined {
  let plan: PlacePlan | undefined;
  if (body.link) {
    const name = checkLinkName(body.link.name);
    plan = { parent: f.resolve(body.link.id, 'group'), missing: [], name };
  } else if (body.h5path !== undefined) {
    const start = body.parent_id !== undefined ? f.resolve(body.parent_id, 'group') : f.rootAddr;
    plan = placeOfPath(f, body.h5path, start, implicit);
  }
  if (plan && plan.missing.length === 0) h5.withObject(f.h, plan.parent, (pg) => checkFreeName(f, pg, plan!.parent, plan!.name));
  return plan;
}

/**
 * Where a new object at `h5path` goes (absolute, or relative to the group `startAddr`): the
 * group its parent path resolves to, soft links followed; with `implicit`, the deepest existing
 * group on the way and the groups missing below it. The permission to create is checked on
 * `parent` (issue #24 item 2), so this is the one resolution both the check and the create use.
 * @throws BadRequest (not a string, empty, NUL, reserved name, a component that is not a group,
 *   a path through an external link), NotFound (a missing parent without `implicit`)
 */
export function placeOfPath(f: DomainFile, h5path: unknown, startAddr: bigint | undefined, implicit: boolean): PlacePlan {
  if (typeof h5path !== 'string' || h5path.replace(/\/+/g, '') === '') throw badRequest('"h5path" must name an object');
  if (h5path.includes('\u0000')) throw badRequest('"h5path" must not contain NUL characters');
  checkPathDepth(h5path, pathLimits.maxDepth);
  const absolute = h5path.startsWith('/');
  const parts = h5path.split('/').filter((p) => p !== '' && p !== '.');
  const name = checkLinkName(parts.pop()!);
  let cur = absolute || startAddr === undefined ? f.rootAddr : startAddr;
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
      if (!implicit) throw notFound(`Parent group ${part} of ${h5path} not found (use implicit=1 to create it)`);
      if (f.isReservedName(cur, part) || (cur === f.rootAddr && part === RESERVED_NAME)) throw badRequest(`${part} is a reserved name`);
      missing.push(checkLinkName(part));
      continue;
    }
    if (found.kind !== 'group') throw badRequest(`${part} in ${h5path} is not a group`);
    cur = found.addr;
  }
  return { parent: cur, missing, name };
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
