/**
 * Attributes through the API (issue item 2; service spec 2.1, 4.1; wire-reference 2.6): PUT on
 * groups, datasets and committed datatypes with scalar, simple and H5S_NULL shapes; replacement
 * of an existing name; DELETE; PUT/GET .../value (JSON and binary); the bulk PUT/POST/DELETE
 * .../attributes forms and IncludeData; exact counts and listings. Checked with h5py and h5dump.
 */
import { expect } from 'chai';
import {
  type Dom,
  type Kit,
  bytes,
  expectStatus,
  getBinary,
  h5dumpText,
  inspect,
  inspectOne,
  makeDataset,
  newDomain,
  putBinary,
  squash,
  releaseKit,
  sharedKit,
} from '../helpers/writekit.js';
import { F64, I32, VSTR } from '../helpers/types.js';

const I16BE = { class: 'H5T_INTEGER', base: 'H5T_STD_I16BE' };
const S8 = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLPAD', length: 8 };
const PAIR = { class: 'H5T_COMPOUND', fields: [{ name: 'x', type: I32 }, { name: 'label', type: S8 }] };

interface AttrCase {
  name: string;
  body: Record<string, unknown>;
  /** Expected GET .../attributes/<name> shape and value. */
  shape: unknown;
  value: unknown;
  /** Expected h5py view: dataspace, shape, value. */
  py: { space: string; shape: number[] | null; value?: unknown };
  dump?: string;
}

const attrCases: AttrCase[] = [
  {
    name: 'scalar int (shape omitted, bare value)',
    body: { type: I32, value: 42 },
    shape: { class: 'H5S_SCALAR' },
    value: 42,
    py: { space: 'SCALAR', shape: [], value: 42 },
    dump: 'DATASPACE SCALAR',
  },
  {
    name: 'scalar string (shape "H5S_SCALAR")',
    body: { type: VSTR, shape: 'H5S_SCALAR', value: 'héllo' },
    shape: { class: 'H5S_SCALAR' },
    value: 'héllo',
    py: { space: 'SCALAR', shape: [], value: 'héllo' },
  },
  {
    name: 'scalar given with shape []',
    body: { type: F64, shape: [], value: 2.5 },
    shape: { class: 'H5S_SCALAR' },
    value: 2.5,
    py: { space: 'SCALAR', shape: [], value: 2.5 },
  },
  {
    name: '1-D list',
    body: { type: F64, shape: [3], value: [1.5, -2, 1e300] },
    shape: { class: 'H5S_SIMPLE', dims: [3] },
    value: [1.5, -2, 1e300],
    py: { space: 'SIMPLE', shape: [3], value: [1.5, -2, 1e300] },
    dump: 'DATASPACE SIMPLE { ( 3 ) / ( 3 ) }',
  },
  {
    name: 'bare integer shape',
    body: { type: I32, shape: 2, value: [7, 8] },
    shape: { class: 'H5S_SIMPLE', dims: [2] },
    value: [7, 8],
    py: { space: 'SIMPLE', shape: [2], value: [7, 8] },
  },
  {
    name: 'shape given as {class, dims}',
    body: { type: I32, shape: { class: 'H5S_SIMPLE', dims: [2] }, value: [3, 4] },
    shape: { class: 'H5S_SIMPLE', dims: [2] },
    value: [3, 4],
    py: { space: 'SIMPLE', shape: [2], value: [3, 4] },
  },
  {
    name: '2-D nested arrays (big-endian int16)',
    body: { type: I16BE, shape: [2, 3], value: [[1, 2, 3], [-4, -5, -6]] },
    shape: { class: 'H5S_SIMPLE', dims: [2, 3] },
    value: [
      [1, 2, 3],
      [-4, -5, -6],
    ],
    py: {
      space: 'SIMPLE',
      shape: [2, 3],
      value: [
        [1, 2, 3],
        [-4, -5, -6],
      ],
    },
    dump: 'DATATYPE H5T_STD_I16BE DATASPACE SIMPLE { ( 2, 3 ) / ( 2, 3 ) }',
  },
  {
    name: '3-D nested arrays',
    body: { type: I32, shape: [2, 2, 2], value: [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] },
    shape: { class: 'H5S_SIMPLE', dims: [2, 2, 2] },
    value: [
      [
        [1, 2],
        [3, 4],
      ],
      [
        [5, 6],
        [7, 8],
      ],
    ],
    py: {
      space: 'SIMPLE',
      shape: [2, 2, 2],
      value: [
        [
          [1, 2],
          [3, 4],
        ],
        [
          [5, 6],
          [7, 8],
        ],
      ],
    },
  },
  {
    name: 'compound values as arrays of arrays',
    body: { type: PAIR, shape: [2], value: [[1, 'one'], [2, 'twö']] },
    shape: { class: 'H5S_SIMPLE', dims: [2] },
    value: [
      [1, 'one'],
      [2, 'twö'],
    ],
    py: {
      space: 'SIMPLE',
      shape: [2],
      value: [
        [1, 'one'],
        [2, 'twö'],
      ],
    },
  },
  {
    name: 'scalar compound',
    body: { type: PAIR, value: [5, 'five'] },
    shape: { class: 'H5S_SCALAR' },
    value: [5, 'five'],
    py: { space: 'SCALAR', shape: [], value: [5, 'five'] },
  },
  {
    name: 'H5S_NULL (no value)',
    body: { type: I32, shape: 'H5S_NULL' },
    shape: { class: 'H5S_NULL' },
    value: null,
    py: { space: 'NULL', shape: null },
    dump: 'DATASPACE NULL',
  },
  {
    name: 'simple shape without a value (reads value null as HSDS; the file holds zeros)',
    body: { type: I32, shape: [3] },
    shape: { class: 'H5S_SIMPLE', dims: [3] },
    value: null,
    py: { space: 'SIMPLE', shape: [3], value: [0, 0, 0] },
  },
];

describe('API write: attributes', function () {
  this.timeout(120000);
  let kit: Kit;
  let d: Dom;
  const owners: Record<string, { col: string; id: string; path: string }> = {};

  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'attrs');
    const g = await d.c.post('/groups', { link: { id: d.root, name: 'g' } });
    expectStatus(g, 201, 'POST group');
    const ds = await makeDataset(d, 'ds', { type: I32, shape: [2] });
    const t = await d.c.post('/datatypes', { type: F64, link: { id: d.root, name: 'dt' } });
    expectStatus(t, 201, 'POST datatype');
    owners.root = { col: 'groups', id: d.root, path: '/' };
    owners.group = { col: 'groups', id: g.json.id, path: '/g' };
    owners.dataset = { col: 'datasets', id: ds, path: '/ds' };
    owners.datatype = { col: 'datatypes', id: t.json.id, path: '/dt' };
  });
  after(() => releaseKit(kit));

  for (const ownerKind of ['group', 'dataset', 'datatype']) {
    describe(`on a ${ownerKind}`, () => {
      attrCases.forEach((c, i) => {
        it(`${c.name}: PUT 201 {hrefs}, GET, h5py${c.dump ? ', h5dump' : ''}`, async () => {
          const o = owners[ownerKind];
          const name = `a${i}`;
          const p = `/${o.col}/${o.id}/attributes/${name}`;
          const w = await d.c.put(p, c.body);
          expectStatus(w, 201, `PUT ${p}`);
          expect(w.json).to.have.property('hrefs').that.is.an('array');
          const r = await d.c.get(p);
          expectStatus(r, 200, 'GET');
          expect(r.json.name).to.equal(name);
          expect(r.json.shape).to.deep.equal(c.shape);
          expect(r.json).to.have.property('value');
          expect(r.json.value).to.deep.equal(c.value);
          const a = inspectOne(d.file, o.path).attrs.items[name];
          expect(a, `h5py attribute ${name}`).to.not.equal(undefined);
          expect(a.space).to.equal(c.py.space);
          expect(a.shape).to.deep.equal(c.py.shape);
          if ('value' in c.py) expect(a.value).to.deep.equal(c.py.value);
          if (c.dump) expect(squash(h5dumpText(d.file, ['-H', '-a', `${o.path === '/' ? '' : o.path}/${name}`]))).to.include(c.dump);
        });
      });

      it('attributeCount and the listing are exact', async () => {
        const o = owners[ownerKind];
        const info = await d.c.get(`/${o.col}/${o.id}`);
        expect(info.json.attributeCount).to.equal(attrCases.length);
        const list = await d.c.get(`/${o.col}/${o.id}/attributes`);
        expectStatus(list, 200, 'GET attributes');
        const names = attrCases.map((_, i) => `a${i}`).sort();
        expect(list.json.attributes.map((x: any) => x.name)).to.deep.equal(names);
        for (const item of list.json.attributes) {
          expect(item).to.not.have.property('value'); // IncludeData defaults to false here
          expect(item).to.have.property('type');
          expect(item).to.have.property('shape');
        }
        const py = inspectOne(d.file, o.path).attrs.names.slice().sort();
        expect(py).to.deep.equal(names);
      });
    });
  }

  describe('replacement (spec 2.1 / 4.1)', () => {
    it('PUT on an existing name replaces it (new type, shape and value): 201; count unchanged; h5py sees only the new one', async () => {
      const p = `/groups/${d.root}/attributes/rep`;
      expectStatus(await d.c.put(p, { type: I32, shape: [3], value: [1, 2, 3] }), 201, 'first PUT');
      const before = (await d.c.get(`/groups/${d.root}`)).json.attributeCount;
      const w = await d.c.put(p, { type: VSTR, value: 'replaced' });
      expectStatus(w, 201, 'replacing PUT');
      expect(w.json.hrefs).to.be.an('array');
      const r = await d.c.get(p);
      expect(r.json.type).to.deep.equal(VSTR);
      expect(r.json.shape).to.deep.equal({ class: 'H5S_SCALAR' });
      expect(r.json.value).to.equal('replaced');
      expect((await d.c.get(`/groups/${d.root}`)).json.attributeCount).to.equal(before);
      const root = inspectOne(d.file, '/');
      expect(root.attrs.items.rep.value).to.equal('replaced');
      expect(root.attrs.items.rep.type.class).to.equal('STRING');
      expect(root.attrs.names.filter((n: string) => n.startsWith('rep'))).to.deep.equal(['rep']);
    });

    it('PUT of an identical attribute succeeds (200 or 201) and changes nothing', async () => {
      const p = `/groups/${d.root}/attributes/same`;
      expectStatus(await d.c.put(p, { type: I32, value: 9 }), 201, 'first PUT');
      const again = await d.c.put(p, { type: I32, value: 9 });
      expect(again.status).to.be.oneOf([200, 201]);
      expect((await d.c.get(p)).json.value).to.equal(9);
    });

    it('replacing with replace=1 (h5pyd) also works', async () => {
      const p = `/datasets/${owners.dataset.id}/attributes/rep1`;
      expectStatus(await d.c.put(p, { type: I32, value: 1 }, { replace: 1 }), 201, 'PUT');
      expectStatus(await d.c.put(p, { type: F64, value: 1.5 }, { replace: 1 }), 201, 'PUT replace');
      expect((await d.c.get(p)).json.value).to.equal(1.5);
      expect(inspectOne(d.file, '/ds').attrs.items.rep1.value).to.equal(1.5);
    });
  });

  describe('DELETE, .../value, names', () => {
    it('DELETE an attribute: 200, then 404/410; count drops; h5py no longer sees it; DELETE again is 404/410', async () => {
      const o = owners.group;
      const p = `/groups/${o.id}/attributes/gone`;
      expectStatus(await d.c.put(p, { type: I32, value: 1 }), 201, 'PUT');
      const n = (await d.c.get(`/groups/${o.id}`)).json.attributeCount;
      const r = await d.c.delete(p);
      expectStatus(r, 200, 'DELETE');
      expect((await d.c.get(p)).status).to.be.oneOf([404, 410]);
      expect((await d.c.get(`/groups/${o.id}`)).json.attributeCount).to.equal(n - 1);
      expect(inspectOne(d.file, '/g').attrs.names).to.not.include('gone');
      expect((await d.c.delete(p)).status).to.be.oneOf([404, 410]);
    });

    it('PUT .../value (JSON) and GET .../value (JSON and binary)', async () => {
      const p = `/datasets/${owners.dataset.id}/attributes/vals`;
      expectStatus(await d.c.put(p, { type: I16BE, shape: [2, 2], value: [[1, 2], [3, 4]] }), 201, 'PUT');
      expectStatus(await d.c.put(`${p}/value`, { value: [[5, 6], [7, -8]] }), 200, 'PUT value');
      const r = await d.c.get(`${p}/value`);
      expectStatus(r, 200, 'GET value');
      expect(r.json.value).to.deep.equal([
        [5, 6],
        [7, -8],
      ]);
      const b = await getBinary(d.c, `${p}/value`);
      expect(b.headers.get('content-type')).to.equal('application/octet-stream');
      expect(b.body.toString('hex')).to.equal(bytes.i16be(5, 6, 7, -8).toString('hex'));
      expect(inspectOne(d.file, '/ds').attrs.items.vals.value).to.deep.equal([
        [5, 6],
        [7, -8],
      ]);
    });

    it('PUT .../value with a binary body', async () => {
      const p = `/datasets/${owners.dataset.id}/attributes/vals`;
      expectStatus(await putBinary(d.c, `${p}/value`, bytes.i16be(-1, -2, 300, 400)), 200, 'PUT binary value');
      expect((await d.c.get(p)).json.value).to.deep.equal([
        [-1, -2],
        [300, 400],
      ]);
      expect(inspectOne(d.file, '/ds').attrs.items.vals.value).to.deep.equal([
        [-1, -2],
        [300, 400],
      ]);
    });

    it('GET .../value of an H5S_NULL attribute is a 400', async () => {
      const p = `/groups/${d.root}/attributes/nul`;
      expectStatus(await d.c.put(p, { type: I32, shape: 'H5S_NULL' }), 201, 'PUT');
      expect((await d.c.get(`${p}/value`)).status).to.equal(400);
    });

    it('names with spaces, unicode and punctuation (URL-encoded in the path)', async () => {
      const name = 'temp (°C) ünits?';
      const p = `/groups/${d.root}/attributes/${encodeURIComponent(name)}`;
      expectStatus(await d.c.put(p, { type: VSTR, value: 'x' }), 201, 'PUT');
      const r = await d.c.get(p);
      expect(r.json.name).to.equal(name);
      expect(inspectOne(d.file, '/').attrs.items[name]?.value).to.equal('x');
    });
  });

  describe('bulk forms and IncludeData (wire-reference 2.6)', () => {
    let gid: string;
    before(async () => {
      const g = await d.c.post('/groups', { link: { id: d.root, name: 'bulk' } });
      expectStatus(g, 201, 'POST group');
      gid = g.json.id;
    });

    it('PUT .../attributes {"attributes": {...}} creates several at once (201)', async () => {
      const r = await d.c.put(`/groups/${gid}/attributes`, {
        attributes: {
          b1: { type: I32, value: 1 },
          b2: { type: VSTR, shape: [2], value: ['x', 'y'] },
          b3: { type: F64, shape: 'H5S_NULL' },
        },
      });
      expectStatus(r, 201, 'bulk PUT');
      expect((await d.c.get(`/groups/${gid}`)).json.attributeCount).to.equal(3);
      const a = inspectOne(d.file, '/bulk').attrs;
      expect(a.names).to.deep.equal(['b1', 'b2', 'b3']);
      expect(a.items.b1.value).to.equal(1);
      expect(a.items.b2.value).to.deep.equal(['x', 'y']);
      expect(a.items.b3.space).to.equal('NULL');
    });

    it('GET .../attributes?IncludeData=1 includes values (null for H5S_NULL); Limit and Marker page by name', async () => {
      const r = await d.c.get(`/groups/${gid}/attributes`, { IncludeData: 1 });
      expect(r.json.attributes.map((x: any) => [x.name, x.value])).to.deep.equal([
        ['b1', 1],
        ['b2', ['x', 'y']],
        ['b3', null],
      ]);
      const p1 = await d.c.get(`/groups/${gid}/attributes`, { Limit: 2 });
      expect(p1.json.attributes.map((x: any) => x.name)).to.deep.equal(['b1', 'b2']);
      const p2 = await d.c.get(`/groups/${gid}/attributes`, { Limit: 2, Marker: 'b2' });
      expect(p2.json.attributes.map((x: any) => x.name)).to.deep.equal(['b3']);
    });

    it('POST .../attributes {"attr_names"} answers them in the order asked, with values; IncludeData=0 leaves values out', async () => {
      const r = await d.c.post(`/groups/${gid}/attributes`, { attr_names: ['b2', 'b1'] });
      expectStatus(r, 200, 'POST attr_names');
      expect(r.json.attributes.map((x: any) => [x.name, x.value])).to.deep.equal([
        ['b2', ['x', 'y']],
        ['b1', 1],
      ]);
      const n = await d.c.post(`/groups/${gid}/attributes`, { attr_names: ['b1'] }, { IncludeData: 0 });
      expect(n.json.attributes[0]).to.not.have.property('value');
      expect((await d.c.post(`/groups/${gid}/attributes`, { attr_names: ['b1', 'nope'] })).status).to.equal(404);
    });

    it('DELETE .../attributes?attr_names=b1/b3: 200 {hrefs: []}; the rest stays', async () => {
      const r = await d.c.delete(`/groups/${gid}/attributes`, { attr_names: 'b1/b3' });
      expectStatus(r, 200, 'bulk DELETE');
      expect(r.json.hrefs).to.deep.equal([]);
      expect((await d.c.get(`/groups/${gid}`)).json.attributeCount).to.equal(1);
      expect((await d.c.get(`/groups/${gid}/attributes`)).json.attributes.map((x: any) => x.name)).to.deep.equal(['b2']);
      expect(inspectOne(d.file, '/bulk').attrs.names).to.deep.equal(['b2']);
    });
  });

  describe('listings with values served again from the attribute cache (wire-reference 2.6)', () => {
    let gid: string;
    const F32 = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' };
    const listing = async (query: Record<string, string | number> = {}) => {
      const r = await d.c.get(`/groups/${gid}/attributes`, { IncludeData: 1, ...query });
      expectStatus(r, 200, 'GET attributes');
      return r.text;
    };
    before(async () => {
      const g = await d.c.post('/groups', { link: { id: d.root, name: 'cached' } });
      expectStatus(g, 201, 'POST group');
      gid = g.json.id;
      const w = await d.c.put(`/groups/${gid}/attributes`, {
        attributes: {
          f: { type: F32, shape: [3], value: [0.1, 'NaN', '-Infinity'] },
          i: { type: I32, shape: [2], value: [7, -8] },
          s: { type: VSTR, value: 'héllo' },
          n: { type: F64, shape: 'H5S_NULL' },
          g: { type: F64, shape: [2], value: [1.5, -2.25] },
        },
      });
      expectStatus(w, 201, 'bulk PUT');
    });

    const cases: [string, Record<string, string | number>, string[]][] = [
      ['plain: float32 shortest, NaN and -Infinity as literals', {}, ['"name":"f"', '"value":[0.1,NaN,-Infinity]', '"value":[1.5,-2.25]', '"value":[7,-8]', '"value":"héllo"', '"value":null']],
      ['ignore_nan=1: null for NaN and -Infinity, the rest as before', { ignore_nan: 1 }, ['"value":[0.1,null,null]', '"value":[7,-8]', '"value":"héllo"', '"value":[1.5,-2.25]']],
      ['encoding=base64: the binary form', { encoding: 'base64' }, [`"value":"${Buffer.from([7, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff]).toString('base64')}","encoding":"base64"`]],
      ['max_data_size=8: larger values left out', { max_data_size: 8 }, ['"value":[7,-8]', '"value":null']],
    ];
    for (const [name, query, fragments] of cases) {
      it(`${name}; the same text when asked again and after other forms were asked`, async () => {
        const first = await listing(query);
        for (const f of fragments) expect(first).to.include(f);
        if (query.max_data_size) {
          const items = JSON.parse(first.replace(/NaN|-?Infinity/g, 'null')).attributes;
          expect(items.find((x: any) => x.name === 'f')).to.not.have.property('value');
          expect(items.find((x: any) => x.name === 's')).to.not.have.property('value');
        }
        for (const other of cases) await listing(other[1]);
        expect(await listing(query)).to.equal(first);
      });
    }

    it('a write to a cached attribute shows in the next listing', async () => {
      expect(await listing()).to.include('"value":[7,-8]');
      expectStatus(await d.c.put(`/groups/${gid}/attributes/i/value`, { value: [1, 2] }), 200, 'PUT value');
      const after = await listing();
      expect(after).to.include('"value":[1,2]');
      expect(after).to.not.include('"value":[7,-8]');
      expect(await listing({ ignore_nan: 1 })).to.include('"value":[1,2]');
    });
  });

  describe('many attributes: counts and listings stay exact', () => {
    it('40 attributes created, 15 deleted, 5 replaced: attributeCount, listing and h5py agree', async () => {
      const id = await makeDataset(d, 'many', { type: I32, shape: [1] });
      const name = (i: number) => `attr${String(i).padStart(2, '0')}`;
      for (let i = 0; i < 40; i++) expectStatus(await d.c.put(`/datasets/${id}/attributes/${name(i)}`, { type: I32, value: i }), 201, `PUT ${i}`);
      for (let i = 0; i < 40; i += 3) expectStatus(await d.c.delete(`/datasets/${id}/attributes/${name(i)}`), 200, `DELETE ${i}`);
      for (const i of [1, 2, 4, 5, 7]) expectStatus(await d.c.put(`/datasets/${id}/attributes/${name(i)}`, { type: F64, value: i + 0.5 }), 201, `replace ${i}`);
      const remaining = range40().filter((i) => i % 3 !== 0).map(name);
      expect((await d.c.get(`/datasets/${id}`)).json.attributeCount).to.equal(remaining.length);
      const list = await d.c.get(`/datasets/${id}/attributes`, { IncludeData: 1 });
      expect(list.json.attributes.map((x: any) => x.name)).to.deep.equal(remaining);
      expect(list.json.attributes.find((x: any) => x.name === 'attr04').value).to.equal(4.5);
      const py = inspect(d.file, ['/many'])['/many'].attrs;
      expect(py.names.slice().sort()).to.deep.equal(remaining);
      expect(py.items.attr04.value).to.equal(4.5);
      expect(py.items.attr10.value).to.equal(10);
    });
  });
});

function range40(): number[] {
  return Array.from({ length: 40 }, (_, i) => i);
}
