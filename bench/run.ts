/**
 * h5store benchmarks over loopback HTTP (not tests: numbers for the notes, see bench/README.md).
 *
 * usage: npm run build && npm run bench [-- name ...] [-- --record]
 *
 * Every figure is printed beside the one recorded for the previous release in bench/README.md
 * (its `previous-release` table, bench/guard.ts); a scenario more than 20% worse is flagged and
 * the run exits with status 1. `--record` writes this run's figures into that table.
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
const record = process.argv.includes('--record');
const only = process.argv.slice(2).filter((a) => a !== '--record');
const readme = path.join(here, 'README.md');
const recorded = parseRecorded(fs.readFileSync(readme, 'utf8'));

type Row = { id: string; name: string; value: number; unit: string; target: string; ok: boolean; note?: string; figure: Figure; previous?: number; flagged: boolean };
const rows: Row[] = [];
const rssRows: { after: string; mib: number }[] = [];
/**
 * Print and keep one scenario's result. `id` keys it in the previous release's table; its
 * guarded figure is `more.ratio` (the ratio to this run's reference), or the value itself for
 * rows in `ratio` units, or else the plain value (absolute). `more.better` defaults from the
 * target (`<`: lower is better).
 */
function report(id: string, name: string, value: number, unit: string, target: string, ok: boolean, note?: string, more: { ratio?: number; better?: 'higher' | 'lower' } = {}) {
  const ratio = more.ratio ?? (unit === 'ratio' ? value : undefined);
  const better = more.better ?? (target.startsWith('<') ? 'lower' : 'higher');
  const figure: Figure = { id, figure: Math.round((ratio ?? value) * 1000) / 1000, kind: ratio !== undefined ? 'reference' : 'absolute', better, scenario: name };
  const cmp = compareFigure(figure, recorded.get(id));
  rows.push({ id, name, value: Math.round(value * 1000) / 1000, unit, target, ok, note, figure, previous: recorded.get(id)?.figure, flagged: cmp.flagged });
  process.stdout.write(`${ok ? 'ok  ' : 'MISS'} ${name}: ${value.toFixed(3)} ${unit} (target ${target})${note ? ' - ' + note : ''}\n${cmp.flagged ? 'WORSE' : '    '} [${id}] ${cmp.text}\n`);
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


const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request; resolves with status, body bytes and elapsed ms (first byte sent to last byte).
 * A GET on a kept-alive socket that the server closed as it was reused (its idle timeout, after
 * a scenario that ran only curl and h5py for a while: ECONNRESET) is sent again once.
 */
function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string; keep?: boolean } = {}): Promise<{ status: number; bytes: number; ms: number; body?: Buffer }> {
  return requestOnce(url, opts).catch((e: NodeJS.ErrnoException & { reused?: boolean }) => {
    if (e.code === 'ECONNRESET' && e.reused && (opts.method ?? 'GET') === 'GET') return requestOnce(url, opts);
    throw e;
  });
}

function requestOnce(url: string, opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string; keep?: boolean }): Promise<{ status: number; bytes: number; ms: number; body?: Buffer }> {
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
    req.on('error', (e: Error) => reject(Object.assign(e, { reused: req.reusedSocket })));
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

async function getJson(url: string): Promise<any> {
  const r = await request(url, { keep: true });
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${r.body}`);
  return JSON.parse(r.body!.toString());
}

/** curl transfer of a URL `n` times on one connection (binary unless `accept` says otherwise); returns bytes/s of each transfer. */
function curlRates(url: string, n: number, extra: string[] = [], accept = 'application/octet-stream'): number[] {
  const args = ['-g', '-s', '-H', `Accept: ${accept}`, ...extra];
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

function wrk(url: string, conns: number, seconds: number, threads = Math.min(conns, 2)): { rps: number; p50ms: number; p99ms: number } {
  const out = execFileSync('wrk', ['-t', String(threads), '-c', String(conns), '-d', `${seconds}s`, '--latency', url], { encoding: 'utf8' });
  const need = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`cannot read wrk output (${re}):\n${out}`);
    return m;
  };
  const rps = Number(need(/Requests\/sec:\s+([\d.]+)/)[1]);
  const toMs = (m: RegExpExecArray) => Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 'ms' ? 1 : 1000);
  const p50 = toMs(need(/50%\s+([\d.]+)(us|ms|s)/));
  const p99 = toMs(need(/99%\s+([\d.]+)(us|ms|s)/));
  if (/Non-2xx/.test(out)) throw new Error('wrk saw errors:\n' + out);
  return { rps, p50ms: p50, p99ms: p99 };
}

async function linkId(base: string, domain: string, group: string, name: string): Promise<string> {
  const j = await getJson(`${base}/groups/${group}/links/${encodeURIComponent(name)}?domain=${domain}`);
  return j.link.id;
}

const want = (name: string) => only.length === 0 || only.some((o) => name.includes(o));

// ---------------------------------------------------------------------------------------------

/** VmRSS of a process in MiB (Linux /proc), or NaN. */
function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** h5py reading `expr` (a slice of dataset `name`) in-process: bytes/s of each of `n` reads. */
function h5pyReadRates(file: string, name: string, expr: string, n: number): number[] {
  const code = `
import sys, time, h5py
f = h5py.File(sys.argv[1], 'r'); d = f[sys.argv[2]]
for i in range(int(sys.argv[4])):
    t = time.perf_counter(); a = eval('d' + sys.argv[3]); t = time.perf_counter() - t
    print(a.nbytes / t)
`;
  return execFileSync(PY, ['-c', code, file, name, expr, String(n)], { encoding: 'utf8' }).trim().split('\n').map(Number);
}

async function main() {
  if (!fs.existsSync(path.join(repo, 'dist/cli.js'))) throw new Error('build first: npm run build');
  for (const tool of ['curl', 'wrk']) if (spawnSync(tool, ['--version']).error) throw new Error(`${tool} is needed (apt-get install ${tool})`);
  execFileSync(PY, [path.join(here, 'make_data.py'), dataDir], { stdio: 'inherit' });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-'));
  fs.mkdirSync(path.join(root, 'b'));
  for (const f of ['big.h5', 'attrs1k.h5', 'table.h5', 'compressed.h5']) fs.copyFileSync(path.join(dataDir, f), path.join(root, 'b', f));
  // the copies' ~300 MB are written back now, not during the scenarios: a writeback in progress
  // made every fdatasync of the write scenarios wait behind it (16 MiB PUTs at 150 MB/s instead
  // of ~400 on a quiet disk)
  execFileSync('sync');
  const srv = await startBenchServer(['--root', root]);
  const ref = await startReference();
  const base = srv.url;
  process.stdout.write(`load average at start: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${os.cpus().length} cores\n`);
  const rss = (after: string) => {
    const m = rssMiB(srv.pid);
    rssRows.push({ after, mib: Math.round(m) });
    process.stdout.write(`     server RSS after ${after}: ${m.toFixed(0)} MiB\n`);
  };
  try {
    const D = '/b/big.h5';
    const rootId = (await getJson(`${base}/?domain=${D}`)).root;
    const data = await linkId(base, D, rootId, 'data');
    const chunked = await linkId(base, D, rootId, 'chunked');

    if (want('small')) {
      // Target 1: small metadata GETs against a bare node:http server answering the same bytes.
      for (const [name, u] of await smallGetPaths(base)) {
        const r = await request(base + u, { keep: true });
        if (r.status !== 200) throw new Error(`${u}: ${r.status}`);
        await request(`${ref.url}/json/${name}`, { method: 'PUT', body: r.body });
        const rps: number[] = [];
        const p50: number[] = [];
        for (let round = 0; round < 3; round++) {
          const b16 = wrk(`${ref.url}/json/${name}`, 16, 3, 1);
          const h16 = wrk(base + u, 16, 3, 1);
          rps.push(h16.rps / b16.rps);
          const b1 = wrk(`${ref.url}/json/${name}`, 1, 2, 1);
          const h1 = wrk(base + u, 1, 2, 1);
          p50.push(h1.p50ms / b1.p50ms);
          process.stdout.write(`     ${name} round ${round}: 16 conns ${h16.rps.toFixed(0)} vs bare ${b16.rps.toFixed(0)} req/s; sequential p50 ${(h1.p50ms * 1000).toFixed(0)} vs ${(b1.p50ms * 1000).toFixed(0)} us\n`);
        }
        report(`small.${name}.c16`, `GET ${name}, 16 connections, share of bare node:http`, median(rps), 'ratio', '>= 0.25', median(rps) >= 0.25, `rounds ${rps.map((x) => x.toFixed(3)).join(' ')}`);
        report(`small.${name}.p50`, `GET ${name}, sequential p50 over bare node:http`, median(p50), 'ratio', '<= 3', median(p50) <= 3, `rounds ${p50.map((x) => x.toFixed(2)).join(' ')}`);
      }
      rss('small GETs');
    }
    if (want('read256')) {
      // Target 4: whole 256 MiB float32 and 16 MiB hyperslabs against the loopback limit.
      const ratio = (id: string, u: string, bytes: number, label: string) => {
        const hs: number[] = [];
        const bs: number[] = [];
        for (let i = 0; i < 4; i++) {
          bs.push(curlRates(`${ref.url}/bytes?n=${bytes}`, 1)[0]);
          hs.push(curlRates(u, 1)[0]);
        }
        const h = median(hs.slice(1));
        const b = median(bs.slice(1));
        report(id, `binary GET ${label}, share of the loopback limit`, h / b, 'ratio', '>= 0.9', h / b >= 0.9, `${(h / 1e6).toFixed(0)} vs ${(b / 1e6).toFixed(0)} MB/s`);
      };
      ratio('read256.whole', `${base}/datasets/${data}/value?domain=${D}`, 256 * 1024 * 1024, 'whole 256 MiB float32');
      ratio('read256.rows', `${base}/datasets/${data}/value?domain=${D}&select=[1000:1512,0:8192]`, 16 * 1024 * 1024, '16 MiB hyperslab (whole rows)');
      ratio('read256.block', `${base}/datasets/${data}/value?domain=${D}&select=[100:2148,1000:3048]`, 16 * 1024 * 1024, '16 MiB hyperslab (2048x2048 inner block)');
      const py = h5pyReadRates(path.join(root, 'b/big.h5'), 'data', '[...]', 3);
      const h = median(curlRates(`${base}/datasets/${data}/value?domain=${D}`, 3));
      report('read256.h5py', 'binary GET whole 256 MiB, over h5py in-process', h / median(py), 'ratio', 'report', true, `${(h / 1e6).toFixed(0)} vs h5py ${(median(py) / 1e6).toFixed(0)} MB/s`);
      rss('large reads');
    }
    if (want('gzip')) {
      // Target 3: a 1024x1024 int32 region of the gzip chunked dataset (level 4, about 60:1, no
      // shuffle) vs h5py in-process. First cold: 8 regions whose chunks no read has touched yet
      // (the server keeps a bounded cache of decoded chunks), each read once; h5py keeps nothing
      // between its reads of a region (its chunk cache of 1 MiB holds 4 of the 16 chunks).
      const cold: number[] = [];
      const pcold: number[] = [];
      for (const r of [0, 3072]) {
        for (const col of [0, 1024, 2048, 3072]) {
          const s = `[${r}:${r + 1024},${col}:${col + 1024}]`;
          cold.push(curlRates(`${base}/datasets/${chunked}/value?domain=${D}&select=${s}`, 1)[0]);
          pcold.push(h5pyReadRates(path.join(root, 'b/big.h5'), 'chunked', s, 1)[0]);
        }
      }
      const loop4 = median(Array.from({ length: 5 }, () => curlRates(`${ref.url}/bytes?n=${4 * 1024 * 1024}`, 3).slice(1)).flat());
      report('gzip.cold', 'binary GET 1024x1024 int32 of gzip chunks, cold (first read of its chunks), over h5py in-process', median(cold) / median(pcold), 'ratio', 'report', true, `${(median(cold) / 1e6).toFixed(0)} vs h5py ${(median(pcold) / 1e6).toFixed(0)} MB/s; loopback limit for 4 MiB ${(loop4 / 1e6).toFixed(0)} MB/s`);
      const reg = `${base}/datasets/${chunked}/value?domain=${D}&select=[1024:2048,512:1536]`;
      const hs: number[] = [];
      const ps: number[] = [];
      for (let i = 0; i < 3; i++) {
        hs.push(...curlRates(reg, 4).slice(1));
        ps.push(...h5pyReadRates(path.join(root, 'b/big.h5'), 'chunked', '[1024:2048,512:1536]', 4).slice(1));
      }
      const h = median(hs);
      const p = median(ps);
      report('gzip.again', 'binary GET 1024x1024 int32 of gzip chunks, again (decoded chunks cached), over h5py in-process', h / p, 'ratio', '>= 2', h / p >= 2, `${(h / 1e6).toFixed(0)} vs h5py ${(p / 1e6).toFixed(0)} MB/s`);
      rss('gzip region reads');
    }
    if (want('compressed')) await compressedRegions(base, root, ref.url);
    if (want('concurrent')) {
      // A small request while a 256 MiB read streams (the client reads as fast as it can).
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
      report('concurrent.read256', 'small GET while a 256 MiB read streams: worst', Math.max(...lat), 'ms', '<= 50', Math.max(...lat) <= 50, `${lat.length} requests, p50 ${median(lat).toFixed(2)} ms`);
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
      report('fresh.domain', 'first GET / on a fresh 300 MB file with 10,000 groups', t1 - t0, 'ms', '< 50', t1 - t0 < 50, `then GET root group ${(t2 - t1).toFixed(2)} ms`);
      // Target 7: 10,000 links in pages of 1000, the file opened for the first time. The first
      // listing of a process also pays for compiling the listing code (JIT): it is reported on
      // its own, on another copy, and the target is measured on a file the warm server has
      // never opened.
      fs.copyFileSync(path.join(dataDir, 'groups10k.h5'), path.join(root, 'b', 'links10k.h5'));
      fs.copyFileSync(path.join(dataDir, 'groups10k.h5'), path.join(root, 'b', 'jit10k.h5'));
      execFileSync('sync');
      let L = '/b/jit10k.h5';
      // the server's CPU time (user + system, /proc, 10 ms ticks): what the listing cost it,
      // whatever else runs on the machine
      const serverCpuMs = () => {
        const f = fs.readFileSync(`/proc/${srv.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(f[11]) + Number(f[12])) * (1000 / 100);
      };
      const pageBodies: Buffer[] = [];
      const listAll = async (lroot: string) => {
        const s = performance.now();
        const c0 = serverCpuMs();
        let marker: string | undefined;
        let total = 0;
        pageBodies.length = 0;
        for (;;) {
          const r = await request(`${base}/groups/${lroot}/links?domain=${L}&Limit=1000${marker ? '&Marker=' + encodeURIComponent(marker) : ''}`, { keep: true });
          if (r.status !== 200) throw new Error(`link page: ${r.status}`);
          pageBodies.push(r.body!);
          const j = JSON.parse(r.body!.toString());
          total += j.links.length;
          if (j.links.length < 1000) break;
          marker = j.links[j.links.length - 1].title;
        }
        return { ms: performance.now() - s, total, cpu: serverCpuMs() - c0 };
      };
      const jit = await listAll((await getJson(`${base}/?domain=${L}`)).root);
      L = '/b/links10k.h5';
      const tOpen = performance.now();
      const lroot = (await getJson(`${base}/?domain=${L}`)).root;
      const opened = performance.now() - tOpen;
      const cold = await listAll(lroot);
      const warm: number[] = [];
      const warmCpu: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await listAll(lroot);
        warm.push(r.ms);
        warmCpu.push(r.cpu);
      }
      // The reference: the bare node:http server answering the same page bodies to the same
      // client (request, then JSON.parse of each page): what Node allows for these bytes.
      for (let i = 0; i < pageBodies.length; i++) await request(`${ref.url}/json/links${i}`, { method: 'PUT', body: pageBodies[i] });
      const bare: number[] = [];
      for (let k = 0; k < 5; k++) {
        const s = performance.now();
        for (let i = 0; i < pageBodies.length; i++) JSON.parse((await request(`${ref.url}/json/links${i}`, { keep: true })).body!.toString());
        bare.push(performance.now() - s);
      }

      report('links.cold', 'list 10,000 links in pages of 1000, file opened for the first time', cold.ms, 'ms', '<= 50', cold.ms <= 50 && cold.total === 10001, `${cold.total} links; GET / before it ${opened.toFixed(1)} ms; server CPU ${cold.cpu} ms; the process's first listing (another copy, code not compiled yet) ${jit.ms.toFixed(1)} ms, server CPU ${jit.cpu} ms`, { ratio: cold.ms / median(bare) });
      report('links.again', 'list 10,000 links in pages of 1000, again', median(warm), 'ms', '<= 50', median(warm) <= 50, `client JSON parsing included; server CPU median ${median(warmCpu)} ms; the bare node:http server answering the same ${pageBodies.length} pages to the same client: ${median(bare).toFixed(1)} ms (ratio ${(median(warm) / median(bare)).toFixed(2)})`, { ratio: median(warm) / median(bare) });
      rss('link listings');
    }
    if (want('write')) {
      const W = '/b/write.h5';
      await request(`${base}/?domain=${W}`, { method: 'PUT' });
      const wroot = (await getJson(`${base}/?domain=${W}`)).root;
      const mk = async (body: object) => {
        const r = await request(`${base}/datasets?domain=${W}`, { method: 'POST', body: JSON.stringify(body), keep: true });
        if (r.status !== 201) throw new Error(`POST /datasets: ${r.status} ${r.body}`);
        return JSON.parse(r.body!.toString()).id as string;
      };
      const times: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        await mk({ type: 'H5T_IEEE_F32LE', shape: [100], link: { id: wroot, name: `d${i}` } });
        times.push(performance.now() - t0);
      }
      report('write.post', 'POST /datasets (create + link), median of 200', median(times.slice(20)), 'ms', '<= 3', median(times.slice(20)) <= 3, `p90 ${pct(times, 90).toFixed(2)} ms`);
      // Target 6: 16 MiB binary PUT into a new float32 dataset vs a bare server taking the body.
      const body = Buffer.alloc(16 * 1024 * 1024);
      for (let i = 0; i < body.length / 4; i++) body.writeFloatLE(i * 0.5, i * 4);
      const hdr = { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) };
      const put: number[] = [];
      const sink: number[] = [];
      for (let i = 0; i < 9; i++) {
        const s = await request(`${ref.url}/sink`, { method: 'PUT', body, headers: hdr });
        sink.push(body.length / (s.ms / 1000));
        const id = await mk({ type: 'H5T_IEEE_F32LE', shape: [4096, 1024] });
        const r = await request(`${base}/datasets/${id}/value?domain=${W}`, { method: 'PUT', body, headers: hdr });
        if (r.status !== 200) throw new Error(`PUT value ${r.status}`);
        put.push(body.length / (r.ms / 1000));
      }
      const pw = median(put.slice(1));
      const sw = median(sink.slice(1));
      report('write.put16', 'binary PUT 16 MiB into a new float32 dataset, share of the loopback limit', pw / sw, 'ratio', '>= 0.6', pw / sw >= 0.6, `${(pw / 1e6).toFixed(0)} vs ${(sw / 1e6).toFixed(0)} MB/s (fsync always); runs ${put.map((r) => (r / 1e6).toFixed(0)).join(' ')}`);
      rss('binary writes');
      // Target 5: JSON GET of a 1 Mi-element float32 selection (random values).
      const f32 = await mk({ type: 'H5T_IEEE_F32LE', shape: [4096, 1024] });
      const rnd = Buffer.alloc(4 * 1024 * 1024);
      for (let i = 0; i < rnd.length / 4; i++) rnd.writeFloatLE(Math.random() * 1000 - 500, i * 4);
      const sel = `select=[0:1024,0:1024]`;
      await request(`${base}/datasets/${f32}/value?domain=${W}&${sel}`, { method: 'PUT', body: rnd, headers: { 'Content-Type': 'application/octet-stream' } });
      const js: number[] = [];
      let textBytes = 0;
      let text: Buffer | undefined;
      for (let i = 0; i < 6; i++) {
        const r = await request(`${base}/datasets/${f32}/value?domain=${W}&${sel}`, { keep: i === 0 });
        if (r.status !== 200) throw new Error(`JSON GET ${r.status}`);
        js.push((4 * 1024 * 1024) / (r.ms / 1000));
        textBytes = r.bytes;
        text ??= r.body;
      }
      // the reference: the bare node:http server sending the same text to the same client
      await request(`${ref.url}/json/value1m`, { method: 'PUT', body: text });
      const bareJs: number[] = [];
      for (let i = 0; i < 6; i++) bareJs.push((4 * 1024 * 1024) / ((await request(`${ref.url}/json/value1m`)).ms / 1000));
      report('json.node', 'JSON GET 1 Mi float32 (binary-equivalent)', median(js.slice(1)) / 1e6, 'MB/s', '>= 42', median(js.slice(1)) >= 42e6, `this benchmark's own Node client; ${(textBytes / 1e6).toFixed(1)} MB of text; the bare node:http server sending the same text to this client: ${(median(bareJs.slice(1)) / 1e6).toFixed(0)} MB/s`, { ratio: median(js.slice(1)) / median(bareJs.slice(1)) });
      // the same requests from curl (as the loopback limits are measured): what the server
      // delivers without the cost of a JavaScript client receiving 10 MB
      const jc = median(curlRates(`${base}/datasets/${f32}/value?domain=${W}&${sel}`, 7, [], 'application/json').slice(1)) * ((4 * 1024 * 1024) / textBytes);
      report('json.curl', 'JSON GET 1 Mi float32 (binary-equivalent), curl as the client', jc / 1e6, 'MB/s', '>= 42', jc >= 42e6);
      rss('JSON values');
      // A small request while that JSON value is formatted (a slice per turn of the event loop).
      {
        const jlat: number[] = [];
        let reading = true;
        const j = request(`${base}/datasets/${f32}/value?domain=${W}&${sel}`).finally(() => (reading = false));
        while (reading) jlat.push((await request(`${base}/groups/${rootId}?domain=${D}`)).ms);
        await j;
        report('concurrent.json', 'small GET while a 1 Mi float32 JSON value is formatted: worst', Math.max(...jlat), 'ms', '<= 50', Math.max(...jlat) <= 50, `${jlat.length} requests`);
      }
      // A small request while a 16 MiB binary PUT is written.
      const lat: number[] = [];
      const id = await mk({ type: 'H5T_IEEE_F32LE', shape: [4096, 1024] });
      let writing = true;
      const w = request(`${base}/datasets/${id}/value?domain=${W}`, { method: 'PUT', body, headers: hdr }).finally(() => (writing = false));
      while (writing) lat.push((await request(`${base}/groups/${rootId}?domain=${D}`)).ms);
      await w;
      report('concurrent.put', 'small GET while a 16 MiB PUT is written: worst', Math.max(...lat), 'ms', '<= 50', Math.max(...lat) <= 50, `${lat.length} requests`);
    }
    if (want('attrs')) {
      const A = '/b/attrs1k.h5';
      const aroot = (await getJson(`${base}/?domain=${A}`)).root;
      const obj = await linkId(base, A, aroot, 'obj');
      const t: number[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await request(`${base}/groups/${obj}/attributes?domain=${A}&IncludeData=1`, { keep: true });
        if (r.status !== 200 || JSON.parse(r.body!.toString()).attributes.length !== 1000) throw new Error('attributes');
        t.push(r.ms);
      }
      report('attrs.1k', 'GET all 1,000 attributes with values', median(t.slice(5)), 'ms', '<= 7', median(t.slice(5)) <= 7, `first request (nothing cached) ${t[0].toFixed(1)} ms`);
    }
    if (want('query')) {
      const T = '/b/table.h5';
      const troot = (await getJson(`${base}/?domain=${T}`)).root;
      const table = await linkId(base, T, troot, 'table');
      const q = async (query: string, extra = '') => {
        const t: number[] = [];
        let n = 0;
        for (let i = 0; i < 30; i++) {
          const r = await request(`${base}/datasets/${table}/value?domain=${T}&query=${encodeURIComponent(query)}${extra}`, { keep: true });
          if (r.status !== 200) throw new Error(`query ${r.status} ${r.body}`);
          n = JSON.parse(r.body!.toString()).value.length;
          t.push(r.ms);
        }
        // the first ask scans the table; the next ones find its columns kept (values/query.ts)
        return { ms: median(t.slice(5)), first: t[0]!, n };
      };
      const a = await q('time >= 98999');
      report('query.time', 'query on 100,000 rows returning 1,001 rows (time >= 98999)', a.ms, 'ms', '<= 3.5', a.ms <= 3.5 && a.n === 1001, `${a.n} rows; first ask (scan) ${a.first.toFixed(2)} ms`);
      const b = await q("(temp > 50.0) & (station == b'KORD')", '&Limit=1001');
      report('query.kord', "query (temp > 50.0) & (station == b'KORD'), Limit=1001", b.ms, 'ms', '<= 3.5', b.ms <= 3.5 && b.n === 1001, `${b.n} rows; first ask (scan) ${b.first.toFixed(2)} ms`);
      rss('queries');
    }
    if (want('floors')) {
      // What the bytes of the targets still missed cost natively (bench/floors.py: libhdf5 and
      // plain I/O in-process), beside the loopback references of this run: the ratio a server
      // reaches when it does nothing but that work and the transfer, one after the other. Only
      // overlapping them on a core of its own (the client takes the other one here) goes higher.
      type Floor = { name: string; ms: number };
      const floors = execFileSync(PY, [path.join(here, 'floors.py'), path.join(root, 'b/big.h5'), root], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Floor);
      const floor = (prefix: string) => floors.find((f) => f.name.startsWith(prefix))!.ms;
      for (const f of floors) process.stdout.write(`     native: ${f.name}: ${f.ms.toFixed(2)} ms\n`);
      const sendMs = (bytes: number) => (bytes / median(Array.from({ length: 3 }, () => curlRates(`${ref.url}/bytes?n=${bytes}`, 4).slice(1)).flat())) * 1000;
      const send16 = sendMs(16 * 1024 * 1024);
      const send4 = sendMs(4 * 1024 * 1024);
      const block = floor('inner block 16 MiB, sieve 4 KiB');
      report('floors.block', 'inner block 16 MiB: share of the loopback limit with libhdf5 reading then sending', send16 / (send16 + block), 'ratio', 'report', true, `send ${send16.toFixed(2)} ms, libhdf5 read in-process ${block.toFixed(2)} ms (64 KiB sieve ${floor('inner block 16 MiB, sieve 64').toFixed(2)}, whole rows ${floor('whole rows').toFixed(2)})`);
      const body = Buffer.alloc(16 * 1024 * 1024, 1);
      const up: number[] = [];
      for (let i = 0; i < 7; i++) up.push((await request(`${ref.url}/sink`, { method: 'PUT', body, headers: { 'Content-Type': 'application/octet-stream' } })).ms);
      const upload = median(up.slice(1));
      const write = floor('16 MiB into a new chunked dataset, H5Dwrite');
      const durable = floor('16 MiB into a new chunked dataset, H5Dwrite + H5Fflush + fdatasync');
      report('floors.put', '16 MiB PUT: share of the bare upload with receiving then H5Dwrite', upload / (upload + write), 'ratio', 'report', true, `upload ${upload.toFixed(2)} ms, H5Dwrite in-process ${write.toFixed(2)} ms (H5Dwrite_chunk of gathered chunks ${floor('16 MiB into a new chunked dataset, H5Dwrite_chunk').toFixed(2)})`);
      report('floors.put-durable', '16 MiB PUT: share of the bare upload with receiving then a durable H5Dwrite (fsync: always)', upload / (upload + durable), 'ratio', 'report', true, `upload ${upload.toFixed(2)} ms, H5Dwrite + H5Fflush + fdatasync in-process ${durable.toFixed(2)} ms`);
      const h5pyAgain = (4 * 1024 * 1024 * 1000) / median(h5pyReadRates(path.join(root, 'b/big.h5'), 'chunked', '[1024:2048,512:1536]', 7).slice(1));
      const gather = floor('gather 16 decoded chunks');
      report('floors.gzip-again', 'gzip region again: over h5py with the cached chunks gathered then sent', h5pyAgain / (send4 + gather), 'ratio', 'report', true, `h5py ${h5pyAgain.toFixed(2)} ms, send 4 MiB ${send4.toFixed(2)} ms, gather ${gather.toFixed(2)} ms`);
    }
    if (want('h5py')) await compareWithH5py(base, root);
  } finally {
    await srv.stop();
    await ref.stop();
    agent.destroy();
    fs.writeFileSync(path.join(here, 'results.json'), JSON.stringify({ date: new Date().toISOString(), loadavg: os.loadavg(), rows, rss: rssRows }, null, 2));
    fs.rmSync(root, { recursive: true, force: true });
  }
  guardSummary();
}

/**
 * The regression guard's summary (bench/guard.ts): scenarios compared with the previous
 * release's figures and those more than 20% worse (exit status 1); with `--record`, this run's
 * figures replace the recorded ones in bench/README.md.
 */
function guardSummary(): void {
  const compared = rows.filter((r) => r.previous !== undefined);
  const flagged = rows.filter((r) => r.flagged);
  process.stdout.write(`\nregression guard: ${rows.length} figures, ${compared.length} compared with the previous release (bench/README.md), ${flagged.length} more than 20% worse${flagged.length ? ': ' + flagged.map((r) => r.id).join(', ') : ''}\n`);
  const unrecorded = rows.filter((r) => r.previous === undefined).map((r) => r.id);
  if (unrecorded.length) process.stdout.write(`no recorded figure for: ${unrecorded.join(', ')}\n`);
  if (record) {
    fs.writeFileSync(readme, recordFigures(fs.readFileSync(readme, 'utf8'), rows.map((r) => r.figure)));
    process.stdout.write(`recorded ${rows.length} figures in bench/README.md\n`);
  }
  if (flagged.length) process.exitCode = 1;
}

/**
 * Issue #29: a 1024x1024 int32 region (`[1024:2048,1024:2048]`: 16 whole 256x256 chunks) of the
 * gzip level 4 datasets of compressed.h5 (bench/make_data.py: `noise`, values with 10 noisy low
 * bits, shuffle off, ~2:1; `noise_shuffle`, the same with shuffle, ~2.7:1; `pattern`, ~60:1)
 * read in binary by curl, over h5py reading the same region in-process from the same file in the
 * same run.
 * - first read: the region, then three other regions no read has touched (the server keeps
 *   decoded chunks of highly compressed data), each read once, against h5py reading each once
 *   in a new process; the median of the four ratios of rates;
 * - again: rounds of 5 reads on one curl connection against 5 reads in one h5py process (the
 *   first of each dropped), alternating; the ratio of the medians.
 * Its target (issue #29): at least h5py's rate for `noise`, first and again.
 */
async function compressedRegions(base: string, root: string, refUrl: string): Promise<void> {
  const C = '/b/compressed.h5';
  const file = path.join(root, 'b/compressed.h5');
  const croot = (await getJson(`${base}/?domain=${C}`)).root;
  const loop4 = median(Array.from({ length: 3 }, () => curlRates(`${refUrl}/bytes?n=${4 * 1024 * 1024}`, 4).slice(1)).flat());
  const REGION = '[1024:2048,1024:2048]';
  const others = ['[0:1024,2048:3072]', '[2048:3072,0:1024]', '[3072:4096,3072:4096]'];
  for (const name of ['noise', 'noise_shuffle', 'pattern']) {
    const id = await linkId(base, C, croot, name);
    const url = (sel: string) => `${base}/datasets/${id}/value?domain=${C}&select=${sel}`;
    const first: number[] = [];
    let firstNote = '';
    for (const sel of [REGION, ...others]) {
      const h = curlRates(url(sel), 1)[0]!;
      const p = h5pyReadRates(file, name, sel, 1)[0]!;
      first.push(h / p);
      if (sel === REGION) firstNote = `the region's own first read ${(h / 1e6).toFixed(0)} vs h5py ${(p / 1e6).toFixed(0)} MB/s`;
    }
    const target = name === 'noise' ? '>= 1' : 'report';
    const f = median(first);
    report(`compressed.${name}.first`, `binary GET ${REGION} int32 of gzip chunks (${name}), first read, over h5py in-process`, f, 'ratio', target, f >= 1 || target === 'report', `${firstNote}; ratios of 4 regions ${first.map((x) => x.toFixed(2)).join(' ')}; loopback limit for 4 MiB ${(loop4 / 1e6).toFixed(0)} MB/s`);
    const hs: number[] = [];
    const ps: number[] = [];
    for (let i = 0; i < 4; i++) {
      hs.push(...curlRates(url(REGION), 5).slice(1));
      ps.push(...h5pyReadRates(file, name, REGION, 5).slice(1));
    }
    const h = median(hs);
    const p = median(ps);
    report(`compressed.${name}.again`, `binary GET ${REGION} int32 of gzip chunks (${name}), again, over h5py in-process`, h / p, 'ratio', target, h / p >= 1 || target === 'report', `${(h / 1e6).toFixed(0)} vs h5py ${(p / 1e6).toFixed(0)} MB/s`);
  }
}

/**
 * 256 MiB binary write and read through the server vs h5py doing the same in-process, for a
 * contiguous and a chunked+deflate float32 dataset. Writes go to fresh datasets; dirty pages are
 * synced before each timed step (the VM's writeback otherwise decides the numbers); medians of
 * three alternating rounds.
 */
async function compareWithH5py(base: string, root: string): Promise<void> {
  const W = '/b/cmp.h5';
  await request(`${base}/?domain=${W}`, { method: 'PUT' });
  const n = 64 * 1024 * 1024;
  const body = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) body.writeFloatLE((i % 4096) * 0.25, i * 4);
  const spool = path.join(root, 'body.bin');
  fs.writeFileSync(spool, body);
  const layouts: [string, object][] = [
    ['contiguous', {}],
    ['chunked+deflate', { layout: { class: 'H5D_CHUNKED', dims: [1024, 1024] }, filters: [{ class: 'H5Z_FILTER_DEFLATE', id: 1, level: 1 }] }],
  ];
  const sync = () => execFileSync('sync');
  for (const [label, cp] of layouts) {
    const sw: number[] = [];
    const sr: number[] = [];
    const pw: number[] = [];
    const pr: number[] = [];
    for (let round = 0; round < 3; round++) {
      const r = await request(`${base}/datasets?domain=${W}`, { method: 'POST', keep: true, body: JSON.stringify({ type: 'H5T_IEEE_F32LE', shape: [8192, 8192], creationProperties: cp }) });
      const id = JSON.parse(r.body!.toString()).id;
      sync();
      const w = execFileSync('curl', ['-s', '-o', '/dev/null', '-X', 'PUT', '-H', 'Content-Type: application/octet-stream', '--data-binary', `@${spool}`, `${base}/datasets/${id}/value?domain=${W}`, '-w', '%{http_code} %{time_total}'], { encoding: 'utf8' }).split(' ');
      if (w[0] !== '200') throw new Error(`PUT ${w[0]}`);
      sw.push(body.length / Number(w[1]));
      sr.push(curlRates(`${base}/datasets/${id}/value?domain=${W}`, 1)[0]);
      sync();
      const py = execFileSync(PY, ['-c', H5PY_TIMING, path.join(root, `h5py-cmp-${round}.h5`), label], { encoding: 'utf8' }).trim().split(' ').map(Number);
      pw.push(py[0]);
      pr.push(py[1]);
    }
    const [w, r, hw, hr] = [median(sw), median(sr), median(pw), median(pr)];
    report(`h5py.${label}.write`, `256 MiB ${label} write, server vs h5py in-process`, w / 1e6, 'MB/s', 'report', true, `h5py ${(hw / 1e6).toFixed(0)} MB/s, ratio ${(w / hw).toFixed(2)}`, { ratio: w / hw });
    report(`h5py.${label}.read`, `256 MiB ${label} read, server vs h5py in-process`, r / 1e6, 'MB/s', 'report', true, `h5py ${(hr / 1e6).toFixed(0)} MB/s, ratio ${(r / hr).toFixed(2)}`, { ratio: r / hr });
  }
  fs.rmSync(spool, { force: true });
}

const H5PY_TIMING = `
import sys, time, os, h5py, numpy as np
path, label = sys.argv[1], sys.argv[2]
a = (np.arange(64*1024*1024, dtype=np.float32) % 4096 * 0.25).reshape(8192, 8192)
kw = dict(chunks=(1024, 1024), compression='gzip', compression_opts=1) if label != 'contiguous' else {}
if os.path.exists(path): os.remove(path)
with h5py.File(path, 'w') as f:
    d = f.create_dataset('x', shape=a.shape, dtype='<f4', **kw)
    t = time.perf_counter(); d[...] = a; f.flush(); w = time.perf_counter() - t
with h5py.File(path, 'r') as f:
    t = time.perf_counter(); b = f['x'][...]; r = time.perf_counter() - t
print(a.nbytes / w, a.nbytes / r)
`;
import { type Figure, compareFigure, parseRecorded, recordFigures } from './guard.js';
import { startReference } from './reference.js';
import { startBenchServer } from './server.js';
import { smallGetPaths } from './small-gets.js';

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
