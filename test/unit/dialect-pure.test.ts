/**
 * Pure parts of the HDF REST dialect (issue #12): h5py's chunk guess, numpy item sizes, region
 * reference values, the arange initializer's options, UTF-8 checks of wire strings, and which
 * creation properties are kept "as given".
 */
import { expect } from 'chai';
import { parseType, type TypeJson } from '../../src/codec/types.js';
import { decodeElements, encodeElements, hasInvalidUtf8, parseRegionRef } from '../../src/codec/values.js';
import { applyGivenCreation, givenCreationOf, guessChunks, h5pyItemSize, largeChunkBounds } from '../../src/store/objects/datasets.js';
import { readItems, writeItems } from '../../src/http/attributeBodies.js';
import { parseInitializer } from '../../src/store/objects/initializer.js';
import { expect400 } from '../helpers/errors.js';

const INF = Infinity;

describe("datasets: h5py's guess_chunk", () => {
  // [shape, maxdims ([] = none, Infinity = unlimited), typesize, h5py 3.7 guess_chunk(shape, maxshape, typesize)]
  const table: [number[], number[], number, number[]][] = [
    [[1000], [], 4, [1000]],
    [[40, 80], [], 8, [20, 40]],
    [[100], [100], 8, [100]],
    [[10, 10], [INF, 10], 8, [10, 10]],
    [[0], [INF], 8, [1024]],
    [[1000000], [], 4, [7813]],
    [[3, 16], [], 1, [3, 16]],
    [[1024, 1024, 3], [], 4, [64, 128, 1]],
    [[7], [], 16, [7]],
    [[2000, 3000], [], 8, [63, 94]],
    [[0, 5], [INF, 5], 8, [256, 3]],
    [[5], [], 2000000, [1]],
  ];
  for (const [shape, maxdims, size, chunks] of table) {
    it(`shape ${JSON.stringify(shape)} maxdims ${JSON.stringify(maxdims)} itemsize ${size} -> ${JSON.stringify(chunks)}`, () => {
      expect(guessChunks(shape, maxdims, size)).to.deep.equal(chunks);
    });
  }
  it('caps a guess at a smaller fixed maximum (libhdf5 would refuse the chunk)', () => {
    expect(guessChunks([0], [10], 8)).to.deep.equal([10]);
  });
  it('refuses scalar shapes', () => expect400(() => guessChunks([], [], 4), 'scalar'));
});

describe('datasets: chunks of datasets chunked only for their size (largeChunkBounds: about 1 MiB, at most maxChunkBytes)', () => {
  // [shape, typesize, maxChunkBytes, chunks] (no maxdims: h5py would store these contiguous)
  const table: [number[], number, number, number[]][] = [
    [[4096, 1024], 4, 4 << 20, [1024, 256]], // the 16 MiB float32 of the write benchmark: 1 MiB (h5py's guess: 128 x 64, 32 KiB)
    [[8192, 8192], 4, 4 << 20, [512, 512]],
    [[4096, 4096], 4, 1 << 20, [512, 512]], // a server with a 1 MiB chunk limit: at most that
    [[1100000], 8, 4 << 20, [137500]], // within 50% of the target: kept
    [[100, 100, 1000], 2, 4 << 20, [25, 50, 500]],
    [[5000, 3], 4096, 4 << 20, [313, 1]],
    [[3000, 3000], 8, 512 * 1024, [188, 188]], // a chunk limit below 1 MiB lowers the target too (375 x 188 would pass it)
  ];
  for (const [shape, size, limit, chunks] of table) {
    it(`shape ${JSON.stringify(shape)} itemsize ${size} maxChunkBytes ${limit} -> ${JSON.stringify(chunks)}`, () => {
      const got = guessChunks(shape, [], size, largeChunkBounds(limit));
      expect(got).to.deep.equal(chunks);
      expect(got.reduce((a, b) => a * b, size)).to.be.at.most(limit);
    });
  }

  const sizes: [string, unknown, number][] = [
    ['int16', 'H5T_STD_I16LE', 2],
    ['float64', 'H5T_IEEE_F64BE', 8],
    ['fixed string', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 7 }, 7],
    ['vlen string (object)', { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, 8],
    ['vlen sequence (object)', { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' }, 8],
    ['reference (object)', 'H5T_STD_REF_OBJ', 8],
    ['compound', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_IEEE_F64LE' }] }, 9],
    ['array', { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [2, 3] }, 24],
  ];
  for (const [name, t, n] of sizes) it(`numpy itemsize of ${name} is ${n}`, () => expect(h5pyItemSize(parseType(t))).to.equal(n));
});

describe('values: region references (hdf5-json form)', () => {
  const ID = 'd-0123abcd-0123abcd-0000-000000-000320';
  const ok: [string, unknown, unknown][] = [
    ['points', { id: ID, select_type: 'H5S_SEL_POINTS', selection: [[0, 1], [2, 11]] }, { id: ID, select_type: 'H5S_SEL_POINTS', selection: [[0, 1], [2, 11]] }],
    [
      'hyperslab blocks (hdf5-json: end corner one past the last element)',
      { id: ID, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [1, 3]]] },
      { id: ID, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [1, 3]]] },
    ],
    [
      'older hdf5-json: "class" and {start, opposite} blocks',
      { id: ID, class: 'H5S_SEL_HYPERSLABS', selection: [{ start: [0, 0], opposite: [0, 2] }] },
      { id: ID, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [1, 3]]] },
    ],
    ['all', { id: ID, select_type: 'H5S_SEL_ALL' }, { id: ID, select_type: 'H5S_SEL_ALL' }],
    ['none with a dataset', { id: `datasets/${ID}`, select_type: 'H5S_SEL_NONE', selection: null }, { id: ID, select_type: 'H5S_SEL_NONE' }],
    ['none without a dataset is a null reference', { select_type: 'H5S_SEL_NONE' }, null],
    ['null', null, null],
    ['empty string', '', null],
    ['empty object', {}, null],
  ];
  for (const [name, v, want] of ok) it(`parses ${name}`, () => expect(parseRegionRef(v)).to.deep.equal(want));

  const bad: [string, unknown, string][] = [
    ['a number', 5, 'expected an object'],
    ['unknown select_type', { id: ID, select_type: 'H5S_SEL_SOME' }, 'select_type'],
    ['missing id', { select_type: 'H5S_SEL_ALL' }, '"id"'],
    ['points without selection', { id: ID, select_type: 'H5S_SEL_POINTS' }, 'selection'],
    ['negative coordinate', { id: ID, select_type: 'H5S_SEL_POINTS', selection: [[0, -1]] }, 'non-negative'],
    ['block ending before it starts', { id: ID, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[2, 2], [1, 3]]] }, 'empty'],
    ['empty block (end corner = start)', { id: ID, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [0, 3]]] }, 'empty in dimension 0'],
    ['block corners of different rank', { id: ID, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0], [1, 3]]] }, 'rank'],
    ['ALL with a selection', { id: ID, select_type: 'H5S_SEL_ALL', selection: [[1]] }, 'no selection'],
  ];
  for (const [name, v, frag] of bad) it(`rejects ${name}`, () => expect400(() => parseRegionRef(v), frag));

  it('round-trips through the wire form (byte count + JSON text; 0 for null)', () => {
    const t = parseType({ class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' });
    const vals = [{ id: ID, select_type: 'H5S_SEL_POINTS', selection: [[3]] }, null];
    const wire = encodeElements(vals, t);
    const text = JSON.stringify(vals[0]);
    expect(wire.readInt32LE(0)).to.equal(Buffer.byteLength(text));
    expect(wire.toString('utf8', 4, 4 + Buffer.byteLength(text))).to.equal(text);
    expect(wire.readInt32LE(wire.length - 4)).to.equal(0);
    expect(decodeElements(wire, t, 2).values).to.deep.equal(vals);
  });
});

describe('datasets: the arange initializer', () => {
  const I64 = parseType('H5T_STD_I64LE');
  const space = { cls: 'H5S_SIMPLE' as const, dims: [4], maxdims: [] };
  const ok: [string, unknown, { start: number; step: number }][] = [
    ['defaults', ['arange'], { start: 0, step: 1 }],
    ['numbers', ['arange', 5, 2], { start: 5, step: 2 }],
    ["h5pyd's option strings", ['arange', '--start=10', '--step=2'], { start: 10, step: 2 }],
    ['one option', ['arange', '--step=0.5'], { start: 0, step: 0.5 }],
  ];
  for (const [name, v, want] of ok) it(`parses ${name}`, () => expect(parseInitializer(v, I64, space)).to.deep.equal({ kind: 'arange', ...want }));
  const bad: [string, unknown, TypeJson, string][] = [
    ['an unknown initializer', ['zeros'], I64, 'only "arange"'],
    ['not a list', 'arange', I64, 'must be a list'],
    ['a bad option', ['arange', '--stop=3'], I64, '--stop=3'],
    ['too many numbers', ['arange', 1, 2, 3], I64, 'at most two'],
    ['a string type', ['arange'], parseType({ class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 }), 'integer or float'],
  ];
  for (const [name, v, t, frag] of bad) it(`rejects ${name}`, () => expect400(() => parseInitializer(v, t, space), frag));
});

describe('attributes: strings that are not UTF-8 (sent as base64)', () => {
  const S4 = parseType({ class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 });
  const VS = parseType({ class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' });
  const CMP = parseType({ class: 'H5T_COMPOUND', fields: [{ name: 'n', type: 'H5T_STD_I32LE' }, { name: 's', type: S4 }] });
  const vl = (b: Buffer) => Buffer.concat([Buffer.from([b.length, 0, 0, 0]), b]);
  const cases: [string, Buffer, TypeJson, number, boolean][] = [
    ['valid fixed string', Buffer.from('héy\0'.replace('é', 'e')), S4, 1, false],
    ['fixed string with 0xff', Buffer.from([0xff, 0x41, 0, 0]), S4, 1, true],
    ['fixed UTF-8 multibyte', Buffer.from('é\0\0', 'utf8'), S4, 1, false],
    ['vlen string cut inside a character', vl(Buffer.from([0xe2, 0x82])), VS, 1, true],
    ['second vlen string bad', Buffer.concat([vl(Buffer.from('ok')), vl(Buffer.from([0xc0]))]), VS, 2, true],
    ['compound string field', Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.from([0x80, 0, 0, 0])]), CMP, 1, true],
    ['numbers only', Buffer.from([0xff, 0xff, 0xff, 0xff]), parseType('H5T_STD_I32LE'), 1, false],
  ];
  for (const [name, wire, t, n, bad] of cases) it(`${name}: ${bad}`, () => expect(hasInvalidUtf8(wire, t, n)).to.equal(bad));
});

describe('datasets: creation properties kept as given', () => {
  const F64 = parseType('H5T_IEEE_F64LE');
  const nanBytes = encodeElements([NaN], F64);
  it('keeps word and base64 fill values, the initializer, and blosc filters without a level', () => {
    const opts = { filters: [{ id: 2, cdValues: [] }, { id: 32001, cdValues: [0, 0, 0, 0, 5, 1, 1] }] };
    const g = givenCreationOf({ fillValue: 'nan', initializer: ['arange'], filters: ['shuffle', { class: 'H5Z_FILTER_USER', name: 'lz4' }] }, opts);
    expect(g).to.deep.equal({ fillValue: 'nan', initializer: ['arange'], noLevel: [1] });
    expect(givenCreationOf({ fillValue: 'AAAAAAAA+H8=', fillValue_encoding: 'base64' }, {})).to.deep.equal({ fillValue: 'AAAAAAAA+H8=', fillValue_encoding: 'base64' });
    expect(givenCreationOf({ fillValue: 2.5, filters: [{ name: 'lz4', level: 3 }] }, { filters: [{ id: 32001, cdValues: [] }] })).to.equal(undefined);
  });
  it('reports them where the file agrees, the file otherwise', () => {
    const cp: Record<string, unknown> = { fillValue: NaN, filters: [{ id: 32001, name: 'lz4', level: 5 }] };
    applyGivenCreation(cp, { fillValue: 'nan', noLevel: [0], initializer: ['arange', 1, 2] }, nanBytes, F64);
    expect(cp).to.deep.equal({ fillValue: 'nan', filters: [{ id: 32001, name: 'lz4' }], initializer: ['arange', 1, 2] });
    const changed: Record<string, unknown> = { fillValue: 1, filters: [{ id: 32001, name: 'lz4', level: 9 }] };
    applyGivenCreation(changed, { fillValue: 'nan', noLevel: [0] }, encodeElements([1], F64), F64);
    expect(changed).to.deep.equal({ fillValue: 1, filters: [{ id: 32001, name: 'lz4', level: 9 }] });
  });
});

describe('attributes: bulk bodies (obj_ids forms)', () => {
  const G = 'g-0123abcd-0123abcd-0000-000000-000060';
  const D = 'd-0123abcd-0123abcd-0000-000000-000320';
  const A1 = { type: 'H5T_STD_I32LE', value: 1 };
  it('reads: a list (all attributes, or attr_names for each) and a dict {id: [names]}', () => {
    expect(readItems({ obj_ids: [G, D] })).to.deep.equal([{ id: G, names: undefined }, { id: D, names: undefined }]);
    expect(readItems({ obj_ids: [G], attr_names: ['a'] })).to.deep.equal([{ id: G, names: ['a'] }]);
    expect(readItems({ obj_ids: { [G]: ['a'], [D]: [] } })).to.deep.equal([{ id: G, names: ['a'] }, { id: D, names: [] }]);
  });
  it('writes: a list with the attributes for each, and a dict {id: {"attributes": {...}}}', () => {
    expect(writeItems({ obj_ids: [G, D], attributes: { a: A1 } })).to.deep.equal([{ id: G, items: { a: A1 } }, { id: D, items: { a: A1 } }]);
    expect(writeItems({ obj_ids: { [D]: { attributes: { b: A1 } } } })).to.deep.equal([{ id: D, items: { b: A1 } }]);
  });
  const bad: [string, () => unknown, string][] = [
    ['read: a dict with attr_names', () => readItems({ obj_ids: { [G]: ['a'] }, attr_names: ['a'] }), 'attr_names'],
    ['read: names not a list', () => readItems({ obj_ids: { [G]: 'a' } }), 'list of attribute names'],
    ['read: a number id', () => readItems({ obj_ids: [5] }), 'object ids'],
    ['read: obj_ids a string', () => readItems({ obj_ids: G }), 'list of ids'],
    ['write: a list without attributes', () => writeItems({ obj_ids: [G] }), '"attributes"'],
    ['write: a dict plus attributes', () => writeItems({ obj_ids: { [G]: { attributes: {} } }, attributes: {} }), 'outside'],
    ['write: a dict entry without attributes', () => writeItems({ obj_ids: { [G]: A1 } }), 'attributes'],
  ];
  for (const [name, f, frag] of bad) it(`rejects ${name}`, () => expect400(f, frag));
});
