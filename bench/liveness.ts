/**
 * Liveness under one heavy request (issue 7 item 5): how long a `GET /about` from another client
 * waits while one client writes one element into a large chunk, or creates / allocates a large
 * dataset. Not a test: numbers for the notes (bench/README.md).
 *
 * usage: npm run build && node --import tsx bench/liveness.ts [rounds]
 *
 * A poller sends `GET /about` back to back on its own keep-alive connection during each heavy
 * request; the figure is the worst (and 99th percentile) /about latency seen while the heavy
 * request ran, next to the same poller's latencies with nothing else running (the reference,
 * measured in the same run: absolute figures vary with the machine's load).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.js';

const ROUNDS = Number(process.argv[2] ?? 5);


function request(agent: http.Agent, base: string, method: string, p: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(base + p, { method, agent, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString(), ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Run `heavy` while polling GET /about; returns the heavy request's time and the /about latencies during it. */
async function during(base: string, heavy: () => Promise<{ status: number; ms: number }>): Promise<{ heavyMs: number; status: number; about: number[] }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat: number[] = [];
  let running = true;
  await request(agent, base, 'GET', '/about'); // warm the connection
  const poll = (async () => {
    while (running) lat.push((await request(agent, base, 'GET', '/about')).ms);
  })();
  await new Promise((r) => setTimeout(r, 20));
  const before = lat.length;
  const h = await heavy();
  running = false;
  await poll;
  agent.destroy();
  return { heavyMs: h.ms, status: h.status, about: lat.slice(Math.max(0, before - 1)) };
}

const max = (a: number[]) => a.reduce((x, y) => Math.max(x, y), 0);
const pct = (a: number[], p: number) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] ?? 0;
};
const median = (a: number[]) => pct(a, 50);

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-liveness-'));
  // A dropped-in file whose dataset has one 256 MiB gzip chunk (h5py), the case.
  execFileSync('/usr/bin/python3', [
    '-c',
    'import h5py, sys\nwith h5py.File(sys.argv[1], "w") as f:\n  f.create_dataset("big", shape=(8192, 8192), dtype="<f4", chunks=(8192, 8192), compression="gzip", compression_opts=1)\n  f.create_dataset("big_raw", shape=(8192, 8192), dtype="<f4", chunks=(8192, 8192))',
    path.join(root, 'dropped.h5'),
  ]);
  const srv = await startBenchServer(['--root', root]);
  const base = srv.url;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const json = (method: string, p: string, body?: unknown) =>
    request(agent, base, method, p, body === undefined ? undefined : JSON.stringify(body), { 'content-type': 'application/json' });
  const rows: { name: string; heavy: number[]; status: number; maxAbout: number[]; p99: number[] }[] = [];
  try {
    await json('PUT', '/?domain=/api.h5');
    const rootId = JSON.parse((await json('GET', '/?domain=/api.h5')).body).root;
    const dropRoot = JSON.parse((await json('GET', '/?domain=/dropped.h5')).body).root;
    const idOf = async (name: string) => JSON.parse((await json('GET', `/groups/${dropRoot}/links/${name}?domain=/dropped.h5`)).body).link.id as string;
    const bigGzip = await idOf('big');
    const bigRaw = await idOf('big_raw');

    // reference: /about with nothing else running
    const ref = await during(base, async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { status: 200, ms: 300 };
    });
    rows.push({ name: 'reference: GET /about, nothing else running', heavy: [0], status: 200, maxAbout: [max(ref.about)], p99: [pct(ref.about, 99)] });

    const scenarios: [string, (i: number) => Promise<{ status: number; ms: number }>][] = [
      ['POST /datasets 256 MiB chunks (refused: max_chunk_size)', (i) => json('POST', '/datasets?domain=/api.h5', { type: 'H5T_IEEE_F32LE', shape: [8192, 8192], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [8192, 8192] } }, link: { id: rootId, name: `c256_${i}` } })],
      ['POST /datasets 16 GiB, no layout (created chunked)', (i) => json('POST', '/datasets?domain=/api.h5', { type: 'H5T_IEEE_F32LE', shape: [65536, 65536], link: { id: rootId, name: `huge_${i}` } })],
      ['POST /datasets 16 GiB, allocTime EARLY (refused)', (i) => json('POST', '/datasets?domain=/api.h5', { type: 'H5T_IEEE_F32LE', shape: [65536, 65536], creationProperties: { allocTime: 'H5D_ALLOC_TIME_EARLY' }, link: { id: rootId, name: `early_${i}` } })],
      ['POST /datasets 1 GiB contiguous + fill value (refused)', (i) => json('POST', '/datasets?domain=/api.h5', { type: 'H5T_IEEE_F32LE', shape: [16384, 16384], creationProperties: { layout: { class: 'H5D_CONTIGUOUS' }, fillValue: 1 }, link: { id: rootId, name: `cfill_${i}` } })],
      ['POST /datasets 4 MiB chunks + gzip', (i) => json('POST', '/datasets?domain=/api.h5', { type: 'H5T_IEEE_F32LE', shape: [8192, 8192], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [1024, 1024] }, filters: ['gzip'], fillValue: 1 }, link: { id: rootId, name: `c4_${i}` } })],
      [
        'PUT one element into a fresh 4 MiB gzip chunk (fill value)',
        async (i) => {
          const id = JSON.parse((await json('GET', `/groups/${rootId}/links/c4_${i}?domain=/api.h5`)).body).link.id;
          return json('PUT', `/datasets/${id}/value?domain=/api.h5&select=[${1024 * i}:${1024 * i + 1},5:6]`, { value: [[7]] });
        },
      ],
      [
        'PUT one element into the 16 GiB dataset created chunked',
        async (i) => {
          const id = JSON.parse((await json('GET', `/groups/${rootId}/links/huge_${i}?domain=/api.h5`)).body).link.id;
          return json('PUT', `/datasets/${id}/value?domain=/api.h5&select=[${4096 * i}:${4096 * i + 1},9:10]`, { value: [[7]] });
        },
      ],
      ['PUT one element into a dropped-in 256 MiB gzip chunk', (i) => json('PUT', `/datasets/${bigGzip}/value?domain=/dropped.h5&select=[${i}:${i + 1},0:1]`, { value: [[i]] })],
      ['GET one element of a dropped-in 256 MiB gzip chunk', (i) => json('GET', `/datasets/${bigGzip}/value?domain=/dropped.h5&select=[${i}:${i + 1},0:1]`)],
      ['PUT one element into a dropped-in 256 MiB chunk (no filter)', (i) => json('PUT', `/datasets/${bigRaw}/value?domain=/dropped.h5&select=[${i}:${i + 1},0:1]`, { value: [[i]] })],
    ];
    for (const [name] of scenarios) rows.push({ name, heavy: [], status: 0, maxAbout: [], p99: [] });
    for (let i = 0; i < ROUNDS; i++) {
      for (const [k, [name, run]] of scenarios.entries()) {
        const r = await during(base, () => run(i));
        const row = rows[k + 1];
        row.heavy.push(r.heavyMs);
        row.status = r.status;
        row.maxAbout.push(max(r.about));
        row.p99.push(pct(r.about, 99));
        process.stderr.write(`${name} #${i}: ${r.status} in ${r.heavyMs.toFixed(1)} ms; /about max ${max(r.about).toFixed(1)} ms\n`);
      }
    }
  } finally {
    await srv.stop();
    agent.destroy();
    fs.rmSync(root, { recursive: true, force: true });
  }
  process.stdout.write(`\n| Heavy request (medians of ${ROUNDS} rounds) | status | heavy request ms | worst GET /about ms | p99 GET /about ms |\n|---|---|---|---|---|\n`);
  for (const r of rows) {
    process.stdout.write(`| ${r.name} | ${r.status} | ${median(r.heavy).toFixed(1)} | ${median(r.maxAbout).toFixed(1)} | ${median(r.p99).toFixed(1)} |\n`);
  }
}

void main();
