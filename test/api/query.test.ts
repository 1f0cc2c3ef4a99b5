/**
 * query= on one-dimensional compound tables: both scan paths (whole fixed-size rows; columns for
 * compounds with variable-length fields), string paddings, big-endian fields, fields=, Limit,
 * select=, and the result shape [index, ...fields] (wire-reference 2.4).
 */
import { expect } from 'chai';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { python } from '../helpers/python.js';

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
    await new Promise((r) => setTimeout(r, 2500));
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

  it('rejects bad queries and non-table datasets with 400', async () => {
    expect((await c.get(`/datasets/${ids.nullpad}/value`, { query: 'nosuch > 1' })).status).to.equal(400);
    expect((await c.get(`/datasets/${ids.nullpad}/value`, { query: "temp == 'x'" })).status).to.equal(400);
    const plain = (await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3] })).json.id;
    expect((await c.get(`/datasets/${plain}/value`, { query: 'x > 1' })).status).to.equal(400);
  });
});
