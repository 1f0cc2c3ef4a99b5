/**
 * createApp: middleware order and routes. Never listens (main.ts does).
 *
 * Order: ops (request id, request log, metrics) -> errors -> CORS -> ops routes (/healthz,
 * /readyz, /metrics) -> routes -> allowed methods (405/501).
 */
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa from 'koa';
import type { Deps } from './http/deps.js';
import { type Ops, createOps, opsMiddleware, opsRoutes } from './http/ops.js';
import { errorMiddleware } from './http/present.js';
import { attributeRoutes } from './http/routes/attributes.js';
import { datasetRoutes } from './http/routes/datasets.js';
import { domainRoutes } from './http/routes/domains.js';
import { groupRoutes } from './http/routes/groups.js';
import { serviceRoutes } from './http/routes/service.js';

/**
 * Build the Koa application for a store and config. `ops` (metrics and readiness checks, see
 * http/ops.ts) is created when not given.
 */
export function createApp(deps: Deps, ops: Ops = createOps(deps.store)): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const router = new Router();
  serviceRoutes(router, deps);
  domainRoutes(router, deps);
  groupRoutes(router, deps);
  datasetRoutes(router, deps);
  attributeRoutes(router, deps);

  app.use(opsMiddleware(ops, deps.logger));
  app.use(errorMiddleware(deps.logger, deps.store.paths.root));
  if (deps.config.corsOrigin) {
    app.use(
      cors({
        origin: deps.config.corsOrigin === '*' ? (ctx) => ctx.get('Origin') || '*' : deps.config.corsOrigin,
        credentials: true,
        allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Store-domain', 'X-Hdf-domain', 'X-Request-Id'],
        exposeHeaders: ['Content-Length', 'Content-Type', 'ETag', 'X-Request-Id'],
        allowMethods: ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
      }),
    );
  }
  app.use(opsRoutes(ops, deps.config));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
