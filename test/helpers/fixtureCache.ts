/**
 * Large files the tests write with h5py, written once per version of their generator and kept
 * between runs in the system's temporary folder (`h5store-test-cache/`): a group of 50,000
 * datasets takes h5py about 4 s of CPU (8 s under load) each time. Tests copy what they serve.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnv } from './env.js';
import { PYTHON } from './python.js';
import { REPO } from './server.js';

const CACHE = path.join(os.tmpdir(), 'h5store-test-cache');

/**
 * The folder `test/tools/<tool> <folder> ...args` writes, made once per content of the tool and
 * `args` (and of h5py's version: a file h5py writes may change with it). Written into a new
 * folder first and renamed into place, so a run killed half-way leaves no half-written cache.
 * @returns the cached folder (read-only by convention: copy files out of it to serve them)
 */
export function cachedOutput(tool: string, args: string[] = []): string {
  const script = path.join(REPO, 'test/tools', tool);
  const h5py = execFileSync(PYTHON, ['-c', 'import h5py; print(h5py.version.version, h5py.version.hdf5_version)'], { encoding: 'utf8', env: childEnv({}) }).trim();
  const key = createHash('sha256').update(fs.readFileSync(script)).update(JSON.stringify(args)).update(h5py).digest('hex').slice(0, 16);
  const dir = path.join(CACHE, `${path.basename(tool, '.py')}-${key}`);
  if (fs.existsSync(dir)) return dir;
  fs.mkdirSync(CACHE, { recursive: true });
  const tmp = fs.mkdtempSync(`${dir}.tmp-`);
  try {
    execFileSync(PYTHON, [script, tmp, ...args], { env: childEnv({}), stdio: ['ignore', 'ignore', 'inherit'] });
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    // another process made it meanwhile (rename onto a non-empty folder fails): use theirs
    if (fs.existsSync(dir)) return dir;
    throw e;
  }
  return dir;
}

/** Copy every file of `cached` (a folder of `cachedOutput`) into `dest`, writable. */
export function copyCached(cached: string, dest: string): void {
  fs.mkdirSync(dest, { recursive: true });
  for (const n of fs.readdirSync(cached)) {
    fs.copyFileSync(path.join(cached, n), path.join(dest, n));
    fs.chmodSync(path.join(dest, n), 0o644);
  }
}
