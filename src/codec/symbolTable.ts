/**
 * The links of an "old-style" group (a symbol table: a version 1 B-tree of symbol table nodes
 * whose names live in a local heap), read from the file's bytes, pure: what libhdf5 1.10's
 * `H5Literate` by name in increasing order gives for such a group (`H5G__stab_iterate` walks
 * the B-tree's children left to right, `H5G__node_iterate` each node's entries in order), in
 * one pass over a few hundred small reads instead of one koffi callback per link (issue #9
 * target 7: h5py writes every group this way unless asked for track_order or libver='latest').
 *
 * Format: HDF5 File Format Specification version 3.0, sections III.A.1 (version 1 B-trees,
 * node type 0: group nodes, keys of "size of lengths" bytes), III.B (symbol table nodes,
 * "SNOD"), III.C (symbol table entries: the link name offset is "size of lengths" bytes as
 * libhdf5's `H5G_ent_decode` reads it, then the object header address, the cache type and 16
 * bytes of scratch pad), III.D (local heaps, "HEAP"), IV.A.2.r (the symbol table message).
 * Cache type 0 is a hard link whose target has nothing cached, 1 a hard link to a group (the
 * scratch pad caches the target's B-tree and heap: "this implies that the symbol table entry
 * refers to another group"), 2 a soft link (its value is at the heap offset in the scratch pad).
 *
 * Whenever the bytes are not exactly what libhdf5 would read (a bad signature or version, a node
 * of the wrong level or type, a name or value outside the heap or without its NUL, a name that
 * is not UTF-8, an unknown cache type, a loop, more nodes than the bounds below), the decoder
 * answers `null` and the caller asks libhdf5: an answer here is never different from libhdf5's.
 */
import { isAscii } from 'node:buffer';
import type { ReadAt, SuperblockInfo, SymbolTableAddrs } from './objectHeader.js';
import { MAX_CHUNK_BYTES, uint } from './objectHeader.js';

export type { SymbolTableAddrs } from './objectHeader.js';

/**
 * One link of a symbol table group, shaped as the store's link records (hdf5/objects.ts
 * `LinkRecord`): a hard link with its target's object header address, or a soft link with the
 * path it holds. Symbol tables hold no other links and no creation order.
 */
export type SymbolLink = { name: string; cls: 'H5L_TYPE_HARD'; addr: bigint } | { name: string; cls: 'H5L_TYPE_SOFT'; path: string };

/** The links of a symbol table group. */
export interface SymbolTable {
  links: SymbolLink[];
  /**
   * Target addresses of the entries that cache a symbol table (cache type 1): the spec says such
   * an entry "refers to another group", so their kinds need no header read.
   */
  groups: number[];
}

/** Largest local heap data segment read (names of ~500,000 links; larger: libhdf5 decides). */
export const MAX_HEAP_BYTES = 32 * 1024 * 1024;
/** Most B-tree nodes and symbol table nodes one group may have here. */
const MAX_NODES = 1 << 20;
/** Deepest B-tree accepted (libhdf5's own trees of 2^48 entries are far shallower). */
const MAX_LEVEL = 32;

const CACHE_NONE = 0;
const CACHE_STAB = 1;
const CACHE_SLINK = 2;

/** Exactly `len` bytes at `pos` (in pieces of at most MAX_CHUNK_BYTES), or undefined. */
function readExactly(read: ReadAt, pos: number, len: number): Uint8Array | undefined {
  if (len <= MAX_CHUNK_BYTES) {
    const b = read(pos, len);
    return b && b.length >= len ? (b.length === len ? b : b.subarray(0, len)) : undefined;
  }
  const out = new Uint8Array(len);
  for (let o = 0; o < len; o += MAX_CHUNK_BYTES) {
    const n = Math.min(MAX_CHUNK_BYTES, len - o);
    const b = read(pos + o, n);
    if (!b || b.length < n) return undefined;
    out.set(b.subarray(0, n), o);
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A local heap's data segment. When no byte is above 0x7f it is also kept as one string
 * (`text`): names are then slices of it (V8 shares the characters; no copy per name).
 */
interface Heap {
  data: Uint8Array;
  text?: string;
}

/**
 * The NUL-terminated string at `off` of the heap's data segment, or undefined when it runs past
 * the segment or is not UTF-8 (libhdf5 hands the bytes over as they are; koffi would replace).
 */
function heapString(heap: Heap, off: number): string | undefined {
  const t = heap.text;
  if (t !== undefined) {
    const end = off < t.length ? t.indexOf('\0', off) : -1;
    return end < 0 ? undefined : t.slice(off, end);
  }
  const d = heap.data;
  if (off >= d.length) return undefined;
  const end = d.indexOf(0, off);
  if (end < 0) return undefined;
  try {
    return utf8.decode(d.subarray(off, end));
  } catch {
    return undefined;
  }
}

/**
 * The data segment of the local heap at `addr`, or undefined when the bytes are not a local heap
 * of version 0 (or its segment is larger than MAX_HEAP_BYTES).
 */
function readLocalHeap(read: ReadAt, addr: number, sb: SuperblockInfo): Heap | undefined {
  const { offsets: O, lengths: L } = sb;
  const h = readExactly(read, sb.base + addr, 8 + 2 * L + O);
  if (!h || h[0] !== 0x48 || h[1] !== 0x45 || h[2] !== 0x41 || h[3] !== 0x50 || h[4] !== 0) return undefined;
  const size = uint(h, 8, L);
  const data = uint(h, 8 + 2 * L, O);
  if (size === undefined || data === undefined || size > MAX_HEAP_BYTES) return undefined;
  const bytes = size === 0 ? new Uint8Array(0) : readExactly(read, sb.base + data, size);
  if (!bytes) return undefined;
  // a copy: the reader may reuse its buffer for the next read
  const copy = Buffer.from(bytes);
  return isAscii(copy) ? { data: copy, text: copy.toString('latin1') } : { data: copy };
}

/**
 * The links of the symbol table group whose symbol table message says `stab`, in libhdf5's
 * iteration order (ascending by name, as the B-tree keeps them), or null when these bytes do not
 * decide them (see the module comment).
 * @param read the file's bytes (one read per B-tree node and per symbol table node, one for the
 *   heap header and one per MAX_CHUNK_BYTES of its data segment); the bytes it returns are used
 *   only until the next call (a reader may reuse its buffer)
 */
export function readSymbolTable(read: ReadAt, stab: SymbolTableAddrs, sb: SuperblockInfo): SymbolTable | null {
  const { offsets: O, lengths: L } = sb;
  const heap = readLocalHeap(read, stab.heap, sb);
  if (!heap) return null;
  const out: SymbolLink[] = [];
  const groups: number[] = [];
  const seen = new Set<number>();
  const entrySize = L + O + 24;
  let nodes = 0;

  /** One symbol table node's entries, appended to `out`. @returns false when malformed */
  const leaf = (addr: number): boolean => {
    if (seen.has(addr) || ++nodes > MAX_NODES) return false;
    seen.add(addr);
    const pos = sb.base + addr;
    const h = readExactly(read, pos, 8);
    if (!h || h[0] !== 0x53 || h[1] !== 0x4e || h[2] !== 0x4f || h[3] !== 0x44 || h[4] !== 1) return false;
    const n = h[6]! | (h[7]! << 8);
    if (n === 0) return true;
    const b = readExactly(read, pos + 8, n * entrySize);
    if (!b) return false;
    for (let i = 0, p = 0; i < n; i++, p += entrySize) {
      const nameOff = uint(b, p, L);
      if (nameOff === undefined) return false;
      const name = heapString(heap, nameOff);
      if (name === undefined) return false;
      const cache = (b[p + L + O]! | (b[p + L + O + 1]! << 8) | (b[p + L + O + 2]! << 16) | (b[p + L + O + 3]! << 24)) >>> 0;
      if (cache === CACHE_SLINK) {
        const valueOff = (b[p + L + O + 8]! | (b[p + L + O + 9]! << 8) | (b[p + L + O + 10]! << 16) | (b[p + L + O + 11]! << 24)) >>> 0;
        const soft = heapString(heap, valueOff);
        if (soft === undefined) return false;
        out.push({ name, cls: 'H5L_TYPE_SOFT', path: soft });
      } else if (cache === CACHE_NONE || cache === CACHE_STAB) {
        const target = uint(b, p + L, O);
        if (target === undefined) return false;
        out.push({ name, cls: 'H5L_TYPE_HARD', addr: BigInt(target) });
        if (cache === CACHE_STAB) groups.push(target);
      } else return false;
    }
    return true;
  };

  /** The B-tree node at `addr` of level `level` (undefined: the root, any level). */
  const node = (addr: number, level: number | undefined): boolean => {
    if (seen.has(addr) || ++nodes > MAX_NODES) return false;
    seen.add(addr);
    const pos = sb.base + addr;
    const h = readExactly(read, pos, 8 + 2 * O);
    if (!h || h[0] !== 0x54 || h[1] !== 0x52 || h[2] !== 0x45 || h[3] !== 0x45 || h[4] !== 0) return false;
    const lvl = h[5]!;
    if (lvl > MAX_LEVEL || (level !== undefined && lvl !== level)) return false;
    const used = h[6]! | (h[7]! << 8);
    if (used === 0) return true;
    // key 0, then (child, key) pairs
    const b = readExactly(read, pos + 8 + 2 * O, L + used * (O + L));
    if (!b) return false;
    // the children first: reading them may reuse the bytes of `b`
    const children: number[] = [];
    for (let i = 0; i < used; i++) {
      const child = uint(b, L + i * (O + L), O);
      if (child === undefined) return false;
      children.push(child);
    }
    for (const child of children) if (lvl === 0 ? !leaf(child) : !node(child, lvl - 1)) return false;
    return true;
  };

  return node(stab.btree, undefined) ? { links: out, groups } : null;
}
