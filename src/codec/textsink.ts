/**
 * A byte buffer for building JSON text without creating one JS string per number (the JSON value
 * writer's hot path), and the number writers that fill it with ASCII digits directly.
 */
import { float16ToString, float32Digits, float32DigitsBits, float32Result } from './float.js';

// module-local copies: no live-binding lookups in the hot loops
const R32 = float32Result;
const digits32Of = float32Digits;
const digits32OfBits = float32DigitsBits;
const half = float16ToString;

/**
 * Text is written at `pos` into `buf`. When `buf` is full, the bytes not yet taken stay where
 * they are (as a chunk) and writing continues in a new buffer (twice the size, up to
 * `MAX_CHUNK`): nothing written is ever copied to grow, and a large text is a list of chunks of
 * at most 1 MiB (plus any single longer string). `takeChunks` hands those bytes over without
 * copying; the other `take*` methods copy them and reuse the space.
 */
export class TextSink {
  buf: Buffer;
  pos = 0;
  /** Start of the bytes of `buf` not yet taken (before it: handed over by `takeChunks`, never written again). */
  private start = 0;
  /** Earlier chunks not yet taken. */
  private full: Buffer[] = [];

  constructor(capacity = 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(64, capacity));
  }

  /** Make room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    if (this.pos > this.start) this.full.push(this.buf.subarray(this.start, this.pos));
    this.buf = Buffer.allocUnsafe(Math.max(n, Math.min(this.buf.length * 2, MAX_CHUNK)));
    this.pos = this.start = 0;
  }

  /** Drop everything written and not yet taken (e.g. after a failed conversion). */
  reset(): void {
    this.full = [];
    this.pos = this.start;
  }

  /** Number of bytes written and not yet taken. */
  get length(): number {
    let n = this.pos - this.start;
    for (const c of this.full) n += c.length;
    return n;
  }

  /** The text written so far (decoded as UTF-8), and reset. */
  take(): string {
    return this.takeString('utf8');
  }

  /** The text written so far as latin1 (faster; only when everything written was ASCII), and reset. */
  takeAscii(): string {
    return this.takeString('latin1');
  }

  private takeString(enc: 'utf8' | 'latin1'): string {
    let s: string;
    if (this.full.length === 0) s = this.buf.toString(enc, this.start, this.pos);
    else if (enc === 'latin1') s = this.full.map((c) => c.toString(enc)).join('') + this.buf.toString(enc, this.start, this.pos);
    else s = Buffer.concat([...this.full, this.buf.subarray(this.start, this.pos)]).toString(enc); // a character may span chunks
    this.full = [];
    this.pos = this.start;
    return s;
  }

  /** A copy of the bytes written so far, and reset. */
  takeBytes(): Buffer {
    const b = Buffer.concat([...this.full, this.buf.subarray(this.start, this.pos)]);
    this.full = [];
    this.pos = this.start;
    return b;
  }

  /**
   * The bytes written so far as chunks (no copy: the sink never writes into them again; an empty
   * list when nothing was written), and reset.
   */
  takeChunks(): Buffer[] {
    const out = this.full;
    if (this.pos > this.start) out.push(this.buf.subarray(this.start, this.pos));
    this.full = [];
    this.start = this.pos;
    return out;
  }

  /** Append one byte (caller ensured room). */
  byte(c: number): void {
    this.buf[this.pos++] = c;
  }

  /** Append an ASCII string (ensures room). */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    const b = this.buf;
    let p = this.pos;
    if (n > 32) {
      p += b.write(s, p, 'latin1');
    } else {
      for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    }
    this.pos = p;
  }

  /** Append any string as UTF-8 (ensures room). */
  utf8(s: string): void {
    this.ensure(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** Append `count` copies of byte c (ensures room). */
  repeat(c: number, count: number): void {
    this.ensure(count);
    this.buf.fill(c, this.pos, this.pos + count);
    this.pos += count;
  }
}

/** Largest buffer the sink allocates when it grows (a longer single write gets its own). */
const MAX_CHUNK = 1 << 20;

const ZERO = 48;
const DOT = 46;
const MINUS = 45;

/** Number of decimal digits of a non-negative integer below 2^53. */
function numDigits(n: number): number {
  if (n < 1e9) {
    if (n < 1e4) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : 4;
    return n < 1e5 ? 5 : n < 1e6 ? 6 : n < 1e7 ? 7 : n < 1e8 ? 8 : 9;
  }
  let d = 10;
  let p = 1e10;
  while (n >= p && d < 16) {
    d++;
    p *= 10;
  }
  return d;
}

/**
 * Append a safe integer (|n| < 2^53) in decimal. Caller ensured 17 bytes of room.
 */
export function writeInt(s: TextSink, n: number): void {
  const b = s.buf;
  let p = s.pos;
  if (n < 0) {
    b[p++] = MINUS;
    n = -n;
  }
  if (n < 10) {
    b[p++] = ZERO + n;
    s.pos = p;
    return;
  }
  const k = numDigits(n);
  let q = p + k;
  s.pos = q;
  if (n <= 0x7fffffff) {
    while (n >= 10) {
      const d = (n / 10) | 0;
      b[--q] = ZERO + (n - d * 10);
      n = d;
    }
  } else {
    while (n >= 10) {
      const d = Math.floor(n / 10);
      b[--q] = ZERO + (n - d * 10);
      n = d;
    }
  }
  b[--q] = ZERO + n;
}

/**
 * Write the last k decimal digits of the non-negative int32 D ending just before byte position q
 * (right to left); returns the digits above them (D / 10^k, truncated).
 */
function digitsBackward(b: Buffer, q: number, D: number, k: number): number {
  D |= 0;
  while (k >= 2) {
    const d = (D / 100) | 0;
    const r = (D - d * 100) << 1;
    b[--q] = PAIRS[r + 1];
    b[--q] = PAIRS[r];
    D = d;
    k -= 2;
  }
  if (k === 1) {
    const d = (D / 10) | 0;
    b[--q] = ZERO + (D - d * 10);
    D = d;
  }
  return D;
}

/** "00".."99" as byte pairs. */
const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  PAIRS[2 * i] = ZERO + ((i / 10) | 0);
  PAIRS[2 * i + 1] = ZERO + (i % 10);
}

/**
 * Write the decimal D * 10^e (D a positive integer without trailing zeros, at most 9 digits)
 * formatted as `String(number)` would (ECMA-262 Number::toString) into b at p (at most 32
 * bytes); returns the position after it.
 */
function putDecimal(b: Buffer, p: number, D: number, e: number): number {
  D |= 0;
  const k = numDigits(D);
  const n = k + e;
  if (0 < n && n < k) {
    // the common case, digits with a point after n of them: written right to left in one pass
    // (fraction digits, the point, integer digits)
    const end = p + k + 1;
    const point = end - (k - n) - 1;
    const hi = digitsBackward(b, end, D, k - n);
    b[point] = DOT;
    digitsBackward(b, point, hi, n);
    return end;
  }
  if (k <= n && n <= 21) {
    // integer: digits then zeros
    digitsBackward(b, p + k, D, k);
    p += k;
    for (let i = k; i < n; i++) b[p++] = ZERO;
  } else if (-6 < n && n <= 0) {
    b[p++] = ZERO;
    b[p++] = DOT;
    for (let i = n; i < 0; i++) b[p++] = ZERO;
    digitsBackward(b, p + k, D, k);
    p += k;
  } else {
    // exponential: d[.ddd]e(+|-)x
    if (k === 1) {
      b[p++] = ZERO + D;
    } else {
      const div = P10I[k - 1];
      const hi = (D / div) | 0;
      b[p++] = ZERO + hi;
      b[p++] = DOT;
      digitsBackward(b, p + k - 1, D - hi * div, k - 1);
      p += k - 1;
    }
    let x = n - 1;
    b[p++] = 101; // 'e'
    if (x < 0) {
      b[p++] = MINUS;
      x = -x;
    } else {
      b[p++] = 43; // '+'
    }
    if (x >= 10) {
      const d = (x / 10) | 0;
      b[p++] = ZERO + d;
      x -= d * 10;
    }
    b[p++] = ZERO + x;
  }
  return p;
}

const P10I = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000];

/** Append a finite float32 value in its shortest round-trip form (see `float32Digits`). Caller ensured 32 bytes. */
export function writeFloat32(s: TextSink, v: number): void {
  if (v === 0) {
    if (1 / v < 0) s.buf[s.pos++] = MINUS;
    s.buf[s.pos++] = ZERO;
    return;
  }
  if (v < 0) {
    s.buf[s.pos++] = MINUS;
    v = -v;
  }
  digits32Of(v);
  s.pos = putDecimal(s.buf, s.pos, R32.digits, R32.exp);
}

/**
 * Append the finite float32 with bit pattern `bits` (an unsigned 32-bit integer, e.g. from
 * `DataView.getUint32`; not NaN or infinite) in its shortest round-trip form, as
 * `writeFloat32`. Caller ensured 32 bytes.
 */
export function writeFloat32Bits(s: TextSink, bits: number): void {
  s.pos = putFloat32Bits(s.buf, s.pos, bits);
}

/**
 * Write the finite float32 with bit pattern `bits` (unsigned 32-bit integer; not NaN or infinite)
 * in its shortest round-trip form (see `writeFloat32`) into b at p, which has room for 32 bytes;
 * returns the position after it. For loops that keep the buffer and position in locals.
 */
export function putFloat32Bits(b: Buffer, p: number, bits: number): number {
  if (bits >>> 31) b[p++] = MINUS;
  if ((bits & 0x7fffffff) === 0) {
    b[p++] = ZERO;
    return p;
  }
  digits32OfBits(bits);
  return putDecimal(b, p, R32.digits, R32.exp);
}

/** Write an ASCII string into b at p (room ensured by the caller); returns the position after it. */
export function putAscii(b: Buffer, p: number, str: string): number {
  for (let i = 0; i < str.length; i++) b[p++] = str.charCodeAt(i);
  return p;
}

/** Append a finite double in its shortest round-trip form (`String(v)`; `-0` for negative zero). Caller ensured 32 bytes. */
export function writeFloat64(s: TextSink, v: number): void {
  if (Number.isSafeInteger(v)) {
    if (v === 0 && 1 / v < 0) s.buf[s.pos++] = MINUS;
    writeInt(s, v);
    return;
  }
  const str = String(v);
  const b = s.buf;
  let p = s.pos;
  for (let i = 0; i < str.length; i++) b[p++] = str.charCodeAt(i);
  s.pos = p;
}

/** Append a finite half-precision value given by its bits, shortest round-trip form. Caller ensured 32 bytes. */
export function writeFloat16(s: TextSink, bits: number): void {
  const str = half(bits);
  const b = s.buf;
  let p = s.pos;
  for (let i = 0; i < str.length; i++) b[p++] = str.charCodeAt(i);
  s.pos = p;
}
