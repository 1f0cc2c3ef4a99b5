/**
 * Path lookups, links and group creation properties of the HDF REST dialect (issue #12, items 2,
 * 4 and 5; wire-reference 1.3, 1.4, 2.1, 2.2): `h5path` on every route that takes it, soft and
 * external links followed only when asked (external ones only into domains the requester may
 * read), external `h5domain` exactly as stored, the bulk link routes, link names with `/`, and
 * `creationProperties`.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { expectError } from '../helpers/apiExtra.js';
import { python, pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';

interface LinkItem {
  title: string;
  class: string;
  id?: string;
  collection?: string;
  h5path?: string;
  h5domain?: string;
  href?: string;
}
const titles = (links: LinkItem[]) => links.map((l) => l.title);

describe('HDF REST dialect: paths, links, creation properties (issue #12)', function () {
  this.timeout(120000);
  let srv: TestServer;
  let root: string;
  let api: Client;
  let c: Client;
  const ids: Record<string, string> = {};

  before(async () => {
    root = tempRoot('h5store-dialect-links-');
    fs.mkdirSync(path.join(root, 'sub'));
    // /p.h5: g1/g2/d (dataset), g1/t (committed type), soft and external links; other domains as targets
    python(
      `import h5py, numpy as np, sys, os
r = sys.argv[1]
with h5py.File(os.path.join(r, 'p.h5'), 'w') as f:
    f.create_group('g1/g2')
    f['g1/g2/d'] = np.arange(4)
    f['g1/t'] = np.dtype('<f4')
    f['s'] = h5py.SoftLink('/g1')
    f['g1/sd'] = h5py.SoftLink('g2/d')
    f['dang'] = h5py.SoftLink('/nope')
    f['ext'] = h5py.ExternalLink('other.h5', '/x')
    f['extabs'] = h5py.ExternalLink('/sub/deep.h5', '/')
    f['extmiss'] = h5py.ExternalLink('missing.h5', '/')
    f['ext2'] = h5py.ExternalLink('chain.h5', '/to')
with h5py.File(os.path.join(r, 'other.h5'), 'w') as f:
    f.create_group('x/y')
    f['x/soft'] = h5py.SoftLink('/x/y')
with h5py.File(os.path.join(r, 'chain.h5'), 'w') as f:
    f['to'] = h5py.ExternalLink('other.h5', '/x/y')
with h5py.File(os.path.join(r, 'sub', 'deep.h5'), 'w') as f:
    f.create_group('in')
with h5py.File(os.path.join(r, 'sub', 'other.h5'), 'w') as f:
    f.create_group('x/z')
with h5py.File(os.path.join(r, 'sub', 'rel.h5'), 'w') as f:
    f['ext'] = h5py.ExternalLink('other.h5', '/x')`,
      [root],
    );
    srv = await startServer({ root });
    api = new Client(srv.url);
    c = api.with('/p.h5');
    ids.root = (await c.get('/')).json.root;
    for (const p of ['/g1', '/g1/g2', '/g1/g2/d', '/g1/t']) ids[p] = (await c.get('/', { h5path: p })).json.id;
  });
  after(async () => srv?.stop());

  describe('h5path lookups (item 2)', () => {
    it('GET /?h5path= absolute and relative to parent_id: object JSON plus domain and class', async () => {
      const d = await c.get('/', { h5path: '/g1/g2/d' });
      expect(d.status).to.equal(200);
      expect(d.json).to.include({ id: ids['/g1/g2/d'], class: 'dataset', domain: '/p.h5' });
      expect(d.json.shape.dims).to.deep.equal([4]);
      const rel = await c.get('/', { h5path: 'g2/d', parent_id: ids['/g1'] });
      expect(rel.json.id).to.equal(ids['/g1/g2/d']);
      const dot = await c.get('/', { h5path: './g2', parent_id: ids['/g1'] });
      expect(dot.json).to.include({ id: ids['/g1/g2'], class: 'group' });
      const t = await c.get('/', { h5path: '/g1/t' });
      expect(t.json).to.include({ class: 'datatype', id: ids['/g1/t'] });
      expect((await c.get('/', { h5path: '/' })).json.id).to.equal(ids.root);
    });

    it('GET /groups/, /datasets/, /datatypes/ with h5path (and parent_id): the object of that collection', async () => {
      expect((await c.get('/groups/', { h5path: '/g1/g2' })).json.id).to.equal(ids['/g1/g2']);
      expect((await c.get('/groups', { h5path: 'g2', parent_id: ids['/g1'] })).json.id).to.equal(ids['/g1/g2']);
      expect((await c.get('/datasets/', { h5path: '/g1/g2/d' })).json.id).to.equal(ids['/g1/g2/d']);
      expect((await c.get('/datasets/', { h5path: 'd', parent_id: ids['/g1/g2'] })).json.id).to.equal(ids['/g1/g2/d']);
      expect((await c.get('/datatypes/', { h5path: '/g1/t' })).json.id).to.equal(ids['/g1/t']);
      expect((await c.get(`/groups/${ids['/g1']}`, { h5path: 'g2/d' })).json.id).to.equal(ids['/g1/g2/d']);
    });

    it('a path naming an object of another collection is 400', async () => {
      expectError(await c.get('/groups/', { h5path: '/g1/g2/d' }), 400);
      expectError(await c.get('/datasets/', { h5path: '/g1' }), 400);
      expectError(await c.get('/datatypes/', { h5path: '/g1/g2/d' }), 400);
      expectError(await c.get('/datasets/', { h5path: '/g1/t' }), 400);
    });

    it('a path that does not exist is 404 on every lookup route', async () => {
      for (const p of ['/nope', '/g1/nope', '/g1/g2/d/below', 'g2/zzz']) {
        expectError(await c.get('/', { h5path: p }), 404, p);
        // a relative path needs the group it starts from on the collection routes (HSDS: 400, issue #25)
        const status = p.startsWith('/') ? 404 : 400;
        expectError(await c.get('/groups/', { h5path: p }), status, p);
        expectError(await c.get('/datasets/', { h5path: p }), status, p);
        expectError(await c.get('/datatypes/', { h5path: p }), status, p);
        if (!p.startsWith('/')) expectError(await c.get('/groups/', { h5path: p, parent_id: ids['/g1'] }), 404, p);
      }
      expectError(await c.post('/', { h5paths: ['/g1', '/nope'] }), 404);
    });

    it('soft links are crossed only with follow_soft_links=1 (else 400); a dangling one is 404', async () => {
      for (const p of ['/s', '/s/g2', '/g1/sd']) {
        expectError(await c.get('/', { h5path: p }), 400, p);
        expectError(await c.get('/groups/', { h5path: p }), 400, p);
      }
      expect((await c.get('/', { h5path: '/s', follow_soft_links: 1 })).json.id).to.equal(ids['/g1']);
      expect((await c.get('/', { h5path: '/s/g2/d', follow_soft_links: 1 })).json.id).to.equal(ids['/g1/g2/d']);
      expect((await c.get('/datasets/', { h5path: '/g1/sd', follow_soft_links: 1 })).json.id).to.equal(ids['/g1/g2/d']);
      expectError(await c.get('/', { h5path: '/dang', follow_soft_links: 1 }), 404);
    });

    it('external links are crossed only with follow_external_links=1, into the domain they name', async () => {
      expectError(await c.get('/', { h5path: '/ext' }), 400);
      expectError(await c.get('/', { h5path: '/ext/y', follow_soft_links: 1 }), 400);
      const y = await c.get('/', { h5path: '/ext/y', follow_external_links: 1 });
      expect(y.status, y.text).to.equal(200);
      expect(y.json).to.include({ class: 'group', domain: '/other.h5' });
      const direct = await api.with('/other.h5').get('/', { h5path: '/x/y' });
      expect(y.json.id).to.equal(direct.json.id);
      // soft links in the other file follow their own flag
      expectError(await c.get('/', { h5path: '/ext/soft', follow_external_links: 1 }), 400);
      expect((await c.get('/', { h5path: '/ext/soft', follow_external_links: 1, follow_soft_links: 1 })).json.id).to.equal(direct.json.id);
      // an absolute name is a domain path; a chain of external links is followed
      expect((await c.get('/groups/', { h5path: '/extabs/in', follow_external_links: 1 })).json.domain).to.equal('/sub/deep.h5');
      expect((await c.get('/', { h5path: '/ext2', follow_external_links: 1 })).json.id).to.equal(direct.json.id);
      // a relative name is resolved against the linking domain's folder
      const rel = await api.with('/sub/rel.h5').get('/', { h5path: '/ext/z', follow_external_links: 1 });
      expect(rel.json.domain).to.equal('/sub/other.h5');
      // a missing target domain is 404
      expectError(await c.get('/', { h5path: '/extmiss', follow_external_links: 1 }), 404);
    });

    it('POST / with h5paths: each path, same flags', async () => {
      const r = await c.post('/', { h5paths: ['/g1', '/g1/g2/d', '/s/g2'] }, { follow_soft_links: 1 });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.h5paths['/g1']).to.include({ id: ids['/g1'], class: 'group', domain: '/p.h5' });
      expect(r.json.h5paths['/g1/g2/d']).to.include({ id: ids['/g1/g2/d'], class: 'dataset' });
      expect(r.json.h5paths['/s/g2'].id).to.equal(ids['/g1/g2']);
      expectError(await c.post('/', { h5paths: ['/s/g2'] }), 400);
      const e = await c.post('/', { h5paths: ['/ext/y'] }, { follow_external_links: 1 });
      expect(e.json.h5paths['/ext/y'].domain).to.equal('/other.h5');
      expectError(await c.post('/', { h5paths: '/g1' }), 400);
    });

    it('POST / with ignore_missing=1: paths that lead nowhere are left out, the rest answered (the viewer lists dangling links so)', async () => {
      const flags = { follow_soft_links: 1, follow_external_links: 1, ignore_missing: 1 };
      const r = await c.post('/', { h5paths: ['/g1', '/nope', '/dang', '/extmiss', '/g1/g2/d'] }, flags);
      expect(r.status, r.text).to.equal(200);
      expect(Object.keys(r.json.h5paths).sort()).to.deep.equal(['/g1', '/g1/g2/d']);
      // other errors still fail the batch: a link crossed without its flag
      expectError(await c.post('/', { h5paths: ['/s/g2', '/nope'] }, { ignore_missing: 1 }), 400);
      expectError(await c.post('/', { h5paths: ['/g1', '/nope'] }, { ignore_missing: 0 }), 404);
    });
  });

  describe('links (item 4)', () => {
    let L: string; // a group for link tests
    before(async () => {
      L = (await c.post('/groups', { link: { id: ids.root, name: 'L' } })).json.id;
      for (const n of ['b', 'a', 'c', 'sp ace', 'per%cent', 'q?x', 'h#sh', 'ünï']) {
        expect((await c.post('/groups', { link: { id: L, name: n } })).status, n).to.equal(201);
      }
    });

    it('external links report h5domain exactly as stored (written by h5py or through the API)', async () => {
      const e = await c.get(`/groups/${ids.root}/links/ext`);
      expect(e.json.link).to.deep.equal({ title: 'ext', class: 'H5L_TYPE_EXTERNAL', h5path: '/x', h5domain: 'other.h5', file: 'other.h5' });
      const abs = await c.get(`/groups/${ids.root}/links/extabs`);
      expect(abs.json.link.h5domain).to.equal('/sub/deep.h5');
      expect((await c.put(`/groups/${L}/links/e1`, { h5path: 'somewhere', h5domain: 'somefile' })).status).to.equal(201);
      expect((await c.put(`/groups/${L}/links/e2`, { h5path: '/x', h5domain: '/home/u/other.h5' })).status).to.equal(201);
      expect((await c.get(`/groups/${L}/links/e1`)).json.link).to.deep.equal({ title: 'e1', class: 'H5L_TYPE_EXTERNAL', h5path: 'somewhere', h5domain: 'somefile', file: 'somefile' });
      expect((await c.get(`/groups/${L}/links/e2`)).json.link.h5domain).to.equal('/home/u/other.h5');
      const listed = (await c.get(`/groups/${L}/links`)).json.links as LinkItem[];
      expect(listed.find((l) => l.title === 'e1')!.h5domain).to.equal('somefile');
      // identical PUT 200, another file 409; h5py reads the stored names
      expect((await c.put(`/groups/${L}/links/e1`, { h5path: 'somewhere', h5domain: 'somefile' })).status).to.equal(200);
      expectError(await c.put(`/groups/${L}/links/e1`, { h5path: 'somewhere', h5domain: '/somefile' }), 409);
      await new Promise((r) => setTimeout(r, 50));
      const py = pythonJson(
        `import h5py, json, sys
with h5py.File(sys.argv[1], 'r') as f:
    print(json.dumps({k: [f['L'].get(k, getlink=True).filename, f['L'].get(k, getlink=True).path] for k in ('e1', 'e2')}))`,
        [path.join(root, 'p.h5')],
        { lockFree: true },
      );
      expect(py).to.deep.equal({ e1: ['somefile', 'somewhere'], e2: ['/home/u/other.h5', '/x'] });
      for (const t of ['e1', 'e2']) expect((await c.delete(`/groups/${L}/links/${t}`)).status).to.equal(200);
    });

    it('POST .../links {"titles"}: those links in the order asked, no collection or href; missing 404, deleted 410', async () => {
      const r = await c.post(`/groups/${L}/links`, { titles: ['c', 'sp ace', 'a'] });
      expect(r.status, r.text).to.equal(200);
      expect(titles(r.json.links)).to.deep.equal(['c', 'sp ace', 'a']);
      for (const l of r.json.links as LinkItem[]) {
        expect(l.class).to.equal('H5L_TYPE_HARD');
        expect(l.id).to.match(/^g-/);
        expect(l).to.not.have.property('collection');
        expect(l).to.not.have.property('href');
        expect(l).to.have.property('created');
      }
      expectError(await c.post(`/groups/${L}/links`, { titles: ['a', 'nope'] }), 404);
      expect((await c.post('/groups', { link: { id: L, name: 'tmp' } })).status).to.equal(201);
      expect((await c.delete(`/groups/${L}/links/tmp`)).status).to.equal(200);
      expectError(await c.post(`/groups/${L}/links`, { titles: ['tmp'] }), 410);
      expectError(await c.post(`/groups/${L}/links`, { titles: 'a' }), 400);
      expectError(await c.post(`/groups/${L}/links`, {}), 400);
    });

    it('POST .../links with grp_ids (list, with or without titles; dict of titles): links keyed by group id (one group: a plain list, as HSDS)', async () => {
      const list = await c.post(`/groups/${L}/links`, { grp_ids: [ids['/g1'], ids['/g1/g2']] });
      expect(list.status, list.text).to.equal(200);
      expect(Object.keys(list.json.links)).to.deep.equal([ids['/g1'], ids['/g1/g2']]);
      expect(titles(list.json.links[ids['/g1']])).to.deep.equal(['g2', 'sd', 't']);
      expect(titles(list.json.links[ids['/g1/g2']])).to.deep.equal(['d']);
      const withTitles = await c.post(`/groups/${L}/links`, { grp_ids: [ids['/g1']], titles: ['t'] });
      expect(titles(withTitles.json.links)).to.deep.equal(['t']);
      const dict = await c.post(`/groups/${L}/links`, { grp_ids: { [ids['/g1']]: ['t', 'g2'], [L]: ['a'] } });
      expect(titles(dict.json.links[ids['/g1']])).to.deep.equal(['t', 'g2']);
      expect(titles(dict.json.links[L])).to.deep.equal(['a']);
      const pattern = await c.post(`/groups/${L}/links`, { grp_ids: [ids['/g1']] }, { pattern: 's*' });
      expect(titles(pattern.json.links)).to.deep.equal(['sd']);
      expectError(await c.post(`/groups/${L}/links`, { grp_ids: { [ids['/g1']]: ['nope'] } }), 404);
      expectError(await c.post(`/groups/${L}/links`, { grp_ids: ['g-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c'] }), 404);
      expectError(await c.post(`/groups/${L}/links`, { grp_ids: 'x' }), 400);
    });

    it('follow_links=1 (GET and POST): every group below, keyed by id; Limit caps the total; not with titles', async () => {
      const r = await c.get(`/groups/${ids['/g1']}/links`, { follow_links: 1 });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.json.links).sort()).to.deep.equal([ids['/g1'], ids['/g1/g2']].sort());
      expect(titles(r.json.links[ids['/g1/g2']])).to.deep.equal(['d']);
      for (const l of r.json.links[ids['/g1']] as LinkItem[]) {
        expect(l).to.not.have.property('collection');
        expect(l).to.not.have.property('href');
      }
      const p = await c.post(`/groups/${ids['/g1']}/links`, {}, { follow_links: 1 });
      expect(p.json.links).to.deep.equal(r.json.links);
      const all = await c.get(`/groups/${ids.root}/links`, { follow_links: 1 });
      const total = Object.values(all.json.links as Record<string, LinkItem[]>).reduce((n, l) => n + l.length, 0);
      const limited = await c.get(`/groups/${ids.root}/links`, { follow_links: 1, Limit: 3 });
      expect(Object.values(limited.json.links as Record<string, LinkItem[]>).reduce((n, l) => n + l.length, 0)).to.equal(3);
      expect(total).to.be.greaterThan(3);
      const pat = await c.get(`/groups/${ids.root}/links`, { follow_links: 1, pattern: 'd' });
      expect(titles(pat.json.links[ids['/g1/g2']])).to.deep.equal(['d']);
      expect(pat.json.links[ids.root]).to.deep.equal([]);
      expectError(await c.post(`/groups/${ids['/g1']}/links`, { titles: ['g2'] }, { follow_links: 1 }), 400);
    });

    it('pattern= globs on GET .../links', async () => {
      expect(titles((await c.get(`/groups/${L}/links`, { pattern: '[ab]' })).json.links)).to.deep.equal(['a', 'b']);
      expect(titles((await c.get(`/groups/${L}/links`, { pattern: '*%*' })).json.links)).to.deep.equal(['per%cent']);
      expect(titles((await c.get(`/groups/${L}/links`, { pattern: '?' })).json.links)).to.deep.equal(['a', 'b', 'c']);
    });

    it('PUT .../links {"links"}: 201 when any is new, 200 when all exist identically, 409 (and nothing written) on a conflict', async () => {
      const G = (await c.post('/groups', { link: { id: L, name: 'bulk' } })).json.id;
      const links = { h1: { id: ids['/g1'] }, s1: { h5path: '/g1' }, x1: { h5path: '/x', h5domain: 'other.h5' } };
      expect((await c.put(`/groups/${G}/links`, { links })).status).to.equal(201);
      expect((await c.put(`/groups/${G}/links`, { links })).status).to.equal(200);
      const bad = await c.put(`/groups/${G}/links`, { links: { new1: { h5path: '/a' }, h1: { id: ids['/g1/g2'] } } });
      expectError(bad, 409);
      expect(titles((await c.get(`/groups/${G}/links`)).json.links)).to.deep.equal(['h1', 's1', 'x1']);
      expectError(await c.put(`/groups/${G}/links`, { links: { ok: { h5path: '/a' }, bad: { nothing: 1 } } }), 400);
      expectError(await c.put(`/groups/${G}/links`, { links: { ok: { h5path: '/a' }, h: { id: 'g-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c' } } }), 404);
      expect(titles((await c.get(`/groups/${G}/links`)).json.links)).to.deep.equal(['h1', 's1', 'x1']);
      // grp_ids: the same links in several groups, or per group
      const A = (await c.post('/groups', { link: { id: G, name: 'A' } })).json.id;
      const B = (await c.post('/groups', { link: { id: G, name: 'B' } })).json.id;
      expect((await c.put(`/groups/${G}/links`, { grp_ids: [A, B], links: { same: { h5path: '/s' } } })).status).to.equal(201);
      expect((await c.put(`/groups/${G}/links`, { grp_ids: { [A]: { links: { onlyA: { id: B } } }, [B]: { onlyB: { id: A } } } })).status).to.equal(201);
      expect(titles((await c.get(`/groups/${A}/links`)).json.links)).to.deep.equal(['onlyA', 'same']);
      expect(titles((await c.get(`/groups/${B}/links`)).json.links)).to.deep.equal(['onlyB', 'same']);
      expectError(await c.put(`/groups/${G}/links`, { grp_ids: [A, 'g-123'], links: { z: { h5path: '/' } } }), 400);
      expect(titles((await c.get(`/groups/${A}/links`)).json.links)).to.deep.equal(['onlyA', 'same']);
    });

    it('DELETE .../links?titles=a/b[&separator=]: all or nothing; 404 when one is missing; 400 without titles', async () => {
      const G = (await c.post('/groups', { link: { id: L, name: 'del' } })).json.id;
      for (const n of ['x', 'y', 'z', 'a/b-no']) if (!n.includes('/')) expect((await c.put(`/groups/${G}/links/${n}`, { h5path: '/' })).status).to.equal(201);
      expectError(await c.request('DELETE', `/groups/${G}/links`, { query: { titles: 'x/nope' } }), 404);
      expect(titles((await c.get(`/groups/${G}/links`)).json.links)).to.deep.equal(['x', 'y', 'z']);
      expect((await c.request('DELETE', `/groups/${G}/links`, { query: { titles: 'x/y' } })).status).to.equal(200);
      expect(titles((await c.get(`/groups/${G}/links`)).json.links)).to.deep.equal(['z']);
      expect((await c.put(`/groups/${G}/links/w`, { h5path: '/' })).status).to.equal(201);
      expect((await c.request('DELETE', `/groups/${G}/links`, { query: { titles: 'w|z', separator: '|' } })).status).to.equal(200);
      expect((await c.get(`/groups/${G}/links`)).json.links).to.deep.equal([]);
      expectError(await c.request('DELETE', `/groups/${G}/links`), 400);
    });

    it('names that a path cannot carry (with "/") are 404 on the single-link routes; other characters work on every route', async () => {
      const slash = `/groups/${L}/links/${encodeURIComponent('a/b')}`;
      expectError(await c.get(slash), 404);
      expectError(await c.put(slash, { h5path: '/' }), 404);
      expectError(await c.delete(slash), 404);
      // bulk routes: no such link (HDF5 link names cannot hold "/"), and creating one is a 400 saying why
      expectError(await c.post(`/groups/${L}/links`, { titles: ['a/b'] }), 404);
      const put = await c.put(`/groups/${L}/links`, { links: { 'a/b': { h5path: '/' } } });
      expectError(put, 400);
      expect(put.json.message).to.match(/\//);
      for (const n of ['sp ace', 'per%cent', 'q?x', 'h#sh', 'ünï']) {
        const r = await c.get(`/groups/${L}/links/${encodeURIComponent(n)}`);
        expect(r.status, n).to.equal(200);
        expect(r.json.link.title).to.equal(n);
        expect(titles((await c.post(`/groups/${L}/links`, { titles: [n] })).json.links)).to.deep.equal([n]);
      }
      expect((await c.put(`/groups/${L}/links`, { links: { 'new#1': { h5path: '/' }, 'new?2': { h5path: '/' } } })).status).to.equal(201);
      expect((await c.request('DELETE', `/groups/${L}/links`, { query: { titles: 'new#1|new?2', separator: '|' } })).status).to.equal(200);
    });
  });

  describe('group creationProperties (item 5)', () => {
    it('CreateOrder comes from the file: groups created with it (API, h5py) report it, others have none', async () => {
      const g = await c.post('/groups', { link: { id: ids.root, name: 'co' }, creationProperties: { CreateOrder: 1 } });
      expect(g.json.creationProperties).to.deep.equal({ CreateOrder: 1 });
      expect((await c.get(`/groups/${g.json.id}`)).json.creationProperties).to.deep.equal({ CreateOrder: 1 });
      expect((await c.get(`/groups/${ids['/g1']}`)).json).to.not.have.property('creationProperties');
      const zero = await c.post('/groups', { link: { id: ids.root, name: 'co0' }, creationProperties: { CreateOrder: 0 } });
      expect(zero.json).to.not.have.property('creationProperties');
      python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w', track_order=True) as f: f.create_group('t', track_order=True); f.create_group('u')`, [path.join(root, 'tracked.h5')]);
      const t = api.with('/tracked.h5');
      expect((await t.get('/groups/', { h5path: '/t' })).json.creationProperties).to.deep.equal({ CreateOrder: 1 });
      expect((await t.get('/groups/', { h5path: '/u' })).json).to.not.have.property('creationProperties');
      expect((await t.get(`/groups/${(await t.get('/')).json.root}`)).json.creationProperties).to.deep.equal({ CreateOrder: 1 });
    });

    it('other keys given at creation are kept (in the reserved group) and reported with CreateOrder', async () => {
      const cp = { CreateOrder: 1, rdcc_nbytes: 1024, note: 'x', nested: { a: [1, 2] } };
      const g = await c.post('/groups', { link: { id: ids.root, name: 'cp' }, creationProperties: cp });
      expect(g.status, g.text).to.equal(201);
      expect(g.json.creationProperties).to.deep.equal(cp);
      expect((await c.get(`/groups/${g.json.id}`)).json.creationProperties).to.deep.equal(cp);
      const anon = await c.post('/groups', { creationProperties: { note: 'anon' } });
      expect((await c.get(`/groups/${anon.json.id}`)).json.creationProperties).to.deep.equal({ note: 'anon' });
      // hidden from listings and counts, and the file stays readable by h5py
      const rootLinks = titles((await c.get(`/groups/${ids.root}/links`)).json.links);
      expect(rootLinks.some((t) => t.includes('h5store'))).to.equal(false);
      // read back after a restart: test/store/freshness.test.ts (in-process)
      expectError(await c.post('/groups', { link: { id: ids.root, name: 'bad' }, creationProperties: [1] }), 400);
      expectError(await c.post('/groups', { link: { id: ids.root, name: 'big' }, creationProperties: { x: 'y'.repeat(20000) } }), 400);
    });
  });
});

describe('external links and access control (issue #11/#12)', function () {
  this.timeout(120000);
  let srv: TestServer;
  const as = (user: string) => new Client(srv.url).as({ user, password: `${user}-pw` });

  before(async function () {
    const users = path.join(tempRoot('h5store-users-'), 'users.json');
    for (const u of ['admin', 'alice', 'bob']) await userAdd(users, u, `${u}-pw`);
    srv = await startServer({ args: ['--users-file', users] });
    const adm = as('admin');
    expect((await adm.with('/home').put('/', { folder: true })).status).to.equal(201);
    expect((await adm.with('/home/alice').put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
    const a = as('alice');
    const secret = a.with('/home/alice/secret.h5');
    const sroot = (await secret.put('/')).json.root;
    expect((await secret.post('/groups', { link: { id: sroot, name: 'inside' } })).status).to.equal(201);
    const pub = a.with('/home/alice/pub.h5');
    const proot = (await pub.put('/')).json.root;
    expect((await pub.put(`/groups/${proot}/links/ext`, { h5path: '/inside', h5domain: 'secret.h5' })).status).to.equal(201);
    expect((await pub.put(`/groups/${proot}/links/extabs`, { h5path: '/', h5domain: '/home/alice/secret.h5' })).status).to.equal(201);
    const open = (await pub.post('/groups', { link: { id: proot, name: 'open' } })).json.id;
    const hidden = (await pub.post('/groups', { link: { id: proot, name: 'hidden' } })).json.id;
    expect((await pub.post('/groups', { link: { id: hidden, name: 'below' } })).status).to.equal(201);
    expect((await pub.post('/groups', { link: { id: open, name: 'leaf' } })).status).to.equal(201);
    expect((await pub.put('/acls/bob', { read: true })).status).to.equal(201);
    expect((await pub.put(`/groups/${hidden}/acls/bob`, { read: false })).status).to.equal(201);
  });
  after(async () => srv?.stop());

  it('an external link never opens a domain the requester could not read: bob 403, alice 200', async () => {
    const bob = as('bob').with('/home/alice/pub.h5');
    expect((await bob.get('/')).status).to.equal(200);
    expectError(await as('bob').with('/home/alice/secret.h5').get('/'), 403);
    for (const h5path of ['/ext', '/extabs/inside']) {
      expectError(await bob.get('/', { h5path, follow_external_links: 1 }), 403, h5path);
      expectError(await bob.get('/groups/', { h5path, follow_external_links: 1 }), 403, h5path);
      expectError(await bob.post('/', { h5paths: [h5path] }, { follow_external_links: 1 }), 403, h5path);
      const alice = await as('alice').with('/home/alice/pub.h5').get('/', { h5path, follow_external_links: 1 });
      expect(alice.status, alice.text).to.equal(200);
      expect(alice.json.domain).to.equal('/home/alice/secret.h5');
    }
    // anonymous: 401
    expectError(await new Client(srv.url, '/home/alice/pub.h5').get('/', { h5path: '/ext', follow_external_links: 1 }), 401);
  });

  it('getobjs and follow_links leave out objects whose own ACL denies read', async () => {
    const bob = as('bob').with('/home/alice/pub.h5');
    const alice = as('alice').with('/home/alice/pub.h5');
    const hidden = (await alice.get('/', { h5path: '/hidden' })).json.id;
    const open = (await alice.get('/', { h5path: '/open' })).json.id;
    const ao = (await alice.get('/', { getobjs: 1 })).json.domain_objs;
    expect(ao).to.have.property(hidden);
    const bo = (await bob.get('/', { getobjs: 1 })).json.domain_objs;
    expect(bo).to.not.have.property(hidden);
    expect(bo).to.have.property(open);
    const root = (await bob.get('/')).json.root;
    const deep = (await bob.get(`/groups/${root}/links`, { follow_links: 1 })).json.links;
    expect(deep).to.not.have.property(hidden);
    expect(deep).to.have.property(open);
    expect((await alice.get(`/groups/${root}/links`, { follow_links: 1 })).json.links).to.have.property(hidden);
    expectError(await bob.post(`/groups/${root}/links`, { grp_ids: [open, hidden] }), 403);
    expect((await bob.post(`/groups/${root}/links`, { grp_ids: [open] })).status).to.equal(200);
  });
});
