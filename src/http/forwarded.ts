/**
 * Requests another worker of `serve --workers N` forwarded (src/cluster.ts): the address of the
 * client that sent them. Only the listener of a worker's private socket fills it in (from a
 * header it removes); a header of that name from outside is never read.
 */
import type { IncomingMessage } from 'node:http';

export const forwardedClient = new WeakMap<IncomingMessage, string>();

/** An address without the IPv4-mapped IPv6 prefix (`::ffff:10.0.0.1` -> `10.0.0.1`). */
function plain(a: string): string {
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/**
 * The trusted proxies of `trustedProxies` (comma- or space-separated addresses) as a set.
 */
export function trustedProxySet(list: string): Set<string> {
  return new Set(list.split(/[,\s]+/).filter(Boolean).map(plain));
}

/**
 * The client's address for per-address limits and logs (issue #24 items 8 and 11): the
 * connection's peer (for a request another worker forwarded, the peer of the connection it came
 * in on), or, when that peer is a trusted proxy, the right-most address of `X-Forwarded-For`
 * that is not a trusted proxy itself (what the proxy saw). Without trusted proxies the header
 * is never read: any client could write it.
 * @returns undefined when the request's own address stands (no trusted proxy in front)
 */
export function clientAddress(req: IncomingMessage, trusted: Set<string>): string | undefined {
  const peer = forwardedClient.get(req);
  if (trusted.size === 0) return peer;
  const via = plain(peer ?? req.socket.remoteAddress ?? '');
  const xff = req.headers['x-forwarded-for'];
  if (!trusted.has(via) || xff === undefined) return peer;
  const hops = (Array.isArray(xff) ? xff.join(',') : xff).split(',').map((s) => plain(s.trim())).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted.has(hops[i]!)) return hops[i];
  return hops[0] ?? peer;
}
