/**
 * The undo journal (src/hdf5/journal.ts) without libhdf5: range sets, and the crash protocol.
 *
 * The crash test replays one transaction (overwrites in and across the old end of file,
 * appends, a truncation below the old end, checkpoints) and "kills" it at every single write,
 * truncate and fdatasync it makes, by throwing from `fs` at that call and keeping the files as
 * they are. Recovery from what is on disk (the lock-file header and records) must then give
 * exactly the file before the transaction, or, once the commit point was passed, exactly the
 * file after it. The same with writes torn half-way.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { HEADER_BYTES, JournaledFile, RangeSet, WRITEBACK_BYTES, applyRollback, readHeader } from '../../src/hdf5/journal.js';
import { tempRoot } from '../helpers/server.js';

describe('journal: RangeSet', () => {
  const cases: Array<{ add: Array<[number, number]>; gaps: [number, number]; want: Array<[number, number]> }> = [
    { add: [], gaps: [0, 10], want: [[0, 10]] },
    { add: [[2, 4]], gaps: [0, 10], want: [[0, 2], [4, 10]] },
    { add: [[2, 4], [4, 6]], gaps: [0, 10], want: [[0, 2], [6, 10]] },
    { add: [[6, 8], [2, 4]], gaps: [3, 7], want: [[4, 6]] },
    { add: [[0, 100]], gaps: [10, 20], want: [] },
    { add: [[5, 6], [1, 2], [3, 4], [0, 10]], gaps: [0, 12], want: [[10, 12]] },
    { add: [[10, 20]], gaps: [0, 5], want: [[0, 5]] },
    { add: [[10, 20]], gaps: [25, 30], want: [[25, 30]] },
    { add: [[1, 3], [5, 7], [9, 11]], gaps: [2, 10], want: [[3, 5], [7, 9]] },
  ];
  for (const c of cases) {
    it(`gaps of ${JSON.stringify(c.gaps)} after adding ${JSON.stringify(c.add)}`, () => {
      const r = new RangeSet();
      for (const [s, e] of c.add) r.add(s, e);
      expect(r.gaps(c.gaps[0], c.gaps[1])).to.deep.equal(c.want);
    });
  }
});

/** A deterministic byte pattern. */
function pattern(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

class Crash extends Error {}

/**
 * Make the `budget`-th mutating fs call (write, truncate, fdatasync, sync or not) fail;
 * torn: a write writes its first half first.
 */
async function withCrashAt(budget: number, torn: boolean, fn: () => Promise<void>): Promise<boolean> {
  const names = ['writeSync', 'ftruncateSync', 'fdatasyncSync', 'fdatasync'] as const;
  const saved = names.map((n) => (fs as any)[n]);
  let calls = 0;
  const hook =
    (name: (typeof names)[number], orig: (...a: any[]) => any) =>
    (...args: any[]) => {
      calls++;
      if (calls === budget) {
        if (torn && name === 'writeSync' && typeof args[3] === 'number' && args[3] > 1) {
          orig(args[0], args[1], args[2], Math.floor(args[3] / 2), args[4]);
        }
        throw new Crash(`crash at call ${calls} (${name})`);
      }
      return orig(...args);
    };
  names.forEach((n, i) => ((fs as any)[n] = hook(n, saved[i])));
  try {
    await fn();
    return false;
  } catch (e) {
    if (e instanceof Crash) return true;
    throw e;
  } finally {
    names.forEach((n, i) => ((fs as any)[n] = saved[i]));
  }
}

describe('journal: a transaction killed at any write is undone exactly', function () {
  this.timeout(60_000);
  const dir = tempRoot('h5store-journal-');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const BASE = 64 * 1024;
  const original = pattern(BASE, 1);

  /** The transaction: what libhdf5 might do during one request. */
  async function transaction(jf: JournaledFile, durable: boolean, bigCheckpoint: boolean, bigAppend = false): Promise<void> {
    jf.begin();
    if (bigAppend) {
      // more than WRITEBACK_BYTES past the old end: writeback started, the first fdatasync of
      // the file beside the journal's at the commit
      const big = pattern(WRITEBACK_BYTES + 4096, 15);
      for (let o = 0; o < big.length; o += 512 * 1024) jf.write(big.subarray(o, Math.min(o + 512 * 1024, big.length)), BASE + 40_000 + o);
    }
    jf.write(pattern(100, 2), 0); // superblock-like overwrite
    jf.write(pattern(5000, 3), 10_000);
    jf.write(pattern(3000, 4), BASE - 1000); // across the old end of file
    jf.write(pattern(8192, 5), BASE + 20_000); // append past the end (leaves a hole)
    jf.write(pattern(200, 6), 10_100); // overwrite inside an earlier overwrite
    if (bigCheckpoint) jf.checkpoint();
    jf.truncate(BASE - 4096); // cut below the old end (like H5FD truncate to a smaller EOA)
    jf.write(pattern(6000, 7), BASE - 5000); // and grow again over it
    jf.write(pattern(50, 8), 30_000);
    await jf.commit();
    void durable;
  }

  /** A data file holding `original` and its empty lock file, both open read-write. */
  function freshPair(name: string): { data: string; lock: string; d: number; l: number; id: { dev: bigint; ino: bigint } } {
    const data = path.join(dir, name);
    const lock = data + '.lock';
    fs.writeFileSync(data, original);
    fs.writeFileSync(lock, '');
    const d = fs.openSync(data, 'r+');
    const l = fs.openSync(lock, 'r+');
    const st = fs.fstatSync(d, { bigint: true });
    return { data, lock, d, l, id: { dev: st.dev, ino: st.ino } };
  }

  async function finalImage(durable: boolean, bigCheckpoint: boolean, bigAppend: boolean): Promise<Buffer> {
    const { data, d, l, id } = freshPair(`final-${durable}-${bigCheckpoint}-${bigAppend}.bin`);
    await transaction(new JournaledFile(d, l, id, durable, 0n), durable, bigCheckpoint, bigAppend);
    fs.closeSync(d);
    fs.closeSync(l);
    return fs.readFileSync(data);
  }

  const variants: Array<{ durable: boolean; bigCheckpoint: boolean; torn: boolean; bigAppend: boolean }> = [];
  for (const durable of [true, false]) {
    for (const bigCheckpoint of [false, true]) {
      for (const torn of [false, true]) variants.push({ durable, bigCheckpoint, torn, bigAppend: false });
    }
  }
  for (const torn of [false, true]) variants.push({ durable: true, bigCheckpoint: false, torn, bigAppend: true });
  for (const { durable, bigCheckpoint, torn, bigAppend } of variants) {
    it(`fsync ${durable ? 'always' : 'never'}${bigCheckpoint ? ', with an early checkpoint' : ''}${bigAppend ? ', with a large append' : ''}${torn ? ', writes torn in half' : ''}`, async () => {
      const final = await finalImage(durable, bigCheckpoint, bigAppend);
      expect(final.equals(original)).to.equal(false);
      let committedSeen = 0;
      let rolledBack = 0;
      for (let k = 1; ; k++) {
        const { data, lock, d, l, id } = freshPair(`t-${k}.bin`);
        const crashed = await withCrashAt(k, torn, () => transaction(new JournaledFile(d, l, id, durable, 0n), durable, bigCheckpoint, bigAppend));
        // "Restart": recover from the files alone.
        const h = readHeader(l);
        if (h.kind === 'ok' && h.header.active) {
          applyRollback(d, l, h.header, durable);
          rolledBack++;
        }
        fs.closeSync(d);
        fs.closeSync(l);
        const now = fs.readFileSync(data);
        fs.rmSync(data);
        fs.rmSync(lock);
        if (now.equals(final)) committedSeen++;
        else expect(now.equals(original), `crash at mutating call ${k}: neither the old nor the new file`).to.equal(true);
        if (!crashed) break;
      }
      expect(rolledBack).to.be.greaterThan(3);
      expect(committedSeen).to.be.greaterThan(0);
    });
  }

  it('a rollback of the live transaction restores the file and bumps the counter', () => {
    const data = path.join(dir, 'live.bin');
    fs.writeFileSync(data, original);
    fs.writeFileSync(data + '.lock', '');
    const d = fs.openSync(data, 'r+');
    const l = fs.openSync(data + '.lock', 'r+');
    const st = fs.fstatSync(d, { bigint: true });
    const jf = new JournaledFile(d, l, { dev: st.dev, ino: st.ino }, false, 5n);
    jf.begin();
    jf.write(pattern(1000, 9), 0);
    jf.checkpoint(); // originals journaled, new bytes in the file
    jf.write(pattern(10, 10), BASE + 5);
    const report = jf.rollback()!;
    expect(report.records).to.be.greaterThan(0);
    expect(fs.readFileSync(data).equals(original)).to.equal(true);
    const h = readHeader(l);
    expect(h.kind === 'ok' && !h.header.active && h.header.counter === 6n).to.equal(true);
    // Writes outside a transaction (what H5Fclose still writes) are dropped.
    jf.write(pattern(10, 11), 0);
    expect(jf.dropped).to.equal(1);
    expect(fs.readFileSync(data).equals(original)).to.equal(true);
    // Transaction ids only grow, also when another process committed meanwhile.
    jf.begin(41n);
    jf.write(pattern(10, 12), 0);
    expect(jf.commitSync()).to.equal(42n);
    expect(fs.statSync(data + '.lock').size).to.be.at.least(HEADER_BYTES);
    fs.closeSync(d);
    fs.closeSync(l);
  });

  for (const c of [
    { durable: true, append: 2 * WRITEBACK_BYTES + 65536, starts: process.platform === 'linux' ? 2 : 0 },
    { durable: true, append: WRITEBACK_BYTES - 32768, starts: 0 },
    { durable: false, append: 2 * WRITEBACK_BYTES + 65536, starts: 0 },
  ]) {
    it(`a large append (${c.append} bytes, fsync ${c.durable ? 'always' : 'never'}) starts writeback ${c.starts} times; commit and rollback stay exact`, async () => {
      const data = path.join(dir, `wb-${c.durable}-${c.append}.bin`);
      fs.writeFileSync(data, original);
      fs.writeFileSync(data + '.lock', '');
      const d = fs.openSync(data, 'r+');
      const l = fs.openSync(data + '.lock', 'r+');
      const st = fs.fstatSync(d, { bigint: true });
      const jf = new JournaledFile(d, l, { dev: st.dev, ino: st.ino }, c.durable, 0n);
      const added = pattern(c.append, 13);
      const write = () => {
        jf.write(pattern(48, 14), 0); // a superblock-like overwrite among the appends
        for (let o = 0; o < added.length; o += 32768) jf.write(added.subarray(o, Math.min(o + 32768, added.length)), BASE + o);
      };
      jf.begin();
      write();
      expect(jf.stats.writebacks).to.equal(c.starts);
      expect(jf.rollback()).to.not.equal(undefined);
      expect(fs.readFileSync(data).equals(original)).to.equal(true);
      jf.begin();
      write();
      await jf.commit();
      const now = fs.readFileSync(data);
      expect(now.length).to.equal(BASE + c.append);
      expect(now.subarray(0, 48).equals(pattern(48, 14))).to.equal(true);
      expect(now.subarray(48, BASE).equals(original.subarray(48))).to.equal(true);
      expect(now.subarray(BASE).equals(added)).to.equal(true);
      fs.closeSync(d);
      fs.closeSync(l);
    });
  }

  it('a journal of another file (replaced since) is never applied by applyRollback callers', () => {
    // The identity is in the header: FileCache compares it with the file before rolling back.
    const data = path.join(dir, 'id.bin');
    fs.writeFileSync(data, original);
    fs.writeFileSync(data + '.lock', '');
    const d = fs.openSync(data, 'r+');
    const l = fs.openSync(data + '.lock', 'r+');
    const jf = new JournaledFile(d, l, { dev: 1n, ino: 12345n }, false, 0n);
    jf.begin();
    jf.write(pattern(10, 1), BASE);
    const h = readHeader(l);
    expect(h.kind).to.equal('ok');
    if (h.kind === 'ok') expect([h.header.active, h.header.ino, h.header.baseEof]).to.deep.equal([true, 12345n, BASE]);
    jf.rollback();
    fs.closeSync(d);
    fs.closeSync(l);
  });
});
