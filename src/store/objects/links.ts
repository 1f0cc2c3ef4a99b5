/**
 * Links as the REST API shows them, and their listings (service spec 2.2, 4.2; wire-reference
 * 2.2). Link writes are in linkWrites.ts, path lookup in h5paths.ts.
 *
 * Link records come from libhdf5 in ascending name order (UTF-8 byte order = code-point order)
 * or creation order; the reserved group is hidden. External links are never followed by
 * libhdf5: `h5domain` is the target file name exactly as stored in the file (as HSDS and h5py
 * show it); it is resolved to a domain only when a path lookup follows the link
 * (`externalTarget`, store/lookups.ts).
 */
import path from 'node:path';
import { badRequest, gone, notFound } from '../../errors.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { LinkRecord } from '../../hdf5/objects.js';
import type { DomainFile, LinkList, Times } from './domainFile.js';
import { COLLECTION, flat } from './ids.js';
import { checkAnswerSize } from '../access/limits.js';
import { pageLimit, startAfterExact, takePage } from './paging.js';

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

/** The link `name` of the open group `gid` (the reserved group hidden). @throws Gone when deleted in this process, NotFound */
export function findLink(f: DomainFile, gid: Hid, gaddr: bigint, name: string, groupId: string): LinkRecord {
  const rec = f.isReservedName(gaddr, name) ? undefined : h5.getLink(gid, name);
  if (!rec) {
    if (f.isDeleted(`${groupId}/links/${name}`)) throw gone(`Link ${JSON.stringify(name)} has been deleted`);
    throw notFound(`Link ${JSON.stringify(name)} not found`);
  }
  return rec;
}
