import fs from 'node:fs';
const orig: Record<string, Function> = {};
const times: Record<string, [number, number]> = {};
for (const k of ['readSync', 'writeSync', 'fstatSync', 'ftruncateSync', 'fdatasyncSync', 'openSync', 'closeSync', 'statSync']) {
  orig[k] = (fs as any)[k];
  (fs as any)[k] = (...a: any[]) => { const t = performance.now(); try { return orig[k](...a); } finally { const e = (times[k] ??= [0, 0]); e[0]++; e[1] += performance.now() - t; } };
}
const { JournaledFile } = await import('../src/hdf5/journal.ts');
const { openJournaled } = await import('../src/hdf5/vfd.ts');
const { H5, LIB } = await import('../src/hdf5/lib.ts');
const H5Gcreate2 = LIB.func('int64_t H5Gcreate2(int64_t loc, const char *n, int64_t a, int64_t b, int64_t c)');
const H5Gclose = LIB.func('int H5Gclose(int64_t g)');
const p = '/tmp/hb/proto/cost.h5';
fs.copyFileSync('/work/shared/fixtures/hdf5/tall.h5', p);
const dataFd = fs.openSync(p, 'r+');
const lockFd = fs.openSync('/tmp/hb/proto/cost.lock', 'w+');
const st = fs.fstatSync(dataFd, { bigint: true });
const jf = new JournaledFile(dataFd, lockFd, { dev: st.dev, ino: st.ino }, false, 0n);
jf.begin(); const fid = openJournaled(p, jf); jf.commit();
for (const k in times) delete times[k];
const N = 200; const t = performance.now(); let tl = 0;
for (let i = 0; i < N; i++) { jf.begin(); const a = performance.now(); H5Gclose(H5Gcreate2(fid, `k${i}`, 0, 0, 0)); H5.H5Fflush(fid, 1); tl += performance.now() - a; jf.commit(); }
const { CALLS } = await import('../src/hdf5/vfd.ts'); for (const k in CALLS) CALLS[k] = 0; { jf.begin(); H5Gclose(H5Gcreate2(fid, 'zz', 0, 0, 0)); H5.H5Fflush(fid, 1); jf.commit(); } console.log(JSON.stringify(CALLS));
console.log('per write', ((performance.now() - t) / N).toFixed(3), 'libhdf5 part', (tl / N).toFixed(3));
for (const [k, [n, ms]] of Object.entries(times)) console.log(k, (n / N).toFixed(1), 'calls/write', (ms / N).toFixed(3), 'ms/write');
