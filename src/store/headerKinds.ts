/**
 * Kinds of many objects of a local file at once, from their object header bytes
 * (codec/objectHeader.ts) read with a few large `pread`s instead of one libhdf5 call each (issue
 * #9 target 7: listing 10,000 links needs the kind of each hard link's target for `collection`).
 *
 * Only for a file that libhdf5 has open read-only outside a write session: every write session
 * ends with `H5Fflush` and a commit (files.ts), and reads hold the read lease against writers of
 * other processes, so the bytes on disk are the file libhdf5 sees. The caller asks libhdf5 for
 * every address left out of the answer.
 */
import fs from 'node:fs';
import { type HeaderKind, MAX_CHUNK_BYTES, objectKindAt, readSuperblock, type ReadAt } from '../codec/objectHeader.js';

/** Bytes read from each header's position (libhdf5 reads 512 speculatively too). */
const SPECULATIVE_BYTES = 512;
/** Headers closer than this are read in one span (reading the gap costs less than a call). */
const MAX_GAP_BYTES = 8 * 1024;
/** Largest span read at once (bounds the memory of one call). */
const MAX_SPAN_BYTES = 1024 * 1024;

/** The one buffer spans are read into (the store is single-threaded; calls never overlap). */
const spanBuffer = Buffer.allocUnsafe(MAX_SPAN_BYTES);

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
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return out;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (st.dev !== dev || st.ino !== ino) return out;
    const size = Number(st.size);
    const direct: ReadAt = (pos, len) => {
      if (pos < 0 || len < 0 || len > MAX_CHUNK_BYTES || pos >= size) return undefined;
      const b = Buffer.allocUnsafe(Math.min(len, size - pos));
      const n = fs.readSync(fd, b, 0, b.length, pos);
      return b.subarray(0, n);
    };
    const sb = readSuperblock(direct, size);
    if (!sb) return out;
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
    return out;
  } catch {
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
