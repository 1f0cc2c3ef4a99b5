/**
 * What the store reads from a local file's bytes without libhdf5 (issue #9 target 7: listing
 * 10,000 links of a file never opened): the kinds of many objects at once from their object
 * headers (codec/objectHeader.ts), read with a few large `pread`s instead of one libhdf5 call
 * each, and the links of a symbol table ("old-style") group (codec/symbolTable.ts) instead of
 * `H5Literate` with a koffi callback per link. Also (target 4) the byte range of a run of
 * contiguously stored values (`rangePages`), read on the thread pool instead of by `H5Dread`.
 *
 * Only for a file that libhdf5 has open read-only outside a write session: every write session
 * ends with `H5Fflush` and a commit (files.ts), and reads hold the read lease against writers of
 * other processes, so the bytes on disk are the file libhdf5 sees. The caller asks libhdf5 for
 * whatever is left out of an answer.
 */
import fs from 'node:fs';
import { H5StoreError, internal } from '../../errors.js';
import { type HeaderKind, MAX_CHUNK_BYTES, objectKindAt, readSuperblock, type ReadAt, type SuperblockInfo, symbolTableAt } from '../../codec/objectHeader.js';
import { readSymbolTable, type SymbolTable } from '../../codec/symbolTable.js';
import type { PagePool } from '../values/pagepool.js';

/** Bytes read from each header's position (libhdf5 reads 512 speculatively too). */
const SPECULATIVE_BYTES = 512;
/** Headers closer than this are read in one span (reading the gap costs less than a call). */
const MAX_GAP_BYTES = 8 * 1024;
/** Largest span read at once (bounds the memory of one call). */
const MAX_SPAN_BYTES = 1024 * 1024;

/** The one buffer spans are read into (the store is single-threaded; calls never overlap). */
const spanBuffer = Buffer.allocUnsafe(MAX_SPAN_BYTES);

/** An open file checked to be `dev`:`ino`, with an unbuffered reader and its superblock. */
interface OpenFile {
  fd: number;
  size: number;
  sb: SuperblockInfo;
  /** `pread` of up to MAX_CHUNK_BYTES (fewer at the end of the file). */
  direct: ReadAt;
}

/**
 * Open the file at `file` for reading when it is still the file `dev`:`ino`.
 * @returns its descriptor (the caller closes it) and size in bytes, or undefined (never throws)
 */
function openChecked(file: string, dev: bigint, ino: bigint): { fd: number; size: number } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (st.dev === dev && st.ino === ino) return { fd, size: Number(st.size) };
  } catch {
    // closed below
  }
  fs.closeSync(fd);
  return undefined;
}

/**
 * Run `fn` on the file at `file` when it is still the file `dev`:`ino` and has a superblock
 * this decoder reads; undefined otherwise, or when reading fails (never throws).
 */
function withFile<T>(file: string, dev: bigint, ino: bigint, fn: (f: OpenFile) => T): T | undefined {
  const opened = openChecked(file, dev, ino);
  if (!opened) return undefined;
  const { fd, size } = opened;
  try {
    const direct: ReadAt = (pos, len) => {
      if (pos < 0 || len < 0 || len > MAX_CHUNK_BYTES || pos >= size) return undefined;
      const b = Buffer.allocUnsafe(Math.min(len, size - pos));
      const n = fs.readSync(fd, b, 0, b.length, pos);
      return b.subarray(0, n);
    };
    const sb = readSuperblock(direct, size);
    return sb ? fn({ fd, size, sb, direct }) : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The kinds of the objects whose header addresses (relative to the superblock; numbers, exact
 * below 2^53) are `addrs`, read from the file at `file` when it is still the file `dev`:`ino`.
 * @returns address -> kind for the objects the header bytes decide; the others are left out
 *   (also all of them when the file cannot be read or is another file now). Never throws for
 *   what is in the file.
 */
export function headerKinds(file: string, dev: bigint, ino: bigint, addrs: readonly number[]): Map<number, HeaderKind> {
  const out = new Map<number, HeaderKind>();
  if (addrs.length === 0) return out;
  withFile(file, dev, ino, ({ fd, size, sb, direct }) => {
    const sorted = Float64Array.from(addrs.filter((a) => Number.isSafeInteger(a) && a >= 0 && a < size)).sort();
    let span: Uint8Array | undefined;
    let spanPos = 0;
    const read: ReadAt = (pos, len) => (span && pos >= spanPos && pos + len <= spanPos + span.length ? span.subarray(pos - spanPos, pos - spanPos + len) : direct(pos, len));
    for (let i = 0; i < sorted.length; ) {
      // one span: this header and the following ones close enough to it
      const first = sb.base + sorted[i]!;
      let end = first + SPECULATIVE_BYTES;
      let j = i + 1;
      for (; j < sorted.length; j++) {
        const p = sb.base + sorted[j]!;
        if (p > end + MAX_GAP_BYTES || p + SPECULATIVE_BYTES - first > MAX_SPAN_BYTES) break;
        end = p + SPECULATIVE_BYTES;
      }
      const len = Math.min(end, size) - first;
      span = spanBuffer.subarray(0, fs.readSync(fd, spanBuffer, 0, len, first));
      spanPos = first;
      for (; i < j; i++) {
        const addr = sorted[i]!;
        if (i > 0 && sorted[i - 1] === addr) continue;
        const kind = objectKindAt(read, addr, sb);
        if (kind) out.set(addr, kind);
      }
    }
  });
  return out;
}

/** Block size of the reader of symbol table groups (their nodes lie near each other). */
const BLOCK_BYTES = 64 * 1024;

/**
 * The links of the group whose object header is at `gaddr` (relative to the superblock) when it
 * is a symbol table group, in libhdf5's name order (codec/symbolTable.ts), read from the file at
 * `file` when it is still the file `dev`:`ino`; undefined when the group is stored otherwise
 * (link messages, dense storage: libhdf5 lists them), when the bytes do not decide, or the file
 * cannot be read. Never throws for what is in the file.
 */
export function symbolTableLinks(file: string, dev: bigint, ino: bigint, gaddr: number): SymbolTable | undefined {
  return withFile(file, dev, ino, ({ fd, size, sb, direct }) => {
    // small reads are served from 64 KiB blocks (the last one kept): B-tree and symbol table
    // nodes are allocated as the group grows, close to each other and to the group's header
    let block: Uint8Array | undefined;
    let blockPos = 0;
    const read: ReadAt = (pos, len) => {
      if (block && pos >= blockPos && pos + len <= blockPos + block.length) return block.subarray(pos - blockPos, pos - blockPos + len);
      if (len > BLOCK_BYTES / 2 || pos < 0 || pos >= size) return direct(pos, len);
      blockPos = pos;
      // a plain Uint8Array view: its subarray is cheaper than a Buffer's
      block = new Uint8Array(spanBuffer.buffer, spanBuffer.byteOffset, fs.readSync(fd, spanBuffer, 0, Math.min(BLOCK_BYTES, size - pos), pos));
      return block.subarray(0, Math.min(len, block.length));
    };
    const stab = symbolTableAt(read, gaddr, sb);
    return (stab && readSymbolTable(read, stab, sb)) ?? undefined;
  });
}

/** Page reads `rangePages` keeps in flight (two threads of the pool copy while this one sends). */
const READ_AHEAD = 2;

/** Buffers for the pages of `rangePages`: a page pool's `take` and `give`. */
type PageBuffers = Pick<PagePool, 'take' | 'give'>;

/**
 * The bytes `[offset, offset + bytes)` of the file at `file`, in pages of `pageBytes`, read with
 * `pread` on libuv's thread pool: the next page's read starts before a page is yielded, so the
 * copy out of the page cache runs on a pool thread while the caller sends the previous page (on
 * this 2-core VM the main thread otherwise did both; issue #9 target 4). Each page lives in a
 * buffer from `buffers` (`pooled`: the caller gives it back once sent); a read left in flight
 * when the caller stops early is awaited and its buffer given back, and the file is closed, by
 * the generator's `return()`.
 * @returns undefined when the file is not `dev`:`ino` any more or does not hold the whole range
 *   (the caller reads through libhdf5 instead); the pages otherwise
 * @throws from the generator: H5StoreError (Internal) when the file shrinks during the read
 */
export function rangePages(
  file: string,
  dev: bigint,
  ino: bigint,
  offset: number,
  bytes: number,
  pageBytes: number,
  buffers: PageBuffers,
): AsyncGenerator<{ wire: Buffer; pooled: Buffer }> | undefined {
  const opened = openChecked(file, dev, ino);
  if (!opened) return undefined;
  if (offset < 0 || bytes <= 0 || offset + bytes > opened.size) {
    fs.closeSync(opened.fd);
    return undefined;
  }
  return readPages(opened.fd, offset, bytes, Math.max(1, pageBytes), buffers);
}

async function* readPages(fd: number, offset: number, bytes: number, pageBytes: number, buffers: PageBuffers): AsyncGenerator<{ wire: Buffer; pooled: Buffer }> {
  /** Read page `at` (bytes from the range's start) into a fresh buffer; reads until full. */
  const read = async (at: number): Promise<{ wire: Buffer; pooled: Buffer }> => {
    const n = Math.min(pageBytes, bytes - at);
    const pooled = buffers.take(n);
    try {
      let got = 0;
      while (got < n) {
        const { bytesRead } = await readAt(fd, pooled, got, n - got, offset + at + got);
        if (bytesRead === 0) throw internal(`The file ended ${offset + at + got} bytes in, inside the dataset's values: it was shortened during the read`);
        got += bytesRead;
      }
    } catch (e) {
      buffers.give(pooled);
      throw e instanceof H5StoreError ? e : internal(`Reading the dataset's values from the file failed: ${(e as Error).message}`);
    }
    return { wire: pooled.subarray(0, n), pooled };
  };
  /** `read(at)`, marked handled: it may fail while no one awaits it yet (awaiting it still throws). */
  const start = (at: number) => {
    const p = read(at);
    p.catch(() => undefined);
    return p;
  };
  // READ_AHEAD reads in flight, in page order
  const ahead: Promise<{ wire: Buffer; pooled: Buffer }>[] = [];
  let started = 0;
  const fill = () => {
    while (ahead.length < READ_AHEAD && started < bytes) {
      ahead.push(start(started));
      started += Math.min(pageBytes, bytes - started);
    }
  };
  try {
    fill();
    while (ahead.length > 0) {
      const page = await ahead[0]!;
      ahead.shift();
      fill();
      yield page;
    }
  } finally {
    // stopped early: let the reads in flight finish (their buffers and the descriptor are in use)
    for (const p of ahead) await p.then((x) => buffers.give(x.pooled), () => undefined);
    fs.closeSync(fd);
  }
}

/** `fs.read` as a promise (on the thread pool). */
function readAt(fd: number, buf: Buffer, at: number, n: number, position: number): Promise<{ bytesRead: number }> {
  return new Promise((resolve, reject) => fs.read(fd, buf, at, n, position, (e, bytesRead) => (e ? reject(e) : resolve({ bytesRead }))));
}
