/**
 * Datasets as HSDS clients speak them (issue #12 item 7; wire-reference 2.3, 3.3, 3.4): datasets
 * created with `maxdims` (even equal to `shape`) or filters without chunk dims are chunked as
 * h5py chunks them (compared with h5py creating the same dataset); `PUT .../shape` shrinks and
 * grows within maxdims (grown regions read the fill value); `verbose=1` gives libhdf5's
 * `num_chunks` and `allocated_size`; float fill values given as words or base64 are reported as
 * given; `initializer: ["arange", ...]` fills at creation; blosc filters given without a level
 * report none (h5pyd's `compression_opts` None).
 */
import { expect } from 'chai';
import { pythonJson } from '../helpers/python.js';
import { type Dom, type Kit, bytes, expectStatus, inspectOne, makeDataset, newDomain, releaseKit, sharedKit } from '../helpers/writekit.js';
import { F64, I32, VSTR } from '../helpers/types.js';

const I64 = { class: 'H5T_INTEGER', base: 'H5T_STD_I64LE' };
const F32 = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' };

/** The chunks h5py gives the same dataset (created in a scratch file by h5py itself). */
function h5pyChunks(cases: { shape: number[]; maxshape?: (number | null)[]; dtype: string; compression?: string; shuffle?: boolean }[]): (number[] | null)[] {
  return pythonJson(
    `import h5py, json, sys, tempfile, os
cases = json.loads(sys.argv[1])
out = []
with tempfile.TemporaryDirectory() as d:
    with h5py.File(os.path.join(d, 'x.h5'), 'w') as f:
        for i, c in enumerate(cases):
            dt = h5py.string_dtype() if c['dtype'] == 'vstr' else c['dtype']
            kw = {}
            if 'maxshape' in c: kw['maxshape'] = tuple(c['maxshape'])
            if c.get('compression'): kw['compression'] = c['compression']
            if c.get('shuffle'): kw['shuffle'] = True
            ds = f.create_dataset('d%d' % i, tuple(c['shape']), dt, **kw)
            out.append(list(ds.chunks) if ds.chunks else None)
print(json.dumps(out))`,
    [JSON.stringify(cases)],
  );
}

/** The chunk dims h5py reads from the file (without reading any value). */
function fileChunks(file: string, p: string): number[] | null {
  return pythonJson(
    `import h5py, json, sys
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    c = f[sys.argv[2]].chunks
    print(json.dumps(list(c) if c else None))`,
    [file, p],
    { lockFree: true },
  );
}

describe('dialect: datasets (issue #12 item 7)', function () {
  this.timeout(120000);
  let kit: Kit;
  let d: Dom;
  let compressors: string[];

  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'dsets');
    compressors = (await d.c.get('/')).json.compressors;
  });
  after(() => releaseKit(kit));

  describe('chunking as h5py does it', () => {
    const cases: { label: string; api: Record<string, unknown>; py: { shape: number[]; maxshape?: (number | null)[]; dtype: string; compression?: string; shuffle?: boolean } }[] = [
      { label: 'maxdims equal to shape', api: { type: I32, shape: [100], maxdims: [100] }, py: { shape: [100], maxshape: [100], dtype: 'i4' } },
      { label: 'maxdims equal, 2-D float64', api: { type: F64, shape: [2000, 3000], maxdims: [2000, 3000] }, py: { shape: [2000, 3000], maxshape: [2000, 3000], dtype: 'f8' } },
      { label: 'one unlimited dimension', api: { type: F32, shape: [10, 10], maxdims: [0, 10] }, py: { shape: [10, 10], maxshape: [null, 10], dtype: 'f4' } },
      { label: 'empty and unlimited', api: { type: F64, shape: [0, 5], maxdims: [0, 5] }, py: { shape: [0, 5], maxshape: [null, 5], dtype: 'f8' } },
      { label: 'vlen strings with maxdims', api: { type: VSTR, shape: [5000], maxdims: [0] }, py: { shape: [5000], maxshape: [null], dtype: 'vstr' } },
      { label: 'gzip without chunk dims', api: { type: F64, shape: [40, 80], creationProperties: { filters: [{ class: 'H5Z_FILTER_DEFLATE', id: 1, level: 9 }] } }, py: { shape: [40, 80], dtype: 'f8', compression: 'gzip' } },
      { label: 'shuffle alone', api: { type: I64, shape: [1000000], creationProperties: { filters: ['shuffle'] } }, py: { shape: [1000000], dtype: 'i8', shuffle: true } },
    ];
    let want: (number[] | null)[];
    before(() => {
      want = h5pyChunks(cases.map((c) => c.py));
    });
    cases.forEach((c, i) => {
      it(`${c.label}: chunked like h5py`, async () => {
        const id = await makeDataset(d, `chunk${i}`, c.api);
        const r = await d.c.get(`/datasets/${id}`);
        expect(r.json.layout).to.deep.equal({ class: 'H5D_CHUNKED', dims: want[i] });
        expect(r.json.creationProperties.layout).to.deep.equal({ class: 'H5D_CHUNKED', dims: want[i] });
        expect(fileChunks(d.file, `/chunk${i}`)).to.deep.equal(want[i]);
      });
    });

    it('an explicit contiguous layout with maxdims equal to shape stays contiguous; without maxdims or filters: contiguous', async () => {
      const a = await makeDataset(d, 'contig_eq', { type: I32, shape: [10], maxdims: [10], creationProperties: { layout: { class: 'H5D_CONTIGUOUS' } } });
      expect((await d.c.get(`/datasets/${a}`)).json.layout).to.deep.equal({ class: 'H5D_CONTIGUOUS' });
      const b = await makeDataset(d, 'plain', { type: I32, shape: [10] });
      expect((await d.c.get(`/datasets/${b}`)).json.layout).to.deep.equal({ class: 'H5D_CONTIGUOUS' });
      expectStatus(await d.c.post('/datasets', { type: I32, shape: [10], maxdims: [20], creationProperties: { layout: { class: 'H5D_CONTIGUOUS' } } }), 400, 'contiguous and extensible');
    });
  });

  describe('PUT .../shape within maxdims', () => {
    it('maxdims equal to shape: shrink, then grow back to it (grown elements are the fill value), not beyond (409)', async () => {
      const id = await makeDataset(d, 'fixedmax', { type: I32, shape: [6], maxdims: [6], creationProperties: { fillValue: -7 } });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [1, 2, 3, 4, 5, 6] }), 200, 'write');
      expectStatus(await d.c.put(`/datasets/${id}/shape`, { shape: [2] }), 200, 'shrink');
      expect((await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal([1, 2]);
      const g = await d.c.put(`/datasets/${id}/shape`, { shape: [6] });
      expectStatus(g, 200, 'grow');
      expect(g.json.selection).to.equal('[2:6]');
      expect((await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal([1, 2, -7, -7, -7, -7]);
      expectStatus(await d.c.put(`/datasets/${id}/shape`, { shape: [7] }), 409, 'beyond maxdims');
      expect(inspectOne(d.file, '/fixedmax').value).to.deep.equal([1, 2, -7, -7, -7, -7]);
    });

    it('2-D: shrink one dimension and grow the other in one request', async () => {
      const id = await makeDataset(d, 'twod', { type: F64, shape: [3, 3], maxdims: [0, 5], creationProperties: { fillValue: 'nan' } });
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: [1, 2, 3, 4, 5, 6, 7, 8, 9] }), 200, 'write');
      expectStatus(await d.c.put(`/datasets/${id}/shape`, { shape: [2, 4] }), 200, 'resize');
      const v = (await d.c.get(`/datasets/${id}/value`)).json.value;
      expect(v.map((row: number[]) => row.slice(0, 3))).to.deep.equal([[1, 2, 3], [4, 5, 6]]);
      expect(v.map((row: number[]) => Number.isNaN(row[3]))).to.deep.equal([true, true]);
    });
  });

  describe('verbose=1', () => {
    it('num_chunks and allocated_size from libhdf5, as h5py reports them', async () => {
      const id = await makeDataset(d, 'verb', { type: I32, shape: [100], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [10] } } });
      const empty = await d.c.get(`/datasets/${id}`, { verbose: 1 });
      expect(empty.json).to.include({ num_chunks: 0, allocated_size: 0 });
      expect((await d.c.get(`/datasets/${id}`)).json).to.not.have.property('num_chunks');
      expectStatus(await d.c.put(`/datasets/${id}/value`, { value: Array.from({ length: 25 }, (_, i) => i) }, { select: '[0:25]' }), 200, 'write');
      const r = await d.c.get(`/datasets/${id}`, { verbose: 1 });
      expect(r.json).to.include({ num_chunks: 3, allocated_size: 120 });
      const py = pythonJson(
        `import h5py, json, sys
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    ds = f['verb']
    print(json.dumps([ds.id.get_num_chunks(), ds.id.get_storage_size()]))`,
        [d.file],
        { lockFree: true },
      );
      expect(py).to.deep.equal([3, 120]);
      const c = await makeDataset(d, 'verbc', { type: I32, shape: [4] });
      expectStatus(await d.c.put(`/datasets/${c}/value`, { value: [1, 2, 3, 4] }), 200, 'write');
      expect((await d.c.get(`/datasets/${c}`, { verbose: 1 })).json).to.include({ num_chunks: 1, allocated_size: 16 });
    });
  });

  describe('fill values reported as given', () => {
    const cases: [string, unknown, unknown, (x: number) => boolean, Record<string, unknown>?][] = [
      ['"nan"', F32, 'nan', (x) => Number.isNaN(x)],
      ['"inf"', F64, 'inf', (x) => x === Infinity],
      ['"-inf"', F64, '-inf', (x) => x === -Infinity],
      ['base64', F64, bytes.f64le(2.5).toString('base64'), (x) => x === 2.5, { fillValue_encoding: 'base64' }],
      ['NaN literal', F64, NaN, (x) => Number.isNaN(x)],
    ];
    cases.forEach(([label, type, fill, check, extra], i) => {
      it(`${label}: stored, reported back as given, unwritten elements read as it`, async () => {
        const body = { type, shape: [3], creationProperties: { fillValue: fill, ...(extra ?? {}) }, link: { id: d.root, name: `fill${i}` } };
        const { jsonText } = await import('../helpers/writekit.js');
        const r = await d.c.request('POST', '/datasets', { raw: jsonText(body), headers: { 'content-type': 'application/json' } });
        expectStatus(r, 201, 'POST');
        const g = await d.c.get(`/datasets/${r.json.id}`);
        const cp = g.json.creationProperties;
        if (typeof fill === 'number') expect(Number.isNaN(cp.fillValue)).to.equal(true);
        else expect(cp.fillValue).to.equal(fill);
        if (extra) expect(cp.fillValue_encoding).to.equal('base64');
        else expect(cp).to.not.have.property('fillValue_encoding');
        const v = (await d.c.get(`/datasets/${r.json.id}/value`)).json.value as number[];
        expect(v.every(check), JSON.stringify(v)).to.equal(true);
        const o = inspectOne(d.file, `/fill${i}`);
        expect(o.fill_defined).to.equal(2);
        expect(check(o.fillvalue), String(o.fillvalue)).to.equal(true);
      });
    });
    it('a numeric fill value is reported as a number', async () => {
      const id = await makeDataset(d, 'fillnum', { type: F64, shape: [2], creationProperties: { fillValue: 1.25 } });
      expect((await d.c.get(`/datasets/${id}`)).json.creationProperties.fillValue).to.equal(1.25);
    });
  });

  describe('initializer', () => {
    it('["arange", start, step] fills the dataset at creation (2-D, C order) and is echoed', async () => {
      const id = await makeDataset(d, 'ar', { type: I64, shape: [3, 4], creationProperties: { initializer: ['arange', 5, 2] } });
      expect((await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal([
        [5, 7, 9, 11],
        [13, 15, 17, 19],
        [21, 23, 25, 27],
      ]);
      expect((await d.c.get(`/datasets/${id}`)).json.creationProperties.initializer).to.deep.equal(['arange', 5, 2]);
      expect(inspectOne(d.file, '/ar').value[2]).to.deep.equal([21, 23, 25, 27]);
    });
    it("h5pyd's form [\"arange\", \"--start=10\", \"--step=2\"], float types, chunked datasets", async () => {
      const id = await makeDataset(d, 'ar2', { type: F32, shape: [5], maxdims: [0], creationProperties: { initializer: ['arange', '--start=10', '--step=0.5'] } });
      expect((await d.c.get(`/datasets/${id}/value`)).json.value).to.deep.equal([10, 10.5, 11, 11.5, 12]);
    });
    it('an unknown initializer or bad options are a 400 and create nothing', async () => {
      expectStatus(await d.c.post('/datasets', { type: I32, shape: [3], creationProperties: { initializer: ['random'] }, link: { id: d.root, name: 'bad_init' } }), 400, 'unknown');
      expectStatus(await d.c.post('/datasets', { type: I32, shape: [3], creationProperties: { initializer: ['arange', '--stop=2'] }, link: { id: d.root, name: 'bad_init' } }), 400, 'bad option');
      expectStatus(await d.c.post('/datasets', { type: VSTR, shape: [3], creationProperties: { initializer: ['arange'] }, link: { id: d.root, name: 'bad_init' } }), 400, 'strings');
      expectStatus(await d.c.get(`/groups/${d.root}/links/bad_init`), 404, 'nothing created');
    });
  });

  describe('blosc filters and compression_opts', () => {
    it('a blosc compressor given without a level reports no level (h5pyd: compression_opts None); with one, its level', async function () {
      if (!compressors.includes('lz4')) this.skip();
      const a = await makeDataset(d, 'lz4_nolevel', { type: F64, shape: [1000], creationProperties: { filters: [{ class: 'H5Z_FILTER_USER', name: 'lz4' }] } });
      const fa = (await d.c.get(`/datasets/${a}`)).json.creationProperties.filters;
      expect(fa).to.have.length(1);
      expect(fa[0]).to.include({ name: 'lz4' }).and.not.have.property('level');
      const b = await makeDataset(d, 'lz4_level', { type: F64, shape: [1000], creationProperties: { filters: [{ class: 'H5Z_FILTER_USER', name: 'lz4', level: 7 }] } });
      expect((await d.c.get(`/datasets/${b}`)).json.creationProperties.filters[0]).to.include({ name: 'lz4', level: 7 });
      const c = await makeDataset(d, 'zstd_str', { type: F64, shape: [1000], creationProperties: { filters: ['shuffle', 'zstd'] } });
      const fc = (await d.c.get(`/datasets/${c}`)).json.creationProperties.filters;
      expect(fc[1]).to.include({ name: 'zstd' }).and.not.have.property('level');
      // the file has hdf5-blosc's own cd_values: level 5 (its default) and the compressor code
      expect(inspectOne(d.file, '/lz4_nolevel').filters[0].cd_values.slice(4)).to.deep.equal([5, 1, 1]);
      expect(inspectOne(d.file, '/lz4_level').filters[0].cd_values.slice(4)).to.deep.equal([7, 1, 1]);
    });
  });
});
