/**
 * Decoding stored chunks outside libhdf5 (issue #29): inflating into given memory
 * (src/codec/inflate.ts: libdeflate and Node's zlib give the same bytes and the same failures),
 * the filter pipeline into reused scratch space (src/store/values/decodeChunks.ts), and the
 * choice of where a read's chunks are decoded (`chooseDecode`, src/store/values/chunked.ts).
 */
import { expect } from 'chai';
import { deflateSync } from 'node:zlib';
import { shuffle, withFletcher32 } from '../../src/codec/filters.js';
import { INFLATER, inflateInto } from '../../src/codec/inflate.js';
import { chooseDecode } from '../../src/store/values/chunked.js';
import { decodeChunk, decodeInto } from '../../src/store/values/decodeChunks.js';
import { slabRuns, forEachChunk, type ChunkRun } from '../../src/selection/chunks.js';

const inflaters = INFLATER === 'libdeflate' ? (['libdeflate', 'zlib'] as const) : (['zlib'] as const);

/** Deterministic bytes: `kind` noise (hardly compressible), pattern (very), or mixed. */
function data(n: number, kind: 'noise' | 'pattern' | 'mixed'): Buffer {
  const b = Buffer.alloc(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = kind === 'pattern' ? i % 7 : kind === 'noise' ? x >>> 24 : i % 4 === 0 ? x >>> 24 : (i >> 10) & 0xff;
  }
  return b;
}

describe('codec: inflateInto', () => {
  it(`this machine inflates with ${INFLATER}`, () => {
    expect(['libdeflate', 'zlib']).to.include(INFLATER);
  });
  for (const using of inflaters) {
    for (const [kind, n, level] of [
      ['noise', 65536, 4],
      ['pattern', 262144, 9],
      ['mixed', 100003, 1],
      ['pattern', 1, 6],
    ] as const) {
      it(`${using}: ${n} bytes of ${kind} data (level ${level}) into a larger buffer, at its start`, () => {
        const plain = data(n, kind);
        const out = Buffer.alloc(n + 100, 0xee);
        expect(inflateInto(deflateSync(plain, { level }), out, using)).to.equal(n);
        expect(out.subarray(0, n).equals(plain)).to.equal(true);
        expect(out[n]).to.equal(0xee);
      });
    }
    it(`${using}: into shared memory, at an offset`, () => {
      const plain = data(5000, 'mixed');
      const out = new Uint8Array(new SharedArrayBuffer(6000), 1000);
      expect(inflateInto(deflateSync(plain), out, using)).to.equal(5000);
      expect(Buffer.from(out).equals(plain)).to.equal(true);
    });
    it(`${using}: data that does not fit, and streams that are not zlib, are errors`, () => {
      const z = deflateSync(data(4096, 'pattern'));
      expect(() => inflateInto(z, Buffer.alloc(4095), using)).to.throw(/decodes to more than 4095 bytes/);
      expect(() => inflateInto(Buffer.from('this is not zlib data'), Buffer.alloc(100), using)).to.throw(Error);
      const cut = z.subarray(0, z.length - 6);
      expect(() => inflateInto(cut, Buffer.alloc(4096), using)).to.throw(Error);
    });
  }
});

describe('decodeChunk and decodeInto: scratch space reused between chunks', () => {
  const filters = [
    { id: 2, cd0: 4 },
    { id: 1, cd0: 4 },
    { id: 3, cd0: 0 },
  ]; // shuffle, deflate, Fletcher-32 (file order)
  const store = (plain: Buffer, mask = 0) => {
    let b: Buffer = plain;
    if (!(mask & 1)) b = shuffle(b, 4);
    if (!(mask & 2)) b = deflateSync(b);
    return withFletcher32(b);
  };

  it('chunks of growing and shrinking sizes decode to their own bytes, one after the other', () => {
    for (const n of [16, 4096, 262144, 64, 65536]) {
      const plain = data(n, 'mixed');
      const got = decodeChunk(store(plain), 0, filters, n, 4);
      expect(got.equals(plain), `${n} bytes`).to.equal(true);
    }
  });

  it('a filter mask skips filters; a wrong size or a bad checksum is an error', () => {
    const plain = data(4096, 'mixed');
    expect(decodeChunk(store(plain, 1), 1, filters, 4096, 4).equals(plain)).to.equal(true);
    expect(decodeChunk(store(plain, 3), 3, filters, 4096, 4).equals(plain)).to.equal(true);
    expect(() => decodeChunk(store(plain), 0, filters, 4100, 4)).to.throw(/4096 bytes instead of 4100/);
    const bad = store(plain);
    bad[bad.length - 1]! ^= 1;
    expect(() => decodeChunk(bad, 0, filters, 4096, 4)).to.throw(/Fletcher32/);
    expect(() => decodeChunk(withFletcher32(Buffer.from('not zlib')), 1, filters, 4096, 4)).to.throw(/^deflate: /);
  });

  it('decodeInto copies each chunk of a 2-D selection into the result, from one stored buffer; the first bad chunk is named', () => {
    // a 6x8 int32 dataset in 3x4 chunks, selection [1:6,2:7]
    const dims = [6, 8];
    const chunkDims = [3, 4];
    const value = (r: number, c: number) => r * 100 + c;
    const slab = { start: [1, 2], step: [1, 1], count: [5, 5] };
    const parts: Buffer[] = [];
    const chunks: { at: number; size: number; mask: number; pick: ChunkRun[]; offset: number[] }[] = [];
    let at = 0;
    forEachChunk(slabRuns(slab, chunkDims), (pick) => {
      const plain = Buffer.alloc(12 * 4);
      for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) plain.writeInt32LE(value(pick[0]!.chunk * 3 + i, pick[1]!.chunk * 4 + j), (i * 4 + j) * 4);
      const s = store(plain);
      parts.push(s);
      chunks.push({ at, size: s.length, mask: 0, pick: [...pick], offset: [pick[0]!.chunk * 3, pick[1]!.chunk * 4] });
      at += s.length;
    });
    expect(dims[0]! * dims[1]!).to.equal(48);
    const out = Buffer.alloc(25 * 4);
    const shape = { itemSize: 4, chunkDims, outShape: slab.count, filters };
    expect(decodeInto(Buffer.concat(parts), chunks, out, shape)).to.equal(undefined);
    for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) expect(out.readInt32LE((i * 5 + j) * 4), `[${i},${j}]`).to.equal(value(1 + i, 2 + j));
    const damaged = Buffer.concat(parts);
    damaged[chunks[2]!.at + 3]! ^= 0xff;
    expect(decodeInto(damaged, chunks, out, shape)).to.match(new RegExp(`stored chunk at \\[${chunks[2]!.offset.join(', ')}\\] of this dataset cannot be decoded`));
  });
});

describe('chooseDecode: where the chunks of a read are decoded', () => {
  const KiB = 1024;
  const base = { chunks: 16, stored: 2048 * KiB, decoded: 4096 * KiB, forced: false, cached: true, idleThreads: 2, spareCores: 2, minSpareCores: 1.5 };
  const cases: [string, Partial<typeof base>, string][] = [
    ['16 chunks of 256 KiB at 2:1, two idle threads, cores to spare', {}, 'threads'],
    ['the same with one idle thread (the other busy with a JSON value)', { idleThreads: 1 }, 'libhdf5'],
    ['the same before the threads have warmed up', { idleThreads: 0 }, 'libhdf5'],
    ['the same with other processes on the cores', { spareCores: 1 }, 'libhdf5'],
    ['the same, told to ignore the load of the machine (parallelChunkSpareCores 0)', { spareCores: 0, minSpareCores: 0 }, 'threads'],
    ['one chunk', { chunks: 1, stored: 128 * KiB, decoded: 256 * KiB }, 'libhdf5'],
    ['256 small chunks (8 KiB stored each)', { chunks: 256, stored: 2048 * KiB }, 'libhdf5'],
    ['64 chunks of 32 KiB stored (below 48 KiB each)', { chunks: 64, stored: 2048 * KiB }, 'libhdf5'],
    ['too few stored bytes to pay for the hand-off', { chunks: 2, stored: 200 * KiB, decoded: 512 * KiB }, 'libhdf5'],
    ['compressed 60:1, cache available', { stored: 68 * KiB }, 'main'],
    ['compressed 60:1, no cache (no cache scope)', { stored: 68 * KiB, cached: false }, 'libhdf5'],
    ['compressed 60:1, threads busy: still main', { stored: 68 * KiB, idleThreads: 0, spareCores: 0 }, 'main'],
    ['forced (parallelChunkMinBytes 0): threads whatever else', { forced: true, stored: 68 * KiB, idleThreads: 0, spareCores: 0, chunks: 1 }, 'threads'],
  ];
  for (const [name, r, want] of cases) it(`${name}: ${want}`, () => expect(chooseDecode({ ...base, ...r })).to.equal(want));
});
