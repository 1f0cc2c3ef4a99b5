/**
 * Points on every layout (issue 7 item 2): libhdf5 1.10.8 crashed the process on a repeated
 * point of a virtual dataset and failed on unordered points. Points (JSON and binary uint64) and
 * coordinate lists of `select=` are validated, sorted and de-duplicated before libhdf5 sees them;
 * results come back in the order asked, repeats included, and a point written twice gets the
 * value given last. Each case runs on contiguous, chunked, compact, virtual (same file and other
 * files, 1-D and 2-D) and variable-length string datasets written by h5py, and is compared with
 * h5py's own reading of the same elements.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { python, pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';
import { bytes, postBinary, putBinary } from '../helpers/writekit.js';

const MAKE = `
import sys, h5py, numpy as np
root = sys.argv[1]
grid = np.arange(20, dtype='<i4').reshape(4, 5) * 10
with h5py.File(root + '/src.h5', 'w') as f:
    f.create_dataset('a', data=grid[:2])
    f.create_dataset('b', data=grid[2:])
with h5py.File(root + '/points.h5', 'w', libver='latest') as f:
    f.create_dataset('contiguous', data=grid)
    f.create_dataset('chunked', data=grid, chunks=(2, 2), compression='gzip')
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    sid = h5py.h5s.create_simple((4, 5))
    ds = h5py.h5d.create(f.id, b'compact', h5py.h5t.STD_I32LE, sid, dcpl=dcpl)
    ds.write(h5py.h5s.ALL, h5py.h5s.ALL, grid)
    f.create_dataset('half', data=grid[:2])
    lay = h5py.VirtualLayout(shape=(4, 5), dtype='<i4')
    lay[0:2] = h5py.VirtualSource('.', 'half', shape=(2, 5))
    lay[2:4] = h5py.VirtualSource('src.h5', 'b', shape=(2, 5))
    f.create_virtual_dataset('virtual', lay, fillvalue=-1)
    lay1 = h5py.VirtualLayout(shape=(20,), dtype='<i4')
    f.create_dataset('flat', data=grid.reshape(20))
    lay1[0:20] = h5py.VirtualSource('.', 'flat', shape=(20,))
    f.create_virtual_dataset('virtual1d', lay1, fillvalue=-1)
    f.create_dataset('strings', data=np.array(['s%d' % i + 'x' * i for i in range(20)], dtype=object), dtype=h5py.string_dtype())
`;

const READ = `
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
ds = f[sys.argv[2]]
pts = json.loads(sys.argv[3])
out = []
for p in pts:
    v = ds[tuple(p)] if isinstance(p, list) else ds[p]
    out.append(v.decode() if isinstance(v, bytes) else int(v))
print(json.dumps(out))
`;

const LAYOUTS2D = ['contiguous', 'chunked', 'compact', 'virtual'];

describe('points on every layout: sorted and de-duplicated for libhdf5, answered in the order asked', function () {
  this.timeout(120000);
  let srv: TestServer;
  let root: string;
  let c: Client;
  const ids: Record<string, string> = {};
  const file = () => path.join(root, 'pts', 'points.h5');
  const h5pyRead = (name: string, pts: unknown[]) => pythonJson(READ, [file(), name, JSON.stringify(pts)], { lockFree: true });

  before(async () => {
    root = tempRoot('h5store-points-');
    fs.mkdirSync(path.join(root, 'pts'));
    python(MAKE, [path.join(root, 'pts')]);
    srv = await startServer({ root });
    c = new Client(srv.url, '/pts/points.h5');
    const rootId = (await c.get('/')).json.root;
    for (const l of (await c.get(`/groups/${rootId}/links`)).json.links) ids[l.title] = l.id;
  });
  after(async () => {
    await srv?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const cases2d: [string, number[][]][] = [
    ['a repeated point', [[0, 0], [0, 0]]],
    ['points out of order', [[3, 4], [0, 1], [2, 2], [1, 0]]],
    ['repeats and disorder across sources', [[3, 4], [0, 0], [3, 4], [1, 2], [0, 0], [2, 0], [3, 4]]],
    ['already sorted', [[0, 1], [1, 1], [2, 3]]],
  ];

  for (const layout of LAYOUTS2D) {
    describe(layout, () => {
      for (const [what, pts] of cases2d) {
        it(`${what}: JSON points, binary points and a coordinate-list select agree with h5py`, async () => {
          const want = h5pyRead(layout, pts);
          const j = await c.post(`/datasets/${ids[layout]}/value`, { points: pts });
          expect(j.status, j.text).to.equal(200);
          expect(j.json.value).to.deep.equal(want);
          const b = await postBinary(c, `/datasets/${ids[layout]}/value`, bytes.coords(...pts.flat()));
          expect(b.status, b.text).to.equal(200);
          expect(Array.from(new Int32Array(b.body.buffer, b.body.byteOffset, pts.length))).to.deep.equal(want);
          // select=[[r...],[c...]] pairs the lists: the same points
          const sel = `[[${pts.map((p) => p[0]).join(',')}],[${pts.map((p) => p[1]).join(',')}]]`;
          const s = await c.get(`/datasets/${ids[layout]}/value`, { select: sel });
          expect(s.status, s.text).to.equal(200);
          expect(s.json.value).to.deep.equal(want);
        });
      }
      it('a coordinate list with repeats in one dimension and a slice in the other', async () => {
        const s = await c.get(`/datasets/${ids[layout]}/value`, { select: '[[3,0,3],1:3]' });
        expect(s.status, s.text).to.equal(200);
        expect(s.json.value).to.deep.equal([
          h5pyRead(layout, [[3, 1], [3, 2]]),
          h5pyRead(layout, [[0, 1], [0, 2]]),
          h5pyRead(layout, [[3, 1], [3, 2]]),
        ]);
      });
    });
  }

  it('a 1-D virtual dataset: repeated and unordered points', async () => {
    const pts = [5, 5, 19, 0, 5, 3];
    const want = h5pyRead('virtual1d', pts);
    for (const body of [{ points: pts }, { points: pts.map((p) => [p]) }]) {
      const r = await c.post(`/datasets/${ids.virtual1d}/value`, body);
      expect(r.status, r.text).to.equal(200);
      expect(r.json.value).to.deep.equal(want);
    }
  });

  it('variable-length strings: repeated and unordered points (JSON and binary)', async () => {
    const pts = [7, 2, 7, 0, 19];
    const want = h5pyRead('strings', pts);
    const r = await c.post(`/datasets/${ids.strings}/value`, { points: pts });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.value).to.deep.equal(want);
    const b = await postBinary(c, `/datasets/${ids.strings}/value`, bytes.coords(...pts));
    expect(b.status).to.equal(200);
    expect(b.body.equals(Buffer.concat(want.map((s: string) => bytes.vlen(s))))).to.equal(true);
  });

  it('invalid points are refused with 400 before libhdf5 sees them (huge, negative, wrong rank, not integers)', async () => {
    const bad: unknown[] = [[[0, 1e16]], [[-1, 0]], [[0]], [[0, 1.5]], [['0', 1]], [[0, 12345678901234567890n]], []];
    for (const pts of bad) {
      const r = await c.request('POST', `/datasets/${ids.virtual}/value`, {
        raw: JSON.stringify({ points: pts }, (_k, v) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(\d+)@@"/g, '$1'),
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status, `${JSON.stringify(pts, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}: ${r.text}`).to.equal(400);
      expect(r.json.message).to.match(/points/i);
    }
    const b = await postBinary(c, `/datasets/${ids.virtual}/value`, bytes.coords(0, 5));
    expect(b.status).to.equal(400);
  });

  it('writes: a point given twice gets the value given last; unordered points land where asked (every layout)', async () => {
    for (const layout of LAYOUTS2D) {
      const w = await c.put(`/datasets/${ids[layout]}/value`, { points: [[3, 3], [0, 4], [3, 3], [1, 1]], value: [-1, -2, -3, -4] });
      expect(w.status, `${layout}: ${w.text}`).to.equal(200);
      const bw = await putBinary(c, `/datasets/${ids[layout]}/value`, bytes.i32le(-5, -6, -7), { select: '[[2,0,2],[0,0,0]]' });
      expect(bw.status, `${layout}: ${bw.text}`).to.equal(200);
      const r = await c.post(`/datasets/${ids[layout]}/value`, { points: [[3, 3], [0, 4], [1, 1], [2, 0], [0, 0]] });
      expect(r.json.value, layout).to.deep.equal([-3, -2, -4, -7, -6]);
    }
    // h5py sees the same once the server has let go of the file (idle close)
    await untilServerClosed(srv, path.join(root, 'pts'));
    for (const layout of LAYOUTS2D) expect(h5pyRead(layout, [[3, 3], [0, 4], [1, 1], [2, 0], [0, 0]]), layout).to.deep.equal([-3, -2, -4, -7, -6]);
  });
});
