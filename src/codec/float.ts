/**
 * Number formatting and half-precision helpers for the value codec.
 *
 * - float64: the shortest decimal that reads back to the same double (what `String(x)` gives).
 * - float32: the shortest decimal that reads back to the same float32 when parsed as a double and
 *   rounded to float32 (`Math.fround(Number(s)) === v`; this is also what Python clients do:
 *   `json.loads` then `numpy.float32`). So 0.1f prints `0.1`, not `0.10000000149011612`.
 * - float16: the same rule for IEEE half precision (same search, memoised per bit pattern).
 *
 * Negative zero prints as `-0` (Python/HSDS print `-0.0`); non-finite values are the caller's job
 * (wire-reference 0.6: `NaN`, `Infinity`, `-Infinity`, or `null` with `ignore_nan`).
 */

/** Exact powers of ten 10^0 .. 10^22 (all exactly representable as doubles). */
const P10: number[] = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
/** Correctly rounded 10^-j, j = 0..22. */
const INV10: Float64Array = Float64Array.from({ length: 23 }, (_, i) => Number(`1e-${i}`));

/** The double nearest to D * 10^e (D a non-negative integer below 2^53), correctly rounded. */
function decimalToDouble(D: number, e: number): number {
  if (e >= 0) {
    if (e <= 22) return D * P10[e];
  } else if (e >= -22) {
    return D / P10[-e];
  }
  return Number(`${D}e${e}`);
}

/**
 * Shortest decimal (as a number) that `readsBack`, by simple search: for p = 1..17 significant
 * digits, take the nearest p-digit decimal to v and its two p-digit neighbours, keep those that
 * read back, and return the one nearest to v. (The neighbours matter only at powers of two, where
 * the rounding interval is wider above than below.) Slow; for tables and tests.
 */
export function shortestSlow(v: number, readsBack: (y: number) => boolean): number {
  for (let p = 1; p <= 17; p++) {
    const [m, x] = v.toExponential(p - 1).split('e');
    const digits = BigInt(m.replace('.', ''));
    let best: number | undefined;
    for (const d of [digits, digits - 1n, digits + 1n]) {
      const y = Number(`${d}e${Number(x) - p + 1}`);
      // exact ties keep the first (toExponential's round-half-up) candidate
      if (readsBack(y) && (best === undefined || Math.abs(y - v) < Math.abs(best - v) - Math.abs(v) * 1e-15)) best = y;
    }
    if (best !== undefined) return best;
  }
  return v;
}

/** Reference (slow, simple) shortest float32 formatting, for tests (see `shortestSlow`). */
export function float32ToStringSlow(v: number): string {
  if (v === 0) return 1 / v < 0 ? '-0' : '0';
  return String(shortestSlow(v, (y) => Math.fround(y) === v));
}

const ZEROS: string[] = Array.from({ length: 32 }, (_, i) => '0'.repeat(i));

/**
 * Format the decimal D * 10^e (D a positive integer) exactly as `Number.prototype.toString` would
 * format the double nearest to it (ECMA-262 Number::toString): fixed notation for 1e-7 <= x < 1e21,
 * otherwise `d.ddde+X` / `d.ddde-X`.
 */
export function formatDecimal(D: number, e: number): string {
  while (D % 10 === 0) {
    D /= 10;
    e++;
  }
  const digits = String(D);
  const k = digits.length;
  const n = k + e; // position of the decimal point relative to the first digit
  if (k <= n && n <= 21) return digits + ZEROS[n - k];
  if (0 < n && n <= 21) return digits.slice(0, n) + '.' + digits.slice(n);
  if (-6 < n && n <= 0) return '0.' + ZEROS[-n] + digits;
  const x = n - 1;
  const exp = x >= 0 ? 'e+' + x : 'e-' + -x;
  return k === 1 ? digits + exp : digits[0] + '.' + digits.slice(1) + exp;
}

/**
 * Result of the last `float32Digits` call: |v| = digits * 10^exp. (An object rather than exported
 * `let`s: importers capture it once, so hot loops do no live-binding lookups.)
 */
export const float32Result = { digits: 0, exp: 0 };
const R32 = float32Result;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Correctly rounded doubles of 10^s for s in -64..64 (index s + 64). */
const SCALE: number[] = Array.from({ length: 129 }, (_, i) => Number(`1e${i - 64}`));
/** floor(log10(2^(be-127))) for biased float32 exponents be = 1..254. */
const K_EST: number[] = Array.from({ length: 256 }, (_, be) => Math.floor((be - 127) * Math.LOG10E * Math.LN2));
/** Half an ulp of float32 values with biased exponent be (index be; be = 0: subnormals). */
const HALF_ULP: number[] = Array.from({ length: 256 }, (_, be) => 2 ** ((be === 0 ? 1 : be) - 151));
/** Margin (in units of the 9-digit grid, where values are ~1e8..1e9) within which a candidate is verified exactly. */
const EPS = 1e-5;

let vCur = 0;
let kCur = 0;

/** Round-trip target of the current search: float32 (false) or float16 (true). */
let mode16 = false;

/** Exact check: does D * 10^(kCur - 8 + j) read back to vCur (as float32, or as float16)? */
function verify(D: number, j: number): boolean {
  const y = decimalToDouble(D, kCur - 8 + j);
  return mode16 ? halfToNumber(numberToHalf(y)) === vCur : Math.fround(y) === vCur;
}

/** Exactly: is vCur >= (a + 1/2) * 10^(kCur - 8 + j)? (BigInt; only for near-ties) */
function atOrAboveMid(a: number, j: number): boolean {
  f32[0] = vCur;
  const bits = u32[0];
  const be = bits >>> 23;
  const mant = be ? (bits & 0x7fffff) | 0x800000 : bits & 0x7fffff;
  const q = be ? be - 150 : -149;
  const E = j + kCur - 8;
  let L = BigInt(mant) * 2n;
  let R = BigInt(2 * a + 1);
  if (q >= 0) L <<= BigInt(q);
  else R <<= BigInt(-q);
  if (E >= 0) R *= 10n ** BigInt(E);
  else L *= 10n ** BigInt(-E);
  return L >= R;
}

/**
 * Scale from the integer significand of a normal float32 with biased exponent be (index be,
 * 1..254) to its digit window: 2^(be-150) * 10^(8-K_EST[be]), so that t = significand * WIN[be]
 * lies in [1e8, 2e9) (nine or ten integer digits). One rounding of a correctly rounded power of
 * ten: relative error below 2^-51.
 */
const WIN: Float64Array = Float64Array.from({ length: 256 }, (_, be) => (be >= 1 && be <= 254 ? 2 ** (be - 150) * SCALE[72 - K_EST[be]] : 0));

/**
 * Shortest decimal digits of the positive finite float32 `v`: sets `float32Result.digits` (an
 * integer of at most 9 digits, no trailing zeros) and `.exp` so that the decimal digits * 10^exp reads back
 * to v (`Math.fround(Number(...)) === v`), no decimal with fewer significant digits does, and among
 * those of that length it is the nearest to v (ties: the larger, as `toPrecision`).
 * See `float32DigitsBits`.
 */
export function float32Digits(v: number): void {
  f32[0] = v;
  float32DigitsBits(u32[0]);
}

/**
 * `float32Digits` of the float32 with bit pattern `bits` (sign ignored; not zero, not NaN or
 * infinite).
 *
 * Method (the Ryu/Schubfach idea in double arithmetic): the significand m of a normal value times
 * the table scale `WIN[be]` gives t = v * 10^(8-k) in [1e8, 2e9), known to within 1e-6 units; the
 * float32 rounding interval (half an ulp each side; a quarter below powers of two) becomes
 * [lo, hi], between 5.9 and 240 units wide. When neither end is within EPS of an integer, the
 * integers inside are exactly floor(lo)+1 .. floor(hi) (a decimal that far inside also reads back
 * through the double it parses to, and one that far outside does not), all below 2^31: the
 * shortest form is a multiple of the largest power of ten 10^j that has a multiple among them
 * (dividing both ends by 10 until they meet, int32 arithmetic), and among those multiples the
 * one nearest to t (an exact BigInt check only within EPS of a tie). That multiple's digits have
 * no trailing zero (otherwise 10^(j+1) would have one inside). Subnormals and the rare values
 * with an end near an integer take the general search (`shortestCore`, exact checks at the ends).
 * Verified against the simple search (`float32ToStringSlow`) on random bit patterns, typical
 * magnitudes, all powers of two/ten with neighbours and a table of edge cases
 * (test/unit/codec-float.test.ts), and equal to the general search (the previous float32 code)
 * on all 2,139,095,039 positive finite bit patterns during development.
 */
export function float32DigitsBits(bits: number): void {
  const be = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (be === 0) {
    const v = mant * HALF_ULP[0] * 2;
    shortestCore(v, Math.floor(Math.log10(v)), HALF_ULP[0], HALF_ULP[0]);
    return;
  }
  const sc = WIN[be];
  const t = (mant | 0x800000) * sc;
  const half = sc * 0.5;
  const hi = t + half;
  const lo = mant === 0 && be > 1 ? t - half * 0.5 : t - half;
  const H = hi | 0; // floor: 0 < lo < hi < 2^31
  const L = lo | 0;
  const fh = hi - H;
  const fl = lo - L;
  if (fh < EPS || fh > 1 - EPS || fl < EPS || fl > 1 - EPS) {
    f32[0] = 0;
    u32[0] = bits & 0x7fffffff;
    shortestCore(f32[0], K_EST[be], HALF_ULP[be], mant === 0 && be > 1 ? HALF_ULP[be] * 0.5 : HALF_ULP[be]);
    return;
  }
  // integers inside: L+1 .. H. Largest j with a multiple of 10^j among them.
  let a = H;
  let b = L;
  let j = 0;
  let a1 = (a / 10) | 0;
  let b1 = (b / 10) | 0;
  while (a1 !== b1) {
    a = a1;
    b = b1;
    j++;
    a1 = (a / 10) | 0;
    b1 = (b / 10) | 0;
  }
  // multiples c * 10^j for c in b+1 .. a: the one nearest to t
  const r = t * INV10[j];
  let c = Math.floor(r);
  const frac = r - c;
  if (frac > 0.5 + EPS) c++;
  else if (frac >= 0.5 - EPS) {
    f32[0] = 0;
    u32[0] = bits & 0x7fffffff;
    vCur = f32[0];
    kCur = K_EST[be];
    if (atOrAboveMid(c, j)) c++;
  }
  if (c > a) c = a;
  else if (c <= b) c = b + 1;
  R32.digits = c;
  R32.exp = K_EST[be] - 8 + j;
}

/**
 * The shortest-digits search shared by float32 and float16 (see `float32Digits`): v > 0 finite,
 * k an estimate (+-1) of floor(log10(v)), hiHalf/loHalf the distances from v to the rounding
 * boundaries above and below. Sets `float32Result`.
 */
function shortestCore(v: number, k: number, hiHalf: number, loHalf: number): void {
  let sc = SCALE[72 - k]; // 10^(8-k)
  let t = v * sc;
  if (t >= 1e9) {
    k++;
    sc = SCALE[72 - k];
    t = v * sc;
  } else if (t < 1e8) {
    k--;
    sc = SCALE[72 - k];
    t = v * sc;
  }
  vCur = v;
  kCur = k;
  const hiGap = hiHalf * sc;
  const loGap = loHalf * sc;
  const tlo = t - loGap;
  const thi = t + hiGap;
  const w = hiGap + loGap;
  // the largest j whose step 10^j has a multiple in [tlo, thi]; an interval of width w always
  // holds a multiple of 10^floor(log10(w)) (up to boundary cases)
  let j = w >= 100 ? 2 : w >= 10 ? 1 : 0;
  while (j < 8 && w >= P10[j + 1]) j++;
  if (!hasMultiple(tlo, thi, j)) {
    while (j > 0 && !hasMultiple(tlo, thi, --j));
  } else {
    while (j < 8 && hasMultiple(tlo, thi, j + 1)) j++;
  }
  // the multiple of 10^j nearest to t that is inside
  const step = P10[j];
  const a = Math.floor(t / step);
  const mid = (a + 0.5) * step;
  const up = Math.abs(t - mid) < EPS ? atOrAboveMid(a, j) : t >= mid;
  const near = up ? a + 1 : a;
  // an integer of at most 10 digits (1e9 when rounding carried over): int32 arithmetic from here
  let D = (inside(near * step, tlo, thi, j, near) ? near : up ? a : a + 1) | 0;
  let e = k - 8 + j;
  for (;;) {
    const q = (D / 10) | 0;
    if (q * 10 !== D) break;
    D = q;
    e++;
  }
  R32.digits = D;
  R32.exp = e;
}

/** Is c = D * 10^j inside [tlo, thi] (in the float32 round-trip sense)? */
function inside(c: number, tlo: number, thi: number, j: number, D: number): boolean {
  if (c < tlo - EPS || c > thi + EPS) return false;
  if (c > tlo + EPS && c < thi - EPS) return true;
  return verify(D, j);
}

/** Does some multiple of 10^j lie inside [tlo, thi]? */
function hasMultiple(tlo: number, thi: number, j: number): boolean {
  const step = P10[j];
  const m = Math.ceil((tlo - EPS) / step);
  const c = m * step;
  if (c > thi + EPS) return false;
  if (inside(c, tlo, thi, j, m)) return true;
  // c was at the lower end and failed the exact check: the next multiple may still fit
  return c + step <= thi + EPS && inside(c + step, tlo, thi, j, m + 1);
}

/**
 * Shortest decimal string (JS number syntax, as `String(number)` formats) that reads back to the
 * float32 value `v` (finite, e.g. from `DataView.getFloat32` or `Math.fround`). See `float32Digits`.
 */
export function float32ToString(v: number): string {
  if (v === 0) return 1 / v < 0 ? '-0' : '0';
  if (v < 0) {
    float32Digits(-v);
    return '-' + formatDecimal(R32.digits, R32.exp);
  }
  float32Digits(v);
  return formatDecimal(R32.digits, R32.exp);
}

/** Shortest round-trip form of a finite double; `-0` for negative zero. */
export function float64ToString(v: number): string {
  return v === 0 && 1 / v < 0 ? '-0' : String(v);
}

// ---------------------------------------------------------------------------------------------
// IEEE 754 half precision (H5T_IEEE_F16LE/BE)

/** The number a half-precision bit pattern stands for. */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1024 + mant) * 2 ** (exp - 25);
}

/** Round half to even. */
function roundEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The half-precision bit pattern nearest to x (round to nearest even; overflow -> infinity). */
export function numberToHalf(x: number): number {
  if (x !== x) return 0x7e00;
  const sign = x < 0 || (x === 0 && 1 / x < 0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24); // subnormal (1024 rounds up to the smallest normal)
  let e = Math.floor(Math.log2(a));
  let p = 2 ** e;
  if (a < p) p = 2 ** --e;
  else if (a >= 2 * p) p = 2 ** ++e;
  let m = roundEven((a / p - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e++;
  }
  if (e + 15 >= 31) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

/** Memo of float16ToString, filled lazily per bit pattern. */
const halfStrings: (string | undefined)[] = new Array<string | undefined>(65536);

/**
 * Shortest decimal that reads back (double -> half, nearest even) to the half with bits `h`
 * (same search as float32 with the half-precision rounding interval; memoised per pattern);
 * `NaN`/`Infinity`/`-Infinity` for non-finite values, `-0` for negative zero.
 */
export function float16ToString(h: number): string {
  h &= 0xffff;
  return halfStrings[h] ?? (halfStrings[h] = half16String(h));
}

function half16String(bits: number): string {
  const v = halfToNumber(bits);
  if (v !== v) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  if (v === 0) return bits & 0x8000 ? '-0' : '0';
  const exp = (bits >> 10) & 0x1f;
  const halfUlp = 2 ** ((exp === 0 ? 1 : exp) - 26);
  const a = Math.abs(v);
  mode16 = true;
  try {
    shortestCore(a, Math.floor(Math.log10(a)), halfUlp, (bits & 0x3ff) === 0 && exp > 1 ? halfUlp / 2 : halfUlp);
  } finally {
    mode16 = false;
  }
  return (v < 0 ? '-' : '') + formatDecimal(R32.digits, R32.exp);
}
