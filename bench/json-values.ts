/**
 * JSON value reads over HTTP (issue #9 target 5): `GET /datasets/<id>/value?select=[0:1024,0:1024]`
 * answered as JSON, for float32 (random in [-500, 500), as bench/run.ts `write`), float64, int32
 * and float16 datasets of shape [4096, 1024]. Reports the binary-equivalent rate (selection bytes
 * / time, first byte sent to last byte received) and the server's CPU time per request (from
 * /proc/<pid>/stat: less sensitive to a loaded machine than wall time).
 *
 * usage: npm run build && node --import tsx bench/json-values.ts [rounds] [type ...]
 *   types: f32 f64 i32 f16 f32big (float32 [0:4096,0:1024], streamed in pages)
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.js';

const rounds = Number(process.argv[2] ?? 9);
const want = process.argv.slice(3);
const agent = new http.Agent({ keepAlive: true });

function request(url: string, opts: { method?: string; body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Buffer; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** CPU time (user + system, ms) of process `pid` so far. */
function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // clock ticks (USER_HZ = 100)
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-jsonbench-'));
const srv = await startBenchServer(['--root', root]);
try {
  const D = '/jsonbench.h5';
  const base = srv.url;
  await request(`${base}/?domain=${D}`, { method: 'PUT' });
  type Kind = { name: string; type: string; size: number; sel: string; fill: (b: Buffer, i: number) => void };
  const all: Kind[] = [
    { name: 'f32', type: 'H5T_IEEE_F32LE', size: 4, sel: '[0:1024,0:1024]', fill: (b, i) => b.writeFloatLE(Math.random() * 1000 - 500, i * 4) },
    { name: 'f64', type: 'H5T_IEEE_F64LE', size: 8, sel: '[0:1024,0:1024]', fill: (b, i) => b.writeDoubleLE(Math.random() * 1000 - 500, i * 8) },
    { name: 'i32', type: 'H5T_STD_I32LE', size: 4, sel: '[0:1024,0:1024]', fill: (b, i) => b.writeInt32LE((Math.random() * 2 ** 32) | 0, i * 4) },
    { name: 'f16', type: 'H5T_IEEE_F16LE', size: 2, sel: '[0:1024,0:1024]', fill: (b, i) => b.writeUInt16LE((Math.random() * 0x7c00) | 0, i * 2) },
    { name: 'f32big', type: 'H5T_IEEE_F32LE', size: 4, sel: '[0:4096,0:1024]', fill: (b, i) => b.writeFloatLE(Math.random() * 1000 - 500, i * 4) },
  ];
  const kinds = all.filter((k) => want.length === 0 || want.includes(k.name));
  const ids: Record<string, string> = {};
  for (const k of kinds) {
    const r = await request(`${base}/datasets?domain=${D}`, { method: 'POST', body: JSON.stringify({ type: k.type, shape: [4096, 1024] }) });
    if (r.status !== 201) throw new Error(`POST /datasets ${r.status} ${r.body}`);
    ids[k.name] = JSON.parse(r.body.toString()).id;
    const data = Buffer.alloc(4096 * 1024 * k.size);
    for (let i = 0; i < 4096 * 1024; i++) k.fill(data, i);
    const w = await request(`${base}/datasets/${ids[k.name]}/value?domain=${D}`, { method: 'PUT', body: data, headers: { 'Content-Type': 'application/octet-stream' } });
    if (w.status !== 200) throw new Error(`PUT value ${w.status}`);
  }
  console.log(`Node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${rounds} requests each`);
  for (const k of kinds) {
    const url = `${base}/datasets/${ids[k.name]}/value?domain=${D}&select=${k.sel}`;
    const [a, b] = k.sel.slice(1, -1).split(',').map((s) => s.split(':').map(Number));
    const bytes = (a[1] - a[0]) * (b[1] - b[0]) * k.size;
    await request(url); // warm-up
    const rates: number[] = [];
    const cpu: number[] = [];
    let size = 0;
    for (let i = 0; i < rounds; i++) {
      const c0 = cpuMs(srv.pid);
      const r = await request(url);
      cpu.push(cpuMs(srv.pid) - c0);
      if (r.status !== 200) throw new Error(`GET ${r.status}`);
      size = r.body.length;
      rates.push(bytes / (r.ms / 1000));
    }
    console.log(
      `${k.name.padEnd(7)} ${(median(rates) / 1e6).toFixed(1).padStart(6)} MB/s binary-equivalent (best ${(Math.max(...rates) / 1e6).toFixed(1)}), ` +
        `server CPU ${median(cpu).toFixed(0)} ms/request, body ${(size / 1e6).toFixed(1)} MB`,
    );
  }
} finally {
  await srv.stop();
  fs.rmSync(root, { recursive: true, force: true });
}
