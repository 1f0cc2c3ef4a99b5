/**
 * `h5store serve --workers 2` (src/cluster.ts): one port, two processes. Reads are answered by
 * whichever worker gets the connection; writes by the worker that owns the domain (others forward
 * them over a private socket). Which worker answered is seen in `/metrics` (every series of a
 * worker carries `worker="<index>"`); each request here uses a new connection, so the primary's
 * round-robin spreads them over both workers.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { expect } from 'chai';
import { routeTable } from '../../src/app.js';
import { domainKey, ownerOf, writeMatcher } from '../../src/cluster.js';
import { loadConfig } from '../../src/config.js';
import { pythonJson } from '../helpers/python.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { envOf, workerIndexOf, workerPidsNow } from '../helpers/workers.js';

interface Answer {
  status: number;
  text: string;
  json: any;
}

/** One request on a connection of its own (so the primary hands each to the next worker). */
function req(base: string, method: string, p: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const r = http.request(base + p, { method, agent: false, headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, text, json });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(data);
  });
}

const q = (domain: string) => `domain=${encodeURIComponent(domain)}`;

/** Per worker: the `h5store_http_requests_total` series matching `re`, summed (scrapes until both workers answered). */
async function countsByWorker(base: string, re: RegExp): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < 40 && seen.size < 2; i++) {
    const m = await req(base, 'GET', '/metrics');
    let worker: string | undefined;
    let n = 0;
    for (const line of m.text.split('\n')) {
      if (!line.startsWith('h5store_http_requests_total{')) continue;
      worker = /worker="(\d+)"/.exec(line)?.[1];
      if (re.test(line)) n += Number(line.split(' ').pop());
    }
    if (worker !== undefined && !seen.has(worker)) seen.set(worker, n);
  }
  return seen;
}

/** The worker processes of a primary. */
const workerPids = workerPidsNow;
/** The worker index of a worker process. */
const indexOf = workerIndexOf;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A domain name `/<base>-<n>.h5` that worker `i` of 2 owns. */
function ownedBy(i: number, base: string): string {
  for (let n = 0; ; n++) if (ownerOf(`/${base}-${n}.h5`, 2) === i) return `/${base}-${n}.h5`;
}
const HOT = [ownedBy(0, 'hot'), ownedBy(1, 'hot')];

describe('serve --workers 2', function () {
  this.timeout(120_000);
  let srv: TestServer;

  before(async () => {
    srv = await startServer({ args: ['--workers', '2'] });
  });
  after(async () => {
    await srv?.stop();
  });

  it('defaults to one worker per core; --workers and H5STORE_WORKERS set it', () => {
    expect(loadConfig({}, {}).workers).to.equal(os.availableParallelism());
    expect(loadConfig({ workers: '3' }, {}).workers).to.equal(3);
    expect(loadConfig({}, { H5STORE_WORKERS: '1' }).workers).to.equal(1);
    expect(() => loadConfig({ workers: '0' }, {})).to.throw(/workers/);
  });

  it('tells writes from reads with the route table, and owns domains by their normalized name', () => {
    const routes = routeTable({ config: loadConfig({}), store: {} as never, logger: {} as never, auth: {} as never, startTime: 0 });
    const w = writeMatcher(routes);
    const reads = [['POST', '/datasets/d-1/value'], ['POST', '/'], ['POST', '/groups/g-1/links'], ['POST', '/groups/g-1/attributes'], ['POST', '/datasets/d-1/attributes']];
    const writes = [['PUT', '/'], ['DELETE', '/'], ['POST', '/groups'], ['POST', '/datasets'], ['PUT', '/datasets/d-1/value'], ['PUT', '/datasets/d-1/shape'], ['PUT', '/groups/g-1/attributes/a'], ['DELETE', '/groups/g-1/links/x'], ['PUT', '/acls/bob'], ['PUT', '/groups/g-1/acls']];
    for (const [m, p] of reads) expect(w(m, p), `${m} ${p}`).to.equal(false);
    for (const [m, p] of writes) expect(w(m, p), `${m} ${p}`).to.equal(true);
    // every way of naming a domain gives one key (query raw or %-encoded, either header, hdf5:// prefix)
    const keys = [
      domainKey('/x?domain=/a/b.h5', {}),
      domainKey('/x?domain=%2Fa%2Fb.h5', {}),
      domainKey('/x?domain=hdf5://a//b.h5', {}),
      domainKey('/x', { 'x-store-domain': '/a/b.h5' }),
      domainKey('/x', { 'x-hdf-domain': '/a/b.h5/' }),
    ];
    expect(new Set(keys)).to.deep.equal(new Set(['/a/b.h5']));
    expect(domainKey('/x?domain=/a/../b.h5', {})).to.equal(undefined);
    expect(ownerOf(HOT[0], 2)).to.equal(0);
    expect(ownerOf(HOT[1], 2)).to.equal(1);
  });

  it('prints one "listening on" line with the real port (port 0) and runs two workers', async () => {
    expect(srv.log().match(/listening on http/g)).to.have.length(1);
    expect(new URL(srv.url).port).to.not.equal('0');
    await until(() => workerPids(srv.proc.pid!).length === 2, 10_000);
  });

  it('answers reads in both workers', async () => {
    const made = await req(srv.url, 'PUT', `/?${q('/reads.h5')}`);
    expect(made.status).to.equal(201);
    const root = made.json.root as string;
    for (let i = 0; i < 20; i++) expect((await req(srv.url, 'GET', `/groups/${root}?${q('/reads.h5')}`)).status).to.equal(200);
    const counts = await countsByWorker(srv.url, /method="GET",route="\/groups\/:id",status="200"/);
    expect([...counts.keys()].sort()).to.deep.equal(['0', '1']);
    for (const [w, n] of counts) expect(n, `worker ${w}`).to.be.greaterThan(0);
  });

  it('answers concurrent writes of many clients to one domain, all in its owner, with no 503', async () => {
    const domain = HOT[1];
    const made = await req(srv.url, 'PUT', `/?${q(domain)}`);
    expect(made.status).to.equal(201);
    const root = made.json.root as string;
    const ds = await req(srv.url, 'POST', `/datasets?${q(domain)}`, { type: 'H5T_STD_I32LE', shape: [160], link: { id: root, name: 'v' } });
    expect(ds.status).to.equal(201);
    const clients = 16;
    const each = 10;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let k = 0; k < each; k++) {
          const i = c * each + k;
          const a = await req(srv.url, 'PUT', `/groups/${root}/attributes/a${i}?${q(domain)}`, { type: 'H5T_STD_I32LE', value: i });
          const v = await req(srv.url, 'PUT', `/datasets/${ds.json.id}/value?${q(domain)}&select=[${i}:${i + 1}]`, { value: [i * 2] });
          statuses.push(a.status, v.status);
        }
      }),
    );
    expect(statuses.filter((s) => s !== 201 && s !== 200)).to.deep.equal([]);
    // every write was answered by the owner (worker 1), none by worker 0
    const counts = await countsByWorker(srv.url, /method="PUT",route="\/groups\/:id\/attributes\/:name"/);
    expect(counts.get('1')).to.equal(clients * each);
    expect(counts.get('0')).to.equal(0);
    // the file, read by h5py
    const file = `${srv.root}${domain}`;
    const got = pythonJson(
      `import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps({'attrs': {k: int(v) for k, v in f.attrs.items()}, 'v': f['v'][()].tolist()}))`,
      [file],
      { lockFree: true },
    );
    expect(Object.keys(got.attrs)).to.have.length(clients * each);
    for (let i = 0; i < clients * each; i++) expect(got.attrs[`a${i}`]).to.equal(i);
    expect(got.v).to.deep.equal(Array.from({ length: clients * each }, (_, i) => i * 2));
    // and every worker reads what was written
    for (let i = 0; i < 4; i++) expect((await req(srv.url, 'GET', `/groups/${root}/attributes/a159?${q(domain)}`)).json.value).to.equal(159);
  });

  it('writes to domains of different owners at the same time', async () => {
    const domains = ['/s0.h5', '/s1.h5', '/s2.h5', '/s3.h5', ownedBy(0, 'spread'), ownedBy(1, 'spread')];
    const owners = new Set(domains.map((d) => ownerOf(d, 2)));
    expect(owners.size).to.equal(2);
    const roots = await Promise.all(domains.map(async (d) => (await req(srv.url, 'PUT', `/?${q(d)}`)).json.root as string));
    const statuses = (
      await Promise.all(domains.flatMap((d, j) => Array.from({ length: 8 }, (_, i) => req(srv.url, 'PUT', `/groups/${roots[j]}/attributes/x${i}?${q(d)}`, { type: 'H5T_STD_I32LE', value: i }))))
    ).map((a) => a.status);
    expect(statuses.every((s) => s === 201), String(statuses)).to.equal(true);
    for (const [j, d] of domains.entries()) expect((await req(srv.url, 'GET', `/groups/${roots[j]}/attributes?${q(d)}`)).json.attributes).to.have.length(8);
  });

  it('restarts a killed worker; writes it owns wait for it and succeed', async () => {
    const domain = HOT[0];
    const root = (await req(srv.url, 'PUT', `/?${q(domain)}`)).json.root as string;
    const owner = workerPids(srv.proc.pid!).find((p) => indexOf(p) === 0)!;
    process.kill(owner, 'SIGKILL');
    await until(() => !alive(owner), 5000);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => req(srv.url, 'PUT', `/groups/${root}/attributes/k${i}?${q(domain)}`, { type: 'H5T_STD_I32LE', value: i })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(6).fill(201));
    await until(() => workerPids(srv.proc.pid!).length === 2, 10_000);
    expect(workerPids(srv.proc.pid!)).to.not.include(owner);
    expect(srv.log()).to.match(/worker died; restarting it/);
    expect((await req(srv.url, 'GET', `/groups/${root}/attributes?${q(domain)}`)).json.attributes).to.have.length(6);
  });

  it('answers 502 with a message when the owner dies while answering a forwarded write', async () => {
    const domain = ownedBy(0, 'dies');
    const root = (await req(srv.url, 'PUT', `/?${q(domain)}`)).json.root as string;
    const ds = await req(srv.url, 'POST', `/datasets?${q(domain)}`, { type: 'H5T_STD_U8LE', shape: [1 << 20], link: { id: root, name: 'big' } });
    expect(ds.status).to.equal(201);
    // a binary write whose body comes slowly; whichever worker the connection reaches, the owner gets
    // it; killing the owner half-way gives 502 when another worker forwarded it (else a reset)
    let got502: Answer | undefined;
    for (let attempt = 0; attempt < 6 && !got502; attempt++) {
      // the owner is up again once a write of its domain succeeds
      await until(() => workerPids(srv.proc.pid!).length === 2, 15_000);
      expect((await req(srv.url, 'PUT', `/groups/${root}/attributes/up${attempt}?${q(domain)}`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
      const answer = new Promise<Answer | undefined>((resolve) => {
        const r = http.request(`${srv.url}/datasets/${ds.json.id}/value?${q(domain)}`, { method: 'PUT', agent: false, headers: { 'content-type': 'application/octet-stream', 'content-length': 1 << 20 } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            r.destroy();
            resolve({ status: res.statusCode!, text, json: text ? JSON.parse(text) : undefined });
          });
          res.on('error', () => resolve(undefined));
        });
        r.on('error', () => resolve(undefined));
        r.write(Buffer.alloc(1000));
        setTimeout(() => {
          const owner = workerPids(srv.proc.pid!).find((p) => indexOf(p) === 0);
          if (owner) process.kill(owner, 'SIGKILL');
        }, 400);
        setTimeout(() => resolve(undefined), 10_000);
      });
      const a = await answer;
      if (a?.status === 502) got502 = a;
    }
    expect(got502, 'a 502 in 6 attempts').to.not.equal(undefined);
    expect(got502!.json.message).to.match(/stopped while answering/);
    await until(() => workerPids(srv.proc.pid!).length === 2, 15_000);
  });

  it('workers exit when their primary is killed', async () => {
    const other = await startServer({ args: ['--workers', '2'] });
    await until(() => workerPids(other.proc.pid!).length === 2, 10_000);
    const pids = workerPids(other.proc.pid!);
    other.proc.kill('SIGKILL');
    await until(() => pids.every((p) => !alive(p)), 10_000);
  });

  it('finishes requests in flight on SIGTERM, then every process exits', async () => {
    const domain = ownedBy(1, 'term');
    const root = (await req(srv.url, 'PUT', `/?${q(domain)}`)).json.root as string;
    await until(() => workerPids(srv.proc.pid!).length === 2, 15_000);
    const pids = workerPids(srv.proc.pid!);
    const dir = envOf(pids[0], 'H5STORE_WORKER_DIR')!;
    expect(fs.existsSync(dir)).to.equal(true);
    // two writes in flight, their bodies half sent when the primary gets SIGTERM
    const body = Buffer.from(JSON.stringify({ type: 'H5T_STD_I32LE', value: 7 }));
    const inFlight = [0, 1].map(
      (i) =>
        new Promise<number>((resolve, reject) => {
          const r = http.request(`${srv.url}/groups/${root}/attributes/late${i}?${q(domain)}`, { method: 'PUT', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          });
          r.on('error', reject);
          r.write(body.subarray(0, 5));
          setTimeout(() => r.end(body.subarray(5)), 700);
        }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const exited = new Promise<number | null>((r) => srv.proc.once('exit', (code) => r(code)));
    srv.proc.kill('SIGTERM');
    expect(await Promise.all(inFlight)).to.deep.equal([201, 201]);
    expect(await exited).to.equal(0);
    for (const p of pids) expect(alive(p), `worker ${p}`).to.equal(false);
    expect(fs.existsSync(dir)).to.equal(false);
    const got = pythonJson(`import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps(sorted(k for k in f.attrs.keys() if k.startswith('late'))))`, [`${srv.root}${domain}`]);
    expect(got).to.deep.equal(['late0', 'late1']);
  });
});
