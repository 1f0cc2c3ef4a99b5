/**
 * Live files (issue #26 items 2 and 3): not a test, figures for bench/README.md.
 *
 * usage: npm run build && node --import tsx bench/live.ts [frames]
 *
 * 1. Writers get in: h5py with file locking on (its default) opens a served file for writing
 *    ("a") for each of `frames` frames at 10 Hz, appends the frame and closes it; an open the
 *    lock refuses (BlockingIOError: a reader of the server holds its shared lock) is tried again
 *    at once (test/tools/live_writer.py `reopen`). Meanwhile 1, 8 and 32 clients poll the file as
 *    fast as they can (the dataset's metadata, then its newest frame, binary). Figures: opens,
 *    refused attempts, time to open (median, 95th percentile, worst; the target is 100 ms), the
 *    polls answered per second and how (200, 503 while h5py has the file open).
 * 2. Acquisition: a plain h5py writer (locking off, libver latest, no SWMR) and a SWMR writer
 *    append `frames` frames at 10 Hz while one client polls the shape and reads the newest
 *    frame: the share of polls answered 200, frames with wrong values, the time to first byte
 *    of a frame read (median, 95th percentile), and how long after the writer closed the file
 *    the client saw the final shape.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchServer } from './server.js';

const FRAMES = Number(process.argv[2] ?? 40);
/** The numbers of polling clients of part 1 (`BENCH_LIVE_CLIENTS`, default 1,8,32), and which parts run (`BENCH_LIVE_PARTS`, default 1,2). */
const CLIENTS = (process.env.BENCH_LIVE_CLIENTS ?? '1,8,32').split(',').map(Number);
const PARTS = (process.env.BENCH_LIVE_PARTS ?? '1,2').split(',');
const N = 64;
const PYTHON = '/usr/bin/python3';
const WRITER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/tools/live_writer.py');

interface Reply {
  status: number;
  body: Buffer;
  /** ms to the response's headers, and to its last byte */
  ttfb: number;
  ms: number;
}

function get(agent: http.Agent, url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const ttfb = performance.now() - t0;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), ttfb, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
  });
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

/** A frame's values as live_writer.py writes them (`frame_value`). */
function frameOk(body: Buffer, i: number): boolean {
  if (body.length !== N * N * 4) return false;
  const a = new Uint32Array(body.buffer, body.byteOffset, N * N);
  for (let k = 0; k < a.length; k++) if (a[k] !== (i + 1) * 100000 + (k % 100000)) return false;
  return true;
}

/** Start live_writer.py; resolves once it printed `ready`; `lines` collects its JSON lines. */
async function startWriter(file: string, mode: string, frames: number): Promise<{ proc: ChildProcess; lines: Record<string, number | boolean>[]; done: Promise<void> }> {
  const env = { ...process.env };
  delete env.HDF5_USE_FILE_LOCKING;
  const proc = spawn(PYTHON, [WRITER, file, mode, String(frames), '--rate', '10', '--size', String(N)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: Record<string, number | boolean>[] = [];
  let buf = '';
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  proc.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const l = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      lines.push(l);
      if (l.ready) ready();
    }
  });
  const done = new Promise<void>((r) => proc.once('exit', () => r()));
  await isReady;
  return { proc, lines, done };
}

/** The dataset id of `/frames` in `domain`. */
async function framesId(base: string, domain: string): Promise<string> {
  const agent = new http.Agent({ keepAlive: true });
  for (;;) {
    const r = await get(agent, `${base}/?domain=${domain}`);
    if (r.status === 200) {
      const root = JSON.parse(r.body.toString()).root;
      const l = await get(agent, `${base}/groups/${root}/links/frames?domain=${domain}`);
      if (l.status === 200) return JSON.parse(l.body.toString()).link.id;
    }
    await new Promise((res) => setTimeout(res, 20));
  }
}

/**
 * One client polling until `stop()`: the metadata, then (when the shape has frames) the newest
 * frame in binary; every answer counted by status, every frame checked.
 */
function poller(base: string, domain: string, id: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const status: Record<string, number> = {};
  const ttfb: number[] = [];
  const shapes: { n: number; at: number }[] = [];
  let wrong = 0;
  let backwards = 0;
  let running = true;
  const count = (k: string) => (status[k] = (status[k] ?? 0) + 1);
  const loop = (async () => {
    let last = 0;
    while (running) {
      const m = await get(agent, `${base}/datasets/${id}?domain=${domain}`);
      count(`meta ${m.status}`);
      if (m.status !== 200) continue;
      const n = JSON.parse(m.body.toString()).shape.dims[0] as number;
      if (n < last) backwards++;
      last = Math.max(last, n);
      shapes.push({ n, at: Date.now() });
      if (n === 0) continue;
      const v = await get(agent, `${base}/datasets/${id}/value?domain=${domain}&select=[${n - 1}:${n},:,:]`, { accept: 'application/octet-stream' });
      count(`frame ${v.status}`);
      if (v.status !== 200) continue;
      ttfb.push(v.ttfb);
      if (!frameOk(v.body, n - 1)) wrong++;
    }
  })();
  return {
    status,
    ttfb,
    shapes,
    get wrong() {
      return wrong;
    },
    get backwards() {
      return backwards;
    },
    async stop() {
      running = false;
      await loop;
      agent.destroy();
    },
  };
}

async function writersGetIn(base: string, root: string): Promise<void> {
  console.log(`\n1. h5py (file locking on) opens the file for writing for each of ${FRAMES} frames at 10 Hz while clients poll it`);
  console.log('| polling clients | opens | refused attempts | open median ms | open p95 ms | open max ms | opens > 100 ms | polls/s | answers |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const clients of CLIENTS) {
    const file = path.join(root, `locking-${clients}.h5`);
    const w0 = await startWriter(file, 'reopen', 1); // creates the file with one frame
    await w0.done;
    const id = await framesId(base, `/locking-${clients}.h5`);
    const polls = Array.from({ length: clients }, () => poller(base, `/locking-${clients}.h5`, id));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const w = await startWriter(file, 'reopen', FRAMES);
    await w.done;
    const secs = (performance.now() - t0) / 1000;
    for (const p of polls) await p.stop();
    const opens = w.lines.filter((l) => typeof l.openMs === 'number');
    const ms = opens.map((l) => l.openMs as number);
    const refused = opens.reduce((a, l) => a + ((l.tries as number) - 1), 0);
    const status: Record<string, number> = {};
    let answers = 0;
    for (const p of polls) for (const [k, v] of Object.entries(p.status)) ((status[k] = (status[k] ?? 0) + v), (answers += v));
    const shown = Object.entries(status).sort().map(([k, v]) => `${k}: ${v}`).join(', ');
    console.log(`| ${clients} | ${opens.length} | ${refused} | ${f1(pct(ms, 50))} | ${f1(pct(ms, 95))} | ${f1(Math.max(...ms))} | ${ms.filter((x) => x > 100).length} | ${Math.round(answers / secs)} | ${shown} |`);
  }
}

async function acquisition(base: string, root: string): Promise<void> {
  console.log(`\n2. Acquisition: ${FRAMES} frames of ${N}x${N} uint32 at 10 Hz, one client polling the shape and reading the newest frame`);
  console.log('| writer | polls | answered 200 | other answers | wrong frames | shape backwards | frame TTFB median ms | frame TTFB p95 ms | final shape seen after close (ms) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const mode of ['plain', 'swmr']) {
    const name = `acq-${mode}.h5`;
    const w = await startWriter(path.join(root, name), mode, FRAMES);
    const id = await framesId(base, `/${name}`);
    const p = poller(base, `/${name}`, id);
    await w.done;
    const closedAt = (w.lines.find((l) => l.closed) as { closed: number }).closed * 1000;
    const t0 = performance.now();
    while (!p.shapes.some((s) => s.n === FRAMES) && performance.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
    await p.stop();
    const seen = p.shapes.find((s) => s.n === FRAMES)?.at;
    const polls = p.status['meta 200'] ?? 0;
    const all = Object.values(p.status).reduce((a, b) => a + b, 0);
    const ok = Object.entries(p.status).filter(([k]) => k.endsWith(' 200')).reduce((a, [, v]) => a + v, 0);
    const other = Object.entries(p.status).filter(([k]) => !k.endsWith(' 200')).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';
    console.log(`| ${mode} | ${polls} | ${((100 * ok) / all).toFixed(1)}% | ${other} | ${p.wrong} | ${p.backwards} | ${f1(pct(p.ttfb, 50))} | ${f1(pct(p.ttfb, 95))} | ${seen === undefined ? 'never' : Math.max(0, seen - closedAt)} |`);
  }
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-live-'));
  const srv = await startBenchServer(['--root', root]);
  try {
    console.log(`h5store ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
    if (PARTS.includes('1')) await writersGetIn(srv.url, root);
    if (PARTS.includes('2')) await acquisition(srv.url, root);
  } finally {
    await srv.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
