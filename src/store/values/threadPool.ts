/**
 * Value threads (threadWorker.ts): one per core up to four, started by the server at its first
 * quiet second (`startValueThreads`, main.ts) or by the first job, not keeping the process alive,
 * running at a lower priority than the main thread, for the codec work of large values, so the
 * main thread neither inflates nor formats:
 * - stored chunks decoded for the parallel chunk reads (chunked.ts, decodeChunks.ts), into a
 *   SharedArrayBuffer result the threads write directly (`decodeOnThread`);
 * - JSON values formatted in parts, one per thread (`valueJsonOnThreads`).
 * A job goes to the thread with the fewest outstanding jobs.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { TypeJson } from '../../codec/types.js';
import { H5StoreError } from '../../errors.js';
import type { DecodeBatch, DecodeDone } from './decodeChunks.js';
import type { JsonPart, JsonPartDone } from './threadWorker.js';

interface Slot {
  worker: Worker;
  /** Jobs posted to it and not answered yet. */
  outstanding: number;
  /** It has warmed up (threadWorker.ts posts `ready`): a job posted now starts at once. */
  ready: boolean;
}

/** Threads to start: the cores, at least 1, at most 4. */
const THREADS = Math.max(1, Math.min(4, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length));

/** Longest wait for a job (ms): then the thread is terminated and the job fails. */
const ANSWER_MS = 60_000;

let slots: Slot[] | undefined;
let nextId = 1;
const pending = new Map<number, { slot: Slot; resolve: (answer: DecodeDone | JsonPartDone) => void; reject: (e: Error) => void }>();

/** URL of tsx's loader API, also when tsx runs this module as CommonJS (mocha loads the tests so). */
function tsxApiUrl(): string {
  const meta = import.meta as unknown as { resolve?: (s: string) => string };
  if (typeof meta.resolve === 'function') return meta.resolve('tsx/esm/api');
  // the package's own export map names its ES module entry (its CommonJS one cannot register)
  const pkgPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(path.join(path.dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
}

function start(): Slot {
  // Under tsx (tests, `node --import tsx`) the worker is the .ts file, loaded with tsx's loader
  // registered in the thread first (a worker does not get the parent's loader hooks).
  const ts = import.meta.url.endsWith('.ts');
  const url = new URL(ts ? './threadWorker.ts' : './threadWorker.js', import.meta.url);
  const worker = ts
    ? new Worker(`import(${JSON.stringify(tsxApiUrl())}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`, {
        eval: true,
        execArgv: [],
      })
    : new Worker(url, { execArgv: [] });
  worker.unref();
  const slot: Slot = { worker, outstanding: 0, ready: false };
  worker.on('message', (m: DecodeDone | JsonPartDone | { kind: 'ready' }) => {
    if ('kind' in m) {
      slot.ready = true;
      return;
    }
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    p.slot.outstanding--;
    p.resolve(m);
  });
  let dead = false;
  const fail = (e: Error) => {
    if (dead) return;
    dead = true;
    for (const [id, p] of pending) {
      if (p.slot !== slot) continue;
      pending.delete(id);
      p.reject(e);
    }
    const i = slots ? slots.indexOf(slot) : -1;
    if (i >= 0) slots!.splice(i, 1); // a new thread is started on next use
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`a value thread exited (${code})`)));
  return slot;
}

/**
 * Start the value threads now (they are otherwise started by the first job): each compiles its
 * formatters on made-up values as it starts (threadWorker.ts), so the first large JSON value is
 * not formatted by cold code. The server calls it once it listens.
 */
export function startValueThreads(): void {
  slots ??= [];
  while (slots.length < THREADS) slots.push(start());
  if (!cpuTimer) {
    sampleCpu();
    cpuTimer = setInterval(sampleCpu, CPU_SAMPLE_MS);
    cpuTimer.unref();
  }
}

/** How often the machine's CPU use is sampled (ms) while the value threads run. */
const CPU_SAMPLE_MS = 250;
let cpuTimer: NodeJS.Timeout | undefined;
let lastCpu: { at: number; busy: number; own: number } | undefined;
/** Cores other processes left unused over the last sample interval (see `spareCores`). */
let spare = 0;

/**
 * The machine's busy CPU time (ms, all cores) and its number of cores: the first line of Linux's
 * /proc/stat (user, nice, system, irq, softirq and steal ticks; ~20 us to read), elsewhere
 * `os.cpus()` (~0.7 ms: it also reads every core's speed).
 */
function machineBusy(): { busy: number; cores: number } {
  try {
    const stat = fs.readFileSync('/proc/stat', 'latin1');
    const f = stat.slice(0, stat.indexOf('\n')).trim().split(/\s+/).map(Number); // cpu user nice system idle iowait irq softirq steal
    return { busy: ((f[1]! + f[2]! + f[3]! + f[6]! + f[7]! + (f[8] ?? 0)) * 1000) / TICKS_PER_S, cores: os.availableParallelism?.() ?? os.cpus().length };
  } catch {
    const cpus = os.cpus();
    let busy = 0;
    for (const c of cpus) busy += c.times.user + c.times.nice + c.times.sys + c.times.irq;
    return { busy, cores: cpus.length };
  }
}
/** /proc/stat's unit (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/**
 * Take a sample of the machine's CPU time (`machineBusy`) and of this process's own
 * (`process.cpuUsage`), and update `spare`: the cores minus what other processes used over the
 * interval. This process's own use (its value threads included) does not count against it: it
 * is what a parallel read would use anyway.
 */
function sampleCpu(): void {
  const now = performance.now();
  const { busy, cores } = machineBusy();
  const u = process.cpuUsage();
  const own = (u.user + u.system) / 1000;
  if (lastCpu && now > lastCpu.at) {
    const others = Math.max(0, busy - lastCpu.busy - (own - lastCpu.own)) / (now - lastCpu.at);
    spare = Math.max(0, cores - others);
  }
  lastCpu = { at: now, busy, own };
}

/**
 * Cores other processes left unused over the last quarter second (0 before the value threads
 * start): a parallel read only runs faster when its threads get cores of their own. Measured
 * (issue #29): with both cores busy elsewhere, 16 chunks decoded on two value threads took 15.4
 * ms against 13.5 ms through libhdf5 on one.
 */
export function spareCores(): number {
  return spare;
}

/**
 * Post a job to the thread with the fewest outstanding jobs, transferring `transfer`.
 * @returns its answer
 * @throws Error when the thread died or did not answer within ANSWER_MS
 */
function runOnThread<A extends DecodeDone | JsonPartDone>(job: Omit<DecodeBatch, 'id'> | Omit<JsonPart, 'id'>, transfer: ArrayBuffer[]): Promise<A> {
  startValueThreads();
  let slot = slots![0]!;
  // the fewest outstanding jobs; a thread still warming up only when all are
  for (const s of slots!) if (Number(!s.ready) * 1e9 + s.outstanding < Number(!slot.ready) * 1e9 + slot.outstanding) slot = s;
  const id = nextId++;
  const done = new Promise<A>((resolve, reject) => {
    // a thread that never answers must not hold the request (and its read lock) forever
    const timer = setTimeout(() => {
      if (!pending.delete(id)) return;
      reject(new Error(`a value thread did not answer within ${ANSWER_MS} ms`));
      void slot.worker.terminate();
    }, ANSWER_MS);
    timer.unref();
    pending.set(id, {
      slot,
      resolve: (v) => {
        clearTimeout(timer);
        resolve(v as A);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
  });
  slot.outstanding++;
  slot.worker.postMessage({ ...job, id }, transfer);
  return done;
}

/**
 * Decode a batch of stored chunks on a value thread, from `batch.stored` into `batch.out` (both
 * shared memory: nothing is copied or transferred).
 * @returns undefined when done, else the message naming the chunk that could not be decoded
 * @throws Error when the thread died
 */
export async function decodeOnThread(batch: Omit<DecodeBatch, 'id' | 'kind'>): Promise<string | undefined> {
  const done = await runOnThread<DecodeDone>({ ...batch, kind: 'decode' }, []);
  return done.error;
}

/**
 * Value threads that could start a job at once: started, warmed up and with nothing outstanding
 * (0 before they are started: they start at the server's first quiet second, or with `start`).
 * The parallel chunk reads (chunked.ts) use the threads only when at least two are idle: queued
 * behind a JSON value or another read, or behind a thread's warm-up (~0.3 s), a decode waits
 * longer than the main thread or libhdf5 take to do it.
 */
export function idleValueThreads(start = false): number {
  if (start) startValueThreads();
  let n = 0;
  for (const s of slots ?? []) if (s.ready && s.outstanding === 0) n++;
  return n;
}

let jsonParts = 0;
/** Parts of JSON values formatted on the value threads since the process started (for the metrics). */
export function jsonThreadParts(): number {
  return jsonParts;
}

/** Elements per part of a JSON value at least (smaller values: fewer parts). */
const JSON_PART_MIN_ELEMENTS = 16384;

/**
 * The JSON text of elements [start, start + count) of a value of a fixed-size type (`shape`, in C
 * order), formatted on the value threads: the elements are cut into one part per thread (at
 * least JSON_PART_MIN_ELEMENTS each), each part formatted by a writer of its own skipped to its
 * first element (`ValueJsonWriter.skipTo`) and its text handed back without a copy. The same
 * text as one `ValueJsonWriter` of the value writes for these elements, as chunks in order (the
 * closing brackets are not included); the main thread stays free meanwhile (issue #9 target 5:
 * 1 Mi float32 in ~60 ms on two threads against ~110 ms on one).
 * @param wire the wire bytes of the `count` elements, `itemSize` bytes each (copied to the threads)
 * @throws H5StoreError as the writer throws (code and message kept); Error when a thread died
 *   or did not answer (the caller may format on this thread instead)
 */
export async function valueJsonOnThreads(
  type: TypeJson,
  shape: readonly number[],
  opts: { ignoreNan?: boolean },
  wire: Buffer,
  start: number,
  count: number,
  itemSize: number,
): Promise<Buffer[]> {
  const parts = Math.max(1, Math.min(THREADS, Math.floor(count / JSON_PART_MIN_ELEMENTS)));
  const per = Math.ceil(count / parts);
  const jobs: Promise<JsonPartDone>[] = [];
  for (let s = 0; s < count; s += per) {
    const n = Math.min(per, count - s);
    const own = new ArrayBuffer(n * itemSize);
    new Uint8Array(own).set(wire.subarray(s * itemSize, (s + n) * itemSize));
    jobs.push(runOnThread<JsonPartDone>({ kind: 'json', type, shape: [...shape], ignoreNan: opts.ignoreNan === true, start: start + s, count: n, wire: own }, [own]));
  }
  const answers = await Promise.all(jobs);
  jsonParts += answers.length;
  const out: Buffer[] = [];
  for (const a of answers) {
    if (a.error) throw new H5StoreError(a.error.code, a.error.message);
    for (const p of a.pieces ?? []) out.push(Buffer.from(p.buffer, p.offset, p.length));
  }
  return out;
}

/**
 * Stop the value threads (a later job starts new ones). For in-process tests: a thread started
 * under tsx's loader keeps the process alive despite `unref()`.
 */
export async function stopValueThreads(): Promise<void> {
  const running = slots ?? [];
  slots = [];
  if (cpuTimer) clearInterval(cpuTimer);
  cpuTimer = lastCpu = undefined;
  spare = 0;
  await Promise.all(running.map((s) => s.worker.terminate()));
}

/** Threads the pool runs (or will run). */
export const DECODE_THREADS = THREADS;
