/**
 * The viewer's data provider, its pure parts (viewer/src/provider, viewer/src/snippets.ts): API
 * JSON with non-finite literals, HDF REST types as h5web's, binary values, selections, CF
 * packing, pandas column names, dimension scale references, and the Python snippets.
 */
import { expect } from 'chai';
import { cfDecode, cfPacking, dimensionScaleIds, pandasColumns, pickledStrings } from '../../viewer/src/provider/conventions.js';
import { markNonFinite, numberOf, parseApiJson } from '../../viewer/src/provider/json.js';
import { binaryBase, decodeBinary, dtypeOf, numericBase, selectionCount, shapeOf } from '../../viewer/src/provider/types.js';
import { pythonSnippets } from '../../viewer/src/snippets.js';

describe('viewer provider: API JSON with NaN and Infinity', () => {
  const cases: [string, unknown][] = [
    ['{"a": 1}', { a: 1 }],
    ['{"fillValue": NaN}', { fillValue: NaN }],
    ['[NaN, Infinity, -Infinity, 1e3, -1]', [NaN, Infinity, -Infinity, 1000, -1]],
    ['{"value": [[1, NaN], [-Infinity, 2]]}', { value: [[1, NaN], [-Infinity, 2]] }],
    // the words inside strings stay strings, escapes included
    ['["NaN", "-Infinity", "a \\"NaN\\" b", NaN]', ['NaN', '-Infinity', 'a "NaN" b', NaN]],
    ['{"NaN": Infinity}', { NaN: Infinity }],
    ['{"s": "\\\\", "x": NaN}', { s: '\\', x: NaN }],
  ];
  for (const [text, want] of cases) it(text, () => expect(parseApiJson(text)).to.deep.equal(want));

  it('text that is not JSON even with the literals still throws', () => {
    for (const bad of ['{"a": nan}', '[NaN,]', '{"a": Inf}', 'NaNa']) expect(() => parseApiJson(bad), bad).to.throw(SyntaxError);
  });

  it('markNonFinite leaves standard JSON alone', () => {
    const t = '{"a": [1, 2, "NaN"]}';
    expect(markNonFinite(t)).to.equal(t);
  });

  it('numberOf reads numbers and the strings HSDS 1.0 sends under ignore_nan', () => {
    const cases: [unknown, number | undefined][] = [
      [1.5, 1.5],
      ['nan', NaN],
      ['-inf', -Infinity],
      ['inf', Infinity],
      ['Infinity', Infinity],
      ['2.5', 2.5],
      ['', undefined],
      ['abc', undefined],
      [null, undefined],
      [true, 1],
    ];
    for (const [v, want] of cases) expect(numberOf(v), String(v)).to.deep.equal(want);
  });
});

describe('viewer provider: types, shapes, binary values, selections', () => {
  it('numeric bases', () => {
    expect(numericBase('H5T_STD_U16BE')).to.deep.equal({ class: 'Integer', signed: false, size: 16, endianness: 'big-endian' });
    expect(numericBase('H5T_IEEE_F64LE')).to.deep.equal({ class: 'Float', size: 64, endianness: 'little-endian' });
    expect(numericBase('H5T_NATIVE_INT')).to.equal(undefined);
  });

  it('types as h5web has them', () => {
    expect(dtypeOf({ class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLPAD', length: 'H5T_VARIABLE' })).to.deep.equal({ class: 'String', charSet: 'UTF-8', strPad: 'null-padded' });
    const b = { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' };
    expect(dtypeOf({ class: 'H5T_ENUM', base: b, mapping: { FALSE: 0, TRUE: 1 } })).to.deep.include({ class: 'Boolean' });
    expect(dtypeOf({ class: 'H5T_ENUM', base: b, mapping: { RED: 0, GREEN: 1, BLUE: 2 } })).to.deep.include({ mapping: { 0: 'RED', 1: 'GREEN', 2: 'BLUE' } });
    const f = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' };
    expect(dtypeOf({ class: 'H5T_COMPOUND', fields: [{ name: 'r', type: f }, { name: 'i', type: f }] }).class).to.equal('Complex');
    const c = dtypeOf({ class: 'H5T_COMPOUND', fields: [{ name: 'a', type: f }, { name: 'b', type: { class: 'H5T_ARRAY', base: f, dims: [3] } }] });
    expect(c.class).to.equal('Compound');
    expect(dtypeOf({ class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' })).to.deep.equal({ class: 'Reference' });
    expect(dtypeOf({ class: 'H5T_NOPE' })).to.deep.equal({ class: 'Unknown' });
  });

  it('shapes', () => {
    expect(shapeOf({ class: 'H5S_SIMPLE', dims: [3, 0] })).to.deep.equal({ class: 'Array', dims: [3, 0] });
    expect(shapeOf({ class: 'H5S_SCALAR' })).to.deep.equal({ class: 'Scalar', dims: [] });
    expect(shapeOf({ class: 'H5S_NULL' })).to.deep.equal({ class: 'Null' });
  });

  it('which types travel as binary', () => {
    expect(binaryBase({ class: 'H5T_FLOAT', base: 'H5T_IEEE_F64BE' })).to.deep.include({ size: 64 });
    expect(binaryBase({ class: 'H5T_FLOAT', base: 'H5T_IEEE_F16LE' })).to.equal(undefined);
    expect(binaryBase({ class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_U8LE' }, mapping: {} })).to.deep.include({ size: 8 });
    expect(binaryBase({ class: 'H5T_STRING' })).to.equal(undefined);
  });

  it('binary bodies: little- and big-endian, NaN and infinities kept, 64-bit integers as bigints', () => {
    const le = new Float64Array([1.5, NaN, -Infinity]);
    expect(Array.from(decodeBinary(le.buffer, { class: 'Float', size: 64, endianness: 'little-endian' } as never, 3) as Float64Array)).to.deep.equal([1.5, NaN, -Infinity]);
    const dv = new DataView(new ArrayBuffer(8));
    dv.setInt16(0, -2, false);
    dv.setInt16(2, 300, false);
    dv.setUint32(4, 4000000000, false);
    expect(Array.from(decodeBinary(dv.buffer.slice(0, 4), { class: 'Integer', signed: true, size: 16, endianness: 'big-endian' } as never, 2) as Int16Array)).to.deep.equal([-2, 300]);
    expect(Array.from(decodeBinary(dv.buffer.slice(4), { class: 'Integer', signed: false, size: 32, endianness: 'big-endian' } as never, 1) as Uint32Array)).to.deep.equal([4000000000]);
    const big = new BigInt64Array([-(2n ** 62n)]);
    expect(decodeBinary(big.buffer, { class: 'Integer', signed: true, size: 64, endianness: 'little-endian' } as never, 1)[0]).to.equal(-(2n ** 62n));
    expect(() => decodeBinary(new ArrayBuffer(7), { class: 'Float', size: 64, endianness: 'little-endian' } as never, 1)).to.throw(/Expected 1 values/);
  });

  it('element counts of selections', () => {
    const cases: [number[], string | undefined, number][] = [
      [[4, 5, 6], undefined, 120],
      [[4, 5, 6], '0,:,:', 30],
      [[4, 5, 6], '1:3,:,2', 10],
      [[4, 5, 6], '2,3,4', 1],
      [[10], '8:20', 2],
      [[0, 5], undefined, 0],
    ];
    for (const [dims, sel, n] of cases) expect(selectionCount(dims, sel), `${dims} ${sel}`).to.equal(n);
  });
});

describe('viewer provider: conventions', () => {
  it('CF packing: fill and missing values, valid range in packed units, scale and offset', () => {
    const p = cfPacking({ _FillValue: -32767, missing_value: [-32000], scale_factor: 0.01, add_offset: 10, valid_range: [-30000, 30000] })!;
    expect(p).to.deep.include({ missing: [-32767, -32000], scale: 0.01, offset: 10, validMin: -30000, validMax: 30000, unpack: true });
    expect(Array.from(cfDecode([500, -32767, -32000, 31000, 0], p))).to.deep.equal([15, NaN, NaN, NaN, 10]);
    // HSDS 1.0 under ignore_nan: the strings
    expect(cfPacking({ scale_factor: '2', _FillValue: 'nan' })).to.deep.include({ scale: 2, unpack: true, missing: [] });
    // nothing to do: a NaN fill value alone (NaN already shows as NaN), or no attributes
    expect(cfPacking({ _FillValue: NaN })).to.equal(undefined);
    expect(cfPacking({ units: 'K' })).to.equal(undefined);
    // masking without unpacking keeps the values
    const m = cfPacking({ _FillValue: 9999 })!;
    expect(Array.from(cfDecode([1, 9999, 3], m))).to.deep.equal([1, NaN, 3]);
    expect(cfDecode([1, 2], m, true)).to.be.instanceOf(Float32Array);
  });

  it('pickle protocol 0 lists of strings, as pandas writes column names', () => {
    expect(pickledStrings('(lp0\nVstation\np1\na.')).to.deep.equal(['station']);
    expect(pickledStrings('(lp0\nVtemp\np1\naVpressure\np2\na.')).to.deep.equal(['temp', 'pressure']);
    expect(pickledStrings('(lp1\nVcaf\\u00e9\np2\na.')).to.deep.equal(['café']);
    expect(pickledStrings('(lp0\nS\'old\'\np1\na.')).to.deep.equal(['old']);
    expect(pickledStrings('integer')).to.equal(undefined);
    const cols = pandasColumns({ values_block_0_kind: '(lp0\nVa\np1\naVb\np2\na.', index_kind: 'integer' }, ['index', 'values_block_0']);
    expect([...cols]).to.deep.equal([['values_block_0', ['a', 'b']]]);
  });

  it('DIMENSION_LIST values as object ids', () => {
    expect(dimensionScaleIds([['datasets/d-0a-1'], [], ['d-0b-2']])).to.deep.equal(['d-0a-1', undefined, 'd-0b-2']);
    expect(dimensionScaleIds('x')).to.deep.equal([]);
  });
});

describe('viewer: "Use from Python" snippets', () => {
  it('anonymous, an object path: h5pyd, xarray (group of the variable), curl that runs as shown', () => {
    const s = pythonSnippets({ endpoint: 'http://h:5101', domain: '/data/run 1.nc', path: '/grp/temp' });
    expect(s.map((x) => x.id)).to.deep.equal(['h5pyd', 'xarray', 'curl']);
    expect(s[0].code).to.include('h5pyd.File("/data/run 1.nc", "r", endpoint="http://h:5101")').and.include('f["/grp/temp"]');
    expect(s[1].code).to.include('xr.open_dataset("http://h:5101/data/run 1.nc", engine="h5netcdf", group="/grp")').and.include('ds["temp"]');
    expect(s[2].code).to.include("curl -s 'http://h:5101/?domain=/data/run%201.nc'");
    expect(s[2].code).to.include('h5path=/grp/temp&follow_soft_links=1');
  });

  it('a user: the password comes from the environment, never the snippet; a token: api_key', () => {
    const u = pythonSnippets({ endpoint: 'http://h', domain: '/f.h5', user: "o'neil" });
    expect(u[0].code).to.include('username="o\'neil", password=os.environ["HS_PASSWORD"]');
    expect(u[2].code).to.include(`-u 'o'\\''neil'`);
    const t = pythonSnippets({ endpoint: 'http://h', domain: '/f.h5', token: true });
    expect(t[0].code).to.include('api_key=os.environ["HS_API_KEY"]');
    expect(t[2].code).to.include('Authorization: Bearer $HS_API_KEY');
  });
});
