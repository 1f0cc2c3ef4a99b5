/**
 * Dataset routes: metadata, shape, type, and values (wire-reference 2.3, 2.4, 3.5).
 */
import type { Context } from 'koa';
import { WireValue, stringifyJson } from '../../codec/json.js';
import { badRequest } from '../../errors.js';
import type { ValueFormat, ValueSource } from '../../store/values.js';
import type { Deps } from '../deps.js';
import { objectHrefs, ownedHrefs } from '../deps.js';
import { type Href, Hrefs, sendJson, sendWithHrefs } from '../present.js';
import { accessOf, binaryBody, bodyIsBinary, bodyOf, flag, jsonBody, jsonObject, limitParam, param, rawBody, refOf, wantsBinary } from '../request.js';
import { type Route, createOpts, route } from '../routeTable.js';
import { type ValueAnswer, sendValueSource } from '../valueAnswer.js';
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
      // compound tables: rows [index (uint64), fields...] as h5pyd reads them; simple types: the
      // matching elements alone, a 1-D array of the dataset's type (h5pyd 1.0 `dset[..., query=]`),
      // their coordinates as JSON `index` (HSDS's JSON query answer: {"index": [...], "value": [...]})
      // No match on a simple type: JSON even when binary was asked, since h5pyd 1.0 takes an
      // empty binary body for a failed read (httpconn: "no data returned") but reads `value: []`.
      if (wantsBinary(ctx) && !(r.coords && r.count === 0)) return sendBinary(ctx, r.wire);
      const index = r.coords ? { index: r.coords } : {};
      sendJson(ctx, 200, { ...index, value: new WireValue(r.wire, r.type, [r.count]), hrefs: await valueHrefs(ctx, ref, id) }, { ignoreNan: flag(ctx, 'ignore_nan') });
      return;
    }
    const hrefs = await valueHrefs(ctx, ref, id);
    await sendValue(ctx, d, await d.store.readValues(ref.domain, id, { select: param(ctx, 'select'), fields: param(ctx, 'fields') }, valueFormat(ctx, d), accessOf(ctx)), hrefs);
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
    await sendValue(ctx, d, await d.store.readValues(ref.domain, id, req, valueFormat(ctx, d), accessOf(ctx)), hrefs);
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

/** The format a value is asked in: binary (`Accept: application/octet-stream`) or JSON (`ignore_nan`, `reduce_dim`, at most `maxJsonValueBytes`). */
function valueFormat(ctx: Context, d: Deps): ValueFormat {
  if (wantsBinary(ctx)) return { kind: 'binary' };
  return { kind: 'json', ignoreNan: flag(ctx, 'ignore_nan'), reduceDim: flag(ctx, 'reduce_dim'), maxBytes: d.config.maxJsonValueBytes };
}

/**
 * Send a value read (wire-reference 3.5): its wire bytes, or `{"value": ..., "hrefs": [...]}`
 * (valueAnswer.ts: a value read whole with a Content-Length, a larger one streamed).
 * @throws H5StoreError any error of the read or of the formatting of a value read whole
 */
async function sendValue(ctx: Context, d: Deps, source: ValueSource, hrefs: Href[]): Promise<void> {
  const answer: ValueAnswer =
    source.format.kind === 'binary'
      ? { type: 'application/octet-stream' }
      : { type: 'application/json', head: [Buffer.from('{"value":')], tail: () => [Buffer.from(`,"hrefs":${stringifyJson(hrefs)}}`)] };
  await sendValueSource(ctx, source, answer, d.config.maxStreamBytesPerSec);
}
