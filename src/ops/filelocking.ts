/**
 * Whether libhdf5 takes its file locks, from `HDF5_USE_FILE_LOCKING` (read by libhdf5 at every
 * open). Checked against Debian's libhdf5 1.10.8 with two h5py processes opening one file for
 * writing: exactly `FALSE` or `0` turn the locks off; `BEST_EFFORT` keeps them where the file
 * system supports them and silently goes without where it does not (some NFS mounts); anything
 * else (`TRUE`, `1`, `false`, `no`, unset) keeps them on.
 */

export type FileLockingMode = 'on' | 'off' | 'best-effort';

/** libhdf5's file-locking mode for an environment. */
export function hdf5FileLocking(env: NodeJS.ProcessEnv = process.env): FileLockingMode {
  const v = env.HDF5_USE_FILE_LOCKING;
  if (v === 'FALSE' || v === '0') return 'off';
  if (v === 'BEST_EFFORT') return 'best-effort';
  return 'on';
}

/** What the server logs at start for a mode (undefined: nothing to say). */
export function fileLockingWarning(mode: FileLockingMode): string | undefined {
  if (mode === 'off') {
    return (
      'HDF5 file locking is disabled (HDF5_USE_FILE_LOCKING=FALSE) in this environment. h5store ignores it for its own handles ' +
      'and still locks each served file (flock, as libhdf5 does) while a request uses it, but h5py or any other program run ' +
      'with this setting takes no lock: it can open a served file for writing while this server writes it, and two writers ' +
      'corrupt an HDF5 file. Unset it unless the file system has no working locks (see docs/deploy.md, "Shared file systems").'
    );
  }
  if (mode === 'best-effort') {
    return (
      'HDF5_USE_FILE_LOCKING=BEST_EFFORT: programs run with it open files without locks where the file system has none, and ' +
      'say nothing, so they are not kept out of files this server writes (see docs/deploy.md, "Shared file systems").'
    );
  }
  return undefined;
}
