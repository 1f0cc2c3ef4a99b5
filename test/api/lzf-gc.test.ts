/**
 * LZF stays readable after garbage collection (issue #12): liblzf is loaded with global symbols
 * for Debian's LZF plugin, and koffi unloads a library whose handle is collected. A child
 * process with `--expose-gc` forces collections, then reads an LZF dataset (written by h5py,
 * which bundles its own LZF) through the store and lists the compressors.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, tempRoot } from '../helpers/server.js';

describe('LZF after garbage collection (issue #12)', function () {
  this.timeout(60_000);

  it('an LZF dataset reads correctly and lzf stays in compressors after forced GCs', function () {
    const have = execFileSync('/usr/bin/python3', ['-c', 'import ctypes.util; print(ctypes.util.find_library("lzf") or "")'], { encoding: 'utf8' }).trim();
    const plugin = ['x86_64-linux-gnu', 'aarch64-linux-gnu'].some((a) => fs.existsSync(`/usr/lib/${a}/hdf5/serial/plugins/liblzf_filter.so`));
    if (!have || !plugin) {
      console.log('      (skipped: liblzf or the Debian LZF plugin hdf5-plugin-lzf is not installed)');
      this.skip();
    }
    const root = tempRoot('h5store-lzf-');
    execFileSync('/usr/bin/python3', [
      '-c',
      `import h5py, numpy as np
with h5py.File('${root}/lzf.h5', 'w') as f:
    f.create_dataset('x', data=np.arange(10000, dtype='<i4'), chunks=(1000,), compression='lzf')`,
    ]);
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(REPO, 'test/tools/lzf-after-gc.ts'), root, '/lzf.h5', '/x'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    const r = JSON.parse(out.trim().split('\n').pop()!);
    expect(r.compressors).to.include('lzf');
    expect(r.sum).to.equal((9999 * 10000) / 2);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
