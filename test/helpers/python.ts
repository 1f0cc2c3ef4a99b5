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
import { REPO } from './server.js';

export const PYTHON = '/usr/bin/python3';

/**
 * Run a Python script (text) with arguments; returns stdout. Throws with stderr on failure.
 * Reads while the server may hold the file open pass `{ lockFree: true }`: libhdf5's file lock
 * is turned off for the child only (the server keeps a written file open up to ~1 s).
 */
export function python(script: string, args: string[] = [], opts: { lockFree?: boolean } = {}): string {
  const env = childEnv(opts.lockFree ? { HDF5_USE_FILE_LOCKING: 'FALSE' } : {});
  return timed('python', () => execFileSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env }));
}

/** Run a Python script and parse its stdout as JSON (NaN literals allowed). */
export function pythonJson(script: string, args: string[] = [], opts: { lockFree?: boolean } = {}): any {
  return parseJsonBody(python(script, args, opts));
}

/** Run a script file from test/tools with arguments and parse its JSON output. */
export function toolJson(tool: string, args: string[] = []): any {
  const out = timed('python', () =>
    execFileSync(PYTHON, [path.join(REPO, 'test/tools', tool), ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, HDF5_PLUGIN_PATH: childPluginPath() } }),
  );
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
