/**
 * HDF5 memory layout <-> binary wire format (wire-reference 3.5).
 *
 * The memory type of every read and write is `createType(typeJson)`: packed compounds, numbers
 * in the type's own byte order. For types without variable-length parts or references that
 * layout *is* the wire layout, so values go straight from `H5Dread` to the socket. Otherwise
 * this module converts element by element:
 * - variable-length strings: `char *` in memory, `<u32 LE byte count><bytes>` on the wire;
 * - vlen sequences: `hvl_t {size_t len; void *p}` in memory, `<u32 LE byte count><base values>`
 *   (for a variable-length base, h5store's inner form: the count of the bytes of the elements
 *   that follow, each in its own form; codec/values.ts `nestedVlenCodec`);
 * - object references: 8-byte `hobj_ref_t` (the target's address) in memory, 48 NUL-padded ASCII
 *   bytes (`groups/g-...`) on the wire, mapped by a `RefCodec` that the store supplies.
 */
import { REFERENCE_SIZE, type TypeJson, isVariableLength, typeSize } from '../codec/types.js';
import { badRequest, notImplemented } from '../errors.js';
import { addressOf, copyMemory, cStringLength } from './lib.js';

/** Maps object references between addresses and their wire strings (`datasets/d-...`). */
export interface RefCodec {
  /** Wire string for the object at `addr` (`''` for a null reference). */
  toWire(addr: bigint): string;
  /** Address for a wire string (`0n` for `''`); throws BadRequest for unknown/forged ids. */
  fromWire(s: string): bigint;
  /**
   * Region references: the JSON text of a libhdf5 `hdset_reg_ref_t` (`''` for a null
   * reference), and back (throws BadRequest for unknown datasets and selections out of bounds).
   */
  regionToWire?(ref: Buffer): string;
  regionFromWire?(json: string): Buffer;
}

/** Bytes of a region reference in memory (`hdset_reg_ref_t`: heap address and index). */
export const REGION_REF_MEM_SIZE = 12;


const BASE_BYTES = /(8|16|32|64)(LE|BE)$/;
function baseBytes(base: string): number {
  const m = BASE_BYTES.exec(base);
  if (!m) throw badRequest(`Invalid base ${base}`);
  return Number(m[1]) / 8;
}

const memSizeCache = new WeakMap<object, number>();
/** Bytes of one element in HDF5 memory (the size of `createType(t)`). */
export function memSize(t: TypeJson): number {
  const cached = memSizeCache.get(t);
  if (cached !== undefined) return cached;
  let n: number;
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
    case 'H5T_BITFIELD':
      n = baseBytes(t.base);
      break;
    case 'H5T_STRING':
      n = t.length === 'H5T_VARIABLE' ? 8 : t.length;
      break;
    case 'H5T_OPAQUE':
      n = t.size;
      break;
    case 'H5T_REFERENCE':
      n = t.base === 'H5T_STD_REF_OBJ' ? 8 : 12;
      break;
    case 'H5T_ENUM':
      n = memSize(t.base);
      break;
    case 'H5T_VLEN':
      n = 16;
      break;
    case 'H5T_ARRAY':
      n = t.dims.reduce((a, b) => a * b, 1) * memSize(t.base);
      break;
    case 'H5T_COMPOUND':
      n = t.fields.reduce((a, f) => a + memSize(f.type), 0);
      break;
  }
  memSizeCache.set(t, n);
  return n;
}

const indirectCache = new WeakMap<object, boolean>();
/** True when memory and wire layouts differ (vlen parts or references somewhere inside). */
export function hasIndirect(t: TypeJson): boolean {
  const cached = indirectCache.get(t);
  if (cached !== undefined) return cached;
  let r: boolean;
  switch (t.class) {
    case 'H5T_STRING':
      r = t.length === 'H5T_VARIABLE';
      break;
    case 'H5T_VLEN':
    case 'H5T_REFERENCE':
      r = true;
      break;
    case 'H5T_ARRAY':
    case 'H5T_ENUM':
      r = hasIndirect(t.base);
      break;
    case 'H5T_COMPOUND':
      r = t.fields.some((f) => hasIndirect(f.type));
      break;
    default:
      r = false;
  }
  indirectCache.set(t, r);
  return r;
}

/** A byte buffer that grows by doubling. */
class Sink {
  buf: Buffer;
  pos = 0;
  constructor(initial: number) {
    this.buf = Buffer.allocUnsafe(Math.max(64, initial));
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let len = this.buf.length * 2;
    while (len < this.pos + n) len *= 2;
    const nb = Buffer.allocUnsafe(len);
    this.buf.copy(nb, 0, 0, this.pos);
    this.buf = nb;
  }
  put(src: Buffer, start = 0, end = src.length): void {
    const n = end - start;
    this.ensure(n);
    src.copy(this.buf, this.pos, start, end);
    this.pos += n;
  }
  /** Append `n` bytes of C memory at `ptr`. */
  copyFrom(ptr: bigint, n: number): void {
    this.ensure(n);
    copyMemory(ptr, n, this.buf, this.pos);
    this.pos += n;
  }
  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }
  done(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

function refToWire(mem: Buffer, off: number, t: TypeJson & { class: 'H5T_REFERENCE' }, refs: RefCodec | undefined, out: Sink): void {
  if (t.base === 'H5T_STD_REF_DSETREG') {
    const ref = mem.subarray(off, off + REGION_REF_MEM_SIZE);
    if (!ref.some((b) => b !== 0)) return out.u32(0);
    if (!refs?.regionToWire) throw notImplemented('Region references cannot be read here');
    const text = Buffer.from(refs.regionToWire(Buffer.from(ref)), 'utf8');
    out.u32(text.length);
    out.put(text);
    return;
  }
  const addr = mem.readBigUInt64LE(off);
  const s = addr === 0n || addr === 0xffffffffffffffffn || !refs ? '' : refs.toWire(addr);
  out.ensure(REFERENCE_SIZE);
  out.buf.fill(0, out.pos, out.pos + REFERENCE_SIZE);
  out.buf.write(s, out.pos, REFERENCE_SIZE, 'latin1');
  out.pos += REFERENCE_SIZE;
}

function elemToWire(mem: Buffer, off: number, t: TypeJson, refs: RefCodec | undefined, out: Sink): void {
  if (!hasIndirect(t)) {
    out.put(mem, off, off + memSize(t));
    return;
  }
  switch (t.class) {
    case 'H5T_STRING': {
      // copied straight from libhdf5's memory: a view of each string would hold native memory
      // until the event loop turns (lib.ts copyMemory)
      const ptr = mem.readBigUInt64LE(off);
      const n = cStringLength(ptr);
      out.u32(n);
      out.copyFrom(ptr, n);
      return;
    }
    case 'H5T_VLEN': {
      const len = Number(mem.readBigUInt64LE(off));
      const ptr = mem.readBigUInt64LE(off + 8);
      if (len === 0 || ptr === 0n) {
        out.u32(0);
        return;
      }
      const bsize = memSize(t.base);
      if (!hasIndirect(t.base)) {
        out.u32(len * bsize);
        out.copyFrom(ptr, len * bsize);
        return;
      }
      const data = Buffer.allocUnsafe(len * bsize);
      copyMemory(ptr, data.length, data);
      if (isVariableLength(t.base)) {
        // h5store's inner form (codec/values.ts nestedVlenCodec): the byte count of the
        // elements, written once they are
        out.u32(0);
        const at = out.pos;
        for (let i = 0; i < len; i++) elemToWire(data, i * bsize, t.base, refs, out);
        out.buf.writeUInt32LE(out.pos - at, at - 4);
        return;
      }
      out.u32(len * typeSize(t.base));
      for (let i = 0; i < len; i++) elemToWire(data, i * bsize, t.base, refs, out);
      return;
    }
    case 'H5T_REFERENCE':
      refToWire(mem, off, t, refs, out);
      return;
    case 'H5T_ARRAY': {
      const n = t.dims.reduce((a, b) => a * b, 1);
      const bsize = memSize(t.base);
      for (let i = 0; i < n; i++) elemToWire(mem, off + i * bsize, t.base, refs, out);
      return;
    }
    case 'H5T_ENUM':
      elemToWire(mem, off, t.base, refs, out);
      return;
    case 'H5T_COMPOUND': {
      let o = off;
      for (const f of t.fields) {
        elemToWire(mem, o, f.type, refs, out);
        o += memSize(f.type);
      }
      return;
    }
    default:
      out.put(mem, off, off + memSize(t));
  }
}

/**
 * Convert `count` elements of HDF5 memory layout to the wire format. The memory must still hold
 * libhdf5's vlen pointers (reclaim after this call).
 */
export function memToWire(mem: Buffer, t: TypeJson, count: number, refs?: RefCodec): Buffer {
  const size = memSize(t);
  const out = new Sink(count * (isVariableLength(t) ? 16 : typeSize(t)));
  for (let i = 0; i < count; i++) elemToWire(mem, i * size, t, refs, out);
  return out.done();
}

const EMPTY_CSTRING = Buffer.alloc(1);

/** Reads wire bytes with bounds checks (a short body is a client error). */
class WireReader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  need(n: number): void {
    if (this.pos + n > this.buf.length) {
      throw badRequest(`Binary data too short: needed ${this.pos + n} bytes, got ${this.buf.length}`);
    }
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  take(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

function elemFromWire(r: WireReader, mem: Buffer, off: number, t: TypeJson, refs: RefCodec | undefined, keep: Buffer[]): void {
  if (!hasIndirect(t)) {
    const n = memSize(t);
    r.take(n).copy(mem, off);
    return;
  }
  switch (t.class) {
    case 'H5T_STRING': {
      const n = r.u32();
      const bytes = r.take(n);
      if (bytes.indexOf(0) >= 0) throw badRequest('Variable-length strings cannot contain NUL bytes');
      let c = EMPTY_CSTRING;
      if (n > 0) {
        c = Buffer.alloc(n + 1);
        bytes.copy(c);
        keep.push(c);
      }
      mem.writeBigUInt64LE(addressOf(c), off);
      return;
    }
    case 'H5T_VLEN': {
      const nbytes = r.u32();
      if (nbytes === 0) {
        mem.writeBigUInt64LE(0n, off);
        mem.writeBigUInt64LE(0n, off + 8);
        return;
      }
      const bsize = memSize(t.base);
      if (isVariableLength(t.base)) {
        // h5store's inner form (codec/values.ts nestedVlenCodec): elements until `nbytes` are used
        const inner = new WireReader(r.take(nbytes));
        const elems: Buffer[] = [];
        while (inner.pos < nbytes) {
          const at = inner.pos;
          const e = Buffer.alloc(bsize);
          elemFromWire(inner, e, 0, t.base, refs, keep);
          if (inner.pos === at) throw badRequest('Invalid binary data: an element of a variable-length sequence takes no bytes');
          elems.push(e);
        }
        const data = Buffer.alloc(elems.length * bsize);
        elems.forEach((e, i) => e.copy(data, i * bsize));
        keep.push(data);
        mem.writeBigUInt64LE(BigInt(elems.length), off);
        mem.writeBigUInt64LE(addressOf(data), off + 8);
        return;
      }
      const wsize = typeSize(t.base);
      if (nbytes % wsize !== 0) throw badRequest(`vlen element of ${nbytes} bytes is not a multiple of its base size ${wsize}`);
      const len = nbytes / wsize;
      const data = Buffer.alloc(len * bsize);
      for (let i = 0; i < len; i++) elemFromWire(r, data, i * bsize, t.base, refs, keep);
      keep.push(data);
      mem.writeBigUInt64LE(BigInt(len), off);
      mem.writeBigUInt64LE(addressOf(data), off + 8);
      return;
    }
    case 'H5T_REFERENCE': {
      if (t.base === 'H5T_STD_REF_DSETREG') {
        const n = r.u32();
        const text = r.take(n).toString('utf8');
        if (n === 0) mem.fill(0, off, off + REGION_REF_MEM_SIZE);
        else if (!refs?.regionFromWire) throw notImplemented('Region references cannot be written here');
        else refs.regionFromWire(text).copy(mem, off);
        return;
      }
      const raw = r.take(REFERENCE_SIZE);
      const end = raw.indexOf(0);
      const s = raw.toString('latin1', 0, end < 0 ? REFERENCE_SIZE : end);
      const addr = s === '' ? 0n : refs ? refs.fromWire(s) : 0n;
      mem.writeBigUInt64LE(addr, off);
      return;
    }
    case 'H5T_ARRAY': {
      const n = t.dims.reduce((a, b) => a * b, 1);
      const bsize = memSize(t.base);
      for (let i = 0; i < n; i++) elemFromWire(r, mem, off + i * bsize, t.base, refs, keep);
      return;
    }
    case 'H5T_ENUM':
      elemFromWire(r, mem, off, t.base, refs, keep);
      return;
    case 'H5T_COMPOUND': {
      let o = off;
      for (const f of t.fields) {
        elemFromWire(r, mem, o, f.type, refs, keep);
        o += memSize(f.type);
      }
      return;
    }
  }
}

/**
 * Convert `count` wire elements to HDF5 memory layout for `H5Dwrite`/`H5Awrite`. `keep` holds
 * the buffers that the memory's pointers refer to: keep it alive until the write returns.
 * @throws H5StoreError BadRequest when the wire data is shorter or longer than `count` elements.
 */
export function wireToMem(wire: Buffer, t: TypeJson, count: number, refs?: RefCodec): { mem: Buffer; keep: Buffer[] } {
  if (!hasIndirect(t)) {
    const need = count * memSize(t);
    if (wire.length !== need) throw badRequest(`Binary data is ${wire.length} bytes, expected ${need} (${count} elements)`);
    return { mem: wire, keep: [] };
  }
  const mem = Buffer.alloc(count * memSize(t));
  const keep: Buffer[] = [];
  const r = new WireReader(wire);
  const size = memSize(t);
  for (let i = 0; i < count; i++) elemFromWire(r, mem, i * size, t, refs, keep);
  if (r.pos !== wire.length) {
    throw badRequest(`Binary data has ${wire.length - r.pos} bytes more than ${count} elements need`);
  }
  return { mem, keep };
}
