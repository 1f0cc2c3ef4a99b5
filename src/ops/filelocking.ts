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
      'HDF5 file locking is disabled (HDF5_USE_FILE_LOCKING=FALSE): libhdf5 takes no lock on the files it opens, so h5py or any ' +
      'other program can open a served file for writing while this server reads or writes it, and two writers corrupt an HDF5 ' +
      'file. h5store processes still serialise their own writes with lock directories beside each file; other programs are ' +
      'not kept out. Unset it unless the file system has no working locks (see docs/deploy.md, "Shared file systems").'
    );
  }
  if (mode === 'best-effort') {
    return (
      'HDF5_USE_FILE_LOCKING=BEST_EFFORT: on a file system without working locks libhdf5 opens files without them and says ' +
      'nothing, so other programs are not kept out of files this server writes (see docs/deploy.md, "Shared file systems").'
    );
  }
  return undefined;
}
