import { expect } from 'chai';
import {
  float16ToString,
  float32ToString,
  float32ToStringSlow,
  formatDecimal,
  halfToNumber,
  numberToHalf,
  shortestSlow,
} from '../../src/codec/float.js';
import { valueToJson } from '../../src/codec/json.js';
import { TextSink, writeInt } from '../../src/codec/textsink.js';
import { parseType } from '../../src/codec/types.js';

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const F32 = parseType('H5T_IEEE_F32LE');
const u32 = new Uint32Array(1);
const f32 = new Float32Array(u32.buffer);
const fromBits = (bits: number) => {
  u32[0] = bits;
  return f32[0];
};

/** Check a list of float32 values: both formatters (string and byte writer) agree with the reference. */
function checkAll(values: Float32Array): void {
  const finite = values.filter((v) => Number.isFinite(v));
  const text = valueToJson(Buffer.from(finite.buffer, finite.byteOffset, finite.byteLength), F32, [finite.length]);
  const written = text.slice(1, -1).split(',');
  let mismatches = 0;
  for (let i = 0; i < finite.length; i++) {
    const v = finite[i];
    const want = float32ToStringSlow(v);
    const got = float32ToString(v);
    if (got !== want || written[i] !== want || Math.fround(Number(got)) !== v) {
      if (mismatches++ < 5) expect({ v, got, written: written[i] }).to.deep.equal({ v, got: want, written: want });
    }
  }
  expect(mismatches).to.equal(0);
}

describe('codec/float float32 shortest representation', () => {
  const known: [number, string][] = [
    [0.1, '0.1'],
    [0.2, '0.2'],
    [1 / 3, '0.33333334'],
    [1, '1'],
    [-2.5, '-2.5'],
    [0, '0'],
    [-0, '-0'],
    [16777216, '16777216'],
    [16777217, '16777216'],
    [123456789, '123456790'],
    [1e-7, '1e-7'],
    [1e-6, '0.000001'],
    [1e20, '100000000000000000000'],
    [1e21, '1e+21'],
    [3.4028234663852886e38, '3.4028235e+38'],
    [1.1754943508222875e-38, '1.1754944e-38'],
    [1.401298464324817e-45, '1e-45'],
    [2.802596928649634e-45, '3e-45'],
    [1.5e-45, '1e-45'],
    [65504, '65504'],
    [3.14159265, '3.1415927'],
  ];
  for (const [x, s] of known) {
    it(`${x} -> ${s}`, () => {
      const v = Math.fround(x);
      expect(float32ToString(v)).to.equal(s);
      expect(valueToJson(Buffer.from(new Float32Array([v]).buffer), F32, [])).to.equal(s);
    });
  }

  it('matches the reference search on 300k random bit patterns', function () {
    this.timeout(60000);
    const rand = rng(12345);
    const n = 300000;
    const a = new Float32Array(n);
    const bits = new Uint32Array(a.buffer);
    for (let i = 0; i < n; i++) bits[i] = Math.floor(rand() * 2 ** 32);
    checkAll(a);
  });

  it('matches the reference on 200k random values of typical magnitudes', function () {
    this.timeout(60000);
    const rand = rng(777);
    const n = 200000;
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = (rand() - 0.5) * 10 ** Math.floor(rand() * 12 - 6);
    checkAll(a);
  });

  it('matches the reference at powers of two, powers of ten, integers and their neighbours', function () {
    this.timeout(60000);
    const vals: number[] = [];
    const withNeighbours = (v: number) => {
      f32[0] = v;
      const b = u32[0];
      for (let d = -3; d <= 3; d++) if (b + d >= 0 && b + d < 0x7f800000) vals.push(fromBits(b + d));
    };
    for (let e = -149; e <= 127; e++) withNeighbours(2 ** e);
    for (let e = -45; e <= 38; e++) {
      withNeighbours(Math.fround(10 ** e));
      for (let m = 1; m <= 9; m++) withNeighbours(Math.fround(m * 10 ** e));
    }
    for (let i = 1; i <= 2000; i++) withNeighbours(i);
    for (let i = 0; i < 200; i++) withNeighbours(16777216 + i * 3);
    for (let b = 1; b < 5000; b++) vals.push(fromBits(b)); // smallest subnormals
    for (let b = 0x7f7fffff; b > 0x7f7fffff - 5000; b--) vals.push(fromBits(b)); // largest finite
    checkAll(new Float32Array(vals.concat(vals.map((v) => -v))));
  });
});

describe('codec/float formatDecimal and writeInt', () => {
  it('formatDecimal formats like String(number)', () => {
    const rand = rng(3);
    for (let i = 0; i < 20000; i++) {
      const D = 1 + Math.floor(rand() * 999999999);
      const e = Math.floor(rand() * 60) - 40;
      expect(formatDecimal(D, e)).to.equal(String(Number(`${D}e${e}`)));
    }
  });
  it('writeInt writes safe integers exactly', () => {
    const rand = rng(5);
    const s = new TextSink(16);
    const nums = [0, -1, 9, 10, 99, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53 - 1, -(2 ** 53 - 1), 1e15, 999999999999999];
    for (let i = 0; i < 20000; i++) nums.push(Math.floor((rand() - 0.5) * 2 ** (1 + Math.floor(rand() * 53))));
    for (const n of nums) {
      s.ensure(24);
      writeInt(s, n);
      expect(s.takeAscii()).to.equal(String(n));
    }
  });
});

describe('codec/float half precision', () => {
  it('every finite half survives number -> half -> number', () => {
    for (let h = 0; h < 0x10000; h++) {
      const v = halfToNumber(h);
      if (Number.isNaN(v)) {
        expect((h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0).to.equal(true);
        continue;
      }
      expect(numberToHalf(v)).to.equal(h);
    }
  });
  it('rounds halfway cases to even and overflows to infinity', () => {
    for (let h = 0; h < 0x7bff; h++) {
      const mid = (halfToNumber(h) + halfToNumber(h + 1)) / 2;
      expect(numberToHalf(mid)).to.equal(h % 2 === 0 ? h : h + 1);
    }
    expect(numberToHalf(65519.99)).to.equal(0x7bff);
    expect(numberToHalf(65520)).to.equal(0x7c00);
    expect(numberToHalf(-1e10)).to.equal(0xfc00);
    expect(numberToHalf(2 ** -26)).to.equal(0); // below half the smallest subnormal: ties to even 0
    expect(numberToHalf(2 ** -25 + 2 ** -40)).to.equal(1);
    expect(numberToHalf(NaN) & 0x7c00).to.equal(0x7c00);
  });
  it('float16ToString gives the shortest text that reads back', () => {
    for (let h = 0; h < 0x10000; h++) {
      const v = halfToNumber(h);
      const s = float16ToString(h);
      if (!Number.isFinite(v)) {
        expect(s).to.equal(Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');
        continue;
      }
      expect(numberToHalf(Number(s))).to.equal(h);
      // no shorter precision reads back
      const digits = s.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
      if (digits > 1 && v !== 0) {
        const [m, x] = v.toExponential(digits - 2).split('e');
        const d = Number(m.replace('.', ''));
        for (const c of [d - 1, d, d + 1]) expect(numberToHalf(Number(`${c}e${Number(x) - digits + 2}`))).to.not.equal(h);
      }
    }
    expect(float16ToString(numberToHalf(0.1))).to.equal('0.1');
  });
  it('float16ToString agrees with the reference search', () => {
    for (let h = 0; h < 0x7c00; h++) {
      const v = halfToNumber(h);
      if (v === 0) continue;
      expect(float16ToString(h)).to.equal(String(shortestSlow(v, (y) => halfToNumber(numberToHalf(y)) === v)));
      expect(float16ToString(h | 0x8000)).to.equal('-' + float16ToString(h));
    }
  });
});
