/**
 * The read lease of the cross-process lock (src/store/session/xlock.ts; issue #9): a stream of reads
 * takes the shared lock once, a writer elsewhere is not starved by it, and the lease ends by
 * itself; a hold never lasts past `holdMaxMs` in one piece, so a program that tries its lock once
 * (h5py) gets in (issue #26 item 3). Two `CrossProcessLock`s on one file have their own open file descriptions, so they
 * lock against each other exactly as two processes do.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { tryFlock, unflock } from '../../src/hdf5/posix.js';
import { CrossProcessLock, type XLockOptions } from '../../src/store/session/xlock.js';
import { tempRoot } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('read lease (xlock.ts)', function () {
  this.timeout(20_000);
  let dir: string;
  let file: string;
  let ino: bigint;
  const locks: CrossProcessLock[] = [];
  const make = (leaseMs: number, waitMs = 3000, more: Partial<XLockOptions> = {}) => {
    const l = new CrossProcessLock(file, path.join(dir, '.f.h5.h5store-lock'), ino, { waitMs, durable: false, leaseMs, recheckMs: 1, ...more });
    locks.push(l);
    return l;
  };

  beforeEach(() => {
    dir = tempRoot('h5store-lease-');
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

  /**
   * How long a program that tries `flock(LOCK_EX | LOCK_NB)` every 0.5 ms, as h5py's open does
   * when its caller tries again, waits for the lock while `reads` run until told to stop (ms;
   * Infinity: not within `limitMs`).
   */
  async function h5pyOpenWait(reads: (stopped: () => boolean) => Promise<void>, limitMs: number): Promise<number> {
    const fd = fs.openSync(file, 'r');
    let stop = false;
    const running = reads(() => stop);
    try {
      await sleep(30);
      const t0 = performance.now();
      while (performance.now() - t0 < limitMs) {
        if (tryFlock(fd, true)) {
          const ms = performance.now() - t0;
          unflock(fd);
          return ms;
        }
        await sleep(0.5);
      }
      return Infinity;
    } finally {
      stop = true;
      fs.closeSync(fd);
      await running;
    }
  }

  /** Four readers whose reads (2-3 ms each) overlap without a break, until `stopped()`. */
  function overlappingReads(l: CrossProcessLock, stopped: () => boolean): Promise<void> {
    return Promise.all(
      [0, 1, 2, 3].map(async (k) => {
        await sleep(k * 0.7);
        while (!stopped()) {
          await l.acquireShared();
          await sleep(2 + Math.random());
          l.releaseShared();
        }
      }),
    ).then(() => undefined);
  }

  it('overlapping reads let the shared lock go after holdMaxMs and leave a gap: a program trying its lock once in a while gets in', async () => {
    for (const [holdMaxMs, within] of [[10, 100], [0, Infinity]] as const) {
      const reader = make(0, 3000, { holdMaxMs, gapMs: 1 });
      const waited = await h5pyOpenWait((stopped) => overlappingReads(reader, stopped), 400);
      if (within === Infinity) expect(waited, 'without the limit the hold has no gap').to.equal(Infinity);
      else expect(waited, `ms a program waited for the lock (holdMaxMs ${holdMaxMs})`).to.be.below(within);
      reader.close();
    }
  });

  it('a lease ends after holdMaxMs in one piece even when reads keep coming', async () => {
    const reader = make(1000, 3000, { holdMaxMs: 10, gapMs: 1 });
    const fd = fs.openSync(file, 'r');
    try {
      await reader.acquireShared();
      reader.releaseShared();
      expect(tryFlock(fd, true), 'held right after the read').to.equal(false);
      await sleep(40);
      expect(tryFlock(fd, true), 'let go after holdMaxMs although the lease is 1000 ms').to.equal(true);
      unflock(fd);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('a long read (a stream) holding the file does not hold up the others past 2 x holdMaxMs: they join it', async () => {
    const reader = make(0, 3000, { holdMaxMs: 10, gapMs: 1 });
    await reader.acquireShared(); // the stream
    await sleep(15); // past holdMaxMs
    const t0 = performance.now();
    const small = reader.acquireShared().then(() => performance.now() - t0);
    const waited = await Promise.race([small, sleep(200).then(() => Infinity)]);
    expect(waited, 'ms a small read waited beside the stream').to.be.below(60);
    reader.releaseShared();
    reader.releaseShared();
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
