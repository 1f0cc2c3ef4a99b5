/**
 * The concurrent hostile-input run (issue #24 item 14): `npm run bench:hostile -- [options]`.
 *
 * Starts a server (one process, or `--workers N`) on a fresh data directory with core dumps on
 * (`ulimit -c unlimited`, cores land in the run's directory) and Node's diagnostic report on
 * SIGUSR2, makes the world of test/helpers/hostile.ts (domains made through the API, fixture
 * files dropped in), then sends the seed's requests from many clients at once, each bounded by
 * 10 s, while a probe asks `GET /about` every 200 ms. Prints the figures: requests, answered,
 * no answer in 10 s, 5xx, connection errors, the longest probe gap, and crashes (the server
 * process or a worker dying, core files). When the probe goes unanswered for 3 s the server's
 * threads are dumped with gdb (native stacks) into the run's directory.
 *
 *   --seed N          generator seed (default 1123)
 *   --requests N      requests to send (default 12000)
 *   --clients N       concurrent clients (default 32)
 *   --workers N       server processes (default 1)
 *   --users           a users file (admin, alice, bob): requests as each of them, anonymous, wrong
 *   --only i,j,...    replay only these request indices (concurrently)
 *   --from N          first request index (default 0)
 *   --max-seconds N   stop sending after this long (default 600)
 *   --keep            keep the run's directory (always kept after a crash or stall)
 *   --json FILE       write the whole report as JSON
 *   --log-level L     the server's (default warn; info logs every request with its time)
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { userAdd } from '../src/auth/admin.js';
import { type HostileReport, runHostile, setupWorld } from '../test/helpers/hostile.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = path.resolve(repo, '../shared/fixtures/hdf5');
const FIXTURE_NAMES = ['tall.h5', 'compound.h5', 'dset_gzip.h5', 'vlen_string_dset.h5', 'objref_dset.h5', 'resizable.h5', 'namedtype.h5', 'attr1k.h5', 'group1k.h5', 'scalar.h5', 'null_space_attr.h5', 'fillvalue.h5'];

function arg(name: string): string | undefined {
  const k = process.argv.indexOf(`--${name}`);
  return k >= 0 ? process.argv[k + 1] : undefined;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

const seed = Number(arg('seed') ?? 1123);
const requests = Number(arg('requests') ?? 12000);
const clients = Number(arg('clients') ?? 32);
const workers = Number(arg('workers') ?? 1);
const only = arg('only')?.split(',').map(Number);
const from = Number(arg('from') ?? 0);
const maxMs = Number(arg('max-seconds') ?? 600) * 1000;

const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-hostile-'));
const root = path.join(runDir, 'data');
fs.mkdirSync(root);

const users = flag('users') ? { admin: 'admin-pw-h0st', alice: 'alice-pw-h0st', bob: 'bob-pw-h0st' } : undefined;
const usersArgs: string[] = [];
if (users) {
  const file = path.join(runDir, 'users.json');
  for (const [u, pw] of Object.entries(users)) await userAdd(file, u, pw);
  usersArgs.push('--users-file', file);
}

const serverArgs = [
  '--report-on-signal',
  '--report-signal=SIGUSR2',
  `--report-directory=${runDir}`,
  '--import',
  path.join(repo, 'node_modules/tsx/dist/esm/index.mjs'),
  path.join(repo, 'src/cli.ts'),
  'serve',
  '--root',
  root,
  '--port',
  '0',
  '--log-level',
  arg('log-level') ?? 'warn',
  '--exit-with-stdin',
  '--workers',
  String(workers),
  ...usersArgs,
];
const quoted = [process.execPath, ...serverArgs].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
const proc = spawn('bash', ['-c', `ulimit -c unlimited; exec ${quoted}`], { cwd: runDir, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, H5STORE_PLUGIN_PATH: process.env.H5STORE_PLUGIN_PATH ?? '' } });
let log = '';
const deaths: string[] = [];
let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
const onOut = (b: Buffer) => {
  const s = b.toString();
  log += s;
  for (const line of s.split('\n')) if (/worker died|watchdog|stalled/.test(line)) deaths.push(line.slice(0, 4000));
};
proc.stdout.on('data', onOut);
proc.stderr.on('data', onOut);
proc.once('exit', (code, signal) => (exit = { code, signal }));
const url = await new Promise<string>((resolve, reject) => {
  const t = setInterval(() => {
    const m = /listening on (http:\/\/\S+)/.exec(log);
    if (m) {
      clearInterval(t);
      resolve(m[1]);
    }
    if (exit) {
      clearInterval(t);
      reject(new Error(`server exited: ${log}`));
    }
  }, 50);
});

const adminAuth = users ? 'Basic ' + Buffer.from(`admin:${users.admin}`).toString('base64') : undefined;
const world = await setupWorld(url, root, {
  domains: 4,
  fixtures: fs.existsSync(FIXTURES) ? FIXTURE_NAMES.map((n) => path.join(FIXTURES, n)).filter((f) => fs.existsSync(f)) : [],
  auth: adminAuth,
  users,
});
process.stderr.write(`hostile: seed ${seed}, ${only ? only.length : requests} requests, ${clients} clients, ${workers} worker(s), ${world.domains.length} domains; run directory ${runDir}\n`);

/** Native stacks of every thread of the server's processes (gdb), into the run directory. */
function dumpStacks(why: string): void {
  const pids = [proc.pid!];
  try {
    pids.push(...execFileSync('pgrep', ['-P', String(proc.pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number));
  } catch {
    /* no children */
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGUSR2'); // Node's report (JS stack) when the main thread gets to it
    } catch {
      /* gone */
    }
    try {
      const out = execFileSync('gdb', ['-p', String(pid), '-batch', '-ex', 'thread apply all bt 40'], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
      fs.writeFileSync(path.join(runDir, `stacks-${pid}-${Date.now()}.txt`), `${why}\n${out}`);
    } catch (e) {
      fs.writeFileSync(path.join(runDir, `stacks-${pid}-${Date.now()}.txt`), `${why}\ngdb failed: ${(e as Error).message}`);
    }
  }
}

// watch for stalls while the run goes on: 3 s without an answer to /about
let lastAbout = performance.now();
let stallDumps = 0;
let running = true;
const watcher = (async () => {
  while (running) {
    const t = performance.now();
    try {
      const r = await fetch(url + '/about', { signal: AbortSignal.timeout(1000) });
      await r.arrayBuffer();
      lastAbout = performance.now();
    } catch {
      /* not answered */
    }
    if (performance.now() - lastAbout > 3000 && stallDumps < 3 && !exit) {
      stallDumps++;
      dumpStacks(`no answer to GET /about for ${Math.round(performance.now() - lastAbout)} ms`);
      lastAbout = performance.now();
    }
    await new Promise((r) => setTimeout(r, Math.max(0, 300 - (performance.now() - t))));
  }
})();

const report: HostileReport = await runHostile({
  url,
  world,
  seed,
  requests,
  from,
  only,
  clients,
  timeoutMs: 10_000,
  maxMs,
  progress: (n) => process.stderr.write(`  ${n} requests\n`),
  stopped: () => exit !== undefined && workers === 1,
});
running = false;
await watcher;
const crashed = exit !== undefined;
if (!crashed) {
  proc.stdin.end();
  await new Promise<void>((r) => {
    const t = setTimeout(() => {
      proc.kill('SIGKILL');
      r();
    }, 15_000);
    proc.once('exit', () => {
      clearTimeout(t);
      r();
    });
  });
}
const cores = fs.readdirSync(runDir).filter((n) => /^core/.test(n));
const reports = fs.readdirSync(runDir).filter((n) => /^report\..*\.json$/.test(n) || /^stacks-/.test(n));
const summary = {
  seed,
  workers,
  users: !!users,
  requests: report.requests,
  answered: report.answered,
  aborted: report.aborted,
  noAnswer: report.noAnswer.length,
  serverErrors: report.serverErrors.length,
  status5xx: Object.fromEntries(Object.entries(report.statuses).filter(([s]) => Number(s) >= 500)),
  connectionErrors: report.connectionErrors.length,
  probeMaxGapMs: report.probe.maxGapMs,
  stalls: report.probe.stalls,
  serverExit: crashed ? exit : undefined,
  workerDeaths: deaths.filter((d) => /worker died/.test(d)).length,
  cores,
  durationS: Math.round(report.durationMs / 100) / 10,
  runDir,
};
console.log(JSON.stringify(summary, null, 1));
for (const p of report.noAnswer.slice(0, 20)) console.log(`no answer: #${p.i} ${p.method} ${p.url}${p.after ? ` (on a kept-alive connection, after ${p.after})` : ""}`);
for (const p of report.serverErrors.slice(0, 20)) console.log(`${p.status}: #${p.i} ${p.method} ${p.url}: ${p.message}`);
for (const p of report.connectionErrors.slice(0, 10)) console.log(`connection: #${p.i} ${p.method} ${p.url}: ${p.message}`);
for (const d of deaths.slice(0, 5)) console.log(`log: ${d}`);
if (reports.length) console.log(`diagnostics in ${runDir}: ${reports.join(', ')}`);
const out = arg('json');
if (out) fs.writeFileSync(out, JSON.stringify({ summary, report, log: log.slice(-200_000) }, null, 1));
fs.writeFileSync(path.join(runDir, 'server.log'), log);
if (report.noAnswer.length) fs.writeFileSync(path.join(runDir, 'no-answer.json'), JSON.stringify(report.noAnswer, null, 1));
const bad = crashed || cores.length > 0 || report.noAnswer.length > 0 || report.probe.stalls > 0 || deaths.length > 0;
if (!bad && !flag('keep')) fs.rmSync(runDir, { recursive: true, force: true });
process.exit(bad ? 1 : 0);
