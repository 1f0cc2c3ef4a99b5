/**
 * What the fast path of small GETs (issue #9) must not change: every answer reflects this
 * process's own writes at once (remembered GET results, ACL views, stats are dropped by every
 * write), changes behind the server's back are seen within milliseconds, and the one-parse query
 * string keeps its meaning (repeated keys, `__proto__`, escapes).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseJsonBody } from '../../src/codec/json.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('small GETs: cached answers stay true (issue #9)', function () {
  this.timeout(60_000);
  let srv: TestServer;
  let c: Client;
  let root: string;

  before(async () => {
    // the hrefs tests ask under other names (a loopback server answers only to these: issue #24 item 6)
    srv = await startServer({ root: tempRoot(), args: ['--allowed-hosts', 'a.example,b.example,c.example'] });
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

  // A remembered attribute GET keeps its type, shape and value as JSON text, with the value's
  // text for both ignore_nan settings: every repeat, in either setting and in any order, answers
  // what the first computation of that setting did.
  it('a remembered attribute answers the same text, with and without ignore_nan, in any order', async () => {
    const cases: [string, unknown][] = [
      ['f', { type: 'H5T_IEEE_F32LE', shape: [4], value: [1.5, 'NaN', 'Infinity', '-Infinity'] }],
      ['c', { type: { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'b', type: 'H5T_IEEE_F64BE' }] }, shape: [2], value: [[1, 0.1], [-2, 'NaN']] }],
      ['s', { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, shape: 'H5S_SCALAR', value: 'é "q" \\' }],
      ['n', { type: 'H5T_STD_U64LE', shape: 'H5S_NULL' }],
    ];
    for (const [name, body] of cases) expect((await c.request('PUT', `/groups/${root}/attributes/${name}`, { body })).status, name).to.equal(201);
    const get = async (name: string, ignoreNan: boolean) => (await c.request('GET', `/groups/${root}/attributes/${name}`, { query: ignoreNan ? { ignore_nan: 1 } : {} })).text;
    for (const [name] of cases) {
      // first ask with ignore_nan, then without, then with again: the texts of each setting agree
      const a1 = await get(name, true);
      const b1 = await get(name, false);
      const a2 = await get(name, true);
      const b2 = await get(name, false);
      expect([a2, b2], name).to.deep.equal([a1, b1]);
      expect(a1, name).not.to.match(/NaN|Infinity/);
    }
    expect(JSON.parse((await get('f', true))).value).to.deep.equal([1.5, null, null, null]);
    expect(await get('f', false)).to.contain('"value":[1.5,NaN,Infinity,-Infinity]');
    expect(await get('c', false)).to.contain('"value":[[1,0.1],[-2,NaN]]');
    const s = JSON.parse(await get('s', false));
    expect(s.value).to.equal('é "q" \\');
    expect(s.type).to.deep.equal({ class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' });
    const n = JSON.parse(await get('n', false));
    expect([n.shape, n.value]).to.deep.equal([{ class: 'H5S_NULL' }, null]);
    // a new value is seen at once
    expect((await c.request('PUT', `/groups/${root}/attributes/f/value`, { body: { value: [2, 2, 2, 'NaN'] } })).status).to.equal(200);
    expect(await get('f', false)).to.contain('"value":[2,2,2,NaN]');
    expect(JSON.parse(await get('f', true)).value).to.deep.equal([2, 2, 2, null]);
  });

  it('attribute listings: kept items answer as the first listing, per hrefs, ignore_nan, page and value options', async () => {
    const g = await c.request('POST', '/groups', { body: { link: { id: root, name: 'many' } } });
    expect(g.status).to.equal(201);
    const id = g.json.id as string;
    const attrs: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      attrs[`a${String(i).padStart(2, '0')}`] =
        i % 4 === 0 ? { type: 'H5T_IEEE_F64LE', shape: [2], value: [i, 'NaN'] } : i % 4 === 1 ? { type: 'H5T_STD_I32LE', shape: [3], value: [i, i, i] } : i % 4 === 2 ? { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 }, shape: 'H5S_SCALAR', value: 'ab' } : { type: 'H5T_STD_U8LE', shape: 'H5S_NULL' };
    }
    attrs['ünï ✓'] = { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, shape: 'H5S_SCALAR', value: 'ö 😀' }; // UTF-8 (bytes are not characters)
    expect((await c.request('PUT', `/groups/${id}/attributes`, { body: { attributes: attrs } })).status).to.equal(201);
    const list = async (query: Record<string, string | number>, client = c) => (await client.request('GET', `/groups/${id}/attributes`, { query: { IncludeData: 1, ...query } })).text;
    const first = await list({});
    const firstNan = await list({ ignore_nan: 1 });
    expect(JSON.parse(firstNan).attributes).to.have.length(41);
    expect(first).to.contain('"value":[0,NaN]');
    expect(firstNan).to.contain('"value":[0,null]');
    for (let round = 0; round < 2; round++) {
      expect(await list({}), 'again').to.equal(first);
      expect(await list({ ignore_nan: 1 }), 'again, ignore_nan').to.equal(firstNan);
      // other hrefs: the domain in a header (hrefs without ?domain=)
      const viaHeader = await list({}, new Client(srv.url, undefined, { 'X-Hdf-domain': '/fast/a.h5' }));
      expect(viaHeader).to.equal(first.replace(/\?domain=%2Ffast%2Fa\.h5|\?domain=\/fast\/a\.h5/g, ''));
      expect(viaHeader).to.not.equal(first);
      // pages across other boundaries, made of kept items
      const paged: unknown[] = [];
      let marker: string | undefined;
      for (;;) {
        const page = JSON.parse(await list(marker ? { Limit: 7, Marker: marker, ignore_nan: 1 } : { Limit: 7, ignore_nan: 1 }));
        paged.push(...page.attributes);
        if (page.attributes.length < 7) break;
        marker = page.attributes[page.attributes.length - 1].name;
      }
      expect(paged).to.deep.equal(JSON.parse(firstNan).attributes);
      // base64 and max_data_size are not the kept items
      const b64 = JSON.parse(await list({ encoding: 'base64' })).attributes;
      expect(b64[1]).to.include({ encoding: 'base64', value: Buffer.from(Int32Array.of(1, 1, 1).buffer).toString('base64') });
      const small = JSON.parse(await list({ max_data_size: 4 })).attributes;
      expect(small[1]).to.not.have.property('value');
      expect(small[2]).to.have.property('value', 'ab');
      // without values
      const bare = JSON.parse((await c.request('GET', `/groups/${id}/attributes`)).text).attributes;
      expect(bare[0]).to.not.have.property('value');
      expect(bare.map((a: { name: string }) => a.name)).to.deep.equal(JSON.parse(firstNan).attributes.map((a: { name: string }) => a.name));
    }
    // a new value is seen at once
    expect((await c.request('PUT', `/groups/${id}/attributes/a01/value`, { body: { value: [7, 8, 9] } })).status).to.equal(200);
    const after = await list({});
    expect(after).to.contain('"value":[7,8,9]');
    expect(after.replace('[7,8,9]', '[1,1,1]').replace(/"created":[0-9.e+]+/g, '')).to.equal(first.replace(/"created":[0-9.e+]+/g, ''));
  });

  // GET / of a domain, group, dataset, datatype, attribute and link GETs keep their complete bytes
  // per object (or content) and hrefs (sendWithHrefs, keptDomainBodies): each repeat, by another Host, with the domain in a header or the query, and
  // with ignore_nan, answers what a first request of that form would.
  it('kept GET answers follow each request\'s hrefs (Host, domain in the query or a header, the path asked by)', async () => {
    const ds = await c.request('POST', '/datasets', { body: { type: 'H5T_IEEE_F32LE', shape: [3], link: { id: root, name: 'kept_ds' } } });
    const big = await c.request('POST', '/datasets', { body: { type: 'H5T_STD_I16LE', shape: [20, 30], link: { id: root, name: 'kept_big' } } });
    const dt = await c.request('POST', '/datatypes', { body: { type: 'H5T_STD_I64BE', link: { id: root, name: 'kept_type' } } });
    for (const r of [ds, big, dt]) expect(r.status).to.equal(201);
    for (const name of ['a b', 'a%b', 'kept'])
      expect((await c.request('PUT', `/datasets/${ds.json.id}/attributes/${encodeURIComponent(name)}`, { body: { type: 'H5T_IEEE_F64LE', value: 'NaN' } })).status).to.equal(201);
    const port = new URL(srv.url).port;
    /** GET over node:http (fetch cannot set Host): the parsed body. */
    const raw = (p: string, headers: Record<string, string>) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: p, headers }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (b: Buffer) => parts.push(b));
          res.on('end', () => {
            try {
              expect(res.statusCode, p).to.equal(200);
              resolve(parseJsonBody(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>);
            } catch (e) {
              reject(e);
            }
          });
        });
        req.on('error', reject);
      });
    const paths = [
      '/',
      `/groups/${root}`,
      `/datasets/${ds.json.id}`,
      `/datasets/${big.json.id}`,
      `/datatypes/${dt.json.id}`,
      `/datasets/${ds.json.id}/attributes/a%20b`,
      `/datasets/${ds.json.id}/attributes/a%25b`,
      `/datasets/${ds.json.id}/attributes/kept`,
      `/groups/${root}/links/kept_ds`,
      `/groups/${root}/links/kept_type`,
    ];
    const forms = [
      { name: 'query, host A', host: 'a.example:81', viaQuery: true, nan: false },
      { name: 'header, host A', host: 'a.example:81', viaQuery: false, nan: false },
      { name: 'query, host B', host: 'b.example', viaQuery: true, nan: false },
      { name: 'query, host B, ignore_nan', host: 'b.example', viaQuery: true, nan: true },
      // Koa's rule for a Host with userinfo (dropped), remembered per raw Host (present.ts requestOrigin)
      { name: 'header, host with userinfo', host: 'user@c.example:82', origin: 'c.example:82', viaQuery: false, nan: false },
    ];
    for (const p of paths) {
      const seen = new Map<string, Record<string, unknown>>();
      for (let round = 0; round < 2; round++) {
        for (const f of forms) {
          const q = [f.viaQuery ? 'domain=/fast/a.h5' : '', f.nan ? 'ignore_nan=1' : ''].filter(Boolean).join('&');
          const body = await raw(q ? `${p}?${q}` : p, f.viaQuery ? { host: f.host } : { host: f.host, 'x-hdf-domain': '/fast/a.h5' });
          const hrefs = body.hrefs as { rel: string; href: string }[];
          expect(hrefs.length, `${p} ${f.name}`).to.be.greaterThan(2);
          for (const h of hrefs) {
            const origin = 'origin' in f ? f.origin : f.host;
            expect(h.href.startsWith(`http://${origin}/`), `${p} ${f.name}: ${h.href}`).to.equal(true);
            if (h.rel !== 'parent') expect(h.href.includes('domain=/fast/a.h5'), `${p} ${f.name}: ${h.href}`).to.equal(f.viaQuery);
            else expect(h.href, `${p} ${f.name}`).to.equal(`http://${origin}/?domain=/fast`);
          }
          const self = hrefs.find((h) => h.rel === 'self')!.href;
          expect(new URL(self).pathname, `${p} ${f.name}`).to.equal(p);
          if (p.includes('/attributes/')) expect(body.value, `${p} ${f.name}`).to.satisfy((v: unknown) => (f.nan ? v === null : Number.isNaN(v)));
          if (round === 0) seen.set(f.name, body);
          else expect(body, `${p} ${f.name}, again`).to.deep.equal(seen.get(f.name));
        }
      }
    }
  });

  it('a link\'s ETag is the same for the same link and changes with it', async () => {
    const a = await c.request('POST', '/groups', { body: { link: { id: root, name: 'etag_a' } } });
    const b = await c.request('POST', '/groups', { body: { link: { id: root, name: 'etag_b' } } });
    const tag = async () => (await c.request('GET', `/groups/${root}/links/etag_x`)).headers.get('etag');
    expect((await c.request('PUT', `/groups/${root}/links/etag_x`, { body: { id: a.json.id } })).status).to.equal(201);
    const t1 = await tag();
    expect(t1).to.match(/^"[0-9a-f]{20}"$/);
    expect(await tag()).to.equal(t1);
    expect((await c.request('DELETE', `/groups/${root}/links/etag_x`)).status).to.equal(200);
    expect((await c.request('PUT', `/groups/${root}/links/etag_x`, { body: { id: b.json.id } })).status).to.equal(201);
    const t2 = await tag();
    expect(t2).to.match(/^"[0-9a-f]{20}"$/).and.not.equal(t1);
    expect(await tag()).to.equal(t2);
  });

  it('GET / of a domain: the common answer (fixed tail kept as text) is the general one without its extras', async () => {
    const plain = await c.request('GET', '/');
    const withIds = await c.request('GET', '/', { query: { getdnids: 1 } });
    expect(plain.status).to.equal(200);
    const { dn_ids: dnIds, ...rest } = withIds.json;
    expect(dnIds).to.be.an('array');
    expect(plain.text).to.equal(JSON.stringify(rest));
    expect(Object.keys(plain.json)).to.deep.equal(['class', 'owner', 'root', 'created', 'lastModified', 'acls', 'hrefs', 'limits', 'compressors', 'filters', 'version']);
    expect(plain.json.limits.max_points).to.be.a('number');
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

  it('a write through one name of a file (a symlink) shows at once through its other names', async () => {
    // each name has its own entry and remembered answers, on one handle of the file
    const a = new Client(srv.url, '/fast/twin.h5');
    const b = new Client(srv.url, '/fast/twin-alias.h5');
    expect((await a.request('PUT', '/')).status).to.equal(201);
    fs.symlinkSync('twin.h5', path.join(srv.root, 'fast', 'twin-alias.h5'));
    const rootOf = async (cl: Client) => (await cl.request('GET', '/')).json.root as string;
    expect((await a.request('PUT', `/groups/${await rootOf(a)}/attributes/x`, { body: { type: 'H5T_STD_I32LE', value: 1 } })).status).to.equal(201);
    // (ids name their domain: each name is asked with its own root id)
    const views = async (cl: Client) => {
      const r = await rootOf(cl);
      const links = await cl.request('GET', `/groups/${r}/links`);
      expect(links.status).to.equal(200);
      return {
        attr: (await cl.request('GET', `/groups/${r}/attributes/x`)).json.value,
        links: links.json.links.map((l: { title: string }) => l.title),
        linkCount: (await cl.request('GET', `/groups/${r}`)).json.linkCount,
        modified: (await cl.request('GET', '/')).json.lastModified,
      };
    };
    const before = await views(b);
    expect(await views(a)).to.deep.equal(before);
    await sleep(10);
    const ar = await rootOf(a);
    expect((await a.request('PUT', `/groups/${ar}/attributes/x`, { query: { replace: 1 }, body: { type: 'H5T_STD_I32LE', value: 2 } })).status).to.equal(201);
    expect((await a.request('POST', '/groups', { body: { link: { id: ar, name: 'new' } } })).status).to.equal(201);
    const after = await views(b);
    expect(after).to.deep.equal(await views(a));
    expect(after.attr).to.equal(2);
    expect(after.links).to.deep.equal(['new']);
    expect(after.linkCount).to.equal(1);
    expect(after.modified).to.be.greaterThan(before.modified);
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
