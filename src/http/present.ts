/**
 * Presenting results: JSON bodies (with NaN/Infinity literals), hrefs (service spec section 6),
 * and the error middleware (one error type -> status + JSON body).
 */
import type { Context, Next } from 'koa';
import fs from 'node:fs';
import type { Logger } from 'pino';
import { stringifyJson } from '../codec/json.js';
import type { Config } from '../config.js';
import { H5StoreError, STATUS } from '../errors.js';
import type { LinkTextPage } from '../store/objects/links.js';
import type { DomainRef } from './request.js';

/** One hypermedia element (spec 2.4). */
export interface Href {
  rel: string;
  href: string;
}

/** `requestOrigin` results per raw Host header (and TLS), for requests Koa takes at their word. */
const origins = new Map<string, string>();

/**
 * `${ctx.protocol}://${ctx.host}` (Koa's rules: forwarded headers when the app trusts a proxy,
 * userinfo dropped, the first of comma-separated values). Without a trusted proxy, over HTTP/1,
 * that depends only on the Host header and on TLS: remembered per such pair (bounded), since
 * Koa's getters split and trim the header on every access (~1% of a small GET's CPU).
 */
export function requestOrigin(ctx: Context): string {
  const raw = ctx.req.headers.host;
  if (raw === undefined || ctx.app.proxy || ctx.req.httpVersionMajor >= 2) return `${ctx.protocol}://${ctx.host}`;
  const key = (ctx.req.socket as { encrypted?: boolean }).encrypted ? 's' + raw : raw;
  let o = origins.get(key);
  if (o === undefined) {
    o = `${ctx.protocol}://${ctx.host}`;
    if (origins.size >= 256) origins.clear();
    origins.set(key, o);
  }
  return o;
}

/**
 * Builds absolute hrefs for one request: base URL from config `endpoint` or the request's
 * Host; `?domain=` repeated when the domain arrived as a query parameter (wire-reference 0.8).
 */
export class Hrefs {
  /** What the base URL is made of: the configured endpoint, or the request's origin. */
  private readonly origin: string;
  /** The domain repeated as a query parameter, or undefined. */
  private readonly domain: string | undefined;
  private baseText: string | undefined;
  private suffixText: string | undefined;
  constructor(ctx: Context, config: Config, ref?: DomainRef) {
    this.origin = config.endpoint ?? requestOrigin(ctx);
    this.domain = ref?.viaQuery ? ref.domain : undefined;
  }
  /** Base URL without a trailing slash (made when first needed: kept answers need only `key`). */
  private get base(): string {
    return (this.baseText ??= this.origin.replace(/\/$/, ''));
  }
  /** `domain=...` or ''. */
  private get suffix(): string {
    return (this.suffixText ??= this.domain === undefined ? '' : `domain=${encodeURIComponent(this.domain).replace(/%2F/g, '/')}`);
  }
  /** What every href of these depends on (base URL and domain parameter), as one string. */
  get key(): string {
    return this.domain === undefined ? this.origin : this.origin + '\u0000' + this.domain;
  }
  /** Absolute URL of a path (with the domain parameter when needed). */
  url(path: string, query?: string): string {
    if (!query) return this.suffix ? this.base + path + '?' + this.suffix : this.base + path;
    return this.base + path + '?' + query + (this.suffix ? '&' + this.suffix : '');
  }
  /**
   * The two parts every `url(path)` is made of, JSON-escaped (for building JSON text without
   * `JSON.stringify` per href): `url(path)` is `base + path + tail` for a path needing no escape.
   */
  jsonParts(): { base: string; tail: string } {
    const esc = (s: string) => JSON.stringify(s).slice(1, -1);
    return { base: esc(this.base), tail: this.suffix ? esc('?' + this.suffix) : '' };
  }
  /** A `{rel, href}` element. */
  rel(rel: string, path: string, query?: string): Href {
    return { rel, href: this.url(path, query) };
  }
  /** URL of a domain (GET /) for another domain path. */
  domainUrl(domain: string): string {
    return `${this.base}/?domain=${encodeURIComponent(domain).replace(/%2F/g, '/')}`;
  }
}

/**
 * Send a JSON body (NaN/Infinity as literals, or null with `ignoreNan`). `plain` skips the scan
 * for non-finite numbers and bigints, for bodies that cannot hold any (ids, names, timestamps).
 */
export function sendJson(ctx: Context, status: number, body: unknown, opts: { ignoreNan?: boolean; plain?: boolean } = {}): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = opts.plain ? JSON.stringify(body) : stringifyJson(body, opts);
}

/** Complete response bodies of GET results kept between requests (`sendWithHrefs`). */
const keptBodies = new WeakMap<object, Map<string, Buffer>>();
/** Distinct hrefs/settings kept per result (clients differing in `Host` or `ignore_nan`). */
const KEPT_BODIES_PER_RESULT = 8;

/**
 * Send `{...body, hrefs: hrefsOf(h)}` as JSON (the same text as `sendJson` of that object).
 * `body` is a GET result the store may hand out again unchanged (`DomainFile.remembered`: the
 * same object until the file changes, never mutated): the complete bytes are written once per
 * object and kept while it lives, per what else they depend on: the request's hrefs (`h.key`),
 * `hrefsKey` (whatever else `hrefsOf` reads besides `h` and `body`, e.g. the path it was asked
 * by) and `ignoreNan`. A repeated GET then copies nothing and builds no hrefs: building the
 * hrefs, the text and its UTF-8 bytes cost ~7% of a small GET's CPU (issue #9 target 1).
 * `hrefsOf` must be a function of `h`, `body` and `hrefsKey` alone. `plain` as in `sendJson`.
 */
export function sendWithHrefs(
  ctx: Context,
  status: number,
  body: object,
  h: Hrefs,
  hrefsOf: (h: Hrefs) => Href[],
  opts: { ignoreNan?: boolean; plain?: boolean; hrefsKey?: string } = {},
): void {
  if ('hrefs' in body) return sendJson(ctx, status, { ...body, hrefs: hrefsOf(h) }, opts); // would repeat the key
  const key = `${h.key}\u0000${opts.hrefsKey ?? ''}\u0000${opts.ignoreNan ? 'nan' : ''}`;
  let kept = keptBodies.get(body);
  let bytes = kept?.get(key);
  if (bytes === undefined) {
    const text = opts.plain ? JSON.stringify(body) : stringifyJson(body, opts);
    const hrefs = JSON.stringify(hrefsOf(h));
    bytes = Buffer.from(text === '{}' ? '{"hrefs":' + hrefs + '}' : text.slice(0, -1) + ',"hrefs":' + hrefs + '}');
    if (!kept) keptBodies.set(body, (kept = new Map()));
    if (kept.size >= KEPT_BODIES_PER_RESULT) kept.clear();
    kept.set(key, bytes);
  }
  sendJsonText(ctx, status, bytes);
}

/**
 * A list item's complete JSON bytes, kept for the hrefs (and settings) `bytesKey` names: bytes
 * [`bytesFrom`, `bytesTo`) of `bytes`, the body of the list they were first written in (offsets,
 * not a view per item: 1,000 long-lived Buffer objects per page cost more to make and to collect
 * than the page itself).
 */
export interface KeptBytes {
  bytes?: Buffer;
  bytesFrom?: number;
  bytesTo?: number;
  bytesKey?: string;
}

/** Where the items of one `keptListBody` keep their bytes: item `i`'s in slot `i`. */
interface KeptSlots {
  key(i: number): string | undefined;
  bytes(i: number): Buffer | undefined;
  from(i: number): number;
  to(i: number): number;
  keep(i: number, bytes: Buffer, from: number, to: number, key: string): void;
}

/** Slots that are objects of their own, one per item (`KeptBytes`). */
function objectSlots(slots: KeptBytes[]): KeptSlots {
  return {
    key: (i) => slots[i]!.bytesKey,
    bytes: (i) => slots[i]!.bytes,
    from: (i) => slots[i]!.bytesFrom!,
    to: (i) => slots[i]!.bytesTo!,
    keep(i, bytes, from, to, key) {
      const s = slots[i]!;
      s.bytes = bytes;
      s.bytesFrom = from;
      s.bytesTo = to;
      s.bytesKey = key;
    },
  };
}

/**
 * `open` + the items' JSON texts joined by commas + `close`, as UTF-8 bytes. The items are
 * objects kept between requests (in the view of the file, store/session/fileState.ts, until its next
 * event); each keeps where its bytes are (`slots`) under `key` (what else its text depends on:
 * the request's hrefs, `ignore_nan`), and a later list of items that all have their bytes under
 * the same key is copied from them, a run of items that follow each other in one earlier body in
 * one copy (a page asked for again is one copy). A list is otherwise written as one string and
 * encoded once, and its items keep their places in the result. Building and encoding a 250 KB
 * string costs ~2 ms per request; copying its kept bytes ~0.05 ms (issue #9 target 7: link
 * listings, 1,000 attributes with values).
 */
function keptListBody(open: string, n: number, key: string, slots: KeptSlots, textOf: (i: number) => string, close: string): Buffer {
  let all = n > 0;
  for (let i = 0; all && i < n; i++) all = slots.key(i) === key;
  if (all) {
    let length = Buffer.byteLength(open) + Buffer.byteLength(close) + n - 1;
    for (let i = 0; i < n; i++) length += slots.to(i) - slots.from(i);
    const out = Buffer.allocUnsafe(length);
    let at = out.write(open, 0, 'utf8');
    for (let i = 0; i < n; ) {
      // the run of items i..j-1 that lie one after the other (with their commas) in one body
      const first = slots.bytes(i)!;
      let j = i + 1;
      let to = slots.to(i);
      while (j < n && slots.bytes(j) === first && slots.from(j) === to + 1) to = slots.to(j++);
      if (i) out[at++] = 44; // ','
      at += first.copy(out, at, slots.from(i), to);
      i = j;
    }
    out.write(close, at, 'utf8');
    return out;
  }
  let out = open;
  const starts = new Array<number>(n + 1);
  for (let i = 0; i < n; i++) {
    if (i) out += ',';
    starts[i] = out.length;
    out += textOf(i);
  }
  starts[n] = out.length + 1; // past the comma that would follow
  out += close;
  const body = Buffer.from(out);
  const ascii = body.length === out.length;
  // byte offsets: the character offsets when ASCII, else counted item by item
  let at = ascii ? 0 : Buffer.byteLength(open);
  for (let i = 0; i < n; i++) {
    const from = ascii ? starts[i]! : at;
    const to = ascii ? starts[i + 1]! - 1 : at + Buffer.byteLength(out.slice(starts[i]!, starts[i + 1]! - 1));
    slots.keep(i, body, from, to, key);
    at = to + 1;
  }
  return body;
}

/**
 * The kept bytes of the links of one group's list (store/objects/links.ts `LinkTextPage.list`), by
 * each link's index in it: arrays beside the list, no object per link (the list lives in the
 * file's view, and these with it).
 */
interface KeptLinks {
  bytes: (Buffer | undefined)[];
  key: (string | undefined)[];
  from: Int32Array;
  to: Int32Array;
}
const keptLinks = new WeakMap<object, KeptLinks>();

/** The kept bytes of a group's list of `size` links (made empty when first asked for). */
function keptLinksOf(list: object, size: number): KeptLinks {
  let k = keptLinks.get(list);
  if (!k) keptLinks.set(list, (k = { bytes: new Array<Buffer | undefined>(size).fill(undefined), key: new Array<string | undefined>(size).fill(undefined), from: new Int32Array(size), to: new Int32Array(size) }));
  return k;
}

/** The slots of the links at indexes `at` of a group's list. */
function linkSlots(k: KeptLinks, at: readonly number[]): KeptSlots {
  return {
    key: (i) => k.key[at[i]!],
    bytes: (i) => k.bytes[at[i]!],
    from: (i) => k.from[at[i]!]!,
    to: (i) => k.to[at[i]!]!,
    keep(i, bytes, from, to, key) {
      const x = at[i]!;
      k.bytes[x] = bytes;
      k.from[x] = from;
      k.to[x] = to;
      k.key[x] = key;
    },
  };
}

/**
 * The body of `GET /groups/<id>/links` (wire-reference 2.2), `{"links": [...], "hrefs": [...]}`,
 * as UTF-8 bytes built from the links' cached pieces (store/objects/links.ts `LinkText`): the same bytes
 * as `JSON.stringify` of each item followed by its `href` and, for a hard link, its `target`.
 * Each link keeps its bytes for the request's hrefs (origin, group, domain: `keptListBody`), by
 * its place in the group's list (`keptLinksOf`).
 * @param groupId the group id as the request gave it (hrefs repeat it)
 */
export function linkListBody(page: LinkTextPage, h: Hrefs, groupId: string, hrefs: Href[]): Buffer {
  const { base, tail, self, key } = linkHrefParts(h, groupId);
  const texts = page.texts;
  return keptListBody(
    '{"links":[',
    texts.length,
    key,
    linkSlots(keptLinksOf(page.list, page.size), page.at),
    (i) => {
      const t = texts[i]!;
      return t.target ? t.head + self + t.title + tail + '","target":"' + base + t.target + tail + '"}' : t.head + self + t.title + tail + '"}';
    },
    '],"hrefs":' + JSON.stringify(hrefs) + '}',
  );
}

/**
 * The JSON-escaped pieces of a link listing's hrefs (`Hrefs.jsonParts`, and `self`: the base of
 * every link's href), and `key`: what a link's text depends on besides the link, naming its kept
 * bytes (`keptListBody`).
 */
function linkHrefParts(h: Hrefs, groupId: string): { base: string; tail: string; self: string; key: string } {
  const { base, tail } = h.jsonParts();
  const self = base + JSON.stringify(`/groups/${groupId}/links/`).slice(1, -1);
  return { base, tail, self, key: self + '\n' + tail };
}

/**
 * Whether every link at indexes `at` of a group's list (`LinkTextPage.list`) keeps its bytes for
 * these hrefs already, so that `linkListBody` would only copy them (the read-ahead of link pages,
 * routes/links.ts, skips such pages).
 */
export function linkListKept(list: object, at: readonly number[], h: Hrefs, groupId: string): boolean {
  const k = keptLinks.get(list);
  if (!k) return false;
  const { key } = linkHrefParts(h, groupId);
  return at.every((x) => k.key[x] === key);
}

/** Kept bytes of attribute list items (objects the store remembers until the file changes). */
const keptAttributes = new WeakMap<object, KeptBytes>();

/**
 * The body of `GET /<collection>/<id>/attributes` (wire-reference 2.6), `{"attributes": [...],
 * "hrefs": [...]}`, as UTF-8 bytes: each item is `{...item, href}` as `sendJson` writes it (NaN
 * and Infinity as literals, or null with `ignoreNan`). Items the store remembers keep their bytes
 * per hrefs and `ignoreNan` (`keptListBody`).
 * @param path the collection path of the owner (`/groups/<id>`), as the request gave it
 */
export function attributeListBody(items: readonly { name: string }[], h: Hrefs, path: string, hrefs: Href[], ignoreNan: boolean): Buffer {
  const prefix = `${path}/attributes/`;
  const slots = items.map((a) => {
    let slot = keptAttributes.get(a);
    if (!slot) keptAttributes.set(a, (slot = {}));
    return slot;
  });
  return keptListBody(
    '{"attributes":[',
    items.length,
    h.url(prefix) + '\n' + (ignoreNan ? 'null' : 'nan'),
    objectSlots(slots),
    (i) => {
      const a = items[i]!;
      return stringifyJson({ ...a, href: h.url(prefix + encodeURIComponent(a.name)) }, { ignoreNan });
    },
    '],"hrefs":' + JSON.stringify(hrefs) + '}',
  );
}

/** Send a JSON body already serialized (`text` must be valid JSON, as text or UTF-8 bytes). */
export function sendJsonText(ctx: Context, status: number, text: string | Buffer): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = text;
}

/** A reason phrase safe for the status line: one line of printable ASCII, at most 200 chars. */
function reasonPhrase(msg: string): string {
  const clean = msg.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  return clean || 'Error';
}

/**
 * Error middleware (DESIGN.md section 6): any H5StoreError becomes its status with
 * `{"status", "message", "hrefs": []}` and the message as the reason phrase (h5pyd shows it).
 * Anything else is a 500 with a generic message, logged with its stack.
 */
export function errorMiddleware(logger: Logger, dataRoot?: string) {
  // Messages never show where the data directory is on the server's disk.
  const hide = dataRoot ? [...new Set([dataRoot, safeRealpath(dataRoot)])].filter(Boolean) : [];
  const scrub = (m: string) => hide.reduce((acc, r) => acc.split(r).join('<root>'), m);
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new H5StoreError('NotFound', `No route for ${ctx.method} ${ctx.path}`);
      if (ctx.status === 405 && ctx.body === undefined) {
        throw new H5StoreError('MethodNotAllowed', `Method ${ctx.method} is not allowed on ${ctx.path}`, { headers: { Allow: ctx.response.get('Allow') } });
      }
      if (ctx.status === 501 && ctx.body === undefined) throw new H5StoreError('NotImplemented', `Method ${ctx.method} is not implemented`);
    } catch (e) {
      let err: H5StoreError;
      if (e instanceof H5StoreError) {
        err = e;
        // 503s (locks held elsewhere, S3 not answering) are expected under load: a warning
        // without a stack. Other 5xx are bugs or I/O failures: an error with the stack.
        if (err.status === 503) logger.warn({ reqId: ctx.state.requestId, method: ctx.method, path: ctx.path, reason: err.message }, 'request refused (503)');
        else if (err.status >= 500) logger.error({ reqId: ctx.state.requestId, err: { message: err.message, stack: err.stack } }, 'request failed');
      } else if (clientWentAway(ctx, e)) {
        // Not a failure of the server: the client closed the connection (quiet, like the log of
        // a request; nothing can be sent any more).
        logger.debug({ method: ctx.method, path: ctx.path, reason: (e as Error).message }, 'client went away');
        ctx.res.destroy();
        return;
      } else {
        const status = (e as { status?: number; expose?: boolean }).status;
        if (status && status >= 400 && status < 500 && (e as { expose?: boolean }).expose) {
          const code = (Object.keys(STATUS) as (keyof typeof STATUS)[]).find((k) => STATUS[k] === status) ?? 'BadRequest';
          err = new H5StoreError(code, (e as Error).message);
        } else {
          logger.error({ reqId: ctx.state.requestId, err: e }, 'unexpected error');
          err = new H5StoreError('Internal', 'Internal server error (see the server log)');
        }
      }
      if (ctx.headerSent || !ctx.writable) {
        // A streamed response has begun: nothing can be said any more but closing it.
        ctx.res.destroy();
        return;
      }
      const message = scrub(err.message);
      ctx.status = err.status;
      ctx.message = reasonPhrase(message);
      for (const [k, v] of Object.entries(err.answerHeaders())) if (v) ctx.set(k, v);
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = JSON.stringify({ status: err.status, message, hrefs: [] });
    }
  };
}

/** True for the errors of a connection the client closed (aborted body, reset socket). */
function clientWentAway(ctx: Context, e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
  return ctx.req.destroyed && (e as Error | undefined)?.message === 'aborted';
}

function safeRealpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return '';
  }
}
