/**
 * hdf5/memory.ts: values of variable-length types between the wire format and HDF5's memory
 * layout (`char *`, `hvl_t`), and hdf5/lib.ts `copyMemory`, which copies them out of C memory
 * (no view per element: test/store/vlen-memory.test.ts). The memory here is built by
 * `wireToMem` (pointers into Buffers it keeps), as for a write, and read back by `memToWire`.
 */
import { expect } from 'chai';
import type { TypeJson } from '../../src/codec/types.js';
import { addressOf, copyMemory } from '../../src/hdf5/lib.js';
import { memToWire, wireToMem } from '../../src/hdf5/memory.js';

const vstr: TypeJson = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' };
const i32: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' };
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
/** A string's wire form: `<u32 LE byte count><bytes>`. */
const s = (bytes: Buffer | string) => {
  const b = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return Buffer.concat([u32(b.length), b]);
};
/** A vlen sequence's wire form: `<u32 LE byte count><elements>`. */
const seq = (...parts: Buffer[]) => {
  const b = Buffer.concat(parts);
  return Buffer.concat([u32(b.length), b]);
};
const ints = (...v: number[]) => Buffer.from(Int32Array.from(v).buffer);

/** [name, type, element count, wire bytes] */
const table: [string, TypeJson, number, Buffer][] = [
  ['vlen strings, empty, long and not UTF-8', vstr, 4, Buffer.concat([s('a'), s(''), s('x'.repeat(5000)), s(Buffer.from([0xff, 0xfe, 0x80]))])],
  ['vlen int32 sequences, one empty', { class: 'H5T_VLEN', base: i32 }, 3, Buffer.concat([seq(ints(1, -2, 3)), seq(), seq(ints(2 ** 31 - 1))])],
  [
    'vlen of vlen strings (the inner form), one empty',
    { class: 'H5T_VLEN', base: vstr },
    3,
    Buffer.concat([seq(s('ab'), s(''), s('z'.repeat(300))), seq(), seq(s(Buffer.from([0xc3])))]),
  ],
  [
    'compound of an int32 and a vlen string',
    { class: 'H5T_COMPOUND', fields: [{ name: 'n', type: i32 }, { name: 's', type: vstr }] },
    2,
    Buffer.concat([ints(7), s('seven'), ints(-1), s('')]),
  ],
];

describe('hdf5/memory: variable-length values copied out of HDF5 memory', () => {
  for (const [name, type, count, wire] of table) {
    it(`${name}: wire -> memory -> the same wire bytes`, () => {
      const { mem, keep } = wireToMem(wire, type, count);
      expect(memToWire(mem, type, count).equals(wire)).to.equal(true);
      expect(keep.length).to.be.greaterThan(0); // the memory pointed into Buffers until here
    });
  }

  it('copyMemory copies C memory into a Buffer at an offset, and refuses what does not fit', () => {
    const src = Buffer.from('hello world');
    const into = Buffer.alloc(16, '.');
    copyMemory(addressOf(src), src.length, into, 3);
    expect(into.toString()).to.equal('...hello world..');
    copyMemory(addressOf(src), 0, into, 16);
    expect(() => copyMemory(addressOf(src), src.length, into, 6)).to.throw(RangeError);
    expect(() => copyMemory(addressOf(src), 1, into, -1)).to.throw(RangeError);
  });
});
