/**
 * Conditional GETs (issue #26 item 4): answers of the routes declared `conditional` carry an
 * `ETag` made of the domain file's version (store `fileVersion`: inode, size, mtime, ctime) and
 * of everything else the answer is made of (the URL with its query, the representation asked
 * for, the requester, the base URL of hrefs, this build and its settings), a `Last-Modified` (the
 * file's mtime, once it is a second old) and `Cache-Control: no-cache` (browsers ask again each
 * time, with the validators); `If-None-Match` (or, without it, `If-Modified-Since`) that still
 * matches is answered `304 Not Modified` without running the route, so a client polling a file
 * that did not change costs one stat.
 *
 * The version is taken before the route runs from the stats the read path compares too: the
 * answer is of that version or a later one, so a tag never names an answer older than itself.
 * Answers that depend on other files (datasets whose values or extent live in other files:
 * external storage, virtual datasets) carry no tag, nor do files changed in the last few ms (a
 * change in the same clock tick as an earlier one can leave the stats as they were).
 */
import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Principal } from '../auth/acl.js';
import type { Deps } from './deps.js';
import { requestOrigin } from './present.js';
import { refOf, wantsBinary } from './request.js';
import type { Route } from './routeTable.js';
import { H5STORE_VERSION } from '../version.js';

/** Whether an `If-None-Match` header value names `etag` (weak comparison, RFC 9110 13.1.2). */
export function noneMatchHits(header: string, etag: string): boolean {
  const want = etag.replace(/^W\//, '');
  for (const raw of header.split(',')) {
    const t = raw.trim();
    if (t === '*' || t.replace(/^W\//, '') === want) return true;
  }
  return false;
}

/**
 * Whether an `If-Modified-Since` value says the client has the version last modified at
 * `mtimeMs` (HTTP dates have whole seconds: only a version whose mtime is a second old carries
 * `Last-Modified`, so a later change within that second cannot hide behind it).
 */
export function modifiedSinceHits(header: string, mtimeMs: number): boolean {
  const since = Date.parse(header);
  return Number.isFinite(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}

/**
 * The ETags of the last answers: a tag is the SHA-1 of what the answer is made of (the file's
 * version, the URL, the representation, the requester, the hrefs' base) and of the build, kept
 * for the next request with the same inputs (a client polling an unchanged file; a SHA-1 per
 * request cost 3% of a small GET). Bounded: emptied whole past `max` entries.
 */
export class EtagMemo {
  private readonly known = new Map<string, string>();

  constructor(
    /** What the build and its settings add to every tag. */
    private readonly build: string,
    private readonly max = 4096,
  ) {}

  /** The weak ETag (`W/"..."`, 22 base64url characters) of the answer made of `inputs`. */
  of(inputs: string): string {
    let etag = this.known.get(inputs);
    if (etag !== undefined) return etag;
    etag = `W/"${createHash('sha1').update(inputs).update(this.build).digest('base64url').slice(0, 22)}"`;
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(inputs, etag);
    return etag;
  }
}

/**
 * The middleware that answers `route`'s GETs conditionally, or undefined when the route is not
 * declared `conditional` (routeTable.ts). Runs after the permission check: a 304 tells nothing
 * to someone who may not read the object.
 */
export function conditionalGets(d: Deps): (r: Route) => Middleware | undefined {
  // the settings and build the answers are made with: a restart with others changes every tag
  const build = createHash('sha1').update(H5STORE_VERSION).update(JSON.stringify(d.config)).digest('hex').slice(0, 8);
  const tags = new EtagMemo(build);
  return (r) => {
    if (r.method !== 'GET' || !r.conditional) return undefined;
    const datasetRoute = r.path.startsWith('/datasets/:id');
    return async (ctx: Context, next: () => Promise<unknown>) => {
      if (typeof r.conditional === 'function' && !r.conditional(ctx)) return next();
      const domain = refOf(ctx).domain;
      const v = d.store.fileVersion(domain);
      if (!v) return next();
      // a dataset whose values (or extent) live in other files: their versions are not in the tag
      if (datasetRoute && !(await d.store.datasetIsLocal(domain, ctx.params.id).catch(() => false))) return next();
      const principal = (ctx.state as { principal?: Principal }).principal;
      const etag = tags.of(`${v.tag}\u0000${ctx.url}\u0000${wantsBinary(ctx) ? 'b' : 'j'}\u0000${principal?.name ?? ''}\u0000${d.config.endpoint ?? requestOrigin(ctx)}`);
      const lastModified = v.lastModified;
      const inm = ctx.get('If-None-Match');
      const ims = ctx.get('If-Modified-Since');
      const set = () => {
        ctx.set('ETag', etag);
        ctx.set('Cache-Control', 'no-cache');
        if (lastModified) ctx.set('Last-Modified', lastModified);
      };
      if (inm ? noneMatchHits(inm, etag) : ims && lastModified && modifiedSinceHits(ims, v.mtimeMs)) {
        set();
        ctx.status = 304;
        return;
      }
      // before the route: a streamed answer writes its headers itself (with these)
      set();
      try {
        await next();
      } catch (e) {
        for (const h of ['ETag', 'Cache-Control', 'Last-Modified']) ctx.remove(h);
        throw e;
      }
      if (ctx.status !== 200 && !ctx.res.headersSent) for (const h of ['ETag', 'Cache-Control', 'Last-Modified']) ctx.remove(h);
    };
  };
}
