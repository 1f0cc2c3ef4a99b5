/**
 * The route table (src/http/routes/index.ts `ROUTES`) read as a table: one literal entry per
 * route, each path and method once, the whole list frozen below (adding or changing a route
 * shows here in review).
 *
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
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Method, type Requirement, type Route, type RouteEntry, routesMiddleware } from '../../src/http/routeTable.js';
import { ROUTES } from '../../src/http/routes/index.js';

/**
 * Every route of the table as `METHOD path need options`, in the table's order: `need` is
 * `flag@scope`, `public`, or `(function)` when the request decides it; options name their
 * value or function.
 */
const FROZEN = [
  'GET /about public',
  'GET /info public',
  'GET / read@object domain=optional object=pathTarget',
  'PUT / (putNeed) jsonBody bodyDecides=update@domain|create@parent',
  'DELETE / delete@domain',
  'POST / read@domain jsonBody targets=lookupTargets',
  'GET /domains read@domain domain=optional',
  'GET /groups read@domain',
  'GET /groups/ read@domain',
  'POST /groups create@object jsonBody jsonList bodyDecides=create@object object=createdIn',
  'GET /groups/:id read@object conditional',
  'DELETE /groups/:id delete@object',
  'GET /groups/:id/links read@object conditional',
  'POST /groups/:id/links read@object jsonBody targets=groupTargets',
  'PUT /groups/:id/links create@object jsonBody targets=groupTargets',
  'DELETE /groups/:id/links delete@object',
  'GET /groups/:id/links/:name read@object',
  'PUT /groups/:id/links/:name create@object',
  'DELETE /groups/:id/links/:name delete@object',
  'GET /datasets read@domain',
  'GET /datasets/ read@domain',
  'POST /datasets create@object jsonBody jsonList bodyDecides=create@object object=createdIn',
  'DELETE /datasets/:id delete@object',
  'GET /datasets/:id read@object conditional',
  'GET /datasets/:id/shape read@object conditional',
  'PUT /datasets/:id/shape update@object',
  'GET /datasets/:id/type read@object conditional',
  'GET /datasets/:id/value read@object conditional',
  'POST /datasets/:id/value read@object',
  'PUT /datasets/:id/value update@object',
  'GET /datatypes read@domain',
  'GET /datatypes/ read@domain',
  'POST /datatypes create@object jsonBody jsonList bodyDecides=create@object object=createdIn',
  'DELETE /datatypes/:id delete@object',
  'GET /datatypes/:id read@object conditional',
  'GET /groups/:id/attributes read@object conditional',
  'POST /groups/:id/attributes read@object jsonBody targets=objIdTargets',
  'PUT /groups/:id/attributes create@object jsonBody targets=objIdTargets',
  'DELETE /groups/:id/attributes delete@object',
  'GET /groups/:id/attributes/:name read@object conditional',
  'PUT /groups/:id/attributes/:name create@object',
  'DELETE /groups/:id/attributes/:name delete@object',
  'GET /groups/:id/attributes/:name/value read@object conditional',
  'PUT /groups/:id/attributes/:name/value update@object',
  'GET /datasets/:id/attributes read@object conditional',
  'POST /datasets/:id/attributes read@object jsonBody targets=objIdTargets',
  'PUT /datasets/:id/attributes create@object jsonBody targets=objIdTargets',
  'DELETE /datasets/:id/attributes delete@object',
  'GET /datasets/:id/attributes/:name read@object conditional',
  'PUT /datasets/:id/attributes/:name create@object',
  'DELETE /datasets/:id/attributes/:name delete@object',
  'GET /datasets/:id/attributes/:name/value read@object conditional',
  'PUT /datasets/:id/attributes/:name/value update@object',
  'GET /datatypes/:id/attributes read@object conditional',
  'POST /datatypes/:id/attributes read@object jsonBody targets=objIdTargets',
  'PUT /datatypes/:id/attributes create@object jsonBody targets=objIdTargets',
  'DELETE /datatypes/:id/attributes delete@object',
  'GET /datatypes/:id/attributes/:name read@object conditional',
  'PUT /datatypes/:id/attributes/:name create@object',
  'DELETE /datatypes/:id/attributes/:name delete@object',
  'GET /datatypes/:id/attributes/:name/value read@object conditional',
  'PUT /datatypes/:id/attributes/:name/value update@object',
  'GET /acls readACL@domain',
  'GET /acls/:user (readEntryOfDomain)',
  'PUT /acls/:user updateACL@domain jsonBody',
  'PUT /acls updateACL@domain jsonBody',
  'GET /groups/:id/acls readACL@object',
  'GET /groups/:id/acls/:user (readEntryOfObject)',
  'PUT /groups/:id/acls/:user updateACL@object jsonBody',
  'PUT /groups/:id/acls updateACL@object jsonBody',
  'GET /datasets/:id/acls readACL@object',
  'GET /datasets/:id/acls/:user (readEntryOfObject)',
  'PUT /datasets/:id/acls/:user updateACL@object jsonBody',
  'PUT /datasets/:id/acls updateACL@object jsonBody',
  'GET /datatypes/:id/acls readACL@object',
  'GET /datatypes/:id/acls/:user (readEntryOfObject)',
  'PUT /datatypes/:id/acls/:user updateACL@object jsonBody',
  'PUT /datatypes/:id/acls updateACL@object jsonBody',
  'GET /file read@domain',
  'GET /h5grove public',
  'GET /h5grove/meta read@object domainParam=file object=objectAtPath',
  'GET /h5grove/attr read@object domainParam=file object=objectAtPath',
  'GET /h5grove/data read@object domainParam=file object=objectAtPath',
  'GET /h5grove/stats read@object domainParam=file object=objectAtPath',
  'GET /h5grove/paths read@object domainParam=file object=objectAtPath',
  'GET /events read@domain',
];

/** A route's `need` (or a `bodyDecides` item) as the frozen list writes it. */
function needText(n: Requirement | ((ctx: Context) => Requirement)): string {
  return n === 'public' ? 'public' : typeof n === 'function' ? `(${n.name})` : `${n.flag}@${n.on}`;
}

/** A route as a line of the frozen list. */
function line(r: RouteEntry): string {
  const o: string[] = [];
  if (r.domain) o.push(`domain=${r.domain}`);
  if (r.domainParam) o.push(`domainParam=${r.domainParam}`);
  if (r.jsonBody) o.push('jsonBody');
  if (r.jsonList) o.push('jsonList');
  if (r.bodyDecides) o.push(`bodyDecides=${r.bodyDecides.map(needText).join('|')}`);
  if (r.object) o.push(`object=${r.object.name}`);
  if (r.targets) o.push(`targets=${r.targets.name}`);
  if (r.conditional) o.push(typeof r.conditional === 'function' ? `conditional=${r.conditional.name}` : 'conditional');
  return [r.method, r.path, needText(r.need), ...o].join(' ');
}

describe('route table (src/http/routes/index.ts)', () => {
  const source = fs.readFileSync(new URL('../../src/http/routes/index.ts', import.meta.url), 'utf8');
  const literal = source.slice(source.indexOf('export const ROUTES'), source.indexOf('\n];', source.indexOf('export const ROUTES')));

  it('matches the frozen list, in order', () => {
    expect(ROUTES.map(line)).to.deep.equal(FROZEN);
  });

  it('is one literal list: each route is one entry whose method and path are written out once', () => {
    expect(literal, 'the ROUTES literal').to.have.length.greaterThan(1000);
    // no entry built by a loop or a template
    expect(literal).not.to.match(/`|\bfor\b|\.map\(|\.flatMap\(|\.\.\./);
    expect(literal.match(/\{ method: '/g)?.length, 'entries written in the literal').to.equal(ROUTES.length);
    for (const r of ROUTES) {
      const written = literal.split(`{ method: '${r.method}', path: '${r.path}', `).length - 1;
      expect(written, `${r.method} ${r.path}`).to.equal(1);
    }
  });

  it('has each method and path once, every handler a named function, every need declared', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size, 'no method and path twice').to.equal(keys.length);
    for (const r of ROUTES) {
      expect(r.handler, `${r.method} ${r.path}`).to.be.a('function');
      expect(r.handler.name, `${r.method} ${r.path}: a named handler`).to.match(/^[a-z]\w*$/i);
      expect(r.need, `${r.method} ${r.path}`).to.exist;
      if (typeof r.need === 'function') expect(r.need.name, `${r.method} ${r.path}: a named need`).to.match(/^[a-z]\w*$/i);
    }
  });
});

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
