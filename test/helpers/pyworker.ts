/**
 * A long-lived Python (test/tools/py_worker.py) for the h5py oracles: a run costs milliseconds
 * instead of Python's, numpy's and h5py's start (~0.3 s quiet, 1 s and more under load). Calls
 * stay synchronous, like the `execFileSync` they replace: requests and answers go through two named
 * pipes, read and written with blocking `fs.readSync` / `fs.writeSync`.
 *
 * One worker per environment (with and without HDF5_USE_FILE_LOCKING=FALSE), started on first use.
 * Only scripts that end as a process would are sent to it (`workerSafe`): not those that kill
 * their own process (`os._exit`, a crash on purpose), sleep, or start processes or threads.
 * `H5STORE_TEST_PY_WORKER=0` turns the worker off (every run its own process, as before).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The answer of one run: exit status and what it printed. */
export interface PyRun {
  status: number;
  stdout: string;
  stderr: string;
}

interface Worker {
  req: number;
  ans: number;
  dir: string;
}

const workers = new Map<string, Worker | null>();

/** Whether the worker is in use (not turned off with H5STORE_TEST_PY_WORKER=0). */
export const PY_WORKER_ON = process.env.H5STORE_TEST_PY_WORKER !== '0';

/** Whether `script` can run in the shared interpreter: it ends as a process would, touching nothing outside its files. */
export function workerSafe(script: string): boolean {
  return !/\b(_exit|kill|abort|signal|sleep|subprocess|Popen|fork|threading|multiprocessing|atexit|faulthandler|setrlimit)\b/.test(script);
}

function start(python: string, env: NodeJS.ProcessEnv, tool: string): Worker {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-pyworker-'));
  const reqPath = path.join(dir, 'req');
  const ansPath = path.join(dir, 'ans');
  execFileSync('mkfifo', [reqPath, ansPath]);
  const proc = spawn(python, [tool, reqPath, ansPath], { env, stdio: ['ignore', 'inherit', 'inherit'], detached: false });
  proc.unref();
  // the worker opens the request pipe, then the answer pipe: open them in the same order
  const req = fs.openSync(reqPath, 'w');
  const ans = fs.openSync(ansPath, 'r');
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return { req, ans, dir };
}

function readExactly(fd: number, n: number): Buffer {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const k = fs.readSync(fd, buf, got, n - got, null);
    if (k === 0) throw new Error('the Python worker ended');
    got += k;
  }
  return buf;
}

function readLine(fd: number): string {
  const parts: number[] = [];
  const one = Buffer.alloc(1);
  for (;;) {
    if (fs.readSync(fd, one, 0, 1, null) === 0) throw new Error('the Python worker ended');
    if (one[0] === 10) return Buffer.from(parts).toString('utf8');
    parts.push(one[0]);
  }
}

/**
 * Run `{script}` (as `python -c`) or `{tool}` (a script file) with `args` in the worker for `env`
 * (keyed by `envKey`). Returns undefined when the worker cannot be used (turned off, or it ended:
 * the caller then runs its own process).
 */
export function runInWorker(python: string, workerTool: string, envKey: string, env: NodeJS.ProcessEnv, job: { script?: string; tool?: string; args: string[] }): PyRun | undefined {
  if (!PY_WORKER_ON) return undefined;
  let w = workers.get(envKey);
  if (w === null) return undefined;
  if (!w) {
    try {
      w = start(python, env, workerTool);
    } catch {
      workers.set(envKey, null);
      return undefined;
    }
    workers.set(envKey, w);
  }
  try {
    fs.writeSync(w.req, JSON.stringify(job) + '\n');
    const n = Number(readLine(w.ans));
    return JSON.parse(readExactly(w.ans, n).toString('utf8')) as PyRun;
  } catch (e) {
    // a worker that died mid-run: say so (the run may have done part of its work), and run no more there
    workers.set(envKey, null);
    throw new Error(`the Python worker failed during a run: ${(e as Error).message}`);
  }
}
