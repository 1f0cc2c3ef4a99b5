/**
 * Requests that stall or kill the server (issue #24 item 14): what the hostile run
 * (bench/hostile.ts) found, each class with its attack and the right answer, then a short,
 * bounded hostile run of its own against one process and against two workers.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { ownerOf } from '../../src/cluster.js';
import { python } from '../helpers/python.js';
import { workerPids } from '../helpers/workers.js';
import { type HostileReport, runHostile, setupWorld } from '../helpers/hostile.js';
import { Client, type TestServer, fixturePath, startServer, tempRoot } from '../helpers/server.js';

/** The statuses of a report that are not a 4xx or 2xx (501 honestly says what is not done). */
function bad(r: HostileReport): string[] {
  const out: string[] = [];
  for (const p of r.serverErrors) if (p.status !== 501) out.push(`#${p.i} ${p.method} ${p.url} -> ${p.status} ${p.message ?? ''}`);
  for (const p of r.noAnswer) out.push(`#${p.i} ${p.method} ${p.url}: no answer in 10 s`);
  for (const p of r.connectionErrors) out.push(`#${p.i} ${p.method} ${p.url}: ${p.message}`);
  return out;
}

describe('requests that stall or kill the server (issue #24 item 14)', function () {
  this.timeout(300_000);

  describe('libhdf5 work while a long call runs on the HDF5 worker thread', () => {
    let srv: TestServer;
    let c: Client;
    let big: string;

    before(async () => {
      const root = tempRoot();
      // one 256 MiB gzip chunk: one element written or read is a second of libhdf5 on the worker thread
      python('import h5py, sys\nwith h5py.File(sys.argv[1], "w") as f:\n  f.create_dataset("big", shape=(8192, 8192), dtype="<f4", chunks=(8192, 8192), compression="gzip", compression_opts=1)', [path.join(root, 'dropped.h5')]);
      srv = await startServer({ root });
      c = new Client(srv.url, '/dropped.h5');
      const rootId = (await c.get('/')).json.root;
      big = (await c.get(`/groups/${rootId}/links/big`)).json.link.id;
    });
    after(async () => {
      await srv?.stop();
    });

    for (const op of ['write', 'read'] as const) {
      it(`during a ${op} of one element of a 256 MiB chunk: GET /metrics, /info, /readyz, /about and PUT / answer at once, none 503`, async () => {
        // The attack, as found: they called libhdf5 without waiting for the worker thread, so during a
        // write (journaled: its driver runs on the main thread) they answered 503 "A long write into
        // another file is running", GET /readyz too (a balancer takes the server out); during a read
        // they blocked the main thread until it ended.
        const t0 = performance.now();
        let heavyDone = 0;
        const heavy = (op === 'write' ? c.put(`/datasets/${big}/value`, { value: [[1]] }, { select: '[7:8,7:8]' }) : c.get(`/datasets/${big}/value`, { select: '[7:8,7:8]' })).then((r) => {
          heavyDone = performance.now();
          return r;
        });
        await new Promise((r) => setTimeout(r, 150)); // the call is on the worker thread by now
        const answers: { what: string; status: number; at: number; text: string }[] = [];
        const ask = async (what: string, p: Promise<{ status: number; text: string }>) => {
          const r = await p;
          answers.push({ what, status: r.status, at: performance.now(), text: r.text });
        };
        await Promise.all([
          ask('GET /metrics', c.get('/metrics')),
          ask('GET /info', c.get('/info')),
          ask('GET /readyz', c.get('/readyz')),
          ask('GET /about', c.get('/about')),
          ask('PUT /', c.with(`/made-during-${op}.h5`).put('/')),
        ]);
        const h = await heavy;
        expect(h.status, h.text).to.equal(200);
        for (const a of answers) expect(a.status, `${a.what}: ${a.text.slice(0, 300)}`).to.be.oneOf([200, 201]);
        const heavyMs = heavyDone - t0;
        // they did not wait for the worker thread (its call took heavyMs: a second or more)
        if (heavyMs > 700) for (const a of answers.filter((x) => x.what !== 'PUT /')) expect(a.at, `${a.what} answered after the ${op} ended`).to.be.lessThan(heavyDone);
        const about = JSON.parse(answers.find((a) => a.what === 'GET /about')!.text);
        expect(about.filters.find((f: { name: string }) => f.name === 'gzip')?.read, 'gzip is listed as readable').to.equal(true);
      });
    }
  });

  it('bulk requests naming one item twice: answered as naming it once (DELETE .../attributes?attr_names=a/a was a 500)', async () => {
    const srv = await startServer();
    try {
      const c = new Client(srv.url, '/twice.h5');
      const root = (await c.put('/')).json.root;
      const g = (await c.post('/groups', { link: { id: root, name: 'g' } })).json.id;
      const d = (await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [10], link: { id: root, name: 'd' } })).json.id;
      for (const n of ['a', 'b']) expect((await c.put(`/groups/${root}/attributes/${n}`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
      expect((await c.put(`/groups/${root}/links/s`, { h5path: '/g' })).status).to.equal(201);
      const table: [string, () => Promise<{ status: number; text: string }>, number][] = [
        ['DELETE .../attributes?attr_names=a/a', () => c.request('DELETE', `/groups/${root}/attributes`, { query: { attr_names: 'a/a' } }), 200],
        ['DELETE .../attributes?attr_names=b/b/b', () => c.request('DELETE', `/groups/${root}/attributes`, { query: { attr_names: 'b/b/b' } }), 200],
        ['DELETE .../links?titles=s/s', () => c.request('DELETE', `/groups/${root}/links`, { query: { titles: 's/s' } }), 200],
        ['POST .../attributes attr_names twice', () => c.post(`/groups/${root}/attributes`, { attr_names: ['x', 'x'] }), 404],
        ['POST .../attributes obj_ids twice', () => c.post(`/groups/${root}/attributes`, { obj_ids: [g, g] }), 200],
        ['PUT .../attributes obj_ids twice', () => c.put(`/groups/${root}/attributes`, { attributes: { z: { type: 'H5T_STD_I8LE', value: 1 } }, obj_ids: [g, g] }), 201],
        ['POST .../links titles twice', () => c.post(`/groups/${root}/links`, { titles: ['g', 'g'] }), 200],
        ['POST .../links grp_ids twice', () => c.post(`/groups/${root}/links`, { grp_ids: [root, root] }), 200],
        ['PUT .../links grp_ids twice', () => c.put(`/groups/${root}/links`, { links: { q: { id: g } }, grp_ids: [root, root] }), 201],
        ['POST / h5paths twice', () => c.post('/', { h5paths: ['/g', '/g'] }), 200],
        ['POST .../value points twice', () => c.post(`/datasets/${d}/value`, { points: [1, 1, 2] }), 200],
        ['PUT .../value points twice', () => c.request('PUT', `/datasets/${d}/value`, { body: { points: [1, 1], value: [5, 6] } }), 200],
      ];
      for (const [what, send, status] of table) {
        const r = await send();
        expect(r.status, `${what}: ${r.text.slice(0, 300)}`).to.equal(status);
      }
      // the attributes named twice are gone, once
      expect((await c.get(`/groups/${root}/attributes/a`)).status).to.equal(410);
      expect((await c.get(`/groups/${root}/attributes`)).json.attributes.map((a: { name: string }) => a.name)).to.not.include('b');
    } finally {
      await srv.stop();
    }
  });

  it('the watchdog logs what the main thread does when it stops answering (libhdf5 call, requests in flight), and counts it', async () => {
    const root = tempRoot();
    // one 256 MiB gzip chunk, written (so a write of one element inflates and deflates all of it);
    // with maxChunkBytes above it that write runs on the main thread (not the HDF5 worker thread):
    // over a second of libhdf5 that nothing can interrupt, on a quiet machine too (an unwritten
    // level-1 chunk, only deflated, took 0.3 s there: shorter than the watchdog can see)
    python('import h5py, sys\nwith h5py.File(sys.argv[1], "w") as f:\n  d = f.create_dataset("big", shape=(8192, 8192), dtype="<f4", chunks=(8192, 8192), compression="gzip", compression_opts=6)\n  d[0, 0] = 1', [path.join(root, 'slow.h5')]);
    const srv = await startServer({ root, env: { H5STORE_WATCHDOG_MS: '250', H5STORE_MAX_CHUNK_BYTES: String(1 << 30) } });
    try {
      const c = new Client(srv.url, '/slow.h5');
      const rootId = (await c.get('/')).json.root;
      const big = (await c.get(`/groups/${rootId}/links/big`)).json.link.id;
      const t0 = performance.now();
      const r = await c.put(`/datasets/${big}/value`, { value: [[1]] }, { select: '[7:8,7:8]' });
      const putMs = performance.now() - t0;
      expect(r.status).to.equal(200);
      // the watchdog looks every 100 ms: its line that the main thread answers again comes after the answer
      // (10 s: on a loaded machine the watchdog thread's lines may come late)
      for (const until = Date.now() + 10_000; !/answers again/.test(srv.log()) && Date.now() < until; ) await new Promise((res) => setTimeout(res, 50));
      const lines = srv
        .log()
        .split('\n')
        .filter((l) => l.includes('watchdog:'))
        .map((l) => JSON.parse(l));
      const stall = lines.find((l) => /has not answered for/.test(l.msg));
      if (!stall) return void expect.fail(`no watchdog line (the PUT took ${Math.round(putMs)} ms) in ${srv.log().slice(-2000)}`);
      expect(stall.level).to.equal(50);
      expect(stall.stalledMs).to.be.at.least(250);
      expect(stall.hdf5Call, JSON.stringify(stall)).to.equal('H5Dwrite');
      expect(stall.inFlight.map((x: { request: string }) => x.request).join('\n')).to.include(`PUT /datasets/${big}/value?`);
      expect(lines.some((l) => /answers again/.test(l.msg)), 'and once it answers again').to.equal(true);
      const m = await c.get('/metrics');
      expect(Number(/^h5store_event_loop_stalls_total (\d+)/m.exec(m.text)?.[1])).to.be.at.least(1);
    } finally {
      await srv.stop();
    }
  });

  it('a worker that dies is logged by the primary with the requests it was serving and the last before, and counted in every worker\'s /metrics', async () => {
    const srv = await startServer({ args: ['--workers', '2'] });
    try {
      const pids = await workerPids(srv, 2);
      const d = (() => {
        for (let n = 0; ; n++) if (ownerOf(`/dies-${n}.h5`, 2) === 0) return `/dies-${n}.h5`;
      })();
      const c = new Client(srv.url, d);
      const rootId = (await c.put('/')).json.root;
      for (let i = 0; i < 3; i++) expect((await c.put(`/groups/${rootId}/attributes/before${i}`, { type: 'H5T_STD_I32LE', value: i })).status).to.equal(201);
      // a write in flight in worker 0 (its body half sent) when the worker crashes
      const body = Buffer.from(JSON.stringify({ type: 'H5T_STD_I32LE', value: 7 }));
      const inFlight = new Promise<void>((resolve) => {
        const r = http.request(`${srv.url}/groups/${rootId}/attributes/during?domain=${encodeURIComponent(d)}`, { method: 'PUT', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        r.on('error', () => resolve());
        r.write(body.subarray(0, 5));
        setTimeout(() => {
          process.kill(pids[0], 'SIGSEGV');
          setTimeout(() => r.destroy(), 500);
        }, 400);
      });
      await inFlight;
      const deadline = Date.now() + 15_000;
      while (!/worker died/.test(srv.log()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const line = srv
        .log()
        .split('\n')
        .find((l) => l.includes('worker died'));
      expect(line, srv.log().slice(-2000)).to.be.a('string');
      const died = JSON.parse(line!);
      expect(died.signal).to.equal('SIGSEGV');
      expect(died.worker).to.equal(0);
      expect(died.inFlight.map((x: { request: string }) => x.request).join('\n')).to.include(`/groups/${rootId}/attributes/during`);
      expect(died.lastRequests.map((x: { request: string }) => x.request).join('\n')).to.include(`/groups/${rootId}/attributes/before2`);
      // every worker (the restarted one too) counts it
      await workerPids(srv, 2);
      const seen = new Set<string>();
      // (the restarted worker takes connections once it listens)
      for (const until = Date.now() + 20_000; seen.size < 2 && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
        // a connection of its own each time: the primary hands them to the workers in turn
        const text = await new Promise<string>((resolve, reject) =>
          http
            .get(`${srv.url}/metrics`, { agent: false }, (res) => {
              let t = '';
              res.on('data', (b) => (t += b));
              res.on('end', () => resolve(t));
            })
            .on('error', reject),
        );
        const m = { text };
        const w = /worker="(\d+)"/.exec(m.text)?.[1];
        if (w === undefined || seen.has(w)) continue;
        seen.add(w);
        expect(m.text, `worker ${w}`).to.match(/^h5store_worker_deaths_total\{dead_worker="0",cause="SIGSEGV"[^}]*\} 1$/m);
      }
      expect(seen.size).to.equal(2);
    } finally {
      await srv.stop();
    }
  });

  // A short, bounded run of the hostile generator (the long runs are bench/hostile.ts): every
  // answer a 2xx/4xx (or an honest 501), none missing, the server alive.
  for (const workers of [1, 2]) {
    it(`a short hostile run (seed 24, 1,200 requests, 24 clients) against ${workers === 1 ? 'one process' : 'two workers'}: no 5xx, no request without an answer, no crash`, async () => {
      const srv = await startServer({ args: ['--workers', String(workers)] });
      try {
        const world = await setupWorld(srv.url, srv.root, { domains: 2, fixtures: [fixturePath('tall.h5')] });
        const report = await runHostile({ url: srv.url, world, seed: 24, requests: 1200, clients: 24, maxMs: 120_000, stopped: () => srv.proc.exitCode !== null });
        expect(srv.proc.exitCode, 'the server is still running').to.equal(null);
        expect(bad(report), bad(report).join('\n')).to.deep.equal([]);
        expect(report.requests).to.be.greaterThan(1100);
        expect(report.statuses['200'] ?? 0, JSON.stringify(report.statuses)).to.be.greaterThan(100);
        expect(srv.log()).to.not.match(/worker died/);
      } finally {
        await srv.stop();
      }
      expect(fs.existsSync(srv.root)).to.equal(true);
    });
  }
});
