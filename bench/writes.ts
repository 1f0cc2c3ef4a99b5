/**
 * Binary writes side by side (issue #9 target 6; bench/README.md "Binary writes"): this build and,
 * with `--base DIR`, another checkout's build (`DIR/dist/cli.js`, e.g. the commit before a
 * change), with a bare `node:http` upload sink (bench/reference.ts), requests alternating between
 * them so that both see the same machine load (the 2-core machine is shared: figures taken one
 * after the other are not comparable).
 *
 *   npm run build && node --import tsx bench/writes.ts [--base DIR] [--posts 200] [--puts 21] [--rounds 10]
 *
 * Measures, for each server: the median of `POST /datasets` (create + link, after 20 warm-up
 * requests), the median of a 16 MiB binary PUT into a new float32 dataset (4096 x 1024, no
 * layout) against the sink's median (the loopback upload limit), and the worst small GET (another
 * domain's root group) answered while a 16 MiB PUT is written, per round. fsync `always`.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReference } from './reference.js';
import { startBenchServer } from './server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const BASE = args.includes('--base') ? path.resolve(opt('base', '')) : undefined;
const POSTS = Number(opt('posts', '200'));
const PUTS = Number(opt('puts', '21'));
const ROUNDS = Number(opt('rounds', '10'));

const agent = new http.Agent({ keepAlive: true });
function request(url: string, o: { method?: string; body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const r = http.request(url, { method: o.method ?? 'GET', headers: o.headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString(), ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(o.body);
  });
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

interface Target {
  name: string;
  url: string;
  stop: () => Promise<void>;
  root: string;
  groot: string;
  post: number[];
  put: number[];
  worst: number[];
}

async function startTarget(name: string, checkout: string, dataDir: string): Promise<Target> {
  const s = await startBenchServer(['--root', dataDir], {}, checkout);
  for (const d of ['/w.h5', '/g.h5']) {
    const r = await request(`${s.url}/?domain=${d}`, { method: 'PUT' });
    if (r.status !== 201) throw new Error(`PUT / ${d}: ${r.status} ${r.body}`);
  }
  const rootOf = async (d: string) => JSON.parse((await request(`${s.url}/?domain=${d}`)).body).root as string;
  return { name, url: s.url, stop: s.stop, root: await rootOf('/w.h5'), groot: await rootOf('/g.h5'), post: [], put: [], worst: [] };
}

async function mk(t: Target, body: object): Promise<{ id: string; ms: number }> {
  const r = await request(`${t.url}/datasets?domain=/w.h5`, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 201) throw new Error(`${t.name}: POST /datasets ${r.status} ${r.body}`);
  return { id: JSON.parse(r.body).id, ms: r.ms };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-writes-'));
  const targets: Target[] = [];
  const sink = await startReference();
  try {
    fs.mkdirSync(path.join(tmp, 'this'));
    targets.push(await startTarget('this build', path.resolve(here, '..'), path.join(tmp, 'this')));
    if (BASE) {
      fs.mkdirSync(path.join(tmp, 'base'));
      targets.push(await startTarget(`--base ${BASE}`, BASE, path.join(tmp, 'base')));
    }
    const order = (i: number) => (i % 2 ? [...targets].reverse() : targets);
    for (let i = 0; i < POSTS; i++) {
      for (const t of order(i)) t.post.push((await mk(t, { type: 'H5T_IEEE_F32LE', shape: [100], link: { id: t.root, name: `d${i}` } })).ms);
    }
    const body = Buffer.alloc(16 * 1024 * 1024);
    for (let i = 0; i < body.length / 4; i++) body.writeFloatLE(i * 0.5, i * 4);
    const headers = { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) };
    const sinkMs: number[] = [];
    for (let i = 0; i < PUTS; i++) {
      sinkMs.push((await request(`${sink.url}/sink`, { method: 'PUT', body, headers })).ms);
      for (const t of order(i)) {
        const { id } = await mk(t, { type: 'H5T_IEEE_F32LE', shape: [4096, 1024] });
        const r = await request(`${t.url}/datasets/${id}/value?domain=/w.h5`, { method: 'PUT', body, headers });
        if (r.status !== 200) throw new Error(`${t.name}: PUT value ${r.status} ${r.body}`);
        t.put.push(r.ms);
      }
    }
    for (let i = 0; i < ROUNDS; i++) {
      for (const t of order(i)) {
        const { id } = await mk(t, { type: 'H5T_IEEE_F32LE', shape: [4096, 1024] });
        let writing = true;
        const lat: number[] = [];
        const w = request(`${t.url}/datasets/${id}/value?domain=/w.h5`, { method: 'PUT', body, headers }).finally(() => (writing = false));
        while (writing) lat.push((await request(`${t.url}/groups/${t.groot}?domain=/g.h5`)).ms);
        await w;
        t.worst.push(Math.max(...lat));
      }
    }
    const mbs = (ms: number) => (body.length / 1e6 / (ms / 1000)).toFixed(0);
    const s = median(sinkMs);
    process.stdout.write(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${os.cpus().length} cores; ${POSTS} POSTs, ${PUTS} PUTs, ${ROUNDS} rounds of small GETs during a PUT, per server, alternating\n`);
    process.stdout.write(`bare upload of 16 MiB: median ${s.toFixed(1)} ms = ${mbs(s)} MB/s\n`);
    for (const t of targets) {
      const p = median(t.put);
      process.stdout.write(
        `${t.name}: POST /datasets median ${median(t.post.slice(20)).toFixed(2)} ms (target <= 3); ` +
          `16 MiB PUT median ${p.toFixed(1)} ms = ${mbs(p)} MB/s, ${(s / p).toFixed(3)} of the bare upload (target >= 0.6); ` +
          `worst small GET during a PUT: median of rounds ${median(t.worst).toFixed(1)} ms, max ${Math.max(...t.worst).toFixed(1)} ms (target <= 50)\n`,
      );
    }
  } finally {
    for (const t of targets) await t.stop();
    await sink.stop();
    agent.destroy();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
