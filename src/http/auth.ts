/**
 * The one middleware that authenticates and authorizes every route of the route table
 * (routeTable.ts; spec section 5; issue #11): who is asking (auth/authenticate.ts), the domain
 * and object the route names, what the store says their ACLs are (one `aclView` call), and the
 * pure `decide()` (auth/acl.ts). Handlers run only when the request is allowed.
 */
import type { Context, Next } from 'koa';
import { type AclEntry, type Flag, type Principal, decide, parseFlagList } from '../auth/acl.js';
import type { Authenticator } from '../auth/authenticate.js';
import { hasUsers, unauthorized } from '../auth/authenticate.js';
import { type Config, isLoopbackHost } from '../config.js';
import { H5StoreError } from '../errors.js';
import type { Access } from '../store/access/access.js';
import { parentDomain } from '../store/objects/paths.js';
import type { AclTarget, AclView, Store } from '../store/store.js';
import { asBodyObject, domainRef, jsonBody } from './request.js';
import type { AuthState, Need, Route } from './routeTable.js';
import { UserLimits } from './userLimits.js';

/** The `default_acl` in effect (spec 5 step 5): configured, else `all` in single-user mode, else `read`. */
export function fallbackAcl(config: Config): AclEntry {
  if (config.defaultAcl !== undefined) return parseFlagList(config.defaultAcl);
  return parseFlagList(singleUserMode(config) ? 'all' : 'read');
}

/** No users (no users file, no OpenID Connect) and a loopback address: every request is `default`, who may do everything. */
export function singleUserMode(config: Config): boolean {
  return !hasUsers(config) && isLoopbackHost(config.host);
}

/** What a denial says. */
function denial(p: Principal, flag: Flag, what: string, xhr: boolean): H5StoreError {
  if (!p.authenticated) return unauthorized(`Authentication required: anonymous requests may not ${flag} ${what}`, xhr);
  return new H5StoreError('Forbidden', `User ${p.name} may not ${flag} ${what}`);
}

/** Whether the request comes from a page's script (no Basic challenge: no native browser prompt). */
function isXhr(ctx: Context): boolean {
  return ctx.get('x-requested-with') !== '';
}

/**
 * Build the guard for one route: authenticate, resolve the domain/object and its ACLs, decide.
 * Sets `ctx.state` (AuthState) for the handler.
 *
 * A JSON body is read only once the requester is known to pass (issue #24 item 7: bodies were
 * read and parsed before the check, so anonymous 24 MiB bodies stalled the server): routes
 * whose requirement does not depend on the body are decided first, then the body is read, then
 * the objects it names (`targets`) are checked. Routes whose requirement or target comes from
 * the body (`bodyDecides`) are first refused when even the most permissive of its outcomes
 * would be refused (no object ACL of the domain grants more than its root), then decided on the
 * body. Anonymous bodies are capped (`maxAnonymousBodyBytes`, request.ts `bodyLimit`).
 */
export function makeGuard(deps: { store: Store; config: Config; auth: Authenticator }) {
  const fallback = fallbackAcl(deps.config);
  const limits = new UserLimits(deps.config, !singleUserMode(deps.config));
  const allows = (p: Principal, flag: Flag, view: AclView) => decide(p, flag, { object: view.object, root: view.root, fallback }) === 'allow';
  /** Whether `p` passes `need` on some object of `domain` (or its folder), whatever a body names. */
  const couldPass = async (p: Principal, need: Need, domain: string): Promise<boolean> => {
    const view = await deps.store.aclView(need.on === 'parent' ? parentDomain(domain) : domain);
    if (allows(p, need.flag, view)) return true;
    if (need.on !== 'object') return false;
    return (view.objectAcls ?? []).some((object) => decide(p, need.flag, { object, root: view.root, fallback }) === 'allow');
  };

  return (r: Route) => {
    const refOpts = r.domain === 'optional' ? { required: false, allowRoot: true, param: r.domainParam } : { required: true, param: r.domainParam };
    /** Read the JSON body into `ctx.state` (a list stays a list for `jsonList` routes). */
    const readBody = async (ctx: Context, state: AuthState) => {
      const b = await jsonBody(ctx, deps.config);
      if (r.jsonList && Array.isArray(b)) {
        state.bodyList = b;
        state.body = {};
      } else state.body = asBodyObject(b);
    };
    return async (ctx: Context, next: Next): Promise<unknown> => {
      const xhr = isXhr(ctx);
      const header = ctx.get('authorization');
      const principal = await deps.auth.authenticate(header || undefined, xhr, header ? ctx.ip : '');
      const state = ctx.state as AuthState;
      state.principal = principal;
      if (principal.authenticated) state.user = { name: principal.name };
      state.may = (view, flag) => principal.admin || allows(principal, flag, view);
      state.access = accessFor(principal, allows, xhr);
      const limitKey = limits.keyOf(principal, ctx);
      if (limitKey !== undefined) {
        await limits.request(limitKey);
        state.limits = limits;
        state.limitKey = limitKey;
      }
      if (r.bodyDecides) {
        const ref = domainRef(ctx, refOpts) ?? { domain: '/', viaQuery: false };
        state.ref = ref;
        if (!principal.admin) {
          let any = false;
          for (const n of r.bodyDecides) if ((any = await couldPass(principal, n, ref.domain))) break;
          if (!any) throw denial(principal, r.bodyDecides[0]!.flag, r.bodyDecides[0]!.on === 'parent' ? `folder ${parentDomain(ref.domain)}` : ref.domain, xhr);
        }
        await readBody(ctx, state);
      }
      const need = typeof r.need === 'function' ? r.need(ctx) : r.need;
      if (need === 'public') return next();

      const ref = state.ref ?? domainRef(ctx, refOpts) ?? { domain: '/', viaQuery: false };
      state.ref = ref;
      const { domain, target, what } = targetOf(ctx, r, need, ref.domain);
      const view = await deps.store.aclView(domain, target);
      state.acl = view;
      if (!principal.admin && !allows(principal, need.flag, view)) throw denial(principal, need.flag, what, xhr);
      if (r.jsonBody && !r.bodyDecides) await readBody(ctx, state);
      if (r.targets && !principal.admin && view.kind === 'domain' && view.hasObjectAcls) {
        for (const t of r.targets(ctx)) {
          const v = await deps.store.aclView(domain, t);
          if (!allows(principal, need.flag, v)) throw denial(principal, need.flag, `${t.h5path ?? t.id} in ${domain}`, xhr);
        }
      }
      return next();
    };
  };
}

/** The domain (and object) a requirement is checked on, and how a denial names it. */
function targetOf(ctx: Context, r: Route, need: Need, domain: string): { domain: string; target: AclTarget; what: string } {
  if (need.on === 'parent') {
    const parent = parentDomain(domain);
    return { domain: parent, target: {}, what: `folder ${parent}` };
  }
  if (need.on === 'object') {
    const id = (ctx.params as Record<string, string | undefined>).id;
    const target: AclTarget = { id, ...(r.object ? r.object(ctx) : {}) };
    if (target.h5path !== undefined && id !== undefined) target.parentId ??= id;
    const named = target.h5path ?? target.id;
    return { domain, target, what: named ? `${named} in ${domain}` : domain };
  }
  return { domain, target: {}, what: domain };
}

/**
 * The requester's permissions for what the store finds an operation reaches (store/access/access.ts):
 * each view the store builds is decided as the guard decides a request on that object.
 */
function accessFor(p: Principal, allows: (p: Principal, f: Flag, v: AclView) => boolean, xhr: boolean): Access {
  return {
    all: p.admin,
    check(view, flag, about) {
      if (!p.admin && !allows(p, flag, view)) throw denial(p, flag, about.what, xhr);
    },
  };
}
