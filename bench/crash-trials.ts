/**
 * Crash trials (issue #7 item 6; bench/README.md "Crash trials").
 *
 * Each trial: start the server on one data directory, run concurrent writers of several kinds
 * (group creation, soft links, attributes, dataset creation, value writes, resizes) for a random
 * time, `kill -9` the server while requests are in flight, restart it, measure how long until a
 * write is accepted, then check every file with h5py (whole traversal, every dataset and
 * attribute read, every acknowledged write present with its value) and `h5dump`. Every
 * `rotate` trials the writers move to fresh domains so that files stay small.
 *
 *   node --import tsx bench/crash-trials.ts [--trials 1000] [--writers 6] [--fsync always|never]
 *       [--built] [--seed N] [--json out.json] [--keep DIR]
 *
 * `--built` runs dist/cli.js (npm run build) instead of the sources through tsx: closer to a
 * production start-up. The module also exports `runCrashTrials` for the short mocha version
 * (test/api/crash.test.ts).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, '..');
const PY = '/usr/bin/python3';

export interface CrashOptions {
  trials: number;
  writers: number;
  fsync: 'always' | 'never';
  built: boolean;
  /** The node arguments that run the `h5store` command, when given (the tests' build of src/, test/helpers/serverBuild.ts); else by `built`. */
  cli?: string[];
  seed: number;
  /** Trials per set of domains. */
  rotate: number;
  /** Shortest and longest time writers run before the kill (ms). */
  minRunMs: number;
  maxRunMs: number;
  /** Copy the data directory here when a file is found corrupted or a write lost. */
  keep?: string;
  log?: (line: string) => void;
}

export interface CrashResult {
  trials: number;
  fsync: string;
  killsWithWritesInFlight: number;
  acknowledgedWrites: number;
  lostWrites: number;
  corruptedFiles: number;
  filesChecked: number;
  /** Restart (spawn) until the first write is acknowledged, ms. */
  restartToWriteMs: { median: number; p95: number; max: number };
  /** Server "listening" until the first write is acknowledged, ms. */
  listeningToWriteMs: { median: number; p95: number; max: number };
  /** Reference in the same run: spawn until the first write after a clean stop (SIGTERM), ms. */
  cleanRestartToWriteMs: { median: number; p95: number; max: number };
  repairsLogged: number;
  problems: string[];
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stats(a: number[]): { median: number; p95: number; max: number } {
  if (a.length === 0) return { median: 0, p95: 0, max: 0 };
  const s = [...a].sort((x, y) => x - y);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(s.length * p))];
  return { median: Math.round(at(0.5)), p95: Math.round(at(0.95)), max: Math.round(s[s.length - 1]) };
}

interface Server {
  proc: ChildProcess;
  url: string;
  spawnedAt: number;
  listeningAt: number;
  output: () => string;
}

async function startServer(root: string, opts: CrashOptions): Promise<Server> {
  const dist = path.join(REPO, 'dist/cli.js');
  const args = opts.cli ?? (opts.built && fs.existsSync(dist) ? [dist] : ['--import', 'tsx', path.join(REPO, 'src/cli.ts')]);
  const spawnedAt = performance.now();
  const proc = spawn(process.execPath, [...args, 'serve', '--root', root, '--port', '0', '--log-level', 'warn'], {
    cwd: REPO,
    env: { ...process.env, H5STORE_WORKERS: '1', H5STORE_FSYNC: opts.fsync, H5STORE_LOCK_WAIT_MS: '10000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (b) => (out += b.toString()));
  proc.stderr!.on('data', (b) => (out += b.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}`));
    });
  });
  return { proc, url, spawnedAt, listeningAt: performance.now(), output: () => out };
}

async function kill9(s: Server): Promise<void> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGKILL');
  await exited;
}

async function req(url: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: r.status, json };
}

// ---------------------------------------------------------------------------------------------
// What writers expect to find

/** Expectations of one domain, checked by the Python verifier. */
interface DomainExpect {
  domain: string;
  file: string;
  groups: string[];
  softLinks: Array<[string, string]>;
  attrs: Array<[string, string, number]>;
  datasets: Array<[string, number]>;
  /** dataset path -> index -> [acknowledged value, values written but not acknowledged] */
  values: Record<string, Record<string, [number | null, number[]]>>;
  /** dataset path -> [acknowledged length, lengths asked but not acknowledged] */
  shapes: Record<string, [number, number[]]>;
}

interface WriterState {
  w: number;
  seq: number;
  /** Per domain: ids of the writer's group and datasets. */
  ids: Map<string, { group: string; vals: string; ext: string }>;
}

const VALS = 64;

async function setupDomains(url: string, names: string[], writers: number, root: string): Promise<{ expects: Map<string, DomainExpect>; states: WriterState[] }> {
  const expects = new Map<string, DomainExpect>();
  const states: WriterState[] = Array.from({ length: writers }, (_, w) => ({ w, seq: 0, ids: new Map() }));
  for (const d of names) {
    const q = `?domain=${encodeURIComponent(d)}`;
    let r = await req(`${url}/${q}`, 'PUT');
    if (r.status !== 201) throw new Error(`PUT ${d}: ${r.status}`);
    r = await req(`${url}/${q}`, 'GET');
    const rootId = r.json.root as string;
    const e: DomainExpect = { domain: d, file: path.join(root, ...d.slice(1).split('/')), groups: [], softLinks: [], attrs: [], datasets: [], values: {}, shapes: {} };
    for (const st of states) {
      const g = await req(`${url}/groups${q}`, 'POST', { link: { id: rootId, name: `w${st.w}` } });
      if (g.status !== 201) throw new Error(`setup group: ${g.status}`);
      const vals = await req(`${url}/datasets${q}`, 'POST', { type: 'H5T_STD_I64LE', shape: [VALS], link: { id: g.json.id, name: 'vals' } });
      const ext = await req(`${url}/datasets${q}`, 'POST', { type: 'H5T_STD_I32LE', shape: [1], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [16] } }, link: { id: g.json.id, name: 'ext' } });
      if (vals.status !== 201 || ext.status !== 201) throw new Error(`setup datasets: ${vals.status} ${ext.status} ${JSON.stringify(ext.json)}`);
      st.ids.set(d, { group: g.json.id, vals: vals.json.id, ext: ext.json.id });
      e.groups.push(`/w${st.w}`);
      e.values[`/w${st.w}/vals`] = {};
      e.shapes[`/w${st.w}/ext`] = [1, []];
    }
    expects.set(d, e);
  }
  return { expects, states };
}

/**
 * One writer: sequential requests of random kinds on random domains until `stop()`. Every
 * acknowledged write becomes an expectation; the one in flight at the kill becomes a "maybe".
 */
async function writer(url: string, st: WriterState, expects: Map<string, DomainExpect>, rand: () => number, stopped: () => boolean, counters: { acked: number; inFlight: number }): Promise<void> {
  const domains = [...expects.keys()];
  while (!stopped()) {
    const d = domains[Math.floor(rand() * domains.length)];
    const e = expects.get(d)!;
    const ids = st.ids.get(d)!;
    const q = `?domain=${encodeURIComponent(d)}`;
    const n = ++st.seq;
    const kind = Math.floor(rand() * 6);
    const base = `/w${st.w}`;
    let onAck: () => void;
    let call: () => Promise<{ status: number }>;
    let onMaybe: () => void = () => undefined;
    switch (kind) {
      case 0:
        call = () => req(`${url}/groups${q}`, 'POST', { link: { id: ids.group, name: `g${n}` } });
        onAck = () => e.groups.push(`${base}/g${n}`);
        break;
      case 1:
        call = () => req(`${url}/groups/${ids.group}/links/s${n}${q}`, 'PUT', { h5path: `${base}/vals` });
        onAck = () => e.softLinks.push([`${base}/s${n}`, `${base}/vals`]);
        break;
      case 2:
        call = () => req(`${url}/groups/${ids.group}/attributes/a${n}${q}`, 'PUT', { type: 'H5T_STD_I64LE', value: n });
        onAck = () => e.attrs.push([base, `a${n}`, n]);
        break;
      case 3: {
        const len = 1 + Math.floor(rand() * 200);
        call = () => req(`${url}/datasets${q}`, 'POST', { type: 'H5T_IEEE_F64LE', shape: [len], link: { id: ids.group, name: `d${n}` } });
        onAck = () => e.datasets.push([`${base}/d${n}`, len]);
        break;
      }
      case 4: {
        const i = Math.floor(rand() * VALS);
        const key = `${base}/vals`;
        call = () => req(`${url}/datasets/${ids.vals}/value${q}`, 'PUT', { start: [i], stop: [i + 1], value: [n] });
        const slot = (e.values[key][String(i)] ??= [null, []]);
        onMaybe = () => slot[1].push(n);
        onAck = () => {
          slot[0] = n;
          slot[1] = [];
        };
        break;
      }
      default: {
        const key = `${base}/ext`;
        const sh = e.shapes[key];
        const next = sh[0] + 1;
        call = () => req(`${url}/datasets/${ids.ext}/shape${q}`, 'PUT', { shape: [next] });
        onMaybe = () => sh[1].push(next);
        onAck = () => {
          sh[0] = next;
          sh[1] = [];
        };
      }
    }
    onMaybe();
    counters.inFlight++;
    let status = 0;
    try {
      status = (await call()).status;
    } catch {
      return; // the server died: this write is neither acknowledged nor refused
    } finally {
      counters.inFlight--;
    }
    if (status >= 200 && status < 300) {
      onAck();
      counters.acked++;
    } else if (status >= 500 && status !== 503) {
      throw new Error(`writer got ${status} for kind ${kind}`);
    }
  }
}

/** Time from `t0` until a write is acknowledged (retrying refused connections and 503s). */
async function timeToFirstWrite(url: string, domain: string, groupId: string, name: string): Promise<number> {
  const q = `?domain=${encodeURIComponent(domain)}`;
  for (let i = 0; i < 5000; i++) {
    try {
      const r = await req(`${url}/groups/${groupId}/attributes/${name}${q}`, 'PUT', { type: 'H5T_STD_I32LE', value: 1 });
      if (r.status === 201 || r.status === 200) return performance.now();
      if (r.status !== 503) throw new Error(`first write got ${r.status}: ${JSON.stringify(r.json)}`);
    } catch (e) {
      if (!/fetch failed|ECONNREFUSED/.test(String((e as Error).message) + String((e as Error).cause))) throw e;
    }
    await sleep(5);
  }
  throw new Error('no write accepted after restart');
}

const VERIFY = String.raw`
import h5py, json, sys, numpy as np
exp = json.load(sys.stdin)
out = []
for e in exp:
    res = {'domain': e['domain'], 'ok': True, 'missing': [], 'error': None}
    try:
        with h5py.File(e['file'], 'r') as f:
            def visit(name, obj):
                for k in obj.attrs.keys():
                    obj.attrs[k]
                if isinstance(obj, h5py.Dataset):
                    obj[()]
            f.visititems(visit)
            for k in f.attrs.keys():
                f.attrs[k]
            for g in e['groups']:
                if not isinstance(f.get(g), h5py.Group): res['missing'].append('group ' + g)
            for l, t in e['softLinks']:
                lk = f.get(l, getlink=True)
                if not isinstance(lk, h5py.SoftLink) or lk.path != t: res['missing'].append('softlink ' + l)
            for o, a, v in e['attrs']:
                if o not in f or a not in f[o].attrs or int(f[o].attrs[a]) != v: res['missing'].append('attr %s@%s' % (a, o))
            for d, n in e['datasets']:
                if d not in f or f[d].shape != (n,): res['missing'].append('dataset ' + d)
            for d, m in e['values'].items():
                arr = f[d][()]
                for i, (acked, maybe) in m.items():
                    allowed = ([acked] if acked is not None else [0]) + maybe
                    if int(arr[int(i)]) not in allowed: res['missing'].append('value %s[%s]=%d not in %s' % (d, i, int(arr[int(i)]), allowed))
            for d, (acked, maybe) in e['shapes'].items():
                if f[d].shape[0] not in [acked] + maybe: res['missing'].append('shape %s=%d not in %s' % (d, f[d].shape[0], [acked] + maybe))
    except Exception as ex:
        res['ok'] = False
        res['error'] = '%s: %s' % (type(ex).__name__, ex)
    out.append(res)
print(json.dumps(out))
`;

function verify(expects: DomainExpect[]): Array<{ domain: string; ok: boolean; missing: string[]; error: string | null; h5dump?: string }> {
  const out = JSON.parse(execFileSync(PY, ['-c', VERIFY], { input: JSON.stringify(expects), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
  for (const r of out) {
    const e = expects.find((x) => x.domain === r.domain)!;
    try {
      execFileSync('h5dump', ['-o', '/dev/null', e.file], { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      r.ok = false;
      r.h5dump = String((err as { stderr?: Buffer }).stderr ?? err).slice(0, 300);
    }
  }
  return out;
}

/** Reference: time from spawn to the first acknowledged write after a clean stop. */
async function cleanRestarts(opts: CrashOptions, n: number): Promise<number[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-clean-'));
  const out: number[] = [];
  try {
    let s = await startServer(root, opts);
    await req(`${s.url}/?domain=/ref.h5`, 'PUT');
    const rootId = (await req(`${s.url}/?domain=/ref.h5`, 'GET')).json.root as string;
    for (let i = 0; i <= n; i++) {
      const exited = new Promise((r) => s.proc.once('exit', r));
      s.proc.kill('SIGTERM');
      await exited;
      s = await startServer(root, opts);
      const at = await timeToFirstWrite(s.url, '/ref.h5', rootId, `a${i}`);
      if (i > 0) out.push(at - s.spawnedAt); // the first start warms the OS caches
    }
    await kill9(s);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return out;
}

/** Run the trials. */
export async function runCrashTrials(opts: CrashOptions): Promise<CrashResult> {
  const log = opts.log ?? ((l: string) => process.stdout.write(l + '\n'));
  const rand = rng(opts.seed);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-crash-'));
  fs.mkdirSync(path.join(root, 'c'));
  const result: CrashResult = {
    trials: 0,
    fsync: opts.fsync,
    killsWithWritesInFlight: 0,
    acknowledgedWrites: 0,
    lostWrites: 0,
    corruptedFiles: 0,
    filesChecked: 0,
    restartToWriteMs: { median: 0, p95: 0, max: 0 },
    listeningToWriteMs: { median: 0, p95: 0, max: 0 },
    cleanRestartToWriteMs: { median: 0, p95: 0, max: 0 },
    repairsLogged: 0,
    problems: [],
  };
  const restart: number[] = [];
  const listening: number[] = [];
  const clean: number[] = await cleanRestarts(opts, 2);
  let expects = new Map<string, DomainExpect>();
  let states: WriterState[] = [];
  let set = 0;
  let server: Server | undefined;
  try {
    for (let t = 0; t < opts.trials; t++) {
      server = await startServer(root, opts);
      // 1. Time until a write is accepted after the (re)start.
      if (t > 0) {
        const [d, e] = [...expects.entries()][0];
        const id = states[0].ids.get(d)!.group;
        const at = await timeToFirstWrite(server.url, d, id, `restart${t}`);
        restart.push(at - server.spawnedAt);
        listening.push(at - server.listeningAt);
        e.attrs.push([`/w0`, `restart${t}`, 1]);
      }
      // 2. Verify everything written so far (the server repairs interrupted writes on first use;
      //    touch each domain so that happens, then read the files directly).
      if (t > 0) {
        for (const d of expects.keys()) await req(`${server.url}/?domain=${encodeURIComponent(d)}`, 'GET');
        const res = verify([...expects.values()]);
        for (const r of res) {
          result.filesChecked++;
          if (!r.ok) {
            result.corruptedFiles++;
            result.problems.push(`trial ${t} ${r.domain}: corrupted: ${r.error ?? ''} ${r.h5dump ?? ''}`);
          }
          if (r.missing.length) {
            result.lostWrites += r.missing.length;
            result.problems.push(`trial ${t} ${r.domain}: lost ${r.missing.slice(0, 5).join('; ')}`);
          }
        }
        if (res.some((r) => !r.ok || r.missing.length) && opts.keep) {
          fs.cpSync(root, path.join(opts.keep, `trial-${t}`), { recursive: true });
        }
      }
      // Reference, every 10th trial: a clean stop (SIGTERM) and restart of the same server on the
      // same files, timed the same way, so that crash restarts compare with it under the same load.
      if (t % 10 === 5 && expects.size > 0) {
        const exited = new Promise((r) => server!.proc.once('exit', r));
        server.proc.kill('SIGTERM');
        await exited;
        server = await startServer(root, opts);
        const [d, e] = [...expects.entries()][0];
        const at = await timeToFirstWrite(server.url, d, states[0].ids.get(d)!.group, `clean${t}`);
        clean.push(at - server.spawnedAt);
        e.attrs.push(['/w0', `clean${t}`, 1]);
      }
      // 3. New domains every `rotate` trials (old files are deleted after their last check).
      if (t % opts.rotate === 0) {
        for (const e of expects.values()) await req(`${server.url}/?domain=${encodeURIComponent(e.domain)}`, 'DELETE');
        set++;
        ({ expects, states } = await setupDomains(server.url, [1, 2, 3].map((i) => `/c/s${set}-f${i}.h5`), opts.writers, root));
      }
      // 4. Writers, then kill -9 while they are at work.
      let stop = false;
      const counters = { acked: 0, inFlight: 0 };
      const runs = states.map((st) => writer(server!.url, st, expects, rand, () => stop, counters).catch((e) => result.problems.push(`trial ${t}: ${(e as Error).message}`)));
      await sleep(opts.minRunMs + rand() * (opts.maxRunMs - opts.minRunMs));
      if (counters.inFlight > 0) result.killsWithWritesInFlight++;
      const out = server.output();
      await kill9(server);
      stop = true;
      await Promise.all(runs);
      result.repairsLogged += (out.match(/rolled back a write interrupted|repaired a file/g) ?? []).length;
      result.acknowledgedWrites += counters.acked;
      result.trials++;
      if ((t + 1) % 10 === 0 || t === opts.trials - 1) {
        log(
          `trial ${t + 1}/${opts.trials}: acked ${result.acknowledgedWrites}, kills mid-write ${result.killsWithWritesInFlight}, lost ${result.lostWrites}, corrupted ${result.corruptedFiles}/${result.filesChecked}, restart->write median ${stats(restart).median} ms (clean restart ${stats(clean).median} ms, listening->write ${stats(listening).median} ms), repairs ${result.repairsLogged}`,
        );
      }
    }
    // Final check after the last kill.
    server = await startServer(root, opts);
    const [d] = [...expects.keys()];
    const at = await timeToFirstWrite(server.url, d, states[0].ids.get(d)!.group, 'final');
    restart.push(at - server.spawnedAt);
    listening.push(at - server.listeningAt);
    expects.get(d)!.attrs.push(['/w0', 'final', 1]);
    for (const dd of expects.keys()) await req(`${server.url}/?domain=${encodeURIComponent(dd)}`, 'GET');
    for (const r of verify([...expects.values()])) {
      result.filesChecked++;
      if (!r.ok) {
        result.corruptedFiles++;
        result.problems.push(`final ${r.domain}: corrupted: ${r.error ?? ''} ${r.h5dump ?? ''}`);
      }
      if (r.missing.length) {
        result.lostWrites += r.missing.length;
        result.problems.push(`final ${r.domain}: lost ${r.missing.slice(0, 5).join('; ')}`);
      }
    }
    await kill9(server);
    server = undefined;
  } finally {
    if (server) await kill9(server);
    fs.rmSync(root, { recursive: true, force: true });
  }
  result.restartToWriteMs = stats(restart);
  result.listeningToWriteMs = stats(listening);
  result.cleanRestartToWriteMs = stats(clean);
  return result;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const get = (name: string, def: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] && !args[i + 1].startsWith('--') ? args[i + 1] : def;
  };
  const opts: CrashOptions = {
    trials: Number(get('trials', '20')),
    writers: Number(get('writers', '6')),
    fsync: get('fsync', 'always') as 'always' | 'never',
    built: args.includes('--built'),
    seed: Number(get('seed', String(Date.now() % 100000))),
    rotate: Number(get('rotate', '25')),
    minRunMs: Number(get('min-run', '100')),
    maxRunMs: Number(get('max-run', '1500')),
    keep: args.includes('--keep') ? get('keep', path.join(os.tmpdir(), 'h5store-crash-kept')) : undefined,
  };
  process.stdout.write(`crash trials: ${JSON.stringify(opts)}\n`);
  const t0 = Date.now();
  const r = await runCrashTrials(opts);
  const summary = { ...r, problems: r.problems.slice(0, 50), seconds: Math.round((Date.now() - t0) / 1000), options: opts };
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  const out = get('json', '');
  if (out) fs.writeFileSync(out, JSON.stringify(summary, null, 2));
  process.exit(r.corruptedFiles === 0 && r.lostWrites === 0 ? 0 : 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exit(2);
  });
}
