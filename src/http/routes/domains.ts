/**
 * Domain and folder routes: GET/PUT/DELETE/POST /, GET /domains (wire-reference 1.3-1.7).
 */
import type { Context } from 'koa';
import { type Acl, DEFAULT_USER, entryOf, initialAcl } from '../../auth/acl.js';
import { H5StoreError, badRequest } from '../../errors.js';
import { compressors } from '../../store/datasets.js';
import { limitsJson } from '../../store/limits.js';
import { COLLECTION } from '../../store/ids.js';
import { normalizeDomain, parentDomain } from '../../store/paths.js';
import type { Deps } from '../deps.js';
import { domainHrefs, objectHrefs } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import { type DomainRef, bodyOf, flag, globParam, limitParam, markerParam, param, refOf } from '../request.js';
import { type AuthState, type Route, route } from '../routeTable.js';
import { HSDS_COMPAT_VERSION } from './service.js';

/** Stable data-node ids: h5pyd compares those of open and flush (wire-reference 1.5). */
const DN_IDS = ['dn-h5store'];

/** Whether a PUT / asks for a flush (or rescan) rather than a creation (wire-reference 1.5). */
function isFlush(ctx: Context): boolean {
  const body = bodyOf(ctx);
  return flag(ctx, 'flush') || !!body.flush || flag(ctx, 'rescan') || !!body.rescan;
}

export function domainRoutes(d: Deps): Route[] {
  const limits = () => limitsJson(d.store.limits, d.config);

  async function listing(ctx: Context, folder: string, ref: DomainRef | undefined): Promise<void> {
    const st = ctx.state as AuthState;
    const items = await d.store.listFolder(folder, {
      limit: limitParam(ctx),
      marker: markerParam(ctx),
      pattern: globParam(ctx),
      verbose: flag(ctx, 'verbose'),
      visible: (view) => st.may(view, 'read'),
    });
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 200, {
      domains: items.map((it) => ({ ...it, hrefs: [{ rel: 'domain', href: h.domainUrl(it.name) }] })),
      hrefs: [h.rel('self', '/domains', `domain=${encodeURIComponent(folder)}`)],
    });
  }

  /** The ACL of the domain or folder for GET / (only for those who may read ACLs). */
  function aclsFor(ctx: Context): { acls?: Acl } {
    const st = ctx.state as AuthState;
    if (!st.acl || !st.may(st.acl, 'readACL')) return {};
    return { acls: st.acl.root };
  }

  return [
    // GET /: a domain, a folder, an object by h5path, or (no domain) the top-level listing
    route('GET', '/', { flag: 'read', on: 'object' }, async (ctx) => {
      const given = refOf(ctx);
      const ref = domainGiven(ctx) ? given : undefined;
      if (!ref) {
        if (param(ctx, 'host') !== undefined) throw badRequest("Passing domain path as 'host' parameter is no longer supported");
        return listing(ctx, '/', undefined);
      }
      const h = new Hrefs(ctx, d.config, ref);
      const h5path = param(ctx, 'h5path');
      if (h5path !== undefined) {
        const { kind, json } = await d.store.lookupPath(ref.domain, h5path, param(ctx, 'parent_id'));
        const col = COLLECTION[kind];
        sendJson(ctx, 200, { ...json, domain: ref.domain, class: kind, hrefs: objectHrefs(h, col, json.id as string, json.root as string) });
        return;
      }
      if (ref.domain === '/') return listing(ctx, '/', ref);
      const dom = await d.store.getDomain(ref.domain);
      const parent = parentDomain(ref.domain);
      const body: Record<string, unknown> = { ...dom, ...aclsFor(ctx), hrefs: domainHrefs(h, dom.root, parent) };
      if (dom.class === 'domain') {
        Object.assign(body, { limits: limits(), compressors: compressors(), version: HSDS_COMPAT_VERSION });
        if (flag(ctx, 'verbose')) Object.assign(body, await d.store.domainStats(ref.domain));
        if (flag(ctx, 'getdnids')) body.dn_ids = DN_IDS;
      }
      sendJson(ctx, 200, body);
    }, { domain: 'optional', object: pathTarget }),

    // PUT /: create a domain or folder (create on the parent folder); flush (update on the domain)
    route('PUT', '/', (ctx) => (isFlush(ctx) ? { flag: 'update', on: 'domain' } : { flag: 'create', on: 'parent' }), async (ctx) => {
      const ref = refOf(ctx);
      const body = bodyOf(ctx);
      const st = ctx.state as AuthState;
      if (isFlush(ctx)) {
        await d.store.getDomain(ref.domain); // exists; every write is flushed when it completes
        sendJson(ctx, 200, { dn_ids: DN_IDS, hrefs: [] });
        return;
      }
      const p = st.principal;
      if (body.owner !== undefined && typeof body.owner !== 'string') throw badRequest('"owner" must be a user name');
      const owner = (body.owner as string | undefined) ?? p.name;
      if (owner !== p.name && !p.admin) throw new H5StoreError('Forbidden', 'Only the admin user may set the owner of a new domain or folder');
      const folder = !!body.folder;
      const acl = d.auth.hasUsers
        ? initialAcl({ owner, parent: st.acl?.root ?? {}, admin: d.config.adminUser, folder, defaultPublic: d.config.defaultPublic })
        : undefined;
      const group = body.group as { creationProperties?: { CreateOrder?: unknown } } | undefined;
      const dom = await d.store.createDomain(ref.domain, {
        folder,
        trackOrder: !!group?.creationProperties?.CreateOrder,
        owner: acl ? owner : undefined,
        acl,
      });
      const h = new Hrefs(ctx, d.config, ref);
      const out: Record<string, unknown> = {
        ...dom,
        acls: acl ?? { [DEFAULT_USER]: entryOf(true) },
        hrefs: domainHrefs(h, dom.root, parentDomain(ref.domain)),
      };
      if (dom.class === 'domain') Object.assign(out, { limits: limits(), compressors: compressors(), version: HSDS_COMPAT_VERSION });
      if (flag(ctx, 'getdnids') || body.getdnids) out.dn_ids = DN_IDS;
      delete out.class;
      sendJson(ctx, 201, out);
    }, { jsonBody: true }),

    // DELETE /: delete a domain or an empty folder
    route('DELETE', '/', { flag: 'delete', on: 'domain' }, async (ctx) => {
      const ref = refOf(ctx);
      await d.store.deleteDomain(ref.domain);
      const h = new Hrefs(ctx, d.config);
      sendJson(ctx, 200, { domain: ref.domain, hrefs: [{ rel: 'parent', href: h.domainUrl(parentDomain(ref.domain)) }] });
    }),

    // POST /: look up several h5paths at once
    route('POST', '/', { flag: 'read', on: 'domain' }, async (ctx) => {
      const ref = refOf(ctx);
      const body = bodyOf(ctx);
      if (!Array.isArray(body.h5paths) || !body.h5paths.every((p) => typeof p === 'string')) {
        throw badRequest('"h5paths" must be a list of paths');
      }
      const out: Record<string, unknown> = {};
      for (const p of body.h5paths as string[]) {
        const { kind, json } = await d.store.lookupPath(ref.domain, p, param(ctx, 'parent_id'));
        out[p] = { ...json, domain: ref.domain, class: kind };
      }
      sendJson(ctx, 200, { h5paths: out, hrefs: [] });
    }, { jsonBody: true, targets: (ctx) => pathsIn(bodyOf(ctx)).map((h5path) => ({ h5path, parentId: param(ctx, 'parent_id') })) }),

    // GET /domains: list a folder (only what the requester may read)
    route('GET', '/domains', { flag: 'read', on: 'domain' }, async (ctx) => {
      const ref = refOf(ctx);
      const given = domainGiven(ctx) ? ref : undefined;
      return listing(ctx, ref.domain, given);
    }, { domain: 'optional' }),
  ];
}

/** Whether the request named a domain (GET / and /domains also work without one). */
function domainGiven(ctx: Context): boolean {
  return typeof ctx.query.domain === 'string' ? ctx.query.domain !== '' : ctx.get('x-store-domain') !== '' || ctx.get('x-hdf-domain') !== '';
}

/** The paths of a batch lookup body (checked in the handler; here only strings count). */
function pathsIn(body: Record<string, unknown>): string[] {
  return Array.isArray(body.h5paths) ? body.h5paths.filter((p): p is string => typeof p === 'string') : [];
}

/** The object an `h5path` lookup names (its own ACL applies), relative to `parent_id`. */
function pathTarget(ctx: Context): { h5path?: string; parentId?: string } {
  const h5path = param(ctx, 'h5path');
  return h5path === undefined ? {} : { h5path, parentId: param(ctx, 'parent_id') };
}
