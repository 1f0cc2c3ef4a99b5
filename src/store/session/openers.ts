/**
 * Which other processes have a file open for writing, read from Linux's `/proc` (what `fuser`
 * and `lsof` read): `/proc/<pid>/fd/<n>` resolves to the open file (its device and inode), and
 * `/proc/<pid>/fdinfo/<n>` gives the descriptor's open flags (proc(5)). Used by files.ts before
 * a REST write into a file another program changed recently (issue #26 item 1: h5store never
 * writes into a file another program holds): a program that writes without file locking and
 * without status flags (HDF5_USE_FILE_LOCKING=FALSE, an old `libver`) shows only here.
 */
import fs from 'node:fs';

/** O_ACCMODE bits of an open file description: 1 O_WRONLY, 2 O_RDWR (asm-generic/fcntl.h). */
const O_ACCMODE = 0o3;

/** What a scan found: the writers' pids, and whether some processes could not be looked at. */
export interface WritersFound {
  /** Processes (other than the excluded ones) with the file open for writing. */
  pids: number[];
  /** True when some process's descriptors could not be read (another user's, without root). */
  incomplete: boolean;
}

/**
 * The processes other than `exclude` that have the file `dev:ino` open with write access.
 * Processes that end during the scan are skipped. Cost: one `stat` per descriptor of every
 * process (about 1 ms per 1,000 descriptors), so call it on rare paths only.
 * @param dev, ino the file's identity (`fs.Stats` of the file as numbers)
 * @param exclude pids not to report (this process; the workers of the same server)
 * @returns undefined where `/proc` is not there (not Linux)
 */
export function writersOf(dev: number, ino: number, exclude: ReadonlySet<number>): WritersFound | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  const pids: number[] = [];
  let incomplete = false;
  for (const e of entries) {
    const pid = Number(e);
    if (!Number.isInteger(pid) || exclude.has(pid)) continue;
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EACCES') incomplete = true;
      continue; // ended meanwhile, or a kernel thread
    }
    for (const fd of fds) {
      let st: fs.Stats;
      try {
        st = fs.statSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (st.ino !== ino || st.dev !== dev) continue;
      let info: string;
      try {
        info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1');
      } catch {
        continue;
      }
      const m = /^flags:\s*([0-7]+)/m.exec(info);
      if (m && (parseInt(m[1], 8) & O_ACCMODE) !== 0) {
        pids.push(pid);
        break;
      }
    }
  }
  return { pids, incomplete };
}

/** The parent pid of `pid` (`/proc/<pid>/stat`, the field after the state), or undefined. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(rest[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}
