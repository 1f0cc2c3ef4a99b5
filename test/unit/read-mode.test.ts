/**
 * How a read-only handle opens a file another program has open for writing (src/hdf5/objects.ts
 * `ReadMode`, issue #26 item 1): the mode each combination of superblock status flags calls for,
 * and real files of live h5py writers opened in it, read, and left byte for byte as they were.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import * as h5 from '../../src/hdf5/objects.js';
import { readModeOf } from '../../src/hdf5/objects.js';
import { superblockInfo } from '../../src/store/session/files.js';
import { digest } from '../helpers/apiExtra.js';
import { startLiveWriter } from '../helpers/live.js';
import { hasH5py } from '../helpers/python.js';
import { tempRoot } from '../helpers/server.js';

describe('read modes of files other programs write (objects.ts ReadMode)', function () {
  this.timeout(60_000);

  const table: [number, h5.ReadMode][] = [
    [0b000, 'plain'],
    [0b001, 'flagged'], // open for writing (a plain writer with libver latest, or a crashed one)
    [0b100, 'flagged'], // SWMR writing without writing: only a damaged or hand-made superblock
    [0b101, 'swmr'], // a SWMR writer
    [0b010, 'plain'], // bit 1 is not a status flag libhdf5 1.10 checks
  ];
  for (const [flags, mode] of table) it(`status flags ${flags.toString(2).padStart(3, '0')}: ${mode}`, () => expect(readModeOf(flags)).to.equal(mode));

  for (const writer of ['plain', 'swmr'] as const) {
    it(`a live ${writer} writer's file (libver latest) opens in its mode, reads, and is not changed`, async function () {
      if (!hasH5py()) this.skip();
      const dir = tempRoot('h5store-read-mode-');
      // a writer that holds the file open (flags set) after its frames
      const held = await startLiveWriter(path.join(dir, 'held.h5'), writer, 2, { rate: 50, hold: true });
      try {
        while (!held.lines.some((l) => l.frame === 1)) await new Promise((r) => setTimeout(r, 10));
        const p = path.join(dir, 'held.h5');
        const fd = fs.openSync(p, 'r');
        const flags = superblockInfo(fd).flags;
        fs.closeSync(fd);
        const mode = readModeOf(flags);
        expect(mode).to.equal(writer === 'swmr' ? 'swmr' : 'flagged');
        expect(() => h5.openFile(p, false, 'plain'), 'libhdf5 refuses a plain read-only open').to.throw(/already open for write/);
        const before = digest(p);
        const fid = h5.openFile(p, false, mode);
        try {
          const did = h5.openByName(fid, 'frames');
          h5.closeObject(did);
        } finally {
          h5.closeFile(fid);
        }
        expect(digest(p), 'the file is byte for byte as it was').to.equal(before);
      } finally {
        held.proc.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
