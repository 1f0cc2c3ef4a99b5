/**
 * Small GETs of two builds, paired (issue #9 target 1; bench/README.md "Issue #9, sixth
 * session"): this build and, with `--base DIR`, another checkout's build (`DIR/dist/cli.js`, e.g.
 * the commit before a change); without it, this build against itself (the method's own spread).
 *
 *   npm run build && npm run bench:pair -- [--base DIR] [--kinds group,link] [--rounds 6] [--seconds 4]
 *
 * Kinds: group, attribute, link, dataset, domain (the default: all five), and post (`POST
 * /datasets` of a small unlinked dataset over one connection: the write path, fsyncs included).
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
const KINDS = opt('kinds', 'group,attribute,link,dataset,domain').split(',');
const ROUNDS = Number(opt('rounds', '6'));
const SECONDS = Number(opt('seconds', '4'));

/**
 * `post`: `POST /datasets` of a small unlinked dataset (held in the reserved group), one
 * connection (`wrk -c1 -s`), the write path's turn (a create, a flush and three fsyncs each).
 */
const POST_LUA = `wrk.method = "POST"
wrk.body = '{"type":"H5T_IEEE_F32LE","shape":[100]}'
wrk.headers["Content-Type"] = "application/json"
`;

/** Requests answered by one `wrk -t1 -c16` run (`-c1` with `script`) pinned to `cpus`. */
function wrk(url: string, cpus: string, script?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const load = script ? ['-c1', '-s', script] : ['-c16'];
    const p = spawn('taskset', ['-c', cpus, 'wrk', '-t1', ...load, `-d${SECONDS}s`, url], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  try {
    for (const [name, checkout] of [
      ['this', path.join(here, '..')],
      ['base', BASE],
    ] as const) {
      const root = path.join(tmp, name);
      fs.mkdirSync(path.join(root, 'b'), { recursive: true });
      for (const f of ['big.h5', 'attrs1k.h5']) fs.copyFileSync(path.join(here, 'data', f), path.join(root, 'b', f));
      const s = await startBenchServer(['--root', root], {}, checkout);
      execFileSync('taskset', ['-a', '-p', '-c', serverCpu, String(s.pid)], { stdio: 'ignore' }); // every thread of it
      const urls = Object.fromEntries((await smallGetPaths(s.url)).map(([kind, p]) => [kind, s.url + p]));
      if (KINDS.includes('post')) {
        const r = await fetch(`${s.url}/?domain=/b/post.h5`, { method: 'PUT' });
        if (r.status !== 201) throw new Error(`PUT /b/post.h5: ${r.status}`);
        urls.post = `${s.url}/datasets?domain=/b/post.h5`;
      }
      servers.push({ name, stop: s.stop, urls });
    }
    const [mine, base] = servers as [(typeof servers)[0], (typeof servers)[0]];
    console.log(`this build (${path.join(here, '..')}) over ${BASE === path.join(here, '..') ? 'itself (A/A)' : BASE}; servers on CPU ${serverCpu}, wrk on ${loadCpus}; ${ROUNDS} rounds of ${SECONDS} s`);
    const lua = path.join(tmp, 'post.lua');
    fs.writeFileSync(lua, POST_LUA);
    for (const kind of KINDS) {
      const a = base.urls[kind];
      const b = mine.urls[kind];
      if (!a || !b) throw new Error(`unknown kind ${kind} (group, attribute, link, dataset, domain, post)`);
      const script = kind === 'post' ? lua : undefined;
      for (let w = 0; w < 2; w++) await Promise.all([wrk(a, loadCpus, script), wrk(b, loadCpus, script)].map((p) => p.catch(() => 0))); // warm-up (JIT, caches)
      const ratios: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const [nb, na] = r % 2 === 0 ? await Promise.all([wrk(b, loadCpus, script), wrk(a, loadCpus, script)]) : (await Promise.all([wrk(a, loadCpus, script), wrk(b, loadCpus, script)])).reverse();
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
