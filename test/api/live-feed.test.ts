/**
 * Freshness for clients (issue #26 item 4): conditional GETs (ETag, Last-Modified, 304) on
 * metadata and values, and the change feed of a domain (`GET /events`, Server-Sent Events) with
 * the permission checks of the objects it tells about.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { groupAdd, userAdd } from '../../src/auth/admin.js';
import { expectError, sleep } from '../helpers/apiExtra.js';
import { followEvents, startLiveWriter } from '../helpers/live.js';
import { hasH5py, python } from '../helpers/python.js';
import { Client, type Reply, type TestServer, startServer, tempRoot } from '../helpers/server.js';

/** The versions of a file carry ETags once they are this old (store `fileVersion`: a change in the same clock tick leaves the stats as they were). */
const SETTLE_MS = 30;

describe('freshness: conditional GETs and the change feed (issue #26 item 4)', function () {
  this.timeout(120_000);
  let srv: TestServer;
  let api: Client;

  before(async function () {
    if (!hasH5py()) this.skip();
    srv = await startServer({ root: tempRoot('h5store-fresh-') });
    api = new Client(srv.url);
  });
  after(async () => srv?.stop());

  /** A new domain with a group `g`, a resizable dataset `d` (int32 [2] of at most [10]) with an attribute, and a committed type `t`. */
  async function domainWithObjects(name: string) {
    const c = api.with(name);
    expect((await c.put('/')).status).to.equal(201);
    const root = (await c.get('/')).json.root as string;
    const g = (await c.post('/groups', { link: { id: root, name: 'g' } })).json.id as string;
    const d = (await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [2], maxdims: [10], link: { id: root, name: 'd' } })).json.id as string;
    expect((await c.put(`/datasets/${d}/value`, { value: [1, 2] })).status).to.equal(200);
    expect((await c.put(`/datasets/${d}/attributes/a`, { type: 'H5T_STD_I32LE', value: 7 })).status).to.equal(201);
    const t = (await c.post('/datatypes', { type: 'H5T_IEEE_F32LE', link: { id: root, name: 't' } })).json.id as string;
    await sleep(SETTLE_MS);
    return { c, root, g, d, t };
  }

  describe('conditional GETs', () => {
    it('every metadata and value route answers with an ETag, and 304 to its If-None-Match; a change of the file (REST or h5py) makes a new one', async () => {
      const { c, root, g, d, t } = await domainWithObjects('/cond.h5');
      const bin = { accept: 'application/octet-stream' };
      const routes: [string, Record<string, string>?][] = [
        [`/groups/${root}`],
        [`/groups/${root}/links`],
        [`/groups/${g}/attributes`],
        [`/datasets/${d}`],
        [`/datasets/${d}/shape`],
        [`/datasets/${d}/type`],
        [`/datasets/${d}/value`],
        [`/datasets/${d}/value`, bin],
        [`/datasets/${d}/attributes`],
        [`/datasets/${d}/attributes/a`],
        [`/datasets/${d}/attributes/a/value`],
        [`/datatypes/${t}`],
      ];
      const tags = new Map<string, string>();
      for (const [p, h] of routes) {
        const r = await c.get(p, undefined, h);
        expect(r.status, `${p}: ${r.text}`).to.equal(200);
        const tag = r.headers.get('etag');
        expect(tag, `${p} ETag`).to.match(/^W\/"[\w-]+"$/);
        expect(r.headers.get('cache-control'), p).to.equal('no-cache');
        const again = await c.get(p, undefined, { ...h, 'if-none-match': tag! });
        expect(again.status, `${p} again`).to.equal(304);
        expect(again.body.length).to.equal(0);
        expect(again.headers.get('etag')).to.equal(tag);
        // a list of tags, one of them current, matches too
        expect((await c.get(p, undefined, { ...h, 'if-none-match': `W/"nope", ${tag}` })).status).to.equal(304);
        tags.set(p + (h ? ' binary' : ''), tag!);
      }
      expect(tags.get(`/datasets/${d}/value`), 'JSON and binary answers have tags of their own').to.not.equal(tags.get(`/datasets/${d}/value binary`));
      // another query is another answer
      const sel = await c.get(`/datasets/${d}/value`, { select: '[0:1]' }, { 'if-none-match': tags.get(`/datasets/${d}/value`)! });
      expect(sel.status).to.equal(200);
      // a write through the API: the tags are stale, the new values come
      expect((await c.put(`/datasets/${d}/value`, { value: [5, 6] })).status).to.equal(200);
      await sleep(SETTLE_MS);
      const v = await c.get(`/datasets/${d}/value`, undefined, { 'if-none-match': tags.get(`/datasets/${d}/value`)! });
      expect(v.status).to.equal(200);
      expect(v.json.value).to.deep.equal([5, 6]);
      // a change by another program
      const tag2 = v.headers.get('etag')!;
      python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'a') as f:\n    f['d'][0] = 9`, [path.join(srv.root, 'cond.h5')]);
      await sleep(SETTLE_MS);
      const v2 = await c.get(`/datasets/${d}/value`, undefined, { 'if-none-match': tag2 });
      expect(v2.status).to.equal(200);
      expect(v2.json.value).to.deep.equal([9, 6]);
    });

    it('Last-Modified once the file is a second old, and If-Modified-Since answered 304 (If-None-Match wins when both are sent)', async () => {
      const { c, d } = await domainWithObjects('/since.h5');
      const fresh = await c.get(`/datasets/${d}`);
      expect(fresh.headers.get('last-modified'), 'a change of this second: no Last-Modified yet').to.equal(null);
      await sleep(1100);
      const r = await c.get(`/datasets/${d}`);
      const lm = r.headers.get('last-modified')!;
      expect(new Date(lm).getTime()).to.equal(Math.floor(fs.statSync(path.join(srv.root, 'since.h5')).mtimeMs / 1000) * 1000);
      expect((await c.get(`/datasets/${d}`, undefined, { 'if-modified-since': lm })).status).to.equal(304);
      expect((await c.get(`/datasets/${d}`, undefined, { 'if-modified-since': new Date(Date.parse(lm) - 5000).toUTCString() })).status).to.equal(200);
      expect((await c.get(`/datasets/${d}`, undefined, { 'if-modified-since': lm, 'if-none-match': 'W/"other"' })).status, 'If-None-Match wins').to.equal(200);
      expect((await c.get(`/datasets/${d}`, undefined, { 'if-modified-since': 'not a date' })).status).to.equal(200);
    });

    it('no ETag on errors, nor on datasets whose values live in other files (virtual datasets)', async () => {
      const { c } = await domainWithObjects('/errs.h5');
      const missing = await c.get('/datasets/d-00000000-00000000-0000-000000-000000');
      expect(missing.status).to.be.oneOf([400, 404]);
      expect(missing.headers.get('etag')).to.equal(null);
      python(
        `import h5py, numpy, sys, os
d = sys.argv[1]
with h5py.File(os.path.join(d, 'src.h5'), 'w') as f:
    f['x'] = numpy.arange(4, dtype='i4')
lay = h5py.VirtualLayout(shape=(4,), dtype='i4')
lay[:] = h5py.VirtualSource('src.h5', 'x', shape=(4,))
with h5py.File(os.path.join(d, 'vds.h5'), 'w') as f:
    f.create_virtual_dataset('v', lay)`,
        [srv.root],
      );
      await sleep(SETTLE_MS);
      const v = api.with('/vds.h5');
      const id = (await v.get('/', { h5path: '/v' })).json.id as string;
      for (const p of [`/datasets/${id}`, `/datasets/${id}/value`]) {
        const r = await v.get(p);
        expect(r.status, r.text).to.equal(200);
        expect(r.headers.get('etag'), `${p}: its answer depends on src.h5 too`).to.equal(null);
      }
      expect((await v.get(`/datasets/${id}/value`)).json.value).to.deep.equal([0, 1, 2, 3]);
    });
  });

  describe('GET /events', () => {
    it('tells the objects and shapes now, then every write through the API as it is made: created, resized, deleted', async () => {
      const { root, d } = await domainWithObjects('/feed.h5');
      const c = api.with('/feed.h5');
      const feed = await followEvents(c.url('/events'));
      try {
        const initial = await feed.next((e) => e.event === 'initial');
        expect(initial.data.domain).to.equal('/feed.h5');
        expect(initial.data.added.map((a: { collection: string }) => a.collection).sort()).to.deep.equal(['datasets', 'datatypes', 'groups', 'groups']);
        expect(initial.data.shapes).to.deep.equal([{ id: d, shape: { class: 'H5S_SIMPLE', dims: [2], maxdims: [10] } }]);
        let from = feed.events.length;
        expect((await c.put(`/datasets/${d}/shape`, { shape: [5] })).status).to.equal(200);
        const resized = await feed.next((e) => e.event === 'change' && e.data.shapes.length > 0, from, 2000);
        expect(resized.data).to.deep.include({ event: 'written', shapes: [{ id: d, shape: { class: 'H5S_SIMPLE', dims: [5], maxdims: [10] } }], added: [], removed: [] });
        from = feed.events.length;
        const made = (await c.post('/datasets', { type: 'H5T_STD_I8LE', shape: [3], link: { id: root, name: 'e' } })).json.id as string;
        const added = await feed.next((e) => e.event === 'change' && e.data.added.length > 0, from, 2000);
        expect(added.data.added).to.deep.equal([{ id: made, collection: 'datasets' }]);
        expect(added.data.shapes).to.deep.equal([{ id: made, shape: { class: 'H5S_SIMPLE', dims: [3] } }]);
        from = feed.events.length;
        expect((await c.delete(`/datasets/${made}`)).status).to.equal(200);
        const removed = await feed.next((e) => e.event === 'change' && e.data.removed.length > 0, from, 2000);
        expect(removed.data.removed).to.deep.equal([made]);
      } finally {
        await feed.close();
      }
    });

    it('follows a SWMR writer: shapes that only grow, ending at the final one; ids= limits it to those objects', async () => {
      const file = path.join(srv.root, 'swmr-feed.h5');
      const writer = await startLiveWriter(file, 'swmr', 20);
      const c = api.with('/swmr-feed.h5');
      const id = (await c.get('/', { h5path: '/frames' })).json.id as string;
      const feed = await followEvents(c.url('/events', { ids: id }));
      try {
        await writer.done;
        await feed.next((e) => e.data.shapes?.some((s: { shape: { dims: number[] } }) => s.shape.dims[0] === 20), 0, 5000);
        const dims = feed.events.flatMap((e) => (e.data.shapes ?? []).map((s: { id: string; shape: { dims: number[] } }) => (expect(s.id).to.equal(id), s.shape.dims[0])));
        expect(dims.length, `shapes told: ${dims}`).to.be.at.least(3);
        for (let i = 1; i < dims.length; i++) expect(dims[i], `shapes told: ${dims}`).to.be.above(dims[i - 1]);
        expect(feed.events.filter((e) => e.event === 'change').every((e) => ['appended', 'changed'].includes(e.data.event))).to.equal(true);
        expect(feed.events.some((e) => e.data.event === 'appended'), 'a SWMR writer appends').to.equal(true);
        expect(feed.events.every((e) => (e.data.added ?? []).every((a: { id: string }) => a.id === id))).to.equal(true);
      } finally {
        await feed.close();
      }
    });

    it('ends with `deleted` when the domain goes away; bad ids are a 400, a folder or a missing domain 400/404', async () => {
      await domainWithObjects('/gone.h5');
      const c = api.with('/gone.h5');
      const feed = await followEvents(c.url('/events'));
      try {
        await feed.next((e) => e.event === 'initial');
        expect((await c.delete('/')).status).to.equal(200);
        const end = await feed.next((e) => e.event === 'end', 0, 3000);
        expect(end.data.reason).to.equal('deleted');
      } finally {
        await feed.close();
      }
      const bad = await api.with('/cond.h5').get('/events', { ids: 'd-nope' });
      expectError(bad, 400);
      expectError(await api.with('/missing.h5').get('/events'), 404);
      expect((await api.get('/events', { domain: '/' })).status).to.be.oneOf([400, 404]);
    });
  });
});

describe('GET /events: the permission checks of the objects (issue #26 item 4)', function () {
  this.timeout(120_000);
  const PW = { admin: 'adm-pw-5h2k', alice: 'alice-pw-7g1f', bob: 'bob-pw-3k8s' };
  let srv: TestServer;
  let base: Client;
  const as = (who: keyof typeof PW | undefined, domain: string) => base.with(domain).as(who ? { user: who, password: PW[who] } : undefined);

  before(async function () {
    if (!hasH5py()) this.skip();
    const file = path.join(tempRoot('h5store-feed-users-'), 'users.json');
    for (const [u, pw] of Object.entries(PW)) await userAdd(file, u, pw);
    await groupAdd(file, 'staff', ['bob']);
    srv = await startServer({ args: ['--users-file', file] });
    base = new Client(srv.url);
  });
  after(async () => srv?.stop());

  const auth = (who: keyof typeof PW) => ({ authorization: 'Basic ' + Buffer.from(`${who}:${PW[who]}`).toString('base64') });

  it('needs read on the domain; objects with an ACL that keeps the requester out are left out of every event', async () => {
    const a = as('alice', '/private.h5');
    expect((await as('admin', '/private.h5').put('/', { owner: 'alice' })).status).to.equal(201);
    expect((await as('admin', '/private.h5').put('/acls/alice', { create: true, read: true, update: true, delete: true, readACL: true, updateACL: true })).status).to.equal(201);
    const root = (await a.get('/')).json.root as string;
    const open = (await a.post('/datasets', { type: 'H5T_STD_I32LE', shape: [2], maxdims: [8], link: { id: root, name: 'open' } })).json.id as string;
    const hidden = (await a.post('/datasets', { type: 'H5T_STD_I32LE', shape: [2], maxdims: [8], link: { id: root, name: 'hidden' } })).json.id as string;
    // nobody but alice reads the domain yet
    let denied: Reply | undefined;
    try {
      await followEvents(as('bob', '/private.h5').url('/events'), auth('bob'));
    } catch (e) {
      denied = { status: (e as { status: number }).status } as Reply;
    }
    expect(denied?.status, 'bob without read on the domain').to.equal(403);
    let anonymous: number | undefined;
    await followEvents(base.with('/private.h5').url('/events')).catch((e) => (anonymous = (e as { status: number }).status));
    expect(anonymous).to.equal(401);
    // bob may read the domain, not `hidden`
    expect((await a.put('/acls/bob', { read: true })).status).to.equal(201);
    expect((await a.put(`/datasets/${hidden}/acls/bob`, { read: false })).status).to.equal(201);
    expectError(await as('bob', '/private.h5').get(`/datasets/${hidden}`), 403);
    const feed = await followEvents(as('bob', '/private.h5').url('/events'), auth('bob'));
    try {
      const initial = await feed.next((e) => e.event === 'initial');
      const seen = (e: { data: { added: { id: string }[]; shapes: { id: string }[] } }) => [...e.data.added.map((x) => x.id), ...e.data.shapes.map((x) => x.id)];
      expect(seen(initial)).to.include(open);
      expect(seen(initial)).to.not.include(hidden);
      const from = feed.events.length;
      expect((await a.put(`/datasets/${hidden}/shape`, { shape: [4] })).status).to.equal(200);
      expect((await a.put(`/datasets/${open}/shape`, { shape: [6] })).status).to.equal(200);
      await feed.next((e) => e.event === 'change' && e.data.shapes.some((s: { id: string }) => s.id === open), from, 3000);
      for (const e of feed.events) expect(seen(e), JSON.stringify(e)).to.not.include(hidden);
    } finally {
      await feed.close();
    }
  });
});
