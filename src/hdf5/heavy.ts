/**
 * Long libhdf5 calls on a second thread, so the server keeps answering meanwhile (issue 7
 * item 5; docs/architecture.md "One request does not stop the others").
 *
 * libhdf5 is not thread-safe, and it cannot be interrupted inside a call: writing one element
 * into a 256 MiB gzip chunk of a dropped-in file is one `H5Dwrite` that decompresses, changes and
 * recompresses the whole chunk (about a second). Such a call runs on a worker thread instead of
 * the main one, and while it runs no other libhdf5 call may start anywhere:
 * - `hdf5Busy()` says so; the store waits (asynchronously, `hdf5Turn`) before it starts
 *   libhdf5 work, so requests that need no libhdf5 (`GET /about`) and everything else on the
 *   event loop go on;
 * - as a safety net every checked libhdf5 call of the main thread (`src/hdf5/lib.ts`) that comes
 *   while the worker runs blocks until it is done (`waitIdleSync`), so two threads are never in
 *   libhdf5 at once; except when the worker's call is on a file of the journaling driver
 *   (vfd.ts): its callbacks are JavaScript that koffi runs on the main thread, so blocking it
 *   would deadlock, and the request gets a 503 instead. The store runs the libhdf5 work that
 *   follows an `await` through `hdf5Turn` (at once when libhdf5 is free, else once it is), and
 *   the worker's caller resumes before other waiters, so the net is hardly ever met.
 * Ids (`hid_t`) and memory addresses are the process's: the worker calls `H5Dwrite` on the same
 * dataset and dataspace ids with the address of the caller's buffer, which the caller keeps alive
 * until the promise settles.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BUSY, H5, Hdf5Error, LIB_INFO, type Hid, addressOf } from './lib.js';
import { usesScriptFilters } from './filters.js';
import { onJournalingDriver } from './vfd.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const koffi = require(workerData.koffi);
const lib = koffi.load(workerData.lib, { global: true });
const proto = (n) => lib.func('int ' + n + '(int64_t did, int64_t mt, int64_t ms, int64_t fs, int64_t xfer, uint64_t buf)');
const calls = { write: proto('H5Dwrite'), read: proto('H5Dread') };
let walkCb;
try { walkCb = koffi.proto('int h5store_walk_cb(unsigned int n, void *err, void *client)'); }
catch { walkCb = koffi.resolve('h5store_walk_cb'); }
const H5Ewalk2 = lib.func('int H5Ewalk2(int64_t estack, int direction, h5store_walk_cb *func, void *client)');
const H5Eclear2 = lib.func('int H5Eclear2(int64_t estack)');
const H5Eget_msg = lib.func('int64_t H5Eget_msg(int64_t msg_id, void *type, _Out_ uint8_t *msg, size_t size)');
let walked = [];
const cb = koffi.register((_n, err) => {
  try {
    const minor = koffi.decode(err, 16, 'int64_t');
    const func = koffi.decode(err, 32, 'const char *');
    const desc = koffi.decode(err, 48, 'const char *');
    const buf = Buffer.alloc(256);
    const n = Number(H5Eget_msg(minor, null, buf, 256));
    walked.push(func + ': ' + desc + (n > 0 ? ' (' + buf.toString('latin1', 0, Math.min(n, 255)) + ')' : ''));
  } catch {}
  return 0;
}, koffi.pointer(walkCb));
const busy = new Int32Array(workerData.busy);
parentPort.on('message', (m) => {
  let ret = -1;
  let stack = [];
  try {
    ret = calls[m.op](m.did, m.mt, m.ms, m.fs, m.xfer, m.buf);
    if (ret < 0) {
      walked = [];
      H5Ewalk2(0, 1, cb, null);
      H5Eclear2(0);
      stack = walked;
    }
  } finally {
    Atomics.store(busy, 0, 3); // out of libhdf5; the main thread sets 0 when it takes the result
    Atomics.notify(busy, 0);
    parentPort.postMessage({ id: m.id, ret, stack });
  }
});
`;

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (r: { ret: number; stack: string[] }) => void; reject: (e: Error) => void }>();

function theWorker(): Worker {
  if (!worker) {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { koffi: createRequire(import.meta.url).resolve('koffi'), lib: LIB_INFO.path, busy: BUSY.buffer },
      execArgv: [],
    });
    w.unref();
    w.on('message', (m: { id: number; ret: number; stack: string[] }) => {
      // idle again; the caller's continuation (a microtask) runs before the tasks of waiters
      Atomics.store(BUSY, 0, 0);
      Atomics.notify(BUSY, 0);
      pending.get(m.id)?.resolve(m);
      pending.delete(m.id);
    });
    w.on('error', (e) => {
      Atomics.store(BUSY, 0, 0);
      Atomics.notify(BUSY, 0);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
      worker = undefined;
    });
    worker = w;
  }
  return worker;
}

let sections = 0;

/**
 * Count a section of main-thread work that may call libhdf5 across `await`s (a store read or
 * write, from its locks to their release; src/store/session/files.ts opens them). A call on a file of
 * the journaling driver goes to the worker only when it is the one section: a section that
 * starts later waits (`whenIdle`) before its first libhdf5 call.
 * @returns the section's end (call it once; later calls do nothing)
 */
export function openSection(): () => void {
  sections++;
  let open = true;
  return () => {
    if (open) {
      open = false;
      sections--;
    }
  };
}

/** True while a libhdf5 call runs on the worker thread. */
export function hdf5Busy(): boolean {
  return Atomics.load(BUSY, 0) !== 0;
}

/**
 * Run `fn`, main-thread work that calls libhdf5 and follows an `await`, in libhdf5's turn: at once
 * (synchronously, no promise in between) when no libhdf5 call runs on the worker thread, else as
 * soon as none does. The one place the store waits for the worker (see the module comment).
 * @returns what `fn` returns, or a promise of it when it had to wait
 */
export function hdf5Turn<T>(fn: () => T): T | Promise<T> {
  if (Atomics.load(BUSY, 0) === 0) return fn();
  return whenIdle().then(() => hdf5Turn(fn));
}

/**
 * Let the event loop run one turn (timers, I/O, other requests), then resolve in libhdf5's turn
 * (`hdf5Turn`): the pause of long main-thread work that holds a file's read lock and calls
 * libhdf5 again as soon as it resumes (store/domainFiles.ts `readWalked`, `readInSteps`).
 */
export async function hdf5Pause(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await hdf5Turn(() => undefined);
}

/** Resolves when no libhdf5 call runs on the worker thread. */
export async function whenIdle(): Promise<void> {
  // Atomics.waitAsync (Node 16+; not in TypeScript's ES2022 lib)
  const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<unknown> } }).waitAsync;
  for (let v = Atomics.load(BUSY, 0); v !== 0; v = Atomics.load(BUSY, 0)) {
    const w = waitAsync(BUSY, 0, v);
    if (w.async) await w.value;
  }
}

/**
 * `H5Dwrite` / `H5Dread` of `buf` on the worker thread (see the module comment); the caller has
 * made the dataspaces and keeps `buf` (and whatever it points to) alive until this settles.
 * @throws Hdf5Error with libhdf5's error stack on a negative return.
 */
export async function datasetIoOnWorker(op: 'write' | 'read', did: Hid, memType: Hid, memSpace: Hid, fileSpace: Hid, xfer: Hid, buf: Buffer): Promise<void> {
  return hdf5Turn(() => ioOnWorker(op, did, memType, memSpace, fileSpace, xfer, buf));
}

/** `datasetIoOnWorker` once libhdf5 is free. */
async function ioOnWorker(op: 'write' | 'read', did: Hid, memType: Hid, memSpace: Hid, fileSpace: Hid, xfer: Hid, buf: Buffer): Promise<void> {
  // The journaling driver's callbacks run on this thread (lib.ts BUSY): while they may be
  // needed, no other work of this thread may call libhdf5. Other sections that could resume
  // into libhdf5 at any `await`: the call runs here instead (blocking, but never deadlocking).
  // so are a pipeline's filters that h5store registered (filters.ts): koffi runs them here too
  const journaled = onJournalingDriver(did) || usesScriptFilters(did);
  if (journaled && sections > 1) {
    if (op === 'write') H5.H5Dwrite(did, memType, memSpace, fileSpace, xfer, buf);
    else H5.H5Dread(did, memType, memSpace, fileSpace, xfer, buf);
    return;
  }
  const state = journaled ? 2 : 1;
  const w = theWorker();
  const id = nextId++;
  const done = new Promise<{ ret: number; stack: string[] }>((resolve, reject) => pending.set(id, { resolve, reject }));
  Atomics.store(BUSY, 0, state);
  w.postMessage({ id, op, did: BigInt(did), mt: BigInt(memType), ms: BigInt(memSpace), fs: BigInt(fileSpace), xfer: BigInt(xfer), buf: addressOf(buf) });
  const r = await done;
  if (r.ret < 0) throw new Hdf5Error(op === 'write' ? 'H5Dwrite' : 'H5Dread', r.stack);
}
