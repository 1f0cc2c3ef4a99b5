/**
 * The web viewer's server side (issue #8): the browser redirect of GET /, static files under
 * /view/ with their caching headers and precompressed variants, the page shown when the viewer
 * is not built, and the `size` of GET /domains items (also read through h5pyd's hsls).
 * The viewer in a real browser: test/browser/viewer.test.ts.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { expectError } from '../helpers/apiExtra.js';
import { PYTHON } from '../helpers/python.js';
import { REPO, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';
import { ensureViewerBuilt, viewerAssets } from '../helpers/viewer.js';
import { userAdd } from '../../src/auth/admin.js';

/** What Chromium sends for a page load. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request with exactly these headers (fetch would add Accept and Accept-Encoding) and no redirect following. */
function raw(base: string, method: string, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const req = http.request({ host: u.hostname, port: u.port, method, path: pathAndQuery, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const json = (r: Raw) => JSON.parse(r.body.toString('utf8'));

describe('web viewer: server side', function () {
  this.timeout(120000);
  let srv: TestServer;
  let root: string;
  let dist: string;

  before(async () => {
    dist = ensureViewerBuilt();
    root = tempRoot('h5store-viewer-api-');
    copyFixtures(root, 'fx', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    fs.mkdirSync(path.join(root, 'fx', 'sub'));
    fs.writeFileSync(path.join(root, 'fx', 'notes.txt'), 'not HDF5\n');
    srv = await startServer({ root });
  });

  after(async () => {
    await srv?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  describe('GET / and the browser redirect', () => {
    for (const method of ['GET', 'HEAD']) {
      it(`${method} / from a browser (Accept prefers text/html) redirects 302 to /view/`, async () => {
        const r = await raw(srv.url, method, '/', { Accept: BROWSER_ACCEPT });
        expect(r.status).to.equal(302);
        expect(r.headers.location).to.equal('/view/');
        expect(r.headers.vary).to.match(/\bAccept\b/);
      });
    }

    it('API clients keep getting the JSON listing: no Accept, */*, application/json, JSON preferred', async () => {
      const want = json(await raw(srv.url, 'GET', '/domains', { Accept: 'application/json' }));
      const accepts: (string | undefined)[] = [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5', 'text/html;q=0.5, */*'];
      for (const a of accepts) {
        const r = await raw(srv.url, 'GET', '/', a === undefined ? {} : { Accept: a });
        expect(r.status, `Accept ${a}`).to.equal(200);
        expect(r.headers['content-type'], `Accept ${a}`).to.match(/^application\/json/);
        const body = json(r);
        expect(body.domains.map((d: { name: string }) => d.name), `Accept ${a}`).to.deep.equal(want.domains.map((d: { name: string }) => d.name));
        expect(body.hrefs).to.be.an('array');
      }
    });

    it('a browser asking for a domain (query or header) gets the domain JSON, not a redirect', async () => {
      for (const [q, h] of [
        ['/?domain=/fx/tall.h5', {}],
        ['/', { 'X-Hdf-domain': '/fx/tall.h5' }],
        ['/', { 'X-Store-domain': '/fx/tall.h5' }],
      ] as [string, Record<string, string>][]) {
        const r = await raw(srv.url, 'GET', q, { Accept: BROWSER_ACCEPT, ...h });
        expect(r.status, q).to.equal(200);
        expect(json(r).root, q).to.match(/^g-/);
      }
    });

    it('other routes are not redirected for browsers', async () => {
      const r = await raw(srv.url, 'GET', '/about', { Accept: BROWSER_ACCEPT });
      expect(r.status).to.equal(200);
      expect(json(r).hsds_version).to.be.a('string');
    });

    it('/view redirects to /view/ keeping the query', async () => {
      const r = await raw(srv.url, 'GET', '/view?domain=/fx/tall.h5&path=/g1');
      expect(r.status).to.equal(301);
      expect(r.headers.location).to.equal('/view/?domain=/fx/tall.h5&path=/g1');
    });
  });

  describe('static files', () => {
    it('/view/ (any query) is index.html, revalidated on every load (no-cache, ETag, Last-Modified)', async () => {
      const file = fs.readFileSync(path.join(dist, 'index.html'));
      for (const q of ['/view/', '/view/?domain=/fx/tall.h5&path=/g1/g1.1/dset1.1.1', '/view/index.html']) {
        const r = await raw(srv.url, 'GET', q, { Accept: BROWSER_ACCEPT });
        expect(r.status, q).to.equal(200);
        expect(r.headers['content-type'], q).to.match(/^text\/html/);
        expect(r.headers['cache-control'], q).to.equal('no-cache');
        expect(r.headers.etag, q).to.be.a('string');
        expect(r.headers['last-modified'], q).to.be.a('string');
        expect(r.body.equals(file), q).to.equal(true);
        expect(r.headers['content-security-policy'], q).to.match(/script-src 'self'/).and.match(/connect-src 'self'/);
      }
      const first = await raw(srv.url, 'GET', '/view/');
      const again = await raw(srv.url, 'GET', '/view/', { 'If-None-Match': first.headers.etag! });
      expect(again.status).to.equal(304);
      expect(again.body.length).to.equal(0);
      const since = await raw(srv.url, 'GET', '/view/', { 'If-Modified-Since': first.headers['last-modified']! });
      expect(since.status).to.equal(304);
      // a 304 carries the page's own policy: browsers merge a 304's headers into the cached page,
      // and the API's "default-src 'none'" there blocked the viewer's scripts on every reload
      for (const r of [again, since]) expect(r.headers['content-security-policy']).to.equal(first.headers['content-security-policy']);
    });

    it('hashed assets are immutable for a year, with the right content types', async () => {
      const { js, css } = viewerAssets(dist);
      expect(js).to.match(/^assets\/viewer-[A-Z0-9]{8}\.js$/);
      for (const [rel, type] of [
        [js, /^(text|application)\/javascript/],
        [css, /^text\/css/],
      ] as [string, RegExp][]) {
        const r = await raw(srv.url, 'GET', `/view/${rel}`);
        expect(r.status, rel).to.equal(200);
        expect(r.headers['cache-control'], rel).to.equal('public, max-age=31536000, immutable');
        expect(r.headers['content-type'], rel).to.match(type);
        expect(r.headers['x-content-type-options']).to.equal('nosniff');
        expect(r.headers['content-encoding'], rel).to.equal(undefined);
        expect(r.body.equals(fs.readFileSync(path.join(dist, rel))), rel).to.equal(true);
      }
    });

    it('assets are sent precompressed (br, gzip) to clients that accept it, identical once decoded', async () => {
      const { js } = viewerAssets(dist);
      const file = fs.readFileSync(path.join(dist, js));
      const br = await raw(srv.url, 'GET', `/view/${js}`, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(br.headers['content-encoding']).to.equal('br');
      expect(br.headers.vary).to.match(/Accept-Encoding/);
      expect(br.headers['content-type']).to.match(/javascript/);
      expect(br.body.length).to.be.below(file.length / 2);
      expect(zlib.brotliDecompressSync(br.body).equals(file)).to.equal(true);
      const gz = await raw(srv.url, 'GET', `/view/${js}`, { 'Accept-Encoding': 'gzip' });
      expect(gz.headers['content-encoding']).to.equal('gzip');
      expect(zlib.gunzipSync(gz.body).equals(file)).to.equal(true);
    });

    it('unknown files answer 404 without naming server paths; hidden and outside files are never served', async () => {
      const r = await raw(srv.url, 'GET', '/view/assets/nope-12345678.js');
      expect(r.status).to.equal(404);
      expect(json(r).message).to.include('/view/assets/nope-12345678.js');
      expect(r.body.toString()).to.not.include(REPO);
      for (const p of ['/view/%2e%2e/%2e%2e/package.json', '/view/..%2f..%2fpackage.json', '/view/%2e%2e%2f%2e%2e%2fsrc%2fapp.ts', '/view/build-info.json/x', '/view/.hidden']) {
        const x = await raw(srv.url, 'GET', p);
        expect(x.status, p).to.be.oneOf([400, 403, 404]);
        expect(x.body.toString(), p).to.not.include('"name": "h5store"');
        expect(x.body.toString(), p).to.not.include(REPO);
      }
    });

    it('methods other than GET/HEAD under /view/ answer 405 with Allow', async () => {
      for (const m of ['POST', 'PUT', 'DELETE']) {
        const r = await raw(srv.url, m, '/view/');
        expect(r.status, m).to.equal(405);
        expect(r.headers.allow, m).to.equal('GET, HEAD');
      }
    });
  });

  describe('GET /domains items carry the size of domains', () => {
    it('size is the file size in bytes for domains and absent for folders (GET /domains and GET /); files that are not HDF5 are not listed', async () => {
      for (const route of ['/domains?domain=/fx/', '/domains?domain=/fx&Limit=10', '/domains?domain=/fx/&verbose=1']) {
        const r = json(await raw(srv.url, 'GET', route));
        const byName = Object.fromEntries(r.domains.map((d: { name: string }) => [d.name, d]));
        expect(Object.keys(byName).sort(), route).to.deep.equal(['/fx/sub', '/fx/tall.h5']);
        for (const n of ['tall.h5']) expect(byName[`/fx/${n}`].size, `${route} ${n}`).to.equal(fs.statSync(path.join(root, 'fx', n)).size);
        expect(byName['/fx/sub'], route).to.not.have.property('size');
      }
      const top = json(await raw(srv.url, 'GET', '/'));
      expect(top.domains.find((d: { name: string }) => d.name === '/fx')).to.not.have.property('size');
    });

    it('h5pyd (hsls) lists a folder with sizes as before', function () {
      const h5pyd = path.resolve(REPO, '../shared/clients/h5pyd');
      if (!fs.existsSync(path.join(h5pyd, 'h5pyd/_apps/hsls.py'))) this.skip(); // ../shared absent
      const out = execFileSync(PYTHON, [path.join(h5pyd, 'h5pyd/_apps/hsls.py'), '-e', srv.url, '/fx/'], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: h5pyd, HS_USERNAME: '', HS_PASSWORD: '' },
      });
      expect(out, out).to.match(/domain\s+\S+ \S+ \/fx\/tall\.h5$/m);
      expect(out, out).to.match(/folder\s+\S+ \S+ \/fx\/sub\/?$/m);
      expect(out, out).to.match(/^\d+ items$/m);
    });
  });
});

describe('web viewer: not built', function () {
  this.timeout(60000);
  let srv: TestServer;
  let root: string;

  before(async () => {
    root = tempRoot('h5store-viewer-none-');
    copyFixtures(root, 'fx', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    srv = await startServer({ root, env: { H5STORE_VIEWER_DIR: path.join(root, 'no-viewer-here') } });
  });

  after(async () => {
    await srv?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('/view/ answers 503 with an HTML page naming the build command', async () => {
    for (const p of ['/view/', '/view/?domain=/fx/tall.h5', '/view/assets/viewer-ABCDEFGH.js']) {
      const r = await raw(srv.url, 'GET', p, { Accept: BROWSER_ACCEPT });
      expect(r.status, p).to.equal(503);
      expect(r.headers['content-type'], p).to.match(/^text\/html/);
      expect(r.headers['cache-control'], p).to.equal('no-store');
      const text = r.body.toString();
      expect(text, p).to.include('not built');
      expect(text, p).to.include('npm run build');
    }
  });

  it('the API works as usual, and the browser redirect still leads to the explanation', async () => {
    const about = await raw(srv.url, 'GET', '/about');
    expect(about.status).to.equal(200);
    const dom = await raw(srv.url, 'GET', '/?domain=/fx/tall.h5');
    expect(json(dom).root).to.match(/^g-/);
    const r = await raw(srv.url, 'GET', '/', { Accept: BROWSER_ACCEPT });
    expect(r.status).to.equal(302);
    expect(r.headers.location).to.equal('/view/');
  });

  it('a bad viewer request is still a JSON error (405)', async () => {
    const r = await fetch(srv.url + '/view/', { method: 'POST' });
    const body = Buffer.from(await r.arrayBuffer());
    expectError({ status: r.status, headers: r.headers, body, text: body.toString(), json: JSON.parse(body.toString()) }, 405);
  });
});

describe('web viewer: a server with users that lets nobody read anonymously', function () {
  this.timeout(60000);
  let srv: TestServer;
  let root: string;
  let dist: string;

  before(async () => {
    dist = ensureViewerBuilt();
    root = tempRoot('h5store-viewer-users-');
    copyFixtures(root, 'fx', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    const usersFile = path.join(tempRoot('h5store-viewer-usersfile-'), 'users.json');
    await userAdd(usersFile, 'alice', 'alice-pw-1');
    srv = await startServer({ root, args: ['--users-file', usersFile, '--default-acl', 'none'] });
  });

  after(async () => {
    await srv?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("the viewer's files need no credentials while the API answers 401", async () => {
    const { js, css } = viewerAssets(dist);
    for (const p of ['/view/', '/view/?domain=/fx/tall.h5', `/view/${js}`, `/view/${css}`]) {
      const r = await raw(srv.url, 'GET', p, { Accept: BROWSER_ACCEPT });
      expect(r.status, p).to.equal(200);
    }
    const redirect = await raw(srv.url, 'GET', '/', { Accept: BROWSER_ACCEPT });
    expect(redirect.status).to.equal(302);
    const api = await raw(srv.url, 'GET', '/?domain=/fx/tall.h5', { 'X-Requested-With': 'XMLHttpRequest' });
    expect(api.status).to.equal(401);
    // A page's request gets no Basic challenge (the browser would show its own dialog).
    expect(api.headers['www-authenticate'] ?? '').to.not.match(/basic/i);
    const signed = await raw(srv.url, 'GET', '/?domain=/fx/tall.h5', { Authorization: 'Basic ' + Buffer.from('alice:alice-pw-1').toString('base64') });
    expect(signed.status).to.equal(403);
  });
});
