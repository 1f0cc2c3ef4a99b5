/**
 * Objects that track creation order (issue #12): attributes replaced and deleted on them (libhdf5
 * 1.10's H5Arename breaks the creation-order index of dense attribute storage), and links listed
 * in creation order by every listing form when asked (`CreateOrder=1`) and the group tracks it.
 * Cross-checked with h5py, which lists tracked objects in creation order.
 */
import { expect } from 'chai';
import path from 'node:path';
import { pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer } from '../helpers/server.js';

describe('creation order (issue #12)', function () {
  this.timeout(60000);
  let srv: TestServer;
  let c: Client;
  let root: string;
  const D = '/order.h5';

  /** Names of the attributes (creation order) and links (creation order) of an object, by h5py. */
  const h5pyOrder = (objPath: string) =>
    pythonJson(
      `import h5py, json, sys
with h5py.File(sys.argv[1], 'r') as f:
    o = f[sys.argv[2]]
    out = {'attrs': list(o.attrs), 'values': {k: (v.item() if hasattr(v, 'item') else v) for k, v in o.attrs.items()}}
    if isinstance(o, h5py.Group):
        out['links'] = list(o)
    print(json.dumps(out, default=str))`,
      [path.join(srv.root, D), objPath],
      { lockFree: true },
    );

  before(async () => {
    srv = await startServer();
    c = new Client(srv.url, D);
    const r = await c.put('/');
    expect(r.status, r.text).to.equal(201);
    root = r.json.root;
  });
  after(async () => srv?.stop());

  describe('links in creation order: every listing form', () => {
    const order = ['zeta', 'beta', 'alpha', 'gamma', 'delta'];
    const byName = [...order].sort();
    const titlesOf = (links: { title: string }[]) => links.map((l) => l.title);

    /**
     * Check every listing form on a group that tracks creation order, and on its child, made
     * without asking for it: links 'b' then 'a', listed in creation order when the child was
     * made through the API (h5store tracks creation order on every object it creates, as HSDS
     * stamps every link: issue #25), in name order when h5py made it untracked.
     */
    async function checkForms(cl: Client, gid: string, child: string, childOrder = ['b', 'a']): Promise<void> {
      // paged GET .../links, with and without CreateOrder
      expect(titlesOf((await cl.get(`/groups/${gid}/links`, { CreateOrder: 1 })).json.links)).to.deep.equal(order);
      expect(titlesOf((await cl.get(`/groups/${gid}/links`)).json.links)).to.deep.equal(byName);
      expect(titlesOf((await cl.get(`/groups/${gid}/links`, { CreateOrder: 0 })).json.links)).to.deep.equal(byName);
      const pages: string[][] = [];
      let marker: string | undefined;
      for (;;) {
        const r = await cl.get(`/groups/${gid}/links`, { CreateOrder: 1, Limit: 2, Marker: marker });
        expect(r.status, r.text).to.equal(200);
        const t = titlesOf(r.json.links);
        pages.push(t);
        if (t.length < 2) break;
        marker = t[t.length - 1];
      }
      expect(pages).to.deep.equal([order.slice(0, 2), order.slice(2, 4), order.slice(4)]);
      expect(titlesOf((await cl.get(`/groups/${gid}/links`, { CreateOrder: 1, pattern: '*ta' })).json.links)).to.deep.equal(['zeta', 'beta', 'delta']);
      // bulk: POST with grp_ids, without titles
      const bulk = await cl.post(`/groups/${gid}/links`, { grp_ids: [gid, child] }, { CreateOrder: 1 });
      expect(titlesOf(bulk.json.links[gid])).to.deep.equal(order);
      expect(titlesOf(bulk.json.links[child])).to.deep.equal(childOrder);
      expect(titlesOf((await cl.post(`/groups/${gid}/links`, { grp_ids: [gid] })).json.links)).to.deep.equal(byName);
      // follow_links (GET and POST)
      for (const deep of [await cl.get(`/groups/${gid}/links`, { follow_links: 1, CreateOrder: 1 }), await cl.post(`/groups/${gid}/links`, {}, { follow_links: 1, CreateOrder: 1 })]) {
        expect(titlesOf(deep.json.links[gid])).to.deep.equal(order);
        expect(titlesOf(deep.json.links[child])).to.deep.equal(childOrder);
      }
      expect(titlesOf((await cl.get(`/groups/${gid}/links`, { follow_links: 1 })).json.links[gid])).to.deep.equal(byName);
      // include_links of GET /groups/<id>
      expect(Object.keys((await cl.get(`/groups/${gid}`, { include_links: 1, CreateOrder: 1 })).json.links)).to.deep.equal(order);
      expect(Object.keys((await cl.get(`/groups/${gid}`, { include_links: 1 })).json.links)).to.deep.equal(byName);
      // domain_objs
      expect(Object.keys((await cl.get('/', { getobjs: 1 })).json.domain_objs[gid].links)).to.deep.equal(order);
    }

    it('a group created with creationProperties {"CreateOrder": 1} through the API', async () => {
      const gid = (await c.post('/groups', { link: { id: root, name: 'tracked' }, creationProperties: { CreateOrder: 1 } })).json.id;
      let child = '';
      for (const n of order) {
        const r = await c.post('/groups', { link: { id: gid, name: n } });
        expect(r.status).to.equal(201);
        if (n === 'gamma') child = r.json.id;
      }
      for (const n of ['b', 'a']) expect((await c.put(`/groups/${child}/links/${n}`, { h5path: '/' })).status).to.equal(201);
      await checkForms(c, gid, child);
    });

    it('the root group of a domain created with group.creationProperties, and groups h5py made (tracked and indexed, or tracked only)', async () => {
      const d = new Client(srv.url, '/tracked-root.h5');
      const rid = (await d.put('/', { group: { creationProperties: { CreateOrder: 1 } } })).json.root;
      let child = '';
      for (const n of order) {
        const r = await d.post('/groups', { link: { id: rid, name: n } });
        if (n === 'gamma') child = r.json.id;
      }
      for (const n of ['b', 'a']) expect((await d.put(`/groups/${child}/links/${n}`, { h5path: '/' })).status).to.equal(201);
      await checkForms(d, rid, child);

      pythonJson(
        `import h5py, sys, json
with h5py.File(sys.argv[1], 'w') as f:
    g = f.create_group('indexed', track_order=True)
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_link_creation_order(h5py.h5p.CRT_ORDER_TRACKED)
    h5py.h5g.create(f.id, b'trackedonly', gcpl=gcpl)
    for name in ('indexed', 'trackedonly'):
        grp = f[name]
        for n in ${JSON.stringify(order)}:
            grp.create_group(n)
        for n in ('b', 'a'):
            f[name + '/gamma/' + n] = h5py.SoftLink('/')
    print(json.dumps(list(f['trackedonly'])))`,
        [path.join(srv.root, 'h5py-order.h5')],
      );
      const h = new Client(srv.url, '/h5py-order.h5');
      for (const name of ['indexed', 'trackedonly']) {
        const gid = (await h.get('/', { h5path: `/${name}` })).json.id;
        const child = (await h.get('/', { h5path: `/${name}/gamma` })).json.id;
        await checkForms(h, gid, child, ['a', 'b']);
      }
    });
  });

  describe('attributes of tracked objects: replace and delete', () => {
    // 3 attributes stay in compact storage; 12 go to dense storage (more than 8).
    for (const n of [3, 12]) {
      for (const kind of ['groups', 'datasets'] as const) {
        it(`${kind} with ${n} attributes: replace one (other type), delete it, replace another; order kept (as h5py lists it)`, async () => {
          const name = `${kind}-${n}`;
          const body =
            kind === 'groups'
              ? { link: { id: root, name }, creationProperties: { CreateOrder: 1 } }
              : { type: 'H5T_STD_I32LE', shape: [2], link: { id: root, name }, creationProperties: { CreateOrder: 1 } };
          const r = await c.post(`/${kind}`, body);
          expect(r.status, r.text).to.equal(201);
          const id = r.json.id;
          const names = Array.from({ length: n }, (_, i) => `z${String.fromCharCode(97 + ((i * 7) % 26))}${i}`);
          for (const [i, a] of names.entries()) {
            const p = await c.put(`/${kind}/${id}/attributes/${a}`, { type: 'H5T_STD_I64LE', value: i });
            expect(p.status, p.text).to.equal(201);
          }
          const three = await c.put(`/${kind}/${id}/attributes/three`, { type: 'H5T_STD_I64LE', value: 3 });
          expect(three.status).to.equal(201);
          const listed = async () => ((await c.get(`/${kind}/${id}/attributes`, { CreateOrder: 1 })).json.attributes as { name: string }[]).map((a) => a.name);
          expect(await listed()).to.deep.equal([...names, 'three']);

          // replace with another type (h5pyd sends replace=1): 201, the value changed
          const rep = await c.put(`/${kind}/${id}/attributes/three`, { type: 'H5T_IEEE_F64LE', value: 42.0 }, { replace: 1 });
          expect(rep.status, rep.text).to.equal(201);
          const got = await c.get(`/${kind}/${id}/attributes/three`);
          expect(got.json.value).to.equal(42);
          expect(got.json.type.base).to.equal('H5T_IEEE_F64LE');
          expect(await listed()).to.deep.equal([...names, 'three']);

          // delete it: 200 (was a 500 with dense storage), gone from the listing and the count
          const del = await c.delete(`/${kind}/${id}/attributes/three`);
          expect(del.status, del.text).to.equal(200);
          expect(await listed()).to.deep.equal(names);
          expect((await c.get(`/${kind}/${id}`)).json.attributeCount).to.equal(n);

          // replace one in the middle: it becomes the newest (as h5py's replace does)
          const mid = names[1];
          expect((await c.put(`/${kind}/${id}/attributes/${mid}`, { type: 'H5T_STD_I64LE', value: 99 })).status).to.equal(201);
          const expected = [...names.filter((x) => x !== mid), mid];
          expect(await listed()).to.deep.equal(expected);
          // every attribute can still be deleted, and bulk replace works as well
          const bulk = await c.put(`/${kind}/${id}/attributes`, { attributes: { [names[0]]: { type: 'H5T_STD_I8LE', value: -1 } } }, { replace: 1 });
          expect(bulk.status, bulk.text).to.equal(201);
          const py = h5pyOrder(`/${name}`);
          expect(py.attrs).to.deep.equal([...expected.filter((x) => x !== names[0]), names[0]]);
          expect(py.values[mid]).to.equal(99);
          expect(py.values[names[0]]).to.equal(-1);
          for (const a of py.attrs) expect((await c.delete(`/${kind}/${id}/attributes/${a}`)).status, a).to.equal(200);
          expect((await c.get(`/${kind}/${id}`)).json.attributeCount).to.equal(0);
        });
      }
    }
  });
});
