/**
 * Domains, folders, service endpoints, path safety and file interplay with h5py
 * (service spec 1, 4.4, 7; wire-reference 0.3, 0.6-0.9, 1; DESIGN.md 2, 5, 6).
 */
import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GROUP_ID_RE, allPages, digest, expectError, rawRequest, snapshot } from '../helpers/apiExtra.js';
import { childEnv } from '../helpers/env.js';
import { PYTHON, h5dump, pythonJson, python } from '../helpers/python.js';
import { Client, type Reply, type TestServer, fixturePath, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';

const TALL = fixturePath('tall.h5');

describe('domains, folders and service endpoints', function () {
  this.timeout(60000);
  let srv: TestServer;
  let api: Client; // no domain bound
  let root: string;
  let outside: string; // a directory next to the data directory, never to be touched
  let outsideSnap: Record<string, string>;
  let tmpParentSnap: string[];
  let base: string;

  const hrefRels = (r: Reply) => (r.json.hrefs as { rel: string; href: string }[]).map((h) => h.rel);

  before(async () => {
    // The data directory and the "outside" directory share a private parent, so that "/../outside"
    // from the root is a real escape and nothing else writes beside them.
    base = tempRoot('h5store-domains-');
    root = path.join(base, 'data');
    outside = path.join(base, 'outside');
    fs.mkdirSync(root);
    fs.mkdirSync(outside);
    fs.copyFileSync(TALL, path.join(root, 'tall.h5'));
    fs.chmodSync(path.join(root, 'tall.h5'), 0o644);
    fs.copyFileSync(TALL, path.join(outside, 'real.h5'));
    fs.chmodSync(path.join(outside, 'real.h5'), 0o644);
    fs.mkdirSync(path.join(outside, 'sub'));
    fs.copyFileSync(TALL, path.join(outside, 'sub', 'inner.h5'));
    // Symlinks inside the root pointing outside it: a directory and a file.
    fs.symlinkSync(outside, path.join(root, 'escape'));
    fs.symlinkSync(path.join(outside, 'real.h5'), path.join(root, 'escape.h5'));
    // Dangling symlinks inside the root whose targets (not yet existing) are outside it.
    fs.symlinkSync(path.join(outside, 'not-yet.h5'), path.join(root, 'dangling.h5'));
    fs.symlinkSync(path.join(outside, 'not-yet-dir'), path.join(root, 'dangling-dir'));
    // A symlink inside the root to a folder inside the root is fine.
    fs.mkdirSync(path.join(root, 'realfolder'));
    fs.copyFileSync(TALL, path.join(root, 'realfolder', 'in.h5'));
    fs.symlinkSync(path.join(root, 'realfolder'), path.join(root, 'inlink'));
    // A file that is not HDF5.
    fs.writeFileSync(path.join(root, 'bad.h5'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 0xff)));
    outsideSnap = snapshot(outside);
    tmpParentSnap = fs.readdirSync(path.dirname(root)).sort();
    srv = await startServer({ root });
    api = new Client(srv.url);
  });

  after(async () => {
    await srv?.stop();
  });

  /** Nothing outside the root changed: the outside dir and the root's parent listing. */
  function expectOutsideUntouched(): void {
    expect(snapshot(outside), 'outside directory').to.deep.equal(outsideSnap);
    const now = fs.readdirSync(path.dirname(root)).sort();
    const added = now.filter((n) => !tmpParentSnap.includes(n));
    expect(added, 'new entries beside the data directory').to.deep.equal([]);
  }

  describe('domain selection', () => {
    let rootId: string;

    it('GET / with ?domain= describes the domain', async () => {
      const r = await api.get('/', { domain: '/tall.h5' });
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^application\/json/);
      expect(r.json.class).to.equal('domain');
      expect(r.json.root).to.match(GROUP_ID_RE);
      expect(r.json.root).to.have.length(38);
      expect(r.json.owner).to.be.a('string').and.not.equal('');
      expect(r.json.created).to.be.a('number');
      expect(r.json.lastModified).to.be.a('number');
      expect(r.json.created).to.be.at.most(r.json.lastModified);
      const rels = hrefRels(r);
      for (const rel of ['self', 'database', 'groupbase', 'typebase', 'root']) expect(rels, rel).to.include(rel);
      for (const h of r.json.hrefs) {
        expect(h.href).to.be.a('string');
        expect(h.href.startsWith('http://') || h.href.startsWith('https://'), h.href).to.equal(true);
      }
      const rootHref = r.json.hrefs.find((h: { rel: string }) => h.rel === 'root').href as string;
      expect(rootHref).to.include(`/groups/${r.json.root}`);
      // Domain given as a query parameter: hrefs repeat it (wire-reference 0.8).
      const self = r.json.hrefs.find((h: { rel: string }) => h.rel === 'self').href as string;
      expect(self).to.include('domain=');
      rootId = r.json.root;
    });

    it('GET / with the X-Store-domain header gives the same domain', async () => {
      const r = await api.get('/', undefined, { 'X-Store-domain': '/tall.h5' });
      expect(r.status).to.equal(200);
      expect(r.json.class).to.equal('domain');
      expect(r.json.root).to.equal(rootId);
    });

    it('GET / with the X-Hdf-domain header (alias) gives the same domain', async () => {
      const r = await api.get('/', undefined, { 'X-Hdf-domain': '/tall.h5' });
      expect(r.status).to.equal(200);
      expect(r.json.root).to.equal(rootId);
    });

    it('header names are case-insensitive and object routes honour the headers', async () => {
      const r = await api.get(`/groups/${rootId}`, undefined, { 'x-store-domain': '/tall.h5' });
      expect(r.status).to.equal(200);
      expect(r.json.id).to.equal(rootId);
      const r2 = await api.get(`/groups/${rootId}/links`, undefined, { 'X-HDF-DOMAIN': '/tall.h5' });
      expect(r2.status).to.equal(200);
      expect(r2.json.links.map((l: { title: string }) => l.title)).to.deep.equal(['g1', 'g2']);
    });

    it('the domain query parameter wins over the header (wire-reference 0.3)', async () => {
      const r = await api.get('/', { domain: '/tall.h5' }, { 'X-Store-domain': '/does-not-exist.h5' });
      expect(r.status).to.equal(200);
      expect(r.json.root).to.equal(rootId);
    });

    it('hdf5:// prefix is accepted', async () => {
      const r = await api.get('/', { domain: 'hdf5://tall.h5' });
      expect(r.status).to.equal(200);
      expect(r.json.root).to.equal(rootId);
    });

    it('object routes without any domain answer 400', async () => {
      expectError(await api.get(`/groups/${rootId}`), 400);
      expectError(await api.get('/groups'), 400);
    });

    it('an unknown domain answers 404', async () => {
      expectError(await api.get('/', { domain: '/nope.h5' }), 404);
      expectError(await api.get(`/groups/${rootId}`, { domain: '/nope.h5' }), 404);
    });
  });

  describe('PUT / and DELETE /', () => {
    it('PUT / creates an empty HDF5 file (201), then GET works; 409 when it exists', async () => {
      const r = await api.put('/', undefined, { domain: '/new1.h5' });
      expect(r.status, r.text).to.equal(201);
      expect(r.json.root).to.match(GROUP_ID_RE);
      expect(r.json.owner).to.be.a('string');
      expect(r.json.created).to.be.a('number');
      expect(r.json.lastModified).to.be.a('number');
      const file = path.join(root, 'new1.h5');
      expect(fs.statSync(file).isFile()).to.equal(true);
      // HDF5 signature at offset 0.
      expect(fs.readFileSync(file).subarray(0, 8).toString('latin1')).to.equal('\x89HDF\r\n\x1a\n');
      const g = await api.get('/', { domain: '/new1.h5' });
      expect(g.status).to.equal(200);
      expect(g.json.class).to.equal('domain');
      expect(g.json.root).to.equal(r.json.root);
      const rg = await api.get(`/groups/${g.json.root}`, { domain: '/new1.h5' });
      expect(rg.status).to.equal(200);
      expect(rg.json.linkCount).to.equal(0);
      expect(rg.json.attributeCount).to.equal(0);
      const links = await api.get(`/groups/${g.json.root}/links`, { domain: '/new1.h5' });
      expect(links.status).to.equal(200);
      expect(links.json.links).to.deep.equal([]);
      expectError(await api.put('/', undefined, { domain: '/new1.h5' }), 409);
      expectError(await api.put('/', { folder: true }, { domain: '/new1.h5' }), 409);
    });

    it('PUT / with the X-Store-domain header creates the domain', async () => {
      const r = await api.request('PUT', '/', { headers: { 'X-Store-domain': '/new-by-header.h5' } });
      expect(r.status, r.text).to.equal(201);
      expect(fs.existsSync(path.join(root, 'new-by-header.h5'))).to.equal(true);
    });

    it('PUT / answers 404 when the parent folder is missing, and creates nothing', async () => {
      expectError(await api.put('/', undefined, { domain: '/missing-folder/x.h5' }), 404);
      expect(fs.existsSync(path.join(root, 'missing-folder'))).to.equal(false);
      expectError(await api.put('/', { folder: true }, { domain: '/missing-folder/sub' }), 404);
      expect(fs.existsSync(path.join(root, 'missing-folder'))).to.equal(false);
    });

    it('PUT / {"folder": true} creates a folder; GET / describes it without root', async () => {
      const r = await api.put('/', { folder: true }, { domain: '/fold' });
      expect(r.status, r.text).to.equal(201);
      expect(r.json.root).to.equal(undefined);
      expect(fs.statSync(path.join(root, 'fold')).isDirectory()).to.equal(true);
      const g = await api.get('/', { domain: '/fold' });
      expect(g.status).to.equal(200);
      expect(g.json.class).to.equal('folder');
      expect(g.json).to.not.have.property('root');
      expect(g.json.owner).to.be.a('string');
      expect(g.json.created).to.be.a('number');
      expect(g.json.lastModified).to.be.a('number');
      expect(g.json.hrefs).to.be.an('array');
      expect(hrefRels(g)).to.include('self');
      // A trailing slash names the same folder.
      const g2 = await api.get('/', { domain: '/fold/' });
      expect(g2.status).to.equal(200);
      expect(g2.json.class).to.equal('folder');
      // Domains inside the new folder.
      const d = await api.put('/', undefined, { domain: '/fold/inner.h5' });
      expect(d.status, d.text).to.equal(201);
      expectError(await api.put('/', { folder: true }, { domain: '/fold' }), 409);
    });

    it('a folder used where a domain is needed answers 400', async () => {
      expectError(await api.get('/groups', { domain: '/fold' }), 400);
    });

    it('PUT / inside a domain (parent is a file) is refused and creates nothing', async () => {
      const r = await api.put('/', undefined, { domain: '/tall.h5/x.h5' });
      expect(r.status).to.be.oneOf([400, 404, 409]);
      expectError(r, r.status);
      expect(fs.statSync(path.join(root, 'tall.h5')).isFile()).to.equal(true);
    });

    it('DELETE / removes a domain; GET then answers 410', async () => {
      expect((await api.put('/', undefined, { domain: '/todel.h5' })).status).to.equal(201);
      const g = await api.get('/', { domain: '/todel.h5' });
      expect(g.status).to.equal(200);
      const d = await api.delete('/', { domain: '/todel.h5' });
      expect(d.status, d.text).to.equal(200);
      expect(fs.existsSync(path.join(root, 'todel.h5'))).to.equal(false);
      expectError(await api.get('/', { domain: '/todel.h5' }), 410);
      expectError(await api.get(`/groups/${g.json.root}`, { domain: '/todel.h5' }), 410);
      // Re-creating works (h5pyd's File(..., 'w') does DELETE then PUT).
      expect((await api.put('/', undefined, { domain: '/todel.h5' })).status).to.equal(201);
      expect((await api.get('/', { domain: '/todel.h5' })).status).to.equal(200);
    });

    it('DELETE / of a missing domain answers 404', async () => {
      expectError(await api.delete('/', { domain: '/never-was.h5' }), 404);
    });

    it('DELETE / of a non-empty folder answers 409 and keeps everything; an empty folder is removed', async () => {
      expect((await api.put('/', { folder: true }, { domain: '/f2' })).status).to.equal(201);
      expect((await api.put('/', undefined, { domain: '/f2/a.h5' })).status).to.equal(201);
      expectError(await api.delete('/', { domain: '/f2' }), 409);
      expect(fs.existsSync(path.join(root, 'f2', 'a.h5'))).to.equal(true);
      expect((await api.get('/', { domain: '/f2/a.h5' })).status).to.equal(200);
      expect((await api.delete('/', { domain: '/f2/a.h5' })).status).to.equal(200);
      const d = await api.delete('/', { domain: '/f2' });
      expect(d.status, d.text).to.equal(200);
      expect(fs.existsSync(path.join(root, 'f2'))).to.equal(false);
      expectError(await api.get('/', { domain: '/f2' }), 410);
    });
  });

  describe('listing folders', () => {
    const names = ['b.h5', 'a.h5', 'Z.h5', 'sub', 'a1.h5', 'c.h5', 'aa.h5'];

    before(async () => {
      expect((await api.put('/', { folder: true }, { domain: '/lst' })).status).to.equal(201);
      for (const n of names) {
        const r = await api.put('/', n === 'sub' ? { folder: true } : undefined, { domain: `/lst/${n}` });
        expect(r.status, `${n}: ${r.text}`).to.equal(201);
      }
    });

    it('GET /domains?domain=/lst/ lists every entry in name order with class, owner and times', async () => {
      const r = await api.get('/domains', { domain: '/lst/' });
      expect(r.status).to.equal(200);
      expect(r.json.hrefs).to.be.an('array');
      const got = r.json.domains.map((d: { name: string }) => d.name);
      const want = names.map((n) => `/lst/${n}`).sort();
      expect(got).to.deep.equal(want);
      for (const d of r.json.domains) {
        expect(d.class, d.name).to.equal(d.name === '/lst/sub' ? 'folder' : 'domain');
        expect(d.owner, d.name).to.be.a('string');
        expect(d.created, d.name).to.be.a('number');
        expect(d.lastModified, d.name).to.be.a('number');
        expect(d).to.not.have.property('limits');
      }
    });

    for (const limit of [1, 2, 3, 7, 10]) {
      it(`Limit=${limit} pages with Marker concatenate to the sorted list`, async () => {
        const { items, pages } = await allPages<{ name: string }>(
          async (marker) => {
            const r = await api.get('/domains', { domain: '/lst/', Limit: limit, Marker: marker });
            expect(r.status, r.text).to.equal(200);
            return r.json.domains;
          },
          (d) => d.name,
          limit,
        );
        expect(items.map((d) => d.name)).to.deep.equal(names.map((n) => `/lst/${n}`).sort());
        for (const p of pages.slice(0, -1)) expect(p.length).to.equal(limit);
      });
    }

    it('Limit that is not an integer answers 400', async () => {
      expectError(await api.get('/domains', { domain: '/lst/', Limit: 'abc' }), 400);
      expectError(await api.get('/domains', { domain: '/lst/', Limit: '1.5' }), 400);
    });

    it('GET / without a domain lists the top level', async () => {
      const r = await api.get('/');
      expect(r.status).to.equal(200);
      expect(r.json.domains).to.be.an('array');
      expect(r.json.hrefs).to.be.an('array');
      const got = r.json.domains.map((d: { name: string }) => d.name);
      for (const n of ['/tall.h5', '/new1.h5', '/fold', '/lst']) expect(got).to.include(n);
      const lst = r.json.domains.find((d: { name: string }) => d.name === '/lst');
      expect(lst.class).to.equal('folder');
      const tall = r.json.domains.find((d: { name: string }) => d.name === '/tall.h5');
      expect(tall.class).to.equal('domain');
      // Sorted, and nothing the service keeps for itself is listed.
      expect(got).to.deep.equal([...got].sort());
      for (const n of got) expect(n).to.not.match(/h5store/);
    });

    it('GET /domains without a domain lists the top level too', async () => {
      const r = await api.get('/domains');
      expect(r.status).to.equal(200);
      const got = r.json.domains.map((d: { name: string }) => d.name);
      expect(got).to.include('/lst');
      expect(got).to.include('/tall.h5');
    });

    it('GET /domains of a missing folder answers 404', async () => {
      expectError(await api.get('/domains', { domain: '/no-such-folder/' }), 404);
    });
  });

  describe('service endpoints', () => {
    it('GET /about', async () => {
      const r = await api.get('/about');
      expect(r.status).to.equal(200);
      expect(r.json.hsds_version).to.be.a('string');
      expect(r.json.hsds_version.startsWith('0.9.'), r.json.hsds_version).to.equal(true);
      expect(r.json.state).to.equal('READY');
      expect(r.json.hrefs).to.be.an('array');
    });

    it('GET /info', async () => {
      const r = await api.get('/info');
      expect(r.status).to.equal(200);
      expect(r.json.node).to.be.an('object');
      expect(r.json.node.state).to.equal('READY');
      expect(r.json.hrefs).to.be.an('array');
    });

    it('an unknown route answers 404 JSON', async () => {
      expectError(await api.get('/no/such/route'), 404);
      expectError(await api.get('/nonexistent', { domain: '/tall.h5' }), 404);
    });

    it('a wrong method answers 405 JSON', async () => {
      const root = (await api.get('/', { domain: '/tall.h5' })).json.root as string;
      const ds = (await api.get('/datasets', { domain: '/tall.h5' })).json.datasets[0] as string;
      expectError(await api.put(`/datasets/${ds}/type`, { type: 'H5T_STD_I32LE' }, { domain: '/tall.h5' }), 405);
      expectError(await api.delete('/about'), 405);
      expectError(await api.post('/info', {}), 405);
      expectError(await api.request('PATCH', `/groups/${root}`, { query: { domain: '/tall.h5' }, body: {} }), 405);
    });

    it('invalid JSON bodies answer 400 JSON', async () => {
      expectError(await api.request('POST', '/groups', { query: { domain: '/new1.h5' }, raw: '{"link": ', headers: { 'content-type': 'application/json' } }), 400);
    });
  });

  describe('path safety (DESIGN.md 2)', () => {
    const outsideName = () => path.basename(outside);
    const bad = () => [
      // plain ..
      `/?domain=/../${outsideName()}/real.h5`,
      `/?domain=/x/../../${outsideName()}/real.h5`,
      `/?domain=/..`,
      // percent-encoded dots
      `/?domain=/%2e%2e/${outsideName()}/real.h5`,
      `/?domain=/%2E%2E/${outsideName()}/real.h5`,
      `/?domain=%2F%2e%2e%2F${outsideName()}%2Freal.h5`,
      // encoded slashes
      `/?domain=%2F..%2F${outsideName()}%2Freal.h5`,
      `/?domain=/tall.h5%2F..%2F..%2F${outsideName()}%2Freal.h5`,
      // backslashes
      `/?domain=/..%5C${outsideName()}%5Creal.h5`,
      `/?domain=%5C..%5C${outsideName()}%5Creal.h5`,
      `/?domain=/a%5Cb.h5`,
      // NUL
      `/?domain=/tall.h5%00`,
      `/?domain=/a%00/../../${outsideName()}/real.h5`,
      // symlinks inside the root that lead outside
      `/?domain=/escape/real.h5`,
      `/?domain=/escape/sub/inner.h5`,
      `/?domain=/escape.h5`,
      `/?domain=/escape`,
    ];

    it('GET / of traversal attempts answers 400', async () => {
      for (const u of bad()) {
        const r = await rawRequest(srv.url, 'GET', u);
        expectError(r, 400, `GET ${u}`);
      }
      expectOutsideUntouched();
    });

    it('object routes (GET /groups, POST /groups) with traversal domains answer 400 and write nothing', async () => {
      for (const u of bad()) {
        const q = u.slice(1); // "?domain=..."
        expectError(await rawRequest(srv.url, 'GET', `/groups${q}`), 400, `GET /groups${q}`);
        expectError(await rawRequest(srv.url, 'POST', `/groups${q}`, { body: { h5path: '/evil' } }), 400, `POST /groups${q}`);
        expectError(await rawRequest(srv.url, 'GET', `/datasets${q}`), 400, `GET /datasets${q}`);
      }
      expectOutsideUntouched();
    });

    it('PUT / of traversal attempts answers 400 and creates nothing outside', async () => {
      const n = outsideName();
      const attempts = [
        `/?domain=/../${n}/created.h5`,
        `/?domain=/../created-beside-root.h5`,
        `/?domain=/%2e%2e/${n}/created.h5`,
        `/?domain=%2F..%2F${n}%2Fcreated.h5`,
        `/?domain=/..%5C${n}%5Ccreated.h5`,
        `/?domain=/created%00.h5`,
        `/?domain=/escape/created.h5`,
        `/?domain=/escape/sub/created.h5`,
        `/?domain=/escape/newfolder`,
      ];
      for (const u of attempts) {
        expectError(await rawRequest(srv.url, 'PUT', u), 400, `PUT ${u}`);
        expectError(await rawRequest(srv.url, 'PUT', u, { body: { folder: true } }), 400, `PUT folder ${u}`);
      }
      expect(fs.existsSync(path.join(path.dirname(root), 'created-beside-root.h5'))).to.equal(false);
      expect(fs.readdirSync(root).filter((x) => x.startsWith('created'))).to.deep.equal([]);
      expectOutsideUntouched();
    });

    it('DELETE / of traversal attempts answers 400 and deletes nothing', async () => {
      const n = outsideName();
      const attempts = [
        `/?domain=/../${n}/real.h5`,
        `/?domain=/%2e%2e/${n}/real.h5`,
        `/?domain=%2F..%2F${n}%2Freal.h5`,
        `/?domain=/..%5C${n}%5Creal.h5`,
        `/?domain=/escape/real.h5`,
        `/?domain=/escape/sub/inner.h5`,
        `/?domain=/escape/sub`,
        `/?domain=/escape.h5`,
        `/?domain=/escape`,
        `/?domain=/../${n}`,
      ];
      for (const u of attempts) expectError(await rawRequest(srv.url, 'DELETE', u), 400, `DELETE ${u}`);
      expect(fs.lstatSync(path.join(root, 'escape')).isSymbolicLink()).to.equal(true);
      expect(fs.lstatSync(path.join(root, 'escape.h5')).isSymbolicLink()).to.equal(true);
      expectOutsideUntouched();
    });

    it('GET /domains of a folder outside the root answers 400', async () => {
      const n = outsideName();
      for (const u of [`/domains?domain=/escape/`, `/domains?domain=/escape/sub/`, `/domains?domain=/../${n}/`, `/domains?domain=/%2e%2e/`, `/domains?domain=/..`]) {
        expectError(await rawRequest(srv.url, 'GET', u), 400, `GET ${u}`);
      }
      expectOutsideUntouched();
    });

    it('traversal in the X-Store-domain / X-Hdf-domain headers answers 400', async () => {
      const n = outsideName();
      for (const h of ['X-Store-domain', 'X-Hdf-domain']) {
        for (const v of [`/../${n}/real.h5`, `/escape/real.h5`, `/escape.h5`, `/..\\${n}\\real.h5`]) {
          expectError(await rawRequest(srv.url, 'GET', '/', { headers: { [h]: v } }), 400, `GET / ${h}: ${v}`);
          expectError(await rawRequest(srv.url, 'DELETE', '/', { headers: { [h]: v } }), 400, `DELETE / ${h}: ${v}`);
          expectError(await rawRequest(srv.url, 'PUT', '/', { headers: { [h]: v.replace('real', 'hdr-created') } }), 400, `PUT / ${h}: ${v}`);
        }
        // Percent signs in a header are not decoded: at most a literal (missing) name, never outside.
        const r = await rawRequest(srv.url, 'GET', '/', { headers: { [h]: `/%2e%2e/${n}/real.h5` } });
        expect(r.status, r.text).to.be.oneOf([400, 404]);
        expectError(r, r.status);
      }
      expectOutsideUntouched();
    });

    it('dangling symlinks whose targets are outside answer 400 and create nothing outside', async () => {
      const attempts: [string, string, unknown][] = [
        ['GET', '/?domain=/dangling.h5', undefined],
        ['PUT', '/?domain=/dangling.h5', undefined],
        ['PUT', '/?domain=/dangling-dir', { folder: true }],
        ['PUT', '/?domain=/dangling-dir/x.h5', undefined],
        ['DELETE', '/?domain=/dangling.h5', undefined],
        ['GET', '/domains?domain=/dangling-dir/', undefined],
      ];
      const failures: string[] = [];
      for (const [m, u, body] of attempts) {
        const r = await rawRequest(srv.url, m, u, { body });
        if (r.status !== 400) failures.push(`${m} ${u} -> ${r.status} ${r.text}`);
      }
      expectOutsideUntouched();
      expect(fs.existsSync(path.join(outside, 'not-yet.h5'))).to.equal(false);
      expect(fs.existsSync(path.join(outside, 'not-yet-dir'))).to.equal(false);
      expect(failures, 'requests that did not answer 400').to.deep.equal([]);
    });

    it('a symlink to a folder inside the root is served', async () => {
      const r = await api.get('/', { domain: '/inlink/in.h5' });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.root).to.match(GROUP_ID_RE);
    });

    it('the server still serves normal domains after all of that', async () => {
      const r = await api.get('/', { domain: '/tall.h5' });
      expect(r.status).to.equal(200);
      expectOutsideUntouched();
      expect(digest(path.join(outside, 'real.h5'))).to.equal(digest(TALL));
    });

    it('a file that was only read is never written (DESIGN.md 4)', async () => {
      await untilServerClosed(srv, path.join(root, 'tall.h5'));
      expect(digest(path.join(root, 'tall.h5'))).to.equal(digest(TALL));
    });
  });

  describe('a folder with files another program holds open for writing (issue #28 item 6)', () => {
    const holders: ChildProcess[] = [];
    after(() => {
      for (const h of holders) h.kill();
    });

    /** An h5py child that opens `file` for writing (locking on, as h5py's default) and holds it until killed. */
    async function holdOpen(file: string, libver: 'earliest' | 'latest'): Promise<void> {
      const h = spawn(PYTHON, ['-c', `import h5py, sys, time
f = h5py.File(sys.argv[1], "a", libver=sys.argv[2])
f.require_group("busy")
f.flush()
print("ready", flush=True)
time.sleep(120)`, file, libver], { env: childEnv({}), stdio: ['ignore', 'pipe', 'inherit'] });
      holders.push(h);
      await new Promise<void>((res, rej) => {
        h.stdout!.once('data', () => res());
        h.once('exit', (c) => rej(new Error(`writer exited with ${c}`)));
      });
    }

    it('are listed at once, marked beingWritten, from their file status; the others as usual', async () => {
      fs.mkdirSync(path.join(root, 'acq'));
      for (const n of ['a.h5', 'b.h5', 'c.h5']) fs.copyFileSync(fixturePath('tall.h5'), path.join(root, 'acq', n));
      await holdOpen(path.join(root, 'acq', 'a.h5'), 'earliest');
      await holdOpen(path.join(root, 'acq', 'b.h5'), 'latest');
      const t0 = performance.now();
      const r = await api.get('/domains', { domain: '/acq/' });
      const ms = performance.now() - t0;
      expect(r.status, r.text).to.equal(200);
      expect(ms, 'answered at once, not after a lock wait').to.be.below(1500);
      const byName = Object.fromEntries(r.json.domains.map((d: { name: string }) => [d.name, d]));
      expect(Object.keys(byName)).to.deep.equal(['/acq/a.h5', '/acq/b.h5', '/acq/c.h5']);
      expect(byName['/acq/a.h5']).to.include({ class: 'domain', beingWritten: true, size: fs.statSync(path.join(root, 'acq', 'a.h5')).size });
      expect(byName['/acq/b.h5']).to.include({ class: 'domain', beingWritten: true });
      expect(byName['/acq/c.h5']).to.not.have.property('beingWritten');
    });
  });

  describe('a file that is not HDF5', () => {
    it('answers 400 with a JSON message, and the server keeps serving other domains', async () => {
      const r = await api.get('/', { domain: '/bad.h5' });
      expectError(r, 400);
      expect(r.json.message.toLowerCase()).to.match(/hdf5/);
      expectError(await api.get('/groups', { domain: '/bad.h5' }), 400);
      expectError(await api.post('/groups', {}, { domain: '/bad.h5' }), 400);
      // Not listed (it is no domain; issue #28 item 6), and the listing still works.
      const l = await api.get('/');
      expect(l.status).to.equal(200);
      expect(l.json.domains.map((d: { name: string }) => d.name)).to.not.include('/bad.h5');
      expect(l.json.domains.map((d: { name: string }) => d.name)).to.include('/tall.h5');
      const ok = await api.get('/', { domain: '/tall.h5' });
      expect(ok.status).to.equal(200);
      const ok2 = await api.get(`/groups/${ok.json.root}/links`, { domain: '/tall.h5' });
      expect(ok2.status).to.equal(200);
      expect(ok2.json.links).to.have.length(2);
      // The garbage file was not modified.
      expect(fs.statSync(path.join(root, 'bad.h5')).size).to.equal(4096);
    });

    it('the shared notahdf5file.h5 fixture is reported the same way', async () => {
      fs.copyFileSync(fixturePath('notahdf5file.h5'), path.join(root, 'notahdf5file.h5'));
      const r = await api.get('/', { domain: '/notahdf5file.h5' });
      expectError(r, 400);
      expect((await api.get('/about')).status).to.equal(200);
    });
  });

  describe('files written over the API are plain HDF5 (h5py, h5dump)', () => {
    const D = '/built.h5';
    let rootId: string;
    let g1: string;
    let g2: string;
    let g3: string;

    before(async () => {
      const c = api.with(D);
      expect((await c.put('/')).status).to.equal(201);
      rootId = (await c.get('/')).json.root;
      // POST /groups with link
      let r = await c.post('/groups', { link: { id: rootId, name: 'g1' } });
      expect(r.status, r.text).to.equal(201);
      g1 = r.json.id;
      // nested by link
      r = await c.post('/groups', { link: { id: g1, name: 'g2' } });
      expect(r.status, r.text).to.equal(201);
      g2 = r.json.id;
      // nested by h5path with intermediate groups
      r = await c.post('/groups', { h5path: '/g1/g2/deep/g3' }, { implicit: 1 });
      expect(r.status, r.text).to.equal(201);
      g3 = r.json.id;
      // anonymous group, then linked with PUT (hard)
      r = await c.post('/groups', {});
      expect(r.status, r.text).to.equal(201);
      const anon = r.json.id;
      expect((await c.put(`/groups/${rootId}/links/adopted`, { id: anon })).status).to.equal(201);
      // hard link to an existing group (two names, one object)
      expect((await c.put(`/groups/${rootId}/links/g2hard`, { id: g2 })).status).to.equal(201);
      // soft and external links
      expect((await c.put(`/groups/${g1}/links/soft`, { h5path: '/g1/g2/deep' })).status).to.equal(201);
      expect((await c.put(`/groups/${g1}/links/dangling`, { h5path: '/no/where' })).status).to.equal(201);
      expect((await c.put(`/groups/${rootId}/links/ext`, { h5path: '/g1', h5domain: '/tall.h5' })).status).to.equal(201);
      // group links given in bulk
      expect((await c.put(`/groups/${g2}/links`, { links: { back: { id: g1 }, s2: { h5path: 'deep' } } })).status).to.equal(201);
      await untilServerClosed(srv, path.join(root, 'built.h5')); // let the server close its handle
    });

    it('h5py reads the same structure, link classes and targets', () => {
      const out = pythonJson(
        `
import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
def desc(g):
    out = {}
    for name in g:
        l = g.get(name, getlink=True)
        if isinstance(l, h5py.SoftLink):
            out[name] = {'class': 'soft', 'path': l.path}
        elif isinstance(l, h5py.ExternalLink):
            out[name] = {'class': 'external', 'path': l.path, 'file': l.filename}
        else:
            o = g[name]
            out[name] = {'class': 'hard', 'kind': 'group' if isinstance(o, h5py.Group) else 'other', 'addr': h5py.h5o.get_info(o.id).addr}
    return out
res = {'root': desc(f), 'g1': desc(f['g1']), 'g2': desc(f['g1/g2']), 'deep': desc(f['g1/g2/deep']), 'g3': desc(f['g1/g2/deep/g3'])}
res['same_g2'] = f['g2hard'] == f['g1/g2']
res['back_is_g1'] = f['g1/g2/back'] == f['g1']
res['soft_target_is_deep'] = f['g1/soft'] == f['g1/g2/deep']
print(json.dumps(res))
`,
        [path.join(root, 'built.h5')],
      );
      expect(Object.keys(out.root).sort()).to.deep.equal(['adopted', 'ext', 'g1', 'g2hard']);
      expect(out.root.g1.class).to.equal('hard');
      expect(out.root.g1.kind).to.equal('group');
      expect(out.root.adopted).to.include({ class: 'hard', kind: 'group' });
      expect(out.root.ext.class).to.equal('external');
      expect(out.root.ext.path).to.equal('/g1');
      expect(out.root.ext.file).to.match(/tall\.h5$/);
      expect(Object.keys(out.g1).sort()).to.deep.equal(['dangling', 'g2', 'soft']);
      expect(out.g1.soft).to.deep.equal({ class: 'soft', path: '/g1/g2/deep' });
      expect(out.g1.dangling).to.deep.equal({ class: 'soft', path: '/no/where' });
      expect(Object.keys(out.g2).sort()).to.deep.equal(['back', 's2', 'deep'].sort());
      expect(out.g2.s2).to.deep.equal({ class: 'soft', path: 'deep' });
      expect(Object.keys(out.deep)).to.deep.equal(['g3']);
      expect(out.g3).to.deep.equal({});
      expect(out.same_g2).to.equal(true);
      expect(out.back_is_g1).to.equal(true);
      expect(out.soft_target_is_deep).to.equal(true);
    });

    it('the server reports the same structure', async () => {
      const c = api.with(D);
      const r = await c.get(`/groups/${rootId}/links`);
      expect(r.status).to.equal(200);
      expect(r.json.links.map((l: { title: string }) => l.title)).to.deep.equal(['adopted', 'ext', 'g1', 'g2hard']);
      const g2hard = await c.get(`/groups/${rootId}/links/g2hard`);
      expect(g2hard.json.link.id).to.equal(g2);
      const deep = await c.get('/', { h5path: '/g1/g2/deep/g3' });
      expect(deep.status).to.equal(200);
      expect(deep.json.id).to.equal(g3);
      const rg = await c.get(`/groups/${rootId}`);
      expect(rg.json.linkCount).to.equal(4);
    });

    it('a domain created by PUT / is an empty HDF5 file for h5py', () => {
      const out = pythonJson(
        `import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps({'keys': list(f.keys()), 'attrs': list(f.attrs.keys())}))`,
        [path.join(root, 'new1.h5')],
      );
      expect(out).to.deep.equal({ keys: [], attrs: [] });
    });

    it('h5dump reads the file', () => {
      const out = h5dump(path.join(root, 'built.h5'));
      expect(out).to.include('GROUP "g1"');
      expect(out).to.include('SOFTLINK "soft"');
      expect(out).to.include('EXTERNAL_LINK "ext"');
      expect(out).to.not.include('__h5store__');
    });
  });

  describe('editing a served file with h5py while the server idles (DESIGN.md 5)', () => {
    it('h5py opens the file for writing once the server closed it (idle), and the server sees the change', async () => {
      const D = '/edited.h5';
      const c = api.with(D);
      expect((await c.put('/')).status).to.equal(201);
      const rootId = (await c.get('/')).json.root as string;
      expect((await c.post('/groups', { link: { id: rootId, name: 'before' } })).status).to.equal(201);
      const l0 = await c.get(`/groups/${rootId}/links`);
      expect(l0.json.links.map((l: { title: string }) => l.title)).to.deep.equal(['before']);
      await untilServerClosed(srv, path.join(root, 'edited.h5'));
      python(
        `
import h5py, sys
with h5py.File(sys.argv[1], 'a') as f:
    f.create_group('from_h5py')
    f['from_h5py'].attrs['x'] = 1
`,
        [path.join(root, 'edited.h5')],
      );
      const l1 = await c.get(`/groups/${rootId}/links`);
      expect(l1.status).to.equal(200);
      expect(l1.json.links.map((l: { title: string }) => l.title)).to.deep.equal(['before', 'from_h5py']);
      const g = await c.get(`/groups/${rootId}`);
      expect(g.json.linkCount).to.equal(2);
      const lk = await c.get(`/groups/${rootId}/links/from_h5py`);
      expect(lk.status).to.equal(200);
      const fg = await c.get(`/groups/${lk.json.link.id}`);
      expect(fg.status).to.equal(200);
      expect(fg.json.attributeCount).to.equal(1);
      // And the server can write to it again afterwards.
      expect((await c.post('/groups', { link: { id: rootId, name: 'after' } })).status).to.equal(201);
      await untilServerClosed(srv, path.join(root, 'edited.h5'));
      const names = pythonJson(`import h5py, sys, json\nprint(json.dumps(sorted(h5py.File(sys.argv[1], 'r').keys())))`, [path.join(root, 'edited.h5')]);
      expect(names).to.deep.equal(['after', 'before', 'from_h5py']);
    });
  });
});
