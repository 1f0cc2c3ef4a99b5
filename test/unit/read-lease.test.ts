/**
 * The read lease of the cross-process lock (src/store/xlock.ts; issue #9): a stream of reads
 * takes the shared lock once, a writer elsewhere is not starved by it, and the lease ends by
 * itself. Two `CrossProcessLock`s on one file have their own open file descriptions, so they
 * lock against each other exactly as two processes do.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CrossProcessLock } from '../../src/store/xlock.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('read lease (xlock.ts)', function () {
  this.timeout(20_000);
  let dir: string;
  let file: string;
  let ino: bigint;
  const locks: CrossProcessLock[] = [];
  const make = (leaseMs: number, waitMs = 3000) => {
    const l = new CrossProcessLock(file, path.join(dir, '.f.h5.h5store-lock'), ino, { waitMs, durable: false, leaseMs, recheckMs: 1 });
    locks.push(l);
    return l;
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-lease-'));
    file = path.join(dir, 'f.h5');
    fs.writeFileSync(file, Buffer.alloc(4096));
    ino = fs.statSync(file, { bigint: true }).ino;
  });
  afterEach(() => {
    for (const l of locks.splice(0)) l.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a read within the lease needs no new check; after it, the file is checked again', async () => {
    const a = make(40);
    expect(await a.acquireShared()).to.equal(true);
    a.releaseShared();
    expect(await a.acquireShared(), 'within the lease').to.equal(false);
    a.releaseShared();
    await sleep(120);
    expect(await a.acquireShared(), 'after the lease ended').to.equal(true);
    a.releaseShared();
  });

  it('with a lease of 0 every read takes the lock again', async () => {
    const a = make(0);
    expect(await a.acquireShared()).to.equal(true);
    a.releaseShared();
    expect(await a.acquireShared()).to.equal(true);
    a.releaseShared();
  });

  it('the lease ends by itself: another process can then write at once', async () => {
    const reader = make(30);
    const writer = make(0, 0); // no waiting: must get the lock on the first try
    await reader.acquireShared();
    reader.releaseShared();
    let refused = false;
    await writer.acquireExclusive().catch(() => (refused = true));
    expect(refused, 'the lease holds the file right after the read').to.equal(true);
    await sleep(100);
    await writer.acquireExclusive();
    writer.releaseExclusive();
  });

  it('a writer in another process is not starved by a stream of overlapping reads, and reads after it check the file', async () => {
    const reader = make(1000); // a long lease: only the writer's announcement can end it
    const writer = make(0, 5000);
    let stop = false;
    let checksAfterWrite = 0;
    let written = false;
    const readers = [0, 1, 2, 3].map(async () => {
      while (!stop) {
        const first = await reader.acquireShared();
        if (written && first) checksAfterWrite++;
        await sleep(Math.random() * 3);
        reader.releaseShared();
      }
    });
    await sleep(50);
    const t0 = performance.now();
    await writer.acquireExclusive();
    const waited = performance.now() - t0;
    await sleep(20);
    writer.releaseExclusive();
    written = true;
    await sleep(100);
    stop = true;
    await Promise.all(readers);
    expect(waited, 'ms the writer waited').to.be.below(1000);
    expect(checksAfterWrite, 'reads after the write took the lock again (and checked the file)').to.be.at.least(1);
  });

  it('a write of this process ends the lease (the write converts the lock; reads after it take it again)', async () => {
    const a = make(1000);
    await a.acquireShared();
    a.releaseShared();
    await a.acquireExclusive();
    a.releaseExclusive();
    expect(await a.acquireShared()).to.equal(true);
    a.releaseShared();
  });
});
