/**
 * Domain and folder routes: GET/PUT/DELETE/POST /, GET /domains (wire-reference 1.3-1.7).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { authorize, currentUser, effectiveAcl } from '../../auth/policy.js';
import { badRequest } from '../../errors.js';
import { compressors } from '../../store/datasets.js';
import { limitsJson } from '../../store/limits.js';
import { COLLECTION } from '../../store/ids.js';
import { normalizeDomain, parentDomain } from '../../store/paths.js';
import type { Deps } from '../deps.js';
import { domainHrefs, objectHrefs } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import { type DomainRef, domainRef, flag, globParam, jsonObject, limitParam, markerParam, param } from '../request.js';
import { HSDS_COMPAT_VERSION } from './service.js';

/** Stable data-node ids: h5pyd compares those of open and flush (wire-reference 1.5). */
const DN_IDS = ['dn-h5store'];

export function domainRoutes(router: Router, d: Deps): void {
  const limits = () => limitsJson(d.store.limits, d.config);

  async function listing(ctx: Context, folder: string, ref: DomainRef | undefined): Promise<void> {
    const items = await d.store.listFolder(folder, {
      limit: limitParam(ctx),
      marker: markerParam(ctx),
      pattern: globParam(ctx),
      verbose: flag(ctx, 'verbose'),
    });
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 200, {
      domains: items.map((it) => ({ ...it, hrefs: [{ rel: 'domain', href: h.domainUrl(it.name) }] })),
      hrefs: [h.rel('self', '/domains', `domain=${encodeURIComponent(folder)}`)],
    });
  }

  // GET /: a domain, a folder, an object by h5path, or (no domain) the top-level listing
  router.get('/', async (ctx) => {
    const ref = domainRef(ctx, { required: false, allowRoot: true });
    if (!ref) {
      if (param(ctx, 'host') !== undefined) throw badRequest("Passing domain path as 'host' parameter is no longer supported");
      return listing(ctx, '/', undefined);
    }
    authorize(ctx, ref.domain, 'read');
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
    const body: Record<string, unknown> = { ...dom, hrefs: domainHrefs(h, dom.root, parent) };
    if (dom.class === 'domain') {
      Object.assign(body, { limits: limits(), compressors: compressors(), version: HSDS_COMPAT_VERSION });
      if (flag(ctx, 'verbose')) Object.assign(body, await d.store.domainStats(ref.domain));
      if (flag(ctx, 'getdnids')) body.dn_ids = DN_IDS;
    }
    sendJson(ctx, 200, body);
  });

  // PUT /: create a domain or folder; flush
  router.put('/', async (ctx) => {
    const ref = domainRef(ctx, { required: true })!;
    const body = await jsonObject(ctx, d.config);
    const wantsFlush = flag(ctx, 'flush') || !!body.flush || flag(ctx, 'rescan') || !!body.rescan;
    if (wantsFlush) {
      authorize(ctx, ref.domain, 'update');
      await d.store.getDomain(ref.domain); // exists; every write is flushed when it completes
      sendJson(ctx, 200, { dn_ids: DN_IDS, hrefs: [] });
      return;
    }
    authorize(ctx, parentDomain(ref.domain), 'create');
    if (body.owner !== undefined && body.owner !== currentUser(ctx)) throw badRequest('"owner" cannot be set for now');
    const group = body.group as { creationProperties?: { CreateOrder?: unknown } } | undefined;
    const dom = await d.store.createDomain(ref.domain, {
      folder: !!body.folder,
      trackOrder: !!group?.creationProperties?.CreateOrder,
    });
    const h = new Hrefs(ctx, d.config, ref);
    const out: Record<string, unknown> = {
      ...dom,
      acls: { [currentUser(ctx)]: effectiveAcl(currentUser(ctx)) },
      hrefs: domainHrefs(h, dom.root, parentDomain(ref.domain)),
    };
    if (dom.class === 'domain') Object.assign(out, { limits: limits(), compressors: compressors(), version: HSDS_COMPAT_VERSION });
    if (flag(ctx, 'getdnids') || body.getdnids) out.dn_ids = DN_IDS;
    delete out.class;
    sendJson(ctx, 201, out);
  });

  // DELETE /: delete a domain or an empty folder
  router.delete('/', async (ctx) => {
    const ref = domainRef(ctx, { required: true })!;
    authorize(ctx, ref.domain, 'delete');
    await d.store.deleteDomain(ref.domain);
    const h = new Hrefs(ctx, d.config);
    sendJson(ctx, 200, { domain: ref.domain, hrefs: [{ rel: 'parent', href: h.domainUrl(parentDomain(ref.domain)) }] });
  });

  // POST /: look up several h5paths at once
  router.post('/', async (ctx) => {
    const ref = domainRef(ctx, { required: true })!;
    authorize(ctx, ref.domain, 'read');
    const body = await jsonObject(ctx, d.config, { required: true });
    if (!Array.isArray(body.h5paths) || !body.h5paths.every((p) => typeof p === 'string')) {
      throw badRequest('"h5paths" must be a list of paths');
    }
    const out: Record<string, unknown> = {};
    for (const p of body.h5paths as string[]) {
      const { kind, json } = await d.store.lookupPath(ref.domain, p, param(ctx, 'parent_id'));
      out[p] = { ...json, domain: ref.domain, class: kind };
    }
    sendJson(ctx, 200, { h5paths: out, hrefs: [] });
  });

  // GET /domains: list a folder
  router.get('/domains', async (ctx) => {
    const ref = domainRef(ctx, { required: false, allowRoot: true });
    const folder = ref ? ref.domain : '/';
    if (ref) authorize(ctx, folder, 'read');
    return listing(ctx, folder === '/' ? '/' : normalizeDomain(folder, { allowRoot: true }), ref);
  });
}
