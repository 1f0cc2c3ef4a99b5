/**
 * Operations endpoints and request plumbing (docs/deploy.md "Health", "Metrics", "Logs"):
 * /healthz, /readyz (named checks, registrable), /metrics (Prometheus text; public, user, off or
 * on its own port), X-Request-Id, the JSON request log (user when authenticated), lock refusals
 * logged as warnings without stacks, and the start-up warning when HDF5 file locking is off.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { fileLockingWarning, hdf5FileLocking } from '../../src/ops/filelocking.js';
import { Readiness } from '../../src/ops/readiness.js';
import { headerRequest } from '../helpers/apiExtra.js';
import { childEnv } from '../helpers/env.js';
import { PYTHON } from '../helpers/python.js';
import { Client, fixturePath, startServer, tempRoot, type TestServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Parsed JSON log lines of a server's stdout. */
function logLines(out: string): any[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/** The value of one sample in Prometheus text (undefined when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const kv of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[kv[1]] = kv[2];
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('operations: health, readiness, metrics, request ids and logs', function () {
  this.timeout(60000);
  let srv: TestServer;
  let c: Client;

  before(async () => {
    const root = tempRoot('h5store-ops-');
    fs.mkdirSync(path.join(root, 'fx'));
    fs.copyFileSync(fixturePath('tall.h5'), path.join(root, 'fx/tall.h5'));
    srv = await startServer({ root, args: ['--log-level', 'info'] });
    c = new Client(srv.url, '/fx/tall.h5');
  });
  after(async () => {
    await srv.stop();
    fs.rmSync(srv.root, { recursive: true, force: true });
  });

  it('GET /healthz answers 200 without touching data; GET /readyz lists its named checks', async () => {
    const h = await c.get('/healthz');
    expect(h.status).to.equal(200);
    expect(h.json).to.deep.equal({ status: 'ok', hrefs: [] });
    const r = await c.get('/readyz');
    expect(r.status, r.text).to.equal(200);
    expect(r.json.status).to.equal('ready');
    expect(r.json.checks.map((x: any) => x.name)).to.deep.equal(['data directory', 'libhdf5']);
    for (const x of r.json.checks) expect(x, x.name).to.include({ ok: true });
    expect(r.json.checks[1].message).to.match(/^libhdf5 1\.\d+\.\d+$/);
    expect(r.headers.get('cache-control')).to.equal('no-store');
  });

  it('echoes a sane X-Request-Id, replaces an unsafe one, and logs one JSON line per request with it', async () => {
    const a = await c.get('/', {}, { 'X-Request-Id': 'client-id.42:abc' });
    expect(a.headers.get('x-request-id')).to.equal('client-id.42:abc');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const r = await c.get('/', {}, bad ? { 'X-Request-Id': bad } : {});
      expect(r.headers.get('x-request-id'), JSON.stringify(bad)).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    const err = await c.get('/groups/g-bad', {}, { 'X-Request-Id': 'err-1' });
    expect(err.status).to.equal(400);
    expect(err.headers.get('x-request-id'), 'errors carry it too').to.equal('err-1');
    await sleep(200);
    const lines = logLines(srv.log()).filter((j) => j.msg === 'request');
    const la = lines.find((j) => j.reqId === 'client-id.42:abc');
    expect(la).to.include({ method: 'GET', path: '/', route: '/', status: 200, domain: '/fx/tall.h5' });
    expect(la.ms).to.be.a('number');
    expect(la.bytesOut).to.be.above(200);
    expect(la, 'no user without authentication').to.not.have.property('user');
    const le = lines.find((j) => j.reqId === 'err-1');
    expect(le).to.include({ status: 400, route: '/groups/:id' });
    expect(lines.filter((j) => j.reqId === 'err-1'), 'exactly one line per request').to.have.length(1);
    // probes are logged at debug level only
    expect(lines.filter((j) => j.path === '/healthz')).to.have.length(0);
  });

  it('GET /metrics: requests by route template, method and status, durations, bytes, open files/ids, build info, event-loop lag', async () => {
    const root = (await c.get('/')).json.root;
    const g2 = (await c.get(`/groups/${root}/links`)).json.links.find((l: any) => l.title === 'g2').id;
    const ds = (await c.get(`/groups/${g2}/links`)).json.links.find((l: any) => l.title === 'dset2.1').id;
    const before = (await c.get('/metrics')).text;
    const v = await c.get(`/datasets/${ds}/value`, {}, { Accept: 'application/octet-stream' });
    expect(v.status).to.equal(200);
    await c.get(`/datasets/${ds}/value`, { select: '[0:3]' });
    await c.put(`/datasets/${ds}/value`, { value: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    await sleep(100);
    const m = await c.get('/metrics');
    expect(m.status).to.equal(200);
    expect(m.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const t = m.text;
    const key = { method: 'GET', route: '/datasets/:id/value', status: '200' };
    expect((sample(t, 'h5store_http_requests_total', key) ?? 0) - (sample(before, 'h5store_http_requests_total', key) ?? 0)).to.equal(2);
    expect(sample(t, 'h5store_http_requests_total', { method: 'PUT', route: '/datasets/:id/value', status: '200' })).to.equal(1);
    expect(sample(t, 'h5store_http_request_duration_seconds_count', { method: 'GET', route: '/datasets/:id/value' })).to.be.at.least(2);
    expect(sample(t, 'h5store_http_request_duration_seconds_bucket', { method: 'GET', route: '/datasets/:id/value', le: '+Inf' })).to.be.at.least(2);
    const outBytes = (sample(t, 'h5store_http_response_bytes_total', { method: 'GET', route: '/datasets/:id/value' }) ?? 0) - (sample(before, 'h5store_http_response_bytes_total', { method: 'GET', route: '/datasets/:id/value' }) ?? 0);
    expect(outBytes, 'bytes out: the 40-byte binary body + the JSON body + headers').to.be.within(40 + 20, 40 + 20 + 2000);
    const inBytes = sample(t, 'h5store_http_request_bytes_total', { method: 'PUT', route: '/datasets/:id/value' });
    expect(inBytes).to.equal(Buffer.byteLength(JSON.stringify({ value: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] })));
    expect(sample(t, 'h5store_open_files')).to.be.a('number').and.at.least(0);
    expect(sample(t, 'h5store_open_hdf5_ids'), 'no leaked ids').to.equal(0);
    expect(sample(t, 'h5store_lock_wait_seconds_count', { lock: 'file' }), 'the PUT took the cross-process lock').to.be.at.least(1);
    expect(sample(t, 'h5store_build_info', { version: '0.1.0' })).to.equal(1);
    expect(t).to.match(/h5store_build_info\{version="0\.1\.0",hdf5_version="1\.\d+\.\d+",node_version="v20/);
    expect(sample(t, 'nodejs_eventloop_lag_seconds')).to.be.a('number');
    expect(sample(t, 'nodejs_eventloop_lag_p99_seconds')).to.be.a('number');
    expect(sample(t, 'h5store_http_requests_total', { route: '(unmatched)' }), 'unknown routes are one series').to.equal(undefined);
    await c.get('/no/such/route/1');
    await c.get('/no/such/route/2');
    const t2 = (await c.get('/metrics')).text;
    expect(sample(t2, 'h5store_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).to.equal(2);
  });

  it('counts contended domain-lock waits when writes queue on one domain', async () => {
    const root = (await c.get('/')).json.root;
    await Promise.all(Array.from({ length: 8 }, (_, i) => c.put(`/groups/${root}/attributes/w${i}`, { type: 'H5T_STD_I32LE', value: i })));
    const t = (await c.get('/metrics')).text;
    expect(sample(t, 'h5store_lock_wait_seconds_count', { lock: 'domain' })).to.be.at.least(1);
  });

  it('answers 503 while another program holds the file, logs it as a warning without a stack, and counts it', async () => {
    const file = path.join(srv.root, 'fx/held.h5');
    fs.copyFileSync(fixturePath('tall.h5'), file);
    // h5py holds the file open for writing: libhdf5's lock keeps the server out
    const holder = spawn(PYTHON, ['-c', "import h5py,sys,time; f=h5py.File(sys.argv[1],'r+'); print('held', flush=True); sys.stdin.read()", file], { stdio: ['pipe', 'pipe', 'inherit'], env: childEnv() });
    try {
      await new Promise<void>((resolve) => holder.stdout!.on('data', (b) => b.toString().includes('held') && resolve()));
      const r = await c.with('/fx/held.h5').get('/', {}, { 'X-Request-Id': 'held-1' });
      expect(r.status, r.text).to.equal(503);
      expect(Number(r.headers.get('retry-after')), 'Retry-After: how long the file has been held').to.be.at.least(1);
    } finally {
      holder.stdin!.end();
      await new Promise((r) => holder.once('exit', r));
    }
    await sleep(200);
    const warn = logLines(srv.log()).find((j) => j.reqId === 'held-1' && j.msg !== 'request');
    expect(warn, 'a warning line for the refusal').to.include({ level: 40, msg: 'request refused (503)' });
    expect(warn.reason).to.match(/another program \(h5py\?\) has the file open for writing/);
    expect(JSON.stringify(warn)).to.not.match(/stack|at .*\.ts:\d+/);
    const t = (await c.get('/metrics')).text;
    // the permission check's read of the file's ACL is refused: that refusal is the answer
    expect(sample(t, 'h5store_lock_refusals_total', { lock: 'hdf5' })).to.be.at.least(1);
    expect(sample(t, 'h5store_http_unavailable_total', { route: '/' })).to.equal(1);
  });

  it('GET /readyz answers 503 naming the failing check when the data directory is gone', async () => {
    const root = tempRoot('h5store-ops-gone-');
    const s = await startServer({ root });
    try {
      fs.rmSync(root, { recursive: true, force: true });
      const r = await new Client(s.url).get('/readyz');
      expect(r.status, r.text).to.equal(503);
      expect(r.json.status).to.equal('not ready');
      const dd = r.json.checks.find((x: any) => x.name === 'data directory');
      expect(dd).to.include({ ok: false });
      expect(dd.message).to.match(/ENOENT/);
      expect(r.text, 'the path is not shown').to.not.include(root);
      expect(r.json.checks.find((x: any) => x.name === 'libhdf5')).to.include({ ok: true });
    } finally {
      await s.stop();
    }
  });

  it('metricsAccess off hides /metrics; metricsPort serves it (and the probes) on its own port only', async () => {
    const off = await startServer({ args: ['--metrics-access', 'off'] });
    try {
      expect((await new Client(off.url).get('/metrics')).status).to.equal(404);
      expect((await new Client(off.url).get('/healthz')).status).to.equal(200);
    } finally {
      await off.stop();
      fs.rmSync(off.root, { recursive: true, force: true });
    }
    const own = await startServer({ args: ['--metrics-port', '0', '--log-level', 'info'] });
    try {
      await new Client(own.url).get('/about');
      expect((await new Client(own.url).get('/metrics')).status, 'not on the main port').to.equal(404);
      const started = logLines(own.log()).find((j) => j.msg === 'h5store listening');
      const metricsUrl: string = started?.metricsUrl;
      expect(metricsUrl, 'the start line names the metrics URL').to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(metricsUrl).to.not.equal(own.url);
      const m = await new Client(metricsUrl).get('/metrics');
      expect(m.status).to.equal(200);
      expect(sample(m.text, 'h5store_http_requests_total', { method: 'GET', route: '/about', status: '200' })).to.equal(1);
      expect((await new Client(metricsUrl).get('/readyz')).status).to.equal(200);
      expect((await new Client(metricsUrl).get('/about')).status, 'only the ops routes there').to.equal(404);
      expect((await headerRequest(metricsUrl, 'GET', '/metrics', { host: 'evil.example' })).status, 'DNS rebinding (issue #24 item 6)').to.equal(421);
    } finally {
      await own.stop();
      fs.rmSync(own.root, { recursive: true, force: true });
    }
  });

  it('warns at start when HDF5 file locking is disabled, saying what it means', async () => {
    const run = async (locking: string) => {
      const s = await startServer({ env: { HDF5_USE_FILE_LOCKING: locking }, args: ['--log-level', 'warn'] });
      await s.stop();
      fs.rmSync(s.root, { recursive: true, force: true });
      return logLines(s.log()).filter((j) => j.level === 40);
    };
    for (const [value, expected] of [
      ["FALSE", /HDF5 file locking is disabled.*h5store ignores it.*h5py or any other program run with this setting takes no lock.*corrupt/],
      ['0', /HDF5 file locking is disabled/],
      ['BEST_EFFORT', /HDF5_USE_FILE_LOCKING=BEST_EFFORT: programs run with it open files without locks where the file system has none/],
    ] as const) {
      const w = await run(value);
      expect(w, `HDF5_USE_FILE_LOCKING=${value}`).to.have.length(1);
      expect(w[0].msg).to.match(expected);
      expect(w[0].HDF5_USE_FILE_LOCKING).to.equal(value);
    }
    expect(await run('TRUE'), 'locks on: no warning').to.have.length(0);
  });
});

describe('operations: readiness registry, metrics for users only, user in the log', function () {
  this.timeout(30000);

  it('runs registered checks concurrently, reports failures and timeouts by name, and replaces a check of the same name', async () => {
    const r = new Readiness();
    r.register('a', () => 'fine');
    r.register('b', () => {
      throw new Error('users file missing');
    });
    r.register('c', () => new Promise(() => undefined), { timeoutMs: 50 });
    let res = await r.run();
    expect(res.ready).to.equal(false);
    expect(res.checks.map((x) => [x.name, x.ok, x.message])).to.deep.equal([
      ['a', true, 'fine'],
      ['b', false, 'users file missing'],
      ['c', false, 'no answer within 50 ms'],
    ]);
    r.register('b', async () => undefined);
    r.register('c', () => undefined);
    res = await r.run();
    expect(res.ready).to.equal(true);
    expect(r.names).to.deep.equal(['a', 'b', 'c']);
  });

  it('metricsAccess user: 401 for anonymous requests, 200 for a user; the log line names the user; users file in /readyz', async () => {
    const dir = tempRoot('h5store-ops-users-');
    const usersFile = path.join(dir, 'users.json');
    await userAdd(usersFile, 'alice', 'alice-pw-42');
    const srv = await startServer({ args: ['--users-file', usersFile, '--metrics-access', 'user', '--log-level', 'debug'] });
    try {
      const anon = new Client(srv.url);
      const alice = anon.as({ user: 'alice', password: 'alice-pw-42' });
      const a = await anon.get('/metrics');
      expect(a.status, a.text).to.equal(401);
      expect(a.json.message).to.match(/authenticated user/);
      const bad = await anon.as({ user: 'alice', password: 'wrong' }).get('/metrics');
      expect(bad.status).to.equal(401);
      const ok = await alice.get('/metrics', {}, { 'X-Request-Id': 'alice-metrics' });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.text).to.include('h5store_http_requests_total');
      expect((await anon.get('/healthz')).status, 'probes stay public').to.equal(200);
      const ready = await anon.get('/readyz');
      expect(ready.json.checks.map((x: any) => x.name)).to.deep.equal(['data directory', 'libhdf5', 'users file']);
      expect(ready.status).to.equal(200);
      await alice.get('/about', {}, { 'X-Request-Id': 'alice-about' });
      await sleep(200);
      const lines = logLines(srv.log()).filter((l) => l.msg === 'request');
      expect(lines.find((l) => l.reqId === 'alice-metrics')?.user).to.equal('alice');
      expect(lines.find((l) => l.reqId === 'alice-about')).to.include({ user: 'alice', status: 200 });
      expect(lines.filter((l) => l.path === '/metrics' && l.status === 401).every((l) => l.user === undefined)).to.equal(true);
      // an unreadable users file makes the server not ready
      fs.writeFileSync(usersFile, '{ not json');
      const broken = await anon.get('/readyz');
      expect(broken.status, broken.text).to.equal(503);
      const uf = broken.json.checks.find((x: any) => x.name === 'users file');
      expect(uf).to.include({ ok: false, message: 'users file: cannot be parsed' });
      expect(broken.text).to.not.include(dir);
    } finally {
      await srv.stop();
      fs.rmSync(srv.root, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads HDF5_USE_FILE_LOCKING as libhdf5 1.10.8 does', () => {
    const table: [string | undefined, string][] = [
      [undefined, 'on'],
      ['TRUE', 'on'],
      ['1', 'on'],
      ['false', 'on'],
      ['no', 'on'],
      ['FALSE', 'off'],
      ['0', 'off'],
      ['BEST_EFFORT', 'best-effort'],
    ];
    for (const [v, exp] of table) expect(hdf5FileLocking(v === undefined ? {} : { HDF5_USE_FILE_LOCKING: v }), String(v)).to.equal(exp);
    expect(fileLockingWarning('on')).to.equal(undefined);
    expect(fileLockingWarning('off')).to.match(/h5py or any other program run with this setting takes no lock: it can open a served file for writing/);
  });
});
