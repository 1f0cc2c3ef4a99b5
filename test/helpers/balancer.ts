/**
 * Load balancers in front of h5store processes, for tests and benchmarks: Debian's nginx and
 * HAProxy run unprivileged on loopback ports, each with its own prefix/config/pid/log files in a
 * temporary directory, using the shipped configs of deploy/ with only the lines marked
 * `# EDIT` changed (ports and paths). Plus the concurrent writers-and-readers workload.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { REPO } from './server.js';

export const NGINX_CONF = path.join(REPO, 'deploy/nginx/h5store.conf');
export const HAPROXY_CFG = path.join(REPO, 'deploy/haproxy/h5store.cfg');

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Whether a command is installed. */
export function have(cmd: string): boolean {
  try {
    execFileSync('which', [cmd], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** host:port of a URL. */
const hostPort = (url: string) => new URL(url).host;

/**
 * The shipped nginx config with its `# EDIT` lines set: listen port, upstream servers, access
 * log. Every other line is used as shipped.
 */
export function nginxConfig(port: number, backends: string[], accessLog: string): string {
  const lines = fs.readFileSync(NGINX_CONF, 'utf8').split('\n');
  const out: string[] = [];
  let serversDone = false;
  for (const line of lines) {
    if (!/^\s*[^#\s].*# EDIT/.test(line)) {
      out.push(line);
      continue;
    }
    if (/^\s*listen /.test(line)) out.push(`    listen 127.0.0.1:${port};`);
    else if (/^\s*access_log /.test(line)) out.push(`    access_log ${accessLog} h5store;`);
    else if (/^\s*server /.test(line)) {
      if (!serversDone) for (const b of backends) out.push(`    server ${hostPort(b)} max_fails=0;`);
      serversDone = true;
    } else throw new Error(`unexpected EDIT line in ${NGINX_CONF}: ${line}`);
  }
  return out.join('\n');
}

/** The shipped HAProxy config with its `# EDIT` lines set (bind, servers, log to stdout). */
export function haproxyConfig(port: number, backends: string[]): string {
  const lines = fs.readFileSync(HAPROXY_CFG, 'utf8').split('\n');
  const out: string[] = [];
  let serversDone = false;
  for (const line of lines) {
    if (!/^\s*[^#\s].*# EDIT/.test(line)) {
      out.push(line);
      continue;
    }
    if (/^\s*bind /.test(line)) out.push(`    bind 127.0.0.1:${port}`);
    else if (/^\s*log /.test(line)) out.push('    log stdout format raw local0');
    else if (/^\s*server /.test(line)) {
      if (!serversDone) backends.forEach((b, i) => out.push(`    server h5store${i + 1} ${hostPort(b)}`));
      serversDone = true;
    } else throw new Error(`unexpected EDIT line in ${HAPROXY_CFG}: ${line}`);
  }
  return out.join('\n');
}

export interface Balancer {
  url: string;
  /** Access log lines so far. */
  log(): string[];
  stop(): Promise<void>;
}

async function waitForPort(port: number, proc: ChildProcess, what: string, errText: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}: ${errText()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on ${port}: ${errText()}`);
}

function stopper(proc: ChildProcess): () => Promise<void> {
  return async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
}

/** Run Debian's nginx (`nginx -g 'daemon off;'`) with the shipped config in `dir`. */
export async function startNginx(dir: string, backends: string[]): Promise<Balancer> {
  const port = await freePort();
  for (const d of ['logs', 'tmp']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const access = path.join(dir, 'logs/access.log');
  fs.writeFileSync(path.join(dir, 'h5store.conf'), nginxConfig(port, backends, access));
  // The main config around it: only what nginx needs to run from a private prefix.
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      'worker_processes 2;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/logs/error.log warn;`,
      'events { worker_connections 1024; }',
      'http {',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/tmp/${t};`),
      `  include ${dir}/h5store.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const proc = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'logs/error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (b) => (err += b));
  await waitForPort(port, proc, 'nginx', () => err + safeRead(path.join(dir, 'logs/error.log')));
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => safeRead(access).split('\n').filter(Boolean),
    stop: stopper(proc),
  };
}

/** Run Debian's HAProxy (`haproxy -db`) with the shipped config in `dir`; its log is stdout. */
export async function startHaproxy(dir: string, backends: string[]): Promise<Balancer> {
  const port = await freePort();
  fs.mkdirSync(dir, { recursive: true });
  const cfg = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(cfg, haproxyConfig(port, backends));
  const proc = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (b) => (out += b));
  proc.stderr!.on('data', (b) => (err += b));
  await waitForPort(port, proc, 'haproxy', () => err);
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => out.split('\n').filter((l) => l.includes(' key="')),
    stop: stopper(proc),
  };
}

function safeRead(p: string): string {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

/** Domain key and upstream of each access log line (both balancers log `key="..." upstream=...`). */
export function routes(lines: string[]): { key: string; upstream: string }[] {
  const out: { key: string; upstream: string }[] = [];
  for (const l of lines) {
    const m = /key="([^"]*)" upstream=(\S+)/.exec(l);
    if (m && m[1]) out.push({ key: m[1], upstream: m[2] });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The workload: concurrent writers and readers on a few domains

export interface WorkloadOptions {
  /** Folder the domains are created in (must exist). */
  folder: string;
  domains: number;
  writersPerDomain: number;
  writesPerWriter: number;
  readers: number;
}

export interface WorkloadResult {
  writes: number;
  reads: number;
  seconds: number;
  /** Answers other than 2xx (status -> count). */
  failures: Record<string, number>;
  /** Reads that did not see a write acknowledged before they started. */
  staleReads: string[];
  /** Acknowledged writes missing at the end. */
  lost: string[];
  /** Slowest acknowledged write, ms. */
  worstWriteMs: number;
  domainNames: string[];
}

/**
 * How a request names its domain; the four ways clients do (the balancer must route them alike):
 * `?domain=/a/b.h5`, `?domain=%2Fa%2Fb.h5` (h5pyd), `X-Store-domain`, `X-Hdf-domain`.
 */
function addressing(base: string, p: string, domain: string, i: number, query = ''): { url: string; headers: Record<string, string> } {
  const sep = query ? '&' : '';
  switch (i % 4) {
    case 0:
      return { url: `${base}${p}?${query}${sep}domain=${domain}`, headers: {} };
    case 1:
      return { url: `${base}${p}?${query}${sep}domain=${encodeURIComponent(domain)}`, headers: {} };
    case 2:
      return { url: `${base}${p}${query ? '?' + query : ''}`, headers: { 'X-Store-domain': domain } };
    default:
      return { url: `${base}${p}${query ? '?' + query : ''}`, headers: { 'X-Hdf-domain': domain } };
  }
}

/**
 * Writers and readers through `base`. Each domain holds an int64 dataset with one slot per
 * (writer, write); writer w of a domain writes its n-th value (n+1) into slot n, or (every other
 * write) creates attribute `w<w>_<n>`. Readers pick a domain, note the writes acknowledged before
 * they start, read the dataset and the attribute names, and check they see all of them.
 * At the end every acknowledged write must be there.
 */
export async function runWorkload(base: string, o: WorkloadOptions): Promise<WorkloadResult> {
  const failures: Record<string, number> = {};
  const fail = (what: string, status: number) => {
    const k = `${status} ${what}`;
    failures[k] = (failures[k] ?? 0) + 1;
  };
  let counter = 0;
  const call = async (method: string, p: string, domain: string, opts: { query?: string; body?: unknown } = {}) => {
    const a = addressing(base, p, domain, counter++, opts.query);
    const r = await fetch(a.url, {
      method,
      headers: { ...a.headers, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    });
    const text = await r.text();
    return { status: r.status, json: text && (r.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined, text };
  };

  const slots = o.writersPerDomain * o.writesPerWriter;
  const domains: { name: string; ds: string; root: string; acked: { at: number; slot?: number; attr?: string }[] }[] = [];
  for (let d = 0; d < o.domains; d++) {
    const name = `${o.folder}/d${d}.h5`;
    const c = await call('PUT', '/', name);
    if (c.status !== 201) throw new Error(`PUT / ${name}: ${c.status} ${c.text}`);
    const root = c.json.root;
    const ds = await call('POST', '/datasets', name, { body: { type: 'H5T_STD_I64LE', shape: [slots], link: { id: root, name: 'slots' } } });
    if (ds.status !== 201) throw new Error(`POST /datasets: ${ds.status} ${ds.text}`);
    domains.push({ name, ds: ds.json.id, root, acked: [] });
  }

  let writing = true;
  let writes = 0;
  let reads = 0;
  let worstWriteMs = 0;
  const staleReads: string[] = [];
  const t0 = performance.now();

  const writer = async (d: (typeof domains)[number], w: number) => {
    for (let n = 0; n < o.writesPerWriter; n++) {
      const slot = w * o.writesPerWriter + n;
      const ts = performance.now();
      if (n % 2 === 0) {
        const r = await call('PUT', `/datasets/${d.ds}/value`, d.name, { query: `select=[${slot}:${slot + 1}]`, body: { value: [slot + 1] } });
        if (r.status !== 200) fail('PUT value', r.status);
        else d.acked.push({ at: performance.now(), slot });
      } else {
        const attr = `w${w}_${n}`;
        const r = await call('PUT', `/groups/${d.root}/attributes/${attr}`, d.name, { body: { type: 'H5T_STD_I32LE', value: n } });
        if (r.status !== 201) fail('PUT attribute', r.status);
        else d.acked.push({ at: performance.now(), attr });
      }
      worstWriteMs = Math.max(worstWriteMs, performance.now() - ts);
      writes++;
    }
  };

  const reader = async (k: number) => {
    let i = k;
    while (writing) {
      const d = domains[i++ % domains.length];
      const start = performance.now();
      const expected = d.acked.filter((a) => a.at < start);
      const v = await call('GET', `/datasets/${d.ds}/value`, d.name);
      const at = await call('GET', `/groups/${d.root}/attributes`, d.name);
      reads += 2;
      if (v.status !== 200) {
        fail('GET value', v.status);
        continue;
      }
      if (at.status !== 200) {
        fail('GET attributes', at.status);
        continue;
      }
      const names = new Set((at.json.attributes as { name: string }[]).map((a) => a.name));
      for (const e of expected) {
        if (e.slot !== undefined && v.json.value[e.slot] !== e.slot + 1) staleReads.push(`${d.name} slot ${e.slot}: read ${v.json.value[e.slot]}`);
        if (e.attr !== undefined && !names.has(e.attr)) staleReads.push(`${d.name} attribute ${e.attr} missing`);
      }
    }
  };

  const writersDone = Promise.all(domains.flatMap((d) => Array.from({ length: o.writersPerDomain }, (_, w) => writer(d, w)))).finally(() => {
    writing = false;
  });
  await Promise.all([writersDone, ...Array.from({ length: o.readers }, (_, k) => reader(k))]);
  const seconds = (performance.now() - t0) / 1000;

  const lost: string[] = [];
  for (const d of domains) {
    const v = await call('GET', `/datasets/${d.ds}/value`, d.name);
    const at = await call('GET', `/groups/${d.root}/attributes`, d.name);
    const names = new Set((at.json?.attributes as { name: string }[] | undefined)?.map((a) => a.name) ?? []);
    for (const e of d.acked) {
      if (e.slot !== undefined && v.json?.value?.[e.slot] !== e.slot + 1) lost.push(`${d.name} slot ${e.slot}`);
      if (e.attr !== undefined && !names.has(e.attr)) lost.push(`${d.name} attribute ${e.attr}`);
    }
  }
  return { writes, reads, seconds, failures, staleReads, lost, worstWriteMs, domainNames: domains.map((d) => d.name) };
}
