/**
 * Live files (issue #26): a detector-like h5py writer in a child process (test/tools/
 * live_writer.py), a client polling the shape and newest frame of what it writes, and a
 * fanotify watch (Debian's `fatrace`) of who writes a file. Shared by test/api/live-files.test.ts
 * and bench/live.ts.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const WRITER = path.resolve(here, '../tools/live_writer.py');
const PYTHON = '/usr/bin/python3';

/** One JSON line of live_writer.py: `ready`, `frame` (with `t`, and `openMs`/`tries` in `reopen` mode), `closed`. */
export type WriterLine = { ready?: boolean; frame?: number; t?: number; openMs?: number; tries?: number; closed?: number };

export interface LiveWriter {
  proc: ChildProcess;
  lines: WriterLine[];
  /** Resolves when the writer exited (rejects when it failed). */
  done: Promise<void>;
  /** Epoch ms when it closed the file (once `done`). */
  closedAt(): number | undefined;
}

/**
 * Start live_writer.py on `file` (`mode`: plain, swmr, reopen; `opts`: its flags), without
 * HDF5_USE_FILE_LOCKING unless the mode sets it; resolves once the file exists (`ready`).
 * With `hold` the writer keeps the file open after its last frame until `proc.stdin` ends.
 */
export async function startLiveWriter(file: string, mode: 'plain' | 'swmr' | 'reopen', frames: number, opts: { rate?: number; size?: number; libver?: string; hold?: boolean } = {}): Promise<LiveWriter> {
  const env = { ...process.env };
  delete env.HDF5_USE_FILE_LOCKING;
  const args = [WRITER, file, mode, String(frames), '--rate', String(opts.rate ?? 10), '--size', String(opts.size ?? FRAME_SIZE)];
  if (opts.libver) args.push('--libver', opts.libver);
  // `hold`: the file stays open after the last frame until the writer's stdin closes (kill it)
  if (opts.hold) args.push('--hold-stdin');
  const proc = spawn(PYTHON, args, { env, stdio: [opts.hold ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  const lines: WriterLine[] = [];
  let buf = '';
  let err = '';
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  proc.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const l = JSON.parse(buf.slice(0, nl)) as WriterLine;
      buf = buf.slice(nl + 1);
      lines.push(l);
      if (l.ready) ready();
    }
  });
  proc.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const done = new Promise<void>((resolve, reject) =>
    proc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`live_writer.py ${mode} exited with ${code}: ${err}`)))),
  );
  await Promise.race([isReady, done]);
  return { proc, lines, done, closedAt: () => lines.find((l) => l.closed !== undefined)?.closed! * 1000 || undefined };
}

/** The frames' edge (live_writer.py `--size`): frames are FRAME_SIZE x FRAME_SIZE uint32. */
export const FRAME_SIZE = 64;

/** Whether `body` holds frame `i` as live_writer.py writes it (`frame_value`). */
export function frameOk(body: Buffer, i: number, n = FRAME_SIZE): boolean {
  if (body.length !== n * n * 4) return false;
  const a = new Uint32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.length));
  for (let k = 0; k < a.length; k++) if (a[k] !== (i + 1) * 100000 + (k % 100000)) return false;
  return true;
}

interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** ms to the response's headers (time to first byte), and to its end */
  ttfb: number;
  ms: number;
}

function get(agent: http.Agent, url: string, headers: Record<string, string> = {}): Promise<Got> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const ttfb = performance.now() - t0;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts), ttfb, ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The id of the dataset `/frames` of `domain` (waits until the server serves it). */
export async function framesId(base: string, domain: string, timeoutMs = 10_000): Promise<string> {
  const agent = new http.Agent({ keepAlive: true });
  const t0 = performance.now();
  try {
    for (;;) {
      const r = await get(agent, `${base}/?domain=${encodeURIComponent(domain)}`);
      if (r.status === 200) {
        const root = JSON.parse(r.body.toString()).root;
        const l = await get(agent, `${base}/groups/${root}/links/frames?domain=${encodeURIComponent(domain)}`);
        if (l.status === 200) return JSON.parse(l.body.toString()).link.id;
      }
      if (performance.now() - t0 > timeoutMs) throw new Error(`${domain}: /frames not served: ${r.status} ${r.body}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  } finally {
    agent.destroy();
  }
}

/** What a `FramePoller` saw. */
export interface PollReport {
  /** Answers by kind and status, e.g. `{"shape 200": 80, "frame 200": 79}`. */
  status: Record<string, number>;
  /** Every non-200 answer's status, Retry-After and message (the first 20). */
  errors: string[];
  /** Time to first byte of each frame read answered 200 (ms). */
  ttfb: number[];
  /** Frames whose values were wrong, as `frame i: reason`. */
  wrong: string[];
  /** Polls whose shape was smaller than an earlier one's. */
  backwards: number;
  /** Each shape seen (frames) and when (epoch ms). */
  shapes: { n: number; at: number }[];
}

/**
 * A client polling `domain`'s `/frames` until `stop()`: its metadata (the shape), then, when it
 * has frames, the newest frame in binary, checked (`frameOk`). `pauseMs` between polls.
 */
export function framePoller(base: string, domain: string, id: string, pauseMs = 0) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const r: PollReport = { status: {}, errors: [], ttfb: [], wrong: [], backwards: 0, shapes: [] };
  let running = true;
  const count = (k: string) => (r.status[k] = (r.status[k] ?? 0) + 1);
  const note = (what: string, g: Got) => {
    count(`${what} ${g.status}`);
    if (g.status !== 200 && r.errors.length < 20) r.errors.push(`${what} ${g.status} retry-after=${g.headers['retry-after'] ?? ''} ${g.body.toString().slice(0, 300)}`);
  };
  const q = `domain=${encodeURIComponent(domain)}`;
  const loop = (async () => {
    let last = 0;
    while (running) {
      const m = await get(agent, `${base}/datasets/${id}?${q}`);
      note('shape', m);
      if (m.status === 200) {
        const n = JSON.parse(m.body.toString()).shape.dims[0] as number;
        if (n < last) r.backwards++;
        last = Math.max(last, n);
        r.shapes.push({ n, at: Date.now() });
        if (n > 0) {
          const v = await get(agent, `${base}/datasets/${id}/value?${q}&select=[${n - 1}:${n},:,:]`, { accept: 'application/octet-stream' });
          note('frame', v);
          if (v.status === 200) {
            r.ttfb.push(v.ttfb);
            if (!frameOk(v.body, n - 1)) r.wrong.push(`frame ${n - 1}: ${v.body.length} bytes, first ${v.body.readUInt32LE(0)}`);
          }
        }
      }
      if (pauseMs > 0) await new Promise((res) => setTimeout(res, pauseMs));
    }
  })();
  return {
    report: r,
    /** Whether the shape `n` was seen, and when (epoch ms). */
    seen: (n: number) => r.shapes.find((s) => s.n === n)?.at,
    async stop(): Promise<PollReport> {
      running = false;
      await loop;
      agent.destroy();
      return r;
    },
  };
}

/** The `p`th percentile of `xs` (NaN when empty). */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** Whether fanotify can be watched here (`fatrace` installed and run by root). */
export function canWatchWrites(): boolean {
  return process.getuid?.() === 0 && spawnSync('fatrace', ['--help'], { stdio: 'ignore' }).status === 0;
}

/**
 * Watch, with Debian's `fatrace` (fanotify, every mount), which processes write files under
 * `dir` (write, close-after-write events) until `stop()`, which resolves with the events as
 * `{pid, comm, events, file}`. Resolves once the watch sees events (a probe file is written
 * until it shows).
 * @throws Error when fatrace does not start
 */
export async function watchWrites(dir: string): Promise<{ stop(): Promise<{ pid: number; comm: string; events: string; file: string }[]> }> {
  dir = fs.realpathSync(dir);
  const out = path.join(dir, `.fatrace-${process.pid}.log`);
  const proc = spawn('fatrace', ['-f', 'W', '-o', out], { stdio: 'ignore' });
  const probe = path.join(dir, `.fatrace-probe-${process.pid}`);
  const t0 = performance.now();
  while (!(fs.existsSync(out) && fs.readFileSync(out, 'utf8').includes(probe))) {
    if (proc.exitCode !== null || performance.now() - t0 > 10_000) throw new Error('fatrace did not start');
    fs.writeFileSync(probe, 'x');
    await new Promise((r) => setTimeout(r, 50));
  }
  fs.rmSync(probe, { force: true });
  return {
    async stop() {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      await exited;
      const lines = fs.readFileSync(out, 'utf8').split('\n');
      fs.rmSync(out, { force: true });
      const events = [];
      for (const l of lines) {
        // "python3(1234): W   /path/file"
        const m = /^(.*)\((\d+)\): (\S+)\s+(.*)$/.exec(l);
        if (m && m[4].startsWith(dir) && !m[4].includes('.fatrace-')) events.push({ comm: m[1], pid: Number(m[2]), events: m[3], file: m[4] });
      }
      return events;
    },
  };
}

/** One Server-Sent Event. */
export interface SseEvent {
  event: string;
  data: any;
}

/**
 * Follow `GET <url>` as a Server-Sent Events stream (`GET /events`): every event parsed (its
 * data as JSON) into `events`; `next` waits for the first event after `from` that `pick` accepts.
 * @throws Error (from `open`) when the answer is not 200 text/event-stream (the error body)
 */
export async function followEvents(url: string, headers: Record<string, string> = {}) {
  const ac = new AbortController();
  const r = await fetch(url, { headers, signal: ac.signal });
  if (r.status !== 200 || !(r.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const body = await r.text();
    ac.abort();
    throw Object.assign(new Error(`GET /events: ${r.status} ${body}`), { status: r.status, body });
  }
  const events: SseEvent[] = [];
  let ended = false;
  const waiters = new Set<() => void>();
  const reader = r.body!.getReader();
  const pump = (async () => {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) });
          for (const w of waiters) w();
        }
      }
    } catch {
      /* aborted */
    } finally {
      ended = true;
      for (const w of waiters) w();
    }
  })();
  return {
    events,
    get ended() {
      return ended;
    },
    /** The first event at index >= `from` that `pick` accepts, within `timeoutMs`. */
    async next(pick: (e: SseEvent) => boolean, from = 0, timeoutMs = 5000): Promise<SseEvent> {
      const t0 = performance.now();
      for (;;) {
        const hit = events.slice(from).find(pick);
        if (hit) return hit;
        if (ended) throw new Error(`the event stream ended; events: ${JSON.stringify(events).slice(0, 2000)}`);
        const left = timeoutMs - (performance.now() - t0);
        if (left <= 0) throw new Error(`no such event within ${timeoutMs} ms; events: ${JSON.stringify(events).slice(0, 2000)}`);
        await new Promise<void>((res) => {
          const t = setTimeout(done, left);
          function done() {
            clearTimeout(t);
            waiters.delete(done);
            res();
          }
          waiters.add(done);
        });
      }
    },
    async close(): Promise<void> {
      // (an abort alone, as the stream ends, can leave undici's read pending)
      await reader.cancel().catch(() => undefined);
      ac.abort();
      await pump;
    },
  };
}

/** A kernel lock another program holds on a file (`holdFlock`); `release` ends that program. */
export interface HeldLock {
  release(): void;
}

/**
 * Another program (Python) takes an exclusive `flock` on `file`, as libhdf5 does when h5py opens
 * a file for writing with file locking, and holds it until `release` (or `seconds`). Resolves
 * once the lock is held. @throws Error when the program exits first
 */
export async function holdFlock(file: string, seconds = 30): Promise<HeldLock> {
  const holder = spawn(PYTHON, ['-u', '-c', "import fcntl, sys, time\nf = open(sys.argv[1], 'rb')\nfcntl.flock(f, fcntl.LOCK_EX)\nprint('READY', flush=True)\ntime.sleep(float(sys.argv[2]))", file, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.on('data', (b: Buffer) => b.toString().includes('READY') && resolve());
    holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return { release: () => holder.kill() };
}
