/**
 * `serve --workers 1` against `--workers 2` (src/cluster.ts), same data, alternating rounds:
 *
 * 1. reads: wrk -t1 -c16, `GET /groups/<root>?domain=/big.h5` (a copy of bench/data/big.h5);
 * 2. hot-domain writes: wrk -t1 -c8, small JSON value writes (`PUT /datasets/<id>/value?select=[k:k+1]`)
 *    to one domain;
 * 3. spread writes: the same over 4 domains (2 owned by each worker of 2), 8 connections.
 *
 * Each run is `BENCH_SECONDS` (default 10) after a 2 s warm-up; 503s and other non-2xx answers
 * are counted by wrk's Lua `response` hook (reads: wrk's own non-2xx count, no Lua, which would
 * cost wrk more CPU than the server). The load average is read before each server starts.
 * `npm run build:server && npm run bench:workers` (runs dist/; BENCH_ROUNDS, default 3;
 * BENCH_SECONDS, default 10; BENCH_FSYNC=never for CPU-bound writes).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownerOf } from '../src/cluster.js';
import { startBenchServer } from './server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `always` (the default) or `never`: with `never` writes are CPU-bound, not fsync-bound. */
const FSYNC = process.env.BENCH_FSYNC ?? 'always';

interface Run {
  rps: number;
  s503: number;
  bad: number;
}

/** One plain wrk run on one URL (no Lua: wrk's own cost stays low); 503s are among the non-2xx. */
function wrkUrl(url: string, conns: number, seconds: number): Run {
  const r = spawnSync('wrk', ['-t', '1', '-c', String(conns), '-d', `${seconds}s`, url], { encoding: 'utf8' });
  const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  if (!m) throw new Error(`wrk: ${r.stdout} ${r.stderr}`);
  const bad = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  return { rps: Number(m[1]), s503: NaN, bad };
}

/** One wrk run with a Lua script that builds each request from `reqs` (method, path, body) in turn. */
function wrk(base: string, conns: number, seconds: number, reqs: { method: string; path: string; body?: string }[]): Run {
  const lua = path.join(os.tmpdir(), `h5store-bench-workers-${process.pid}.lua`);
  const list = reqs.map((r) => `{${JSON.stringify(r.method)}, ${JSON.stringify(r.path)}, ${r.body === undefined ? 'nil' : JSON.stringify(r.body)}}`).join(',\n');
  fs.writeFileSync(
    lua,
    `local reqs = {${list}}
local threads = {}
function setup(thread) table.insert(threads, thread) end
i = 0
s503 = 0
bad = 0
function request()
  i = i + 1
  local r = reqs[(i % #reqs) + 1]
  if r[3] then return wrk.format(r[1], r[2], {["Content-Type"] = "application/json"}, r[3]) end
  return wrk.format(r[1], r[2])
end
function response(status, headers, body)
  if status == 503 then s503 = s503 + 1 end
  if status >= 300 then bad = bad + 1 end
end
function done(summary, latency, requests)
  local a, b = 0, 0
  for _, t in ipairs(threads) do a = a + t:get("s503"); b = b + t:get("bad") end
  io.write(string.format("S503 %d BAD %d\\n", a, b))
end
`,
  );
  const r = spawnSync('wrk', ['-t', '1', '-c', String(conns), '-d', `${seconds}s`, '-s', lua, base], { encoding: 'utf8' });
  fs.rmSync(lua, { force: true });
  const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  const s = /S503 (\d+) BAD (\d+)/.exec(r.stdout);
  if (!m || !s) throw new Error(`wrk: ${r.stdout} ${r.stderr}`);
  return { rps: Number(m[1]), s503: Number(s[1]), bad: Number(s[2]) };
}

async function api(base: string, method: string, p: string, body?: unknown): Promise<any> {
  const r = await fetch(base + p, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** The write requests of a domain's 1024-element int32 dataset: one element each, in turn. */
function valueWrites(domain: string, id: string, n = 256): { method: string; path: string; body: string }[] {
  return Array.from({ length: n }, (_, k) => ({ method: 'PUT', path: `/datasets/${id}/value?domain=${domain}&select=[${k}:${k + 1}]`, body: `{"value":[${k}]}` }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

async function main(): Promise<void> {
  const big = path.join(here, 'data/big.h5');
  if (!fs.existsSync(big)) throw new Error('bench/data/big.h5 is missing: run /usr/bin/python3 bench/make_data.py');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-workers-'));
  try {
    fs.copyFileSync(big, path.join(root, 'big.h5'));
    // domains: one hot, four spread (two per owner of 2 workers)
    const spread: string[] = [];
    for (let k = 0; spread.length < 4; k++) {
      const d = `/spread-${k}.h5`;
      if (spread.filter((s) => ownerOf(s, 2) === ownerOf(d, 2)).length < 2) spread.push(d);
    }
    const setup = await startBenchServer(['--root', root]);
    const bigRoot = (await api(setup.url, 'GET', '/?domain=/big.h5')).root as string;
    const datasets: Record<string, string> = {};
    for (const d of ['/hot.h5', ...spread]) {
      const r = (await api(setup.url, 'PUT', `/?domain=${d}`)).root as string;
      datasets[d] = (await api(setup.url, 'POST', `/datasets?domain=${d}`, { type: 'H5T_STD_I32LE', shape: [1024], link: { id: r, name: 'v' } })).id;
    }
    await setup.stop();

    const readUrl = `/groups/${bigRoot}?domain=/big.h5`;
    const hot = valueWrites('/hot.h5', datasets['/hot.h5']);
    const spreadReqs = spread.flatMap((d) => valueWrites(d, datasets[d], 64));
    const results: Record<string, Record<string, Run[]>> = {};
    const loads: string[] = [];
    console.log(`cores ${os.availableParallelism()}, ${SECONDS} s per run, ${ROUNDS} rounds, fsync ${FSYNC}`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const workers of [1, 2]) {
        const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
        loads.push(load);
        const srv = await startBenchServer(['--root', root, '--workers', String(workers)], { H5STORE_FSYNC: FSYNC });
        const put = (k: string, r: Run) => {
          ((results[k] ??= {})[workers] ??= []).push(r);
          console.log(`round ${round + 1}, ${workers} worker(s), load ${load}: ${k} ${r.rps.toFixed(0)}/s, 503: ${Number.isNaN(r.s503) ? '-' : r.s503}, non-2xx: ${r.bad}`);
        };
        wrkUrl(srv.url + readUrl, 16, 2);
        put('reads (16 conn)', wrkUrl(srv.url + readUrl, 16, SECONDS));
        put('hot-domain writes (8 conn, 1 domain)', wrk(srv.url, 8, SECONDS, hot));
        put('spread writes (8 conn, 4 domains)', wrk(srv.url, 8, SECONDS, spreadReqs));
        await srv.stop();
      }
    }
    console.log('\n| workload | 1 worker | 2 workers | ratio | 503 (1 / 2) | non-2xx, 503 included (1 / 2) |\n|---|---|---|---|---|---|');
    for (const [k, by] of Object.entries(results)) {
      const one = median(by[1].map((r) => r.rps));
      const two = median(by[2].map((r) => r.rps));
      const sum = (rs: Run[], f: (r: Run) => number) => rs.reduce((a, r) => a + (Number.isNaN(f(r)) ? 0 : f(r)), 0);
      console.log(
        `| ${k} | ${one.toFixed(0)}/s | ${two.toFixed(0)}/s | ${(two / one).toFixed(2)}x | ${sum(by[1], (r) => r.s503)} / ${sum(by[2], (r) => r.s503)} | ${sum(by[1], (r) => r.bad)} / ${sum(by[2], (r) => r.bad)} |`,
      );
    }
    console.log(`\nmedians of ${ROUNDS} rounds; load average (1/5/15 min) before each server: ${loads.join('; ')}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
