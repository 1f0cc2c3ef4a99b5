import fs from 'node:fs';
import { JournaledFile } from '../src/hdf5/journal.ts';
import { openJournaled, READ_FAPL } from '../src/hdf5/vfd.ts';
import { H5, LIB } from '../src/hdf5/lib.ts';
import * as h5 from '../src/hdf5/objects.ts';
const H5Gcreate2 = LIB.func('int64_t H5Gcreate2(int64_t loc, const char *n, int64_t a, int64_t b, int64_t c)');
const H5Gclose = LIB.func('int H5Gclose(int64_t g)');
const p = '/tmp/hb/proto/cost.h5';
fs.copyFileSync('/work/shared/fixtures/hdf5/tall.h5', p);
const dataFd = fs.openSync(p, 'r+');
const lockFd = fs.openSync('/tmp/hb/proto/cost.lock', 'w+');
const st = fs.fstatSync(dataFd, { bigint: true });
for (const durable of [false, true]) {
  const jf = new JournaledFile(dataFd, lockFd, { dev: st.dev, ino: st.ino }, durable, 0n);
  let t = performance.now(); const N = 200;
  for (let i = 0; i < N; i++) { jf.begin(); const fid = openJournaled(p, jf); H5Gclose(H5Gcreate2(fid, `r${durable}${i}`, 0, 0, 0)); H5.H5Fflush(fid, 1); H5.H5Fclose(fid); jf.commit(); }
  const reopen = (performance.now() - t) / N;
  jf.begin(); const fid = openJournaled(p, jf); jf.commit();
  t = performance.now();
  for (let i = 0; i < N; i++) { jf.begin(); H5Gclose(H5Gcreate2(fid, `k${durable}${i}`, 0, 0, 0)); H5.H5Fflush(fid, 1); jf.commit(); }
  const keep = (performance.now() - t) / N;
  jf.begin(); H5.H5Fclose(fid); jf.commit();
  // sec2 baseline: keep open, flush per write
  const f2 = H5.H5Fopen(p, 1, READ_FAPL);
  t = performance.now();
  for (let i = 0; i < N; i++) { H5Gclose(H5Gcreate2(f2, `s${durable}${i}`, 0, 0, 0)); H5.H5Fflush(f2, 1); }
  const sec2 = (performance.now() - t) / N;
  H5.H5Fclose(f2);
  console.log(durable ? 'fsync' : 'nofsync', 'reopen per write', reopen.toFixed(2), 'ms; keep handle', keep.toFixed(2), 'ms; sec2 keep+flush', sec2.toFixed(2), 'ms', 'size', fs.statSync(p).size);
}
