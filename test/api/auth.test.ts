/**
 * Users, authentication and access control (issue #11; service spec 2.3, 4.4, 5): the spec's
 * worked example, the route-table walk, credentials, tokens, OpenID Connect, groups, folder and
 * per-object ACLs, secure defaults and CORS. A real server over HTTP with a real users file.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FLAGS } from '../../src/auth/acl.js';
import { groupAdd, tokenAdd, tokenRevoke, userAdd, userRemove } from '../../src/auth/admin.js';
import { loadConfig } from '../../src/config.js';
import type { Deps } from '../../src/http/deps.js';
import type { Route } from '../../src/http/routeTable.js';
import { type TestIssuer, startIssuer } from '../helpers/oidc.js';
import { python } from '../helpers/python.js';
import { Client, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';
import { cliArgs } from '../helpers/serverBuild.js';

const PW = { admin: 'admin-pw-9f3k', A: 'a-pw-1x2y', B: 'b-pw-7q8r', C: 'c-pw-5t6u', bob: 'bob-pw-3e4w' };
type Name = keyof typeof PW;
const cred = (user: Name) => ({ user, password: PW[user] });
const ALL = { create: true, read: true, update: true, delete: true, readACL: true, updateACL: true };
const NONE = { create: false, read: false, update: false, delete: false, readACL: false, updateACL: false };

async function makeUsers(dir: string): Promise<string> {
  const file = path.join(dir, 'users.json');
  for (const u of Object.keys(PW) as Name[]) await userAdd(file, u, PW[u]);
  await groupAdd(file, 'staff', ['bob']);
  return file;
}

describe('users, authentication and ACLs (issue #11)', function () {
  this.timeout(120_000);
  let srv: TestServer;
  let usersFile: string;
  let base: Client;
  const as = (who: Name | undefined, domain?: string) => (domain ? base.with(domain) : base).as(who ? cred(who) : undefined);

  before(async () => {
    const root = tempRoot();
    usersFile = await makeUsers(tempRoot('h5store-users-'));
    copyFixtures(root, 'drop', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    srv = await startServer({ root, args: ['--users-file', usersFile, '--log-level', 'info'] });
    base = new Client(srv.url);
    // The admin sets up: a folder for A, a shared folder, and the worked-example domain.
    expect((await as('admin', '/home').put('/', { folder: true })).status).to.equal(201);
    expect((await as('admin', '/home/A').put('/', { folder: true, owner: 'A' })).status).to.equal(201);
  });
  after(async () => srv?.stop());

  describe('the worked example of spec section 5', () => {
    const domain = '/example.h5';
    let dset: string;
    before(async () => {
      const adm = as('admin', domain);
      expect((await adm.put('/')).status).to.equal(201);
      const r = await adm.post('/datasets', { type: 'H5T_STD_I32LE', shape: [4], maxdims: [0] });
      expect(r.status).to.equal(201);
      dset = r.json.id;
      expect((await adm.put('/acls/default', { ...NONE, read: true })).status).to.equal(201);
      expect((await adm.put('/acls/A', { ...NONE, read: true, update: true })).status).to.equal(201);
      expect((await adm.put('/acls/B', ALL)).status).to.equal(201);
    });

    it('answers exactly as the spec says, per user (table printed)', async () => {
      const rows: Array<[string, (c: Client) => Promise<number>, [number, number, number]]> = [
        ['GET /datasets/<id>', async (c) => (await c.get(`/datasets/${dset}`)).status, [200, 200, 200]],
        ['POST /datasets/<id>/value', async (c) => (await c.post(`/datasets/${dset}/value`, { points: [0, 1] })).status, [200, 200, 200]],
        ['PUT /datasets/<id>/shape', async (c) => (await c.put(`/datasets/${dset}/shape`, { shape: [6] })).status, [401, 200, 200]],
        ['PUT /datasets/<id>/attributes/<name>', async (c) => (await c.put(`/datasets/${dset}/attributes/a1`, { type: 'H5T_STD_I32LE', value: 1 })).status, [401, 403, 201]],
        ['DELETE /datasets/<id>', async (c) => (await c.delete(`/datasets/${dset}`)).status, [401, 403, 200]],
      ];
      const table: string[] = ['operation                              default  A    B'];
      for (const [name, op, want] of rows) {
        const got: number[] = [];
        for (const who of [undefined, 'A', 'B'] as const) got.push(await op(as(who, domain)));
        table.push(`${name.padEnd(38)} ${got.map((g) => String(g).padEnd(4)).join(' ')}`);
        expect(got, name).to.deep.equal(want);
      }
      console.log('      ' + table.join('\n      '));
    });

    it('a 401 carries WWW-Authenticate; a page script (X-Requested-With) gets no Basic challenge', async () => {
      const r = await as(undefined, domain).put(`/datasets/${dset}/shape`, { shape: [7] });
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/^Basic realm="h5store"/);
      const x = await as(undefined, domain).request('PUT', `/datasets/${dset}/shape`, { body: { shape: [7] }, headers: { 'x-requested-with': 'XMLHttpRequest' } });
      expect(x.status).to.equal(401);
      expect(x.headers.get('www-authenticate')).to.equal('Bearer realm="h5store"');
    });
  });

  describe('the route table', () => {
    const deps = { config: loadConfig({}, {}), store: {}, logger: {}, auth: {}, startTime: 0 } as unknown as Deps;
    let routes: Route[] = [];
    // Imported the way other suites import the store (ESM), so libhdf5's binding loads once.
    before(async () => (routes = (await import('../../src/app.js')).routeTable(deps)));

    it('every route declares what it needs; only the service routes are public', () => {
      const pub: string[] = [];
      for (const r of routes) {
        expect(r.need, `${r.method} ${r.path}`).to.exist;
        if (r.need === 'public') pub.push(`${r.method} ${r.path}`);
        else if (typeof r.need === 'object') {
          expect(FLAGS, `${r.method} ${r.path}`).to.include(r.need.flag);
          expect(['domain', 'parent', 'object'], `${r.method} ${r.path}`).to.include(r.need.on);
        } else expect(r.need, `${r.method} ${r.path}`).to.be.a('function');
      }
      expect(pub.sort()).to.deep.equal(['GET /about', 'GET /h5grove', 'GET /info']);
      const keys = routes.map((r) => `${r.method} ${r.path}`);
      expect(new Set(keys).size, 'no route declared twice').to.equal(keys.length);
      console.log(`      ${routes.length} routes: ${routes.filter((r) => r.need !== 'public').length} with a permission, ${pub.length} public`);
    });

    describe('walking every route against a domain nobody but the admin may use', () => {
      const domain = '/locked/t.h5';
      const ids: Record<string, string> = {};
      before(async () => {
        const adm = as('admin', domain);
        expect((await as('admin', '/locked').put('/', { folder: true })).status).to.equal(201);
        expect((await as('admin', '/locked').put('/acls/default', NONE)).status).to.equal(201);
        expect((await adm.put('/')).status).to.equal(201);
        ids.groups = (await adm.get('/')).json.root;
        ids.datasets = (await adm.post('/datasets', { type: 'H5T_STD_I32LE', shape: [4], link: { id: ids.groups, name: 'd' } })).json.id;
        ids.datatypes = (await adm.post('/datatypes', { type: 'H5T_STD_I32LE', link: { id: ids.groups, name: 't' } })).json.id;
        for (const col of ['groups', 'datasets', 'datatypes']) {
          expect((await adm.put(`/${col}/${ids[col]}/attributes/a`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.be.oneOf([200, 201]);
        }
      });

      /** A concrete request for a route template. */
      const concrete = (p: string) => {
        const col = /^\/(groups|datasets|datatypes)\//.exec(p)?.[1] ?? 'groups';
        return p.replace(':id', ids[col]).replace(':name', p.includes('/links/') ? 'd' : 'a').replace(':user', 'C');
      };
      const bodyFor = (method: string, p: string) => (method === 'PUT' || method === 'POST' ? (p === '/' ? {} : { value: 1 }) : undefined);

      for (const who of [undefined, 'C'] as const) {
        it(`${who ? 'an identified user without rights gets 403' : 'an anonymous request gets 401'} on every route that needs a permission`, async () => {
          const wrong: string[] = [];
          for (const r of routes) {
            if (r.need === 'public') continue;
            const p = concrete(r.path);
            const c = as(who, p === '/domains' ? '/locked/' : domain);
            // h5grove's routes name the domain with `file`
            const query = r.domainParam === 'file' ? { file: domain } : r.path === '/' && r.method === 'PUT' ? { domain: '/locked/new.h5' } : undefined;
            const res = await c.request(r.method, p, { body: bodyFor(r.method, r.path), query });
            const want = who ? 403 : 401;
            if (res.status !== want) wrong.push(`${r.method} ${r.path} -> ${res.status} ${res.json?.message ?? ''}`);
          }
          expect(wrong).to.deep.equal([]);
        });
      }

      it('the admin passes every check', async () => {
        const adm = as('admin', domain);
        expect((await adm.get(`/datasets/${ids.datasets}`)).status).to.equal(200);
        expect((await adm.get('/acls')).status).to.equal(200);
      });
    });
  });

  describe('credentials', () => {
    it('Basic and Bearer identify the user in /about; no header is anonymous', async () => {
      expect((await as('A').get('/about')).json).to.include({ username: 'A', isadmin: false });
      expect((await as('admin').get('/about')).json).to.include({ username: 'admin', isadmin: true });
      expect((await as(undefined).get('/about')).json.username).to.equal('anonymous');
    });

    it('wrong password and unknown user: 401 with WWW-Authenticate, on every route (/about too)', async () => {
      for (const who of [{ user: 'A', password: 'nope' }, { user: 'nobody', password: 'x' }, { user: 'default', password: '' }]) {
        const r = await base.as(who).get('/about');
        expect(r.status, who.user).to.equal(401);
        expect(r.headers.get('www-authenticate')).to.include('Basic');
        expect(r.text).to.not.include(who.password || 'zzz');
      }
    });

    it('malformed Authorization headers are 400, never 500', async () => {
      const bad = [
        'Basic !!!',
        'Basic ' + Buffer.from('nocolon').toString('base64'),
        'Basic ',
        'Basic',
        'Basic ' + Buffer.from(':pw').toString('base64'),
        'Digest abc',
        'Bearer',
        'Basic ' + 'A'.repeat(10_000),
        'x'.repeat(10_240),
      ];
      for (const h of bad) {
        const r = await base.get('/about', undefined, { authorization: h });
        expect(r.status, h.slice(0, 40)).to.equal(400);
      }
    });

    it('repeated failures for one user do not lock that user out (failures are limited per client address: dos.test.ts)', async () => {
      const who = { user: 'C', password: 'wrong' };
      for (let i = 0; i < 5; i++) expect((await base.as(who).get('/about')).status).to.equal(401);
      expect((await as('C').get('/about')).status, 'the right password still works').to.equal(200);
    });

    it('users added or removed in the users file take effect at once', async () => {
      await userAdd(usersFile, 'late', 'late-pw-1');
      expect((await base.as({ user: 'late', password: 'late-pw-1' }).get('/about')).json.username).to.equal('late');
      await userRemove(usersFile, 'late');
      expect((await base.as({ user: 'late', password: 'late-pw-1' }).get('/about')).status).to.equal(401);
    });

    it('API tokens: Bearer works, revoked at once, expired refused, a removed user is refused', async () => {
      const t = await tokenAdd(usersFile, 'A', { label: 'test' });
      expect((await base.as({ token: t.token }).get('/about')).json.username).to.equal('A');
      expect(fs.readFileSync(usersFile, 'utf8')).to.not.include(t.token.slice(17));
      await tokenRevoke(usersFile, t.id);
      expect((await base.as({ token: t.token }).get('/about')).status).to.equal(401);
      const short = await tokenAdd(usersFile, 'A', { days: 1 / 86400 });
      expect((await base.as({ token: short.token }).get('/about')).status).to.equal(200);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await base.as({ token: short.token }).get('/about')).status).to.equal(401);
      expect((await base.as({ token: 'h5s_AAAAAAAAAAAA_' + 'B'.repeat(43) }).get('/about')).status).to.equal(401);
      expect((await base.as({ token: 'not-a-token' }).get('/about')).status).to.equal(401);
    });

    it('the CLI: user add reads the password from stdin; token add prints the token once', async () => {
      const { execFileSync } = await import('node:child_process');
      const file = path.join(tempRoot('h5store-cli-'), 'u.json');
      const cli = (args: string[], input?: string) =>
        execFileSync(process.execPath, [...cliArgs(), ...args, '--users-file', file], { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
      expect(cli(['user', 'add', 'zed'], 'zed-pw\n')).to.include('added user zed');
      const tok = cli(['token', 'add', 'zed']).trim();
      expect(tok).to.match(/^h5s_/);
      const listed = cli(['token', 'list']);
      expect(listed).to.include('zed').and.not.include(tok);
      expect(cli(['user', 'list'])).to.include('zed');
      const doc = fs.readFileSync(file, 'utf8');
      expect(doc).to.not.include('zed-pw');
      expect(doc).to.match(/scrypt\$/);
    });
  });

  describe('domains, folders and inheritance', () => {
    it('h5pyd set-up: the admin makes /home/A owned by A; A creates a file there; others cannot see it', async () => {
      const folder = await as('A', '/home/A').get('/');
      expect(folder.json).to.include({ class: 'folder', owner: 'A' });
      const put = await as('A', '/home/A/f.h5').put('/', {});
      expect(put.status).to.equal(201);
      expect(put.json.owner).to.equal('A');
      expect(put.json.acls.A).to.deep.equal(ALL);
      expect(put.json.acls.default).to.deep.equal(NONE);
      const got = await as('A', '/home/A/f.h5').get('/');
      expect(got.json).to.include({ owner: 'A' });
      expect(got.json.acls.A).to.deep.equal(ALL);
      expect((await as('B', '/home/A/f.h5').get('/')).status).to.equal(403);
      expect((await as(undefined, '/home/A/f.h5').get('/')).status).to.equal(401);
      const own = await as('A', '/home/A/f.h5').get('/acls/A');
      expect(own.json.acl).to.include({ userName: 'A', update: true });
    });

    it('only the admin sets another owner; nobody creates outside folders they may create in', async () => {
      expect((await as('A', '/home/A/g.h5').put('/', { owner: 'B' })).status).to.equal(403);
      expect((await as('A', '/home/B').put('/', { folder: true })).status).to.equal(403);
      expect((await as(undefined, '/home/A/h.h5').put('/', {})).status).to.equal(401);
    });

    it('a domain created in a folder starts with the folder ACL; GET /domains lists only what one may read', async () => {
      expect((await as('A', '/home/A').put('/acls/C', { read: true })).status).to.equal(201);
      const made = await as('A', '/home/A/shared.h5').put('/', {});
      expect(made.json.acls.C).to.deep.equal({ ...NONE, read: true });
      expect((await as('C', '/home/A/shared.h5').get('/')).status).to.equal(200);
      const listC = await as('C', '/home/A/').get('/domains');
      const names = listC.json.domains.map((d: { name: string }) => d.name);
      expect(names).to.include('/home/A/shared.h5').and.not.include('/home/A/f.h5');
      const listA = await as('A', '/home/A/').get('/domains');
      expect(listA.json.domains.map((d: { name: string }) => d.name)).to.include.members(['/home/A/shared.h5', '/home/A/f.h5']);
    });

    it('a dropped-in file is governed by its folder ACL and never written because it was read', async () => {
      const file = path.join(srv.root, 'drop', 'tall.h5');
      const before = fs.readFileSync(file);
      const mtime = fs.statSync(file).mtimeMs;
      expect((await as(undefined, '/drop/tall.h5').get('/')).status).to.equal(200); // default_acl: read
      expect((await as('A', '/drop/tall.h5').post('/groups', {})).status).to.equal(403);
      expect((await as('admin', '/drop').put('/acls/A', { read: true, create: true })).status).to.equal(201);
      const r = await as('A', '/drop/tall.h5').get('/');
      expect(r.status).to.equal(200);
      expect(r.json.owner).to.equal('admin');
      expect(fs.readFileSync(file).equals(before)).to.equal(true);
      expect(fs.statSync(file).mtimeMs).to.equal(mtime);
      expect(fs.readdirSync(path.join(srv.root, 'drop'))).to.include('.h5store-folder.json');
      expect((await as('admin', '/drop/').get('/domains')).json.domains.map((d: { name: string }) => d.name)).to.deep.equal(['/drop/tall.h5']);
    });

    it('groups: an ACL entry g:staff applies to its members', async () => {
      const d = '/home/A/team.h5';
      expect((await as('A', d).put('/', {})).status).to.equal(201);
      expect((await as('bob', d).get('/')).status).to.equal(403);
      expect((await as('A', d).put('/acls/g:staff', { read: true })).status).to.equal(201);
      expect((await as('bob', d).get('/')).status).to.equal(200);
      expect((await as('B', d).get('/')).status).to.equal(403);
      const acls = (await as('A', d).get('/acls')).json.acls.map((a: { userName: string }) => a.userName);
      expect(acls).to.include('g:staff');
    });
  });

  describe('ACL routes', () => {
    const d = '/home/A/acl.h5';
    let dset: string;
    before(async () => {
      expect((await as('A', d).put('/', {})).status).to.equal(201);
      dset = (await as('A', d).post('/datasets', { type: 'H5T_STD_I32LE', shape: [2] })).json.id;
      expect((await as('A', d).put('/acls/B', { read: true, update: true })).status).to.equal(201);
    });

    it('GET /acls lists entries sorted by userName; GET /acls/<user> one entry; no entry is 404', async () => {
      const all = await as('A', d).get('/acls');
      expect(all.json.acls.map((a: { userName: string }) => a.userName)).to.deep.equal(['A', 'B', 'C', 'default']); // C: from the folder
      expect((await as('A', d).get('/acls/B')).json.acl).to.deep.equal({ ...NONE, read: true, update: true, userName: 'B' });
      expect((await as('A', d).get('/acls/nobody')).status).to.equal(404);
    });

    it('an ACL change through one name of a file holds at once through its other names (a symlink)', async () => {
      // two domains, one file: each name has its own entry (and cached ACL state) on one handle
      const twin = '/home/A/twin.h5';
      const alias = '/home/A/twin-alias.h5';
      expect((await as('A', twin).put('/', {})).status).to.equal(201);
      fs.symlinkSync('twin.h5', path.join(srv.root, 'home', 'A', 'twin-alias.h5'));
      expect((await as('A', twin).put('/acls/B', { read: true })).status).to.equal(201);
      for (const name of [twin, alias, twin, alias]) expect((await as('B', name).get('/')).status, name).to.equal(200);
      expect((await as('A', twin).put('/acls/B', { read: false })).status).to.equal(201);
      for (const name of [alias, twin, alias]) expect((await as('B', name).get('/')).status, `${name} after the change`).to.equal(403);
      expect((await as('A', alias).put('/acls/B', { read: true })).status).to.equal(201);
      for (const name of [twin, alias, twin]) expect((await as('B', name).get('/')).status, `${name} after the change back`).to.equal(200);
    });

    it('the ACL state kept across writes stays the file\'s: after data writes, a failed write, and h5py changing it', async () => {
      // (a write of the server keeps the file's ACL state it knows: the `written` row of src/store/session/fileState.ts)
      const k = '/home/A/acl-kept.h5';
      expect((await as('A', k).put('/', {})).status).to.equal(201);
      const kroot = (await as('A', k).get('/')).json.root;
      const bReads = async () => (await as('B', k).get('/')).status;
      expect((await as('A', k).put('/acls/B', { read: true })).status).to.equal(201);
      expect(await bReads()).to.equal(200);
      expect((await as('A', k).post('/datasets', { type: 'H5T_STD_I32LE', shape: [2], link: { id: kroot, name: 'd' } })).status).to.equal(201);
      expect((await as('A', k).put(`/groups/${kroot}/attributes/keep`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
      expect(await bReads()).to.equal(200);
      expect((await as('A', k).put('/acls/B', { read: false })).status).to.equal(201);
      expect((await as('A', k).post('/groups', { link: { id: kroot, name: 'g' } })).status).to.equal(201);
      expect(await bReads()).to.equal(403);
      // a write that fails after writing part of itself is rolled back
      const failed = await as('A', k).request('PUT', `/groups/${kroot}/attributes`, { body: { attributes: { a1: { type: 'H5T_STD_I32LE', value: 1 }, keep: { type: 'H5T_STD_I32LE', value: 2 } } }, query: { replace: 0 } });
      expect(failed.status).to.equal(409);
      expect(await bReads()).to.equal(403);
      expect((await as('A', k).get('/acls/B')).json.acl.read).to.equal(false);
      // another program grants B read in the file (h5py, the reserved group's `acl` attribute)
      await new Promise((r) => setTimeout(r, 100)); // the server's read lease ends
      python(
        [
          'import h5py, json, sys',
          "with h5py.File(sys.argv[1], 'a') as f:",
          "    a = f['__h5store__'].attrs",
          "    doc = json.loads(a['acl'])",
          "    doc['root']['B']['read'] = True",
          "    a['acl'] = json.dumps(doc)",
        ].join('\n'),
        [path.join(srv.root, 'home', 'A', 'acl-kept.h5')],
      );
      await new Promise((r) => setTimeout(r, 20));
      expect(await bReads()).to.equal(200);
      expect((await as('A', k).get('/acls/B')).json.acl.read).to.equal(true);
    });

    it('a user reads their own entry with read permission, others need readACL', async () => {
      expect((await as('B', d).get('/acls/B')).status).to.equal(200);
      expect((await as('B', d).get('/acls/A')).status).to.equal(403);
      expect((await as('B', d).get('/acls')).status).to.equal(403);
    });

    it('no user can grant themselves updateACL (HSDS allows it: not copied)', async () => {
      expect((await as('B', d).put('/acls/B', { updateACL: true, readACL: true })).status).to.equal(403);
      expect((await as('A', d).get('/acls/B')).json.acl.updateACL).to.equal(false);
    });

    it('PUT bodies: writeACL is an alias of updateACL; unknown keys and non-booleans are 400', async () => {
      expect((await as('A', d).put('/acls/bob', { writeACL: true })).status).to.equal(201);
      expect((await as('A', d).get('/acls/bob')).json.acl).to.include({ updateACL: true, read: false });
      expect((await as('A', d).put('/acls/bob', { bogus: true })).status).to.equal(400);
      expect((await as('A', d).put('/acls/bob', { read: 'yes' })).status).to.equal(400);
      expect((await as('A', d).put('/acls/bad%2Fname', { read: true })).status).to.be.oneOf([400, 404]);
      expect((await as('A', d).put('/acls', { acls: [{ userName: 'bob', read: true, updateACL: false }] })).status).to.equal(201);
      expect((await as('A', d).get('/acls/bob')).json.acl).to.include({ updateACL: false, read: true });
      expect((await as('A', d).put('/acls', { acls: 'all' })).status).to.equal(400);
    });

    it('per-object ACLs: the object entry comes first (spec 5 order), then the root ACL', async () => {
      expect((await as('B', d).get(`/datasets/${dset}`)).status).to.equal(200);
      expect((await as('A', d).put(`/datasets/${dset}/acls/B`, { read: false })).status).to.equal(201);
      expect((await as('B', d).get(`/datasets/${dset}`)).status).to.equal(403);
      expect((await as('B', d).get(`/datasets/${dset}/value`)).status).to.equal(403);
      expect((await as('B', d).get(`/datasets/${dset}/attributes`)).status).to.equal(403);
      expect((await as('B', d).get('/')).status, 'the domain itself is still readable').to.equal(200);
      expect((await as('A', d).get(`/datasets/${dset}/acls`)).json.acls).to.deep.equal([{ userName: 'B', ...NONE }]);
      // default in the object's ACL comes before default in the root ACL
      expect((await as('A', d).put(`/datasets/${dset}/acls/default`, { read: true })).status).to.equal(201);
      expect((await as('C', d).get(`/datasets/${dset}`)).status).to.equal(200);
      expect((await as('C', d).get('/')).status, 'C has read on the domain through its own entry').to.equal(200);
      const root = (await as('A', d).get('/')).json.root;
      expect((await as('A', d).get(`/groups/${root}/acls`)).json.acls.map((a: { userName: string }) => a.userName)).to.include('B');
      expect((await as('B', d).get('/', { h5path: '/' })).status).to.equal(200);
    });

    it('per-object ACLs also hold for objects found by path (h5path)', async () => {
      const root = (await as('A', d).get('/')).json.root;
      expect((await as('A', d).put(`/groups/${root}/links/ds`, { id: dset })).status).to.equal(201);
      expect((await as('B', d).get('/', { h5path: '/ds' })).status).to.equal(403);
      expect((await as('A', d).get('/', { h5path: '/ds' })).status).to.equal(200);
      expect((await as('B', d).post('/', { h5paths: ['/', '/ds'] })).status, 'batch lookups check each object').to.equal(403);
      expect((await as('B', d).post('/', { h5paths: ['/'] })).status).to.equal(200);
    });

    it('a deleted object takes its ACL with it (a new object at the same address does not inherit it)', async () => {
      const x = (await as('A', d).post('/groups', {})).json.id;
      expect((await as('A', d).put(`/groups/${x}/acls/B`, NONE)).status).to.equal(201);
      expect((await as('B', d).get(`/groups/${x}`)).status).to.equal(403);
      expect((await as('A', d).delete(`/groups/${x}`)).status).to.equal(200);
      const y = (await as('A', d).post('/groups', {})).json.id;
      expect((await as('B', d).get(`/groups/${y}`)).status).to.equal(200);
    });
  });

  describe('external links', () => {
    it('an external link never gives access to a domain the user could not read directly', async () => {
      const secret = '/home/A/secret.h5';
      const pub = '/home/A/pub.h5';
      expect((await as('A', secret).put('/', {})).status).to.equal(201);
      expect((await as('A', pub).put('/', {})).status).to.equal(201);
      expect((await as('A', pub).put('/acls/B', { read: true })).status).to.equal(201);
      const root = (await as('A', pub).get('/')).json.root;
      expect((await as('A', pub).put(`/groups/${root}/links/ext`, { h5path: '/', h5domain: secret })).status).to.equal(201);
      const link = await as('B', pub).get(`/groups/${root}/links/ext`);
      expect(link.status).to.equal(200);
      expect(link.json.link).to.include({ class: 'H5L_TYPE_EXTERNAL', h5path: '/' });
      expect(link.json.link).to.not.have.property('id');
      expect((await as('B', secret).get('/')).status).to.equal(403);
      const via = await as('B', pub).get('/', { h5path: '/ext/', follow_external_links: 1 });
      expect(via.status).to.be.oneOf([400, 403, 404]);
    });
  });

  describe('files reached beyond the domain', () => {
    it('a virtual dataset whose source is a domain the user may not read: 403 on values, metadata still readable', async () => {
      const dir = path.join(srv.root, 'home', 'A');
      execFileSync('/usr/bin/python3', [
        '-c',
        `
import h5py, numpy as np, sys
d = sys.argv[1]
with h5py.File(d + '/src.h5', 'w') as f:
    f['x'] = np.arange(6, dtype='i4')
lay = h5py.VirtualLayout(shape=(6,), dtype='i4')
lay[:] = h5py.VirtualSource('src.h5', 'x', shape=(6,))
with h5py.File(d + '/vds.h5', 'w') as f:
    f.create_virtual_dataset('v', lay, fillvalue=-1)
`,
        dir,
      ]);
      // Both are dropped-in files governed by /home/A: A owns them; B gets read on vds.h5 only.
      expect((await as('A', '/home/A/vds.h5').put('/acls/B', { read: true })).status).to.equal(201);
      expect((await as('A', '/home/A/src.h5').put('/acls/B', NONE)).status).to.equal(201);
      const root = (await as('B', '/home/A/vds.h5').get('/')).json.root;
      const id = (await as('B', '/home/A/vds.h5').get(`/groups/${root}/links/v`)).json.link.id;
      expect((await as('B', '/home/A/vds.h5').get(`/datasets/${id}`)).status).to.equal(200);
      const denied = await as('B', '/home/A/vds.h5').get(`/datasets/${id}/value`);
      expect(denied.status).to.equal(403);
      expect(denied.json.message).to.include('src.h5');
      expect((await as('A', '/home/A/vds.h5').get(`/datasets/${id}/value`)).json.value).to.deep.equal([0, 1, 2, 3, 4, 5]);
      expect((await as('A', '/home/A/src.h5').put('/acls/B', { read: true })).status).to.equal(201);
      expect((await as('B', '/home/A/vds.h5').get(`/datasets/${id}/value`)).json.value).to.deep.equal([0, 1, 2, 3, 4, 5]);
      // Writing through the virtual dataset needs update on the source domain too.
      expect((await as('A', '/home/A/vds.h5').put('/acls/B', { read: true, update: true })).status).to.equal(201);
      const w = await as('B', '/home/A/vds.h5').put(`/datasets/${id}/value`, { value: [9, 9, 9, 9, 9, 9] });
      expect(w.status).to.equal(403);
      expect(w.json.message).to.include('src.h5');
      expect((await as('A', '/home/A/src.h5').put('/acls/B', { read: true, update: true })).status).to.equal(201);
      expect((await as('B', '/home/A/vds.h5').put(`/datasets/${id}/value`, { value: [9, 9, 9, 9, 9, 9] })).status).to.equal(200);
      expect((await as('A', '/home/A/src.h5').get(`/datasets/${(await as('A', '/home/A/src.h5').get(`/groups/${(await as('A', '/home/A/src.h5').get('/')).json.root}/links/x`)).json.link.id}/value`)).json.value).to.deep.equal([9, 9, 9, 9, 9, 9]);
    });
  });

  describe('nothing secret in responses or logs', () => {
    it('no password, hash or token appears in any response or log line', async () => {
      const t = await tokenAdd(usersFile, 'B', {});
      const replies = [
        await as('A').get('/about'),
        await base.as({ user: 'A', password: 'wrong-pw-xyz' }).get('/about'),
        await base.as({ token: t.token }).get('/about'),
        await base.as({ token: t.token + 'x' }).get('/about'),
        await as('A', '/home/A/f.h5').get('/acls'),
      ];
      const hashes = [...fs.readFileSync(usersFile, 'utf8').matchAll(/"hash": "([^"]+)"/g)].map((m) => m[1]);
      const secrets = [...Object.values(PW), 'wrong-pw-xyz', t.token, t.token.slice(17), ...hashes.map((h) => h.split('$').pop()!)];
      const texts = [...replies.map((r) => r.text + JSON.stringify([...r.headers])), srv.log()];
      expect(srv.log()).to.include('"path":"/about"');
      for (const s of secrets) for (const text of texts) expect(text.includes(s), `leaked ${s.slice(0, 6)}...`).to.equal(false);
    });
  });

  describe('CORS', () => {
    it('no origin is allowed by default: a cross-origin DELETE preflight is refused; a cross-site POST is refused', async () => {
      const pre = await fetch(`${srv.url}/?domain=/home/A/f.h5`, {
        method: 'OPTIONS',
        headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'authorization' },
      });
      expect(pre.status).to.equal(403);
      expect(pre.headers.get('access-control-allow-origin')).to.equal(null);
      expect(pre.headers.get('access-control-allow-credentials')).to.equal(null);
      const post = await as('A', '/home/A/f.h5').request('POST', '/groups', { raw: '{}', headers: { Origin: 'http://evil.example', 'content-type': 'text/plain' } });
      expect(post.status).to.equal(403);
      const same = await as('A', '/home/A/f.h5').request('POST', '/groups', { raw: '{}', headers: { Origin: srv.url } });
      expect(same.status, 'same-origin pages (the viewer) work').to.equal(201);
    });
  });
});

describe('secure defaults and CORS settings (issue #11)', function () {
  this.timeout(60_000);

  it('a non-loopback server without users gives default read-only and warns', async () => {
    const srv = await startServer({ args: ['--host', '0.0.0.0', '--log-level', 'info'] });
    try {
      const c = new Client(srv.url.replace('0.0.0.0', '127.0.0.1'), '/x.h5');
      expect((await c.put('/')).status).to.equal(401);
      expect((await new Client(srv.url.replace('0.0.0.0', '127.0.0.1')).get('/')).status).to.equal(200);
      expect(srv.log()).to.include('read-only');
    } finally {
      await srv.stop();
    }
  });

  it('listed origins are echoed with credentials; a wildcard never comes with credentials; preflights answer 200', async () => {
    const srv = await startServer({ args: ['--cors-origins', 'http://ok.example'] });
    const wild = await startServer({ args: ['--cors-origins', '*'] });
    try {
      const pre = (url: string, origin: string) =>
        fetch(`${url}/groups?domain=/x.h5`, {
          method: 'OPTIONS',
          headers: { Origin: origin, 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'authorization' },
        });
      const ok = await pre(srv.url, 'http://ok.example');
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('access-control-allow-origin')).to.equal('http://ok.example');
      expect(ok.headers.get('access-control-allow-credentials')).to.equal('true');
      expect(ok.headers.get('access-control-allow-methods')).to.include('DELETE');
      expect(ok.headers.get('access-control-allow-headers')!.toLowerCase()).to.include('authorization');
      expect((await pre(srv.url, 'http://evil.example')).status).to.equal(403);
      const w = await pre(wild.url, 'http://any.example');
      expect(w.status).to.equal(200);
      expect(w.headers.get('access-control-allow-origin')).to.equal('*');
      expect(w.headers.get('access-control-allow-credentials')).to.equal(null);
      const get = await fetch(`${wild.url}/about`, { headers: { Origin: 'http://any.example' } });
      expect(get.headers.get('access-control-allow-origin')).to.equal('*');
      expect(get.headers.get('access-control-allow-credentials')).to.equal(null);
    } finally {
      await srv.stop();
      await wild.stop();
    }
  });
});

describe('OpenID Connect bearer tokens (issue #11)', function () {
  this.timeout(60_000);
  let idp: TestIssuer;
  let srv: TestServer;

  before(async () => {
    idp = await startIssuer();
    const dir = tempRoot('h5store-oidc-');
    const users = path.join(dir, 'users.json');
    await userAdd(users, 'admin', 'x-admin-pw');
    const cfg = path.join(dir, 'h5store.json');
    fs.writeFileSync(cfg, JSON.stringify({ usersFile: users, oidcIssuer: idp.issuer, oidcAudience: 'h5store', oidcJwksUri: idp.jwksUri, oidcUserClaim: 'preferred_username' }));
    srv = await startServer({ args: ['--config', cfg] });
  });
  after(async () => {
    await srv?.stop();
    idp?.close();
  });

  it('a valid token names the user from the configured claim (as oidc:<value>, issue #24 item 5)', async () => {
    const t = await idp.sign({ iss: idp.issuer, aud: 'h5store', preferred_username: 'olga' });
    const r = await new Client(srv.url).as({ token: t }).get('/about');
    expect(r.json).to.include({ username: 'oidc:olga', isadmin: false });
  });

  it('expired, wrong audience, wrong issuer, wrong key, no user claim: 401', async () => {
    const bad = [
      await idp.sign({ iss: idp.issuer, aud: 'h5store', preferred_username: 'olga' }, { exp: Math.floor(Date.now() / 1000) - 60 }),
      await idp.sign({ iss: idp.issuer, aud: 'elsewhere', preferred_username: 'olga' }),
      await idp.sign({ iss: 'https://evil.test', aud: 'h5store', preferred_username: 'olga' }),
      await idp.sign({ iss: idp.issuer, aud: 'h5store', preferred_username: 'olga' }, { key: idp.otherKey }),
      await idp.sign({ iss: idp.issuer, aud: 'h5store' }),
    ];
    for (const t of bad) expect((await new Client(srv.url).as({ token: t }).get('/about')).status).to.equal(401);
  });
});
