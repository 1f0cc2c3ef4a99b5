/**
 * Objects found by path across external links (a part of the `Store` facade, store.ts): the
 * REST API's `h5path` lookups (`lookupPath`) and h5grove's (`groveObject`, `groveMeta`,
 * `grovePaths`, objects/grove.ts). Every domain an external link leads to is checked as a
 * request for it would be, and the object found by its own ACL.
 */
import { H5StoreError, badRequest, notFound } from '../errors.js';
import * as h5 from '../hdf5/objects.js';
import type { ObjectKind } from '../hdf5/objects.js';
import { type Access, allowAll } from './access/access.js';
import type { AclViews } from './aclViews.js';
import type { DomainFiles } from './domainFiles.js';
import type { DomainFile } from './objects/domainFile.js';
import { type ObjectJsonOptions, objectJsonOf } from './objects/domainObjects.js';
import * as grove from './objects/grove.js';
import * as h5paths from './objects/h5paths.js';
import * as links from './objects/links.js';
import { normalizeDomain } from './objects/paths.js';

/** Children of a group described per turn of the event loop (h5grove's `/meta/` of large groups). */
const GROVE_SLICE = 500;

export class Lookups {
  constructor(
    private readonly core: DomainFiles,
    private readonly acls: AclViews,
  ) {}

  /**
   * GET /?h5path=, GET /{groups,datasets,datatypes}/?h5path=, POST / (wire-reference 1.3, 1.4):
   * the object at a path, absolute or relative to the group `parentId`. Soft links are crossed
   * only with `followSoft`, external links only with `followExternal`: the lookup then goes on
   * in the domain the link names (`links.externalTarget`), after `access` allowed reading that
   * domain (an external link never opens a domain the requester could not read directly). The
   * object found must be readable by its own ACL (issue #24 item 4: a path never shows what the
   * object's id would not). `object`: what the object's JSON holds (`include_links` for groups,
   * `include_attrs` with `IncludeData` and `max_data_size`, `CreateOrder`: h5web's batch
   * requests, issue #25).
   * @returns the object's kind, its JSON, and the domain it was found in.
   * @throws H5StoreError BadRequest (a link crossed without its flag, a malformed id), NotFound
   *   (path, domain), Forbidden/Unauthorized (from `access`).
   */
  async lookupPath(
    domain: string,
    h5path: string,
    parentId?: string,
    opts: h5paths.PathOptions & { access?: Access; object?: ObjectJsonOptions } = {},
  ): Promise<{ kind: ObjectKind; json: Record<string, unknown>; domain: string }> {
    const access = opts.access ?? allowAll;
    let dom = domain;
    let p = h5path;
    let parent = parentId;
    for (let hops = 0; ; hops++) {
      const r = await this.core.read(dom, (f) => {
        const start = parent ? f.resolve(parent, 'group') : undefined;
        const hit = h5paths.walkPath(f, p, start, opts);
        if ('external' in hit) return hit;
        return h5.withObject(f.h, hit.addr, (oid) => ({ kind: hit.kind, addr: hit.addr, json: objectJsonOf(f, hit.kind, oid, hit.addr, { ...opts.object, includeLinks: hit.kind === 'group' && !!opts.object?.includeLinks }) }));
      });
      if (!('external' in r)) {
        if (!access.all) access.check(await this.acls.aclView(dom, { addr: r.addr }), 'read', { domain: dom, what: `${h5path}${dom === domain ? '' : ` (${p} of ${dom})`} in ${domain}` });
        return { kind: r.kind, json: r.json, domain: dom };
      }
      if (hops >= 8) throw badRequest(`Path ${h5path} crosses too many external links`);
      const target = links.externalTarget(dom, r.external.file, (d) => this.core.isDomainFile(d));
      let next: string;
      try {
        next = normalizeDomain(target);
      } catch {
        throw notFound(`External link ${JSON.stringify(r.external.title)} names ${JSON.stringify(r.external.file)}, which is not a domain here`);
      }
      if (!access.all) access.check(await this.acls.aclView(next), 'read', { domain: next, what: `${next} (reached through the external link ${JSON.stringify(r.external.title)})` });
      dom = next;
      p = [r.external.h5path.replace(/\/+$/, ''), ...r.external.rest].join('/') || '/';
      if (!p.startsWith('/')) p = '/' + p;
      parent = undefined;
    }
  }

  /**
   * The domain an external link of `from` names (resolved beside it, `links.externalTarget`),
   * once `access` allowed reading it.
   * @throws H5StoreError NotFound (not a domain here), Forbidden/Unauthorized (from `access`)
   */
  private async externalDomain(from: string, file: string, access: Access): Promise<string> {
    const target = links.externalTarget(from, file, (d) => this.core.isDomainFile(d));
    let next: string;
    try {
      next = normalizeDomain(target);
    } catch {
      throw notFound(`The external link to ${JSON.stringify(file)} names no domain here`);
    }
    if (!this.core.isDomainFile(next) && !this.core.mountOf(next)) throw notFound(`The external link to ${JSON.stringify(file)} names no domain here`);
    if (!access.all) access.check(await this.acls.aclView(next), 'read', { domain: next, what: `${next} (reached through an external link of ${from})` });
    return next;
  }

  /**
   * Check that `access` may read the object at `addr` of an open domain file (its own ACL, then
   * the domain's; issue #24 item 4): h5grove's lookups cross soft and external links the route's
   * guard did not, so the object they end at is checked where it is found. The caller holds the
   * file's lock; no libhdf5 call.
   * @throws H5StoreError Forbidden/Unauthorized (from `access`)
   */
  private checkFound(f: DomainFile, addr: bigint, access: Access, path: string): void {
    if (!access.all) access.check(this.acls.viewInFile(f, addr), 'read', { domain: f.domain, what: `${path} in ${f.domain}` });
  }

  /**
   * The object at `path` of a domain with every link on the way followed, external links into
   * other domains (`access`-checked, at most 8), and `fn` run on it under the read lock of the
   * domain it is in (h5grove's `/attr/`, `/data/`, `/stats/`).
   * @throws H5StoreError NotFound (path, domain, a dangling link: "Cannot resolve"), BadRequest
   *   (a user-defined link), Forbidden/Unauthorized (from `access`)
   */
  async groveObject<T>(domain: string, path: string, access: Access, fn: (f: DomainFile, domain: string, addr: bigint, kind: ObjectKind) => T): Promise<T> {
    let dom = domain;
    let p = path;
    for (let hops = 0; ; hops++) {
      const r = await this.core.read(dom, (f): { hop: grove.ExternalHop } | { done: T } => {
        const hit = grove.locate(f, dom, p, 'all');
        if (hit.kind === 'hop') return { hop: hit.hop };
        if (hit.kind === 'link') {
          if (hit.cls === 'external') return { hop: { file: hit.file, path: hit.target } };
          throw notFound(`Cannot resolve soft link at ${path}`);
        }
        if (hit.kind === 'other') throw badRequest(`${path} is a user-defined link: h5store cannot resolve it`);
        this.checkFound(f, hit.addr, access, path);
        return { done: fn(f, dom, hit.addr, hit.objKind) };
      });
      if ('done' in r) return r.done;
      if (hops >= 8) throw badRequest(`Path ${path} crosses too many external links`);
      dom = await this.externalDomain(dom, r.hop.file, access);
      p = r.hop.path;
    }
  }

  /**
   * h5grove's `/meta/` of the entity at `path` (grove.ts): resolved as `resolve` says, across
   * external links (`access`-checked); a group with its children, each resolved when it can be
   * (external ones in their domain; an access refused or a target missing leaves the link).
   * `readable` (when given) decides whether a child object of the same domain may be described:
   * one that may not is listed as `{name, kind: "other"}`.
   * @throws H5StoreError NotFound (path or domain; with `all`, a link that does not resolve),
   *   Forbidden/Unauthorized (an intermediate external link the user may not follow)
   */
  async groveMeta(
    domain: string,
    path: string,
    resolve: grove.LinkResolution,
    access: Access,
    readable?: (domain: string, id: string) => Promise<boolean>,
  ): Promise<grove.EntityMeta> {
    const name = grove.entityName(grove.normalizePath(path));
    let dom = domain;
    let p = path;
    /** The metadata of the last link when it is an external link being followed (only_valid falls back to it). */
    let fallback: grove.EntityMeta | undefined;
    for (let hops = 0; ; hops++) {
      type Step = { hop: grove.ExternalHop; last: boolean; link?: grove.EntityMeta } | { meta: grove.EntityMeta; children?: grove.ChildEntry[] };
      let r: Step;
      try {
        r = await this.core.readInSteps(dom, async (f, pause): Promise<Step> => {
          const hit = grove.locate(f, dom, p, fallback ? 'all' : resolve);
          if (hit.kind === 'hop') return { hop: hit.hop, last: false };
          if (hit.kind === 'link' && hit.cls === 'external' && resolve !== 'none') return { hop: { file: hit.file, path: hit.target }, last: true, link: grove.linkMeta(name, hit) };
          if (hit.kind === 'link') return { meta: grove.linkMeta(name, hit) };
          if (hit.kind === 'other') return { meta: { name, kind: 'other' } };
          this.checkFound(f, hit.addr, access, path);
          if (hit.objKind !== 'group') return { meta: grove.objectMeta(f, hit.addr, hit.objKind, name) };
          // a group's children, GROVE_SLICE at a time with the event loop running in between
          const list = grove.groupLinks(f, hit.addr);
          const children: grove.ChildEntry[] = [];
          for (let i = 0; i < list.length; i += GROVE_SLICE) {
            if (i > 0) await pause();
            children.push(...grove.childrenOf(f, hit.addr, list.slice(i, i + GROVE_SLICE)));
          }
          return { meta: grove.objectMeta(f, hit.addr, 'group', name, []), children };
        });
        if ('hop' in r) {
          if (hops >= 8) throw badRequest(`Path ${path} crosses too many external links`);
          if (r.last) fallback ??= r.link;
          const next = await this.externalDomain(dom, r.hop.file, access);
          dom = next;
          p = r.hop.path;
          continue;
        }
      } catch (e) {
        if (!fallback || !(e instanceof H5StoreError) || e.status >= 500) throw e;
        if (resolve === 'all') throw notFound(`Cannot resolve external link at ${path}: ${e.message}`);
        return fallback;
      }
      if (!r.children) return r.meta;
      const children: grove.EntityMeta[] = [];
      for (const c of r.children) {
        let meta = c.meta;
        if (c.pending) {
          try {
            meta = await this.groveChild(dom, c.pending.file, c.pending.path, meta.name as string, access);
          } catch (e) {
            if (!(e instanceof H5StoreError) || e.status >= 500) throw e;
          }
        } else if (readable && c.id !== undefined && !(await readable(dom, c.id))) {
          meta = { name: meta.name, kind: 'other' };
        }
        children.push(meta);
      }
      r.meta.children = children;
      return r.meta;
    }
  }

  /** A child's metadata reached by an external link (h5grove resolves children `only_valid`). */
  private async groveChild(from: string, file: string, target: string, name: string, access: Access): Promise<grove.EntityMeta> {
    let dom = await this.externalDomain(from, file, access);
    let p = target;
    for (let hops = 1; ; hops++) {
      const r = await this.core.read(dom, (f): { hop: grove.ExternalHop } | { meta: grove.EntityMeta } => {
        const hit = grove.locate(f, dom, p, 'all');
        if (hit.kind === 'hop') return { hop: hit.hop };
        if (hit.kind === 'link' && hit.cls === 'external') return { hop: { file: hit.file, path: hit.target } };
        if (hit.kind !== 'object') throw notFound(`Cannot resolve ${target} in ${dom}`);
        this.checkFound(f, hit.addr, access, target);
        return { meta: grove.objectMeta(f, hit.addr, hit.objKind, name) };
      });
      if ('meta' in r) return r.meta;
      if (hops >= 8) throw badRequest(`${target} crosses too many external links`);
      dom = await this.externalDomain(dom, r.hop.file, access);
      p = r.hop.path;
    }
  }

  /**
   * h5grove's `/paths/`: the group at `path` and every path below it (grove.ts `pathsBelow`),
   * the group found across external links. With `resolve` `all`, a dangling soft link or an
   * external link that does not resolve is a 404. `readable` (when given) leaves out the links
   * of groups the user may not read.
   * @throws H5StoreError NotFound, BadRequest (the path is not a group)
   */
  async grovePaths(domain: string, path: string, resolve: grove.LinkResolution, access: Access, readable?: (domain: string, id: string) => Promise<boolean>): Promise<string[]> {
    const base = grove.normalizePath(path);
    let dom = domain;
    let p = path;
    for (let hops = 0; ; hops++) {
      const r = await this.core.read(dom, (f): { hop: grove.ExternalHop } | { found: ReturnType<typeof grove.pathsBelow> } => {
        const hit = grove.locate(f, dom, p, resolve);
        if (hit.kind === 'hop') return { hop: hit.hop };
        if (hit.kind === 'link' && hit.cls === 'external' && resolve !== 'none') return { hop: { file: hit.file, path: hit.target } };
        if (hit.kind !== 'object' || hit.objKind !== 'group') throw badRequest(`${path} is not a group`);
        this.checkFound(f, hit.addr, access, path);
        return { found: grove.pathsBelow(f, dom, hit.addr, base, resolve) };
      });
      if ('hop' in r) {
        if (hops >= 8) throw badRequest(`Path ${path} crosses too many external links`);
        dom = await this.externalDomain(dom, r.hop.file, access);
        p = r.hop.path;
        continue;
      }
      const { paths, groups: entered, externals } = r.found;
      for (const x of externals) {
        try {
          await this.groveChild(dom, x.file, x.target, '', access);
        } catch (e) {
          if (!(e instanceof H5StoreError) || e.status >= 500) throw e;
          throw notFound(`Cannot resolve external link at ${x.path}: ${e.message}`);
        }
      }
      if (!readable) return paths;
      const keep = paths.map(() => true);
      for (const g of entered) if (!(await readable(dom, g.id))) for (let i = g.from; i < g.to; i++) keep[i] = false;
      return paths.filter((_, i) => keep[i]);
    }
  }
}
