/**
 * query= on one-dimensional compound tables: both scan paths (whole fixed-size rows; columns for
 * compounds with variable-length fields), string paddings, big-endian fields, fields=, Limit,
 * select=, and the result shape [index, ...fields] (wire-reference 2.4). And query= on datasets of
 * a simple type (numbers, fixed-length strings) of any rank, `_` naming the element: the matching
 * elements in row-major order as a 1-D array of the dataset's type, JSON and binary, compared
 * with numpy on the file, and with the real h5pyd 1.0 client's `dset[..., query=...]`.
 */
import { expect } from 'chai';
import { Client, type TestServer, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';
import { python, pythonJson } from '../helpers/python.js';
import { h5pydPython, haveClient, missingClient } from '../helpers/clients.js';

const str = (length: number | 'H5T_VARIABLE', strPad = 'H5T_STR_NULLPAD') => ({ class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad, length });

describe('query= on compound tables', function () {
  this.timeout(60000);
  let srv: TestServer;
  let c: Client;
  const ids: Record<string, string> = {};
  const rows = Array.from({ length: 50 }, (_, i) => [i, (i % 10) * 1.5, ['KORD', 'KSFO', 'PANC'][i % 3], 1000 - i]);

  before(async () => {
    srv = await startServer({ root: tempRoot() });
    c = new Client(srv.url, '/q.h5');
    expect((await c.put('/')).status).to.equal(201);
    const make = async (name: string, fields: { name: string; type: unknown }[], value: unknown[]) => {
      const r = await c.post('/datasets', { type: { class: 'H5T_COMPOUND', fields }, shape: [value.length] });
      expect(r.status, r.text).to.equal(201);
      ids[name] = r.json.id;
      const w = await c.put(`/datasets/${r.json.id}/value`, { value });
      expect(w.status, w.text).to.equal(200);
    };
    const fields = (station: unknown) => [
      { name: 'time', type: 'H5T_STD_I64BE' },
      { name: 'temp', type: 'H5T_IEEE_F32LE' },
      { name: 'station', type: station },
      { name: 'count', type: 'H5T_STD_U16BE' },
    ];
    await make('nullpad', fields(str(6)), rows);
    await make('spacepad', fields(str(6, 'H5T_STR_SPACEPAD')), rows);
    await make('nullterm', fields(str(6, 'H5T_STR_NULLTERM')), rows);
    await make('vlen', fields(str('H5T_VARIABLE', 'H5T_STR_NULLTERM')), rows);
  });
  after(async () => srv.stop());

  const q = async (name: string, query: string, extra: Record<string, string | number> = {}) => {
    const r = await c.get(`/datasets/${ids[name]}/value`, { query, ...extra });
    expect(r.status, r.text).to.equal(200);
    return r.json.value as unknown[][];
  };

  for (const name of ['nullpad', 'spacepad', 'nullterm', 'vlen']) {
    it(`${name}: string equality, numbers of both byte orders, [index, ...fields] rows`, async () => {
      const got = await q(name, "(station == b'KSFO') & (temp >= 6.0) & (count > 960)");
      const want = rows.map((r, i) => [i, ...r]).filter((r) => r[3] === 'KSFO' && (r[2] as number) >= 6 && (r[4] as number) > 960);
      expect(want.length).to.be.greaterThan(0);
      expect(got).to.deep.equal(want);
      expect(await q(name, "station != 'KORD'")).to.have.length(rows.filter((r) => r[2] !== 'KORD').length);
      expect(await q(name, "station == 'KSF'")).to.deep.equal([]);
      expect(await q(name, 'station IN (KORD, PANC)')).to.have.length(rows.filter((r) => r[2] !== 'KSFO').length);
    });
  }

  it('fields= returns only those fields after the index; Limit stops early; select= bounds the scan', async () => {
    expect(await q('nullpad', 'time < 3', { fields: 'station:time' })).to.deep.equal([
      [0, 'KORD', 0],
      [1, 'KSFO', 1],
      [2, 'PANC', 2],
    ]);
    // fields adjacent in the row (one run of bytes), apart (two runs), one field, and all of them
    const all = rows.map((r, i) => [i, ...r]).filter((r) => (r[1] as number) >= 5 && (r[1] as number) < 9);
    const pick = (names: string[]) => all.map((r) => [r[0], ...names.map((n) => r[1 + ['time', 'temp', 'station', 'count'].indexOf(n)])]);
    for (const f of ['temp:station', 'time:count', 'count', 'station:count:time', 'time:temp:station:count']) {
      expect(await q('nullpad', '(time >= 5) & (time < 9)', { fields: f }), f).to.deep.equal(pick(f.split(':')));
    }
    expect(await q('vlen', 'time >= 0', { Limit: 4 })).to.have.length(4);
    expect((await q('nullpad', 'time >= 0', { select: '[10:20]' })).map((r) => r[0])).to.deep.equal([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect((await q('vlen', 'time >= 0', { select: '[10:20]', Limit: 3 })).map((r) => r[0])).to.deep.equal([10, 11, 12]);
  });

  it('little-endian int64, int32, float64 and float32 fields compare exactly (negative, beyond 2^32)', async () => {
    const le = [
      { name: 'big', type: 'H5T_STD_I64LE' },
      { name: 'small', type: 'H5T_STD_I32LE' },
      { name: 'x', type: 'H5T_IEEE_F64LE' },
      { name: 'y', type: 'H5T_IEEE_F32LE' },
    ];
    const vals = Array.from({ length: 40 }, (_, i) => [(i - 20) * 4294967301, (i - 20) * 100003, (i - 20) / 8, (i - 20) * 0.5]);
    const r = await c.post('/datasets', { type: { class: 'H5T_COMPOUND', fields: le }, shape: [vals.length] });
    expect(r.status, r.text).to.equal(201);
    expect((await c.put(`/datasets/${r.json.id}/value`, { value: vals })).status).to.equal(200);
    ids.le = r.json.id;
    const cases: [string, (v: number[]) => boolean][] = [
      ['big < -42949673010', (v) => v[0] < -42949673010],
      ['big >= 4294967301', (v) => v[0] >= 4294967301],
      ['small == -300009', (v) => v[1] === -300009],
      ['(x > -0.5) & (x <= 1.25)', (v) => v[2] > -0.5 && v[2] <= 1.25],
      ['(y != 0.0) & (y < -9.0)', (v) => v[3] !== 0 && v[3] < -9],
    ];
    for (const [query, keep] of cases) {
      const want = vals.map((v, i) => [i, ...v]).filter((row) => keep(row.slice(1)));
      expect(want.length, query).to.be.greaterThan(0);
      expect(await q('le', query), query).to.deep.equal(want);
    }
  });

  it('PUT query= updates the matching rows of either path and answers them', async () => {
    for (const name of ['nullpad', 'vlen']) {
      const r = await c.put(`/datasets/${ids[name]}/value`, { value: { count: 7 } }, { query: "station == b'PANC'" });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.value.every((row: unknown[]) => row[4] === 7 && row[3] === 'PANC')).to.equal(true);
      expect(await q(name, 'count == 7')).to.have.length(rows.filter((x) => x[2] === 'PANC').length);
    }
  });

  // Numeric columns of a scan are remembered by file version (store/values/query.ts
  // `queryColumns`): a repeated query reads only the rows it returns. Every kind of repeat must
  // answer as the first scan did, and no write (through the server, or by h5py behind its back)
  // may be answered from columns of the old file.
  it('repeated queries answer as the first scan, and see every write', async () => {
    const n = 3000;
    const value = Array.from({ length: n }, (_, i) => [i, (i * 37) % 101, ['KORD', 'KSFO'][i % 2]]);
    const fields = [
      { name: 'time', type: 'H5T_STD_I64LE' },
      { name: 'temp', type: 'H5T_IEEE_F64LE' },
      { name: 'station', type: str(4) },
    ];
    const t = await c.post('/datasets', { type: { class: 'H5T_COMPOUND', fields }, shape: [n], link: { id: (await c.get('/')).json.root, name: 'cached' } });
    expect(t.status, t.text).to.equal(201);
    expect((await c.put(`/datasets/${t.json.id}/value`, { value })).status).to.equal(200);
    const expected = (pred: (r: unknown[]) => boolean, from = 0, step = 1, limit = Infinity) => {
      const out: unknown[][] = [];
      for (let i = from; i < n && out.length < limit; i += step) if (pred(value[i])) out.push([i, ...value[i]]);
      return out;
    };
    const ask = async (query: string, extra: Record<string, string | number> = {}) => {
      const r = await c.get(`/datasets/${t.json.id}/value`, { query, ...extra });
      expect(r.status, r.text).to.equal(200);
      return r.json.value as unknown[][];
    };
    const cases: [string, Record<string, string | number>, () => unknown[][]][] = [
      // clustered hits (one hyperslab of rows), scattered hits (a point selection), a stride, Limit
      ['time >= 2990', {}, () => expected((r) => (r[0] as number) >= 2990)],
      ['temp == 100.0', {}, () => expected((r) => r[1] === 100)],
      ['(temp < 3.0) & (time > 100)', { select: '[5:3000:7]' }, () => expected((r) => (r[1] as number) < 3 && (r[0] as number) > 100, 5, 7)],
      ['temp > 50.0', { Limit: 20 }, () => expected((r) => (r[1] as number) > 50, 0, 1, 20)],
      ["(temp > 90.0) & (station == b'KSFO')", {}, () => expected((r) => (r[1] as number) > 90 && r[2] === 'KSFO')],
      // dense hits, and sparse hits turning dense (the hit positions' two ways: byte search, loop)
      ['temp > 10.0', {}, () => expected((r) => (r[1] as number) > 10)],
      ['(time > 1000) | (temp == 100.0)', { Limit: 1500 }, () => expected((r) => (r[0] as number) > 1000 || r[1] === 100, 0, 1, 1500)],
    ];
    const checkAll = async (when: string) => {
      for (const [query, extra, want] of cases) {
        const w = want();
        expect(w.length, query).to.be.greaterThan(0);
        for (let k = 0; k < 3; k++) expect(await ask(query, extra), `${when}: ${query} ${JSON.stringify(extra)}, ask ${k}`).to.deep.equal(w);
      }
    };
    await checkAll('first');
    const held = Number(/^h5store_query_column_cache_bytes (\d+)/m.exec((await c.get('/metrics')).text)?.[1]);
    expect(held, 'bytes of remembered columns').to.be.at.least(3000 * 8 * 2);
    // a write through the server between two asks
    value[2995][0] = 5;
    value[500][1] = 100;
    expect((await c.put(`/datasets/${t.json.id}/value`, { value: [value[2995]] }, { select: '[2995:2996]' })).status).to.equal(200);
    expect((await c.put(`/datasets/${t.json.id}/value`, { value: [value[500]] }, { select: '[500:501]' })).status).to.equal(200);
    await checkAll('after a write through the server');
    // h5py writes the file while the server has it closed (idle), then the server is asked again
    await untilServerClosed(srv, `${srv.root}/q.h5`);
    python(`import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f:
    d = f['cached']
    row = d[7]
    row['temp'] = 100.0
    d[7] = row
    row = d[2000]
    row['time'] = 2999
    d[2000] = row`, [`${srv.root}/q.h5`]);
    value[7][1] = 100;
    value[2000][0] = 2999;
    await checkAll('after h5py wrote the file');
  });

  it('POST .../value with the selection, query and Limit in a JSON body answers as GET ?query=', async () => {
    for (const [select, query, Limit] of [['[10:40]', 'temp >= 6.0', 5], ['[0:50:2]', "station == b'KSFO'", undefined], [undefined, 'count < 960', 0]] as const) {
      const g = await c.get(`/datasets/${ids.vlen}/value`, { query, ...(select ? { select } : {}), ...(Limit !== undefined ? { Limit } : {}), fields: 'time:station' });
      const p = await c.post(`/datasets/${ids.vlen}/value`, { ...(select ? { select } : {}), query, ...(Limit !== undefined ? { Limit } : {}), fields: 'time:station' });
      expect(g.status, g.text).to.equal(200);
      expect(p.status, p.text).to.equal(200);
      expect(p.json.value, `${select} ${query}`).to.deep.equal(g.json.value);
      expect(g.json.value.length).to.be.greaterThan(0);
    }
  });

  it('rejects bad queries and non-table datasets with 400', async () => {
    expect((await c.get(`/datasets/${ids.nullpad}/value`, { query: 'nosuch > 1' })).status).to.equal(400);
    expect((await c.get(`/datasets/${ids.nullpad}/value`, { query: "temp == 'x'" })).status).to.equal(400);
    const plain = (await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3] })).json.id;
    expect((await c.get(`/datasets/${plain}/value`, { query: 'x > 1' })).status).to.equal(400);
    // a coordinate-list select is no hyperslab to scan (400, not a server error)
    const r = await c.get(`/datasets/${ids.nullpad}/value`, { query: 'time >= 0', select: '[[1,2,5]]' });
    expect(r.status, r.text).to.equal(400);
    expect(r.text).to.match(/hyperslab/);
  });
});

describe('query= on datasets of a simple type (`_` names the element)', function () {
  this.timeout(120000);
  let srv: TestServer;
  let c: Client;
  const ids: Record<string, string> = {};
  // numpy on the file the server serves: every answer is compared with it
  const NUMPY = `import h5py, numpy as np, sys, json
with h5py.File(sys.argv[1], 'r') as f:
    out = {}
    for name in ('f1', 'f2', 'i1', 'i2', 'be2', 's1'):
        a = f[name][...]
        out[name] = a.tolist() if a.dtype.kind != 'S' else [x.decode() for x in a.ravel()]
print(json.dumps(out))`;
  let np: Record<string, any>;

  before(async () => {
    srv = await startServer({ root: tempRoot() });
    c = new Client(srv.url, '/simple.h5');
    expect((await c.put('/')).status).to.equal(201);
    const make = async (name: string, type: unknown, shape: number[], value: unknown) => {
      const r = await c.post('/datasets', { type, shape, link: { id: (await c.get('/')).json.root, name } });
      expect(r.status, r.text).to.equal(201);
      ids[name] = r.json.id;
      expect((await c.put(`/datasets/${r.json.id}/value`, { value })).status).to.equal(200);
    };
    // the h5pyd suite's pattern: i*10 + j/10 on 40x80 float32
    const grid = Array.from({ length: 40 }, (_, i) => Array.from({ length: 80 }, (_, j) => i * 10 + j / 10));
    await make('f2', 'H5T_IEEE_F32LE', [40, 80], grid);
    await make('f1', 'H5T_IEEE_F32LE', [500], Array.from({ length: 500 }, (_, i) => (i * 7.3) % 311));
    await make('i1', 'H5T_STD_I32LE', [300], Array.from({ length: 300 }, (_, i) => ((i * 37) % 201) - 100));
    await make('i2', 'H5T_STD_I64LE', [12, 9], Array.from({ length: 12 }, (_, i) => Array.from({ length: 9 }, (_, j) => (i - 6) * 1e10 + j)));
    await make('be2', 'H5T_STD_U16BE', [6, 7], Array.from({ length: 6 }, (_, i) => Array.from({ length: 7 }, (_, j) => i * 1000 + j)));
    await make('s1', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 }, [9], ['KORD', 'KSFO', 'PANC', 'KSF', 'KORD', '', 'PANC', 'KSFO', 'X']);
    await make('scalar', 'H5T_IEEE_F64LE', [], 3.5);
    // the float32 nearest 0.999 (above it in float64): numpy compares it with 0.999 in float32
    await make('edge', 'H5T_IEEE_F32LE', [4], [0.999, 0.9995, 0.5, 0.999]);
    await make('edge64', 'H5T_IEEE_F64LE', [3], [Math.fround(0.999), 0.999, 0.5]);
    await make('vstr', { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' }, [2], ['a', 'b']);
    await make('cpx', { class: 'H5T_ARRAY', dims: [2], base: 'H5T_STD_I32LE' }, [2], [[1, 2], [3, 4]]);
    await untilServerClosed(srv, `${srv.root}/simple.h5`);
    np = pythonJson(NUMPY, [`${srv.root}/simple.h5`], { lockFree: true });
  });
  after(async () => srv.stop());

  /** Row-major matches of `pred` in a (nested) numpy list, within the row/col ranges, at most `limit`. */
  const expected = (arr: any[], pred: (v: any) => boolean, opts: { rows?: [number, number]; cols?: [number, number]; limit?: number } = {}) => {
    const value: any[] = [];
    const index: any[] = [];
    const twoD = Array.isArray(arr[0]);
    const [r0, r1] = opts.rows ?? [0, arr.length];
    for (let i = r0; i < r1; i++) {
      if (!twoD) {
        if (pred(arr[i])) value.push(arr[i]), index.push(i);
        continue;
      }
      const [c0, c1] = opts.cols ?? [0, arr[i].length];
      for (let j = c0; j < c1; j++) if (pred(arr[i][j])) value.push(arr[i][j]), index.push([i, j]);
    }
    const n = opts.limit ?? value.length;
    return { value: value.slice(0, n), index: index.slice(0, n) };
  };

  const getJson = async (name: string, query: string, extra: Record<string, string | number> = {}) => {
    const r = await c.get(`/datasets/${ids[name]}/value`, { query, ...extra });
    expect(r.status, r.text).to.equal(200);
    return { value: r.json.value, index: r.json.index };
  };
  const getBinary = async (name: string, query: string, extra: Record<string, string | number> = {}) => {
    const r = await c.get(`/datasets/${ids[name]}/value`, { query, ...extra }, { Accept: 'application/octet-stream' });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('application/octet-stream');
    return r.body;
  };
  const f32 = (b: Buffer) => Array.from({ length: b.length / 4 }, (_, k) => b.readFloatLE(4 * k));
  const i32 = (b: Buffer) => Array.from({ length: b.length / 4 }, (_, k) => b.readInt32LE(4 * k));

  const cases: { name: string; query: string; pred: (v: any) => boolean; opts?: { select?: string; Limit?: number }; rows?: [number, number]; cols?: [number, number]; decode: (b: Buffer) => any[] }[] = [
    { name: 'f2', query: '_ > 100.0 AND _ < 200.0', pred: (v) => v > 100 && v < 200, decode: f32 },
    { name: 'f2', query: '_ > 100.0 AND _ < 200.0', pred: (v) => v > 100 && v < 200, opts: { select: '[10:30,20:60]' }, rows: [10, 30], cols: [20, 60], decode: f32 },
    { name: 'f2', query: '_ > 100.0 AND _ < 200.0', pred: (v) => v > 100 && v < 200, opts: { Limit: 10 }, decode: f32 },
    { name: 'f2', query: '(_ >= 50) & (_ < 52) | _ == 399.5', pred: (v) => (v >= 50 && v < 52) || v === 399.5, opts: { select: '[3:39,:]', Limit: 25 }, rows: [3, 39], decode: f32 },
    { name: 'f1', query: '_ < 30 OR _ > 300', pred: (v) => v < 30 || v > 300, decode: f32 },
    { name: 'f1', query: '_ < 30 OR _ > 300', pred: (v) => v < 30 || v > 300, opts: { select: '[100:400]', Limit: 7 }, rows: [100, 400], decode: f32 },
    { name: 'i1', query: 'NOT (_ >= -90 AND _ <= 90)', pred: (v) => !(v >= -90 && v <= 90), decode: i32 },
    { name: 'i1', query: '_ IN (0, 1, 100, -100)', pred: (v) => [0, 1, 100, -100].includes(v), opts: { select: '[5:250]' }, rows: [5, 250], decode: i32 },
    { name: 'i1', query: '_ == 7', pred: (v) => v === 7, opts: { Limit: 1 }, decode: i32 },
  ];
  for (const k of cases) {
    const label = `${k.name} ${k.query}${k.opts ? ' ' + JSON.stringify(k.opts) : ''}`;
    it(`${label}: JSON value/index and binary equal numpy's row-major matches`, async () => {
      const want = expected(np[k.name], k.pred, { rows: k.rows, cols: k.cols, limit: k.opts?.Limit });
      expect(want.value.length, 'the case matches something').to.be.greaterThan(0);
      const got = await getJson(k.name, k.query, k.opts);
      // JSON gives a float32 its shortest decimal form, numpy's tolist the exact double of it
      expect(got.value.map(Math.fround)).to.deep.equal(want.value.map(Math.fround));
      expect(got.index).to.deep.equal(want.index);
      expect(k.decode(await getBinary(k.name, k.query, k.opts))).to.deep.equal(want.value);
    });
  }

  /** The same query asked as POST .../value with a JSON body (h5pyd 1.0's form for a select over 100 characters). */
  const postQuery = async (name: string, body: Record<string, unknown>, binary = false, params?: Record<string, string | number>) => {
    const r = await c.request('POST', `/datasets/${ids[name]}/value`, { body, query: params, headers: binary ? { Accept: 'application/octet-stream' } : {} });
    expect(r.status, r.text).to.equal(200);
    return r;
  };
  for (const k of cases) {
    it(`POST ${k.name} ${k.query}${k.opts ? ' ' + JSON.stringify(k.opts) : ''}: a JSON body {select, query, Limit} answers as GET ?query=`, async () => {
      const get = await getJson(k.name, k.query, k.opts);
      const post = (await postQuery(k.name, { query: k.query, ...k.opts })).json;
      expect({ value: post.value, index: post.index }).to.deep.equal(get);
      expect((await postQuery(k.name, { query: k.query, ...k.opts }, true)).body).to.deep.equal(await getBinary(k.name, k.query, k.opts));
    });
  }

  it('POST query: select as a list or as start/stop/step, query and Limit in the URL, no selection (the whole dataset)', async () => {
    const want = await getJson('f2', '_ > 100.0 AND _ < 200.0', { select: '[10:30,20:60:3]', Limit: 40 });
    expect(want.value).to.have.length(40);
    const forms: [Record<string, unknown>, Record<string, string | number>?][] = [
      [{ select: ['10:30', '20:60:3'], query: '_ > 100.0 AND _ < 200.0', Limit: 40 }],
      [{ start: [10, 20], stop: [30, 60], step: [1, 3], query: '_ > 100.0 AND _ < 200.0', Limit: 40 }],
      [{ select: '[10:30,20:60:3]' }, { query: '_ > 100.0 AND _ < 200.0', Limit: 40 }],
      [{ select: '[10:30,20:60:3]', query: '_ > 100.0 AND _ < 200.0' }, { Limit: 40 }],
    ];
    for (const [body, params] of forms) {
      const r = (await postQuery('f2', body, false, params)).json;
      expect({ value: r.value, index: r.index }, JSON.stringify([body, params])).to.deep.equal(want);
    }
    expect((await postQuery('f2', { query: '_ > 100.0 AND _ < 200.0' })).json.value).to.have.length(799);
  });

  it('coordinate lists (h5pyd\'s fancy selections, repeats and any order): the matches of numpy\'s a[[...], ...] in its order, GET and POST alike', async () => {
    const rows = [33, 5, 1, 5, 39, 12, 0, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 2];
    const want = pythonJson(`import h5py, numpy as np, sys, json
rows = json.loads(sys.argv[2])
with h5py.File(sys.argv[1], 'r') as f:
    a = f['f2'][...]
    i1 = f['i1'][...]
cols = np.arange(10, 70, 3)
sub = a[rows][:, 10:70:3]
m = (sub > 100) & (sub < 250)
ii, jj = np.nonzero(m)
pts = [7, 299, 7, 0, 150, 3]
one = i1[pts]
k = np.nonzero(one > 0)[0]
print(json.dumps({'value': sub[ii, jj].tolist(), 'index': [[rows[i], int(cols[j])] for i, j in zip(ii, jj)], 'one': {'value': one[k].tolist(), 'index': [pts[x] for x in k]}}))`, [`${srv.root}/simple.h5`, JSON.stringify(rows)], { lockFree: true });
    expect(want.value.length).to.be.greaterThan(50);
    const select = `[[${rows.join(',')}],10:70:3]`;
    expect(select.length).to.be.greaterThan(50);
    const get = await getJson('f2', '_ > 100 AND _ < 250', { select });
    expect(get.value.map(Math.fround)).to.deep.equal(want.value.map(Math.fround));
    expect(get.index).to.deep.equal(want.index);
    const post = (await postQuery('f2', { select, query: '_ > 100 AND _ < 250' })).json;
    expect({ value: post.value, index: post.index }).to.deep.equal(get);
    expect(f32((await postQuery('f2', { select, query: '_ > 100 AND _ < 250' }, true)).body)).to.deep.equal(want.value);
    const limited = (await postQuery('f2', { select, query: '_ > 100 AND _ < 250', Limit: 7 })).json;
    expect(limited.index).to.deep.equal(want.index.slice(0, 7));
    expect(await getJson('i1', '_ > 0', { select: '[[7,299,7,0,150,3]]' })).to.deep.equal(want.one);
  });

  it('POST query: bad bodies are 400 with a message (points, binary points, query or Limit twice or of the wrong type)', async () => {
    const bad = async (body: unknown, params: Record<string, string | number> = {}, re?: RegExp, raw?: Buffer) => {
      const r = raw
        ? await c.request('POST', `/datasets/${ids.f2}/value`, { raw, query: params, headers: { 'Content-Type': 'application/octet-stream' } })
        : await c.request('POST', `/datasets/${ids.f2}/value`, { body, query: params });
      expect(r.status, `${JSON.stringify(body)} ${JSON.stringify(params)}: ${r.text}`).to.equal(400);
      expect(r.json.message, JSON.stringify(body)).to.be.a('string').and.not.equal('');
      if (re) expect(r.json.message).to.match(re);
    };
    await bad({ points: [[1, 2]], query: '_ > 1' }, {}, /points/);
    await bad(undefined, { query: '_ > 1' }, /points/, Buffer.alloc(16));
    await bad({ select: '[0:2,:]', query: '_ > 1' }, { query: '_ > 2' }, /query/);
    await bad({ select: '[0:2,:]', query: '_ > 1', Limit: 3 }, { Limit: 3 }, /Limit/);
    await bad({ select: '[0:2,:]', query: '_ > 1', Limit: -1 }, {}, /limit/);
    await bad({ select: '[0:2,:]', query: '_ > 1', Limit: '3' }, {}, /limit/);
    await bad({ select: '[0:2,:]', query: 42 }, {}, /query/);
    await bad({ select: '[0:2,:]', query: '_ >' });
    await bad({ select: '[0:2,:]', query: '_ > 1' }, { select: '[0:2,:]' }, /both/);
    await bad({ select: '[0:50,:]', query: '_ > 1' });
    await bad({ select: '[0:2,:]', start: [0, 0], query: '_ > 1' });
  });

  it('the suite count: 799 of the 40x80 elements, in JSON and binary', async () => {
    expect((await getJson('f2', '_ > 100.0 AND _ < 200.0')).value).to.have.length(799);
    expect((await getBinary('f2', '_ > 100.0 AND _ < 200.0')).length).to.equal(799 * 4);
  });

  it('int64 beyond 2^32, big-endian uint16 (binary in the dataset\'s own byte order), fixed-length strings', async () => {
    const i2 = expected(np.i2, (v) => v < -2e10 || v === 3e10 + 4);
    expect(await getJson('i2', '_ < -20000000000 OR _ == 30000000004')).to.deep.equal(i2);
    const b = await getBinary('i2', '_ < -20000000000 OR _ == 30000000004');
    expect(Array.from({ length: b.length / 8 }, (_, k) => Number(b.readBigInt64LE(8 * k)))).to.deep.equal(i2.value);
    const be = expected(np.be2, (v) => v % 1000 === 3 || v > 5004, { rows: [1, 6], cols: [0, 7] });
    const sel = { select: '[1:6,:]' };
    expect(await getJson('be2', '_ == 1003 | _ == 2003 | _ == 3003 | _ == 4003 | _ == 5003 | _ > 5004', sel)).to.deep.equal(be);
    const bb = await getBinary('be2', '_ == 1003 | _ == 2003 | _ == 3003 | _ == 4003 | _ == 5003 | _ > 5004', sel);
    expect(Array.from({ length: bb.length / 2 }, (_, k) => bb.readUInt16BE(2 * k))).to.deep.equal(be.value);
    const s = expected(np.s1, (v) => v === 'KSFO' || v === 'X');
    expect(await getJson('s1', "_ == b'KSFO' OR _ == 'X'")).to.deep.equal(s);
    expect((await getBinary('s1', "_ == b'KSFO' OR _ == 'X'")).toString('latin1')).to.equal('KSFOKSFOX\0\0\0');
    expect((await getJson('s1', "_ IN ('PANC', KSF)")).index).to.deep.equal([2, 3, 6]);
  });

  it('a dataset read in many pages (2.4 MB, 1.1 MB strided select; Limit pages by 256 KiB): coordinates and values equal numpy', async () => {
    python(`import h5py, numpy as np, sys
a = ((np.arange(600 * 1000, dtype=np.int64).reshape(600, 1000) * 7919) % 10007).astype('<i4')
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('big', data=a, chunks=(64, 128))`, [`${srv.root}/big.h5`]);
    const want = pythonJson(`import h5py, numpy as np, sys, json
with h5py.File(sys.argv[1], 'r') as f:
    a = f['big'][...]
i0, j0 = np.s_[5:590:1], np.s_[10:990:2]
sub = a[i0, j0]
ii, jj = np.nonzero(sub < 100)
print(json.dumps({'value': sub[ii, jj].tolist(), 'index': [[int(i0.start + i), int(j0.start + 2 * j)] for i, j in zip(ii, jj)]}))`, [`${srv.root}/big.h5`]);
    expect(want.value.length).to.be.greaterThan(2000);
    const big = new Client(srv.url, '/big.h5');
    const id = (await big.get(`/groups/${(await big.get('/')).json.root}/links/big`)).json.link.id;
    const ask = async (extra: Record<string, string | number>, binary = false) => {
      const r = await big.get(`/datasets/${id}/value`, { query: '_ < 100', select: '[5:590,10:990:2]', ...extra }, binary ? { Accept: 'application/octet-stream' } : undefined);
      expect(r.status, r.text).to.equal(200);
      return r;
    };
    for (const limit of [0, 1, 250, 100000]) {
      const n = limit || want.value.length;
      const j = (await ask({ Limit: limit })).json;
      expect(j.value, `Limit ${limit}`).to.deep.equal(want.value.slice(0, n));
      expect(j.index, `Limit ${limit}`).to.deep.equal(want.index.slice(0, n));
      expect(i32((await ask({ Limit: limit }, true)).body), `Limit ${limit}`).to.deep.equal(want.value.slice(0, n));
    }
  });

  it('float32 elements compare with float32 literals and float64 ones in float64, as numpy on the file', async () => {
    const exprs = ['_ > 0.999', '_ == 0.999', '_ >= 0.999 AND _ < 0.9995', '_ IN (0.999, 0.5)', 'NOT _ == 0.999'];
    const want = pythonJson(`import h5py, numpy as np, sys, json
out = {}
with h5py.File(sys.argv[1], 'r') as f:
    for name in ('edge', 'edge64'):
        a = f[name][...]
        masks = [a > 0.999, a == 0.999, (a >= 0.999) & (a < 0.9995), np.isin(a, [0.999, 0.5]), ~(a == 0.999)]
        out[name] = [np.nonzero(m)[0].tolist() for m in masks]
print(json.dumps(out))`, [`${srv.root}/simple.h5`], { lockFree: true });
    for (const name of ['edge', 'edge64']) {
      const got = [];
      for (const e of exprs) got.push((await getJson(name, e)).index);
      expect(got, name).to.deep.equal(want[name]);
    }
    expect(want.edge[0]).to.deep.equal([1]); // the float32 0.999s are not > 0.999
    expect(want.edge64[0]).to.deep.equal([0]); // the float64 of fround(0.999) is
  });

  it('no match: empty arrays in JSON, also when binary was asked (h5pyd 1.0 refuses an empty body); Limit=0 means no limit', async () => {
    expect(await getJson('f2', '_ > 1e9')).to.deep.equal({ value: [], index: [] });
    const r = await c.get(`/datasets/${ids.f2}/value`, { query: '_ > 1e9' }, { Accept: 'application/octet-stream' });
    expect(r.status).to.equal(200);
    expect(r.json).to.include.keys('value', 'index');
    expect(r.json.value).to.deep.equal([]);
    expect((await getJson('i1', '_ > 95', { Limit: 0 })).value).to.have.length(np.i1.filter((v: number) => v > 95).length);
  });

  it('bad queries and datasets a query cannot name the element of: 400 with a message', async () => {
    const bad = async (name: string, query: string, extra: Record<string, string> = {}, re?: RegExp) => {
      const r = await c.get(`/datasets/${ids[name]}/value`, { query, ...extra });
      expect(r.status, `${name} ${query}: ${r.text}`).to.equal(400);
      expect(r.json.message ?? r.text, `${name} ${query}`).to.be.a('string').and.not.equal('');
      if (re) expect(r.text).to.match(re);
    };
    await bad('f2', 'value > 1', {}, /value/); // only `_` names the element
    await bad('f2', '_ >', {});
    await bad('f2', '(_ > 1', {});
    await bad('f2', '_ = 1', {});
    await bad('f2', '1 < 2', {}); // no element referenced
    await bad('f2', "_ == 'x'", {}); // a string compared with numbers
    await bad('s1', '_ > 3', {});
    await bad('f2', '', {});
    await bad('f2', '_ > 1', { select: '[0:50,0:10]' }); // out of bounds
    await bad('f2', '_ > 1', { select: '[0:5]' }); // wrong rank
    await bad('f2', '_ > 1', { select: '[[1,40],:]' }); // a coordinate out of bounds
    await bad('f2', '_ > 1', { fields: 'a' }, /compound/);
    await bad('scalar', '_ > 1', {}, /H5S_SCALAR/);
    await bad('vstr', "_ == 'a'", {}, /variable-length strings/);
    await bad('cpx', '_ > 1', {}, /H5T_ARRAY/);
    const r = await c.put(`/datasets/${ids.f2}/value`, { value: 1 }, { query: '_ > 1' });
    expect(r.status, r.text).to.equal(400);
    expect(r.text).to.match(/compound/);
    // nothing was written by the refused update
    expect((await getJson('f2', '_ > 100.0 AND _ < 200.0')).value).to.have.length(799);
  });

  it('h5pyd 1.0: dset[..., query=...] on 2-D float32 and 1-D int32 gives numpy\'s matches', async function () {
    if (!haveClient('1.0')) return void console.log(`      ${missingClient('1.0')}`);
    const out = h5pydPython('1.0', srv.url).json(
      `import h5pyd, json
with h5pyd.File('/simple.h5', 'r') as f:
    a = f['f2'].__getitem__(..., query='_ > 100.0 AND _ < 200.0')
    b = f['i1'].__getitem__(..., query='_ < -95 OR _ > 95')
    e = f['f2'].__getitem__(..., query='_ > 1e9')
    print(json.dumps([str(a.dtype), list(a.shape), a.tolist(), str(b.dtype), b.tolist(), list(e.shape)]))`,
    );
    const fw = expected(np.f2, (v) => v > 100 && v < 200).value;
    const iw = expected(np.i1, (v) => v < -95 || v > 95).value;
    expect(out).to.deep.equal(['float32', [fw.length], fw, 'int32', iw, [0]]);
  });

  it('h5pyd 1.0: a selection over 100 characters goes as POST {select, query}: coordinate lists and a rank-26 hyperslab give numpy\'s matches', async function () {
    if (!haveClient('1.0')) return void console.log(`      ${missingClient('1.0')}`);
    // a rank-26 dataset: h5pyd writes each dimension's slice out, so its select is 105 characters
    const deep = [3, 3, 3, ...Array(23).fill(1)];
    const r = await c.post('/datasets', { type: 'H5T_STD_I16LE', shape: deep, link: { id: (await c.get('/')).json.root, name: 'deep' } });
    expect(r.status, r.text).to.equal(201);
    const flat = Array.from({ length: 27 }, (_, k) => (k * 11) % 27);
    expect((await c.put(`/datasets/${r.json.id}/value`, { value: flat })).status).to.equal(200);
    ids.deep = r.json.id;
    const out = h5pydPython('1.0', srv.url).json(
      `import h5pyd, json, numpy as np
import h5pyd.httpconn as hc
posts = []
orig = hc.HttpConn.POST
def spy(self, req, body=None, format='json', params=None, headers=None):
    if req.endswith('/value') and isinstance(body, dict):
        posts.append(sorted(body.keys()))
    return orig(self, req, body=body, format=format, params=params, headers=headers)
hc.HttpConn.POST = spy
rows = [33, 5, 1, 5, 39, 12, 0, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 2, 30, 31, 32, 34, 35, 36, 37, 38, 19, 18, 17, 16, 15, 14, 13, 11, 10]
with h5pyd.File('/simple.h5', 'r') as f:
    a = f['f2'].__getitem__((rows, slice(10, 70, 3)), query='_ > 100.0 AND _ < 250.0')
    d = f['deep'].__getitem__((slice(0, 2), slice(1, 3), slice(0, 2)), query='_ > 10')
    print(json.dumps([str(a.dtype), a.tolist(), str(d.dtype), d.tolist(), posts]))`,
    );
    const want = pythonJson(`import h5py, numpy as np, sys, json
rows = [33, 5, 1, 5, 39, 12, 0, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 2, 30, 31, 32, 34, 35, 36, 37, 38, 19, 18, 17, 16, 15, 14, 13, 11, 10]
with h5py.File(sys.argv[1], 'r') as f:
    sub = f['f2'][...][rows][:, 10:70:3]
    d = f['deep'][0:2, 1:3, 0:2]
print(json.dumps([sub[(sub > 100) & (sub < 250)].tolist(), d[d > 10].tolist()]))`, [`${srv.root}/simple.h5`], { lockFree: true });
    expect(want[0].length).to.be.greaterThan(50);
    expect(want[1].length).to.be.greaterThan(0);
    expect(out).to.deep.equal(['float32', want[0], 'int16', want[1], [['query', 'select'], ['query', 'select']]]);
  });
});
