/**
 * Limit/Marker paging (src/store/objects/paging.ts), the one implementation behind every listing.
 * Table-driven; the listings themselves are tested over HTTP in test/api.
 */
import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';
import { pageLimit, startAfterExact, startAfterOrdered, takePage, unquoteMarker } from '../../src/store/objects/paging.js';

describe('paging (Limit / Marker)', () => {
  it('unquoteMarker removes one pair of surrounding double quotes only', () => {
    const table: [string, string][] = [
      ['a', 'a'],
      ['"a"', 'a'],
      ['""', ''],
      ['"a', '"a'],
      ['a"', 'a"'],
      ['""a""', '"a"'],
      ['"a\nb"', 'a\nb'],
    ];
    for (const [m, want] of table) expect(unquoteMarker(m), JSON.stringify(m)).to.equal(want);
  });

  it('pageLimit: absent, 0 and negative mean no cap', () => {
    const table: [number | undefined, number][] = [
      [undefined, Infinity],
      [0, Infinity],
      [-3, Infinity],
      [1, 1],
      [1000, 1000],
    ];
    for (const [l, want] of table) expect(pageLimit(l), String(l)).to.equal(want);
  });

  describe('exact markers (links, attributes)', () => {
    const names = ['a', 'b', '"q"', 'c d'];
    const indexOf = (n: string) => names.indexOf(n);
    const table: [string | undefined, number][] = [
      [undefined, 0],
      ['', 0],
      ['a', 1],
      ['"a"', 1], // quoted as h5pyd sends it
      ['c d', 4],
      ['"q"', 3], // a name that has quotes itself matches as given first
      ['q', -1], // ... and not unquoted
    ];
    for (const [m, want] of table) {
      it(`marker ${JSON.stringify(m)} -> ${want < 0 ? '404' : `starts at ${want}`}`, () => {
        if (want < 0) {
          expect(() => startAfterExact(m, indexOf, 'a link of this group'))
            .to.throw(H5StoreError, /Marker "q" is not a link of this group/)
            .with.property('status', 404);
        } else expect(startAfterExact(m, indexOf, 'a link of this group')).to.equal(want);
      });
    }
    it('works with a Map lookup (undefined for missing)', () => {
      const index = new Map(names.map((n, i) => [n, i]));
      expect(startAfterExact('b', (n) => index.get(n), 'x')).to.equal(2);
      expect(() => startAfterExact('zz', (n) => index.get(n), 'an attribute of this object')).to.throw(/not an attribute of this object/);
    });
  });

  describe('ordered markers (ids, folders)', () => {
    const ids = ['d-1', 'd-3', 'd-5'];
    const table: [string | undefined, number][] = [
      [undefined, 0],
      ['', 0],
      ['d-0', 0],
      ['d-1', 1],
      ['d-2', 1], // deleted between two pages: the next one after it
      ['"d-3"', 2],
      ['d-5', 3],
      ['d-9', 3],
    ];
    for (const [m, want] of table) it(`marker ${JSON.stringify(m)} starts at ${want}`, () => expect(startAfterOrdered(ids, m)).to.equal(want));

    it('byte order for folder entries (as they are sorted)', () => {
      const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;
      // U+FF5E sorts before U+1F600 in UTF-8 bytes but after it in UTF-16 code units
      const keys = ['/a', '/\uff5e', '/\u{1f600}'].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(keys).to.deep.equal(['/a', '/\uff5e', '/\u{1f600}']);
      expect(startAfterOrdered(keys, '/\uff5e', bytes)).to.equal(2);
    });
  });

  describe('takePage', () => {
    const items = ['a1', 'b1', 'a2', 'b2', 'a3'];
    const table: { start: number; limit: number; keep?: (s: string) => boolean; want: string[] }[] = [
      { start: 0, limit: Infinity, want: items },
      { start: 0, limit: 2, want: ['a1', 'b1'] },
      { start: 4, limit: 2, want: ['a3'] },
      { start: 5, limit: 2, want: [] },
      { start: 0, limit: 2, keep: (s) => s.startsWith('a'), want: ['a1', 'a2'] },
      { start: 1, limit: 10, keep: (s) => s.startsWith('b'), want: ['b1', 'b2'] },
    ];
    for (const { start, limit, keep, want } of table) {
      it(`start ${start}, limit ${limit}${keep ? ', filtered' : ''}: ${want.join(' ') || 'nothing'}`, () => {
        expect(takePage(items, start, limit, (s) => s, keep)).to.deep.equal(want);
      });
    }
    it('maps with the index in the whole list (for per-item caches)', () => {
      expect(takePage(items, 2, 2, (s, i) => `${i}:${s}`)).to.deep.equal(['2:a2', '3:b2']);
    });
  });
});
