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
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FRAME_SIZE, framePoller, framesId, percentile, startLiveWriter } from '../test/helpers/live.js';
import { startBenchServer } from './server.js';

const FRAMES = Number(process.argv[2] ?? 40);
/** The numbers of polling clients of part 1 (`BENCH_LIVE_CLIENTS`, default 1,8,32), and which parts run (`BENCH_LIVE_PARTS`, default 1,2). */
const CLIENTS = (process.env.BENCH_LIVE_CLIENTS ?? '1,8,32').split(',').map(Number);
const PARTS = (process.env.BENCH_LIVE_PARTS ?? '1,2').split(',');

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

async function writersGetIn(base: string, root: string): Promise<void> {
  console.log(`\n1. h5py (file locking on) opens the file for writing for each of ${FRAMES} frames at 10 Hz while clients poll it`);
  console.log('| polling clients | opens | refused attempts | open median ms | open p95 ms | open max ms | opens > 100 ms | polls/s | answers |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const clients of CLIENTS) {
    const file = path.join(root, `locking-${clients}.h5`);
    await (await startLiveWriter(file, 'reopen', 1)).done; // the file, with one frame
    const id = await framesId(base, `/locking-${clients}.h5`);
    const polls = Array.from({ length: clients }, () => framePoller(base, `/locking-${clients}.h5`, id));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const w = await startLiveWriter(file, 'reopen', FRAMES);
    await w.done;
    const secs = (performance.now() - t0) / 1000;
    const reports = await Promise.all(polls.map((p) => p.stop()));
    const opens = w.lines.filter((l) => l.openMs !== undefined);
    const ms = opens.map((l) => l.openMs!);
    const refused = opens.reduce((a, l) => a + (l.tries! - 1), 0);
    const status: Record<string, number> = {};
    let answers = 0;
    for (const r of reports) for (const [k, v] of Object.entries(r.status)) ((status[k] = (status[k] ?? 0) + v), (answers += v));
    const shown = Object.entries(status).sort().map(([k, v]) => `${k}: ${v}`).join(', ');
    console.log(`| ${clients} | ${opens.length} | ${refused} | ${f1(percentile(ms, 50))} | ${f1(percentile(ms, 95))} | ${f1(Math.max(...ms))} | ${ms.filter((x) => x > 100).length} | ${Math.round(answers / secs)} | ${shown} |`);
  }
}

async function acquisition(base: string, root: string): Promise<void> {
  console.log(`\n2. Acquisition: ${FRAMES} frames of ${FRAME_SIZE}x${FRAME_SIZE} uint32 at 10 Hz, one client polling the shape and reading the newest frame`);
  console.log('| writer | polls | answered 200 | other answers | wrong frames | shape backwards | frame TTFB median ms | frame TTFB p95 ms | final shape seen after close (ms) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const mode of ['plain', 'swmr'] as const) {
    const name = `acq-${mode}.h5`;
    const w = await startLiveWriter(path.join(root, name), mode, FRAMES);
    const id = await framesId(base, `/${name}`);
    const p = framePoller(base, `/${name}`, id);
    await w.done;
    const closedAt = w.closedAt()!;
    const t0 = performance.now();
    while (p.seen(FRAMES) === undefined && performance.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
    const r = await p.stop();
    const seen = p.seen(FRAMES);
    const polls = r.status['shape 200'] ?? 0;
    const all = Object.values(r.status).reduce((a, b) => a + b, 0);
    const ok = Object.entries(r.status).filter(([k]) => k.endsWith(' 200')).reduce((a, [, v]) => a + v, 0);
    const other = Object.entries(r.status).filter(([k]) => !k.endsWith(' 200')).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';
    console.log(`| ${mode} | ${polls} | ${((100 * ok) / all).toFixed(1)}% | ${other} | ${r.wrong.length} | ${r.backwards} | ${f1(percentile(r.ttfb, 50))} | ${f1(percentile(r.ttfb, 95))} | ${seen === undefined ? 'never' : Math.max(0, seen - closedAt)} |`);
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
