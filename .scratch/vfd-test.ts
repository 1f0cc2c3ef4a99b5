import fs from 'node:fs';
import { JournaledFile, readHeader } from '../src/hdf5/journal.ts';
import { openJournaled, repairStatusAndEoa, handleIdentity, READ_FAPL } from '../src/hdf5/vfd.ts';
import { H5, LIB } from '../src/hdf5/lib.ts';
const H5Gcreate2 = LIB.func('int64_t H5Gcreate2(int64_t loc, const char *n, int64_t a, int64_t b, int64_t c)');
const H5Gclose = LIB.func('int H5Gclose(int64_t g)');
const p = '/tmp/hb/proto/j.h5';
fs.copyFileSync('/work/shared/fixtures/hdf5/tall.h5', p);
const before = fs.readFileSync(p);
const dataFd = fs.openSync(p, 'r+');
const lockFd = fs.openSync('/tmp/hb/proto/j.lock', 'w+');
const st = fs.fstatSync(dataFd, { bigint: true });
const jf = new JournaledFile(dataFd, lockFd, { dev: st.dev, ino: st.ino }, true, 0n);
// txn 1: add groups, roll back
jf.begin();
let fid = openJournaled(p, jf);
for (let i = 0; i < 50; i++) H5Gclose(H5Gcreate2(fid, 'x' + i, 0, 0, 0));
H5.H5Fclose(fid);
console.log('rollback', jf.rollback(), 'same as before', fs.readFileSync(p).equals(before));
// txn 2: commit
jf.begin();
fid = openJournaled(p, jf);
for (let i = 0; i < 50; i++) H5Gclose(H5Gcreate2(fid, 'y' + i, 0, 0, 0));
H5.H5Fflush(fid, 1);
console.log('stats', jf.stats);
H5.H5Fclose(fid);
console.log('commit', jf.commit(), jf.stats, readHeader(lockFd));
const ro = H5.H5Fopen(p, 0, READ_FAPL);
console.log('identity', handleIdentity(ro), st.ino);
H5.H5Fclose(ro);
// repair the crashed libver-latest file
fs.copyFileSync('/tmp/hb/crash3.h5', '/tmp/hb/proto/c3.h5');
const d2 = fs.openSync('/tmp/hb/proto/c3.h5', 'r+');
const s2 = fs.fstatSync(d2, { bigint: true });
const jf2 = new JournaledFile(d2, lockFd, { dev: s2.dev, ino: s2.ino }, true, 5n);
jf2.begin();
console.log('repair', repairStatusAndEoa('/tmp/hb/proto/c3.h5', jf2));
console.log('commit2', jf2.commit());
