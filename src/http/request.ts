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
import { hasUsers } from '../auth/authenticate.js';
import { parseJsonBody } from '../codec/json.js';
import { SLICE_BYTES, parseJsonSliced } from '../codec/jsonSlices.js';
import type { Config } from '../config.js';
import { H5StoreError, badRequest } from '../errors.js';
import { bodyBudget, noRoom, releaseWithResponse, reserveMemoryFor } from './bodyBudget.js';
import { watchBody } from './slowClients.js';
import { UserLimits } from './userLimits.js';
import type { Access } from '../store/access/access.js';
import type { BufferPool } from '../store/values/pagepool.js';
import { isValidBucketName, normalizeDomain } from '../store/objects/paths.js';
import type { ObjectJsonOptions } from '../store/objects/domainObjects.js';

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

/**
 * The most bytes the request's body may have: `max`, or `maxAnonymousBodyBytes` when the server
 * has users and the request is anonymous (issue #24 item 7), with the setting that says so.
 */
export function bodyLimit(ctx: Context, config: Config, max: number, setting: string): { limit: number; setting: string } {
  const p = (ctx.state as { principal?: { authenticated: boolean } }).principal;
  if (p && !p.authenticated && config.maxAnonymousBodyBytes < max && hasUsers(config)) {
    return { limit: config.maxAnonymousBodyBytes, setting: 'maxAnonymousBodyBytes: log in to send more' };
  }
  return { limit: max, setting };
}

function tooLargeBody(limit: number, setting: string): H5StoreError {
  return new H5StoreError('PayloadTooLarge', `Request body larger than ${limit} bytes (${setting})`);
}

/**
 * Read the whole request body into memory: at most `max` bytes (`bodyLimit`), reserved in the
 * process's body budget (bodyBudget.ts) times `factor` until the response is finished; with a
 * Content-Length the reservation is made before a byte is read.
 * @param setting the setting `max` comes from (named in the 413)
 * @throws PayloadTooLarge beyond the limit; Unavailable (503) when the budget has no room;
 *   BadRequest when the body and its Content-Length disagree or the body cannot be read.
 */
export async function rawBody(ctx: Context, config: Config, max: number, setting: string, factor = 1): Promise<Buffer> {
  const { limit, setting: named } = bodyLimit(ctx, config, max, setting);
  const lengthHeader = ctx.get('content-length');
  const announced = lengthHeader === '' ? -1 : Number(lengthHeader);
  if (announced > limit) throw tooLargeBody(limit, named);
  await UserLimits.chargeBody(ctx, announced);
  if (announced >= 0) {
    reserveMemoryFor(ctx, announced * factor, 'a request body');
    const buf = Buffer.allocUnsafe(announced);
    let pos = 0;
    const w = watchBody(ctx, config);
    try {
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
        w.seen(chunk.length);
        if (pos + chunk.length > announced) throw badRequest(`Request body is longer than its Content-Length (${announced})`);
        chunk.copy(buf, pos);
        pos += chunk.length;
      }
    } catch (e) {
      if (e instanceof H5StoreError) throw e;
      throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
    } finally {
      w.stop();
    }
    if (pos !== announced) throw badRequest('Request body shorter than its Content-Length');
    return buf;
  }
  // No Content-Length (chunked): reserved as it arrives.
  const parts: Buffer[] = [];
  let size = 0;
  let reserved = 0;
  releaseWithResponse(ctx, () => bodyBudget.releaseMemory(reserved));
  const w = watchBody(ctx, config);
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      w.seen(chunk.length);
      size += chunk.length;
      if (size > limit) throw tooLargeBody(limit, named);
      if (!bodyBudget.tryMemory(chunk.length * factor)) throw noRoom('a request body', size, bodyBudget.memoryLimit, 'bodyMemoryBytes');
      reserved += chunk.length * factor;
      parts.push(chunk);
    }
  } catch (e) {
    if (e instanceof H5StoreError) throw e;
    throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
  } finally {
    w.stop();
  }
  await UserLimits.chargeBody(ctx, size);
  return Buffer.concat(parts, size);
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
 * more in garbage collection than the copy) while the process's body budget has room for them
 * (`bodyMemoryBytes`, bodyBudget.ts: issue #24 item 10); larger ones, those the budget has no
 * room for, and bodies without Content-Length that grow past either, are spooled to a
 * temporary file so nothing reaches HDF5 before the whole body arrived and writes larger than
 * memory work.
 * @throws PayloadTooLarge beyond `max` (`bodyLimit`: less for anonymous requests); Unavailable
 *   (503) when the spool space is full (`spoolBodyLimitBytes`); BadRequest when the body and
 *   Content-Length disagree.
 */
export async function binaryBody(ctx: Context, opts: { spoolAbove: number; max: number; pool: BufferPool; config: Config }): Promise<BinaryBody> {
  const { limit, setting } = bodyLimit(ctx, opts.config, opts.max, 'maxBinaryBodyBytes');
  const lengthHeader = ctx.get('content-length');
  const announced = lengthHeader === '' ? -1 : Number(lengthHeader);
  if (announced > limit) throw tooLargeBody(limit, setting);
  if (announced > 0) await UserLimits.chargeBody(ctx, announced);
  // in memory only while the body budget has room (bodyBudget.ts); else spooled like large bodies
  if (announced >= 0 && announced <= opts.spoolAbove && bodyBudget.tryMemory(announced)) {
    const release = once(() => bodyBudget.releaseMemory(announced));
    releaseWithResponse(ctx, release);
    const buf = opts.pool.take(announced);
    let pos = 0;
    const w = watchBody(ctx, opts.config);
    try {
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
        w.seen(chunk.length);
        if (pos + chunk.length > announced) throw badRequest(`Request body is longer than its Content-Length (${announced})`);
        chunk.copy(buf, pos);
        pos += chunk.length;
      }
      if (pos !== announced) throw badRequest(`Request body is shorter than its Content-Length (${announced})`);
    } catch (e) {
      opts.pool.give(buf);
      release();
      if (e instanceof H5StoreError) throw e;
      throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
    } finally {
      w.stop();
    }
    return {
      wire: buf,
      done: () => {
        opts.pool.give(buf);
        release();
      },
    };
  }
  if (announced >= 0) {
    const spool = await spoolStream(ctx, opts.config, ctx.req, [], 0, limit, setting, announced);
    if (spool.size !== announced) {
      dropSpool(spool);
      throw badRequest(`Request body is ${spool.size} bytes, Content-Length said ${announced}`);
    }
    return { spool, done: () => dropSpool(spool) };
  }
  // No Content-Length (chunked): memory until spoolAbove or the end of the budget's room, then a spool file.
  const parts: Buffer[] = [];
  let size = 0;
  let reserved = 0;
  const release = once(() => bodyBudget.releaseMemory(reserved));
  releaseWithResponse(ctx, release);
  const it = (ctx.req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const w = watchBody(ctx, opts.config);
  for (;;) {
    let r: IteratorResult<Buffer>;
    try {
      r = await it.next();
    } catch (e) {
      w.stop();
      if (e instanceof H5StoreError) throw e;
      throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
    }
    if (r.done) {
      w.stop();
      await UserLimits.chargeBody(ctx, size);
      return { wire: Buffer.concat(parts, size), done: release };
    }
    w.seen(r.value.length);
    parts.push(r.value);
    size += r.value.length;
    if (size > limit) {
      w.stop();
      throw tooLargeBody(limit, setting);
    }
    if (size > opts.spoolAbove || !bodyBudget.tryMemory(r.value.length)) {
      w.stop();
      const rest = Readable.from({ [Symbol.asyncIterator]: () => it });
      const spool = await spoolStream(ctx, opts.config, rest, parts, size, limit, setting);
      release();
      await UserLimits.chargeBody(ctx, spool.size);
      return { spool, done: () => dropSpool(spool) };
    }
    reserved += r.value.length;
  }
}

/** `fn`, run at most once. */
function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/** Spooled bytes per spool file (given back by `dropSpool`). */
const spooled = new Map<string, number>();

/**
 * Write already-read chunks (`headBytes` of them) and the rest of a stream to a temporary file,
 * reserving its bytes in the body budget's spool space (all of `announced` first when known).
 * @throws PayloadTooLarge beyond `limit`; Unavailable (503) when the spool space is full.
 */
async function spoolStream(ctx: Context, config: Config, rest: NodeJS.ReadableStream, head: Buffer[], headBytes: number, limit: number, setting: string, announced = -1): Promise<{ path: string; size: number }> {
  let reserved = 0;
  const reserve = (n: number): boolean => {
    if (!bodyBudget.trySpool(n)) return false;
    reserved += n;
    return true;
  };
  if (!reserve(announced >= 0 ? announced : headBytes)) throw noRoom('a spooled request body', announced >= 0 ? announced : headBytes, bodyBudget.spoolLimit, 'spoolBodyLimitBytes');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-body-'));
  const file = path.join(dir, 'body');
  let size = headBytes;
  const w = watchBody(ctx, config);
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      w.seen(chunk.length);
      size += chunk.length;
      if (size > limit) cb(tooLargeBody(limit, setting));
      else if (size > reserved && !reserve(size - reserved)) cb(noRoom('a spooled request body', size, bodyBudget.spoolLimit, 'spoolBodyLimitBytes'));
      else cb(null, chunk);
    },
  });
  const done = () => bodyBudget.releaseSpool(reserved);
  try {
    const out = fs.createWriteStream(file);
    for (const h of head) out.write(h);
    await pipeline(rest, counter, out);
  } catch (e) {
    done();
    fs.rmSync(dir, { recursive: true, force: true });
    if (e instanceof H5StoreError) throw e;
    throw badRequest(`Cannot read the request body: ${(e as Error).message}`);
  } finally {
    w.stop();
  }
  spooled.set(file, reserved);
  // given back when the spool is dropped, at the latest with the response
  releaseWithResponse(ctx, () => dropSpool({ path: file }));
  return { path: file, size };
}

/** Remove a spooled body (and give its bytes back to the body budget). Safe to call twice. */
export function dropSpool(spool: { path: string }): void {
  const n = spooled.get(spool.path);
  if (n !== undefined) {
    spooled.delete(spool.path);
    bodyBudget.releaseSpool(n);
  }
  fs.rmSync(path.dirname(spool.path), { recursive: true, force: true });
}

/**
 * Read a JSON body whatever its Content-Type (wire-reference 0.5). Empty body -> `{}` unless
 * `required`. NaN/Infinity literals and big integers are accepted. Bodies larger than
 * `SLICE_BYTES` are parsed in slices with the event loop running between them (jsonSlices.ts).
 * @throws BadRequest `Unable to load JSON body` for invalid JSON; as `rawBody` (413, 503).
 */
export async function jsonBody(ctx: Context, config: Config, opts: { required?: boolean } = {}): Promise<unknown> {
  // the text and the parsed value: twice the body's bytes in the budget
  const buf = await rawBody(ctx, config, config.maxJsonBodyBytes, 'maxJsonBodyBytes', 2);
  if (buf.length > SLICE_BYTES) return parseJsonSliced(buf, { maxDepth: config.maxJsonDepth }); // issue #24 item 7
  const text = buf.toString('utf8');
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
 * auth.ts, for every route; store/access/access.ts).
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
