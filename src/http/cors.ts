/**
 * Cross-origin requests (issue #11, secure defaults; wire-reference 5 for what h5web needs).
 *
 * - Allowed origins come from `corsOrigins`: a list (echoed back, with credentials allowed, and
 *   `Vary: Origin`), `*` (any origin, never with `Access-Control-Allow-Credentials`), or none
 *   (default: only same-origin pages such as the built-in viewer).
 * - A preflight from an origin that is not allowed is refused (403, no CORS headers); an allowed
 *   one answers 200 with the allowed methods and headers (`Authorization` included).
 * - A state-changing request (PUT, POST, DELETE) that a browser sends from a page of an origin
 *   that is not allowed is refused (403): browsers send simple cross-site POSTs without a
 *   preflight, so CORS alone would not stop a page from writing through a user's browser.
 * The header mechanics are @koa/cors's.
 */
import cors from '@koa/cors';
import type { Context, Middleware, Next } from 'koa';
import { H5StoreError } from '../errors.js';
import { requestOrigin } from './present.js';

// Range, If-Range, If-Match, If-None-Match: ranged and conditional reads of GET /file (h5wasm's lazy
// files, fsspec) from pages of other sites
const ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'X-Store-domain', 'X-Hdf-domain', 'X-Requested-With', 'X-Request-Id', 'Range', 'If-Range', 'If-Match', 'If-None-Match'];
const EXPOSE_HEADERS = ['Content-Length', 'Content-Type', 'ETag', 'WWW-Authenticate', 'X-Request-Id', 'Content-Range', 'Accept-Ranges', 'Content-Disposition', 'Content-Encoding'];
const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS'];

/** Parse `corsOrigins`: `*`, or a list of origins (scheme://host[:port]) separated by commas/spaces. */
export function parseOrigins(text: string): { any: boolean; list: Set<string> } {
  const parts = text.split(/[,\s]+/).filter(Boolean);
  return { any: parts.includes('*'), list: new Set(parts.filter((p) => p !== '*').map((p) => p.replace(/\/$/, ''))) };
}

/** The CORS middleware for a `corsOrigins` setting. */
export function corsMiddleware(setting: string): Middleware {
  const allowed = parseOrigins(setting);
  const sameOrigin = (ctx: Context, origin: string) => origin === requestOrigin(ctx);
  const listed = (origin: string) => allowed.list.has(origin);
  const headers = cors({
    origin: (ctx) => {
      const o = ctx.get('Origin');
      if (listed(o)) return o;
      return allowed.any ? '*' : '';
    },
    credentials: (ctx) => listed(ctx.get('Origin')),
    allowHeaders: ALLOW_HEADERS,
    exposeHeaders: EXPOSE_HEADERS,
    allowMethods: METHODS,
    maxAge: 600,
  });
  const crossOrigin = async (ctx: Context, next: Next, origin: string) => {
    const ok = allowed.any || listed(origin);
    if (!ok) {
      const preflight = ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method') !== '';
      if (preflight || !['GET', 'HEAD'].includes(ctx.method)) {
        throw new H5StoreError('Forbidden', `Cross-origin requests from ${origin.slice(0, 100)} are not allowed (see the corsOrigins setting)`);
      }
      return next();
    }
    ctx.vary('Origin');
    await headers(ctx, next);
    if (ctx.method === 'OPTIONS' && ctx.status === 204) ctx.status = 200;
  };
  // not async: a same-origin or non-browser request (nearly all) passes on with no promise of its own
  return (ctx: Context, next: Next) => {
    const origin = ctx.get('Origin');
    if (!origin || sameOrigin(ctx, origin)) return next();
    return crossOrigin(ctx, next, origin);
  };
}
