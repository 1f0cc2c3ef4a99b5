/**
 * The decoding side of two HDF5 filters, pure: shuffle (filter id 2) and Fletcher-32 (id 3), byte
 * for byte as libhdf5 1.10 does them (H5Zshuffle.c, H5Zfletcher32.c, H5checksum.c). Used by the
 * chunk reads outside libhdf5 (src/store/values/chunked.ts); deflate (id 1) is codec/inflate.ts.
 */

/**
 * Undo HDF5's byte shuffle: `src` holds byte 0 of every element, then byte 1 of every element,
 * ...; the result holds the elements again. Bytes after the last whole element (`src.length %
 * elemSize`) are copied as they are, as libhdf5 does. An element size of 1 (or a buffer shorter
 * than two elements) is returned unchanged.
 * @param src shuffled bytes (a whole decoded chunk)
 * @param elemSize bytes per element (the filter's client data value 0: the type's size)
 * @param out destination of `src.length` bytes (a new Buffer when absent); must not overlap `src`
 * @returns `out` (or `src` when nothing is to be done)
 */
export function unshuffle(src: Uint8Array, elemSize: number, out?: Buffer): Buffer {
  const n = Math.floor(src.length / elemSize);
  const whole = n * elemSize;
  if (elemSize <= 1 || n <= 1) {
    if (!out) return Buffer.from(src.buffer, src.byteOffset, src.length);
    out.set(src);
    return out;
  }
  const dst = out ?? Buffer.allocUnsafe(src.length);
  if (!unshuffleWords(src, elemSize, n, dst)) {
    for (let b = 0; b < elemSize; b++) {
      const base = b * n;
      for (let i = 0, o = b; i < n; i++, o += elemSize) dst[o] = src[base + i]!;
    }
  }
  for (let k = whole; k < src.length; k++) dst[k] = src[k]!;
  return dst;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * `unshuffle` 4 elements at a time with 32-bit loads and stores (a 4x4 byte transpose per group
 * of 4 byte planes), for element sizes 2 and multiples of 4 on a little-endian host, when the
 * planes and the destination are 4-byte aligned (n a multiple of 4). About 3x the byte loop.
 * @returns false (nothing written) when it does not apply
 */
function unshuffleWords(src: Uint8Array, elemSize: number, n: number, dst: Uint8Array): boolean {
  if (!LITTLE_ENDIAN || n % 4 !== 0 || src.byteOffset % 4 !== 0 || dst.byteOffset % 4 !== 0) return false;
  if (elemSize !== 2 && elemSize % 4 !== 0) return false;
  const s = new Uint32Array(src.buffer, src.byteOffset, (n * elemSize) >>> 2);
  const d = new Uint32Array(dst.buffer, dst.byteOffset, (n * elemSize) >>> 2);
  const q = n >>> 2; // words per plane
  if (elemSize === 2) {
    for (let k = 0; k < q; k++) {
      const w0 = s[k]!;
      const w1 = s[q + k]!;
      d[2 * k] = (w0 & 0xff) | ((w1 & 0xff) << 8) | ((w0 & 0xff00) << 8) | ((w1 & 0xff00) << 16);
      d[2 * k + 1] = ((w0 >>> 16) & 0xff) | (((w1 >>> 16) & 0xff) << 8) | ((w0 >>> 8) & 0xff0000) | (w1 & 0xff000000);
    }
    return true;
  }
  const words = elemSize >>> 2; // output words per element
  for (let g = 0; g < words; g++) {
    const p0 = 4 * g * q;
    const p1 = p0 + q;
    const p2 = p1 + q;
    const p3 = p2 + q;
    for (let k = 0, o = g; k < q; k++, o += 4 * words) {
      const w0 = s[p0 + k]!;
      const w1 = s[p1 + k]!;
      const w2 = s[p2 + k]!;
      const w3 = s[p3 + k]!;
      const t0 = (w0 & 0x00ff00ff) | ((w1 & 0x00ff00ff) << 8);
      const t1 = ((w0 >>> 8) & 0x00ff00ff) | (w1 & 0xff00ff00);
      const t2 = (w2 & 0x00ff00ff) | ((w3 & 0x00ff00ff) << 8);
      const t3 = ((w2 >>> 8) & 0x00ff00ff) | (w3 & 0xff00ff00);
      d[o] = (t0 & 0xffff) | (t2 << 16);
      d[o + words] = (t1 & 0xffff) | (t3 << 16);
      d[o + 2 * words] = (t0 >>> 16) | (t2 & 0xffff0000);
      d[o + 3 * words] = (t1 >>> 16) | (t3 & 0xffff0000);
    }
  }
  return true;
}

/** The inverse of `unshuffle` (what the filter does on write); for tests and symmetry. */
export function shuffle(src: Uint8Array, elemSize: number): Buffer {
  const n = Math.floor(src.length / elemSize);
  const dst = Buffer.from(src);
  if (elemSize <= 1 || n <= 1) return dst;
  for (let b = 0; b < elemSize; b++) for (let i = 0; i < n; i++) dst[b * n + i] = src[i * elemSize + b]!;
  return dst;
}

/**
 * HDF5's Fletcher-32 checksum (`H5_checksum_fletcher32`): 16-bit big-endian words, sums reduced
 * every 360 words, an odd last byte as the high byte of a word; 32-bit arithmetic as in C.
 * @returns the checksum, an unsigned 32-bit number
 */
export function fletcher32(data: Uint8Array): number {
  let len = data.length >>> 1;
  let sum1 = 0;
  let sum2 = 0;
  let p = 0;
  while (len > 0) {
    let tlen = len > 360 ? 360 : len;
    len -= tlen;
    do {
      sum1 = (sum1 + ((data[p]! << 8) | data[p + 1]!)) >>> 0;
      p += 2;
      sum2 = (sum2 + sum1) >>> 0;
    } while (--tlen);
    sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
  }
  if (data.length % 2) {
    sum1 = (sum1 + (data[p]! << 8)) >>> 0;
    sum2 = (sum2 + sum1) >>> 0;
    sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
  return ((sum2 << 16) | sum1) >>> 0;
}

/**
 * Check and strip the Fletcher-32 filter's trailer: the last 4 bytes of `chunk` hold the
 * checksum of the bytes before them, little-endian; like libhdf5, the checksum with the bytes of
 * each 16-bit half swapped is accepted too (files written before 1.6.3 on little-endian hosts).
 * @returns the bytes without the trailer (a view of `chunk`), or undefined when the checksum does
 *   not match or `chunk` is shorter than the trailer
 */
export function stripFletcher32(chunk: Buffer): Buffer | undefined {
  if (chunk.length < 4) return undefined;
  const data = chunk.subarray(0, chunk.length - 4);
  const stored = chunk.readUInt32LE(chunk.length - 4);
  const sum = fletcher32(data);
  const swapped = (((sum & 0x00ff00ff) << 8) | ((sum >>> 8) & 0x00ff00ff)) >>> 0;
  return stored === sum || stored === swapped ? data : undefined;
}

/** Append the Fletcher-32 trailer (what the filter does on write); for tests. */
export function withFletcher32(data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(data.length + 4);
  out.set(data);
  out.writeUInt32LE(fletcher32(data), data.length);
  return out;
}
