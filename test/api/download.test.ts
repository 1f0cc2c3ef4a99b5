/**
 * The file download (issue #28 item 8, `GET /file?domain=`): the file's bytes whole and by
 * ranges (one, several, suffix, open-ended, unsatisfiable, malformed), HEAD, the validators
 * (ETag, Last-Modified, If-None-Match, If-Match, If-Range, If-Modified-Since), ACLs (read on the
 * domain), a file changed while it is being sent, and real range readers: h5py over a Python
 * file object that asks for byte ranges, and fsspec's HTTP files under h5py.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { expectError } from '../helpers/apiExtra.js';
import { PYTHON, pythonJson } from '../helpers/python.js';
import { Client, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';

/** h5py reading a served file through a Python file object that asks the server for byte ranges. */
const RANGE_READER = `
import io, json, sys, urllib.request
import h5py

class RangeFile(io.RawIOBase):
    """A read-only file object over HTTP byte ranges (Range: bytes=a-b, 206 answers)."""
    def __init__(self, url):
        self.url, self.pos, self.requests, self.bytes = url, 0, 0, 0
        with urllib.request.urlopen(urllib.request.Request(url, method='HEAD')) as r:
            assert r.headers['Accept-Ranges'] == 'bytes'
            self.size = int(r.headers['Content-Length'])
    def readable(self): return True
    def seekable(self): return True
    def tell(self): return self.pos
    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos
    def readinto(self, b):
        if self.pos >= self.size: return 0
        end = min(self.pos + len(b), self.size) - 1
        req = urllib.request.Request(self.url, headers={'Range': 'bytes=%d-%d' % (self.pos, end)})
        with urllib.request.urlopen(req) as r:
            assert r.status == 206, r.status
            assert r.headers['Content-Range'] == 'bytes %d-%d/%d' % (self.pos, end, self.size)
            data = r.read()
        b[:len(data)] = data
        self.pos += len(data)
        self.requests += 1
        self.bytes += len(data)
        return len(data)

fo = RangeFile(sys.argv[1])
with h5py.File(fo, 'r') as f:
    value = f[sys.argv[2]][tuple(slice(0, int(n)) for n in sys.argv[3].split(','))] if sys.argv[3] else f[sys.argv[2]][()]
print(json.dumps({'value': value.tolist(), 'requests': fo.requests, 'bytes': fo.bytes, 'size': fo.size}))
`;

/** The same through fsspec's HTTP file system (Debian python3-fsspec, python3-aiohttp). */
const FSSPEC_READER = `
import json, sys
import fsspec, h5py
fs = fsspec.filesystem('http')
with fs.open(sys.argv[1], 'rb', block_size=64 * 1024) as fo, h5py.File(fo, 'r') as f:
    print(json.dumps(f[sys.argv[2]][0:2, 0:3].tolist()))
`;

/** Parts of a multipart/byteranges body: their Content-Range and bytes. */
function multipart(body: Buffer, contentType: string): { range: string; bytes: Buffer }[] {
  const boundary = /boundary=([^;]+)/.exec(contentType)![1]!;
  const out: { range: string; bytes: Buffer }[] = [];
  const sep = Buffer.from(`--${boundary}`);
  let at = body.indexOf(sep);
  for (;;) {
    const after = at + sep.length;
    if (body.subarray(after, after + 2).toString() === '--') break;
    const headEnd = body.indexOf('\r\n\r\n', after);
    const head = body.subarray(after, headEnd).toString();
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), sep]), headEnd);
    out.push({ range: /Content-Range: (.*)/i.exec(head)![1]!.trim(), bytes: body.subarray(headEnd + 4, next) });
    at = next + 2;
  }
  return out;
}

describe('file download with ranges (GET /file, issue #28 item 8)', function () {
  this.timeout(120_000);
  let srv: TestServer;
  let root: string;
  let tall: Buffer;
  let c: Client;
  const get = (headers: Record<string, string> = {}, domain = '/fx/tall.h5') => c.with(domain).request('GET', '/file', { headers });

  before(async () => {
    root = tempRoot('h5store-download-');
    copyFixtures(root, 'fx', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    tall = fs.readFileSync(path.join(root, 'fx', 'tall.h5'));
    // a 24 MiB file of 2-D float32 frames (chunked), for range readers and the change test
    execFileSync(PYTHON, ['-c', "import h5py, numpy, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n  f.create_dataset('frames', data=numpy.arange(24*512*512, dtype='<f4').reshape(24, 512, 512), chunks=(1, 512, 512))", path.join(root, 'big.h5')]);
    fs.mkdirSync(path.join(root, 'folder'));
    fs.writeFileSync(path.join(root, 'text.h5'), 'not an HDF5 file\n');
    srv = await startServer({ root });
    c = new Client(srv.url);
  });
  after(async () => srv?.stop());

  it('sends the whole file with its validators, as an attachment that is never compressed', async () => {
    const r = await get({ 'accept-encoding': 'gzip, br' });
    expect(r.status).to.equal(200);
    expect(r.body.equals(tall), 'the bytes of the file').to.equal(true);
    expect(r.headers.get('content-type')).to.equal('application/x-hdf5');
    expect(r.headers.get('content-length')).to.equal(String(tall.length));
    expect(r.headers.get('content-encoding')).to.equal(null);
    expect(r.headers.get('accept-ranges')).to.equal('bytes');
    expect(r.headers.get('etag')).to.match(/^"[0-9a-z-]+"$/);
    expect(new Date(r.headers.get('last-modified')!).getTime()).to.equal(Math.floor(fs.statSync(path.join(root, 'fx', 'tall.h5')).mtimeMs / 1000) * 1000);
    expect(r.headers.get('content-disposition')).to.equal('attachment; filename="tall.h5"');
    expect(r.headers.get('cache-control')).to.equal('private, no-cache');
  });

  it('HEAD: the same headers, no body', async () => {
    const r = await c.with('/fx/tall.h5').request('HEAD', '/file');
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-length')).to.equal(String(tall.length));
    expect(r.headers.get('accept-ranges')).to.equal('bytes');
    expect(r.body.length).to.equal(0);
  });

  it('one range: 206 with Content-Range, for a-b, a-, -n and a range past the end', async () => {
    const n = tall.length;
    const cases: [string, number, number][] = [
      ['bytes=0-0', 0, 0],
      ['bytes=100-1099', 100, 1099],
      [`bytes=${n - 10}-`, n - 10, n - 1],
      ['bytes=-100', n - 100, n - 1],
      [`bytes=${n - 5}-${n + 1000}`, n - 5, n - 1],
    ];
    for (const [range, a, b] of cases) {
      const r = await get({ range });
      expect(r.status, range).to.equal(206);
      expect(r.headers.get('content-range'), range).to.equal(`bytes ${a}-${b}/${n}`);
      expect(r.headers.get('content-length'), range).to.equal(String(b - a + 1));
      expect(r.body.equals(tall.subarray(a, b + 1)), range).to.equal(true);
    }
  });

  it('several ranges: multipart/byteranges, overlapping ones merged', async () => {
    const r = await get({ range: 'bytes=0-9,100-199,150-249,-16' });
    expect(r.status).to.equal(206);
    const ct = r.headers.get('content-type')!;
    expect(ct).to.match(/^multipart\/byteranges; boundary=/);
    expect(r.headers.get('content-length')).to.equal(String(r.body.length));
    const parts = multipart(r.body, ct);
    const n = tall.length;
    expect(parts.map((p) => p.range)).to.deep.equal([`bytes 0-9/${n}`, `bytes 100-249/${n}`, `bytes ${n - 16}-${n - 1}/${n}`]);
    expect(parts[0]!.bytes.equals(tall.subarray(0, 10))).to.equal(true);
    expect(parts[1]!.bytes.equals(tall.subarray(100, 250))).to.equal(true);
    expect(parts[2]!.bytes.equals(tall.subarray(n - 16))).to.equal(true);
  });

  it('416 for a range outside the file and for too many ranges; malformed or other units are ignored (200)', async () => {
    const n = tall.length;
    const r = await get({ range: `bytes=${n}-${n + 10}` });
    expectError(r, 416);
    expect(r.headers.get('content-range')).to.equal(`bytes */${n}`);
    expectError(await get({ range: 'bytes=5-1' }), 416);
    const many = 'bytes=' + Array.from({ length: 65 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',');
    expectError(await get({ range: many }), 416);
    for (const range of ['bytes=abc', 'items=0-5', 'bytes=', 'bytes=0-1;x']) {
      const x = await get({ range });
      expect(x.status, range).to.equal(200);
      expect(x.body.equals(tall), range).to.equal(true);
    }
  });

  it('validators: If-None-Match and If-Modified-Since give 304, If-Match and If-Unmodified-Since 412, If-Range the whole file once the version differs', async () => {
    const first = await get();
    const etag = first.headers.get('etag')!;
    const lm = first.headers.get('last-modified')!;
    expect((await get({ 'if-none-match': etag })).status).to.equal(304);
    expect((await get({ 'if-none-match': `"other", ${etag}` })).status).to.equal(304);
    expect((await get({ 'if-modified-since': lm })).status).to.equal(304);
    expect((await get({ 'if-none-match': '"other"' })).status).to.equal(200);
    expect((await get({ 'if-match': etag, range: 'bytes=0-3' })).status).to.equal(206);
    expectError(await get({ 'if-match': '"other"' }), 412);
    expectError(await get({ 'if-match': `W/${etag}` }), 412);
    expectError(await get({ 'if-unmodified-since': 'Thu, 01 Jan 1998 00:00:00 GMT' }), 412);
    expect((await get({ range: 'bytes=0-3', 'if-range': etag })).status).to.equal(206);
    expect((await get({ range: 'bytes=0-3', 'if-range': lm })).status).to.equal(206);
    const stale = await get({ range: 'bytes=0-3', 'if-range': '"other"' });
    expect(stale.status).to.equal(200);
    expect(stale.body.equals(tall)).to.equal(true);
    expect((await get({ range: 'bytes=0-3', 'if-range': 'Thu, 01 Jan 1998 00:00:00 GMT' })).status).to.equal(200);
  });

  it('a new version of the file has another ETag', async () => {
    const p = path.join(root, 'fx', 'copy.h5');
    fs.copyFileSync(path.join(root, 'fx', 'tall.h5'), p);
    const before = (await get({}, '/fx/copy.h5')).headers.get('etag');
    execFileSync(PYTHON, ['-c', "import h5py, sys\nwith h5py.File(sys.argv[1], 'a') as f: f.attrs['changed'] = 1", p]);
    const after = await get({}, '/fx/copy.h5');
    expect(after.headers.get('etag')).to.not.equal(before);
    expect(after.body.equals(fs.readFileSync(p))).to.equal(true);
  });

  it('errors: 404 for a missing domain, 400 for a folder and for a file that is not HDF5, 400 without a domain', async () => {
    expectError(await get({}, '/fx/nope.h5'), 404);
    expectError(await get({}, '/folder'), 400);
    expectError(await get({}, '/text.h5'), 400);
    expectError(await c.request('GET', '/file'), 400);
    expectError(await c.request('PUT', '/file', { query: { domain: '/fx/tall.h5' } }), 405);
  });

  it('h5py reads a served file by byte ranges (a Python file object), reading a small part of it', () => {
    const url = `${srv.url}/file?domain=/big.h5`;
    const got = pythonJson(RANGE_READER, [url, '/frames', '2,3,4']);
    const want = pythonJson("import h5py, json, sys\nwith h5py.File(sys.argv[1], 'r') as f: print(json.dumps(f['/frames'][0:2, 0:3, 0:4].tolist()))", [path.join(root, 'big.h5')], { lockFree: true });
    expect(got.value).to.deep.equal(want);
    expect(got.size).to.equal(fs.statSync(path.join(root, 'big.h5')).size);
    expect(got.bytes, 'bytes read of the 24 MiB file').to.be.below(4 * 1024 * 1024);
  });

  it('fsspec HTTP files under h5py read it too', () => {
    const got = pythonJson(FSSPEC_READER, [`${srv.url}/file?domain=/fx/tall.h5`, '/g1/g1.1/dset1.1.1']);
    const want = pythonJson("import h5py, json, sys\nwith h5py.File(sys.argv[1], 'r') as f: print(json.dumps(f['/g1/g1.1/dset1.1.1'][0:2, 0:3].tolist()))", [path.join(root, 'fx', 'tall.h5')], { lockFree: true });
    expect(got).to.deep.equal(want);
  });

  it('a file that changes while it is being sent ends the transfer short of its Content-Length', async () => {
    const p = path.join(root, 'big.h5');
    const size = fs.statSync(p).size;
    const res = await fetch(`${srv.url}/file?domain=/big.h5`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-length')).to.equal(String(size));
    const reader = res.body!.getReader();
    let got = (await reader.read()).value!.length;
    // another program appends to the file (no lock): the rest of the transfer must not be sent
    fs.appendFileSync(p, Buffer.alloc(4096));
    let failed = false;
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        got += r.value.length;
      }
    } catch {
      failed = true;
    }
    expect(failed, `the transfer failed (got ${got} of ${size} bytes)`).to.equal(true);
    expect(got).to.be.below(size);
    await new Promise((r) => setTimeout(r, 200));
    expect(srv.log()).to.include('download ended: the file changed');
  });

  it('a file of up to 1 MiB downloaded while REST writes go on: every download whole, one version each (the hostile run got 503s)', async () => {
    const w = c.with('/busy.h5');
    expect((await w.put('/')).status).to.equal(201);
    const rid = (await w.get('/')).json.root;
    let writing = true;
    // four writers keep a write waiting for the lock whenever a download holds it
    const writers = [0, 1, 2, 3].map(async (n) => {
      for (let i = 0; writing; i++) expect((await w.put(`/groups/${rid}/attributes/w${n}_${i % 20}`, { type: 'H5T_STD_I32LE', value: i })).status).to.be.oneOf([200, 201]);
    });
    const bodies: Buffer[] = [];
    try {
      await Promise.all(
        [0, 1].map(async () => {
          for (let k = 0; k < 20; k++) {
            const r = await c.with('/busy.h5').request('GET', '/file');
            expect(r.status, r.text).to.equal(200);
            expect(r.headers.get('content-length')).to.equal(String(r.body.length));
            bodies.push(r.body);
          }
        }),
      );
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    expect(bodies[0]!.length).to.be.below(1 << 20);
    // each is a file h5py opens (the last and one in the middle)
    for (const b of [bodies[20]!, bodies[39]!]) {
      const f = path.join(tempRoot('h5store-download-busy-'), 'copy.h5');
      fs.writeFileSync(f, b);
      execFileSync(PYTHON, ['-c', "import h5py, sys\nwith h5py.File(sys.argv[1], 'r') as f: list(f.attrs.items())", f]);
    }
  });

  describe('access control', () => {
    let secured: TestServer;
    const PW = { alice: 'alice-pw-1', bob: 'bob-pw-2' };
    before(async () => {
      const r2 = tempRoot('h5store-download-acl-');
      const users = path.join(tempRoot('h5store-download-users-'), 'users.json');
      await userAdd(users, 'admin', 'admin-pw-0');
      await userAdd(users, 'alice', PW.alice);
      await userAdd(users, 'bob', PW.bob);
      secured = await startServer({ root: r2, args: ['--users-file', users] });
      const adm = new Client(secured.url, '/home').as({ user: 'admin', password: 'admin-pw-0' });
      expect((await adm.put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
      const alice = new Client(secured.url, '/home/run.h5').as({ user: 'alice', password: PW.alice });
      expect((await alice.put('/')).status).to.equal(201);
    });
    after(async () => secured?.stop());

    it('needs read on the domain: 401 anonymous, 403 for another user, 200 for the owner and for a user given read', async () => {
      const c2 = new Client(secured.url, '/home/run.h5');
      expectError(await c2.request('GET', '/file'), 401);
      expectError(await c2.as({ user: 'bob', password: PW.bob }).request('GET', '/file', { headers: { range: 'bytes=0-7' } }), 403);
      expect((await c2.as({ user: 'bob', password: PW.bob }).request('HEAD', '/file')).status).to.equal(403);
      const own = await c2.as({ user: 'alice', password: PW.alice }).request('GET', '/file', { headers: { range: 'bytes=0-7' } });
      expect(own.status).to.equal(206);
      expect(own.body.subarray(0, 4).toString('latin1')).to.equal('\x89HDF');
      expect((await c2.as({ user: 'alice', password: PW.alice }).put('/acls/bob', { read: true })).status).to.be.oneOf([200, 201]);
      expect((await c2.as({ user: 'bob', password: PW.bob }).request('GET', '/file')).status).to.equal(200);
    });
  });
});


