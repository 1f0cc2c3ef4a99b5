/**
 * Attributes as HSDS clients speak them (issue #12 item 6; wire-reference 2.6): identical re-PUT
 * 200, POST with `attr_names`, bulk reads and writes across objects with `obj_ids` (list and dict
 * forms), GET with `pattern`, `follow_links=1`, `max_data_size`, `IncludeData`, `encoding=base64`
 * everywhere, binary PUT of a value, attributes created without a value (`value: null`),
 * fixed-length UTF-8 strings, and strings that are not UTF-8 (base64 with `encoding`). Files are
 * checked with h5py.
 */
import path from 'node:path';
import { expect } from 'chai';
import { userAdd } from '../../src/auth/admin.js';
import { pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { type Dom, type Kit, bytes, expectStatus, inspectOne, makeDataset, newDomain, putBinary, releaseKit, sharedKit } from '../helpers/writekit.js';
import { F64, I32, VSTR } from '../helpers/types.js';

const U8STR10 = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLPAD', length: 10 };
const ASCII4 = { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 };

/** h5py's view of the names in the reserved group (its attributes), or null when it is absent. */
function reservedAttrs(file: string): string[] | null {
  return pythonJson(
    `import h5py, json, sys
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    print(json.dumps(sorted(f['__h5store__'].attrs) if '__h5store__' in f else None))`,
    [file],
    { lockFree: true },
  );
}

describe('dialect: attributes (issue #12 item 6)', function () {
  this.timeout(120000);
  let kit: Kit;
  let d: Dom;
  let g: string;
  let ds: string;
  const A = (id = g, col = 'groups') => `/${col}/${id}/attributes`;

  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'attrs');
    const r = await d.c.post('/groups', { link: { id: d.root, name: 'g' } });
    expectStatus(r, 201, 'POST /groups');
    g = r.json.id;
    ds = await makeDataset(d, 'ds', { type: I32, shape: [2] });
  });
  after(() => releaseKit(kit));

  describe('identical re-PUT answers 200', () => {
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['scalar without shape', { type: I32, value: 3 }, { type: 'H5T_STD_I32LE', value: 3 }],
      ['scalar, then with shape []', { type: I32, value: 4 }, { type: I32, shape: [], value: 4 }],
      ['scalar, then with shape "H5S_SCALAR"', { type: F64, value: 2.5 }, { type: F64, shape: 'H5S_SCALAR', value: 2.5 }],
      ['1-D', { type: I32, shape: [3], value: [1, 2, 3] }, { type: I32, shape: 3, value: [1, 2, 3] }],
      ['string', { type: VSTR, value: 'héllo' }, { type: VSTR, value: 'héllo' }],
      ['without a value', { type: I32, shape: [2] }, { type: I32, shape: [2] }],
    ];
    cases.forEach(([name, first, again], i) => {
      it(name, async () => {
        const p = `${A()}/same${i}`;
        expectStatus(await d.c.put(p, first), 201, 'first PUT');
        expectStatus(await d.c.put(p, again), 200, 'identical PUT');
        expectStatus(await d.c.put(p, again, { replace: 1 }), 200, 'identical PUT with replace=1');
      });
    });
    it('a different attribute is replaced (201), or 409 with replace=0', async () => {
      const p = `${A()}/differs`;
      expectStatus(await d.c.put(p, { type: I32, value: 1 }), 201, 'first');
      expectStatus(await d.c.put(p, { type: I32, value: 2 }, { replace: 0 }), 409, 'replace=0');
      expectStatus(await d.c.put(p, { type: I32, value: 2 }), 201, 'replace');
      expect((await d.c.get(p)).json.value).to.equal(2);
    });
  });

  describe('POST .../attributes', () => {
    before(async () => {
      for (const [n, v] of [['p1', 1], ['p2', 2], ['p3', 3]] as const) expectStatus(await d.c.put(`${A()}/${n}`, { type: I32, value: v }), 201, n);
      expectStatus(await d.c.put(`${A(ds, 'datasets')}/da`, { type: F64, shape: [2], value: [0.5, 1.5] }), 201, 'da');
      expectStatus(await d.c.put(`${A(ds, 'datasets')}/db`, { type: I32, value: 7 }), 201, 'db');
    });

    it('attr_names: in the order asked, with values (IncludeData default), without (IncludeData=0); a missing name is 404', async () => {
      const r = await d.c.post(A(), { attr_names: ['p3', 'p1'] });
      expectStatus(r, 200, 'POST attr_names');
      expect(r.json.attributes.map((a: any) => [a.name, a.value])).to.deep.equal([['p3', 3], ['p1', 1]]);
      const r0 = await d.c.post(A(), { attr_names: ['p2'] }, { IncludeData: 0 });
      expect(r0.json.attributes[0]).to.not.have.property('value');
      expectStatus(await d.c.post(A(), { attr_names: ['p1', 'nope'] }), 404, 'missing name');
      expectStatus(await d.c.post(A(), { attr_names: 'p1' }), 400, 'not a list');
    });

    it('obj_ids list: every attribute of each object, keyed by id (objects of any collection)', async () => {
      const r = await d.c.post(A(), { obj_ids: [g, ds] });
      expectStatus(r, 200, 'POST obj_ids');
      expect(Object.keys(r.json.attributes)).to.deep.equal([g, ds]);
      expect(r.json.attributes[ds].map((a: any) => [a.name, a.value])).to.deep.equal([['da', [0.5, 1.5]], ['db', 7]]);
      expect(r.json.attributes[g].map((a: any) => a.name)).to.include.members(['p1', 'p2', 'p3']);
    });

    it('obj_ids list with attr_names; obj_ids dict {id: [names]}; a missing name is 404', async () => {
      const r = await d.c.post(A(), { obj_ids: [ds], attr_names: ['db'] });
      expect(r.json.attributes).to.deep.equal({ [ds]: [{ name: 'db', type: I32, shape: { class: 'H5S_SCALAR' }, created: r.json.attributes[ds][0].created, value: 7 }] });
      const r2 = await d.c.post(A(), { obj_ids: { [g]: ['p2'], [ds]: ['da'] } });
      expect(r2.json.attributes[g].map((a: any) => a.value)).to.deep.equal([2]);
      expect(r2.json.attributes[ds].map((a: any) => a.value)).to.deep.equal([[0.5, 1.5]]);
      expectStatus(await d.c.post(A(), { obj_ids: { [g]: ['nope'] } }), 404, 'missing name');
      expectStatus(await d.c.post(A(), { obj_ids: { [g]: ['p1'] }, attr_names: ['p1'] }), 400, 'dict with attr_names');
      // an id made up of no known domain names nothing: 404 (issue #12 item 3; a known other domain's id is 400, test/api/ids.test.ts)
      expectStatus(await d.c.post(A(), { obj_ids: ['g-00000000-00000000-0000-000000-000000'] }), 404, 'id of no known domain');
    });
  });

  describe('PUT .../attributes with obj_ids (bulk writes)', () => {
    let g2: string;
    before(async () => {
      g2 = (await d.c.post('/groups', { link: { id: d.root, name: 'g2' } })).json.id;
    });

    it('list: the same attributes to every object; h5py sees them', async () => {
      const r = await d.c.put(A(g2), { obj_ids: [g2, ds], attributes: { m1: { type: I32, value: 11 }, m2: { type: VSTR, shape: [2], value: ['a', 'b'] } } });
      expectStatus(r, 201, 'PUT obj_ids list');
      for (const p of ['/g2', '/ds']) {
        const o = inspectOne(d.file, p);
        expect(o.attrs.items.m1.value, p).to.equal(11);
        expect(o.attrs.items.m2.value, p).to.deep.equal(['a', 'b']);
      }
      expectStatus(await d.c.put(A(g2), { obj_ids: [g2, ds], attributes: { m1: { type: I32, value: 11 } } }), 200, 'identical again');
    });

    it('dict: different attributes per object', async () => {
      const r = await d.c.put(A(g2), { obj_ids: { [g2]: { attributes: { only_g2: { type: I32, value: 1 } } }, [ds]: { attributes: { only_ds: { type: F64, value: 2.5 } } } } });
      expectStatus(r, 201, 'PUT obj_ids dict');
      expect(inspectOne(d.file, '/g2').attrs.items.only_g2.value).to.equal(1);
      expect(inspectOne(d.file, '/ds').attrs.items.only_ds.value).to.equal(2.5);
      expect(inspectOne(d.file, '/g2').attrs.items).to.not.have.property('only_ds');
    });

    it('everything is checked first: a conflict (replace=0), an unknown id or a bad value writes nothing', async () => {
      const before = inspectOne(d.file, '/g2').attrs;
      expectStatus(await d.c.put(A(g2), { obj_ids: [g2, ds], attributes: { fresh: { type: I32, value: 1 }, m1: { type: I32, value: 99 } } }, { replace: 0 }), 409, 'conflict');
      const unknown = g2.slice(0, -6) + 'ffff00';
      expect((await d.c.put(A(g2), { obj_ids: [g2, unknown], attributes: { fresh: { type: I32, value: 1 } } })).status).to.be.oneOf([400, 404]);
      expectStatus(await d.c.put(A(g2), { obj_ids: [g2, ds], attributes: { fresh: { type: I32, value: 'x' } } }), 400, 'bad value');
      expectStatus(await d.c.put(A(g2), { obj_ids: { [g2]: { attributes: { x: { type: I32, value: 1 } } } }, attributes: {} }), 400, 'dict plus attributes');
      expect(inspectOne(d.file, '/g2').attrs).to.deep.equal(before);
      expect(inspectOne(d.file, '/ds').attrs.items).to.not.have.property('fresh');
    });
  });

  describe('GET .../attributes: pattern, follow_links, max_data_size, IncludeData', () => {
    let tree: Dom;
    let ids: Record<string, string>;
    before(async () => {
      tree = await newDomain(kit, 'tree');
      const sub = (await tree.c.post('/groups', { link: { id: tree.root, name: 'sub' } })).json.id;
      const deep = (await tree.c.post('/groups', { link: { id: sub, name: 'deep' } })).json.id;
      const x = (await tree.c.post('/datasets', { type: I32, shape: [1], link: { id: deep, name: 'x' } })).json.id;
      const anon = (await tree.c.post('/datasets', { type: I32, shape: [1] })).json.id; // held in the reserved group
      ids = { root: tree.root, sub, deep, x, anon };
      for (const [id, col] of [[tree.root, 'groups'], [sub, 'groups'], [deep, 'groups'], [x, 'datasets'], [anon, 'datasets']]) {
        expectStatus(await tree.c.put(`/${col}/${id}/attributes/small`, { type: I32, value: 1 }), 201, 'small');
        expectStatus(await tree.c.put(`/${col}/${id}/attributes/big`, { type: F64, shape: [100], value: Array.from({ length: 100 }, (_, i) => i) }), 201, 'big');
      }
      expectStatus(await tree.c.put(`/groups/${sub}/attributes/other`, { type: I32, value: 5 }), 201, 'other');
    });

    it('pattern= globs names', async () => {
      const r = await tree.c.get(`/groups/${ids.sub}/attributes`, { pattern: 'b*' });
      expect(r.json.attributes.map((a: any) => a.name)).to.deep.equal(['big']);
      const r2 = await tree.c.get(`/groups/${ids.sub}/attributes`, { pattern: '*l*' });
      expect(r2.json.attributes.map((a: any) => a.name)).to.deep.equal(['small']);
    });

    it('IncludeData: off by default on the list, on for one attribute', async () => {
      const list = await tree.c.get(`/groups/${ids.sub}/attributes`);
      expect(list.json.attributes.every((a: any) => !('value' in a))).to.equal(true);
      expect((await tree.c.get(`/groups/${ids.sub}/attributes/small`)).json.value).to.equal(1);
      expect((await tree.c.get(`/groups/${ids.sub}/attributes/small`, { IncludeData: 0 })).json).to.not.have.property('value');
    });

    it('max_data_size leaves out values larger than that many bytes', async () => {
      const r = await tree.c.get(`/groups/${ids.sub}/attributes`, { IncludeData: 1, max_data_size: 64 });
      const byName = Object.fromEntries(r.json.attributes.map((a: any) => [a.name, a]));
      expect(byName.small.value).to.equal(1);
      expect(byName.big).to.not.have.property('value');
      expect(byName.big.shape).to.deep.equal({ class: 'H5S_SIMPLE', dims: [100] });
      const all = await tree.c.get(`/groups/${ids.sub}/attributes`, { IncludeData: 1, max_data_size: 800 });
      expect(all.json.attributes.find((a: any) => a.name === 'big').value).to.have.length(100);
      expectStatus(await tree.c.get(`/groups/${ids.sub}/attributes`, { max_data_size: 'x' }), 400, 'bad max_data_size');
    });

    it('follow_links=1: the group and every object below, keyed by id (not objects held only by the reserved group)', async () => {
      const r = await tree.c.get(`/groups/${tree.root}/attributes`, { follow_links: 1, IncludeData: 1, max_data_size: 64 });
      expectStatus(r, 200, 'follow_links');
      expect(Object.keys(r.json.attributes).sort()).to.deep.equal([ids.root, ids.sub, ids.deep, ids.x].sort());
      expect(r.json.attributes[ids.x].map((a: any) => [a.name, a.value])).to.deep.equal([['big', undefined], ['small', 1]]);
      const below = await tree.c.get(`/groups/${ids.sub}/attributes`, { follow_links: 1, pattern: 'o*' });
      expect(below.json.attributes).to.deep.equal({ [ids.sub]: below.json.attributes[ids.sub], [ids.deep]: [], [ids.x]: [] });
      expect(below.json.attributes[ids.sub].map((a: any) => a.name)).to.deep.equal(['other']);
      expectStatus(await tree.c.get(`/datasets/${ids.x}/attributes`, { follow_links: 1 }), 400, 'follow_links on a dataset');
    });
  });

  describe('encoding=base64 and binary values', () => {
    it('GET one attribute, the list, POST and .../value with encoding=base64 give the binary form', async () => {
      expectStatus(await d.c.put(`${A()}/b64`, { type: I32, shape: [2], value: [1, 258] }), 201, 'PUT');
      const want = bytes.i32le(1, 258).toString('base64');
      const one = await d.c.get(`${A()}/b64`, { encoding: 'base64' });
      expect([one.json.value, one.json.encoding]).to.deep.equal([want, 'base64']);
      const val = await d.c.get(`${A()}/b64/value`, { encoding: 'base64' });
      expect([val.json.value, val.json.encoding]).to.deep.equal([want, 'base64']);
      const list = await d.c.get(A(), { encoding: 'base64', IncludeData: 1, pattern: 'b64' });
      expect(list.json.attributes[0]).to.include({ value: want, encoding: 'base64' });
      const post = await d.c.post(A(), { attr_names: ['b64'] }, { encoding: 'base64' });
      expect(post.json.attributes[0]).to.include({ value: want, encoding: 'base64' });
      const vs = await d.c.put(`${A()}/vs`, { type: VSTR, shape: [2], value: ['ab', ''] });
      expectStatus(vs, 201, 'PUT vlen');
      expect((await d.c.get(`${A()}/vs`, { encoding: 'base64' })).json.value).to.equal(bytes.cat(bytes.vlen('ab'), bytes.vlen('')).toString('base64'));
      expectStatus(await d.c.get(`${A()}/b64`, { encoding: 'hex' }), 400, 'other encodings');
    });

    it('PUT an attribute with encoding base64, and PUT .../value as base64 JSON and as binary', async () => {
      expectStatus(await d.c.put(`${A()}/in64`, { type: I32, shape: [2], value: bytes.i32le(5, 6).toString('base64'), encoding: 'base64' }), 201, 'PUT base64');
      expect((await d.c.get(`${A()}/in64`)).json.value).to.deep.equal([5, 6]);
      expectStatus(await d.c.put(`${A()}/in64/value`, { value: bytes.i32le(7, 8).toString('base64'), encoding: 'base64' }), 200, 'PUT value base64');
      expect((await d.c.get(`${A()}/in64`)).json.value).to.deep.equal([7, 8]);
      expectStatus(await putBinary(d.c, `${A()}/in64/value`, bytes.i32le(9, -1)), 200, 'PUT binary value');
      expect(inspectOne(d.file, '/g').attrs.items.in64.value).to.deep.equal([9, -1]);
      expectStatus(await putBinary(d.c, `${A()}/in64/value`, bytes.i32le(9)), 400, 'binary value of the wrong size');
      expectStatus(await putBinary(d.c, `${A()}/nothere/value`, bytes.i32le(9, 9)), 404, 'binary value of a missing attribute');
    });
  });

  describe('attributes created without a value', () => {
    it('read value null (one, list, POST, .../value); the file holds zeros; a write gives the value', async () => {
      expectStatus(await d.c.put(`${A()}/nv`, { type: I32, shape: [3] }), 201, 'PUT without value');
      expect((await d.c.get(`${A()}/nv`)).json.value).to.equal(null);
      expect((await d.c.get(`${A()}/nv/value`)).json.value).to.equal(null);
      expect((await d.c.get(A(), { IncludeData: 1, pattern: 'nv' })).json.attributes[0].value).to.equal(null);
      expect((await d.c.post(A(), { attr_names: ['nv'] })).json.attributes[0].value).to.equal(null);
      expect(inspectOne(d.file, '/g').attrs.items.nv.value).to.deep.equal([0, 0, 0]);
      expectStatus(await d.c.put(`${A()}/nv/value`, { value: [1, 2, 3] }), 200, 'PUT value');
      expect((await d.c.get(`${A()}/nv`)).json.value).to.deep.equal([1, 2, 3]);
    });

    it('the note lives in the reserved group only while needed', async () => {
      const e = await newDomain(kit, 'unset');
      expect(reservedAttrs(e.file)).to.equal(null);
      expectStatus(await e.c.put(`/groups/${e.root}/attributes/u`, { type: F64, shape: [2] }), 201, 'PUT without value');
      expect(reservedAttrs(e.file)).to.deep.equal(['given']);
      expectStatus(await e.c.put(`/groups/${e.root}/attributes/u`, { type: F64, shape: [2], value: [0, 0] }), 201, 'replace with zeros');
      expect((await e.c.get(`/groups/${e.root}/attributes/u`)).json.value).to.deep.equal([0, 0]);
      expect(reservedAttrs(e.file)).to.equal(null);
      expectStatus(await e.c.put(`/groups/${e.root}/attributes/v`, { type: F64, shape: [2] }), 201, 'another without value');
      expectStatus(await e.c.delete(`/groups/${e.root}/attributes/v`), 200, 'DELETE');
      expect(reservedAttrs(e.file)).to.equal(null);
      expectStatus(await e.c.put(`/groups/${e.root}/attributes/v`, { type: F64, shape: [2], value: [0, 0] }), 201, 're-created with a value');
      expect((await e.c.get(`/groups/${e.root}/attributes/v`)).json.value).to.deep.equal([0, 0]);
    });
  });

  describe('strings', () => {
    it('fixed-length UTF-8 strings (H5T_CSET_UTF8 with a length) are created and read; h5py sees UTF-8', async () => {
      expectStatus(await d.c.put(`${A()}/u8`, { type: U8STR10, shape: [2], value: ['héllo', '日本'] }), 201, 'PUT');
      const r = await d.c.get(`${A()}/u8`);
      expect(r.json.type).to.deep.equal(U8STR10);
      expect(r.json.value).to.deep.equal(['héllo', '日本']);
      const a = inspectOne(d.file, '/g').attrs.items.u8;
      expect(a.type).to.include({ class: 'STRING', cset: 'UTF8', size: 10, variable: false });
      expect(a.value).to.deep.equal(['héllo', '日本']);
    });

    it('values that are not valid UTF-8 come back as base64 with "encoding"', async () => {
      const raw = Buffer.from([0xff, 0xfe, 0x41, 0x00]);
      expectStatus(await d.c.put(`${A()}/badutf`, { type: ASCII4, value: raw.toString('base64'), encoding: 'base64' }), 201, 'PUT');
      const r = await d.c.get(`${A()}/badutf`);
      expect([r.json.value, r.json.encoding]).to.deep.equal([raw.toString('base64'), 'base64']);
      const list = await d.c.get(A(), { IncludeData: 1, pattern: 'badutf' });
      expect(list.json.attributes[0]).to.include({ value: raw.toString('base64'), encoding: 'base64' });
      expect((await d.c.get(`${A()}/badutf/value`)).json.encoding).to.equal('base64');
      // valid UTF-8 in an ASCII type stays a string
      expectStatus(await d.c.put(`${A()}/okutf`, { type: ASCII4, value: 'hé' }), 201, 'PUT');
      expect((await d.c.get(`${A()}/okutf`)).json).to.include({ value: 'hé' }).and.not.have.property('encoding');
    });
  });
});

describe('dialect: attributes and object ACLs (follow_links, obj_ids)', function () {
  this.timeout(120000);
  let srv: TestServer;
  const pw = { alice: 'alice-pw-1', bob: 'bob-pw-1' };
  let alice: Client;
  let bob: Client;
  let open: string;
  let hidden: string;

  before(async () => {
    const users = path.join(tempRoot('h5store-users-'), 'users.json');
    for (const [u, p] of Object.entries(pw)) await userAdd(users, u, p);
    await userAdd(users, 'admin', 'admin-pw-1');
    srv = await startServer({ args: ['--users-file', users] });
    const adm = new Client(srv.url).as({ user: 'admin', password: 'admin-pw-1' });
    expectStatus(await adm.with('/home').put('/', { folder: true }), 201, 'folder');
    expectStatus(await adm.with('/home/alice').put('/', { folder: true, owner: 'alice' }), 201, 'home');
    alice = new Client(srv.url, '/home/alice/acl.h5').as({ user: 'alice', password: pw.alice });
    bob = alice.as({ user: 'bob', password: pw.bob });
    const root = (await alice.put('/')).json.root;
    open = (await alice.post('/groups', { link: { id: root, name: 'open' } })).json.id;
    hidden = (await alice.post('/groups', { link: { id: root, name: 'hidden' } })).json.id;
    for (const id of [root, open, hidden]) expectStatus(await alice.put(`/groups/${id}/attributes/a`, { type: I32, value: 1 }), 201, 'attr');
    expectStatus(await alice.put('/acls/bob', { read: true }), 201, 'bob reads the domain');
    expectStatus(await alice.put(`/groups/${hidden}/acls/bob`, { read: false }), 201, 'but not "hidden"');
  });
  after(async () => srv?.stop());

  it('follow_links leaves out objects whose own ACL denies read', async () => {
    const root = (await bob.get('/')).json.root;
    const r = await bob.get(`/groups/${root}/attributes`, { follow_links: 1 });
    expectStatus(r, 200, 'bob follow_links');
    expect(Object.keys(r.json.attributes)).to.include.members([root, open]).and.not.include(hidden);
    const a = await alice.get(`/groups/${root}/attributes`, { follow_links: 1 });
    expect(Object.keys(a.json.attributes)).to.include(hidden);
  });

  it('obj_ids naming an object the user may not read (or write) is refused', async () => {
    expectStatus(await bob.post(`/groups/${open}/attributes`, { obj_ids: [open, hidden] }), 403, 'POST obj_ids');
    expectStatus(await bob.post(`/groups/${open}/attributes`, { obj_ids: [open] }), 200, 'POST obj_ids readable');
    expectStatus(await alice.put(`/groups/${open}/acls/bob`, { read: true, create: true }), 201, 'bob may create on "open"');
    expectStatus(await bob.put(`/groups/${open}/attributes`, { obj_ids: [open, hidden], attributes: { z: { type: I32, value: 1 } } }), 403, 'PUT obj_ids');
    expect((await alice.get(`/groups/${open}/attributes/z`)).status).to.equal(404);
  });
});
