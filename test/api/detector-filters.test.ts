/**
 * The filters detectors write (issue #26 item 5; src/hdf5/filters.ts): bitshuffle with LZ4 and
 * with zstd inside (32008), standalone zstd (32015) and zfp (32013), over HTTP.
 *
 * Files are made by the upstream implementations (test/tools/detector_filters.py): h5py through
 * the bitshuffle plugin built from Debian's source (scripts/build-plugins.mjs) and Debian's zfp
 * plugin, chunks compressed by libzstd (python3-zstandard) written as they are, and bitshuffle
 * +zstd chunks made of the plugin's own bitshuffled blocks recompressed with zstd. Each dataset
 * must read back exactly as its uncompressed twin (for lossy zfp: what h5py reads through the
 * plugin). Datasets h5store writes with these filters are read by the upstream implementations
 * (h5py through the plugins; zstd chunks by python3-zstandard; bitshuffle+zstd chunks recompressed
 * as LZ4 and read by the upstream plugin). A server without the plugins answers 415 naming the
 * filter, metadata still works, and `GET /about` (rows) and `GET /` (names) say what it reads and
 * writes.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { BUILT_PLUGIN_DIR } from '../helpers/env.js';
import { toolJson } from '../helpers/python.js';
import { Client, type Reply, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const CASES = ['bslz4_u32', 'bslz4_u16_odd', 'bslz4_i64_block', 'bs_u16', 'zstd_u16', 'zstd_f32_edge', 'bszstd_u32', 'bszstd_u16_odd', 'zfp_rev_f32', 'zfp_rev_i32', 'zfp_rate_f64'];

/** Selections of each case's first dimensions (edge chunks, steps, one element). */
function selections(shape: number[]): string[] {
  const all = '[' + shape.map((n) => `0:${n}`).join(',') + ']';
  const inner = '[' + shape.map((n) => `${Math.floor(n / 3)}:${n - 1}:${n > 4 ? 2 : 1}`).join(',') + ']';
  const last = '[' + shape.map((n) => `${n - 1}`).join(',') + ']';
  return [all, inner, last];
}

async function linkIds(c: Client): Promise<Map<string, string>> {
  const rootId = (await c.get('/')).json.root as string;
  const links = (await c.get(`/groups/${rootId}/links`)).json.links as { title: string; id: string }[];
  return new Map(links.map((l) => [l.title, l.id]));
}

const binary = (c: Client, id: string, select?: string): Promise<Reply> => c.get(`/datasets/${id}/value`, select ? { select } : undefined, { accept: 'application/octet-stream' });

describe('detector filters: bitshuffle (LZ4, zstd), zstd, zfp (issue #26 item 5)', function () {
  this.timeout(180_000);
  let server: TestServer;
  let c: Client;
  let ids: Map<string, string>;

  before(async function () {
    expect(fs.existsSync(path.join(BUILT_PLUGIN_DIR, 'libh5bshuf.so')), 'the bitshuffle plugin is built (node scripts/build-plugins.mjs)').to.equal(true);
    const root = tempRoot('h5store-detector-');
    const made = toolJson('detector_filters.py', ['make', path.join(root, 'det.h5')]);
    expect(made.cases).to.have.members(CASES);
    server = await startServer({ root });
    c = new Client(server.url, '/det.h5');
    ids = await linkIds(c);
  });
  after(async () => {
    await server?.stop();
    if (server) fs.rmSync(server.root, { recursive: true, force: true });
  });

  it('GET /about lists what this server reads and writes (rows with ids and classes), GET / their names: bitshuffle with and without LZ4 and zstd, zstd, zfp', async () => {
    const names = (await c.get('/')).json.filters as { read: string[]; write: string[] };
    for (const k of ['read', 'write'] as const) expect(names[k]).to.include.members(['gzip', 'lzf', 'bitshuffle', 'bitshuffle+lz4', 'bitshuffle+zstd', 'zstd', 'zfp']);
    for (const r of [await c.get('/about')]) {
      expect(r.status).to.equal(200);
      const rows = r.json.filters as { id: number; name: string; compression?: string; read: boolean; write: boolean; via?: string }[];
      const row = (id: number, compression?: string) => rows.find((x) => x.id === id && x.compression === compression);
      for (const k of ['none', 'lz4', 'zstd']) expect(row(32008, k), `bitshuffle ${k}`).to.include({ class: 'H5Z_FILTER_BITSHUFFLE', name: 'bitshuffle', read: true, write: true });
      expect(row(32015)).to.include({ class: 'H5Z_FILTER_ZSTD', read: true, write: true, via: 'h5store' });
      expect(row(32013)).to.include({ class: 'H5Z_FILTER_ZFP', read: true, write: true, via: 'plugin' });
      expect(row(1)).to.include({ name: 'gzip', read: true, write: true, via: 'libhdf5' });
      expect(row(32008, 'zstd')!.via).to.equal('h5store');
    }
    expect((await c.get('/')).json.compressors).to.include('zfp');
  });

  it('datasets written by the upstream implementations read back exactly: whole, strided and single-element selections, binary and JSON', async () => {
    for (const name of CASES) {
      const id = ids.get(name)!;
      const ref = ids.get(`${name}__ref`)!;
      const meta = (await c.get(`/datasets/${id}`)).json;
      const shape = meta.shape.dims as number[];
      for (const sel of selections(shape)) {
        const [a, b] = [await binary(c, id, sel), await binary(c, ref, sel)];
        expect(a.status, `${name}${sel}: ${a.text.slice(0, 300)}`).to.equal(200);
        expect(b.status).to.equal(200);
        expect(a.body.equals(b.body), `${name}${sel}: same bytes as the uncompressed twin`).to.equal(true);
      }
      const [j, k] = [await c.get(`/datasets/${id}/value`, { select: selections(shape)[1] }), await c.get(`/datasets/${ref}/value`, { select: selections(shape)[1] })];
      expect(j.status, `${name} JSON`).to.equal(200);
      expect(j.json.value, `${name} JSON`).to.deep.equal(k.json.value);
      const points = [shape.map(() => 0), shape.map((n) => n - 1), shape.map((n) => Math.floor(n / 2))];
      const [p, q] = [await c.post(`/datasets/${id}/value`, { points }), await c.post(`/datasets/${ref}/value`, { points })];
      expect(p.status, `${name} points`).to.equal(200);
      expect(p.json.value, `${name} points`).to.deep.equal(q.json.value);
    }
  });

  it("GET /datasets/<id> shows the filter and its options (bitshuffle's inner compression and zstd level, zstd's level)", async () => {
    const filters = async (n: string) => (await c.get(`/datasets/${ids.get(n)}`)).json.creationProperties.filters;
    expect((await filters('bslz4_u32'))[0]).to.include({ class: 'H5Z_FILTER_BITSHUFFLE', id: 32008, name: 'bitshuffle', compression: 'lz4' });
    expect((await filters('bslz4_i64_block'))[0]).to.include({ compression: 'lz4', blockSize: 256 });
    expect((await filters('bs_u16'))[0]).to.include({ compression: 'none' });
    expect((await filters('bszstd_u32'))[0]).to.include({ compression: 'zstd', level: 3 });
    expect((await filters('zstd_f32_edge'))[0]).to.include({ class: 'H5Z_FILTER_ZSTD', id: 32015, name: 'zstd', level: 19 });
    expect((await filters('zfp_rev_f32'))[0]).to.include({ class: 'H5Z_FILTER_ZFP', id: 32013, name: 'zfp' });
  });

  it('a damaged zstd, bitshuffle+zstd or bitshuffle+LZ4 chunk fails the read with a 500 saying why (never wrong values or a crash); the good chunks still read', async () => {
    for (const [name, why] of [
      ['zstd_bad', /zstd/],
      ['bszstd_bad', /runs past the chunk/],
      ['bslz4_bad', /runs past the chunk/],
    ] as const) {
      const r = await binary(c, ids.get(name)!);
      expect(r.status, `${name}: ${r.text.slice(0, 300)}`).to.equal(500);
      expect(r.json.message, name).to.match(why);
    }
    const good = await c.get(`/datasets/${ids.get('zstd_bad')}/value`, { select: '[0:8]' });
    expect(good.json.value).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  describe('datasets h5store writes', () => {
    const N = [3, 50, 41];
    const data = Array.from({ length: N[0] }, (_, i) => Array.from({ length: N[1] }, (_, j) => Array.from({ length: N[2] }, (_, k) => ((i * 7919 + j * 131 + k * 17) % 4096) + (k % 9 === 0 ? 60000 : 0))));
    const floats = data.map((a) => a.map((b) => b.map((x) => Math.sin(x / 100) * 10)));
    const cases: { name: string; type: string; filter: Record<string, unknown>; codec: 'plugin' | 'zstd' | 'bszstd'; values: number[][][]; cp?: Record<string, unknown>; lossy?: boolean }[] = [
      { name: 'w_bslz4', type: 'H5T_STD_U32LE', filter: { class: 'H5Z_FILTER_BITSHUFFLE', id: 32008, compression: 'lz4' }, codec: 'plugin', values: data, cp: { compression: 'lz4' } },
      { name: 'w_bs', type: 'H5T_STD_U16LE', filter: { class: 'H5Z_FILTER_BITSHUFFLE', id: 32008, name: 'bitshuffle' }, codec: 'plugin', values: data, cp: { compression: 'none' } },
      { name: 'w_bszstd', type: 'H5T_STD_U32LE', filter: { class: 'H5Z_FILTER_BITSHUFFLE', id: 32008, compression: 'zstd', level: 5 }, codec: 'bszstd', values: data, cp: { compression: 'zstd', level: 5 } },
      { name: 'w_bszstd_block', type: 'H5T_STD_U16LE', filter: { name: 'bitshuffle', compression: 'zstd', blockSize: 64 }, codec: 'bszstd', values: data, cp: { compression: 'zstd', blockSize: 64, level: 3 } },
      { name: 'w_zstd', type: 'H5T_IEEE_F32LE', filter: { class: 'H5Z_FILTER_ZSTD', id: 32015, level: 7 }, codec: 'zstd', values: floats, cp: { level: 7 } },
      { name: 'w_zstd_default', type: 'H5T_STD_I32LE', filter: { id: 32015 }, codec: 'zstd', values: data },
      { name: 'w_zfp_rev', type: 'H5T_IEEE_F64LE', filter: { name: 'zfp', reversible: true }, codec: 'plugin', values: floats },
      { name: 'w_zfp_default', type: 'H5T_STD_I32LE', filter: { class: 'H5Z_FILTER_USER', name: 'zfp' }, codec: 'plugin', values: data },
      { name: 'w_zfp_rate', type: 'H5T_IEEE_F32LE', filter: { class: 'H5Z_FILTER_ZFP', id: 32013, rate: 16 }, codec: 'plugin', values: floats, lossy: true },
      { name: 'w_zfp_accuracy', type: 'H5T_IEEE_F64LE', filter: { name: 'zfp', accuracy: 0.001 }, codec: 'plugin', values: floats, lossy: true },
    ];

    it('POST /datasets with each filter, PUT values, GET them back; the upstream implementations read what h5store wrote', async () => {
      const spec: { name: string; codec: string; expect: unknown }[] = [];
      for (const k of cases) {
        const r = await c.post('/datasets', {
          type: k.type,
          shape: N,
          creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [1, 50, 41] }, filters: [k.filter] },
          link: { id: (await c.get('/')).json.root, name: k.name },
        });
        expect(r.status, `${k.name}: ${r.text}`).to.equal(201);
        const f = (await c.get(`/datasets/${r.json.id}`)).json.creationProperties.filters[0];
        if (k.cp) expect(f, k.name).to.include(k.cp);
        expect((await c.put(`/datasets/${r.json.id}/value`, { value: k.values })).status, k.name).to.equal(200);
        const back = (await c.get(`/datasets/${r.json.id}/value`)).json.value as number[][][];
        if (k.lossy) {
          const flat = back.flat(2);
          k.values.flat(2).forEach((x, i) => expect(Math.abs(flat[i] - x), `${k.name}[${i}]`).to.be.below(0.05));
        } else {
          const f32 = (v: number[][][]) => v.map((a) => a.map((b) => b.map((x) => Math.fround(x))));
          expect(k.type === 'H5T_IEEE_F32LE' ? f32(back) : back, k.name).to.deep.equal(k.type === 'H5T_IEEE_F32LE' ? f32(k.values) : k.values);
        }
        // what upstream must read: the values as the server reads them (lossy zfp: its decoder's output)
        spec.push({ name: k.name, codec: k.codec, expect: back });
      }
      const file = path.join(server.root, 'det.h5');
      const specFile = path.join(server.root, 'check-spec.json');
      fs.writeFileSync(specFile, JSON.stringify(spec));
      const got = toolJson('detector_filters.py', ['check', file, '@' + specFile]) as Record<string, { ok: boolean; detail: string }>;
      for (const k of cases) expect(got[k.name], `${k.name} read by the upstream implementation`).to.deep.equal({ ok: true, detail: '' });
    });

    it('bad filter options answer 400 naming the option', async () => {
      const bad: [unknown, RegExp][] = [
        [{ name: 'bitshuffle', compression: 'snappy' }, /compression/],
        [{ name: 'bitshuffle', compression: 'constructor' }, /compression/],
        [{ name: 'bitshuffle', blockSize: 12 }, /multiple of 8/],
        [{ name: 'bitshuffle', compression: 'lz4', level: 3 }, /level/],
        [{ id: 32015, level: 99 }, /level/],
        [{ name: 'zfp', rate: -1 }, /rate/],
        [{ name: 'zfp', rate: 8, precision: 10 }, /one mode/],
        [{ name: 'zfp', level: 4 }, /zfp takes/],
        [{ name: 'zfp', expert: { minbits: 1 } }, /maxbits/],
      ];
      for (const [filter, msg] of bad) {
        const r = await c.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [10, 10], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [10, 10] }, filters: [filter] } });
        expect(r.status, JSON.stringify(filter)).to.equal(400);
        expect(r.json.message, JSON.stringify(filter)).to.match(msg);
      }
    });
  });

  describe('read on the worker thread (chunks above max_chunk_size): h5store\'s filter callbacks run on the main thread', () => {
    let big: TestServer;
    after(async () => {
      await big?.stop();
    });
    it('bitshuffle+zstd and bitshuffle+LZ4 chunks of 52 KB read with max_chunk_size 16 KiB: same bytes; other requests answered meanwhile', async () => {
      big = await startServer({ root: server.root, env: { H5STORE_MAX_CHUNK_BYTES: '16384' } });
      const b = new Client(big.url, '/det.h5');
      const bigIds = await linkIds(b);
      for (const name of ['bszstd_u32', 'bslz4_u32']) {
        const [x, y, about] = await Promise.all([binary(b, bigIds.get(name)!), binary(b, bigIds.get(`${name}__ref`)!), b.get('/about')]);
        expect(x.status, `${name}: ${x.text.slice(0, 300)}`).to.equal(200);
        expect(about.status).to.equal(200);
        expect(x.body.equals(y.body), name).to.equal(true);
      }
    });
  });
});

describe('a server without the filter plugins', function () {
  this.timeout(120_000);
  let server: TestServer;
  let c: Client;
  let ids: Map<string, string>;

  before(async () => {
    const root = tempRoot('h5store-noplugins-');
    toolJson('detector_filters.py', ['make', path.join(root, 'det.h5')]);
    const empty = fs.mkdtempSync(path.join(root, '.plugins-'));
    // pluginPath given (so not the built folder), libhdf5's own path replaced by one that does not exist
    server = await startServer({ root, env: { H5STORE_PLUGIN_PATH: empty, HDF5_PLUGIN_PATH: '/nonexistent-plugin-dir' } });
    c = new Client(server.url, '/det.h5');
    ids = await linkIds(c);
  });
  after(async () => {
    await server?.stop();
    if (server) fs.rmSync(server.root, { recursive: true, force: true });
  });

  it('bitshuffle and zfp datasets: metadata 200; values 415 naming the filter id and name (JSON, binary, points, writes)', async () => {
    const cases: [string, RegExp][] = [
      ['bslz4_u32', /bitshuffle with lz4 inside \(id 32008\)/],
      ['bs_u16', /bitshuffle \(id 32008\)/],
      ['bszstd_u32', /bitshuffle with zstd inside \(id 32008\)/],
      ['zfp_rev_f32', /zfp \(id 32013\).*hdf5-filter-plugin-zfp-serial/],
    ];
    for (const [name, msg] of cases) {
      const id = ids.get(name)!;
      const meta = await c.get(`/datasets/${id}`);
      expect(meta.status).to.equal(200);
      expect(meta.json.creationProperties.filters[0].id).to.be.oneOf([32008, 32013]);
      const replies = [
        await c.get(`/datasets/${id}/value`),
        await binary(c, id),
        await c.post(`/datasets/${id}/value`, { points: [meta.json.shape.dims.map(() => 0)] }),
        await c.put(`/datasets/${id}/value`, { value: 1 }, { select: '[' + meta.json.shape.dims.map(() => '0').join(',') + ']' }),
      ];
      for (const r of replies) {
        expect(r.status, `${name}: ${r.text.slice(0, 300)}`).to.equal(415);
        expect(r.json.message, name).to.match(msg);
      }
    }
  });

  it('zstd still reads (libzstd, no plugin needed); GET /about and GET / list bitshuffle and zfp as neither read nor written', async () => {
    const r = await binary(c, ids.get('zstd_u16')!);
    expect(r.status).to.equal(200);
    expect(r.body.equals((await binary(c, ids.get('zstd_u16__ref')!)).body)).to.equal(true);
    const rows = (await c.get('/about')).json.filters as { id: number; compression?: string; read: boolean; write: boolean }[];
    for (const row of rows.filter((x) => x.id === 32008 || x.id === 32013)) expect(row, JSON.stringify(row)).to.include({ read: false, write: false });
    expect(rows.find((x) => x.id === 32015)).to.include({ read: true, write: true });
    const names = (await c.get('/')).json.filters as { read: string[]; write: string[] };
    expect(names.read).to.include('zstd').and.not.include('zfp').and.not.include('bitshuffle+lz4');
    expect((await c.get('/')).json.compressors).to.not.include('zfp');
  });

  it('POST /datasets with bitshuffle or zfp: 400 naming the filter', async () => {
    for (const [filter, msg] of [
      [{ name: 'bitshuffle', compression: 'zstd' }, /bitshuffle with zstd inside \(id 32008\)/],
      [{ class: 'H5Z_FILTER_ZFP', id: 32013 }, /zfp \(id 32013\)/],
    ] as [unknown, RegExp][]) {
      const r = await c.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [10], creationProperties: { filters: [filter] } });
      expect(r.status).to.equal(400);
      expect(r.json.message).to.match(msg);
    }
  });
});
