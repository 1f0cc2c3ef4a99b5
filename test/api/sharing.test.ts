/**
 * Sharing files (issue #7 item 7; README "Working with files while the server runs"; DESIGN.md
 * 5): two server processes on one data directory, h5py and h5pyd next to the server.
 */
import { expect } from 'chai';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expectError, sleep } from '../helpers/apiExtra.js';
import { PYTHON, hasH5py, python, pythonJson } from '../helpers/python.js';
import { Client, REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { childEnv } from '../helpers/env.js';
import { userAdd } from '../../src/auth/admin.js';

const H5PYD = path.resolve(REPO, '../shared/clients/h5pyd');

/** Run a Python script in the background; resolves `ready` when it prints READY. */
function pythonHolding(script: string, args: string[]): { proc: ChildProcess; ready: Promise<void>; done: Promise<number | null> } {
  const proc = spawn(PYTHON, ['-u', '-c', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (b) => (err += b.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (b) => {
      out += b.toString();
      if (out.includes('READY')) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`python exited (${code}) before READY: ${err}`)));
  });
  const done = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, ready, done };
}

/** h5py holds `file` open for writing for `ms`, adding group `name` first. */
const HOLD = `
import h5py, sys, time
f = h5py.File(sys.argv[1], 'a')
f.create_group(sys.argv[2])
f.flush()
print('READY', flush=True)
time.sleep(float(sys.argv[3]) / 1000)
f.close()
`;

describe('sharing files with other processes', function () {
  this.timeout(120_000);
  let root: string;
  let a: TestServer;
  let api: Client;

  before(async function () {
    if (!hasH5py()) this.skip();
    root = tempRoot('h5store-sharing-');
    a = await startServer({ root });
    api = new Client(a.url);
  });
  after(async () => {
    await a?.stop();
  });

  describe('two server processes on one data directory', () => {
    it('concurrent writers to the same domains in both: no acknowledged write lost, both make progress, no 503 storm', async () => {
      const b = await startServer({ root });
      try {
        const domains = ['/two-1.h5', '/two-2.h5'];
        const roots: Record<string, string> = {};
        for (const d of domains) {
          expect((await api.with(d).put('/')).status).to.equal(201);
          roots[d] = (await api.with(d).get('/')).json.root;
        }
        const servers = { A: new Client(a.url), B: new Client(b.url) };
        const counts: Record<string, { ok: number; s503: number; other: number; retryAfter: string[] }> = {};
        const acked: Array<[string, string, number]> = [];
        let stop = false;
        const writer = async (who: 'A' | 'B', k: number) => {
          const c = (counts[who] ??= { ok: 0, s503: 0, other: 0, retryAfter: [] });
          for (let n = 0; !stop; n++) {
            const d = domains[(n + k) % domains.length];
            const name = `${who}${k}-${n}`;
            const kind = n % 3;
            const r =
              kind === 0
                ? await servers[who].with(d).put(`/groups/${roots[d]}/attributes/${name}`, { type: 'H5T_STD_I64LE', value: n })
                : kind === 1
                  ? await servers[who].with(d).post('/groups', { link: { id: roots[d], name } })
                  : await servers[who].with(d).put(`/groups/${roots[d]}/links/${name}`, { h5path: '/' });
            if (r.status === 201) acked.push([d, name, kind]);
            else if (r.status === 503) {
              c.s503++;
              c.retryAfter.push(r.headers.get('retry-after') ?? '');
            } else {
              c.other++;
              throw new Error(`${who} got ${r.status}: ${r.text}`);
            }
            if (r.status === 201) c.ok++;
          }
        };
        const reader = async (who: 'A' | 'B') => {
          while (!stop) {
            for (const d of domains) {
              const r = await servers[who].with(d).get(`/groups/${roots[d]}/links`);
              expect(r.status, r.text).to.be.oneOf([200, 503]);
            }
          }
        };
        const runs = [0, 1, 2, 3].flatMap((k) => [writer('A', k), writer('B', k)]);
        runs.push(reader('A'), reader('B'));
        await sleep(6000);
        stop = true;
        await Promise.all(runs);
        const total = counts.A.ok + counts.B.ok + counts.A.s503 + counts.B.s503;
        console.log(`      two processes, 6 s: A ${counts.A.ok} writes (${counts.A.s503} x 503), B ${counts.B.ok} writes (${counts.B.s503} x 503)`);
        expect(counts.A.ok).to.be.above(0.25 * (counts.A.ok + counts.B.ok));
        expect(counts.B.ok).to.be.above(0.25 * (counts.A.ok + counts.B.ok));
        expect(counts.A.s503 + counts.B.s503, 'answers 503').to.be.at.most(total * 0.01);
        for (const ra of [...counts.A.retryAfter, ...counts.B.retryAfter]) expect(Number(ra)).to.be.at.least(1);
        // Every acknowledged write is in the files (read with h5py).
        const found = pythonJson(
          `import h5py, sys, json\nout = {}\nfor p in sys.argv[1:]:\n    with h5py.File(p, 'r') as f:\n        out[p] = sorted(list(f.attrs.keys()) + list(f.keys()))\nprint(json.dumps(out))`,
          domains.map((d) => path.join(root, d.slice(1))),
        );
        const lost = acked.filter(([d, name]) => !found[path.join(root, d.slice(1))].includes(name));
        expect(lost, 'acknowledged writes missing').to.deep.equal([]);
      } finally {
        await b.stop();
      }
    });
  });

  describe('h5py and the server', () => {
    it('h5py opens a served file for writing right after a REST write (and after a REST read)', async () => {
      const c = api.with('/h5py-after.h5');
      expect((await c.put('/')).status).to.equal(201);
      const rid = (await c.get('/')).json.root;
      const file = path.join(root, 'h5py-after.h5');
      for (let i = 0; i < 5; i++) {
        expect((await c.put(`/groups/${rid}/attributes/rest${i}`, { type: 'H5T_STD_I32LE', value: i })).status).to.equal(201);
        // No pause: the server holds no lock on the file between requests.
        python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'a') as f:\n    f.attrs['py${i}'] = ${i}`, [file]);
        expect((await c.get(`/groups/${rid}/attributes`)).status).to.equal(200);
        python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'a') as f:\n    f.attrs['py_after_read${i}'] = ${i}`, [file]);
      }
      // The server sees every change h5py made.
      const names = (await c.get(`/groups/${rid}/attributes`)).json.attributes.map((x: { name: string }) => x.name);
      for (let i = 0; i < 5; i++) expect(names).to.include.members([`rest${i}`, `py${i}`, `py_after_read${i}`]);
    });

    it('a REST write while h5py holds the file for writing waits, then succeeds after h5py closes it', async () => {
      const c = api.with('/held.h5');
      expect((await c.put('/')).status).to.equal(201);
      const rid = (await c.get('/')).json.root;
      const file = path.join(root, 'held.h5');
      const py = pythonHolding(HOLD, [file, 'from_h5py', '1500']);
      await py.ready;
      const t0 = performance.now();
      const [w, r] = await Promise.all([
        c.post('/groups', { link: { id: rid, name: 'from_rest' } }),
        c.get(`/groups/${rid}/links`),
      ]);
      const waited = performance.now() - t0;
      expect(w.status, w.text).to.equal(201);
      expect(r.status, r.text).to.equal(200);
      expect(waited, 'waited for h5py (ms)').to.be.above(800);
      expect(await py.done).to.equal(0);
      const links = (await c.get(`/groups/${rid}/links`)).json.links.map((l: { title: string }) => l.title);
      expect(links).to.deep.equal(['from_h5py', 'from_rest']);
    });

    it('when h5py holds the file longer than lockWaitMs: 503 with a Retry-After of how long it has been held', async () => {
      const s = await startServer({ root, env: { H5STORE_LOCK_WAIT_MS: '700' } });
      try {
        const c = new Client(s.url, '/held-long.h5');
        expect((await c.put('/')).status).to.equal(201);
        const rid = (await c.get('/')).json.root;
        const file = path.join(root, 'held-long.h5');
        const py = pythonHolding(HOLD, [file, 'g', '4000']);
        await py.ready;
        const t0 = performance.now();
        const w = await c.put(`/groups/${rid}/attributes/x`, { type: 'H5T_STD_I32LE', value: 1 });
        expectError(w, 503);
        expect(performance.now() - t0).to.be.within(600, 3000);
        expect(w.json.message).to.match(/another program/);
        // held for lockWaitMs (0.7 s) plus the polling of a loaded machine
        expect(Number(w.headers.get('retry-after'))).to.be.within(1, 2);
        await sleep(1200);
        // Busy for about 2 s by now: the next 503 says so.
        const w2 = await c.put(`/groups/${rid}/attributes/x`, { type: 'H5T_STD_I32LE', value: 1 });
        expectError(w2, 503);
        expect(Number(w2.headers.get('retry-after'))).to.be.within(2, 4);
        expect(await py.done).to.equal(0);
        const w3 = await c.put(`/groups/${rid}/attributes/x`, { type: 'H5T_STD_I32LE', value: 1 });
        expect(w3.status, w3.text).to.equal(201);
      } finally {
        await s.stop();
      }
    });

    it('a domain whose ACL cannot be read (h5py holds the file) answers 503 after one wait, never decided by the folder\'s rules', async () => {
      // The permission check reads the file's own ACL under the shared lock. When that read is
      // refused (busy), the folder's (more open) rules must not decide instead.
      const dir = tempRoot('h5store-sharing-acl-');
      const usersFile = path.join(dir, 'users.json');
      await userAdd(usersFile, 'admin', 'admin-pw-1');
      await userAdd(usersFile, 'bob', 'bob-pw-2');
      const s = await startServer({ root: dir, args: ['--users-file', usersFile], env: { H5STORE_LOCK_WAIT_MS: '700' } });
      try {
        const adm = new Client(s.url, '/acl-held.h5').as({ user: 'admin', password: 'admin-pw-1' });
        const bob = adm.as({ user: 'bob', password: 'bob-pw-2' });
        expect((await adm.put('/')).status).to.equal(201);
        const none = { create: false, read: false, update: false, delete: false, readACL: false, updateACL: false };
        expect((await adm.put('/acls/default', none)).status).to.equal(201);
        expect((await adm.put('/acls/bob', none)).status).to.equal(201);
        expect((await bob.get('/')).status, 'bob is refused by the file ACL').to.equal(403);
        const py = pythonHolding(HOLD, [path.join(dir, 'acl-held.h5'), 'g', '2500']);
        await py.ready;
        const t0 = performance.now();
        const r = await bob.get('/');
        expectError(r, 503);
        expect(performance.now() - t0, 'one lock wait, not two').to.be.below(1400);
        expect(await py.done).to.equal(0);
        expect((await bob.get('/')).status, 'still refused once the file is free').to.equal(403);
      } finally {
        await s.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('h5pyd writes while h5py holds the file for a while: the server waits and h5pyd succeeds', async function () {
      // Skipped without ../shared (h5pyd lives there) or without h5pyd's Debian dependencies.
      if (!fs.existsSync(path.join(H5PYD, 'h5pyd'))) this.skip();
      try {
        execFileSync(PYTHON, ['-c', 'import h5pyd'], { env: { ...process.env, PYTHONPATH: H5PYD }, stdio: 'pipe' });
      } catch {
        this.skip();
      }
      const c = api.with('/h5pyd.h5');
      expect((await c.put('/')).status).to.equal(201);
      const file = path.join(root, 'h5pyd.h5');
      // h5pyd is imported first (slow), then told to go once h5py holds the file.
      const client = spawn(
        PYTHON,
        ['-u', '-c', `import h5pyd, sys, time\nprint('IMPORTED', flush=True)\nsys.stdin.readline()\nt = time.time()\nf = h5pyd.File('/h5pyd.h5', 'a')\nf.attrs['from_h5pyd'] = 5\nf.create_group('g_h5pyd')\nprint(round(time.time() - t, 2))`],
        { env: { ...process.env, PYTHONPATH: H5PYD, HS_ENDPOINT: a.url, HS_USERNAME: 'u', HS_PASSWORD: 'p' }, stdio: ['pipe', 'pipe', 'pipe'] },
      );
      let o = '';
      let e = '';
      client.stdout!.on('data', (b) => (o += b));
      client.stderr!.on('data', (b) => (e += b));
      const finished = new Promise<number | null>((r) => client.once('exit', r));
      for (let i = 0; i < 3000 && !o.includes('IMPORTED'); i++) await sleep(10);
      const py = pythonHolding(HOLD, [file, 'from_h5py', '2000']);
      await py.ready;
      client.stdin!.end('go\n');
      expect(await finished, e).to.equal(0);
      const out = o.replace('IMPORTED', '');
      expect(Number(out.trim())).to.be.above(0.5);
      expect(await py.done).to.equal(0);
      const keys = pythonJson(`import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps([sorted(f.keys()), int(f.attrs['from_h5pyd'])]))`, [file]);
      expect(keys).to.deep.equal([['from_h5py', 'g_h5pyd'], 5]);
    });
  });
});
