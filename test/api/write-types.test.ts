/**
 * Type JSON for every class, written through the API and checked in the file (issue items 1, 5
 * and 6; wire-reference 3.1, 3.5; service spec 2.1).
 *
 * One case per type class / base / charset / padding: the case creates a dataset with the type,
 * writes values as JSON, reads them back as JSON and binary, writes other values as binary, reads
 * them back as JSON, creates an attribute of the same type, and then checks the file with h5py
 * (low-level type: class, size, byte order, charset, padding, members and offsets; values) and
 * with h5dump.
 */
import { expect } from 'chai';
import {
  type Dom,
  type Kit,
  bytes,
  expectStatus,
  getBinary,
  h5dumpText,
  halfRound,
  inspect,
  mapNumbers,
  inspectOne,
  makeDataset,
  newDomain,
  putBinary,
  sendJsonText,
  squash,
  releaseKit,
  sharedKit,
} from '../helpers/writekit.js';

// ---------------------------------------------------------------------------------------------
// canonical type form (wire-reference 3.1, 6.2: objects in nested positions, strings with
// charSet/strPad/length)

const NUMERIC_BASE = /^H5T_(STD_[IU](8|16|32|64)|IEEE_F(16|32|64))(LE|BE)$/;

/** Problems that make `t` non-canonical (empty when canonical). */
export function canonicalProblems(t: any, where = 'type'): string[] {
  if (!t || typeof t !== 'object' || Array.isArray(t)) return [`${where}: not a type object: ${JSON.stringify(t)}`];
  const out: string[] = [];
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
      if (!NUMERIC_BASE.test(t.base)) out.push(`${where}: base ${t.base}`);
      break;
    case 'H5T_STRING':
      for (const k of ['charSet', 'strPad', 'length']) if (!(k in t)) out.push(`${where}: string without ${k}`);
      for (const k of ['cset', 'strpad', 'strsize']) if (k in t) out.push(`${where}: old key ${k}`);
      break;
    case 'H5T_COMPOUND':
      for (const f of t.fields ?? []) out.push(...canonicalProblems(f.type, `${where}.${f.name}`));
      break;
    case 'H5T_ARRAY':
    case 'H5T_VLEN':
      out.push(...canonicalProblems(t.base, `${where}.base`));
      break;
    case 'H5T_ENUM':
      out.push(...canonicalProblems(t.base, `${where}.base`));
      if (!t.mapping || typeof t.mapping !== 'object') out.push(`${where}: enum without mapping`);
      break;
    case 'H5T_OPAQUE':
    case 'H5T_REFERENCE':
    case 'H5T_BITFIELD':
      break;
    default:
      out.push(`${where}: unknown class ${t.class}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// type building blocks

const int = (base: string) => ({ class: 'H5T_INTEGER', base });
const flt = (base: string) => ({ class: 'H5T_FLOAT', base });
const str = (charSet: string, strPad: string, length: number | 'H5T_VARIABLE') => ({ class: 'H5T_STRING', charSet, strPad, length });
const BOOL = { class: 'H5T_ENUM', base: int('H5T_STD_I8LE'), mapping: { FALSE: 0, TRUE: 1 } };

/** h5py low-level type descriptions (test/tools/h5inspect.py describe_type, nested form). */
const hInt = (size: number, order: string, signed: boolean) => ({ class: 'INTEGER', size, order, signed });
const FLOAT_FIELDS: Record<number, { fields: number[]; ebias: number }> = {
  2: { fields: [15, 10, 5, 0, 10], ebias: 15 },
  4: { fields: [31, 23, 8, 0, 23], ebias: 127 },
  8: { fields: [63, 52, 11, 0, 52], ebias: 1023 },
};
const hFloat = (size: number, order: string) => ({ class: 'FLOAT', size, order, precision: size * 8, ...FLOAT_FIELDS[size] });
const hStr = (size: number | 'var', cset: string, strpad: string) =>
  size === 'var' ? { class: 'STRING', variable: true, cset, strpad } : { class: 'STRING', size, variable: false, cset, strpad };

interface TypeCase {
  name: string;
  /** The type as sent. */
  type: unknown;
  /** The canonical type JSON expected back. */
  canon: unknown;
  shape: number[];
  /** Values written as JSON, and what JSON reads give back (default: v1). */
  v1: unknown;
  /** Their binary wire form (wire-reference 3.5). */
  bin1: Buffer;
  /** Values written as binary, and their JSON form. */
  v2: unknown;
  bin2: Buffer;
  /** What h5py reads (converted by h5inspect.py); default v1 / v2. */
  py1?: unknown;
  py2?: unknown;
  /** h5py's low-level description of the file type (without `committed`). */
  h5t: Record<string, unknown>;
  /** numpy dtype string h5py reports for the dataset, when it is a plain one. */
  dtype?: string;
  /** Fragments expected in `h5dump -H` of the dataset (whitespace collapsed). */
  dump: string[];
  /** Fragment expected in the h5dump data section, when the values print predictably. */
  dumpData?: string;
  /** Element size when binary reads may differ only in padding bytes (SPACEPAD strings). */
  padAgnostic?: number;
  /** Variable-length type: attribute value reads may fall back to JSON (wire-reference 2.6). */
  variable?: boolean;
  /**
   * h5py 3.7 reads vlen sequences with a big-endian base without byte-swapping them (also those
   * it wrote itself; h5dump shows the right values): its values are not compared, h5dump's are.
   */
  h5pyMisreads?: string;
  /** Fragments expected in the h5dump data of the dataset (after v2) and of the attribute (v1). */
  dumpValues?: { dataset: string; attribute: string };
  /**
   * Float precision of the values: JSON reads are compared after rounding to it, so any decimal
   * form that denotes the stored float (e.g. `0.1` or `0.10000000149011612` for a float32) passes.
   */
  norm?: (x: number) => number;
}

const cases: TypeCase[] = [];

// --- integers: 8 to 64 bits, signed and unsigned, both byte orders
const INT_VALUES: Record<string, (number | bigint)[]> = {
  I8: [-128, 127, 0, -1],
  U8: [0, 255, 1, 128],
  I16: [-32768, 32767, -2, 300],
  U16: [0, 65535, 2, 300],
  I32: [-2147483648, 2147483647, -5, 70000],
  U32: [0, 4294967295, 5, 70000],
  I64: [-(2n ** 63n), 2n ** 63n - 1n, -5, 9007199254740993n],
  U64: [0, 2n ** 64n - 1n, 5, 9007199254740993n],
};
for (const [k, v1] of Object.entries(INT_VALUES)) {
  for (const order of ['LE', 'BE']) {
    const base = `H5T_STD_${k}${order}`;
    const bits = Number(k.slice(1));
    const signed = k[0] === 'I';
    const key = (bits === 8 ? `${signed ? 'i' : 'u'}8` : `${signed ? 'i' : 'u'}${bits}${order.toLowerCase()}`) as keyof typeof bytes;
    const enc = bytes[key] as (...v: (number | bigint)[]) => Buffer;
    const v2 = [...v1].reverse();
    cases.push({
      name: `int-${k}${order}`,
      type: int(base),
      canon: int(base),
      shape: [4],
      v1,
      bin1: enc(...v1),
      v2,
      bin2: enc(...v2),
      h5t: hInt(bits / 8, order, signed),
      dtype: `${bits === 8 ? '|' : order === 'LE' ? '<' : '>'}${signed ? 'i' : 'u'}${bits / 8}`,
      dump: [`DATATYPE ${base}`],
      dumpData: `(0): ${v1.join(', ')}`,
    });
  }
}

// --- floats: 16, 32, 64 bits, both byte orders
for (const order of ['LE', 'BE']) {
  const le = order === 'LE';
  cases.push({
    name: `float-F16${order}`,
    type: flt(`H5T_IEEE_F16${order}`),
    canon: flt(`H5T_IEEE_F16${order}`),
    shape: [4],
    v1: [0.1, 1.5, 65504, -Infinity],
    bin1: (le ? bytes.h16le : bytes.h16be)(0x2e66, 0x3e00, 0x7bff, 0xfc00),
    py1: [0.0999755859375, 1.5, 65504, -Infinity],
    v2: [-2, 0.5, 0, 1024],
    bin2: (le ? bytes.h16le : bytes.h16be)(0xc000, 0x3800, 0x0000, 0x6400),
    h5t: hFloat(2, order),
    dtype: `${le ? '<' : '>'}f2`,
    norm: halfRound,
    // what h5dump prints for h5py's own float16 datasets
    dump: [`DATATYPE 16-bit ${le ? 'little' : 'big'}-endian floating-point 16-bit precision`],
  });
  cases.push({
    name: `float-F32${order}`,
    type: flt(`H5T_IEEE_F32${order}`),
    canon: flt(`H5T_IEEE_F32${order}`),
    shape: [4],
    v1: [0.1, -1.5, 16777216, Infinity],
    bin1: (le ? bytes.f32le : bytes.f32be)(0.1, -1.5, 16777216, Infinity),
    py1: [Math.fround(0.1), -1.5, 16777216, Infinity],
    v2: [3.25, 0, -7, 2.5],
    bin2: (le ? bytes.f32le : bytes.f32be)(3.25, 0, -7, 2.5),
    h5t: hFloat(4, order),
    dtype: `${le ? '<' : '>'}f4`,
    norm: Math.fround,
    dump: [`DATATYPE H5T_IEEE_F32${order}`],
  });
  cases.push({
    name: `float-F64${order}`,
    type: flt(`H5T_IEEE_F64${order}`),
    canon: flt(`H5T_IEEE_F64${order}`),
    shape: [4],
    v1: [0.1, -1.5, 1.7976931348623157e308, -Infinity],
    bin1: (le ? bytes.f64le : bytes.f64be)(0.1, -1.5, 1.7976931348623157e308, -Infinity),
    v2: [Math.PI, 0, -7, 5e-324],
    bin2: (le ? bytes.f64le : bytes.f64be)(Math.PI, 0, -7, 5e-324),
    h5t: hFloat(8, order),
    dtype: `${le ? '<' : '>'}f8`,
    dump: [`DATATYPE H5T_IEEE_F64${order}`],
  });
}

// --- strings: fixed (ASCII and UTF-8, each padding) and variable-length
for (const cset of ['ASCII', 'UTF8']) {
  const v1 = cset === 'ASCII' ? ['ab', 'abcde', ''] : ['ab', 'héó', ''];
  const v2 = cset === 'ASCII' ? ['xyz', '', 'q'] : ['ñ', '', 'ü1'];
  for (const pad of ['NULLTERM', 'NULLPAD', 'SPACEPAD']) {
    const padByte = pad === 'SPACEPAD' ? 0x20 : 0;
    cases.push({
      name: `string-fixed-${cset}-${pad}`,
      type: str(`H5T_CSET_${cset}`, `H5T_STR_${pad}`, 6),
      canon: str(`H5T_CSET_${cset}`, `H5T_STR_${pad}`, 6),
      shape: [3],
      v1,
      bin1: bytes.cat(...v1.map((s) => bytes.fixed(6, s, padByte))),
      v2,
      bin2: bytes.cat(...v2.map((s) => bytes.fixed(6, s, padByte))),
      h5t: hStr(6, cset, pad),
      dtype: '|S6',
      dump: [`STRSIZE 6; STRPAD H5T_STR_${pad}; CSET H5T_CSET_${cset};`],
      // wire-reference 3.5 says NUL-padded; h5py stores SPACEPAD with spaces: either pad is accepted
      padAgnostic: pad === 'SPACEPAD' ? 6 : undefined,
    });
  }
  const vv1 = cset === 'ASCII' ? ['', 'x', 'hello world'] : ['', 'x', 'héllo wörld'];
  const vv2 = cset === 'ASCII' ? ['a', 'bc', 'def'] : ['ä', 'bç', 'déf'];
  cases.push({
    name: `string-vlen-${cset}`,
    type: str(`H5T_CSET_${cset}`, 'H5T_STR_NULLTERM', 'H5T_VARIABLE'),
    canon: str(`H5T_CSET_${cset}`, 'H5T_STR_NULLTERM', 'H5T_VARIABLE'),
    shape: [3],
    v1: vv1,
    bin1: bytes.cat(...vv1.map((s) => bytes.vlen(s))),
    v2: vv2,
    bin2: bytes.cat(...vv2.map((s) => bytes.vlen(s))),
    h5t: hStr('var', cset, 'NULLTERM'),
    dtype: '|O',
    dump: [`STRSIZE H5T_VARIABLE; STRPAD H5T_STR_NULLTERM; CSET H5T_CSET_${cset};`],
    variable: true,
  });
}

// --- compounds
{
  const S4 = str('H5T_CSET_ASCII', 'H5T_STR_NULLPAD', 4);
  const t = {
    class: 'H5T_COMPOUND',
    fields: [
      { name: 'a', type: int('H5T_STD_I32LE') },
      { name: 'b', type: flt('H5T_IEEE_F64BE') },
      { name: 'c', type: S4 },
      { name: 'd', type: int('H5T_STD_U8LE') },
    ],
  };
  const enc = (rows: [number, number, string, number][]) =>
    bytes.cat(...rows.map(([a, b, c, d]) => bytes.cat(bytes.i32le(a), bytes.f64be(b), bytes.fixed(4, c), bytes.u8(d))));
  const v1: [number, number, string, number][] = [
    [1, 2.5, 'ab', 255],
    [-1, -0.5, 'wxyz', 0],
  ];
  const v2: [number, number, string, number][] = [
    [7, 1e-3, 'q', 3],
    [8, -1e300, '', 4],
  ];
  cases.push({
    name: 'compound-flat',
    type: t,
    canon: t,
    shape: [2],
    v1,
    bin1: enc(v1),
    v2,
    bin2: enc(v2),
    h5t: {
      class: 'COMPOUND',
      size: 17,
      members: [
        { name: 'a', offset: 0, type: hInt(4, 'LE', true) },
        { name: 'b', offset: 4, type: hFloat(8, 'BE') },
        { name: 'c', offset: 12, type: hStr(4, 'ASCII', 'NULLPAD') },
        { name: 'd', offset: 16, type: hInt(1, 'LE', false) },
      ],
    },
    dtype: '|V17',
    dump: ['H5T_STD_I32LE "a";', 'H5T_IEEE_F64BE "b";', 'STRSIZE 4;', 'H5T_STD_U8LE "d";'],
  });
}
{
  const pos = { class: 'H5T_COMPOUND', fields: [{ name: 'x', type: flt('H5T_IEEE_F32LE') }, { name: 'y', type: flt('H5T_IEEE_F32LE') }] };
  const t = {
    class: 'H5T_COMPOUND',
    fields: [
      { name: 'id', type: int('H5T_STD_U16BE') },
      { name: 'pos', type: pos },
      { name: 'arr', type: { class: 'H5T_ARRAY', base: int('H5T_STD_I16LE'), dims: [3] } },
      { name: 'flag', type: BOOL },
    ],
  };
  type Row = [number, [number, number], [number, number, number], boolean];
  const enc = (rows: Row[]) =>
    bytes.cat(...rows.map(([id, [x, y], arr, flag]) => bytes.cat(bytes.u16be(id), bytes.f32le(x, y), bytes.i16le(...arr), bytes.i8(flag ? 1 : 0))));
  const v1: Row[] = [
    [1, [0.5, -1.5], [1, 2, 3], true],
    [65535, [2, 4], [-1, -2, -3], false],
  ];
  const v2: Row[] = [
    [9, [0, 0.25], [7, 8, 9], false],
    [10, [-8, 16], [0, 0, -32768], true],
  ];
  cases.push({
    name: 'compound-nested',
    type: t,
    canon: t,
    shape: [2],
    v1,
    bin1: enc(v1),
    v2,
    bin2: enc(v2),
    h5t: {
      class: 'COMPOUND',
      size: 17,
      members: [
        { name: 'id', offset: 0, type: hInt(2, 'BE', false) },
        {
          name: 'pos',
          offset: 2,
          type: { class: 'COMPOUND', size: 8, members: [{ name: 'x', offset: 0, type: hFloat(4, 'LE') }, { name: 'y', offset: 4, type: hFloat(4, 'LE') }] },
        },
        { name: 'arr', offset: 10, type: { class: 'ARRAY', size: 6, dims: [3], base: hInt(2, 'LE', true) } },
        { name: 'flag', offset: 16, type: { class: 'ENUM', size: 1, base: hInt(1, 'LE', true), members: { FALSE: 0, TRUE: 1 } } },
      ],
    },
    dtype: '|V17',
    dump: ['H5T_STD_U16BE "id";', 'H5T_IEEE_F32LE "x";', 'H5T_ARRAY { [3] H5T_STD_I16LE } "arr";'],
  });
}
{
  const t = {
    class: 'H5T_COMPOUND',
    fields: [
      { name: 'n', type: int('H5T_STD_I32LE') },
      { name: 's', type: str('H5T_CSET_UTF8', 'H5T_STR_NULLTERM', 'H5T_VARIABLE') },
    ],
  };
  const enc = (rows: [number, string][]) => bytes.cat(...rows.map(([n, s]) => bytes.cat(bytes.i32le(n), bytes.vlen(s))));
  const v1: [number, string][] = [
    [1, 'a'],
    [2, 'bcd'],
    [3, ''],
  ];
  const v2: [number, string][] = [
    [4, 'ü'],
    [5, ''],
    [6, 'xyz'],
  ];
  cases.push({
    name: 'compound-vlen-string',
    type: t,
    canon: t,
    shape: [3],
    v1,
    bin1: enc(v1),
    v2,
    bin2: enc(v2),
    h5t: {
      class: 'COMPOUND',
      size: 12,
      members: [
        { name: 'n', offset: 0, type: hInt(4, 'LE', true) },
        { name: 's', offset: 4, type: hStr('var', 'UTF8', 'NULLTERM') },
      ],
    },
    dump: ['H5T_STD_I32LE "n";', 'STRSIZE H5T_VARIABLE;'],
    variable: true,
  });
}

// --- array types
{
  const t = { class: 'H5T_ARRAY', base: int('H5T_STD_I16BE'), dims: [2, 2] };
  const v1 = [
    [
      [1, 2],
      [3, 4],
    ],
    [
      [-1, -2],
      [-3, -4],
    ],
  ];
  const v2 = [
    [
      [5, 6],
      [7, 8],
    ],
    [
      [0, 32767],
      [-32768, 1],
    ],
  ];
  cases.push({
    name: 'array-int16be-2x2',
    type: t,
    canon: t,
    shape: [2],
    v1,
    bin1: bytes.i16be(...v1.flat(2)),
    v2,
    bin2: bytes.i16be(...v2.flat(2)),
    h5t: { class: 'ARRAY', size: 8, dims: [2, 2], base: hInt(2, 'BE', true) },
    dump: ['DATATYPE H5T_ARRAY { [2][2] H5T_STD_I16BE }'],
  });
}
{
  const S3 = str('H5T_CSET_ASCII', 'H5T_STR_NULLPAD', 3);
  const t = { class: 'H5T_ARRAY', base: S3, dims: [2] };
  const v1 = [
    ['ab', 'c'],
    ['', 'xyz'],
  ];
  const v2 = [
    ['q', 'rs'],
    ['tuv', ''],
  ];
  cases.push({
    name: 'array-of-fixed-strings',
    type: t,
    canon: t,
    shape: [2],
    v1,
    bin1: bytes.cat(...v1.flat().map((s) => bytes.fixed(3, s))),
    v2,
    bin2: bytes.cat(...v2.flat().map((s) => bytes.fixed(3, s))),
    h5t: { class: 'ARRAY', size: 6, dims: [2], base: hStr(3, 'ASCII', 'NULLPAD') },
    dump: ['H5T_ARRAY { [2] H5T_STRING { STRSIZE 3;'],
  });
}

// --- enums
{
  const t = { class: 'H5T_ENUM', base: int('H5T_STD_I16BE'), mapping: { SOLID: 0, LIQUID: 1, GAS: 2, PLASMA: -1 } };
  cases.push({
    name: 'enum-int16be',
    type: t,
    canon: t,
    shape: [4],
    v1: [0, 2, -1, 1],
    bin1: bytes.i16be(0, 2, -1, 1),
    v2: [1, 1, 0, 2],
    bin2: bytes.i16be(1, 1, 0, 2),
    h5t: { class: 'ENUM', size: 2, base: hInt(2, 'BE', true), members: { SOLID: 0, LIQUID: 1, GAS: 2, PLASMA: -1 } },
    dump: ['H5T_ENUM { H5T_STD_I16BE;', '"SOLID" 0;', '"PLASMA" -1;'],
  });
  cases.push({
    name: 'enum-boolean (h5py convention)',
    type: BOOL,
    canon: BOOL,
    shape: [3],
    v1: [true, false, true],
    bin1: bytes.i8(1, 0, 1),
    v2: [false, false, true],
    bin2: bytes.i8(0, 0, 1),
    h5t: { class: 'ENUM', size: 1, base: hInt(1, 'LE', true), members: { FALSE: 0, TRUE: 1 } },
    dtype: '|b1',
    dump: ['H5T_ENUM { H5T_STD_I8LE; "FALSE" 0; "TRUE" 1; }'],
  });
}

// --- vlen sequences
cases.push({
  name: 'vlen-int32le',
  type: { class: 'H5T_VLEN', base: int('H5T_STD_I32LE') },
  canon: { class: 'H5T_VLEN', base: int('H5T_STD_I32LE') },
  shape: [3],
  v1: [[1, 2, 3], [], [-4]],
  bin1: bytes.cat(bytes.vlen(bytes.i32le(1, 2, 3)), bytes.vlen(Buffer.alloc(0)), bytes.vlen(bytes.i32le(-4))),
  v2: [[5], [6, 7], [8, 9, 10, 11]],
  bin2: bytes.cat(bytes.vlen(bytes.i32le(5)), bytes.vlen(bytes.i32le(6, 7)), bytes.vlen(bytes.i32le(8, 9, 10, 11))),
  h5t: { class: 'VLEN', base: hInt(4, 'LE', true) },
  dtype: '|O',
  dump: ['DATATYPE H5T_VLEN { H5T_STD_I32LE}'],
  variable: true,
});
cases.push({
  name: 'vlen-float64be',
  type: { class: 'H5T_VLEN', base: flt('H5T_IEEE_F64BE') },
  canon: { class: 'H5T_VLEN', base: flt('H5T_IEEE_F64BE') },
  shape: [2],
  v1: [[1.5], [2.5, -3]],
  bin1: bytes.cat(bytes.vlen(bytes.f64be(1.5)), bytes.vlen(bytes.f64be(2.5, -3))),
  v2: [[], [0.125, 8, 9]],
  bin2: bytes.cat(bytes.vlen(Buffer.alloc(0)), bytes.vlen(bytes.f64be(0.125, 8, 9))),
  h5t: { class: 'VLEN', base: hFloat(8, 'BE') },
  dtype: '|O',
  dump: ['DATATYPE H5T_VLEN { H5T_IEEE_F64BE}'],
  variable: true,
  h5pyMisreads: 'h5py 3.7 does not byte-swap big-endian vlen bases',
  dumpValues: { dataset: '(0): (), (0.125, 8, 9)', attribute: '(0): (1.5), (2.5, -3)' },
});

// --- opaque (h5py writes numpy void as an opaque type with an empty tag)
for (const tag of ['', 'sensor-frame']) {
  cases.push({
    name: `opaque-tag-${JSON.stringify(tag)}`,
    type: { class: 'H5T_OPAQUE', size: 4, tag },
    canon: { class: 'H5T_OPAQUE', size: 4, tag },
    shape: [2],
    v1: ['AQIDBA==', '/////w=='],
    bin1: Buffer.from('01020304ffffffff', 'hex'),
    v2: ['AAAAAA==', '3q2+7w=='],
    bin2: Buffer.from('00000000deadbeef', 'hex'),
    h5t: { class: 'OPAQUE', size: 4, tag },
    dtype: '|V4',
    dump: [`H5T_OPAQUE { OPAQUE_TAG "${tag}"; }`],
  });
}

// --- bitfields
cases.push({
  name: 'bitfield-B8LE',
  type: { class: 'H5T_BITFIELD', base: 'H5T_STD_B8LE' },
  canon: { class: 'H5T_BITFIELD', base: 'H5T_STD_B8LE' },
  shape: [3],
  v1: [1, 255, 0],
  bin1: bytes.u8(1, 255, 0),
  v2: [128, 64, 3],
  bin2: bytes.u8(128, 64, 3),
  h5t: { class: 'BITFIELD', size: 1, order: 'LE' },
  dump: ['DATATYPE H5T_STD_B8LE'],
});
cases.push({
  name: 'bitfield-B16BE',
  type: { class: 'H5T_BITFIELD', base: 'H5T_STD_B16BE' },
  canon: { class: 'H5T_BITFIELD', base: 'H5T_STD_B16BE' },
  shape: [3],
  v1: [1, 65535, 256],
  bin1: bytes.u16be(1, 65535, 256),
  v2: [2, 4, 8],
  bin2: bytes.u16be(2, 4, 8),
  h5t: { class: 'BITFIELD', size: 2, order: 'BE' },
  dump: ['DATATYPE H5T_STD_B16BE'],
});

/** JSON value equality (floats compared at the type's precision, see `TypeCase.norm`). */
function expectJsonValue(actual: unknown, expected: unknown, c: TypeCase): void {
  if (c.norm) expect(mapNumbers(actual, c.norm)).to.deep.equal(mapNumbers(expected, c.norm));
  else expect(actual).to.deep.equal(expected);
}

/** Binary equality; for SPACEPAD strings trailing spaces and NULs count as the same padding. */
function expectWire(actual: Buffer, expected: Buffer, c: TypeCase, what: string): void {
  if (!c.padAgnostic) {
    expect(actual.toString('hex'), what).to.equal(expected.toString('hex'));
    return;
  }
  const norm = (b: Buffer) => {
    const out = Buffer.from(b);
    for (let e = 0; e < out.length; e += c.padAgnostic!) {
      let i = e + c.padAgnostic! - 1;
      while (i >= e && (out[i] === 0x20 || out[i] === 0)) out[i--] = 0;
    }
    return out.toString('hex');
  };
  expect(actual.length, what).to.equal(expected.length);
  expect(norm(actual), what).to.equal(norm(expected));
}

describe('API write: type JSON for every class (dataset + attribute, JSON + binary, h5py + h5dump)', function () {
  this.timeout(120000);
  let kit: Kit;
  let d: Dom;

  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'types');
  });
  after(() => releaseKit(kit));

  for (const c of cases) {
    describe(c.name, () => {
      let id: string;
      const dsName = c.name.replace(/[^A-Za-z0-9_-]/g, '_');

      it('POST /datasets answers 201 with the canonical type; GET /datasets/<id>/type agrees', async () => {
        const r = await d.c.post('/datasets', { type: c.type, shape: c.shape, link: { id: d.root, name: dsName } });
        expectStatus(r, 201, 'POST /datasets');
        id = r.json.id;
        expect(id).to.match(/^d-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{6}-[0-9a-f]{6}$/);
        expect(r.json.type).to.deep.equal(c.canon);
        expect(r.json.shape).to.deep.equal({ class: 'H5S_SIMPLE', dims: c.shape });
        expect(canonicalProblems(r.json.type)).to.deep.equal([]);
        const t = await d.c.get(`/datasets/${id}/type`);
        expectStatus(t, 200, 'GET type');
        expect(t.json.type).to.deep.equal(c.canon);
        const g = await d.c.get(`/datasets/${id}`);
        expect(g.json.type).to.deep.equal(c.canon);
      });

      it('PUT value as JSON, then GET as JSON and as binary', async () => {
        const w = await sendJsonText(d.c, 'PUT', `/datasets/${id}/value`, { value: c.v1 });
        expectStatus(w, 200, 'PUT value JSON');
        const r = await d.c.get(`/datasets/${id}/value`);
        expectStatus(r, 200, 'GET value');
        expectJsonValue(r.json.value, c.v1, c);
        const b = await getBinary(d.c, `/datasets/${id}/value`);
        expectStatus(b, 200, 'GET value binary');
        expect(b.headers.get('content-type')).to.equal('application/octet-stream');
        expectWire(b.body, c.bin1, c, 'binary GET after a JSON PUT');
      });

      it('PUT value as binary (wire-reference 3.5), then GET as JSON and as binary', async () => {
        const w = await putBinary(d.c, `/datasets/${id}/value`, c.bin2);
        expectStatus(w, 200, 'PUT value binary');
        const r = await d.c.get(`/datasets/${id}/value`);
        expectJsonValue(r.json.value, c.v2, c);
        const b = await getBinary(d.c, `/datasets/${id}/value`);
        expectWire(b.body, c.bin2, c, 'binary GET after a binary PUT');
      });

      it('PUT attribute with the same type and a JSON value; GET it back (JSON and binary)', async () => {
        const p = `/groups/${d.root}/attributes/${encodeURIComponent(dsName)}`;
        const w = await sendJsonText(d.c, 'PUT', p, { type: c.type, shape: c.shape, value: c.v1 });
        expectStatus(w, 201, 'PUT attribute');
        expect(w.json.hrefs).to.be.an('array');
        const r = await d.c.get(p);
        expectStatus(r, 200, 'GET attribute');
        expect(r.json.type).to.deep.equal(c.canon);
        expect(r.json.shape).to.deep.equal({ class: 'H5S_SIMPLE', dims: c.shape });
        expectJsonValue(r.json.value, c.v1, c);
        const v = await d.c.get(`${p}/value`);
        expectStatus(v, 200, 'GET attribute value');
        expectJsonValue(v.json.value, c.v1, c);
        if (!c.variable) {
          const b = await getBinary(d.c, `${p}/value`);
          expectStatus(b, 200, 'GET attribute value binary');
          expect(b.headers.get('content-type')).to.equal('application/octet-stream');
          expectWire(b.body, c.bin1, c, 'binary attribute value');
        }
      });

      it('h5py reads the dataset with the right type and values', () => {
        const o = inspectOne(d.file, `/${dsName}`);
        expect(o.kind).to.equal('dataset');
        expect(o.type).to.deep.equal({ ...c.h5t, committed: false });
        if (c.dtype) expect(o.dtype).to.equal(c.dtype);
        expect(o.shape).to.deep.equal(c.shape);
        expect(o.value_error, 'h5py read error').to.equal(undefined);
        if (!c.h5pyMisreads) expect(o.value).to.deep.equal(c.py2 ?? c.v2);
      });

      it('h5py reads the attribute with the right type and values', () => {
        const root = inspect(d.file, ['/'])['/'];
        const a = root.attrs.items[dsName];
        expect(a, `h5py attribute ${dsName}`).to.not.equal(undefined);
        expect(a.type).to.deep.equal({ ...c.h5t, committed: false });
        expect(a.shape).to.deep.equal(c.shape);
        expect(a.value_error, 'h5py attribute read error').to.equal(undefined);
        if (!c.h5pyMisreads) expect(a.value).to.deep.equal(c.py1 ?? c.v1);
      });

      it('h5dump shows the type (and the data)', () => {
        const head = squash(h5dumpText(d.file, ['-H', '-d', `/${dsName}`]));
        for (const frag of c.dump) expect(head).to.include(frag);
        if (c.dumpData) {
          const data = squash(h5dumpText(d.file, ['-d', `/${dsName}`]));
          // the values written last (v2) are in the dataset; the attribute holds v1
          const v2 = (c.v2 as (number | bigint)[]).join(', ');
          expect(data).to.include(`(0): ${v2}`);
          const attr = squash(h5dumpText(d.file, ['-a', `/${dsName}`]));
          expect(attr).to.include(c.dumpData);
        }
        if (c.dumpValues) {
          expect(squash(h5dumpText(d.file, ['-d', `/${dsName}`]))).to.include(c.dumpValues.dataset);
          expect(squash(h5dumpText(d.file, ['-a', `/${dsName}`]))).to.include(c.dumpValues.attribute);
        }
      });
    });
  }
});

// ---------------------------------------------------------------------------------------------
// alternative spellings accepted, canonical forms emitted

interface SpellingCase {
  name: string;
  type: unknown;
  canon: unknown;
  h5t: Record<string, unknown>;
  /** A value to write and read back (shape [2]). */
  value: unknown;
}

const spellings: SpellingCase[] = [
  {
    name: 'string with cset/strpad/strsize (spec 2.1)',
    type: { class: 'H5T_STRING', cset: 'H5T_CSET_UTF8', strpad: 'H5T_STR_SPACEPAD', strsize: 7 },
    canon: str('H5T_CSET_UTF8', 'H5T_STR_SPACEPAD', 7),
    h5t: hStr(7, 'UTF8', 'SPACEPAD'),
    value: ['añb', ''],
  },
  {
    name: 'string with cset/strpad and strsize H5T_VARIABLE',
    type: { class: 'H5T_STRING', cset: 'H5T_CSET_ASCII', strpad: 'H5T_STR_NULLTERM', strsize: 'H5T_VARIABLE' },
    canon: str('H5T_CSET_ASCII', 'H5T_STR_NULLTERM', 'H5T_VARIABLE'),
    h5t: hStr('var', 'ASCII', 'NULLTERM'),
    value: ['abc', 'de'],
  },
  {
    name: 'string with both spellings given consistently',
    type: { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', cset: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', strpad: 'H5T_STR_NULLPAD', length: 3, strsize: 3 },
    canon: str('H5T_CSET_ASCII', 'H5T_STR_NULLPAD', 3),
    h5t: hStr(3, 'ASCII', 'NULLPAD'),
    value: ['abc', 'd'],
  },
  {
    name: 'predefined name H5T_STD_U16BE as the whole type',
    type: 'H5T_STD_U16BE',
    canon: int('H5T_STD_U16BE'),
    h5t: hInt(2, 'BE', false),
    value: [1, 65535],
  },
  {
    name: 'predefined name H5T_IEEE_F16LE as the whole type',
    type: 'H5T_IEEE_F16LE',
    canon: flt('H5T_IEEE_F16LE'),
    h5t: hFloat(2, 'LE'),
    value: [0.5, -2],
  },
  {
    name: 'predefined name H5T_IEEE_F64BE as the whole type',
    type: 'H5T_IEEE_F64BE',
    canon: flt('H5T_IEEE_F64BE'),
    h5t: hFloat(8, 'BE'),
    value: [0.5, -2],
  },
  {
    name: 'compound fields given as predefined names, with and without the LE/BE suffix',
    type: {
      class: 'H5T_COMPOUND',
      fields: [
        { name: 'a', type: 'H5T_STD_I64BE' },
        { name: 'b', type: 'H5T_IEEE_F32' },
        { name: 'c', type: 'H5T_STD_U8' },
      ],
    },
    canon: {
      class: 'H5T_COMPOUND',
      fields: [
        { name: 'a', type: int('H5T_STD_I64BE') },
        { name: 'b', type: flt('H5T_IEEE_F32LE') },
        { name: 'c', type: int('H5T_STD_U8LE') },
      ],
    },
    h5t: {
      class: 'COMPOUND',
      size: 13,
      members: [
        { name: 'a', offset: 0, type: hInt(8, 'BE', true) },
        { name: 'b', offset: 8, type: hFloat(4, 'LE') },
        { name: 'c', offset: 12, type: hInt(1, 'LE', false) },
      ],
    },
    value: [
      [1, 0.5, 2],
      [-3, 4, 255],
    ],
  },
  {
    name: 'vlen base as a predefined name without suffix (h5pyd: "H5T_STD_I32", size H5T_VARIABLE)',
    type: { class: 'H5T_VLEN', base: 'H5T_STD_I32', size: 'H5T_VARIABLE' },
    canon: { class: 'H5T_VLEN', base: int('H5T_STD_I32LE') },
    h5t: { class: 'VLEN', base: hInt(4, 'LE', true) },
    value: [[1, 2], [3]],
  },
  {
    name: 'vlen base as a predefined name with suffix',
    type: { class: 'H5T_VLEN', base: 'H5T_IEEE_F64LE' },
    canon: { class: 'H5T_VLEN', base: flt('H5T_IEEE_F64LE') },
    h5t: { class: 'VLEN', base: hFloat(8, 'LE') },
    value: [[0.5], []],
  },
  {
    name: 'vlen base H5T_STD_I64 (no suffix)',
    type: { class: 'H5T_VLEN', base: 'H5T_STD_I64' },
    canon: { class: 'H5T_VLEN', base: int('H5T_STD_I64LE') },
    h5t: { class: 'VLEN', base: hInt(8, 'LE', true) },
    value: [[1], [2, 3, 4]],
  },
  {
    name: 'enum given with "members" [{name, value}] (hdf5-json)',
    type: { class: 'H5T_ENUM', base: int('H5T_STD_U8LE'), members: [{ name: 'RED', value: 0 }, { name: 'GREEN', value: 1 }, { name: 'BLUE', value: 7 }] },
    canon: { class: 'H5T_ENUM', base: int('H5T_STD_U8LE'), mapping: { RED: 0, GREEN: 1, BLUE: 7 } },
    h5t: { class: 'ENUM', size: 1, base: hInt(1, 'LE', false), members: { RED: 0, GREEN: 1, BLUE: 7 } },
    value: [7, 0],
  },
  {
    name: 'enum base given as a predefined name',
    type: { class: 'H5T_ENUM', base: 'H5T_STD_I16BE', mapping: { A: 1, B: 2 } },
    canon: { class: 'H5T_ENUM', base: int('H5T_STD_I16BE'), mapping: { A: 1, B: 2 } },
    h5t: { class: 'ENUM', size: 2, base: hInt(2, 'BE', true), members: { A: 1, B: 2 } },
    value: [2, 1],
  },
  {
    name: 'array base given as a predefined name',
    type: { class: 'H5T_ARRAY', base: 'H5T_IEEE_F32BE', dims: [3] },
    canon: { class: 'H5T_ARRAY', base: flt('H5T_IEEE_F32BE'), dims: [3] },
    h5t: { class: 'ARRAY', size: 12, dims: [3], base: hFloat(4, 'BE') },
    value: [
      [1, 2, 3],
      [4, 5, 6],
    ],
  },
  {
    name: 'string with only "length" (charSet and strPad defaulted, still emitted)',
    type: { class: 'H5T_STRING', length: 4 },
    canon: str('H5T_CSET_ASCII', 'H5T_STR_NULLPAD', 4),
    h5t: hStr(4, 'ASCII', 'NULLPAD'),
    value: ['ab', 'cdef'],
  },
  {
    name: 'object reference given as the predefined name H5T_STD_REF_OBJ',
    type: 'H5T_STD_REF_OBJ',
    canon: { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' },
    h5t: { class: 'REFERENCE', size: 8, ref: 'OBJ' },
    value: ['', ''],
  },
];

describe('API write: alternative type spellings are accepted and the canonical form is emitted', function () {
  this.timeout(60000);
  let kit: Kit;
  let d: Dom;
  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'spell');
  });
  after(() => releaseKit(kit));

  spellings.forEach((c, i) => {
    it(c.name, async () => {
      const name = `s${i}`;
      const r = await d.c.post('/datasets', { type: c.type, shape: [2], link: { id: d.root, name } });
      expectStatus(r, 201, 'POST /datasets');
      expect(r.json.type).to.deep.equal(c.canon);
      expect(canonicalProblems(r.json.type)).to.deep.equal([]);
      const id = r.json.id;
      expect((await d.c.get(`/datasets/${id}`)).json.type).to.deep.equal(c.canon);
      expectStatus(await sendJsonText(d.c, 'PUT', `/datasets/${id}/value`, { value: c.value }), 200, 'PUT value');
      expect((await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal(c.value);
      const a = await d.c.put(`/datasets/${id}/attributes/t`, { type: c.type, shape: [2], value: c.value });
      expectStatus(a, 201, 'PUT attribute');
      const ga = await d.c.get(`/datasets/${id}/attributes/t`);
      expect(ga.json.type).to.deep.equal(c.canon);
      expect(ga.json.value).to.deep.equal(c.value);
      const o = inspectOne(d.file, `/${name}`);
      expect(o.type).to.deep.equal({ ...c.h5t, committed: false });
      expect(o.attrs.items.t.type).to.deep.equal({ ...c.h5t, committed: false });
      expect(o.value, 'h5py dataset value').to.deep.equal(c.value);
      expect(o.attrs.items.t.value, 'h5py attribute value').to.deep.equal(c.value);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// references

describe('API write: object and region references', function () {
  this.timeout(60000);
  let kit: Kit;
  let d: Dom;
  let gid: string;
  let xid: string;
  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'refs');
    const g = await d.c.post('/groups', { link: { id: d.root, name: 'g1' } });
    expectStatus(g, 201, 'POST /groups');
    gid = g.json.id;
    xid = await makeDataset(d, 'x', { type: 'H5T_STD_I32LE', shape: [4] });
    expectStatus(await d.c.put(`/datasets/${xid}/value`, { value: [10, 11, 12, 13] }), 200, 'PUT x');
  });
  after(() => releaseKit(kit));

  it('object references: JSON and binary writes and reads; h5py dereferences them', async () => {
    const type = { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' };
    const id = await makeDataset(d, 'refs', { type, shape: [3] });
    const v1 = [`groups/${gid}`, `datasets/${xid}`, ''];
    expectStatus(await d.c.put(`/datasets/${id}/value`, { value: v1 }), 200, 'PUT refs JSON');
    expect(await (await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal(v1);
    const b = await getBinary(d.c, `/datasets/${id}/value`);
    expect(b.body.toString('hex')).to.equal(bytes.cat(...v1.map(bytes.ref)).toString('hex'));
    let o = inspectOne(d.file, '/refs');
    expect(o.type).to.deep.equal({ class: 'REFERENCE', size: 8, ref: 'OBJ', committed: false });
    expect(o.value).to.deep.equal(['/g1', '/x', '']);

    const v2 = ['', `groups/${d.root}`, `datasets/${xid}`];
    expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.cat(...v2.map(bytes.ref))), 200, 'PUT refs binary');
    expect((await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal(v2);
    o = inspectOne(d.file, '/refs');
    expect(o.value).to.deep.equal(['', '/', '/x']);
    expect(squash(h5dumpText(d.file, ['-H', '-d', '/refs']))).to.include('DATATYPE H5T_REFERENCE { H5T_STD_REF_OBJECT }');
  });

  it('object reference attribute: h5py dereferences it', async () => {
    const p = `/groups/${gid}/attributes/target`;
    expectStatus(await d.c.put(p, { type: { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' }, value: `datasets/${xid}` }), 201, 'PUT attribute');
    const r = await d.c.get(p);
    expect(r.json.shape).to.deep.equal({ class: 'H5S_SCALAR' });
    expect(r.json.value).to.equal(`datasets/${xid}`);
    const g = inspectOne(d.file, '/g1');
    expect(g.attrs.items.target.value).to.equal('/x');
  });

  it('region reference type: created, reported canonically, typed H5T_STD_REF_DSETREG in the file; unwritten values read as null references', async () => {
    const type = { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' };
    const r = await d.c.post('/datasets', { type, shape: [2], link: { id: d.root, name: 'regions' } });
    expectStatus(r, 201, 'POST /datasets');
    expect(r.json.type).to.deep.equal(type);
    const o = inspectOne(d.file, '/regions');
    expect(o.type).to.deep.equal({ class: 'REFERENCE', size: 12, ref: 'DSETREG', committed: false });
    expect(squash(h5dumpText(d.file, ['-H', '-d', '/regions']))).to.include('DATATYPE H5T_REFERENCE { H5T_STD_REF_DSETREG }');
    const v = await d.c.get(`/datasets/${r.json.id}/value`);
    expectStatus(v, 200, 'GET value of a region reference dataset');
    expect(v.json.value).to.deep.equal([null, null]);
  });

  it('a region reference value outside the dataset is a 400 and changes nothing (values: region-refs.test.ts)', async () => {
    const type = { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' };
    const id = await makeDataset(d, 'regions2', { type, shape: [1] });
    const before = h5dumpText(d.file, ['-d', '/regions2']);
    const region = { id: xid, select_type: 'H5S_SEL_POINTS', selection: [[1], [99]] };
    const w = await d.c.put(`/datasets/${id}/value`, { value: [region] });
    expectStatus(w, 400, 'PUT region reference');
    expect(w.json.message).to.match(/region reference/i);
    expect(h5dumpText(d.file, ['-d', '/regions2'])).to.equal(before);
  });
});

// ---------------------------------------------------------------------------------------------
// committed datatypes (issue item 5)

describe('API write: committed datatypes', function () {
  this.timeout(60000);
  let kit: Kit;
  let d: Dom;
  const ctype = {
    class: 'H5T_COMPOUND',
    fields: [
      { name: 't', type: flt('H5T_IEEE_F64LE') },
      { name: 'label', type: str('H5T_CSET_UTF8', 'H5T_STR_NULLPAD', 8) },
    ],
  };
  let linkedId: string;
  let anonId: string;
  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'committed');
  });
  after(() => releaseKit(kit));

  it('POST /datatypes with a link: 201 {id t-..., type, attributeCount 0}; GET /datatypes/<id>; h5py sees a named type', async () => {
    const r = await d.c.post('/datatypes', { type: ctype, link: { id: d.root, name: 'ctype' } });
    expectStatus(r, 201, 'POST /datatypes');
    linkedId = r.json.id;
    expect(linkedId).to.match(/^t-/);
    expect(linkedId).to.have.length(38);
    expect(r.json.type).to.deep.equal(ctype);
    expect(r.json.attributeCount).to.equal(0);
    const g = await d.c.get(`/datatypes/${linkedId}`);
    expectStatus(g, 200, 'GET /datatypes/<id>');
    expect(g.json.id).to.equal(linkedId);
    expect(g.json.type).to.deep.equal(ctype);
    expect(g.json.attributeCount).to.equal(0);
    const link = await d.c.get(`/groups/${d.root}/links/ctype`);
    expect(link.json.link).to.include({ class: 'H5L_TYPE_HARD', id: linkedId, collection: 'datatypes' });
    const o = inspectOne(d.file, '/ctype');
    expect(o.kind).to.equal('datatype');
    expect(o.type.committed).to.equal(true);
    expect(o.type.class).to.equal('COMPOUND');
    expect(o.type.members.map((m: any) => m.name)).to.deep.equal(['t', 'label']);
    expect(squash(h5dumpText(d.file, ['-H']))).to.include('DATATYPE "ctype" H5T_COMPOUND {');
  });

  it('POST /datatypes unlinked (predefined name): 201; GET works; not a link of root', async () => {
    const r = await d.c.post('/datatypes', { type: 'H5T_STD_I16BE' });
    expectStatus(r, 201, 'POST /datatypes');
    anonId = r.json.id;
    expect(r.json.type).to.deep.equal(int('H5T_STD_I16BE'));
    const g = await d.c.get(`/datatypes/${anonId}`);
    expectStatus(g, 200, 'GET');
    expect(g.json.type).to.deep.equal(int('H5T_STD_I16BE'));
    const links = await d.c.get(`/groups/${d.root}/links`);
    expect(links.json.links.map((l: any) => l.title)).to.deep.equal(['ctype']);
  });

  it('GET /datatypes lists the linked committed type', async () => {
    const r = await d.c.get('/datatypes');
    expectStatus(r, 200, 'GET /datatypes');
    expect(r.json.datatypes).to.include(linkedId);
  });

  it('a dataset created with the committed type id shares it in the file (h5py sees a named type)', async () => {
    const r = await d.c.post('/datasets', { type: linkedId, shape: [2], link: { id: d.root, name: 'uses_ctype' } });
    expectStatus(r, 201, 'POST /datasets with a committed type');
    expect(r.json.type).to.deep.equal({ ...ctype, id: linkedId });
    const g = await d.c.get(`/datasets/${r.json.id}`);
    expect(g.json.type).to.deep.equal({ ...ctype, id: linkedId });
    expectStatus(await d.c.put(`/datasets/${r.json.id}/value`, { value: [[1.5, 'a'], [2.5, 'bé']] }), 200, 'PUT value');
    expect((await d.c.get(`/datasets/${r.json.id}/value`)).json.value).to.deep.equal([
      [1.5, 'a'],
      [2.5, 'bé'],
    ]);
    const all = inspect(d.file);
    const ds = all['/uses_ctype'];
    expect(ds.type.committed).to.equal(true);
    expect(ds.type_addr).to.equal(all['/ctype'].addr);
    expect(ds.value).to.deep.equal([
      [1.5, 'a'],
      [2.5, 'bé'],
    ]);
    expect(squash(h5dumpText(d.file, ['-H', '-d', '/uses_ctype']))).to.include('DATATYPE "/ctype"');
  });

  it('an attribute created with the committed type id shares it in the file', async () => {
    const p = `/groups/${d.root}/attributes/ca`;
    expectStatus(await d.c.put(p, { type: linkedId, value: [0.25, 'xy'] }), 201, 'PUT attribute');
    const r = await d.c.get(p);
    expect(r.json.type).to.deep.equal({ ...ctype, id: linkedId });
    expect(r.json.value).to.deep.equal([0.25, 'xy']);
    const all = inspect(d.file);
    const a = all['/'].attrs.items.ca;
    expect(a.type.committed).to.equal(true);
    expect(a.value).to.deep.equal([0.25, 'xy']);
  });

  it('attributes on a committed datatype', async () => {
    const p = `/datatypes/${linkedId}/attributes/units`;
    expectStatus(await d.c.put(p, { type: str('H5T_CSET_ASCII', 'H5T_STR_NULLTERM', 'H5T_VARIABLE'), value: 'seconds' }), 201, 'PUT');
    expect((await d.c.get(p)).json.value).to.equal('seconds');
    expect((await d.c.get(`/datatypes/${linkedId}`)).json.attributeCount).to.equal(1);
    expect(inspectOne(d.file, '/ctype').attrs.items.units.value).to.equal('seconds');
  });

  it('DELETE /datatypes/<id>: 200, then GET 410 or 404, and h5py no longer finds the link; datasets using it still read', async () => {
    const r = await d.c.delete(`/datatypes/${anonId}`);
    expectStatus(r, 200, 'DELETE anonymous datatype');
    expect([404, 410]).to.include((await d.c.get(`/datatypes/${anonId}`)).status);
    const r2 = await d.c.delete(`/datatypes/${linkedId}`);
    expectStatus(r2, 200, 'DELETE linked datatype');
    expect([404, 410]).to.include((await d.c.get(`/datatypes/${linkedId}`)).status);
    expect((await d.c.get('/datatypes')).json.datatypes).to.not.include(linkedId);
    const all = inspect(d.file);
    expect(all['/ctype']).to.equal(undefined);
    expect(all['/uses_ctype'].value).to.deep.equal([
      [1.5, 'a'],
      [2.5, 'bé'],
    ]);
    const links = await d.c.get(`/groups/${d.root}/links`);
    expect(links.json.links.map((l: any) => l.title)).to.not.include('ctype');
  });
});
