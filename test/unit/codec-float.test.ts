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
import { rng } from '../helpers/random.js';

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

describe('codec/float float32 edge cases (table, each also against the reference search)', () => {
  const bitsOf = (v: number) => {
    f32[0] = v;
    return u32[0];
  };
  // [why, value (rounded to float32), expected text]
  const cases: [string, number, string][] = [
    ['exact tie between two 8-digit candidates: the larger', 0.216796875, '0.21679688'],
    ['exact tie, negative', -319.765625, '-319.76563'],
    ['exact tie (typical magnitude)', 473.890625, '473.89063'],
    ['exact tie (typical magnitude)', 167.265625, '167.26563'],
    ['interval end on an integer of the digit window (exact check)', 4195843.5, '4195843.5'],
    ['interval end on an integer of the digit window (exact check)', 4199803, '4199803'],
    ['interval end near an integer of the digit window', 0.09036187082529068, '0.09036187'],
    ['interval end near an integer of the digit window', 1.660921795960456e-30, '1.6609218e-30'],
    ['interval end near an integer of the digit window', 2.674850341222168e-10, '2.6748503e-10'],
    ['smallest subnormal', fromBits(1), '1e-45'],
    ['second subnormal', fromBits(2), '3e-45'],
    ['middle subnormal (power of two)', fromBits(0x400000), '5.877472e-39'],
    ['largest subnormal', fromBits(0x7fffff), '1.1754942e-38'],
    ['smallest normal (power of two, symmetric interval)', fromBits(0x800000), '1.1754944e-38'],
    ['smallest normal + 1 ulp', fromBits(0x800001), '1.1754945e-38'],
    ['largest finite', fromBits(0x7f7fffff), '3.4028235e+38'],
    ['largest finite - 1 ulp', fromBits(0x7f7ffffe), '3.4028233e+38'],
    ['power of two: narrower interval below', 0.5, '0.5'],
    ['just below a power of two', fromBits(bitsOf(1) - 1), '0.99999994'],
    ['2^23: last power of two with a fraction below it', 8388608, '8388608'],
    ['just below 2^23', 8388607.5, '8388607.5'],
    ['2^24: first integer gap above', 16777216, '16777216'],
    ['2^64: trailing zeros in fixed notation', 18446744073709552000, '18446744000000000000'],
    ['2^66', 73786976294838210000, '73786980000000000000'],
    ['2^70: exponential notation', 1.1805916207174113e21, '1.1805916e+21'],
    ['just below 2^70: 9 digits', fromBits(bitsOf(1.1805916207174113e21) - 1), '1.18059155e+21'],
    ['2^127', 1.7014118346046923e38, '1.7014118e+38'],
    ['1e-7: exponential below', 1e-7, '1e-7'],
    ['float32 just below 1e-7', fromBits(bitsOf(1e-7) - 1), '9.9999994e-8'],
    ['float32 just above 1e-7', fromBits(bitsOf(1e-7) + 1), '1.0000001e-7'],
    ['1e-6: fixed notation from here', 1e-6, '0.000001'],
    ['float32 just below 1e-6', fromBits(bitsOf(1e-6) - 1), '9.999999e-7'],
    ['1e20: fixed notation', 1e20, '100000000000000000000'],
    ['float32 just above 1e20', fromBits(bitsOf(1e20) + 1), '100000010000000000000'],
    ['float32 just below 1e21: fixed', fromBits(bitsOf(1e21) - 1), '999999950000000000000'],
    ['1e21: exponential from here', 1e21, '1e+21'],
    ['float32 just above 1e21', fromBits(bitsOf(1e21) + 1), '1.0000001e+21'],
    ['zero', 0, '0'],
    ['negative zero', -0, '-0'],
  ];
  for (const [why, x, want] of cases) {
    it(`${why}: ${x} -> ${want}`, () => {
      const v = Math.fround(x);
      expect(float32ToStringSlow(v)).to.equal(want);
      expect(float32ToString(v)).to.equal(want);
      expect(valueToJson(Buffer.from(new Float32Array([v]).buffer), F32, [])).to.equal(want);
      const neg = want.startsWith('-') ? want.slice(1) : '-' + want;
      expect(float32ToString(-v)).to.equal(neg);
      expect(valueToJson(Buffer.from(new Float32Array([-v]).buffer), F32, [])).to.equal(neg);
      const be = Buffer.alloc(4);
      be.writeFloatBE(v);
      expect(valueToJson(be, parseType('H5T_IEEE_F32BE'), [])).to.equal(want);
    });
  }
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
