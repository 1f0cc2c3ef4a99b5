/**
 * Threads that decode stored chunks (decodeWorker.ts) for the parallel chunk reads (chunked.ts):
 * one per core up to four, started on first use and not keeping the process alive. Batches go to
 * the thread with the fewest outstanding batches; the result is a SharedArrayBuffer the threads
 * write into directly, so the main thread neither inflates nor copies.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { DecodeBatch, DecodeDone } from './decodeWorker.js';

interface Slot {
  worker: Worker;
  outstanding: number;
}

/** Threads to start: the cores, at least 1, at most 4. */
const THREADS = Math.max(1, Math.min(4, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length));

/** Longest wait for a batch (ms): then the thread is terminated and the read fails. */
const ANSWER_MS = 60_000;

let slots: Slot[] | undefined;
let nextId = 1;
const pending = new Map<number, { slot: Slot; resolve: (error: string | undefined) => void; reject: (e: Error) => void }>();

function start(): Slot {
  // Under tsx (tests, `node --import tsx`) the worker is the .ts file, loaded with tsx's loader
  // registered in the thread first (a worker does not get the parent's loader hooks).
  const ts = import.meta.url.endsWith('.ts');
  const url = new URL(ts ? './decodeWorker.ts' : './decodeWorker.js', import.meta.url);
  const worker = ts
    ? new Worker(`import(${JSON.stringify((import.meta as unknown as { resolve(s: string): string }).resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`, {
        eval: true,
        execArgv: [],
      })
    : new Worker(url, { execArgv: [] });
  worker.unref();
  const slot: Slot = { worker, outstanding: 0 };
  worker.on('message', (m: DecodeDone) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    p.slot.outstanding--;
    p.resolve(m.error);
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
  worker.on('exit', (code) => fail(new Error(`a chunk decoding thread exited (${code})`)));
  return slot;
}

/**
 * Decode a batch of stored chunks on a decoding thread, into `batch.out`. The raw chunks'
 * ArrayBuffers are transferred (they must not be views of Node's shared small-buffer pool: make
 * them with `Buffer.allocUnsafeSlow`).
 * @returns undefined when done, else the message naming the chunk that could not be decoded
 * @throws Error when the thread died
 */
export function decodeOnThread(batch: Omit<DecodeBatch, 'id'>): Promise<string | undefined> {
  slots ??= [];
  while (slots.length < THREADS) slots.push(start());
  let slot = slots[0]!;
  for (const s of slots) if (s.outstanding < slot.outstanding) slot = s;
  const id = nextId++;
  const done = new Promise<string | undefined>((resolve, reject) => {
    // a thread that never answers must not hold the request (and its read lock) forever
    const timer = setTimeout(() => {
      if (!pending.delete(id)) return;
      reject(new Error(`a chunk decoding thread did not answer within ${ANSWER_MS} ms`));
      void slot.worker.terminate();
    }, ANSWER_MS);
    timer.unref();
    pending.set(id, {
      slot,
      resolve: (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
  });
  slot.outstanding++;
  slot.worker.postMessage(
    { ...batch, id },
    batch.chunks.map((c) => c.raw),
  );
  return done;
}

/** Threads the pool runs (or will run). */
export const DECODE_THREADS = THREADS;
