import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';
import { parseType, type TypeJson } from '../../src/codec/types.js';
import { decodeElements, encodeElements, flattenValue, nestValues, selectionValues } from '../../src/codec/values.js';
import { expectH5StoreError } from '../helpers/errors.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const REF = 'groups/g-0123abcd-0123abcd-0123-456789-abcdef';
const refBytes = (s: string) => Buffer.concat([Buffer.from(s), Buffer.alloc(48 - Buffer.byteLength(s))]);

/** [name, type (client form), values in, expected wire bytes or null, expected decoded values (default: values in)] */
const roundTrips: [string, unknown, unknown[], Buffer | null, unknown[]?][] = [
  ['int8', 'H5T_STD_I8LE', [-128, 127, 0, -1], hex('80 7f 00 ff')],
  ['uint8', 'H5T_STD_U8LE', [0, 255], hex('00 ff')],
  ['int16 LE', 'H5T_STD_I16LE', [-2, 258], hex('feff 0201')],
  ['int16 BE', 'H5T_STD_I16BE', [-2, 258], hex('fffe 0102')],
  ['uint16 BE', 'H5T_STD_U16BE', [1, 65535], hex('0001 ffff')],
  ['int32 BE', 'H5T_STD_I32BE', [-2, 2147483647, -2147483648], hex('fffffffe 7fffffff 80000000')],
  ['uint32 LE', 'H5T_STD_U32LE', [4294967295, 1], hex('ffffffff 01000000')],
  ['int64 LE small', 'H5T_STD_I64LE', [1, -1, 2 ** 53 - 1], hex('0100000000000000 ffffffffffffffff ffffffffffff1f00')],
  ['int64 BE', 'H5T_STD_I64BE', [-2, 4294967296], hex('fffffffffffffffe 0000000100000000')],
  [
    'int64 beyond 2^53 as bigint',
    'H5T_STD_I64LE',
    [2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n, 2 ** 60],
    hex('0100000000002000 0000000000000080 ffffffffffffff7f 0000000000000010'),
    [2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 60n],
  ],
  ['uint64 BE max', 'H5T_STD_U64BE', [2n ** 64n - 1n, 5n], hex('ffffffffffffffff 0000000000000005'), [2n ** 64n - 1n, 5]],
  ['bitfield 16 LE', 'H5T_STD_B16LE', [0xffff, 1], hex('ffff 0100')],
  ['bitfield 8', { class: 'H5T_BITFIELD', base: 'H5T_STD_B8BE' }, [0xa5], hex('a5')],
  ['float16 LE', 'H5T_IEEE_F16LE', [1, -2, 0.5, 65504, 2 ** -24, Infinity], hex('003c 00c0 0038 ff7b 0100 007c')],
  ['float16 BE', 'H5T_IEEE_F16BE', [1, -0], hex('3c00 8000')],
  ['float16 rounding', 'H5T_IEEE_F16LE', [0.1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 70000], hex('662e 003c 023c 007c'), [0.0999755859375, 1, 1 + 2 ** -9, Infinity]],
  ['float32 LE', 'H5T_IEEE_F32LE', [1.5, -0.25], hex('0000c03f 000080be')],
  ['float32 BE', 'H5T_IEEE_F32BE', [1.5, 0.1], hex('3fc00000 3dcccccd'), [1.5, Math.fround(0.1)]],
  ['float64 BE', 'H5T_IEEE_F64BE', [1.5, -Infinity], hex('3ff8000000000000 fff0000000000000')],
  ['float64 LE', 'H5T_IEEE_F64LE', [0.1, 1e300], null],
  ['fixed string NULLPAD', { class: 'H5T_STRING', length: 4 }, ['ab', 'abcd', ''], Buffer.from('ab\0\0abcd\0\0\0\0')],
  ['fixed string SPACEPAD', { class: 'H5T_STRING', length: 4, strPad: 'H5T_STR_SPACEPAD' }, ['ab', ''], Buffer.from('ab      ')],
  ['fixed string NULLTERM', { class: 'H5T_STRING', length: 3, strPad: 'H5T_STR_NULLTERM' }, ['ab', 'abc'], Buffer.from('ab\0abc')],
  ['fixed UTF-8 string', { class: 'H5T_STRING', length: 4, charSet: 'H5T_CSET_UTF8' }, ['é€'.slice(0, 1), 'aé'], Buffer.from('é\0\0aé\0')],
  ['vlen string (wire-reference 3.5)', { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, ['a', 'bcd', ''], hex('01000000 61 03000000 626364 00000000')],
  ['vlen UTF-8 string', { class: 'H5T_STRING', length: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8' }, ['€'], hex('03000000 e282ac')],
  ['vlen sequence int32', { class: 'H5T_VLEN', base: 'H5T_STD_I32' }, [[1, 2], [], [3]], hex('08000000 01000000 02000000 00000000 04000000 03000000')],
  ['vlen sequence int16 BE', { class: 'H5T_VLEN', base: 'H5T_STD_I16BE' }, [[1, -1]], hex('04000000 0001 ffff')],
  ['vlen sequence float64', { class: 'H5T_VLEN', base: 'H5T_IEEE_F64' }, [[0.5]], hex('08000000 000000000000e03f')],
  ['vlen of compound', { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_U8LE' }, { name: 'b', type: 'H5T_STD_U8LE' }] } },
    [[[1, 2], [3, 4]]], hex('04000000 01020304')],
  [
    'compound of three vlen strings (wire-reference 3.5 example)',
    { class: 'H5T_COMPOUND', fields: ['x', 'y', 'z'].map((name) => ({ name, type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } })) },
    [['a', 'bcd', '']],
    hex('01000000 61 03000000 626364 00000000'),
  ],
  [
    'compound with int and vlen fields',
    { class: 'H5T_COMPOUND', fields: [{ name: 'n', type: 'H5T_STD_I16BE' }, { name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }, { name: 'v', type: { class: 'H5T_VLEN', base: 'H5T_STD_U8LE' } }] },
    [[1, 'x', [7, 8]], [2, '', []]],
    hex('0001 01000000 78 02000000 0708   0002 00000000 00000000'),
  ],
  [
    'fixed compound (packed)',
    { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_IEEE_F32BE' }, { name: 'c', type: { class: 'H5T_STRING', length: 2 } }] },
    [[1, 1.5, 'hi'], [-1, -2, '']],
    hex('01 3fc00000 6869   ff c0000000 0000'),
  ],
  [
    'nested compound',
    { class: 'H5T_COMPOUND', fields: [{ name: 'p', type: { class: 'H5T_COMPOUND', fields: [{ name: 'x', type: 'H5T_STD_U8LE' }, { name: 'y', type: 'H5T_STD_U8LE' }] } }, { name: 'q', type: 'H5T_STD_U8LE' }] },
    [[[1, 2], 3]],
    hex('010203'),
  ],
  ['array type', { class: 'H5T_ARRAY', base: 'H5T_STD_I16BE', dims: [2, 2] }, [[[1, 2], [3, 4]]], hex('0001 0002 0003 0004')],
  ['array type 1-D of strings', { class: 'H5T_ARRAY', base: { class: 'H5T_STRING', length: 2 }, dims: [2] }, [['a', 'bc']], Buffer.from('a\0bc')],
  ['array of vlen strings', { class: 'H5T_ARRAY', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, dims: [2] }, [['a', '']], hex('01000000 61 00000000')],
  ['enum', { class: 'H5T_ENUM', base: 'H5T_STD_I16BE', mapping: { SOLID: 0, LIQUID: 1, GAS: 2 } }, [0, 2, 1], hex('0000 0002 0001')],
  ['boolean enum', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1 } }, [true, false, true], hex('01 00 01')],
  ['object reference', 'H5T_STD_REF_OBJ', [REF, ''], Buffer.concat([refBytes(REF), Buffer.alloc(48)])],
  [
    'region reference (byte count + JSON text; null as count 0)',
    { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' },
    [{ id: 'd-1', select_type: 'H5S_SEL_ALL' }, null],
    Buffer.concat([hex('28000000'), Buffer.from('{"id":"d-1","select_type":"H5S_SEL_ALL"}'), hex('00000000')]),
  ],
  ['opaque (base64 per element)', { class: 'H5T_OPAQUE', size: 3, tag: '' }, ['AQID', '/v8A'], hex('010203 feff00')],
  // vlen sequences of variable-length elements: no binary form in the REST API (lacksBinaryForm);
  // h5store's inner form is the byte count of the elements that follow, each in its own form
  [
    'vlen of vlen strings (inner form)',
    { class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } },
    [['a', 'bcd', ''], []],
    hex('10000000 01000000 61 03000000 626364 00000000   00000000'),
  ],
  [
    'vlen of vlen int32 (inner form)',
    { class: 'H5T_VLEN', base: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' } },
    [[[1, 2], []], [[]], []],
    hex('10000000 08000000 01000000 02000000 00000000   04000000 00000000   00000000'),
  ],
  [
    'vlen of compounds with vlen fields, in a compound (h5pyd test_nested_compound_vlen)',
    {
      class: 'H5T_COMPOUND',
      fields: [
        { name: 'f1', type: { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' } }, { name: 'b', type: { class: 'H5T_VLEN', base: 'H5T_STD_I16BE' } }] } } },
        { name: 'f2', type: 'H5T_STD_I64LE' },
      ],
    },
    [[[[[1], [2, 3]], [[], [4]]], 7], [[], -1]],
    hex('1a000000 04000000 01000000 04000000 0002 0003   00000000 02000000 0004   0700000000000000   00000000 ffffffffffffffff'),
  ],
  [
    'vlen of compounds with a vlen string and a number',
    { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8' } }, { name: 'n', type: 'H5T_STD_U8LE' }] } },
    [[['é', 1], ['', 2]]],
    hex('0c000000 02000000 c3a9 01   00000000 02'),
  ],
  [
    'vlen of arrays of vlen strings, and of region references',
    { class: 'H5T_COMPOUND', fields: [
      { name: 'a', type: { class: 'H5T_VLEN', base: { class: 'H5T_ARRAY', dims: [2], base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } } } },
      { name: 'r', type: { class: 'H5T_VLEN', base: { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' } } },
    ] },
    [[[['x', '']], [null]]],
    hex('09000000 01000000 78 00000000   04000000 00000000'),
  ],
];

describe('codec/values round trips', () => {
  for (const [name, typeIn, values, bytes, decoded] of roundTrips) {
    it(name, () => {
      const t = parseType(typeIn);
      const buf = encodeElements(values, t);
      if (bytes) expect(buf.toString('hex')).to.equal(bytes.toString('hex'));
      const out = decodeElements(buf, t, values.length);
      expect(out.end).to.equal(buf.length);
      expect(out.values).to.deep.equal(decoded ?? values);
      // decoding at an offset inside a larger buffer
      const padded = Buffer.concat([Buffer.from([9, 9, 9]), buf, Buffer.from([7])]);
      const out2 = decodeElements(padded, t, values.length, 3);
      expect(out2.values).to.deep.equal(decoded ?? values);
      expect(out2.end).to.equal(3 + buf.length);
    });
  }
  it('float NaN survives', () => {
    for (const base of ['H5T_IEEE_F16LE', 'H5T_IEEE_F32BE', 'H5T_IEEE_F64LE']) {
      const t = parseType(base);
      const v = decodeElements(encodeElements([NaN], t), t, 1).values[0];
      expect(Number.isNaN(v)).to.equal(true);
    }
  });
});

describe('codec/values encode leniency', () => {
  const same: [string, unknown, unknown[], unknown[]][] = [
    ['float words', 'H5T_IEEE_F64LE', ['nan', 'NaN', 'inf', '-inf', 'Infinity', '-Infinity'], [NaN, NaN, Infinity, -Infinity, Infinity, -Infinity]],
    ['bigint for small ints', 'H5T_STD_I8LE', [5n], [5]],
    ['bigint for floats', 'H5T_IEEE_F64LE', [5n], [5]],
    ['boolean enum from 0/1 and names', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1 } }, [1, 0, 'TRUE'], [true, false, true]],
    ['enum member names', { class: 'H5T_ENUM', base: 'H5T_STD_U8LE', mapping: { RED: 0, GREEN: 7 } }, ['GREEN', 'RED', 7], [7, 0, 7]],
    [
      'compound from an object keyed by field name',
      { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_STD_I8LE' }] },
      [{ b: 2, a: 1 }],
      [[1, 2]],
    ],
    ['bare object id gets its collection', 'H5T_STD_REF_OBJ', ['d-0123abcd-0123abcd-0123-456789-abcdef'], ['datasets/d-0123abcd-0123abcd-0123-456789-abcdef']],
    ['float32 rounds', 'H5T_IEEE_F32LE', [0.1, 1e40], [Math.fround(0.1), Infinity]],
    ['integral float for int', 'H5T_STD_I32LE', [3.0], [3]],
  ];
  for (const [name, typeIn, values, decoded] of same) {
    it(name, () => {
      const t = parseType(typeIn);
      expect(decodeElements(encodeElements(values, t), t, values.length).values).to.deep.equal(decoded);
    });
  }
});

describe('codec/values fixed strings longer than the type (truncated as HDF5 does, H5T__conv_s_s)', () => {
  const cases: [string, unknown, string, string][] = [
    ['NULLPAD keeps length bytes', { class: 'H5T_STRING', length: 3, strPad: 'H5T_STR_NULLPAD' }, 'abcdef', '616263'],
    ['NULLTERM keeps length-1 bytes and a NUL', { class: 'H5T_STRING', length: 3, strPad: 'H5T_STR_NULLTERM' }, 'abcdef', '616200'],
    ['SPACEPAD keeps length bytes', { class: 'H5T_STRING', length: 3, strPad: 'H5T_STR_SPACEPAD' }, 'abcd', '616263'],
    ['UTF-8 cut by bytes', { class: 'H5T_STRING', length: 3, charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLPAD' }, '€a', 'e282ac'],
    ['UTF-8 cut inside a character', { class: 'H5T_STRING', length: 2, charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLPAD' }, '€', 'e282'],
    ['exact fit unchanged (NULLTERM)', { class: 'H5T_STRING', length: 3, strPad: 'H5T_STR_NULLTERM' }, 'abc', '616263'],
  ];
  for (const [name, typeIn, value, wire] of cases) {
    it(name, () => expect(encodeElements([value], parseType(typeIn)).toString('hex')).to.equal(wire));
  }
});

describe('codec/values encode rejections', () => {
  const bad: [string, unknown, unknown[], string][] = [
    ['int8 out of range', 'H5T_STD_I8LE', [300], 'Value 300 out of range for H5T_STD_I8LE'],
    ['int8 below range', 'H5T_STD_I8LE', [-129], 'Value -129 out of range for H5T_STD_I8LE'],
    ['uint8 negative', 'H5T_STD_U8LE', [-1], 'out of range for H5T_STD_U8LE'],
    ['uint16 too big', 'H5T_STD_U16BE', [65536], 'out of range'],
    ['int32 fractional', 'H5T_STD_I32LE', [1.5], 'not an integer'],
    ['int32 string', 'H5T_STD_I32LE', ['5'], 'expected an integer'],
    ['int32 null', 'H5T_STD_I32LE', [null], 'expected an integer'],
    ['int32 boolean', 'H5T_STD_I32LE', [true], 'expected an integer'],
    ['int32 NaN', 'H5T_STD_I32LE', [NaN], 'not an integer'],
    ['int64 2^63', 'H5T_STD_I64LE', [2 ** 63], 'out of range for H5T_STD_I64LE'],
    ['int64 bigint 2^63', 'H5T_STD_I64LE', [2n ** 63n], 'out of range'],
    ['uint64 2^64', 'H5T_STD_U64LE', [2n ** 64n], 'out of range'],
    ['uint64 negative', 'H5T_STD_U64LE', [-1], 'out of range'],
    ['bigint out of range for int16', 'H5T_STD_I16LE', [40000n], 'out of range'],
    ['float string', 'H5T_IEEE_F64LE', ['hello'], 'expected a number'],
    ['float null', 'H5T_IEEE_F32LE', [null], 'expected a number'],
    ['float prototype word', 'H5T_IEEE_F32LE', ['constructor'], 'expected a number'],
    ['float list', 'H5T_IEEE_F32LE', [[1]], 'expected a number'],
    ['fixed string number', { class: 'H5T_STRING', length: 3 }, [5], 'expected a string'],
    ['vlen string number', { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, [5], 'expected a string'],
    ['vlen string null', { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, [null], 'expected a string'],
    ['compound too few fields', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_STD_I8LE' }] }, [[1]], 'expected 2 field values'],
    ['compound too many fields', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }] }, [[1, 2]], 'expected 1 field values'],
    ['compound missing key', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_STD_I8LE' }] }, [{ a: 1 }], "missing field 'b'"],
    ['compound unknown key', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }] }, [{ a: 1, z: 2 }], "unknown field 'z'"],
    ['compound scalar', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }] }, [1], 'expected a list of 1 field values'],
    ['compound field out of range', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }] }, [[1000]], 'out of range'],
    ['array type wrong length', { class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [3] }, [[1, 2]], 'expected 3 elements, got 2'],
    ['array type wrong nesting', { class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [2, 2] }, [[1, 2, 3, 4]], 'Invalid array-type value: expected 2 items at dimension 0, got 4'],
    ['array type ragged', { class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [2, 2] }, [[[1, 2], 3]], 'expected a list of 2 at dimension 1'],
    ['array type scalar', { class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [2] }, [1], 'expected a list of 2 elements'],
    ['vlen not a list', { class: 'H5T_VLEN', base: 'H5T_STD_I8LE' }, [1], 'expected a list'],
    ['vlen bad item', { class: 'H5T_VLEN', base: 'H5T_STD_I8LE' }, [[1, 'x']], 'expected an integer'],
    ['enum non-member value', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 0, B: 1 } }, [5], 'not a member value or name'],
    ['enum unknown name', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 0, B: 1 } }, ['C'], 'not a member value or name'],
    ['boolean 2', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1 } }, [2], 'expected true or false'],
    ['boolean string', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1 } }, ['yes'], 'expected true or false'],
    ['reference number', 'H5T_STD_REF_OBJ', [5], 'Invalid reference value'],
    ['reference too long', 'H5T_STD_REF_OBJ', ['groups/' + 'x'.repeat(48)], 'longer than 48 bytes'],
    ['opaque wrong size', { class: 'H5T_OPAQUE', size: 4 }, ['AQID'], '3 bytes, the type has 4'],
    ['opaque not base64', { class: 'H5T_OPAQUE', size: 3 }, ['!!!!'], 'expected a base64 string'],
    ['opaque number', { class: 'H5T_OPAQUE', size: 3 }, [3], 'expected a base64 string'],
  ];
  for (const [name, typeIn, values, fragment] of bad) {
    it(`rejects ${name}`, () => expectH5StoreError(() => encodeElements(values, parseType(typeIn)), 400, fragment));
  }
  it('names the element index when there are several values', () => {
    expectH5StoreError(() => encodeElements([1, 2, 300], parseType('H5T_STD_I8LE')), 400, 'Value 300 out of range for H5T_STD_I8LE (element 2)');
  });
  it('a vlen of a variable-length type: only lists, each element checked', () => {
    const t = parseType({ class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } });
    expectH5StoreError(() => encodeElements(['a'], t), 400, 'expected a list');
    expectH5StoreError(() => encodeElements([['a', 3]], t), 400, 'expected a string');
  });
});

describe('codec/values decode errors', () => {
  it('rejects a vlen of variable-length elements whose elements do not fill its byte count exactly', () => {
    const t = parseType({ class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } });
    // the count (6) ends inside the second string: its element may not read past it
    expectH5StoreError(() => decodeElements(hex('06000000 01000000 61 01000000 62'), t, 1), 400, 'truncated');
    // an element count beyond the sequence's bytes, though the buffer holds them
    expectH5StoreError(() => decodeElements(hex('04000000 05000000 6162636465'), t, 1), 400, 'truncated');
    expectH5StoreError(() => decodeElements(hex('ffffffff'), t, 1), 400, 'negative');
  });
  it('rejects a truncated fixed-size buffer', () => {
    expectH5StoreError(() => decodeElements(Buffer.alloc(7), parseType('H5T_STD_I32LE'), 2), 400, 'truncated');
  });
  it('rejects a truncated vlen payload', () => {
    const t = parseType({ class: 'H5T_STRING', length: 'H5T_VARIABLE' });
    expectH5StoreError(() => decodeElements(hex('05000000 6162'), t, 1), 400, 'truncated');
    expectH5StoreError(() => decodeElements(hex('0100'), t, 1), 400, 'truncated');
  });
  it('rejects a negative vlen count', () => {
    const t = parseType({ class: 'H5T_VLEN', base: 'H5T_STD_I8LE' });
    expectH5StoreError(() => decodeElements(hex('ffffffff'), t, 1), 400, 'negative');
  });
  it('rejects a vlen count not a multiple of the base size', () => {
    const t = parseType({ class: 'H5T_VLEN', base: 'H5T_STD_I32LE' });
    expectH5StoreError(() => decodeElements(hex('03000000 010203'), t, 1), 400, 'not a multiple');
  });
  it('rejects a truncated fixed field after a vlen field', () => {
    const t = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }, { name: 'n', type: 'H5T_STD_I32LE' }] });
    expectH5StoreError(() => decodeElements(hex('01000000 61 0102'), t, 1), 400, 'truncated');
  });
  it('strips padding per strPad', () => {
    const pads: [string, Buffer, string][] = [
      ['H5T_STR_NULLTERM', Buffer.from('a\0b\0'), 'a'],
      ['H5T_STR_NULLPAD', Buffer.from('a b\0'), 'a b'],
      ['H5T_STR_SPACEPAD', Buffer.from('ab  '), 'ab'],
      ['H5T_STR_NULLPAD', Buffer.from('abcd'), 'abcd'],
    ];
    for (const [strPad, bytes, want] of pads) {
      expect(decodeElements(bytes, parseType({ class: 'H5T_STRING', length: 4, strPad }), 1).values).to.deep.equal([want]);
    }
  });
  it('reads a reference up to the first NUL', () => {
    const t = parseType('H5T_STD_REF_OBJ');
    expect(decodeElements(Buffer.alloc(48), t, 1).values).to.deep.equal(['']);
  });
});

describe('codec/values flattenValue / nestValues', () => {
  const I32 = parseType('H5T_STD_I32LE');
  const CMP = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }, { name: 'b', type: { class: 'H5T_STRING', length: 4 } }] });
  const CMP1 = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }] });
  const ARR = parseType({ class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [2] });
  const VL = parseType({ class: 'H5T_VLEN', base: 'H5T_STD_I32LE' });

  const ok: [string, unknown, number[], TypeJson, unknown[]][] = [
    ['scalar bare', 5, [], I32, [5]],
    ['scalar one-element list', [5], [], I32, [5]],
    ['1-D', [1, 2, 3], [3], I32, [1, 2, 3]],
    ['2-D', [[1, 2, 3], [4, 5, 6]], [2, 3], I32, [1, 2, 3, 4, 5, 6]],
    ['3-D', [[[1], [2]], [[3], [4]]], [2, 2, 1], I32, [1, 2, 3, 4]],
    ['empty 1-D', [], [0], I32, []],
    ['empty 2-D', [[], []], [2, 0], I32, []],
    ['bare element for a one-element selection', 7, [1], I32, [7]],
    ['bare element for [1,1]', 7, [1, 1], I32, [7]],
    ['nested one-element selection', [[7]], [1, 1], I32, [7]],
    ['compound scalar', [1, 'a'], [], CMP, [[1, 'a']]],
    ['compound scalar wrapped', [[1, 'a']], [], CMP, [[1, 'a']]],
    ['compound 1-D', [[1, 'a'], [2, 'b']], [2], CMP, [[1, 'a'], [2, 'b']]],
    ['compound bare for [1]', [1, 'a'], [1], CMP, [[1, 'a']]],
    ['compound nested for [1]', [[1, 'a']], [1], CMP, [[1, 'a']]],
    ['one-field compound nested for [1]', [[5]], [1], CMP1, [[5]]],
    ['one-field compound scalar', [5], [], CMP1, [[5]]],
    ['one-field compound scalar wrapped', [[5]], [], CMP1, [[5]]],
    ['compound objects', [{ a: 1, b: 'x' }], [1], CMP, [{ a: 1, b: 'x' }]],
    ['array-type elements', [[1, 2], [3, 4]], [2], ARR, [[1, 2], [3, 4]]],
    ['array-type scalar', [1, 2], [], ARR, [[1, 2]]],
    ['vlen scalar', [1, 2, 3], [], VL, [[1, 2, 3]]],
    ['vlen scalar wrapped', [[1, 2, 3]], [], VL, [[1, 2, 3]]],
    ['vlen 1-D', [[1], [], [2, 3]], [3], VL, [[1], [], [2, 3]]],
  ];
  for (const [name, value, shape, type, flat] of ok) {
    it(`flattens ${name}`, () => expect(flattenValue(value, shape, type)).to.deep.equal(flat));
  }

  const bad: [string, unknown, number[], TypeJson, string][] = [
    ['too few', [1, 2], [3], I32, "input data doesn't match selection: expected 3 elements, got 2"],
    ['too many', [1, 2, 3, 4], [3], I32, 'expected 3 elements, got 4'],
    ['not a list', 5, [3], I32, 'expected a list of 3 elements'],
    ['flat for 2-D', [1, 2, 3, 4, 5, 6], [2, 3], I32, 'expected 2 items at dimension 0, got 6'],
    ['ragged', [[1, 2, 3], [4, 5]], [2, 3], I32, 'expected 3 items at dimension 1, got 2'],
    ['scalar in 2-D', [[1, 2, 3], 4], [2, 3], I32, 'expected a list of 3 at dimension 1'],
    ['compound wrong count', [[1, 'a'], [2, 'b'], [3, 'c']], [2], CMP, 'expected 2 elements, got 3'],
  ];
  for (const [name, value, shape, type, fragment] of bad) {
    it(`rejects ${name}`, () => expectH5StoreError(() => flattenValue(value, shape, type), 400, fragment));
  }

  it('leaves element validation to encodeElements', () => {
    // [1, 'a'] has the right length for shape [2]; its items are not compound values
    const flat = flattenValue([1, 'a'], [2], CMP);
    expect(flat).to.deep.equal([1, 'a']);
    expectH5StoreError(() => encodeElements(flat, CMP), 400, 'expected a list of 2 field values');
  });

  const sv: [string, unknown, number[], number, TypeJson, unknown[]][] = [
    ['nested like the selection', [[1, 2], [3, 4]], [2, 2], 4, I32, [1, 2, 3, 4]],
    ['flat list into 2-D', [1, 2, 3, 4, 5, 6], [2, 3], 6, I32, [1, 2, 3, 4, 5, 6]],
    ['flat list into 3-D', [1, 2, 3, 4], [2, 1, 2], 4, I32, [1, 2, 3, 4]],
    ['other nesting with the same count', [[1, 2, 3], [4, 5, 6]], [3, 2], 6, I32, [1, 2, 3, 4, 5, 6]],
    ['flat compounds into 2-D', [[1, 'a'], [2, 'b']], [1, 2], 2, CMP, [[1, 'a'], [2, 'b']]],
    ['element_count: a row broadcast to 2-D', [1, 2, 3], [2, 3], 3, I32, [1, 2, 3]],
    ['element_count: one element', 9, [2, 3], 1, I32, [9]],
    ['element_count: nested row', [[1, 2, 3]], [2, 3], 3, I32, [1, 2, 3]],
  ];
  for (const [name, value, shape, count, type, flat] of sv) {
    it(`selectionValues: ${name}`, () => expect(selectionValues(value, shape, count, type)).to.deep.equal(flat));
  }
  it('selectionValues rejects a count mismatch with the nested-form message', () => {
    expectH5StoreError(() => selectionValues([1, 2, 3, 4, 5], [2, 3], 6, I32), 400, "input data doesn't match selection");
    expectH5StoreError(() => selectionValues([1, 2], [2, 3], 3, I32), 400, 'expected 3 elements, got 2');
    expectH5StoreError(() => selectionValues([1, 2, 3, 4], [2, 3], 3, I32), 400, 'expected 3 elements, got more');
  });

  it('nestValues inverts flattenValue', () => {
    const shapes = [[], [4], [2, 3], [2, 0], [3, 1, 2], [1, 1, 1]];
    for (const shape of shapes) {
      const n = shape.reduce((a, b) => a * b, 1);
      const flat = Array.from({ length: n }, (_, i) => i);
      const nested = nestValues(flat, shape);
      expect(flattenValue(nested, shape, I32)).to.deep.equal(flat);
    }
    expect(nestValues([5], [])).to.equal(5);
    expect(nestValues([1, 2, 3, 4, 5, 6], [2, 3])).to.deep.equal([[1, 2, 3], [4, 5, 6]]);
    expect(nestValues([], [2, 0])).to.deep.equal([[], []]);
    expect(() => nestValues([1], [2])).to.throw(H5StoreError);
  });
});
