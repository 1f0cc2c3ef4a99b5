/**
 * Dropped-in files never reach outside the data directory (issue 7 item 1; DESIGN.md 1 and 4).
 *
 * h5py writes (test/tools/make_reach_fixtures.py) datasets whose values live in other files:
 * external raw storage by absolute path, relative path, `..` inside the stored name, through a
 * symlinked file and a symlinked folder, a bare name that only the server's working directory
 * holds; virtual datasets whose sources are in the same file, inside the root (relative,
 * absolute, nested, `%b` patterns) or outside it (absolute, relative, `..`, symlink, the working
 * directory, through an external link in the source file, through a nested external file list);
 * and external links. The server runs with its working directory in the outside folder.
 * For each: metadata routes work and report the layout with the names as stored; value routes
 * (GET/POST/PUT .../value, query) answer 403 naming the reason when any file libhdf5 may open
 * leads outside the root, and give the right values otherwise; the outside files' bytes never
 * change. The store's `Access` seam is asked about each source dataset and raw file reached.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PYTHON, python } from '../helpers/python.js';
import { Client, REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { bytes, getBinary, postBinary, putBinary } from '../helpers/writekit.js';
import { H5StoreError } from '../../src/errors.js';
import type { Access } from '../../src/store/access/access.js';

/** Every file under `dir` (symlinks not followed) -> sha1 of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(dir, p)] = createHash('sha1').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

const OUTSIDE = [
  'efl_abs_out.h5',
  'efl_rel_out.h5',
  'efl_dotdot.h5',
  'efl_symlink.h5',
  'efl_dir_symlink.h5',
  'vds_abs_out.h5',
  'vds_rel_out.h5',
  'vds_symlink.h5',
  'vds_mixed.h5',
  'vds_dotdot.h5',
  'vds_cwd_name.h5',
  'vds_via_elink.h5',
  'vds_nested_efl.h5',
  'vds_printf_out.h5',
];
const INSIDE = [
  'efl_inside.h5',
  'efl_subdir.h5',
  'efl_abs_inside.h5',
  'vds_same.h5',
  'vds_inside.h5',
  'vds_abs_inside.h5',
  'vds_missing.h5',
  'vds_nested_ok.h5',
  'vds_printf_in.h5',
];

describe('files a dataset reaches stay inside the data directory', function () {
  this.timeout(120000);
  let srv: TestServer;
  let root: string;
  let outside: string;
  let expected: Record<string, { stored: string[]; values: number[] | string | null }>;
  let before0: Record<string, string>;
  const ids = new Map<string, string>();

  const client = (name: string) => new Client(srv.url, `/reach/${name}`);
  async function dsetId(name: string): Promise<string> {
    let id = ids.get(name);
    if (id) return id;
    const c = client(name);
    const rootId = (await c.get('/')).json.root;
    const l = await c.get(`/groups/${rootId}/links/data`);
    expect(l.status, `${name}: link /data ${l.text}`).to.equal(200);
    id = l.json.link.id as string;
    ids.set(name, id);
    return id;
  }

  before(async () => {
    root = tempRoot('h5store-reach-');
    outside = tempRoot('h5store-outside-');
    expected = JSON.parse(execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_reach_fixtures.py'), root, outside], { encoding: 'utf8' }));
    before0 = snapshot(outside);
    srv = await startServer({ root, cwd: outside });
  });
  after(async () => {
    await srv?.stop();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });
  afterEach(() => {
    expect(snapshot(outside), 'the files outside the data directory are unchanged').to.deep.equal(before0);
  });

  describe('when a file may lead outside: metadata works, every value route answers 403', () => {
    for (const name of OUTSIDE) {
      it(name, async () => {
        const c = client(name);
        const id = await dsetId(name);
        const meta = await c.get(`/datasets/${id}`);
        expect(meta.status, meta.text).to.equal(200);
        const layout = meta.json.layout;
        if (name.startsWith('efl')) {
          expect(layout.class).to.equal('H5D_CONTIGUOUS');
          expect(layout.external.map((e: { name: string }) => e.name)).to.deep.equal(expected[name].stored);
          expect(layout.external[0]).to.include({ offset: 0, size: 40 });
        } else {
          expect(layout.class).to.equal('H5D_VIRTUAL');
          expect(layout.mappings.map((m: { file: string }) => m.file)).to.deep.equal(expected[name].stored);
          expect(layout.mappings[0].dataset).to.equal('data');
          expect(layout.mappings[0].virtual.class).to.equal('H5S_SEL_HYPERSLABS');
        }
        expect(meta.json.creationProperties.layout).to.deep.equal(layout);
        expect((await c.get(`/datasets/${id}/shape`)).status).to.equal(200);
        expect((await c.get(`/datasets/${id}/type`)).status).to.equal(200);
        const n = meta.json.shape.dims[0] || 10;
        const replies = [
          ['GET value', await c.get(`/datasets/${id}/value`)],
          ['GET value select', await c.get(`/datasets/${id}/value`, { select: '[0:2]' })],
          ['GET value binary', await getBinary(c, `/datasets/${id}/value`)],
          ['GET value query', await c.get(`/datasets/${id}/value`, { query: 'x > 0' })],
          ['POST points', await c.post(`/datasets/${id}/value`, { points: [[0], [1]] })],
          ['POST binary points', await postBinary(c, `/datasets/${id}/value`, bytes.coords(0, 1))],
          ['PUT value', await c.put(`/datasets/${id}/value`, { value: Array.from({ length: n }, () => 666) })],
          ['PUT points', await c.put(`/datasets/${id}/value`, { points: [[0]], value: [666] })],
          ['PUT binary', await putBinary(c, `/datasets/${id}/value`, bytes.i32le(...Array.from({ length: n }, () => 666)))],
          ['PUT query', await c.put(`/datasets/${id}/value`, { x: 1 }, { query: 'x > 0' })],
        ] as const;
        for (const [what, r] of replies) {
          expect(r.status, `${what}: ${r.text.slice(0, 300)}`).to.equal(403);
          expect(r.json.message, what).to.match(/outside the data directory|external link/);
          expect(r.text, what).not.to.match(/\b(7000|8000|9000|9100|9500)\b/);
        }
      });
    }

    it('an unlimited virtual dataset whose sources are outside reports its stored extent (its sources are never opened)', async () => {
      const meta = await client('vds_printf_out.h5').get(`/datasets/${await dsetId('vds_printf_out.h5')}`);
      expect(meta.json.shape.dims).to.deep.equal([0]);
      expect(meta.json.shape.maxdims).to.deep.equal([0]);
      expect(meta.json.layout.mappings[0].virtual.count).to.deep.equal(['H5S_UNLIMITED']);
    });
  });

  describe('when every file is inside the root: values read as h5py reads them', () => {
    for (const name of INSIDE) {
      it(name, async () => {
        const c = client(name);
        const id = await dsetId(name);
        const meta = await c.get(`/datasets/${id}`);
        expect(meta.status, meta.text).to.equal(200);
        expect(meta.json.layout.class).to.equal(name.startsWith('efl') ? 'H5D_CONTIGUOUS' : 'H5D_VIRTUAL');
        const want = expected[name].values as number[];
        expect(meta.json.shape.dims).to.deep.equal([want.length]);
        const r = await c.get(`/datasets/${id}/value`);
        expect(r.status, r.text).to.equal(200);
        expect(r.json.value).to.deep.equal(want);
        const p = await c.post(`/datasets/${id}/value`, { points: [[3], [0], [3]] });
        expect(p.status, p.text).to.equal(200);
        expect(p.json.value).to.deep.equal([want[3], want[0], want[3]]);
      });
    }

    it('an external raw data file that is another domain is read as raw bytes (its domain is reached)', async () => {
      const r = await client('efl_domain.h5').get(`/datasets/${await dsetId('efl_domain.h5')}/value`, { select: '[0:2]' });
      expect(r.status, r.text).to.equal(200);
      // the first 8 bytes of an HDF5 file: its signature \x89HDF\r\n\x1a\n
      expect(Buffer.from(Int32Array.from(r.json.value).buffer).toString('latin1')).to.equal('\x89HDF\r\n\x1a\n');
    });

    it('a bare external file name is looked up beside the HDF5 file, never in the working directory: 404 when missing there', async () => {
      const r = await client('efl_cwd_name.h5').get(`/datasets/${await dsetId('efl_cwd_name.h5')}/value`);
      expect(r.status, r.text).to.equal(404);
      expect(r.json.message).to.match(/external raw data file/);
    });

    it('a virtual dataset reads its sources while the server has them open read-only (not fill values)', async () => {
      const src = client('src_a.h5');
      const sid = (await src.get(`/groups/${(await src.get('/')).json.root}/links/data`)).json.link.id;
      expect((await src.get(`/datasets/${sid}/value`)).json.value).to.deep.equal(Array.from({ length: 10 }, (_, i) => 400 + i));
      const r = await client('vds_inside.h5').get(`/datasets/${await dsetId('vds_inside.h5')}/value`);
      expect(r.json.value).to.deep.equal(expected['vds_inside.h5'].values);
    });
  });

  describe('writes through allowed files', () => {
    it('PUT on external raw storage inside the root writes that file', async () => {
      const c = client('efl_inside.h5');
      const id = await dsetId('efl_inside.h5');
      const want = Array.from({ length: 10 }, (_, i) => -1 - i);
      const r = await c.put(`/datasets/${id}/value`, { value: want });
      expect(r.status, r.text).to.equal(200);
      const raw = fs.readFileSync(path.join(root, 'reach/efl_inside.bin'));
      expect(Array.from(new Int32Array(raw.buffer, raw.byteOffset, 10))).to.deep.equal(want);
    });

    it('PUT on a virtual dataset writes its source files (also while the server has a source open read-only)', async () => {
      const src = client('src_a.h5');
      const sid = (await src.get(`/groups/${(await src.get('/')).json.root}/links/data`)).json.link.id;
      expect((await src.get(`/datasets/${sid}/value`)).status).to.equal(200);
      const c = client('vds_inside.h5');
      const id = await dsetId('vds_inside.h5');
      const w = await c.put(`/datasets/${id}/value`, { value: Array.from({ length: 20 }, (_, i) => 1000 + i) });
      expect(w.status, w.text).to.equal(200);
      expect((await c.get(`/datasets/${id}/value`)).json.value).to.deep.equal(Array.from({ length: 20 }, (_, i) => 1000 + i));
      expect((await src.get(`/datasets/${sid}/value`)).json.value).to.deep.equal(Array.from({ length: 10 }, (_, i) => 1000 + i));
      const out = python(
        'import h5py, sys, json; print(json.dumps([h5py.File(sys.argv[1] + "/" + n, "r")["data"][:].tolist() for n in ("src_a.h5", "sub/src_b.h5")]))',
        [path.join(root, 'reach')],
        { lockFree: true },
      );
      expect(JSON.parse(out)).to.deep.equal([Array.from({ length: 10 }, (_, i) => 1000 + i), Array.from({ length: 10 }, (_, i) => 1010 + i)]);
    });

    it('PUT on an unlimited (%b) virtual dataset writes each block to its file', async () => {
      const c = client('vds_printf_in.h5');
      const id = await dsetId('vds_printf_in.h5');
      const w = await c.put(`/datasets/${id}/value`, { value: [1, 2] }, { select: '[9:11]' });
      expect(w.status, w.text).to.equal(200);
      const out = python('import h5py, sys; print(h5py.File(sys.argv[1], "r")["data"][0])', [path.join(root, 'reach/blk_1.h5')], { lockFree: true });
      expect(out.trim()).to.equal('2');
    });
  });

  describe('external links', () => {
    it('are listed with the file name they store, never followed by libhdf5, and followed by a lookup only inside the data directory', async () => {
      const c = client('elink.h5');
      const rootId = (await c.get('/')).json.root;
      const links = await c.get(`/groups/${rootId}/links`);
      expect(links.status).to.equal(200);
      const byName = Object.fromEntries(links.json.links.map((l: { title: string }) => [l.title, l]));
      expect(byName.to_in).to.include({ class: 'H5L_TYPE_EXTERNAL', h5path: '/data', h5domain: 'src_a.h5' });
      expect(byName.to_out.class).to.equal('H5L_TYPE_EXTERNAL');
      for (const p of ['/to_out', '/to_in', 'to_out/x']) {
        const r = await c.get('/', { h5path: p });
        expect(r.status, `${p}: ${r.text}`).to.equal(400);
        expect(r.json.message).to.match(/external link/);
        const g = await c.get(`/groups/${rootId}`, { h5path: p });
        expect(g.status).to.equal(400);
      }
      // following (issue #12): into the domain beside it; a file outside the data directory is no domain (404)
      const inside = await c.get('/', { h5path: '/to_in', follow_external_links: 1 });
      expect(inside.status, inside.text).to.equal(200);
      expect(inside.json.domain).to.equal('/reach/src_a.h5');
      expect((await c.get('/', { h5path: '/to_out', follow_external_links: 1 })).status).to.equal(404);
    });
  });
});

describe('store: the Access seam of value operations', function () {
  this.timeout(60000);
  let root: string;
  let outside: string;
  let store: import('../../src/store/store.js').Store;
  const calls: [string, string][] = [];
  /** An Access that records each question (domain, flag) and allows it. */
  const record: Access = { all: false, check: (_view, flag, about) => void calls.push([about.domain, flag]) };
  /** An Access that records each question and refuses it. */
  const refuse: Access = {
    all: false,
    check: (_view, flag, about) => {
      calls.push([about.domain, flag]);
      throw new H5StoreError('Forbidden', `no ${flag} on ${about.what}`);
    },
  };

  before(async () => {
    root = tempRoot('h5store-reach-store-');
    outside = tempRoot('h5store-outside-');
    execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_reach_fixtures.py'), root, outside]);
    const { Store } = await import('../../src/store/store.js');
    store = new Store({ root, idleCloseMs: 800, maxOpenFiles: 16, defaultOwner: 'admin', pageBytes: 1 << 20, maxPoints: 1000 });
  });
  after(() => {
    store?.close();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });
  beforeEach(() => (calls.length = 0));

  async function idOf(domain: string): Promise<string> {
    const rootId = await store.rootId(domain);
    return (await store.getLink(domain, rootId, 'data')).link.id!;
  }

  it('a read asks `read` access to each source file, before anything is read', async () => {
    const id = await idOf('/reach/vds_inside.h5');
    const source = await store.readValues('/reach/vds_inside.h5', id, {}, { kind: 'binary' }, record);
    await source.close();
    expect(source.count).to.equal(20);
    expect(calls.sort()).to.deep.equal([
      ['/reach/src_a.h5', 'read'],
      ['/reach/sub/src_b.h5', 'read'],
    ]);
  });

  it('nested sources are asked for too', async () => {
    await (await store.readValues('/reach/vds_nested_ok.h5', await idOf('/reach/vds_nested_ok.h5'), {}, { kind: 'binary' }, record)).close();
    expect(calls.map((c) => c[0]).sort()).to.deep.equal(['/reach/src_a.h5', '/reach/sub/src_b.h5', '/reach/vds_inside.h5']);
  });

  it('sources in the same file are asked for too (once for a file without object ACLs: its domain\'s ACL governs them all)', async () => {
    await (await store.readValues('/reach/vds_same.h5', await idOf('/reach/vds_same.h5'), {}, { kind: 'binary' }, record)).close();
    expect(calls).to.deep.equal([['/reach/vds_same.h5', 'read']]);
  });

  it('a write asks `update` access; an external raw data file that is a domain is asked for as well', async () => {
    await store.writeValues('/reach/efl_domain.h5', await idOf('/reach/efl_domain.h5'), { json: { value: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] } }, refuse).then(
      () => expect.fail('the write was allowed'),
      (e) => expect(e.code).to.equal('Forbidden'),
    );
    expect(calls).to.deep.equal([['/reach/other_domain.h5', 'update']]);
    // refused before libhdf5 wrote: the other domain is still an HDF5 file
    expect(fs.readFileSync(path.join(root, 'reach/other_domain.h5')).subarray(0, 4).toString('latin1')).to.equal('\x89HDF');
  });

  it('a refused read reads nothing and leaves no lock behind', async () => {
    const id = await idOf('/reach/vds_inside.h5');
    await store.readValues('/reach/vds_inside.h5', id, {}, { kind: 'binary' }, refuse).then(
      () => expect.fail('the read was allowed'),
      (e) => expect(e.code).to.equal('Forbidden'),
    );
    // the sources can still be written (no lock left)
    await store.writeValues('/reach/src_a.h5', await idOf('/reach/src_a.h5'), { json: { value: Array.from({ length: 10 }, () => 5) } });
    expect(store.openIdCount()).to.equal(0);
  });

  it('files that may lead outside are refused before any access question', async () => {
    // (vds_cwd_name.h5 leads outside only from the outside folder, where the API test runs it)
    for (const name of OUTSIDE.filter((n) => n !== 'vds_cwd_name.h5')) {
      const id = await idOf(`/reach/${name}`);
      await store.readValues(`/reach/${name}`, id, {}, { kind: 'binary' }, record).then(
        () => expect.fail(`${name} was read`),
        (e) => expect(e.code, name).to.equal('Forbidden'),
      );
    }
    expect(calls).to.deep.equal([]);
  });
});
