/**
 * createApp: middleware order and routes. Never listens (main.ts does).
 *
 * Order: request log -> errors -> CORS -> web viewer (static files, browser redirect of GET /)
 * -> routes -> allowed methods (405/501).
 */
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa from 'koa';
import type { Deps } from './http/deps.js';
import { errorMiddleware, requestLogger } from './http/present.js';
import { attributeRoutes } from './http/routes/attributes.js';
import { datasetRoutes } from './http/routes/datasets.js';
import { domainRoutes } from './http/routes/domains.js';
import { groupRoutes } from './http/routes/groups.js';
import { serviceRoutes } from './http/routes/service.js';
import { viewerMiddleware } from './http/viewer.js';

/** Build the Koa application for a store and config. */
export function createApp(deps: Deps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const router = new Router();
  serviceRoutes(router, deps);
  domainRoutes(router, deps);
  groupRoutes(router, deps);
  datasetRoutes(router, deps);
  attributeRoutes(router, deps);

  app.use(requestLogger(deps.logger));
  app.use(errorMiddleware(deps.logger, deps.store.paths.root));
  if (deps.config.corsOrigin) {
    app.use(
      cors({
        origin: deps.config.corsOrigin === '*' ? (ctx) => ctx.get('Origin') || '*' : deps.config.corsOrigin,
        credentials: true,
        allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Store-domain', 'X-Hdf-domain'],
        exposeHeaders: ['Content-Length', 'Content-Type', 'ETag'],
        allowMethods: ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
      }),
    );
  }
  app.use(viewerMiddleware(deps)); // before authentication: the viewer's files need no credentials
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
