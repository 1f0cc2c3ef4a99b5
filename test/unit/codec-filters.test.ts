/**
 * The pure filter codecs of the parallel chunk reads (src/codec/filters.ts) and the chunk
 * geometry (src/selection/chunks.ts), table-driven. Fletcher-32 expectations are the checksums
 * libhdf5 1.10.8 stored (h5py `fletcher32=True`, `read_direct_chunk`).
 */
import { expect } from 'chai';
import { fletcher32, shuffle, stripFletcher32, unshuffle, withFletcher32 } from '../../src/codec/filters.js';
import { type Slab, chunkCount, copyChunkPart, dimRuns, forEachChunk, slabRuns } from '../../src/selection/chunks.js';

const bytes = (n: number, f: (i: number) => number) => Uint8Array.from({ length: n }, (_, i) => f(i) & 0xff);

describe('codec: unshuffle', () => {
  const cases: { name: string; shuffled: number[]; size: number; plain: number[] }[] = [
    { name: '2 elements of 4 bytes', shuffled: [1, 5, 2, 6, 3, 7, 4, 8], size: 4, plain: [1, 2, 3, 4, 5, 6, 7, 8] },
    { name: '3 elements of 2 bytes', shuffled: [1, 3, 5, 2, 4, 6], size: 2, plain: [1, 2, 3, 4, 5, 6] },
    { name: '2 elements of 8 bytes', shuffled: [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15], size: 8, plain: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] },
    { name: '3 elements of 3 bytes (generic loop)', shuffled: [1, 4, 7, 2, 5, 8, 3, 6, 9], size: 3, plain: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
    { name: 'trailing bytes kept as they are', shuffled: [1, 3, 2, 4, 99], size: 2, plain: [1, 2, 3, 4, 99] },
    { name: 'element size 1: unchanged', shuffled: [5, 6, 7], size: 1, plain: [5, 6, 7] },
    { name: 'one element: unchanged', shuffled: [1, 2, 3, 4], size: 4, plain: [1, 2, 3, 4] },
    { name: 'shorter than one element: unchanged', shuffled: [1, 2], size: 4, plain: [1, 2] },
    { name: 'empty', shuffled: [], size: 4, plain: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect([...unshuffle(Uint8Array.from(c.shuffled), c.size)]).to.deep.equal(c.plain);
    });
  }
  for (const size of [2, 3, 4, 8, 16]) {
    it(`round trip with shuffle, element size ${size}, 1000 elements + 3 bytes`, () => {
      const plain = bytes(size * 1000 + 3, (i) => i * 31 + (i >> 8));
      const s = shuffle(plain, size);
      expect(Buffer.from(s).equals(Buffer.from(plain))).to.equal(false);
      expect(unshuffle(s, size).equals(Buffer.from(plain))).to.equal(true);
      const into = Buffer.alloc(plain.length);
      expect(unshuffle(s, size, into)).to.equal(into);
      expect(into.equals(Buffer.from(plain))).to.equal(true);
    });
  }
});

describe('codec: unshuffle, word-wise and byte-wise paths agree with a naive reference', () => {
  const naive = (src: Uint8Array, size: number) => {
    const n = Math.floor(src.length / size);
    const out = Buffer.from(src);
    for (let i = 0; i < n; i++) for (let b = 0; b < size; b++) out[i * size + b] = src[b * n + i]!;
    return out;
  };
  for (const size of [2, 4, 8, 12, 16, 3, 6]) {
    for (const n of [4, 1024, 1026]) {
      it(`element size ${size}, ${n} elements, aligned and misaligned buffers`, () => {
        const shuffled = bytes(size * n, (i) => i * 131 + (i >> 7));
        const want = naive(shuffled, size);
        const aligned = new Uint8Array(new ArrayBuffer(shuffled.length));
        aligned.set(shuffled);
        expect(unshuffle(aligned, size).equals(want), 'aligned').to.equal(true);
        const mis = new Uint8Array(new ArrayBuffer(shuffled.length + 1), 1);
        mis.set(shuffled);
        expect(unshuffle(mis, size).equals(want), 'misaligned source').to.equal(true);
        const into = Buffer.from(new ArrayBuffer(shuffled.length + 2), 2, shuffled.length);
        expect(unshuffle(aligned, size, into).equals(want), 'misaligned destination').to.equal(true);
      });
    }
  }
});

describe('codec: fletcher32 (as libhdf5 1.10.8 stores it)', () => {
  const cases: { name: string; data: Uint8Array; sum: number }[] = [
    { name: 'one byte 0xab', data: Uint8Array.from([0xab]), sum: 0xab00ab00 },
    { name: 'two bytes 01 02', data: Uint8Array.from([1, 2]), sum: 0x01020102 },
    { name: 'three bytes ff ff ff (odd length)', data: Uint8Array.from([255, 255, 255]), sum: 0xff00ff00 },
    { name: '720 bytes of 0xff (one block of 360 words)', data: bytes(720, () => 255), sum: 0xffffffff },
    { name: '722 bytes of 0xff', data: bytes(722, () => 255), sum: 0xffffffff },
    { name: '1001 bytes i*7 mod 256', data: bytes(1001, (i) => i * 7), sum: 0x8ae494e7 },
    { name: '65536 bytes of 0xff (32-bit wrap-around)', data: bytes(65536, () => 255), sum: 0xffffffff },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(fletcher32(c.data)).to.equal(c.sum);
      const stored = withFletcher32(c.data);
      expect(stored.readUInt32LE(c.data.length)).to.equal(c.sum);
      expect(stripFletcher32(stored)?.equals(Buffer.from(c.data))).to.equal(true);
    });
  }
  it('accepts the checksum with the bytes of each half swapped (files before 1.6.3)', () => {
    const data = bytes(1001, (i) => i * 7);
    const stored = withFletcher32(data);
    const s = stored.readUInt32LE(data.length);
    stored.writeUInt32LE((((s & 0x00ff00ff) << 8) | ((s >>> 8) & 0x00ff00ff)) >>> 0, data.length);
    expect(stripFletcher32(stored)?.length).to.equal(1001);
  });
  it('refuses a changed byte, a changed checksum, or fewer than 4 bytes', () => {
    const data = bytes(100, (i) => i);
    const bad = withFletcher32(data);
    bad[10]! ^= 1;
    expect(stripFletcher32(bad)).to.equal(undefined);
    const bad2 = withFletcher32(data);
    bad2[101]! ^= 0x80;
    expect(stripFletcher32(bad2)).to.equal(undefined);
    expect(stripFletcher32(Buffer.from([1, 2, 3]))).to.equal(undefined);
  });
});

describe('selection: chunk runs and copies', () => {
  const runCases: { name: string; args: [number, number, number, number]; runs: [number, number, number, number][] }[] = [
    // [chunk, inStart, count, outStart]
    { name: 'aligned, two chunks', args: [0, 1, 8, 4], runs: [[0, 0, 4, 0], [1, 0, 4, 4]] },
    { name: 'unaligned start and end', args: [3, 1, 6, 4], runs: [[0, 3, 1, 0], [1, 0, 4, 1], [2, 0, 1, 5]] },
    { name: 'step 3 over chunks of 4', args: [1, 3, 5, 4], runs: [[0, 1, 1, 0], [1, 0, 2, 1], [2, 2, 1, 3], [3, 1, 1, 4]] },
    { name: 'step larger than the chunk skips chunks', args: [0, 10, 3, 4], runs: [[0, 0, 1, 0], [2, 2, 1, 1], [5, 0, 1, 2]] },
    { name: 'nothing selected', args: [5, 1, 0, 4], runs: [] },
  ];
  for (const c of runCases) {
    it(`dimRuns: ${c.name}`, () => {
      const runs = dimRuns(...c.args);
      expect(runs.map((r) => [r.chunk, r.inStart, r.count, r.outStart])).to.deep.equal(c.runs);
      expect(runs.every((r) => r.step === c.args[1])).to.equal(true);
    });
  }

  /** Naive reference: element by element, through dataset coordinates. */
  function reference(data: Uint32Array, dims: number[], slab: Slab): number[] {
    const out: number[] = [];
    const rank = dims.length;
    const idx = new Array<number>(rank).fill(0);
    const total = slab.count.reduce((a, b) => a * b, 1);
    for (let n = 0; n < total; n++) {
      let off = 0;
      for (let d = 0; d < rank; d++) off = off * dims[d]! + slab.start[d]! + idx[d]! * slab.step[d]!;
      out.push(data[off]!);
      for (let d = rank - 1; d >= 0; d--) {
        if (++idx[d]! < slab.count[d]!) break;
        idx[d] = 0;
      }
    }
    return out;
  }

  const copyCases: { name: string; dims: number[]; chunks: number[]; slab: Slab }[] = [
    { name: '1-D, edge chunk', dims: [10], chunks: [4], slab: { start: [1], step: [1], count: [9] } },
    { name: '1-D, step 3', dims: [20], chunks: [4], slab: { start: [2], step: [3], count: [6] } },
    { name: '2-D, aligned', dims: [8, 8], chunks: [4, 4], slab: { start: [0, 0], step: [1, 1], count: [8, 8] } },
    { name: '2-D, unaligned with edge chunks', dims: [9, 7], chunks: [4, 3], slab: { start: [1, 2], step: [1, 1], count: [8, 5] } },
    { name: '2-D, steps in both dimensions', dims: [9, 11], chunks: [2, 4], slab: { start: [0, 1], step: [2, 3], count: [5, 4] } },
    { name: '3-D, mixed', dims: [5, 6, 7], chunks: [2, 4, 3], slab: { start: [1, 0, 2], step: [1, 2, 2], count: [4, 3, 3] } },
    { name: '3-D, one element', dims: [5, 6, 7], chunks: [2, 4, 3], slab: { start: [4, 5, 6], step: [1, 1, 1], count: [1, 1, 1] } },
  ];
  for (const c of copyCases) {
    it(`copyChunkPart matches element-by-element: ${c.name}`, () => {
      const total = c.dims.reduce((a, b) => a * b, 1);
      const data = Uint32Array.from({ length: total }, (_, i) => i * 2654435761);
      const rank = c.dims.length;
      const runs = slabRuns(c.slab, c.chunks);
      const outCount = c.slab.count.reduce((a, b) => a * b, 1);
      const out = new Uint8Array(outCount * 4);
      let visited = 0;
      forEachChunk(runs, (pick) => {
        visited++;
        // the chunk, stored whole (edge chunks padded), as libhdf5 stores it
        const chunkLen = c.chunks.reduce((a, b) => a * b, 1);
        const chunk = new Uint32Array(chunkLen);
        for (let k = 0; k < chunkLen; k++) {
          let rem = k;
          let off = 0;
          let inside = true;
          const coord = new Array<number>(rank);
          for (let d = rank - 1; d >= 0; d--) {
            coord[d] = (rem % c.chunks[d]!) + pick[d]!.chunk * c.chunks[d]!;
            rem = Math.floor(rem / c.chunks[d]!);
          }
          for (let d = 0; d < rank; d++) {
            if (coord[d]! >= c.dims[d]!) inside = false;
            off = off * c.dims[d]! + coord[d]!;
          }
          chunk[k] = inside ? data[off]! : 0xdeadbeef;
        }
        copyChunkPart(new Uint8Array(chunk.buffer), out, pick, c.chunks, c.slab.count, 4);
      });
      expect(visited).to.equal(chunkCount(runs));
      expect(Array.from(new Uint32Array(out.buffer))).to.deep.equal(reference(data, c.dims, c.slab));
    });
  }
});
