/**
 * Memory of variable-length values is given back after each read, whatever the vlen kind:
 * - libhdf5 allocates every variable-length element it reads (strings, sequences, and those
 *   inside them); the store gives it back after each read (`H5Dvlen_reclaim`, hdf5/datasetIo.ts
 *   and attributeIo.ts), the nested ones too (issue #25);
 * - the values are copied out of that memory without a view of each element (hdf5/lib.ts
 *   `copyMemory`): a `koffi.view` is an external ArrayBuffer whose native bookkeeping Node frees
 *   only on a later turn of the event loop, and these loops never give it one (as one large read
 *   of a server does not): with a view per element, the nested row grew by ~360 MiB.
 * Each row is read 1,000 times (test/helpers/memory.ts `rssGrowthMiB`); a leak of either kind
 * grows the process by more than the bound. Measured (nested, vlen strings, vlen int32 rows):
 * reclaims taken out 205, 162, 181 MiB; a view per element 363, 198, 212 MiB; neither 12, 9, 18 MiB.
 */
import { expect } from 'chai';
import path from 'node:path';
import { rssGrowthMiB } from '../helpers/memory.js';
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
    f.attrs.create('vvs', rows(100), dtype=h5py.vlen_dtype(vs))
    f.create_dataset('vs', data=np.array([('%d' % i) * 50 for i in range(1000)], dtype=object), dtype=vs)
    d = f.create_dataset('vi', (1000,), dtype=h5py.vlen_dtype('<i4'))
    for i in range(1000): d[i] = np.arange(i % 7 + 40, dtype='<i4')`,
      [path.join(t.root, 'm.h5')],
    );
  });
  after(() => t?.close());

  /** The JSON text of the whole of dataset `name` of m.h5, as bytes. */
  const reader = async (name: string) => {
    const store = t.store;
    const id = (await store.lookupPath('/m.h5', `/${name}`)).json.id as string;
    return async () => {
      const source = await store.readValues('/m.h5', id, {}, { kind: 'json' });
      let bytes = 0;
      try {
        for (let r = await source.next(); !r.done; r = await source.next()) for (const b of r.value) bytes += b.length;
      } finally {
        await source.close();
      }
      return bytes;
    };
  };

  it('1,000 reads of a vlen of vlen strings dataset and 1,000 of such an attribute leave the process no more than 150 MiB larger', async () => {
    const store = t.store;
    const readOnce = await reader('vvs');
    const first = await readOnce();
    expect(first).to.be.greaterThan(200 * 5 * 50);
    const root = await store.rootId('/m.h5');
    const attr = await store.readAttributeValue('/m.h5', 'group', root, 'vvs');
    expect(attr.type.class).to.equal('H5T_VLEN');
    const grown = await rssGrowthMiB(async () => {
      expect(await readOnce()).to.equal(first);
      await store.readAttributeValue('/m.h5', 'group', root, 'vvs');
    });
    expect(grown, `RSS grew by ${grown.toFixed(1)} MiB`).to.be.below(150);
  });

  for (const [name, what, least] of [
    ['vs', '1,000 vlen strings of 50-150 bytes', 1000 * 50],
    ['vi', '1,000 vlen sequences of 40-46 int32', 1000 * 40 * 2],
  ] as const) {
    it(`1,000 reads of ${what} leave the process no more than 100 MiB larger`, async () => {
      const readOnce = await reader(name);
      const first = await readOnce();
      expect(first).to.be.greaterThan(least);
      const grown = await rssGrowthMiB(async () => expect(await readOnce()).to.equal(first));
      expect(grown, `RSS grew by ${grown.toFixed(1)} MiB`).to.be.below(100);
    });
  }
});
