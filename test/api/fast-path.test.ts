/**
 * What the fast path of small GETs (issue #9) must not change: every answer reflects this
 * process's own writes at once (remembered GET results, ACL views, stats are dropped by every
 * write), changes behind the server's back are seen within milliseconds, and the one-parse query
 * string keeps its meaning (repeated keys, `__proto__`, escapes).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('small GETs: cached answers stay true (issue #9)', function () {
  this.timeout(60_000);
  let srv: TestServer;
  let c: Client;
  let root: string;

  before(async () => {
    srv = await startServer({ root: tempRoot() });
    c = new Client(srv.url, '/fast/a.h5');
    expect((await c.request('PUT', '/', { query: { domain: '/fast' }, body: { folder: 1 } })).status).to.equal(201);
    expect((await c.request('PUT', '/')).status).to.equal(201);
    root = (await c.request('GET', '/')).json.root;
  });
  after(() => srv.stop());

  it('a remembered group, link and attribute change with the next write, at once', async () => {
    const g0 = (await c.request('GET', `/groups/${root}`)).json;
    expect(g0.attributeCount).to.equal(0);
    expect((await c.request('GET', `/groups/${root}`)).json.attributeCount, 'again (remembered)').to.equal(0);
    expect((await c.request('PUT', `/groups/${root}/attributes/x`, { body: { type: 'H5T_STD_I32LE', value: 1 } })).status).to.equal(201);
    expect((await c.request('GET', `/groups/${root}`)).json.attributeCount).to.equal(1);
    expect((await c.request('GET', `/groups/${root}/attributes/x`)).json.value).to.equal(1);
    expect((await c.request('PUT', `/groups/${root}/attributes/x/value`, { body: { value: 7 } })).status).to.equal(200);
    expect((await c.request('GET', `/groups/${root}/attributes/x`)).json.value).to.equal(7);
    const g = await c.request('POST', '/groups', { body: { link: { id: root, name: 'sub' } } });
    expect(g.status).to.equal(201);
    expect((await c.request('GET', `/groups/${root}/links/sub`)).json.link.id).to.equal(g.json.id);
    expect((await c.request('DELETE', `/groups/${root}/links/sub`)).status).to.equal(200);
    expect((await c.request('GET', `/groups/${root}/links/sub`)).status).to.be.oneOf([404, 410]);
    expect((await c.request('GET', `/groups/${root}`)).json.linkCount).to.equal(0);
  });

  it('a remembered ACL view changes with the next ACL write', async () => {
    expect((await c.request('GET', `/groups/${root}`)).status).to.equal(200);
    const put = await c.request('PUT', '/acls/default', { body: { read: false, create: false, update: false, delete: false, readACL: false, updateACL: false } });
    expect(put.status, put.text).to.be.oneOf([200, 201]);
    expect((await c.request('GET', `/groups/${root}`)).status, 'default may no longer read').to.be.oneOf([401, 403]);
    const back = await c.request('PUT', '/acls/default', { body: { read: true, create: true, update: true, delete: true, readACL: true, updateACL: true } });
    expect(back.status, back.text).to.be.oneOf([401, 403]); // no one may change it back without updateACL: the answer is final
  });

  it('a domain deleted or replaced behind the server\'s back is seen within milliseconds', async () => {
    const d = new Client(srv.url, '/fast/b.h5');
    expect((await d.request('PUT', '/')).status).to.equal(201);
    expect((await d.request('GET', '/')).status).to.equal(200);
    fs.rmSync(path.join(srv.root, 'fast/b.h5'));
    await sleep(10);
    expect((await d.request('GET', '/')).status).to.equal(404);
  });

  it('the query string: a repeated domain is refused, __proto__ is just a key, escapes are decoded', async () => {
    expect((await new Client(srv.url, '/fast/c.h5').request('PUT', '/')).status).to.equal(201);
    const u = `${srv.url}/?domain=/fast/c.h5&domain=/fast/c.h5`;
    expect((await fetch(u)).status).to.equal(400);
    const p = await fetch(`${srv.url}/?__proto__=x&constructor=y&domain=%2Ffast%2Fc.h5`);
    expect(p.status).to.equal(200);
    expect((await p.json()).root).to.be.a('string');
    const e = await fetch(`${srv.url}/?domain=/fast/c%2eh5`);
    expect(e.status).to.equal(200);
  });
});
