/**
 * Inflating HDF5's deflate filter (filter id 1: one zlib-wrapped deflate stream per chunk, RFC
 * 1950) into memory the caller gives, for the chunk reads of src/store/values/chunked.ts and
 * decodeChunks.ts (main thread and value threads alike; no libhdf5 here).
 *
 * libdeflate (Debian's libdeflate0, through koffi) when it loads: it decompresses a whole stream
 * in one call straight into the caller's buffer (a thread's scratch space, reused), where Node's
 * `zlib.inflateSync` allocates a new output buffer for every chunk, and fresh memory costs a page
 * fault per 4 KiB on first touch (measured on the 2-core VM: ~3.5 us each, ~1,000 per 16 chunks
 * of 256 KiB, about a third of the decoding threads' time; issue #29). It is also the faster
 * inflater of highly compressed data (16 chunks of 256 KiB at ~60:1: 0.4 ms against 0.7 ms for
 * Node's zlib without the faults). Without it, Node's zlib, with one copy more.
 */
import koffi from 'koffi';
import { inflateSync } from 'node:zlib';

type Fn = (...args: unknown[]) => unknown;

/** libdeflate's calls, bound once per thread (each thread loads its own koffi instance). */
const libdeflate = ((): { decompress: Fn; decompressor: unknown } | undefined => {
  try {
    const lib = koffi.load('libdeflate.so.0');
    const alloc = lib.func('void *libdeflate_alloc_decompressor()') as Fn;
    const decompress = lib.func('int libdeflate_zlib_decompress(void *d, const void *in, size_t in_nbytes, void *out, size_t out_nbytes_avail, void *actual_out_nbytes_ret)') as Fn;
    const decompressor = alloc();
    if (!decompressor) return undefined;
    // the library handle stays referenced through `keep` (koffi unloads a collected handle)
    return { decompress, decompressor, ...{ keep: lib } };
  } catch {
    return undefined; // not installed: Node's zlib
  }
})();

/** Which inflater this thread uses. */
export const INFLATER: 'libdeflate' | 'zlib' = libdeflate ? 'libdeflate' : 'zlib';

/** Where libdeflate writes the decompressed size (this thread's). */
const actual = new BigUint64Array(1);

/**
 * Inflate one zlib stream into `out`.
 * @param src the stored bytes (the whole stream)
 * @param out where the data goes; it must have room for all of it
 * @param using the inflater (tests compare them): this thread's by default
 * @returns the number of bytes written at the start of `out`
 * @throws Error with the reason when `src` is not a valid zlib stream, or its data does not fit
 *   `out` (the caller names the chunk); also when `using` is libdeflate and it did not load
 */
export function inflateInto(src: Uint8Array, out: Uint8Array, using: 'libdeflate' | 'zlib' = INFLATER): number {
  if (using === 'libdeflate') {
    if (!libdeflate) throw new Error('libdeflate (Debian libdeflate0) is not installed');
    const rc = libdeflate.decompress(libdeflate.decompressor, src, src.length, out, out.length, actual) as number;
    if (rc === 0) return Number(actual[0]);
    // LIBDEFLATE_BAD_DATA 1, LIBDEFLATE_INSUFFICIENT_SPACE 3
    throw new Error(rc === 3 ? `it decodes to more than ${out.length} bytes` : 'invalid zlib data');
  }
  let data: Buffer;
  try {
    data = inflateSync(src, { chunkSize: Math.max(64, out.length + 64), maxOutputLength: Math.max(1, out.length) });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`it decodes to more than ${out.length} bytes`);
    throw new Error((e as Error).message);
  }
  out.set(data);
  return data.length;
}
