/**
 * What `verbose=1` statistics cost (issue #12): `GET /?verbose=1` on a file of 10,000 groups (and
 * 100 chunked datasets), first request (computes them: one traversal, one storage query per
 * dataset, MD5 of the file) against the next ones (cached by file version), next to a plain
 * `GET /` of the same domain as the reference measured in the same run; then a write, and the
 * first request after it (computed again). Also `GET /?getobjs=1` on a 500-object domain.
 *
 * usage: npm run build && node --import tsx bench/domain-stats.ts [repeats, default 20]
 * Needs /usr/bin/python3 with h5py (the data files).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.js';

const repeats = Number(process.argv[2] ?? 20);


/** Milliseconds of one request (body read). */
async function timed(url: string, init?: RequestInit): Promise<{ ms: number; json: any }> {
  const t0 = performance.now();
  const r = await fetch(url, init);
  const text = await r.text();
  const ms = performance.now() - t0;
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${text.slice(0, 200)}`);
  return { ms, json: text ? JSON.parse(text) : undefined };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-stats-'));
execFileSync('/usr/bin/python3', [
  '-c',
  `import h5py, numpy as np, sys, os
with h5py.File(os.path.join(sys.argv[1], 'big.h5'), 'w') as f:
    for i in range(10000):
        f.create_group('g%05d' % i)
    for i in range(100):
        f.create_dataset('d%03d' % i, data=np.arange(4096, dtype='f8'), chunks=(256,))
with h5py.File(os.path.join(sys.argv[1], 'objs.h5'), 'w') as f:
    for i in range(249):
        g = f.create_group('g%03d' % i); g.attrs['i'] = i
        g.create_dataset('d', data=np.arange(10))`,
  root,
]);
const srv = await startBenchServer(['--root', root]);
try {
  const big = `${srv.url}/?domain=/big.h5`;
  await timed(big); // open the file once
  const plain: number[] = [];
  for (let i = 0; i < repeats; i++) plain.push((await timed(big)).ms);
  const first = await timed(`${big}&verbose=1`);
  const cached: number[] = [];
  for (let i = 0; i < repeats; i++) cached.push((await timed(`${big}&verbose=1`)).ms);
  const rootId = first.json.root;
  await timed(`${srv.url}/groups?domain=/big.h5`, { method: 'POST', body: JSON.stringify({ link: { id: rootId, name: 'new' } }) });
  const afterWrite = await timed(`${big}&verbose=1`);
  const again = await timed(`${big}&verbose=1`);

  const objs = `${srv.url}/?domain=/objs.h5`;
  await timed(objs);
  const objsPlain: number[] = [];
  const objsAll: number[] = [];
  for (let i = 0; i < Math.max(3, repeats / 4); i++) {
    objsPlain.push((await timed(objs)).ms);
    objsAll.push((await timed(`${objs}&getobjs=1&include_attrs=1`)).ms);
  }
  const n = Object.keys((await timed(`${objs}&getobjs=1&include_attrs=1`)).json.domain_objs).length;

  console.log(`10,000 groups + 100 chunked datasets (${(first.json.total_size / 1e6).toFixed(1)} MB, ${first.json.num_chunks} chunks):`);
  console.log(`  GET /                      median ${median(plain).toFixed(2)} ms (reference)`);
  console.log(`  GET /?verbose=1 first      ${first.ms.toFixed(1)} ms (computes: ${(first.ms / median(plain)).toFixed(0)}x the reference)`);
  console.log(`  GET /?verbose=1 cached     median ${median(cached).toFixed(2)} ms (${(median(cached) / median(plain)).toFixed(2)}x the reference)`);
  console.log(`  after a write: first       ${afterWrite.ms.toFixed(1)} ms, next ${again.ms.toFixed(2)} ms (num_groups ${afterWrite.json.num_groups})`);
  console.log(`${n} objects with attributes:`);
  console.log(`  GET /                      median ${median(objsPlain).toFixed(2)} ms`);
  console.log(`  GET /?getobjs=1&include_attrs=1  median ${median(objsAll).toFixed(2)} ms (${(median(objsAll) / median(objsPlain)).toFixed(0)}x)`);
} finally {
  await srv.stop();
  fs.rmSync(root, { recursive: true, force: true });
}
