/**
 * The watchdog (issue #24 item 14): a thread of its own that notices when the main thread stops
 * answering (the event loop blocked: a long libhdf5 call, a deadlock, a runaway loop) and says
 * what it was doing, while it still does it.
 *
 * The main thread bumps a shared counter every `BEAT_MS`. The watchdog thread looks at it every
 * `BEAT_MS`; when it has not moved for `stallMs`, it writes one log line (level error, straight to
 * standard output with `writeSync`: the main thread, which normally carries a thread's output, is
 * the one stuck) naming how long it has been stuck, the libhdf5 function it is in (lib.ts
 * `CURRENT_CALL`), what the HDF5 worker thread is doing (lib.ts `BUSY`), and the requests in
 * flight (the flight record, flightRecorder.ts); and one more when it answers again. Stalls are
 * counted (`h5store_event_loop_stalls_total`). Its own cost: one shared-memory write per 100 ms
 * on the main thread.
 */
import { Worker } from 'node:worker_threads';
import { BUSY, CALL_NAMES, CURRENT_CALL } from '../hdf5/lib.js';
import { parseFlightRecord } from './flightRecorder.js';

/** How often the main thread shows it is alive, and the watchdog looks (ms). */
const BEAT_MS = 100;

export interface WatchdogOptions {
  /** Report when the main thread has not answered for this long (ms). */
  stallMs: number;
  /** The flight record's descriptor (its requests in flight are reported). */
  recordFd?: number;
  /** Fields of every line (pino's: pid, hostname, and `worker` under `serve --workers N`). */
  bindings: Record<string, unknown>;
}

export interface Watchdog {
  /** Stalls seen so far. */
  stalls(): number;
  stop(): void;
}

const SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const parseFlightRecord = (${parseFlightRecord.toString()});
const { beat, busy, call, names, stallMs, recordFd, bindings, beatMs } = workerData;
const counts = new Int32Array(workerData.counts);
const BUSY_STATE = ['idle', 'a call on a file of a native driver', 'a call on a journaled file or with script filters', 'done, result not taken yet'];
let seen = Atomics.load(beat, 0);
let since = Date.now();
let reported = 0;
const line = (level, fields, msg) => {
  try {
    fs.writeSync(1, JSON.stringify({ level, time: Date.now(), ...bindings, ...fields, msg }) + '\\n');
  } catch {}
};
setInterval(() => {
  const now = Date.now();
  const b = Atomics.load(beat, 0);
  if (b !== seen) {
    if (reported) line(40, { stalledMs: now - since }, 'watchdog: the main thread answers again');
    seen = b;
    since = now;
    reported = 0;
    return;
  }
  const stalled = now - since;
  // once at stallMs, then every 10 stallMs while it lasts
  if (stalled < stallMs || (reported && stalled < reported + 10 * stallMs)) return;
  if (!reported) Atomics.add(counts, 0, 1);
  reported = stalled;
  const c = Atomics.load(call, 0);
  let inFlight = [];
  if (recordFd !== undefined) {
    try {
      const buf = Buffer.alloc(65536);
      const n = fs.readSync(recordFd, buf, 0, buf.length, 0);
      inFlight = parseFlightRecord(buf.subarray(0, n), now).inFlight;
    } catch {}
  }
  line(50, {
    stalledMs: stalled,
    hdf5Call: c > 0 ? names[c - 1] : null,
    hdf5Thread: BUSY_STATE[Atomics.load(busy, 0)] ?? String(Atomics.load(busy, 0)),
    inFlight,
  }, 'watchdog: the main thread has not answered for ' + stalled + ' ms');
}, beatMs);
`;

/**
 * Start the watchdog thread (it never keeps the process alive).
 * @throws Error when the thread cannot start
 */
export function startWatchdog(o: WatchdogOptions): Watchdog {
  const beat = new Int32Array(new SharedArrayBuffer(4));
  const counts = new SharedArrayBuffer(4);
  const timer = setInterval(() => Atomics.add(beat, 0, 1), BEAT_MS);
  timer.unref();
  const worker = new Worker(SOURCE, {
    eval: true,
    execArgv: [],
    workerData: { beat, busy: BUSY, call: CURRENT_CALL, names: CALL_NAMES, stallMs: o.stallMs, recordFd: o.recordFd, bindings: o.bindings, beatMs: BEAT_MS, counts },
  });
  worker.unref();
  worker.on('error', () => undefined); // a watchdog that fails must not take the server down
  const stallCount = new Int32Array(counts);
  return {
    stalls: () => Atomics.load(stallCount, 0),
    stop: () => {
      clearInterval(timer);
      void worker.terminate();
    },
  };
}
