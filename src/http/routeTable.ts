/**
 * The route table's types and dispatch (DESIGN.md section 7): every route is declared once, in
 * the literal list of routes/index.ts, with its method, path, the ACL flag it needs and on what,
 * and its handler. `routesMiddleware` registers them all behind
 * the one middleware that authenticates and authorizes (auth.ts), so no handler checks
 * permissions itself and a route cannot exist without a declared requirement.
 */
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import compose from 'koa-compose';
import type { Flag, Principal } from '../auth/acl.js';
import type { Access } from '../store/access/access.js';
import type { AclTarget, AclView } from '../store/store.js';
import type { Deps } from './deps.js';
import type { DomainRef } from './request.js';
import type { UserLimits } from './userLimits.js';

/**
 * What a permission is checked on (spec 2.3, 5):
 * - `domain`: the domain or folder the request names (its root group's ACL, or the folder's);
 * - `parent`: the folder that holds the named domain (creating a domain or folder, spec 4.4);
 * - `object`: the object the route names (by default the `:id` path parameter; links,
 *   dataspaces, values and attributes use the ACL of the object that owns them); a route
 *   without an object (or a root group id) falls back to the domain.
 */
export type Scope = 'domain' | 'parent' | 'object';

/** A permission a request needs. */
export interface Need {
  flag: Flag;
  on: Scope;
}

/** `public`: no permission (service routes, the viewer's files); credentials are still checked. */
export type Requirement = Need | 'public';

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

export interface Route {
  method: Method;
  /** @koa/router path, e.g. `/datasets/:id/value`. */
  path: string;
  /** The permission, or a function of the request when it depends on it (PUT / creates or flushes). */
  need: Requirement | ((ctx: Context) => Requirement);
  /** The domain selector: `required` (default) or `optional` (absent means the top folder `/`). */
  domain?: 'required' | 'optional';
  /**
   * Where the domain is named: `domain` (default: the `domain` query parameter, else the
   * X-Store-domain / X-Hdf-domain headers) or `file` (h5grove's `file` query parameter, a path
   * that may leave out the leading `/`).
   */
  domainParam?: 'domain' | 'file';
  /**
   * The guard reads the JSON object body (into `ctx.state.body`): after the check when the
   * requirement does not depend on it (the objects it names are then checked as `targets`),
   * before it for `bodyDecides` routes.
   */
  jsonBody?: boolean;
  /** With `jsonBody`: the body may also be a JSON list (into `ctx.state.bodyList`; `body` is then `{}`). */
  jsonList?: boolean;
  /**
   * The requirements a route may come to once its body is read, when its requirement (`need`
   * as a function) or its object (`object`) depends on the body: a requester who passes none of
   * them, on any object of the domain, is refused before the body is read (issue #24 item 7).
   */
  bodyDecides?: Need[];
  /**
   * The object the `object` scope means, when it is not (only) the `:id` path parameter: an id
   * from the body, or an `h5path` (relative to `parentId`) whose object's own ACL applies.
   */
  object?: (ctx: Context) => AclTarget;
  /**
   * Further objects of the same domain the request reads or changes (bulk routes: several paths
   * or ids in the body): the requirement is checked on each of them as well.
   */
  targets?: (ctx: Context) => AclTarget[];
  /**
   * GET answers made of the domain file alone: they carry an ETag and Last-Modified of the
   * file's version, and `If-None-Match`/`If-Modified-Since` are answered 304 (conditional.ts);
   * a function: only for the requests it accepts.
   */
  conditional?: boolean | ((ctx: Context) => boolean);
  handler: (ctx: Context) => Promise<void> | void;
}

/** A handler of the route table (routes/index.ts): the request, and what the server is made of. */
export type Handler = (ctx: Context, d: Deps) => Promise<void> | void;

/** An entry of the route table (routes/index.ts): a `Route` whose handler is given the `Deps`. */
export interface RouteEntry extends Omit<Route, 'handler'> {
  handler: Handler;
}

/** The table's entries as routes of one server: each handler given `d`. */
export function bindRoutes(entries: readonly RouteEntry[], d: Deps): Route[] {
  return entries.map((e) => ({ ...e, handler: (ctx: Context) => e.handler(ctx, d) }));
}

/** What the middleware leaves in `ctx.state` for the handlers. */
export interface AuthState {
  principal: Principal;
  /** For logs and metrics: set for authenticated requests. */
  user?: { name: string };
  /** The request's domain (routes with a domain). */
  ref?: DomainRef;
  /** The JSON body, for routes declared with `jsonBody`. */
  body?: Record<string, unknown>;
  /** A JSON list body, for routes declared with `jsonList`. */
  bodyList?: unknown[];
  /** What the permission check looked at (routes with a requirement). */
  acl?: AclView;
  /** Whether the requester may `flag` the thing an ACL view describes (listing filters). */
  may: (view: AclView, flag: Flag) => boolean;
  /**
   * The requester's permissions for what the store finds an operation reaches beyond the
   * object the route names (store/access/access.ts): objects found by path, the group a create links
   * into, virtual dataset sources and external storage, other domains.
   */
  access: Access;
  /** The per-user limits and whose counters this request uses (undefined: none apply). */
  limits?: UserLimits;
  limitKey?: string;
}

/** Shorthand for a route entry. */
export function route(method: Method, path: string, need: Route['need'], handler: Route['handler'], opts: Partial<Route> = {}): Route {
  return { method, path, need, handler, ...opts };
}

/**
 * The object `create` is checked on for the routes that create an object (POST /groups,
 * /datasets, /datatypes; declared with `jsonBody`, `jsonList` and `bodyDecides: create on
 * object`): the body is read before the check (once the requester is known to be able to create
 * somewhere in the domain), because `create` is checked on the group the new object is linked
 * into (`link.id`; else the group `h5path` goes into, relative to `parent_id`: the deepest
 * existing group on the way, issue #24 item 2; else `parent_id`; the domain's root when none is
 * given). The store checks the same group again inside the write, once the path is resolved in
 * the locked file (`AclViews.mayPlace`, store/aclViews.ts, with `AuthState.access`). A list body (HSDS 1.0's batch
 * create, issue #25) is checked on the domain here, and each item's group by the store (`mayPlace`).
 */
export function createdIn(ctx: Context): AclTarget {
  const body = (ctx.state as { body?: Record<string, unknown> }).body ?? {};
  const link = body.link as { id?: unknown } | undefined;
  const parentId = typeof body.parent_id === 'string' ? body.parent_id : undefined;
  if (link === undefined && typeof body.h5path === 'string') return { h5path: body.h5path, parentId, place: true };
  const id = link && typeof link === 'object' ? link.id : parentId;
  return typeof id === 'string' ? { id } : {};
}

/** The first segment of a path (`/groups/abc/links` -> `groups`; `/` -> ``). */
function firstSegment(p: string): string {
  const end = p.indexOf('/', 1);
  return end < 0 ? p.slice(1) : p.slice(1, end);
}

/**
 * The middleware that dispatches to every route, each behind `guard` (the
 * authenticate-and-authorize middleware), followed by @koa/router's `allowedMethods` (405 with
 * `Allow` for a known path and another method, 501 for an unknown method) when `allowedMethods`.
 *
 * Routes are split by the first segment of their path (`groups`, `datasets`, ...), one
 * @koa/router per segment: a path can only match routes of its own first segment, and
 * @koa/router tests every route's pattern on each request (issue #9: ~70 patterns for each small
 * GET). A route whose first segment is a parameter goes to every router.
 *
 * A request whose path and method match exactly one route (nearly all) is dispatched directly:
 * @koa/router's `match`, on a router holding the segment's routes of that method alone, finds
 * the route; its `params` are set as the router sets them (`params`, `captures`, `routerPath`,
 * `_matchedRoute`; `matched` holds the routes of that method), and the route's guard and handler
 * run, composed once at start-up. The router's own middleware tests the patterns of every method
 * (with a `debug` call each) and composes the matched layers' chain anew on every request: about
 * a sixth of a small GET's CPU (issue #9 target 1). Everything else (no route of that method,
 * several: 404, 405, 501) goes through the segment's router and `allowedMethods` as before.
 */
export function routesMiddleware(
  routes: Route[],
  guard: (r: Route) => (ctx: Context, next: () => Promise<unknown>) => Promise<unknown>,
  opts: { allowedMethods: boolean; around?: (r: Route) => Middleware | undefined },
): Middleware {
  const bySegment = new Map<string, Route[]>();
  const anySegment: Route[] = [];
  for (const r of routes) {
    const seg = firstSegment(r.path);
    if (seg.startsWith(':') || seg.includes('(') || seg.includes('*')) anySegment.push(r);
    else bySegment.set(seg, [...(bySegment.get(seg) ?? []), r]);
  }
  type Dispatch = { byMethod: Map<string, { router: Router; chains: Map<object, Middleware> }>; full: Middleware };
  const build = (list: Route[]): Dispatch => {
    const router = new Router();
    const byMethod: Dispatch['byMethod'] = new Map();
    for (const r of [...list, ...anySegment]) {
      const handler = (ctx: Context) => r.handler(ctx);
      const around = opts.around?.(r);
      const chain = around ? [guard(r), around, handler] : [guard(r), handler];
      router.register(r.path, [r.method], chain);
      // the same route once more in a router of its method alone, for the direct dispatch
      let m = byMethod.get(r.method);
      if (!m) byMethod.set(r.method, (m = { router: new Router(), chains: new Map() }));
      m.router.register(r.path, [r.method], chain);
      m.chains.set(m.router.stack[m.router.stack.length - 1]!, compose(chain as Middleware[]));
    }
    // @koa/router's types ask for its own context type; Koa's is what runs here
    const routed = router.routes() as unknown as Middleware;
    const full = opts.allowedMethods ? compose([routed, router.allowedMethods() as unknown as Middleware]) : routed;
    return { byMethod, full };
  };
  const routers = new Map([...bySegment].map(([seg, list]) => [seg, build(list)]));
  const others = build([]);
  return (ctx, next) => {
    const path = ctx.path;
    const d = routers.get(firstSegment(path)) ?? others;
    const direct = d.byMethod.get(ctx.method);
    const m = direct?.router.match(path, ctx.method);
    const layer = m?.route && m.pathAndMethod.length === 1 ? m.pathAndMethod[0]! : undefined;
    const run = layer && direct!.chains.get(layer);
    if (!layer || !run) return d.full(ctx, next);
    const rc = ctx as Context & { captures?: string[]; routerPath?: string; _matchedRoute?: string; matched?: unknown[] };
    rc.matched = m!.path;
    rc.captures = layer.captures(path);
    rc.params = (rc.request as { params?: Record<string, string> }).params = layer.params(path, rc.captures, {});
    rc.routerPath = rc._matchedRoute = String(layer.path); // route paths are strings (Route.path)
    return run(ctx, next);
  };
}
