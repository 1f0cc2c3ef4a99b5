import koffi from 'koffi';
import fs from 'node:fs';
import { LIB, LIBC, H5, G } from '../src/hdf5/lib.ts';

const calloc = LIBC.func('void *calloc(size_t n, size_t s)');
const free = LIBC.func('void free(void *p)');

const CB = {
  open: koffi.proto('void *vfd_open(const char *name, unsigned int flags, int64_t fapl, uint64_t maxaddr)'),
  close: koffi.proto('int vfd_close(void *file)'),
  cmp: koffi.proto('int vfd_cmp(void *f1, void *f2)'),
  query: koffi.proto('int vfd_query(void *f, void *flags)'),
  get_eoa: koffi.proto('uint64_t vfd_get_eoa(void *f, int type)'),
  set_eoa: koffi.proto('int vfd_set_eoa(void *f, int type, uint64_t addr)'),
  get_eof: koffi.proto('uint64_t vfd_get_eof(void *f, int type)'),
  get_handle: koffi.proto('int vfd_get_handle(void *f, int64_t fapl, void *handle)'),
  read: koffi.proto('int vfd_read(void *f, int type, int64_t dxpl, uint64_t addr, size_t size, void *buf)'),
  write: koffi.proto('int vfd_write(void *f, int type, int64_t dxpl, uint64_t addr, size_t size, void *buf)'),
  flush: koffi.proto('int vfd_flush(void *f, int64_t dxpl, bool closing)'),
  truncate: koffi.proto('int vfd_truncate(void *f, int64_t dxpl, bool closing)'),
  lock: koffi.proto('int vfd_lock(void *f, bool rw)'),
  unlock: koffi.proto('int vfd_unlock(void *f)'),
};

const ClassT = koffi.struct('H5FD_class_t_proto', {
  name: 'const char *', maxaddr: 'uint64_t', fc_degree: 'int',
  terminate: 'void *', sb_size: 'void *', sb_encode: 'void *', sb_decode: 'void *',
  fapl_size: 'size_t', fapl_get: 'void *', fapl_copy: 'void *', fapl_free: 'void *',
  dxpl_size: 'size_t', dxpl_copy: 'void *', dxpl_free: 'void *',
  open: 'void *', close: 'void *', cmp: 'void *', query: 'void *', get_type_map: 'void *',
  alloc: 'void *', free: 'void *', get_eoa: 'void *', set_eoa: 'void *', get_eof: 'void *',
  get_handle: 'void *', read: 'void *', write: 'void *', flush: 'void *', truncate: 'void *',
  lock: 'void *', unlock: 'void *', fl_map: koffi.array('int', 7),
});
console.log('sizeof class', koffi.sizeof(ClassT));

interface F { fd: number; eoa: bigint; eof: bigint; ino: bigint; dev: bigint; ptr: bigint; }
const files = new Map<bigint, F>();
let nread = 0, nwrite = 0;
const reg = (fn: Function, t: any) => koffi.register(fn, koffi.pointer(t));
const cbs = {
  open: reg((name: string, flags: number) => {
    try {
      const fl = (flags & 1 ? fs.constants.O_RDWR : fs.constants.O_RDONLY) | (flags & 0x10 ? fs.constants.O_CREAT : 0) | (flags & 2 ? fs.constants.O_TRUNC : 0) | (flags & 4 ? fs.constants.O_EXCL : 0);
      const fd = fs.openSync(name, fl, 0o666);
      const st = fs.fstatSync(fd, { bigint: true });
      const ptr = calloc(1, 128);
      const a = koffi.address(ptr);
      files.set(a, { fd, eoa: 0n, eof: st.size, ino: st.ino, dev: st.dev, ptr: a });
      return ptr;
    } catch (e) { return null; }
  }, CB.open),
  close: reg((p: bigint) => { const f = files.get(koffi.address(p))!; fs.closeSync(f.fd); files.delete(f.ptr); free(p); return 0; }, CB.close),
  cmp: reg((a: bigint, b: bigint) => { const x = files.get(koffi.address(a))!, y = files.get(koffi.address(b))!; return x.dev !== y.dev ? (x.dev < y.dev ? -1 : 1) : x.ino === y.ino ? 0 : x.ino < y.ino ? -1 : 1; }, CB.cmp),
  query: reg((_f: bigint, flags: bigint) => { koffi.encode(flags, 'unsigned long', 0x1|0x6|0x8|0x10|0x80|0x8000); return 0; }, CB.query),
  get_eoa: reg((p: bigint) => files.get(koffi.address(p))!.eoa, CB.get_eoa),
  set_eoa: reg((p: bigint, _t: number, a: bigint) => { files.get(koffi.address(p))!.eoa = BigInt(a); return 0; }, CB.set_eoa),
  get_eof: reg((p: bigint) => files.get(koffi.address(p))!.eof, CB.get_eof),
  get_handle: reg((p: bigint, _fapl: any, h: bigint) => { koffi.encode(h, 'void *', null); return -1; }, CB.get_handle),
  read: reg((p: bigint, _t: number, _d: any, addr: bigint, size: number, buf: bigint) => {
    nread++;
    const f = files.get(koffi.address(p))!;
    const b = Buffer.from(koffi.view(buf, Number(size)));
    let off = 0; let pos = Number(addr); const n = Number(size);
    while (off < n) { const r = fs.readSync(f.fd, b, off, n - off, pos); if (r === 0) { b.fill(0, off); break; } off += r; pos += r; }
    return 0;
  }, CB.read),
  write: reg((p: bigint, _t: number, _d: any, addr: bigint, size: number, buf: bigint) => {
    nwrite++;
    const f = files.get(koffi.address(p))!;
    const b = Buffer.from(koffi.view(buf, Number(size)));
    let off = 0; let pos = Number(addr); const n = Number(size);
    while (off < n) { const r = fs.writeSync(f.fd, b, off, n - off, pos); off += r; pos += r; }
    if (BigInt(pos) > f.eof) f.eof = BigInt(pos);
    return 0;
  }, CB.write),
  flush: reg(() => 0, CB.flush),
  truncate: reg((p: bigint) => { const f = files.get(koffi.address(p))!; if (f.eoa !== f.eof) { fs.ftruncateSync(f.fd, Number(f.eoa)); f.eof = f.eoa; } return 0; }, CB.truncate),
  lock: reg(() => 0, CB.lock),
  unlock: reg(() => 0, CB.unlock),
};
const nameBuf = Buffer.from('h5store_proto\0');
const cls = {
  name: 'h5store_proto', maxaddr: (1n << 62n) - 1n, fc_degree: 1 /* weak */,
  terminate: null, sb_size: null, sb_encode: null, sb_decode: null,
  fapl_size: 0, fapl_get: null, fapl_copy: null, fapl_free: null,
  dxpl_size: 0, dxpl_copy: null, dxpl_free: null,
  ...cbs, get_type_map: null, alloc: null, free: null,
  fl_map: [1, 1, 1, 3, 3, 1, 1],
};
const H5FDregister = LIB.func('int64_t H5FDregister(const H5FD_class_t_proto *cls)');
const H5Pset_driver = LIB.func('int H5Pset_driver(int64_t fapl, int64_t drv, void *info)');
const drv = H5FDregister(cls);
console.log('driver id', drv);
const fapl = H5.H5Pcreate(G.P_FILE_ACCESS);
H5.H5Pset_fclose_degree(fapl, 3);
H5Pset_driver(fapl, drv, null);
export { fapl, nread, nwrite };
const H5Fopen = LIB.func('int64_t H5Fopen(const char *n, unsigned int f, int64_t fapl)');
const H5Fclose = LIB.func('int H5Fclose(int64_t f)');
const H5Gcreate2 = LIB.func('int64_t H5Gcreate2(int64_t loc, const char *n, int64_t a, int64_t b, int64_t c)');
const H5Gclose = LIB.func('int H5Gclose(int64_t g)');
const H5Fflush = LIB.func('int H5Fflush(int64_t f, int s)');
fs.copyFileSync('/work/shared/fixtures/hdf5/tall.h5', '/tmp/hb/proto/t.h5');
const fid = H5Fopen('/tmp/hb/proto/t.h5', 1, fapl);
console.log('fid', fid);
for (let i = 0; i < 200; i++) { const g = H5Gcreate2(fid, 'g' + i, 0, 0, 0); H5Gclose(g); }
H5Fflush(fid, 1);
console.log('close', H5Fclose(fid), 'reads', nread, 'writes', nwrite);

const H5Dopen2 = LIB.func('int64_t H5Dopen2(int64_t loc, const char *n, int64_t dapl)');
const H5Dread = LIB.func('int H5Dread(int64_t d, int64_t mt, int64_t ms, int64_t fs, int64_t x, _Out_ uint8_t *buf)');
const H5Dclose = LIB.func('int H5Dclose(int64_t d)');
const H5Gget_info = LIB.func('int H5Gget_info_by_name(int64_t loc, const char *n, void *info, int64_t lapl)');
const H5Aopen_by_name = LIB.func('int64_t H5Aopen_by_name(int64_t loc, const char *o, const char *a, int64_t aapl, int64_t lapl)');
const H5Aclose = LIB.func('int H5Aclose(int64_t a)');
const dbl = koffi.decode(LIB.symbol('H5T_NATIVE_DOUBLE_g'), 'int64_t');
const sec2 = H5.H5Pcreate(G.P_FILE_ACCESS);
function bench(label: string, pl: any) {
  const t0 = performance.now();
  const f = H5Fopen('/tmp/hb/proto/big.h5', 0, pl);
  const buf = Buffer.alloc(32 * 1024 * 1024 * 8);
  let d = H5Dopen2(f, 'c', 0n); H5Dread(d, dbl, 0n, 0n, 0n, buf); H5Dclose(d);
  const t1 = performance.now();
  d = H5Dopen2(f, 'k', 0n); H5Dread(d, dbl, 0n, 0n, 0n, buf); H5Dclose(d);
  const t2 = performance.now();
  for (let i = 0; i < 2000; i++) { const a = H5Aopen_by_name(f, 'many/g' + i, 'a', 0n, 0n); H5Aclose(a); }
  const t3 = performance.now();
  H5Fclose(f);
  console.log(label, 'contig 256MB', (t1 - t0).toFixed(1), 'chunked 4096 chunks', (t2 - t1).toFixed(1), '2000 attrs', (t3 - t2).toFixed(1));
}
for (let i = 0; i < 3; i++) { bench('sec2 ', sec2); bench('jsvfd', fapl); }
