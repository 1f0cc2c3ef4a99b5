/**
 * Huge datasets and what creating them writes (issue #26 item 6; docs/architecture.md
 * "Decisions", `initializer`): an `arange` initializer writes every element into the file at
 * creation (so h5py reads the values too), page by page with other requests answered between
 * pages, and is refused with 413 naming `max_initializer_size` above it, before anything is
 * created (one POST of 10^9 elements wrote an 8 GB file). A fill value never writes the dataset:
 * chunks are allocated when written.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { python } from '../helpers/python.js';
import { type Dom, type Kit, expectStatus, newDomain, startKit } from '../helpers/writekit.js';
import { F64, I32 } from '../helpers/types.js';

const MiB = 1024 * 1024;

/** Values of `path` at `indices` (flat, C order) as h5py reads them from the file. */
function h5pyAt(file: string, p: string, indices: number[]): number[] {
  return JSON.parse(
    python(
      `import h5py, json, sys, numpy as np
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    d = f[sys.argv[2]]
    print(json.dumps([float(d[np.unravel_index(i, d.shape)]) for i in json.loads(sys.argv[3])]))`,
      [file, p, JSON.stringify(indices)],
      { lockFree: true },
    ),
  );
}

describe('initializers and fill values of huge datasets (issue #26 item 6)', function () {
  this.timeout(120_000);
  let kit: Kit;
  let d: Dom;

  before(async () => {
    // 64 MiB instead of 256 MiB, pages of 1 MiB: the fill below takes several pages
    kit = await startKit({ H5STORE_MAX_INITIALIZER_BYTES: String(64 * MiB), H5STORE_PAGE_BYTES: String(MiB) });
    d = await newDomain(kit, 'init');
  });
  after(async () => {
    await kit?.server.stop();
    if (kit) fs.rmSync(kit.server.root, { recursive: true, force: true });
  });

  it('GET / reports max_initializer_size', async () => {
    expect((await d.c.get('/')).json.limits.max_initializer_size).to.equal(64 * MiB);
  });

  it('an arange of 10^9 elements is refused with 413 naming max_initializer_size; nothing is created and the file does not grow', async () => {
    const before = fs.statSync(d.file).size;
    for (const [type, shape] of [
      [F64, [1e9]],
      [I32, [100_000, 10_000]],
      [F64, [3, 1024, 1024, 3]], // 72 MiB, just above
    ] as const) {
      const r = await d.c.post('/datasets', { type, shape, creationProperties: { initializer: ['arange'] }, link: { id: d.root, name: 'huge' } });
      expect(r.status, JSON.stringify(shape)).to.equal(413);
      expect(r.json.message).to.match(/max_initializer_size/);
      expect(r.json.message).to.match(/without an initializer/);
    }
    expectStatus(await d.c.get(`/groups/${d.root}/links/huge`), 404, 'nothing created');
    expect(fs.statSync(d.file).size - before).to.be.below(64 * 1024);
  });

  it('a fill value on 10^9 elements writes no values: 201, the file stays small, h5py and GET read the fill value', async () => {
    const before = fs.statSync(d.file).size;
    const r = await d.c.post('/datasets', { type: F64, shape: [1e9], creationProperties: { fillValue: 2.5 }, link: { id: d.root, name: 'filled' } });
    expectStatus(r, 201, 'fill value');
    expect(fs.statSync(d.file).size - before, 'bytes the creation added').to.be.below(1 * MiB);
    expect((await d.c.get(`/datasets/${r.json.id}/value`, { select: '[999999990:1000000000]' })).json.value).to.deep.equal(Array(10).fill(2.5));
    expect(h5pyAt(d.file, '/filled', [0, 123_456_789, 999_999_999])).to.deep.equal([2.5, 2.5, 2.5]);
  });

  it('an arange within the limit is written into the file page by page (h5py reads it); other requests are answered meanwhile', async () => {
    const n = 6 * MiB; // 48 MiB of float64: 48 pages of 1 MiB
    let answered = 0;
    let creating = true;
    const created = d.c.post('/datasets', { type: F64, shape: [n], creationProperties: { initializer: ['arange', 1, 0.5] }, link: { id: d.root, name: 'ar' } }).finally(() => (creating = false));
    while (creating) {
      const a = await kit.base.get('/about');
      expect(a.status).to.equal(200);
      if (creating) answered++;
    }
    const r = await created;
    expectStatus(r, 201, 'arange of 48 MiB');
    expect(answered, 'GET /about answered while the dataset was filled').to.be.at.least(2);
    expect((await d.c.get(`/datasets/${r.json.id}/value`, { select: `[${n - 3}:${n}]` })).json.value).to.deep.equal([1 + (n - 3) * 0.5, 1 + (n - 2) * 0.5, 1 + (n - 1) * 0.5]);
    expect(h5pyAt(d.file, '/ar', [0, 1, 1_000_003, n - 1])).to.deep.equal([1, 1.5, 1 + 1_000_003 * 0.5, 1 + (n - 1) * 0.5]);
  });
});
