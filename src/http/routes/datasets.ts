/**
 * Dataset routes: metadata, shape, type, and values (wire-reference 2.3, 2.4, 3.5).
 */
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { ValueJsonWriter, WireValue, stringifyJson } from '../../codec/json.js';
import { H5StoreError, badRequest, tooLarge } from '../../errors.js';
import type { PagePool } from '../../store/pagepool.js';
import { type ReadPlan, type ValuePage, hdf5Busy, valueJsonOnThreads, whenIdle } from '../../store/values.js';
import type { Deps } from '../deps.js';
import { objectHrefs, ownedHrefs } from '../deps.js';
import { type Href, Hrefs, sendJson, sendWithHrefs } from '../present.js';
import { requestsInFlight } from '../inflight.js';
import { accessOf, binaryBody, bodyIsBinary, bodyOf, flag, jsonBody, jsonObject, limitParam, param, rawBody, refOf, wantsBinary } from '../request.js';
import { type Route, createOpts, route } from '../routeTable.js';
import { createdObjects } from '../creates.js';

/** Integer query parameter or undefined. @throws BadRequest when not a non-negative integer. */
function intParam(ctx: Context, name: string): number | undefined {
  const v = param(ctx, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`"${name}" must be a non-negative integer`);
  return Number(v);
}

export function datasetRoutes(d: Deps): Route[] {
  const routes: Route[] = [];
  // POST /datasets: create a dataset
  routes.push(route('POST', '/datasets', { flag: 'create', on: 'object' }, async (ctx) => {
    if (await createdObjects(ctx, d, 'dataset')) return;
    const ref = refOf(ctx);
    const body = bodyOf(ctx);
    const ds = await d.store.createDataset(ref.domain, body, flag(ctx, 'implicit'), accessOf(ctx));
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 201, { ...ds, hrefs: objectHrefs(h, 'datasets', ds.id, ds.root) });
  }, createOpts));

  // GET /datasets/:id
  routes.push(route('GET', '/datasets/:id', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const ds = await d.store.getDataset(ref.domain, ctx.params.id, { includeAttrs: flag(ctx, 'include_attrs'), alias: flag(ctx, 'getalias'), verbose: flag(ctx, 'verbose') });
    const h = new Hrefs(ctx, d.config, ref);
    const hrefsOf = (h: Hrefs): Href[] => {
      const extra: Href[] = [];
      if (ds.shape.class !== 'H5S_NULL') {
        const dims = ds.shape.class === 'H5S_SIMPLE' ? ds.shape.dims : [];
        const n = dims.reduce((a, b) => a * b, 1);
        if (n <= 100) extra.push(h.rel('data', `/datasets/${ds.id}/value`));
        else {
          const sel = '[' + dims.map((x, i) => (i === dims.length - 1 ? `0:${Math.min(x, 100)}` : '0:1')).join(',') + ']';
          extra.push(h.rel('preview', `/datasets/${ds.id}/value`, `select=${sel}`));
        }
      }
      return objectHrefs(h, 'datasets', ds.id, ds.root, extra);
    };
    sendWithHrefs(ctx, 200, ds, h, hrefsOf, { ignoreNan: flag(ctx, 'ignore_nan') });
  }, { conditional: true }));

  // GET /datasets/:id/shape
  routes.push(route('GET', '/datasets/:id/shape', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const id = ctx.params.id;
    const r = await d.store.getDatasetTypeAndShape(ref.domain, id);
    const h = new Hrefs(ctx, d.config, ref);
    const root = await d.store.rootId(ref.domain);
    sendJson(ctx, 200, {
      shape: r.shape,
      created: r.created,
      lastModified: r.lastModified,
      hrefs: ownedHrefs(h, `/datasets/${id}/shape`, `/datasets/${id}`, root),
    });
  }, { conditional: true }));

  // PUT /datasets/:id/shape: resize ({"shape"} or {"extend","extend_dim"})
  routes.push(route('PUT', '/datasets/:id/shape', { flag: 'update', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const body = await jsonObject(ctx, d.config, { required: true });
    const r = await d.store.resizeDataset(ref.domain, ctx.params.id, body);
    const h = new Hrefs(ctx, d.config, ref);
    const out: Record<string, unknown> = { hrefs: [h.rel('self', `/datasets/${ctx.params.id}/shape`), h.rel('owner', `/datasets/${ctx.params.id}`)] };
    if (r.selection) out.selection = r.selection;
    sendJson(ctx, 200, out); // spec 4.4: 200 OK (HSDS answers 201; h5pyd accepts both)
  }));

  // GET /datasets/:id/type
  routes.push(route('GET', '/datasets/:id/type', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const id = ctx.params.id;
    const r = await d.store.getDatasetTypeAndShape(ref.domain, id);
    const h = new Hrefs(ctx, d.config, ref);
    const root = await d.store.rootId(ref.domain);
    // self, owner, root: HSDS's hrefs of a type (no home; issue #25)
    sendJson(ctx, 200, { type: r.type, hrefs: [h.rel('self', `/datasets/${id}/type`), h.rel('owner', `/datasets/${id}`), h.rel('root', `/groups/${root}`)] });
  }, { conditional: true }));

  const valueHrefs = async (ctx: Context, ref: ReturnType<typeof refOf>, id: string): Promise<Href[]> => {
    const h = new Hrefs(ctx, d.config, ref);
    return ownedHrefs(h, `/datasets/${id}/value`, `/datasets/${id}`, await d.store.rootId(ref.domain));
  };

  // GET /datasets/:id/value: JSON or binary, select= hyperslabs and coordinate lists, query=
  routes.push(route('GET', '/datasets/:id/value', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const id = ctx.params.id;
    const query = param(ctx, 'query');
    if (query !== undefined) {
      const r = await d.store.queryValues(ref.domain, id, query, { select: param(ctx, 'select'), limit: limitParam(ctx), fields: param(ctx, 'fields') }, accessOf(ctx));
      if (wantsBinary(ctx)) return sendBinary(ctx, r.wire); // rows [index (uint64), fields...] as h5pyd reads them
      sendJson(ctx, 200, { value: new WireValue(r.wire, r.type, [r.count]), hrefs: await valueHrefs(ctx, ref, id) }, { ignoreNan: flag(ctx, 'ignore_nan') });
      return;
    }
    const hrefs = await valueHrefs(ctx, ref, id);
    const { plan, release } = await d.store.openValueRead(ref.domain, id, { select: param(ctx, 'select'), fields: param(ctx, 'fields') }, accessOf(ctx));
    await sendValue(ctx, d, plan, release, hrefs);
  }, { conditional: true }));

  // POST /datasets/:id/value: points (JSON or binary uint64) or a long selection
  routes.push(route('POST', '/datasets/:id/value', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const id = ctx.params.id;
    const hrefs = await valueHrefs(ctx, ref, id);
    let req;
    if (bodyIsBinary(ctx)) {
      req = { pointsBinary: await rawBody(ctx, d.config, d.config.maxBinaryBodyBytes, 'maxBinaryBodyBytes'), fields: param(ctx, 'fields') };
    } else {
      const body = (await jsonObject(ctx, d.config, { required: true })) as Record<string, unknown>;
      const fields = param(ctx, 'fields') ?? (typeof body.fields === 'string' ? body.fields : undefined);
      req = { body, select: param(ctx, 'select'), fields };
    }
    const { plan, release } = await d.store.openValueRead(ref.domain, id, req, accessOf(ctx));
    await sendValue(ctx, d, plan, release, hrefs);
  }));

  // PUT /datasets/:id/value: write (binary or JSON); query update
  routes.push(route('PUT', '/datasets/:id/value', { flag: 'update', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const id = ctx.params.id;
    const query = param(ctx, 'query');
    if (query !== undefined) {
      const body = await jsonObject(ctx, d.config, { required: true });
      const update = 'value' in body && typeof body.value === 'object' ? body.value : body;
      const r = await d.store.queryUpdate(ref.domain, id, query, update, { select: param(ctx, 'select'), limit: limitParam(ctx) }, accessOf(ctx));
      if (wantsBinary(ctx)) return sendBinary(ctx, r.wire);
      sendJson(ctx, 200, { value: new WireValue(r.wire, r.type, [r.count]), hrefs: await valueHrefs(ctx, ref, id) });
      return;
    }
    const common = {
      select: param(ctx, 'select'),
      fields: param(ctx, 'fields'),
      append: intParam(ctx, 'append'),
      appendDim: intParam(ctx, 'append_dim'),
      elementCount: intParam(ctx, 'element_count'),
    };
    if (bodyIsBinary(ctx)) {
      const body = await binaryBody(ctx, { spoolAbove: d.config.spoolBodyBytes, max: d.config.maxBinaryBodyBytes, pool: d.store.bodyPool, config: d.config });
      try {
        await d.store.writeValues(ref.domain, id, { ...common, wire: body.wire, spool: body.spool }, accessOf(ctx));
      } finally {
        body.done();
      }
    } else {
      const body = await jsonBody(ctx, d.config, { required: true });
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The JSON body must be an object with "value"');
      await d.store.writeValues(ref.domain, id, { ...common, json: body as Record<string, unknown> }, accessOf(ctx));
    }
    sendJson(ctx, 200, { hrefs: await valueHrefs(ctx, ref, id) });
  }));
  return routes;
}

/** A binary (wire-format) reply. */
function sendBinary(ctx: Context, wire: Buffer): void {
  ctx.status = 200;
  ctx.type = 'application/octet-stream';
  ctx.body = wire;
}

/**
 * Page size of streamed binary reads (bytes; at most the configured `pageBytes`). Binary values
 * larger than this are streamed in pages of about this size, so the first bytes leave after one
 * small read and the next page is read while the kernel sends the previous one (`streamPages`).
 */
export const STREAM_PAGE_BYTES = 1024 * 1024;

/**
 * Send a planned value read as binary (wire-reference 3.5) or JSON. A value larger than one page
 * is streamed: pages are read into pooled buffers one at a time, and the event loop runs between
 * pages so small requests are served while a large read streams. A JSON value of one page is
 * read, then formatted whole before the status line (on the value threads above
 * `JSON_THREAD_BYTES`: `JsonValueText`) and sent with a Content-Length. `releasePlan` is called exactly once: when
 * the last page was read, or the client went away, or the read failed.
 * @throws H5StoreError (PayloadTooLarge above `maxJsonValueBytes`; any error of the read or of
 *   the formatting of a one-page value)
 */
async function sendValue(ctx: Context, d: Deps, plan: ReadPlan, releasePlan: () => void, hrefs: Href[]): Promise<void> {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    releasePlan();
  };
  const binary = wantsBinary(ctx);
  const pool = d.store.pagePool;
  try {
    if (!binary && plan.bytes > d.config.maxJsonValueBytes) {
      throw tooLarge(
        `The JSON value would hold ${plan.bytes} bytes of data, above the limit of ${d.config.maxJsonValueBytes}: ` +
          'ask for binary (Accept: application/octet-stream) or a smaller selection',
      );
    }
    const singlePage = plan.bytes <= d.config.pageBytes;
    if (binary) {
      const streamPage = Math.min(STREAM_PAGE_BYTES, d.config.pageBytes);
      if (plan.bytes <= streamPage) {
        // into a pooled buffer (no fresh memory to fault in), given back once the response is
        // written or the connection is gone
        const pages = [...plan.pages(pool)];
        release();
        const parts = pages.map((p) => p.wire);
        ctx.status = 200;
        ctx.type = 'application/octet-stream';
        ctx.body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
        const pooled = pages.map((p) => p.pooled).filter((b): b is Buffer => b !== undefined);
        if (pooled.length > 0) {
          let given = false;
          const giveBack = () => {
            if (given) return;
            given = true;
            for (const b of pooled) pool.give(b);
          };
          ctx.res.once('finish', giveBack);
          ctx.res.once('close', giveBack);
        }
        return;
      }
      ctx.respond = false;
      const headers: Record<string, string | number> = { 'Content-Type': 'application/octet-stream' };
      if (plan.itemSize !== undefined) headers['Content-Length'] = plan.count * plan.itemSize;
      ctx.res.writeHead(200, headers);
      const pages = plan.filePages?.(pool, streamPage) ?? plan.pages(pool, streamPage);
      void streamPages(ctx, pages, pool, release, d.config.maxStreamBytesPerSec, (p) => p.wire);
      return;
    }
    const shape = flag(ctx, 'reduce_dim') ? plan.shape.filter((x) => x !== 1) : plan.shape;
    const json = new JsonValueText(d, plan, shape, { ignoreNan: flag(ctx, 'ignore_nan') });
    const tail = `,"hrefs":${stringifyJson(hrefs)}}`;
    if (singlePage) {
      // the whole text before the status line (a malformed value is still a 4xx, and the answer
      // has a Content-Length), as chunks of up to 1 MiB: no copy into one body buffer. The page
      // is read and the file let go first; large values are then formatted on the value threads
      // while this thread serves other requests.
      const pages = [...plan.pages()];
      release();
      const parts: Buffer[] = [Buffer.from('{"value":')];
      for (const page of pages) {
        try {
          for (const c of await json.part(page)) parts.push(c);
        } finally {
          if (page.pooled) pool.give(page.pooled); // its text is made (a chunked read assembled in the pool)
        }
        if (ctx.req.socket.destroyed) return; // the client went away: nothing to send
      }
      for (const c of json.end()) parts.push(c);
      parts.push(Buffer.from(tail));
      let length = 0;
      for (const c of parts) length += c.length;
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = Readable.from(parts);
      ctx.length = length;
      return;
    }
    ctx.respond = false;
    ctx.res.writeHead(200, { 'Content-Type': 'application/json' });
    ctx.res.write('{"value":');
    const text = async (p: ValuePage) => {
      try {
        return await json.part(p);
      } finally {
        if (p.pooled) pool.give(p.pooled);
      }
    };
    void streamPages(ctx, plan.pages(pool), pool, release, d.config.maxStreamBytesPerSec, text, () => [...json.end(), Buffer.from(tail)]);
  } catch (e) {
    release();
    throw e;
  }
}

/**
 * JSON values of fixed-size types above this many bytes of data are formatted on the value
 * threads (store/values/threadPool.ts): formatting a 4 MiB page of float32 takes ~70-110 ms of
 * CPU, which on this thread held every other request that long (and on one core only).
 */
const JSON_THREAD_BYTES = 256 * 1024;

/**
 * The JSON text of a value's elements, page by page in element order (`part`), then the closing
 * brackets (`end`). Pages of values above JSON_THREAD_BYTES of a fixed-size type are formatted
 * on the value threads, a part per thread, each by a writer skipped to the page's first element
 * (`ValueJsonWriter.skipTo`); other values by one writer on this thread. Should a value thread
 * fail (not the value: the writer's own errors are thrown as they are), that page is formatted
 * here, in one go.
 */
export class JsonValueText {
  /** The one writer of a value formatted on this thread; undefined for values on the value threads. */
  private readonly writer: ValueJsonWriter | undefined;
  /** Elements given to `part` so far. */
  private next = 0;

  constructor(
    private readonly d: Deps,
    private readonly plan: ReadPlan,
    private readonly shape: number[],
    private readonly opts: { ignoreNan: boolean },
  ) {
    const threaded = plan.itemSize !== undefined && plan.bytes > JSON_THREAD_BYTES;
    this.writer = threaded ? undefined : new ValueJsonWriter(plan.type, shape, opts);
  }

  /** A writer on this thread that continues after the value's first `start` elements. */
  private writerAt(start: number): ValueJsonWriter {
    const w = new ValueJsonWriter(this.plan.type, this.shape, this.opts);
    w.skipTo(start);
    return w;
  }

  /**
   * The text of the next page's elements, as chunks the caller owns.
   * @throws H5StoreError when a value cannot be shown as JSON
   */
  async part(p: ValuePage): Promise<Buffer[]> {
    if (this.writer) return this.writer.writeChunks(p.wire, p.count);
    const start = this.next;
    this.next += p.count;
    try {
      return await valueJsonOnThreads(this.plan.type, this.shape, this.opts, p.wire, start, p.count, this.plan.itemSize!);
    } catch (e) {
      if (e instanceof H5StoreError) throw e;
      this.d.logger.warn({ err: (e as Error).message }, 'a value thread failed formatting JSON; formatting on the main thread');
      return this.writerAt(start).writeChunks(p.wire, p.count);
    }
  }

  /** The closing text, after all elements. @throws internal when elements are missing */
  end(): Buffer[] {
    return (this.writer ?? this.writerAt(this.next)).endChunks();
  }
}

/**
 * Write pages to the response as the socket takes them: each page is read (libhdf5, this
 * thread) as soon as the previous one is written, while the kernel still sends the bytes it took
 * (the socket buffers hold megabytes on loopback), then the socket is waited for; pooled buffers
 * are returned once written, the event loop runs between pages, and the pace is kept at most
 * `maxRate` bytes/s (0: unpaced). Mid-stream failures can only abort the connection (the status
 * line is gone). `release` is called once, at the end.
 */
export async function streamPages(
  ctx: Context,
  pages: Generator<ValuePage> | AsyncGenerator<ValuePage>,
  pool: PagePool,
  release: () => void,
  maxRate: number,
  bytesOf: (p: ValuePage) => Buffer | Buffer[] | Promise<Buffer | Buffer[]>,
  tail?: () => Buffer[],
): Promise<void> {
  const res = ctx.res;
  let pacedFrom = performance.now();
  let pacedSent = 0;
  let sent = 0;
  let closed = false;
  res.once('close', () => (closed = true));
  // the next page, read while the kernel sends the bytes of the previous one
  let next: IteratorResult<ValuePage> | undefined;
  const ask = async (): Promise<IteratorResult<ValuePage>> => {
    while (hdf5Busy()) await whenIdle(); // a long libhdf5 call runs on the worker thread
    return pages.next();
  };
  try {
    for (;;) {
      if (closed) break;
      const r = await (next ?? ask());
      next = undefined;
      if (r.done) break;
      const page = r.value;
      const made = bytesOf(page);
      const bytes = made instanceof Promise ? await made : made;
      if (closed) break;
      let ok: boolean;
      if (Array.isArray(bytes)) {
        ok = writeAll(res, bytes);
        for (const b of bytes) sent += b.length;
      } else {
        const pooled = bytes === page.wire ? page.pooled : undefined;
        ok = res.write(bytes, () => {
          if (pooled) pool.give(pooled);
        });
        sent += bytes.length;
      }
      if (closed) break;
      next = await ask();
      // `drain` may have come while the next page was read (file pages are read on the thread pool)
      if (!ok && res.writableNeedDrain) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
      // Paced only while other requests are being served (alone, at the speed of the link).
      const now = performance.now();
      if (requestsInFlight() <= 1) {
        pacedFrom = now;
        pacedSent = sent;
      }
      const ahead = maxRate > 0 ? ((sent - pacedSent) / maxRate) * 1000 - (now - pacedFrom) : 0;
      // Always give the event loop a turn: a write the kernel took at once reports `drain` from
      // process.nextTick, so awaiting it alone would run the whole stream in one macrotask and
      // leave every other request (and timer) waiting until its end.
      if (ahead >= 1) await new Promise<void>((resolve) => setTimeout(resolve, ahead));
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (!closed) {
      if (tail) writeAll(res, tail());
      res.end();
    }
  } catch (e) {
    d_log(ctx, e);
    res.destroy(e as Error);
  } finally {
    if (next && !next.done && next.value.pooled) pool.give(next.value.pooled); // the client went away
    try {
      await pages.return(undefined); // file pages: a read in flight ends first (it holds the read lease's file)
    } catch (e) {
      d_log(ctx, e);
    }
    release();
  }
}

/** Write buffers to the response in one go (corked: one `writev`); false when it should drain first. */
function writeAll(res: Context['res'], parts: Buffer[]): boolean {
  let ok = true;
  res.cork();
  for (const b of parts) ok = res.write(b);
  res.uncork();
  return ok;
}

/** Log a failure that happened after the response started (it can only abort the stream). */
function d_log(ctx: Context, e: unknown): void {
  ctx.app.emit('error', e, ctx);
}
