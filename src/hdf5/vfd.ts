/**
 * The journaling file driver, and opening files for writing through it.
 *
 * A libhdf5 virtual file driver (VFD, `H5FD_class_t` of 1.10's H5FDpublic.h) written in
 * TypeScript: libhdf5 calls it back for every read, write, EOA/EOF query and truncation of a file
 * it opened with `journaledFapl`. The driver hands them to the file's `JournaledFile`
 * (journal.ts), which keeps an undo journal so that a write interrupted by a crash, or a request
 * that failed half-way, can be rolled back. Files keep the standard single-file format (no
 * driver info in the superblock): h5py, h5dump and the default `sec2` driver read them as usual.
 *
 * The driver takes no file locks (its `lock` callback does nothing): the store locks files
 * itself, before opening them (see src/store/session/xlock.ts). Read-only handles use libhdf5's `sec2`
 * driver with its file locking turned off (`H5Pset_file_locking`), for speed.
 *
 * Files the driver was not given a `JournaledFile` for (VDS sources or other files libhdf5 opens
 * on its own during a write) are opened read-only: libhdf5 cannot write them through h5store.
 */
import fs from 'node:fs';
import koffi, { type TypeObject } from 'koffi';
import * as C from './constants.js';
import { G, H5, Hdf5Error, LIB, LIBC, type Hid, named, takeErrorStack, wrap } from './lib.js';
import type { JournaledFile } from './journal.js';

const calloc = LIBC.func('void *calloc(size_t n, size_t size)');
const free = LIBC.func('void free(void *p)');

const proto = {
  open: named('h5s_vfd_open', () => koffi.proto('void *h5s_vfd_open(const char *name, unsigned int flags, int64_t fapl, uint64_t maxaddr)')),
  close: named('h5s_vfd_close', () => koffi.proto('int h5s_vfd_close(void *file)')),
  cmp: named('h5s_vfd_cmp', () => koffi.proto('int h5s_vfd_cmp(void *f1, void *f2)')),
  query: named('h5s_vfd_query', () => koffi.proto('int h5s_vfd_query(void *file, void *flags)')),
  getEoa: named('h5s_vfd_get_eoa', () => koffi.proto('uint64_t h5s_vfd_get_eoa(void *file, int type)')),
  setEoa: named('h5s_vfd_set_eoa', () => koffi.proto('int h5s_vfd_set_eoa(void *file, int type, uint64_t addr)')),
  getEof: named('h5s_vfd_get_eof', () => koffi.proto('uint64_t h5s_vfd_get_eof(void *file, int type)')),
  getHandle: named('h5s_vfd_get_handle', () => koffi.proto('int h5s_vfd_get_handle(void *file, int64_t fapl, void *handle)')),
  read: named('h5s_vfd_read', () => koffi.proto('int h5s_vfd_read(void *file, int type, int64_t dxpl, uint64_t addr, size_t size, void *buf)')),
  write: named('h5s_vfd_write', () => koffi.proto('int h5s_vfd_write(void *file, int type, int64_t dxpl, uint64_t addr, size_t size, void *buf)')),
  flush: named('h5s_vfd_flush', () => koffi.proto('int h5s_vfd_flush(void *file, int64_t dxpl, bool closing)')),
  truncate: named('h5s_vfd_truncate', () => koffi.proto('int h5s_vfd_truncate(void *file, int64_t dxpl, bool closing)')),
  lock: named('h5s_vfd_lock', () => koffi.proto('int h5s_vfd_lock(void *file, bool rw)')),
  unlock: named('h5s_vfd_unlock', () => koffi.proto('int h5s_vfd_unlock(void *file)')),
};

const ClassT = named('h5s_H5FD_class_t', () => koffi.struct('h5s_H5FD_class_t', {
  name: 'const char *',
  maxaddr: 'uint64_t',
  fc_degree: 'int',
  terminate: 'void *',
  sb_size: 'void *',
  sb_encode: 'void *',
  sb_decode: 'void *',
  fapl_size: 'size_t',
  fapl_get: 'void *',
  fapl_copy: 'void *',
  fapl_free: 'void *',
  dxpl_size: 'size_t',
  dxpl_copy: 'void *',
  dxpl_free: 'void *',
  open: 'void *',
  close: 'void *',
  cmp: 'void *',
  query: 'void *',
  get_type_map: 'void *',
  alloc: 'void *',
  free: 'void *',
  get_eoa: 'void *',
  set_eoa: 'void *',
  get_eof: 'void *',
  get_handle: 'void *',
  read: 'void *',
  write: 'void *',
  flush: 'void *',
  truncate: 'void *',
  lock: 'void *',
  unlock: 'void *',
  fl_map: koffi.array('int', 7),
}));

/** What the driver does with one open file. */
interface DriverFile {
  fd: number;
  dev: bigint;
  ino: bigint;
  eoa: number;
  /** Journaled file (writable), or undefined for a pass-through. */
  jf?: JournaledFile;
  /** A pass-through opened read-write: a file the store allowed with `allowDirectWrites`. */
  direct?: boolean;
  eof: number;
  /** The native H5FD_t block (with the fd stored at FD_OFFSET for get_handle). */
  mem: unknown;
}

/** sizeof(H5FD_t) is 80 in 1.10; the fd for `get_handle` is kept after it. */
const H5FD_T_BYTES = 128;
const FD_OFFSET = 96;
const HADDR_UNDEF = 0xffffffffffffffffn;
/** sec2's feature flags: metadata aggregation and accumulation, sieve buffer, small-data
 * aggregation, POSIX handle, SWMR-capable I/O (needed by H5Fget_eoa), default-VFD format. */
const FEATURES = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x80 | 0x1000 | 0x8000;

const open = new Map<bigint, DriverFile>();
/** `JournaledFile`s waiting to be opened, by the exact path given to H5Fopen. */
const pendingOpen = new Map<string, JournaledFile>();
/** `dev:ino` of files libhdf5 may open read-write on its own (see `allowDirectWrites`), counted. */
const directWrites = new Map<string, number>();

/**
 * Let libhdf5 open a file read-write on its own during a write (the source files of a virtual
 * dataset being written, which libhdf5 opens through the driver of the virtual dataset's file).
 * Such a file is written in place, not journaled: the store holds it exclusively (its locks)
 * for the duration, and it is fsynced when libhdf5 closes it under the `always` policy. Without
 * this, files the driver was not given a journal for are opened read-only.
 * @returns the function that withdraws the permission (call it once)
 */
export function allowDirectWrites(dev: bigint, ino: bigint): () => void {
  const key = `${dev}:${ino}`;
  directWrites.set(key, (directWrites.get(key) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const n = (directWrites.get(key) ?? 1) - 1;
    if (n <= 0) directWrites.delete(key);
    else directWrites.set(key, n);
  };
}
/** fdatasync direct-write files when libhdf5 closes them (the store's fsync policy). */
let durableDirect = true;
/** Set the fsync policy for direct writes (`allowDirectWrites`). */
export function setDirectWriteDurability(durable: boolean): void {
  durableDirect = durable;
}
let lastError: string | undefined;

function fileOf(p: unknown): DriverFile {
  const f = open.get(koffi.address(p) as bigint);
  if (!f) throw new Error('unknown H5FD_t');
  return f;
}

function fail(e: unknown): number {
  lastError = (e as Error)?.message ?? String(e);
  return -1;
}

function register(fn: (...args: any[]) => unknown, type: TypeObject): bigint {
  return koffi.register(fn, koffi.pointer(type));
}

const callbacks = {
  open: register((name: string, flags: number) => {
    try {
      const jf = pendingOpen.get(name);
      let fd: number;
      let direct = false;
      if (jf) fd = jf.dataFd;
      else {
        if (flags & (C.H5F_ACC_TRUNC | C.H5F_ACC_EXCL | 0x10)) throw new Error('the journaling driver does not create files');
        fd = fs.openSync(name, 'r');
        if (flags & C.H5F_ACC_RDWR) {
          const id = fs.fstatSync(fd, { bigint: true });
          if (directWrites.has(`${id.dev}:${id.ino}`)) {
            fs.closeSync(fd);
            fd = fs.openSync(name, 'r+');
            direct = true;
          }
        }
      }
      const st = fs.fstatSync(fd, { bigint: true });
      const mem = calloc(1, H5FD_T_BYTES);
      const addr = koffi.address(mem) as bigint;
      koffi.encode(mem, FD_OFFSET, 'int', fd);
      open.set(addr, { fd, dev: st.dev, ino: st.ino, eoa: 0, jf, direct, eof: jf ? jf.eof : Number(st.size), mem });
      return mem;
    } catch (e) {
      fail(e);
      return null;
    }
  }, proto.open),
  close: register((p: unknown) => {
    try {
      const f = fileOf(p);
      open.delete(koffi.address(p) as bigint);
      if (f.direct && durableDirect && !exiting) fs.fdatasyncSync(f.fd);
      if (!f.jf) fs.closeSync(f.fd);
      free(f.mem);
      return 0;
    } catch (e) {
      return fail(e);
    }
  }, proto.close),
  cmp: register((a: unknown, b: unknown) => {
    try {
      const x = fileOf(a);
      const y = fileOf(b);
      if (x.dev !== y.dev) return x.dev < y.dev ? -1 : 1;
      if (x.ino !== y.ino) return x.ino < y.ino ? -1 : 1;
      return 0;
    } catch (e) {
      fail(e);
      return -1;
    }
  }, proto.cmp),
  query: register((_f: unknown, flags: unknown) => {
    koffi.encode(flags, 'unsigned long', FEATURES);
    return 0;
  }, proto.query),
  getEoa: register((p: unknown) => {
    try {
      return BigInt(fileOf(p).eoa);
    } catch (e) {
      fail(e);
      return HADDR_UNDEF;
    }
  }, proto.getEoa),
  setEoa: register((p: unknown, _type: number, addr: bigint | number) => {
    try {
      fileOf(p).eoa = Number(addr);
      return 0;
    } catch (e) {
      return fail(e);
    }
  }, proto.setEoa),
  getEof: register((p: unknown) => {
    try {
      const f = fileOf(p);
      return BigInt(f.jf ? f.jf.eof : f.eof);
    } catch (e) {
      fail(e);
      return HADDR_UNDEF;
    }
  }, proto.getEof),
  getHandle: register((p: unknown, _fapl: unknown, handle: unknown) => {
    try {
      const f = fileOf(p);
      koffi.encode(handle, 'void *', (koffi.address(f.mem) as bigint) + BigInt(FD_OFFSET));
      return 0;
    } catch (e) {
      return fail(e);
    }
  }, proto.getHandle),
  read: register((p: unknown, _type: number, _dxpl: unknown, addr: bigint | number, size: bigint | number, buf: unknown) => {
    try {
      const f = fileOf(p);
      const n = Number(size);
      if (n === 0) return 0;
      const view = Buffer.from(koffi.view(buf, n) as ArrayBuffer);
      if (f.jf) f.jf.read(view, Number(addr));
      else {
        let off = 0;
        while (off < n) {
          const r = fs.readSync(f.fd, view, off, n - off, Number(addr) + off);
          if (r === 0) break;
          off += r;
        }
        if (off < n) view.fill(0, off);
      }
      return 0;
    } catch (e) {
      return fail(e);
    }
  }, proto.read),
  write: register((p: unknown, _type: number, _dxpl: unknown, addr: bigint | number, size: bigint | number, buf: unknown) => {
    try {
      const f = fileOf(p);
      if (!f.jf && !f.direct) throw new Error('file opened read-only by the journaling driver');
      const n = Number(size);
      if (n === 0 || exiting) return 0;
      const data = Buffer.from(koffi.view(buf, n) as ArrayBuffer);
      if (f.jf) f.jf.write(data, Number(addr));
      else {
        let off = 0;
        while (off < n) off += fs.writeSync(f.fd, data, off, n - off, Number(addr) + off);
        f.eof = Math.max(f.eof, Number(addr) + n);
      }
      return 0;
    } catch (e) {
      return fail(e);
    }
  }, proto.write),
  flush: register(() => 0, proto.flush),
  truncate: register((p: unknown) => {
    try {
      const f = fileOf(p);
      if (exiting) return 0;
      if (f.direct) {
        if (f.eoa !== f.eof) {
          fs.ftruncateSync(f.fd, f.eoa);
          f.eof = f.eoa;
        }
        return 0;
      }
      if (!f.jf) return 0;
      if (f.eoa !== f.jf.eof) f.jf.truncate(f.eoa);
      return 0;
    } catch (e) {
      return fail(e);
    }
  }, proto.truncate),
  lock: register(() => 0, proto.lock),
  unlock: register(() => 0, proto.unlock),
};

const H5FDregister = LIB.func('int64_t H5FDregister(const h5s_H5FD_class_t *cls)');
const H5Pset_driver = wrap('H5Pset_driver', 'herr_t', LIB.func('int H5Pset_driver(int64_t fapl, int64_t driver, void *info)'));
const H5Pset_file_locking = wrap('H5Pset_file_locking', 'herr_t', LIB.func('int H5Pset_file_locking(int64_t fapl, bool use, bool ignore)'));
const H5Pset = wrap('H5Pset', 'herr_t', LIB.func('int H5Pset(int64_t plist, const char *name, const void *value)'));
const H5Fget_eoa = wrap('H5Fget_eoa', 'herr_t', LIB.func('int H5Fget_eoa(int64_t fid, _Out_ uint64_t *eoa)'));
const H5Fincrement_filesize = wrap('H5Fincrement_filesize', 'herr_t', LIB.func('int H5Fincrement_filesize(int64_t fid, uint64_t increment)'));
const H5Fget_vfd_handle = wrap('H5Fget_vfd_handle', 'herr_t', LIB.func('int H5Fget_vfd_handle(int64_t fid, int64_t fapl, _Out_ void **handle)'));

const driverId: Hid = H5FDregister({
  name: 'h5store_journal',
  maxaddr: (1n << 63n) - 1n,
  fc_degree: 1, // H5F_CLOSE_WEAK, as sec2
  terminate: null,
  sb_size: null,
  sb_encode: null,
  sb_decode: null,
  fapl_size: 0,
  fapl_get: null,
  fapl_copy: null,
  fapl_free: null,
  dxpl_size: 0,
  dxpl_copy: null,
  dxpl_free: null,
  open: callbacks.open,
  close: callbacks.close,
  cmp: callbacks.cmp,
  query: callbacks.query,
  get_type_map: null,
  alloc: null,
  free: null,
  get_eoa: callbacks.getEoa,
  set_eoa: callbacks.setEoa,
  get_eof: callbacks.getEof,
  get_handle: callbacks.getHandle,
  read: callbacks.read,
  write: callbacks.write,
  flush: callbacks.flush,
  truncate: callbacks.truncate,
  lock: callbacks.lock,
  unlock: callbacks.unlock,
  fl_map: [1, 1, 1, 3, 3, 1, 1], // H5FD_FLMAP_DICHOTOMY, as sec2
});
if (typeof driverId === 'number' ? driverId < 0 : driverId < 0n) throw new Hdf5Error('H5FDregister', takeErrorStack());

function baseFapl(degree: number): Hid {
  const p: Hid = H5.H5Pcreate(G.P_FILE_ACCESS);
  H5.H5Pset_fclose_degree(p, degree);
  // The store locks files itself, only while a request uses them (src/store/session/xlock.ts).
  H5Pset_file_locking(p, false, true);
  return p;
}

/**
 * File access property list of read-only handles: `sec2`, libhdf5's file locking off, close
 * degree WEAK: the degree libhdf5 itself uses when it opens the source files of a virtual
 * dataset. A file open in two places of this process must be opened with one degree, otherwise
 * the second open fails ("file close degree doesn't match") and a virtual dataset silently reads
 * fill values for a source the server also has open. Every object id is closed in a `finally`
 * (a test counts open ids), so closing the file still releases it.
 */
export const READ_FAPL: Hid = baseFapl(C.H5F_CLOSE_WEAK);
/**
 * Sieve buffer of read-only handles (bytes; libhdf5's default is 64 KiB). libhdf5 reads every
 * piece of a contiguous dataset's selection smaller than the sieve buffer through it: a 2048x2048
 * float32 block of an 8192-column dataset (8 KiB per row, 32 KiB apart) read 64 KiB per two rows
 * and copied out, four times the bytes asked for. With 4 KiB, pieces of more than 4 KiB are read
 * straight into the result (measured with h5py on libhdf5 1.10.8, 4 MiB block: 2.6 -> 1.4 ms;
 * 4 MiB of whole rows and a `[5, ::2]` row unchanged); smaller pieces still go through a sieve.
 */
const READ_SIEVE_BYTES = 4096;
H5.H5Pset_sieve_buf_size(READ_FAPL, READ_SIEVE_BYTES);

/**
 * File access property list of read-only handles of files whose superblock says "open for
 * writing" without SWMR (issue #26: a plain writer with `libver="latest"` at work, or a crashed
 * one; libhdf5 refuses them read-only and SWMR-read alike): `READ_FAPL` plus libhdf5's private
 * access properties `clear_status_flags` (the flags are forgotten in memory: H5F_open sets the
 * superblock's in-memory `status_flags` to 0 before it checks them; a read-only handle never
 * writes the superblock back, and `sec2` opens the file `O_RDONLY`) and `skip_eof_check` (a live
 * writer's stored EOA may lie past the bytes it has written so far). h5clear uses the same two.
 */
export const FLAGGED_READ_FAPL: Hid = (() => {
  const p: Hid = H5.H5Pcopy(READ_FAPL);
  const yes = Buffer.from([1]);
  H5Pset(p, 'clear_status_flags', yes);
  H5Pset(p, 'skip_eof_check', yes);
  return p;
})();

/**
 * File access property list of read-write handles: the journaling driver, close degree STRONG
 * (closing the file closes every object in it, so a rollback never leaves libhdf5 a stale view).
 */
const JOURNAL_FAPL: Hid = baseFapl(C.H5F_CLOSE_STRONG);
H5Pset_driver(JOURNAL_FAPL, driverId, null);

// The variable overrides H5Pset_file_locking (H5Fint.c): the store's own handles must not lock,
// or its lock descriptor and libhdf5's would exclude each other. It is set to FALSE rather than
// removed: libhdf5 1.10.8 opens the source files of a virtual dataset with a file access list
// of its own (H5D__virtual_init, H5F_get_access_plist) that does not carry the parent's locking
// setting, and a source file this process already has open without locking would then fail to
// open ("file locking flag values don't match"): the virtual dataset reads fill values.
// What the user had is kept for the start-up warning (main.ts).
export const HDF5_FILE_LOCKING_ENV = process.env.HDF5_USE_FILE_LOCKING;
process.env.HDF5_USE_FILE_LOCKING = 'FALSE';

const H5close = LIB.func('int H5close()');
let exiting = false;
// libhdf5 closes files still open at exit from its own atexit handler, after JavaScript is gone:
// the driver's callbacks would crash. Close them while it still runs, writing nothing more
// (an open transaction is rolled back by the next process).
process.on('exit', () => {
  exiting = true;
  try {
    H5close();
  } catch {
    /* exiting anyway */
  }
});

/** The last error the driver met (its callbacks cannot throw into C), then forgotten. */
export function takeDriverError(): string | undefined {
  const e = lastError;
  lastError = undefined;
  return e;
}

/**
 * Open a file for writing through the journaling driver; libhdf5's reads and writes go to `jf`
 * (whose transaction must be open before anything is written). Close it with `H5Fclose`
 * (objects.closeFile) before `jf` is committed and its descriptors closed.
 * @throws Hdf5Error as H5Fopen does
 */
export function openJournaled(path: string, jf: JournaledFile, extra?: (fapl: Hid) => void): Hid {
  pendingOpen.set(path, jf);
  let fapl = JOURNAL_FAPL;
  try {
    if (extra) {
      fapl = H5.H5Pcopy(JOURNAL_FAPL);
      extra(fapl);
    }
    return H5.H5Fopen(path, C.H5F_ACC_RDWR, fapl);
  } catch (e) {
    const d = takeDriverError();
    if (d && e instanceof Hdf5Error) e.stack_.push(`journaling driver: ${d}`);
    throw e;
  } finally {
    pendingOpen.delete(path);
    if (fapl !== JOURNAL_FAPL) H5.H5Pclose(fapl);
  }
}

/** What `repairStatusAndEoa` found and changed. */
export interface RepairReport {
  eoaBefore: number;
  eoaAfter: number;
  eof: number;
}

/**
 * What `h5clear -s --increment=0` does, through the journaling driver: open the file with
 * libhdf5's private access properties `clear_status_flags` (forget the superblock's "open for
 * writing" flags a crashed writer left), `skip_eof_check` and `null_fsm_addr` (forget persistent
 * free-space managers, whose sections may lie past the EOA), then set the EOA to
 * max(EOA, EOF) (`H5Fincrement_filesize`) so objects a crashed writer placed past the stored
 * EOA become readable. The caller holds the file exclusively and commits `jf`.
 */
export function repairStatusAndEoa(path: string, jf: JournaledFile): RepairReport {
  const yes = Buffer.from([1]);
  const fid = openJournaled(path, jf, (fapl) => {
    H5Pset(fapl, 'clear_status_flags', yes);
    H5Pset(fapl, 'skip_eof_check', yes);
    H5Pset(fapl, 'null_fsm_addr', yes);
  });
  try {
    const eoa = [0n];
    H5Fget_eoa(fid, eoa);
    const eof = jf.eof;
    H5Fincrement_filesize(fid, 0);
    const after = [0n];
    H5Fget_eoa(fid, after);
    return { eoaBefore: Number(eoa[0]), eoaAfter: Number(after[0]), eof };
  } finally {
    H5.H5Fclose(fid);
  }
}

const H5Fget_access_plist = wrap('H5Fget_access_plist', 'hid_t', LIB.func('int64_t H5Fget_access_plist(int64_t fid)'));
const H5Pget_driver = wrap('H5Pget_driver', 'hid_t', LIB.func('int64_t H5Pget_driver(int64_t fapl)'));
const H5Idec_ref = wrap('H5Idec_ref', 'herr_t', LIB.func('int H5Idec_ref(int64_t id)'));

/**
 * Whether the file of an object (a dataset id, say) is open through the journaling driver, whose
 * callbacks are JavaScript of the main thread (src/hdf5/heavy.ts needs to know).
 * @throws Hdf5Error for an invalid id
 */
export function onJournalingDriver(objectId: Hid): boolean {
  const fid: Hid = H5.H5Iget_file_id(objectId);
  try {
    const fapl: Hid = H5Fget_access_plist(fid);
    try {
      return BigInt(H5Pget_driver(fapl)) === BigInt(driverId);
    } finally {
      H5.H5Pclose(fapl);
    }
  } finally {
    H5Idec_ref(fid);
  }
}

/** Device and inode of the file a handle has open (`H5Fget_vfd_handle` + fstat). */
export function handleIdentity(fid: Hid): { dev: bigint; ino: bigint } {
  const out: unknown[] = [null];
  H5Fget_vfd_handle(fid, READ_FAPL, out);
  const fd = koffi.decode(out[0], 'int') as number;
  const st = fs.fstatSync(fd, { bigint: true });
  return { dev: st.dev, ino: st.ino };
}
