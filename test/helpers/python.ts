/**
 * Cross-checks with h5py and h5dump: run `/usr/bin/python3` (Debian's, with h5py and numpy) and
 * the hdf5-tools commands on files the server serves or wrote.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseJsonBody } from '../../src/codec/json.js';
import { childEnv, childPluginPath } from './env.js';
import { timed } from './costs.js';
import { type PyRun, runInWorker, workerSafe } from './pyworker.js';
import { REPO } from './server.js';

export const PYTHON = '/usr/bin/python3';

/**
 * Run a Python script (text) with arguments; returns stdout. Throws with stderr on failure.
 * Scripts that end as a process would run in a long-lived Python (test/helpers/pyworker.ts).
 * Reads while the server may hold the file open pass `{ lockFree: true }`: libhdf5's file lock
 * is turned off for the child only (the server keeps a written file open up to ~1 s).
 */
export function python(script: string, args: string[] = [], opts: { lockFree?: boolean } = {}): string {
  const env = childEnv(opts.lockFree ? { HDF5_USE_FILE_LOCKING: 'FALSE' } : {});
  return timed('python', () => {
    const r = workerSafe(script) ? runInWorker(PYTHON, WORKER, opts.lockFree ? 'lock-free' : 'locking', env, { script, args }) : undefined;
    if (r) return answer(r, ['-c', script.slice(0, 200), ...args]);
    return execFileSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env });
  });
}

/** test/tools/py_worker.py: the long-lived Python of test/helpers/pyworker.ts. */
const WORKER = path.join(REPO, 'test/tools/py_worker.py');

/**
 * Tools that run in the long-lived Python (pyworker.ts): each turns libhdf5's file locking off
 * for itself (the worker for tools starts so), ends as a process would, and keeps no state.
 */
const WORKER_TOOLS = new Set(['h5inspect.py', 'h5make.py', 'detector_filters.py']);

/** A worker's answer as `execFileSync` gives one: stdout, or an error with status and stderr. */
function answer(r: PyRun, what: string[]): string {
  if (r.stderr) process.stderr.write(r.stderr);
  if (r.status === 0) return r.stdout;
  const err = new Error(`Command failed: ${PYTHON} ${what.join(' ')}\n${r.stderr}`) as Error & { status: number; stderr: string; stdout: string };
  Object.assign(err, { status: r.status, stderr: r.stderr, stdout: r.stdout });
  throw err;
}

/** Run a Python script and parse its stdout as JSON (NaN literals allowed). */
export function pythonJson(script: string, args: string[] = [], opts: { lockFree?: boolean } = {}): any {
  return parseJsonBody(python(script, args, opts));
}

/** Run a script file from test/tools with arguments and parse its JSON output. */
export function toolJson(tool: string, args: string[] = []): any {
  const file = path.join(REPO, 'test/tools', tool);
  const env = { ...process.env, HDF5_PLUGIN_PATH: childPluginPath() };
  const out = timed('python', () => {
    const r = WORKER_TOOLS.has(tool) ? runInWorker(PYTHON, WORKER, 'tools', { ...env, HDF5_USE_FILE_LOCKING: 'FALSE' }, { tool: file, args }) : undefined;
    if (r) return answer(r, [file, ...args]);
    return execFileSync(PYTHON, [file, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env });
  });
  return parseJsonBody(out);
}

/** `h5dump` output of a file (throws when h5dump fails, i.e. the file is not readable). */
export function h5dump(file: string, args: string[] = []): string {
  return timed('h5dump', () => execFileSync('h5dump', [...args, file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }));
}

/** True when h5py is importable (Debian python3-h5py installed). */
export function hasH5py(): boolean {
  try {
    python('import h5py, numpy');
    return fs.existsSync(PYTHON);
  } catch {
    return false;
  }
}
