/**
 * `h5store serve --workers N` (N > 1): N processes (`node:cluster`) serve one port; docs/deploy.md
 * "Several processes on one machine".
 *
 * - The primary loads no data: it picks the port (a free one for port 0, so every worker and
 *   every restarted worker binds the same), writes the samples when asked, forks the workers,
 *   prints the one "listening on" line when all are up, restarts a worker that dies, and stops
 *   them all on SIGTERM/SIGINT (or when stdin closes, with `--exit-with-stdin`).
 * - The workers share the port (the primary hands out connections round-robin). Each answers
 *   reads itself (GET, HEAD, OPTIONS, and the POST routes the route table marks `read`: point
 *   reads, bulk link/attribute reads, `POST /` path lookups). A write is answered by the worker
 *   that owns its domain (a hash of the normalized domain name modulo N): any other worker
 *   forwards it, as plain HTTP (method, URL, headers, body streamed in; status, headers, body
 *   streamed out), to the owner's private Unix socket in a runtime directory only this user can
 *   enter. The owner runs it through the whole app (authentication, ACLs, the request log), so
 *   writes to one file stay in one process: no cross-process lock hand-over, no reopening after
 *   each other's writes. Reads in the other workers see those writes through the store's file
 *   change check (the lock file's commit counter), as with any two processes.
 * - Every worker answers as one process would (store/session/changeFeed.ts): deletions, creations and ACL
 *   changes are appended to a change feed in the runtime directory before they are answered, and
 *   applied by every worker at the start of its next request.
 * - A forwarded write whose owner is not there (restarting) waits for it up to `lockWaitMs` (the
 *   body is not read until the owner accepts the connection), then 503 with Retry-After; an owner
 *   that dies while answering gives 502 (the write may or may not have been made: it was
 *   journaled, so it is all or nothing).
 * - Stopping: the primary asks every worker to drain (stop accepting, finish what is in flight,
 *   forwarded writes included, since every private socket still answers), then to exit (close
 *   the private socket and the files). Workers ignore SIGINT/SIGTERM themselves (a terminal's
 *   Ctrl-C reaches the whole process group): the primary decides. A worker whose primary went
 *   away exits.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Router from '@koa/router';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { forwardedClient } from './http/forwarded.js';
import { readFlightRecord } from './ops/flightRecorder.js';
import type { Route } from './http/routeTable.js';
import { normalizeDomain } from './store/objects/paths.js';

/** What the primary tells a worker in its environment. */
const ENV = {
  index: 'H5STORE_WORKER_INDEX',
  count: 'H5STORE_WORKER_COUNT',
  dir: 'H5STORE_WORKER_DIR',
  port: 'H5STORE_WORKER_PORT',
  metricsPort: 'H5STORE_WORKER_METRICS_PORT',
  family: 'H5STORE_WORKER_FAMILY',
} as const;

/** The header that carries the client's address to the owner (read only on the private socket). */
const CLIENT_HEADER = 'x-h5store-forwarded-client';

/** The file of the workers' change feed in the runtime directory (store/session/changeFeed.ts). */
const CHANGE_FEED = 'changes.log';

/** Longest wait for in-flight requests when stopping, then connections are closed. */
const DRAIN_MS = 10_000;

/** A worker death the primary saw: the worker's index, its signal or exit code, how often. */
interface Death {
  worker: number;
  cause: string;
  count: number;
}

type ToWorker = { type: 'drain' } | { type: 'exit' } | { type: 'deaths'; deaths: Death[] };
type ToPrimary = { type: 'ready'; url: string } | { type: 'drained' };

// ---------------------------------------------------------------------------------------------
// Which requests are writes, and who owns a domain

/**
 * Whether a route changes something: not a GET, and it needs a flag other than `read`/`readACL`,
 * or one decided per request (`PUT /`: create or flush).
 */
export function isWriteRoute(r: Route): boolean {
  if (r.method === 'GET') return false;
  if (typeof r.need === 'function') return true;
  if (r.need === 'public') return false;
  return r.need.flag !== 'read' && r.need.flag !== 'readACL';
}

/** A test of (method, raw path) against the write routes of the route table. */
export function writeMatcher(routes: Route[]): (method: string, path: string) => boolean {
  const router = new Router();
  for (const r of routes) if (isWriteRoute(r)) router.register(r.path, [r.method], [() => undefined]);
  return (method, p) => router.match(p, method).route;
}

/**
 * The normalized domain a request names, in the server's order (`domain` query parameter, then
 * `X-Store-domain`, then `X-Hdf-domain`; `/` when none); undefined when it is invalid (the app
 * answers that with a 400 wherever it arrives).
 */
export function domainKey(url: string, headers: http.IncomingHttpHeaders): string | undefined {
  const q = url.indexOf('?');
  let raw: string | undefined;
  if (q >= 0) {
    const all = new URLSearchParams(url.slice(q + 1)).getAll('domain');
    if (all.length > 1) return undefined;
    if (all[0]) raw = all[0];
  }
  if (raw === undefined) {
    const h = headers['x-store-domain'] || headers['x-hdf-domain'];
    if (Array.isArray(h)) return undefined;
    raw = h || '/';
  }
  try {
    return normalizeDomain(raw, { allowRoot: true });
  } catch {
    return undefined;
  }
}

/** The worker (0..n-1) that writes a domain: FNV-1a of its UTF-8 bytes, modulo n. */
export function ownerOf(domain: string, n: number): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(domain)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % n;
}

/** The flight record of worker `i` (ops/flightRecorder.ts): its last requests, read when it dies. */
function recordOf(dir: string, i: number): string {
  return path.join(dir, `w${i}.requests`);
}

/** The private socket of worker `i`. */
function socketOf(dir: string, i: number): string {
  return path.join(dir, `w${i}.sock`);
}

// ---------------------------------------------------------------------------------------------
// Forwarding

/** Headers of one hop only, not passed on. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'expect', 'te', 'trailer', 'http2-settings'];

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** An answer of the forwarder itself, shaped like the app's errors. */
function answer(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ status, message, hrefs: [] });
  // the request's body may not have been read to its end: the connection cannot carry another request
  res.shouldKeepAlive = false;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', Connection: 'close', ...headers });
  res.end(body);
  // a client still sending that body would keep the connection (and a draining worker) forever
  res.once('finish', () => setTimeout(() => res.socket?.destroy(), 1000).unref());
}

export interface ForwardOptions {
  index: number;
  count: number;
  dir: string;
  /** The write test (writeMatcher of the app's route table). */
  isWrite: (method: string, path: string) => boolean;
  /** Longest wait for an owner that is not accepting connections (restarting), ms. */
  waitMs: number;
  log: Logger;
}

/**
 * The public port's listener of a worker: reads and the writes it owns go to `app`; other
 * writes to their owner's private socket.
 */
export function forwardingListener(app: RequestListener, o: ForwardOptions): RequestListener {
  const agents = new Map<number, http.Agent>();
  const agentOf = (i: number) => {
    let a = agents.get(i);
    if (!a) agents.set(i, (a = new http.Agent({ keepAlive: true, maxSockets: 256 })));
    return a;
  };
  return (req, res) => {
    const m = req.method ?? 'GET';
    if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return app(req, res);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    if (!o.isWrite(m, q < 0 ? url : url.slice(0, q))) return app(req, res);
    const domain = domainKey(url, req.headers);
    if (domain === undefined) return app(req, res);
    const owner = ownerOf(domain, o.count);
    if (owner === o.index) return app(req, res);
    forward(req, res, owner, domain, agentOf(owner), o);
  };
}

function forward(req: IncomingMessage, res: ServerResponse, owner: number, domain: string, agent: http.Agent, o: ForwardOptions): void {
  const headers: http.OutgoingHttpHeaders = { ...req.headers };
  for (const h of HOP_BY_HOP) delete headers[h];
  headers[CLIENT_HEADER] = req.socket.remoteAddress ?? '';
  const deadline = performance.now() + o.waitMs;
  let done = false;
  let upstream: http.ClientRequest | undefined;
  res.once('close', () => {
    done = true;
    if (!res.writableFinished) upstream?.destroy();
  });
  req.on('error', () => upstream?.destroy()); // the client went away
  const attempt = () => {
    if (done) return;
    let piped = false;
    const preq = http.request({ socketPath: socketOf(o.dir, owner), method: req.method, path: req.url, headers, agent });
    upstream = preq;
    // The body is read only once the owner took the connection, so a refused one can be retried.
    const pipe = () => {
      piped = true;
      req.pipe(preq);
    };
    preq.once('socket', (s) => {
      if ((s as net.Socket).connecting) s.once('connect', pipe);
      else pipe();
    });
    preq.once('response', (pres) => {
      const out: http.OutgoingHttpHeaders = { ...pres.headers };
      for (const h of [...HOP_BY_HOP, 'transfer-encoding']) delete out[h];
      res.writeHead(pres.statusCode ?? 502, pres.statusMessage, out);
      pres.pipe(res);
      pres.on('error', () => res.destroy());
      pres.once('aborted', () => res.destroy());
      pres.once('end', () => {
        // The owner answered before the whole body came (a refusal): the rest is read and dropped
        // here, as Node does for its own early answers, or the client's next request on this
        // kept-alive connection would never be read (it waited behind the unread body).
        if (req.complete) return;
        req.unpipe(preq);
        preq.destroy();
        req.resume();
      });
    });
    let failed = false;
    preq.on('error', (e: NodeJS.ErrnoException) => {
      if (done || failed) return;
      failed = true;
      const refused = !piped && (e.code === 'ECONNREFUSED' || e.code === 'ENOENT');
      if (refused && performance.now() < deadline) {
        void sleep(50).then(attempt);
        return;
      }
      if (refused) {
        o.log.warn({ owner, domain, err: e.code }, 'the worker that writes this domain is not answering (503)');
        answer(res, 503, `The worker process that writes ${domain} is restarting; retry later`, { 'Retry-After': '1' });
      } else {
        o.log.warn({ owner, domain, err: e.message }, 'the worker that writes this domain failed while answering (502)');
        answer(res, 502, `The worker process that writes ${domain} stopped while answering; the write was made completely or not at all: read the domain to know which`);
      }
    });
  };
  attempt();
}

// ---------------------------------------------------------------------------------------------
// Worker

/** Run a worker (the `serve` action in a process the primary forked). */
export async function runWorker(base: Config): Promise<void> {
  const index = Number(process.env[ENV.index]);
  const count = Number(process.env[ENV.count]);
  const dir = process.env[ENV.dir]!;
  const metricsPort = process.env[ENV.metricsPort];
  const config: Config = { ...base, port: Number(process.env[ENV.port]), metricsPort: metricsPort ? Number(metricsPort) : undefined, samples: false, workers: count };
  // The primary decides when to stop (a terminal's Ctrl-C reaches every process of the group).
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
  // What the primary asked before we were up is done once we are.
  const asked = { drain: false, exit: false };
  let act: (m: { type: 'drain' | 'exit' }) => void = (m) => (asked[m.type] = true);
  let deaths: Death[] = [];
  let tellDeaths = () => undefined as void;
  process.on('message', (m: ToWorker) => {
    if (m?.type === 'drain' || m?.type === 'exit') act(m);
    else if (m?.type === 'deaths') {
      deaths = m.deaths;
      tellDeaths();
    }
  });
  const logger = pino({ level: config.logLevel }).child({ worker: index });
  const { startServer } = await import('./main.js');
  const { SharedChangeLog } = await import('./store/session/changeFeed.js');
  const running = await startServer(config, logger, {
    index,
    changes: new SharedChangeLog(path.join(dir, CHANGE_FEED)),
    family: Number(process.env[ENV.family]) || undefined,
    recordFile: recordOf(dir, index),
    listener: (app, routes) => forwardingListener(app, { index, count, dir, isWrite: writeMatcher(routes), waitMs: Math.max(config.lockWaitMs, 1000), log: logger }),
  });

  // deaths of the workers, counted in every worker's /metrics
  tellDeaths = () => running.ops.metrics.setWorkerDeaths(deaths);
  if (deaths.length) tellDeaths();

  const appCallback = running.app.callback();
  const sock = socketOf(dir, index);
  fs.rmSync(sock, { force: true });
  const internal = http.createServer((req, res) => {
    const client = req.headers[CLIENT_HEADER];
    delete req.headers[CLIENT_HEADER];
    if (typeof client === 'string' && client) forwardedClient.set(req, client);
    appCallback(req, res);
  });
  internal.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    internal.once('error', reject);
    internal.listen(sock, resolve);
  });

  const send = (m: ToPrimary) => {
    if (process.connected) process.send!(m);
  };
  let exiting = false;
  const exit = async () => {
    if (exiting) return;
    exiting = true;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => internal.closeAllConnections(), 2000);
      internal.close(() => {
        clearTimeout(t);
        resolve();
      });
      internal.closeIdleConnections();
    });
    await running.store.closeWhenIdle(); // a libhdf5 call on the worker thread ends first
    // the primary removes the directory; when it was killed, the last worker out does
    fs.rmSync(sock, { force: true });
    fs.rmSync(recordOf(dir, index), { force: true });
    try {
      // the change feed and flight records are the workers' other files there; other workers'
      // sockets mean they are still up
      if (fs.readdirSync(dir).every((n) => n === CHANGE_FEED || n.endsWith('.requests'))) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone already
    }
    process.exit(0);
  };
  act = (m) => {
    if (m.type === 'drain') void running.drain(DRAIN_MS).then(() => send({ type: 'drained' }));
    else void exit();
  };
  process.on('disconnect', () => {
    // the primary is gone: nobody restarts or stops us
    void running.drain(2000).then(exit);
  });
  send({ type: 'ready', url: running.url });
  if (asked.drain) act({ type: 'drain' });
  if (asked.exit) act({ type: 'exit' });
}

// ---------------------------------------------------------------------------------------------
// Primary

/** A free TCP port on `host` (port 0 picked once, so every worker binds the same port). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Run the primary of `serve --workers N`; prints "h5store listening on <url>" once all workers listen. */
export async function runPrimary(config: Config, opts: { exitWithStdin: boolean }): Promise<void> {
  const logger = pino({ level: config.logLevel }).child({ primary: true });
  const n = config.workers;
  if (config.samples) {
    const { Store } = await import('./store/store.js');
    const { ensureSamples } = await import('./samples.js');
    const store = new Store({ ...config, mounts: [], log: logger });
    const written = await ensureSamples(store);
    store.close();
    if (written.length) logger.info({ domains: written }, 'wrote sample domains');
  }
  const port = config.port === 0 ? await freePort(config.host) : config.port;
  const metricsPort = config.metricsPort === 0 ? await freePort(config.metricsHost ?? config.host) : config.metricsPort;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-workers-'));
  // the workers' shared number in their file locks (xlock.ts FAMILY_BASE): 1..2^30
  const family = 1 + (randomBytes(4).readUInt32LE(0) % (2 ** 30 - 1));
  fs.chmodSync(dir, 0o700);
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  cluster.setupPrimary({ stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

  const slots: (Worker | undefined)[] = new Array(n).fill(undefined);
  const started: boolean[] = new Array(n).fill(false);
  /** Whether the current process of each slot said it is up (it hears messages only from then on). */
  const up: boolean[] = new Array(n).fill(false);
  const lastFork: number[] = new Array(n).fill(0);
  const backoff: number[] = new Array(n).fill(0);
  let stopping = false;
  let url = '';
  let readyAll: () => void = () => undefined;
  let failStart: (e: Error) => void = () => undefined;
  const allReady = new Promise<void>((resolve, reject) => {
    readyAll = resolve;
    failStart = reject;
  });
  const drained = new Set<number>();
  /** Worker deaths so far (every worker counts them in /metrics). */
  const deaths: Death[] = [];
  let onDrained: () => void = () => undefined;
  let onExited: () => void = () => undefined;

  const fork = (i: number) => {
    lastFork[i] = performance.now();
    const w = cluster.fork({
      [ENV.index]: String(i),
      [ENV.count]: String(n),
      [ENV.dir]: dir,
      [ENV.port]: String(port),
      [ENV.metricsPort]: metricsPort === undefined ? '' : String(metricsPort),
      [ENV.family]: String(family),
    });
    slots[i] = w;
    up[i] = false;
    w.on('message', (m: ToPrimary) => {
      if (m?.type === 'ready') {
        up[i] = true;
        if (deaths.length) w.send({ type: 'deaths', deaths } satisfies ToWorker);
        if (stopping) w.send({ type: 'drain' } satisfies ToWorker); // (re)started while we stop
        url = m.url;
        if (started[i]) logger.info({ worker: i, pid: w.process.pid }, 'worker restarted');
        started[i] = true;
        if (started.every(Boolean)) readyAll();
      } else if (m?.type === 'drained') {
        drained.add(i);
        onDrained();
      }
    });
    w.on('exit', (code, signal) => {
      if (slots[i] === w) slots[i] = undefined;
      if (stopping) {
        drained.add(i);
        onDrained();
        onExited();
        return;
      }
      if (!started[i]) {
        failStart(new Error(`worker ${i} exited before it listened (${signal ?? `exit code ${code}`})`));
        return;
      }
      // a worker that keeps dying right after its start is restarted ever more slowly (at most every 5 s)
      const lived = performance.now() - lastFork[i];
      backoff[i] = lived < 5000 ? Math.min(Math.max(backoff[i] * 2, 200), 5000) : 0;
      // what it was doing: the requests in flight and the last ones before them (its flight record)
      const record = readFlightRecord(recordOf(dir, i));
      const cause = signal ?? `exit code ${code}`;
      const d = deaths.find((x) => x.worker === i && x.cause === cause);
      if (d) d.count++;
      else deaths.push({ worker: i, cause, count: 1 });
      for (const [j, other] of slots.entries()) if (other?.isConnected() && up[j]) other.send({ type: 'deaths', deaths } satisfies ToWorker);
      logger.error(
        { worker: i, pid: w.process.pid, code, signal, restartInMs: backoff[i], inFlight: record.inFlight, lastRequests: record.last.slice(-20) },
        'worker died; restarting it',
      );
      setTimeout(() => !stopping && fork(i), backoff[i]);
    });
  };

  let stopped: Promise<void> | undefined;
  const stop = (why: string) =>
    (stopped ??= (async () => {
      stopping = true;
      logger.info({ why }, 'stopping the workers');
      await allReady.catch(() => undefined); // a worker still starting would not hear us
      const live = () => slots.filter((w): w is Worker => !!w && w.isConnected());
      const waitFor = (cond: () => boolean, ms: number, set: (f: () => void) => void) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(resolve, ms);
          const check = () => {
            if (cond()) {
              clearTimeout(t);
              resolve();
            }
          };
          set(check);
          check();
        });
      // 1. every worker stops accepting and answers what it has (forwarded writes still reach their owner)
      for (const [i, w] of slots.entries()) if (w?.isConnected() && up[i]) w.send({ type: 'drain' } satisfies ToWorker);
      await waitFor(() => slots.every((w, i) => !w || drained.has(i)), DRAIN_MS + 2000, (f) => (onDrained = f));
      // 2. then each closes its private socket and its files
      for (const w of live()) w.send({ type: 'exit' } satisfies ToWorker);
      await waitFor(() => slots.every((w) => !w), 5000, (f) => (onExited = f));
      for (const w of slots) w?.process.kill('SIGKILL');
      removeDir();
      process.exit(0);
    })());

  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  if (opts.exitWithStdin) {
    process.stdin.on('end', () => void stop('stdin closed'));
    process.stdin.on('error', () => void stop('stdin closed'));
    process.stdin.resume();
  }

  for (let i = 0; i < n; i++) fork(i);
  try {
    await allReady;
  } catch (e) {
    if (stopping) return;
    stopping = true;
    for (const w of slots) w?.process.kill('SIGKILL');
    removeDir();
    process.stderr.write(`h5store: ${(e as Error).message}\n`);
    process.exit(1);
  }
  if (stopping) return;
  logger.info({ url, workers: n, pid: process.pid }, 'h5store listening');
  process.stdout.write(`h5store listening on ${url}\n`);
}
