/**
 * Requests that stall or exhaust the server (issue #24 items 7-11, 16), each attack as the issue
 * made it, smaller, then the answer the server must give: bodies refused before they are read
 * and large ones parsed in slices (7), password floods that neither starve file I/O nor slow a
 * real login (8), requests whose work is bounded (9), a memory budget for bodies (10), per-user
 * limits and slow-client timeouts (11), malformed Basic credentials (16). Other clients are
 * played by other loopback addresses (127.0.0.2, ...). The figures at the sizes are in
 * bench/attacks.ts.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { type Answer, basic, bigJson, writeWalkFiles, passwordFlood, probe, resetPeak, rssOf, send, slowClients } from '../helpers/attacks.js';
import { Client, type TestServer, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';

const PW = { admin: 'admin-pw-1', alice: 'alice-pw-2', bob: 'bob-pw-3' };
const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A server with a users file (admin, alice, bob) and `env`/`args` settings. */
async function usersServer(env: Record<string, string> = {}, args: string[] = []): Promise<{ srv: TestServer; as: (u?: keyof typeof PW) => Record<string, string> }> {
  const dir = tempRoot('h5store-dos-users-');
  const file = path.join(dir, 'users.json');
  for (const [u, pw] of Object.entries(PW)) await userAdd(file, u, pw);
  const srv = await startServer({ env, args: ['--users-file', file, ...args] });
  return { srv, as: (u) => (u ? { authorization: basic(u, PW[u]) } : ({} as Record<string, string>)) };
}

function expectAnswer(r: Answer, status: number, what: string, message?: RegExp): void {
  expect(r.status, `${what}: ${r.text.slice(0, 300)}`).to.equal(status);
  if (message) expect(r.json?.message, what).to.match(message);
}

describe('requests that stall or exhaust the server (issue #24 items 7-11, 16)', function () {
  this.timeout(180_000);

  describe('item 7: bodies are read only once the requester may send them', () => {
    let srv: TestServer;
    let as: (u?: keyof typeof PW) => Record<string, string>;
    let root: string;
    let ds: string;
    const dom = '/home/alice/t.h5';
    const q = `?domain=${dom}`;

    before(async () => {
      ({ srv, as } = await usersServer({ H5STORE_MAX_ANONYMOUS_BODY_BYTES: String(64 * 1024) }));
      const admin = new Client(srv.url).as({ user: 'admin', password: PW.admin });
      expect((await admin.with('/home').put('/', { folder: true })).status).to.equal(201);
      expect((await admin.with('/home/alice').put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
      const alice = new Client(srv.url, dom).as({ user: 'alice', password: PW.alice });
      expect((await alice.put('/')).status).to.equal(201);
      root = (await alice.get('/')).json.root;
      ds = (await alice.post('/datasets', { type: 'H5T_IEEE_F64LE', shape: [Math.floor((16 * MiB) / 12)], link: { id: root, name: 'x' } })).json.id;
      // a public domain: anonymous requests may read it (POST / with h5paths is a read)
      const pub = new Client(srv.url, '/home/alice/public.h5').as({ user: 'alice', password: PW.alice });
      expect((await pub.put('/')).status).to.equal(201);
      expect((await pub.put('/acls/default', { read: true })).status).to.equal(201);
    });
    after(async () => srv?.stop());

    // Content-Length says 24 MiB; only 64 KiB come: the answer must not wait for the rest
    const routes: [string, string, () => unknown][] = [
      ['POST', '/groups', () => ({ link: { id: root, name: 'g' } })],
      ['POST', '/datasets', () => ({ type: 'H5T_STD_I32LE', shape: [4] })],
      ['POST', '/datatypes', () => ({ type: 'H5T_STD_I32LE' })],
      ['PUT', '/', () => ({})],
      ['PUT', '/groups/:root/links', () => ({ links: { a: { h5path: '/x' } } })],
      ['PUT', '/groups/:root/attributes', () => ({ attributes: { a: { type: 'H5T_STD_I32LE', value: 1 } } })],
      ['PUT', '/acls', () => ({ acls: { bob: { read: true } } })],
      ['PUT', '/datasets/:ds/value', () => ({ value: [] })],
    ];
    for (const who of [undefined, 'bob'] as const) {
      it(`${who ?? 'anonymous'}: refused (${who ? 403 : 401}) on every body route before the body is read`, async () => {
        for (const [method, p] of routes) {
          const url = srv.url + p.replace(':root', root).replace(':ds', ds) + (p === '/' ? '?domain=/home/alice/new.h5' : q);
          const body = Buffer.alloc(24 * MiB, 0x20);
          body.write('{"pad": "');
          const r = await send(url, { method, headers: { 'content-type': 'application/json', ...as(who) }, body, stopAfter: 64 * 1024, timeoutMs: 8000 }).catch((e: Error) => e);
          expect(r, `${method} ${p}: the answer waited for the body`).to.not.be.instanceOf(Error);
          expectAnswer(r as Answer, who ? 403 : 401, `${method} ${p}`);
        }
      });
    }

    it('the early refusal holds only where no outcome allows: an object ACL that lets anonymous create in one group is honoured', async () => {
      const alice = new Client(srv.url, dom).as({ user: 'alice', password: PW.alice });
      const open = (await alice.post('/groups', { link: { id: root, name: 'open' } })).json.id;
      expect((await alice.put(`/groups/${open}/acls/default`, { create: true, read: true })).status).to.equal(201);
      const anon = new Client(srv.url, dom);
      expect((await anon.post('/groups', { link: { id: open, name: 'by-anonymous' } })).status).to.equal(201);
      expect((await anon.post('/groups', { link: { id: root, name: 'not-here' } })).status).to.equal(401);
    });

    it('anonymous bodies are capped (maxAnonymousBodyBytes, 413 naming it); the same body with credentials is read', async () => {
      const url = `${srv.url}/?domain=/home/alice/public.h5`;
      const body = Buffer.from(JSON.stringify({ h5paths: ['/'], pad: 'x'.repeat(80 * 1024) }));
      expect(body.length).to.be.above(64 * 1024);
      expectAnswer(await send(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } }), 413, 'anonymous', /maxAnonymousBodyBytes/);
      expectAnswer(await send(url, { method: 'POST', body, chunked: true, headers: { 'content-type': 'application/json' } }), 413, 'anonymous, chunked', /maxAnonymousBodyBytes/);
      expectAnswer(await send(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...as('alice') } }), 200, 'alice');
    });

    it('a large JSON body is parsed in slices: other requests are answered meanwhile', async () => {
      const body = bigJson(16 * MiB);
      const p = probe(`${srv.url}/about`);
      await sleep(200);
      const r = await send(`${srv.url}/datasets/${ds}/value${q}`, { method: 'PUT', body, headers: { 'content-type': 'application/json', ...as('alice') } });
      const l = await p.stop();
      expectAnswer(r, 200, 'the write');
      console.log(`      16 MiB JSON value written in ${r.ms.toFixed(0)} ms; /about meanwhile: p50 ${l.p50.toFixed(1)} ms, max ${l.max.toFixed(0)} ms (${l.n} probes)`);
      expect(l.failed).to.equal(0);
      // parsed whole, the body kept /about waiting for most of the write
      expect(l.max, '/about waited for the parse').to.be.below(Math.max(250, r.ms * 0.4));
    });
  });

  describe('item 8: password floods', () => {
    let srv: TestServer;
    let as: (u?: keyof typeof PW) => Record<string, string>;
    before(async () => {
      ({ srv, as } = await usersServer({ H5STORE_AUTH_FAILURES: '10', H5STORE_MAX_PASSWORD_QUEUE: '4', H5STORE_TRUSTED_PROXIES: '127.0.0.9' }));
      fs.mkdirSync(path.join(srv.root, 'big'));
      execFileSync('/usr/bin/python3', ['-c', 'import h5py, numpy as np, sys\nwith h5py.File(sys.argv[1], "w") as f: f["x"] = np.arange(4 * 1024 * 1024, dtype="<i4")', path.join(srv.root, 'big', 'b.h5')]);
    });
    after(async () => srv?.stop());

    it('a flood of guesses from one address is limited (429 with Retry-After); a real login from another address stays fast and a 16 MiB read finishes', async () => {
      const flood = passwordFlood(`${srv.url}/about`, { clients: 16, localAddress: '127.0.0.2' });
      await sleep(1500);
      const login = await send(`${srv.url}/about`, { headers: as('alice') });
      const admin = new Client(srv.url, '/big/b.h5').as({ user: 'admin', password: PW.admin });
      const rootId = (await admin.get('/')).json.root;
      const dsId = (await admin.get(`/groups/${rootId}/links/x`)).json.link.id;
      const t0 = performance.now();
      const read = await admin.request('GET', `/datasets/${dsId}/value`, { headers: { accept: 'application/octet-stream' } });
      const readMs = performance.now() - t0;
      const counts = await flood.stop();
      console.log(`      flood answers ${JSON.stringify(counts)}; alice's login ${login.ms.toFixed(0)} ms; 16 MiB read ${readMs.toFixed(0)} ms`);
      expectAnswer(login, 200, 'alice');
      expect(login.json.username).to.equal('alice');
      expect(read.body.length).to.equal(16 * MiB);
      expect(counts[429] ?? 0, 'the flood was limited').to.be.above(0);
      expect(counts[401] ?? 0, 'at most authFailures guesses were checked').to.be.at.most(10 + 2);
      expect(readMs, 'the read (starved behind the guesses before: 32 s)').to.be.below(8000);
      expect(login.ms, 'the real login').to.be.below(2000);
      // once authFailures guesses failed, the address gets 429 without a check
      let r: Answer | undefined;
      for (let i = 0; i < 12 && r?.status !== 429; i++) r = await send(`${srv.url}/about`, { headers: { authorization: basic(`someone${i}`, 'x') }, localAddress: '127.0.0.2' });
      expectAnswer(r!, 429, 'the flooding address', /authFailures/);
      expect(Number(r!.headers['retry-after'])).to.be.within(1, 60);
    });

    it('at most two checks at once per address (429), and a bounded queue (503 with Retry-After) when many addresses guess at once', async () => {
      const same = await Promise.all(Array.from({ length: 8 }, (_, i) => send(`${srv.url}/about`, { headers: { authorization: basic(`x${i}`, 'y') }, localAddress: '127.0.0.3' })));
      const byStatus = (rs: Answer[]) => rs.reduce<Record<number, number>>((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {});
      expect(byStatus(same)[429], 'one address, 8 at once').to.equal(6);
      const many = await Promise.all(
        Array.from({ length: 24 }, (_, i) => send(`${srv.url}/about`, { headers: { authorization: basic(`y${i}`, 'z') }, localAddress: `127.0.1.${i + 1}` })),
      );
      const s = byStatus(many);
      console.log(`      24 addresses at once: ${JSON.stringify(s)}`);
      expect(s[503] ?? 0, 'queue full').to.be.above(0);
      expect(many.find((r) => r.status === 503)!.headers['retry-after']).to.equal('1');
    });

    it('behind a trusted proxy (trustedProxies) failures count per forwarded client; X-Forwarded-For from elsewhere is not read', async () => {
      const guess = (i: number, from: string, xff: string) => send(`${srv.url}/about`, { headers: { authorization: basic(`p${i}`, 'x'), 'x-forwarded-for': xff }, localAddress: from });
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await guess(i, '127.0.0.9', '10.0.0.1')).status);
      expect(statuses.slice(0, 10).every((s) => s === 401) && statuses[10] === 429, statuses.join()).to.equal(true);
      expect((await guess(99, '127.0.0.9', '10.0.0.2')).status, 'another client behind the proxy').to.equal(401);
      expect((await guess(98, '127.0.0.9', '10.0.0.1, 127.0.0.9')).status, 'the right-most untrusted address').to.equal(429);
      // an untrusted peer's header is ignored: its guesses count for the peer
      for (let i = 0; i < 10; i++) await guess(i, '127.0.0.8', `10.9.9.${i}`);
      expect((await guess(50, '127.0.0.8', '10.9.9.99')).status).to.equal(429);
    });

    it('failures for a name do not slow that name down (the per-name back-off slowed the real user)', async () => {
      for (let i = 0; i < 8; i++) expect((await send(`${srv.url}/about`, { headers: { authorization: basic('bob', 'wrong') }, localAddress: '127.0.0.4' })).status).to.equal(401);
      const r = await send(`${srv.url}/about`, { headers: as('bob') });
      expectAnswer(r, 200, 'bob');
      expect(r.ms, 'after 8 failures the back-off added 2 s').to.be.below(1500);
    });
  });

  describe('item 9: the work of one request is bounded and sliced', () => {
    let srv: TestServer;
    let c: Client;
    before(async function () {
      this.timeout(300_000);
      srv = await startServer({ env: { H5STORE_MAX_OBJECTS_PER_ANSWER: '5000', H5STORE_MAX_PATH_DEPTH: '100' } });
      c = new Client(srv.url);
      fs.mkdirSync(path.join(srv.root, 'x'));
      // a chain of 800 groups (H5Ovisit2 walked it in seconds) and a group of 40,000 links
      writeWalkFiles(path.join(srv.root, 'x', 'deep.h5'), path.join(srv.root, 'x', 'flat.h5'), 800, 40000);
    });
    after(async () => srv?.stop());

    /** `fn` while /about is asked again and again: its answer and the longest /about. */
    async function during<T>(fn: () => Promise<T>): Promise<{ r: T; ms: number; about: number }> {
      const p = probe(`${srv.url}/about`);
      await sleep(100);
      const t0 = performance.now();
      const r = await fn();
      const ms = performance.now() - t0;
      const l = await p.stop();
      return { r, ms, about: l.max };
    }

    it('GET /groups of a chain of 800 groups answers at once, other requests meanwhile', async () => {
      const { r, ms, about } = await during(() => c.with('/x/deep.h5').get('/groups'));
      console.log(`      GET /groups ${ms.toFixed(0)} ms, /about at most ${about.toFixed(0)} ms`);
      expect(r.status).to.equal(200);
      expect(r.json.groups).to.have.length(800);
      expect(ms).to.be.below(3000);
      const v = await c.with('/x/deep.h5').get('/', { verbose: 1 });
      expect(v.json.num_groups).to.equal(801);
    });

    it('getobjs of a domain of 40,000 objects stops counting at 501 (no domain_objs), at once', async () => {
      const { r, ms, about } = await during(() => c.with('/x/flat.h5').get('/', { getobjs: 1 }));
      console.log(`      getobjs ${ms.toFixed(0)} ms, /about at most ${about.toFixed(0)} ms`);
      expect(r.status).to.equal(200);
      expect(r.json.domain_objs).to.equal(undefined);
      expect(ms).to.be.below(1000);
    });

    it('a listing of more objects than max_objects_per_answer is 413 naming it; a page of it walks in slices', async () => {
      const all = await c.with('/x/flat.h5').get('/groups');
      expect(all.status).to.equal(413);
      expect(all.json.message).to.match(/max_objects_per_answer/);
      const { r, ms, about } = await during(() => c.with('/x/flat.h5').get('/groups', { Limit: 10 }));
      console.log(`      a page of 10 of 40,001 groups ${ms.toFixed(0)} ms, /about at most ${about.toFixed(0)} ms`);
      expect(r.status).to.equal(200);
      expect(r.json.groups).to.have.length(10);
      // walked whole in one go, the 40,000 objects kept /about waiting for most of it
      expect(about).to.be.below(Math.max(300, ms * 0.5));
      const deep = await c.with('/x/flat.h5').get(`/groups/${(await c.with('/x/flat.h5').get('/')).json.root}/links`, { follow_links: 1 });
      expect(deep.status).to.equal(413);
      expect(deep.json.message).to.match(/max_objects_per_answer/);
      expect((await c.with('/x/flat.h5').get('/')).json.limits).to.include({ max_objects_per_answer: 5000, max_path_depth: 100 });
    });

    it('paths deeper than max_path_depth are 413 (lookups and creations)', async () => {
      await c.with('/x/new.h5').put('/');
      const long = '/' + Array.from({ length: 150 }, () => 'a').join('/');
      const made = await c.with('/x/new.h5').post('/groups', { h5path: long }, { implicit: 1 });
      const lookup = await c.with('/x/new.h5').get('/groups', { h5path: long });
      for (const r of [made, lookup]) {
        expect(r.status).to.equal(413);
        expect(r.json.message).to.match(/max_path_depth/);
      }
      const r2 = await c.with('/x/deep.h5').get('/', { h5path: '/' + Array.from({ length: 120 }, () => 'g').join('/') });
      expect(r2.status).to.equal(413);
      expect((await c.with('/x/deep.h5').get('/', { h5path: '/' + Array.from({ length: 90 }, () => 'g').join('/') })).status).to.equal(200);
    });
  });

  describe('item 15: ids after a copy or a restore (docs/architecture.md, the trade-off)', () => {
    let srv: TestServer;
    before(async () => (srv = await startServer()));
    after(async () => srv?.stop());

    it('a backup restored in place keeps every id; restored by rename, a kept address-made id says to look the object up by path, and the id a client gave stays', async () => {
      const c = new Client(srv.url, '/r.h5');
      expect((await c.put('/')).status).to.equal(201);
      const root = (await c.get('/')).json.root as string;
      const made = (await c.post('/groups', { link: { id: root, name: 'g' } })).json.id as string;
      const hex = root.slice(2).replace(/-/g, '').slice(0, 16) + crypto.randomBytes(8).toString('hex');
      const given = `g-${hex.slice(0, 8)}-${hex.slice(8, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 26)}-${hex.slice(26, 32)}`;
      expect((await c.post('/groups', [{ id: given }])).status).to.equal(201);
      expect((await c.put(`/groups/${root}/links/c`, { id: given })).status).to.equal(201);
      const file = path.join(srv.root, 'r.h5');
      await untilServerClosed(srv, file); // idle: the handle is closed, nothing held
      const backup = path.join(srv.root, 'r.backup');
      fs.copyFileSync(file, backup);
      // in place (cp onto the file: same inode and birth time): the same ids
      fs.copyFileSync(backup, file);
      expect((await c.get(`/groups/${made}`)).status, 'restored in place').to.equal(200);
      // by rename (rsync, mv, most backup tools): a new file at the path
      fs.copyFileSync(backup, file + '.tmp');
      fs.renameSync(file + '.tmp', file);
      await sleep(50);
      const old = await c.get(`/groups/${made}`);
      expect(old.status).to.be.oneOf([404, 410]);
      expect(old.json.message).to.match(/look the object up again by its path/);
      const again = await c.get('/', { h5path: '/g' });
      expect(again.status).to.equal(200);
      expect(again.json.id).to.not.equal(made);
      expect((await c.get(`/groups/${given}`)).status, "the id the client gave (kept in the file's client_ids table)").to.equal(200);
    });
  });

  describe('item 16: malformed Basic credentials are 400, with or without users', () => {
    const b64 = (b: Buffer) => b.toString('base64');
    const bad: [string, string][] = [
      ['NUL in the user name', 'Basic ' + b64(Buffer.from('ali\0ce:pw'))],
      ['NUL in the password', 'Basic ' + b64(Buffer.from('alice:p\0w'))],
      ['another control character', 'Basic ' + b64(Buffer.from('alice:p\x1bw'))],
      ['invalid UTF-8', 'Basic ' + b64(Buffer.from([0x61, 0xff, 0xfe, 0x3a, 0x70]))],
      ['two spaces', 'Basic  ' + b64(Buffer.from('alice:pw'))],
      ['a tab', 'Basic\t' + b64(Buffer.from('alice:pw'))],
    ];
    for (const mode of ['single-user', 'users file'] as const) {
      it(mode, async () => {
        const { srv } = mode === 'users file' ? await usersServer() : { srv: await startServer() };
        try {
          for (const [what, h] of bad) {
            const r = await send(`${srv.url}/about`, { headers: { authorization: h } });
            expectAnswer(r, 400, what, /Malformed|Authorization/);
          }
          // well-formed credentials: ignored in single-user mode, checked with users
          const ok = await send(`${srv.url}/about`, { headers: { authorization: basic('alice', PW.alice) } });
          expect(ok.status).to.equal(200);
        } finally {
          await srv.stop();
        }
      });
    }
  });

  describe('item 10: a memory budget for bodies in flight', () => {
    let srv: TestServer;
    let as: (u?: keyof typeof PW) => Record<string, string>;
    let ds: string;
    const q = '?domain=/b.h5';
    before(async () => {
      ({ srv, as } = await usersServer({ H5STORE_BODY_MEMORY_BYTES: String(32 * MiB) }));
      const admin = new Client(srv.url, '/b.h5').as({ user: 'admin', password: PW.admin });
      expect((await admin.put('/')).status).to.equal(201);
      const root = (await admin.get('/')).json.root;
      ds = (await admin.post('/datasets', { type: 'H5T_STD_U8LE', shape: [32 * MiB], link: { id: root, name: 'x' } })).json.id;
    });
    after(async () => srv?.stop());

    it('8 binary PUTs of 32 MiB at once: those beyond the budget are spooled, every write succeeds, RSS stays bounded', async () => {
      const body = Buffer.alloc(32 * MiB, 7);
      const put = () => send(`${srv.url}/datasets/${ds}/value${q}`, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', ...as('admin') } });
      expectAnswer(await put(), 200, 'a first PUT (starts the server buffers and threads)');
      await sleep(500);
      const before = rssOf(srv.proc.pid!);
      resetPeak(srv.proc.pid!);
      const rs = await Promise.all(Array.from({ length: 8 }, put));
      const after = rssOf(srv.proc.pid!);
      const growth = after.peak - before.rss;
      console.log(`      RSS ${(before.rss / MiB).toFixed(0)} MiB before, peak ${(after.peak / MiB).toFixed(0)} MiB during (+${(growth / MiB).toFixed(0)})`);
      for (const r of rs) expectAnswer(r, 200, 'PUT');
      // held whole, the 8 bodies took 256 MiB
      expect(growth).to.be.below(128 * MiB);
    });

    it('JSON bodies beyond the budget get 503 with Retry-After before they are read', async () => {
      const body = bigJson(10 * MiB); // counts twice: 20 MiB of the 32
      const rs = await Promise.all(
        Array.from({ length: 4 }, () => send(`${srv.url}/datasets/${ds}/value${q}&select=[0:10]`, { method: 'PUT', body, headers: { 'content-type': 'application/json', ...as('admin') } })),
      );
      const s = rs.map((r) => r.status);
      expect(s.filter((x) => x === 503).length, JSON.stringify(s)).to.be.at.least(2);
      const refused = rs.find((r) => r.status === 503)!;
      expect(refused.json.message).to.match(/bodyMemoryBytes/);
      expect(refused.headers['retry-after']).to.be.a('string');
    });
  });

  describe('item 11: per-user limits and slow clients', () => {
    let srv: TestServer;
    let as: (u?: keyof typeof PW) => Record<string, string>;
    before(async () => {
      ({ srv, as } = await usersServer({
        H5STORE_USER_DOMAINS_PER_HOUR: '5',
        H5STORE_USER_REQUESTS_PER_SECOND: '40',
        H5STORE_USER_BODY_BYTES_PER_HOUR: String(2 * MiB),
        H5STORE_HEADERS_TIMEOUT_MS: '1000',
        H5STORE_BODY_TIMEOUT_MS: '1500',
        H5STORE_MAX_CONNECTIONS_PER_ADDRESS: '12',
      }));
      const admin = new Client(srv.url).as({ user: 'admin', password: PW.admin });
      expect((await admin.with('/u').put('/', { folder: true })).status).to.equal(201);
      expect((await admin.with('/u').put('/acls/alice', { create: true, read: true })).status).to.equal(201);
    });
    after(async () => srv?.stop());

    it('domains created per user per hour (userDomainsPerHour): the 6th is 429 (failed creations do not count); the admin has no limit', async () => {
      const alice = new Client(srv.url).as({ user: 'alice', password: PW.alice });
      for (let i = 0; i < 4; i++) expect((await alice.with(`/u/a${i}.h5`).put('/')).status, `domain ${i}`).to.equal(201);
      expect((await alice.with('/u/a0.h5').put('/')).status, 'exists').to.equal(409);
      expect((await alice.with('/u/a4.h5').put('/')).status, 'domain 4').to.equal(201);
      const r = await alice.with('/u/a5.h5').put('/');
      expect(r.status).to.equal(429);
      expect(r.json.message).to.match(/userDomainsPerHour/);
      expect(Number(r.headers.get('retry-after'))).to.be.above(0);
      const admin = new Client(srv.url).as({ user: 'admin', password: PW.admin });
      for (let i = 0; i < 7; i++) expect((await admin.with(`/u/admin${i}.h5`).put('/')).status).to.equal(201);
    });

    it('requests per user per second (userRequestsPerSecond): 429 beyond; other users and the admin are not slowed', async () => {
      await sleep(1100);
      // in batches of 10 connections (at most 12 per address on this server)
      const burst = async (who: keyof typeof PW, n: number) => {
        const out: Answer[] = [];
        for (let i = 0; i < n; i += 10) out.push(...(await Promise.all(Array.from({ length: 10 }, () => send(`${srv.url}/about`, { headers: as(who) })))));
        return out;
      };
      const limited = (await burst('alice', 120)).filter((r) => r.status === 429);
      expect(limited.length).to.be.above(0);
      expect(limited[0]!.json.message).to.match(/userRequestsPerSecond/);
      expect((await send(`${srv.url}/about`, { headers: as('bob') })).status).to.equal(200);
      expect((await burst('admin', 80)).every((r) => r.status === 200)).to.equal(true);
    });

    it('request-body bytes per user per hour (userBodyBytesPerHour)', async () => {
      await sleep(1100);
      const url = `${srv.url}/?domain=/u/a0.h5`;
      const body = Buffer.from(JSON.stringify({ h5paths: ['/'], pad: 'x'.repeat(1.2 * MiB) }));
      expect(body.length).to.be.above(MiB);
      expectAnswer(await send(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...as('alice') } }), 200, 'first');
      expectAnswer(await send(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...as('alice') } }), 429, 'second', /userBodyBytesPerHour/);
    });

    it('slow headers and slow bodies are cut off (headersTimeoutMs, bodyTimeoutMs, minBodyBytesPerSecond); one address holds at most maxConnectionsPerAddress', async () => {
      const heads = slowClients(srv.url, 8, 'headers', { localAddress: '127.0.0.5', everyMs: 300 });
      const bodies = slowClients(srv.url, 4, 'body', { localAddress: '127.0.0.6', everyMs: 300, path: '/?domain=/u/slow.h5', headers: { authorization: basic('alice', PW.alice) } });
      const many = slowClients(srv.url, 30, 'headers', { localAddress: '127.0.0.7', everyMs: 300 });
      await sleep(800);
      expect(many.open(), 'connections from one address').to.be.at.most(12);
      expect((await send(`${srv.url}/about`)).status, 'others are still served').to.equal(200);
      await sleep(4500);
      const open = { headers: heads.open(), bodies: bodies.open(), many: many.open() };
      heads.close();
      bodies.close();
      many.close();
      expect(open).to.deep.equal({ headers: 0, bodies: 0, many: 0 });
    });
  });
});
