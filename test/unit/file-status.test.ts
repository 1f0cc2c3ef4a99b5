/**
 * store/session/fileStatus.ts: a file's HDF5 signature and whether another program holds it for
 * writing, told from its first bytes and its lock without waiting (issue #28 item 6).
 */
import { expect } from 'chai';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileStatus } from '../../src/store/session/fileStatus.js';
import { lockFileOf } from '../../src/store/session/servicefiles.js';
import { CrossProcessLock } from '../../src/store/session/xlock.js';
import { childEnv } from '../helpers/env.js';
import { PYTHON } from '../helpers/python.js';
import { tempRoot } from '../helpers/server.js';

describe('fileStatus: HDF5 or not, being written or not, at once', function () {
  this.timeout(60000);
  let dir: string;
  const holders: ChildProcess[] = [];
  before(() => {
    dir = tempRoot('h5store-file-status-');
    const make = (name: string, libver: string, userblock = 0) =>
      execFileSync(PYTHON, ['-c', `import h5py, sys
with h5py.File(sys.argv[1], "w", libver=sys.argv[2], userblock_size=int(sys.argv[3])) as f:
    f["x"] = [1, 2, 3]`, path.join(dir, name), libver, String(userblock)], { env: childEnv({}) });
    make('v0.h5', 'earliest');
    make('v3.h5', 'latest');
    // a version 2 superblock whose write-access bit stayed set after the file was closed (as
    // h5store's own writes leave it): libhdf5 1.10 reads those flags only in version 3 ones
    make('v2.h5', 'v108');
    const fd = fs.openSync(path.join(dir, 'v2.h5'), 'r+');
    fs.writeSync(fd, Buffer.from([1]), 0, 1, 11);
    fs.closeSync(fd);
    make('userblock.h5', 'earliest', 1024);
    fs.writeFileSync(path.join(dir, 'text.h5'), 'not an HDF5 file\n');
    fs.writeFileSync(path.join(dir, 'empty.h5'), '');
    fs.writeFileSync(path.join(dir, 'short.h5'), Buffer.from([0x89, 0x48, 0x44]));
  });
  after(() => {
    for (const h of holders) h.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const table: [string, { hdf5: boolean; beingWritten: boolean }][] = [
    ['v0.h5', { hdf5: true, beingWritten: false }],
    ['v3.h5', { hdf5: true, beingWritten: false }],
    ['v2.h5', { hdf5: true, beingWritten: false }],
    ['userblock.h5', { hdf5: true, beingWritten: false }],
    ['text.h5', { hdf5: false, beingWritten: false }],
    ['empty.h5', { hdf5: false, beingWritten: false }],
    ['short.h5', { hdf5: false, beingWritten: false }],
    ['missing.h5', { hdf5: false, beingWritten: false }],
  ];
  for (const [name, want] of table) it(`${name}: ${JSON.stringify(want)}`, () => expect(fileStatus(path.join(dir, name))).to.deep.equal(want));

  for (const [name, libver] of [['v0.h5', 'earliest'], ['v3.h5', 'latest']] as const) {
    it(`${name} held open for writing by h5py (libver ${libver}) is being written; after it closes, not`, async () => {
      const h = spawn(PYTHON, ['-c', `import h5py, sys
f = h5py.File(sys.argv[1], "a", libver=sys.argv[2])
print("ready", flush=True)
sys.stdin.read()
f.close()`, path.join(dir, name), libver], { env: childEnv({}), stdio: ['pipe', 'pipe', 'inherit'] });
      holders.push(h);
      await new Promise<void>((res) => h.stdout!.once('data', () => res()));
      const t0 = performance.now();
      expect(fileStatus(path.join(dir, name))).to.deep.equal({ hdf5: true, beingWritten: true });
      expect(performance.now() - t0).to.be.below(100);
      h.stdin!.end();
      await new Promise<void>((res) => h.once('exit', () => res()));
      expect(fileStatus(path.join(dir, name))).to.deep.equal({ hdf5: true, beingWritten: false });
    });
  }

  it("the server's own write (its exclusive lock, the status flags its read-write handle sets) is not another program's (issue #26)", async () => {
    for (const [name, setFlags] of [['v0.h5', false], ['v3.h5', true]] as const) {
      const src = path.join(dir, name);
      const p = path.join(dir, `own-${name}`);
      fs.copyFileSync(src, p);
      const file = fs.realpathSync(p);
      const xl = new CrossProcessLock(file, lockFileOf(file), fs.statSync(file, { bigint: true }).ino, { waitMs: 1000, durable: false });
      await xl.acquireExclusive();
      try {
        // what libhdf5 writes into a version-3 superblock while it has the file open read-write
        if (setFlags) fs.writeSync(xl.dataFd!, Buffer.from([0b1]), 0, 1, 11);
        expect(fileStatus(p), `${name} while this process writes it`).to.deep.equal({ hdf5: true, beingWritten: false });
      } finally {
        xl.releaseExclusive();
        xl.close();
      }
      // the same flags without an h5store writer: another program (or a crashed one)
      if (setFlags) expect(fileStatus(p)).to.deep.equal({ hdf5: true, beingWritten: true });
    }
  });
});
