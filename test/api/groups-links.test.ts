/**
 * Groups and links (service spec 2.2, 4.2, 4.3; wire-reference 0.9, 2.1, 2.2; DESIGN.md 4, 6).
 */
import { expect } from 'chai';
import { GROUP_ID_RE, allPages, expectError, withAddr } from '../helpers/apiExtra.js';
import { Client, type Reply, type TestServer, startServer } from '../helpers/server.js';

interface LinkItem {
  title: string;
  class: string;
  id?: string;
  collection?: string;
  h5path?: string;
  h5domain?: string;
  href?: string;
  target?: string;
}

const RESERVED_RE = /h5store/;

describe('groups and links', function () {
  this.timeout(60000);
  let srv: TestServer;
  let c: Client;
  let rootId: string;
  const D = '/gl.h5';

  const rels = (r: Reply) => (r.json.hrefs as { rel: string }[]).map((h) => h.rel);
  const titles = (r: Reply) => (r.json.links as LinkItem[]).map((l) => l.title);
  const enc = encodeURIComponent;

  async function newGroup(parent: string, name: string, extra: Record<string, unknown> = {}): Promise<string> {
    const r = await c.post('/groups', { link: { id: parent, name }, ...extra });
    expect(r.status, `POST /groups ${name}: ${r.text}`).to.equal(201);
    return r.json.id;
  }

  async function rootLinkCount(): Promise<number> {
    const r = await c.get(`/groups/${rootId}`);
    expect(r.status).to.equal(200);
    return r.json.linkCount;
  }

  before(async () => {
    srv = await startServer();
    c = new Client(srv.url, D);
    const r = await c.put('/');
    expect(r.status, r.text).to.equal(201);
    rootId = r.json.root;
  });

  after(async () => {
    await srv?.stop();
  });

  describe('POST /groups', () => {
    it('anonymous: 201 with id, root, counts; GET works; hidden from every listing and count', async () => {
      const before = await rootLinkCount();
      const collBefore = (await c.get('/groups')).json.groups as string[];
      const r = await c.post('/groups', {});
      expect(r.status, r.text).to.equal(201);
      expect(r.json.id).to.match(GROUP_ID_RE);
      expect(r.json.root).to.equal(rootId);
      expect(r.json.linkCount).to.equal(0);
      expect(r.json.attributeCount).to.equal(0);
      expect(r.json.created).to.be.a('number');
      expect(r.json.lastModified).to.be.a('number');
      const id = r.json.id as string;
      // Same domain key as the root (wire-reference 0.1).
      expect(id.slice(2, 19)).to.equal(rootId.slice(2, 19));
      const g = await c.get(`/groups/${id}`);
      expect(g.status).to.equal(200);
      expect(g.json.id).to.equal(id);
      expect(g.json.root).to.equal(rootId);
      expect(g.json.linkCount).to.equal(0);
      expect(g.json.attributeCount).to.equal(0);
      // Hidden: links, linkCount, include_links, collection, path lookups.
      expect(await rootLinkCount()).to.equal(before);
      const links = await c.get(`/groups/${rootId}/links`);
      expect(links.status).to.equal(200);
      for (const l of links.json.links as LinkItem[]) {
        expect(l.title).to.not.match(RESERVED_RE);
        expect(l.id).to.not.equal(id);
      }
      expect(links.json.links).to.have.length(before);
      const inc = await c.get(`/groups/${rootId}`, { include_links: 1 });
      expect(Object.keys(inc.json.links)).to.have.length(before);
      for (const k of Object.keys(inc.json.links)) expect(k).to.not.match(RESERVED_RE);
      const coll = (await c.get('/groups')).json.groups as string[];
      expect(coll).to.not.include(id);
      expect(coll).to.deep.equal(collBefore);
      // The reserved group's name is not reachable by path or link name.
      expectError(await c.get('/', { h5path: '/__h5store__' }), 404);
      expectError(await c.get('/groups/', { h5path: '/__h5store__' }), 404);
      expectError(await c.get(`/groups/${rootId}`, { h5path: '__h5store__' }), 404);
      expectError(await c.get(`/groups/${rootId}/links/__h5store__`), 404);
      expectError(await c.get('/', { h5path: `/__h5store__/${id}` }), 404);
      // A second anonymous group; both still hidden, root count still unchanged.
      const r2 = await c.post('/groups');
      expect(r2.status, r2.text).to.equal(201);
      expect(r2.json.id).to.not.equal(id);
      expect(await rootLinkCount()).to.equal(before);
      expect((await c.get('/groups')).json.groups).to.deep.equal(collBefore);
      // Linking the anonymous group makes it appear exactly once.
      const p = await c.put(`/groups/${rootId}/links/adopted`, { id });
      expect(p.status, p.text).to.equal(201);
      expect(await rootLinkCount()).to.equal(before + 1);
      const after = await c.get(`/groups/${rootId}/links`);
      expect(titles(after).filter((t) => RESERVED_RE.test(t))).to.deep.equal([]);
      expect(after.json.links.find((l: LinkItem) => l.title === 'adopted').id).to.equal(id);
      expect((await c.get('/groups')).json.groups).to.include(id);
      expect((await c.get('/groups')).json.groups).to.not.include(r2.json.id);
      // Clean up the link so later counts start from a known state.
      expect((await c.delete(`/groups/${rootId}/links/adopted`)).status).to.equal(200);
      expect(await rootLinkCount()).to.equal(before);
    });

    it('with link {id, name}: 201 and hard-linked under that name', async () => {
      const before = await rootLinkCount();
      const r = await c.post('/groups', { link: { id: rootId, name: 'linked' } });
      expect(r.status, r.text).to.equal(201);
      expect(r.json.id).to.match(GROUP_ID_RE);
      expect(r.json.root).to.equal(rootId);
      expect(r.json.linkCount).to.equal(0);
      expect(r.json.attributeCount).to.equal(0);
      expect(await rootLinkCount()).to.equal(before + 1);
      const l = await c.get(`/groups/${rootId}/links/linked`);
      expect(l.status).to.equal(200);
      expect(l.json.link).to.deep.include({ title: 'linked', class: 'H5L_TYPE_HARD', id: r.json.id, collection: 'groups' });
      const p = await c.get('/', { h5path: '/linked' });
      expect(p.status).to.equal(200);
      expect(p.json.id).to.equal(r.json.id);
      expect(p.json.class).to.equal('group');
    });

    it('with link: 409 when the name exists; 404 for an unknown parent; 400 for a bad name', async () => {
      expectError(await c.post('/groups', { link: { id: rootId, name: 'linked' } }), 409);
      const unknownParent = withAddr(rootId, 0xfffff0n);
      expectError(await c.post('/groups', { link: { id: unknownParent, name: 'x' } }), 404);
      expectError(await c.post('/groups', { link: { id: rootId, name: 'a/b' } }), 400);
      expectError(await c.post('/groups', { link: { id: rootId, name: 'x' }, h5path: '/x' }), 400);
      expectError(await c.get('/', { h5path: '/x' }), 404);
    });

    it('with h5path and implicit=1 creates the intermediate groups', async () => {
      const r = await c.post('/groups', { h5path: '/p1/p2/p3' }, { implicit: 1 });
      expect(r.status, r.text).to.equal(201);
      const p3 = await c.get('/', { h5path: '/p1/p2/p3' });
      expect(p3.status).to.equal(200);
      expect(p3.json.id).to.equal(r.json.id);
      const p2 = await c.get('/', { h5path: '/p1/p2' });
      expect(p2.status).to.equal(200);
      expect(p2.json.class).to.equal('group');
      expect(p2.json.linkCount).to.equal(1);
      const p1 = await c.get('/', { h5path: '/p1' });
      expect(p1.json.linkCount).to.equal(1);
      const l = await c.get(`/groups/${p2.json.id}/links/p3`);
      expect(l.json.link.id).to.equal(r.json.id);
      // An existing intermediate is reused, not replaced.
      const r2 = await c.post('/groups', { h5path: '/p1/p2/q3' }, { implicit: 1 });
      expect(r2.status, r2.text).to.equal(201);
      const p2b = await c.get('/', { h5path: '/p1/p2' });
      expect(p2b.json.id).to.equal(p2.json.id);
      expect(p2b.json.linkCount).to.equal(2);
    });

    it('with h5path relative to parent_id', async () => {
      const p1 = (await c.get('/', { h5path: '/p1' })).json.id as string;
      const r = await c.post('/groups', { h5path: 'rel', parent_id: p1 });
      expect(r.status, r.text).to.equal(201);
      expect((await c.get('/', { h5path: '/p1/rel' })).json.id).to.equal(r.json.id);
    });

    it('with h5path and no implicit: a missing parent is a 404 and nothing is created', async () => {
      const before = await rootLinkCount();
      expectError(await c.post('/groups', { h5path: '/m1/m2' }), 404);
      expectError(await c.get('/', { h5path: '/m1' }), 404);
      expect(await rootLinkCount()).to.equal(before);
      // A single-level h5path needs no intermediates.
      const r = await c.post('/groups', { h5path: '/m1' });
      expect(r.status, r.text).to.equal(201);
      expect(await rootLinkCount()).to.equal(before + 1);
    });

    it('with h5path: 409 when the name exists', async () => {
      expectError(await c.post('/groups', { h5path: '/p1/p2/p3' }), 409);
      expectError(await c.post('/groups', { h5path: '/p1/p2/p3' }, { implicit: 1 }), 409);
      expectError(await c.post('/groups', { h5path: '/m1' }), 409);
    });
  });

  describe('GET /groups/<id>', () => {
    let gid: string;
    let target: string;

    before(async () => {
      gid = await newGroup(rootId, 'counted');
      target = await newGroup(rootId, 'target');
      expect((await c.put(`/groups/${gid}/links/hard`, { id: target })).status).to.equal(201);
      expect((await c.put(`/groups/${gid}/links/soft`, { h5path: '/target' })).status).to.equal(201);
      expect((await c.put(`/groups/${gid}/links/ext`, { h5path: '/x', h5domain: '/other.h5' })).status).to.equal(201);
      for (const [n, v] of [['a1', 1], ['a2', 2]] as const) {
        const r = await c.put(`/groups/${gid}/attributes/${n}`, { type: 'H5T_STD_I32LE', value: v });
        expect(r.status, r.text).to.equal(201);
      }
    });

    it('has exact linkCount and attributeCount, and hrefs', async () => {
      const r = await c.get(`/groups/${gid}`);
      expect(r.status).to.equal(200);
      expect(r.json.id).to.equal(gid);
      expect(r.json.root).to.equal(rootId);
      expect(r.json.linkCount).to.equal(3);
      expect(r.json.attributeCount).to.equal(2);
      expect(r.json.created).to.be.a('number');
      expect(r.json.lastModified).to.be.a('number');
      expect(r.json).to.not.have.property('links');
      expect(r.json).to.not.have.property('attributes');
      for (const rel of ['self', 'links', 'root', 'home', 'attributes']) expect(rels(r), rel).to.include(rel);
      const t = await c.get(`/groups/${target}`);
      expect(t.json.linkCount).to.equal(0);
      expect(t.json.attributeCount).to.equal(0);
    });

    it('include_links gives a dict of links keyed by title', async () => {
      const r = await c.get(`/groups/${gid}`, { include_links: 1 });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.json.links).sort()).to.deep.equal(['ext', 'hard', 'soft']);
      expect(r.json.links.hard).to.include({ class: 'H5L_TYPE_HARD', id: target });
      expect(r.json.links.soft).to.include({ class: 'H5L_TYPE_SOFT', h5path: '/target' });
      expect(r.json.links.ext).to.include({ class: 'H5L_TYPE_EXTERNAL', h5path: '/x', h5domain: '/other.h5' });
      expect(r.json.linkCount).to.equal(3);
    });

    it('include_attrs gives a dict of attributes keyed by name', async () => {
      const r = await c.get(`/groups/${gid}`, { include_attrs: 1 });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.json.attributes).sort()).to.deep.equal(['a1', 'a2']);
      expect(r.json.attributes.a1.value).to.equal(1);
      expect(r.json.attributes.a2.value).to.equal(2);
      expect(r.json.attributeCount).to.equal(2);
    });

    it('include_links=0 does not include links', async () => {
      const r = await c.get(`/groups/${gid}`, { include_links: 0, include_attrs: 0 });
      expect(r.json).to.not.have.property('links');
      expect(r.json).to.not.have.property('attributes');
    });

    it('root linkCount equals the number of links listed', async () => {
      const g = await c.get(`/groups/${rootId}`);
      const l = await c.get(`/groups/${rootId}/links`);
      expect(g.json.linkCount).to.equal(l.json.links.length);
    });
  });

  describe('DELETE /groups/<id>', () => {
    // Own domain, so that a failing delete cannot disturb the other tests.
    let c: Client;
    let rootId: string;
    const rootLinkCount = async () => (await c.get(`/groups/${rootId}`)).json.linkCount as number;
    const newGroup = async (parent: string, name: string) => {
      const r = await c.post('/groups', { link: { id: parent, name } });
      expect(r.status, `POST /groups ${name}: ${r.text}`).to.equal(201);
      return r.json.id as string;
    };

    before(async () => {
      c = new Client(srv.url, '/gl-delete.h5');
      const r = await c.put('/');
      expect(r.status, r.text).to.equal(201);
      rootId = r.json.root;
      await newGroup(rootId, 'keep1');
      await newGroup(rootId, 'keep2');
    });

    it('deletes a leaf group: 200, then GET answers 410, and its link is gone', async () => {
      const id = await newGroup(rootId, 'leaf');
      const before = await rootLinkCount();
      const d = await c.delete(`/groups/${id}`);
      expect(d.status, d.text).to.equal(200);
      expectError(await c.get(`/groups/${id}`), 410);
      expect(await rootLinkCount()).to.equal(before - 1);
      expect(titles(await c.get(`/groups/${rootId}/links`))).to.deep.equal(['keep1', 'keep2']);
    });

    it('deletes a group with a child: 200, then both answer 410, and its link is gone', async () => {
      const id = await newGroup(rootId, 'doomed');
      const child = await newGroup(id, 'child');
      const before = await rootLinkCount();
      const d = await c.delete(`/groups/${id}`);
      expect(d.status, d.text).to.equal(200);
      expectError(await c.get(`/groups/${id}`), 410);
      expectError(await c.get(`/groups/${id}/links`), 410);
      expectError(await c.get(`/groups/${child}`), 410);
      expect(await rootLinkCount()).to.equal(before - 1);
      expect(titles(await c.get(`/groups/${rootId}/links`))).to.not.include('doomed');
      expectError(await c.delete(`/groups/${id}`), 410);
    });

    it('deletes an anonymous group', async () => {
      const r = await c.post('/groups', {});
      expect(r.status).to.equal(201);
      const before = await rootLinkCount();
      expect((await c.delete(`/groups/${r.json.id}`)).status).to.equal(200);
      expectError(await c.get(`/groups/${r.json.id}`), 410);
      expect(await rootLinkCount()).to.equal(before);
      for (const t of titles(await c.get(`/groups/${rootId}/links`))) expect(t).to.not.match(RESERVED_RE);
    });

    it('the root group cannot be deleted (403)', async () => {
      expectError(await c.delete(`/groups/${rootId}`), 403);
      expect((await c.get(`/groups/${rootId}`)).status).to.equal(200);
    });
  });

  describe('GET /groups collection', () => {
    it('lists linked groups (not root, not anonymous) sorted, with Limit/Marker paging', async () => {
      const anon = (await c.post('/groups', {})).json.id as string;
      const all = await c.get('/groups');
      expect(all.status).to.equal(200);
      const ids = all.json.groups as string[];
      expect(ids).to.not.include(rootId);
      expect(ids).to.not.include(anon);
      expect(ids).to.deep.equal([...ids].sort());
      expect(new Set(ids).size).to.equal(ids.length);
      for (const rel of ['self', 'root', 'home']) expect(rels(all)).to.include(rel);
      // Every group reachable from the root by hard links is listed.
      const p1 = (await c.get('/', { h5path: '/p1' })).json.id;
      const p3 = (await c.get('/', { h5path: '/p1/p2/p3' })).json.id;
      expect(ids).to.include.members([p1, p3]);
      expect(ids.length).to.be.greaterThan(5);
      for (const limit of [1, 2, 5]) {
        const { items } = await allPages<string>(
          async (marker) => {
            const r = await c.get('/groups', { Limit: limit, Marker: marker });
            expect(r.status, r.text).to.equal(200);
            return r.json.groups;
          },
          (x) => x,
          limit,
        );
        expect(items, `Limit=${limit}`).to.deep.equal(ids);
      }
      expectError(await c.get('/groups', { Limit: 'x' }), 400);
      expect((await c.delete(`/groups/${anon}`)).status).to.equal(200);
    });
  });

  describe('links', () => {
    let lg: string; // a group with many links
    let target: string;
    const names = ['b', 'a', 'C', 'aa', 'a1', 'Z', 'a b', 'zz', '_u', 'é'];

    before(async () => {
      lg = await newGroup(rootId, 'lg');
      target = await newGroup(rootId, 'tgt');
      for (const n of names) {
        const r = await c.put(`/groups/${lg}/links/${enc(n)}`, { id: target });
        expect(r.status, `${n}: ${r.text}`).to.equal(201);
      }
    });

    const sorted = () => [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));

    it('GET /groups/<id>/links lists in ascending name order with link fields', async () => {
      const r = await c.get(`/groups/${lg}/links`);
      expect(r.status).to.equal(200);
      expect(titles(r)).to.deep.equal(sorted());
      for (const l of r.json.links as LinkItem[]) {
        expect(l.class).to.equal('H5L_TYPE_HARD');
        expect(l.id).to.equal(target);
        expect(l.collection).to.equal('groups');
      }
      for (const rel of ['self', 'home', 'owner']) expect(rels(r)).to.include(rel);
    });

    it('Limit returns the first N', async () => {
      for (const n of [1, 3, 10, 20]) {
        const r = await c.get(`/groups/${lg}/links`, { Limit: n });
        expect(r.status).to.equal(200);
        expect(titles(r), `Limit=${n}`).to.deep.equal(sorted().slice(0, n));
      }
      expectError(await c.get(`/groups/${lg}/links`, { Limit: 'two' }), 400);
    });

    it('Marker (unquoted) continues after the named link; pages concatenate', async () => {
      const r = await c.get(`/groups/${lg}/links`, { Marker: 'a1' });
      expect(r.status).to.equal(200);
      const s = sorted();
      expect(titles(r)).to.deep.equal(s.slice(s.indexOf('a1') + 1));
      for (const limit of [1, 3, 4]) {
        const { items } = await allPages<LinkItem>(
          async (marker) => {
            const p = await c.get(`/groups/${lg}/links`, { Limit: limit, Marker: marker });
            expect(p.status, p.text).to.equal(200);
            return p.json.links;
          },
          (l) => l.title,
          limit,
        );
        expect(items.map((l) => l.title), `Limit=${limit}`).to.deep.equal(s);
      }
    });

    it('Marker in double quotes is accepted too (DESIGN.md 6)', async () => {
      const s = sorted();
      const r = await c.get(`/groups/${lg}/links`, { Marker: '"a1"', Limit: 2 });
      expect(r.status, r.text).to.equal(200);
      expect(titles(r)).to.deep.equal(s.slice(s.indexOf('a1') + 1, s.indexOf('a1') + 3));
      const r2 = await c.get(`/groups/${lg}/links`, { Marker: '"a b"' });
      expect(r2.status, r2.text).to.equal(200);
      expect(titles(r2)).to.deep.equal(s.slice(s.indexOf('a b') + 1));
      const r3 = await c.get(`/groups/${lg}/links`, { Marker: 'é' });
      expect(r3.status).to.equal(200);
      expect(titles(r3)).to.deep.equal([]);
    });

    it('a Marker that is not a link answers 404', async () => {
      expectError(await c.get(`/groups/${lg}/links`, { Marker: 'nope' }), 404);
      expectError(await c.get(`/groups/${lg}/links`, { Marker: '"nope"' }), 404);
    });

    it('CreateOrder=1 on a group created with CreateOrder returns creation order', async () => {
      const r = await c.post('/groups', { link: { id: rootId, name: 'ordered' }, creationProperties: { CreateOrder: 1 } });
      expect(r.status, r.text).to.equal(201);
      const og = r.json.id as string;
      const g = await c.get(`/groups/${og}`);
      expect(g.json.creationProperties).to.deep.include({ CreateOrder: 1 });
      const order = ['zeta', 'alpha', 'Mid', 'beta', 'aa'];
      for (const n of order) expect((await c.put(`/groups/${og}/links/${n}`, { h5path: `/${n}` })).status).to.equal(201);
      const co = await c.get(`/groups/${og}/links`, { CreateOrder: 1 });
      expect(co.status).to.equal(200);
      expect(titles(co)).to.deep.equal(order);
      const co2 = await c.get(`/groups/${og}/links`, { CreateOrder: 1, Limit: 2, Marker: 'alpha' });
      expect(titles(co2)).to.deep.equal(['Mid', 'beta']);
      const byName = await c.get(`/groups/${og}/links`);
      expect(titles(byName)).to.deep.equal([...order].sort());
      const byName0 = await c.get(`/groups/${og}/links`, { CreateOrder: 0 });
      expect(titles(byName0)).to.deep.equal([...order].sort());
    });

    it('GET a hard link: fields, hrefs, ETag', async () => {
      const r = await c.get(`/groups/${lg}/links/aa`);
      expect(r.status).to.equal(200);
      expect(r.json.link).to.deep.equal({ title: 'aa', class: 'H5L_TYPE_HARD', id: target, collection: 'groups' });
      expect(r.json.created).to.be.a('number');
      expect(r.json.lastModified).to.be.a('number');
      const rs = rels(r);
      for (const rel of ['self', 'home', 'owner', 'target']) expect(rs, rel).to.include(rel);
      const href = (rel: string) => (r.json.hrefs as { rel: string; href: string }[]).find((h) => h.rel === rel)!.href;
      expect(href('target')).to.include(`/groups/${target}`);
      expect(href('owner')).to.include(`/groups/${lg}`);
      expect(href('self')).to.include(`/groups/${lg}/links/aa`);
      expect(r.headers.get('etag')).to.be.a('string').and.not.equal('');
    });

    it('GET a hard link to a dataset gives collection datasets', async () => {
      const ds = await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [2], link: { id: lg, name: 'dset' } });
      expect(ds.status, ds.text).to.equal(201);
      const r = await c.get(`/groups/${lg}/links/dset`);
      expect(r.json.link).to.deep.equal({ title: 'dset', class: 'H5L_TYPE_HARD', id: ds.json.id, collection: 'datasets' });
      expect((r.json.hrefs as { rel: string; href: string }[]).find((h) => h.rel === 'target')!.href).to.include(`/datasets/${ds.json.id}`);
      expect((await c.delete(`/groups/${lg}/links/dset`)).status).to.equal(200);
    });

    it('GET a soft link: h5path, no id/collection/target', async () => {
      expect((await c.put(`/groups/${lg}/links/sl`, { h5path: '/tgt' })).status).to.equal(201);
      const r = await c.get(`/groups/${lg}/links/sl`);
      expect(r.status).to.equal(200);
      expect(r.json.link).to.deep.equal({ title: 'sl', class: 'H5L_TYPE_SOFT', h5path: '/tgt' });
      const rs = rels(r);
      for (const rel of ['self', 'home', 'owner']) expect(rs, rel).to.include(rel);
      expect(rs).to.not.include('target');
      expect(r.headers.get('etag')).to.be.a('string');
    });

    it('GET an external link: h5path and h5domain', async () => {
      expect((await c.put(`/groups/${lg}/links/el`, { h5path: '/some/obj', h5domain: '/elsewhere/file.h5' })).status).to.equal(201);
      const r = await c.get(`/groups/${lg}/links/el`);
      expect(r.status).to.equal(200);
      expect(r.json.link).to.deep.equal({ title: 'el', class: 'H5L_TYPE_EXTERNAL', h5path: '/some/obj', h5domain: '/elsewhere/file.h5', file: '/elsewhere/file.h5' });
      expect(rels(r)).to.not.include('target');
    });

    it('a missing link answers 404', async () => {
      expectError(await c.get(`/groups/${lg}/links/missing`), 404);
    });

    it('PUT hard link: 201 new, 200 identical, 409 different', async () => {
      const other = await newGroup(rootId, 'other');
      expect((await c.put(`/groups/${lg}/links/h1`, { id: target })).status).to.equal(201);
      expect((await c.put(`/groups/${lg}/links/h1`, { id: target })).status).to.equal(200);
      expectError(await c.put(`/groups/${lg}/links/h1`, { id: other }), 409);
      expectError(await c.put(`/groups/${lg}/links/h1`, { h5path: '/tgt' }), 409);
      expect((await c.get(`/groups/${lg}/links/h1`)).json.link.id).to.equal(target);
    });

    it('PUT soft link: 201 new, 200 identical, 409 different', async () => {
      expect((await c.put(`/groups/${lg}/links/s1`, { h5path: '/a/b' })).status).to.equal(201);
      expect((await c.put(`/groups/${lg}/links/s1`, { h5path: '/a/b' })).status).to.equal(200);
      expectError(await c.put(`/groups/${lg}/links/s1`, { h5path: '/a/c' }), 409);
      expectError(await c.put(`/groups/${lg}/links/s1`, { h5path: '/a/b', h5domain: '/d.h5' }), 409);
      expectError(await c.put(`/groups/${lg}/links/s1`, { id: target }), 409);
      expect((await c.get(`/groups/${lg}/links/s1`)).json.link.h5path).to.equal('/a/b');
    });

    it('PUT external link: 201 new, 200 identical, 409 different', async () => {
      expect((await c.put(`/groups/${lg}/links/e1`, { h5path: '/x', h5domain: '/f/g.h5' })).status).to.equal(201);
      expect((await c.put(`/groups/${lg}/links/e1`, { h5path: '/x', h5domain: '/f/g.h5' })).status).to.equal(200);
      expectError(await c.put(`/groups/${lg}/links/e1`, { h5path: '/x', h5domain: '/f/h.h5' }), 409);
      expectError(await c.put(`/groups/${lg}/links/e1`, { h5path: '/y', h5domain: '/f/g.h5' }), 409);
      expectError(await c.put(`/groups/${lg}/links/e1`, { h5path: '/x' }), 409);
      const r = await c.get(`/groups/${lg}/links/e1`);
      expect(r.json.link).to.deep.equal({ title: 'e1', class: 'H5L_TYPE_EXTERNAL', h5path: '/x', h5domain: '/f/g.h5', file: '/f/g.h5' });
    });

    it('PUT link errors: bad bodies 400, unknown hard target 404, unknown group 404', async () => {
      expectError(await c.put(`/groups/${lg}/links/bad1`, {}), 400);
      expectError(await c.put(`/groups/${lg}/links/bad2`, { id: target, h5path: '/x' }), 400);
      expectError(await c.put(`/groups/${lg}/links/bad3`, { id: 'not-an-id' }), 400);
      expectError(await c.put(`/groups/${lg}/links/bad4`, { h5path: '/x', class: 'H5L_TYPE_USER_DEFINED' }), 400);
      const unknown = withAddr(target, 0xfffff0n);
      expectError(await c.put(`/groups/${lg}/links/bad5`, { id: unknown }), 404);
      expectError(await c.put(`/groups/${unknown}/links/x`, { h5path: '/x' }), 404);
      for (const n of ['bad1', 'bad2', 'bad3', 'bad4', 'bad5']) expectError(await c.get(`/groups/${lg}/links/${n}`), 404);
    });

    it('PUT /groups/<id>/links creates several links: 201, then 200 when identical, 409 when different', async () => {
      const g = await newGroup(rootId, 'bulk');
      const body = { links: { h: { id: target }, s: { h5path: '/tgt' }, e: { h5path: '/p', h5domain: '/q.h5' } } };
      expect((await c.put(`/groups/${g}/links`, body)).status).to.equal(201);
      expect((await c.put(`/groups/${g}/links`, body)).status).to.equal(200);
      expectError(await c.put(`/groups/${g}/links`, { links: { s: { h5path: '/other' } } }), 409);
      const r = await c.get(`/groups/${g}/links`);
      expect(titles(r)).to.deep.equal(['e', 'h', 's']);
      expect((await c.get(`/groups/${g}`)).json.linkCount).to.equal(3);
    });

    it('DELETE a link: 200, then GET 410 (or 404); the target survives', async () => {
      expect((await c.put(`/groups/${lg}/links/tmp`, { id: target })).status).to.equal(201);
      const before = (await c.get(`/groups/${lg}`)).json.linkCount as number;
      const d = await c.delete(`/groups/${lg}/links/tmp`);
      expect(d.status, d.text).to.equal(200);
      const g = await c.get(`/groups/${lg}/links/tmp`);
      expect(g.status).to.be.oneOf([404, 410]);
      expectError(g, g.status);
      expect((await c.get(`/groups/${lg}`)).json.linkCount).to.equal(before - 1);
      expect(titles(await c.get(`/groups/${lg}/links`))).to.not.include('tmp');
      expect((await c.get(`/groups/${target}`)).status).to.equal(200);
      // Soft and external links delete the same way.
      expect((await c.delete(`/groups/${lg}/links/sl`)).status).to.equal(200);
      expect((await c.get(`/groups/${lg}/links/sl`)).status).to.be.oneOf([404, 410]);
      expect((await c.delete(`/groups/${lg}/links/el`)).status).to.equal(200);
      expect((await c.get(`/groups/${lg}/links/el`)).status).to.be.oneOf([404, 410]);
      // A link that never existed.
      expectError(await c.delete(`/groups/${lg}/links/never-existed`), 404);
      // Re-creating a deleted name works.
      expect((await c.put(`/groups/${lg}/links/tmp`, { h5path: '/again' })).status).to.equal(201);
      expect((await c.get(`/groups/${lg}/links/tmp`)).json.link.h5path).to.equal('/again');
    });

    it('deleting the last link to a group leaves it anonymous, reachable by id and linked again, until deleted by id (issue #25)', async () => {
      const g = await newGroup(rootId, 'last-link');
      expect((await c.put(`/groups/${g}/links/child`, { h5path: '/x' })).status).to.equal(201);
      expect((await c.delete(`/groups/${rootId}/links/last-link`)).status).to.equal(200);
      const r = await c.get(`/groups/${g}`, { getalias: 1 });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.alias).to.deep.equal([]);
      expect((await c.get('/groups')).json.groups).to.not.include(g);
      // linked again under another name, with what it held
      expect((await c.put(`/groups/${rootId}/links/relinked`, { id: g })).status).to.equal(201);
      expect((await c.get(`/groups/${g}`, { getalias: 1 })).json.alias).to.deep.equal(['/relinked']);
      expect((await c.get(`/groups/${g}/links/child`)).json.link.h5path).to.equal('/x');
      // deleted by id: gone
      expect((await c.delete(`/groups/${rootId}/links/relinked`)).status).to.equal(200);
      expect((await c.delete(`/groups/${g}`)).status).to.equal(200);
      const gone = await c.get(`/groups/${g}`);
      expect(gone.status).to.be.oneOf([404, 410]);
      expectError(gone, gone.status);
    });
  });

  describe('unicode link names', () => {
    const uni = ['température', 'データ', '😀 emoji', 'mixed ünï 数据 🚀', 'space and ?query&amp=1', 'percent%20sign', 'plus+sign'];
    let ug: string;
    let target: string;

    before(async () => {
      ug = await newGroup(rootId, 'unicode');
      target = await newGroup(rootId, 'utarget');
    });

    it('PUT/GET round-trip through URL encoding, and listings show the decoded names', async () => {
      for (const n of uni) {
        const p = await c.put(`/groups/${ug}/links/${enc(n)}`, { h5path: `/target/${n}` });
        expect(p.status, `${n}: ${p.text}`).to.equal(201);
        const g = await c.get(`/groups/${ug}/links/${enc(n)}`);
        expect(g.status, n).to.equal(200);
        expect(g.json.link.title).to.equal(n);
        expect(g.json.link.h5path).to.equal(`/target/${n}`);
      }
      const l = await c.get(`/groups/${ug}/links`);
      expect(titles(l)).to.deep.equal([...uni].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
      const inc = await c.get(`/groups/${ug}`, { include_links: 1 });
      expect(Object.keys(inc.json.links).sort()).to.deep.equal([...uni].sort());
      expect(inc.json.linkCount).to.equal(uni.length);
      // The listing's href for each link leads back to the same link.
      for (const item of l.json.links as LinkItem[]) {
        const u = new URL(item.href!);
        const r = await fetch(u);
        expect(r.status, item.href).to.equal(200);
        expect(((await r.json()) as { link: LinkItem }).link.title).to.equal(item.title);
      }
    });

    it('Marker with a unicode name', async () => {
      const s = [...uni].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const r = await c.get(`/groups/${ug}/links`, { Marker: 'température', Limit: 2 });
      expect(r.status).to.equal(200);
      const i = s.indexOf('température');
      expect(titles(r)).to.deep.equal(s.slice(i + 1, i + 3));
    });

    it('hard links and POST /groups with unicode names', async () => {
      const r = await c.post('/groups', { link: { id: ug, name: 'グループ' } });
      expect(r.status, r.text).to.equal(201);
      const g = await c.get(`/groups/${ug}/links/${enc('グループ')}`);
      expect(g.json.link).to.deep.equal({ title: 'グループ', class: 'H5L_TYPE_HARD', id: r.json.id, collection: 'groups' });
      expect((await c.put(`/groups/${ug}/links/${enc('ссылка')}`, { id: target })).status).to.equal(201);
      expect((await c.put(`/groups/${ug}/links/${enc('ссылка')}`, { id: target })).status).to.equal(200);
      const p = await c.get('/', { h5path: '/unicode/グループ' });
      expect(p.status).to.equal(200);
      expect(p.json.id).to.equal(r.json.id);
    });

    it('names are URL-decoded: %20 and + and %3F', async () => {
      expect((await c.put(`/groups/${ug}/links/a%20b%3Fc`, { h5path: '/x' })).status).to.equal(201);
      const r = await c.get(`/groups/${ug}/links/${enc('a b?c')}`);
      expect(r.status).to.equal(200);
      expect(r.json.link.title).to.equal('a b?c');
      expect(titles(await c.get(`/groups/${ug}/links`))).to.include('a b?c');
    });

    it('DELETE with URL-encoded unicode names', async () => {
      for (const n of uni) {
        const d = await c.delete(`/groups/${ug}/links/${enc(n)}`);
        expect(d.status, `${n}: ${d.text}`).to.equal(200);
        expect((await c.get(`/groups/${ug}/links/${enc(n)}`)).status, n).to.be.oneOf([404, 410]);
      }
      const l = await c.get(`/groups/${ug}/links`);
      for (const n of uni) expect(titles(l)).to.not.include(n);
      expect(titles(l).sort()).to.deep.equal(['a b?c', 'グループ', 'ссылка'].sort());
    });
  });

  describe('after all', () => {
    it('no HDF5 ids are left open', async () => {
      const r = await c.get('/info');
      expect(r.json.open_hdf5_ids).to.equal(0);
    });
  });
});
