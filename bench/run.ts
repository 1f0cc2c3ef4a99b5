/**
 * h5store benchmarks over loopback HTTP (not tests: numbers for the notes, see bench/README.md).
 *
 * usage: npm run build && npm run bench [-- name ...]
 *
 * Needs /usr/bin/python3 with h5py (data files, h5py comparisons), curl and wrk
 * (apt-get install wrk). Data files are written once into bench/data by bench/make_data.py and
 * copied into a temporary data directory for each run. The server runs from dist/ as a separate
 * process with request logging at `warn` unless BENCH_LOG_LEVEL says otherwise.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const dataDir = path.join(here, 'data');
const PY = '/usr/bin/python3';
const only = process.argv.slice(2);

type Row = { name: string; value: number; unit: string; target: string; ok: boolean; note?: string };
const rows: Row[] = [];
function report(name: string, value: number, unit: string, target: string, ok: boolean, note?: string) {
  rows.push({ name, value: Math.round(value * 1000) / 1000, unit, target, ok, note });
  process.stdout.write(`${ok ? 'ok  ' : 'MISS'} ${name}: ${value.toFixed(3)} ${unit} (target ${target})${note ? ' - ' + note : ''}\n`);
}

const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
};
const pct = (a: number[], p: number) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};

// ---------------------------------------------------------------------------------------------
// Server and client plumbing

async function startServer(root: string): Promise<{ url: string; stop: () => void }> {
  const proc = spawn(process.execPath, [path.join(repo, 'dist/cli.js'), 'serve', '--root', root, '--port', '0', '--log-level', process.env.BENCH_LOG_LEVEL ?? 'warn', '--exit-with-stdin'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b) => {
      out += b;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return { url, stop: () => proc.kill('SIGTERM') };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request; resolves with status, body bytes and elapsed ms (first byte sent to last byte). */
function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string; keep?: boolean } = {}): Promise<{ status: number; bytes: number; ms: number; body?: Buffer }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent }, (res) => {
      let bytes = 0;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (opts.keep) parts.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t0, body: opts.keep ? Buffer.concat(parts) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

async function getJson(url: string): Promise<any> {
  const r = await request(url, { keep: true });
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${r.body}`);
  return JSON.parse(r.body!.toString());
}

/** curl transfer of a URL `n` times on one connection; returns bytes/s of each transfer. */
function curlRates(url: string, n: number, extra: string[] = []): number[] {
  const args = ['-g', '-s', '-H', 'Accept: application/octet-stream', ...extra];
  for (let i = 0; i < n; i++) args.push('-o', '/dev/null', url);
  args.push('-w', '%{size_download} %{time_total}\n');
  const out = execFileSync('curl', args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  return out
    .trim()
    .split('\n')
    .map((l) => {
      const [b, t] = l.split(' ').map(Number);
      return b / t;
    });
}

function wrk(url: string, conns: number, seconds: number): { rps: number; p50ms: number; p99ms: number } {
  const out = execFileSync('wrk', ['-t', String(Math.min(conns, 2)), '-c', String(conns), '-d', `${seconds}s`, '--latency', url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]);
  const toMs = (s: string) => {
    const m = /([\d.]+)(us|ms|s)/.exec(s)!;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 'ms' ? 1 : 1000);
  };
  const p50 = toMs(/50%\s+(\S+)/.exec(out)![1]);
  const p99 = toMs(/99%\s+(\S+)/.exec(out)![1]);
  if (/Non-2xx/.test(out)) throw new Error('wrk saw errors:\n' + out);
  return { rps, p50ms: p50, p99ms: p99 };
}

async function linkId(base: string, domain: string, group: string, name: string): Promise<string> {
  const j = await getJson(`${base}/groups/${group}/links/${encodeURIComponent(name)}?domain=${domain}`);
  return j.link.id;
}

const want = (name: string) => only.length === 0 || only.some((o) => name.includes(o));

// ---------------------------------------------------------------------------------------------

async function main() {
  if (!fs.existsSync(path.join(repo, 'dist/cli.js'))) throw new Error('build first: npm run build');
  for (const tool of ['curl', 'wrk']) if (spawnSync(tool, ['--version']).error) throw new Error(`${tool} is needed (apt-get install ${tool})`);
  execFileSync(PY, [path.join(here, 'make_data.py'), dataDir], { stdio: 'inherit' });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-'));
  fs.mkdirSync(path.join(root, 'b'));
  for (const f of ['big.h5', 'attrs1k.h5', 'table.h5']) fs.copyFileSync(path.join(dataDir, f), path.join(root, 'b', f));
  const srv = await startServer(root);
  const base = srv.url;
  try {
    const D = '/b/big.h5';
    const rootId = (await getJson(`${base}/?domain=${D}`)).root;
    const data = await linkId(base, D, rootId, 'data');
    const chunked = await linkId(base, D, rootId, 'chunked');

    if (want('read256')) {
      const rates = curlRates(`${base}/datasets/${data}/value?domain=${D}`, 5);
      report('binary GET whole 256 MiB float32', median(rates.slice(1)) / 1e9, 'GB/s', '>= 1.0', median(rates.slice(1)) >= 1e9, `runs ${rates.map((r) => (r / 1e9).toFixed(2)).join(' ')}`);
    }
    if (want('slab16')) {
      const url = `${base}/datasets/${data}/value?domain=${D}&select=[1000:1512,0:8192]`;
      const rates = curlRates(url, 11);
      report('binary GET 16 MiB hyperslab', median(rates.slice(1)) / 1e9, 'GB/s', '>= 1.2', median(rates.slice(1)) >= 1.2e9);
      const off = `${base}/datasets/${data}/value?domain=${D}&select=[100:2148,1000:3048]`;
      const r2 = curlRates(off, 11);
      report('binary GET 16 MiB hyperslab (2048x2048 inner block)', median(r2.slice(1)) / 1e9, 'GB/s', '>= 1.2', median(r2.slice(1)) >= 1.2e9);
    }
    if (want('latency')) {
      const g = wrk(`${base}/groups/${rootId}?domain=${D}`, 1, 4);
      report('GET group p50, sequential', g.p50ms, 'ms', '<= 0.25', g.p50ms <= 0.25, `p99 ${g.p99ms} ms, ${g.rps} req/s`);
      const A = '/b/attrs1k.h5';
      const aroot = (await getJson(`${base}/?domain=${A}`)).root;
      const obj = await linkId(base, A, aroot, 'obj');
      const a = wrk(`${base}/groups/${obj}/attributes/a0001?domain=${A}`, 1, 4);
      report('GET attribute p50, sequential', a.p50ms, 'ms', '<= 0.25', a.p50ms <= 0.25, `p99 ${a.p99ms} ms, ${a.rps} req/s`);
      const g16 = wrk(`${base}/groups/${rootId}?domain=${D}`, 16, 4);
      report('GET group, 16 connections', g16.rps, 'req/s', '>= 8000', g16.rps >= 8000, `p99 ${g16.p99ms} ms`);
      const a16 = wrk(`${base}/groups/${obj}/attributes/a0001?domain=${A}`, 16, 4);
      report('GET attribute, 16 connections', a16.rps, 'req/s', '>= 8000', a16.rps >= 8000, `p99 ${a16.p99ms} ms`);
    }
    if (want('concurrent')) {
      // Small requests while a 256 MiB read streams (the client reads as fast as it can).
      const big = spawn('curl', ['-s', '-o', '/dev/null', '-H', 'Accept: application/octet-stream', `${base}/datasets/${data}/value?domain=${D}`]);
      const done = new Promise((r) => big.once('exit', r));
      await new Promise((r) => setTimeout(r, 15));
      const lat: number[] = [];
      let finished = false;
      void done.then(() => (finished = true));
      while (!finished) {
        const r = await request(`${base}/groups/${rootId}?domain=${D}`);
        lat.push(r.ms);
      }
      process.stdout.write(lat.map((x) => x.toFixed(1)).join(' ') + '\n');
      report('1 KB GET while a 256 MiB read streams: max', Math.max(...lat), 'ms', '<= 20', Math.max(...lat) <= 20, `${lat.length} requests, p50 ${median(lat).toFixed(2)} ms`);
    }
    if (want('fresh')) {
      // Drop the 300 MB / 10,000-group file in and time the first requests.
      fs.copyFileSync(path.join(dataDir, 'groups10k.h5'), path.join(root, 'b', 'fresh10k.h5'));
      const G = '/b/fresh10k.h5';
      const t0 = performance.now();
      const dom = await getJson(`${base}/?domain=${G}`);
      const t1 = performance.now();
      await getJson(`${base}/groups/${dom.root}?domain=${G}`);
      const t2 = performance.now();
      report('first GET / on a fresh 300 MB file with 10,000 groups', t1 - t0, 'ms', '< 50', t1 - t0 < 50, `then GET root group ${(t2 - t1).toFixed(2)} ms`);
      // 10,000 links in pages of 1000 (the file was just opened; nothing cached beyond that)
      fs.copyFileSync(path.join(dataDir, 'groups10k.h5'), path.join(root, 'b', 'links10k.h5'));
      const L = '/b/links10k.h5';
      const lroot = (await getJson(`${base}/?domain=${L}`)).root;
      const s = performance.now();
      let marker: string | undefined;
      let total = 0;
      for (;;) {
        const j = await getJson(`${base}/groups/${lroot}/links?domain=${L}&Limit=1000${marker ? '&Marker=' + encodeURIComponent(marker) : ''}`);
        total += j.links.length;
        if (j.links.length < 1000) break;
        marker = j.links[j.links.length - 1].title;
      }
      const ms = performance.now() - s;
      report('list 10,000 links in pages of 1000', ms, 'ms', '<= 50', ms <= 50 && total === 10000, `${total} links`);
    }
  } finally {
    srv.stop();
    agent.destroy();
    fs.writeFileSync(path.join(here, 'results.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
