/**
 * libhdf5 allocates the memory of every variable-length element it reads (strings, sequences,
 * and those inside them); the store gives it back after each read (`H5Dvlen_reclaim`,
 * hdf5/datasetIo.ts and attributeIo.ts), the nested ones too (issue #25). A vlen of vlen strings
 * (1,000 strings of 50-150 bytes: ~0.13 MiB of libhdf5 memory a read) and an attribute of half
 * of it, each read 1,000 times: a leak would grow the process by ~190 MiB (measured with the
 * reclaim of reads taken out); without one it grows by a few MiB.
 */
import { expect } from 'chai';
import path from 'node:path';
import { python } from '../helpers/python.js';
import { type TempStore, tempStore } from '../helpers/store.js';

describe('vlen memory is given back after each read (nested vlens included)', function () {
  this.timeout(180000);
  let t: TempStore;
  before(() => {
    t = tempStore();
    python(
      `import h5py, numpy as np, sys
vs = h5py.string_dtype()
with h5py.File(sys.argv[1], 'w') as f:
    def rows(n):
        a = np.empty(n, dtype=object)
        for i in range(n): a[i] = np.array([('%d' % (i + k)) * 50 for k in range(5)], dtype=object)
        return a
    d = f.create_dataset('vvs', (200,), dtype=h5py.vlen_dtype(vs))
    for i, r in enumerate(rows(200)): d[i] = r
    f.attrs.create('vvs', rows(100), dtype=h5py.vlen_dtype(vs))`,
      [path.join(t.root, 'm.h5')],
    );
  });
  after(() => t?.close());

  it('1,000 reads of a dataset and 1,000 of an attribute leave the process no more than 150 MiB larger', async () => {
    const store = t.store;
    const id = (await store.lookupPath('/m.h5', '/vvs')).json.id as string;
    const root = await store.rootId('/m.h5');
    const readOnce = async () => {
      const source = await store.readValues('/m.h5', id, {}, { kind: 'json' });
      let bytes = 0;
      try {
        for (let r = await source.next(); !r.done; r = await source.next()) for (const b of r.value) bytes += b.length;
      } finally {
        await source.close();
      }
      return bytes;
    };
    const first = await readOnce();
    expect(first).to.be.greaterThan(200 * 5 * 50);
    for (let i = 0; i < 50; i++) await readOnce(); // the allocator's and V8's steady state
    const attr = await store.readAttributeValue('/m.h5', 'group', root, 'vvs');
    expect(attr.type.class).to.equal('H5T_VLEN');
    global.gc?.();
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 1000; i++) {
      expect(await readOnce()).to.equal(first);
      await store.readAttributeValue('/m.h5', 'group', root, 'vvs');
    }
    global.gc?.();
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    expect(grown, `RSS grew by ${grown.toFixed(1)} MiB`).to.be.below(150);
  });
});
