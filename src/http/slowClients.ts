/**
 * Clients that hold connections without sending (issue #24 item 11: slow-header and slow-body
 * connections were held 60 to 300 s, Node's defaults, so a slowloris could take every
 * descriptor).
 *
 * - Headers: `headersTimeoutMs` (Node's `headersTimeout`, checked every second instead of every
 *   30 s), then the connection is closed.
 * - Bodies: while a body is being read, a client that sends nothing for `bodyTimeoutMs`, or less
 *   than `minBodyBytesPerSecond` on average once `bodyTimeoutMs` have passed, gets 408 and its
 *   connection is closed (`watchBody`). Node's `requestTimeout` (300 s for the whole request) is
 *   off: a 16 GiB upload takes longer on most links, and the rate rule bounds slow ones.
 * - A body the server answers without reading (a refusal before the body, `bodyDecides` in
 *   auth.ts) is not read to its end: the connection closes after the answer when more than
 *   `DRAIN_BYTES` are left (a lingering close: what the client still sends is dropped for at
 *   most `LINGER_MS`, so the answer reaches it; `lingerOnClose`), else the rest is read and
 *   dropped under the same rule (`settleUnreadBody`).
 * - Connections: at most `maxConnectionsPerAddress` open from one client address (trusted
 *   proxies excepted) and `maxConnections` in all (`limitConnections`); more are closed at once.
 */
import type { Context, Next } from 'koa';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.js';
import { H5StoreError } from '../errors.js';
import { trustedProxySet } from './forwarded.js';

/** Bytes of an unread body the server still reads (and drops) after answering; beyond, it closes the connection. */
export const DRAIN_BYTES = 64 * 1024;

/** How often the body rule is checked (ms). */
const CHECK_MS = 500;

/** The settings `watchBody` applies. */
export type BodyTimeouts = Pick<Config, 'bodyTimeoutMs' | 'minBodyBytesPerSecond'>;

/**
 * Watch a request body while it is read: `seen(n)` for every chunk; `stop()` once it is read.
 * When the client is too slow (module comment), the request is destroyed with a
 * RequestTimeout H5StoreError, which the reader's iteration throws.
 * @returns the callbacks; a no-op watcher when `bodyTimeoutMs` is 0.
 */
export function watchBody(ctx: Context, t: BodyTimeouts): { seen(n: number): void; stop(): void } {
  if (t.bodyTimeoutMs <= 0) return { seen: () => undefined, stop: () => undefined };
  const w: Watched = { ctx, t, start: performance.now(), last: 0, bytes: 0 };
  w.last = w.start;
  watched.add(w);
  checker ??= setInterval(checkBodies, CHECK_MS).unref();
  return {
    seen(n: number) {
      w.bytes += n;
      w.last = performance.now();
    },
    stop() {
      watched.delete(w);
    },
  };
}

/** A body being read (`watchBody`). */
interface Watched {
  ctx: Context;
  t: BodyTimeouts;
  start: number;
  last: number;
  bytes: number;
}

/** The bodies being read now; one timer checks them all. */
const watched = new Set<Watched>();
let checker: NodeJS.Timeout | undefined;

/** Destroy the requests whose bodies come too slowly (module comment). */
function checkBodies(): void {
  const now = performance.now();
  for (const w of watched) {
    const { t } = w;
    let why: string | undefined;
    if (now - w.last > t.bodyTimeoutMs) why = `no byte of the request body for ${t.bodyTimeoutMs} ms (bodyTimeoutMs)`;
    else if (now - w.start > t.bodyTimeoutMs && t.minBodyBytesPerSecond > 0 && w.bytes / ((now - w.start) / 1000) < t.minBodyBytesPerSecond) {
      why = `the request body arrives at ${Math.round(w.bytes / ((now - w.start) / 1000))} bytes/s, below ${t.minBodyBytesPerSecond} (minBodyBytesPerSecond)`;
    }
    if (!why) continue;
    watched.delete(w);
    w.ctx.set('Connection', 'close');
    w.ctx.req.destroy(new H5StoreError('RequestTimeout', `Request body too slow: ${why}`));
  }
}

/**
 * Middleware (first in the chain): once the answer is decided, a request body nobody read is
 * either read and dropped under `watchBody`'s rule (up to `DRAIN_BYTES`) or the connection is
 * closed after the answer, so neither a refused large body nor a slow one holds the connection.
 */
export function settleUnreadBody(t: BodyTimeouts) {
  const settle = (ctx: Context) => {
    const req = ctx.req;
    if (req.complete || req.destroyed || req.readableFlowing) return;
    const length = Number(req.headers['content-length'] ?? NaN);
    if (!(length <= DRAIN_BYTES)) {
      ctx.set('Connection', 'close');
      lingerOnClose(req.socket);
    } else {
      const w = watchBody(ctx, t);
      req.on('data', (b: Buffer) => w.seen(b.length));
      req.once('end', () => w.stop());
      req.once('close', () => w.stop());
      req.resume();
    }
  };
  return (ctx: Context, next: Next): Promise<void> => {
    // requests without a body (nearly every GET) pass straight through
    if (!hasBody(ctx.req.headers)) return next();
    return next().finally(() => settle(ctx));
  };
}

/** Longest time a connection closed after an answer still reads (and drops) what its client sends (ms). */
export const LINGER_MS = 2000;

/**
 * A lingering close (as nginx's `lingering_close`; RFC 9112 section 9.6): when Node's server
 * ends a connection after an answer (`Connection: close`, `socket.destroySoon`), it sends its FIN
 * and then reads and drops what the client is still sending, for at most LINGER_MS or until the
 * client closes, before the socket is destroyed. Destroying it at once with body bytes unread
 * makes the kernel answer them with a reset, which can discard the answer before the client has
 * read it: a client still uploading a refused body saw `EPIPE` instead of the 503/401.
 */
export function lingerOnClose(sock: Socket): void {
  sock.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
    this.on('data', () => undefined);
    this.resume();
  };
}

/** Whether the request announces a body (a Content-Length above 0, or chunked). */
function hasBody(h: { 'content-length'?: string; 'transfer-encoding'?: string }): boolean {
  if (h['transfer-encoding'] !== undefined) return true;
  const cl = h['content-length'];
  return cl !== undefined && cl !== '0';
}

/**
 * Apply the connection limits and header timeout to a server (main.ts): `headersTimeoutMs`
 * (checked every second), no whole-request timeout, at most `maxConnections` connections and
 * `maxConnectionsPerAddress` from one address (0: no limit).
 */
export function limitConnections(server: Server, c: Pick<Config, 'headersTimeoutMs' | 'maxConnections' | 'maxConnectionsPerAddress' | 'trustedProxies'>): void {
  server.headersTimeout = c.headersTimeoutMs;
  server.requestTimeout = 0;
  if (c.maxConnections > 0) server.maxConnections = c.maxConnections;
  if (c.maxConnectionsPerAddress <= 0) return;
  const open = new Map<string, number>();
  const proxies = trustedProxySet(c.trustedProxies);
  server.on('connection', (socket: Socket) => {
    const addr = socket.remoteAddress ?? '';
    if (proxies.has(addr.startsWith('::ffff:') ? addr.slice(7) : addr)) return; // a trusted proxy carries many clients
    const n = (open.get(addr) ?? 0) + 1;
    if (n > c.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    open.set(addr, n);
    socket.once('close', () => {
      const m = (open.get(addr) ?? 1) - 1;
      if (m > 0) open.set(addr, m);
      else open.delete(addr);
    });
  });
}
