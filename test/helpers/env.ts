/**
 * The environment of child processes the tests start (servers, h5py, h5pyd).
 *
 * A test process that loads the store in-process has HDF5_USE_FILE_LOCKING=FALSE in its
 * environment (src/hdf5/vfd.ts sets it: the store locks files itself). Children must not inherit
 * that: a server would warn about it and h5py would open served files without libhdf5's lock.
 * So the variable is dropped unless `extra` gives it.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.HDF5_USE_FILE_LOCKING;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
