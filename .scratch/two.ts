import { spawn } from 'node:child_process';
import fs from 'node:fs';
const root = fs.mkdtempSync('/tmp/hb/two-');
async function start() {
  const p = spawn(process.execPath, ['dist/cli.js', 'serve', '--root', root, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stderr.on('data', (d) => (out += d));
  const url: string = await new Promise((r) => p.stdout.on('data', (d) => { const m = /listening on (\S+)/.exec(String(d)); if (m) r(m[1]); }));
  return { p, url, out: () => out };
}
const req = async (url: string, method: string, body?: unknown) => {
  const r = await fetch(url, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  return { status: r.status, json: await r.json().catch(() => undefined), ra: r.headers.get('retry-after') };
};
const a = await start(), b = await start();
const doms = ['/d1.h5', '/d2.h5'];
const roots: Record<string, string> = {};
for (const d of doms) { await req(`${a.url}/?domain=${d}`, 'PUT'); roots[d] = (await req(`${a.url}/?domain=${d}`, 'GET')).json.root; }
const DUR = Number(process.argv[2] ?? 10000);
const stats: Record<string, { ok: number; s503: number; other: number; lat: number[] }> = {};
const acked: Array<[string, string]> = [];
let stop = false;
async function writer(name: string, url: string, k: number) {
  const s = (stats[name] ??= { ok: 0, s503: 0, other: 0, lat: [] });
  let n = 0;
  while (!stop) {
    const d = doms[n % doms.length];
    const nm = `${name}-${k}-${n++}`;
    const t = performance.now();
    const r = await req(`${url}/groups/${roots[d]}/attributes/${nm}?domain=${d}`, 'PUT', { type: 'H5T_STD_I32LE', value: n });
    s.lat.push(performance.now() - t);
    if (r.status === 201) { s.ok++; acked.push([d, nm]); } else if (r.status === 503) s.s503++; else { s.other++; if (s.other < 3) console.log(r.status, r.json); }
  }
}
const ws = [];
for (let k = 0; k < 4; k++) { ws.push(writer('A', a.url, k)); ws.push(writer('B', b.url, k)); }
// readers too
async function reader(url: string) { while (!stop) { for (const d of doms) await req(`${url}/groups/${roots[d]}?domain=${d}`, 'GET'); } }
ws.push(reader(a.url), reader(b.url));
await new Promise((r) => setTimeout(r, DUR));
stop = true; await Promise.all(ws);
for (const [k, s] of Object.entries(stats)) { const l = s.lat.sort((x, y) => x - y); console.log(k, 'ok', s.ok, '503', s.s503, 'other', s.other, 'p50', l[l.length >> 1].toFixed(1), 'p99', l[Math.floor(l.length * 0.99)].toFixed(1), 'max', l[l.length - 1].toFixed(0)); }
// verify
let lost = 0;
for (const d of doms) {
  const r = await req(`${b.url}/groups/${roots[d]}/attributes?domain=${d}&Limit=100000`, 'GET');
  const names = new Set(r.json.attributes.map((x: { name: string }) => x.name));
  for (const [dd, nm] of acked) if (dd === d && !names.has(nm)) lost++;
}
console.log('acked', acked.length, 'lost', lost, a.out().slice(0, 500), b.out().slice(0, 500));
a.p.kill(); b.p.kill();
