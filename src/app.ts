/**
 * createApp: middleware order and routes. Never listens (main.ts does).
 *
 * Order: response headers (Server, security) -> ops (request id, request log, metrics) ->
 * errors -> Host check (421 for names the server does not answer to) -> compression (large
 * text answers) -> CORS -> web viewer (static files, browser redirect of GET /; no authentication) ->
 * route table (each route behind the one authenticate-and-authorize guard; the ops routes
 * /healthz, /readyz, /metrics included) -> allowed methods (405/501).
 */
import Koa from 'koa';
import compress from 'koa-compress';
import zlib from 'node:zlib';
import querystring from 'node:querystring';
import { makeGuard } from './http/auth.js';
import { setBodyBudget } from './http/bodyBudget.js';
import { settleUnreadBody } from './http/slowClients.js';
import { conditionalGets } from './http/conditional.js';
import { corsMiddleware } from './http/cors.js';
import { hostCheck } from './http/hosts.js';
import { securityHeaders } from './http/headers.js';
import { H5STORE_VERSION } from './version.js';
import type { Deps } from './http/deps.js';
import { type Ops, createOps, opsMiddleware, opsRoutes, registerUsersFileCheck } from './http/ops.js';
import { clientAddress, trustedProxySet } from './http/forwarded.js';
import { errorMiddleware } from './http/present.js';
import { routesMiddleware } from './http/routeTable.js';
import { routeTable } from './http/routes/index.js';
import { viewerMiddleware } from './http/viewer.js';

/** Every route of the API, declared once with the permission it needs (http/routes/index.ts). */
export { routeTable };

/**
 * Parse each request's query string once, with `node:querystring` (Koa derives `ctx.query`
 * through URLSearchParams on each new request object and a request reads it a dozen times:
 * domain, flags, the log). Same result shape: repeated keys give arrays, `+` is a space,
 * malformed escapes are kept as they are. Keyed by the URL, so a rewritten URL is parsed again.
 * Results are frozen and shared between requests with the same query string (the last
 * `QUERY_CACHE` distinct ones): clients repeat the same `?domain=...` on every request.
 */
function memoizeQuery(app: Koa): void {
  type Query = Readonly<Record<string, string | readonly string[]>>;
  type Memo = { req: { url?: string }; querystring: string; _qUrl?: string; _q?: Query };
  const QUERY_CACHE = 512;
  const parsed = new Map<string, Query>();
  const parse = (qs: string): Query => {
    let q = parsed.get(qs);
    if (q === undefined) {
      // an object without prototype: a `__proto__` key is just a key
      const fresh = querystring.parse(qs) as Record<string, string | string[]>;
      for (const v of Object.values(fresh)) if (Array.isArray(v)) Object.freeze(v);
      q = Object.freeze(fresh);
      if (parsed.size >= QUERY_CACHE) parsed.clear();
      parsed.set(qs, q);
    }
    return q;
  };
  Object.defineProperty(app.request, 'query', {
    configurable: true,
    enumerable: true,
    get(this: Memo) {
      if (this._q === undefined || this._qUrl !== this.req.url) {
        this._q = parse(this.querystring);
        this._qUrl = this.req.url;
      }
      return this._q;
    },
    set(this: Memo, v: Record<string, unknown>) {
      this._q = undefined;
      this.querystring = querystring.stringify(v as querystring.ParsedUrlQueryInput);
    },
  });
}

/**
 * Compression of answers for clients that accept it (issue #28 item 9; koa-compress): brotli at
 * quality 1, else gzip at level 1 (on the JSON of a 1 MiB float32 frame, measured in
 * bench/compression.ts: 2.3x smaller at ~25 ms of compression, where brotli 4 or gzip 6 took 4 to
 * 10 times as long for 10% less), only answers of at least `minBytes` with a body Koa sends
 * (JSON and text types; never `application/octet-stream`, `application/x-hdf5`, ranges or
 * answers already encoded). Streams written past Koa (`ctx.respond = false`:
 * multi-page values) are not compressed.
 */
function compressMiddleware(minBytes: number): Koa.Middleware {
  const compressor = compress({
    threshold: minBytes,
    // text only (mime-db calls application/octet-stream compressible: binary values are not)
    filter: (type) => /^(text\/|application\/(json|javascript|xml)\b)/.test(type) || /\+json\b/.test(type),
    br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } },
    gzip: { level: 1 },
    deflate: false,
  });
  const done = () => Promise.resolve();
  // koa-compress runs only for an answer it may compress (a client that accepts an encoding, a
  // body of unknown length or of `minBytes` at least): small answers pass untouched, without the
  // `Vary` (their body is the same whatever the client accepts) and without an async step of
  // their own (the small-GET path, bench:pair with h5pyd's `Accept-Encoding: gzip, deflate`)
  return (ctx, next) => {
    if (!ctx.req.headers['accept-encoding']) return next();
    return next().then(() => {
      if (ctx.body === undefined || ctx.body === null || !ctx.writable) return;
      const length = ctx.response.length; // from Content-Length: Koa sets it for strings and buffers
      if (length !== undefined && length < minBytes) return;
      return compressor(ctx, done);
    });
  };
}

/**
 * Build the Koa application for a store and config. `ops` (metrics and readiness checks, see
 * http/ops.ts) is created when not given.
 */
export function createApp(deps: Deps, ops: Ops = createOps(deps.store)): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  memoizeQuery(app);
  registerUsersFileCheck(ops, deps.auth);
  setBodyBudget(deps.config.bodyMemoryBytes, deps.config.spoolBodyLimitBytes);

  const trusted = trustedProxySet(deps.config.trustedProxies);
  app.use((ctx, next) => {
    // a write forwarded by another worker (serve --workers N), a trusted proxy's X-Forwarded-For:
    // the client's address, not the socket's
    const ip = clientAddress(ctx.req, trusted);
    if (ip !== undefined) ctx.request.ip = ip;
    return next();
  });
  app.use(settleUnreadBody(deps.config)); // a body left unread: dropped under the slow-client rule, or the connection closes
  app.use(securityHeaders(H5STORE_VERSION));
  app.use(opsMiddleware(ops, deps.logger));
  app.use(errorMiddleware(deps.logger, deps.store.paths.root));
  app.use(hostCheck(deps.config)); // before anything answers: DNS rebinding (http/hosts.ts)
  if (deps.config.compressMinBytes > 0) app.use(compressMiddleware(deps.config.compressMinBytes));
  app.use(corsMiddleware(deps.config.corsOrigins));
  app.use(viewerMiddleware(deps)); // before the route table's guard: the viewer's files need no credentials
  app.use(routesMiddleware([...routeTable(deps), ...opsRoutes(ops, deps.config)], makeGuard(deps), { allowedMethods: true, around: conditionalGets(deps) }));
  return app;
}
