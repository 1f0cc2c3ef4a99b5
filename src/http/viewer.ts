/**
 * The built-in web viewer (issue #8): the static files of the h5web-based viewer under `/view/`,
 * and the redirect of a browser's `GET /` (no domain) to it.
 *
 * The viewer is built by `npm run build` (scripts/build-viewer.mjs) into `dist/viewer/`:
 * `index.html` plus `assets/<name>-<hash>.{js,css}` with precompressed `.gz`/`.br` siblings.
 * Hashed assets are cached for a year (`immutable`); `index.html` is revalidated on every load
 * (`no-cache`, with `ETag` and `Last-Modified`), so a rebuild is picked up at once. When the
 * viewer was not built the server runs as usual and `/view/` answers 503 with an HTML page that
 * says how to build it.
 *
 * The viewer's files never need credentials: register this middleware before authentication.
 */
import { send } from '@koa/send';
import type { Context, Middleware, Next } from 'koa';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { H5StoreError, notFound } from '../errors.js';
import type { Deps } from './deps.js';

/** URL prefix of the viewer. */
export const VIEW_PATH = '/view/';

/** `dist/viewer` of this package (src/http or dist/http are both two levels below the root). */
export function defaultViewerDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/viewer');
}

/** Cache-Control of content-hashed assets (their names change with their content). */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Cache-Control of everything else (index.html): always revalidate. */
const REVALIDATE = 'no-cache';
/**
 * Content-Security-Policy of the viewer's pages: scripts and API requests only from this server
 * (the credentials in sessionStorage cannot be sent elsewhere by injected content); h5web sets
 * inline styles and draws with blob:/data: images, and its ndarray-ops compiles functions at run
 * time (cwise: `new Function`), hence 'unsafe-eval'.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>h5store: viewer not built</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
code,pre{background:#f2f2f2;padding:.1rem .3rem;border-radius:3px}pre{padding:.6rem}</style></head>
<body><h1>The web viewer is not built</h1>
<p>This h5store server runs without its web viewer because the viewer's files were not built.
The HDF REST API works as usual (for example <a href="/about">/about</a>).</p>
<p>Build the viewer in the h5store folder, then reload this page (no restart needed):</p>
<pre>npm run build</pre>
<p>(<code>npm run build:viewer</code> builds only the viewer; <code>npm start</code> builds everything and serves it.)
A server started with <code>H5STORE_VIEWER_DIR</code> looks for the viewer in that directory instead.</p>
</body></html>
`;

/**
 * True when the request is a browser's page load of `GET /` without a domain: no `domain`
 * parameter or domain header, and an `Accept` header that prefers `text/html` to JSON.
 * API clients (no Accept, `*\/*`, `application/json`) are not affected.
 */
export function isBrowserRootRequest(ctx: Context): boolean {
  if (ctx.path !== '/' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return false;
  if (ctx.query.domain !== undefined || ctx.get('x-store-domain') || ctx.get('x-hdf-domain')) return false;
  // accepts() returns the first listed type on ties (`*/*`) and when Accept is absent.
  return ctx.accepts('json', 'html') === 'html';
}

/**
 * Middleware serving the viewer under `/view/` and redirecting browsers from `GET /`.
 * @param d the app's deps; `config.viewerDir` (default `dist/viewer` of the package) is read on
 *   every request, so building the viewer while the server runs makes it available at once.
 * Errors: 405 for methods other than GET/HEAD under /view/, 404 for unknown files.
 */
export function viewerMiddleware(d: Deps): Middleware {
  const dir = path.resolve(d.config.viewerDir ?? defaultViewerDir());
  const built = () => fs.existsSync(path.join(dir, 'index.html'));
  if (built()) d.logger.info({ dir }, 'web viewer at /view/');
  else d.logger.info({ dir }, 'web viewer not built (npm run build): /view/ says so');

  // not async: API requests (nearly all) pass on with no promise of their own
  return (ctx: Context, next: Next): Promise<void> | void => {
    const p = ctx.path;
    if (p === '/') {
      ctx.vary('Accept'); // GET / answers a browser differently from an API client
      if (isBrowserRootRequest(ctx)) {
        ctx.status = 302;
        ctx.redirect(VIEW_PATH);
        return;
      }
      return next();
    }
    if (p === '/view') {
      ctx.status = 301;
      ctx.redirect(VIEW_PATH + (ctx.querystring ? `?${ctx.querystring}` : ''));
      return;
    }
    if (!p.startsWith(VIEW_PATH)) return next();
    return serveFile(ctx);
  };

  async function serveFile(ctx: Context): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new H5StoreError('MethodNotAllowed', `Method ${ctx.method} is not allowed on ${ctx.path}`, { headers: { Allow: 'GET, HEAD' } });
    }
    if (!built()) {
      ctx.status = 503;
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = NOT_BUILT_PAGE;
      return;
    }
    const rel = ctx.path.slice(VIEW_PATH.length) || 'index.html';
    const hashed = rel.startsWith('assets/');
    ctx.set('Cache-Control', hashed ? IMMUTABLE : REVALIDATE);
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (hashed) ctx.vary('Accept-Encoding'); // precompressed .br/.gz siblings
    else ctx.set('Content-Security-Policy', CSP);
    let sent: string | undefined;
    try {
      sent = await send(ctx, rel, {
        root: dir,
        setHeaders: (res, _file, stats) => res.setHeader('ETag', `W/"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`),
      });
    } catch (e) {
      // @koa/send's 404 names the file's absolute path: answer with the URL path instead.
      if ((e as { status?: number }).status === 404) sent = undefined;
      else throw e;
    }
    if (!sent) {
      ctx.remove('Cache-Control');
      throw notFound(`No file ${ctx.path} in the viewer`);
    }
    if (ctx.fresh) {
      ctx.status = 304;
      ctx.body = null;
    }
  }
}
