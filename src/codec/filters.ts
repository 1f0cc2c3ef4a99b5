/**
 * The decoding side of two HDF5 filters, pure: shuffle (filter id 2) and Fletcher-32 (id 3), byte
 * for byte as libhdf5 1.10 does them (H5Zshuffle.c, H5Zfletcher32.c, H5checksum.c). Used by the
 * parallel chunk reads (src/store/values/chunked.ts); deflate (id 1) is Node's zlib there.
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
  if (elemSize === 4) {
    const s1 = n;
    const s2 = 2 * n;
    const s3 = 3 * n;
    for (let i = 0, o = 0; i < n; i++, o += 4) {
      dst[o] = src[i]!;
      dst[o + 1] = src[s1 + i]!;
      dst[o + 2] = src[s2 + i]!;
      dst[o + 3] = src[s3 + i]!;
    }
  } else if (elemSize === 2) {
    for (let i = 0, o = 0; i < n; i++, o += 2) {
      dst[o] = src[i]!;
      dst[o + 1] = src[n + i]!;
    }
  } else {
    for (let b = 0; b < elemSize; b++) {
      const base = b * n;
      for (let i = 0, o = b; i < n; i++, o += elemSize) dst[o] = src[base + i]!;
    }
  }
  for (let k = whole; k < src.length; k++) dst[k] = src[k]!;
  return dst;
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
