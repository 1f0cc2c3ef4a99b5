/**
 * The HSDS 1.0 dialect h5pyd 1.0 speaks, and the differences left with h5pyd 0.24 and HSDS
 * clients, each item of issue #25 over HTTP: batch creates with ids the client made (all or
 * none, 409 for a taken id, the ids valid everywhere and after a restart, the map invisible to
 * h5py outside the reserved group), PUT / with root_id, getobjs as HSDS 1.0 answers it, external
 * links as `file`, PUT /?flush=1 with a null body, client `created` times, client chunk shapes,
 * h5web's batch requests, and item 9's list. The whole sessions with the real clients are in
 * h5pyd-sessions.test.ts.
 */
import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { expectError } from '../helpers/apiExtra.js';
import { h5pydPython, haveClient, missingClient } from '../helpers/clients.js';
import { pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';
import { bytes, getBinary, putBinary } from '../helpers/writekit.js';

const I32 = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' };
const F64 = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };

/** An id as h5json's createObjId makes it: the root id's first 16 hex digits, then 16 random ones. */
function clientId(prefix: 'g' | 'd' | 't', rootId: string): string {
  const hex = rootId.slice(2).replace(/-/g, '').slice(0, 16) + crypto.randomBytes(8).toString('hex');
  return `${prefix}-${hex.slice(0, 8)}-${hex.slice(8, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 26)}-${hex.slice(26, 32)}`;
}

/** A root id as h5json makes one for a new file: 16 random hex digits, then each rotated by 8. */
function clientRootId(): string {
  const a = crypto.randomBytes(8).toString('hex');
  const hex = a + [...a].map((c) => ((parseInt(c, 16) + 8) % 16).toString(16)).join('');
  return `g-${hex.slice(0, 8)}-${hex.slice(8, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 26)}-${hex.slice(26, 32)}`;
}

/** What h5py sees in a file: every path with its kind (the server may hold the file open). */
function h5pyPaths(file: string): Record<string, string> {
  return pythonJson(
    `import h5py, sys, json
out = {}
with h5py.File(sys.argv[1], 'r') as f:
    f.visititems(lambda n, o: out.__setitem__(n, type(o).__name__))
print(json.dumps(out))`,
    [file],
    { lockFree: true },
  );
}

describe('the HSDS 1.0 dialect of h5pyd 1.0 (issue #25)', function () {
  this.timeout(300_000);
  let srv: TestServer;
  let root: string;
  let c: Client;
  let rootId: string;
  const file = () => path.join(root, 'dialect.h5');

  before(async () => {
    root = tempRoot('h5store-dialect1-');
    srv = await startServer({ root });
    c = new Client(srv.url, '/dialect.h5');
    expect((await c.put('/')).status).to.equal(201);
    rootId = (await c.get('/')).json.root;
  });
  after(async () => srv?.stop());

  describe('item 1: batch creates with ids the client made', () => {
    let g1: string;
    let g2: string;
    let d1: string;
    let t1: string;

    it('POST /groups with a list: 201 {"objects"} in the order given, each with the id it was given', async () => {
      g1 = clientId('g', rootId);
      g2 = clientId('g', rootId);
      const now = Date.now() / 1000;
      const r = await c.post('/groups', [
        { id: g1, creationProperties: {}, created: now, lastModified: now },
        { id: g2, creationProperties: { CreateOrder: 1 }, created: now, lastModified: now },
      ]);
      expect(r.status, r.text).to.equal(201);
      expect(r.json.objects.map((o: { id: string }) => o.id)).to.deep.equal([g1, g2]);
      expect((await c.get(`/groups/${g1}`)).json).to.include({ id: g1, root: rootId });
      expect((await c.get(`/groups/${g2}`)).json.creationProperties).to.deep.equal({ CreateOrder: 1 });
    });

    it('POST /datasets and /datatypes with lists: type, shape (dims), maxdims, creationProperties and an initial value', async () => {
      d1 = clientId('d', rootId);
      const d2 = clientId('d', rootId);
      t1 = clientId('t', rootId);
      const r = await c.post('/datasets', [
        { id: d1, type: I32, shape: [4], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [4] } }, value: [1, 2, 3, 4] },
        { id: d2, type: F64, shape: [], value: 2.5 },
      ]);
      expect(r.status, r.text).to.equal(201);
      expect(r.json.objects.map((o: { id: string }) => o.id)).to.deep.equal([d1, d2]);
      expect((await c.get(`/datasets/${d1}`)).json.shape).to.deep.equal({ class: 'H5S_SIMPLE', dims: [4], maxdims: [0] });
      expect((await c.get(`/datasets/${d1}/value`)).json.value).to.deep.equal([1, 2, 3, 4]);
      expect((await c.get(`/datasets/${d2}/value`)).json.value).to.equal(2.5);
      const t = await c.post('/datatypes', [{ id: t1, type: F64, creationProperties: {} }]);
      expect(t.status, t.text).to.equal(201);
      expect((await c.get(`/datatypes/${t1}`)).json.type).to.deep.include({ class: 'H5T_FLOAT' });
    });

    it('the ids name the objects everywhere: links, attributes, the link JSON of listings, getobjs, ACL routes', async () => {
      const put = await c.put(`/groups/${rootId}/links`, { grp_ids: { [rootId]: { links: { g1: { id: g1 } } }, [g1]: { links: { g2: { id: g2 }, d1: { id: d1 }, t1: { id: t1 } } } } });
      expect(put.status, put.text).to.equal(201);
      const links = (await c.get(`/groups/${g1}/links`)).json.links as { title: string; id: string }[];
      expect(Object.fromEntries(links.map((l) => [l.title, l.id]))).to.deep.equal({ d1, g2, t1 });
      expect((await c.get('/', { h5path: '/g1/d1' })).json.id).to.equal(d1);
      expect((await c.put(`/datasets/${d1}/attributes/a`, { type: I32, value: 7 })).status).to.equal(201);
      expect((await c.post(`/groups/${rootId}/attributes`, { obj_ids: [d1, g1] })).json.attributes[d1][0].value).to.equal(7);
      const objs = (await c.get('/', { getobjs: 1 })).json.domain_objs;
      expect(Object.keys(objs)).to.include.members([rootId, g1, g2, d1, t1]);
      expect(objs[d1].attributes.a.value).to.equal(7);
      expect((await c.get(`/datasets/${d1}/acls`)).status).to.equal(200);
      expect((await c.get(`/groups/${g1}`, { getalias: 1 })).json.alias).to.deep.equal(['/g1']);
    });

    it('object references in values are written and read with the ids the client made', async () => {
      const refs = clientId('d', rootId);
      const ref = { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' };
      expect((await c.post('/datasets', [{ id: refs, type: ref, shape: [2], value: [`groups/${g1}`, `datasets/${d1}`] }])).status).to.equal(201);
      expect((await c.put(`/groups/${rootId}/links/refs`, { id: refs })).status).to.equal(201);
      expect((await c.get(`/datasets/${refs}/value`)).json.value).to.deep.equal([`groups/${g1}`, `datasets/${d1}`]);
      await untilServerClosed(srv, file());
      const targets = pythonJson(
        `import h5py, sys, json
with h5py.File(sys.argv[1], 'r') as f:
    print(json.dumps([f[r].name for r in f['refs'][...]]))`,
        [file()],
        { lockFree: true },
      );
      expect(targets).to.deep.equal(['/g1', '/g1/d1']);
    });

    it('a single POST with an id keeps it (it was silently replaced before)', async () => {
      const id = clientId('g', rootId);
      const r = await c.post('/groups', { id, link: { id: rootId, name: 'single' } });
      expect(r.status, r.text).to.equal(201);
      expect(r.json.id).to.equal(id);
      expect((await c.get('/', { h5path: '/single' })).json.id).to.equal(id);
    });

    it('an id that is taken answers 409, one given twice in a list too; nothing of the list is created', async () => {
      const fresh = clientId('g', rootId);
      const serverMade = (await c.post('/groups', {})).json.id as string;
      for (const [taken, why] of [
        [g1, 'an id a client gave'],
        [serverMade, "an id the server made"],
        [rootId, 'the root id'],
      ] as const) {
        const r = await c.post('/groups', [{ id: fresh }, { id: taken }]);
        expectError(r, 409, why);
        expectError(await c.get(`/groups/${fresh}`), 404, `${why}: the first item`);
      }
      expectError(await c.post('/groups', [{ id: fresh }, { id: fresh }]), 409, 'twice');
      expectError(await c.get(`/groups/${fresh}`), 404);
    });

    it('all or none: a list whose last item fails leaves the file as it was (no object, no alias row)', async () => {
      await untilServerClosed(srv, file());
      const before = h5pyPaths(file());
      const ok1 = clientId('d', rootId);
      const ok2 = clientId('d', rootId);
      const r = await c.post('/datasets', [
        { id: ok1, type: I32, shape: [3], value: [1, 2, 3] },
        { id: ok2, type: I32, shape: [2] },
        { id: clientId('d', rootId), type: { class: 'H5T_NOPE' }, shape: [1] },
      ]);
      expectError(r, 400, 'bad last type');
      for (const id of [ok1, ok2]) expectError(await c.get(`/datasets/${id}`), 404, id);
      await untilServerClosed(srv, file());
      expect(h5pyPaths(file())).to.deep.equal(before);
    });

    it('malformed ids, ids of the wrong collection or root, and bodies that are not objects are 400', async () => {
      const good = clientId('g', rootId);
      const otherRoot = clientId('g', clientRootId());
      for (const [body, what] of [
        [[{ id: 'g-nothex' }], 'not hex'],
        [[{ id: good.toUpperCase().replace(/^G/, 'g') }], 'upper case'],
        [[{ id: 'd' + good.slice(1) }], 'a dataset id for a group'],
        [[{ id: otherRoot }], "another root's id"],
        [[{ id: 5 }], 'a number'],
        [[5], 'an item that is not an object'],
        [[{ id: good.slice(0, 2) + '0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c' }], 'a UUID-form id'],
      ] as const) {
        expectError(await c.post('/groups', body), 400, what);
      }
      expectError(await c.get(`/groups/${good}`), 404);
    });

    it('the map lives only in the reserved group: h5py sees the objects by their paths and nothing else new', async () => {
      await untilServerClosed(srv, file());
      const paths = h5pyPaths(file());
      const mine = Object.keys(paths).filter((p) => !p.startsWith('__h5store__/'));
      expect(mine).to.include.members(['g1', 'g1/g2', 'g1/d1', 'g1/t1', 'refs', 'single']);
      expect(paths['__h5store__/client_ids']).to.equal('Dataset');
    });

    it('deleting an object frees its id (410); the id can be given again', async () => {
      const id = clientId('g', rootId);
      expect((await c.post('/groups', [{ id }])).status).to.equal(201);
      expect((await c.delete(`/groups/${id}`)).status).to.equal(200);
      expectError(await c.get(`/groups/${id}`), 410);
      expect((await c.post('/groups', [{ id }])).status).to.equal(201);
      expect((await c.get(`/groups/${id}`)).status).to.equal(200);
    });

    it('after a restart the ids still name their objects, in URLs, links and references', async () => {
      await srv.stop();
      srv = await startServer({ root });
      c = new Client(srv.url, '/dialect.h5');
      expect((await c.get('/')).json.root).to.equal(rootId);
      expect((await c.get(`/groups/${g1}`)).status).to.equal(200);
      expect((await c.get(`/datasets/${d1}/value`)).json.value).to.deep.equal([1, 2, 3, 4]);
      const links = (await c.get(`/groups/${g1}/links`)).json.links as { title: string; id: string }[];
      expect(links.map((l) => l.id)).to.include.members([d1, g2, t1]);
      expect((await c.get('/', { h5path: '/refs' })).status).to.equal(200);
    });
  });

  describe('item 2: PUT / with root_id', () => {
    it('the root group answers to the id the client gave, and objects take its prefix', async () => {
      const d = c.with('/rooted.h5');
      const rid = clientRootId();
      const r = await d.put('/', { root_id: rid, group: { creationProperties: { CreateOrder: 1, mine: 'kept' } } });
      expect(r.status, r.text).to.equal(201);
      expect(r.json.root).to.equal(rid);
      expect((await d.get('/')).json.root).to.equal(rid);
      const g = await d.get(`/groups/${rid}`);
      expect(g.json.id).to.equal(rid);
      // item 9: the root group's extra creation properties are kept, as POST /groups keeps them
      expect(g.json.creationProperties).to.deep.equal({ mine: 'kept', CreateOrder: 1 });
      const child = clientId('g', rid);
      expect((await d.post('/groups', [{ id: child, link: { id: rid, name: 'c' } }])).status).to.equal(201);
      expect((await d.get(`/groups/${rid}/links/c`)).json.link.id).to.equal(child);
      expectError(await c.with('/badroot.h5').put('/', { root_id: 'g-123' }), 400, 'malformed root_id');
      expectError(await c.with('/badroot.h5').put('/', { root_id: clientId('d', rid) }), 400, 'a dataset id as root_id');
      expectError(await c.with('/badroot.h5').get('/'), 404, 'nothing created');
    });
  });

  describe('item 3: getobjs without include_attrs', () => {
    it('every object with its attributes, links and creation properties; small datasets with their values, large ones without', async () => {
      const d = c.with('/objs.h5');
      expect((await d.put('/')).status).to.equal(201);
      const rid = (await d.get('/')).json.root;
      const small = (await d.post('/datasets', { type: I32, shape: [3], link: { id: rid, name: 'small' } })).json.id;
      await d.put(`/datasets/${small}/value`, { value: [5, 6, 7] });
      const large = (await d.post('/datasets', { type: F64, shape: [1000], link: { id: rid, name: 'large' } })).json.id;
      await d.put(`/groups/${rid}/attributes/title`, { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, value: 'objs' });
      const objs = (await d.get('/', { getobjs: 1 })).json.domain_objs;
      expect(objs[rid].attributes.title.value).to.equal('objs');
      expect(Object.keys(objs[rid].links)).to.deep.equal(['small', 'large']);
      expect(objs[small].value).to.deep.equal([5, 6, 7]);
      expect(objs[small].creationProperties.layout).to.deep.equal({ class: 'H5D_CONTIGUOUS' });
      expect(objs[large]).to.not.have.property('value'); // 8000 bytes: more than 4 KiB
    });
    it('a vlen of compounds with vlen fields comes with its value too; getobjs answers (h5pyd 1.0 opens the file)', async () => {
      const d = c.with('/objs-nested.h5');
      expect((await d.put('/')).status).to.equal(201);
      const rid = (await d.get('/')).json.root;
      const vlenI32 = { class: 'H5T_VLEN', base: I32 };
      // a vlen sequence of compounds with vlen fields (h5pyd's test_nested_compound_vlen): JSON values (test/api/nested-vlen.test.ts)
      const nested = { class: 'H5T_COMPOUND', fields: [{ name: 'f1', type: { class: 'H5T_VLEN', base: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: vlenI32 }] } } }, { name: 'f2', type: I32 }] };
      const value = [[[[[1, 2]], [[]]], 7], [[], 8]];
      const nid = (await d.post('/datasets', { type: nested, shape: [2], link: { id: rid, name: 'nested' }, value })).json.id;
      expect((await d.get(`/datasets/${nid}/value`)).json.value).to.deep.equal(value);
      const ok = (await d.post('/datasets', { type: I32, shape: [2], link: { id: rid, name: 'plain' } })).json.id;
      await d.put(`/datasets/${ok}/value`, { value: [1, 2] });
      const r = await d.get('/', { getobjs: 1 });
      expect(r.status).to.equal(200);
      const objs = r.json.domain_objs;
      expect(objs[nid].type).to.deep.equal(nested);
      expect(objs[nid].value).to.deep.equal(value);
      expect(objs[ok].value).to.deep.equal([1, 2]);
      if (!haveClient('1.0')) return void console.log(`      ${missingClient('1.0')}`);
      const out = h5pydPython('1.0', srv.url).json(
        `import h5pyd, json
with h5pyd.File('/objs-nested.h5', 'r') as f:
    print(json.dumps([sorted(f.keys()), f['plain'][...].tolist()]))`,
      );
      expect(out).to.deep.equal([['nested', 'plain'], [1, 2]]);
    });
  });

  describe('item 4: external links as file', () => {
    it('PUT with {h5path, file} stores an external link; link JSON carries file and h5domain', async () => {
      expect((await c.put(`/groups/${rootId}/links/ext1`, { h5path: '/x', file: 'other.h5' })).status).to.equal(201);
      expect((await c.put(`/groups/${rootId}/links`, { links: { ext2: { class: 'H5L_TYPE_EXTERNAL', h5path: '/y', file: '/home/u/z.h5' } } })).status).to.equal(201);
      const l1 = (await c.get(`/groups/${rootId}/links/ext1`)).json.link;
      expect(l1).to.deep.equal({ title: 'ext1', class: 'H5L_TYPE_EXTERNAL', h5path: '/x', h5domain: 'other.h5', file: 'other.h5' });
      expect((await c.get(`/groups/${rootId}/links/ext2`)).json.link).to.include({ h5domain: '/home/u/z.h5', file: '/home/u/z.h5' });
      expectError(await c.put(`/groups/${rootId}/links/ext3`, { h5path: '/x', file: 'a.h5', h5domain: 'b.h5' }), 400);
      expectError(await c.put(`/groups/${rootId}/links/ext4`, { class: 'H5L_TYPE_EXTERNAL', h5path: '/x' }), 400);
      await untilServerClosed(srv, file());
      const py = pythonJson(
        `import h5py, sys, json
with h5py.File(sys.argv[1], 'r') as f:
    l = f.get('ext1', getlink=True)
    print(json.dumps([type(l).__name__, l.filename, l.path]))`,
        [file()],
        { lockFree: true },
      );
      expect(py).to.deep.equal(['ExternalLink', 'other.h5', '/x']);
    });
  });

  describe('item 6: client created times on links and attributes', () => {
    it('the links and attributes of a bulk PUT are made in the order of their created times; CreateOrder=1 listings follow them', async () => {
      const g = (await c.post('/groups', { link: { id: rootId, name: 'timed' } })).json.id;
      const t = Date.now() / 1000 - 60;
      // given in name order, made in another
      const links = { a: { h5path: '/x', created: t + 3 }, b: { h5path: '/x', created: t + 1 }, c: { h5path: '/x', created: t + 2 } };
      expect((await c.put(`/groups/${rootId}/links`, { grp_ids: { [g]: { links } } })).status).to.equal(201);
      const crt = (await c.get(`/groups/${g}/links`, { CreateOrder: 1 })).json.links.map((l: { title: string }) => l.title);
      expect(crt).to.deep.equal(['b', 'c', 'a']);
      expect((await c.get(`/groups/${g}/links`)).json.links.map((l: { title: string }) => l.title)).to.deep.equal(['a', 'b', 'c']);
      const attrs: Record<string, unknown> = {};
      for (let i = 0; i < 12; i++) attrs[`n${String(i).padStart(2, '0')}`] = { type: I32, value: i, created: t + 12 - i };
      expect((await c.put(`/groups/${rootId}/attributes`, { obj_ids: { [g]: { attributes: attrs } } })).status).to.equal(201);
      const names = (await c.get(`/groups/${g}/attributes`, { CreateOrder: 1 })).json.attributes.map((a: { name: string }) => a.name);
      expect(names).to.deep.equal(Object.keys(attrs).reverse());
      // a time far ahead of the server's clock counts as now: after every earlier one
      const later = { z: { h5path: '/x', created: Date.now() / 1000 + 3600 }, y: { h5path: '/x', created: t + 10 } };
      expect((await c.put(`/groups/${g}/links`, { links: later })).status).to.equal(201);
      expect((await c.get(`/groups/${g}/links`, { CreateOrder: 1 })).json.links.map((l: { title: string }) => l.title)).to.deep.equal(['b', 'c', 'a', 'y', 'z']);
      expectError(await c.put(`/groups/${g}/links`, { links: { bad: { h5path: '/x', created: 'yesterday' } } }), 400);
      expectError(await c.put(`/groups/${g}/attributes`, { attributes: { bad: { type: I32, value: 1, created: -5 } } }), 400);
    });
  });

  describe('item 7: chunk shapes the client computes', () => {
    it('chunks over max_chunk_size (h5pyd 1.0: up to ~8 MiB) and a (1,) chunk of 100 MB strings are accepted; past libhdf5\'s 4 GiB, 400', async () => {
      const limits = (await c.get('/')).json.limits;
      expect(limits.max_chunk_size).to.equal(4 * 1024 * 1024);
      const r = await c.post('/datasets', { type: I32, shape: [4_000_000], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2_000_000] } }, link: { id: rootId, name: 'chunk8m' } });
      expect(r.status, r.text).to.equal(201);
      expect(r.json.layout).to.deep.equal({ class: 'H5D_CHUNKED', dims: [2_000_000] });
      expect((await putBinary(c, `/datasets/${r.json.id}/value`, bytes.i32le(1, 2, 3), { select: '[1999999:2000002]' })).status).to.equal(200);
      expect((await c.get(`/datasets/${r.json.id}/value`, { select: '[1999999:2000002]' })).json.value).to.deep.equal([1, 2, 3]);
      const big = { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 100_000_000 };
      const s = await c.post('/datasets', { type: big, shape: [2], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [1] } }, link: { id: rootId, name: 'huge' } });
      expect(s.status, s.text).to.equal(201);
      const one = Buffer.alloc(100_000_000, 0x61);
      expect((await putBinary(c, `/datasets/${s.json.id}/value`, one, { select: '[1:2]' })).status).to.equal(200);
      const back = await getBinary(c, `/datasets/${s.json.id}/value`, { select: '[1:2]' });
      expect(back.body.length).to.equal(100_000_000);
      expect(back.body.equals(one)).to.equal(true);
      expectError(await c.post('/datasets', { type: I32, shape: [1], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2 ** 30] } } }), 400, '4 GiB chunk');
    });
  });

  describe("item 8: h5web's batch requests", () => {
    let hw: Client;
    before(async () => {
      hw = c.with('/web.h5');
      expect((await hw.put('/')).status).to.equal(201);
      const rid = (await hw.get('/')).json.root;
      const g = (await hw.post('/groups', { link: { id: rid, name: 'grp' } })).json.id;
      await hw.post('/datasets', { type: I32, shape: [2], link: { id: g, name: 'zeta' } });
      await hw.post('/groups', { link: { id: g, name: 'alpha' } });
      await hw.put(`/groups/${g}/attributes/long`, { type: I32, shape: [100], value: Array.from({ length: 100 }, (_, i) => i) });
      await hw.put(`/groups/${g}/attributes/short`, { type: I32, value: 1 });
    });

    it('GET /?h5path=<path>&include_links=1&include_attrs=1: the object with its links and attributes', async () => {
      const r = await hw.get('/', { h5path: '/grp', include_links: 1, include_attrs: 1 });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.json.links)).to.deep.equal(['alpha', 'zeta']);
      expect(r.json.attributes.short.value).to.equal(1);
      expect(r.json.attributes.long.value).to.have.length(100);
      const plain = await hw.get('/', { h5path: '/grp' });
      expect(plain.json).to.not.have.property('links');
      expect(plain.json).to.not.have.property('attributes');
    });

    it('POST / with h5paths honours include_links, include_attrs, IncludeData, max_data_size and CreateOrder', async () => {
      const r = await hw.post('/', { h5paths: ['/grp', '/grp/zeta'] }, { include_links: 1, include_attrs: 1, CreateOrder: 1, max_data_size: 100 });
      expect(r.status, r.text).to.equal(200);
      const grp = r.json.h5paths['/grp'];
      expect(Object.keys(grp.links)).to.deep.equal(['zeta', 'alpha']);
      expect(Object.keys(grp.attributes)).to.deep.equal(['long', 'short']);
      expect(grp.attributes.short.value).to.equal(1);
      expect(grp.attributes.long).to.not.have.property('value'); // 400 bytes: more than max_data_size
      expect(r.json.h5paths['/grp/zeta'].class).to.equal('dataset');
      const noData = await hw.post('/', { h5paths: ['/grp'], include_attrs: 1, IncludeData: 0 });
      expect(noData.json.h5paths['/grp'].attributes.short).to.not.have.property('value');
      expectError(await hw.post('/', { h5paths: ['/grp', '/nope'] }), 404);
    });
  });

  describe('item 9: the differences left with h5pyd 0.24 and HSDS clients', () => {
    it('CreateOrder=1 lists objects made through the API in creation order; dropped-in ones without it by name, never a hash order', async () => {
      const g = (await c.post('/groups', { link: { id: rootId, name: 'untracked' } })).json.id;
      for (const n of ['zz', 'yy', 'xx']) await c.post('/groups', { link: { id: g, name: n } });
      for (let i = 0; i < 12; i++) await c.put(`/groups/${g}/attributes/a${String(11 - i).padStart(2, '0')}`, { type: I32, value: i });
      expect((await c.get(`/groups/${g}/links`, { CreateOrder: 1 })).json.links.map((l: { title: string }) => l.title)).to.deep.equal(['zz', 'yy', 'xx']);
      const crt = (await c.get(`/groups/${g}/attributes`, { CreateOrder: 1 })).json.attributes.map((a: { name: string }) => a.name);
      expect(crt).to.deep.equal(Array.from({ length: 12 }, (_, i) => `a${String(11 - i).padStart(2, '0')}`));
      expect((await c.get(`/groups/${g}`)).json).to.not.have.property('creationProperties'); // not asked for
      // a file h5py wrote without track_order: more than 8 attributes (dense storage)
      pythonJson(
        `import h5py, sys, json
with h5py.File(sys.argv[1], 'w') as f:
    g = f.create_group('g')
    for i in range(20):
        g.attrs['b%02d' % (19 - i)] = i
print(json.dumps(1))`,
        [path.join(root, 'dropped.h5')],
      );
      const dr = c.with('/dropped.h5');
      const gid = (await dr.get('/', { h5path: '/g' })).json.id;
      const names = (await dr.get(`/groups/${gid}/attributes`, { CreateOrder: 1 })).json.attributes.map((a: { name: string }) => a.name);
      expect(names).to.deep.equal([...names].sort());
    });

    it('GET /domains of a file answers 200 with no domains', async () => {
      const r = await c.get('/domains', { domain: '/dialect.h5/' });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.domains).to.deep.equal([]);
    });

    it('an object whose last link was deleted stays reachable by id and can be linked again (HTTP)', async () => {
      const g = (await c.post('/groups', { link: { id: rootId, name: 'a' } })).json.id;
      expect((await c.delete(`/groups/${rootId}/links/a`)).status).to.equal(200);
      expect((await c.get(`/groups/${g}`)).status).to.equal(200);
      expect((await c.put(`/groups/${rootId}/links/b`, { id: g })).status).to.equal(201);
      expect((await c.get('/', { h5path: '/b' })).json.id).to.equal(g);
      expectError(await c.get('/', { h5path: '/a' }), 404);
    });

    it('.../links/ and .../attributes/ with an empty name are 404, not the lists', async () => {
      for (const p of [`/groups/${rootId}/links/`, `/groups/${rootId}/attributes/`]) {
        expectError(await c.get(p), 404, p);
        expectError(await c.delete(p), 404, p);
      }
      expectError(await c.put(`/groups/${rootId}/attributes/`, { type: I32, value: 1 }), 404);
    });

    it('attribute Limit with follow_links caps the total, as for links', async () => {
      const g = (await c.post('/groups', { link: { id: rootId, name: 'lim' } })).json.id;
      const k = (await c.post('/groups', { link: { id: g, name: 'kid' } })).json.id;
      for (const [o, n] of [[g, 'p'], [g, 'q'], [k, 'r'], [k, 's']]) await c.put(`/groups/${o}/attributes/${n}`, { type: I32, value: 1 });
      const r = await c.get(`/groups/${g}/attributes`, { follow_links: 1, Limit: 3 });
      const total = Object.values(r.json.attributes as Record<string, unknown[]>).reduce((a, l) => a + l.length, 0);
      expect(total).to.equal(3);
    });

    it('bodies: null on POST /groups is no body; select as a list in POST .../value; plain values for one compound field; bytes after vlen data ignored', async () => {
      const anon = await c.request('POST', '/groups', { raw: 'null', headers: { 'content-type': 'application/json' } });
      expect(anon.status, anon.text).to.equal(201);
      const grid = (await c.post('/datasets', { type: I32, shape: [3, 4], link: { id: rootId, name: 'grid' } })).json.id;
      await c.put(`/datasets/${grid}/value`, { value: Array.from({ length: 12 }, (_, i) => i) });
      const sel = await c.post(`/datasets/${grid}/value`, { select: ['1:3', 2] });
      expect(sel.status, sel.text).to.equal(200);
      expect(sel.json.value).to.deep.equal([[6], [10]]); // as select=[1:3,2]
      expectError(await c.post(`/datasets/${grid}/value`, { select: [{ start: 1 }, 2] }), 400);
      const cmp = { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: I32 }, { name: 'b', type: F64 }] };
      const cd = (await c.post('/datasets', { type: cmp, shape: [3], link: { id: rootId, name: 'cmpd' } })).json.id;
      expect((await c.put(`/datasets/${cd}/value`, { value: [1, 2, 3] }, { fields: 'a' })).status).to.equal(200);
      expect((await c.get(`/datasets/${cd}/value`)).json.value).to.deep.equal([[1, 0], [2, 0], [3, 0]]);
      const vs = (await c.post('/datasets', { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, shape: [2], link: { id: rootId, name: 'vs' } })).json.id;
      expect((await putBinary(c, `/datasets/${vs}/value`, Buffer.concat([bytes.vlen('x'), bytes.vlen('yz'), Buffer.alloc(16)]))).status).to.equal(200);
      expect((await c.get(`/datasets/${vs}/value`)).json.value).to.deep.equal(['x', 'yz']);
    });

    it('NaN and Inf fill values are "nan" and "inf" under ignore_nan=1', async () => {
      pythonJson(
        `import h5py, sys, json, numpy as np
with h5py.File(sys.argv[1], 'a') as f:
    f.create_dataset('inf', (2,), dtype='f8', fillvalue=np.inf)
print(1)`,
        [path.join(root, 'dropped.h5')],
      );
      const dr = c.with('/dropped.h5');
      const id = (await dr.get('/', { h5path: '/inf' })).json.id;
      expect((await dr.get(`/datasets/${id}`, { ignore_nan: 1 })).json.creationProperties.fillValue).to.equal('inf');
      const plain = await dr.get(`/datasets/${id}`);
      expect(plain.text).to.include('"fillValue":Infinity');
    });

    it('a domain written as bucket/path is read as HSDS reads it (the bucket ignored)', async () => {
      const r = await c.get('/', { domain: 'mybucket/dialect.h5' });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.root).to.equal(rootId);
      expectError(await c.get('/', { domain: 'Not_A_Bucket/dialect.h5' }), 400);
    });

    it("a link's lastModified is its created; GET .../type hrefs are self, owner and root; a relative h5path without parent_id is 400", async () => {
      await c.put(`/groups/${rootId}/links/lm`, { h5path: '/x' });
      const l = (await c.get(`/groups/${rootId}/links/lm`)).json;
      expect(l.lastModified).to.equal(l.created);
      const d = (await c.get('/', { h5path: '/grid' })).json.id;
      expect((await c.get(`/datasets/${d}/type`)).json.hrefs.map((h: { rel: string }) => h.rel)).to.deep.equal(['self', 'owner', 'root']);
      expectError(await c.get('/datasets/', { h5path: 'grid' }), 400);
      expect((await c.get('/datasets/', { h5path: 'grid', parent_id: rootId })).json.id).to.equal(d);
    });
  });
});

describe('PUT /?flush=1 with a null body (issue #25 item 5) and client ids on ACL routes', function () {
  this.timeout(120_000);
  let srv: TestServer;

  before(async () => {
    const users = path.join(tempRoot('h5store-users-'), 'users.json');
    for (const [u, p] of [['admin', 'admin-pw'], ['alice', 'alice-pw'], ['bob', 'bob-pw']]) await userAdd(users, u, p);
    srv = await startServer({ args: ['--users-file', users] });
    const adm = new Client(srv.url).as({ user: 'admin', password: 'admin-pw' });
    expect((await adm.with('/home').put('/', { folder: true })).status).to.equal(201);
    expect((await adm.with('/home/alice').put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
  });
  after(async () => srv?.stop());

  it('204 for a user who may update the domain, 403 for one who may only read, 401 anonymous', async () => {
    const alice = new Client(srv.url, '/home/alice/flush.h5').as({ user: 'alice', password: 'alice-pw' });
    expect((await alice.put('/')).status).to.equal(201);
    const rid = (await alice.get('/')).json.root;
    expect((await alice.put('/acls/bob', { read: true, update: false })).status).to.be.oneOf([200, 201]);
    expect((await alice.put('/', null, { flush: 1 })).status).to.equal(204);
    const bob = alice.as({ user: 'bob', password: 'bob-pw' });
    expectError(await bob.put('/', null, { flush: 1 }), 403);
    expectError(await alice.as(undefined).put('/', null, { flush: 1 }), 401);
    // an object's ACL through the id the client gave it
    const g = clientId('g', rid);
    expect((await alice.post('/groups', [{ id: g, link: { id: rid, name: 'g' } }])).status).to.equal(201);
    expect((await alice.put(`/groups/${g}/acls/bob`, { read: false })).status).to.be.oneOf([200, 201]);
    expect((await alice.get(`/groups/${g}/acls/bob`)).json.acl).to.include({ read: false });
    expectError(await bob.get(`/groups/${g}`), 403);
    expect((await bob.get(`/groups/${rid}`)).status).to.equal(200);
  });

  it('a batch create checks create on the group each item is linked into', async () => {
    const alice = new Client(srv.url, '/home/alice/flush.h5').as({ user: 'alice', password: 'alice-pw' });
    const rid = (await alice.get('/')).json.root;
    const closed = (await alice.post('/groups', { link: { id: rid, name: 'closed' } })).json.id;
    expect((await alice.put('/acls/bob', { read: true, create: true })).status).to.be.oneOf([200, 201]);
    expect((await alice.put(`/groups/${closed}/acls/bob`, { read: true, create: false })).status).to.be.oneOf([200, 201]);
    const bob = alice.as({ user: 'bob', password: 'bob-pw' });
    const ok = clientId('g', rid);
    expectError(await bob.post('/groups', [{ id: ok, link: { id: rid, name: 'fine' } }, { id: clientId('g', rid), link: { id: closed, name: 'no' } }]), 403);
    expectError(await alice.get(`/groups/${ok}`), 404, 'nothing created');
    expect((await bob.post('/groups', [{ id: ok, link: { id: rid, name: 'fine' } }])).status).to.equal(201);
  });
});

describe('h5pyd clients on the re-link and Folder cases (issue #25 item 9)', function () {
  this.timeout(120_000);
  let srv: TestServer;
  before(async () => {
    const root = tempRoot('h5store-relink-');
    fs.mkdirSync(path.join(root, 'home'));
    srv = await startServer({ root });
  });
  after(async () => srv?.stop());

  for (const line of ['0.24', '1.0'] as const) {
    it(`h5pyd ${line}: g = f["a"]; del f["a"]; f["b"] = g works; Folder on a file lists nothing`, function () {
      if (!haveClient(line)) {
        console.log(`      ${missingClient(line)}`);
        this.skip();
      }
      const out = h5pydPython(line, srv.url).json(
        `import h5pyd, json
name = '/home/relink-${line}.h5'
with h5pyd.File(name, 'w') as f:
    f.create_group('a').attrs['x'] = 1
    f.flush()  # h5pyd 1.0 sends the delete of a link only when it was flushed in this session
    g = f['a']
    del f['a']
    f.flush()
    f['b'] = g
with h5pyd.File(name, 'r') as f:
    res = {'keys': list(f.keys()), 'x': int(f['b'].attrs['x'])}
try:
    res['folder'] = list(h5pyd.Folder(name + '/'))
except Exception as e:
    res['folder'] = repr(e)
print(json.dumps(res))`,
      );
      expect(out.keys).to.deep.equal(['b']);
      expect(out.x).to.equal(1);
      expect(out.folder).to.deep.equal([]);
    });
  }
});
