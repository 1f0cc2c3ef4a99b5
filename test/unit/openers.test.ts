/**
 * store/session/openers.ts: other processes holding a file open for writing, as /proc shows them (the
 * rule that tells a program still writing a file without file locking from h5py sessions that
 * wrote it and closed it, issue #26 item 1).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parentOf, writersOf } from '../../src/store/session/openers.js';
import { tempRoot } from '../helpers/server.js';

/** A child process holding `file` open with `flags` until killed; resolves once it has it open. */
function holder(file: string, flags: string): Promise<{ pid: number; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', `require('fs').openSync(${JSON.stringify(file)}, ${JSON.stringify(flags)}); console.log('open'); setInterval(() => {}, 1000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve({ pid: child.pid!, stop: () => child.kill('SIGKILL') }));
    child.once('error', reject);
  });
}

describe('store/openers writersOf', function () {
  this.timeout(20_000);
  const dir = tempRoot('h5store-openers-');
  const file = path.join(dir, 'f.h5');
  fs.writeFileSync(file, 'x');
  const st = fs.statSync(file);
  const self = new Set([process.pid]);

  it('finds a process with the file open for writing (r+, w, a), and not one that only reads it', async () => {
    for (const [flags, writes] of [['r', false], ['r+', true], ['a', true], ['w', true]] as const) {
      const h = await holder(file, flags);
      try {
        const found = writersOf(st.dev, st.ino, self)!;
        expect(found.incomplete, 'this test runs where /proc is readable').to.equal(false);
        expect(found.pids.includes(h.pid), `opened ${flags}`).to.equal(writes);
        // excluded pids are not reported
        expect(writersOf(st.dev, st.ino, new Set([process.pid, h.pid]))!.pids).to.not.include(h.pid);
        expect(parentOf(h.pid)).to.equal(process.pid);
      } finally {
        h.stop();
      }
    }
  });

  it('this process and other files are not reported; a file nobody has open gives no pid', () => {
    const fd = fs.openSync(file, 'r+');
    try {
      expect(writersOf(st.dev, st.ino, self)!.pids).to.deep.equal([]);
      const other = path.join(dir, 'g.h5');
      fs.writeFileSync(other, 'y');
      const o = fs.statSync(other);
      expect(writersOf(o.dev, o.ino, new Set())!.pids).to.deep.equal([]);
    } finally {
      fs.closeSync(fd);
    }
  });
});
