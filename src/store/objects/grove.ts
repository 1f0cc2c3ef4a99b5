/**
 * What h5grove's API (issue #28 item 7; h5web's `H5GroveProvider`) says about a file, read from
 * a domain file under the store's read lock: the entity at a path with h5py's link semantics,
 * its metadata (h5grove's `/meta/`), attribute values (`/attr/`) and the paths below a group
 * (`/paths/`). Pure reads; the store (lookups.ts `grove*`) follows external links into other
 * domains, which needs other files and an access check, so the functions here stop at an
 * external link and say where it leads.
 *
 * Shapes follow h5grove's `content.py`/`utils.py` (read in its public repository): metadata keys
 * in sorted order, `name` the last segment of the path asked, attributes sorted by name as
 * `{name, shape, type}`, a group's `children` in h5py's `keys()` order (creation order when the
 * group tracks it) with each child resolved when it can be (h5grove's default `only_valid`),
 * child groups without their own children, `chunks` / `filters` / `shape` `null` when absent,
 * types as h5py describes them (hdf5/types.ts `describeH5pyType`).
 */
import type { TypeJson } from '../../codec/types.js';
import { H5StoreError, badRequest, notFound } from '../../errors.js';
import * as io from '../../hdf5/io.js';
import type { SpaceInfo } from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { LinkRecord } from '../../hdf5/objects.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { type H5pyType, describeH5pyType } from '../../hdf5/types.js';
import type { DomainFile } from './domainFile.js';
import * as attrs from './attributes.js';
import * as links from './links.js';
import * as h5paths from './h5paths.js';

/** h5grove's `resolve_links`: which soft and external links a metadata request resolves. */
export type LinkResolution = 'none' | 'only_valid' | 'all';

/** An external link met on the way: the file it names (as stored) and the path in it. */
export interface ExternalHop {
  file: string;
  path: string;
}

/** One attribute's metadata. */
export interface AttributeMeta {
  name: string;
  shape: number[] | null;
  type: H5pyType;
}

/** An entity's metadata as h5grove's `/meta/` sends it (JSON object, keys in h5grove's order). */
export type EntityMeta = Record<string, unknown>;

/**
 * Where a path leads in one file:
 * - `object`: an object of this file (after the soft links resolution allowed);
 * - `link`: a link left unresolved (soft or external; `broken` when resolving was tried and
 *   failed, or, for external links, not tried: the store tries in the other file);
 * - `other`: a user-defined link (h5py knows no entity for it);
 * - `hop`: an external link before the last component: the rest is looked up in that file.
 */
export type GroveHit =
  | { kind: 'object'; addr: bigint; objKind: ObjectKind }
  | { kind: 'link'; cls: 'soft'; target: string; broken: boolean }
  | { kind: 'link'; cls: 'external'; file: string; target: string }
  | { kind: 'other' }
  | { kind: 'hop'; hop: ExternalHop };

/** The last segment of a path (`''` for `/`), as h5grove names entities. */
export function entityName(path: string): string {
  return path.split('/').pop() ?? '';
}

/** `path` made absolute with single slashes (h5py resolves a relative path from the root). */
export function normalizePath(path: string): string {
  if (path.includes('\u0000')) throw badRequest('"path" must not contain NUL characters');
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  return '/' + parts.join('/');
}

/** 404 in the words h5grove uses (h5web shows "No entity found at <path>" for them). */
export function notAPath(path: string, domain: string): H5StoreError {
  return notFound(`${path} is not a valid path in ${entityName(domain)}`);
}

/**
 * The entity at `path` of a file, as h5grove's `get_entity_from_file` finds it: every component
 * but the last is crossed whatever link it is (soft links in this file, external links by a
 * `hop`); the last is the link itself when `resolve` is `none`, else what it leads to, when it
 * leads somewhere (`only_valid`: else the link; `all`: else 404 "Cannot resolve").
 * @throws H5StoreError NotFound for a missing path (h5grove's words), or with `all` a broken link
 */
export function locate(f: DomainFile, domain: string, path: string, resolve: LinkResolution): GroveHit {
  const p = normalizePath(path);
  if (p === '/') return { kind: 'object', addr: f.rootAddr, objKind: 'group' };
  const cut = p.lastIndexOf('/');
  const parentPath = p.slice(0, cut) || '/';
  const last = p.slice(cut + 1);
  let parent: bigint;
  try {
    const hit = h5paths.walkPath(f, parentPath, undefined, { followSoft: true, followExternal: true });
    if ('external' in hit) {
      const rest = [...hit.external.rest, last].join('/');
      return { kind: 'hop', hop: { file: hit.external.file, path: `${hit.external.h5path.replace(/\/+$/, '')}/${rest}` } };
    }
    if (hit.kind !== 'group') throw notAPath(path, domain);
    parent = hit.addr;
  } catch (e) {
    if (e instanceof H5StoreError && e.code === 'NotFound') throw notAPath(path, domain);
    throw e;
  }
  return h5.withObject(f.h, parent, (gid) => linkTarget(f, domain, gid, parent, last, resolve, path));
}

/** What the link `name` of the open group `gid` leads to (see `locate`). */
function linkTarget(f: DomainFile, domain: string, gid: Hid, gaddr: bigint, name: string, resolve: LinkResolution, asked: string): GroveHit {
  const rec = f.isReservedName(gaddr, name) ? undefined : h5.getLink(gid, name);
  if (!rec) throw notAPath(asked, domain);
  return recordTarget(f, domain, gid, gaddr, rec, resolve, asked);
}

/** What a link record of the open group `gid` leads to (see `locate`). */
function recordTarget(f: DomainFile, domain: string, gid: Hid, gaddr: bigint, rec: LinkRecord, resolve: LinkResolution, asked: string): GroveHit {
  const name = rec.name;
  if (rec.cls === 'H5L_TYPE_HARD') {
    const kind = f.kindOfAddr(gid, rec);
    if (!kind) return { kind: 'other' };
    return { kind: 'object', addr: rec.addr!, objKind: kind };
  }
  if (rec.cls === 'H5L_TYPE_SOFT') {
    const target = rec.path ?? '';
    if (resolve === 'none') return { kind: 'link', cls: 'soft', target, broken: false };
    try {
      const hit = h5paths.walkPath(f, target, gaddr, { followSoft: true, followExternal: true });
      if ('external' in hit) {
        const rest = hit.external.rest.join('/');
        return { kind: 'hop', hop: { file: hit.external.file, path: rest ? `${hit.external.h5path.replace(/\/+$/, '')}/${rest}` : hit.external.h5path } };
      }
      return { kind: 'object', addr: hit.addr, objKind: hit.kind };
    } catch (e) {
      if (!(e instanceof H5StoreError) || !['NotFound', 'BadRequest'].includes(e.code)) throw e;
      if (resolve === 'all') throw notFound(`Cannot resolve soft link ${JSON.stringify(name)} (to ${JSON.stringify(target)}) at ${asked} of ${entityName(domain)}`);
      return { kind: 'link', cls: 'soft', target, broken: true };
    }
  }
  if (rec.cls === 'H5L_TYPE_EXTERNAL') return { kind: 'link', cls: 'external', file: rec.file ?? '', target: rec.path ?? '/' };
  return { kind: 'other' };
}

/** Metadata of the attributes of an open object, sorted by name. */
function attributesMeta(oid: Hid): AttributeMeta[] {
  return io.listAttributeNames(oid, 'name').map((name) => {
    const aid = io.openAttribute(oid, name);
    try {
      const { shape, type } = io.attributeH5pyMeta(aid);
      return { name, shape, type };
    } finally {
      io.closeAttribute(aid);
    }
  });
}

/** What an object's metadata is made of, whatever name it is reached by. */
interface ObjectParts {
  attributes: AttributeMeta[];
  dataset?: { chunks: number[] | null; filters: { id: number; name: string }[] | null; shape: number[] | null; type: H5pyType };
  type?: H5pyType;
}

function objectParts(f: DomainFile, addr: bigint, kind: ObjectKind): ObjectParts {
  return h5.withObject(f.h, addr, (oid) => {
    const parts: ObjectParts = { attributes: attributesMeta(oid) };
    if (kind === 'dataset') {
      const { type, shape } = io.datasetH5pyMeta(oid);
      parts.dataset = { ...io.datasetChunking(oid), shape, type };
    } else if (kind === 'datatype') {
      parts.type = describeH5pyType(oid); // an open committed datatype is a datatype id
    }
    return parts;
  });
}

/** h5grove's metadata of a soft or external link left unresolved. */
export function linkMeta(name: string, link: { cls: 'soft'; target: string } | { cls: 'external'; file: string; target: string }): EntityMeta {
  if (link.cls === 'soft') return { kind: 'soft_link', name, target_path: link.target };
  return { kind: 'external_link', name, target_file: link.file, target_path: link.target };
}

/**
 * The metadata of an object of this file named `name`; a group's with its children when
 * `children` is given (the caller's list, see `childrenOf`), else without (h5grove's depth 0).
 */
export function objectMeta(f: DomainFile, addr: bigint, kind: ObjectKind, name: string, children?: EntityMeta[]): EntityMeta {
  const parts = objectParts(f, addr, kind);
  if (kind === 'dataset') {
    const d = parts.dataset!;
    return { attributes: parts.attributes, chunks: d.chunks, filters: d.filters, kind, name, shape: d.shape, type: d.type };
  }
  if (kind === 'datatype') return { attributes: parts.attributes, kind, name, type: parts.type };
  return children ? { attributes: parts.attributes, children, kind, name } : { attributes: parts.attributes, kind, name };
}

/** The links of the group at `addr` in h5py's `keys()` order (creation order when the group tracks it). */
export function groupLinks(f: DomainFile, addr: bigint): readonly LinkRecord[] {
  return h5.withObject(f.h, addr, (gid) => {
    const list = f.links(gid, addr, 'crt').links;
    f.learnKinds(list);
    return list;
  });
}

/** One child of a group as h5grove lists it, with what the store still has to do about it. */
export interface ChildEntry {
  meta: EntityMeta;
  /** The object's id when the child is an object of this file (access checks of object ACLs). */
  id?: string;
  /** Set for an external link (or a soft link through one): the store resolves it in its file. */
  pending?: ExternalHop;
}

/**
 * The children `links` (a slice of `groupLinks`) of the group at `addr` as h5grove lists them,
 * each resolved when it can be (h5grove's default `only_valid`): hard links and soft links that
 * resolve in this file give the object's metadata (a child group without its own children),
 * dangling soft links their link metadata, user-defined links `{name, kind: "other"}`; external
 * links give their link metadata and a `pending` hop for the store to resolve in their file.
 */
export function childrenOf(f: DomainFile, addr: bigint, links: readonly LinkRecord[]): ChildEntry[] {
  return h5.withObject(f.h, addr, (gid) =>
    links.map((rec): ChildEntry => {
      const hit = recordTarget(f, '', gid, addr, rec, 'only_valid', rec.name);
      if (hit.kind === 'object') return { meta: objectMeta(f, hit.addr, hit.objKind, rec.name), id: f.idOf(hit.addr, hit.objKind) };
      if (hit.kind === 'link') return { meta: linkMeta(rec.name, hit), pending: hit.cls === 'external' ? { file: hit.file, path: hit.target } : undefined };
      // a soft link through an external link: resolved in the other file too
      if (hit.kind === 'hop') return { meta: { kind: 'soft_link', name: rec.name, target_path: rec.path ?? '' }, pending: hit.hop };
      return { meta: { name: rec.name, kind: 'other' } };
    }),
  );
}

/**
 * The paths below the group at `addr` (named `base`), as h5py's `links.visit` (H5Lvisit) gives
 * them and h5grove's `/paths/` lists them: `base` first, then every link depth first in name
 * order, each group entered once (a group reached again by another hard link is listed, not
 * entered; soft and external links are listed, never followed). `groups` gets the id of every
 * group entered, with the paths it holds (access checks of objects with ACLs of their own).
 * @throws H5StoreError NotFound with `all` for a dangling soft link
 */
export function pathsBelow(f: DomainFile, domain: string, addr: bigint, base: string, resolve: LinkResolution): { paths: string[]; groups: { id: string; from: number; to: number }[]; externals: { path: string; file: string; target: string }[] } {
  const paths = [base];
  const groups: { id: string; from: number; to: number }[] = [];
  const externals: { path: string; file: string; target: string }[] = [];
  const entered = new Set<bigint>([addr]);
  const prefix = (p: string) => (p === '/' ? '/' : p + '/');
  const visit = (gaddr: bigint, at: string) => {
    const from = paths.length;
    h5.withObject(f.h, gaddr, (gid) => {
      const list = f.links(gid, gaddr, 'name').links;
      f.learnKinds(list);
      for (const rec of list) {
        const p = prefix(at) + rec.name;
        paths.push(p);
        if (rec.cls === 'H5L_TYPE_HARD') {
          if (f.kindOfAddr(gid, rec) === 'group' && !entered.has(rec.addr!)) {
            entered.add(rec.addr!);
            visit(rec.addr!, p);
          }
        } else if (resolve === 'all' && rec.cls === 'H5L_TYPE_SOFT') {
          linkTarget(f, domain, gid, gaddr, rec.name, 'all', p); // 404 when dangling
        } else if (resolve === 'all' && rec.cls === 'H5L_TYPE_EXTERNAL') {
          externals.push({ path: p, file: rec.file ?? '', target: rec.path ?? '/' });
        }
      }
    });
    groups.push({ id: f.idOf(gaddr, 'group'), from, to: paths.length });
  };
  visit(addr, base);
  return { paths, groups, externals };
}

/**
 * The attribute values of the object at `addr` as h5grove's `/attr/` sends them: `{name: value}`
 * in name order, for the names `keys` (all when undefined); values as the REST API reads them
 * (attributes.ts), strings that are not UTF-8 decoded with replacement characters (h5grove
 * decodes bytes as UTF-8).
 * @throws H5StoreError NotFound for a name the object has no attribute of
 */
export function attributeValues(f: DomainFile, addr: bigint, keys: string[] | undefined, path: string): Record<string, unknown> {
  return h5.withObject(f.h, addr, (oid) => {
    let names: string[] | undefined;
    if (keys !== undefined) {
      const have = new Set(io.listAttributeNames(oid, 'name'));
      for (const k of keys) if (!have.has(k)) throw notFound(`${path} has no attribute ${JSON.stringify(k)}`);
      names = [...new Set(keys)];
    }
    const out: Record<string, unknown> = {};
    for (const a of attrs.attributesOf(f, oid, addr, { includeData: true, names })) {
      out[a.name] = a.encoding === 'base64' && typeof a.value === 'string' ? Buffer.from(a.value, 'base64').toString('utf8') : a.value;
    }
    return out;
  });
}

/** A dataset's type (the REST API's type JSON, for reading values) and dataspace. */
export function datasetFacts(f: DomainFile, addr: bigint): { type: TypeJson; space: SpaceInfo } {
  return h5.withObject(f.h, addr, (did) => io.datasetTypeAndSpace(did));
}
