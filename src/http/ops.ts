/**
 * Operations over HTTP (docs/deploy.md): the request middleware (request id, one JSON log line,
 * metrics), `GET /healthz`, `GET /readyz`, `GET /metrics`, and the optional metrics port.
 *
 * Order in the app: `opsMiddleware` first (it sees the final status and bytes of every request,
 * errors included), then the error middleware and CORS; `opsRoutes` are entries of the route
 * table, behind the guard that authenticates (and sets `ctx.state.user = { name }`, which the
 * request log and `metricsAccess: user` use).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import Koa, { type Context, type Next } from 'koa';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import { H5StoreError } from '../errors.js';
import { Metrics } from '../ops/metrics.js';
import { Readiness, checkDirectory } from '../ops/readiness.js';
import type { Store } from '../store/store.js';
import { requestStarted } from './inflight.js';
import { errorMiddleware, sendJson } from './present.js';
import { hostCheck } from './hosts.js';
import { type Route, route, routesMiddleware } from './routeTable.js';

/** What the operations endpoints work with; other modules register readiness checks on it. */
export interface Ops {
  metrics: Metrics;
  readiness: Readiness;
}

/** The routes of this module (probes are logged at debug level, not info). */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** An incoming X-Request-Id is kept when it is 1-128 characters of this set, else replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * Metrics and readiness for a store, with the store's own checks registered (pass the `Metrics`
 * whose `storeObserver` the store was built with, so lock waits are counted):
 * `data directory` (exists, readable and writable), `libhdf5` (loaded and answering), and one
 * `s3 mount <path>` per mount (the bucket answers a listing).
 */
export function createOps(store: Store, metrics: Metrics = new Metrics()): Ops {
  metrics.bindStore(store);
  const readiness = new Readiness();
  readiness.register('data directory', () => checkDirectory(store.paths.root, true));
  readiness.register('libhdf5', () => `libhdf5 ${store.checkLibrary()}`);
  for (const m of store.mounts) readiness.register(`s3 mount ${m.at}`, async () => {
    await m.check();
    return m.source;
  }, { timeoutMs: 5000 });
  return { metrics, readiness };
}

/**
 * Readiness check `users file` (when the server has one): the file is readable and parses.
 * Messages never show its path.
 */
export function registerUsersFileCheck(ops: Ops, auth: Authenticator): void {
  if (!auth.hasUsers) return;
  ops.readiness.register('users file', () => {
    if (!auth.usersFileReadable()) throw new Error('users file: not readable');
    try {
      auth.refresh();
    } catch {
      throw new Error('users file: cannot be parsed');
    }
    return 'readable';
  });
}

/** The authenticated user's name, when the auth middleware set one. */
function userName(ctx: Context): string | undefined {
  const u = (ctx.state as { user?: { name?: string } }).user;
  return typeof u?.name === 'string' ? u.name : undefined;
}

/** The domain a request names, as sent (for the log; not validated here). */
function domainOf(ctx: Context): string | undefined {
  const q = ctx.query.domain;
  return (typeof q === 'string' && q) || ctx.get('x-store-domain') || ctx.get('x-hdf-domain') || undefined;
}

/** The status logged and counted for a request whose client went away before its answer. */
const CLIENT_CLOSED = 499;

/**
 * Request id, request log and metrics, for every request (outermost middleware).
 * - `X-Request-Id`: the incoming one when sane (see SANE_REQUEST_ID), else a new UUID; echoed in
 *   the response and kept in `ctx.state.requestId`.
 * - One JSON log line per request once the response is finished or aborted (status 499 when
 *   the client went away before the answer began): `reqId`, `method`,
 *   `path`, `route` (template), `status`, `ms`, `user` (when authenticated), `domain`,
 *   `bytesIn`, `bytesOut`; probes (`/healthz`, `/readyz`, `/metrics`) at debug level.
 * - Metrics: requests, durations, bytes (request body: Content-Length, or bytes read for
 *   chunked bodies; response: bytes written, headers included), in-flight requests, 503s.
 */
export function opsMiddleware(ops: Ops, logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const t0 = performance.now();
    const incoming = ctx.get('x-request-id');
    const reqId = SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = reqId;
    ctx.set('X-Request-Id', reqId);
    const sock = ctx.req.socket;
    const read0 = sock.bytesRead;
    const written0 = sock.bytesWritten;
    const ended = requestStarted(ctx.method, ctx.url);
    // a response that lasts as long as its client (GET /events) stops counting as in flight
    ctx.state.leaveInFlight = ended;
    let done = false;
    const finish = (closed = true) => {
      if (done) return;
      done = true;
      ended();
      const seconds = (performance.now() - t0) / 1000;
      // closed before the answer began: the client went away (nginx's 499, "client closed
      // request"), not the status the handler had not set yet; an answer cut off after its
      // headers keeps the status it was sent with (its bytesOut shows the cut), as in nginx
      const status = closed && !ctx.res.headersSent ? CLIENT_CLOSED : ctx.status;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? (ctx.state.route as string | undefined) ?? '(unmatched)';
      const given = ctx.req.headers['content-length'];
      const len = given === undefined || given === '' ? NaN : Number(given);
      const bytesIn = Number.isFinite(len) ? len : Math.max(0, sock.bytesRead - read0);
      const bytesOut = Math.max(0, sock.bytesWritten - written0);
      ops.metrics.observeRequest({ method: ctx.method, route: String(route), status, seconds, bytesIn, bytesOut });
      const level = PROBES.has(ctx.path) ? 'debug' : 'info';
      if (!logger.isLevelEnabled(level)) return; // the line is not built when nobody reads it
      const line: Record<string, unknown> = { reqId, method: ctx.method, path: ctx.path, route, status, ms: Math.round(seconds * 100000) / 100 };
      const user = userName(ctx);
      if (user !== undefined) line.user = user;
      const domain = domainOf(ctx);
      if (domain !== undefined) line.domain = domain;
      line.bytesIn = bytesIn;
      line.bytesOut = bytesOut;
      logger[level](line, 'request');
    };
    ctx.res.once('close', finish);
    try {
      await next();
    } catch (e) {
      // the error middleware answers everything; this only runs if it is missing
      ctx.res.removeListener('close', finish);
      finish(false);
      throw e;
    }
  };
}

/**
 * `GET /healthz`, `GET /readyz` and (per `metricsAccess`, unless `metricsPort` is set)
 * `GET /metrics`, as route-table entries (routeTable.ts): public, so the guard lets everyone
 * through but still authenticates credentials that are sent, and sets `ctx.state.user` for
 * `metricsAccess: user`.
 */
export function opsRoutes(ops: Ops, config: Config, opts: { metrics?: 'public' | 'user' | 'off' } = {}): Route[] {
  const access = opts.metrics ?? (config.metricsPort !== undefined ? 'off' : config.metricsAccess);
  const routes: Route[] = [
    // GET /healthz: the process is alive and its event loop answers
    route('GET', '/healthz', 'public', (ctx) => {
      sendJson(ctx, 200, { status: 'ok', hrefs: [] }, { plain: true });
    }),

    // GET /readyz: every registered readiness check passes (else 503 with the failing ones)
    route('GET', '/readyz', 'public', async (ctx) => {
      const r = await ops.readiness.run();
      ctx.set('Cache-Control', 'no-store');
      sendJson(ctx, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not ready', checks: r.checks, hrefs: [] }, { plain: true });
    }),
  ];
  if (access !== 'off') {
    // GET /metrics: Prometheus exposition text
    routes.push(
      route('GET', '/metrics', 'public', async (ctx) => {
        if (access === 'user' && userName(ctx) === undefined) {
          throw new H5StoreError('Unauthorized', 'GET /metrics needs an authenticated user (metricsAccess is "user")');
        }
        const m = await ops.metrics.render();
        ctx.set('Cache-Control', 'no-store');
        ctx.type = m.contentType;
        ctx.body = m.text;
      }),
    );
  }
  return routes;
}

/**
 * Serve `/metrics`, `/healthz` and `/readyz` on `metricsPort` (for a scraper on a private
 * network; no authentication there).
 * @returns the server and its URL; close it with `server.close()`.
 */
export async function startMetricsServer(ops: Ops, config: Config, logger: Logger, dataRoot: string): Promise<{ server: http.Server; url: string }> {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware(logger, dataRoot));
  app.use(hostCheck({ host: config.metricsHost ?? config.host, endpoint: undefined, allowedHosts: config.allowedHosts })); // DNS rebinding (hosts.ts)
  // no users here: a guard that lets every request through
  app.use(routesMiddleware(opsRoutes(ops, config, { metrics: 'public' }), () => (_ctx, next) => next(), { allowedMethods: false }));
  const host = config.metricsHost ?? config.host;
  const server = app.listen(config.metricsPort, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.metricsPort;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` };
}
