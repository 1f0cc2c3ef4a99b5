/**
 * Dataset values as HSDS clients send them (issue #12 item 8; wire-reference 2.4, 3.5):
 * selections in JSON bodies (`start`/`stop`/`step` in PUT, `select` and `points` in POST), flat
 * value lists written into N-D selections, `element_count` broadcast of several elements into N-D
 * selections, `append` with `append_dim`, fixed-length strings longer than their type truncated
 * as HDF5 does, point reads and writes on compound datasets, binary writes of vlen compounds, and
 * `query=` answered in binary. Files are checked with h5py.
 */
import { expect } from 'chai';
import { type Dom, type Kit, bytes, expectStatus, getBinary, inspectOne, makeDataset, newDomain, postBinary, putBinary, releaseKit, sharedKit } from '../helpers/writekit.js';
import { F64, I32, S4, VSTR } from '../helpers/types.js';

const S4T = { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLTERM', length: 4 };
const CMP = { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: I32 }, { name: 'b', type: F64 }] };
const VCMP = { class: 'H5T_COMPOUND', fields: [{ name: 'n', type: I32 }, { name: 's', type: VSTR }, { name: 'v', type: { class: 'H5T_VLEN', base: I32 } }] };

describe('dialect: values (issue #12 item 8)', function () {
  this.timeout(120000);
  let kit: Kit;
  let d: Dom;
  const value = async (id: string, q?: Record<string, string>) => (await d.c.get(`/datasets/${id}/value`, q)).json.value;

  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'vals');
  });
  after(() => releaseKit(kit));

  describe('selections in JSON bodies', () => {
    let id: string;
    before(async () => {
      id = await makeDataset(d, 'grid', { type: I32, shape: [4, 5] });
    });

    it('PUT with start/stop (nested value) and start/stop/step; h5py agrees', async () => {
      expectStatus(await d.c.put(`/datasets/${id}/value`, { start: [1, 1], stop: [3, 3], value: [[1, 2], [3, 4]] }), 200, 'start/stop');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { start: [0, 0], stop: [4, 5], step: [3, 4], value: [[9, 9], [9, 9]] }), 200, 'step');
      const want = [
        [9, 0, 0, 0, 9],
        [0, 1, 2, 0, 0],
        [0, 3, 4, 0, 0],
        [9, 0, 0, 0, 9],
      ];
      expect(await value(id)).to.deep.equal(want);
      expect(inspectOne(d.file, '/grid').value).to.deep.equal(want);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { start: [0, 0], stop: [9, 1], value: [1] }), 400, 'out of range');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { select: '[0:1,0:1]', value: [[1]] }, { select: '[0:1,0:1]' }), 400, 'two selections');
    });

    it('POST with select, with start/stop/step, and with points', async () => {
      const a = await d.c.post(`/datasets/${id}/value`, { select: '[1:3,1:3]' });
      expect(a.json.value).to.deep.equal([[1, 2], [3, 4]]);
      const b = await d.c.post(`/datasets/${id}/value`, { start: [0, 0], stop: [4, 5], step: [3, 4] });
      expect(b.json.value).to.deep.equal([[9, 9], [9, 9]]);
      const p = await d.c.post(`/datasets/${id}/value`, { points: [[1, 1], [2, 2], [3, 4]] });
      expect(p.json.value).to.deep.equal([1, 4, 9]);
      expectStatus(await d.c.post(`/datasets/${id}/value`, { points: [[1, 1]], select: '[0:1,0:1]' }), 400, 'points and select');
    });
  });

  describe('flat value lists and element_count', () => {
    it('a flat list fills an N-D selection when the element count matches', async () => {
      const id = await makeDataset(d, 'flat', { type: I32, shape: [2, 3, 2] });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: Array.from({ length: 12 }, (_, i) => i) }), 200, 'whole');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [70, 71, 72, 73] }, { select: '[1,1:3,:]' }), 200, 'select');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { start: [0, 0, 0], stop: [1, 2, 1], value: [50, 51] }), 200, 'start/stop');
      expect(inspectOne(d.file, '/flat').value).to.deep.equal([
        [[50, 1], [51, 3], [4, 5]],
        [[6, 7], [70, 71], [72, 73]],
      ]);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [1, 2, 3] }, { select: '[1,1:3,:]' }), 400, 'count mismatch');
    });

    it('element_count broadcasts a row (JSON and binary) or one element over an N-D selection', async () => {
      const id = await makeDataset(d, 'bcast', { type: I32, shape: [4, 5] });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [1, 2, 3, 4, 5], element_count: 5 }, { select: '[0:2,:]' }), 200, 'JSON row');
      expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.i32le(6, 7, 8, 9, 10), { select: '[2:4,:]', element_count: 5 }), 200, 'binary row');
      expect(await value(id)).to.deep.equal([
        [1, 2, 3, 4, 5],
        [1, 2, 3, 4, 5],
        [6, 7, 8, 9, 10],
        [6, 7, 8, 9, 10],
      ]);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: 0, element_count: 1 }, { select: '[1:3,1:4]' }), 200, 'one element');
      expect((await value(id))[1]).to.deep.equal([1, 0, 0, 0, 5]);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [1, 2, 3], element_count: 3 }, { select: '[0:2,:]' }), 400, 'does not divide');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [1, 2], element_count: 5 }, { select: '[0:2,:]' }), 400, 'too few elements');
    });
  });

  describe('append with append_dim', () => {
    it('JSON and binary appends along a chosen dimension; past maxdims is 409 and writes nothing', async () => {
      const id = await makeDataset(d, 'app', { type: I32, shape: [2, 2], maxdims: [2, 5] });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[1, 2], [3, 4]] }), 200, 'first');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[5], [6]], append: 1, append_dim: 1 }), 200, 'JSON append');
      expectStatus(await putBinary(d.c, `/datasets/${id}/value`, bytes.i32le(7, 8, 9, 10), { append: 2, append_dim: 1 }), 200, 'binary append');
      const want = [
        [1, 2, 5, 7, 8],
        [3, 4, 6, 9, 10],
      ];
      expect(await value(id)).to.deep.equal(want);
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[0], [0]], append: 1, append_dim: 1 }), 409, 'beyond maxdims');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [[0, 0]], append: 1, append_dim: 0 }), 409, 'fixed dimension');
      expect(inspectOne(d.file, '/app')).to.deep.include({ shape: [2, 5], value: want });
    });
  });

  describe('fixed-length strings longer than the type', () => {
    it('are truncated as HDF5 does (NULLPAD keeps length bytes, NULLTERM length-1 and a NUL), not refused', async () => {
      const a = await makeDataset(d, 'spad', { type: S4, shape: [3] });
      expectStatus(await d.c.put(`/datasets/${a}/value`, { value: ['abcdefg', 'hi', 'wxyz'] }), 200, 'NULLPAD');
      expect(await value(a)).to.deep.equal(['abcd', 'hi', 'wxyz']);
      const b = await makeDataset(d, 'sterm', { type: S4T, shape: [2] });
      expectStatus(await d.c.put(`/datasets/${b}/value`, { value: ['abcdefg', 'ab'] }), 200, 'NULLTERM');
      expect(await value(b)).to.deep.equal(['abc', 'ab']);
      expect(inspectOne(d.file, '/spad').value).to.deep.equal(['abcd', 'hi', 'wxyz']);
      expect(inspectOne(d.file, '/sterm').value).to.deep.equal(['abc', 'ab']);
      const c = await makeDataset(d, 'scmp', { type: { class: 'H5T_COMPOUND', fields: [{ name: 's', type: S4 }] }, shape: [1] });
      expectStatus(await d.c.put(`/datasets/${c}/value`, { value: [['too long']] }), 200, 'in a compound');
      expect(await value(c)).to.deep.equal([['too ']]);
    });
  });

  describe('compound datasets', () => {
    let id: string;
    before(async () => {
      id = await makeDataset(d, 'cmp', { type: CMP, shape: [6] });
    });

    it('point writes and reads (JSON), point reads in binary', async () => {
      expectStatus(await d.c.put(`/datasets/${id}/value`, { points: [1, 4], value: [[10, 1.5], [40, 4.5]] }), 200, 'point write');
      expect((await d.c.post(`/datasets/${id}/value`, { points: [4, 1, 0] })).json.value).to.deep.equal([[40, 4.5], [10, 1.5], [0, 0]]);
      const bin = await postBinary(d.c, `/datasets/${id}/value`, bytes.coords(4, 1));
      expectStatus(bin, 200, 'binary points');
      expect(bin.body.equals(bytes.cat(bytes.i32le(40), bytes.f64le(4.5), bytes.i32le(10), bytes.f64le(1.5)))).to.equal(true);
      expect(inspectOne(d.file, '/cmp').value[4]).to.deep.equal([40, 4.5]);
    });

    it('query= answered in binary: rows [uint64 index, fields...] with Accept: application/octet-stream', async () => {
      const json = await d.c.get(`/datasets/${id}/value`, { query: 'a > 5' });
      expect(json.json.value).to.deep.equal([[1, 10, 1.5], [4, 40, 4.5]]);
      const bin = await getBinary(d.c, `/datasets/${id}/value`, { query: 'a > 5' });
      expectStatus(bin, 200, 'binary query');
      expect(bin.headers.get('content-type')).to.equal('application/octet-stream');
      expect(bin.body.equals(bytes.cat(bytes.u64le(1), bytes.i32le(10), bytes.f64le(1.5), bytes.u64le(4), bytes.i32le(40), bytes.f64le(4.5)))).to.equal(true);
      const one = await getBinary(d.c, `/datasets/${id}/value`, { query: 'a > 5', Limit: 1, fields: 'b' });
      expect(one.body.equals(bytes.cat(bytes.u64le(1), bytes.f64le(1.5)))).to.equal(true);
    });

    it('binary writes of compounds with variable-length fields (strings and sequences)', async () => {
      const v = await makeDataset(d, 'vcmp', { type: VCMP, shape: [3] });
      const row = (n: number, s: string, seq: number[]) => bytes.cat(bytes.i32le(n), bytes.vlen(s), bytes.vlen(bytes.i32le(...seq)));
      expectStatus(await putBinary(d.c, `/datasets/${v}/value`, bytes.cat(row(1, 'a', [1]), row(2, 'héllo', []), row(3, '', [5, 6, 7]))), 200, 'binary vlen compound');
      const want = [
        [1, 'a', [1]],
        [2, 'héllo', []],
        [3, '', [5, 6, 7]],
      ];
      expect(await value(v)).to.deep.equal(want);
      expect(inspectOne(d.file, '/vcmp').value).to.deep.equal(want);
      expectStatus(await putBinary(d.c, `/datasets/${v}/value`, row(9, 'x', [9]), { select: '[1:2]' }), 200, 'one row');
      expect((await value(v))[1]).to.deep.equal([9, 'x', [9]]);
      expectStatus(await putBinary(d.c, `/datasets/${v}/value`, row(9, 'x', [9]).subarray(0, 9), { select: '[1:2]' }), 400, 'truncated body');
    });
  });
});
