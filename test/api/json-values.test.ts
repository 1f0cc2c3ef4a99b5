/**
 * Large JSON value reads on the default page size: one page (4 MiB of float32) whose text (about
 * 8 MB) is sent as the value writer's chunks with a Content-Length, not copied into one buffer.
 */
import { expect } from 'chai';
import { float32ToStringSlow } from '../../src/codec/float.js';
import { valueToJson } from '../../src/codec/json.js';
import { parseType } from '../../src/codec/types.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { pythonJson } from '../helpers/python.js';

describe('JSON value reads of one large page', function () {
  this.timeout(120000);
  let srv: TestServer;
  let c: Client;
  let id: string;
  const rows = 1000;
  const cols = 700;
  const n = rows * cols; // 2.8 MB of float32: one page
  const bits = new Uint32Array(n);
  let s = 99;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const b = (Math.imul(s ^ (s >>> 13), 0x5bd1e995) ^ (i * 2654435761)) >>> 0;
    bits[i] = (b & 0x7f800000) === 0x7f800000 ? b & 0xbfffffff : b; // finite, all magnitudes
  }
  const special: [number, number][] = [
    [0, 0x7fc00000], // NaN
    [1, 0x7f800000], // Infinity
    [2, 0xff800000], // -Infinity
    [3, 0x80000000], // -0
    [4, 0],
    [5, 1], // smallest subnormal
    [n - 1, 0x7f7fffff], // largest finite
  ];
  for (const [i, b] of special) bits[i] = b;
  const wire = Buffer.from(bits.buffer);

  before(async () => {
    srv = await startServer({ root: tempRoot() });
    c = new Client(srv.url, '/j.h5');
    expect((await c.put('/')).status).to.equal(201);
    const root = (await c.get('/')).json.root;
    id = (await c.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [rows, cols], link: { id: root, name: 'd' } })).json.id;
    const w = await c.request('PUT', `/datasets/${id}/value`, { raw: wire, headers: { 'content-type': 'application/octet-stream' } });
    expect(w.status, w.text).to.equal(200);
  });
  after(async () => srv.stop());

  /** Parts of JSON values formatted on the value threads so far (metrics). */
  async function threadParts(): Promise<number> {
    const m = /^h5store_json_thread_parts_total (\d+)/m.exec((await c.get('/metrics')).text);
    return Number(m?.[1] ?? NaN);
  }

  it('answers with a Content-Length and the values h5py reads, each in its shortest form', async () => {
    const before = await threadParts();
    // identity: the framing of the uncompressed answer (compressed answers: test/api/compression.test.ts)
    const r = await c.get(`/datasets/${id}/value`, {}, { 'accept-encoding': 'identity' });
    expect(r.status).to.equal(200);
    // formatted on the value threads, a part per thread, off the main thread (issue #9 target 5)
    expect((await threadParts()) - before, 'parts formatted on the value threads').to.be.at.least(1);
    expect(r.headers.get('content-length')).to.equal(String(r.body.length));
    expect(r.headers.get('transfer-encoding')).to.equal(null);
    expect(r.body.length).to.be.above(4 << 20); // several of the writer's 1 MiB chunks
    const text = r.body.toString('utf8');
    expect(text.startsWith('{"value":[[')).to.equal(true);
    const valueText = text.slice('{"value":'.length, text.indexOf(',"hrefs":'));
    expect(valueText).to.equal(valueToJson(wire, parseType('H5T_IEEE_F32LE'), [rows, cols]));
    expect(JSON.parse(text.slice(text.indexOf(',"hrefs":') + 1, -1).replace(/^"hrefs":/, ''))).to.be.an('array');

    const py: number[] = (pythonJson(
      `import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
print(json.dumps(f['d'][...].view('<u4').ravel().tolist()))`,
      [`${srv.root}/j.h5`],
      { lockFree: true },
    ) as (number | bigint)[]).map(Number);
    expect(py.length).to.equal(n);
    // (not r.json: its parser keeps integer literals beyond 2^53 exact, as bigints)
    const flat = (JSON.parse(valueText.replace(/-?Infinity|NaN/g, (x) => `"${x}"`)) as (number | string)[][]).flat().map(Number);
    expect(flat.length).to.equal(n);
    const f32 = new Float32Array(1);
    const u32 = new Uint32Array(f32.buffer);
    let mismatches = 0;
    for (let i = 0; i < n; i++) {
      f32[0] = flat[i];
      if (u32[0] !== py[i] && !(Number.isNaN(flat[i]) && (py[i] & 0x7fffff) !== 0 && (py[i] & 0x7f800000) === 0x7f800000)) mismatches++;
    }
    expect(mismatches).to.equal(0);
    expect(flat.slice(0, 5)).to.deep.equal([NaN, Infinity, -Infinity, -0, 0]);

    // the number texts are the reference search's, on a sample
    const tokens = valueText.replace(/[[\]]/g, '').split(',');
    for (let i = 0; i < n; i += 97) {
      f32[0] = 0;
      u32[0] = bits[i];
      const v = f32[0];
      if (Number.isFinite(v)) expect(tokens[i]).to.equal(float32ToStringSlow(v));
    }
  });

  it('ignore_nan=1 gives null for the non-finite values in the chunked answer', async () => {
    const r = await c.get(`/datasets/${id}/value`, { ignore_nan: 1 }, { 'accept-encoding': 'identity' });
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-length')).to.equal(String(r.body.length));
    expect((r.json.value as number[][])[0].slice(0, 5)).to.deep.equal([null, null, null, -0, 0]);
  });

  it('a client that accepts gzip gets the same text compressed (fetch decodes it)', async () => {
    const plain = await c.get(`/datasets/${id}/value`, {}, { 'accept-encoding': 'identity' });
    const r = await c.get(`/datasets/${id}/value`, {}, { 'accept-encoding': 'gzip' });
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-encoding')).to.equal('gzip');
    expect(r.body.equals(plain.body)).to.equal(true);
  });
});
