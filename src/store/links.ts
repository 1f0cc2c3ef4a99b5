/**
 * Links and path lookup (service spec 2.2, 4.2, 4.3; wire-reference 2.2).
 *
 * Link records come from libhdf5 in ascending name order (UTF-8 byte order = code-point order)
 * or creation order; the reserved group is hidden. External links are never followed by
 * libhdf5: `h5domain` is the target file name exactly as stored in the file (as HSDS and h5py
 * show it); it is resolved to a domain only when a path lookup follows the link
 * (`externalTarget`, store.ts).
 */
import path from 'node:path';
import { badRequest, conflict, forbidden, gone, notFound } from '../errors.js';
import type { Hid } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import type { LinkRecord, ObjectKind } from '../hdf5/objects.js';
import type { DomainFile, LinkList, Times } from './domainFile.js';
import { RESERVED as RESERVED_NAME } from './domainFile.js';
import { COLLECTION, flat, parseId } from './ids.js';
import { DEFAULT_LIMITS, checkAnswerSize, checkPathDepth } from './limits.js';
import { pageLimit, startAfterExact, takePage } from './paging.js';
import { givenCreated, inCreatedOrder } from './createdTimes.js';

/** A link as the REST API shows it (without hrefs). */
export interface LinkJson {
  title: string;
  class: string;
  id?: string;
  collection?: string;
  h5path?: string;
  h5domain?: string;
  /** The same as `h5domain` (HSDS 1.0 and h5pyd 1.0 read external links as `file`, issue #25). */
  file?: string;
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

/**
 * The domain an external link's stored file name refers to, seen from the linking `domain`
 * (docs/architecture.md): a relative name is resolved against the linking domain's folder (as
 * libhdf5 resolves it against the parent file's directory); an absolute name is a domain path,
 * and `exists` decides the libhdf5 fallback when there is no such domain: the name's last
 * component in the linking domain's folder.
 */
export function externalTarget(domain: string, file: string, exists: (domain: string) => boolean): string {
  const f = file.replace(/^hdf5:\/\/?/, '/');
  if (!f.startsWith('/')) return path.posix.resolve(path.posix.dirname(domain), f);
  const abs = path.posix.normalize(f);
  if (exists(abs)) return abs;
  const near = path.posix.join(path.posix.dirname(domain), path.posix.basename(abs));
  return exists(near) ? near : abs;
}

/**
 * The name of a link taken from a single-link route's path (`/groups/<id>/links/<name>`): a
 * name that decodes to something containing `/` cannot be a link name (HSDS keeps `%2F`
 * undecoded, so no such link exists): 404. Such names go through the bulk routes.
 * @throws H5StoreError NotFound
 */
export function linkNameFromPath(name: string): string {
  if (name.includes('/')) throw notFound(`Link ${JSON.stringify(name)} not found: a link name cannot contain "/"`);
  return name;
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
      out.h5domain = rec.file ?? '';
      out.file = out.h5domain;
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
 * One link of a listing page as JSON text, for building the response without an object per
 * link: `head` is the link's JSON (`linkJson`, same keys in the same order) without its closing
 * brace, followed by `,"href":"`; `title` the percent-encoded title (pure ASCII, no JSON
 * escaping needed); `target` the path of the target object (`/groups/<id>`) for hard links.
 */
export interface LinkText {
  head: string;
  title: string;
  target: string | undefined;
}

/**
 * A page of a group's links as text pieces (`listLinksPage`), and where they are in the
 * group's list of links: what the HTTP layer keeps per link (the bytes it wrote, http/present.ts
 * `linkListBody`) it keeps by `list` and the link's index in it.
 */
export interface LinkTextPage {
  texts: LinkText[];
  /** The index of each link of `texts` in `list`. */
  at: number[];
  /**
   * The group's list of links in this order: the same object for every page of it until the
   * file's next event (it lives in the view, fileState.ts), a new one after.
   */
  list: object;
  /** Links in `list`. */
  size: number;
  /** The marker of the following page when the page is full and links follow. */
  next?: string;
  /** With `next`: the index in `list` of the link after the page. */
  after?: number;
}

/** Characters `JSON.stringify` writes other than as themselves (quote, backslash, controls, lone surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(s)` of a string, without the call when nothing needs escaping. */
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : '"' + s + '"';
}

/** JSON text of a number as `JSON.stringify` writes it (`String(n)` hits V8's number-string cache). */
function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/**
 * `JSON.stringify(l)` without its closing brace, written key by key: V8's `JSON.stringify`
 * prints each double afresh (measured: ~10x the cost of the rest of the item for a `created`
 * with a fraction), while `String(n)` (the same shortest round-trip text for a finite number)
 * hits V8's number-string cache, and every link of a group has its group's `created`.
 */
function jsonHead(l: LinkJson): string {
  let out = '{';
  for (const k in l) {
    const v = l[k as keyof LinkJson];
    if (v === undefined) continue;
    if (out.length > 1) out += ',';
    out += '"' + k + '":' + (typeof v === 'number' ? jsonNumber(v) : jsonString(v));
  }
  return out;
}

/**
 * `linkText(linkJson(f, gid, rec, times))` for the links of nearly every listing (hard and soft),
 * written straight from the record: the same keys in the same order (title, class, then id and
 * collection of a hard link whose target kind is known, or h5path, then created), without an
 * intermediate object per link.
 */
function recordText(f: DomainFile, gid: Hid, rec: LinkRecord, times: Times): LinkText {
  let head = '{"title":' + jsonString(rec.name) + ',"class":"' + rec.cls + '"';
  let target: string | undefined;
  if (rec.cls === 'H5L_TYPE_HARD') {
    const kind = f.kindOfAddr(gid, rec);
    if (kind) {
      const id = f.idOf(rec.addr!, kind);
      const collection = COLLECTION[kind];
      head += ',"id":"' + id + '","collection":"' + collection + '"';
      target = '/' + collection + '/' + id;
    }
  } else if (rec.cls === 'H5L_TYPE_SOFT') {
    if (rec.path !== undefined) head += ',"h5path":' + jsonString(rec.path);
  } else return linkText(linkJson(f, gid, rec, times));
  head += ',"created":' + jsonNumber(times.created) + ',"href":"';
  return { head: flat(head), title: encodeURIComponent(rec.name), target: target && flat(target) };
}

function linkText(l: LinkJson): LinkText {
  const head = flat(jsonHead(l) + ',"href":"');
  // one object shape for every link
  return { head, title: encodeURIComponent(l.title), target: l.id && l.collection ? `/${l.collection}/${l.id}` : undefined };
}

/**
 * The links of a group, paged, as JSON text pieces (`LinkText`, for GET .../links): ascending
 * name order (or creation order when asked and the group tracks it), starting after `marker`
 * (with or without surrounding double quotes). The kinds of the page's hard-link targets are
 * learnt in one go (`DomainFile.learnKinds`); the pieces are kept per link in the view of the
 * file (fileState.ts, until its next event; only they: fewer long-lived objects per link for
 * the garbage collector).
 * @returns the page's pieces and their places in the group's list (`LinkTextPage`), and `next`:
 *   the marker of the following page when the page is full (`limit` links) and links follow (the
 *   name of its last link), with `after`: the index of the link after the page
 * @throws H5StoreError NotFound when the marker is not a link of the group (wire-reference 0.9).
 */
export function listLinksPage(f: DomainFile, groupId: string, opts: LinkListOptions): LinkTextPage {
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const list = f.links(gid, gaddr, opts.createOrder ? 'crt' : 'name');
    const cache = list.text as (LinkText | undefined)[];
    const page = pageIndexes(list, opts);
    const last = page.length > 0 ? page[page.length - 1]! : -1;
    const next = page.length === pageLimit(opts.limit) && last < list.links.length - 1 ? list.links[last]!.name : undefined;
    const missing = page.filter((i) => cache[i] === undefined);
    if (missing.length) {
      const json = list.json as (LinkJson | undefined)[];
      f.learnKinds(missing.map((i) => list.links[i]!));
      const times = groupTimes(f, gid);
      for (const i of missing) {
        const known = json[i];
        cache[i] = known ? linkText(known) : recordText(f, gid, list.links[i]!, times);
      }
    }
    return { texts: page.map((i) => cache[i]!), at: page, list: cache, size: list.links.length, next, after: next === undefined ? undefined : last + 1 };
  });
}

/**
 * The links of a group, paged as `listLinksPage`, as `LinkJson` items (kept per link in the view
 * of the file until its next event; callers copy before changing them).
 * @throws H5StoreError NotFound when the marker is not a link of the group (wire-reference 0.9).
 */
export function listLinks(f: DomainFile, groupId: string, opts: LinkListOptions): LinkJson[] {
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const list = f.links(gid, gaddr, opts.createOrder ? 'crt' : 'name');
    const cache = list.json as (LinkJson | undefined)[];
    const page = pageIndexes(list, opts);
    const missing = page.filter((i) => cache[i] === undefined);
    if (missing.length) {
      f.learnKinds(missing.map((i) => list.links[i]!));
      const times = groupTimes(f, gid);
      for (const i of missing) cache[i] = linkJson(f, gid, list.links[i]!, times);
    }
    return page.map((i) => cache[i]!);
  });
}

/** Indexes into `list.links` of the page `opts` asks for (Marker, Limit, pattern). */
function pageIndexes(list: LinkList, opts: LinkListOptions): number[] {
  const start = startAfterExact(opts.marker, (name) => list.index.get(name), 'a link of this group');
  const pattern = opts.pattern;
  return takePage(list.links, start, pageLimit(opts.limit), (_l, i) => i, pattern && ((l) => pattern(l.name)));
}

/**
 * `follow_links=1` (wire-reference 2.2): the links of every group reachable from `groupId` by
 * hard links, keyed by group id, each group once (breadth first, each group's links in name
 * order, or creation order with `createOrder` for groups that track it); `limit` caps the total
 * number of links. Items carry no `collection`, `target` or `href`.
 * @throws PayloadTooLarge when the answer would hold more than `maxAnswer` links (issue #24 item 9)
 */
export function listLinksDeep(f: DomainFile, groupId: string, opts: Omit<LinkListOptions, 'marker'> & { maxAnswer?: number }): Record<string, LinkJson[]> {
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
      const recs = f.links(gid, gaddr, opts.createOrder ? 'crt' : 'name').links;
      f.learnKinds(recs);
      for (const rec of recs) {
        if (rec.cls === 'H5L_TYPE_HARD' && f.kindOfAddr(gid, rec) === 'group' && !seen.has(rec.addr!)) {
          seen.add(rec.addr!);
          queue.push(rec.addr!);
        }
        if (total >= limit || (opts.pattern && !opts.pattern(rec.name))) continue;
        checkAnswerSize(total + 1, opts.maxAnswer, 'links');
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

/**
 * Links of a group by title (POST .../links `{"titles"}`, wire-reference 2.2), in the order
 * asked: `{class, created, id | h5path (+ h5domain), title}` (no `collection` or `href`).
 * @throws H5StoreError NotFound (Gone when deleted in this process) for a missing title.
 */
export function linksByTitles(f: DomainFile, groupId: string, titles: string[]): LinkJson[] {
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const times = groupTimes(f, gid);
    return titles.map((t) => {
      // a title with "/" is no link name (libhdf5 would walk it as a path): no such link
      if (t.includes('/')) throw notFound(`Link ${JSON.stringify(t)} not found: a link name cannot contain "/"`);
      const item = linkJson(f, gid, findLink(f, gid, gaddr, checkLinkName(t), groupId), times);
      delete item.collection;
      return item;
    });
  });
}

/**
 * Links of several groups (POST .../links with `grp_ids`, wire-reference 2.2), keyed by group
 * id: the given titles of each group (404 for a missing one), or all its links paged and
 * filtered as `listLinks` (without `collection`).
 */
export function linksOfGroups(f: DomainFile, groups: { id: string; titles?: string[] }[], opts: Omit<LinkListOptions, 'marker'>): Record<string, LinkJson[]> {
  const out: Record<string, LinkJson[]> = {};
  for (const g of groups) {
    out[g.id] = g.titles
      ? linksByTitles(f, g.id, g.titles)
      : listLinks(f, g.id, opts).map((l) => {
          const { collection: _c, ...rest } = l;
          return rest;
        });
  }
  return out;
}

/**
 * One link of a group: `{link, created, lastModified}` (spec 2.2). A link is never modified, only
 * replaced: its `lastModified` is its `created` (HSDS; issue #25).
 */
export function getLink(f: DomainFile, groupId: string, name: string): { link: LinkJson; created: number; lastModified: number } {
  checkLinkName(name);
  return f.withId(groupId, 'group', (gid, gaddr) => {
    const rec = findLink(f, gid, gaddr, name, groupId);
    const times = groupTimes(f, gid);
    return { link: linkJson(f, gid, rec), created: times.created, lastModified: times.created };
  });
}

function findLink(f: DomainFile, gid: Hid, gaddr: bigint, name: string, groupId: string): LinkRecord {
  const rec = f.isReservedName(gaddr, name) ? undefined : h5.getLink(gid, name);
  if (!rec) {
    if (f.isDeleted(`${groupId}/links/${name}`)) throw gone(`Link ${JSON.stringify(name)} has been deleted`);
    throw notFound(`Link ${JSON.stringify(name)} not found`);
  }
  return rec;
}

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
    const start = body.parent_id !== undefined ? f.resolve(String(body.parent_id), 'group') : f.rootAddr;
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
