/**
 * The domain part of the HDF REST dialect (issue #12, items 1, 3 and 9; wire-reference 1.1-1.7,
 * 0.1, 0.6): flush and rescan, `getobjs`, `verbose` statistics from the file (cross-checked
 * with h5py), `GET /domains?query=`, bucket names, self hrefs, ids of re-created domains and of
 * unknown HSDS-style ids, `/about` and `/info`, and the response headers.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { expectError, withAddr } from '../helpers/apiExtra.js';
import { python, pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';

describe('HDF REST dialect: domains, ids, service (issue #12)', function () {
  this.timeout(120000);
  let srv: TestServer;
  let root: string;
  let api: Client;

  /** A file written by h5py with known contents: 4 groups, 3 datasets (chunked, contiguous, compact), 1 committed type. */
  function writeStatsFile(file: string): void {
    python(
      `import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    g = f.create_group('a'); g.create_group('b'); f.create_group('c')
    f.create_dataset('chunked', data=np.arange(400, dtype='<f8').reshape(20, 20), chunks=(10, 10), compression='gzip')
    f.create_dataset('contig', data=np.arange(100, dtype='<i4'))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE); dcpl.set_layout(h5py.h5d.COMPACT)
    sid = h5py.h5s.create_simple((4,))
    h5py.h5d.create(f.id, b'compact', h5py.h5t.STD_I32LE, sid, dcpl=dcpl)
    f['t'] = np.dtype('<i2')
    f.attrs['attr1'] = 3`,
      [file],
    );
  }

  before(async () => {
    root = tempRoot('h5store-dialect-domains-');
    fs.mkdirSync(path.join(root, 'q'));
    writeStatsFile(path.join(root, 'stats.h5'));
    srv = await startServer({ root });
    api = new Client(srv.url);
  });
  after(async () => srv?.stop());

  describe('PUT /?flush=1 and rescan (wire-reference 1.5)', () => {
    let c: Client;
    before(async () => {
      c = api.with('/flush.h5');
      expect((await c.put('/')).status).to.equal(201);
    });

    it('flush as a query parameter or in the body: 204 with an empty body', async () => {
      const a = await c.put('/', undefined, { flush: 1 });
      expect(a.status).to.equal(204);
      expect(a.text).to.equal('');
      const b = await c.put('/', { flush: 1 });
      expect(b.status).to.equal(204);
      const s = await c.put('/', { flush: '1' });
      expect(s.status).to.equal(204);
    });

    it('flush with getdnids (as h5pyd sends it): 200 with the same dn_ids as GET /?getdnids=1', async () => {
      const open = await c.get('/', { getdnids: 1 });
      const r = await c.put('/', { flush: 1, getdnids: 1 });
      expect(r.status).to.equal(200);
      expect(r.json.dn_ids).to.be.an('array').that.is.not.empty;
      expect(r.json.dn_ids).to.deep.equal(open.json.dn_ids);
      expect((await c.put('/', undefined, { flush: 1, getdnids: 1 })).json.dn_ids).to.deep.equal(open.json.dn_ids);
    });

    it('flush writes what was written to the file: h5py sees it at once (lock-free read)', async () => {
      const rootId = (await c.get('/')).json.root;
      expect((await c.post('/groups', { link: { id: rootId, name: 'flushed' } })).status).to.equal(201);
      expect((await c.put('/', { flush: 1 })).status).to.equal(204);
      const names = pythonJson(`import h5py, json, sys\nwith h5py.File(sys.argv[1], 'r') as f: print(json.dumps(list(f)))`, [path.join(root, 'flush.h5')], { lockFree: true });
      expect(names).to.deep.equal(['flushed']);
    });

    it('flush of a missing domain is 404, of a folder 400', async () => {
      expectError(await api.with('/nope.h5').put('/', { flush: 1 }), 404);
      expectError(await api.with('/q').put('/', { flush: 1 }), 400);
    });

    it('rescan: 204, and the statistics are computed again (scan_complete moves on)', async () => {
      const s = api.with('/stats.h5');
      const before = (await s.get('/', { verbose: 1 })).json.scan_info.scan_complete;
      const r = await s.put('/', undefined, { rescan: 1 });
      expect(r.status).to.equal(204);
      const after = (await s.get('/', { verbose: 1 })).json.scan_info.scan_complete;
      expect(after).to.be.greaterThan(before);
    });
  });

  describe('GET /?verbose=1 and GET /domains?verbose=1: statistics from the file (wire-reference 1.3)', () => {
    it('counts, allocated bytes, chunks, size and md5 match h5py and the file', async () => {
      const r = await api.get('/', { domain: '/stats.h5', verbose: 1 });
      expect(r.status, r.text).to.equal(200);
      const file = path.join(root, 'stats.h5');
      const py = pythonJson(
        `import h5py, json, sys, hashlib, os
with h5py.File(sys.argv[1], 'r') as f:
    alloc = 0; chunks = 0
    for n in ('chunked', 'contig', 'compact'):
        d = f[n]; alloc += d.id.get_storage_size()
        if d.chunks: chunks += d.id.get_num_chunks()
        elif d.id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS and d.id.get_storage_size() > 0: chunks += 1
print(json.dumps({'alloc': alloc, 'chunks': chunks, 'size': os.path.getsize(sys.argv[1]), 'md5': hashlib.md5(open(sys.argv[1], 'rb').read()).hexdigest()}))`,
        [file],
        { lockFree: true },
      );
      expect(r.json).to.include({ num_groups: 4, num_datasets: 3, num_datatypes: 1 });
      expect(r.json.num_chunks).to.equal(py.chunks).and.equal(5);
      expect(r.json.num_objects).to.equal(4 + 3 + 1 + py.chunks);
      expect(r.json.allocated_bytes).to.equal(py.alloc);
      expect(r.json.total_size).to.equal(py.size);
      expect(r.json.metadata_bytes).to.equal(py.size - py.alloc);
      expect(r.json.md5_sum).to.equal(py.md5);
      expect(r.json.scan_info.scan_complete).to.be.a('number');
      // without verbose: none of it (the small GET stays small)
      const plain = await api.get('/', { domain: '/stats.h5' });
      expect(plain.json).to.not.have.property('num_groups');
      expect(plain.json).to.not.have.property('md5_sum');
    });

    // cached by file version: test/store/freshness.test.ts (in-process)

    it('GET /domains?verbose=1 gives each domain its statistics and root; folders have none', async () => {
      const r = await api.get('/domains', { domain: '/', verbose: 1 });
      expect(r.status).to.equal(200);
      const stats = r.json.domains.find((d: { name: string }) => d.name === '/stats.h5');
      expect(stats).to.include({ num_groups: 4, num_datasets: 3, num_datatypes: 1, class: 'domain' });
      expect(stats.root).to.match(/^g-/);
      const folder = r.json.domains.find((d: { name: string }) => d.name === '/q');
      expect(folder.class).to.equal('folder');
      expect(folder).to.not.have.property('num_groups');
      const plain = await api.get('/domains', { domain: '/' });
      expect(plain.json.domains.find((d: { name: string }) => d.name === '/stats.h5')).to.not.have.property('num_groups');
    });
  });

  describe('GET /?getobjs=1 (wire-reference 1.3, 2.1, 2.6)', () => {
    let c: Client;
    let rootId: string;
    const ids: Record<string, string> = {};

    before(async () => {
      c = api.with('/objs.h5');
      rootId = (await c.put('/')).json.root;
      ids.g1 = (await c.post('/groups', { link: { id: rootId, name: 'g1' }, creationProperties: { CreateOrder: 1 } })).json.id;
      for (const n of ['z', 'a', 'm']) ids[n] = (await c.post('/groups', { link: { id: ids.g1, name: n } })).json.id;
      ids.d = (await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3], link: { id: rootId, name: 'd' } })).json.id;
      ids.t = (await c.post('/datatypes', { type: 'H5T_IEEE_F32LE', link: { id: rootId, name: 't' } })).json.id;
      ids.anon = (await c.post('/groups', {})).json.id;
      expect((await c.put(`/groups/${rootId}/links/soft`, { h5path: '/g1/z' })).status).to.equal(201);
      expect((await c.put(`/groups/${rootId}/links/ext`, { h5path: '/x', h5domain: 'other.h5' })).status).to.equal(201);
      for (const [i, n] of ['b2', 'a1', 'c3'].entries()) expect((await c.put(`/groups/${ids.g1}/attributes/${n}`, { type: 'H5T_STD_I8LE', value: i })).status).to.equal(201);
      expect((await c.put(`/datasets/${ids.d}/attributes/units`, { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, value: 'm' })).status).to.equal(201);
      expect((await c.put(`/datasets/${ids.d}/value`, { value: [1, 2, 3] })).status).to.equal(200);
    });

    it('lists every object (root, linked, anonymous) as GET of the object shows it, links and attributes as dicts', async () => {
      const r = await c.get('/', { getobjs: 1, include_attrs: 1 });
      expect(r.status).to.equal(200);
      const objs = r.json.domain_objs as Record<string, any>;
      expect(Object.keys(objs).sort()).to.deep.equal([rootId, ...Object.values(ids)].sort());
      for (const [id, o] of Object.entries(objs)) {
        const col = id.startsWith('g-') ? 'groups' : id.startsWith('d-') ? 'datasets' : 'datatypes';
        const one = (await c.get(`/${col}/${id}`, { include_links: 1, include_attrs: 1, CreateOrder: 1 })).json;
        delete one.hrefs;
        delete one.domain;
        // small datasets come with their values (HSDS 1.0, issue #25)
        if (id === ids.d) one.value = [1, 2, 3];
        expect(o, id).to.deep.equal(one);
      }
      const root = objs[rootId];
      expect(root.links.soft).to.deep.include({ class: 'H5L_TYPE_SOFT', h5path: '/g1/z' });
      expect(root.links.ext).to.deep.include({ class: 'H5L_TYPE_EXTERNAL', h5path: '/x', h5domain: 'other.h5' });
      expect(root.links.d).to.deep.include({ class: 'H5L_TYPE_HARD', id: ids.d, collection: 'datasets' });
      // the group that tracks creation order has its links and attributes in creation order
      expect(Object.keys(objs[ids.g1].links)).to.deep.equal(['z', 'a', 'm']);
      expect(Object.keys(objs[ids.g1].attributes)).to.deep.equal(['b2', 'a1', 'c3']);
      expect(objs[ids.g1].creationProperties).to.deep.equal({ CreateOrder: 1 });
      expect(objs[ids.d].attributes.units.value).to.equal('m');
      expect(objs[ids.d].shape.dims).to.deep.equal([3]);
      expect(objs[ids.t].type.base).to.equal('H5T_IEEE_F32LE');
    });

    it('without include_attrs the same objects, attributes included, as HSDS 1.0 answers (h5pyd 1.0 never asks for them, issue #25); without getobjs: no domain_objs', async () => {
      const r = await c.get('/', { getobjs: 1 });
      expect(r.json.domain_objs).to.deep.equal((await c.get('/', { getobjs: 1, include_attrs: 1 })).json.domain_objs);
      expect(r.json.domain_objs[ids.g1].attributes.a1.value).to.equal(1);
      expect((await c.get('/')).json).to.not.have.property('domain_objs');
    });

    it('a domain of more than 500 objects has no domain_objs (h5pyd then asks per object)', async () => {
      const file = path.join(root, 'many.h5');
      python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n    for i in range(501): f.create_group('g%d' % i)`, [file]);
      const r = await api.get('/', { domain: '/many.h5', getobjs: 1 });
      expect(r.status).to.equal(200);
      expect(r.json).to.not.have.property('domain_objs');
      expect(r.json.root).to.match(/^g-/);
    });
  });

  describe('GET /domains?query= (wire-reference 1.7)', () => {
    before(() => {
      python(
        `import h5py, sys, os
for i in range(10):
    with h5py.File(os.path.join(sys.argv[1], 'd%02d.h5' % i), 'w') as f:
        f.attrs['attr1'] = i
        f.attrs['attr2'] = 'A%07d' % i
        f.attrs['vec'] = [1, 2]
with h5py.File(os.path.join(sys.argv[1], 'noattr.h5'), 'w') as f:
    f.attrs['attr2'] = 'A0000009'
os.mkdir(os.path.join(sys.argv[1], 'sub'))
open(os.path.join(sys.argv[1], 'text.h5'), 'w').write('not hdf5')`,
        [path.join(root, 'q')],
      );
    });
    const names = async (query: string, extra: Record<string, string | number> = {}) => {
      const r = await api.get('/domains', { domain: '/q/', query, ...extra });
      expect(r.status, r.text).to.equal(200);
      return (r.json.domains as { name: string }[]).map((d) => d.name);
    };

    it("filters by scalar root attributes: attr1 > 7 AND attr2 != 'A0000009'", async () => {
      expect(await names("attr1 > 7 AND attr2 != 'A0000009'")).to.deep.equal(['/q/d08.h5']);
      expect(await names("attr2 == 'A0000004' OR attr1 < 1")).to.deep.equal(['/q/d00.h5', '/q/d04.h5']);
      expect(await names('attr1 >= 8')).to.deep.equal(['/q/d08.h5', '/q/d09.h5']);
      // a domain without the attribute never matches; folders and non-HDF5 files are left out
      expect(await names("attr2 == 'A0000009'")).to.deep.equal(['/q/d09.h5', '/q/noattr.h5']);
      // a non-scalar attribute never matches
      expect(await names('vec == 1')).to.deep.equal([]);
    });

    it('works with Limit and pattern', async () => {
      expect(await names('attr1 >= 0', { Limit: 3 })).to.deep.equal(['/q/d00.h5', '/q/d01.h5', '/q/d02.h5']);
      expect(await names('attr1 >= 0', { pattern: 'd0[5-6]*' })).to.deep.equal(['/q/d05.h5', '/q/d06.h5']);
    });

    it('bad syntax is a 400', async () => {
      for (const q of ['attr1 >', 'attr1 = 3', '(attr1 > 3', 'attr1 @ 3', '> 3']) {
        expectError(await api.get('/domains', { domain: '/q/', query: q }), 400, q);
      }
    });
  });

  describe('bucket names and self hrefs', () => {
    it('bucket= breaking S3 naming rules is a 400; a valid name is accepted (one storage root here)', async () => {
      for (const b of ['Bad_Name', 'ab', 'a'.repeat(64), '-abc', 'abc-', 'a..b', '192.168.0.1', 'xn--abc', 'UPPER']) {
        expectError(await api.get('/', { domain: '/stats.h5', bucket: b }), 400, b);
      }
      expectError(await api.get('/domains', { domain: '/q/', bucket: 'no_underscores' }), 400);
      expectError(await api.get('/', { domain: '/stats.h5' }, { 'X-Hdf-bucket': 'Bad_Name' }), 400);
      for (const b of ['hsdstest', 'my.bucket-01', 'abc']) expect((await api.get('/', { domain: '/stats.h5', bucket: b })).status, b).to.equal(200);
    });

    it('the self href of GET /domains names the domain once and keeps Limit and Marker', async () => {
      const r = await api.get('/domains', { domain: '/q/', Limit: 2, Marker: '/q/d03.h5' });
      const self = (r.json.hrefs as { rel: string; href: string }[]).find((h) => h.rel === 'self')!.href;
      const u = new URL(self);
      expect(u.pathname).to.equal('/domains');
      expect(u.searchParams.getAll('domain')).to.deep.equal(['/q']);
      expect(u.searchParams.get('Limit')).to.equal('2');
      expect(u.searchParams.get('Marker')).to.equal('/q/d03.h5');
      const top = await api.get('/domains');
      const topSelf = new URL((top.json.hrefs as { rel: string; href: string }[]).find((h) => h.rel === 'self')!.href);
      expect(topSelf.searchParams.getAll('domain')).to.deep.equal(['/']);
    });
  });

  describe('ids (wire-reference 0.1; issue #12 item 3 and "fix first")', () => {
    it('a well-formed HSDS-style id that names nothing is 404 (g- + UUID, upper case), a malformed one 400', async () => {
      const c = api.with('/stats.h5');
      const rootId = (await c.get('/')).json.root;
      const uuid = 'g-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c';
      expectError(await c.get(`/groups/${uuid}`), 404);
      expectError(await c.get(`/groups/${uuid}/links`), 404);
      expectError(await c.get(`/groups/${uuid}/attributes`), 404);
      expectError(await c.get(`/datasets/${'d' + uuid.slice(1)}`), 404);
      expectError(await c.get(`/datatypes/${'t' + uuid.slice(1)}`), 404);
      expectError(await c.delete(`/groups/${uuid}`), 404);
      expectError(await c.put(`/groups/${rootId}/links/x`, { id: uuid }), 404);
      expectError(await c.get(`/groups/${rootId.toUpperCase().replace(/^G/, 'g')}`), 404);
      // a random HSDS v2 id of no domain known here
      expectError(await c.get('/groups/g-12345678-9abcdef0-1234-56789a-bcdef0'), 404);
      for (const bad of ['g-123', 'x-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c', 'g-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6z', 'g-0a8f3c2e6b1d4e9a9c3f1d2e3f4a5b6c12345']) {
        expectError(await c.get(`/groups/${bad}`), 400, bad);
      }
    });

    it('a domain deleted and created again at the same path gives new ids; old ids answer 410 here', async () => {
      const c = api.with('/again.h5');
      const first = (await c.put('/')).json.root;
      const g = (await c.post('/groups', { link: { id: first, name: 'g' } })).json.id;
      expect((await c.delete('/')).status).to.equal(200);
      const second = (await c.put('/')).json.root;
      const g2 = (await c.post('/groups', { link: { id: second, name: 'g' } })).json.id;
      expect(second).to.not.equal(first);
      expect(g2).to.not.equal(g);
      expect(withAddr(g2, 0n).slice(0, 20)).to.not.equal(withAddr(g, 0n).slice(0, 20));
      expectError(await c.get(`/groups/${g}`), 410);
      expectError(await c.get(`/groups/${first}`), 410);
      expect((await c.get(`/groups/${g2}`)).status).to.equal(200);
    });

    // a file replaced by another program, ids across restarts: test/store/freshness.test.ts (in-process)
  });

  describe('service endpoints and headers (wire-reference 1.1, 1.2, 0.6)', () => {
    it('GET /about as HSDS: state READY, node_count, greeting, start_time, hsds_version 0.9.x', async () => {
      const r = await api.get('/about');
      expect(r.status).to.equal(200);
      expect(r.json).to.include({ state: 'READY', node_count: 1 });
      expect(r.json.hsds_version).to.match(/^0\.9\./);
      expect(r.json.greeting).to.be.a('string').and.not.equal('');
      expect(r.json.start_time).to.be.a('number');
      expect(Math.abs(r.json.start_time - Date.now() / 1000)).to.be.below(600);
      expect(r.json.username).to.equal('anonymous');
    });

    it('GET /info has the node object', async () => {
      const r = await api.get('/info');
      expect(r.status).to.equal(200);
      expect(r.json.node).to.include({ type: 'sn', state: 'READY', node_count: 1 });
      expect(r.json.node.id).to.be.a('string');
      expect(r.json.node.start_time).to.be.a('number');
    });

    it('every reply names h5store in Server and carries the security headers (JSON, errors, binary, streamed values)', async () => {
      const c = api.with('/stats.h5');
      const d = (await c.get('/', { h5path: '/contig' })).json.id;
      const replies = {
        about: await api.get('/about'),
        domain: await c.get('/'),
        error: await c.get('/groups/g-123'),
        missing: await api.get('/no/such/route'),
        json: await c.get(`/datasets/${d}/value`),
        binary: await c.get(`/datasets/${d}/value`, undefined, { Accept: 'application/octet-stream' }),
      };
      for (const [what, r] of Object.entries(replies)) {
        expect(r.headers.get('server'), what).to.match(/^h5store\/\d+\.\d+\.\d+/);
        expect(r.headers.get('x-content-type-options'), what).to.equal('nosniff');
        expect(r.headers.get('x-xss-protection'), what).to.equal('1; mode=block');
        expect(r.headers.get('referrer-policy'), what).to.equal('no-referrer');
      }
      expect(replies.domain.headers.get('content-security-policy')).to.equal("default-src 'none'; frame-ancestors 'none'");
      expect(replies.binary.headers.get('content-type')).to.equal('application/octet-stream');
    });
  });
});
