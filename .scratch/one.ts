import { spawn } from 'node:child_process';
import fs from 'node:fs';
const repo = process.argv[2]; const env = process.argv[3] ?? '';
const root = fs.mkdtempSync('/tmp/hb/one-');
const p = spawn(process.execPath, [`${repo}/dist/cli.js`, 'serve', '--root', root, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, H5STORE_FSYNC: env || 'always' } });
const url: string = await new Promise((r) => p.stdout.on('data', (d) => { const m = /listening on (\S+)/.exec(String(d)); if (m) r(m[1]); }));
const req = async (u: string, method: string, body?: unknown) => { const r = await fetch(u, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined }); return { status: r.status, json: await r.json().catch(() => undefined) }; };
await req(`${url}/?domain=/d.h5`, 'PUT'); const root0 = (await req(`${url}/?domain=/d.h5`, 'GET')).json.root;
for (const conc of [1, 8]) {
  let stop = false, ok = 0; const lat: number[] = [];
  const w = async (k: number) => { let n = 0; while (!stop) { const t = performance.now(); const r = await req(`${url}/groups/${root0}/attributes/c${conc}-${k}-${n++}?domain=/d.h5`, 'PUT', { type: 'H5T_STD_I32LE', value: 1 }); lat.push(performance.now() - t); if (r.status === 201) ok++; } };
  const ws = Array.from({ length: conc }, (_, k) => w(k));
  await new Promise((r) => setTimeout(r, 5000)); stop = true; await Promise.all(ws);
  lat.sort((a, b) => a - b);
  console.log(repo.split('/').pop(), env || 'always', 'conc', conc, 'writes/s', (ok / 5).toFixed(0), 'p50', lat[lat.length >> 1].toFixed(2));
}
p.kill();
