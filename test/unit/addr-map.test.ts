/**
 * AddrMap (src/store/objects/addrMap.ts): a Map keyed by bigint file addresses, number keys inside up to
 * 2^53, table-driven against a plain Map<bigint, V> on the same operations.
 */
import { expect } from 'chai';
import { AddrMap } from '../../src/store/objects/addrMap.js';

type Op = ['set', bigint, string] | ['delete', bigint] | ['clear'];

describe('store: AddrMap behaves as a Map<bigint, V>', () => {
  const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
  const cases: { name: string; ops: Op[]; probe: bigint[] }[] = [
    { name: 'small addresses', ops: [['set', 0n, 'a'], ['set', 800n, 'b'], ['set', 800n, 'c']], probe: [0n, 800n, 801n] },
    { name: 'around 2^53 (exact on both sides)', ops: [['set', SAFE, 'max'], ['set', SAFE + 1n, 'above'], ['set', SAFE + 2n, 'above2']], probe: [SAFE - 1n, SAFE, SAFE + 1n, SAFE + 2n, SAFE + 3n] },
    { name: 'the undefined address (2^64 - 1)', ops: [['set', 2n ** 64n - 1n, 'undef'], ['set', 2n ** 64n - 2n, 'other']], probe: [2n ** 64n - 1n, 2n ** 64n - 2n, 2n ** 64n - 3n] },
    { name: 'delete and clear', ops: [['set', 1n, 'x'], ['set', SAFE + 5n, 'y'], ['delete', 1n], ['set', 2n, 'z'], ['clear'], ['set', 3n, 'w']], probe: [1n, 2n, 3n, SAFE + 5n] },
    { name: 'negative keys are kept apart', ops: [['set', -1n, 'neg'], ['set', 1n, 'pos']], probe: [-1n, 1n] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const m = new AddrMap<string>();
      const ref = new Map<bigint, string>();
      for (const op of c.ops) {
        if (op[0] === 'set') {
          m.set(op[1], op[2]);
          ref.set(op[1], op[2]);
        } else if (op[0] === 'delete') expect(m.delete(op[1])).to.equal(ref.delete(op[1]));
        else {
          m.clear();
          ref.clear();
        }
      }
      for (const a of c.probe) {
        expect(m.get(a), String(a)).to.equal(ref.get(a));
        expect(m.has(a), String(a)).to.equal(ref.has(a));
      }
      expect(m.size).to.equal(ref.size);
      const sort = (e: [bigint, string][]) => e.sort((x, y) => (x[0] < y[0] ? -1 : 1));
      expect(sort([...m.entries()])).to.deep.equal(sort([...ref.entries()]));
      expect(sort([...m])).to.deep.equal(sort([...ref]));
    });
  }
});
