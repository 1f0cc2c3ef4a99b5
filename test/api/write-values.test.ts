/**
 * Dataset values (issue item 4; wire-reference 2.4, 3.5): PUT with JSON and binary bodies, whole
 * dataset and select= hyperslabs with steps, points, element_count broadcast, append; POST point
 * reads (JSON and uint64 binary) and long selections; GET coordinate lists; fields=; query=
 * (GET and PUT); reduce_dim; ignore_nan; fill values for unwritten elements; the 413 JSON limit.
 * Every write is checked with h5py as well.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import {
  type Dom,
  type Kit,
  bytes,
  expectStatus,
  getBinary,
  getValue,
  inspectOne,
  makeDataset,
  newDomain,
  postBinary,
  putBinary,
  sendJsonText,
  releaseKit,
  sharedKit,
  startKit,
} from '../helpers/writekit.js';
import { F64, I32 } from '../helpers/types.js';

const range = (n: number, f: (i: number) => number = (i) => i) => Array.from({ length: n }, (_, i) => f(i));

/** A 4x5 grid filled with -1, as nested lists. */
const grid = (set: Record<string, number> = {}) => range(4).map((r) => range(5, (c) => set[`${r},${c}`] ?? -1));

describe('API write: dataset values', function () {
  this.timeout(120000);
  let kit: Kit;
  let d: Dom;

  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'values');
  });
  after(() => releaseKit(kit));

  for (const layout of [{ class: 'H5D_CONTIGUOUS' }, { class: 'H5D_CHUNKED', dims: [2, 2] }]) {
    describe(`hyperslabs on a 4x5 int32 dataset (${layout.class})`, () => {
      let id: string;
      const name = `grid_${layout.class}`;
      before(async () => {
        id = await makeDataset(d, name, { type: I32, shape: [4, 5], creationProperties: { layout, fillValue: -1 } });
      });

      it('unwritten elements read back as the fill value (JSON and binary)', async () => {
        expect(await getValue(d, id)).to.deep.equal(grid());
        const b = await getBinary(d.c, `/datasets/${id}/value`);
        expect(b.body.toString('hex')).to.equal(bytes.i32le(...grid().flat()).toString('hex'));
      });

      it('PUT select= with steps (JSON), GET the same selection, the whole grid, and h5py', async () => {
        const w = await d.c.put(`/datasets/${id}/value`, { value: [[1, 2], [3, 4]] }, { select: '[0:4:2,1:5:2]' });
        expectStatus(w, 200, 'PUT select with steps');
        const want = grid({ '0,1': 1, '0,3': 2, '2,1': 3, '2,3': 4 });
        expect(await getValue(d, id, { select: '[0:4:2,1:5:2]' })).to.deep.equal([
          [1, 2],
          [3, 4],
        ]);
        expect(await getValue(d, id)).to.deep.equal(want);
        expect(inspectOne(d.file, `/${name}`).value).to.deep.equal(want);
      });

      it('PUT select= with a binary body; GET the selection as binary', async () => {
        expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.i32le(10, 11, 12, 13, 14), { select: '[3,0:5]' }), 200, 'PUT binary row');
        const b = await getBinary(d.c, `/datasets/${id}/value`, { select: '[3:4,1:4]' });
        expect(b.body.toString('hex')).to.equal(bytes.i32le(11, 12, 13).toString('hex'));
        const o = inspectOne(d.file, `/${name}`);
        expect(o.value[3]).to.deep.equal([10, 11, 12, 13, 14]);
        expect(o.value[0]).to.deep.equal([-1, 1, -1, 2, -1]);
      });

      it('a single index keeps its dimension; reduce_dim=1 drops extent-1 dimensions', async () => {
        expect(await getValue(d, id, { select: '[3,:]' })).to.deep.equal([[10, 11, 12, 13, 14]]);
        expect(await getValue(d, id, { select: '[3,:]', reduce_dim: 1 })).to.deep.equal([10, 11, 12, 13, 14]);
        expect(await getValue(d, id, { select: '[1:3,2]', reduce_dim: 1 })).to.deep.equal([-1, -1]);
        expect(await getValue(d, id, { select: '[1:3,2]' })).to.deep.equal([[-1], [-1]]);
      });

      it('GET with a coordinate list in select (order kept)', async () => {
        expect(await getValue(d, id, { select: '[3,[4,1,2]]' })).to.deep.equal([[14, 11, 12]]);
        expect(await getValue(d, id, { select: '[[3,0],1]' })).to.deep.equal([[11], [1]]);
        const b = await getBinary(d.c, `/datasets/${id}/value`, { select: '[0:4:3,[3,1]]' });
        expect(b.body.toString('hex')).to.equal(bytes.i32le(2, 1, 13, 11).toString('hex'));
      });

      it('points: PUT {points, value}, POST {points} (JSON), POST uint64 binary points (binary and JSON answers)', async () => {
        const w = await d.c.put(`/datasets/${id}/value`, { points: [[0, 0], [1, 4], [2, 2]], value: [100, 200, 300] });
        expectStatus(w, 200, 'PUT points');
        const r = await d.c.post(`/datasets/${id}/value`, { points: [[2, 2], [0, 0], [1, 4], [3, 0]] });
        expectStatus(r, 200, 'POST points');
        expect(r.json.value).to.deep.equal([300, 100, 200, 10]);
        const b = await postBinary(d.c, `/datasets/${id}/value`, bytes.coords(1, 4, 2, 2));
        expectStatus(b, 200, 'POST binary points');
        expect(b.headers.get('content-type')).to.equal('application/octet-stream');
        expect(b.body.toString('hex')).to.equal(bytes.i32le(200, 300).toString('hex'));
        const j = await d.c.request('POST', `/datasets/${id}/value`, { raw: bytes.coords(0, 0), headers: { 'content-type': 'application/octet-stream' } });
        expectStatus(j, 200, 'POST binary points, JSON answer');
        expect(j.json.value).to.deep.equal([100]);
        const o = inspectOne(d.file, `/${name}`);
        expect([o.value[0][0], o.value[1][4], o.value[2][2]]).to.deep.equal([100, 200, 300]);
      });

      it('POST a long selection in the body ({"select": ...} over 100 characters)', async () => {
        const cols = range(60, (i) => (i * 3) % 5);
        const select = `[1:3,[${cols.join(',')}]]`;
        expect(select.length).to.be.greaterThan(100);
        const r = await d.c.post(`/datasets/${id}/value`, { select });
        expectStatus(r, 200, 'POST select');
        const full = await getValue(d, id);
        expect(r.json.value).to.deep.equal([1, 2].map((row) => cols.map((c) => full[row][c])));
      });

      it('element_count=1 broadcasts one binary element over the selection', async () => {
        const w = await putBinary(d.c, `/datasets/${id}/value`, bytes.i32le(7), { select: '[1:3,:]', element_count: 1 });
        expectStatus(w, 200, 'PUT broadcast');
        const v = await getValue(d, id);
        expect(v[1]).to.deep.equal([7, 7, 7, 7, 7]);
        expect(v[2]).to.deep.equal([7, 7, 7, 7, 7]);
        expect(inspectOne(d.file, `/${name}`).value.slice(1, 3)).to.deep.equal([
          [7, 7, 7, 7, 7],
          [7, 7, 7, 7, 7],
        ]);
      });

      it('element_count=1 with a JSON scalar value broadcasts too', async () => {
        const w = await d.c.put(`/datasets/${id}/value`, { value: 5, element_count: 1 }, { select: '[0,:]' });
        expectStatus(w, 200, 'PUT JSON broadcast');
        expect((await getValue(d, id))[0]).to.deep.equal([5, 5, 5, 5, 5]);
      });

      it('whole-dataset binary write, then JSON read and h5py', async () => {
        const all = range(20, (i) => i * i - 50);
        expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.i32le(...all)), 200, 'PUT whole binary');
        const want = range(4).map((r) => all.slice(r * 5, r * 5 + 5));
        expect(await getValue(d, id)).to.deep.equal(want);
        expect(inspectOne(d.file, `/${name}`).value).to.deep.equal(want);
      });
    });
  }

  describe('one-dimensional datasets', () => {
    it('points on a 1-D dataset ([i, ...] form) and POST with start/stop/step', async () => {
      const id = await makeDataset(d, 'line', { type: I32, shape: [10] });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: range(10) }), 200, 'PUT');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { points: [9, 0, 4], value: [90, -10, 40] }), 200, 'PUT points');
      expect((await d.c.post(`/datasets/${id}/value`, { points: [4, 9] })).json.value).to.deep.equal([40, 90]);
      const r = await d.c.post(`/datasets/${id}/value`, { start: 1, stop: 8, step: 3 });
      expectStatus(r, 200, 'POST start/stop/step');
      expect(r.json.value).to.deep.equal([1, 40, 7]);
      expect(await getValue(d, id, { select: '[[9,0,4]]' })).to.deep.equal([90, -10, 40]);
      expect(inspectOne(d.file, '/line').value).to.deep.equal([-10, 1, 2, 3, 40, 5, 6, 7, 8, 90]);
    });

    it('unwritten elements of a dataset without a fill value read back as 0 (JSON, binary, h5py)', async () => {
      const id = await makeDataset(d, 'zeros', { type: F64, shape: [3], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2] } } });
      expect(await getValue(d, id)).to.deep.equal([0, 0, 0]);
      expect((await getBinary(d.c, `/datasets/${id}/value`)).body.toString('hex')).to.equal(bytes.f64le(0, 0, 0).toString('hex'));
      expect(inspectOne(d.file, '/zeros').value).to.deep.equal([0, 0, 0]);
    });

    it('variable-length strings: hyperslab writes as JSON and as length-prefixed binary', async () => {
      const type = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' };
      const id = await makeDataset(d, 'vstr', { type, shape: [5] });
      expect(await getValue(d, id)).to.deep.equal(['', '', '', '', '']);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: ['ä', 'bb'] }, { select: '[1:3]' }), 200, 'PUT JSON select');
      const body = bytes.cat(bytes.vlen('x'), bytes.vlen(''), bytes.vlen('zz€'));
      expectStatus(await putBinary(d.c, `/datasets/${id}/value`, body, { select: '[2:5]' }), 200, 'PUT binary select');
      expect(await getValue(d, id)).to.deep.equal(['', 'ä', 'x', '', 'zz€']);
      const b = await getBinary(d.c, `/datasets/${id}/value`, { select: '[1:3]' });
      expect(b.body.toString('hex')).to.equal(bytes.cat(bytes.vlen('ä'), bytes.vlen('x')).toString('hex'));
      expect(inspectOne(d.file, '/vstr').value).to.deep.equal(['', 'ä', 'x', '', 'zz€']);
    });

    it('ignore_nan: NaN and ±Infinity as literals by default, null with ignore_nan=1', async () => {
      const id = await makeDataset(d, 'nans', { type: F64, shape: [4] });
      expectStatus(await sendJsonText(d.c, 'PUT', `/datasets/${id}/value`, { value: [NaN, 1.5, Infinity, -Infinity] }), 200, 'PUT NaN');
      const r = await d.c.get(`/datasets/${id}/value`);
      expect(r.text).to.include('"value":[NaN,1.5,Infinity,-Infinity]');
      expect(await getValue(d, id, { ignore_nan: 1 })).to.deep.equal([null, 1.5, null, null]);
      const o = inspectOne(d.file, '/nans');
      expect(Number.isNaN(o.value[0])).to.equal(true);
      expect(o.value.slice(1)).to.deep.equal([1.5, Infinity, -Infinity]);
    });
  });

  describe('append', () => {
    it('PUT ?append=n (binary) and {"value", "append"} (JSON) grow an unlimited dimension', async () => {
      const id = await makeDataset(d, 'log', { type: I32, shape: [0], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [16] } } });
      expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.i32le(1, 2, 3), { append: 3 }), 200, 'append binary');
      expect((await d.c.get(`/datasets/${id}`)).json.shape.dims).to.deep.equal([3]);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [4, 5], append: 2 }), 200, 'append JSON');
      expect(await getValue(d, id)).to.deep.equal([1, 2, 3, 4, 5]);
      const o = inspectOne(d.file, '/log');
      expect(o.shape).to.deep.equal([5]);
      expect(o.value).to.deep.equal([1, 2, 3, 4, 5]);
    });

    it('append along dimension 1 (append_dim)', async () => {
      const id = await makeDataset(d, 'cols', { type: I32, shape: [2, 1], maxdims: [2, 0] });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[1], [2]] }), 200, 'PUT');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[3, 4], [5, 6]] }, { append: 2, append_dim: 1 }), 200, 'append dim 1');
      expect(await getValue(d, id)).to.deep.equal([
        [1, 3, 4],
        [2, 5, 6],
      ]);
      expect(inspectOne(d.file, '/cols').value).to.deep.equal([
        [1, 3, 4],
        [2, 5, 6],
      ]);
    });
  });

  describe('compound tables: fields= and query=', () => {
    const type = {
      class: 'H5T_COMPOUND',
      fields: [
        { name: 'id', type: I32 },
        { name: 'temp', type: F64 },
        { name: 'dir', type: { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 1 } },
      ],
    };
    const rows = [
      [0, 20.5, 'N'],
      [1, 35, 'S'],
      [2, 31, 'N'],
      [3, 10, 'E'],
      [4, 40, 'N'],
      [5, 33, 'S'],
    ];
    let id: string;
    before(async () => {
      id = await makeDataset(d, 'table', { type, shape: [6] });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: rows }), 200, 'PUT rows');
    });

    it('GET fields=id:dir returns only those fields', async () => {
      expect(await getValue(d, id, { fields: 'id:dir' })).to.deep.equal(rows.map((r) => [r[0], r[2]]));
      expect(await getValue(d, id, { fields: 'temp', select: '[1:3]' })).to.deep.equal([[35], [31]]);
      const b = await getBinary(d.c, `/datasets/${id}/value`, { fields: 'temp', select: '[4:6]' });
      expect(b.body.toString('hex')).to.equal(bytes.f64le(40, 33).toString('hex'));
    });

    it('PUT fields=temp writes only that field (JSON and binary); the others are untouched', async () => {
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[21.5], [36]] }, { fields: 'temp', select: '[0:2]' }), 200, 'PUT fields JSON');
      expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.f64le(11), { fields: 'temp', select: '[3:4]' }), 200, 'PUT fields binary');
      const want = rows.map((r, i) => (i === 0 ? [0, 21.5, 'N'] : i === 1 ? [1, 36, 'S'] : i === 3 ? [3, 11, 'E'] : r));
      expect(await getValue(d, id)).to.deep.equal(want);
      expect(inspectOne(d.file, '/table').value).to.deep.equal(want);
    });

    it('GET query= returns [index, ...fields] rows; Limit stops early', async () => {
      const r = await getValue(d, id, { query: "(temp > 30) & (dir == b'N')" });
      expect(r).to.deep.equal([
        [2, 2, 31, 'N'],
        [4, 4, 40, 'N'],
      ]);
      expect(await getValue(d, id, { query: 'temp > 30', Limit: 2 })).to.deep.equal([
        [1, 1, 36, 'S'],
        [2, 2, 31, 'N'],
      ]);
    });

    it('PUT query= updates the matching rows and answers them; h5py sees the update', async () => {
      const r = await d.c.put(`/datasets/${id}/value`, { value: { temp: -1 } }, { query: "dir == b'S'" });
      expectStatus(r, 200, 'PUT query');
      expect(r.json.value).to.deep.equal([
        [1, 1, -1, 'S'],
        [5, 5, -1, 'S'],
      ]);
      const o = inspectOne(d.file, '/table');
      expect(o.value.map((x: unknown[]) => x[1])).to.deep.equal([21.5, -1, 31, 11, 40, -1]);
    });
  });
});

describe('API write: a JSON value response above the configured limit is a 413', function () {
  this.timeout(60000);
  let kit: Kit;
  let d: Dom;
  let id: string;
  before(async () => {
    kit = await startKit({ H5STORE_MAX_JSON_VALUE_BYTES: '2048' });
    d = await newDomain(kit, 'limit');
    id = await makeDataset(d, 'big', { type: F64, shape: [1000] });
    expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.f64le(...range(1000, (i) => i / 2))), 200, 'PUT binary');
  });
  after(() => releaseKit(kit));

  it('GET JSON of 8000 bytes of data: 413; binary: 200 with every byte; a small selection: 200', async () => {
    expect((await d.c.get(`/datasets/${id}/value`)).status).to.equal(413);
    const b = await getBinary(d.c, `/datasets/${id}/value`);
    expectStatus(b, 200, 'binary');
    expect(b.body.length).to.equal(8000);
    expect(b.body.readDoubleLE(8 * 999)).to.equal(499.5);
    expect(await getValue(d, id, { select: '[10:13]' })).to.deep.equal([5, 5.5, 6]);
  });

  it('POST points over the limit as JSON: 413', async () => {
    const r = await d.c.post(`/datasets/${id}/value`, { points: range(1000) });
    expect(r.status).to.equal(413);
  });
});
