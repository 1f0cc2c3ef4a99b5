/**
 * What a folder listing learns about a file from its first bytes and its lock, without libhdf5
 * and without waiting (issue #28 item 6: a listing waited 5 s for each file another program
 * held open for writing, and listed files that are not HDF5 as domains).
 */
import fs from 'node:fs';
import { hasOfdLocks, rangeLockedByOthers, tryFlock, unflock } from '../../hdf5/posix.js';
import { lockFileOf } from './servicefiles.js';

/** The HDF5 signature; the superblock is at 0, 512, 1024, 2048, ... (HDF5 format spec II.A). */
const SIGNATURE = Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface FileStatus {
  /** The file has an HDF5 superblock signature (at 0, 512, 1024, ... bytes). */
  hdf5: boolean;
  /**
   * Another program holds the file open for writing, as far as can be told at once: libhdf5's
   * exclusive `flock` is held (h5py with file locking on), or a version 3 superblock has its
   * write-access or SWMR-write flag set (`libver="latest"` writers; also a crashed one's leftover).
   * A writer with locking off and an old superblock cannot be told apart from no writer.
   * An h5store process writing the file (this one, a sibling worker: it holds the writer byte of
   * the file's lock file, xlock.ts, while its flock and the flags it sets last) is no other
   * program: not being written then.
   */
  beingWritten: boolean;
}

/**
 * Whether an h5store process writes the file at `p` now: it holds the writer byte (byte 0, an
 * OFD lock; a `flock` where OFD locks are missing) of the file's lock file (xlock.ts).
 */
function h5storeWrites(p: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(lockFileOf(fs.realpathSync(p)), 'r');
    if (hasOfdLocks()) return rangeLockedByOthers(fd, 'shared', 0);
    const free = tryFlock(fd, false);
    if (free) unflock(fd);
    return !free;
  } catch {
    return false; // no lock file: no h5store process ever wrote the file
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The status of the file at `p` (a regular file). Opens it read-only for a moment; never waits.
 * @returns `{hdf5: false, beingWritten: false}` for files that cannot be opened or read
 */
export function fileStatus(p: string): FileStatus {
  let fd: number;
  try {
    fd = fs.openSync(p, 'r');
  } catch {
    return { hdf5: false, beingWritten: false };
  }
  try {
    const size = fs.fstatSync(fd).size;
    const b = Buffer.alloc(12);
    let flags = -1;
    for (let at = 0; at + 8 <= size; at = at === 0 ? 512 : at * 2) {
      const n = fs.readSync(fd, b, 0, 12, at);
      if (n >= 8 && b.subarray(0, 8).equals(SIGNATURE)) {
        // libhdf5 1.10 sets and clears these flags only in version 3 superblocks: a version 2 one
        // keeps the write-access bit it was created with after the file is closed (files h5store
        // or h5py with libver="v108" wrote were all "being written")
        flags = n >= 12 && b[8] >= 3 ? b[11] : 0;
        break;
      }
    }
    if (flags < 0) return { hdf5: false, beingWritten: false };
    // bit 0: open for write access, bit 2: open for SWMR writing (superblock version 3)
    let held = (flags & 0b101) !== 0;
    if (!held) {
      const free = tryFlock(fd, false);
      if (free) unflock(fd);
      held = !free;
    }
    return { hdf5: true, beingWritten: held && !h5storeWrites(p) };
  } catch {
    return { hdf5: false, beingWritten: false };
  } finally {
    fs.closeSync(fd);
  }
}
