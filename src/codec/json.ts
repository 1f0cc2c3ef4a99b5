/**
 * JSON text: serialising responses (with the non-standard `NaN`/`Infinity` literals HSDS emits,
 * wire-reference 0.6), parsing request bodies (tolerating those literals and keeping big integers
 * exact), and the streaming value writer behind `GET .../value` (wire-reference 2.4).
 */
import { badRequest, internal } from '../errors.js';
import { float64ToString } from './float.js';
import * as text from './textsink.js';
import { TextSink } from './textsink.js';
import { isBooleanEnum, isVariableLength, numericBase, type TypeJson, typeKey } from './types.js';
import { codecFor, Cursor, readInt64, unpaddedEnd } from './values.js';

// ---------------------------------------------------------------------------------------------
// stringify

/**
 * Pre-serialised JSON text that `stringifyJson` inserts verbatim (e.g. a `ValueJsonWriter`
 * result). `ignoreNanText`, when given, is the same value written with `ignoreNan` (NaN and
 * ±Infinity as `null`), used instead of `text` when `stringifyJson` is asked for that.
 */
export class RawJson {
  constructor(
    readonly text: string,
    readonly ignoreNanText?: string,
  ) {}
}

/** Wrap JSON text so `stringifyJson` embeds it as is. */
export const rawJson = (text: string): RawJson => new RawJson(text);

const sharedSink = new TextSink(64 * 1024);


/**
 * A value still in the binary wire format; `stringifyJson` writes it with `valueToJson` (each
 * element formatted for its type: float32 shortest, NaN literals or null with `ignoreNan`).
 */
export class WireValue {
  constructor(
    readonly wire: Buffer,
    readonly type: TypeJson,
    readonly shape: readonly number[],
  ) {}
}

/** True if `v` contains a value JSON.stringify would get wrong: NaN/±Infinity, -0, bigint, RawJson. */
function needsCustom(v: unknown, depth: number): boolean {
  if (typeof v === 'number') return v - v !== 0 || (v === 0 && 1 / v < 0);
  if (typeof v === 'bigint') return true;
  if (typeof v !== 'object' || v === null) return false;
  if (v instanceof RawJson || v instanceof WireValue) return true;
  if (depth > 200) return true; // let the recursive writer deal with (or fail on) deep structures
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === 'number') {
        if (x - x !== 0 || (x === 0 && 1 / x < 0)) return true;
      } else if (typeof x === 'object' ? x !== null && needsCustom(x, depth + 1) : typeof x === 'bigint') return true;
    }
    return false;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  for (const k in v) {
    if (needsCustom((v as Record<string, unknown>)[k], depth + 1)) return true;
  }
  return false;
}

/** Quoted JSON text of object keys seen before (keys repeat across the items of a list). */
const quotedKeys = new Map<string, string>();
function quoteKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (k.length <= 64) {
      if (quotedKeys.size >= 4096) quotedKeys.clear();
      quotedKeys.set(k, q);
    }
  }
  return q;
}

/**
 * The last finite number written as an object member, and its text: the items of a list repeat
 * the same timestamps (`created` of 1,000 attributes), and printing a double is the costly part
 * of such an item. (0 is left out: it may be -0.)
 */
let lastNumber = NaN;
let lastNumberText = 'NaN';

/** JSON text of `v` (undefined for undefined, functions and symbols, as JSON.stringify). */
function writeJson(v: unknown, ignoreNan: boolean): string | undefined {
  switch (typeof v) {
    case 'number':
      return v - v === 0 ? float64ToString(v) : ignoreNan ? 'null' : v !== v ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
    case 'bigint':
      return v.toString();
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (v instanceof RawJson) return ignoreNan && v.ignoreNanText !== undefined ? v.ignoreNanText : v.text;
      if (v instanceof WireValue) return valueToJson(v.wire, v.type, v.shape, { ignoreNan });
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return writeJson((v as { toJSON(): unknown }).toJSON(), ignoreNan);
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i) out += ',';
          const x = v[i];
          // Plain arrays (of numbers, the common large case) go through the native stringifier;
          // objects are written member by member (a pre-scan would visit them twice).
          out += (Array.isArray(x) && !needsCustom(x, 1) ? JSON.stringify(x) : writeJson(x, ignoreNan)) ?? 'null';
        }
        return out + ']';
      }
      let out = '{';
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        const x = (v as Record<string, unknown>)[k];
        let t: string | undefined;
        switch (typeof x) {
          case 'string':
            t = JSON.stringify(x);
            break;
          case 'number':
            if (x === lastNumber && x !== 0) t = lastNumberText;
            else if (x - x === 0 && (x !== 0 || 1 / x > 0)) {
              t = String(x);
              lastNumber = x;
              lastNumberText = t;
            } else t = writeJson(x, ignoreNan);
            break;
          case 'object':
            t = Array.isArray(x) && !needsCustom(x, 1) ? JSON.stringify(x) : writeJson(x, ignoreNan);
            break;
          default:
            t = writeJson(x, ignoreNan);
        }
        if (t === undefined) continue;
        out += out.length === 1 ? quoteKey(k) + ':' + t : ',' + quoteKey(k) + ':' + t;
      }
      return out + '}';
    }
    default:
      return undefined; // undefined, function, symbol
  }
}

/**
 * Like `JSON.stringify(value)` (no indentation), but: NaN, Infinity and -Infinity are written as
 * the bare literals `NaN`, `Infinity`, `-Infinity` as HSDS does (wire-reference 0.6), or `null`
 * with `ignoreNan` (the `ignore_nan=1` parameter); bigints as their exact digits; negative zero as
 * `-0`; `RawJson` values verbatim. Fast path: one cheap scan, then plain JSON.stringify when none
 * of these occur. An undefined top-level value gives `null`.
 */
export function stringifyJson(value: unknown, opts?: { ignoreNan?: boolean }): string {
  if (!needsCustom(value, 0)) return JSON.stringify(value) ?? 'null';
  return writeJson(value, opts?.ignoreNan === true) ?? 'null';
}

/**
 * A client value as short JSON text for an error message: never throws (bigints, NaN, cycles of
 * depth), at most `max` characters.
 */
export function showJson(v: unknown, max = 80): string {
  let s: string;
  try {
    s = stringifyJson(v);
  } catch {
    s = String(v);
  }
  return s.length > max ? s.slice(0, max - 3) + '...' : s;
}

// ---------------------------------------------------------------------------------------------
// parse

/** An integer literal of 16+ digits (possibly beyond 2^53); fraction digits don't count. False positives (e.g. in strings) only cost the slower parser. */
const LONG_INT_RE = /(?:^|[^.\d])\d{16,}(?![\d.eE])/;
const NONFINITE_RE = /NaN|Infinity/;

/**
 * Parse a request body as JSON (wire-reference 0.5). Fast path: `JSON.parse`. A tolerant parser is
 * used only when the fast path can't be exact: the text has an integer literal of 16 or more digits
 * (integers beyond 2^53 are returned as `bigint`, exact), or `JSON.parse` failed and the text
 * contains `NaN`/`Infinity` (the bare literals `NaN`, `Infinity`, `-Infinity` that Python's
 * json.dumps emits are accepted as numbers).
 *
 * @throws badRequest `Unable to load JSON body: <reason>` for invalid JSON.
 */
export function parseJsonBody(text: string, opts: { maxDepth?: number } = {}): unknown {
  if (opts.maxDepth !== undefined) checkJsonDepth(text, opts.maxDepth);
  if (LONG_INT_RE.test(text)) return new TolerantParser(text).parseAll();
  try {
    return JSON.parse(text);
  } catch (e) {
    if (NONFINITE_RE.test(text)) return new TolerantParser(text).parseAll();
    throw badRequest(`Unable to load JSON body: ${(e as Error).message}`);
  }
}

/**
 * Refuse JSON text whose arrays and objects nest deeper than `max` before anything parses or
 * walks it (the codecs and validators recurse over values, types and shapes: 5,000 levels
 * overflow the stack). One pass over the characters, strings skipped.
 * @throws badRequest naming the limit.
 */
export function checkJsonDepth(text: string, max: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) throw badRequest(`The JSON body nests arrays and objects more than ${max} levels deep (limit maxJsonDepth)`);
    } else if (c === 93 || c === 125) depth--;
  }
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

class TolerantParser {
  private i = 0;
  constructor(private readonly s: string) {}

  parseAll(): unknown {
    let v: unknown;
    try {
      v = this.value();
      this.ws();
      if (this.i < this.s.length) this.fail('Unexpected data after the JSON value');
    } catch (e) {
      if (e instanceof RangeError) throw badRequest('Unable to load JSON body: nested too deeply');
      throw e;
    }
    return v;
  }

  private fail(msg: string): never {
    throw badRequest(`Unable to load JSON body: ${msg} at position ${this.i}`);
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.i = i;
  }

  private word(w: string, v: unknown): unknown {
    if (this.s.startsWith(w, this.i)) {
      this.i += w.length;
      return v;
    }
    return this.fail('Unexpected token');
  }

  private value(): unknown {
    this.ws();
    const s = this.s;
    const c = s[this.i];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.word('true', true);
      case 'f':
        return this.word('false', false);
      case 'n':
        return this.word('null', null);
      case 'N':
        return this.word('NaN', NaN);
      case 'I':
        return this.word('Infinity', Infinity);
      case undefined:
        return this.fail('Unexpected end of JSON input');
      default:
        if (c === '-' && s.startsWith('-Infinity', this.i)) {
          this.i += 9;
          return -Infinity;
        }
        return this.number();
    }
  }

  private number(): number | bigint {
    NUMBER_RE.lastIndex = this.i;
    const m = NUMBER_RE.exec(this.s);
    if (!m) return this.fail('Unexpected token');
    this.i += m[0].length;
    const tok = m[0];
    const n = Number(tok);
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) return BigInt(tok);
    return n;
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    let i = start + 1;
    let escaped = false;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        i += 2;
        continue;
      }
      if (i >= s.length) {
        this.i = i;
        this.fail('Unterminated string');
      }
      if (c < 32) {
        this.i = i;
        this.fail('Bad control character in string literal');
      }
      i++;
    }
    this.i = i + 1;
    if (!escaped) return s.slice(start + 1, i);
    try {
      return JSON.parse(s.slice(start, i + 1)) as string;
    } catch {
      this.i = start;
      return this.fail('Bad string');
    }
  }

  private array(): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') {
        this.i--;
        this.fail("Expected ',' or ']'");
      }
    }
  }

  private object(): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('Expected a property name');
      const k = this.string();
      this.ws();
      if (this.s[this.i++] !== ':') {
        this.i--;
        this.fail("Expected ':'");
      }
      const v = this.value();
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') {
        this.i--;
        this.fail("Expected ',' or '}'");
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// value writer

/** Appends one element's JSON at the cursor and advances. */
type ElemJson = (c: Cursor, s: TextSink) => void;
/** Appends `n` elements' JSON, comma separated, at the cursor and advances. */
type RunJson = (c: Cursor, s: TextSink, n: number) => void;

const NULL = 'null';

// module-local copies of the hot functions (no live-binding lookups in the loops)
const writeFloat16 = text.writeFloat16;
const writeFloat32 = text.writeFloat32;
const putFloat32Bits = text.putFloat32Bits;
const putAscii = text.putAscii;
const writeFloat64 = text.writeFloat64;
const writeInt = text.writeInt;

function nonFiniteText(v: number, ignoreNan: boolean): string {
  return ignoreNan ? NULL : v !== v ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

function nonFinite(s: TextSink, v: number, ignoreNan: boolean): void {
  s.ascii(nonFiniteText(v, ignoreNan));
}

/** Max bytes of one number's JSON (plus a comma). */
const NUM_MAX = 32;
/** Elements per ensure() in the numeric run loops (1024 x NUM_MAX: 32 KiB, a small part of the sink's 1 MiB chunks). */
const CHUNK = 1024;
/** Doubles per JSON.stringify call in the float64 run (one array reused). */
const CHUNK64 = 4096;

/** Compile the element JSON writer of a type. `checkedRead`: bounds-check fixed reads (inside variable-length parents). */
function elemJson(t: TypeJson, ignoreNan: boolean, checkedRead: boolean): ElemJson {
  const guard = (size: number, f: ElemJson): ElemJson =>
    checkedRead
      ? (c, s) => {
          c.need(size);
          f(c, s);
        }
      : f;
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_BITFIELD':
    case 'H5T_FLOAT': {
      const info = numericBase(t.base)!;
      const le = info.littleEndian;
      if (info.kind === 'float') {
        if (info.size === 4)
          return guard(4, (c, s) => {
            const v = c.dv.getFloat32(c.pos, le);
            c.pos += 4;
            s.ensure(NUM_MAX);
            if (v - v === 0) writeFloat32(s, v);
            else nonFinite(s, v, ignoreNan);
          });
        if (info.size === 8)
          return guard(8, (c, s) => {
            const v = c.dv.getFloat64(c.pos, le);
            c.pos += 8;
            s.ensure(NUM_MAX);
            if (v - v === 0) writeFloat64(s, v);
            else nonFinite(s, v, ignoreNan);
          });
        return guard(2, (c, s) => {
          const h = c.dv.getUint16(c.pos, le);
          c.pos += 2;
          s.ensure(NUM_MAX);
          if ((h & 0x7c00) !== 0x7c00) writeFloat16(s, h);
          else nonFinite(s, h & 0x3ff ? NaN : h & 0x8000 ? -Infinity : Infinity, ignoreNan);
        });
      }
      if (info.size === 8) {
        const signed = info.kind === 'int';
        return guard(8, (c, s) => {
          const v = readInt64(c.dv, c.pos, le, signed);
          c.pos += 8;
          s.ensure(NUM_MAX);
          if (typeof v === 'number') writeInt(s, v);
          else s.ascii(v.toString());
        });
      }
      const codec = codecFor(t);
      return guard(info.size, (c, s) => {
        s.ensure(NUM_MAX);
        writeInt(s, codec.read(c) as number);
      });
    }
    case 'H5T_ENUM': {
      const base = elemJson(t.base, ignoreNan, checkedRead);
      if (!isBooleanEnum(t)) return base;
      return guard(1, (c, s) => {
        s.ascii(c.buf[c.pos++] !== 0 ? 'true' : 'false');
      });
    }
    case 'H5T_COMPOUND': {
      const inner = checkedRead || isVariableLength(t);
      const fields = t.fields.map((f) => elemJson(f.type, ignoreNan, inner));
      const n = fields.length;
      return (c, s) => {
        s.ensure(1);
        s.byte(91);
        for (let i = 0; i < n; i++) {
          if (i) {
            s.ensure(1);
            s.byte(44);
          }
          fields[i](c, s);
        }
        s.ensure(1);
        s.byte(93);
      };
    }
    case 'H5T_ARRAY': {
      const inner = checkedRead || isVariableLength(t);
      const base = elemJson(t.base, ignoreNan, inner);
      const dims = t.dims;
      const rank = dims.length;
      const level = (c: Cursor, s: TextSink, l: number): void => {
        const n = dims[l];
        s.ensure(1);
        s.byte(91);
        for (let i = 0; i < n; i++) {
          if (i) {
            s.ensure(1);
            s.byte(44);
          }
          if (l === rank - 1) base(c, s);
          else level(c, s, l + 1);
        }
        s.ensure(1);
        s.byte(93);
      };
      return (c, s) => level(c, s, 0);
    }
    case 'H5T_VLEN': {
      const base = elemJson(t.base, ignoreNan, true);
      if (isVariableLength(t.base)) {
        // h5store's inner form of a vlen of variable-length elements (values.ts nestedVlenCodec):
        // a byte count, then as many elements as fill it
        return (c, s) => {
          c.need(4);
          const nbytes = c.dv.getInt32(c.pos, true);
          if (nbytes < 0) throw badRequest(`Invalid binary data: bad variable-length byte count ${nbytes}`);
          c.pos += 4;
          c.need(nbytes);
          const end = c.pos + nbytes;
          const inner = new Cursor(c.buf.subarray(0, end), c.pos);
          s.ensure(1);
          s.byte(91);
          for (let i = 0; inner.pos < end; i++) {
            if (i) {
              s.ensure(1);
              s.byte(44);
            }
            const at = inner.pos;
            base(inner, s);
            if (inner.pos === at) throw badRequest('Invalid binary data: an element of a variable-length sequence takes no bytes');
          }
          c.pos = end;
          s.ensure(1);
          s.byte(93);
        };
      }
      const bs = codecFor(t.base).size;
      return (c, s) => {
        c.need(4);
        const nbytes = c.dv.getInt32(c.pos, true);
        if (nbytes < 0 || nbytes % bs !== 0) throw badRequest(`Invalid binary data: bad variable-length byte count ${nbytes}`);
        c.pos += 4;
        c.need(nbytes);
        const n = nbytes / bs;
        s.ensure(1);
        s.byte(91);
        for (let i = 0; i < n; i++) {
          if (i) {
            s.ensure(1);
            s.byte(44);
          }
          base(c, s);
        }
        s.ensure(1);
        s.byte(93);
      };
    }
    case 'H5T_STRING':
    case 'H5T_REFERENCE':
    case 'H5T_OPAQUE': {
      if (t.class === 'H5T_STRING' && typeof t.length === 'number') {
        const len = t.length;
        const pad = t.strPad;
        return guard(len, (c, s) => {
          const start = c.pos;
          c.pos += len;
          stringJson(s, c.buf, start, unpaddedEnd(c.buf, start, len, pad));
        });
      }
      const codec = codecFor(t);
      const f: ElemJson = (c, s) => s.utf8(JSON.stringify(codec.read(c)));
      return codec.size >= 0 ? guard(codec.size, f) : f;
    }
  }
}

/**
 * The JSON string of the UTF-8 bytes `buf[start, end)`: printable ASCII without `"` or `\\`
 * (the common case) copied straight into the sink, anything else through `JSON.stringify` of
 * the decoded text (what the codec's `read` gives).
 */
function stringJson(s: TextSink, buf: Buffer, start: number, end: number): void {
  s.ensure(end - start + 2);
  const out = s.buf;
  let p = s.pos;
  out[p++] = 34;
  for (let i = start; i < end; i++) {
    const b = buf[i];
    if (b < 0x20 || b > 0x7e || b === 0x22 || b === 0x5c) {
      s.utf8(JSON.stringify(buf.toString('utf8', start, end)));
      return;
    }
    out[p++] = b;
  }
  out[p++] = 34;
  s.pos = p;
}

/** Run writer: the hot loops for top-level numeric types, else element by element. */
/**
 * Compiled writers by type structure: types described from files are fresh objects every
 * request, so the cache is keyed by the type's JSON text (without `id`), bounded.
 */
const runCache = new Map<string, RunJson>();
function runJson(t: TypeJson, ignoreNan: boolean): RunJson {
  const key = (ignoreNan ? 'n' : 'v') + typeKey(t);
  let r = runCache.get(key);
  if (!r) {
    if (runCache.size > 512) runCache.clear();
    r = compileRun(t, ignoreNan);
    runCache.set(key, r);
  }
  return r;
}

function compileRun(t: TypeJson, ignoreNan: boolean): RunJson {
  if (t.class === 'H5T_ENUM' && !isBooleanEnum(t)) return runJson(t.base, ignoreNan);
  const base = t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT' || t.class === 'H5T_BITFIELD' ? numericBase(t.base) : undefined;
  if (base?.kind === 'float' && base.size === 4) {
    const le = base.littleEndian;
    return (c, s, n) => {
      const dv = c.dv;
      let pos = c.pos;
      for (let i0 = 0; i0 < n; i0 += CHUNK) {
        const m = Math.min(CHUNK, n - i0);
        s.ensure(m * NUM_MAX);
        const b = s.buf;
        let p = s.pos;
        for (let i = 0; i < m; i++) {
          if (i0 + i > 0) b[p++] = 44;
          const bits = dv.getUint32(pos, le);
          pos += 4;
          if ((bits & 0x7f800000) !== 0x7f800000) p = putFloat32Bits(b, p, bits);
          else p = putAscii(b, p, nonFiniteText(dv.getFloat32(pos - 4, le), ignoreNan));
        }
        s.pos = p;
      }
      c.pos = pos;
    };
  }
  if (base?.kind === 'float' && base.size === 8) {
    // V8's JSON.stringify of a plain array of doubles is the fastest shortest-round-trip printer
    // available; used per chunk when the chunk has no NaN/Infinity/-0.
    const le = base.littleEndian;
    const full: number[] = new Array<number>(CHUNK64).fill(0.5);
    return (c, s, n) => {
      const dv = c.dv;
      let pos = c.pos;
      for (let i0 = 0; i0 < n; i0 += CHUNK64) {
        const m = Math.min(CHUNK64, n - i0);
        const arr = m === CHUNK64 ? full : [];
        let plain = true;
        for (let i = 0; i < m; i++) {
          const v = dv.getFloat64(pos + 8 * i, le);
          if (v - v !== 0 || (v === 0 && 1 / v < 0)) plain = false;
          if (m === CHUNK64) arr[i] = v;
          else arr.push(v);
        }
        if (i0 > 0) {
          s.ensure(1);
          s.byte(44);
        }
        if (plain) {
          const str = JSON.stringify(arr);
          s.ascii(str.slice(1, str.length - 1));
          pos += 8 * m;
        } else {
          s.ensure(m * NUM_MAX);
          for (let i = 0; i < m; i++) {
            if (i > 0) s.buf[s.pos++] = 44;
            const v = dv.getFloat64(pos, le);
            pos += 8;
            if (v - v === 0) writeFloat64(s, v);
            else nonFinite(s, v, ignoreNan);
          }
        }
      }
      c.pos = pos;
    };
  }
  if (base && base.kind !== 'float' && base.size < 8) {
    const le = base.littleEndian;
    const signed = base.kind === 'int';
    const size = base.size;
    const read =
      size === 1
        ? signed
          ? (dv: DataView, p: number) => dv.getInt8(p)
          : (dv: DataView, p: number) => dv.getUint8(p)
        : size === 2
          ? signed
            ? (dv: DataView, p: number) => dv.getInt16(p, le)
            : (dv: DataView, p: number) => dv.getUint16(p, le)
          : signed
            ? (dv: DataView, p: number) => dv.getInt32(p, le)
            : (dv: DataView, p: number) => dv.getUint32(p, le);
    return (c, s, n) => {
      const dv = c.dv;
      let pos = c.pos;
      for (let i0 = 0; i0 < n; i0 += CHUNK) {
        const m = Math.min(CHUNK, n - i0);
        s.ensure(m * 12);
        for (let i = 0; i < m; i++) {
          if (i0 + i > 0) s.buf[s.pos++] = 44;
          writeInt(s, read(dv, pos));
          pos += size;
        }
      }
      c.pos = pos;
    };
  }
  const elem = elemJson(t, ignoreNan, isVariableLength(t));
  return (c, s, n) => {
    for (let i = 0; i < n; i++) {
      if (i) {
        s.ensure(1);
        s.byte(44);
      }
      elem(c, s);
    }
  };
}

/** True if the JSON of this type's values is pure ASCII (no strings/references). */
function asciiOnly(t: TypeJson): boolean {
  switch (t.class) {
    case 'H5T_STRING':
    case 'H5T_REFERENCE':
      return false;
    case 'H5T_COMPOUND':
      return t.fields.every((f) => asciiOnly(f.type));
    case 'H5T_ARRAY':
    case 'H5T_VLEN':
    case 'H5T_ENUM':
      return asciiOnly(t.base);
    default:
      return true;
  }
}

/**
 * Streams the JSON of a dataset or attribute value from wire-format element bytes
 * (wire-reference 2.4 GET value, 3.1 JSON value representation, 3.5 wire format).
 *
 * `write(buf, count)` takes the next `count` elements (C order) from the start of `buf` and returns
 * their JSON text including the brackets and commas needed, so that the concatenation of all
 * `write` results and `end()` is the value nested like `shape` (`[]` = the bare element; a zero
 * extent gives the empty nested lists). Elements may be split across writes at any element
 * boundary. Numbers: float32 and float16 in their shortest round-trip form, float64 as
 * `String(x)`, integers exact (64-bit beyond 2^53 too); NaN/±Infinity as the bare literals, or
 * `null` with `ignoreNan` (wire-reference 0.6). Other classes as in `values.ts`.
 *
 * @throws internal when more or fewer elements than the shape holds are written;
 * badRequest for malformed variable-length data.
 */
export class ValueJsonWriter {
  private readonly sink: TextSink = new TextSink(4096);
  private readonly dims: number[];
  private readonly rank: number;
  private readonly total: number;
  private readonly lastDim: number;
  private readonly ctr: number[];
  private readonly run: RunJson;
  private readonly size: number;
  private readonly ascii: boolean;
  private idx = 0;
  private col = 0;

  constructor(type: TypeJson, shape: readonly number[], opts?: { ignoreNan?: boolean }, sink?: TextSink) {
    if (sink) this.sink = sink;
    this.dims = [...shape];
    this.rank = shape.length;
    let total = 1;
    for (const d of shape) total *= d;
    this.total = total;
    this.lastDim = this.rank ? shape[this.rank - 1] : 1;
    this.ctr = new Array<number>(Math.max(0, this.rank - 1)).fill(0);
    this.run = runJson(type, opts?.ignoreNan === true);
    this.size = codecFor(type).size;
    this.ascii = asciiOnly(type);
  }

  /**
   * Continue as if the first `n` elements had been written (their text is produced elsewhere):
   * the text of `write`s from here on, and of `end`, is what a writer that wrote all `n` would
   * give. A value can so be formatted in parts, each by a writer of its own (on threads of their
   * own), and the parts' texts concatenated in element order. Only on a fresh writer.
   * @throws internal when elements were written already or `n` is outside [0, total]
   */
  skipTo(n: number): void {
    if (this.idx !== 0 || !Number.isInteger(n) || n < 0 || n > this.total) throw internal(`ValueJsonWriter: cannot skip to element ${n} of ${this.total} after ${this.idx}`);
    if (n === 0) return;
    // the state `emit` leaves after an element n-1: its row finished (col == lastDim) or not,
    // and the counters of the outer dimensions at that row
    let row = Math.floor((n - 1) / this.lastDim);
    this.col = n - row * this.lastDim;
    for (let j = this.rank - 2; j >= 0; j--) {
      this.ctr[j] = row % this.dims[j]!;
      row = Math.floor(row / this.dims[j]!);
    }
    this.idx = n;
  }

  /** JSON text for the next `count` elements, whose wire bytes start at `buf[0]`. */
  write(buf: Buffer, count: number): string {
    this.emit(buf, count);
    return this.take();
  }

  /** Like `write`, as UTF-8 bytes. */
  writeBytes(buf: Buffer, count: number): Buffer {
    this.emit(buf, count);
    return this.sink.takeBytes();
  }

  /**
   * Like `write`, as UTF-8 bytes in chunks of at most about 1 MiB that the caller owns (no copy;
   * an empty list when there is nothing to add).
   */
  writeChunks(buf: Buffer, count: number): Buffer[] {
    this.emit(buf, count);
    return this.sink.takeChunks();
  }

  /** Like `end`, as chunks (see `writeChunks`). */
  endChunks(): Buffer[] {
    this.finish();
    return this.sink.takeChunks();
  }

  /** The closing text after the last element. */
  end(): string {
    this.finish();
    return this.take();
  }

  /** Like `end`, as UTF-8 bytes. */
  endBytes(): Buffer {
    this.finish();
    return this.sink.takeBytes();
  }

  private take(): string {
    return this.ascii ? this.sink.takeAscii() : this.sink.take();
  }

  private emit(buf: Buffer, count: number): void {
    if (count === 0) return;
    if (this.idx + count > this.total) throw internal(`ValueJsonWriter: ${this.idx + count} elements written, shape holds ${this.total}`);
    if (this.size >= 0 && buf.length < count * this.size) throw internal(`ValueJsonWriter: ${buf.length} bytes for ${count} elements of ${this.size}`);
    const c = new Cursor(buf);
    const s = this.sink;
    const { rank, lastDim, dims, ctr } = this;
    let left = count;
    while (left > 0) {
      if (rank === 0) {
        this.run(c, s, 1);
        this.idx++;
        left--;
        continue;
      }
      if (this.idx === 0) {
        s.repeat(91, rank);
      } else if (this.col === lastDim) {
        let closes = 1;
        for (let j = rank - 2; j >= 0; j--) {
          if (++ctr[j] < dims[j]) break;
          ctr[j] = 0;
          closes++;
        }
        s.repeat(93, closes);
        s.repeat(44, 1);
        s.repeat(91, closes);
        this.col = 0;
      } else {
        s.repeat(44, 1);
      }
      const n = Math.min(left, lastDim - this.col);
      this.run(c, s, n);
      this.col += n;
      this.idx += n;
      left -= n;
    }
  }

  private finish(): void {
    if (this.idx !== this.total) throw internal(`ValueJsonWriter: ${this.idx} of ${this.total} elements written`);
    if (this.rank === 0) return;
    if (this.total === 0) {
      this.sink.ascii(emptyNested(this.dims, 0));
      return;
    }
    this.sink.repeat(93, this.rank);
  }
}

/** JSON of an empty value shaped like dims (some extent is 0), e.g. [2,0,3] -> [[],[]]. */
function emptyNested(dims: number[], level: number): string {
  if (level >= dims.length || dims[level] === 0) return '[]';
  const inner = emptyNested(dims, level + 1);
  return '[' + new Array<string>(dims[level]).fill(inner).join(',') + ']';
}

/** One-shot: the JSON text of `count = prod(shape)` elements in `buf` (see `ValueJsonWriter`). */
export function valueToJson(buf: Buffer, type: TypeJson, shape: readonly number[], opts?: { ignoreNan?: boolean }): string {
  // One shared sink for these one-shot conversions (synchronous, so never used twice at once).
  sharedSink.reset();
  const w = new ValueJsonWriter(type, shape, opts, sharedSink);
  let count = 1;
  for (const d of shape) count *= d;
  return w.write(buf, count) + w.end();
}
