/**
 * Read-only S3 archives (`--mount /archive=s3://bucket/prefix`), against a real S3 server started
 * here (Debian's Ceph radosgw on loopback, test/helpers/s3.ts).
 *
 * Two h5store processes mount the same prefix: `whole` reads objects up to 1 MiB whole (tall.h5),
 * larger ones through libhdf5's ROS3 driver (big.h5); `ros3` reads everything through ROS3.
 * Checked: folder listings from the S3 API (only HDF5 names, byte order, Limit/Marker, folders),
 * a walk of tall.h5 through the API in both modes compared with h5py on the local copy, a 16 MiB
 * binary read and a gzip-chunked read through ROS3 compared with the values written, keys with a
 * space, 403 for every kind of write, 404/400 for missing/non-HDF5 objects, change detection by
 * ETag (replaced and deleted objects), readiness and metrics.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { PYTHON, toolJson } from '../helpers/python.js';
import { rgwRequests, s3Unavailable, startS3, type TestS3 } from '../helpers/s3.js';
import { Client, fixturePath, REPO, startServer, tempRoot, type TestServer } from '../helpers/server.js';

const BUCKET = 'h5store-test';
const MiB = 1024 * 1024;

interface Canon {
  kind: string;
  links?: unknown[];
  attrs: unknown[];
  shape?: unknown;
  value?: unknown;
}

/** float32 values compared as float32 (the server prints the shortest float32 form). */
function canonValue(v: unknown, f32: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => canonValue(x, f32));
  return typeof v === 'number' && f32 ? Math.fround(v) : v;
}
const isF32 = (t: any) => typeof t?.base === 'string' && t.base.startsWith('H5T_IEEE_F32');

/** What h5py reads from a file (test/tools/dump_h5.py), by path. */
function canonFromDump(file: string): Map<string, Canon> {
  const dump = toolJson('dump_h5.py', [file]);
  const out = new Map<string, Canon>();
  for (const o of Object.values(dump.objects) as any[]) {
    const c: Canon = {
      kind: o.kind,
      attrs: o.attributes.map((a: any) => [a.name, a.shape.dims ?? null, canonValue(a.value, isF32(a.type))]),
    };
    if (o.kind === 'group') c.links = o.links.map((l: any) => [l.title, l.class, l.h5path ?? null]);
    if (o.kind === 'dataset') {
      c.shape = o.shape.dims ?? null;
      c.value = canonValue(o.value, isF32(o.type));
    }
    for (const p of o.paths) out.set(p, c);
  }
  return out;
}

/** The same, read through the API: walk from the root group along hard links. */
async function canonFromApi(c: Client): Promise<Map<string, Canon>> {
  const out = new Map<string, Canon>();
  const root = await c.get('/');
  expect(root.status, root.text).to.equal(200);
  const queue: [string, string, string][] = [[root.json.root, 'groups', '/']];
  while (queue.length) {
    const [id, col, p] = queue.shift()!;
    const a = await c.get(`/${col}/${id}/attributes`, { IncludeData: 1 });
    expect(a.status, `${p} attributes: ${a.text}`).to.equal(200);
    const cn: Canon = { kind: col === 'groups' ? 'group' : 'dataset', attrs: a.json.attributes.map((x: any) => [x.name, x.shape.dims ?? null, canonValue(x.value, isF32(x.type))]) };
    if (col === 'groups') {
      const l = await c.get(`/groups/${id}/links`);
      expect(l.status, `${p} links: ${l.text}`).to.equal(200);
      cn.links = l.json.links.map((x: any) => [x.title, x.class, x.h5path ?? null]);
      for (const x of l.json.links) if (x.class === 'H5L_TYPE_HARD') queue.push([x.id, x.collection, p === '/' ? `/${x.title}` : `${p}/${x.title}`]);
    } else {
      const d = await c.get(`/datasets/${id}`);
      const v = await c.get(`/datasets/${id}/value`);
      expect(v.status, `${p} value: ${v.text}`).to.equal(200);
      cn.shape = d.json.shape.dims ?? null;
      cn.value = canonValue(v.json.value, isF32(d.json.type));
    }
    out.set(p, cn);
  }
  return out;
}

function expectSameTree(got: Map<string, Canon>, exp: Map<string, Canon>, what: string) {
  expect([...got.keys()].sort(), `${what}: object paths`).to.deep.equal([...exp.keys()].sort());
  for (const [p, e] of exp) expect(got.get(p), `${what}: ${p}`).to.deep.equal(e);
}

describe('S3 mounts: read-only archives served from a real S3 server (Ceph radosgw)', function () {
  this.timeout(180000);
  const why = s3Unavailable();
  let s3: TestS3;
  let work: string;
  let whole: TestServer;
  let ros3: TestServer;
  let tallLocal: string;
  let bigLocal: string;
  const servers: TestServer[] = [];

  before(async function () {
    if (why) {
      console.log(`      (skipped: ${why})`);
      this.skip();
    }
    this.timeout(300000);
    work = tempRoot('h5store-s3-');
    tallLocal = path.join(work, 'tall.h5');
    fs.copyFileSync(fixturePath('tall.h5'), tallLocal);
    bigLocal = path.join(work, 'big.h5');
    execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_big.py'), bigLocal, '24']);
    s3 = await startS3();
    await s3.bucket(BUCKET);
    const tall = fs.readFileSync(tallLocal);
    await s3.put(BUCKET, 'archive/tall.h5', tall);
    await s3.put(BUCKET, 'archive/with space.h5', tall);
    await s3.put(BUCKET, 'archive/sub/deeper/tall2.h5', tall);
    await s3.put(BUCKET, 'archive/sub/changing.h5', tall);
    await s3.put(BUCKET, 'archive/big.h5', fs.readFileSync(bigLocal));
    await s3.put(BUCKET, 'archive/readme.txt', 'not served\n');
    await s3.put(BUCKET, 'archive/bad.h5', 'this is not an HDF5 file\n');
    await s3.put(BUCKET, 'elsewhere/other.h5', tall);
    // a file whose dataset keeps its values in an external raw data file (beside it)
    const ext = path.join(work, 'ext');
    fs.mkdirSync(ext);
    execFileSync(PYTHON, ['-c', "import h5py,numpy,sys,os; os.chdir(sys.argv[1]); f=h5py.File('ext.h5','w'); d=f.create_dataset('e', (4,), dtype='i4', external=[('ext.bin', 0, 16)]); d[...]=numpy.arange(4); f['plain']=[1,2]; f.close()", ext]);
    await s3.put(BUCKET, 'archive/sub/deeper/ext.h5', fs.readFileSync(path.join(ext, 'ext.h5')));
    await s3.put(BUCKET, 'archive/sub/deeper/ext.bin', fs.readFileSync(path.join(ext, 'ext.bin')));
    const env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_REGION: 'us-east-1' };
    const args = ['--mount', `/archive=s3://${BUCKET}/archive`, '--s3-endpoint', s3.endpoint];
    whole = await startServer({ root: path.join(work, 'root-whole'), args, env: { ...env, H5STORE_S3_WHOLE_OBJECT_BYTES: String(MiB), H5STORE_S3_REVALIDATE_MS: '300' } });
    servers.push(whole);
    ros3 = await startServer({ root: path.join(work, 'root-ros3'), args, env: { ...env, H5STORE_S3_WHOLE_OBJECT_BYTES: '0', H5STORE_S3_REVALIDATE_MS: '300' } });
    servers.push(ros3);
  });

  after(async function () {
    this.timeout(60000);
    for (const s of servers) await s.stop();
    if (s3) await s3.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('lists the mount point in its parent folder, and folders and HDF5 objects below it (byte order, no other objects)', async () => {
    const c = new Client(whole.url);
    const top = await c.get('/domains', { domain: '/' });
    expect(top.status, top.text).to.equal(200);
    expect(top.json.domains.map((d: any) => [d.name, d.class])).to.deep.include(['/archive', 'folder']);
    const r = await c.get('/domains', { domain: '/archive' });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.domains.map((d: any) => [d.name, d.class])).to.deep.equal([
      ['/archive/bad.h5', 'domain'],
      ['/archive/big.h5', 'domain'],
      ['/archive/sub', 'folder'],
      ['/archive/tall.h5', 'domain'],
      ['/archive/with space.h5', 'domain'],
    ]);
    for (const d of r.json.domains) expect(d.lastModified, d.name).to.be.a('number').and.above(1e9);
    // paging: Limit and Marker (a full domain path), as for local folders
    const p1 = await c.get('/domains', { domain: '/archive', Limit: 2 });
    expect(p1.json.domains.map((d: any) => d.name)).to.deep.equal(['/archive/bad.h5', '/archive/big.h5']);
    const p2 = await c.get('/domains', { domain: '/archive', Limit: 2, Marker: '/archive/big.h5' });
    expect(p2.json.domains.map((d: any) => d.name)).to.deep.equal(['/archive/sub', '/archive/tall.h5']);
    const p3 = await c.get('/domains', { domain: '/archive', Limit: 2, Marker: '/archive/tall.h5' });
    expect(p3.json.domains.map((d: any) => d.name)).to.deep.equal(['/archive/with space.h5']);
    const sub = await c.get('/domains', { domain: '/archive/sub', verbose: 1 });
    expect(sub.json.domains.map((d: any) => [d.name, d.class])).to.deep.equal([
      ['/archive/sub/changing.h5', 'domain'],
      ['/archive/sub/deeper', 'folder'],
    ]);
    expect(sub.json.domains[0].root, 'verbose listing gives root ids').to.match(/^g-/);
    const missing = await c.get('/domains', { domain: '/archive/nope' });
    expect(missing.status, missing.text).to.equal(404);
  });

  it('GET / answers folders, domains, 404 for missing or non-HDF5-named objects, 400 for a non-HDF5 file', async () => {
    const c = new Client(whole.url);
    expect((await c.get('/', { domain: '/archive' })).json.class).to.equal('folder');
    expect((await c.get('/', { domain: '/archive/sub/deeper' })).json.class).to.equal('folder');
    const d = await c.get('/', { domain: '/archive/sub/deeper/tall2.h5' });
    expect(d.status, d.text).to.equal(200);
    expect(d.json.class).to.equal('domain');
    expect(d.json.root).to.match(/^g-/);
    expect((await c.get('/', { domain: '/archive/nope.h5' })).status).to.equal(404);
    expect((await c.get('/', { domain: '/archive/readme.txt' })).status).to.equal(404);
    expect((await c.get('/', { domain: '/archive/other.h5' })).status, 'objects outside the prefix are not reachable').to.equal(404);
    const bad = await c.get('/', { domain: '/archive/bad.h5' });
    expect(bad.status, bad.text).to.equal(400);
    expect(bad.json.message).to.match(/not an HDF5 file/);
    expect(bad.text, 'no endpoint or bucket URL in messages').to.not.include(s3.endpoint);
  });

  it('walks tall.h5 through the API (whole-object and ROS3) exactly as h5py reads the local copy', async () => {
    const exp = canonFromDump(tallLocal);
    expect(exp.size).to.be.above(5);
    expectSameTree(await canonFromApi(new Client(whole.url, '/archive/tall.h5')), exp, 'whole-object');
    expectSameTree(await canonFromApi(new Client(ros3.url, '/archive/tall.h5')), exp, 'ROS3');
    expectSameTree(await canonFromApi(new Client(ros3.url, '/archive/with space.h5')), exp, 'ROS3, key with a space');
  });

  it('reads 16 MiB (binary) and a gzip-chunked region of a 26 MB object through ROS3, values as written', async () => {
    for (const srv of [whole, ros3]) {
      const c = new Client(srv.url, '/archive/big.h5');
      const root = (await c.get('/')).json.root;
      const links = (await c.get(`/groups/${root}/links`)).json.links;
      const data = links.find((l: any) => l.title === 'data').id;
      const n = (16 * MiB) / 4;
      const r = await c.get(`/datasets/${data}/value`, { select: `[1000:${1000 + n}]` }, { Accept: 'application/octet-stream' });
      expect(r.status, r.text.slice(0, 200)).to.equal(200);
      expect(r.body.length).to.equal(16 * MiB);
      const f = new Float32Array(r.body.buffer, r.body.byteOffset, n);
      let bad = -1;
      for (let i = 0; i < n; i++) if (f[i] !== 1000 + i) {
        bad = i;
        break;
      }
      expect(bad, `first wrong element (value ${f[bad]})`).to.equal(-1);
      const chunked = links.find((l: any) => l.title === 'chunked').id;
      const cr = await c.get(`/datasets/${chunked}/value`, { select: '[100:300,1000:1024]' });
      expect(cr.status, cr.text.slice(0, 200)).to.equal(200);
      expect(cr.json.value.length).to.equal(200);
      expect(cr.json.value[0][0]).to.equal(100 * 1024 + 1000);
      expect(cr.json.value[199][23]).to.equal(299 * 1024 + 1023);
    }
  });

  it('GET /file: the object bytes, whole and by ranges, with its S3 ETag; a replaced object is never sent under the old headers', async () => {
    const tall = fs.readFileSync(tallLocal);
    const big = fs.readFileSync(bigLocal);
    const c = new Client(whole.url, '/archive/tall.h5');
    const r = await c.request('GET', '/file');
    expect(r.status, r.text).to.equal(200);
    expect(r.body.equals(tall)).to.equal(true);
    const etag = r.headers.get('etag')!;
    expect(etag).to.match(/^"[0-9a-f]+"$/);
    expect((await c.request('GET', '/file', { headers: { 'if-none-match': etag } })).status).to.equal(304);
    const b = new Client(ros3.url, '/archive/big.h5');
    const part = await b.request('GET', '/file', { headers: { range: `bytes=1000-${1000 + 3 * MiB}` } });
    expect(part.status).to.equal(206);
    expect(part.headers.get('content-range')).to.equal(`bytes 1000-${1000 + 3 * MiB}/${big.length}`);
    expect(part.body.equals(big.subarray(1000, 1001 + 3 * MiB))).to.equal(true);
    const two = await b.request('GET', '/file', { headers: { range: 'bytes=0-7,-8' } });
    expect(two.status).to.equal(206);
    expect(two.headers.get('content-type')).to.match(/^multipart\/byteranges/);
    expect(two.body.includes(big.subarray(0, 8)) && two.body.includes(big.subarray(big.length - 8))).to.equal(true);
    // the headers name the version last seen (trusted for s3RevalidateMs); its bytes are asked
    // If-Match that version, so an object replaced meanwhile ends the transfer (no bytes of the
    // new version under the old headers); asked later, the new version is sent whole
    const other = Buffer.concat([tall, Buffer.alloc(1000)]);
    await s3.put(BUCKET, 'archive/sub/swapped.h5', tall);
    expect((await new Client(ros3.url, '/archive/sub/swapped.h5').request('GET', '/file')).body.equals(tall)).to.equal(true);
    await s3.put(BUCKET, 'archive/sub/swapped.h5', other);
    const outcome = async (): Promise<'refused' | 'new'> => {
      const res = await fetch(`${ros3.url}/file?domain=/archive/sub/swapped.h5`);
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status === 503) {
        expect(Number(res.headers.get('retry-after'))).to.be.at.least(1);
        return 'refused';
      }
      expect(res.status).to.equal(200);
      expect(body.equals(other), 'a complete transfer is the new version').to.equal(true);
      return 'new';
    };
    const first = await outcome();
    await new Promise((r) => setTimeout(r, 400));
    expect(await outcome(), `after s3RevalidateMs (first: ${first})`).to.equal('new');
    await s3.del(BUCKET, 'archive/sub/swapped.h5');
  });

  it('refuses (403) values kept in other files: an archive cannot reach files on the server', async () => {
    for (const srv of [whole, ros3]) {
      const c = new Client(srv.url, '/archive/sub/deeper/ext.h5');
      const root = (await c.get('/')).json.root;
      const links = (await c.get(`/groups/${root}/links`)).json.links;
      const e = links.find((l: any) => l.title === 'e').id;
      expect((await c.get(`/datasets/${e}`)).status, 'metadata is served').to.equal(200);
      const v = await c.get(`/datasets/${e}/value`);
      expect(v.status, v.text).to.equal(403);
      expect(v.json.message).to.match(/kept in other files.*cannot reach other files/);
      const plain = await c.get(`/datasets/${links.find((l: any) => l.title === 'plain').id}/value`);
      expect(plain.json.value).to.deep.equal([1, 2]);
    }
  });

  it('answers 403 with a message for every write under the mount', async () => {
    const c = new Client(whole.url, '/archive/tall.h5');
    const root = (await c.get('/')).json.root;
    const links = (await c.get(`/groups/${root}/links`)).json.links;
    const g1 = links.find((l: any) => l.title === 'g1').id;
    const g2 = links.find((l: any) => l.title === 'g2').id;
    const ds = (await c.get(`/groups/${g2}/links`)).json.links.find((l: any) => l.title === 'dset2.1').id;
    const writes: [string, () => ReturnType<Client['get']>][] = [
      ['PUT / (new domain)', () => c.with('/archive/new.h5').put('/')],
      ['PUT / (folder)', () => c.with('/archive/newfolder').put('/', { folder: true })],
      ['PUT / (existing)', () => c.put('/')],
      ['DELETE /', () => c.delete('/')],
      ['DELETE / of the mount point', () => c.with('/archive').delete('/')],
      ['POST /groups', () => c.post('/groups', {})],
      ['POST /datasets', () => c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3] })],
      ['POST /datatypes', () => c.post('/datatypes', { type: 'H5T_STD_I32LE' })],
      ['PUT link', () => c.put(`/groups/${root}/links/x`, { h5path: '/g1' })],
      ['DELETE link', () => c.delete(`/groups/${root}/links/g1`)],
      ['DELETE group', () => c.delete(`/groups/${g1}`)],
      ['PUT attribute', () => c.put(`/groups/${root}/attributes/a`, { type: 'H5T_STD_I32LE', value: 1 })],
      ['DELETE attribute', () => c.delete(`/groups/${root}/attributes/attr1`)],
      ['PUT value', () => c.put(`/datasets/${ds}/value`, { value: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] })],
      ['PUT shape', () => c.put(`/datasets/${ds}/shape`, { shape: [10] })],
    ];
    for (const [what, run] of writes) {
      const r = await run();
      expect(r.status, `${what}: ${r.text}`).to.equal(403);
      expect(r.json.message, what).to.match(/read-only archive \/archive/);
    }
    // and nothing changed: the local data directory has no such domain
    expect(fs.existsSync(path.join(whole.root, 'archive'))).to.equal(false);
  });

  it('sees a replaced object (new ETag) after s3RevalidateMs, and a deleted one as 404', async () => {
    for (const srv of [whole, ros3]) {
      const c = new Client(srv.url, '/archive/sub/changing.h5');
      const before = (await c.get(`/groups/${(await c.get('/')).json.root}/links`)).json.links.map((l: any) => l.title);
      expect(before).to.deep.equal(['g1', 'g2']);
    }
    // replace tall.h5 by another file with other top-level names
    const other = path.join(work, 'other.h5');
    execFileSync(PYTHON, ['-c', "import h5py,sys; f=h5py.File(sys.argv[1],'w'); f['x']=[1,2,3]; f.create_group('y'); f.close()", other]);
    await s3.put(BUCKET, 'archive/sub/changing.h5', fs.readFileSync(other));
    await new Promise((r) => setTimeout(r, 400));
    for (const srv of [whole, ros3]) {
      const c = new Client(srv.url, '/archive/sub/changing.h5');
      const after = (await c.get(`/groups/${(await c.get('/')).json.root}/links`)).json.links.map((l: any) => l.title);
      expect(after, srv === whole ? 'whole' : 'ros3').to.deep.equal(['x', 'y']);
    }
    await s3.del(BUCKET, 'archive/sub/changing.h5');
    await new Promise((r) => setTimeout(r, 400));
    for (const srv of [whole, ros3]) expect((await new Client(srv.url, '/archive/sub/changing.h5').get('/')).status).to.equal(404);
  });

  it('keeps files open between requests: a second walk makes almost no S3 requests', async function () {
    if (!s3.rgwLog) this.skip();
    const c = new Client(ros3.url, '/archive/sub/deeper/tall2.h5');
    const count = () => rgwRequests(s3, /\/archive\/sub\/deeper\/tall2\.h5/);
    const c0 = count();
    await canonFromApi(c);
    const c1 = count();
    await canonFromApi(c);
    const c2 = count();
    // the first walk opens the file (superblock, object headers, heaps: tens of ranged GETs);
    // the second is served from libhdf5's metadata cache, only raw data (4 datasets) and at most
    // a revalidation HEAD are fetched again
    expect(c1 - c0, 'first walk').to.be.above(10);
    expect(c2 - c1, `second walk (first: ${c1 - c0})`).to.be.at.most(6);
  });

  it('reports the mount in /readyz and its requests in /metrics', async () => {
    const c = new Client(whole.url);
    const r = await c.get('/readyz');
    expect(r.status, r.text).to.equal(200);
    expect(r.json.checks.find((x: any) => x.name === 's3 mount /archive')).to.include({ ok: true });
    const m = await c.get('/metrics');
    expect(m.text).to.match(/h5store_s3_requests_total\{mount="\/archive",op="get_whole"\} [1-9]/);
    expect(m.text).to.match(/h5store_s3_requests_total\{mount="\/archive",op="open_ros3"\} [1-9]/);
  });

  it('with users: the folder holding the mount point governs its ACL; writes stay 403 even for the admin', async () => {
    const usersFile = path.join(work, 'users.json');
    await userAdd(usersFile, 'admin', 'admin-pw-1');
    await userAdd(usersFile, 'bob', 'bob-pw-1');
    const root = path.join(work, 'root-users');
    fs.mkdirSync(path.join(root, 'pub'), { recursive: true });
    const srv = await startServer({
      root,
      args: ['--users-file', usersFile, '--mount', `/pub/archive=s3://${BUCKET}/archive`, '--s3-endpoint', s3.endpoint],
      env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
    });
    servers.push(srv);
    const anon = new Client(srv.url, '/pub/archive/tall.h5');
    const admin = anon.as({ user: 'admin', password: 'admin-pw-1' });
    const bob = anon.as({ user: 'bob', password: 'bob-pw-1' });
    // default_acl is read: everyone reads the archive
    expect((await anon.get('/')).status).to.equal(200);
    expect((await bob.get('/domains', { domain: '/pub/archive' })).json.domains.length).to.equal(5);
    expect((await bob.get('/domains', { domain: '/pub' })).json.domains.map((d: any) => d.name)).to.deep.equal(['/pub/archive']);
    const acl = await admin.get('/acls');
    expect(acl.status, acl.text).to.equal(200);
    // writes: anonymous 401 and bob 403 (the ACL says no), the admin 403 (read-only)
    expect((await anon.with('/pub/archive/x.h5').put('/')).status).to.equal(401);
    expect((await bob.put(`/groups/${(await bob.get('/')).json.root}/attributes/a`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(403);
    const w = await admin.with('/pub/archive/x.h5').put('/');
    expect(w.status, w.text).to.equal(403);
    expect(w.json.message).to.match(/read-only archive/);
    const a = await admin.put('/acls/bob', { read: true, update: true });
    expect(a.status, a.text).to.equal(403);
    expect(a.json.message).to.match(/read-only archive/);
    // the ACL of /pub (the folder holding the mount point) governs: take read away from default
    const top = await admin.with('/pub').put('/acls/default', { read: false });
    expect(top.status, top.text).to.be.oneOf([200, 201]);
    expect((await anon.get('/')).status, 'anonymous now refused').to.equal(401);
    expect((await bob.get('/')).status, 'bob now refused').to.equal(403);
    expect((await bob.get('/domains', { domain: '/pub' })).json?.domains ?? [], 'the mount point is hidden from bob').to.deep.equal([]);
    expect((await admin.get('/')).status).to.equal(200);
  });

  it('is not ready when the S3 server refuses the credentials', async () => {
    const srv = await startServer({
      root: path.join(work, 'root-badkey'),
      args: ['--mount', `/archive=s3://${BUCKET}/archive`, '--s3-endpoint', s3.endpoint],
      env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: 'wrong-secret', AWS_REGION: 'us-east-1' },
    });
    servers.push(srv);
    const c = new Client(srv.url);
    const r = await c.get('/readyz');
    expect(r.status, r.text).to.equal(503);
    const chk = r.json.checks.find((x: any) => x.name === 's3 mount /archive');
    expect(chk.ok).to.equal(false);
    expect(chk.message).to.match(/access denied|SignatureDoesNotMatch|HTTP 403/);
    const d = await c.get('/', { domain: '/archive/tall.h5' });
    expect(d.status, d.text).to.equal(503);
    expect(d.headers.get('retry-after')).to.equal('1');
  });
});
