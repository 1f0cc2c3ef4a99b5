/**
 * The value source the store hands to HTTP (src/store/values/source.ts), on page sources made
 * here: what a failed page read becomes (`mapError`: the store's 503 for files another program
 * writes, on a streamed value's later pages too), that the file is let go once whatever happens,
 * that pooled pages go back once recycled, h5py's view of array elements and JSON shapes, and
 * the text of empty values (h5grove's empty slices).
 */
import { expect } from 'chai';
import { parseType } from '../../src/codec/types.js';
import { encodeElements } from '../../src/codec/values.js';
import { H5StoreError, internal } from '../../src/errors.js';
import { PagePool } from '../../src/store/values/pagepool.js';
import type { PageSource, ValuePage } from '../../src/store/values/read.js';
import { type ValueFormat, type ValueView, ValueSource, emptyValueSource } from '../../src/store/values/source.js';

const I32 = parseType('H5T_STD_I32LE');

/** A page source of `pages`, failing with `fail` when asked for page `failAt`; counts its stops. */
function pagesOf(pages: ValuePage[], failAt?: number, fail: unknown = new Error('H5Dread failed')): PageSource & { stops: number } {
  let at = 0;
  const src = {
    name: 'libhdf5Pages' as const,
    stops: 0,
    next(): ValuePage | undefined {
      if (at === failAt) throw fail;
      return pages[at++];
    },
    async stop() {
      src.stops++;
    },
  };
  return src;
}

/** Pages of int32 values, `per` to a page, each in a buffer of `pool` when given. */
function int32Pages(values: number[], per: number, pool?: PagePool): ValuePage[] {
  const out: ValuePage[] = [];
  for (let s = 0; s < values.length; s += per) {
    const wire = encodeElements(values.slice(s, s + per), I32);
    if (!pool) out.push({ wire, count: wire.length / 4 });
    else {
      const pooled = pool.take(wire.length);
      wire.copy(pooled);
      out.push({ wire: pooled.subarray(0, wire.length), count: wire.length / 4, pooled });
    }
  }
  return out;
}

const view = (count: number, shape = [count], type = I32, cells = 1): ValueView => ({ type, shape, count, itemSize: 4 / cells, cells });

/** All the text a source gives. */
async function textOf(s: ValueSource): Promise<string> {
  const out: Buffer[] = [];
  for await (const bufs of s) out.push(...bufs);
  return Buffer.concat(out).toString('utf8');
}

describe('ValueSource (store/values/source.ts)', () => {
  const failures: { name: string; failAt: number; fail: unknown }[] = [
    { name: 'the first page of a streamed value', failAt: 0, fail: new Error('H5Dread failed') },
    { name: 'a later page of a streamed value', failAt: 2, fail: new Error('H5Dread failed') },
    { name: 'a later page, an internal H5StoreError', failAt: 1, fail: internal('short read') },
  ];
  for (const c of failures) {
    for (const kind of ['binary', 'json'] as const) {
      it(`${kind}: a failed read of ${c.name} is thrown as mapError makes it, and the file is let go once`, async () => {
        const pages = pagesOf(int32Pages([1, 2, 3, 4, 5, 6, 7, 8], 2), c.failAt, c.fail);
        let released = 0;
        const seen: unknown[] = [];
        const mapped = new H5StoreError('Unavailable', 'the file changed under the read', { retryAfter: 1 });
        const s = new ValueSource(view(8), 32, { kind } as ValueFormat, false, 'libhdf5Pages', pages, undefined, () => released++, {
          mapError: (e) => {
            seen.push(e);
            return mapped;
          },
        });
        let thrown: unknown;
        try {
          for (let i = 0; i <= c.failAt; i++) await s.next();
        } catch (e) {
          thrown = e;
        }
        expect(thrown).to.equal(mapped);
        expect(seen).to.deep.equal([c.fail]);
        expect(released, 'held until closed').to.equal(0);
        await s.close();
        await s.close();
        expect(released).to.equal(1);
        expect(pages.stops).to.equal(1);
      });
    }
  }

  it('without mapError a failure is thrown as it is', async () => {
    const fail = new Error('H5Dread failed');
    const s = new ValueSource(view(4), 16, { kind: 'binary' }, false, 'libhdf5Pages', pagesOf(int32Pages([1, 2, 3, 4], 2), 1, fail), undefined, undefined, {});
    await s.next();
    let thrown: unknown;
    await s.next().catch((e) => (thrown = e));
    expect(thrown).to.equal(fail);
    await s.close();
  });

  it('a source read to its end lets the file go at once; recycled pooled pages go back to the pool once', async () => {
    const pool = new PagePool(64);
    const pages = int32Pages([1, 2, 3, 4, 5, 6], 3, pool);
    let released = 0;
    const s = new ValueSource(view(6), 24, { kind: 'binary' }, false, 'libhdf5Pages', pagesOf(pages), pool, () => released++, {});
    const got: Buffer[] = [];
    for (let r = await s.next(); !r.done; r = await s.next()) got.push(...r.value);
    expect(released).to.equal(1);
    expect(Buffer.concat(got)).to.deep.equal(encodeElements([1, 2, 3, 4, 5, 6], I32));
    for (const b of got) {
      s.recycle(b);
      s.recycle(b);
    }
    // both pages back, each once: the pool hands out exactly those two again
    const again = [pool.take(12), pool.take(12), pool.take(12)];
    expect(again.filter((b) => b === pages[0]!.pooled || b === pages[1]!.pooled)).to.have.length(2);
    await s.close();
    expect(released).to.equal(1);
  });

  const texts: { name: string; view: ValueView; format: ValueFormat; values: number[]; per: number; text: string }[] = [
    { name: 'in the shape of the view', view: view(6, [2, 3]), format: { kind: 'json' }, values: [1, 2, 3, 4, 5, 6], per: 4, text: '[[1,2,3],[4,5,6]]' },
    {
      name: 'array elements: 2 elements of int32[3], pages of one element',
      view: view(6, [2, 3], I32, 3),
      format: { kind: 'json', arrayElements: true },
      values: [1, 2, 3, 4, 5, 6],
      per: 3,
      text: '[[1,2,3],[4,5,6]]',
    },
  ];
  for (const c of texts) {
    it(`JSON text ${c.name}`, async () => {
      // pages count elements read (an array element is one); the view counts its cells
      const pages = int32Pages(c.values, c.per).map((p) => ({ ...p, count: p.count / c.view.cells }));
      const s = new ValueSource(c.view, c.values.length * 4, c.format, false, 'libhdf5Pages', pagesOf(pages), undefined, undefined, {});
      expect(await textOf(s)).to.equal(c.text);
    });
  }

  const empties: { shape: number[]; format: ValueFormat; text: string }[] = [
    { shape: [0], format: { kind: 'json' }, text: '[]' },
    { shape: [0, 3], format: { kind: 'json' }, text: '[]' },
    { shape: [2, 0], format: { kind: 'json' }, text: '[[],[]]' },
    { shape: [2, 0], format: { kind: 'json', shape: [0] }, text: '[]' },
    { shape: [0, 4], format: { kind: 'binary' }, text: '' },
  ];
  for (const c of empties) {
    it(`an empty value of shape ${JSON.stringify(c.shape)} as ${c.format.kind}${c.format.kind === 'json' && c.format.shape ? ' flattened' : ''}: ${JSON.stringify(c.text)}`, async () => {
      const s = emptyValueSource(I32, c.shape, c.format);
      expect(s.count).to.equal(0);
      expect(s.whole).to.equal(true);
      expect(await textOf(s)).to.equal(c.text);
    });
  }

  it('an empty source of a shape with elements is refused (a caller bug)', () => {
    expect(() => emptyValueSource(I32, [2], { kind: 'json' })).to.throw(H5StoreError);
  });
});
