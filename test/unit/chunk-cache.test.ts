/**
 * The cache of decoded chunks (src/store/values/chunkCache.ts): LRU order, the byte bound,
 * chunks too large to keep, and scopes that change with the view of the file (fileState.ts).
 */
import { expect } from 'chai';
import { FileView } from '../../src/store/session/fileState.js';
import { DecodedChunkCache, chunkScope } from '../../src/store/values/chunkCache.js';

const buf = (n: number, v = 0) => Buffer.alloc(n, v);

describe('DecodedChunkCache', () => {
  type Step = ['set', string, number] | ['get', string, boolean];
  const cases: { name: string; max: number; steps: Step[]; held: number }[] = [
    { name: 'keeps what fits', max: 100, steps: [['set', 'a', 20], ['set', 'b', 20], ['get', 'a', true], ['get', 'b', true], ['get', 'c', false]], held: 40 },
    { name: 'drops the least recently set first', max: 100, steps: [['set', 'a', 25], ['set', 'b', 25], ['set', 'c', 25], ['set', 'd', 25], ['set', 'e', 25], ['get', 'a', false], ['get', 'b', true], ['get', 'e', true]], held: 100 },
    { name: 'a get makes an entry the most recent', max: 100, steps: [['set', 'a', 25], ['set', 'b', 25], ['set', 'c', 25], ['set', 'd', 25], ['get', 'a', true], ['set', 'e', 25], ['get', 'a', true], ['get', 'b', false]], held: 100 },
    { name: 'does not keep a chunk over a quarter of the bound', max: 100, steps: [['set', 'a', 26], ['get', 'a', false], ['set', 'b', 25], ['get', 'b', true]], held: 25 },
    { name: 'replacing a key counts its bytes once', max: 100, steps: [['set', 'a', 20], ['set', 'a', 10], ['get', 'a', true]], held: 10 },
    { name: 'a bound of 0 keeps nothing', max: 0, steps: [['set', 'a', 1], ['get', 'a', false]], held: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const cache = new DecodedChunkCache(c.max);
      for (const s of c.steps) {
        if (s[0] === 'set') cache.set(s[1], buf(s[2]));
        else expect(cache.get(s[1]) !== undefined, `get ${s[1]}`).to.equal(s[2]);
        expect(cache.bytes).to.be.at.most(c.max);
      }
      expect(cache.bytes).to.equal(c.held);
    });
  }

  it('gives back the bytes it was given', () => {
    const cache = new DecodedChunkCache(100);
    cache.set('a', buf(8, 7));
    expect([...cache.get('a')!]).to.deep.equal(new Array(8).fill(7));
    cache.clear();
    expect(cache.get('a')).to.equal(undefined);
    expect(cache.bytes).to.equal(0);
  });
});

describe('chunkScope', () => {
  it('differs between views (each event of a file gives its entries a new one) and datasets; none in a transient view', () => {
    const v1 = new FileView();
    const v2 = new FileView();
    const a = chunkScope(v1, 100n);
    expect(chunkScope(v1, 100n)).to.equal(a);
    expect(chunkScope(v1, 101n)).to.not.equal(a);
    expect(chunkScope(v2, 100n)).to.not.equal(a);
    expect(chunkScope(new FileView(true), 100n)).to.equal(undefined);
  });
});
