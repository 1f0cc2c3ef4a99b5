/**
 * Clients that attack a server the way issue #24 items 7-11 did, and the measures of what the
 * server does meanwhile: shared by test/api/dos.test.ts (small attacks, over HTTP) and
 * bench/attacks.ts (the sizes, with figures). Every loop is bounded in count or time and
 * only talks to the loopback addresses it is given.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { parseJsonBody } from '../../src/codec/json.js';

/** An answer: status, headers, text, parsed JSON (when JSON), and how long it took (ms). */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
  ms: number;
}

/** Options of `send`. */
export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  /** The body (Content-Length is set unless `chunked`). */
  body?: Buffer;
  /** Send the body with chunked transfer encoding (no Content-Length). */
  chunked?: boolean;
  /** The client's address (another loopback address, e.g. 127.0.0.2, plays another client). */
  localAddress?: string;
  /** Send only this many bytes of the body, then wait (a body the server should not need). */
  stopAfter?: number;
  /** Give up after this long (ms): rejects with `timeout`. */
  timeoutMs?: number;
}

/**
 * One request with node:http on a connection of its own. An answer that comes before the body
 * was sent (a refusal before the body is read) is returned as soon as it is complete.
 * @throws Error when the connection fails before any answer, or `timeoutMs` passes.
 */
export function send(url: string, opts: SendOptions = {}): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let answered: Answer | undefined;
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.body && !opts.chunked) headers['content-length'] = String(opts.body.length);
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: false, localAddress: opts.localAddress }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let json: unknown;
        if (String(res.headers['content-type'] ?? '').includes('json') && text) {
          try {
            json = parseJsonBody(text);
          } catch {
            json = undefined;
          }
        }
        answered = { status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - t0 };
        clearTimeout(timer);
        req.destroy();
        resolve(answered);
      });
      res.on('error', () => undefined);
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`timeout after ${opts.timeoutMs} ms`));
    }, opts.timeoutMs ?? 120_000);
    req.on('error', (e) => {
      clearTimeout(timer);
      if (answered) resolve(answered);
      else reject(e);
    });
    if (!opts.body) return void req.end();
    if (opts.stopAfter !== undefined) {
      req.flushHeaders();
      req.write(opts.body.subarray(0, opts.stopAfter)); // and never the rest
      return;
    }
    // in pieces, so an early answer stops the upload
    let pos = 0;
    const piece = 256 * 1024;
    const pump = () => {
      while (pos < opts.body!.length && !answered && !req.destroyed) {
        const ok = req.write(opts.body!.subarray(pos, pos + piece));
        pos += piece;
        if (!ok) return void req.once('drain', pump);
      }
      if (!answered && !req.destroyed) req.end();
    };
    pump();
  });
}

/** `Authorization` value of Basic credentials. */
export const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

/** A JSON object body of about `bytes` bytes: `{"value": [...numbers...]}` plus `extra` keys. */
export function bigJson(bytes: number, extra: Record<string, unknown> = {}): Buffer {
  const head = JSON.stringify(extra).slice(1, -1);
  const n = Math.max(1, Math.floor(bytes / 12));
  return Buffer.from(`{${head}${head ? ',' : ''}"value": [${Array.from({ length: n }, (_, i) => (i * 1.25).toFixed(2)).join(',')}]}`);
}

/** The server process's resident memory now and its peak, in bytes (Linux /proc). */
export function rssOf(pid: number): { rss: number; peak: number } {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Reset the process's peak RSS (VmHWM) to its current RSS (Linux: `echo 5 > clear_refs`). */
export function resetPeak(pid: number): void {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    /* not allowed: the peak then counts from the start */
  }
}

/** Latencies of a probe (ms). */
export interface Latencies {
  n: number;
  p50: number;
  max: number;
  /** Probes that failed (no answer, or not 200). */
  failed: number;
}

/**
 * Ask `url` (e.g. `/about`) again and again, one request at a time on a keep-alive connection,
 * until `stop()`: how long the server took to answer while something else went on.
 */
export function probe(url: string, opts: { localAddress?: string; pauseMs?: number } = {}): { stop(): Promise<Latencies> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: opts.localAddress });
  const times: number[] = [];
  let failed = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      const ok = await new Promise<boolean>((resolve) => {
        const req = http.get(url, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
          res.on('error', () => resolve(false));
        });
        req.on('error', () => resolve(false));
        req.setTimeout(60_000, () => req.destroy());
      });
      times.push(performance.now() - t0);
      if (!ok) failed++;
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      const s = [...times].sort((a, b) => a - b);
      return { n: s.length, p50: s[Math.floor(s.length / 2)] ?? 0, max: s[s.length - 1] ?? 0, failed };
    },
  };
}

/**
 * `clients` loops of Basic logins with made-up names (each a fresh connection, as a guessing
 * script does) from `localAddress`, until `stop()`: the answers by status.
 */
export function passwordFlood(url: string, opts: { clients: number; localAddress?: string; user?: string }): { stop(): Promise<Record<number, number>> } {
  const counts: Record<number, number> = {};
  let running = true;
  let k = 0;
  const loops = Array.from({ length: opts.clients }, async () => {
    while (running) {
      const name = opts.user ?? `guess${k}`;
      const r = await send(url, { headers: { authorization: basic(name, `pw-${k++}`) }, localAddress: opts.localAddress, timeoutMs: 30_000 }).catch(() => undefined);
      const s = r?.status ?? 0;
      counts[s] = (counts[s] ?? 0) + 1;
      if (s === 429 || s === 503) await new Promise((res) => setTimeout(res, 20)); // what a script does on a refusal
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}

/**
 * Open `n` connections that send their request slowly: `headers` sends a request line and one
 * header byte by byte, never the blank line; `body` sends complete headers announcing
 * `Content-Length: 1000000` and then one byte per `everyMs`. `open()` counts the connections
 * the server has not closed yet.
 */
export function slowClients(url: string, n: number, kind: 'headers' | 'body', opts: { localAddress?: string; everyMs?: number; path?: string; headers?: Record<string, string> } = {}): { open(): number; close(): void } {
  const u = new URL(url);
  const sockets: net.Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  for (let i = 0; i < n; i++) {
    const s = net.connect({ host: u.hostname, port: Number(u.port), localAddress: opts.localAddress });
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    sockets.push(s);
    s.once('connect', () => {
      const p = opts.path ?? '/groups?domain=/slow.h5';
      const extra = Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      if (kind === 'headers') s.write(`POST ${p} HTTP/1.1\r\nHost: ${u.host}\r\n${extra}X-Slow: `);
      else s.write(`PUT ${p} HTTP/1.1\r\nHost: ${u.host}\r\n${extra}Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"a": [`);
      const t = setInterval(() => {
        if (s.destroyed || s.writableEnded) return clearInterval(t);
        s.write(kind === 'headers' ? 'x' : '1,');
      }, opts.everyMs ?? 1000);
      timers.push(t);
    });
  }
  return {
    open: () => sockets.filter((s) => !s.destroyed && !s.readableEnded).length,
    close: () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * Write the files of the walk attacks (issue #24 item 9) with h5py: `deep` a chain of `depth`
 * groups `/g/g/...`, `flat` (libver latest) a group `/flat` of `width` empty groups `x<n>`
 * (names zero-padded to the width's digits).
 */
export function writeWalkFiles(deep: string, flat: string, depth: number, width: number): void {
  const digits = String(width - 1).length;
  execFileSync('/usr/bin/python3', [
    '-c',
    `import h5py, sys
with h5py.File(sys.argv[1], "w") as f:
    g = f
    for i in range(${depth}): g = g.create_group("g")
with h5py.File(sys.argv[2], "w", libver="latest") as f:
    g = f.create_group("flat")
    for i in range(${width}): g.create_group("x%0${digits}d" % i)`,
    deep,
    flat,
  ]);
}
