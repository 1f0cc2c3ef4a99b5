/**
 * h5grove's API under /h5grove/ (issue #28 item 7) over HTTP, compared with what h5grove answers
 * for the same files as worked out with h5py (test/tools/grove_expect.py): `/meta/` of every
 * path, `/attr/`, `/paths/`, `/data/` as JSON (nested and flattened) and as bin, safe bin, npy and
 * csv (checked by numpy), `/stats/`; selections against numpy's indexing; link resolution;
 * errors; users and ACLs. Files: the shared fixtures and files written the way xarray, NeXus
 * writers, pandas and h5py write them (test/tools/make_grove_fixtures.py). The server pages
 * values by 128 KiB so that large answers take the streamed path.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { expectError } from '../helpers/apiExtra.js';
import { parseJsonBody } from '../../src/codec/json.js';
import { PYTHON, pythonJson } from '../helpers/python.js';
import { Client, HAVE_SHARED, REPO, SHARED_FIXTURES, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';

/**
 * A value h5store sends equals h5py's: numbers of float16/float32 data in their own precision (JSON
 * writes their shortest form), integers exactly (bigint beyond 2^53), object references as the
 * REST API's `datasets/<id>` strings where h5grove writes `str(ref)` (a difference by design).
 */
function sameValue(got: unknown, want: unknown, dtype: string): boolean {
  if (Array.isArray(want)) return Array.isArray(got) && got.length === want.length && want.every((w, i) => sameValue(got[i], w, dtype));
  if (typeof want === 'bigint' || typeof got === 'bigint') return (typeof got === 'bigint' || typeof got === 'number') && BigInt(got as number) === BigInt(want as number);
  if (typeof want === 'number' && typeof got === 'number') {
    if (/f2"?$/.test(dtype)) return Math.abs(got - want) <= 1e-3 * Math.max(1, Math.abs(want));
    if (/(f4|c8)"?$/.test(dtype)) return Math.fround(got) === Math.fround(want);
    return got === want;
  }
  if (want === '<HDF5 object reference>') return typeof got === 'string' && /^(groups|datasets|datatypes)\/[gdt]-/.test(got);
  if (want !== null && typeof want === 'object') {
    return got !== null && typeof got === 'object' && Object.keys(want).length === Object.keys(got).length && Object.entries(want).every(([k, v]) => sameValue((got as Record<string, unknown>)[k], v, dtype));
  }
  return got === want;
}

/** What h5grove answers for a file (grove_expect.py), once per file; undefined when h5py cannot read it. */
const expected = new Map<string, any>();
function expectationsOf(local: string): any {
  if (!expected.has(local)) {
    try {
      expected.set(local, parseJsonBody(execFileSync(PYTHON, [path.join(REPO, 'test/tools/grove_expect.py'), local], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 })));
    } catch {
      expected.set(local, undefined); // e.g. a user-defined link, which h5py cannot describe
    }
  }
  return expected.get(local);
}

/** Files the table tests walk: the grove fixtures, and the shared fixtures when present. */
const GROVE_FILES = ['xarray.h5', 'cf.h5', 'nexus.h5', 'table.h5', 'types.h5'];

describe('h5grove API (GET /h5grove/..., issue #28 item 7)', function () {
  this.timeout(300_000);
  let srv: TestServer;
  let root: string;
  let c: Client;
  const files: { domain: string; local: string }[] = [];
  const grove = (route: string, query: Record<string, string | number | boolean | undefined>, headers?: Record<string, string>) => c.get(`/h5grove/${route}/`, query, headers);

  before(async () => {
    root = tempRoot('h5store-grove-');
    execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_grove_fixtures.py'), path.join(root, 'g'), '1200']);
    for (const n of GROVE_FILES) files.push({ domain: `/g/${n}`, local: path.join(root, 'g', n) });
    const shared = HAVE_SHARED ? fs.readdirSync(SHARED_FIXTURES).filter((n) => n.endsWith('.h5') && n !== 'notahdf5file.h5') : [];
    copyFixtures(root, 'fx', HAVE_SHARED ? shared : ['tall.h5'], HAVE_SHARED ? SHARED_FIXTURES : path.dirname(fixturePath('tall.h5')));
    for (const n of HAVE_SHARED ? shared : ['tall.h5']) files.push({ domain: `/fx/${n}`, local: path.join(root, 'fx', n) });
    srv = await startServer({ root, env: { H5STORE_PAGE_BYTES: String(128 * 1024) } });
    c = new Client(srv.url);
  });
  after(async () => srv?.stop());

  it('GET /h5grove/ answers "ok" (h5grove status check)', async () => {
    const r = await c.get('/h5grove/');
    expect(r.status).to.equal(200);
    expect(r.text).to.equal('ok');
    expect((await c.get('/h5grove')).text).to.equal('ok');
  });

  it('/meta/, /attr/ and /paths/ of every path of every file equal what h5grove answers (h5py)', async function () {
    const wrong: string[] = [];
    let checked = 0;
    for (const { domain, local } of files) {
      const exp = expectationsOf(local);
      if (!exp) {
        expect(domain, 'h5py reads every grove fixture').to.match(/^\/fx\//);
        continue;
      }
      const paths = await grove('paths', { file: domain.slice(1) });
      if (!sameValue(paths.json, exp.paths, '')) wrong.push(`${domain} /paths/: ${paths.text.slice(0, 300)} != ${JSON.stringify(exp.paths).slice(0, 300)}`);
      // every path of the small files; the first 60 of large ones (group1k.h5, many links)
      for (const p of (exp.paths as string[]).slice(0, 60)) {
        if (exp.meta[p] === null) continue;
        const m = await grove('meta', { file: domain, path: p });
        checked++;
        if (m.status !== 200 || JSON.stringify(m.json) !== JSON.stringify(exp.meta[p])) {
          wrong.push(`${domain} ${p} /meta/ ${m.status}:\n  got  ${m.text.slice(0, 600)}\n  want ${JSON.stringify(exp.meta[p]).slice(0, 600)}`);
        }
        if (exp.attr[p] !== undefined) {
          const a = await grove('attr', { file: domain, path: p });
          const want = exp.attr[p];
          const dtypes = Object.fromEntries((exp.meta[p]?.attributes ?? []).map((x: any) => [x.name, JSON.stringify(x.type.dtype)]));
          const ok = a.status === 200 && Object.keys(want).length === Object.keys(a.json ?? {}).length && Object.entries(want).every(([k, v]) => sameValue(a.json[k], v, dtypes[k] ?? ''));
          if (!ok) wrong.push(`${domain} ${p} /attr/ ${a.status}: ${a.text.slice(0, 300)} != ${JSON.stringify(want).slice(0, 300)}`);
        }
      }
    }
    expect(checked).to.be.above(100);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('/data/ as JSON, nested and flattened, and /stats/ equal h5py for every dataset', async () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const { domain, local } of files) {
      const exp = expectationsOf(local);
      if (!exp) continue;
      for (const [p, want] of Object.entries(exp.data).slice(0, 60)) {
        const dtype = JSON.stringify(exp.meta[p]?.type?.dtype ?? '');
        const d = await grove('data', { file: domain, path: p });
        checked++;
        if (d.status !== 200 || !sameValue(d.json, want, dtype)) wrong.push(`${domain} ${p} /data/ ${d.status}: ${d.text.slice(0, 300)} != ${JSON.stringify(want).slice(0, 300)}`);
        if (exp.flat[p] !== undefined) {
          const fl = await grove('data', { file: domain, path: p, flatten: true });
          if (!sameValue(fl.json, exp.flat[p], dtype)) wrong.push(`${domain} ${p} flatten: ${fl.text.slice(0, 200)}`);
        }
        const st = exp.stats[p];
        const s = await grove('stats', { file: domain, path: p });
        if (st === null || st === undefined) {
          if (s.status !== 422) wrong.push(`${domain} ${p} /stats/ of non-numeric data: ${s.status} ${s.text.slice(0, 200)}`);
        } else {
          // numpy computes the mean and std of float16/32 data in their precision, h5store in
          // float64; a non-finite figure (an overflow) is null, as orjson writes it
          const tol = /f2"$/.test(dtype) ? 1e-3 : /f4"$/.test(dtype) ? 1e-6 : 1e-9;
          const finite = (x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? null : x);
          const close = (a: unknown, b: unknown) => {
            const [x, y] = [finite(a), finite(b)];
            return x === null || y === null ? x === y : Math.abs(Number(x) - Number(y)) <= tol * Math.max(1, Math.abs(Number(y)));
          };
          const ok = s.status === 200 && Object.keys(st).every((k) => close(s.json[k], st[k]));
          if (!ok) wrong.push(`${domain} ${p} /stats/ ${s.status}: ${s.text} != ${JSON.stringify(st)}`);
        }
      }
    }
    expect(checked).to.be.above(40);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('/data/ as bin, safe bin, npy and csv equals what numpy makes of h5py values (whole and sliced)', async () => {
    const out = tempRoot('h5store-grove-enc-');
    const domain = '/g/types.h5';
    const index: { path: string; format: string; file: string; selection?: string }[] = [];
    const exp = expectationsOf(path.join(root, 'g', 'types.h5'));
    const numeric = Object.keys(exp.data).filter((p) => exp.stats[p] !== null && exp.meta[p].type.class !== 6);
    expect(numeric.length).to.be.above(15);
    const cases: [string, string | undefined][] = [];
    for (const p of numeric) cases.push([p, undefined]);
    cases.push(['/big', '5:290:7, 10'], ['/big', '-3:, ::50'], ['/chunked', '1:9, 3:97:3'], ['/f64', '1'], ['/int_lei4', '-1, 1:']);
    for (const [p, sel] of cases) {
      for (const format of ['bin', 'safe', 'npy', 'csv']) {
        const shape: number[] = exp.meta[p].shape;
        if (format === 'csv' && (shape.length === 0 || (!sel && shape.length > 2))) continue;
        const r = await grove('data', { file: domain, path: p, format: format === 'safe' ? 'bin' : format, dtype: format === 'safe' ? 'safe' : undefined, selection: sel });
        expect(r.status, `${p} ${format}: ${r.text.slice(0, 200)}`).to.equal(200);
        const want = { bin: 'application/octet-stream', safe: 'application/octet-stream', npy: 'application/octet-stream', csv: 'text/csv' }[format];
        expect(r.headers.get('content-type'), `${p} ${format}`).to.match(new RegExp(`^${want}`));
        const file = `${index.length}.${format}`;
        fs.writeFileSync(path.join(out, file), r.body);
        index.push({ path: p, format, file, selection: sel });
      }
    }
    fs.writeFileSync(path.join(out, 'index.json'), JSON.stringify(index));
    const problems = JSON.parse(execFileSync(PYTHON, [path.join(REPO, 'test/tools/grove_expect.py'), '--check', path.join(root, 'g', 'types.h5'), out], { encoding: 'utf8' }));
    expect(problems, problems.join('\n')).to.deep.equal([]);
    fs.rmSync(out, { recursive: true, force: true });
  });

  it('selections follow numpy: indices drop dimensions, negative bounds, steps, clipping, empty slices', async () => {
    const local = path.join(root, 'g', 'types.h5');
    const sels = ['5', '-1', '1, 2:5', '0:10:5, 2', '3:', ':4', '-5:', '::100, -3', '290:1000, 395:', '10:5', '5:5, 3', '2:3, 0:400:399'];
    for (const sel of sels) {
      const want = pythonJson(`import h5py, json, sys, numpy as np\nwith h5py.File(sys.argv[1], 'r') as f:\n  v = f['/big'][eval('np.s_[' + sys.argv[2] + ']')]\n  print(json.dumps({'shape': list(np.shape(v)), 'value': np.asarray(v).tolist()}))`, [local, sel], { lockFree: true });
      const r = await grove('data', { file: '/g/types.h5', path: '/big', selection: sel });
      expect(r.status, `${sel}: ${r.text.slice(0, 200)}`).to.equal(200);
      expect(r.json, sel).to.deep.equal(want.value);
      const n = await grove('data', { file: '/g/types.h5', path: '/big', selection: sel, format: 'npy' });
      const header = n.body.subarray(10, 10 + n.body.readUInt16LE(8)).toString('latin1');
      const shape = want.shape.length === 1 ? `(${want.shape[0]},)` : `(${want.shape.join(', ')})`;
      expect(header, sel).to.include(`'shape': ${shape}`);
    }
    for (const bad of ['1,2,3', 'a', '1:2:0', '1:2:-1', '400', '-301', '1:2:3:4', '1,,2', '1e3']) {
      expectError(await grove('data', { file: '/g/types.h5', path: '/big', selection: bad }), 422, bad);
    }
    expectError(await grove('data', { file: '/g/types.h5', path: '/scalar_int', selection: '0' }), 422, 'a scalar');
  });

  it('links: resolve_links none / only_valid / all on soft, dangling and external links (in the same folder)', async () => {
    const m = (p: string, resolve?: string) => grove('meta', { file: '/g/nexus.h5', path: p, resolve_links: resolve });
    expect((await m('/entry/data/energy', 'none')).json).to.deep.equal({ kind: 'soft_link', name: 'energy', target_path: '/entry/instrument/energy' });
    const energy = (await m('/entry/data/energy')).json;
    expect(energy).to.include({ kind: 'dataset', name: 'energy' });
    expect(energy.shape).to.deep.equal([6]);
    expect((await m('/entry/data/monitor', 'none')).json).to.deep.equal({ kind: 'external_link', name: 'monitor', target_file: 'nexus_ext.h5', target_path: '/monitor' });
    const monitor = (await m('/entry/data/monitor', 'only_valid')).json;
    expect(monitor).to.include({ kind: 'dataset', name: 'monitor' });
    expect(monitor.type.dtype).to.equal('<i4');
    expect((await m('/entry/data/dangling', 'only_valid')).json).to.deep.equal({ kind: 'soft_link', name: 'dangling', target_path: '/entry/nowhere' });
    expectError(await m('/entry/data/dangling', 'all'), 404);
    expect((await m('/entry/missing_file')).json).to.deep.equal({ kind: 'external_link', name: 'missing_file', target_file: 'no_such_file.h5', target_path: '/x' });
    expectError(await m('/entry/missing_file', 'all'), 404);
    expect((await m('/entry/data/energy', 'true')).json.kind).to.equal('dataset');
    expect((await m('/entry/data/energy', 'false')).json.kind).to.equal('soft_link');
    expectError(await m('/entry/data', 'maybe'), 422);
    // values through a soft link and an external link
    expect((await grove('data', { file: '/g/nexus.h5', path: '/entry/data/energy' })).json).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect((await grove('data', { file: '/g/nexus.h5', path: '/entry/data/monitor' })).json).to.deep.equal([10, 11, 12, 13, 14, 15]);
    expect((await grove('attr', { file: '/g/nexus.h5', path: '/entry/data/monitor' })).json).to.deep.equal({ units: 'counts' });
    // the group's children: the external link resolved in its file, the dangling link left
    const kids = (await m('/entry/data')).json.children.map((k: any) => [k.name, k.kind]);
    expect(kids).to.deep.equal([
      ['counts', 'dataset'],
      ['dangling', 'soft_link'],
      ['energy', 'dataset'],
      ['monitor', 'dataset'],
    ]);
    expectError(await grove('paths', { file: '/g/nexus.h5', resolve_links: 'all' }), 404);
  });

  it('attr_keys picks attributes; NaN attributes are null', async () => {
    const a = await c.request('GET', '/h5grove/attr/', { query: { file: '/g/xarray.h5', path: '/temperature', attr_keys: 'units' } });
    expect(a.json).to.deep.equal({ units: 'degC' });
    const two = await fetch(`${srv.url}/h5grove/attr/?file=g/xarray.h5&path=/temperature&attr_keys=units&attr_keys=_FillValue`);
    expect(await two.json()).to.deep.equal({ units: 'degC', _FillValue: null });
    expectError(await c.request('GET', '/h5grove/attr/', { query: { file: '/g/xarray.h5', path: '/temperature', attr_keys: 'nope' } }), 404);
  });

  it('errors: 404 file / path, 422 arguments and types the encoding cannot hold, 501 tiff, 400 without file', async () => {
    const r404f = await grove('meta', { file: '/g/nope.h5' });
    expectError(r404f, 404);
    for (const route of ['attr', 'data', 'meta', 'paths', 'stats']) {
      const r = await grove(route, { file: '/g/types.h5', path: '/not_a_path' });
      expectError(r, 404, route);
      expect(r.json.message, route).to.include('not a valid path');
    }
    expectError(await grove('data', { file: '/g/types.h5', path: '/f32', format: 'foo' }), 422);
    expectError(await grove('data', { file: '/g/types.h5', path: '/f32', dtype: 'unsafe' }), 422);
    expectError(await grove('data', { file: '/g/types.h5', path: '/f32', flatten: 'maybe' }), 422);
    expectError(await grove('data', { file: '/g/types.h5', path: '/vlen_str', dtype: 'safe' }), 422);
    for (const format of ['csv', 'npy']) expectError(await grove('data', { file: '/g/types.h5', path: '/vlen_str', format }), 422, format);
    expectError(await grove('data', { file: '/g/types.h5', path: '/scalar_int', format: 'csv' }), 422);
    expectError(await grove('data', { file: '/g/types.h5', path: '/vlen_str', format: 'bin' }), 422);
    expectError(await grove('data', { file: '/g/types.h5', path: '/f32', format: 'tiff' }), 501);
    expectError(await grove('data', { file: '/g/types.h5', path: '/' }), 422);
    expectError(await grove('stats', { file: '/g/types.h5', path: '/fixed_str' }), 422);
    expectError(await grove('paths', { file: '/g/types.h5', path: '/f32' }), 400);
    expectError(await grove('meta', {}), 400);
    expectError(await grove('meta', { file: '/g/../x.h5' }), 400);
    expect((await grove('data', { file: '/g/types.h5', path: '/null_space' })).json).to.equal(null);
    expect((await grove('data', { file: '/g/types.h5', path: '/empty_2d' })).json).to.deep.equal([[], [], []]);
    const empty = await grove('data', { file: '/g/types.h5', path: '/empty_1d', format: 'bin' });
    expect(empty.status).to.equal(200);
    expect(empty.body.length).to.equal(0);
  });

  it('a group of 1,200 datasets: /meta/ lists them all in one answer', async () => {
    const r = await grove('meta', { file: '/g/many.h5', path: '/big' });
    expect(r.status).to.equal(200);
    expect(r.json.children.length).to.equal(1200);
    expect(r.json.children[1199]).to.deep.include({ name: 'd01199', kind: 'dataset', shape: [] });
    expect((await grove('paths', { file: '/g/many.h5' })).json.length).to.equal(1202);
  });

  describe('users and ACLs', () => {
    let secured: TestServer;
    const PW = { admin: 'admin-pw-0', alice: 'alice-pw-1', bob: 'bob-pw-2' };
    const as = (who: keyof typeof PW | undefined) => new Client(secured.url).as(who ? { user: who, password: PW[who] } : undefined);
    before(async () => {
      const r2 = tempRoot('h5store-grove-acl-');
      const users = path.join(tempRoot('h5store-grove-users-'), 'users.json');
      for (const [u, pw] of Object.entries(PW)) await userAdd(users, u, pw);
      secured = await startServer({ root: r2, args: ['--users-file', users] });
      expect((await as('admin').with('/home').put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
      const alice = as('alice').with('/home/run.h5');
      expect((await alice.put('/')).status).to.equal(201);
      const rootId = (await alice.get('/')).json.root;
      const open = await alice.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [3], link: { id: rootId, name: 'open' } });
      const secret = await alice.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [3], link: { id: rootId, name: 'secret' } });
      expect((await alice.put(`/datasets/${open.json.id}/value`, { value: [1, 2, 3] })).status).to.equal(200);
      expect((await alice.put('/acls/bob', { read: true })).status).to.be.oneOf([200, 201]);
      expect((await alice.put(`/datasets/${secret.json.id}/acls/bob`, { read: false })).status).to.be.oneOf([200, 201]);
    });
    after(async () => secured?.stop());

    it('the same users and ACLs as the REST API: 401 anonymous, 403 without read, objects with their own ACL hidden', async () => {
      const q = { file: 'home/run.h5', path: '/open' };
      expectError(await as(undefined).get('/h5grove/data/', q), 401);
      expectError(await as('admin').with('/').get('/h5grove/meta/', { file: 'home/nope.h5' }), 404);
      expect((await as('alice').get('/h5grove/data/', q)).json).to.deep.equal([1, 2, 3]);
      expect((await as('bob').get('/h5grove/data/', q)).json).to.deep.equal([1, 2, 3]);
      expectError(await as('bob').get('/h5grove/data/', { file: 'home/run.h5', path: '/secret' }), 403);
      expectError(await as('bob').get('/h5grove/meta/', { file: 'home/run.h5', path: '/secret' }), 403);
      const kids = (await as('bob').get('/h5grove/meta/', { file: 'home/run.h5' })).json.children;
      expect(kids.map((k: any) => [k.name, k.kind])).to.deep.equal([
        ['open', 'dataset'],
        ['secret', 'other'],
      ]);
      const aliceKids = (await as('alice').get('/h5grove/meta/', { file: 'home/run.h5' })).json.children;
      expect(aliceKids.map((k: any) => k.kind)).to.deep.equal(['dataset', 'dataset']);
    });
  });
});
