/**
 * createApp: middleware order and routes. Never listens (main.ts does).
 *
 * Order: response headers (Server, security) -> request log -> errors -> CORS -> route table
 * (each route behind the one authenticate-and-authorize guard) -> allowed methods (405/501).
 */
import Router from '@koa/router';
import Koa from 'koa';
import { makeGuard } from './http/auth.js';
import { corsMiddleware } from './http/cors.js';
import { securityHeaders } from './http/headers.js';
import { H5STORE_VERSION } from './version.js';
import type { Deps } from './http/deps.js';
import { errorMiddleware, requestLogger } from './http/present.js';
import { type Route, mountRoutes } from './http/routeTable.js';
import { aclRoutes } from './http/routes/acls.js';
import { attributeRoutes } from './http/routes/attributes.js';
import { datasetRoutes } from './http/routes/datasets.js';
import { domainRoutes } from './http/routes/domains.js';
import { groupRoutes } from './http/routes/groups.js';
import { serviceRoutes } from './http/routes/service.js';

/** Every route of the API, declared once with the permission it needs (routeTable.ts). */
export function routeTable(deps: Deps): Route[] {
  return [...serviceRoutes(deps), ...domainRoutes(deps), ...groupRoutes(deps), ...datasetRoutes(deps), ...attributeRoutes(deps), ...aclRoutes(deps)];
}

/** Build the Koa application for a store and config. */
export function createApp(deps: Deps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const router = new Router();
  mountRoutes(router, routeTable(deps), makeGuard(deps));

  app.use(securityHeaders(H5STORE_VERSION));
  app.use(requestLogger(deps.logger));
  app.use(errorMiddleware(deps.logger, deps.store.paths.root));
  app.use(corsMiddleware(deps.config.corsOrigins));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
