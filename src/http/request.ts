/**
 * Request parsing shared by the handlers: domain selection, query flags, bodies.
 */
import type { Context } from 'koa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import picomatch from 'picomatch';
import getRawBody from 'raw-body';
import { parseJsonBody } from '../codec/json.js';
import type { Config } from '../config.js';
import { H5StoreError, badRequest } from '../errors.js';
import type { Access } from '../store/access.js';
import type { BufferPool } from '../store/pagepool.js';
import { isValidBucketName, normalizeDomain } from '../store/paths.js';
import type { ObjectJsonOptions } from '../store/domainObjects.js';

/** The domain a request names and how it named it (hrefs repeat a query-param domain). */
export interface DomainRef {
  domain: string;
  viaQuery: boolean;
}

/**
 * The request's domain: the `domain` query parameter first, then the `X-Store-domain` header,
 * then `X-Hdf-domain` (wire-reference 0.3; DESIGN.md section 6).
 * @returns undefined when none is given and `required` is false.
 * @throws BadRequest for a missing (when required) or invalid domain.
 */
export function domainRef(ctx: Context, opts: { required?: boolean; allowRoot?: boolean; param?: 'domain' | 'file' } = {}): DomainRef | undefined {
  if (opts.param === 'file') return fileRef(ctx, opts);
  const q = ctx.query.domain;
  let raw: string | undefined;
  let viaQuery = false;
  if (typeof q === 'string' && q !== '') {
    raw = q;
    viaQuery = true;
  } else if (Array.isArray(q)) {
    throw badRequest('Give the domain only once');
  } else {
    raw = ctx.get('x-store-domain') || ctx.get('x-hdf-domain') || undefined;
  }
  checkBucket(ctx);
  if (raw === undefined) {
    if (opts.required === false) return undefined;
    throw badRequest('Invalid domain: no domain given (use ?domain=/path/file.h5 or the X-Store-domain header)');
  }
  return { domain: normalizeDomain(raw, { allowRoot: opts.allowRoot }), viaQuery };
}

/**
 * The domain h5grove's `file` query parameter names (its API has no headers for it): a path
 * from the top folder, the leading `/` optional (`samples/tall.h5` is `/samples/tall.h5`).
 * @throws BadRequest when missing (and required), repeated or invalid
 */
function fileRef(ctx: Context, opts: { required?: boolean; allowRoot?: boolean }): DomainRef | undefined {
  const q = ctx.query.file;
  if (Array.isArray(q)) throw badRequest('Give the file only once');
  if (typeof q !== 'string' || q === '') {
    if (opts.required === false) return undefined;
    throw badRequest('Invalid file: no file given (use ?file=/folder/file.h5)');
  }
  return { domain: normalizeDomain(q.startsWith('/') ? q : `/${q}`, { allowRoot: opts.allowRoot }), viaQuery: false };
}

/** The domain of an object route (required). */
export function requireDomain(ctx: Context): DomainRef {
  return domainRef(ctx, { required: true })!;
}

/** The JSON object body the auth middleware read (routes declared with `jsonBody`). */
export function bodyOf(ctx: Context): Record<string, unknown> {
  return (ctx.state as { body?: Record<string, unknown> }).body ?? {};
}

/** The JSON list body the auth middleware read (routes declared with `jsonList`), if the body was a list. */
export function bodyListOf(ctx: Context): unknown[] | undefined {
  return (ctx.state as { bodyList?: unknown[] }).bodyList;
}

/** The request's domain as the auth middleware resolved it (routes with a requirement). */
export function refOf(ctx: Context): DomainRef {
  return (ctx.state as { ref?: DomainRef }).ref ?? requireDomain(ctx);
}

/** One query parameter as a string (the first when repeated). */
export function param(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A boolean flag (wire-reference 0.9): absent, `0`, empty, `false`, `f`, `no` mean false;
 * anything else means true.
 */
export function flag(ctx: Context, name: string): boolean {
  const v = param(ctx, name);
  if (v === undefined) return false;
  return !['', '0', 'false', 'f', 'no', 'n'].includes(v.toLowerCase());
}

/** `Limit` (0 or absent: no limit). @throws BadRequest when not a non-negative integer. */
export function limitParam(ctx: Context, name = 'Limit'): number | undefined {
  const v = param(ctx, name) ?? param(ctx, name.toLowerCase());
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`Expected int type for ${name.toLowerCase()}`);
  const n = Number(v);
  return n === 0 ? undefined : n;
}

/** `Marker` (or `marker`), URL-decoded by the query parser. */
export function markerParam(ctx: Context): string | undefined {
  return param(ctx, 'Marker') ?? param(ctx, 'marker');
}

/** True when the client asked for binary (`Accept: application/octet-stream`, wire-reference 5). */
export function wantsBinary(ctx: Context): boolean {
  const accept = ctx.get('accept');
  if (!accept) return false;
  return ctx.accepts('application/json', 'application/octet-stream') === 'application/octet-stream' && accept.includes('application/octet-stream');
}

/**
 * Whether a request body is binary: Content-Type containing `application/octet-stream`; JSON
 * when absent or JSON (h5pyd posts JSON without a Content-Type).
 * @throws BadRequest for any other content type (wire-reference 0.5).
 */
export function bodyIsBinary(ctx: Context): boolean {
  const ct = ctx.get('content-type').toLowerCase();
  if (ct.includes('application/octet-stream')) return true;
  if (ct === '' || ct.includes('json')) return false;
  throw badRequest(`Unknown content_type: ${ct}`);
}

/** Read the raw request body up to `limit` bytes. @throws PayloadTooLarge beyond it. */
export async function rawBody(ctx: Context, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined });
  } catch (e) {
    const err = e as { type?: string; status?: number; message: string };
    if (err.type === 'entity.too.large') throw new H5StoreError('PayloadTooLarge', `Request body larger than ${limit} bytes`);
    if (err.type === 'request.size.invalid') throw badRequest('Request body shorter than its Content-Length');
    throw badRequest(`Cannot read the request body: ${err.message}`);
  }
}

/** A binary request body: in (pooled) memory, or spooled to a temporary file. */
export interface BinaryBody {
  wire?: Buffer;
  spool?: { path: string; size: number };
  /** Give the memory back / remove the spool file. Call once, when done with the body. */
  done(): void;
}

/**
 * Read a binary body (dataset value writes). Bodies up to `spoolAbove` bytes are read into a
 * pooled buffer (no chunk list, no fresh allocation: a fresh 16 MiB Buffer per request costs
 * more in garbage collection than the copy); larger ones, and bodies without Content-Length
 * that grow past it, are spooled to a temporary file so nothing reaches HDF5 before the whole
 * body arrived and writes larger than memory work.
 * @throws PayloadTooLarge beyond `max`; BadRequest when the body and Content-Length disagree.
 */
export async function binaryBody(ctx: Context, opts: { spoolAbove: number; max: number; pool: BufferPool }): Promise<BinaryBody> {
  const lengthHeader = ctx.get('content-length');
  const announced = lengthHeader === '' ? -1 : Number(lengthHeader);
  if (announced > opts.max) throw new H5StoreError('PayloadTooLarge', `Request body larger than ${opts.max} bytes`);
  if (announced >= 0 && announced <= opts.spoolAbove) {
    const buf = opts.pool.take(announced);
    let pos = 0;
    try {
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
        if (pos + chunk.length > announced) throw badRequest(`Request body is longer than its Content-Length (${announced})`);
        chunk.copy(buf, pos);
        pos += chunk.length;
      }
      if (pos !== announced) throw badRequest(`Request body is shorter than its Content-Length (${announced})`);
    } catch (e) {
      opts.pool.give(buf);
      if (e instanceof H5StoreError) throw e;
      throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
    }
    return { wire: buf, done: () => opts.pool.give(buf) };
  }
  if (announced > opts.spoolAbove) {
    const spool = await spoolStream(ctx.req, [], opts.max);
    if (spool.size !== announced) {
      dropSpool(spool);
      throw badRequest(`Request body is ${spool.size} bytes, Content-Length said ${announced}`);
    }
    return { spool, done: () => dropSpool(spool) };
  }
  // No Content-Length (chunked): memory until spoolAbove, then a spool file.
  const parts: Buffer[] = [];
  let size = 0;
  const it = (ctx.req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  for (;;) {
    let r: IteratorResult<Buffer>;
    try {
      r = await it.next();
    } catch (e) {
      throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
    }
    if (r.done) return { wire: Buffer.concat(parts, size), done: () => undefined };
    parts.push(r.value);
    size += r.value.length;
    if (size > opts.spoolAbove) {
      const rest = Readable.from({ [Symbol.asyncIterator]: () => it });
      const spool = await spoolStream(rest, parts, opts.max);
      return { spool, done: () => dropSpool(spool) };
    }
  }
}

/** Write already-read chunks and the rest of a stream to a temporary file. */
async function spoolStream(rest: NodeJS.ReadableStream, head: Buffer[], limit: number): Promise<{ path: string; size: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-body-'));
  const file = path.join(dir, 'body');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > limit) cb(new H5StoreError('PayloadTooLarge', `Request body larger than ${limit} bytes`));
      else cb(null, chunk);
    },
  });
  for (const h of head) counter.write(h);
  try {
    await pipeline(rest, counter, fs.createWriteStream(file));
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    if (e instanceof H5StoreError) throw e;
    throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
  }
  return { path: file, size };
}

/** Remove a spooled body. */
export function dropSpool(spool: { path: string }): void {
  fs.rmSync(path.dirname(spool.path), { recursive: true, force: true });
}

/**
 * Read a JSON body whatever its Content-Type (wire-reference 0.5). Empty body -> `{}` unless
 * `required`. NaN/Infinity literals and big integers are accepted.
 * @throws BadRequest `Unable to load JSON body` for invalid JSON.
 */
export async function jsonBody(ctx: Context, config: Config, opts: { required?: boolean } = {}): Promise<unknown> {
  const text = (await rawBody(ctx, config.maxJsonBodyBytes)).toString('utf8');
  if (text.trim() === '') {
    if (opts.required) throw badRequest('A JSON body is required');
    return {};
  }
  return parseJsonBody(text, { maxDepth: config.maxJsonDepth });
}

/**
 * A JSON body that must be an object. A JSON `null` is no body (`{}`, or 400 when `required`):
 * h5pyd sends `null` when it has nothing to say (`PUT /?flush=1`, issue #25).
 */
export async function jsonObject(ctx: Context, config: Config, opts: { required?: boolean } = {}): Promise<Record<string, unknown>> {
  return asBodyObject(await jsonBody(ctx, config, opts), opts);
}

/** A parsed JSON body as an object (`null`: `{}`, or 400 when `required`). @throws BadRequest for anything else */
export function asBodyObject(b: unknown, opts: { required?: boolean } = {}): Record<string, unknown> {
  if (b === null) {
    if (opts.required) throw badRequest('A JSON body is required');
    return {};
  }
  if (typeof b !== 'object' || Array.isArray(b)) throw badRequest('The JSON body must be an object');
  return b as Record<string, unknown>;
}

/** A shell glob (`pattern=`) as a predicate on names (only `*`, `?` and `[...]`). */
export function globParam(ctx: Context): ((name: string) => boolean) | undefined {
  const p = param(ctx, 'pattern');
  if (p === undefined || p === '') return undefined;
  return globToPredicate(p);
}

/** Compile a glob with picomatch (basename matching, dots allowed). */
export function globToPredicate(glob: string): (name: string) => boolean {
  try {
    return picomatch(glob, { dot: true, nobrace: true, noextglob: true });
  } catch (e) {
    throw badRequest(`Invalid pattern: ${(e as Error).message}`);
  }
}

/**
 * The `bucket` query parameter or `X-Hdf-bucket` header (wire-reference 0.3): h5store has one
 * storage root, so a bucket is ignored, but a name that breaks S3's bucket naming rules is a 400
 * as in HSDS: 3-63 characters of lower-case letters, digits, `.` and `-`, starting and ending
 * with a letter or digit, no `..`, not an IPv4 address, no `xn--`/`sthree-` prefix or
 * `-s3alias`/`--ol-s3` suffix
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
 * @throws BadRequest for an invalid bucket name.
 */
export function checkBucket(ctx: Context): void {
  const q = ctx.query.bucket;
  const b = (Array.isArray(q) ? q[0] : q) ?? (ctx.get('x-hdf-bucket') || undefined);
  if (b === undefined) return;
  if (!isValidBucketName(b)) throw badRequest(`Invalid bucket name ${JSON.stringify(b.length > 80 ? b.slice(0, 80) + '...' : b)}`);
}

export { isValidBucketName };

/**
 * The requester's permissions for what the store finds an operation reaches (set by the guard,
 * auth.ts, for every route; store/access.ts).
 */
export function accessOf(ctx: Context): Access {
  return (ctx.state as { access: Access }).access;
}

/**
 * Which links a path lookup may cross (`follow_soft_links=1`, `follow_external_links=1`), the
 * access check of what it finds, and what the object's JSON holds (`objectJsonOptions`).
 */
export function pathOptions(ctx: Context, body: Record<string, unknown> = {}): { followSoft: boolean; followExternal: boolean; access: Access; object: ObjectJsonOptions } {
  return {
    followSoft: flag(ctx, 'follow_soft_links'),
    followExternal: flag(ctx, 'follow_external_links'),
    access: accessOf(ctx),
    object: objectJsonOptions(ctx, body),
  };
}

/**
 * The query string of a `self` href: the request's own values of `names` (e.g. `Limit`, `Marker`),
 * in that order, plus `extra`; undefined when there is none. `domain` is never among them: hrefs
 * add it once themselves (present.ts `Hrefs`).
 */
export function selfQuery(ctx: Context, names: string[], extra?: string): string | undefined {
  const parts: string[] = [];
  if (extra) parts.push(extra);
  for (const n of names) {
    const v = param(ctx, n);
    if (v !== undefined) parts.push(`${n}=${encodeURIComponent(v)}`);
  }
  return parts.length ? parts.join('&') : undefined;
}

/**
 * What an object's JSON holds in path lookups (`GET /?h5path=`, `POST /` with `h5paths`: h5web's
 * batch requests, issue #25): `include_links` (groups), `include_attrs` with `IncludeData`
 * (default 1) and `max_data_size`, `CreateOrder`; from the query, or from `body` keys of the same
 * names (a query parameter wins).
 * @throws BadRequest for a `max_data_size` that is not a non-negative integer
 */
export function objectJsonOptions(ctx: Context, body: Record<string, unknown> = {}): ObjectJsonOptions {
  const get = (name: string): boolean | undefined => {
    if (param(ctx, name) !== undefined) return flag(ctx, name);
    const v = body[name];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'string' ? !['', '0', 'false', 'f', 'no', 'n'].includes(v.toLowerCase()) : !!v;
  };
  const m = param(ctx, 'max_data_size') ?? body.max_data_size;
  if (m !== undefined && m !== null && m !== '' && !/^\d+$/.test(String(m))) throw badRequest('expected int for max_data_size');
  return {
    includeLinks: get('include_links') ?? false,
    includeAttrs: get('include_attrs') ?? false,
    createOrder: get('CreateOrder') ?? false,
    attrValues: { includeData: get('IncludeData') ?? true, maxDataSize: m === undefined || m === null || m === '' ? undefined : Number(m) },
  };
}

/**
 * 404 for a single-item route reached with an empty name (`.../links/`, `.../attributes/`): the
 * router lets the trailing slash reach the list route, but a client that asked for a link or
 * attribute whose name was lost (h5pyd's requests drops a name made only of `#...#` as a URL
 * fragment) must not get the list (issue #25; HSDS: 404).
 * @throws H5StoreError NotFound when the request path ends with `/`
 */
export function emptyNameIs404(ctx: Context, what: 'link' | 'attribute'): void {
  if (ctx.path.endsWith('/')) throw new H5StoreError('NotFound', `No ${what} name given (the path ends with "/")`);
}
