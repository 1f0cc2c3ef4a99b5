/**
 * The route table's dispatch (src/http/routeTable.ts `routesMiddleware`): a request that
 * matches one route of its method is dispatched without @koa/router's middleware, everything
 * else goes through it. For a table of requests (parameters, percent-encoded and empty ones,
 * trailing slashes, a parameter as first segment, other and unknown methods, unknown paths),
 * what a handler sees (`params`, `captures`, `routerPath`, `_matchedRoute`, the paths in `matched`) and what
 * the client gets (status, `Allow`) are the same as with one plain @koa/router for all routes.
 */
import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import type { Context, Middleware } from 'koa';
import compose from 'koa-compose';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Method, type Route, routesMiddleware } from '../../src/http/routeTable.js';

type Seen = Record<string, unknown>;

/** What the handler of route `path` reports of the context it was given. */
function report(path: string) {
  return (ctx: Context) => {
    const c = ctx as Context & { captures?: string[]; routerPath?: string; _matchedRoute?: string; matched?: { path: string }[] };
    const seen: Seen = {
      route: path,
      params: { ...c.params },
      requestParams: { ...(c.request as { params?: Record<string, string> }).params },
      captures: c.captures,
      routerPath: c.routerPath,
      matchedRoute: c._matchedRoute,
      // the matched layers' distinct paths (the router's list also has the path's routes of other methods)
      matched: [...new Set((c.matched ?? []).map((l) => l.path))],
      guarded: ctx.state.guarded,
    };
    ctx.body = seen;
  };
}

const DECLARED: [Method, string][] = [
  ['GET', '/groups'],
  ['GET', '/groups/'],
  ['POST', '/groups'],
  ['GET', '/groups/:id'],
  ['DELETE', '/groups/:id'],
  ['GET', '/groups/:id/links'],
  ['GET', '/groups/:id/links/:title'],
  ['PUT', '/groups/:id/links/:title'],
  ['GET', '/groups/:id/attributes/:name'],
  ['GET', '/datasets/:id/value'],
  ['PUT', '/datasets/:id/value'],
  ['GET', '/'],
  ['GET', '/:anything/acls'],
];

const guard = () => (ctx: Context, next: () => Promise<unknown>) => {
  ctx.state.guarded = true;
  return next();
};

function routes(): Route[] {
  return DECLARED.map(([method, path]) => ({ method, path, need: 'public', handler: report(path) }));
}

/** The same routes in one @koa/router, each behind the same guard: the reference. */
function plainRouter(): Middleware {
  const r = new Router();
  for (const route of routes()) r.register(route.path, [route.method], [guard(), route.handler] as never);
  return compose([r.routes() as unknown as Middleware, r.allowedMethods() as unknown as Middleware]);
}

async function serve(mw: Middleware): Promise<{ url: string; close: () => Promise<void> }> {
  const app = new Koa();
  app.use(mw);
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

async function ask(base: string, method: string, path: string): Promise<{ status: number; allow: string | null; body: unknown }> {
  const res = await fetch(base + path, { method });
  const text = await res.text();
  return { status: res.status, allow: res.headers.get('allow'), body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

const REQUESTS: [string, string][] = [
  ['GET', '/groups'],
  ['GET', '/groups/'],
  ['POST', '/groups'],
  ['GET', '/groups/g-1234'],
  ['GET', '/groups/g-1234/'],
  ['DELETE', '/groups/g-1234'],
  ['GET', '/groups/g-1234/links'],
  ['GET', '/groups/g-1234/links/a%20b%2Fc'],
  ['GET', '/groups/g-1234/links/%E2%9C%93'],
  ['GET', '/groups/g-1234/links/%zz'],
  ['PUT', '/groups/g-1234/links/x'],
  ['GET', '/groups/g-1234/attributes/%C3%A9t%C3%A9'],
  ['GET', '/datasets/d-1/value'],
  ['PUT', '/datasets/d-1/value'],
  ['GET', '/groups/g-1/acls'],
  ['GET', '/datasets/d-1/acls'],
  ['GET', '/'],
  // another method of a known path: 405 with Allow; an unknown method: 501; unknown paths: 404
  ['PUT', '/groups/g-1234'],
  ['POST', '/datasets/d-1/value'],
  ['DELETE', '/'],
  ['PATCH', '/groups/g-1234'],
  ['PROPFIND', '/groups/g-1234'],
  ['GET', '/nothing/here'],
  ['GET', '/groups/a/b/c/d'],
  ['GET', '/datasets'],
];

describe('route table dispatch', function () {
  let table: { url: string; close: () => Promise<void> };
  let reference: { url: string; close: () => Promise<void> };
  before(async () => {
    table = await serve(routesMiddleware(routes(), guard, { allowedMethods: true }));
    reference = await serve(plainRouter());
  });
  after(async () => {
    await table.close();
    await reference.close();
  });

  for (const [method, path] of REQUESTS) {
    it(`${method} ${path}: as one @koa/router answers it`, async () => {
      const got = await ask(table.url, method, path);
      const want = await ask(reference.url, method, path);
      expect(JSON.stringify(got)).to.equal(JSON.stringify(want));
    });
  }

  it('the requests above reach handlers with parameters, and are refused with 404, 405 and 501', async () => {
    const statuses = new Set<number>();
    for (const [method, path] of REQUESTS) statuses.add((await ask(table.url, method, path)).status);
    expect([...statuses].sort()).to.deep.equal([200, 404, 405, 501]);
    const decoded = await ask(table.url, 'GET', '/groups/g-1234/links/a%20b%2Fc');
    expect(decoded.body).to.deep.include({ params: { id: 'g-1234', title: 'a b/c' }, matchedRoute: '/groups/:id/links/:title', guarded: true });
  });
});
