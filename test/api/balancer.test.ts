/**
 * Several h5store processes on one data directory behind the shipped load-balancer configs
 * (deploy/nginx/h5store.conf, deploy/haproxy/h5store.cfg), run as they ship with only the lines
 * marked `# EDIT` (ports, paths) changed; Debian's nginx and HAProxy on loopback ports.
 *
 * Concurrent writers (2 per domain, value writes and attribute creations) and readers through
 * the balancer, the domain named in the four ways clients name it (query parameter raw and
 * %2F-encoded, X-Store-domain, X-Hdf-domain): no answer other than 2xx (no 503), every read sees
 * every write acknowledged before it started, nothing acknowledged is lost (checked through the
 * API and with h5py on the files), and the balancer sent every request for one domain to one
 * process (from its access log).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { type Balancer, have, routes, runWorkload, startHaproxy, startNginx, type WorkloadResult } from '../helpers/balancer.js';
import { pythonJson } from '../helpers/python.js';
import { startServer, tempRoot, type TestServer } from '../helpers/server.js';

const LOAD = { domains: 16, writersPerDomain: 2, writesPerWriter: 10, readers: 8 };

/** Check the files on disk with h5py: every acknowledged slot value and attribute is there. */
function checkFilesWithH5py(root: string, folder: string, r: WorkloadResult) {
  const got = pythonJson(
    `import h5py, json, sys, os
out = {}
for n in sorted(os.listdir(sys.argv[1])):
    if not n.endswith('.h5'): continue
    with h5py.File(os.path.join(sys.argv[1], n), 'r') as f:
        out[n] = {'slots': [int(x) for x in f['slots'][...]], 'attrs': sorted(f.attrs.keys())}
print(json.dumps(out))`,
    [path.join(root, folder.slice(1))],
    { lockFree: true },
  );
  const slots = LOAD.writersPerDomain * LOAD.writesPerWriter;
  for (const d of r.domainNames) {
    const f = got[path.basename(d)];
    expect(f, d).to.not.equal(undefined);
    // writer w writes slot n (n even) and attribute w<w>_<n> (n odd)
    for (let w = 0; w < LOAD.writersPerDomain; w++) {
      for (let n = 0; n < LOAD.writesPerWriter; n++) {
        const slot = w * LOAD.writesPerWriter + n;
        if (n % 2 === 0) expect(f.slots[slot], `${d} slot ${slot} (h5py)`).to.equal(slot + 1);
        else expect(f.attrs, `${d} (h5py)`).to.include(`w${w}_${n}`);
      }
    }
    expect(f.slots).to.have.length(slots);
  }
}

/** Every domain's requests went to one upstream; keys are decoded domain paths. */
function checkRouting(b: Balancer, r: WorkloadResult, backends: number) {
  const seen = new Map<string, Set<string>>();
  for (const { key, upstream } of routes(b.log())) {
    if (!seen.has(key)) seen.set(key, new Set());
    seen.get(key)!.add(upstream);
  }
  for (const d of r.domainNames) {
    expect(seen.get(d), `requests for ${d} (keys seen: ${[...seen.keys()].slice(0, 5).join(', ')})`).to.not.equal(undefined);
    expect([...seen.get(d)!], `upstreams of ${d}`).to.have.length(1);
  }
  const used = new Set(r.domainNames.map((d) => [...seen.get(d)!][0]));
  expect(used.size, 'the domains are spread over the processes').to.equal(backends);
}

function report(name: string, r: WorkloadResult) {
  console.log(
    `      ${name}: ${r.writes} writes + ${r.reads} reads in ${r.seconds.toFixed(2)} s ` +
      `(${((r.writes + r.reads) / r.seconds).toFixed(0)} req/s), worst write ${r.worstWriteMs.toFixed(0)} ms, ` +
      `non-2xx ${JSON.stringify(r.failures)}, stale reads ${r.staleReads.length}, lost ${r.lost.length}`,
  );
}

function expectClean(r: WorkloadResult) {
  expect(r.failures, 'answers other than 2xx (503s included)').to.deep.equal({});
  expect(r.staleReads.slice(0, 10), 'reads missing a write acknowledged before they started').to.deep.equal([]);
  expect(r.lost.slice(0, 10), 'acknowledged writes lost').to.deep.equal([]);
  expect(r.writes).to.equal(LOAD.domains * LOAD.writersPerDomain * LOAD.writesPerWriter);
  expect(r.reads).to.be.above(0);
}

describe('several h5store processes behind the shipped load-balancer configs', function () {
  this.timeout(180000);
  let root: string;
  const servers: TestServer[] = [];
  const balancers: Balancer[] = [];

  before(async function () {
    if (!have('nginx')) {
      console.log('      (skipped: nginx is not installed; apt-get install nginx)');
      this.skip();
    }
    root = tempRoot('h5store-lb-');
    for (let i = 0; i < 2; i++) servers.push(await startServer({ root }));
  });

  after(async function () {
    for (const b of balancers) await b.stop();
    for (const s of servers) await s.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('nginx (hash $h5store_domain_key consistent): no 503, no stale read, nothing lost, one process per domain', async () => {
    fs.mkdirSync(path.join(root, 'nginx'));
    const dir = tempRoot('h5store-nginx-');
    const ngx = await startNginx(dir, servers.map((s) => s.url));
    balancers.push(ngx);
    // X-Request-Id passes through both ways: the client's, else nginx's own
    const a = await fetch(`${ngx.url}/about`, { headers: { 'X-Request-Id': 'lb-test-1' } });
    expect(a.headers.get('x-request-id')).to.equal('lb-test-1');
    const b = await fetch(`${ngx.url}/about`);
    expect(b.headers.get('x-request-id')).to.match(/^[0-9a-f]{32}$/);
    const r = await runWorkload(ngx.url, { folder: '/nginx', ...LOAD });
    report('nginx, 2 processes', r);
    expectClean(r);
    checkRouting(ngx, r, servers.length);
    await new Promise((res) => setTimeout(res, 1500)); // idle files closed by the servers
    checkFilesWithH5py(root, '/nginx', r);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('HAProxy (balance hash var(txn.h5store_domain), hash-type consistent): the same', async function () {
    if (!have('haproxy')) this.skip();
    fs.mkdirSync(path.join(root, 'haproxy'));
    const dir = tempRoot('h5store-haproxy-');
    const hap = await startHaproxy(dir, servers.map((s) => s.url));
    balancers.push(hap);
    const a = await fetch(`${hap.url}/about`, { headers: { 'X-Request-Id': 'lb-test-2' } });
    expect(a.headers.get('x-request-id')).to.equal('lb-test-2');
    const r = await runWorkload(hap.url, { folder: '/haproxy', ...LOAD });
    report('HAProxy, 2 processes', r);
    expectClean(r);
    checkRouting(hap, r, servers.length);
    await new Promise((res) => setTimeout(res, 1500));
    checkFilesWithH5py(root, '/haproxy', r);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
