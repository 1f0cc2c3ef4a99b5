/**
 * Dataset value routes (wire-reference 3.5): `GET`, `POST` (points, long selections) and `PUT`
 * of `/datasets/:id/value`, JSON or binary, `query=` reads and updates. The store hands a read
 * over as a `ValueSource`; this module keeps the HTTP side (format asked, framing, hrefs).
 */
import type { Context } from 'koa';
import { WireValue, stringifyJson } from '../../codec/json.js';
import { lacksBinaryForm } from '../../codec/types.js';
import { badRequest } from '../../errors.js';
import type { JsonValueFormat, QueryRequest, ValueFormat, ValueSource } from '../../store/values.js';
import type { Deps } from '../deps.js';
import { ownedHrefs } from '../deps.js';
import { type Href, Hrefs, sendJson } from '../present.js';
import { type DomainRef, accessOf, binaryBody, bodyIsBinary, flag, jsonBody, jsonObject, limitParam, param, rawBody, refOf, wantsBinary } from '../request.js';
import { type ValueAnswer, sendValueSource } from '../valueAnswer.js';
import { parseBody, queryUpdateBody, valueReadBody, valueWriteBody } from '../bodies.js';

/** Integer query parameter or undefined. @throws BadRequest when not a non-negative integer. */
function intParam(ctx: Context, name: string): number | undefined {
  const v = param(ctx, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`"${name}" must be a non-negative integer`);
  return Number(v);
}

/** The hrefs of a value answer: self, home, owner, root. */
async function valueHrefs(ctx: Context, d: Deps, ref: DomainRef, id: string): Promise<Href[]> {
  const h = new Hrefs(ctx, d.config, ref);
  return ownedHrefs(h, `/datasets/${id}/value`, `/datasets/${id}`, await d.store.rootId(ref.domain));
}

/** `GET /datasets/:id/value`: JSON or binary, `select=` hyperslabs and coordinate lists, `query=`. */
export async function read(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const id = ctx.params.id;
  const query = param(ctx, 'query');
  if (query !== undefined) return sendQuery(ctx, d, ref, id, query, { select: param(ctx, 'select'), limit: limitParam(ctx), fields: param(ctx, 'fields') });
  const hrefs = await valueHrefs(ctx, d, ref, id);
  await sendValue(ctx, d, await d.store.readValues(ref.domain, id, { select: param(ctx, 'select'), fields: param(ctx, 'fields') }, valueFormat(ctx, d), accessOf(ctx)), hrefs);
}

/**
 * `POST /datasets/:id/value`: points (JSON or binary uint64) or a long selection, and `query`
 * with such a selection: h5pyd 1.0 sends a `select` longer than 100 characters as a JSON body
 * `{"select", "query"?, "fields"?}` (hsds_plugin.getDatasetValues), answered exactly as
 * `GET ...?query=` (`query` and `Limit` in the body or the URL, not both).
 * @throws BadRequest (400) for `query` with points or a binary body, or given twice
 */
export async function readPoints(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const id = ctx.params.id;
  let req;
  if (bodyIsBinary(ctx)) {
    if (param(ctx, 'query') !== undefined) throw badRequest('"query" reads a selection, not points: send it with GET or a JSON body');
    req = { pointsBinary: await rawBody(ctx, d.config, d.config.maxBinaryBodyBytes, 'maxBinaryBodyBytes'), fields: param(ctx, 'fields') };
  } else {
    // the schema checks the selection's keys and lets h5pyd 1.0's `query` and `Limit` through
    const body = parseBody(valueReadBody, await jsonObject(ctx, d.config, { required: true }));
    const fields = param(ctx, 'fields') ?? body.fields;
    const query = bodyQuery(ctx, body as Record<string, unknown>);
    if (query !== undefined) {
      if (body.points !== undefined) throw badRequest('"query" reads a selection, not points');
      return sendQuery(ctx, d, ref, id, query.text, { select: param(ctx, 'select'), selectBody: body as Record<string, unknown>, limit: query.limit, fields });
    }
    req = { body, select: param(ctx, 'select'), fields };
  }
  const hrefs = await valueHrefs(ctx, d, ref, id);
  await sendValue(ctx, d, await d.store.readValues(ref.domain, id, req, valueFormat(ctx, d), accessOf(ctx)), hrefs);
}

/**
 * The `query` and `Limit` of a POST value: each from the body or the URL (a non-negative
 * integer `Limit`, 0 meaning none, as `limitParam`), or undefined without `query`.
 * @throws BadRequest (400) when either is given in both places or has the wrong type
 */
function bodyQuery(ctx: Context, body: Record<string, unknown>): { text: string; limit: number | undefined } | undefined {
  const inUrl = param(ctx, 'query');
  if (body.query !== undefined && body.query !== null && typeof body.query !== 'string') throw badRequest('"query" must be a string');
  const inBody = typeof body.query === 'string' ? body.query : undefined;
  if (inUrl !== undefined && inBody !== undefined) throw badRequest('Give "query" in the URL or in the body, not both');
  const text = inBody ?? inUrl;
  if (text === undefined) return undefined;
  const given = body.Limit ?? body.limit;
  const urlLimit = limitParam(ctx);
  if (given === undefined || given === null) return { text, limit: urlLimit };
  if (urlLimit !== undefined) throw badRequest('Give "Limit" in the URL or in the body, not both');
  if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) throw badRequest('Expected int type for limit');
  return { text, limit: given === 0 ? undefined : given };
}

/**
 * Answer a `query=` read (GET, or POST with the selection in the body): compound tables: rows
 * [index (uint64), fields...] as h5pyd reads them; simple types: the matching elements alone, a
 * 1-D array of the dataset's type (h5pyd 1.0 `dset[..., query=]`), their coordinates as JSON
 * `index` (HSDS's JSON query answer: {"index": [...], "value": [...]}). No match on a simple
 * type: JSON even when binary was asked, since h5pyd 1.0 takes an empty binary body for a
 * failed read (httpconn: "no data returned") but reads `value: []`.
 */
async function sendQuery(ctx: Context, d: Deps, ref: DomainRef, id: string, query: string, opts: QueryRequest): Promise<void> {
  const r = await d.store.queryValues(ref.domain, id, query, opts, accessOf(ctx));
  if (wantsBinary(ctx) && !(r.coords && r.count === 0) && !lacksBinaryForm(r.type)) return sendBinary(ctx, r.wire);
  const index = r.coords ? { index: r.coords } : {};
  sendJson(ctx, 200, { ...index, value: new WireValue(r.wire, r.type, [r.count]), hrefs: await valueHrefs(ctx, d, ref, id) }, { ignoreNan: flag(ctx, 'ignore_nan') });
}

/** `PUT /datasets/:id/value`: write (binary or JSON; `append`), or a query update (`query=`). */
export async function write(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const id = ctx.params.id;
  const query = param(ctx, 'query');
  if (query !== undefined) {
    const update = parseBody(queryUpdateBody, await jsonObject(ctx, d.config, { required: true }));
    const r = await d.store.queryUpdate(ref.domain, id, query, update, { select: param(ctx, 'select'), limit: limitParam(ctx) }, accessOf(ctx));
    if (wantsBinary(ctx) && !lacksBinaryForm(r.type)) return sendBinary(ctx, r.wire);
    sendJson(ctx, 200, { value: new WireValue(r.wire, r.type, [r.count]), hrefs: await valueHrefs(ctx, d, ref, id) });
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
    const body = parseBody(valueWriteBody, await jsonBody(ctx, d.config, { required: true }));
    await d.store.writeValues(ref.domain, id, { ...common, json: body }, accessOf(ctx));
  }
  sendJson(ctx, 200, { hrefs: await valueHrefs(ctx, d, ref, id) });
}

/** A binary (wire-format) reply. */
function sendBinary(ctx: Context, wire: Buffer): void {
  ctx.status = 200;
  ctx.type = 'application/octet-stream';
  ctx.body = wire;
}

/** The format a value is asked in: binary (`Accept: application/octet-stream`; JSON for types without a binary form) or JSON (`ignore_nan`, `reduce_dim`, at most `maxJsonValueBytes`). */
function valueFormat(ctx: Context, d: Deps): ValueFormat {
  const json: JsonValueFormat = { kind: 'json', ignoreNan: flag(ctx, 'ignore_nan'), reduceDim: flag(ctx, 'reduce_dim'), maxBytes: d.config.maxJsonValueBytes };
  // values without a binary form (a vlen of variable-length elements) come as JSON, as HSDS
  // answers binary reads of vlen attribute values: h5pyd reads either
  return wantsBinary(ctx) ? { kind: 'binary', orJson: json } : json;
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
