/**
 * Data reachable by the wrong user (issue #24 items 1-6), over HTTP against a real server with a
 * users file (admin, alice, bob, carol): each item's attack as the issue reported it, then the
 * right answer, for the whole class (every route and body form that reaches the same data).
 *
 * 1. dropped-in files are private to those their folder's ACL names, `default` excepted
 *    (`default:files` opens them); single-user, no-users and `defaultPublic` modes unchanged;
 * 2. `create` is checked on the group a new object is linked into, also through `h5path`,
 *    `parent_id`, `implicit=1` and soft links;
 * 3. virtual dataset sources and external raw storage are read and written only as their own
 *    ACLs (and every object ACL of a file read as raw bytes) allow;
 * 4. objects found by path (every lookup route, soft and external links) are shown only as their
 *    own ACLs allow;
 * 5. OpenID Connect users are `oidc:<sub>`, never a local user, the admin or a group by name;
 * 6. a loopback server answers only to loopback names and configured ones (DNS rebinding).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { groupAdd, userAdd } from '../../src/auth/admin.js';
import { expectError, headerRequest } from '../helpers/apiExtra.js';
import { type TestIssuer, startIssuer } from '../helpers/oidc.js';
import { holdFlock } from '../helpers/live.js';
import { python } from '../helpers/python.js';
import { Client, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';

const PW = { admin: 'adm-pw-4k2j', alice: 'alice-pw-8h3g', bob: 'bob-pw-2m9x', carol: 'carol-pw-6t1q' };
type Name = keyof typeof PW;
const NONE = { create: false, read: false, update: false, delete: false, readACL: false, updateACL: false };
const TALL = path.dirname(fixturePath('tall.h5'));

/** A users file with admin, alice, bob and carol; carol is in the group staff. */
async function usersFile(): Promise<string> {
  const file = path.join(tempRoot('h5store-sec-users-'), 'users.json');
  for (const u of Object.keys(PW) as Name[]) await userAdd(file, u, PW[u]);
  await groupAdd(file, 'staff', ['carol']);
  return file;
}

describe('data reachable by the wrong user (issue #24 items 1-4)', function () {
  this.timeout(180_000);
  let srv: TestServer;
  let base: Client;
  /** A client of `domain` as a user, or anonymous. */
  const as = (who: Name | undefined, domain?: string) => (domain ? base.with(domain) : base).as(who ? { user: who, password: PW[who] } : undefined);
  /** The id of the object at `h5path` (looked up as alice). */
  const idAt = async (domain: string, h5path: string) => {
    const r = await as('alice', domain).get('/', { h5path });
    expect(r.status, `${domain} ${h5path}: ${r.text}`).to.equal(200);
    return r.json.id as string;
  };

  before(async () => {
    srv = await startServer({ args: ['--users-file', await usersFile()] });
    base = new Client(srv.url);
    expect((await as('admin', '/home').put('/', { folder: true })).status).to.equal(201);
    expect((await as('admin', '/home/alice').put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
  });
  after(async () => srv?.stop());

  describe('1. a file copied into a folder is private to those the folder names', () => {
    const dropped = '/home/alice/dropped.h5';
    const deep = '/home/alice/sub/deep.h5';
    let rootId: string;
    let dsetId: string;

    before(async () => {
      copyFixtures(srv.root, 'home/alice', ['tall.h5'], TALL);
      fs.renameSync(path.join(srv.root, 'home/alice/tall.h5'), path.join(srv.root, 'home/alice/dropped.h5'));
      copyFixtures(srv.root, 'home/alice/sub', ['tall.h5'], TALL);
      fs.renameSync(path.join(srv.root, 'home/alice/sub/tall.h5'), path.join(srv.root, 'home/alice/sub/deep.h5'));
      rootId = (await as('alice', dropped).get('/')).json.root;
      dsetId = await idAt(dropped, '/g1/g1.1/dset1.1.1');
    });

    /** Every read route of a dropped-in file, as one user: the statuses. */
    const reads = async (who: Name | undefined) => {
      const c = as(who, dropped);
      return {
        getobjs: (await c.get('/', { getobjs: 1, include_attrs: 1 })).status,
        domain: (await c.get('/')).status,
        group: (await c.get(`/groups/${rootId}`, { include_links: 1 })).status,
        links: (await c.get(`/groups/${rootId}/links`)).status,
        h5path: (await c.get('/', { h5path: '/g1/g1.1/dset1.1.1' })).status,
        dataset: (await c.get(`/datasets/${dsetId}`)).status,
        value: (await c.get(`/datasets/${dsetId}/value`)).status,
        deep: (await as(who, deep).get('/', { getobjs: 1 })).status,
      };
    };
    const all = (status: number) => ({ getobjs: status, domain: status, group: status, links: status, h5path: status, dataset: status, value: status, deep: status });

    it('the attack: no credentials (or another user) read the data of a file in alice\'s folder: 401 / 403 on every read route', async () => {
      expect(await reads(undefined), 'anonymous').to.deep.equal(all(401));
      expect(await reads('bob'), 'bob').to.deep.equal(all(403));
      expect(await reads('alice'), 'alice, whose folder it is').to.deep.equal(all(200));
      // the folder itself is still listed by everyone, without the files they may not read
      expect((await as(undefined, '/home/alice').get('/')).status).to.equal(200);
      const anon = await as(undefined, '/home/alice/').get('/domains');
      expect(anon.status).to.equal(200);
      expect(anon.json.domains.map((d: { name: string }) => d.name)).to.not.include(dropped);
      const mine = await as('alice', '/home/alice/').get('/domains');
      expect(mine.json.domains.map((d: { name: string }) => d.name)).to.include(dropped);
    });

    it('those the folder\'s ACL names (users and groups) read them; default stays out', async () => {
      expect((await as('alice', '/home/alice').put('/acls/bob', { read: true })).status).to.equal(201);
      expect((await as('alice', '/home/alice').put('/acls/g:staff', { read: true })).status).to.equal(201);
      try {
        expect(await reads('bob')).to.deep.equal(all(200));
        expect(await reads('carol'), 'carol, through g:staff').to.deep.equal(all(200));
        expect(await reads(undefined)).to.deep.equal(all(401));
        expect((await as('bob', dropped).post('/groups', {})).status, 'read only').to.equal(403);
      } finally {
        expect((await as('alice', '/home/alice').put('/acls', { acls: { bob: NONE, 'g:staff': NONE } })).status).to.equal(201);
      }
    });

    it('the folder entry default:files makes them public (folders only); the folder\'s ACL shows it', async () => {
      expect((await as('alice', '/home/alice').put('/acls/default:files', { read: true })).status).to.equal(201);
      expect(await reads(undefined)).to.deep.equal(all(200));
      expect((await as(undefined, dropped).post('/groups', {})).status, 'only what the entry grants').to.equal(401);
      const acls = await as('alice', '/home/alice').get('/acls');
      expect(acls.json.acls.find((a: { userName: string }) => a.userName === 'default:files')).to.include({ read: true, update: false });
      expect((await as('alice', '/home/alice').put('/acls/default:files', { read: false })).status).to.equal(201);
      expect(await reads(undefined)).to.deep.equal(all(401));
      // a domain or an object has no dropped-in files
      expectError(await as('alice', dropped).put('/acls/default:files', { read: true }), 400);
      expectError(await as('alice', dropped).put('/acls', { acls: { 'default:files': { read: true } } }), 400);
      expectError(await as('alice', dropped).put(`/datasets/${dsetId}/acls/default:files`, { read: true }), 400);
    });

    it('its ACL shows who may use it; the first change keeps it private (and writes it into the file)', async () => {
      const before = await as('alice', dropped).get('/acls');
      expect(before.json.acls.find((a: { userName: string }) => a.userName === 'default')).to.deep.equal({ userName: 'default', ...NONE });
      expect((await as('alice', dropped).put('/acls/carol', { read: true })).status).to.equal(201);
      expect((await as('carol', dropped).get('/')).status).to.equal(200);
      expect((await as(undefined, dropped).get('/')).status).to.equal(401);
      expect((await as('bob', dropped).get('/')).status).to.equal(403);
      const after = await as('alice', dropped).get('/acls');
      expect(after.json.acls.map((a: { userName: string }) => a.userName)).to.include.members(['alice', 'carol', 'default']);
      expect(after.json.acls.find((a: { userName: string }) => a.userName === 'default')).to.deep.equal({ userName: 'default', ...NONE });
    });

    it('while another program writes it, its name is listed only to those the folder names (its own ACL cannot be read at once)', async () => {
      // a file the server has not opened yet, and a writer's lock on it (libhdf5 takes an
      // exclusive flock): the listing judges the file by its folder
      const fresh = '/home/alice/fresh.h5';
      fs.copyFileSync(fixturePath('tall.h5'), path.join(srv.root, fresh));
      const held = await holdFlock(path.join(srv.root, fresh));
      try {
        const names = async (who: Name | undefined) => {
          const r = await as(who, '/home/alice/').get('/domains');
          expect(r.status, r.text).to.equal(200);
          return r.json.domains as Array<{ name: string; beingWritten?: boolean }>;
        };
        const anon = (await names(undefined)).map((d) => d.name);
        expect(anon, 'anonymous').to.not.include(fresh);
        expect(anon, 'anonymous').to.not.include(dropped);
        expect((await names('alice')).find((d) => d.name === fresh)).to.include({ beingWritten: true });
      } finally {
        held.release();
      }
    });

    it('a new domain created in the folder gets the folder\'s entries but not default:files', async () => {
      expect((await as('alice', '/home/alice').put('/acls/default:files', { read: true })).status).to.equal(201);
      const made = await as('alice', '/home/alice/made.h5').put('/', {});
      expect(made.status).to.equal(201);
      expect(Object.keys(made.json.acls).sort()).to.deep.equal(['alice', 'default']);
      expect(made.json.acls.default).to.deep.equal(NONE);
      expect((await as('alice', '/home/alice').put('/acls/default:files', { read: false })).status).to.equal(201);
    });
  });

  describe('2. create is checked on the group a new object goes into, however it is named', () => {
    const dom = '/home/alice/create.h5';
    const dom2 = '/home/alice/create2.h5';
    let rootId: string;
    let locked: string;
    let open2: string;
    const bodies: Record<string, Record<string, unknown>> = {
      groups: {},
      datasets: { type: 'H5T_STD_I32LE', shape: [2] },
      datatypes: { type: 'H5T_STD_I32LE' },
    };

    before(async () => {
      const a = as('alice', dom);
      expect((await a.put('/', {})).status).to.equal(201);
      rootId = (await a.get('/')).json.root;
      locked = (await a.post('/groups', { link: { id: rootId, name: 'locked' } })).json.id;
      expect((await a.post('/groups', { link: { id: locked, name: 'taken' } })).status).to.equal(201);
      // bob may create at the root, and only read /locked
      expect((await a.put('/acls/bob', { read: true, create: true })).status).to.equal(201);
      expect((await a.put(`/groups/${locked}/acls/bob`, { read: true })).status).to.equal(201);
      // in create2.h5 bob may only read, except in /open, whose own ACL lets him create
      const a2 = as('alice', dom2);
      expect((await a2.put('/', {})).status).to.equal(201);
      const root2 = (await a2.get('/')).json.root;
      open2 = (await a2.post('/groups', { link: { id: root2, name: 'open' } })).json.id;
      expect((await a2.put('/acls/bob', { read: true })).status).to.equal(201);
      expect((await a2.put(`/groups/${open2}/acls/bob`, { read: true, create: true })).status).to.equal(201);
    });

    it('the attack: bob creates in /locked through h5path, parent_id, implicit=1 and a soft link: 403 for every kind, nothing made', async () => {
      const b = as('bob', dom);
      expect((await b.put(`/groups/${rootId}/links/soft`, { h5path: '/locked' })).status, 'bob may link at the root').to.equal(201);
      const got: string[] = [];
      for (const [col, body] of Object.entries(bodies)) {
        const tries: Array<[string, Record<string, unknown>, Record<string, number>?]> = [
          ['link.id', { ...body, link: { id: locked, name: `${col}-1` } }],
          ['h5path', { ...body, h5path: `/locked/${col}-2` }],
          ['relative h5path + parent_id', { ...body, h5path: `${col}-3`, parent_id: locked }],
          ['implicit=1', { ...body, h5path: `/locked/a/b/${col}-4` }, { implicit: 1 }],
          ['through a soft link', { ...body, h5path: `/soft/${col}-5` }],
          ['through a soft link, implicit', { ...body, h5path: `/soft/n/${col}-6` }, { implicit: 1 }],
          ['a name taken there (403, not 409: nothing learnt of its links)', { ...body, h5path: '/locked/taken' }],
        ];
        for (const [how, b2, q] of tries) {
          const r = await b.post(`/${col}`, b2, q);
          got.push(`${col} ${how}: ${r.status}`);
          if (r.status === 403) expect(r.json.message).to.match(/may not create/);
        }
        expectError(await as(undefined, dom).post(`/${col}`, { ...body, h5path: `/locked/${col}-7` }), 401);
      }
      expect(got.filter((g) => !g.endsWith(': 403')), 'allowed').to.deep.equal([]);
      const inLocked = await as('alice', dom).get(`/groups/${locked}/links`);
      expect(inLocked.json.links.map((l: { title: string }) => l.title), 'nothing was linked into /locked').to.deep.equal(['taken']);
    });

    it('where bob may create, the same forms work (the deepest existing group decides for implicit=1)', async () => {
      const b = as('bob', dom);
      for (const [col, body] of Object.entries(bodies)) {
        expect((await b.post(`/${col}`, { ...body, h5path: `/free-${col}` })).status).to.equal(201);
        expect((await b.post(`/${col}`, { ...body, h5path: `/new-${col}/x` }, { implicit: 1 })).status).to.equal(201);
      }
      const b2 = as('bob', dom2);
      for (const [col, body] of Object.entries(bodies)) {
        expect((await b2.post(`/${col}`, { ...body, h5path: `/open/${col}` })).status, `${col} in /open`).to.equal(201);
        expect((await b2.post(`/${col}`, { ...body, h5path: `${col}-rel`, parent_id: open2 })).status, `${col} in /open (parent_id)`).to.equal(201);
        expect((await b2.post(`/${col}`, { ...body, h5path: `/open/deeper-${col}/x` }, { implicit: 1 })).status, `${col} below /open, implicit`).to.equal(201);
        // the new group has no ACL of its own: the root's (read only) governs it
        expect((await b2.post(`/${col}`, { ...body, h5path: `/open/deeper-${col}/y` })).status, `${col} in the group made below /open`).to.equal(403);
        expect((await b2.post(`/${col}`, { ...body, h5path: `/${col}-at-root` })).status, `${col} at the root`).to.equal(403);
        expect((await b2.post(`/${col}`, { ...body, h5path: `/elsewhere/${col}` }, { implicit: 1 })).status, `${col} in a new group at the root`).to.equal(403);
      }
    });
  });

  describe('3. virtual dataset sources and external raw storage answer to their own ACLs', () => {
    const dir = () => path.join(srv.root, 'home/alice');
    const ids: Record<string, string> = {};

    before(async () => {
      python(
        `
import h5py, numpy as np, sys, os
d = sys.argv[1]
with h5py.File(os.path.join(d, 'src.h5'), 'w') as f:
    f.create_dataset('pub', data=np.arange(6, dtype='<i4'))
    h = f.create_dataset('hidden', data=np.arange(100, 106, dtype='<i4'))
    off = h.id.get_offset()
with h5py.File(os.path.join(d, 'vds.h5'), 'w', libver='latest') as f:
    for name, src in (('v_hidden', 'hidden'), ('v_pub', 'pub')):
        lay = h5py.VirtualLayout(shape=(6,), dtype='<i4')
        lay[:] = h5py.VirtualSource('src.h5', src, shape=(6,))
        f.create_virtual_dataset(name, lay, fillvalue=-1)
with h5py.File(os.path.join(d, 'same.h5'), 'w', libver='latest') as f:
    f.create_dataset('hidden', data=np.arange(200, 206, dtype='<i4'))
    f.create_dataset('pub', data=np.arange(300, 306, dtype='<i4'))
    for name, src in (('v', 'hidden'), ('vp', 'pub')):
        lay = h5py.VirtualLayout(shape=(6,), dtype='<i4')
        lay[:] = h5py.VirtualSource('.', src, shape=(6,))
        f.create_virtual_dataset(name, lay, fillvalue=-1)
with h5py.File(os.path.join(d, 'ext.h5'), 'w') as f:
    f.create_dataset('e', shape=(6,), dtype='<i4', external=[('src.h5', off, 24)])
`,
        [dir()],
      );
      // bob may read and update each file (its root ACL), but not the datasets called hidden
      for (const f of ['src', 'vds', 'same', 'ext']) expect((await as('alice', `/home/alice/${f}.h5`).put('/acls/bob', { read: true, update: true })).status).to.equal(201);
      for (const [f, p] of [['src', '/hidden'], ['src', '/pub'], ['vds', '/v_hidden'], ['vds', '/v_pub'], ['same', '/hidden'], ['same', '/v'], ['same', '/vp'], ['ext', '/e']]) {
        ids[`${f}${p}`] = await idAt(`/home/alice/${f}.h5`, p);
      }
      for (const f of ['src', 'same']) {
        expect((await as('alice', `/home/alice/${f}.h5`).put(`/datasets/${ids[`${f}/hidden`]}/acls/bob`, NONE)).status).to.equal(201);
      }
    });

    const value = (domain: string, id: string, who: Name = 'bob') => as(who, `/home/alice/${domain}.h5`).get(`/datasets/${id}/value`);

    it('the attack: bob reads a hidden dataset through a virtual dataset (other file, same file) or external raw storage: 403', async () => {
      expect((await value('src', ids['src/hidden'])).status, 'directly').to.equal(403);
      for (const [domain, key] of [['vds', 'vds/v_hidden'], ['same', 'same/v'], ['ext', 'ext/e']]) {
        const r = await value(domain, ids[key]);
        expectError(r, 403, key);
        expect(r.json.message, key).to.match(/bob may not read/);
        expect(r.text).to.not.match(/10[0-5]|20[0-5]/);
        // binary and POST selections too
        expect((await as('bob', `/home/alice/${domain}.h5`).request('GET', `/datasets/${ids[key]}/value`, { headers: { accept: 'application/octet-stream' } })).status).to.equal(403);
        expect((await as('bob', `/home/alice/${domain}.h5`).post(`/datasets/${ids[key]}/value`, { points: [0, 1] })).status).to.equal(403);
      }
    });

    it('sources bob may read are read; alice reads everything', async () => {
      expect((await value('vds', ids['vds/v_pub'])).json.value).to.deep.equal([0, 1, 2, 3, 4, 5]);
      expect((await value('same', ids['same/vp'])).json.value).to.deep.equal([300, 301, 302, 303, 304, 305]);
      expect((await value('vds', ids['vds/v_hidden'], 'alice')).json.value).to.deep.equal([100, 101, 102, 103, 104, 105]);
      expect((await value('ext', ids['ext/e'], 'alice')).json.value).to.deep.equal([100, 101, 102, 103, 104, 105]);
    });

    it('writes need update on each source dataset: refused ones write nothing', async () => {
      const w = await as('bob', '/home/alice/vds.h5').put(`/datasets/${ids['vds/v_hidden']}/value`, { value: [9, 9, 9, 9, 9, 9] });
      expectError(w, 403);
      expect(w.json.message).to.match(/bob may not update/);
      expect((await value('src', ids['src/hidden'], 'alice')).json.value).to.deep.equal([100, 101, 102, 103, 104, 105]);
      expect((await as('bob', '/home/alice/same.h5').put(`/datasets/${ids['same/v']}/value`, { value: [9, 9, 9, 9, 9, 9] })).status).to.equal(403);
      expect((await as('bob', '/home/alice/ext.h5').put(`/datasets/${ids['ext/e']}/value`, { value: [9, 9, 9, 9, 9, 9] })).status).to.equal(403);
      expect((await value('src', ids['src/hidden'], 'alice')).json.value).to.deep.equal([100, 101, 102, 103, 104, 105]);
      expect((await as('bob', '/home/alice/vds.h5').put(`/datasets/${ids['vds/v_pub']}/value`, { value: [7, 7, 7, 7, 7, 7] })).status).to.equal(200);
      expect((await value('src', ids['src/pub'], 'alice')).json.value).to.deep.equal([7, 7, 7, 7, 7, 7]);
    });

    it('once the hidden dataset\'s ACL lets bob read it, every way reads it', async () => {
      expect((await as('alice', '/home/alice/src.h5').put(`/datasets/${ids['src/hidden']}/acls/bob`, { read: true })).status).to.equal(201);
      expect((await value('vds', ids['vds/v_hidden'])).json.value).to.deep.equal([100, 101, 102, 103, 104, 105]);
      expect((await value('ext', ids['ext/e'])).json.value).to.deep.equal([100, 101, 102, 103, 104, 105]);
      expect((await value('same', ids['same/v'])).status, 'same.h5 still hides its own').to.equal(403);
    });
  });

  describe('4. objects found by path answer to their own ACLs', () => {
    const dom = '/home/alice/paths.h5';
    const other = '/home/alice/paths-ext.h5';
    const hiddenIds: string[] = [];

    before(async () => {
      const a = as('alice', dom);
      expect((await a.put('/', {})).status).to.equal(201);
      const root = (await a.get('/')).json.root;
      const g = (await a.post('/groups', { link: { id: root, name: 'hidden' } })).json.id;
      const d = (await a.post('/datasets', { type: 'H5T_STD_I32LE', shape: [2], link: { id: root, name: 'hid_ds' } })).json.id;
      const t = (await a.post('/datatypes', { type: 'H5T_STD_I32LE', link: { id: root, name: 'hid_t' } })).json.id;
      expect((await a.post('/groups', { link: { id: root, name: 'open' } })).status).to.equal(201);
      expect((await a.put('/acls/bob', { read: true })).status).to.equal(201);
      for (const [col, id] of [['groups', g], ['datasets', d], ['datatypes', t]]) {
        expect((await a.put(`/${col}/${id}/acls/bob`, NONE)).status).to.equal(201);
        hiddenIds.push(id);
      }
      expect((await a.put(`/groups/${root}/links/soft`, { h5path: '/hid_ds' })).status).to.equal(201);
      // another domain bob may read, with a hidden group: reached through external links
      const e = as('alice', other);
      expect((await e.put('/', {})).status).to.equal(201);
      const eroot = (await e.get('/')).json.root;
      const eg = (await e.post('/groups', { link: { id: eroot, name: 'hidden' } })).json.id;
      expect((await e.post('/groups', { link: { id: eroot, name: 'shown' } })).status).to.equal(201);
      expect((await e.put('/acls/bob', { read: true })).status).to.equal(201);
      expect((await e.put(`/groups/${eg}/acls/bob`, NONE)).status).to.equal(201);
      hiddenIds.push(eg);
      expect((await a.put(`/groups/${root}/links/ext`, { h5path: '/hidden', h5domain: other })).status).to.equal(201);
      expect((await a.put(`/groups/${root}/links/ext2`, { h5path: '/shown', h5domain: other })).status).to.equal(201);
    });

    /** Every lookup route for `h5path`, as a user: route -> status. */
    const lookups = async (who: Name, h5path: string, follow: Record<string, number> = {}) => {
      const c = as(who, dom);
      const root = (await as('alice', dom).get('/')).json.root;
      const rel = h5path.replace(/^\//, '');
      const out: Record<string, number> = {};
      const add = (k: string, r: { status: number; text: string }) => {
        out[k] = r.status;
        if (r.status !== 200) for (const id of hiddenIds) expect(r.text, `${k} shows a hidden id`).to.not.include(id);
      };
      add('GET /?h5path', await c.get('/', { h5path, ...follow }));
      add('GET /groups/<root>?h5path', await c.get(`/groups/${root}`, { h5path: rel, ...follow }));
      for (const col of ['groups', 'datasets', 'datatypes']) {
        const r = await c.get(`/${col}`, { h5path, ...follow });
        add(`GET /${col}?h5path`, r.status === 400 && /is a/.test(r.text) ? { status: 0, text: r.text } : r); // another kind: 400
      }
      add('POST / h5paths', await c.request('POST', '/', { body: { h5paths: [h5path] }, query: follow }));
      // h5grove's routes follow every link (resolve_links): the object they end at answers too
      // (meta's only_valid shows an external link it may not follow as the link itself: 0)
      for (const name of ['meta', 'attr']) {
        const r = await c.get(`/h5grove/${name}/`, { file: dom, path: h5path });
        add(`GET /h5grove/${name}/`, r.status === 200 && r.json.kind === 'external_link' ? { status: 0, text: r.text } : r);
      }
      return out;
    };

    it('the attack: bob gets the metadata of hidden objects through every lookup route: 403', async () => {
      const cases: Array<[string, Record<string, number>]> = [
        ['/hidden', {}],
        ['/hid_ds', {}],
        ['/hid_t', {}],
        ['/soft', { follow_soft_links: 1 }],
        ['/ext', { follow_external_links: 1 }],
      ];
      for (const [p, follow] of cases) {
        const got = await lookups('bob', p, follow);
        for (const [route, status] of Object.entries(got)) expect(route === 'GET /h5grove/meta/' && p === '/ext' ? [0] : [403], `${route} ${p}`).to.include(status);
      }
    });

    it('the attack: bob downloads the file holding the hidden objects (GET /file, ranges too): 403; alice gets its bytes', async () => {
      for (const headers of [{}, { Range: 'bytes=0-1023' }] as Record<string, string>[]) {
        const r = await as('bob', dom).request('GET', '/file', { headers });
        expect(r.status, JSON.stringify(headers)).to.equal(403);
        expect(r.text).to.include('ACL of its own');
      }
      expect((await as('bob', other).request('HEAD', '/file')).status).to.equal(403);
      const a = await as('alice', dom).request('GET', '/file');
      expect(a.status).to.equal(200);
      expect(a.body.subarray(0, 8).toString('latin1')).to.equal('\x89HDF\r\n\x1a\n');
    });

    it('what bob may read is found; alice finds everything', async () => {
      for (const [p, follow] of [['/open', {}], ['/ext2', { follow_external_links: 1 }]] as const) {
        for (const [route, status] of Object.entries(await lookups('bob', p, follow))) expect([0, 200], `${route} ${p}`).to.include(status);
      }
      for (const [p, follow] of [['/hidden', {}], ['/hid_ds', {}], ['/soft', { follow_soft_links: 1 }], ['/ext', { follow_external_links: 1 }]] as const) {
        for (const [route, status] of Object.entries(await lookups('alice', p, follow))) expect([0, 200], `alice ${route} ${p}`).to.include(status);
      }
      const batch = await as('bob', dom).request('POST', '/', { body: { h5paths: ['/open', '/ext2'] }, query: { follow_external_links: 1 } });
      expect(batch.status).to.equal(200);
      expect(Object.keys(batch.json.h5paths)).to.deep.equal(['/open', '/ext2']);
    });
  });
});

describe('dropped-in files in the other modes (issue #24 item 1)', function () {
  this.timeout(120_000);
  const ALL = { create: true, read: true, update: true, delete: true, readACL: true, updateACL: true };
  /** A data root with /f (a folder ACL from a server with users: default read) and /g (none). */
  const rootWithFiles = () => {
    const root = tempRoot('h5store-sec-modes-');
    copyFixtures(root, 'f', ['tall.h5'], TALL);
    copyFixtures(root, 'g', ['tall.h5'], TALL);
    fs.writeFileSync(path.join(root, 'f', '.h5store-folder.json'), JSON.stringify({ version: 1, owner: 'alice', acls: { alice: ALL, default: { ...NONE, read: true } } }));
    return root;
  };

  it('single-user mode (no users file, loopback): everything allowed stays allowed', async () => {
    const srv = await startServer({ root: rootWithFiles() });
    try {
      const c = new Client(srv.url);
      expect((await c.with('/f/tall.h5').get('/', { getobjs: 1 })).status).to.equal(200);
      expect((await c.with('/g/tall.h5').get('/', { getobjs: 1 })).status).to.equal(200);
      expect((await c.with('/g/tall.h5').post('/groups', {})).status).to.equal(201);
    } finally {
      await srv.stop();
    }
  });

  it('no users file on another address: everyone reads, nobody writes', async () => {
    const srv = await startServer({ root: rootWithFiles(), args: ['--host', '0.0.0.0'] });
    try {
      const c = new Client(srv.url.replace('0.0.0.0', '127.0.0.1'));
      expect((await c.with('/f/tall.h5').get('/', { getobjs: 1 })).status).to.equal(200);
      expect((await c.with('/g/tall.h5').get('/', { getobjs: 1 })).status).to.equal(200);
      expect((await c.with('/g/tall.h5').post('/groups', {})).status).to.equal(401);
    } finally {
      await srv.stop();
    }
  });

  it('with users: a folder without any ACL up to the root leaves them to defaultAcl; defaultPublic keeps the folder\'s default', async () => {
    const users = await usersFile();
    const priv = await startServer({ root: rootWithFiles(), args: ['--users-file', users] });
    const pub = await startServer({ root: rootWithFiles(), args: ['--users-file', users, '--default-public'] });
    try {
      const c = new Client(priv.url);
      expect((await c.with('/f/tall.h5').get('/')).status, 'in a folder with an ACL').to.equal(401);
      expect((await c.with('/f/tall.h5').as({ user: 'alice', password: PW.alice }).get('/')).status).to.equal(200);
      expect((await c.with('/g/tall.h5').get('/')).status, 'no folder ACL: defaultAcl (read)').to.equal(200);
      expect((await new Client(pub.url).with('/f/tall.h5').get('/')).status, 'defaultPublic').to.equal(200);
    } finally {
      await priv.stop();
      await pub.stop();
    }
  });
});

describe('OpenID Connect identities (issue #24 item 5)', function () {
  this.timeout(60_000);
  let idp: TestIssuer;
  let srv: TestServer;
  let base: Client;
  const alice = () => base.as({ user: 'alice', password: PW.alice });
  const token = async (claims: Record<string, unknown>) => base.as({ token: await idp.sign({ iss: idp.issuer, aud: 'h5store', ...claims }) });

  before(async () => {
    idp = await startIssuer();
    const users = await usersFile();
    await groupAdd(users, 'team', ['oidc:sub-carla']);
    const cfg = path.join(path.dirname(users), 'h5store.json');
    fs.writeFileSync(cfg, JSON.stringify({ usersFile: users, oidcIssuer: idp.issuer, oidcAudience: 'h5store', oidcJwksUri: idp.jwksUri, oidcAdmins: ['sub-boss'] }));
    srv = await startServer({ args: ['--config', cfg] });
    base = new Client(srv.url);
    expect((await base.as({ user: 'admin', password: PW.admin }).with('/a.h5').put('/', { owner: 'alice' })).status).to.equal(201);
    expect((await alice().with('/a.h5').put('/acls/g:staff', { read: true })).status).to.equal(201);
  });
  after(async () => {
    await srv?.stop();
    idp?.close();
  });

  it('the attack: tokens whose preferred_username is admin, alice or g:staff are none of them', async () => {
    const asAdmin = await token({ sub: 'sub-1', preferred_username: 'admin' });
    expect((await asAdmin.get('/about')).json).to.include({ username: 'oidc:sub-1', isadmin: false });
    expect((await asAdmin.with('/a.h5').get('/acls')).status).to.equal(403);
    expect((await asAdmin.with('/b.h5').put('/', { owner: 'alice' })).status).to.equal(403);
    const asAlice = await token({ sub: 'sub-2', preferred_username: 'alice', name: 'alice', email: 'alice@example.org' });
    expect((await asAlice.get('/about')).json.username).to.equal('oidc:sub-2');
    expect((await asAlice.with('/a.h5').get('/')).status).to.equal(403);
    const asGroup = await token({ sub: 'g:staff', preferred_username: 'g:staff' });
    expect((await asGroup.get('/about')).json.username).to.equal('oidc:g:staff');
    expect((await asGroup.with('/a.h5').get('/')).status).to.equal(403);
    const asDefault = await token({ sub: 'default' });
    expect((await asDefault.get('/about')).json.username).to.equal('oidc:default');
  });

  it('OIDC users are named in ACLs as oidc:<sub>, in groups only where the users file says so, admins only by oidcAdmins', async () => {
    expect((await alice().with('/a.h5').put('/acls/oidc:sub-2', { read: true })).status).to.equal(201);
    expect((await (await token({ sub: 'sub-2' })).with('/a.h5').get('/')).status).to.equal(200);
    expect((await (await token({ sub: 'sub-3', preferred_username: 'oidc:sub-2' })).with('/a.h5').get('/')).status).to.equal(403);
    expect((await alice().with('/a.h5').put('/acls/g:team', { read: true })).status).to.equal(201);
    expect((await (await token({ sub: 'sub-carla' })).with('/a.h5').get('/')).status).to.equal(200);
    const boss = await token({ sub: 'sub-boss' });
    expect((await boss.get('/about')).json).to.include({ username: 'oidc:sub-boss', isadmin: true });
    expect((await boss.with('/a.h5').get('/acls')).status).to.equal(200);
  });

  it('a subject that cannot name a user is refused with a message', async () => {
    const r = await (await token({ sub: 'a/b' })).get('/about');
    expectError(r, 401);
    expect(r.json.message).to.match(/oidcUserClaim/);
  });
});

describe('Host names a server answers to (issue #24 item 6, DNS rebinding)', function () {
  this.timeout(60_000);
  let local: TestServer;
  let open: TestServer;
  let limited: TestServer;

  before(async () => {
    [local, open, limited] = await Promise.all([
      startServer({ args: ['--allowed-hosts', 'data.example', '--endpoint', 'http://pub.example:8080'] }),
      startServer({ args: ['--host', '0.0.0.0'] }),
      startServer({ args: ['--host', '0.0.0.0', '--allowed-hosts', 'a.example,B.Example'] }),
    ]);
    expect((await new Client(local.url, '/victim.h5').put('/')).status).to.equal(201);
  });
  after(async () => {
    await Promise.all([local?.stop(), open?.stop(), limited?.stop()]);
  });
  const port = (s: TestServer) => new URL(s.url).port;
  const get = (s: TestServer, host: string, p = '/about') => headerRequest(s.url.replace('0.0.0.0', '127.0.0.1'), 'GET', p, { host });

  it('the attack: a page of another name resolving to 127.0.0.1 deletes a file in single-user mode: 421, nothing deleted', async () => {
    const evil = `evil.example:${port(local)}`;
    const del = await headerRequest(local.url, 'DELETE', '/?domain=/victim.h5', { host: evil, origin: `http://${evil}` });
    expectError(del, 421);
    expect(del.json.message).to.match(/allowedHosts/);
    expect(fs.existsSync(path.join(local.root, 'victim.h5'))).to.equal(true);
    const read = await headerRequest(local.url, 'GET', '/?domain=/victim.h5', { host: evil, origin: `http://${evil}` });
    expectError(read, 421);
    expectError(await get(local, 'localhost.evil.example'), 421);
    expectError(await get(local, `127.0.0.1.evil.example:${port(local)}`), 421);
    expectError(await get(local, 'bad host'), 421);
  });

  it('loopback names, the bound address, the endpoint\'s host and allowedHosts are answered', async () => {
    for (const host of [`127.0.0.1:${port(local)}`, `localhost:${port(local)}`, 'LOCALHOST.', `[::1]:${port(local)}`, '127.0.0.7', 'data.example', 'pub.example:8080', 'pub.example']) {
      expect((await get(local, host)).status, host).to.equal(200);
    }
    // hrefs keep the name asked for
    const r = await headerRequest(local.url, 'GET', '/?domain=/victim.h5', { host: 'data.example' });
    expect(r.status).to.equal(200);
  });

  it('a server bound to another address answers any name unless allowedHosts limits it', async () => {
    expect((await get(open, 'evil.example')).status).to.equal(200);
    expect((await get(open, 'some-machine.lan:5101')).status).to.equal(200);
    expect((await get(limited, 'a.example')).status).to.equal(200);
    expect((await get(limited, 'b.example:443')).status).to.equal(200);
    expect((await get(limited, `127.0.0.1:${port(limited)}`)).status).to.equal(200);
    expectError(await get(limited, 'evil.example'), 421);
  });
});
