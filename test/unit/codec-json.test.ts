import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';
import { parseJsonBody, RawJson, rawJson, stringifyJson, ValueJsonWriter, valueToJson, WireValue } from '../../src/codec/json.js';
import { parseType, type TypeJson } from '../../src/codec/types.js';
import { decodeElements, encodeElements, nestValues } from '../../src/codec/values.js';
import { TextSink } from '../../src/codec/textsink.js';
import { expect400 } from '../helpers/errors.js';
import { rng } from '../helpers/random.js';

describe('codec/json stringifyJson', () => {
  const cases: [string, unknown, string, string?][] = [
    ['plain object (fast path)', { a: 1, b: [true, null, 'x'], c: { d: 1.5 } }, '{"a":1,"b":[true,null,"x"],"c":{"d":1.5}}'],
    ['NaN and infinities as literals', { v: [NaN, Infinity, -Infinity, 1] }, '{"v":[NaN,Infinity,-Infinity,1]}', '{"v":[null,null,null,1]}'],
    ['top-level NaN', NaN, 'NaN', 'null'],
    ['bigint digits', { v: [12345678901234567890n, -5n] }, '{"v":[12345678901234567890,-5]}'],
    ['negative zero', [-0, 0], '[-0,0]'],
    ['nested deep NaN', { a: [{ b: [[NaN]] }] }, '{"a":[{"b":[[NaN]]}]}', '{"a":[{"b":[[null]]}]}'],
    ['undefined members skipped, undefined in lists null', { a: undefined, b: [undefined, 1], c: NaN }, '{"b":[null,1],"c":NaN}', '{"b":[null,1],"c":null}'],
    ['strings escaped', { 's"\n': 'é"\\', n: NaN }, '{"s\\"\\n":"é\\"\\\\","n":NaN}', '{"s\\"\\n":"é\\"\\\\","n":null}'],
    ['raw JSON embedded', { value: rawJson('[0.1,NaN]'), n: 1 }, '{"value":[0.1,NaN],"n":1}'],
    ['toJSON honoured', { d: new Date(0), n: NaN }, '{"d":"1970-01-01T00:00:00.000Z","n":NaN}', '{"d":"1970-01-01T00:00:00.000Z","n":null}'],
    ['undefined top level', undefined, 'null'],
    ['raw JSON with its ignore_nan form', { value: new RawJson('[0.5,NaN]', '[0.5,null]') }, '{"value":[0.5,NaN]}', '{"value":[0.5,null]}'],
    ['raw JSON without an ignore_nan form', [new RawJson('NaN')], '[NaN]', '[NaN]'],
    [
      'wire value written for its type',
      { value: new WireValue(Buffer.from([0, 0, 0xc0, 0x7f, 0xcd, 0xcc, 0xcc, 0x3d]), { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' }, [2]) },
      '{"value":[NaN,0.1]}',
      '{"value":[null,0.1]}',
    ],
    ['members in JSON.stringify order; functions and symbols left out', { b: -0, 2: 'x', f: () => 1, s: Symbol('s'), 1: NaN }, '{"1":NaN,"2":"x","b":-0}', '{"1":null,"2":"x","b":-0}'],
    ['inherited members left out', Object.assign(Object.create({ inherited: 1 }), { own: NaN }), '{"own":NaN}', '{"own":null}'],
    [
      'repeated numbers in members (the last one is remembered), zeros and NaN between them',
      { items: [{ t: 1795471259.368 }, { t: 1795471259.368 }, { t: 0 }, { t: -0 }, { t: 1795471259.368 }, { t: 2.5, u: 2.5 }, { t: NaN }, { t: 2.5 }, { t: -0 }, { t: 0 }] },
      '{"items":[{"t":1795471259.368},{"t":1795471259.368},{"t":0},{"t":-0},{"t":1795471259.368},{"t":2.5,"u":2.5},{"t":NaN},{"t":2.5},{"t":-0},{"t":0}]}',
      '{"items":[{"t":1795471259.368},{"t":1795471259.368},{"t":0},{"t":-0},{"t":1795471259.368},{"t":2.5,"u":2.5},{"t":null},{"t":2.5},{"t":-0},{"t":0}]}',
    ],
    [
      'the same keys in many items, one item special',
      { items: [{ name: 'a', n: 1 }, { name: 'b', n: Infinity }, { name: 'c', n: 2, t: { k: [1] } }] },
      '{"items":[{"name":"a","n":1},{"name":"b","n":Infinity},{"name":"c","n":2,"t":{"k":[1]}}]}',
      '{"items":[{"name":"a","n":1},{"name":"b","n":null},{"name":"c","n":2,"t":{"k":[1]}}]}',
    ],
  ];
  for (const [name, value, text, ignored] of cases) {
    it(name, () => {
      expect(stringifyJson(value)).to.equal(text);
      expect(stringifyJson(value, { ignoreNan: true })).to.equal(ignored ?? text);
    });
  }
  it('matches JSON.stringify when nothing special occurs', () => {
    const v = { id: 'd-1', shape: { class: 'H5S_SIMPLE', dims: [4, 5] }, list: [1, 2.5, 'a', null, false], e: {} };
    expect(stringifyJson(v)).to.equal(JSON.stringify(v));
  });
});

describe('codec/json parseJsonBody', () => {
  it('parses ordinary JSON', () => {
    expect(parseJsonBody('{"a": [1, 2.5, "x", null, true]}')).to.deep.equal({ a: [1, 2.5, 'x', null, true] });
  });
  it('accepts NaN, Infinity and -Infinity (Python json.dumps)', () => {
    const v = parseJsonBody('{"value": [NaN, Infinity, -Infinity, 1.5, "NaN"], "s": "Infinity"}') as { value: number[]; s: string };
    expect(Number.isNaN(v.value[0])).to.equal(true);
    expect(v.value.slice(1)).to.deep.equal([Infinity, -Infinity, 1.5, 'NaN']);
    expect(v.s).to.equal('Infinity');
  });
  it('keeps integers beyond 2^53 exact as bigint', () => {
    expect(parseJsonBody('[9007199254740993, -9223372036854775808, 18446744073709551615, 9007199254740991, 1.2345678901234567e3, 12345678901234567.5]')).to.deep.equal([
      9007199254740993n,
      -9223372036854775808n,
      18446744073709551615n,
      9007199254740991,
      1234.5678901234567,
      12345678901234567.5,
    ]);
  });
  it('tolerant parser handles escapes, nesting, whitespace and __proto__', () => {
    const v = parseJsonBody(' {"a\\"b": ["\\u00e9\\n", {"__proto__": 1}, []], "big": 12345678901234567890, "e": {} } ') as Record<string, unknown>;
    expect(v['a"b']).to.deep.equal(['é\n', JSON.parse('{"__proto__": 1}'), []]);
    expect(Object.getPrototypeOf(v)).to.equal(Object.prototype);
    expect(v.big).to.equal(12345678901234567890n);
    expect(v.e).to.deep.equal({});
  });
  it('long digit runs inside strings or fractions stay on the fast path semantics', () => {
    expect(parseJsonBody('{"s": "12345678901234567890", "f": 0.12345678901234567}')).to.deep.equal({ s: '12345678901234567890', f: 0.12345678901234567 });
  });
  const bad: [string, string][] = [
    ['empty', ''],
    ['truncated', '{"a": [1, 2'],
    ['trailing comma', '[1, 2,]'],
    ['single quotes', "{'a': 1}"],
    ['garbage after', '{"a": 1} x'],
    ['bad literal with NaN elsewhere', '[NaN, nope]'],
    ['truncated with NaN', '[NaN, 1'],
    ['bare word Nan', '[Nan]'],
    ['unterminated string in tolerant mode', '[NaN, "abc'],
    ['control char in tolerant mode', '[NaN, "a\u0001"]'],
    ['big int then garbage', '[12345678901234567890,]'],
  ];
  for (const [name, text] of bad) {
    it(`rejects ${name}`, () => expect400(() => parseJsonBody(text), 'Unable to load JSON body'));
  }
});

/** Write `count` elements of `buf` through a ValueJsonWriter in random pieces; return the text. */
function writeInPieces(type: TypeJson, shape: number[], buf: Buffer, count: number, rand: () => number, opts?: { ignoreNan?: boolean }): string {
  const w = new ValueJsonWriter(type, shape, opts);
  // element byte offsets (works for variable-length types too)
  const offsets = [0];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    pos = decodeElements(buf, type, 1, pos).end;
    offsets.push(pos);
  }
  let out = '';
  let i = 0;
  while (i < count) {
    const n = Math.min(count - i, Math.floor(rand() * 5)); // 0..4 elements, zero-element writes included
    out += w.write(buf.subarray(offsets[i], offsets[i + n]), n);
    i += n;
  }
  return out + w.end();
}

describe('codec/json ValueJsonWriter', () => {
  const I32 = parseType('H5T_STD_I32BE');
  const shapes = [[], [1], [5], [2, 3], [3, 1, 4], [2, 2, 2, 2], [1, 1, 1], [7, 3]];
  for (const shape of shapes) {
    it(`nests int32 values like ${JSON.stringify(shape)} across arbitrary write boundaries`, () => {
      const rand = rng(shape.length * 31 + shape.reduce((a, b) => a + b, 0));
      const n = shape.reduce((a, b) => a * b, 1);
      const values = Array.from({ length: n }, (_, i) => (i * 7919) % 2001 - 1000);
      const buf = encodeElements(values, I32);
      const expected = JSON.stringify(nestValues(values, shape));
      for (let trial = 0; trial < 20; trial++) expect(writeInPieces(I32, shape, buf, n, rand)).to.equal(expected);
      expect(valueToJson(buf, I32, shape)).to.equal(expected);
    });
  }

  // A value formatted in parts by writers of their own (skipTo), as the JSON threads do: the
  // parts' texts, concatenated, are the one writer's text, for every split point.
  for (const shape of [[1], [5], [2, 3], [3, 1, 4], [2, 2, 2, 2], [7, 3], [4, 1], [1, 6]]) {
    it(`parts of ${JSON.stringify(shape)} written by separate writers (skipTo) join into the same text`, () => {
      const n = shape.reduce((a, b) => a * b, 1);
      const values = Array.from({ length: n }, (_, i) => i * 3 - 7);
      const buf = encodeElements(values, I32);
      const expected = JSON.stringify(nestValues(values, shape));
      for (let a = 0; a <= n; a++) {
        for (let b = a; b <= n; b++) {
          // three parts [0,a) [a,b) [b,n), the closing text from a writer skipped to the end
          let text = '';
          for (const [s, e] of [[0, a], [a, b], [b, n]] as const) {
            const w = new ValueJsonWriter(I32, shape);
            w.skipTo(s);
            text += w.write(buf.subarray(s * 4, e * 4), e - s);
          }
          const last = new ValueJsonWriter(I32, shape);
          last.skipTo(n);
          expect(text + last.end(), `split at ${a}, ${b}`).to.equal(expected);
        }
      }
    });
  }

  it('skipTo refuses a writer that wrote already, and positions outside the value', () => {
    const w = new ValueJsonWriter(I32, [2, 2]);
    expect(() => w.skipTo(5)).to.throw(H5StoreError);
    expect(() => w.skipTo(-1)).to.throw(H5StoreError);
    expect(() => w.skipTo(1.5)).to.throw(H5StoreError);
    w.write(Buffer.alloc(4), 1);
    expect(() => w.skipTo(2)).to.throw(H5StoreError);
  });

  const empties: [number[], string][] = [
    [[0], '[]'],
    [[0, 3], '[]'],
    [[2, 0], '[[],[]]'],
    [[2, 0, 3], '[[],[]]'],
    [[2, 3, 0], '[[[],[],[]],[[],[],[]]]'],
  ];
  for (const [shape, text] of empties) {
    it(`writes the empty value of shape ${JSON.stringify(shape)}`, () => {
      const w = new ValueJsonWriter(I32, shape);
      expect(w.write(Buffer.alloc(0), 0) + w.end()).to.equal(text);
    });
  }

  it('refuses too many or too few elements', () => {
    const w = new ValueJsonWriter(I32, [2]);
    expect(() => w.write(Buffer.alloc(12), 3)).to.throw(H5StoreError);
    const w2 = new ValueJsonWriter(I32, [2]);
    w2.write(Buffer.alloc(4), 1);
    expect(() => w2.end()).to.throw(H5StoreError);
  });

  const typed: [string, unknown, unknown[], number[], string, string?][] = [
    ['float32 shortest', 'H5T_IEEE_F32LE', [0.1, 1 / 3, 1e-7, 3.4028234663852886e38, 16777216, 1.5e-45, 100, 0.5], [8],
      '[0.1,0.33333334,1e-7,3.4028235e+38,16777216,1e-45,100,0.5]'],
    ['float32 BE non-finite', 'H5T_IEEE_F32BE', [NaN, Infinity, -Infinity, -0], [2, 2], '[[NaN,Infinity],[-Infinity,-0]]', '[[null,null],[null,-0]]'],
    ['float64', 'H5T_IEEE_F64LE', [0.1, 1 / 3, 1e21, 123, -0, NaN], [6], '[0.1,0.3333333333333333,1e+21,123,-0,NaN]', '[0.1,0.3333333333333333,1e+21,123,-0,null]'],
    ['float64 BE', 'H5T_IEEE_F64BE', [2.5, -1e-300], [2], '[2.5,-1e-300]'],
    ['float16', 'H5T_IEEE_F16LE', [0.1, 65504, 1, NaN, -Infinity, 2 ** -24], [6], '[0.1,65500,1,NaN,-Infinity,6e-8]', '[0.1,65500,1,null,null,6e-8]'],
    ['scalar float32', 'H5T_IEEE_F32LE', [3.5], [], '3.5'],
    ['scalar NaN', 'H5T_IEEE_F64LE', [NaN], [], 'NaN', 'null'],
    ['int8/uint', 'H5T_STD_U32BE', [0, 4294967295], [2], '[0,4294967295]'],
    ['int8', 'H5T_STD_I8LE', [-128, 127], [2], '[-128,127]'],
    ['int16 BE', 'H5T_STD_I16BE', [-32768, 32767], [2], '[-32768,32767]'],
    ['int64 exact', 'H5T_STD_I64LE', [2n ** 63n - 1n, -(2n ** 63n), 2 ** 53 - 1, -5], [4], '[9223372036854775807,-9223372036854775808,9007199254740991,-5]'],
    ['uint64 BE exact', 'H5T_STD_U64BE', [2n ** 64n - 1n, 0], [2], '[18446744073709551615,0]'],
    ['bitfield', 'H5T_STD_B8LE', [255], [1], '[255]'],
    ['boolean enum', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1 } }, [true, false], [2], '[true,false]'],
    ['enum', { class: 'H5T_ENUM', base: 'H5T_STD_U16BE', mapping: { A: 0, B: 300 } }, ['B', 'A'], [2], '[300,0]'],
    ['fixed strings', { class: 'H5T_STRING', length: 6, charSet: 'H5T_CSET_UTF8' }, ['a"b', 'é\n', ''], [3], '["a\\"b","é\\n",""]'],
    ['vlen strings', { class: 'H5T_STRING', length: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8' }, ['x', '', '€uro'], [3], '["x","","€uro"]'],
    ['compound', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_IEEE_F32LE' }, { name: 'b', type: { class: 'H5T_STRING', length: 2 } }, { name: 'c', type: 'H5T_STD_I64BE' }] },
      [[0.1, 'ok', 2n ** 60n], [NaN, '', -1]], [2], '[[0.1,"ok",1152921504606846976],[NaN,"",-1]]', '[[0.1,"ok",1152921504606846976],[null,"",-1]]'],
    ['compound with vlen fields', { class: 'H5T_COMPOUND', fields: [{ name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }, { name: 'v', type: { class: 'H5T_VLEN', base: 'H5T_IEEE_F32LE' } }] },
      [['a', [0.1, 0.2]], ['', []], ['bcd', [1]]], [3], '[["a",[0.1,0.2]],["",[]],["bcd",[1]]]'],
    ['array type', { class: 'H5T_ARRAY', base: 'H5T_IEEE_F32BE', dims: [2, 2] }, [[[0.1, 0.2], [0.3, NaN]]], [1], '[[[0.1,0.2],[0.3,NaN]]]', '[[[0.1,0.2],[0.3,null]]]'],
    ['array of vlen strings', { class: 'H5T_ARRAY', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, dims: [2] }, [['a', 'b'], ['', 'c']], [2], '[["a","b"],["","c"]]'],
    ['vlen sequences', { class: 'H5T_VLEN', base: 'H5T_STD_I16LE' }, [[1, 2, 3], [], [-1]], [3], '[[1,2,3],[],[-1]]'],
    ['references', 'H5T_STD_REF_OBJ', ['groups/g-1', ''], [2], '["groups/g-1",""]'],
    ['vlen of vlen strings', { class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8' } }, [['apples', '', 'é"'], []], [2], '[["apples","","é\\""],[]]'],
    ['vlen of vlen float32', { class: 'H5T_VLEN', base: { class: 'H5T_VLEN', base: 'H5T_IEEE_F32LE' } }, [[[0.1, NaN], []], [[]]], [2], '[[[0.1,NaN],[]],[[]]]', '[[[0.1,null],[]],[[]]]'],
    ['compound with a vlen of compounds with vlen fields', { class: 'H5T_COMPOUND', fields: [{ name: 'f1', type: { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' } }, { name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }] } } }, { name: 'f2', type: 'H5T_STD_I64LE' }] },
      [[[[[1, 2], 'x'], [[], '']], 2], [[], 3]], [2], '[[[[[1,2],"x"],[[],""]],2],[[],3]]'],
    ['opaque as base64', { class: 'H5T_OPAQUE', size: 2, tag: '' }, ['/v8=', 'AAA='], [2], '["/v8=","AAA="]'],
  ];
  for (const [name, typeIn, values, shape, text, ignored] of typed) {
    it(`writes ${name}`, () => {
      const t = parseType(typeIn);
      const buf = encodeElements(values, t);
      expect(valueToJson(buf, t, shape)).to.equal(text);
      expect(valueToJson(buf, t, shape, { ignoreNan: true })).to.equal(ignored ?? text);
      const rand = rng(values.length);
      for (let trial = 0; trial < 10; trial++) expect(writeInPieces(t, shape, buf, values.length, rand)).to.equal(text);
    });
  }

  // Fixed-length strings: printable ASCII is copied straight into the text, anything else goes
  // through JSON.stringify of the decoded string; both must give what the codec decodes.
  const fixedCases: [string, string, number[], string][] = [
    ['NULLPAD, padded', 'H5T_STR_NULLPAD', [0x4b, 0x4f, 0, 0], '"KO"'],
    ['NULLPAD, full length', 'H5T_STR_NULLPAD', [0x4b, 0x4f, 0x52, 0x44], '"KORD"'],
    ['NULLTERM, bytes after the NUL ignored', 'H5T_STR_NULLTERM', [0x61, 0, 0x62, 0x63], '"a"'],
    ['SPACEPAD, trailing spaces and NULs dropped', 'H5T_STR_SPACEPAD', [0x61, 0x20, 0x62, 0x20, 0x20, 0], '"a b"'],
    ['empty', 'H5T_STR_NULLPAD', [0, 0, 0], '""'],
    ['quote and backslash escaped', 'H5T_STR_NULLPAD', [0x22, 0x5c, 0x41], '"\\"\\\\A"'],
    ['control characters and DEL', 'H5T_STR_NULLPAD', [0x09, 0x01, 0x7f], JSON.stringify('\t\u0001\u007f')],
    ['space and tilde kept', 'H5T_STR_NULLPAD', [0x20, 0x7e, 0x20, 0x41], '" ~ A"'],
    ['UTF-8', 'H5T_STR_NULLPAD', [0xc3, 0xa9, 0x78, 0], '"éx"'],
    ['invalid UTF-8 as U+FFFD', 'H5T_STR_NULLPAD', [0xff, 0x41, 0xc3], JSON.stringify('\ufffdA\ufffd')],
  ];
  for (const [name, strPad, bytes, text] of fixedCases) {
    it(`writes a fixed-length string: ${name}`, () => {
      const t = parseType({ class: 'H5T_STRING', length: bytes.length, strPad, charSet: 'H5T_CSET_UTF8' });
      const buf = Buffer.from([...bytes, ...bytes]);
      expect(valueToJson(buf, t, [2])).to.equal(`[${text},${text}]`);
      expect(valueToJson(buf, t, [2])).to.equal(JSON.stringify(decodeElements(buf, t, 2).values));
      const pair = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'i', type: 'H5T_STD_U8LE' }, { name: 's', type: t }] });
      const row = Buffer.from([7, ...bytes]);
      expect(valueToJson(row, pair, [])).to.equal(`[7,${text}]`);
    });
  }

  it('writeBytes/endBytes give the same text as UTF-8', () => {
    const t = parseType({ class: 'H5T_STRING', length: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8' });
    const buf = encodeElements(['é', 'x'], t);
    const w = new ValueJsonWriter(t, [2]);
    const bytes = Buffer.concat([w.writeBytes(buf, 2), w.endBytes()]);
    expect(bytes.toString('utf8')).to.equal('["é","x"]');
  });

  // [name, type, element bytes, shape, pages]: writeChunks/endChunks give the same bytes as write/end
  const f32many = new Float32Array(400000).map((_, i) => Math.sin(i) * 10 ** ((i % 17) - 8));
  f32many[5] = NaN;
  f32many[6] = -Infinity;
  f32many[7] = -0;
  const VSTR = { class: 'H5T_STRING', length: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM' } as const;
  const chunked: [string, TypeJson | string, Buffer, number[], number][] = [
    ['float32 2-D over 1 MiB of text, 7 pages', 'H5T_IEEE_F32LE', Buffer.from(f32many.buffer), [400, 1000], 7],
    ['float32 big-endian, 1 page', 'H5T_IEEE_F32BE', encodeElements(Array.from(f32many.subarray(0, 1000)), parseType('H5T_IEEE_F32BE')), [1000], 1],
    ['float64 3-D, 3 pages', 'H5T_IEEE_F64LE', Buffer.from(new Float64Array(60000).map((_, i) => i / 7).buffer), [10, 60, 100], 3],
    ['int32, 2 pages', 'H5T_STD_I32LE', Buffer.from(new Int32Array(300000).map((_, i) => i * 7919 - 1e9).buffer), [300000], 2],
    ['strings (UTF-8)', VSTR, encodeElements(['é', 'x', '日本'], parseType(VSTR)), [3], 1],
    ['scalar', 'H5T_IEEE_F32LE', Buffer.from(new Float32Array([0.1]).buffer), [], 1],
    ['empty extent', 'H5T_STD_I32LE', Buffer.alloc(0), [3, 0], 1],
  ];
  for (const [name, typeIn, buf, shape, pages] of chunked) {
    it(`writeChunks/endChunks: ${name}`, () => {
      const t = parseType(typeIn);
      const count = shape.reduce((a, b) => a * b, 1);
      const split = (w: ValueJsonWriter, f: (b: Buffer, n: number) => unknown) => {
        const per = Math.max(1, Math.ceil(count / pages));
        let off = 0;
        for (let i = 0; i < count; i += per) {
          const n = Math.min(per, count - i);
          const size = count ? buf.length / count : 0;
          f(buf.subarray(off, off + n * size), n);
          off += n * size;
        }
      };
      const text: string[] = [];
      const w1 = new ValueJsonWriter(t, shape);
      split(w1, (b, n) => text.push(w1.write(b, n)));
      text.push(w1.end());
      const chunks: Buffer[] = [];
      const w2 = new ValueJsonWriter(t, shape);
      split(w2, (b, n) => chunks.push(...w2.writeChunks(b, n)));
      chunks.push(...w2.endChunks());
      // chunks were handed over without copies: the writer must not have written into them since
      const copies = chunks.map((c) => Buffer.from(c));
      expect(Buffer.concat(chunks).toString('utf8')).to.equal(text.join(''));
      expect(chunks.every((c, i) => c.equals(copies[i]))).to.equal(true);
      for (const c of chunks) expect(c.length).to.be.at.most(1 << 20);
    });
  }

  it('formats many random float32 values that parse back exactly', () => {
    const rand = rng(7);
    const n = 20000;
    const f = new Float32Array(n);
    for (let i = 0; i < n; i++) f[i] = (rand() - 0.5) * 10 ** Math.floor(rand() * 60 - 30);
    const t = parseType('H5T_IEEE_F32LE');
    const text = writeInPieces(t, [100, 200], Buffer.from(f.buffer), n, rand);
    const back = (JSON.parse(text) as number[][]).flat();
    expect(back.length).to.equal(n);
    for (let i = 0; i < n; i++) expect(Math.fround(back[i])).to.equal(f[i]);
  });

  it('formats random float64 values exactly like String()', () => {
    const rand = rng(11);
    const n = 10000; // more than one internal chunk
    const f = new Float64Array(n);
    for (let i = 0; i < n; i++) f[i] = (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20);
    f[5000] = NaN;
    const t = parseType('H5T_IEEE_F64LE');
    const text = valueToJson(Buffer.from(f.buffer), t, [n]);
    expect(text).to.equal('[' + Array.from(f, (x) => (Number.isNaN(x) ? 'NaN' : String(x))).join(',') + ']');
  });

  it('the JSON of a vlen of variable-length elements: a malformed inner count is a 400, not a read past the element', () => {
    const t = parseType({ class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } });
    const bad = Buffer.from('06000000' + '01000000' + '61' + '01000000' + '62', 'hex');
    expect(() => valueToJson(bad, t, [1])).to.throw(H5StoreError, 'truncated');
  });
});

describe('codec/textsink TextSink', () => {
  /** Operations on a sink: [op, argument]; `take*` ops check the text returned. */
  type Op = ['ascii' | 'utf8', string] | ['digits', number] | ['takeAscii' | 'take' | 'takeBytes' | 'takeChunks', string] | ['reset', ''];
  const big = 'x'.repeat(3000);
  const cases: [string, number, Op[]][] = [
    ['small text, no growth', 64, [['ascii', 'abc'], ['takeAscii', 'abc'], ['ascii', 'de'], ['take', 'de']]],
    ['growth keeps earlier bytes (no copy, chunks)', 64, [['ascii', big], ['ascii', 'y'], ['takeAscii', big + 'y']]],
    ['UTF-8 across a growth', 64, [['ascii', 'a'.repeat(62)], ['utf8', 'é日'], ['take', 'a'.repeat(62) + 'é日']]],
    ['takeBytes copies, then reuse', 64, [['ascii', 'abc'], ['takeBytes', 'abc'], ['ascii', 'xyz'], ['takeBytes', 'xyz']]],
    ['takeChunks, then more text', 64, [['ascii', 'abc'], ['takeChunks', 'abc'], ['ascii', 'def'], ['takeChunks', 'def'], ['takeChunks', '']]],
    ['takeChunks over many growths', 64, [['digits', 5_000_000], ['takeChunks', 'digits:5000000']]],
    ['reset drops untaken text', 64, [['ascii', big], ['ascii', 'q'], ['reset', ''], ['ascii', 'z'], ['takeAscii', 'z']]],
  ];
  const digits = (n: number) => {
    let s = '';
    for (let i = 0; s.length < n; i++) s += String(i % 10).repeat(997);
    return s.slice(0, n);
  };
  for (const [name, cap, ops] of cases) {
    it(name, () => {
      const s = new TextSink(cap);
      const handed: [Buffer, Buffer][] = [];
      for (const [op, arg] of ops) {
        if (op === 'ascii' || op === 'utf8') s[op](arg);
        else if (op === 'digits') {
          const text = digits(arg);
          for (let i = 0; i < text.length; i += 1000) s.ascii(text.slice(i, i + 1000));
        } else if (op === 'reset') s.reset();
        else {
          const want = arg.startsWith('digits:') ? digits(Number(arg.slice(7))) : arg;
          if (op === 'takeChunks') {
            const chunks = s.takeChunks();
            for (const c of chunks) {
              expect(c.length).to.be.at.most(1 << 20);
              handed.push([c, Buffer.from(c)]);
            }
            expect(Buffer.concat(chunks).toString('latin1')).to.equal(want);
          } else if (op === 'takeBytes') expect(s.takeBytes().toString('utf8')).to.equal(want);
          else expect(s[op]()).to.equal(want);
          expect(s.length).to.equal(0);
        }
      }
      // bytes handed over by takeChunks are never written again
      for (const [c, copy] of handed) expect(c.equals(copy)).to.equal(true);
    });
  }
});
