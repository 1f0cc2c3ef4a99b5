/**
 * Response headers every reply carries (wire-reference 0.6; issue #12): `Server` naming h5store,
 * and the usual security headers of an API. They are set before the handler runs, so streamed
 * replies (which write their head themselves) carry them too.
 * - `X-Content-Type-Options: nosniff`: browsers never guess a type (a JSON or binary value is
 *   never run as a script or page);
 * - `X-XSS-Protection: 1; mode=block` as HSDS sends it;
 * - `Referrer-Policy: no-referrer`: URLs (with domain paths) do not leak to other sites;
 * - `X-Frame-Options: SAMEORIGIN`: other sites cannot frame the built-in viewer's pages;
 * - `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'` on everything that is
 *   not an HTML page and sets no policy of its own (API replies are data; the viewer's pages
 *   keep their own rules).
 */
import type { Context, Next } from 'koa';

/** The value of the `Server` header: `h5store/<version>`. */
export function serverHeader(version: string): string {
  return `h5store/${version}`;
}

/** Middleware setting the headers above. */
export function securityHeaders(version: string) {
  const fixed: [string, string][] = [
    ['Server', serverHeader(version)],
    ['X-Content-Type-Options', 'nosniff'],
    ['X-XSS-Protection', '1; mode=block'],
    ['Referrer-Policy', 'no-referrer'],
    ['X-Frame-Options', 'SAMEORIGIN'],
  ];
  return async (ctx: Context, next: Next): Promise<void> => {
    // straight to node:http (these run on every request; Koa's ctx.set adds nothing here)
    const res = ctx.res;
    for (const [k, v] of fixed) res.setHeader(k, v);
    try {
      await next();
    } finally {
      // A reply that set its own policy keeps it: the viewer's pages, also when they answer 304
      // (a 304 has no Content-Type, and browsers merge its headers into the cached page's).
      if (!ctx.headerSent && !ctx.response.get('Content-Security-Policy') && !/html/i.test(ctx.response.get('Content-Type'))) {
        ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      }
    }
  };
}
