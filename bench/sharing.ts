/**
 * Sharing and durability figures (issue #7 items 6 and 7; bench/README.md).
 *
 *   node --import tsx bench/sharing.ts [--seconds 10] [--server DIR]
 *
 * 1. fsync cost: one client writing small attributes sequentially, and 8 clients at once, with
 *    `fsync: always` and `fsync: never` (alternating rounds, same build, same run): writes/s and
 *    median latency, and the ratio.
 * 2. Two server processes on one data directory, 4 writers each on the same 2 domains (plus a
 *    reader each): acknowledged writes per process, 503 answers, latency; the same 8 writers on
 *    one process as the reference.
 *
 * The server is `DIR/dist/cli.js` (default: this checkout; `npm run build` first), so an older
 * build can be measured the same way for comparison.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const SECONDS = Number(opt('seconds', '10'));
const SERVER = path.resolve(opt('server', path.resolve(here, '..')));

interface Srv {
  proc: ChildProcess;
  url: string;
}

async function start(root: string, env: Record<string, string>): Promise<Srv> {
  const proc = spawn(process.execPath, [path.join(SERVER, 'dist/cli.js'), 'serve', '--root', root, '--port', '0', '--log-level', 'warn'], {
    // one process (older builds given with --server do not know the flag; they ignore the variable)
    env: { ...process.env, H5STORE_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) =>
    proc.stdout!.on('data', (d) => {
      const m = /listening on (\S+)/.exec(String(d));
      if (m) resolve(m[1]);
    }),
  );
  return { proc, url };
}

async function stop(s: Srv): Promise<void> {
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGTERM');
  await exited;
}

async function req(url: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  return { status: r.status, json: await r.json().catch(() => undefined) };
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? 0;
const p99 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length * 0.99)] ?? 0;

/** `writers` clients writing attributes to `domains` through `urls` (round robin) for `secs`. */
async function load(urls: string[], domains: Record<string, string>, writers: number, secs: number, readers = false) {
  const per = urls.map(() => ({ ok: 0, s503: 0, other: 0, lat: [] as number[] }));
  let stop = false;
  const names = Object.keys(domains);
  const w = async (k: number) => {
    const u = k % urls.length;
    for (let n = 0; !stop; n++) {
      const d = names[(n + k) % names.length];
      const t = performance.now();
      const r = await req(`${urls[u]}/groups/${domains[d]}/attributes/w${k}-${n}-${Math.random().toString(36).slice(2, 6)}?domain=${d}`, 'PUT', { type: 'H5T_STD_I32LE', value: n });
      per[u].lat.push(performance.now() - t);
      if (r.status === 201) per[u].ok++;
      else if (r.status === 503) per[u].s503++;
      else per[u].other++;
    }
  };
  const rd = async (u: number) => {
    while (!stop) for (const d of names) await req(`${urls[u]}/groups/${domains[d]}/links?domain=${d}`, 'GET');
  };
  const runs = Array.from({ length: writers }, (_, k) => w(k));
  if (readers) urls.forEach((_, u) => runs.push(rd(u)));
  await new Promise((r) => setTimeout(r, secs * 1000));
  stop = true;
  await Promise.all(runs);
  return per.map((p) => ({ writesPerSec: Math.round(p.ok / secs), s503: p.s503, other: p.other, p50ms: +median(p.lat).toFixed(2), p99ms: +p99(p.lat).toFixed(1) }));
}

async function domainsOn(url: string, names: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const d of names) {
    await req(`${url}/?domain=${d}`, 'PUT');
    out[d] = (await req(`${url}/?domain=${d}`, 'GET')).json.root;
  }
  return out;
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = { server: SERVER, seconds: SECONDS, load: os.loadavg()[0] };
  // 1. fsync cost
  const fsyncRows: Record<string, { seq: number[]; conc: number[]; seqP50: number[] }> = { always: { seq: [], conc: [], seqP50: [] }, never: { seq: [], conc: [], seqP50: [] } };
  for (let round = 0; round < 3; round++) {
    for (const policy of round % 2 ? ['never', 'always'] : ['always', 'never']) {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-fsync-'));
      const s = await start(root, { H5STORE_FSYNC: policy });
      const doms = await domainsOn(s.url, ['/f.h5']);
      const seq = await load([s.url], doms, 1, SECONDS / 3);
      const conc = await load([s.url], doms, 8, SECONDS / 3);
      fsyncRows[policy].seq.push(seq[0].writesPerSec);
      fsyncRows[policy].seqP50.push(seq[0].p50ms);
      fsyncRows[policy].conc.push(conc[0].writesPerSec);
      await stop(s);
      fs.rmSync(root, { recursive: true, force: true });
    }
  }
  const fsyncCost = {
    sequentialWritesPerSec: { always: median(fsyncRows.always.seq), never: median(fsyncRows.never.seq) },
    sequentialP50ms: { always: median(fsyncRows.always.seqP50), never: median(fsyncRows.never.seqP50) },
    eightClientsWritesPerSec: { always: median(fsyncRows.always.conc), never: median(fsyncRows.never.conc) },
    ratioSequential: +(median(fsyncRows.never.seq) / Math.max(1, median(fsyncRows.always.seq))).toFixed(2),
    ratioEightClients: +(median(fsyncRows.never.conc) / Math.max(1, median(fsyncRows.always.conc))).toFixed(2),
  };
  results.fsyncCost = fsyncCost;
  process.stdout.write(`fsync cost: ${JSON.stringify(fsyncCost)}\n`);
  // 2. two processes vs one
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-two-'));
  const a = await start(root, {});
  const b = await start(root, {});
  const doms = await domainsOn(a.url, ['/s1.h5', '/s2.h5']);
  const one = await load([a.url], doms, 8, SECONDS, true);
  const two = await load([a.url, b.url], doms, 8, SECONDS, true);
  await stop(a);
  await stop(b);
  fs.rmSync(root, { recursive: true, force: true });
  results.oneProcess = one[0];
  results.twoProcesses = { A: two[0], B: two[1] };
  process.stdout.write(`one process, 8 writers: ${JSON.stringify(one[0])}\ntwo processes, 4 writers each: A ${JSON.stringify(two[0])} B ${JSON.stringify(two[1])}\n`);
  fs.writeFileSync(path.join(os.tmpdir(), 'h5store-bench-sharing.json'), JSON.stringify(results, null, 2));
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});
