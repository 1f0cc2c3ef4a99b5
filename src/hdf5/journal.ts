/**
 * Crash-safe writes: an undo journal of every byte libhdf5 overwrites in a domain file
 * (docs/storage-format.md "Lock file and journal"; DESIGN.md section 5).
 *
 * libhdf5 1.10 writes a file in no crash-safe order: dirty metadata cache entries are written
 * when evicted during an operation and, on `H5Fflush`, ring by ring in address order with the
 * superblock (and its end-of-allocation address, EOA) last; raw data goes to the file as it is
 * written. A process killed in between leaves, for example, a link to an object header that lies
 * past the EOA stored in the superblock ("len not positive after adjustment for EOA"). SWMR
 * write ordering (flush dependencies) would avoid torn states for appends only: 1.10 forbids
 * creating objects in SWMR-write mode, so it cannot serve the REST API's writes.
 *
 * So every write of h5store runs in a transaction of this module, through the journaling file
 * driver (vfd.ts):
 *  - bytes at or past the file's size when the transaction began (`baseEof`) are written at once
 *    (undoing them is truncating the file back to `baseEof`), and under the `always` policy their
 *    writeback to the disk is started every `WRITEBACK_BYTES` (`sync_file_range`), so the
 *    commit's `fdatasync` finds most of a large write on its way already;
 *  - overwrites of older bytes are held in memory, and at a checkpoint (the commit, or every
 *    `CHECKPOINT_BYTES` of held data) the original bytes they replace are appended to the journal
 *    first, the journal is made durable (`fdatasync`, under the `always` fsync policy), and only
 *    then are the new bytes written;
 *  - the commit makes the file durable, then marks the journal idle (one 64-byte header write,
 *    made durable too): that is the commit point;
 *  - a transaction that failed, or one found active after its process died, is rolled back:
 *    the saved original bytes are written back and the file is truncated to `baseEof`.
 *
 * The journal lives in the domain's lock file after a 64-byte header (layout below), which also
 * holds the commit counter other processes compare to notice that the file changed.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { startWriteback } from './posix.js';

/** fdatasync on the thread pool (looked up at each call). */
function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

/** Bytes of the lock-file header; journal records follow it. */
export const HEADER_BYTES = 64;
/**
 * Held overwrites beyond this many bytes are checkpointed before the commit (inside a libhdf5
 * call, so the fsync of a checkpoint blocks the event loop: kept small).
 */
export const CHECKPOINT_BYTES = 8 * 1024 * 1024;
/**
 * Under the `always` fsync policy, the writeback of bytes appended past `baseEof` is started
 * (posix.ts `startWriteback`) each time this many have been written since the last start.
 */
export const WRITEBACK_BYTES = 4 * 1024 * 1024;
/** A journal larger than this is truncated when the next transaction starts. */
const JOURNAL_KEEP_BYTES = 1024 * 1024;
const MAGIC = Buffer.from('H5SJRNL1', 'latin1');
const RECORD_HEAD = 16;

/**
 * The lock-file header (little-endian):
 * 0 magic "H5SJRNL1" | 8 commit counter u64 | 16 state u32 (0 idle, 1 transaction active) |
 * 20 writer pid u32 | 24 transaction id u64 | 32 baseEof u64 | 40 data file device u64 |
 * 48 data file inode u64 | 56 CRC-32 of bytes 0-55 u32 | 60 reserved.
 */
export interface JournalHeader {
  counter: bigint;
  active: boolean;
  pid: number;
  txn: bigint;
  baseEof: number;
  dev: bigint;
  ino: bigint;
}

/** Why a header could not be used: absent (empty or new lock file) or unreadable. */
export type HeaderState = { kind: 'none' } | { kind: 'corrupt' } | { kind: 'ok'; header: JournalHeader };

function preadFull(fd: number, buf: Buffer, pos: number): number {
  let off = 0;
  while (off < buf.length) {
    const n = fs.readSync(fd, buf, off, buf.length - off, pos + off);
    if (n === 0) break;
    off += n;
  }
  return off;
}

function pwriteFull(fd: number, buf: Buffer, pos: number): void {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off, pos + off);
}

const headerBuf = Buffer.alloc(HEADER_BYTES);

/** Read the header of a lock file (one `pread`). */
export function readHeader(lockFd: number): HeaderState {
  const n = preadFull(lockFd, headerBuf, 0);
  if (n < HEADER_BYTES) return { kind: 'none' };
  if (!headerBuf.subarray(0, 8).equals(MAGIC)) return { kind: 'corrupt' };
  if (zlib.crc32(headerBuf.subarray(0, 56)) !== headerBuf.readUInt32LE(56)) return { kind: 'corrupt' };
  return {
    kind: 'ok',
    header: {
      counter: headerBuf.readBigUInt64LE(8),
      active: headerBuf.readUInt32LE(16) === 1,
      pid: headerBuf.readUInt32LE(20),
      txn: headerBuf.readBigUInt64LE(24),
      baseEof: Number(headerBuf.readBigUInt64LE(32)),
      dev: headerBuf.readBigUInt64LE(40),
      ino: headerBuf.readBigUInt64LE(48),
    },
  };
}

/** Write a header (one 64-byte `pwrite` at offset 0, atomic on every disk sector). */
export function writeHeader(lockFd: number, h: JournalHeader): void {
  const b = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(b, 0);
  b.writeBigUInt64LE(h.counter, 8);
  b.writeUInt32LE(h.active ? 1 : 0, 16);
  b.writeUInt32LE(h.pid >>> 0, 20);
  b.writeBigUInt64LE(h.txn, 24);
  b.writeBigUInt64LE(BigInt(h.baseEof), 32);
  b.writeBigUInt64LE(h.dev, 40);
  b.writeBigUInt64LE(h.ino, 48);
  b.writeUInt32LE(zlib.crc32(b.subarray(0, 56)), 56);
  pwriteFull(lockFd, b, 0);
}

function recordCrc(txn: bigint, head: Buffer, data: Buffer): number {
  const t = Buffer.alloc(8);
  t.writeBigUInt64LE(txn);
  return zlib.crc32(data, zlib.crc32(head.subarray(0, 12), zlib.crc32(t)));
}

/** Sorted, disjoint, merged [start, end) ranges. */
export class RangeSet {
  private starts: number[] = [];
  private ends: number[] = [];

  /** The parts of [start, end) not in the set, in order. */
  gaps(start: number, end: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let pos = start;
    for (let i = this.firstEndAfter(start); i < this.starts.length && this.starts[i] < end && pos < end; i++) {
      if (this.starts[i] > pos) out.push([pos, Math.min(this.starts[i], end)]);
      pos = Math.max(pos, this.ends[i]);
    }
    if (pos < end) out.push([pos, end]);
    return out;
  }

  /** Add [start, end), merging with neighbours. */
  add(start: number, end: number): void {
    if (end <= start) return;
    const i = this.firstEndAfter(start - 1); // first range with end >= start
    let s = start;
    let e = end;
    let j = i;
    while (j < this.starts.length && this.starts[j] <= e) {
      s = Math.min(s, this.starts[j]);
      e = Math.max(e, this.ends[j]);
      j++;
    }
    this.starts.splice(i, j - i, s);
    this.ends.splice(i, j - i, e);
  }

  get size(): number {
    return this.starts.length;
  }

  private firstEndAfter(x: number): number {
    let lo = 0;
    let hi = this.ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** What a rollback did (logged by the caller). */
export interface RollbackReport {
  txn: string;
  /** pid of the process that wrote the transaction. */
  pid: number;
  records: number;
  bytesRestored: number;
  sizeBefore: number;
  sizeAfter: number;
}

/**
 * Undo an active transaction: write the saved bytes back, truncate the data file to `baseEof`,
 * make it durable, and mark the journal idle with a new counter (so every process notices).
 * Records are read until the first incomplete or corrupt one: a record is always complete in
 * the journal before the bytes it saves are overwritten.
 */
export function applyRollback(dataFd: number, lockFd: number, h: JournalHeader, durable: boolean): RollbackReport {
  const sizeBefore = fs.fstatSync(dataFd).size;
  const journalSize = fs.fstatSync(lockFd).size;
  let pos = HEADER_BYTES;
  let records = 0;
  let bytes = 0;
  const head = Buffer.alloc(RECORD_HEAD);
  while (pos + RECORD_HEAD <= journalSize) {
    if (preadFull(lockFd, head, pos) < RECORD_HEAD) break;
    const addr = Number(head.readBigUInt64LE(0));
    const len = head.readUInt32LE(8);
    if (pos + RECORD_HEAD + len > journalSize) break;
    const data = Buffer.alloc(len);
    if (preadFull(lockFd, data, pos + RECORD_HEAD) < len) break;
    if (recordCrc(h.txn, head, data) !== head.readUInt32LE(12)) break;
    pwriteFull(dataFd, data, addr);
    records++;
    bytes += len;
    pos += RECORD_HEAD + len;
  }
  fs.ftruncateSync(dataFd, h.baseEof);
  if (durable) fs.fdatasyncSync(dataFd);
  writeHeader(lockFd, { ...h, active: false, counter: h.txn });
  if (durable) fs.fdatasyncSync(lockFd);
  return { txn: h.txn.toString(), pid: h.pid, records, bytesRestored: bytes, sizeBefore, sizeAfter: h.baseEof };
}

/** Identity of the data file, recorded in the header so a journal never touches another file. */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
}

/**
 * One domain file opened for writing, seen through the journal: the journaling driver (vfd.ts)
 * sends libhdf5's reads and writes here. Writes are only accepted inside a transaction
 * (`begin` ... `commit`/`rollback`).
 */
export class JournaledFile {
  /** Logical end of file (what libhdf5 is told). */
  eof: number;
  private txn: bigint | undefined;
  private active = false;
  private baseEof = 0;
  private saved = new RangeSet();
  private pending: Array<{ addr: number; data: Buffer }> = [];
  private pendingBytes = 0;
  private journalEnd = HEADER_BYTES;
  /** Appended bytes [start, end) whose writeback is not started yet (see `WRITEBACK_BYTES`). */
  private wbStart = Infinity;
  private wbEnd = 0;
  private wbBytes = 0;
  /** Bytes written past `baseEof` in this transaction. */
  private appended = 0;
  /** Statistics of the current transaction (bytes journaled, checkpoints, fsyncs, writeback starts). */
  stats = { journaled: 0, checkpoints: 0, fsyncs: 0, writebacks: 0 };
  /**
   * Writes libhdf5 made outside a transaction, dropped. After `H5Fflush` and the commit the file
   * is complete; what `H5Fclose` still writes (giving back the unused part of its allocation
   * blocks: a smaller EOA) is not needed, so a handle is closed without a lock or a transaction
   * by dropping those writes.
   */
  dropped = 0;

  constructor(
    readonly dataFd: number,
    readonly lockFd: number,
    readonly id: FileIdentity,
    readonly durable: boolean,
    private counter: bigint,
  ) {
    this.eof = fs.fstatSync(dataFd).size;
  }

  /** The commit counter after the last commit or rollback. */
  get commitCounter(): bigint {
    return this.counter;
  }

  /** True between `begin` and `commit`/`rollback`. */
  get inTransaction(): boolean {
    return this.txn !== undefined;
  }

  /**
   * Start a transaction (nothing is written until the first write reaches the driver).
   * @param counter the commit counter in the lock file now (another process may have committed
   *   since): transaction ids only grow, so a record of an older transaction never passes for one
   *   of this transaction
   */
  begin(counter = this.counter): void {
    if (this.txn !== undefined) throw new Error('transaction already open');
    if (counter > this.counter) this.counter = counter;
    this.txn = this.counter + 1n;
    this.active = false;
    this.baseEof = fs.fstatSync(this.dataFd).size;
    this.eof = this.baseEof;
    this.saved = new RangeSet();
    this.pending = [];
    this.pendingBytes = 0;
    this.journalEnd = HEADER_BYTES;
    this.wbStart = Infinity;
    this.wbEnd = 0;
    this.wbBytes = 0;
    this.appended = 0;
    this.stats = { journaled: 0, checkpoints: 0, fsyncs: 0, writebacks: 0 };
  }

  /** Mark the transaction active in the header before the first byte of the file changes. */
  private activate(): void {
    if (this.active) return;
    // Records of older transactions may stay after the header (their checksums name their
    // transaction); the journal is cut back only when it grew large.
    if (fs.fstatSync(this.lockFd).size > JOURNAL_KEEP_BYTES) fs.ftruncateSync(this.lockFd, HEADER_BYTES);
    writeHeader(this.lockFd, {
      counter: this.counter,
      active: true,
      pid: process.pid,
      txn: this.txn!,
      baseEof: this.baseEof,
      dev: this.id.dev,
      ino: this.id.ino,
    });
    this.active = true;
  }

  /** libhdf5 read: the file's bytes with the held overwrites applied; zeros past the end. */
  read(buf: Buffer, addr: number): void {
    const n = preadFull(this.dataFd, buf, addr);
    if (n < buf.length) buf.fill(0, n);
    if (this.pending.length === 0) return;
    const end = addr + buf.length;
    for (const p of this.pending) {
      const pe = p.addr + p.data.length;
      if (pe <= addr || p.addr >= end) continue;
      const s = Math.max(addr, p.addr);
      const e = Math.min(end, pe);
      p.data.copy(buf, s - addr, s - p.addr, e - p.addr);
    }
  }

  /** libhdf5 write of `src` (a view of libhdf5's memory: copied when held) at `addr`. */
  write(src: Buffer, addr: number): void {
    if (this.txn === undefined) {
      this.dropped++;
      return;
    }
    this.activate();
    const end = addr + src.length;
    if (addr < this.baseEof) {
      const cut = Math.min(end, this.baseEof);
      this.pending.push({ addr, data: Buffer.from(src.subarray(0, cut - addr)) });
      this.pendingBytes += cut - addr;
    }
    if (end > this.baseEof) {
      const from = Math.max(addr, this.baseEof);
      pwriteFull(this.dataFd, src.subarray(from - addr), from);
      this.appended += end - from;
      if (this.durable) this.noteAppended(from, end);
    }
    if (end > this.eof) this.eof = end;
    if (this.pendingBytes > CHECKPOINT_BYTES) this.checkpoint();
  }

  /**
   * Appended bytes [start, end) were written: start their writeback once `WRITEBACK_BYTES` have
   * gathered (the range spans everything appended since the last start; holes in it cost nothing).
   */
  private noteAppended(start: number, end: number): void {
    if (start < this.wbStart) this.wbStart = start;
    if (end > this.wbEnd) this.wbEnd = end;
    this.wbBytes += end - start;
    if (this.wbBytes < WRITEBACK_BYTES) return;
    if (startWriteback(this.dataFd, this.wbStart, this.wbEnd - this.wbStart)) this.stats.writebacks++;
    this.wbStart = Infinity;
    this.wbEnd = 0;
    this.wbBytes = 0;
  }

  /** libhdf5 truncate (to its EOA): journal the original bytes cut away first. */
  truncate(size: number): void {
    if (this.txn === undefined) {
      this.dropped++;
      return;
    }
    this.activate();
    if (size < this.baseEof) {
      this.checkpoint();
      const phys = fs.fstatSync(this.dataFd).size;
      const end = Math.min(phys, this.baseEof);
      if (size < end && this.saveOriginals([[size, end]])) this.syncSync(this.lockFd);
    }
    fs.ftruncateSync(this.dataFd, size);
    this.eof = size;
  }

  /**
   * Append the original bytes of the not yet saved parts of `ranges` to the journal (not yet
   * durable). @returns true when records were written
   */
  private saveOriginals(ranges: Array<[number, number]>): boolean {
    const parts: Buffer[] = [];
    for (const [s0, e0] of ranges) {
      for (const [s, e] of this.saved.gaps(s0, Math.min(e0, this.baseEof))) {
        const data = Buffer.alloc(e - s);
        const n = preadFull(this.dataFd, data, s);
        const rec = Buffer.alloc(RECORD_HEAD);
        rec.writeBigUInt64LE(BigInt(s), 0);
        rec.writeUInt32LE(n, 8);
        const body = data.subarray(0, n);
        rec.writeUInt32LE(recordCrc(this.txn!, rec, body), 12);
        parts.push(rec, body);
        this.saved.add(s, e);
      }
    }
    if (parts.length === 0) return false;
    const all = Buffer.concat(parts);
    pwriteFull(this.lockFd, all, this.journalEnd);
    this.journalEnd += all.length;
    this.stats.journaled += all.length;
    return true;
  }

  private syncSync(fd: number): void {
    if (!this.durable) return;
    fs.fdatasyncSync(fd);
    this.stats.fsyncs++;
  }

  private async syncAsync(fd: number): Promise<void> {
    if (!this.durable) return;
    await fdatasync(fd);
    this.stats.fsyncs++;
  }

  /**
   * Save the originals of every held overwrite (durable first under `always`), then write the
   * held bytes to the file. Synchronous: called from libhdf5's callbacks.
   */
  checkpoint(): void {
    if (this.pending.length === 0) return;
    this.stats.checkpoints++;
    if (this.saveOriginals(this.pending.map((p) => [p.addr, p.addr + p.data.length]))) this.syncSync(this.lockFd);
    this.applyPending();
  }

  private applyPending(): void {
    for (const p of this.pending) pwriteFull(this.dataFd, p.data, p.addr);
    this.pending = [];
    this.pendingBytes = 0;
  }

  private finish(): bigint {
    this.txn = undefined;
    this.active = false;
    this.pending = [];
    this.pendingBytes = 0;
    return this.counter;
  }

  private idleHeader(): void {
    writeHeader(this.lockFd, { counter: this.txn!, active: false, pid: process.pid, txn: this.txn!, baseEof: this.baseEof, dev: this.id.dev, ino: this.id.ino });
  }

  /**
   * Commit: checkpoint, make the file durable, mark the journal idle (the commit point), make
   * that durable. The fsyncs run off the event loop (the file stays locked meanwhile); after a
   * large append (`WRITEBACK_BYTES` or more) the file's first fdatasync runs beside the journal's.
   * @returns the new commit counter (unchanged when the transaction wrote nothing)
   */
  async commit(): Promise<bigint> {
    if (this.txn === undefined) throw new Error('no transaction');
    if (this.active) {
      if (this.pending.length) {
        this.stats.checkpoints++;
        if (this.saveOriginals(this.pending.map((p) => [p.addr, p.addr + p.data.length]))) {
          // What the file holds now (appended bytes; overwrites whose originals an earlier
          // checkpoint made durable) may reach the disk at any time: a large append is flushed
          // beside the journal records, so the fdatasync below has only the held overwrites left.
          const early = this.durable && this.appended >= WRITEBACK_BYTES;
          await Promise.all([this.syncAsync(this.lockFd), early ? this.syncAsync(this.dataFd) : undefined]);
        }
        this.applyPending();
      }
      await this.syncAsync(this.dataFd);
      this.idleHeader();
      await this.syncAsync(this.lockFd);
      this.counter = this.txn;
      this.trimJournal();
    }
    return this.finish();
  }

  /** After a commit, a journal grown large (a big overwrite) gives its space back. */
  private trimJournal(): void {
    if (this.journalEnd > JOURNAL_KEEP_BYTES) fs.ftruncateSync(this.lockFd, HEADER_BYTES);
    this.journalEnd = HEADER_BYTES;
  }

  /** `commit`, synchronously (repairs). */
  commitSync(): bigint {
    if (this.txn === undefined) throw new Error('no transaction');
    if (this.active) {
      this.checkpoint();
      this.syncSync(this.dataFd);
      this.idleHeader();
      this.syncSync(this.lockFd);
      this.counter = this.txn;
      this.trimJournal();
    }
    return this.finish();
  }

  /** Undo the transaction: held bytes are dropped, written ones restored from the journal. */
  rollback(): RollbackReport | undefined {
    if (this.txn === undefined) return undefined;
    let report: RollbackReport | undefined;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.active) {
      report = applyRollback(this.dataFd, this.lockFd, { counter: this.counter, active: true, pid: process.pid, txn: this.txn, baseEof: this.baseEof, dev: this.id.dev, ino: this.id.ino }, this.durable);
      this.counter = this.txn;
    }
    this.eof = fs.fstatSync(this.dataFd).size;
    this.txn = undefined;
    this.active = false;
    return report;
  }
}
