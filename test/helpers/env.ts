/**
 * The environment of child processes the tests start (servers, h5py, h5pyd).
 *
 * A test process that loads the store in-process has HDF5_USE_FILE_LOCKING=FALSE in its
 * environment (src/hdf5/vfd.ts sets it: the store locks files itself). Children must not inherit
 * that: a server would warn about it and h5py would open served files without libhdf5's lock.
 * So the variable is dropped unless `extra` gives it.
 *
 * Children find the filter plugins the server finds: HDF5_PLUGIN_PATH is the folder
 * scripts/build-plugins.mjs builds into (bitshuffle), then libhdf5's own path (`childPluginPath`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder scripts/build-plugins.mjs builds into (the server's default plugin folder). */
export const BUILT_PLUGIN_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../build/hdf5-plugins');

let pluginPath: string | undefined;
/**
 * HDF5_PLUGIN_PATH for children: the built plugin folder (when built), then the folders libhdf5
 * searches without the variable (asked of Debian's h5py once: HDF5_PLUGIN_PATH replaces them), or
 * the test process's own HDF5_PLUGIN_PATH when it has one.
 */
export function childPluginPath(): string {
  if (pluginPath !== undefined) return pluginPath;
  let base = process.env.HDF5_PLUGIN_PATH;
  if (!base) {
    const env = { ...process.env };
    delete env.HDF5_PLUGIN_PATH;
    const r = spawnSync('/usr/bin/python3', ['-c', 'import h5py; print(":".join(h5py.h5pl.get(i).decode() for i in range(h5py.h5pl.size())))'], { encoding: 'utf8', env });
    base = r.status === 0 && r.stdout.trim() ? r.stdout.trim() : '/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins';
  }
  pluginPath = [...(fs.existsSync(BUILT_PLUGIN_DIR) ? [BUILT_PLUGIN_DIR] : []), base].join(':');
  return pluginPath;
}

export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HDF5_PLUGIN_PATH: childPluginPath() };
  delete env.HDF5_USE_FILE_LOCKING;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
