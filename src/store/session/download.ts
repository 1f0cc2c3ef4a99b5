/**
 * A domain's file as bytes (issue #28 item 8: `GET /file`): what a download, `curl -r`, fsspec
 * or h5wasm read, by byte ranges, without libhdf5.
 *
 * A snapshot is opened while the domain's read lock is held (domains.ts `openFileBytes`): no write
 * of this process, of another h5store process or of an HDF5 program that locks its files (h5py
 * by default) is under way when it starts. The bytes are then sent without any lock, so that a
 * slow download never holds writers back; instead the file's status (size, modification and
 * change times, inode) is checked before every block is read, and a file that changed since the
 * snapshot was opened ends the transfer with an error (the client sees a transfer shorter than
 * its Content-Length, never a silent mix of two versions of the file). A program that writes
 * without locking the file (HDF5_USE_FILE_LOCKING=FALSE) may still be caught in the middle of a
 * write at the start: no consistent snapshot is promised for such files. The first block
 * (DOWNLOAD_BLOCK_BYTES) is read while the lock is held, so a file of up to one block is always
 * sent whole, whatever writes follow (the hostile run's downloads raced writes and got 503).
 */
import fs from 'node:fs';
import { H5StoreError } from '../../errors.js';

/** Bytes read (and the file's status checked) at a time. */
export const DOWNLOAD_BLOCK_BYTES = 1024 * 1024;

/** One version of a domain's file, open for reading by ranges. */
export interface FileSnapshot {
  /** Bytes in the file. */
  readonly size: number;
  /** Strong validator (RFC 9110 section 8.8.3) of this version: device, inode, size, mtime. */
  readonly etag: string;
  /** The file's modification time. */
  readonly lastModified: Date;
  /**
   * The bytes `[start, end]` (inclusive), in blocks of at most DOWNLOAD_BLOCK_BYTES.
   * @throws (from the iterator) H5StoreError Conflict when the file changed since the snapshot
   *   was opened, Internal for a read error
   */
  blocks(start: number, end: number): AsyncGenerator<Buffer>;
  /** Close the file. Idempotent; call once the response is over. */
  close(): void;
}

/** The status fields whose change means another version of the file. */
function versionOf(st: fs.BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * Open the file at `realPath` when it is still the file `dev`:`ino` (the one the store's handle
 * names). Synchronous: called while the domain's read lock is held.
 * @throws H5StoreError NotFound when the file is gone or was replaced since the handle was made
 */
export function openSnapshot(realPath: string, dev: bigint, ino: bigint, domain: string): FileSnapshot {
  let fd: number;
  try {
    fd = fs.openSync(realPath, 'r');
  } catch {
    throw new H5StoreError('NotFound', `Domain ${domain} not found`);
  }
  let st: fs.BigIntStats;
  try {
    st = fs.fstatSync(fd, { bigint: true });
  } catch (e) {
    fs.closeSync(fd);
    throw new H5StoreError('Internal', `Cannot read ${domain}: ${(e as Error).message}`);
  }
  if (st.dev !== dev || st.ino !== ino) {
    fs.closeSync(fd);
    throw new H5StoreError('NotFound', `Domain ${domain} was replaced: ask again`);
  }
  const version = versionOf(st);
  // The first block is read now, under the read lock: a file of up to one block (most files a
  // viewer downloads while a program writes them) is always one consistent version, and a
  // larger one starts with one (its later blocks are checked as they are read).
  const head = Buffer.allocUnsafe(Math.min(Number(st.size), DOWNLOAD_BLOCK_BYTES));
  try {
    let got = 0;
    while (got < head.length) {
      const r = fs.readSync(fd, head, got, head.length - got, got);
      if (r === 0) throw new H5StoreError('Conflict', `${domain} became shorter while it was opened: download it again`);
      got += r;
    }
  } catch (e) {
    fs.closeSync(fd);
    if (e instanceof H5StoreError) throw e;
    throw new H5StoreError('Internal', `Cannot read ${domain}: ${(e as Error).message}`);
  }
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    fs.close(fd, () => undefined);
  };
  async function* blocks(start: number, end: number): AsyncGenerator<Buffer> {
    let at = start;
    while (at <= end) {
      if (closed) throw new H5StoreError('Internal', `The download of ${domain} was closed`);
      if (at < head.length) {
        // read when the snapshot was opened (a view: the caller only writes it)
        const stop = Math.min(end + 1, head.length);
        yield head.subarray(at, stop);
        at = stop;
        continue;
      }
      const now = await new Promise<fs.BigIntStats>((resolve, reject) => fs.fstat(fd, { bigint: true }, (err, s) => (err ? reject(err) : resolve(s))));
      if (versionOf(now) !== version) throw new H5StoreError('Conflict', `${domain} changed while it was being sent: download it again`);
      const n = Math.min(DOWNLOAD_BLOCK_BYTES, end - at + 1);
      const buf = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const r = await new Promise<number>((resolve, reject) => fs.read(fd, buf, got, n - got, at + got, (err, k) => (err ? reject(err) : resolve(k))));
        if (r === 0) throw new H5StoreError('Conflict', `${domain} became shorter while it was being sent: download it again`);
        got += r;
      }
      at += n;
      yield buf;
    }
  }
  return {
    size: Number(st.size),
    etag: `"${st.dev.toString(36)}-${st.ino.toString(36)}-${st.size.toString(36)}-${st.mtimeNs.toString(36)}"`,
    lastModified: new Date(Number(st.mtimeNs / 1000000n)),
    blocks,
    close,
  };
}
