/**
 * Attribute routes of groups, datasets and committed datatypes (service spec 2.1, 4.1, 4.3;
 * wire-reference 2.6): `/<collection>/:id/attributes[/:name[/value]]`. One handler serves the
 * three collections: the owner's kind is the path's first segment (objects.ts `ownerKind`);
 * the route table (index.ts) names every path.
 */
import type { Context } from 'koa';
import { lacksBinaryForm } from '../../codec/types.js';
import { badRequest } from '../../errors.js';
import { COLLECTION } from '../../store/objects/ids.js';
import { attributeReadsBody, attributeValueBody, attributeWritesBody, parseBody } from '../bodies.js';
import { base64Param, valueOptions } from '../attributeBodies.js';
import type { Deps } from '../deps.js';
import { ownedHrefs } from '../deps.js';
import { Hrefs, attributeListBody, sendJson, sendJsonText, sendWithHrefs } from '../present.js';
import { onlyReadable } from '../visible.js';
import { bodyIsBinary, bodyOf, emptyNameIs404, flag, globParam, jsonObject, limitParam, markerParam, param, rawBody, refOf, wantsBinary } from '../request.js';
import { ownerKind } from './objects.js';

export { objIdTargets } from '../attributeBodies.js';

/** `replace` flag: absent means replace (service spec 2.1/4.1); `replace=0` asks HSDS's 409. */
function replaceFlag(ctx: Context): boolean {
  return param(ctx, 'replace') === undefined ? true : flag(ctx, 'replace');
}

/** `IncludeData` with a per-route default (wire-reference 2.6). */
function includeData(ctx: Context, dflt: boolean): boolean {
  return param(ctx, 'IncludeData') === undefined ? dflt : flag(ctx, 'IncludeData');
}

/** `GET .../attributes`: a page of attributes (`follow_links=1` on groups: every object below, keyed by id). */
export async function list(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'attribute');
  const kind = ownerKind(ctx);
  const col = COLLECTION[kind];
  const ref = refOf(ctx);
  const id = ctx.params.id;
  const opts = {
    limit: limitParam(ctx),
    marker: markerParam(ctx),
    createOrder: flag(ctx, 'CreateOrder'),
    includeData: includeData(ctx, false),
    pattern: globParam(ctx),
    ...valueOptions(ctx),
  };
  const h = new Hrefs(ctx, d.config, ref);
  if (flag(ctx, 'follow_links')) {
    if (kind !== 'group') throw badRequest('follow_links can only be used with group ids');
    const byId = await onlyReadable(ctx, d.store, ref.domain, await d.store.attributesBelow(ref.domain, id, opts));
    sendJson(ctx, 200, { attributes: byId, hrefs: ownedHrefs(h, `/${col}/${id}/attributes`, `/${col}/${id}`) }, { ignoreNan: flag(ctx, 'ignore_nan') });
    return;
  }
  const items = await d.store.listAttributes(ref.domain, kind, id, opts);
  sendJsonText(ctx, 200, attributeListBody(items, h, `/${col}/${id}`, ownedHrefs(h, `/${col}/${id}/attributes`, `/${col}/${id}`), flag(ctx, 'ignore_nan')));
}

/** `POST .../attributes`: by name `{"attr_names": [...]}`, or of several objects `{"obj_ids"}`. */
export async function read(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'attribute');
  const kind = ownerKind(ctx);
  const ref = refOf(ctx);
  const vopts = valueOptions(ctx);
  const body = parseBody(attributeReadsBody, bodyOf(ctx));
  if ('objects' in body) {
    const byId = await d.store.attributesOfObjects(ref.domain, body.objects, { includeData: includeData(ctx, true), ...vopts });
    sendJson(ctx, 200, { attributes: byId, hrefs: [] }, { ignoreNan: flag(ctx, 'ignore_nan') });
    return;
  }
  const items = await d.store.attributesByName(ref.domain, kind, ctx.params.id, body.names, includeData(ctx, true), vopts);
  sendJson(ctx, 200, { attributes: items, hrefs: [] }, { ignoreNan: flag(ctx, 'ignore_nan') });
}

/**
 * `PUT .../attributes`: several attributes `{"attributes": {name: {type, shape, value}}}`, to
 * this object or to the objects of `"obj_ids"`.
 */
export async function putMany(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'attribute');
  const kind = ownerKind(ctx);
  const ref = refOf(ctx);
  const body = parseBody(attributeWritesBody, bodyOf(ctx));
  if ('objects' in body) {
    const r = await d.store.putAttributesTo(ref.domain, body.objects, replaceFlag(ctx));
    sendJson(ctx, r === 'created' ? 201 : 200, { hrefs: [] });
    return;
  }
  const r = await d.store.putAttributes(ref.domain, kind, ctx.params.id, body.items, replaceFlag(ctx));
  sendJson(ctx, r === 'created' ? 201 : 200, { hrefs: [] });
}

/** `DELETE .../attributes?attr_names=a/b[&separator=|][&encoding=base64]`: delete several attributes. */
export async function removeMany(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'attribute');
  const kind = ownerKind(ctx);
  const ref = refOf(ctx);
  let names = param(ctx, 'attr_names');
  if (!names) throw badRequest('"attr_names" is required');
  if (base64Param(ctx)) names = Buffer.from(names, 'base64').toString('utf8'); // names a URL cannot carry
  await d.store.deleteAttributes(ref.domain, kind, ctx.params.id, names.split(param(ctx, 'separator') ?? '/'));
  sendJson(ctx, 200, { hrefs: [] });
}

/** `GET .../attributes/:name`: one attribute (`IncludeData`, `encoding=base64`). */
export async function get(ctx: Context, d: Deps): Promise<void> {
  const kind = ownerKind(ctx);
  const col = COLLECTION[kind];
  const ref = refOf(ctx);
  const { id, name } = ctx.params;
  const a = await d.store.getAttribute(ref.domain, kind, id, name, includeData(ctx, true), { base64: base64Param(ctx) });
  const h = new Hrefs(ctx, d.config, ref);
  const self = `/${col}/${id}/attributes/${encodeURIComponent(name)}`;
  sendWithHrefs(ctx, 200, a, h, (h) => ownedHrefs(h, self, `/${col}/${id}`), { ignoreNan: flag(ctx, 'ignore_nan'), hrefsKey: self });
}

/** `PUT .../attributes/:name`: create or replace an attribute. */
export async function put(ctx: Context, d: Deps): Promise<void> {
  const kind = ownerKind(ctx);
  const col = COLLECTION[kind];
  const ref = refOf(ctx);
  const { id, name } = ctx.params;
  const body = await jsonObject(ctx, d.config, { required: true });
  const r = await d.store.putAttribute(ref.domain, kind, id, name, body, replaceFlag(ctx));
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, r === 'created' ? 201 : 200, {
    hrefs: [h.rel('self', `/${col}/${id}/attributes/${encodeURIComponent(name)}`), h.rel('owner', `/${col}/${id}`)],
  });
}

/** `DELETE .../attributes/:name`. */
export async function remove(ctx: Context, d: Deps): Promise<void> {
  const kind = ownerKind(ctx);
  const ref = refOf(ctx);
  await d.store.deleteAttribute(ref.domain, kind, ctx.params.id, ctx.params.name);
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 200, { hrefs: [h.rel('owner', `/${COLLECTION[kind]}/${ctx.params.id}`)] });
}

/** `GET .../attributes/:name/value`: JSON or binary. */
export async function readValue(ctx: Context, d: Deps): Promise<void> {
  const kind = ownerKind(ctx);
  const col = COLLECTION[kind];
  const ref = refOf(ctx);
  const { id, name } = ctx.params;
  const v = await d.store.readAttributeValue(ref.domain, kind, id, name, { base64: base64Param(ctx) });
  // a type without a binary form (a vlen of variable-length elements) answers JSON, as HSDS answers vlen attribute values
  if (wantsBinary(ctx) && !lacksBinaryForm(v.type)) {
    ctx.status = 200;
    ctx.type = 'application/octet-stream';
    ctx.body = v.wire;
    return;
  }
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(
    ctx,
    200,
    { ...v.json, hrefs: ownedHrefs(h, `/${col}/${id}/attributes/${encodeURIComponent(name)}/value`, `/${col}/${id}/attributes/${encodeURIComponent(name)}`) },
    { ignoreNan: flag(ctx, 'ignore_nan') },
  );
}

/** `PUT .../attributes/:name/value`: JSON `{"value"}` (`"encoding": "base64"`) or binary. */
export async function writeValue(ctx: Context, d: Deps): Promise<void> {
  const kind = ownerKind(ctx);
  const ref = refOf(ctx);
  const { id, name } = ctx.params;
  if (bodyIsBinary(ctx)) {
    await d.store.writeAttributeValue(ref.domain, kind, id, name, { wire: await rawBody(ctx, d.config, d.config.maxBinaryBodyBytes, 'maxBinaryBodyBytes') });
  } else {
    const value = parseBody(attributeValueBody, await jsonObject(ctx, d.config, { required: true }));
    await d.store.writeAttributeValue(ref.domain, kind, id, name, 'wire' in value ? { ...value, base64: true } : value);
  }
  sendJson(ctx, 200, { hrefs: [] });
}
