/**
 * POSIX file locks through libc (Node has none): `flock(2)` whole-file locks, the kind libhdf5
 * 1.10 takes on the files it opens (H5FDsec2.c `H5FD__sec2_lock`), and Linux open-file-description
 * byte-range locks (`fcntl(F_OFD_SETLK)`, Linux 3.15+) for h5store's own lock files.
 *
 * Both kinds belong to an open file description: they conflict between two descriptors even in
 * one process, are released when the last descriptor of the description closes, and are
 * released by the kernel when a process dies (so a crashed holder never leaves a stale lock).
 * Every call is non-blocking; waiting is done by the caller, with a deadline.
 *
 * Also `startWriteback`: `sync_file_range(2)`, which Node does not offer either.
 */
import koffi from 'koffi';
import { LIBC } from './lib.js';

const flockFn = LIBC.func('int flock(int fd, int op)');
const fcntlFn = LIBC.func('int fcntl(int fd, int cmd, ...)');
let syncFileRangeFn: ((fd: number, off: number, n: number, flags: number) => number) | undefined;
try {
  if (process.platform === 'linux') syncFileRangeFn = LIBC.func('int sync_file_range(int fd, int64_t off, int64_t n, unsigned int flags)');
} catch {
  syncFileRangeFn = undefined;
}
/** sync_file_range flag: start writeback of dirty pages not already under writeback; no wait. */
const SYNC_FILE_RANGE_WRITE = 2;

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const F_OFD_GETLK = 36;
const F_OFD_SETLK = 37;
const F_RDLCK = 0;
const F_WRLCK = 1;
const F_UNLCK = 2;
/** errno values meaning "held by someone else" (EAGAIN/EWOULDBLOCK, EACCES for fcntl). */
const BUSY = new Set([11, 35, 13]);

/** Raised for lock failures other than "held by someone else" (e.g. ENOLCK, EBADF). */
export class LockError extends Error {
  constructor(
    readonly call: string,
    readonly errno: number,
  ) {
    super(`${call} failed (errno ${errno})`);
  }
}

/**
 * `flock(fd, LOCK_SH|LOCK_NB)` or `LOCK_EX|LOCK_NB`: true when taken (or converted), false when
 * another open file description holds a conflicting lock.
 * @throws LockError for any other failure
 */
export function tryFlock(fd: number, exclusive: boolean): boolean {
  if (flockFn(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) === 0) return true;
  const e = koffi.errno();
  if (BUSY.has(e)) return false;
  throw new LockError('flock', e);
}

/** `flock(fd, LOCK_UN)`; never throws (an unlocked descriptor is fine). */
export function unflock(fd: number): void {
  flockFn(fd, LOCK_UN);
}

// struct flock (Linux, 64-bit): short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid
const flockBuf = Buffer.alloc(32);
function fillFlock(type: number, start: number, len: number): Buffer {
  flockBuf.fill(0);
  flockBuf.writeInt16LE(type, 0);
  flockBuf.writeInt16LE(0, 2); // SEEK_SET
  flockBuf.writeBigInt64LE(BigInt(start), 8);
  flockBuf.writeBigInt64LE(BigInt(len), 16);
  return flockBuf;
}

let ofdSupported = process.platform === 'linux';

/** Whether open-file-description byte-range locks are available (Linux). */
export function hasOfdLocks(): boolean {
  return ofdSupported;
}

/**
 * Take (`shared` or exclusive) or drop (`mode: 'unlock'`) an OFD lock on bytes
 * [start, start+len) of `fd`, without waiting. True when done, false when another description
 * holds a conflicting lock.
 * @throws LockError when the call fails otherwise (EINVAL: no OFD locks on this system)
 */
export function tryRangeLock(fd: number, mode: 'shared' | 'exclusive' | 'unlock', start: number, len = 1): boolean {
  const type = mode === 'shared' ? F_RDLCK : mode === 'exclusive' ? F_WRLCK : F_UNLCK;
  if (fcntlFn(fd, F_OFD_SETLK, 'void *', fillFlock(type, start, len)) === 0) return true;
  const e = koffi.errno();
  if (BUSY.has(e) && mode !== 'unlock') return false;
  if (e === 22) ofdSupported = false;
  throw new LockError('fcntl(F_OFD_SETLK)', e);
}

/**
 * Whether another open file description holds a lock on [start, start+len) that conflicts
 * with `mode` (exclusive: any lock; shared: an exclusive lock). Locks of `fd` itself never count.
 * @throws LockError when the call fails
 */
export function rangeLockedByOthers(fd: number, mode: 'shared' | 'exclusive', start: number, len = 1): boolean {
  const b = fillFlock(mode === 'shared' ? F_RDLCK : F_WRLCK, start, len);
  if (fcntlFn(fd, F_OFD_GETLK, 'void *', b) !== 0) {
    const e = koffi.errno();
    if (e === 22) ofdSupported = false;
    throw new LockError('fcntl(F_OFD_GETLK)', e);
  }
  return b.readInt16LE(0) !== F_UNLCK;
}

/**
 * Start writing the dirty page-cache pages of bytes [offset, offset+length) of `fd` to the disk
 * (`sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE)`, Linux), without waiting for
 * them and without any durability promise: a later `fdatasync` still decides what is durable,
 * it only has less left to write then. Used for large appends inside a write transaction
 * (journal.ts), so the commit's `fdatasync` does not start 16 MiB of writeback from nothing
 * (measured on the 2-core VM: 16 MiB in 32 KiB pieces, write + fdatasync 37-130 ms, 15-43 ms
 * with a start every 4 MiB). The call may block briefly when the disk queue is congested.
 * @returns false where the call is not available (not Linux) or failed: nothing to do then
 */
export function startWriteback(fd: number, offset: number, length: number): boolean {
  if (!syncFileRangeFn || length <= 0) return false;
  return syncFileRangeFn(fd, offset, length, SYNC_FILE_RANGE_WRITE) === 0;
}

const mmapFn = LIBC.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)');
const PROT_READ_WRITE = 3;
const MAP_SHARED = 1;
const MAP_FAILED = 0xffffffffffffffffn;

/**
 * Map `bytes` of the file open as `fd` (read-write, at least that long) into memory, shared
 * (`mmap(MAP_SHARED)`): what is written into the returned Buffer is in the file at once, for
 * other processes and after this process dies, with no system call per write. The mapping
 * lives as long as the process (it is never unmapped).
 * @throws Error when the mapping fails
 */
export function mapSharedFile(fd: number, bytes: number): Buffer {
  const p = mmapFn(null, bytes, PROT_READ_WRITE, MAP_SHARED, fd, 0);
  const addr = p === null ? 0n : BigInt(koffi.address(p) as bigint);
  if (addr === 0n || addr === MAP_FAILED) throw new Error(`mmap of ${bytes} bytes failed (errno ${koffi.errno()})`);
  return Buffer.from(koffi.view(p, bytes) as ArrayBuffer);
}
