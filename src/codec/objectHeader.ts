/**
 * The kind of an HDF5 object (group, dataset, committed datatype) read from its object header
 * bytes, pure: what libhdf5 1.10 `H5O__obj_class_real` decides (H5Oint.c), without a libhdf5
 * call per object. Used to list the links of a group with their `collection` (src/store/objects/links.ts)
 * by reading the target headers in a few large reads instead of one `H5Oget_info_by_name2` each.
 *
 * Format: HDF5 File Format Specification version 3.0, sections II.B (superblock), IV.A.1.a
 * (version 1 object header), IV.A.1.b (version 2 object header, "OHDR"/"OCHK" chunks with
 * Jenkins lookup3 checksums), IV.A.2.n (continuation message). libhdf5's rule, in its order:
 * a symbol table (0x11) or link info (0x02) message makes a group; otherwise a datatype (0x03)
 * and a dataspace (0x01) message make a dataset; otherwise a datatype message makes a committed
 * datatype. Whenever these bytes are not exactly what libhdf5 would accept (unknown version, bad
 * signature or checksum, a message running past its chunk, no deciding message, a read past the
 * end of file), the decoder answers `null`: the caller asks libhdf5 instead, so an answer here is
 * never different from libhdf5's.
 */

/** The kinds of objects the REST API has (ids.ts prefixes). */
export type HeaderKind = 'group' | 'dataset' | 'datatype';

/** Size of addresses and lengths in the file (superblock), bytes: 2, 4 or 8. */
export interface FileSizes {
  offsets: number;
  lengths: number;
}

/** Where HDF5 data starts in the file (the superblock's position) and the sizes of fields. */
export interface SuperblockInfo extends FileSizes {
  /** Absolute file position that object addresses are relative to (0, or the user block size). */
  base: number;
}

/**
 * Reads `len` bytes at absolute file position `pos`; fewer (or undefined) at the end of the file.
 * The decoder never asks for more than `MAX_CHUNK_BYTES` at once.
 */
export type ReadAt = (pos: number, len: number) => Uint8Array | undefined;

const SIGNATURE = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];

/** Largest header chunk the decoder reads (larger: answer null, libhdf5 decides). */
export const MAX_CHUNK_BYTES = 1 << 20;
/** Most chunks (the first and its continuations) one header may have here. */
const MAX_CHUNKS = 64;

const MSG_SDSPACE = 0x01;
const MSG_LINFO = 0x02;
const MSG_DTYPE = 0x03;
const MSG_CONT = 0x10;
const MSG_STAB = 0x11;

/**
 * Find the superblock (at 0, 512, 1024, 2048, ... as libhdf5 searches, spec II.A) and read the
 * sizes of offsets and lengths. libhdf5 takes the superblock's position as the base address
 * (H5Fsuper.c adjusts a differing stored base address to it), so `base` is that position.
 * @param fileSize bytes in the file (the search stops there)
 * @returns undefined when no superblock of version 0-3 is found
 */
export function readSuperblock(read: ReadAt, fileSize: number): SuperblockInfo | undefined {
  for (let pos = 0; pos + 16 <= fileSize; pos = pos === 0 ? 512 : pos * 2) {
    const b = read(pos, 16);
    if (!b || b.length < 16 || !SIGNATURE.every((v, i) => b[i] === v)) continue;
    const version = b[8]!;
    let offsets: number;
    let lengths: number;
    if (version === 0 || version === 1) {
      offsets = b[13]!;
      lengths = b[14]!;
    } else if (version === 2 || version === 3) {
      offsets = b[9]!;
      lengths = b[10]!;
    } else return undefined;
    if (![2, 4, 8].includes(offsets) || ![2, 4, 8].includes(lengths)) return undefined;
    return { base: pos, offsets, lengths };
  }
  return undefined;
}

/** An unsigned little-endian integer of `n` bytes (n <= 8) as a number (undefined past 2^53). */
export function uint(b: Uint8Array, p: number, n: number): number | undefined {
  if (n === 8) {
    // the common size, without a loop: two 32-bit halves
    const hi = b[p + 4]! + b[p + 5]! * 0x100 + b[p + 6]! * 0x10000 + b[p + 7]! * 0x1000000;
    if (hi > 0x1fffff) return undefined;
    return hi * 0x100000000 + b[p]! + b[p + 1]! * 0x100 + b[p + 2]! * 0x10000 + b[p + 3]! * 0x1000000;
  }
  let v = 0;
  for (let i = n - 1; i >= 0; i--) v = v * 256 + b[p + i]!;
  return Number.isSafeInteger(v) ? v : undefined;
}

/** The "undefined address" of a file (all bits set). */
function isUndefinedAddr(b: Uint8Array, p: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (b[p + i] !== 0xff) return false;
  return true;
}

/**
 * Jenkins' lookup3 hash as libhdf5 computes its metadata checksums (H5checksum.c,
 * `H5_checksum_lookup3` with initial value 0).
 */
export function lookup3(k: Uint8Array, start = 0, end = k.length): number {
  let length = end - start;
  let a = (0xdeadbeef + length) | 0;
  let b = a;
  let c = a;
  let p = start;
  const rot = (x: number, r: number) => (x << r) | (x >>> (32 - r));
  while (length > 12) {
    a = (a + (k[p]! | (k[p + 1]! << 8) | (k[p + 2]! << 16) | (k[p + 3]! << 24))) | 0;
    b = (b + (k[p + 4]! | (k[p + 5]! << 8) | (k[p + 6]! << 16) | (k[p + 7]! << 24))) | 0;
    c = (c + (k[p + 8]! | (k[p + 9]! << 8) | (k[p + 10]! << 16) | (k[p + 11]! << 24))) | 0;
    a = (a - c) | 0; a ^= rot(c, 4); c = (c + b) | 0;
    b = (b - a) | 0; b ^= rot(a, 6); a = (a + c) | 0;
    c = (c - b) | 0; c ^= rot(b, 8); b = (b + a) | 0;
    a = (a - c) | 0; a ^= rot(c, 16); c = (c + b) | 0;
    b = (b - a) | 0; b ^= rot(a, 19); a = (a + c) | 0;
    c = (c - b) | 0; c ^= rot(b, 4); b = (b + a) | 0;
    length -= 12;
    p += 12;
  }
  if (length === 0) return c >>> 0;
  // the last 1-12 bytes (lookup3's fall-through switch)
  if (length >= 12) c = (c + (k[p + 11]! << 24)) | 0;
  if (length >= 11) c = (c + (k[p + 10]! << 16)) | 0;
  if (length >= 10) c = (c + (k[p + 9]! << 8)) | 0;
  if (length >= 9) c = (c + k[p + 8]!) | 0;
  if (length >= 8) b = (b + (k[p + 7]! << 24)) | 0;
  if (length >= 7) b = (b + (k[p + 6]! << 16)) | 0;
  if (length >= 6) b = (b + (k[p + 5]! << 8)) | 0;
  if (length >= 5) b = (b + k[p + 4]!) | 0;
  if (length >= 4) a = (a + (k[p + 3]! << 24)) | 0;
  if (length >= 3) a = (a + (k[p + 2]! << 16)) | 0;
  if (length >= 2) a = (a + (k[p + 1]! << 8)) | 0;
  a = (a + k[p]!) | 0;
  c ^= b; c = (c - rot(b, 14)) | 0;
  a ^= c; a = (a - rot(c, 11)) | 0;
  b ^= a; b = (b - rot(a, 25)) | 0;
  c ^= b; c = (c - rot(b, 16)) | 0;
  a ^= c; a = (a - rot(c, 4)) | 0;
  b ^= a; b = (b - rot(a, 14)) | 0;
  c ^= b; c = (c - rot(b, 24)) | 0;
  return c >>> 0;
}

/** Message types seen in one header (bit `1 << type` for types below 32), and the continuation chunks to read next. */
interface Scan {
  types: number;
  chunks: { pos: number; len: number }[];
  /** The symbol table message's addresses (B-tree, local heap), when there is one. */
  stab?: SymbolTableAddrs;
}

/** Record a message; a continuation message adds its chunk. @returns false when malformed */
function note(scan: Scan, type: number, b: Uint8Array, p: number, size: number, sizes: FileSizes, base: number): boolean {
  if (type < 32) scan.types |= 1 << type;
  if (type === MSG_STAB) {
    if (size < 2 * sizes.offsets) return false;
    const btree = uint(b, p, sizes.offsets);
    const heap = uint(b, p + sizes.offsets, sizes.offsets);
    if (btree === undefined || heap === undefined) return false;
    scan.stab = { btree, heap };
    return true;
  }
  if (type !== MSG_CONT) return true;
  if (size < sizes.offsets + sizes.lengths) return false;
  if (isUndefinedAddr(b, p, sizes.offsets)) return false;
  const addr = uint(b, p, sizes.offsets);
  const len = uint(b, p + sizes.offsets, sizes.lengths);
  if (addr === undefined || len === undefined || len === 0 || len > MAX_CHUNK_BYTES) return false;
  scan.chunks.push({ pos: base + addr, len });
  return true;
}

/** Messages of a version 1 chunk (8-byte headers, sizes multiples of 8). */
function scanV1(b: Uint8Array, start: number, end: number, scan: Scan, sizes: FileSizes, base: number): boolean {
  let p = start;
  while (p + 8 <= end) {
    const type = b[p]! | (b[p + 1]! << 8);
    const size = b[p + 2]! | (b[p + 3]! << 8);
    p += 8;
    if (size % 8 !== 0 || p + size > end) return false;
    if (!note(scan, type, b, p, size, sizes, base)) return false;
    p += size;
  }
  return p === end;
}

/** Messages of a version 2 chunk (`start`..`end` without signature and checksum). */
function scanV2(b: Uint8Array, start: number, end: number, crtOrder: boolean, scan: Scan, sizes: FileSizes, base: number): boolean {
  const hdr = crtOrder ? 6 : 4;
  let p = start;
  while (p + hdr <= end) {
    const type = b[p]!;
    const size = b[p + 1]! | (b[p + 2]! << 8);
    p += hdr;
    if (p + size > end) return false;
    if (!note(scan, type, b, p, size, sizes, base)) return false;
    p += size;
  }
  // what is left (less than a message header) is a gap (spec IV.A.1.b)
  return true;
}

/** Whether `b[start..end)` ends with the lookup3 checksum of what comes before it. */
function checksumOk(b: Uint8Array, start: number, end: number): boolean {
  const stored = (b[end - 4]! | (b[end - 3]! << 8) | (b[end - 2]! << 16) | (b[end - 1]! << 24)) >>> 0;
  return lookup3(b, start, end - 4) === stored;
}

/**
 * The kind of the object whose header is at `addr` (relative to `sb.base`), or null when these
 * bytes do not decide it (see the module comment: the caller then asks libhdf5).
 * @param read the file's bytes (each header costs one read of its first chunk, and one per
 *   continuation chunk)
 */
export function objectKindAt(read: ReadAt, addr: number, sb: SuperblockInfo): HeaderKind | null {
  const scan = scanHeader(read, addr, sb);
  if (!scan) return null;
  const t = scan.types;
  if (t & ((1 << MSG_STAB) | (1 << MSG_LINFO))) return 'group';
  if (t & (1 << MSG_DTYPE)) return t & (1 << MSG_SDSPACE) ? 'dataset' : 'datatype';
  return null;
}

/**
 * Where the group whose header is at `addr` keeps its links when it is a symbol table ("old
 * style") group: the symbol table message's B-tree and local heap addresses. Null when the
 * header has no symbol table message, also has a link info message (libhdf5 then reads the
 * link messages), or its bytes are not what libhdf5 accepts.
 */
export function symbolTableAt(read: ReadAt, addr: number, sb: SuperblockInfo): SymbolTableAddrs | null {
  const scan = scanHeader(read, addr, sb);
  return scan?.stab && !(scan.types & (1 << MSG_LINFO)) ? scan.stab : null;
}

/** Every message type of the header at `addr` (all its chunks), or null when malformed. */
function scanHeader(read: ReadAt, addr: number, sb: SuperblockInfo): Scan | null {
  const pos = sb.base + addr;
  const head = read(pos, 16);
  if (!head || head.length < 16) return null;
  const scan: Scan = { types: 0, chunks: [] };
  if (head[0] === 1) {
    // version 1: version, reserved, message count (2), reference count (4), chunk size (4), padding (4)
    const size = uint(head, 8, 4)!;
    if (size > MAX_CHUNK_BYTES || size % 8 !== 0) return null;
    const b = read(pos + 16, size);
    if (!b || b.length < size || !scanV1(b, 0, size, scan, sb, sb.base)) return null;
    for (let n = 0; scan.chunks.length; n++) {
      if (n >= MAX_CHUNKS) return null;
      const c = scan.chunks.shift()!;
      const cb = read(c.pos, c.len);
      if (!cb || cb.length < c.len || !scanV1(cb, 0, c.len, scan, sb, sb.base)) return null;
    }
  } else if (head[0] === 0x4f && head[1] === 0x48 && head[2] === 0x44 && head[3] === 0x52) {
    // "OHDR" version 2: flags, optional times (16) and attribute phase change (4), chunk 0 size
    if (head[4] !== 2) return null;
    const flags = head[5]!;
    if (flags & ~0x3f) return null;
    let p = 6 + (flags & 0x20 ? 16 : 0) + (flags & 0x10 ? 4 : 0);
    const sizeBytes = 1 << (flags & 3);
    const pre = read(pos, p + sizeBytes);
    if (!pre || pre.length < p + sizeBytes) return null;
    const size = uint(pre, p, sizeBytes)!;
    p += sizeBytes;
    if (size > MAX_CHUNK_BYTES) return null;
    const total = p + size + 4;
    const b = read(pos, total);
    if (!b || b.length < total || !checksumOk(b, 0, total)) return null;
    const crtOrder = (flags & 0x04) !== 0;
    if (!scanV2(b, p, p + size, crtOrder, scan, sb, sb.base)) return null;
    for (let n = 0; scan.chunks.length; n++) {
      if (n >= MAX_CHUNKS) return null;
      const c = scan.chunks.shift()!;
      const cb = read(c.pos, c.len);
      if (!cb || cb.length < c.len || c.len < 8) return null;
      if (cb[0] !== 0x4f || cb[1] !== 0x43 || cb[2] !== 0x48 || cb[3] !== 0x4b || !checksumOk(cb, 0, c.len)) return null;
      if (!scanV2(cb, 4, c.len - 4, crtOrder, scan, sb, sb.base)) return null;
    }
  } else return null;
  return scan;
}

/** Where a symbol table group keeps its links (the symbol table message, 0x11). */
export interface SymbolTableAddrs {
  /** Address of the root node of the version 1 B-tree (relative to the base). */
  btree: number;
  /** Address of the local heap holding the names (relative to the base). */
  heap: number;
}
