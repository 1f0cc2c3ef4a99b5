/**
 * One open file of the store: a file on disk (device + inode), whatever domain names lead to it
 * (a symlink, a hard link or a symlinked folder give one file several domains). Its libhdf5
 * handle, its locks and its journal belong here, so that two domains of one file never hold two
 * libhdf5 handles (libhdf5 refuses a read-write open of a file it has open read-only:
 * "file is already open for read-only").
 */
import type { JournaledFile } from '../hdf5/journal.js';
import type { Hid } from '../hdf5/lib.js';
import type { FileSource, FileStamp } from './domainFile.js';
import { RWLock } from './rwlock.js';
import type { CrossProcessLock } from './xlock.js';

export class FileHandle {
  /** Readers-writer lock of the file inside this process. */
  readonly lock = new RWLock();
  /** The libhdf5 file id while open. */
  fid: Hid | undefined;
  /** True while `fid` is the read-write handle (only inside a write session). */
  writable = false;
  /** The file's stamp when last seen by this process (after its own writes too). */
  stamp: FileStamp | undefined;
  /** The lock file's commit counter when last seen (-1: never read). */
  counter = -1n;
  /** Bumped whenever the file's content changed other than through a DomainFile's own write. */
  epoch = 0;
  lastUsed = 0;
  /** The journaled view of the file while `fid` is the read-write handle. */
  jf: JournaledFile | undefined;
  /** Superblock version of the file opened read-write (3+: status flags, closed after writes). */
  sbVersion = 0;
  /** performance.now() when the current write session took the exclusive lock. */
  sessionStart = 0;
  /** DomainFile entries that use this handle. */
  refs = 0;
  /** Where the bytes come from when the file is not local (read-only mounts; no `xl` then). */
  source: FileSource | undefined;

  constructor(
    /** `dev:ino` (a local file) or the URL of a mounted object */
    readonly key: string,
    readonly dev: bigint,
    readonly ino: bigint,
    /** The file's real path (symlinks resolved): where its lock file lives. */
    readonly realPath: string,
    /** Cross-process locks of a local file; undefined for a mounted (read-only) object. */
    private readonly xl_: CrossProcessLock | undefined,
  ) {}

  /** The cross-process locks (local files only). @throws Error for a mounted object */
  get xl(): CrossProcessLock {
    if (!this.xl_) throw new Error(`${this.key} is a read-only mounted object: no cross-process locks`);
    return this.xl_;
  }

  /** True for a local file (with cross-process locks and a journal). */
  get local(): boolean {
    return this.xl_ !== undefined;
  }

  /**
   * True when the file's bytes on disk are what libhdf5 sees, so they may be read without it
   * (store/fileBytes.ts): a local file libhdf5 has open read-only, outside a write session (every
   * write session ends with `H5Fflush` and a commit; reads hold the read lease against writers
   * of other processes).
   */
  get bytesAreCurrent(): boolean {
    return this.local && !this.writable && this.fid !== undefined;
  }

  /** True when nothing in this process uses or waits for the file. */
  get idle(): boolean {
    return this.lock.idle && (this.xl_?.idle ?? true) && !this.jf?.inTransaction;
  }
}
