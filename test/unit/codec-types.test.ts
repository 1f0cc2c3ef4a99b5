import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';
import {
  arrayElementView,
  isBooleanEnum,
  isVariableLength,
  lacksBinaryForm,
  parseType,
  predefinedType,
  typeSize,
  typesEqual,
  type TypeJson,
} from '../../src/codec/types.js';
import { expect400 } from '../helpers/errors.js';

const I32: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' };
const I8: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' };
const F64: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };
const VSTR: TypeJson = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' };
const S5: TypeJson = { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 5 };
const BOOL: TypeJson = { class: 'H5T_ENUM', base: I8, mapping: { FALSE: 0, TRUE: 1 } };

describe('codec/types parseType', () => {
  const accepted: [string, unknown, TypeJson][] = [
    // predefined names
    ['int name', 'H5T_STD_I32LE', I32],
    ['uint BE name', 'H5T_STD_U16BE', { class: 'H5T_INTEGER', base: 'H5T_STD_U16BE' }],
    ['int64 name', 'H5T_STD_I64BE', { class: 'H5T_INTEGER', base: 'H5T_STD_I64BE' }],
    ['u8 name', 'H5T_STD_U8LE', { class: 'H5T_INTEGER', base: 'H5T_STD_U8LE' }],
    ['float16 name', 'H5T_IEEE_F16LE', { class: 'H5T_FLOAT', base: 'H5T_IEEE_F16LE' }],
    ['float32 BE name', 'H5T_IEEE_F32BE', { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32BE' }],
    ['name without order = LE', 'H5T_STD_I32', I32],
    ['float name without order', 'H5T_IEEE_F64', F64],
    ['bitfield name', 'H5T_STD_B8LE', { class: 'H5T_BITFIELD', base: 'H5T_STD_B8LE' }],
    ['object reference name', 'H5T_STD_REF_OBJ', { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' }],
    // numeric objects
    ['int object', { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' }, I32],
    ['int object, base without order', { class: 'H5T_INTEGER', base: 'H5T_STD_U64' }, { class: 'H5T_INTEGER', base: 'H5T_STD_U64LE' }],
    ['int object, old order key', { class: 'H5T_INTEGER', base: 'H5T_STD_I16', order: 'H5T_ORDER_BE' }, { class: 'H5T_INTEGER', base: 'H5T_STD_I16BE' }],
    ['int object, redundant order/size', { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE', order: 'H5T_ORDER_LE', size: 4 }, I32],
    ['float object F16BE', { class: 'H5T_FLOAT', base: 'H5T_IEEE_F16BE' }, { class: 'H5T_FLOAT', base: 'H5T_IEEE_F16BE' }],
    ['float object, extra keys ignored', { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE', size: 8, foo: 1 }, F64],
    ['bitfield object', { class: 'H5T_BITFIELD', base: 'H5T_STD_B16BE' }, { class: 'H5T_BITFIELD', base: 'H5T_STD_B16BE' }],
    // strings
    ['fixed string canonical', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 5 }, S5],
    ['fixed string old keys (spec 2.1)', { class: 'H5T_STRING', cset: 'H5T_CSET_ASCII', strpad: 'H5T_STR_NULLPAD', strsize: 5 }, S5],
    ['fixed string defaults', { class: 'H5T_STRING', length: 5 }, S5],
    ['fixed string old keys + order/size ignored', { class: 'H5T_STRING', cset: 'H5T_CSET_ASCII', strsize: 5, order: 'H5T_ORDER_NONE', size: 5 }, S5],
    ['spacepad utf8', { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_SPACEPAD', length: 3 },
      { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_SPACEPAD', length: 3 }],
    ['nullterm', { class: 'H5T_STRING', strPad: 'H5T_STR_NULLTERM', length: 3 },
      { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLTERM', length: 3 }],
    ['vlen string, strPad default NULLTERM', { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', length: 'H5T_VARIABLE' }, VSTR],
    ['vlen string old keys', { class: 'H5T_STRING', cset: 'H5T_CSET_UTF8', strsize: 'H5T_VARIABLE' }, VSTR],
    ['vlen ascii string', { class: 'H5T_STRING', length: 'H5T_VARIABLE' },
      { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }],
    ['vlen string with both spellings agreeing', { class: 'H5T_STRING', length: 'H5T_VARIABLE', strsize: 'H5T_VARIABLE', charSet: 'H5T_CSET_UTF8' }, VSTR],
    // compound
    [
      'compound with names and objects',
      { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }, { name: 'b', type: { class: 'H5T_STRING', cset: 'H5T_CSET_ASCII', strsize: 5 } }] },
      { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: I32 }, { name: 'b', type: S5 }] },
    ],
    [
      'nested compound',
      { class: 'H5T_COMPOUND', fields: [{ name: 'x', type: { class: 'H5T_COMPOUND', fields: [{ name: 'y', type: 'H5T_IEEE_F64' }] } }] },
      { class: 'H5T_COMPOUND', fields: [{ name: 'x', type: { class: 'H5T_COMPOUND', fields: [{ name: 'y', type: F64 }] } }] },
    ],
    // array
    ['array', { class: 'H5T_ARRAY', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I16BE' }, dims: [2, 2] },
      { class: 'H5T_ARRAY', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I16BE' }, dims: [2, 2] }],
    ['array, name base, int dims', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: 3 }, { class: 'H5T_ARRAY', base: I32, dims: [3] }],
    ['array of strings', { class: 'H5T_ARRAY', base: { class: 'H5T_STRING', length: 5 }, dims: [2] }, { class: 'H5T_ARRAY', base: S5, dims: [2] }],
    // enum
    [
      'enum mapping',
      { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I16BE' }, mapping: { SOLID: 0, LIQUID: 1, GAS: 2, PLASMA: 3 } },
      { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I16BE' }, mapping: { SOLID: 0, LIQUID: 1, GAS: 2, PLASMA: 3 } },
    ],
    [
      'enum members (hdf5-json)',
      { class: 'H5T_ENUM', base: 'H5T_STD_U8LE', members: [{ name: 'RED', value: 0 }, { name: 'GREEN', value: 255 }] },
      { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_U8LE' }, mapping: { RED: 0, GREEN: 255 } },
    ],
    ['h5py boolean', { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' }, mapping: { FALSE: 0, TRUE: 1 } }, BOOL],
    ['enum with negative values', { class: 'H5T_ENUM', base: 'H5T_STD_I8', mapping: { LOW: -128, HIGH: 127 } },
      { class: 'H5T_ENUM', base: I8, mapping: { LOW: -128, HIGH: 127 } }],
    // vlen
    ['vlen object', { class: 'H5T_VLEN', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' } }, { class: 'H5T_VLEN', base: I32 }],
    ['vlen h5pyd style', { class: 'H5T_VLEN', base: 'H5T_STD_I64', size: 'H5T_VARIABLE' },
      { class: 'H5T_VLEN', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I64LE' } }],
    ['vlen of compound', { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_IEEE_F64' }] } },
      { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: F64 }] } }],
    // opaque, reference
    ['opaque', { class: 'H5T_OPAQUE', size: 16, tag: '' }, { class: 'H5T_OPAQUE', size: 16, tag: '' }],
    ['opaque without tag', { class: 'H5T_OPAQUE', size: 7 }, { class: 'H5T_OPAQUE', size: 7, tag: '' }],
    ['opaque with tag', { class: 'H5T_OPAQUE', size: 2, tag: 'jpeg' }, { class: 'H5T_OPAQUE', size: 2, tag: 'jpeg' }],
    ['object reference', { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' }, { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' }],
    ['region reference', { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' }, { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' }],
  ];
  for (const [name, input, canonical] of accepted) {
    it(`accepts ${name}`, () => {
      const t = parseType(input);
      expect(t).to.deep.equal(canonical);
      // canonical input is a fixed point
      expect(parseType(t)).to.deep.equal(canonical);
    });
  }

  const TID = 't-0123abcd-0123abcd-0123-456789-abcdef';
  const resolver = (id: string): TypeJson => {
    if (id !== TID) throw new H5StoreError('NotFound', `no datatype ${id}`);
    return { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' };
  };
  it('resolves a committed type id and keeps the id', () => {
    expect(parseType(TID, resolver)).to.deep.equal({ class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE', id: TID });
  });
  it('resolves committed type ids in nested positions', () => {
    const t = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'f', type: TID }] }, resolver);
    expect(t).to.deep.equal({ class: 'H5T_COMPOUND', fields: [{ name: 'f', type: { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE', id: TID } }] });
  });
  it('passes resolver errors through', () => {
    expect(() => parseType('t-ffffffff-ffffffff-ffff-ffffff-ffffff', resolver)).to.throw(H5StoreError, 'no datatype');
  });
  it('rejects a committed id without a resolver', () => {
    expect400(() => parseType(TID), 'committed type');
  });

  const rejected: [string, unknown, string][] = [
    ['unknown predefined name', 'H5T_STD_I33LE', "Invalid type: unknown predefined type 'H5T_STD_I33LE'"],
    ['float8', 'H5T_IEEE_F8LE', 'unknown predefined type'],
    ['lowercase name', 'h5t_std_i32le', 'unknown predefined type'],
    ['number', 42, 'expected a type name or object'],
    ['list', ['H5T_STD_I32LE'], 'expected a type name or object'],
    ['null', null, 'no type given'],
    ['object without class', { base: 'H5T_STD_I32LE' }, "no 'class'"],
    ['unknown class', { class: 'H5T_TIME' }, "unknown type class 'H5T_TIME'"],
    ['integer without base', { class: 'H5T_INTEGER' }, "requires a 'base'"],
    ['integer with float base', { class: 'H5T_INTEGER', base: 'H5T_IEEE_F32LE' }, 'invalid base'],
    ['integer with bad base', { class: 'H5T_INTEGER', base: 'H5T_STD_I24LE' }, 'invalid base'],
    ['float with int base', { class: 'H5T_FLOAT', base: 'H5T_STD_I32LE' }, 'invalid base'],
    ['bitfield with int base', { class: 'H5T_BITFIELD', base: 'H5T_STD_I8LE' }, 'invalid base'],
    ['contradicting order', { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE', order: 'H5T_ORDER_BE' }, 'contradicts'],
    ['bad order', { class: 'H5T_INTEGER', base: 'H5T_STD_I32', order: 'big' }, 'invalid order'],
    ['contradicting size', { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE', size: 8 }, 'contradicts'],
    ['string without length', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII' }, "requires 'length'"],
    ['string length 0', { class: 'H5T_STRING', length: 0 }, 'positive integer'],
    ['string length negative', { class: 'H5T_STRING', length: -3 }, 'positive integer'],
    ['string length fractional', { class: 'H5T_STRING', length: 2.5 }, 'positive integer'],
    ['string length bad word', { class: 'H5T_STRING', length: 'VARIABLE' }, 'positive integer'],
    ['string bad charSet', { class: 'H5T_STRING', length: 3, charSet: 'H5T_CSET_LATIN1' }, 'invalid charSet'],
    ['string bad strPad', { class: 'H5T_STRING', length: 3, strPad: 'H5T_STR_ZEROPAD' }, 'invalid strPad'],
    ['string spellings disagree', { class: 'H5T_STRING', length: 3, strsize: 4 }, "'length' and 'strsize' disagree"],
    ['compound without fields', { class: 'H5T_COMPOUND' }, "non-empty 'fields'"],
    ['compound empty fields', { class: 'H5T_COMPOUND', fields: [] }, "non-empty 'fields'"],
    ['compound field not object', { class: 'H5T_COMPOUND', fields: ['H5T_STD_I32LE'] }, 'compound field must be an object'],
    ['compound field without name', { class: 'H5T_COMPOUND', fields: [{ type: 'H5T_STD_I32LE' }] }, 'non-empty string'],
    ['compound empty field name', { class: 'H5T_COMPOUND', fields: [{ name: '', type: 'H5T_STD_I32LE' }] }, 'non-empty string'],
    ['compound duplicate field', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }, { name: 'a', type: 'H5T_STD_I8LE' }] }, "duplicate compound field name 'a'"],
    ['compound field without type', { class: 'H5T_COMPOUND', fields: [{ name: 'a' }] }, "field 'a' has no 'type'"],
    ['compound field bad type', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I33LE' }] }, "field 'a': unknown predefined type"],
    ['array without dims', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE' }, "requires 'dims'"],
    ['array empty dims', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [] }, "requires 'dims'"],
    ['array zero dim', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [2, 0] }, 'positive integers'],
    ['array negative dim', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [-1] }, 'positive integers'],
    ['array fractional dim', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [1.5] }, 'positive integers'],
    ['array without base', { class: 'H5T_ARRAY', dims: [2] }, "requires 'base'"],
    ['array bad base', { class: 'H5T_ARRAY', dims: [2], base: { class: 'H5T_FOO' } }, 'array base: unknown type class'],
    ['enum without base', { class: 'H5T_ENUM', mapping: { A: 0 } }, "requires 'base'"],
    ['enum float base', { class: 'H5T_ENUM', base: 'H5T_IEEE_F32LE', mapping: { A: 0 } }, 'must be an integer type'],
    ['enum without mapping', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE' }, "requires 'mapping'"],
    ['enum empty mapping', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: {} }, 'at least one member'],
    ['enum mapping not an object', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: [1, 2] }, 'mapping must be an object'],
    ['enum value out of range', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 300 } }, "enum value 300 of 'A' out of range for H5T_STD_I8LE"],
    ['enum negative for unsigned', { class: 'H5T_ENUM', base: 'H5T_STD_U8LE', mapping: { A: -1 } }, 'out of range'],
    ['enum fractional value', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 0.5 } }, 'must be an integer'],
    ['enum duplicate value', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 1, B: 1 } }, 'duplicate enum value 1'],
    ['enum duplicate member name', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', members: [{ name: 'A', value: 0 }, { name: 'A', value: 1 }] }, "duplicate enum member name 'A'"],
    ['enum empty member name', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', members: [{ name: '', value: 0 }] }, 'non-empty string'],
    ['vlen without base', { class: 'H5T_VLEN' }, "requires 'base'"],
    ['vlen bad base', { class: 'H5T_VLEN', base: 'H5T_STD_X32' }, 'vlen base: unknown predefined type'],
    ['opaque without size', { class: 'H5T_OPAQUE', tag: '' }, 'size must be a positive integer'],
    ['opaque size 0', { class: 'H5T_OPAQUE', size: 0 }, 'size must be a positive integer'],
    ['opaque size negative', { class: 'H5T_OPAQUE', size: -4 }, 'size must be a positive integer'],
    ['opaque tag not a string', { class: 'H5T_OPAQUE', size: 4, tag: 5 }, 'tag must be a string'],
    ['reference bad base', { class: 'H5T_REFERENCE', base: 'H5T_STD_REF' }, 'H5T_REFERENCE base must be'],
    ['prototype key as order', { class: 'H5T_INTEGER', base: 'H5T_STD_I32', order: 'constructor' }, 'invalid order'],
    ['prototype key as class', { class: 'constructor' }, 'unknown type class'],
    ['absurdly deep nesting', (() => {
      let t: unknown = 'H5T_STD_I8LE';
      for (let i = 0; i < 40; i++) t = { class: 'H5T_VLEN', base: t };
      return t;
    })(), 'nested more than 32 levels'],
  ];
  for (const [name, input, fragment] of rejected) {
    it(`rejects ${name}`, () => expect400(() => parseType(input), fragment));
  }
});

describe('codec/types helpers', () => {
  it('predefinedType', () => {
    expect(predefinedType('H5T_STD_U32BE')).to.deep.equal({ class: 'H5T_INTEGER', base: 'H5T_STD_U32BE' });
    expect(predefinedType('H5T_IEEE_F32')).to.deep.equal({ class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' });
    expect(predefinedType('H5T_STD_REF_DSETREG')).to.deep.equal({ class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' });
    expect(predefinedType('H5T_C_S1')).to.equal(undefined);
  });

  const sizes: [string, unknown, number][] = [
    ['i8', 'H5T_STD_I8LE', 1],
    ['u16', 'H5T_STD_U16BE', 2],
    ['i64', 'H5T_STD_I64LE', 8],
    ['f16', 'H5T_IEEE_F16LE', 2],
    ['f32', 'H5T_IEEE_F32BE', 4],
    ['f64', 'H5T_IEEE_F64LE', 8],
    ['b32', 'H5T_STD_B32LE', 4],
    ['fixed string', { class: 'H5T_STRING', length: 7 }, 7],
    ['compound (packed)', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_IEEE_F64LE' }, { name: 'c', type: { class: 'H5T_STRING', length: 3 } }] }, 12],
    ['array', { class: 'H5T_ARRAY', base: 'H5T_STD_I16LE', dims: [2, 3] }, 12],
    ['array of compound', { class: 'H5T_ARRAY', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }] }, dims: [4] }, 16],
    ['enum', { class: 'H5T_ENUM', base: 'H5T_STD_I16LE', mapping: { A: 0 } }, 2],
    ['opaque', { class: 'H5T_OPAQUE', size: 16, tag: '' }, 16],
    ['reference', 'H5T_STD_REF_OBJ', 48],
  ];
  for (const [name, input, size] of sizes) {
    it(`typeSize ${name} = ${size}`, () => {
      const t = parseType(input);
      expect(typeSize(t)).to.equal(size);
      expect(isVariableLength(t)).to.equal(false);
    });
  }

  const variable: [string, unknown][] = [
    ['vlen string', { class: 'H5T_STRING', length: 'H5T_VARIABLE' }],
    ['vlen sequence', { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' }],
    ['compound with a vlen field', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }, { name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }] }],
    ['array of vlen strings', { class: 'H5T_ARRAY', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, dims: [2] }],
  ];
  for (const [name, input] of variable) {
    it(`${name} is variable-length and has no typeSize`, () => {
      const t = parseType(input);
      expect(isVariableLength(t)).to.equal(true);
      expect(() => typeSize(t)).to.throw(H5StoreError);
    });
  }

  // [type, whether the REST API defines a binary form for its values]
  const binaryForms: [string, unknown, boolean][] = [
    ['int32', 'H5T_STD_I32LE', true],
    ['vlen string', { class: 'H5T_STRING', length: 'H5T_VARIABLE' }, true],
    ['vlen of int32', { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' }, true],
    ['vlen of a fixed compound', { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I32LE' }] } }, true],
    ['compound of vlen fields', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' } }, { name: 's', type: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }] }, true],
    ['region reference', 'H5T_STD_REF_DSETREG', true],
    ['vlen of vlen strings', { class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } }, false],
    ['vlen of vlen int32', { class: 'H5T_VLEN', base: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' } }, false],
    ['vlen of region references', { class: 'H5T_VLEN', base: 'H5T_STD_REF_DSETREG' }, false],
    ['vlen of compounds with a vlen field', { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' } }] } }, false],
    ['compound with such a field', { class: 'H5T_COMPOUND', fields: [{ name: 'f1', type: { class: 'H5T_VLEN', base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } } }, { name: 'f2', type: 'H5T_STD_I64LE' }] }, false],
    ['array of such a vlen', { class: 'H5T_ARRAY', dims: [2], base: { class: 'H5T_VLEN', base: { class: 'H5T_VLEN', base: 'H5T_STD_I8LE' } } }, false],
    ['vlen of arrays of vlen strings', { class: 'H5T_VLEN', base: { class: 'H5T_ARRAY', dims: [2], base: { class: 'H5T_STRING', length: 'H5T_VARIABLE' } } }, false],
  ];
  for (const [name, input, has] of binaryForms) {
    it(`lacksBinaryForm: ${name} ${has ? 'has' : 'has no'} binary form`, () => {
      const t = parseType(input);
      expect(lacksBinaryForm(t)).to.equal(!has);
    });
  }

  const views: [string, unknown, TypeJson | string, number[]][] = [
    ['a plain type is its own element', 'H5T_STD_I32LE', I32, []],
    ['an array of int32', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [2, 3] }, I32, [2, 3]],
    ['an array of arrays, outer dims first', { class: 'H5T_ARRAY', base: { class: 'H5T_ARRAY', base: 'H5T_IEEE_F64LE', dims: [4] }, dims: [2] }, F64, [2, 4]],
    ['a compound holding an array stays whole', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [2] } }] }, 'same', []],
  ];
  for (const [name, input, elem, dims] of views) {
    it(`arrayElementView: ${name}`, () => {
      const t = parseType(input);
      const v = arrayElementView(t);
      expect(v.elem).to.deep.equal(elem === 'same' ? t : elem);
      expect(v.dims).to.deep.equal(dims);
      expect(v.cells).to.equal(dims.reduce((a, b) => a * b, 1));
    });
  }

  it('isBooleanEnum', () => {
    expect(isBooleanEnum(BOOL)).to.equal(true);
    expect(isBooleanEnum(parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I8BE', mapping: { TRUE: 1, FALSE: 0 } }))).to.equal(true);
    expect(isBooleanEnum(parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I16LE', mapping: { FALSE: 0, TRUE: 1 } }))).to.equal(false);
    expect(isBooleanEnum(parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1, MAYBE: 2 } }))).to.equal(false);
    expect(isBooleanEnum(parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { NO: 0, YES: 1 } }))).to.equal(false);
    expect(isBooleanEnum(I8)).to.equal(false);
  });

  it('typesEqual is structural and ignores id', () => {
    expect(typesEqual({ ...I32, id: 't-1' }, I32)).to.equal(true);
    expect(typesEqual(I32, { class: 'H5T_INTEGER', base: 'H5T_STD_I32BE' })).to.equal(false);
    expect(typesEqual(S5, { ...S5, strPad: 'H5T_STR_NULLTERM' })).to.equal(false);
    const e1 = parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 0, B: 1 } });
    const e2 = parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { B: 1, A: 0 } });
    const e3 = parseType({ class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { A: 0, B: 2 } });
    expect(typesEqual(e1, e2)).to.equal(true);
    expect(typesEqual(e1, e3)).to.equal(false);
    const c1 = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_STD_I8LE' }] });
    const c2 = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'b', type: 'H5T_STD_I8LE' }, { name: 'a', type: 'H5T_STD_I8LE' }] });
    expect(typesEqual(c1, c1)).to.equal(true);
    expect(typesEqual(c1, c2)).to.equal(false);
    const a1 = parseType({ class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [2, 3] });
    const a2 = parseType({ class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [3, 2] });
    expect(typesEqual(a1, a2)).to.equal(false);
    expect(typesEqual(parseType({ class: 'H5T_VLEN', base: 'H5T_STD_I8' }), parseType({ class: 'H5T_VLEN', base: 'H5T_STD_I8LE' }))).to.equal(true);
    expect(typesEqual(parseType({ class: 'H5T_OPAQUE', size: 2, tag: 'a' }), parseType({ class: 'H5T_OPAQUE', size: 2, tag: 'b' }))).to.equal(false);
  });
});
