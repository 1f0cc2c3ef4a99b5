/**
 * Small GETs of two builds, paired (issue #9 target 1; bench/README.md "Issue #9, sixth
 * session"): this build and, with `--base DIR`, another checkout's build (`DIR/dist/cli.js`, e.g.
 * the commit before a change); without it, this build against itself (the method's own spread).
 *
 *   npm run build && npm run bench:pair -- [--base DIR] [--env-base K=V,...] [--kinds group,link] [--rounds 6] [--seconds 4] [--accept-encoding 'gzip, deflate']
 *
 * Kinds: group, attribute, link, dataset, domain (the default: all five), and post (`POST
 * /datasets` of a small unlinked dataset over one connection: the write path, fsyncs included).
 * Value reads and listings (issue #27 item 2), 16 connections: `value` (JSON of 100 float32),
 * `value.bin` (the same, binary), `points` (POST .../value of 10 points), `links` (a page of
 * 1,000 links of a group of 10,000, its bytes kept); one connection each (`wrk -c1`, as the
 * large reads of bench/run.ts): `json1m` (JSON of 1 Mi float32, formatted on the value
 * threads), `read256` (binary 256 MiB, streamed from the file's bytes), `rows16` (16 MiB of
 * whole rows), `block16` (a 16 MiB inner block, libhdf5 pages), `gzip` (a 1024x1024 region of
 * gzip chunks, again: copied from the cache of decoded chunks). Large reads want longer rounds
 * (`--seconds 6` or more).
 * `--accept-encoding` sends that header with every request (h5pyd's requests send
 * `gzip, deflate`: the compression middleware's cost on small answers); `--env-base` gives
 * settings to the base server only.
 *
 * Single `wrk` runs of one server after the other differ by up to 30% on a VM whose speed drifts
 * over seconds, more than most changes. Here both servers run at the same time, pinned together
 * to the last CPU (`taskset`), and two `wrk -t1 -c16` (one per server, pinned to the other CPUs)
 * run at the same time, which one starts first alternating by round: the servers share one core,
 * so the ratio of the requests they answer is the inverse ratio of their CPU per request, and a
 * drift of the machine hits both alike. Prints each round's ratio (this build over the base) and
 * their geometric mean per kind of GET: > 1 means this build answers more, i.e. costs less.
 * Needs `wrk` and `taskset` (util-linux) and at least 2 CPUs. The build against itself gives
 * 0.99-1.02 (6 rounds of 4 s); rounds of 1 s are too short for the servers' code to be warm.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchServer } from './server.js';
import { smallGetPaths } from './small-gets.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : def;
};
const BASE = path.resolve(args.includes('--base') ? opt('base', '') : path.join(here, '..'));
const SMALL = ['group', 'attribute', 'link', 'dataset', 'domain'];
const VALUE_KINDS = ['value', 'value.bin', 'points', 'links', 'json1m', 'read256', 'rows16', 'block16', 'gzip'];
const KINDS = opt('kinds', SMALL.join(',')).split(',');
const ROUNDS = Number(opt('rounds', '6'));
const SECONDS = Number(opt('seconds', '4'));
const ACCEPT_ENCODING = opt('accept-encoding', '');
/** `--env-base K=V,K2=V2`: settings of the base server only (A/B of a setting, e.g. H5STORE_READ_LEASE_MS=20). */
const BASE_ENV: Record<string, string> = Object.fromEntries(
  (args.includes('--env-base') ? opt('env-base', '') : '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);

/**
 * `post`: `POST /datasets` of a small unlinked dataset (held in the reserved group), one
 * connection (`wrk -c1 -s`), the write path's turn (a create, a flush and three fsyncs each).
 */
const POST_LUA = `wrk.method = "POST"
wrk.body = '{"type":"H5T_IEEE_F32LE","shape":[100]}'
wrk.headers["Content-Type"] = "application/json"
`;

/** How one kind of request is made: its connections, and a `wrk` script or headers. */
interface Load {
  conns: number;
  script?: string;
  accept?: string;
}

/** The points POSTed by the `points` kind (JSON, 10 coordinates of big.h5's /data). */
const POINTS_LUA = `wrk.method = "POST"
wrk.body = '{"points":[[0,0],[1,7],[2,9],[100,4],[5,5],[8000,8000],[3,3],[4,1000],[7,7],[9,9]]}'
wrk.headers["Content-Type"] = "application/json"
`;

/**
 * The value reads and listings besides the small GETs (see the module comment), by kind: the
 * path (with query) on the server at `base` and how it is loaded.
 */
async function valuePaths(base: string): Promise<Record<string, { path: string; load: Load }>> {
  const get = async (u: string) => (await (await fetch(base + u)).json()) as Record<string, any>;
  const D = '/b/big.h5';
  const root = (await get(`/?domain=${D}`)).root as string;
  const data = (await get(`/groups/${root}/links/data?domain=${D}`)).link.id as string;
  const chunked = (await get(`/groups/${root}/links/chunked?domain=${D}`)).link.id as string;
  const L = '/b/links10k.h5';
  const lroot = (await get(`/?domain=${L}`)).root as string;
  const bin = 'application/octet-stream';
  const value = (id: string, sel: string) => `/datasets/${id}/value?domain=${D}&select=${sel}`;
  return {
    value: { path: value(data, '[0:1,0:100]'), load: { conns: 16 } },
    'value.bin': { path: value(data, '[0:1,0:100]'), load: { conns: 16, accept: bin } },
    points: { path: `/datasets/${data}/value?domain=${D}`, load: { conns: 16, script: 'points.lua' } },
    links: { path: `/groups/${lroot}/links?domain=${L}&Limit=1000&Marker=g04999`, load: { conns: 16 } },
    json1m: { path: value(data, '[0:128,0:8192]'), load: { conns: 1 } },
    read256: { path: `/datasets/${data}/value?domain=${D}`, load: { conns: 1, accept: bin } },
    rows16: { path: value(data, '[1000:1512,0:8192]'), load: { conns: 1, accept: bin } },
    block16: { path: value(data, '[100:2148,1000:3048]'), load: { conns: 1, accept: bin } },
    gzip: { path: value(chunked, '[1024:2048,512:1536]'), load: { conns: 1, accept: bin } },
  };
}

/** h5py: a file of 10,000 empty groups g00000..g09999 in the root group (the `links` kind). */
const LINKS_PY = `
import sys, h5py
with h5py.File(sys.argv[1], 'w') as f:
    for i in range(10000): f.create_group('g%05d' % i)
`;

/** Requests answered by one `wrk -t1` run of `load` pinned to `cpus`. */
function wrk(url: string, cpus: string, load: Load): Promise<number> {
  return new Promise((resolve, reject) => {
    const opts = [`-c${load.conns}`, ...(load.script ? ['-s', load.script] : []), ...(load.accept ? ['-H', `Accept: ${load.accept}`] : [])];
    const header = ACCEPT_ENCODING ? ['-H', `Accept-Encoding: ${ACCEPT_ENCODING}`] : [];
    const p = spawn('taskset', ['-c', cpus, 'wrk', '-t1', ...opts, ...header, `-d${SECONDS}s`, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => (out += b));
    p.on('error', reject);
    p.on('exit', () => {
      const m = /(\d+) requests in/.exec(out);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`wrk ${url}: ${out}`));
    });
  });
}

async function main() {
  const cpus = os.availableParallelism();
  if (cpus < 2) throw new Error('needs at least 2 CPUs (the servers on one, the load generators on the others)');
  const serverCpu = String(cpus - 1);
  const loadCpus = cpus === 2 ? '0' : `0-${cpus - 2}`;
  for (const f of ['big.h5', 'attrs1k.h5']) {
    if (!fs.existsSync(path.join(here, 'data', f))) execFileSync('/usr/bin/python3', [path.join(here, 'make_data.py'), path.join(here, 'data')], { stdio: 'inherit' });
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-pair-'));
  const servers: { name: string; stop: () => Promise<void>; urls: Record<string, string> }[] = [];
  const loads: Record<string, Load> = { post: { conns: 1, script: path.join(tmp, 'post.lua') } };
  const values = KINDS.some((k) => !SMALL.includes(k) && k !== 'post');
  if (values) execFileSync('/usr/bin/python3', ['-c', LINKS_PY, path.join(tmp, 'links10k.h5')]);
  try {
    for (const [name, checkout] of [
      ['this', path.join(here, '..')],
      ['base', BASE],
    ] as const) {
      const root = path.join(tmp, name);
      fs.mkdirSync(path.join(root, 'b'), { recursive: true });
      for (const f of ['big.h5', 'attrs1k.h5']) fs.copyFileSync(path.join(here, 'data', f), path.join(root, 'b', f));
      if (values) fs.copyFileSync(path.join(tmp, 'links10k.h5'), path.join(root, 'b', 'links10k.h5'));
      const s = await startBenchServer(['--root', root], name === 'base' ? BASE_ENV : {}, checkout);
      execFileSync('taskset', ['-a', '-p', '-c', serverCpu, String(s.pid)], { stdio: 'ignore' }); // every thread of it
      const urls = Object.fromEntries((await smallGetPaths(s.url)).map(([kind, p]) => [kind, s.url + p]));
      if (values) {
        for (const [kind, v] of Object.entries(await valuePaths(s.url))) {
          urls[kind] = s.url + v.path;
          loads[kind] = { ...v.load, script: v.load.script && path.join(tmp, v.load.script) };
        }
      }
      if (KINDS.includes('post')) {
        const r = await fetch(`${s.url}/?domain=/b/post.h5`, { method: 'PUT' });
        if (r.status !== 201) throw new Error(`PUT /b/post.h5: ${r.status}`);
        urls.post = `${s.url}/datasets?domain=/b/post.h5`;
      }
      servers.push({ name, stop: s.stop, urls });
    }
    const [mine, base] = servers as [(typeof servers)[0], (typeof servers)[0]];
    console.log(`this build (${path.join(here, '..')}) over ${BASE === path.join(here, '..') ? 'itself (A/A)' : BASE}; servers on CPU ${serverCpu}, wrk on ${loadCpus}; ${ROUNDS} rounds of ${SECONDS} s`);
    fs.writeFileSync(path.join(tmp, 'post.lua'), POST_LUA);
    fs.writeFileSync(path.join(tmp, 'points.lua'), POINTS_LUA);
    for (const kind of KINDS) {
      const a = base.urls[kind];
      const b = mine.urls[kind];
      if (!a || !b) throw new Error(`unknown kind ${kind} (${[...SMALL, 'post', ...VALUE_KINDS].join(', ')})`);
      const load = loads[kind] ?? { conns: 16 };
      for (let w = 0; w < 2; w++) await Promise.all([wrk(a, loadCpus, load), wrk(b, loadCpus, load)].map((p) => p.catch(() => 0))); // warm-up (JIT, caches)
      const ratios: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const [nb, na] = r % 2 === 0 ? await Promise.all([wrk(b, loadCpus, load), wrk(a, loadCpus, load)]) : (await Promise.all([wrk(a, loadCpus, load), wrk(b, loadCpus, load)])).reverse();
        ratios.push(nb / na);
        console.log(`  ${kind} round ${r + 1}: this ${nb}, base ${na} requests: ${(nb / na).toFixed(3)}`);
      }
      const geo = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) / ratios.length);
      console.log(`${kind}: this build answered ${geo.toFixed(3)}x the base's requests (geometric mean; rounds ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);
    }
  } finally {
    for (const s of servers) await s.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
