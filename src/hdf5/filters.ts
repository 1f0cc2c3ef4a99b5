/**
 * Filter plugins: where libhdf5 finds them, the two filters h5store adds in-process, and what
 * this server can read and write (issue #26 item 5; docs/architecture.md "Filters").
 *
 * Plugins load only from libhdf5's plugin path: `pluginPath` (config) is prepended to it, or,
 * when no `pluginPath` is set, the folder `scripts/build-plugins.mjs` builds into
 * (`build/hdf5-plugins/` of this package) when it exists. Debian's default folder
 * (`/usr/lib/<arch>/hdf5/serial/plugins`: LZF, blosc, LZ4, BZip2, zfp) stays on the path unless
 * `HDF5_PLUGIN_PATH` replaces it.
 *
 * Registered here with `H5Zregister`, as JavaScript callbacks (koffi) around well-kept codec
 * libraries, only where no plugin does the job:
 * - zstd (filter 32015, the format of the HDF5Plugin-Zstandard plugin: one zstd frame per chunk,
 *   `cd_values[0]` the compression level), with Debian's libzstd, when no plugin provides 32015;
 * - bitshuffle (32008) on top of an upstream bitshuffle plugin that has no zstd inside (Debian's
 *   source is bitshuffle 0.3: LZ4 only). The chunk format is bitshuffle's (a 12-byte header:
 *   uncompressed bytes as big-endian uint64 and block bytes as big-endian uint32; then per block
 *   a big-endian uint32 of its compressed size and the compressed block; the elements past the
 *   last multiple of 8 stored raw). The bit transposition is the plugin's own
 *   (`bshuf_bitshuffle`/`bshuf_bitunshuffle`, exported by it); blocks are (de)compressed with
 *   libzstd or liblz4 (`LZ4_decompress_safe`). Decoding LZ4 and zstd chunks here also bounds
 *   every block by the chunk's size (the plugin trusts the sizes it reads); encoding without
 *   zstd is the plugin's own filter function, so those chunks are exactly what it writes.
 *
 * The callbacks run on the thread that calls libhdf5. A call on the worker thread of heavy.ts
 * on a dataset using them has its callbacks run on the main thread by koffi (as the journaling
 * driver's): `usesScriptFilters` tells heavy.ts to treat it so. Never a checked libhdf5 call in
 * a callback (the gate of lib.ts would refuse it then): they use only raw bindings.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';
import * as C from './constants.js';
import { H5, Hdf5Error, LIB, LIBC, type Hid, addPluginPath, named, takeErrorStack } from './lib.js';

/** `build/hdf5-plugins/` of this package (src/hdf5 or dist/hdf5 are two levels below it). */
export const BUILT_PLUGIN_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'hdf5-plugins');

const BITSHUFFLE = C.H5Z_FILTER_BITSHUFFLE;
const ZSTD = C.H5Z_FILTER_ZSTD;
const H5Z_FLAG_REVERSE = 0x0100;
/** bitshuffle's `cd_values[4]` codes (bshuf_h5filter.h). */
const BSHUF_LZ4 = 2;
const BSHUF_ZSTD = 3;
/** Largest chunk libhdf5 handles (its chunk sizes are 32-bit). */
const MAX_CHUNK = 0xffffffff;

// ---------------------------------------------------------------------------------------------
// Codec libraries (Debian's libzstd1 and liblz4-1), loaded when present.

function loadFirst(names: string[]): ReturnType<typeof koffi.load> | undefined {
  for (const n of names) {
    try {
      return koffi.load(n);
    } catch {
      /* next name */
    }
  }
  return undefined;
}

const zstdLib = loadFirst(['libzstd.so.1', 'libzstd.so', 'libzstd.dylib']);
/**
 * libzstd with one compression and one decompression context, reused for every call (creating a
 * context per call costs more than decoding a bitshuffle block of 8 KiB). The callbacks run on the
 * main thread only (the module comment), so one of each is enough.
 */
const zstd = zstdLib && (() => {
  const dctx = zstdLib.func('void *ZSTD_createDCtx()')();
  const cctx = zstdLib.func('void *ZSTD_createCCtx()')();
  const decompressDCtx = zstdLib.func('size_t ZSTD_decompressDCtx(void *ctx, void *dst, size_t cap, const void *src, size_t n)');
  const compressCCtx = zstdLib.func('size_t ZSTD_compressCCtx(void *ctx, void *dst, size_t cap, const void *src, size_t n, int level)');
  return {
    compress: (dst: Buffer, cap: number, src: Buffer, n: number, level: number) => compressCCtx(cctx, dst, cap, src, n, level) as number | bigint,
    decompress: (dst: Buffer, cap: number, src: Buffer, n: number) => decompressDCtx(dctx, dst, cap, src, n) as number | bigint,
    bound: zstdLib.func('size_t ZSTD_compressBound(size_t n)'),
    contentSize: zstdLib.func('uint64_t ZSTD_getFrameContentSize(const void *src, size_t n)'),
    isError: zstdLib.func('unsigned int ZSTD_isError(size_t code)'),
    errorName: zstdLib.func('const char *ZSTD_getErrorName(size_t code)'),
  };
})();
const lz4Lib = loadFirst(['liblz4.so.1', 'liblz4.so', 'liblz4.dylib']);
const lz4 = lz4Lib && {
  decompress: lz4Lib.func('int LZ4_decompress_safe(const void *src, void *dst, int n, int cap)'),
};

const malloc = LIBC.func('void *malloc(size_t n)');
const free = LIBC.func('void free(void *p)');

// raw (unchecked) libhdf5 calls for the callbacks (see the module comment)
const rawGetFilterById = LIB.func('int H5Pget_filter_by_id2(int64_t dcpl, int id, _Out_ unsigned int *flags, _Inout_ size_t *n, _Out_ unsigned int *values, size_t namelen, void *name, void *config)');
const rawModifyFilter = LIB.func('int H5Pmodify_filter(int64_t dcpl, int id, unsigned int flags, size_t n, const unsigned int *values)');
const rawTypeSize = LIB.func('size_t H5Tget_size(int64_t type)');
const H5Zregister = LIB.func('int H5Zregister(const void *cls)');
const H5PLsize = LIB.func('int H5PLsize(_Out_ unsigned int *n)');
const H5PLget = LIB.func('int64_t H5PLget(unsigned int idx, _Out_ uint8_t *buf, size_t size)');
const H5Epush2 = LIB.func('int H5Epush2(int64_t stack, const char *file, const char *func, unsigned int line, int64_t cls, int64_t maj, int64_t min, const char *fmt, ...)');
const globalId = (name: string): Hid => koffi.decode(LIB.symbol(name), 'int64_t') as Hid;
const E_ERR_CLS = globalId('H5E_ERR_CLS_g');
const E_PLINE = globalId('H5E_PLINE_g');
const E_CALLBACK = globalId('H5E_CALLBACK_g');

/** Put `msg` on libhdf5's error stack (the read's error then says why the filter failed). */
function pushError(func: string, msg: string): void {
  try {
    H5Epush2(0, 'h5store/filters.ts', func, 0, E_ERR_CLS, E_PLINE, E_CALLBACK, '%s', 'const char *', msg);
  } catch {
    /* never throw into C */
  }
}

// ---------------------------------------------------------------------------------------------
// The H5Z_class2_t of H5Zpublic.h (1.10) and the filter callback prototypes.

const FilterFn = named('h5s_H5Z_func_t', () => koffi.proto('size_t h5s_H5Z_func_t(unsigned int flags, size_t cd_nelmts, void *cd_values, size_t nbytes, void *buf_size, void *buf)'));
const SetLocalFn = named('h5s_H5Z_set_local_func_t', () => koffi.proto('int h5s_H5Z_set_local_func_t(int64_t dcpl, int64_t type, int64_t space)'));
const CLASS_BYTES = 48;
const OFF = { version: 0, id: 4, encoder: 8, decoder: 12, name: 16, canApply: 24, setLocal: 32, filter: 40 };

/** Memory that libhdf5 keeps pointers to for the life of the process (class structs, names). */
const keep: unknown[] = [];

function registerClass(id: number, name: string, filter: unknown, setLocal: unknown, encoder: boolean): void {
  const nameBuf = Buffer.from(name + '\0', 'latin1');
  const cls = Buffer.alloc(CLASS_BYTES);
  keep.push(nameBuf, cls, filter, setLocal);
  cls.writeInt32LE(1, OFF.version); // H5Z_CLASS_T_VERS
  cls.writeInt32LE(id, OFF.id);
  cls.writeUInt32LE(encoder ? 1 : 0, OFF.encoder);
  cls.writeUInt32LE(1, OFF.decoder);
  cls.writeBigUInt64LE(koffi.address(nameBuf) as bigint, OFF.name);
  cls.writeBigUInt64LE(0n, OFF.canApply);
  cls.writeBigUInt64LE(setLocal ? (koffi.address(setLocal) as bigint) : 0n, OFF.setLocal);
  cls.writeBigUInt64LE(koffi.address(filter) as bigint, OFF.filter);
  if (H5Zregister(cls) < 0) throw new Hdf5Error('H5Zregister', takeErrorStack());
}

/** The arguments of one filter call, decoded. */
interface Call {
  flags: number;
  cd: number[];
  nbytes: number;
  bufSize: unknown;
  buf: unknown;
  data: unknown;
}

function decodeCall(flags: number, n: number, cdPtr: unknown, nbytes: number, bufSize: unknown, buf: unknown): Call {
  const cd = n > 0 && cdPtr ? Array.from(koffi.decode(cdPtr, 'uint32_t', Number(n)) as ArrayLike<number>) : [];
  return { flags, cd, nbytes: Number(nbytes), bufSize, buf, data: koffi.decode(buf, 'void *') };
}

/** View `n` bytes of C memory (no copy). */
function view(ptr: unknown, n: number): Buffer {
  return n === 0 ? Buffer.alloc(0) : Buffer.from(koffi.view(ptr, n) as ArrayBuffer);
}

/** Hand `out` (malloc'ed, `size` bytes allocated) to libhdf5 in place of the input buffer. */
function replaceBuffer(c: Call, out: unknown, size: number): void {
  free(c.data);
  koffi.encode(c.buf, 'void *', out);
  koffi.encode(c.bufSize, 'size_t', size);
}

/** Run a filter body; a thrown error becomes libhdf5's "filter failed" (0) with the reason pushed. */
function guarded(func: string, body: (c: Call) => number): unknown {
  return koffi.register((flags: number, n: number, cdPtr: unknown, nbytes: number, bufSize: unknown, buf: unknown) => {
    try {
      return body(decodeCall(flags, n, cdPtr, nbytes, bufSize, buf));
    } catch (e) {
      pushError(func, (e as Error)?.message ?? String(e));
      return 0;
    }
  }, koffi.pointer(FilterFn));
}

function checkZstd(r: number | bigint, what: string): number {
  if (zstd!.isError(r)) throw new Error(`${what}: ${zstd!.errorName(r) as string}`);
  return Number(r);
}

function mallocOrThrow(n: number): unknown {
  const p = malloc(Math.max(1, n));
  if (!p) throw new Error(`cannot allocate ${n} bytes`);
  return p;
}

// ---------------------------------------------------------------------------------------------
// zstd (32015)

const ZSTD_CONTENTSIZE_UNKNOWN = 0xffffffffffffffffn;
const ZSTD_CONTENTSIZE_ERROR = 0xfffffffffffffffen;

function zstdFilter(c: Call): number {
  const input = view(c.data, c.nbytes);
  if (c.flags & H5Z_FLAG_REVERSE) {
    const raw = zstd!.contentSize(input, c.nbytes) as number | bigint;
    const big = BigInt(raw);
    if (big === ZSTD_CONTENTSIZE_UNKNOWN || big === ZSTD_CONTENTSIZE_ERROR) throw new Error('not a zstd frame with its content size');
    if (big > BigInt(MAX_CHUNK)) throw new Error(`zstd frame of ${big} bytes, larger than any chunk`);
    const size = Number(big);
    const out = mallocOrThrow(size);
    try {
      const got = checkZstd(zstd!.decompress(view(out, size), size, input, c.nbytes) as number | bigint, 'zstd decompression');
      if (got !== size) throw new Error(`zstd frame decoded to ${got} bytes, not the ${size} it announces`);
    } catch (e) {
      free(out);
      throw e;
    }
    replaceBuffer(c, out, size);
    return size;
  }
  const level = c.cd.length ? c.cd[0] | 0 : 0;
  const cap = Number(zstd!.bound(c.nbytes));
  const out = mallocOrThrow(cap);
  let n: number;
  try {
    n = checkZstd(zstd!.compress(view(out, cap), cap, input, c.nbytes, level) as number | bigint, 'zstd compression');
  } catch (e) {
    free(out);
    throw e;
  }
  replaceBuffer(c, out, cap);
  return n;
}

// ---------------------------------------------------------------------------------------------
// bitshuffle (32008) on top of an upstream plugin without zstd

/** An upstream bitshuffle plugin's entry points. */
interface BitshufflePlugin {
  file: string;
  filter: (...a: unknown[]) => number;
  setLocal: ((...a: unknown[]) => number) | null;
  bitshuffle: (...a: unknown[]) => number | bigint;
  bitunshuffle: (...a: unknown[]) => number | bigint;
  defaultBlockSize: (elemSize: number) => number;
}
let upstream: BitshufflePlugin | undefined;

/** Decode a bitshuffle chunk whose blocks are LZ4 or zstd compressed (format in the module comment). */
function bitshuffleDecode(c: Call, codec: number): number {
  const p = upstream!;
  const elem = c.cd[2];
  const input = view(c.data, c.nbytes);
  if (!elem) throw new Error('bitshuffle: no element size in cd_values');
  if (c.nbytes < 12) throw new Error(`bitshuffle chunk of ${c.nbytes} bytes has no header`);
  const total = input.readBigUInt64BE(0);
  const blockBytes = input.readUInt32BE(8);
  if (total > BigInt(MAX_CHUNK)) throw new Error(`bitshuffle chunk announces ${total} bytes`);
  const size = Number(total);
  if (size % elem) throw new Error(`bitshuffle chunk of ${size} bytes is not a whole number of ${elem}-byte elements`);
  if (!blockBytes || blockBytes % elem || (blockBytes / elem) % 8) throw new Error(`bitshuffle block of ${blockBytes} bytes is not a multiple of 8 elements of ${elem} bytes`);
  const block = blockBytes / elem;
  const count = size / elem;
  const out = mallocOrThrow(size);
  try {
    const outView = view(out, size);
    const tmp = Buffer.allocUnsafe(Math.min(blockBytes, size) || 1);
    let pos = 12;
    let off = 0;
    const one = (n: number): void => {
      const bytes = n * elem;
      if (pos + 4 > c.nbytes) throw new Error('bitshuffle chunk ends inside a block header');
      const len = input.readUInt32BE(pos);
      pos += 4;
      if (len > c.nbytes - pos) throw new Error(`bitshuffle block of ${len} bytes runs past the chunk's ${c.nbytes} bytes`);
      const src = input.subarray(pos, pos + len);
      let got: number;
      if (codec === BSHUF_ZSTD) got = checkZstd(zstd!.decompress(tmp, bytes, src, len) as number | bigint, 'zstd decompression of a bitshuffle block');
      else got = lz4!.decompress(src, tmp, len, bytes) as number;
      if (got !== bytes) throw new Error(`bitshuffle block decoded to ${got} bytes instead of ${bytes}`);
      const r = Number(p.bitunshuffle(tmp, outView.subarray(off, off + bytes), n, elem, n));
      if (r < 0) throw new Error(`bshuf_bitunshuffle failed (${r})`);
      pos += len;
      off += bytes;
    };
    const full = Math.floor(count / block);
    for (let i = 0; i < full; i++) one(block);
    let last = count % block;
    last -= last % 8;
    if (last) one(last);
    const rest = (count % 8) * elem;
    if (pos + rest > c.nbytes) throw new Error('bitshuffle chunk ends inside its last elements');
    input.copy(outView, off, pos, pos + rest);
  } catch (e) {
    free(out);
    throw e;
  }
  replaceBuffer(c, out, size);
  return size;
}

/** Encode a bitshuffle chunk with zstd blocks, as bitshuffle 0.4+ writes it. */
function bitshuffleEncodeZstd(c: Call): number {
  const p = upstream!;
  const elem = c.cd[2];
  if (!elem) throw new Error('bitshuffle: no element size in cd_values');
  if (c.nbytes % elem) throw new Error(`${c.nbytes} bytes are not a whole number of ${elem}-byte elements`);
  const count = c.nbytes / elem;
  const block = (c.cd.length > 3 && c.cd[3]) || p.defaultBlockSize(elem);
  if (block % 8) throw new Error(`bitshuffle block size ${block} is not a multiple of 8`);
  const level = c.cd.length > 5 ? c.cd[5] | 0 : 0;
  const full = Math.floor(count / block);
  let last = count % block;
  last -= last % 8;
  const rest = (count % 8) * elem;
  const cap = 12 + full * (Number(zstd!.bound(block * elem)) + 4) + (last ? Number(zstd!.bound(last * elem)) + 4 : 0) + rest;
  const input = view(c.data, c.nbytes);
  const out = mallocOrThrow(cap);
  let pos = 12;
  try {
    const o = view(out, cap);
    o.writeBigUInt64BE(BigInt(c.nbytes), 0);
    o.writeUInt32BE(block * elem, 8);
    const tmp = Buffer.allocUnsafe(block * elem || 1);
    let off = 0;
    const one = (n: number): void => {
      const bytes = n * elem;
      const r = Number(p.bitshuffle(input.subarray(off, off + bytes), tmp, n, elem, n));
      if (r < 0) throw new Error(`bshuf_bitshuffle failed (${r})`);
      const len = checkZstd(zstd!.compress(o.subarray(pos + 4), cap - pos - 4, tmp, bytes, level) as number | bigint, 'zstd compression');
      o.writeUInt32BE(len, pos);
      pos += 4 + len;
      off += bytes;
    };
    for (let i = 0; i < full; i++) one(block);
    if (last) one(last);
    input.copy(o, pos, off, off + rest);
    pos += rest;
  } catch (e) {
    free(out);
    throw e;
  }
  replaceBuffer(c, out, cap);
  return pos;
}

const bitshuffleFilter = (() => {
  let fn: unknown;
  return () =>
    (fn ??= koffi.register((flags: number, n: number, cdPtr: unknown, nbytes: number, bufSize: unknown, buf: unknown) => {
      try {
        const c = decodeCall(flags, n, cdPtr, nbytes, bufSize, buf);
        const codec = c.cd.length > 4 ? c.cd[4] : 0;
        if (codec === BSHUF_ZSTD && !zstd) throw new Error('bitshuffle with zstd needs libzstd (Debian libzstd1)');
        if (c.flags & H5Z_FLAG_REVERSE) {
          if (codec === BSHUF_ZSTD || (codec === BSHUF_LZ4 && lz4)) return bitshuffleDecode(c, codec);
        } else if (codec === BSHUF_ZSTD) {
          return bitshuffleEncodeZstd(c);
        }
        if (codec !== 0 && codec !== BSHUF_LZ4) throw new Error(`unknown bitshuffle compression ${codec} (cd_values[4])`);
        return upstream!.filter(flags, n, cdPtr, nbytes, bufSize, buf);
      } catch (e) {
        pushError('bitshuffle', (e as Error)?.message ?? String(e));
        return 0;
      }
    }, koffi.pointer(FilterFn)));
})();

/** Default zstd level written into cd_values when none is given (zstd's own default). */
const ZSTD_DEFAULT_LEVEL = 3;

const bitshuffleSetLocal = (() => {
  let fn: unknown;
  return () =>
    (fn ??= koffi.register((dcpl: Hid, type: Hid, space: Hid) => {
      try {
        const flags = [0];
        const n = [8];
        const user = new Array<number>(8).fill(0);
        if (rawGetFilterById(dcpl, BITSHUFFLE, flags, n, user, 0, null, null) < 0) return -1;
        const given = user.slice(0, n[0]);
        if (given[1] !== BSHUF_ZSTD) return upstream!.setLocal ? upstream!.setLocal(dcpl, type, space) : 1;
        const elem = Number(rawTypeSize(type));
        if (!elem) throw new Error('bitshuffle: the type has no size');
        const block = given[0] ?? 0;
        if (block % 8) throw new Error(`bitshuffle block size ${block} is not a multiple of 8`);
        // [format major, minor (0.4: the first with zstd), element size, block size, zstd, level]
        const values = [0, 4, elem, block, BSHUF_ZSTD, given.length > 2 ? given[2] : ZSTD_DEFAULT_LEVEL];
        return rawModifyFilter(dcpl, BITSHUFFLE, flags[0], values.length, values) < 0 ? -1 : 1;
      } catch (e) {
        pushError('bitshuffle set_local', (e as Error)?.message ?? String(e));
        return -1;
      }
    }, koffi.pointer(SetLocalFn)));
})();

// ---------------------------------------------------------------------------------------------
// Finding plugins on libhdf5's path

/** The directories libhdf5 searches for plugins, in order. */
export function pluginSearchPath(): string[] {
  const n = [0];
  if (H5PLsize(n) < 0) return [];
  const out: string[] = [];
  for (let i = 0; i < n[0]; i++) {
    const buf = Buffer.alloc(4096);
    const len = Number(H5PLget(i, buf, buf.length));
    if (len > 0) out.push(buf.toString('utf8', 0, Math.min(len, buf.length - 1)));
  }
  return out;
}

/**
 * The first plugin file on libhdf5's search path that provides filter `id` (libhdf5 takes the
 * first too), with its class struct; undefined when none does. Loaded libraries stay loaded.
 */
function findPlugin(id: number): { file: string; lib: ReturnType<typeof koffi.load>; info: unknown } | undefined {
  for (const dir of pluginSearchPath()) {
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((n) => /\.(so|dylib)$/.test(n)).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      let lib: ReturnType<typeof koffi.load>;
      try {
        lib = koffi.load(file);
      } catch {
        continue;
      }
      try {
        const type = lib.func('int H5PLget_plugin_type()')() as number;
        if (type !== 0) continue; // H5PL_TYPE_FILTER
        const info = lib.func('void *H5PLget_plugin_info()')();
        if (info && (koffi.decode(info, OFF.id, 'int') as number) === id) {
          keep.push(lib);
          return { file, lib, info };
        }
      } catch {
        /* not an HDF5 plugin */
      }
    }
  }
  return undefined;
}

/** Whether `lib` exports `symbol`. */
function exports(lib: ReturnType<typeof koffi.load>, proto: string): ((...a: unknown[]) => unknown) | undefined {
  try {
    return lib.func(proto);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Set-up and capabilities

/** How a filter is provided here. */
export type FilterVia = 'libhdf5' | 'plugin' | 'h5store';
const via = new Map<number, FilterVia>();
/** bitshuffle variants (by `cd_values[4]`) this process reads and writes. */
const bitshuffleCodecs = new Map<number, { read: boolean; write: boolean }>();
let configured = false;

/**
 * Set libhdf5's plugin path and register h5store's in-process filters (once per process, before
 * any dataset is opened; src/main.ts). `pluginPath` (':'-separated) is prepended to libhdf5's
 * path; when it is undefined, the built plugin folder is when it exists.
 * @returns the directories prepended
 */
export function configureFilters(pluginPath?: string): string[] {
  if (configured) return [];
  configured = true;
  const dirs = pluginPath !== undefined ? pluginPath.split(':').filter(Boolean) : fs.existsSync(BUILT_PLUGIN_DIR) ? [BUILT_PLUGIN_DIR] : [];
  if (dirs.length) addPluginPath(dirs.join(':'));

  for (const f of C.FILTERS) {
    if (f.id < 256) via.set(f.id, 'libhdf5');
  }
  if (zstd && !H5.H5Zfilter_avail(ZSTD)) {
    registerClass(ZSTD, 'zstd (h5store, libzstd); HDF5Plugin-Zstandard format', guarded('zstd', zstdFilter), null, true);
    via.set(ZSTD, 'h5store');
  }
  setUpBitshuffle();
  return dirs;
}

function setUpBitshuffle(): void {
  const none = { read: false, write: false };
  for (const k of [0, BSHUF_LZ4, BSHUF_ZSTD]) bitshuffleCodecs.set(k, none);
  if (!H5.H5Zfilter_avail(BITSHUFFLE)) return;
  const found = findPlugin(BITSHUFFLE);
  const nativeZstd = found && exports(found.lib, 'int64_t bshuf_decompress_zstd(const void *in, void *out, size_t size, size_t elem, size_t block)');
  const enc = (found ? (koffi.decode(found.info, OFF.encoder, 'unsigned int') as number) : 1) !== 0;
  bitshuffleCodecs.set(0, { read: true, write: enc });
  bitshuffleCodecs.set(BSHUF_LZ4, { read: true, write: enc });
  if (!found || nativeZstd) {
    // a plugin with zstd built in (bitshuffle 0.4+), or one we cannot look into: libhdf5 uses it as it is
    if (nativeZstd) bitshuffleCodecs.set(BSHUF_ZSTD, { read: true, write: enc });
    return;
  }
  const bitshuffle = exports(found.lib, 'int64_t bshuf_bitshuffle(const void *in, void *out, size_t size, size_t elem, size_t block)');
  const bitunshuffle = exports(found.lib, 'int64_t bshuf_bitunshuffle(const void *in, void *out, size_t size, size_t elem, size_t block)');
  const defaultBlockSize = exports(found.lib, 'size_t bshuf_default_block_size(size_t elem)');
  if (!bitshuffle || !bitunshuffle || !defaultBlockSize || !zstd) return;
  const filterPtr = koffi.decode(found.info, OFF.filter, 'void *');
  const setLocalPtr = koffi.decode(found.info, OFF.setLocal, 'void *');
  upstream = {
    file: found.file,
    filter: koffi.decode(filterPtr, FilterFn) as unknown as BitshufflePlugin['filter'],
    setLocal: setLocalPtr ? (koffi.decode(setLocalPtr, SetLocalFn) as unknown as BitshufflePlugin['setLocal']) : null,
    bitshuffle: bitshuffle as BitshufflePlugin['bitshuffle'],
    bitunshuffle: bitunshuffle as BitshufflePlugin['bitunshuffle'],
    defaultBlockSize: (e: number) => Number(defaultBlockSize(e)),
  };
  registerClass(BITSHUFFLE, 'bitshuffle (upstream plugin; zstd blocks by h5store)', bitshuffleFilter(), bitshuffleSetLocal(), enc);
  bitshuffleCodecs.set(BSHUF_ZSTD, { read: true, write: enc });
  via.set(BITSHUFFLE, 'h5store');
}

/** Ids of filters whose callbacks are JavaScript of this process. */
export function scriptFilterIds(): number[] {
  return [...via].filter(([, v]) => v === 'h5store').map(([id]) => id);
}

/** Whether the dataset `did`'s pipeline calls JavaScript filters (heavy.ts runs it like journaled I/O). */
export function usesScriptFilters(did: Hid): boolean {
  const ids = scriptFilterIds();
  if (!ids.length) return false;
  const dcpl = H5.H5Dget_create_plist(did);
  try {
    const n = H5.H5Pget_nfilters(dcpl) as number;
    for (let i = 0; i < n; i++) {
      const flags = [0];
      const nelmts = [0];
      const config = [0];
      const id = H5.H5Pget_filter2(dcpl, i, flags, nelmts, null, 0, null, config) as number;
      if (ids.includes(id)) return true;
    }
    return false;
  } finally {
    H5.H5Pclose(dcpl);
  }
}

/** What libhdf5 can do with filter `id` here (its config flags). */
function libFlags(id: number): { read: boolean; write: boolean } {
  try {
    if (!H5.H5Zfilter_avail(id)) return { read: false, write: false };
    const cfg = [0];
    H5.H5Zget_filter_info(id, cfg);
    return { read: (cfg[0] & C.H5Z_FILTER_CONFIG_DECODE_ENABLED) !== 0, write: (cfg[0] & C.H5Z_FILTER_CONFIG_ENCODE_ENABLED) !== 0 };
  } catch {
    return { read: false, write: false };
  }
}

/** bitshuffle's inner compression code from cd_values as stored in a file (`file`) or as given to H5Pset_filter (`user`). */
export function bitshuffleCodec(cd: number[], form: 'file' | 'user'): number {
  return (form === 'file' ? cd[4] : cd[1]) ?? 0;
}
const CODEC_NAMES: Record<number, string> = { 0: 'none', [BSHUF_LZ4]: 'lz4', [BSHUF_ZSTD]: 'zstd' };
/** `lz4`, `zstd`, `none`, or the code for one bitshuffle does not define. */
export function bitshuffleCodecName(code: number): string {
  return CODEC_NAMES[code] ?? String(code);
}

/** A filter of a pipeline, and whether this server reads (decodes) and writes (encodes) it. */
export interface FilterSupport {
  read: boolean;
  write: boolean;
  /** The filter as users name it, e.g. "bitshuffle with zstd inside (id 32008)". */
  label: string;
}

/**
 * Whether this server can decode and encode one filter of a pipeline: libhdf5's config flags,
 * and for bitshuffle its inner compression (`cd_values` in the file's form, or as given).
 */
export function filterSupport(id: number, cd: number[], form: 'file' | 'user' = 'file'): FilterSupport {
  const known = C.FILTERS.find((k) => k.id === id);
  const name = known?.name ?? `filter ${id}`;
  if (id === BITSHUFFLE) {
    const code = bitshuffleCodec(cd, form);
    const s = bitshuffleCodecs.get(code) ?? { read: false, write: false };
    const inner = code === 0 ? '' : ` with ${bitshuffleCodecName(code)} inside`;
    return { ...s, label: `bitshuffle${inner} (id ${id})` };
  }
  return { ...libFlags(id), label: `${name} (id ${id})` };
}

/** How to get a missing filter, for the 415 message. */
export function filterHint(id: number): string {
  switch (id) {
    case BITSHUFFLE:
      return 'build its plugin (node scripts/build-plugins.mjs; needs Debian libhdf5-dev liblz4-dev, and libzstd1 for zstd inside) or give the folder of a bitshuffle plugin as pluginPath';
    case ZSTD:
      return 'install libzstd (Debian libzstd1) or give the folder of a zstd plugin as pluginPath';
    case C.H5Z_FILTER_ZFP:
      return 'install its plugin (Debian hdf5-filter-plugin-zfp-serial) or give its folder as pluginPath';
    case 32000:
      return 'install its plugin (Debian hdf5-plugin-lzf and liblzf1) or give its folder as pluginPath';
    case 32001:
      return 'install its plugin (Debian hdf5-filter-plugin-blosc-serial) or give its folder as pluginPath';
    case 32004:
    case 307:
      return 'install its plugin (Debian hdf5-filter-plugin) or give its folder as pluginPath';
    default:
      return 'install its HDF5 plugin and give its folder as pluginPath';
  }
}

/** One row of the `filters` list of `GET /about`. */
export interface FilterReport {
  id: number;
  class: string;
  name: string;
  /** bitshuffle's inner compression (`none`, `lz4`, `zstd`). */
  compression?: string;
  read: boolean;
  write: boolean;
  /** libhdf5 itself, a plugin on its path, or h5store's own callbacks. */
  via?: FilterVia;
}

/** The names of `filterReport`'s rows (bitshuffle's as `bitshuffle+lz4`, `bitshuffle+zstd`). */
function rowName(r: FilterReport): string {
  return r.compression && r.compression !== 'none' ? `${r.name}+${r.compression}` : r.name;
}

/**
 * The short form of `GET /` (every domain GET carries it, so it is kept small): the names of the
 * filters this server reads and of those it writes, e.g. `{"read": ["gzip", ..., "bitshuffle+zstd",
 * "zfp", "zstd"], "write": [...]}`; `GET /about` has the rows with ids and classes.
 */
export function filterNames(): { read: string[]; write: string[] } {
  const rows = filterReport();
  return { read: rows.filter((r) => r.read).map(rowName), write: rows.filter((r) => r.write).map(rowName) };
}

let report: FilterReport[] | undefined;
/** Every filter of the wire reference's table (and bitshuffle per inner compression): read, write, via. */
export function filterReport(): FilterReport[] {
  if (report) return report;
  const out: FilterReport[] = [];
  for (const f of C.FILTERS) {
    if (f.id === BITSHUFFLE) {
      for (const code of [0, BSHUF_LZ4, BSHUF_ZSTD]) {
        const s = bitshuffleCodecs.get(code) ?? libFlags(f.id);
        // wrapped: LZ4 and zstd chunks are decoded by h5store (with the plugin's bit transposition)
        const v = code !== 0 && via.get(f.id) === 'h5store' ? 'h5store' : 'plugin';
        out.push({ id: f.id, class: f.cls, name: f.name, compression: bitshuffleCodecName(code), read: s.read, write: s.write, ...(s.read || s.write ? { via: v } : {}) });
      }
      continue;
    }
    const s = libFlags(f.id);
    const v = via.get(f.id) ?? 'plugin';
    out.push({ id: f.id, class: f.cls, name: f.name, read: s.read, write: s.write, ...(s.read || s.write ? { via: v } : {}) });
  }
  if (configured) report = out;
  return out;
}
