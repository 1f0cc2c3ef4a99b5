/**
 * Which names the server answers to (`Host`), against DNS rebinding (issue #24 item 6).
 *
 * A page of another site whose name the attacker makes resolve to 127.0.0.1 talks to a local
 * server as a same-origin page of its own name: the browser sends `Host: evil.example:5101` and
 * `Origin: http://evil.example:5101`, which CORS takes as same-origin. In single-user mode
 * (everything allowed) such a page could read and delete every file. So a server bound to a
 * loopback address answers only requests whose `Host` is a loopback name (`localhost`,
 * 127.0.0.0/8, `[::1]`), its bound address, the host of the configured `endpoint`, or a name in
 * `allowedHosts`; any other gets 421 Misdirected Request saying which setting to change. A
 * server bound to another address (serving a network, where people use whatever name or
 * address reaches it) answers any `Host` unless `allowedHosts` is set, which then limits it
 * the same way. `allowedHosts: *` accepts any name everywhere. A request without `Host` (HTTP/1.0,
 * never a browser) passes.
 *
 * Behind a reverse proxy that passes the client's `Host` on (the shipped nginx config does), the
 * public name goes in `allowedHosts` (or `endpoint`). `X-Forwarded-Host` is never read: the
 * server trusts no proxy header (app.proxy is off).
 */
import type { Context, Middleware, Next } from 'koa';
import type { Config } from '../config.js';
import { isLoopbackHost } from '../config.js';
import { H5StoreError } from '../errors.js';

/** The names a server answers to: any, or a set (lower case, without port or trailing dot). */
export interface HostRule {
  any: boolean;
  names: Set<string>;
}

/**
 * The host part of a `Host` header value, lower case, without userinfo (as Koa drops it), the
 * port and a trailing dot (`[::1]:5101` -> `[::1]`, `u@Example.ORG.:80` -> `example.org`);
 * undefined when malformed.
 */
export function hostName(header: string): string | undefined {
  let h = header.trim().toLowerCase();
  const at = h.lastIndexOf('@');
  if (at >= 0) h = h.slice(at + 1);
  let name: string;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    if (end < 0) return undefined;
    name = h.slice(0, end + 1);
    const rest = h.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
  } else {
    const colon = h.indexOf(':');
    name = colon < 0 ? h : h.slice(0, colon);
    if (colon >= 0 && !/^\d{1,5}$/.test(h.slice(colon + 1))) return undefined;
  }
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name === '' ? undefined : name;
}

/** A configured name as a `Host` would carry it: `::1` -> `[::1]`, lower case, no port. */
function asHostName(name: string): string | undefined {
  const n = name.trim().toLowerCase();
  if (n.includes(':') && !n.startsWith('[')) return `[${n}]`; // a bare IPv6 address
  return hostName(n);
}

/** Whether a `Host` name is a loopback name (`localhost`, 127.0.0.0/8, `[::1]`). */
function isLoopbackName(name: string): boolean {
  return isLoopbackHost(name) || name === '[::1]';
}

/**
 * The names a configuration answers to (see the module comment).
 * @param config `host` (the bound address), `endpoint`, `allowedHosts` (names separated by
 *   commas or spaces, `*` for any)
 */
export function hostRule(config: Pick<Config, 'host' | 'endpoint' | 'allowedHosts'>): HostRule {
  const listed = config.allowedHosts.split(/[,\s]+/).filter(Boolean);
  const open = !isLoopbackHost(config.host) && listed.length === 0;
  const names = new Set<string>();
  for (const n of [...listed, config.host, config.endpoint ? new URL(config.endpoint).hostname : '']) {
    const h = n && n !== '*' ? asHostName(n) : undefined;
    if (h) names.add(h);
  }
  return { any: open || listed.includes('*'), names };
}

/** Whether a request's `Host` is one the rule answers to. */
export function hostAllowed(rule: HostRule, header: string | undefined): boolean {
  if (rule.any || header === undefined) return true;
  const name = hostName(header);
  return name !== undefined && (isLoopbackName(name) || rule.names.has(name));
}

/**
 * The middleware that refuses requests for names the server does not answer to: 421 with a
 * message naming the setting. Not async: an allowed request passes on with no promise of its own.
 * Answers are remembered per raw header (the last 256 distinct ones): clients repeat theirs.
 */
export function hostCheck(config: Pick<Config, 'host' | 'endpoint' | 'allowedHosts'>): Middleware {
  const rule = hostRule(config);
  const known = new Map<string, boolean>();
  const allowed = (header: string | undefined): boolean => {
    if (rule.any || header === undefined) return true;
    let ok = known.get(header);
    if (ok === undefined) {
      ok = hostAllowed(rule, header);
      if (known.size >= 256) known.clear();
      known.set(header, ok);
    }
    return ok;
  };
  return (ctx: Context, next: Next) => {
    const header = ctx.req.headers.host;
    if (allowed(header)) return next();
    const shown = JSON.stringify(String(header).slice(0, 100));
    throw new H5StoreError(
      'MisdirectedRequest',
      `This server does not answer to the name ${shown} (it answers to loopback names${rule.names.size ? ` and ${[...rule.names].join(', ')}` : ''}): add the name to allowedHosts (--allowed-hosts, H5STORE_ALLOWED_HOSTS) to serve it under that name`,
    );
  };
}
