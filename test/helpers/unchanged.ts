/**
 * "The request left the file unchanged", checked cheaply: the file's bytes are kept before and
 * after; equal bytes need no oracle. Only when they differ are h5py's view (test/tools/h5inspect.py)
 * and h5dump's text of both versions compared, so a change of bytes that changes nothing HDF5
 * shows (free space, a timestamp) passes, as it did when the oracles ran after every case, and
 * any change h5py or h5dump can see fails. Running both oracles costs ~1.6 s a case; hashing, well
 * under a millisecond for these files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { h5dumpText, inspect } from './writekit.js';

/** A file's bytes at one moment. */
export interface FileMark {
  file: string;
  bytes: Buffer;
}

/** How many comparisons had to run the oracles (bytes differed); for the suite's own notes. */
export const oracleRuns = { n: 0 };

/** Keep `file`'s bytes now. */
export function markFile(file: string): FileMark {
  return { file, bytes: fs.readFileSync(file) };
}

/** h5py's and h5dump's views of `bytes` (written to a temporary copy; h5dump's file name taken out). */
function views(bytes: Buffer): { py: unknown; dump: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-unchanged-'));
  const copy = path.join(dir, 'f.h5');
  try {
    fs.writeFileSync(copy, bytes);
    return { py: inspect(copy), dump: h5dumpText(copy).replace(`HDF5 "${copy}"`, 'HDF5 "<file>"') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Expect `after` to hold what `before` held, as h5py and h5dump see it (byte-equal files pass at once).
 * @throws an assertion error naming the oracle that saw a difference
 */
export function expectSameContent(before: FileMark, after: FileMark, what = 'the file after the request'): void {
  if (before.bytes.equals(after.bytes)) return;
  oracleRuns.n++;
  const [b, a] = [views(before.bytes), views(after.bytes)];
  expect(a.py, `h5py view of ${what}`).to.deep.equal(b.py);
  expect(a.dump, `h5dump of ${what}`).to.equal(b.dump);
}

/** Run `action`, then expect `file` to hold what it held before (see `expectSameContent`); returns the action's result. */
export async function expectUnchangedBy<T>(file: string, action: () => Promise<T>, what?: string): Promise<T> {
  const before = markFile(file);
  const result = await action();
  expectSameContent(before, markFile(file), what);
  return result;
}
