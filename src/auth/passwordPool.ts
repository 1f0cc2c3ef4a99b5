/**
 * Password checks on threads of their own (issue #24 item 8).
 *
 * `crypto.scrypt` runs on libuv's thread pool (4 threads), the same threads that do every
 * `fs` call of the server: 32 clients guessing passwords in a loop kept them all busy with
 * scrypt, a real login took 21 s and a 16 MiB read never finished. Here each check runs
 * `scryptSync` inside a dedicated worker thread, so file I/O never waits for a password, and the
 * work is bounded and ordered:
 * - two lanes: the first thread takes the checks of addresses without recent failures (`suspect`
 *   false: real users, almost always); the other threads (`threads - 1`, at least one) those of
 *   addresses that failed recently, at the lowest CPU priority (nice 19, Linux: the nice value is
 *   per thread), so guesses get only the CPU nobody else wants and never the first thread. With
 *   `threads: 1` there is one lane;
 * - one client address has at most one check running;
 * - at most `maxQueue` checks wait per kind (then 503 with `Retry-After`);
 * - checks marked `priority` (a name that logged in from the same address before) go first, and
 *   among the others the client address served least recently.
 *
 * The threads are `unref`'d (they never keep the process alive) and restarted when one dies;
 * the checks it held fail with 503.
 */
import { Worker } from 'node:worker_threads';
import { H5StoreError } from '../errors.js';

/** One scrypt computation (the parameters of a stored hash, users.ts `parseHash`). */
export interface ScryptJob {
  password: string;
  salt: Buffer;
  N: number;
  r: number;
  p: number;
  keylen: number;
}

/** Nice value of the threads of suspect addresses (the lowest CPU priority). */
const SUSPECT_NICE = 19;

/** What the thread runs: one `scryptSync` per message, the key (or the error's message) back. */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try {
  if (workerData.nice && process.platform === 'linux') require('node:os').setPriority(0, workerData.nice);
} catch {}
parentPort.on('message', (m) => {
  try {
    const key = scryptSync(m.password.normalize('NFC'), Buffer.from(m.salt), m.keylen, { N: m.N, r: m.r, p: m.p, maxmem: 64 * 1024 * 1024 });
    parentPort.postMessage({ id: m.id, key });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String((e && e.message) || e) });
  }
});
`;

interface Queued {
  id: number;
  /** The client address that asked (fair turns between addresses). */
  from: string;
  /** The address failed logins recently: its checks run on the low-priority lane. */
  suspect: boolean;
  job: ScryptJob;
  resolve: (key: Buffer) => void;
  reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  /** Whether it is a thread of the suspect lane (niced). */
  suspect: boolean;
  /** The check it runs now. */
  current?: Queued;
}

/** A pool of password-hashing threads in two lanes with bounded queues (see the module comment). */
export class PasswordPool {
  private readonly threads: Thread[] = [];
  /** Waiting checks: known logins, others from clean addresses, from suspect addresses. */
  private readonly urgent: Queued[] = [];
  private readonly clean: Queued[] = [];
  private readonly suspect: Queued[] = [];
  private nextId = 1;
  /** When each client address was last served (a counter), for the turns between addresses. */
  private readonly served = new Map<string, number>();
  private turn = 0;

  /**
   * @param opts.threads threads hashing passwords (at least 1; with 2 or more, the first is the
   *   clean lane and the others the suspect lane)
   * @param opts.maxQueue most checks waiting, per kind (known logins, clean, suspect; beyond: 503)
   */
  constructor(private readonly opts: { threads: number; maxQueue: number }) {}

  /** Checks running or waiting now. */
  get load(): number {
    return this.urgent.length + this.clean.length + this.suspect.length + this.threads.filter((t) => t.current).length;
  }

  /**
   * Compute scrypt for `job` on a password thread.
   * @param opts.priority a name known to have logged in from this address (goes first)
   * @param opts.from the client's address (one check at a time, fair turns between addresses)
   * @param opts.suspect the address failed logins recently (the low-priority lane)
   * @returns the derived key (`job.keylen` bytes)
   * @throws H5StoreError Unavailable (503, `Retry-After: 1`) when `maxQueue` checks of that kind
   *   already wait, or when the thread died while computing it.
   */
  scrypt(job: ScryptJob, opts: { priority?: boolean; from?: string; suspect?: boolean } = {}): Promise<Buffer> {
    const suspect = !!opts.suspect && Math.max(1, this.opts.threads) > 1;
    const queue = suspect ? this.suspect : opts.priority ? this.urgent : this.clean;
    if (queue.length >= this.opts.maxQueue) {
      return Promise.reject(new H5StoreError('Unavailable', 'Too many password checks in progress: try again shortly', { retryAfter: 1 }));
    }
    return new Promise<Buffer>((resolve, reject) => {
      queue.push({ id: this.nextId++, from: opts.from ?? '', suspect, job, resolve, reject });
      this.pump();
    });
  }

  /** Stop the threads (tests; the process does not wait for them anyway). */
  close(): void {
    for (const t of this.threads.splice(0)) void t.worker.terminate();
  }

  /** Start waiting checks on idle threads (starting the lanes' threads as needed). */
  private pump(): void {
    const n = Math.max(1, this.opts.threads);
    // the lanes: thread 0 clean (the only one with threads: 1), the others suspect
    while (this.threads.length < n) this.start(this.threads.length > 0);
    for (const t of this.threads) {
      if (t.current) continue;
      const q = this.take(t.suspect);
      if (q) this.run(t, q);
    }
  }

  private start(suspect: boolean): Thread {
    const worker = new Worker(THREAD_CODE, { eval: true, execArgv: [], workerData: { nice: suspect ? SUSPECT_NICE : 0 } });
    worker.unref();
    const t: Thread = { worker, suspect };
    this.threads.push(t);
    worker.on('message', (m: { id: number; key?: Uint8Array; error?: string }) => {
      const q = t.current;
      if (!q || q.id !== m.id) return;
      t.current = undefined;
      if (m.key) q.resolve(Buffer.from(m.key.buffer, m.key.byteOffset, m.key.byteLength));
      else q.reject(new H5StoreError('Internal', `The password check failed: ${m.error}`));
      this.pump();
    });
    const died = (why: string) => {
      const i = this.threads.indexOf(t);
      if (i < 0) return;
      this.threads.splice(i, 1);
      t.current?.reject(new H5StoreError('Unavailable', `The password check was interrupted (${why}): try again`, { retryAfter: 1 }));
      t.current = undefined;
      this.pump(); // the waiting checks go to a new thread
    };
    worker.on('error', (e) => died(e.message));
    worker.on('exit', (code) => died(`exit ${code}`));
    return t;
  }

  private run(t: Thread, q: Queued): void {
    t.current = q;
    this.served.set(q.from, ++this.turn);
    if (this.served.size > 10_000) this.served.clear();
    const { password, salt, N, r, p, keylen } = q.job;
    t.worker.postMessage({ id: q.id, password, salt, N, r, p, keylen });
  }

  /**
   * The next check a thread runs: on the clean lane a known login, else the clean check whose
   * address was served least recently; on the suspect lane a suspect check so chosen, else a
   * clean one waiting (a clean check may borrow an idle suspect thread; never the reverse).
   * Never a second check of an address that has one running.
   */
  private take(suspectLane: boolean): Queued | undefined {
    const busy = new Set(this.threads.filter((t) => t.current).map((t) => t.current!.from));
    const lists = suspectLane ? [this.suspect, this.urgent, this.clean] : [this.urgent, this.clean];
    for (const list of lists) {
      let best = -1;
      let bestTurn = Infinity;
      for (let i = 0; i < list.length; i++) {
        if (busy.has(list[i]!.from)) continue;
        const t = list === this.urgent ? i : (this.served.get(list[i]!.from) ?? 0);
        if (t < bestTurn) {
          bestTurn = t;
          best = i;
        }
      }
      if (best >= 0) return list.splice(best, 1)[0];
    }
    return undefined;
  }
}
