/**
 * `GET /file?domain=/folder/file.h5` (and HEAD): the domain's file as it is on disk, for a
 * download from the viewer and for clients that read HDF5 by byte ranges (h5wasm's lazy files,
 * fsspec's HTTP files under h5py, `curl -r`). Issue #28 item 8.
 *
 * - `read` on the domain (the route table's guard), as every other read of it, and on every
 *   object of the file that has an ACL of its own (`Store.openFileBytes`): the bytes hold them all.
 * - Ranges (RFC 9110 section 14): one range answers 206 with `Content-Range`; several answer
 *   206 `multipart/byteranges` (overlapping and adjacent ones merged); an unsatisfiable one 416
 *   with `Content-Range: bytes *\/size`; a malformed `Range`, or one of another unit, is ignored
 *   (200, the whole file). `If-Range` (an ETag or the Last-Modified date) sends the range only
 *   while the file is that version, the whole file otherwise.
 * - Validators: a strong `ETag` (device, inode, size, modification time) and `Last-Modified`;
 *   `If-None-Match` / `If-Modified-Since` answer 304, `If-Match` / `If-Unmodified-Since` 412, in
 *   the order of RFC 9110 13.2.2, whatever the request's Cache-Control says.
 * - Never compressed (ranges count bytes of the file); `Cache-Control: private, no-cache`
 *   (revalidated on every use: files change in place).
 * - A file that changes while it is being sent ends the transfer (store/session/download.ts): the client
 *   sees a body shorter than its Content-Length, never a silent mix of two versions. One that
 *   changed before its first byte was read answers 503 with Retry-After; the first 1 MiB is read
 *   under the domain's read lock (a file up to that size is always sent whole).
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import parseRange from 'range-parser';
import { H5StoreError } from '../../errors.js';
import type { FileSnapshot } from '../../store/session/download.js';
import type { Deps } from '../deps.js';
import { accessOf, refOf } from '../request.js';

/** Content type of HDF5 files (the one in common use; HDF5 has no IANA registration). */
export const HDF5_MIME = 'application/x-hdf5';

/** Most ranges one request may ask for (after merging): more is a 416 (RFC 9110 14.2 allows refusing). */
export const MAX_RANGES = 64;

/** Entity tags of an `If-Match` / `If-None-Match` list (`*` kept as is). */
function tagList(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** RFC 9110 8.8.3.2: strong comparison (neither weak, same opaque tag). */
function strongMatch(a: string, b: string): boolean {
  return !a.startsWith('W/') && !b.startsWith('W/') && a === b;
}

/** RFC 9110 8.8.3.2: weak comparison (the opaque tags, whether weak or not). */
function weakMatch(a: string, b: string): boolean {
  return a.replace(/^W\//, '') === b.replace(/^W\//, '');
}

/** A date header as seconds, or undefined when absent or invalid (then ignored, RFC 9110 13.1.3). */
function dateHeader(ctx: Context, name: string): number | undefined {
  const v = ctx.get(name);
  if (!v) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.floor(t / 1000);
}

/** Whether `If-Range` lets the range through (RFC 9110 13.1.5): the validator names this version. */
function ifRangeHolds(ctx: Context, snap: FileSnapshot): boolean {
  const v = ctx.get('if-range').trim();
  if (!v) return true;
  if (v.startsWith('"') || v.startsWith('W/')) return strongMatch(v, snap.etag);
  const t = Date.parse(v);
  // a date validates only when it is exactly the Last-Modified date (second precision)
  return !Number.isNaN(t) && Math.floor(t / 1000) === Math.floor(snap.lastModified.getTime() / 1000);
}

/**
 * The preconditions of RFC 9110 13.2.2, in its order.
 * @returns 304 when the client's copy is current, else undefined (go on)
 * @throws H5StoreError PreconditionFailed (412)
 */
function preconditions(ctx: Context, snap: FileSnapshot): 304 | undefined {
  const modified = Math.floor(snap.lastModified.getTime() / 1000);
  const ifMatch = ctx.get('if-match');
  if (ifMatch) {
    const tags = tagList(ifMatch);
    if (!tags.includes('*') && !tags.some((t) => strongMatch(t, snap.etag))) throw new H5StoreError('PreconditionFailed', 'The file is not the version If-Match names');
  } else {
    const since = dateHeader(ctx, 'if-unmodified-since');
    if (since !== undefined && modified > since) throw new H5StoreError('PreconditionFailed', 'The file was modified after the If-Unmodified-Since date');
  }
  // Evaluated here rather than with Koa's `fresh`, which ignores them when the request says
  // `Cache-Control: no-cache`, as fetch() does whenever a script sets them.
  const ifNoneMatch = ctx.get('if-none-match');
  if (ifNoneMatch) {
    const tags = tagList(ifNoneMatch);
    return tags.includes('*') || tags.some((t) => weakMatch(t, snap.etag)) ? 304 : undefined;
  }
  const since = dateHeader(ctx, 'if-modified-since');
  return since !== undefined && modified <= since ? 304 : undefined;
}

/** `GET /file` (and `HEAD`): the domain's file, whole or by ranges (this module's comment). */
export async function file(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const snap = await d.store.openFileBytes(ref.domain, accessOf(ctx));
  let handedOver = false;
  try {
    const name = ref.domain.slice(ref.domain.lastIndexOf('/') + 1);
    ctx.status = 200;
    ctx.set('ETag', snap.etag);
    ctx.set('Last-Modified', snap.lastModified.toUTCString());
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Cache-Control', 'private, no-cache');
    (ctx as { compress?: boolean }).compress = false; // koa-compress: never (byte ranges)
    if (preconditions(ctx, snap) === 304) {
      ctx.status = 304;
      return;
    }
    const rangeHeader = ctx.method === 'GET' ? ctx.get('range') : '';
    let ranges: { start: number; end: number }[] | undefined;
    if (rangeHeader && ifRangeHolds(ctx, snap)) {
      const parsed = parseRange(snap.size, rangeHeader, { combine: true });
      if (parsed === -1 || (Array.isArray(parsed) && parsed.type === 'bytes' && parsed.length > MAX_RANGES)) {
        const why = parsed === -1 ? `No range of ${JSON.stringify(rangeHeader.slice(0, 100))} lies within the file's ${snap.size} bytes` : `More than ${MAX_RANGES} ranges`;
        throw new H5StoreError('RangeNotSatisfiable', why, { headers: { 'Content-Range': `bytes */${snap.size}` } });
      }
      if (Array.isArray(parsed) && parsed.type === 'bytes') ranges = parsed.map((r) => ({ start: r.start, end: r.end }));
      // -2 (malformed) or another unit: ignored, the whole file (RFC 9110 14.2)
    }
    ctx.attachment(name, { fallback: true });
    ctx.type = HDF5_MIME;
    if (ctx.method === 'HEAD') {
      ctx.body = '';
      ctx.type = HDF5_MIME;
      ctx.length = snap.size;
      return;
    }
    // The first block is read before the status line, so that a failure to read at all
    // (the file changed since it was opened: an S3 object replaced within s3RevalidateMs) is
    // an answer, not a connection closed without one.
    const spans = ranges ?? [{ start: 0, end: snap.size - 1 }];
    const first = snap.blocks(spans[0]!.start, spans[0]!.end);
    let head: IteratorResult<Buffer>;
    try {
      head = await first.next();
    } catch (e) {
      if (e instanceof H5StoreError && e.code === 'Conflict') {
        throw new H5StoreError('Unavailable', `${e.message.replace(/: download it again$/, '')}: try again`, { retryAfter: Math.max(1, Math.ceil(d.config.s3RevalidateMs / 1000)) });
      }
      throw e;
    }
    /** The bytes of span `i`: the first span's from its block read above. */
    const spanBytes = async function* (i: number): AsyncGenerator<Buffer> {
      if (i > 0) return yield* snap.blocks(spans[i]!.start, spans[i]!.end);
      if (!head.done) yield head.value;
      yield* first;
    };
    let body: AsyncGenerator<Buffer>;
    if (!ranges) {
      body = spanBytes(0);
      ctx.length = snap.size;
    } else if (ranges.length === 1) {
      const r = ranges[0]!;
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${r.start}-${r.end}/${snap.size}`);
      body = spanBytes(0);
      ctx.length = r.end - r.start + 1;
    } else {
      const boundary = crypto.randomBytes(12).toString('hex');
      const heads = ranges.map((r, i) => Buffer.from(`${i ? '\r\n' : ''}--${boundary}\r\nContent-Type: ${HDF5_MIME}\r\nContent-Range: bytes ${r.start}-${r.end}/${snap.size}\r\n\r\n`));
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      let length = tail.length;
      for (let i = 0; i < ranges.length; i++) length += heads[i]!.length + ranges[i]!.end - ranges[i]!.start + 1;
      ctx.status = 206;
      ctx.type = `multipart/byteranges; boundary=${boundary}`;
      body = (async function* () {
        for (let i = 0; i < ranges.length; i++) {
          yield heads[i]!;
          yield* spanBytes(i);
        }
        yield tail;
      })();
      ctx.length = length;
    }
    const stream = Readable.from(body, { objectMode: false, highWaterMark: 1 });
    stream.once('error', (e) => {
      if (e instanceof H5StoreError && e.code === 'Conflict') d.logger.warn({ domain: ref.domain, reason: e.message }, 'download ended: the file changed');
    });
    ctx.res.once('close', () => snap.close());
    ctx.body = stream;
    handedOver = true;
  } finally {
    if (!handedOver) snap.close();
  }
}
