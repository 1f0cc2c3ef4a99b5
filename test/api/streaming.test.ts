/**
 * Paged, streamed value reads and spooled writes: a server with tiny pages (64 KiB), pacing on,
 * and a low spool threshold, so every path of the streaming code runs on small data.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { valueToJson } from '../../src/codec/json.js';
import { parseType } from '../../src/codec/types.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { python, pythonJson } from '../helpers/python.js';

const PAGE = 64 * 1024;

describe('streamed reads and spooled writes', function () {
  this.timeout(120000);
  let srv: TestServer;
  let c: Client;
  let id: string;
  let chunkedId: string;
  const n = 300_000; // float32: 1.2 MB, ~18 pages
  const values = Float32Array.from({ length: n }, (_, i) => (i % 977) * 0.5 - 100);

  before(async () => {
    srv = await startServer({
      root: tempRoot(),
      env: {
        H5STORE_PAGE_BYTES: String(PAGE),
        H5STORE_MAX_STREAM_BYTES_PER_SEC: String(50_000_000),
        H5STORE_SPOOL_BODY_BYTES: String(100_000),
        H5STORE_MAX_JSON_VALUE_BYTES: String(4_000_000),
      },
    });
    c = new Client(srv.url, '/s.h5');
    expect((await c.put('/')).status).to.equal(201);
    const root = (await c.get('/')).json.root;
    id = (await c.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [600, 500], link: { id: root, name: 'f' } })).json.id;
    chunkedId = (
      await c.post('/datasets', {
        type: 'H5T_IEEE_F32LE',
        shape: [600, 500],
        maxdims: [0, 500],
        creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [37, 100] }, filters: ['shuffle', { class: 'H5Z_FILTER_DEFLATE', level: 1 }] },
        link: { id: root, name: 'z' },
      })
    ).json.id;
  });
  after(async () => srv.stop());

  const body = () => Buffer.from(values.buffer, values.byteOffset, values.byteLength);

  it('writes a body larger than the spool threshold (spooled, written page by page)', async () => {
    for (const d of [id, chunkedId]) {
      const r = await c.request('PUT', `/datasets/${d}/value`, { raw: body(), headers: { 'content-type': 'application/octet-stream' } });
      expect(r.status, r.text).to.equal(200);
    }
  });

  it('takes bodies without Content-Length (chunked), in memory and spooled', async () => {
    const send = (buf: Buffer, select?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(c.url(`/datasets/${id}/value`, { select }), { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        for (let o = 0; o < buf.length; o += 10_000) req.write(buf.subarray(o, o + 10_000));
        req.end();
      });
    const small = Buffer.from(new Float32Array([1.5, 2.5, 3.5, 4.5]).buffer);
    expect(await send(small, '[0:1,0:4]')).to.equal(200);
    expect((await c.get(`/datasets/${id}/value`, { select: '[0:1,0:4]' })).json.value).to.deep.equal([[1.5, 2.5, 3.5, 4.5]]);
    expect(await send(body())).to.equal(200); // 1.2 MB > spool threshold of 100 kB
    const back = await c.get(`/datasets/${id}/value`, { select: '[0:1,0:4]' });
    expect(back.json.value).to.deep.equal([Array.from(values.subarray(0, 4))]);
  });

  it('refuses a spooled body of the wrong size and writes nothing', async () => {
    const short = body().subarray(0, body().length - 4);
    const r = await c.request('PUT', `/datasets/${id}/value`, { raw: short, headers: { 'content-type': 'application/octet-stream' } });
    expect(r.status).to.equal(400);
    const back = await c.get(`/datasets/${id}/value`, { select: '[599:600,496:500]' });
    expect(back.json.value).to.deep.equal([Array.from(values.subarray(n - 4))]);
  });

  it('streams multi-page binary reads, several on one keep-alive connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let rep = 0; rep < 3; rep++) {
        for (const d of [id, chunkedId]) {
          const buf = await new Promise<Buffer>((resolve, reject) => {
            http.get(c.url(`/datasets/${d}/value`), { agent, headers: { accept: 'application/octet-stream' } }, (res) => {
              expect(res.statusCode).to.equal(200);
              expect(res.headers['content-length']).to.equal(String(n * 4));
              const parts: Buffer[] = [];
              res.on('data', (b: Buffer) => parts.push(b));
              res.on('end', () => resolve(Buffer.concat(parts)));
              res.on('error', reject);
            });
          });
          expect(buf.equals(body())).to.equal(true);
        }
      }
    } finally {
      agent.destroy();
    }
  });

  it('streams multi-page JSON (with a strided selection) that matches h5py', async () => {
    const r = await c.get(`/datasets/${chunkedId}/value`, { select: '[1:600:2,3:500:3]' });
    expect(r.status).to.equal(200);
    expect(r.json.value).to.have.length(300);
    const py = pythonJson(
      `import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
print(json.dumps(f['z'][1:600:2, 3:500:3].astype(float).tolist()))`,
      [`${srv.root}/s.h5`],
      { lockFree: true },
    );
    const f = (x: number) => Math.fround(x);
    expect(r.json.value.map((row: number[]) => row.map(f))).to.deep.equal(py.map((row: number[]) => row.map(f)));
  });

  // A JSON value above 256 KiB that streams in pages (64 KiB here): each page is formatted on
  // the value threads from its first element (pages end mid-row), the same text as one writer.
  it('streams a multi-page JSON value formatted on the value threads: the same text as one writer', async () => {
    const parts = async () => Number(/^h5store_json_thread_parts_total (\d+)/m.exec((await c.get('/metrics')).text)?.[1] ?? NaN);
    for (const [d, select] of [
      [id, undefined],
      [chunkedId, '[3:597,1:499]'],
    ] as const) {
      const bin = await c.get(`/datasets/${d}/value`, { select }, { accept: 'application/octet-stream' });
      expect(bin.status).to.equal(200);
      const shape = select ? [594, 498] : [600, 500];
      const before = await parts();
      const r = await c.get(`/datasets/${d}/value`, { select, ignore_nan: '1' });
      expect(r.status).to.equal(200);
      expect(r.headers.get('transfer-encoding')).to.equal('chunked'); // streamed, not one page
      const text = r.body.toString('utf8');
      expect(text.slice('{"value":'.length, text.indexOf(',"hrefs":'))).to.equal(valueToJson(bin.body, parseType('H5T_IEEE_F32LE'), shape, { ignoreNan: true }));
      // a part per page (1.2 MB in pages of 64 KiB, or of whole chunk rows of 37 rows, 74 KB)
      expect((await parts()) - before, 'pages formatted on the value threads').to.be.at.least(15);
    }
  });

  it('answers a JSON read above maxJsonValueBytes with 413 naming binary', async () => {
    const big = (await c.post('/datasets', { type: 'H5T_STD_U8LE', shape: [5_000_000] })).json.id;
    const r = await c.get(`/datasets/${big}/value`);
    expect(r.status).to.equal(413);
    expect(r.json.message).to.match(/binary/);
  });

  it('leaves no HDF5 ids open', async () => {
    await new Promise((r) => setTimeout(r, 200));
    expect((await c.get('/info')).json.open_hdf5_ids).to.equal(0);
  });
});

describe('a dataset whose filter plugin is missing', function () {
  this.timeout(60000);
  let srv: TestServer;
  it('answers 415 naming the filter and its id (and metadata still works)', async () => {
    const root = tempRoot();
    // h5py has LZF built in; the server is started with no plugin directory, so it cannot decode it.
    python(
      `import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('z', data=np.arange(1000), chunks=(100,), compression='lzf')`,
      [`${root}/lzf.h5`],
    );
    srv = await startServer({ root, env: { HDF5_PLUGIN_PATH: '/nonexistent-plugin-dir' } });
    const c = new Client(srv.url, '/lzf.h5');
    const rootId = (await c.get('/')).json.root;
    const id = (await c.get(`/groups/${rootId}/links/z`)).json.link.id;
    const meta = await c.get(`/datasets/${id}`);
    expect(meta.status).to.equal(200);
    expect(meta.json.creationProperties.filters[0]).to.include({ id: 32000, name: 'lzf' });
    for (const accept of ['application/json', 'application/octet-stream']) {
      const r = await c.get(`/datasets/${id}/value`, undefined, { accept });
      expect(r.status).to.equal(415);
      expect(r.json.message).to.match(/lzf \(id 32000\)/);
    }
    await srv.stop();
  });
});

/**
 * `curl args` (a client reading as fast as the kernel gives, as a real one does; a reader in
 * this process would itself slow the stream down and hide a stall), and `GET /about` one after
 * the other on one keep-alive connection until curl exits: curl's standard output, the small
 * requests answered before it ended, the worst of their times and the whole time (ms).
 */
async function smallRequestsDuring(serverUrl: string, args: string[], pauseMs = 0): Promise<{ out: Buffer; answeredDuring: number; worst: number; total: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const curl = spawn('curl', args);
    const parts: Buffer[] = [];
    curl.stdout.on('data', (b: Buffer) => parts.push(b));
    let ended = false;
    const done = new Promise<void>((resolve) => curl.once('exit', () => ((ended = true), resolve())));
    const about = () =>
      new Promise<number>((resolve, reject) => {
        http.get(`${serverUrl}/about`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    let answeredDuring = 0;
    let worst = 0;
    const t0 = performance.now();
    while (!ended) {
      const s = performance.now();
      expect(await about()).to.equal(200);
      worst = Math.max(worst, performance.now() - s);
      if (!ended) answeredDuring++;
    }
    const total = performance.now() - t0;
    await done;
    return { out: Buffer.concat(parts), answeredDuring, worst, total };
  } finally {
    agent.destroy();
  }
}

describe('other requests while a large read streams (default settings)', function () {
  this.timeout(60000);
  let srv: TestServer;
  before(async () => {
    srv = await startServer({ root: tempRoot() });
  });
  after(async () => srv?.stop());

  // Regression: a write that the kernel takes at once reports `drain` from process.nextTick, so
  // a stream that only awaited `drain` ran from its first page to its last in one macrotask and
  // every other request waited for its end (measured: a GET /about took the whole 256 MiB read).
  it('answers small requests between the pages of a streamed binary read', async () => {
    const c = new Client(srv.url, '/big.h5');
    expect((await c.put('/')).status).to.equal(201);
    const root = (await c.get('/')).json.root;
    // 256 MiB of fill values: read page by page like any other contiguous dataset
    const id = (await c.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [4096, 16384], link: { id: root, name: 'f' } })).json.id;
    const { out, answeredDuring, worst, total } = await smallRequestsDuring(
      srv.url,
      ['-s', '-S', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '-H', 'Accept: application/octet-stream', c.url(`/datasets/${id}/value`)],
      5,
    );
    expect(out.toString()).to.equal(`200 ${4096 * 16384 * 4}`);
    // before the fix: 1-4 answered, the worst waiting 130-210 ms of a 230-260 ms stream
    expect(answeredDuring, 'small requests answered while the 256 MiB read was still being sent').to.be.at.least(10);
    expect(worst, `worst small request (the stream took ${total.toFixed(0)} ms)`).to.be.below(total / 2);
  });

  // Regression: a JSON value of one page (up to 4 MiB of data) was formatted in one go before
  // the status line (~70 ms for 1 Mi float32, every other request waiting); it was then
  // formatted in slices, one turn of the event loop each, and is now formatted on the value
  // threads, a part per thread. The parts do not fall on row boundaries here, and the value
  // holds NaN, +-Infinity and -0.
  it('answers small requests while a one-page JSON value is formatted, and the text is right', async () => {
    const c = new Client(srv.url, '/json.h5');
    expect((await c.put('/')).status).to.equal(201);
    const [rows, cols] = [1000, 1030]; // 4.12 MB of float32: one page
    const values = Float32Array.from({ length: rows * cols }, () => Math.random() * 1000 - 500);
    values.set([NaN, Infinity, -Infinity, -0, 0, 1e-45, 3.4028234663852886e38], 32766);
    const id = (await c.post('/datasets', { type: 'H5T_IEEE_F32LE', shape: [rows, cols] })).json.id;
    const put = await c.request('PUT', `/datasets/${id}/value`, { raw: Buffer.from(values.buffer), headers: { 'Content-Type': 'application/octet-stream' } });
    expect(put.status).to.equal(200);
    const r = await smallRequestsDuring(srv.url, ['-s', '-S', '-w', '\n%{http_code}', c.url(`/datasets/${id}/value`)]);
    const { answeredDuring, worst, total } = r;
    const out = r.out.toString();
    const cut = out.lastIndexOf('\n');
    expect(out.slice(cut + 1)).to.equal('200');
    const got = JSON.parse(out.slice(0, cut).replace(/NaN/g, '"NaN"').replace(/-?Infinity/g, (m) => `"${m}"`)).value as (number | string)[][];
    expect(got).to.have.length(rows);
    let mismatches = 0;
    for (let i = 0; i < rows; i++) {
      expect(got[i]).to.have.length(cols);
      for (let j = 0; j < cols; j++) {
        const v = values[i * cols + j];
        const g = got[i][j];
        // shortest round-trip float32 text: reads back to the same float32 (and -0 stays -0)
        const same = typeof g === 'string' ? String(v) === g : Object.is(Math.fround(g), v);
        if (!same && mismatches++ < 3) expect(g, `value [${i},${j}]`).to.equal(v);
      }
    }
    expect(mismatches).to.equal(0);
    // before the fix: 6-11 answered, the worst waiting 74-83% of the whole read (the text was
    // formatted in one go); in slices: 32-33, the worst 20-25% (the first slice runs cold); on
    // the value threads: 378-478, the worst 27-32 ms of 850-980 (3-4%)
    expect(answeredDuring, 'small requests answered during the JSON read').to.be.at.least(15);
    expect(worst, `worst small request (the read took ${total.toFixed(0)} ms)`).to.be.below(total * 0.6);
  });
});
