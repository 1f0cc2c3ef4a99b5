/** The short-lived stat cache of the read path (src/store/session/statCache.ts; issue #9). */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { StatCache } from '../../src/store/session/statCache.js';
import { tempRoot } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('StatCache', () => {
  let dir: string;
  beforeEach(() => (dir = tempRoot('h5store-stat-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reuses a result within freshMs, and stats again after it', async () => {
    const p = path.join(dir, 'a');
    fs.writeFileSync(p, 'x');
    const c = new StatCache(50);
    const s1 = c.stat(p);
    fs.writeFileSync(p, 'xyz');
    expect(c.stat(p).size, 'within freshMs').to.equal(s1.size);
    await sleep(80);
    expect(c.stat(p).size, 'after freshMs').to.equal(3);
  });

  it('clear() drops every result and advances the generation', () => {
    const p = path.join(dir, 'a');
    fs.writeFileSync(p, 'x');
    const c = new StatCache(10_000);
    c.stat(p);
    c.statBig(p);
    fs.writeFileSync(p, 'xyz');
    const g = c.generation;
    c.clear();
    expect(c.generation).to.equal(g + 1);
    expect(c.stat(p).size).to.equal(3);
    expect(c.statBig(p).size).to.equal(3n);
  });

  it('never keeps a missing path, and keeps nothing with freshMs 0', () => {
    const p = path.join(dir, 'later');
    const c = new StatCache(10_000);
    expect(() => c.stat(p)).to.throw(/ENOENT/);
    fs.writeFileSync(p, 'x');
    expect(c.stat(p).size, 'a path that appears is seen at once').to.equal(1);
    const off = new StatCache(0);
    off.stat(p);
    fs.rmSync(p);
    expect(() => off.stat(p)).to.throw(/ENOENT/);
  });
});
