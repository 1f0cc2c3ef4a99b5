/**
 * Domain and folder routes: GET/PUT/DELETE/POST /, GET /domains (wire-reference 1.3-1.7). The
 * route table (index.ts) names every path.
 */
import type { Context } from 'koa';
import { type Acl, DEFAULT_USER, entryOf, initialAcl } from '../../auth/acl.js';
import { H5StoreError, badRequest } from '../../errors.js';
import { compressors, filterNames } from '../../store/objects/datasets.js';
import { limitsJson } from '../../store/access/limits.js';
import { COLLECTION } from '../../store/objects/ids.js';
import { parentDomain } from '../../store/objects/paths.js';
import type { Deps } from '../deps.js';
import { domainHrefs, objectHrefs } from '../deps.js';
import { Hrefs, sendJson, sendJsonText } from '../present.js';
import { parseDomainQuery } from '../../store/objects/domainQuery.js';
import { type DomainRef, bodyOf, flag, globParam, limitParam, markerParam, param, pathOptions, refOf, selfQuery } from '../request.js';
import { onlyReadable } from '../visible.js';
import { flushBody, newDomainBody, parseBody, pathsBody } from '../bodies.js';
import type { AuthState, Requirement } from '../routeTable.js';
import type { AclTarget } from '../../store/store.js';
import { HSDS_COMPAT_VERSION } from './service.js';

/** Stable data-node ids: h5pyd compares those of open and flush (wire-reference 1.5). */
const DN_IDS = ['dn-h5store'];

/** Whether a PUT / asks for a flush (or rescan) rather than a creation (wire-reference 1.5). */
function isFlush(ctx: Context): boolean {
  const body = parseBody(flushBody, bodyOf(ctx));
  return flag(ctx, 'flush') || body.flush || flag(ctx, 'rescan') || body.rescan;
}

/**
 * What the domain routes of one server keep between requests (one per `Deps`: per server):
 * - `tail`: `"limits":...,"compressors":...,"filters":...,"version":...` of a domain's GET,
 *   fixed for the process (limits from the configuration, filters found at start-up): written
 *   once (issue #9, small GETs: the whole body was scanned and stringified per request);
 * - `bodies`: complete bytes of the common GET / answer (issue #9 target 1: building,
 *   stringifying and encoding it was ~15 us of a ~190 us request), per everything they are made
 *   of: the hrefs' base and domain parameter, the domain, its owner, root id, times and ACL
 *   text. Bounded: a full map is dropped (a domain's times change with every write, so old keys
 *   just go unused).
 */
interface Kept {
  tail?: string;
  bodies: Map<string, Buffer>;
}
const KEPT_DOMAIN_BODIES = 1024;
const kept = new WeakMap<Deps, Kept>();
function keptOf(d: Deps): Kept {
  let k = kept.get(d);
  if (k === undefined) kept.set(d, (k = { bodies: new Map() }));
  return k;
}

/** The `limits` of a domain's GET (store/access/limits.ts). */
function limits(d: Deps): ReturnType<typeof limitsJson> {
  return limitsJson(d.store.limits, d.config);
}

/** The fixed tail of a domain's GET (`Kept.tail`). */
function domainTailText(d: Deps): string {
  const k = keptOf(d);
  return (k.tail ??= JSON.stringify({ limits: limits(d), compressors: compressors(), filters: filterNames(), version: HSDS_COMPAT_VERSION }).slice(1, -1));
}

/** JSON text of ACL objects (an ACL view's object is the same until the view is recomputed). */
const aclTexts = new WeakMap<object, string>();
function aclText(acls: object): string {
  let t = aclTexts.get(acls);
  if (t === undefined) aclTexts.set(acls, (t = JSON.stringify(acls)));
  return t;
}

async function listing(ctx: Context, d: Deps, folder: string, ref: DomainRef | undefined): Promise<void> {
  const st = ctx.state as AuthState;
  const q = param(ctx, 'query');
  const items = await d.store.listFolder(folder, {
    limit: limitParam(ctx),
    marker: markerParam(ctx),
    pattern: globParam(ctx),
    verbose: flag(ctx, 'verbose'),
    visible: (view) => st.may(view, 'read'),
    query: q === undefined || q === '' ? undefined : parseDomainQuery(q),
  });
  const h = new Hrefs(ctx, d.config, ref);
  // self: the listing asked for, with its paging; `domain` only once (from Hrefs when given as a query parameter)
  const self = selfQuery(ctx, ['Limit', 'Marker', 'pattern', 'query', 'verbose'], ref?.viaQuery ? undefined : `domain=${encodeURIComponent(folder).replace(/%2F/g, '/')}`);
  sendJson(ctx, 200, {
    domains: items.map((it) => ({ ...it, hrefs: [{ rel: 'domain', href: h.domainUrl(it.name) }] })),
    hrefs: [h.rel('self', '/domains', self)],
  });
}

/** The ACL of the domain or folder for GET / (only for those who may read ACLs). */
function aclsFor(ctx: Context): { acls?: Acl } {
  const st = ctx.state as AuthState;
  if (!st.acl || !st.may(st.acl, 'readACL')) return {};
  return { acls: st.acl.root };
}

/** `GET /`: a domain, a folder, an object by `h5path`, or (no domain) the top-level listing. */
export async function get(ctx: Context, d: Deps): Promise<void> {
  const given = refOf(ctx);
  const ref = domainGiven(ctx) ? given : undefined;
  if (!ref) {
    if (param(ctx, 'host') !== undefined) throw badRequest("Passing domain path as 'host' parameter is no longer supported");
    return listing(ctx, d, '/', undefined);
  }
  const h5path = param(ctx, 'h5path');
  if (h5path !== undefined) {
    const found = await d.store.lookupPath(ref.domain, h5path, param(ctx, 'parent_id'), pathOptions(ctx));
    const h = new Hrefs(ctx, d.config, { ...ref, domain: found.domain });
    const col = COLLECTION[found.kind];
    sendJson(ctx, 200, { ...found.json, domain: found.domain, class: found.kind, hrefs: objectHrefs(h, col, found.json.id as string, found.json.root as string) }, { ignoreNan: flag(ctx, 'ignore_nan') });
    return;
  }
  if (ref.domain === '/') return listing(ctx, d, '/', ref);
  const h = new Hrefs(ctx, d.config, ref);
  const dom = await d.store.getDomain(ref.domain);
  const parent = parentDomain(ref.domain);
  const acls = aclsFor(ctx);
  const bodyOf = (): Record<string, unknown> => ({ ...dom, ...acls, hrefs: domainHrefs(h, dom.root, parent) });
  if (dom.class === 'domain' && !flag(ctx, 'verbose') && !flag(ctx, 'getdnids') && !flag(ctx, 'getobjs')) {
    // the common GET: the same keys in the same order as below, the fixed tail as kept text
    // (owner, times, ids, ACL items and hrefs hold no NaN, Infinity or bigint), its bytes
    // kept per everything they are made of
    const key = `${h.key}\u0000${ref.domain}\u0000${dom.owner}\u0000${dom.root}\u0000${dom.created}\u0000${dom.lastModified}\u0000${acls.acls ? aclText(acls.acls) : '-'}`;
    const bodies = keptOf(d).bodies;
    let bytes = bodies.get(key);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(bodyOf()).slice(0, -1) + ',' + domainTailText(d) + '}');
      if (bodies.size >= KEPT_DOMAIN_BODIES) bodies.clear();
      bodies.set(key, bytes);
    }
    sendJsonText(ctx, 200, bytes);
    return;
  }
  const body = bodyOf();
  if (dom.class === 'domain') {
    Object.assign(body, { limits: limits(d), compressors: compressors(), filters: filterNames(), version: HSDS_COMPAT_VERSION });
    if (flag(ctx, 'verbose')) Object.assign(body, await d.store.domainStats(ref.domain));
    if (flag(ctx, 'getdnids')) body.dn_ids = DN_IDS;
    if (flag(ctx, 'getobjs')) {
      const objs = await d.store.domainObjects(ref.domain, { includeAttrs: flag(ctx, 'include_attrs') });
      if (objs) body.domain_objs = await onlyReadable(ctx, d.store, ref.domain, objs);
    }
  }
  sendJson(ctx, 200, body);
}

/** What `PUT /` needs: `update` on the domain to flush (or rescan) it, else `create` on the parent folder. */
export function putNeed(ctx: Context): Requirement {
  return isFlush(ctx) ? { flag: 'update', on: 'domain' } : { flag: 'create', on: 'parent' };
}

/** `PUT /`: create a domain or folder; flush (or rescan) a domain. */
export async function put(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const st = ctx.state as AuthState;
  if (isFlush(ctx)) {
    const body = parseBody(flushBody, bodyOf(ctx));
    if (flag(ctx, 'rescan') || body.rescan) await d.store.domainStats(ref.domain, { rescan: true });
    else await d.store.flushDomain(ref.domain);
    // 204, or 200 with the data-node ids when asked (h5pyd's flush reads them from a JSON body)
    if (flag(ctx, 'getdnids') || body.getdnids) sendJson(ctx, 200, { dn_ids: DN_IDS, hrefs: [] });
    else ctx.status = 204;
    return;
  }
  const p = st.principal;
  const given = bodyOf(ctx).owner;
  // another owner is the admin's to give (before the rest of the body is looked at)
  if (typeof given === 'string' && given !== p.name && !p.admin) throw new H5StoreError('Forbidden', 'Only the admin user may set the owner of a new domain or folder');
  const body = parseBody(newDomainBody, bodyOf(ctx));
  const owner = body.owner ?? p.name;
  const folder = body.folder;
  const acl = d.auth.hasAccounts
    ? initialAcl({ owner, parent: st.acl?.root ?? {}, admin: d.config.adminUser, folder, defaultPublic: d.config.defaultPublic })
    : undefined;
  const group = body.group as { creationProperties?: { CreateOrder?: unknown } } | null | undefined;
  if (body.linked_domain !== undefined && body.linked_domain !== null) {
    throw new H5StoreError('NotImplemented', '"linked_domain" (a domain sharing the root group of another) is not supported: each domain here is one HDF5 file');
  }
  const quota = await st.limits?.domainCreated(st.limitKey); // per-user quota (issue #24 item 11)
  let dom: Awaited<ReturnType<typeof d.store.createDomain>>;
  try {
    dom = await d.store.createDomain(ref.domain, {
      folder,
      trackOrder: !!group?.creationProperties?.CreateOrder,
      owner: acl ? owner : undefined,
      acl,
      rootId: body.root_id ?? undefined,
      rootCreation: group?.creationProperties,
    });
  } catch (e) {
    await quota?.undo();
    throw e;
  }
  const h = new Hrefs(ctx, d.config, ref);
  const out: Record<string, unknown> = {
    ...dom,
    acls: acl ?? { [DEFAULT_USER]: entryOf(true) },
    hrefs: domainHrefs(h, dom.root, parentDomain(ref.domain)),
  };
  if (dom.class === 'domain') Object.assign(out, { limits: limits(d), compressors: compressors(), filters: filterNames(), version: HSDS_COMPAT_VERSION });
  if (flag(ctx, 'getdnids') || body.getdnids) out.dn_ids = DN_IDS;
  delete out.class;
  sendJson(ctx, 201, out);
}

/** `DELETE /`: delete a domain or an empty folder. */
export async function remove(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  await d.store.deleteDomain(ref.domain);
  const h = new Hrefs(ctx, d.config);
  sendJson(ctx, 200, { domain: ref.domain, hrefs: [{ rel: 'parent', href: h.domainUrl(parentDomain(ref.domain)) }] });
}

/** `POST /`: look up several h5paths at once (`ignore_missing=1`: leave out those that lead nowhere). */
export async function lookup(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const body = parseBody(pathsBody, bodyOf(ctx));
  const out: Record<string, unknown> = {};
  // ignore_missing=1 (an h5store extension, used by the viewer): a path that leads nowhere (a
  // dangling soft or external link, a deleted object) is left out instead of failing the batch
  const skipMissing = flag(ctx, 'ignore_missing');
  const opts = pathOptions(ctx, body);
  for (const p of body.h5paths) {
    try {
      const found = await d.store.lookupPath(ref.domain, p, param(ctx, 'parent_id'), opts);
      out[p] = { ...found.json, domain: found.domain, class: found.kind };
    } catch (e) {
      if (skipMissing && e instanceof H5StoreError && (e.code === 'NotFound' || e.code === 'Gone')) continue;
      throw e;
    }
  }
  sendJson(ctx, 200, { h5paths: out, hrefs: [] }, { ignoreNan: flag(ctx, 'ignore_nan') });
}

/** The paths a `POST /` body names, each checked as the domain is (the table's `targets`). */
export function lookupTargets(ctx: Context): AclTarget[] {
  return pathsIn(bodyOf(ctx)).map((h5path) => ({ h5path, parentId: param(ctx, 'parent_id') }));
}

/** `GET /domains`: list a folder (only what the requester may read). */
export async function list(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const given = domainGiven(ctx) ? ref : undefined;
  return listing(ctx, d, ref.domain, given);
}

/** Whether the request named a domain (GET / and /domains also work without one). */
function domainGiven(ctx: Context): boolean {
  return typeof ctx.query.domain === 'string' ? ctx.query.domain !== '' : ctx.get('x-store-domain') !== '' || ctx.get('x-hdf-domain') !== '';
}

/** The paths of a batch lookup body (checked in the handler; here only strings count). */
function pathsIn(body: Record<string, unknown>): string[] {
  return Array.isArray(body.h5paths) ? body.h5paths.filter((p): p is string => typeof p === 'string') : [];
}

/** The object an `h5path` lookup of `GET /` names (its own ACL applies), relative to `parent_id` (the table's `object`). */
export function pathTarget(ctx: Context): { h5path?: string; parentId?: string } {
  const h5path = param(ctx, 'h5path');
  return h5path === undefined ? {} : { h5path, parentId: param(ctx, 'parent_id') };
}
