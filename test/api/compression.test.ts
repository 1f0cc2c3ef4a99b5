/**
 * Compressed answers (issue #28 item 9): JSON of at least `compressMinBytes` goes brotli or gzip
 * to clients that accept it and decodes to the same text; small answers, binary values and file
 * downloads are never compressed; `compressMinBytes: 0` turns it off.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { PYTHON } from '../helpers/python.js';
import { type TestServer, startServer, tempRoot } from '../helpers/server.js';

/** A GET with Accept-Encoding, the body as sent (node's http leaves it encoded). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => parts.push(b));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      })
      .on('error', reject);
  });
}

const decode = (r: { headers: http.IncomingHttpHeaders; body: Buffer }) =>
  r.headers['content-encoding'] === 'br' ? zlib.brotliDecompressSync(r.body) : r.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(r.body) : r.body;

describe('compressed answers (issue #28 item 9)', function () {
  this.timeout(120_000);
  let srv: TestServer;
  let off: TestServer;
  let value: string;
  let small: string;

  before(async () => {
    const root = tempRoot('h5store-compress-');
    execFileSync(PYTHON, ['-c', "import h5py, numpy as np, sys\nwith h5py.File(sys.argv[1], 'w') as f: f['frame'] = (np.arange(256 * 256, dtype='<f4') / 7).reshape(256, 256)", path.join(root, 'frame.h5')]);
    srv = await startServer({ root });
    off = await startServer({ root, env: { H5STORE_COMPRESS_MIN_BYTES: '0' } });
    const dom = (await (await fetch(`${srv.url}/?domain=/frame.h5`)).json()) as { root: string };
    const links = (await (await fetch(`${srv.url}/groups/${dom.root}/links?domain=/frame.h5`)).json()) as { links: { id: string }[] };
    value = `/datasets/${links.links[0]!.id}/value?domain=/frame.h5`;
    small = '/?domain=/frame.h5';
  });
  after(async () => {
    await srv?.stop();
    await off?.stop();
  });

  it('a large JSON value: br or gzip as the client prefers, the same text decoded, Vary: Accept-Encoding', async () => {
    const plain = await rawGet(srv.url + value, {});
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.body.length).to.be.above(200_000);
    for (const [accept, want] of [
      ['gzip, deflate, br', 'br'],
      ['gzip, deflate', 'gzip'],
      ['br;q=0.1, gzip', 'gzip'],
      ['identity', undefined],
    ] as const) {
      const r = await rawGet(srv.url + value, { 'accept-encoding': accept });
      expect(r.status).to.equal(200);
      expect(r.headers['content-encoding'], accept).to.equal(want);
      expect(decode(r).equals(plain.body), accept).to.equal(true);
      if (want) {
        expect(r.headers.vary).to.include('Accept-Encoding');
        expect(r.body.length, `${accept}: compressed`).to.be.below(plain.body.length / 2);
      }
    }
  });

  it('small answers, binary values, h5grove binary and file downloads are not compressed', async () => {
    const s = await rawGet(srv.url + small, { 'accept-encoding': 'gzip, br' });
    expect(s.status).to.equal(200);
    expect(s.headers['content-encoding']).to.equal(undefined);
    expect(s.headers.vary ?? '').to.not.include('Accept-Encoding');
    const b = await rawGet(srv.url + value, { 'accept-encoding': 'gzip, br', accept: 'application/octet-stream' });
    expect(b.headers['content-type']).to.equal('application/octet-stream');
    expect(b.headers['content-encoding']).to.equal(undefined);
    expect(b.body.length).to.equal(256 * 256 * 4);
    const g = await rawGet(`${srv.url}/h5grove/data/?file=frame.h5&path=/frame&format=bin`, { 'accept-encoding': 'gzip, br' });
    expect(g.headers['content-encoding']).to.equal(undefined);
    expect(g.body.length).to.equal(256 * 256 * 4);
    const f = await rawGet(`${srv.url}/file?domain=/frame.h5`, { 'accept-encoding': 'gzip, br' });
    expect(f.headers['content-encoding']).to.equal(undefined);
    const j = await rawGet(`${srv.url}/h5grove/data/?file=frame.h5&path=/frame`, { 'accept-encoding': 'gzip' });
    expect(j.headers['content-encoding'], 'h5grove JSON is compressed').to.equal('gzip');
  });

  it('compressMinBytes 0: never compressed', async () => {
    const r = await rawGet(off.url + value, { 'accept-encoding': 'gzip, br' });
    expect(r.status).to.equal(200);
    expect(r.headers['content-encoding']).to.equal(undefined);
  });
});
