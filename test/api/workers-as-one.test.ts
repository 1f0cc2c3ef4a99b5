/**
 * Several workers answer as one process would, at once (issue #24 item 12). The same table of
 * cases runs against one process and against `serve --workers 2`: a change made through the
 * public port (writes go to the domain's owner), then, at once, the same read on each worker
 * (sent to its private socket, so which worker answers is certain) and through the port. Every
 * answer must be the single process's. The attack, as reported: after a DELETE the other worker
 * answered 404 instead of 410; after a folder ACL revoke bob still read 200 for up to 1 s.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { userAdd } from '../../src/auth/admin.js';
import { ownerOf } from '../../src/cluster.js';
import { lockFileOf } from '../../src/store/session/servicefiles.js';
import { type TestServer, fixturePath, startServer, tempRoot } from '../helpers/server.js';
import { workerDir, workerPids } from '../helpers/workers.js';

const PW = { admin: 'admin-pw-w1', alice: 'alice-pw-w1', bob: 'bob-pw-w1' };
type Who = keyof typeof PW;
const auth = (u: Who) => 'Basic ' + Buffer.from(`${u}:${PW[u]}`).toString('base64');

interface Answer {
  status: number;
  json: any;
}

/** One request to `base` (http://...) or to a worker's private socket (`sock:<path>`). */
function ask(target: string, method: string, p: string, who: Who, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { authorization: auth(who) };
    if (data) Object.assign(headers, { 'content-type': 'application/json', 'content-length': data.length });
    const where = target.startsWith('sock:') ? { socketPath: target.slice(5), path: p } : { ...urlParts(target), path: p };
    const r = http.request({ ...where, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let json: any;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString());
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, json });
      });
    });
    r.on('error', reject);
    r.end(data);
  });
}

function urlParts(base: string): { host: string; port: number } {
  const u = new URL(base);
  return { host: u.hostname, port: Number(u.port) };
}

const q = (d: string) => `domain=${encodeURIComponent(d)}`;

/** A server of the table: where changes go (the port) and where reads go (each worker, and the port). */
interface Target {
  name: string;
  srv: TestServer;
  readers: string[];
}

/** The cases: `make` sets up (returns ids), `change` is the write, `read` the request every reader sends at once after it. */
interface Case {
  title: string;
  expect: number;
  make(t: Target, n: number): Promise<Record<string, string>>;
  change(t: Target, x: Record<string, string>): Promise<Answer>;
  read(x: Record<string, string>): [method: string, path: string, who: Who];
}

async function newDomain(t: Target, name: string): Promise<{ root: string }> {
  const r = await ask(t.srv.url, 'PUT', `/?${q(name)}`, 'admin', {});
  expect(r.status, `PUT ${name}`).to.equal(201);
  return { root: r.json.root };
}

async function post(t: Target, d: string, col: string, body: unknown): Promise<string> {
  const r = await ask(t.srv.url, 'POST', `/${col}?${q(d)}`, 'admin', body);
  expect(r.status, `POST /${col}`).to.equal(201);
  return r.json.id;
}

const CASES: Case[] = [
  {
    title: 'DELETE / of a domain, then GET /',
    expect: 410,
    make: async (t, n) => ({ d: `/as1/dom${n}.h5`, ...(await newDomain(t, `/as1/dom${n}.h5`)) }),
    change: (t, x) => ask(t.srv.url, 'DELETE', `/?${q(x.d)}`, 'admin'),
    read: (x) => ['GET', `/?${q(x.d)}`, 'admin'],
  },
  {
    title: 'DELETE / of a domain, then GET of an id of its objects',
    expect: 410,
    make: async (t, n) => {
      const d = `/as1/ids${n}.h5`;
      const { root } = await newDomain(t, d);
      return { d, g: await post(t, d, 'groups', { link: { id: root, name: 'g' } }) };
    },
    change: (t, x) => ask(t.srv.url, 'DELETE', `/?${q(x.d)}`, 'admin'),
    read: (x) => ['GET', `/groups/${x.g}?${q(x.d)}`, 'admin'],
  },
  {
    title: 'DELETE / of a folder, then GET /',
    expect: 410,
    make: async (t, n) => {
      const d = `/as1/folder${n}`;
      expect((await ask(t.srv.url, 'PUT', `/?${q(d)}`, 'admin', { folder: true })).status).to.equal(201);
      return { d };
    },
    change: (t, x) => ask(t.srv.url, 'DELETE', `/?${q(x.d)}`, 'admin'),
    read: (x) => ['GET', `/?${q(x.d)}`, 'admin'],
  },
  ...(['groups', 'datasets', 'datatypes'] as const).map(
    (col): Case => ({
      title: `DELETE /${col}/<id>, then GET it`,
      expect: 410,
      make: async (t, n) => {
        const d = `/as1/obj-${col}${n}.h5`;
        const { root } = await newDomain(t, d);
        const body = col === 'groups' ? {} : col === 'datasets' ? { type: 'H5T_STD_I32LE', shape: [4] } : { type: 'H5T_IEEE_F32LE' };
        return { d, id: await post(t, d, col, { ...body, link: { id: root, name: 'x' } }) };
      },
      change: (t, x) => ask(t.srv.url, 'DELETE', `/${col}/${x.id}?${q(x.d)}`, 'admin'),
      read: (x) => ['GET', `/${col}/${x.id}?${q(x.d)}`, 'admin'],
    }),
  ),
  {
    // (an object whose last link goes lives on until deleted by id, as in HSDS: issue #25)
    title: 'DELETE of the last link to a dataset and of the dataset, then GET the dataset',
    expect: 410,
    make: async (t, n) => {
      const d = `/as1/lastlink${n}.h5`;
      const { root } = await newDomain(t, d);
      return { d, root, id: await post(t, d, 'datasets', { type: 'H5T_STD_I8LE', shape: [2], link: { id: root, name: 'only' } }) };
    },
    change: async (t, x) => {
      expect((await ask(t.srv.url, 'DELETE', `/groups/${x.root}/links/only?${q(x.d)}`, 'admin')).status).to.equal(200);
      return ask(t.srv.url, 'DELETE', `/datasets/${x.id}?${q(x.d)}`, 'admin');
    },
    read: (x) => ['GET', `/datasets/${x.id}?${q(x.d)}`, 'admin'],
  },
  {
    title: 'DELETE of a link, then GET the link',
    expect: 410,
    make: async (t, n) => {
      const d = `/as1/link${n}.h5`;
      const { root } = await newDomain(t, d);
      expect((await ask(t.srv.url, 'PUT', `/groups/${root}/links/soft?${q(d)}`, 'admin', { h5path: '/x' })).status).to.equal(201);
      return { d, root };
    },
    change: (t, x) => ask(t.srv.url, 'DELETE', `/groups/${x.root}/links/soft?${q(x.d)}`, 'admin'),
    read: (x) => ['GET', `/groups/${x.root}/links/soft?${q(x.d)}`, 'admin'],
  },
  {
    title: 'a deleted link made again, then GET it',
    expect: 200,
    make: async (t, n) => {
      const d = `/as1/relink${n}.h5`;
      const { root } = await newDomain(t, d);
      expect((await ask(t.srv.url, 'PUT', `/groups/${root}/links/soft?${q(d)}`, 'admin', { h5path: '/x' })).status).to.equal(201);
      expect((await ask(t.srv.url, 'DELETE', `/groups/${root}/links/soft?${q(d)}`, 'admin')).status).to.equal(200);
      return { d, root };
    },
    change: (t, x) => ask(t.srv.url, 'PUT', `/groups/${x.root}/links/soft?${q(x.d)}`, 'admin', { h5path: '/y' }),
    read: (x) => ['GET', `/groups/${x.root}/links/soft?${q(x.d)}`, 'admin'],
  },
  {
    title: 'DELETE of an attribute, then GET it',
    expect: 410,
    make: async (t, n) => {
      const d = `/as1/attr${n}.h5`;
      const { root } = await newDomain(t, d);
      expect((await ask(t.srv.url, 'PUT', `/groups/${root}/attributes/a?${q(d)}`, 'admin', { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
      return { d, root };
    },
    change: (t, x) => ask(t.srv.url, 'DELETE', `/groups/${x.root}/attributes/a?${q(x.d)}`, 'admin'),
    read: (x) => ['GET', `/groups/${x.root}/attributes/a?${q(x.d)}`, 'admin'],
  },
  {
    title: "a folder's ACL revoked, then bob reads a dropped-in file it governs",
    expect: 403,
    make: async (t, n) => {
      const folder = `/home/alice/f${n}`;
      expect((await ask(t.srv.url, 'PUT', `/?${q(folder)}`, 'alice', { folder: true })).status).to.equal(201);
      expect((await ask(t.srv.url, 'PUT', `/acls/bob?${q(folder)}`, 'alice', { read: true })).status).to.equal(201);
      fs.copyFileSync(fixturePath('tall.h5'), path.join(t.srv.root, folder.slice(1), 'dropped.h5'));
      const d = `${folder}/dropped.h5`;
      // bob reads it, on every worker (so each has the sidecar and the file's state cached)
      for (const r of t.readers) expect((await ask(r, 'GET', `/?${q(d)}`, 'bob')).status, `bob before the revoke, ${r}`).to.equal(200);
      return { folder, d };
    },
    change: (t, x) => ask(t.srv.url, 'PUT', `/acls/bob?${q(x.folder)}`, 'alice', { read: false }),
    read: (x) => ['GET', `/?${q(x.d)}`, 'bob'],
  },
  {
    title: "a domain's ACL revoked, then bob reads it",
    expect: 403,
    make: async (t, n) => {
      const d = `/home/alice/own${n}.h5`;
      expect((await ask(t.srv.url, 'PUT', `/?${q(d)}`, 'alice', {})).status).to.equal(201);
      expect((await ask(t.srv.url, 'PUT', `/acls/bob?${q(d)}`, 'alice', { read: true })).status).to.equal(201);
      for (const r of t.readers) expect((await ask(r, 'GET', `/?${q(d)}`, 'bob')).status, `bob before the revoke, ${r}`).to.equal(200);
      return { d };
    },
    change: (t, x) => ask(t.srv.url, 'PUT', `/acls/bob?${q(x.d)}`, 'alice', { read: false }),
    read: (x) => ['GET', `/?${q(x.d)}`, 'bob'],
  },
  {
    title: 'a domain deleted and made again, then GET / (the new one)',
    expect: 200,
    make: async (t, n) => {
      const d = `/as1/again${n}.h5`;
      await newDomain(t, d);
      for (const r of t.readers) expect((await ask(r, 'GET', `/?${q(d)}`, 'admin')).status).to.equal(200);
      expect((await ask(t.srv.url, 'DELETE', `/?${q(d)}`, 'admin')).status).to.equal(200);
      return { d };
    },
    change: (t, x) => ask(t.srv.url, 'PUT', `/?${q(x.d)}`, 'admin', {}),
    read: (x) => ['GET', `/?${q(x.d)}`, 'admin'],
  },
];

/** Rounds per case: a race between the change and the reads shows in some of them. */
const ROUNDS = 3;

describe('several workers answer as one process (issue #24 item 12)', function () {
  this.timeout(300_000);
  const targets: Target[] = [];

  before(async () => {
    const dir = tempRoot('h5store-as-one-users-');
    const users = path.join(dir, 'users.json');
    for (const [u, pw] of Object.entries(PW)) await userAdd(users, u, pw);
    for (const [name, args] of [
      ['one process', []],
      ['two workers', ['--workers', '2']],
    ] as const) {
      const root = tempRoot();
      const srv = await startServer({ root, args: ['--users-file', users, ...args] });
      const readers = [srv.url];
      if (args.length) {
        const pids = await workerPids(srv, 2);
        const d = workerDir(pids[0]);
        readers.unshift(`sock:${path.join(d, 'w0.sock')}`, `sock:${path.join(d, 'w1.sock')}`);
      }
      const t: Target = { name, srv, readers };
      for (const f of ['/as1', '/home']) expect((await ask(srv.url, 'PUT', `/?${q(f)}`, 'admin', { folder: true })).status).to.equal(201);
      expect((await ask(srv.url, 'PUT', `/?${q('/home/alice')}`, 'admin', { folder: true, owner: 'alice' })).status).to.equal(201);
      targets.push(t);
    }
  });
  after(async () => {
    for (const t of targets) await t.srv.stop();
  });

  for (const c of CASES) {
    it(c.title, async () => {
      for (const t of targets) {
        for (let n = 0; n < ROUNDS; n++) {
          const x = await c.make(t, n);
          const done = await c.change(t, x);
          expect(done.status, `${t.name}: the change`).to.be.oneOf([200, 201]);
          const [m, p, who] = c.read(x);
          // every reader at once, right after the change was acknowledged
          const got = await Promise.all(t.readers.map((r) => ask(r, m, p, who)));
          const seen = got.map((g, i) => `${t.readers[i].startsWith('sock:') ? `worker ${i}` : 'port'}: ${g.status}`);
          expect(got.map((g) => g.status), `${t.name}, round ${n}: ${seen.join(', ')}`).to.deep.equal(t.readers.map(() => c.expect));
        }
      }
    });
  }
});

describe('a worker never waits long for, nor refuses because of, its sibling (issue #24 item 13)', function () {
  this.timeout(180_000);
  let srv: TestServer;
  let sock: string[];
  const dir = tempRoot('h5store-sibling-users-');
  const LOCK_WAIT_MS = 400;

  before(async () => {
    const users = path.join(dir, 'users.json');
    for (const [u, pw] of Object.entries(PW)) await userAdd(users, u, pw);
    srv = await startServer({ args: ['--users-file', users, '--workers', '2'], env: { H5STORE_LOCK_WAIT_MS: String(LOCK_WAIT_MS) } });
    const pids = await workerPids(srv, 2);
    sock = [0, 1].map((i) => `sock:${path.join(workerDir(pids[0]), `w${i}.sock`)}`);
  });
  after(async () => {
    await srv?.stop();
  });

  /** A domain of `/sib-<n>.h5` that worker `i` of 2 owns (writes go there). */
  const ownedBy = (i: number, base: string) => {
    for (let n = 0; ; n++) if (ownerOf(`/${base}-${n}.h5`, 2) === i) return `/${base}-${n}.h5`;
  };

  it("reads on one worker while the other writes the same domain without pause: every read answered, none refused, none waits long", async () => {
    // The attack, as reported: under load 4 reads got 503 "another h5store process is writing the
    // file" (their own sibling) and 19 had no answer in 10 s, where one process gave none.
    const d = ownedBy(1, 'sib');
    const made = await ask(srv.url, 'PUT', `/?${q(d)}`, 'admin', {});
    expect(made.status).to.equal(201);
    const ds = await ask(srv.url, 'POST', `/datasets?${q(d)}`, 'admin', { type: 'H5T_STD_I32LE', shape: [64], link: { id: made.json.root, name: 'v' } });
    expect(ds.status).to.equal(201);
    const until = performance.now() + 5000;
    const statuses = new Map<number, number>();
    const readMs: number[] = [];
    const messages = new Set<string>();
    const note = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const writers = Array.from({ length: 10 }, async (_, w) => {
      for (let k = 0; performance.now() < until; k++) {
        const i = (w * 7 + k) % 64;
        note((await ask(srv.url, 'PUT', `/datasets/${ds.json.id}/value?${q(d)}&select=[${i}:${i + 1}]`, 'admin', { value: [k] })).status);
      }
    });
    // reads straight to worker 0 (the one that does not own the domain)
    const readers = Array.from({ length: 6 }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const r = await ask(sock[0], 'GET', `/datasets/${ds.json.id}/value?${q(d)}`, 'admin');
        // the answer's message too: a sibling's write taken for another program's said 503 "being written by another program"
        if (r.status !== 200) messages.add(`${r.status} ${r.json?.message}`);
        note(r.status);
        readMs.push(performance.now() - t0);
      }
    });
    await Promise.all([...writers, ...readers]);
    expect([...statuses.keys()].sort(), JSON.stringify([...statuses, ...messages])).to.deep.equal([200]);
    expect(readMs.length, 'reads answered').to.be.greaterThan(20);
    // bounded by a write or two of the sibling (each a few ms; a loaded machine takes longer), never by the lock wait
    const sorted = [...readMs].sort((a, b) => a - b);
    const seen = `${sorted.length} reads: p50 ${Math.round(sorted[sorted.length >> 1])} ms, p99 ${Math.round(sorted[Math.floor(sorted.length * 0.99)])} ms, max ${Math.round(sorted[sorted.length - 1])} ms`;
    // Each waits for a write or two of the sibling (a few ms; an fsync on a busy disk may take a
    // second), as a read waits for the writes queued before it in one process; never refused
    // after the lock wait (400 ms here), never starved by a stream of writes.
    expect(sorted[sorted.length - 1], seen).to.be.lessThan(5000);
  });

  it('a forwarded write its owner refuses before reading its body, then the next request on the same kept-alive connection: answered', async () => {
    // The attack, as found by the hostile run: a 1 MiB body refused at once (400: no domain) by
    // the worker that owns '/', forwarded there by the other; the rest of the body was never read
    // from the client, so its next request on that connection waited forever (no answer in 10 s).
    const u = new URL(srv.url);
    const send = (agent: http.Agent, method: string, p: string, body?: Buffer) =>
      new Promise<string>((resolve) => {
        const headers: Record<string, string | number> = { authorization: auth('admin') };
        if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': body.length });
        const r = http.request({ host: u.hostname, port: Number(u.port), method, path: p, agent, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
        });
        const t = setTimeout(() => {
          r.destroy();
          resolve('no answer in 5 s');
        }, 5000);
        r.on('close', () => clearTimeout(t));
        r.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
        r.end(body);
      });
    const big = Buffer.from(JSON.stringify({ acls: { bob: { read: true } }, pad: 'x'.repeat(1 << 20) }));
    const got: string[] = [];
    // new connections go to the workers in turn: half of them are forwarded
    for (let i = 0; i < 6; i++) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      got.push(`${await send(agent, 'PUT', '/datasets/d-00000000-00000000-0000-000000-000000/acls', big)} then ${await send(agent, 'GET', '/about')}`);
      agent.destroy();
    }
    expect(got).to.deep.equal(Array(6).fill('400 then 200'));
  });

  it('a foreign writer (another h5store process, or any holder of the lock file’s writer byte) still gets 503 after the lock wait', async () => {
    const d = ownedBy(0, 'foreign');
    const made = await ask(srv.url, 'PUT', `/?${q(d)}`, 'admin', {});
    expect(made.status).to.equal(201);
    // a write makes the lock file; then another process holds its writer byte (a POSIX lock: it
    // conflicts with the open-file-description locks h5store takes)
    expect((await ask(srv.url, 'PUT', `/groups/${made.json.root}/attributes/a?${q(d)}`, 'admin', { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
    const file = path.join(srv.root, d.slice(1));
    const holder = spawn('/usr/bin/python3', ['-c', 'import fcntl, sys, time\nf = open(sys.argv[1], "r+b")\nfcntl.lockf(f, fcntl.LOCK_EX, 1, 0)\nprint("held", flush=True)\ntime.sleep(float(sys.argv[2]))', lockFileOf(fs.realpathSync(file)), '4'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    try {
      const t0 = performance.now();
      const got = await Promise.all(sock.map((s) => ask(s, 'GET', `/groups/${made.json.root}/attributes/a?${q(d)}`, 'admin')));
      const ms = performance.now() - t0;
      for (const g of got) {
        expect(g.status).to.equal(503);
        expect(g.json.message).to.match(/another h5store process is writing the file/);
      }
      expect(ms).to.be.lessThan(3500);
    } finally {
      holder.kill();
    }
  });
});
