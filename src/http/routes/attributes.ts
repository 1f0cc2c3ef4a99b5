/**
 * Attribute routes on groups, datasets and committed datatypes (service spec 2.1, 4.1, 4.3;
 * wire-reference 2.6), and the committed datatype routes (wire-reference 2.5).
 */
import type { Context } from 'koa';
import { valueToJson } from '../../codec/json.js';
import { badRequest } from '../../errors.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { COLLECTION } from '../../store/ids.js';
import type { Deps } from '../deps.js';
import { objectHrefs, ownedHrefs } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import { bodyIsBinary, bodyOf, flag, globParam, jsonObject, limitParam, markerParam, param, rawBody, refOf, wantsBinary } from '../request.js';
import { type Route, createOpts, route } from '../routeTable.js';

/** `replace` flag: absent means replace (service spec 2.1/4.1); `replace=0` asks HSDS's 409. */
function replaceFlag(ctx: Context): boolean {
  return param(ctx, 'replace') === undefined ? true : flag(ctx, 'replace');
}

/** `IncludeData` with a per-route default (wire-reference 2.6). */
function includeData(ctx: Context, dflt: boolean): boolean {
  return param(ctx, 'IncludeData') === undefined ? dflt : flag(ctx, 'IncludeData');
}

export function attributeRoutes(d: Deps): Route[] {
  const routes: Route[] = [];
  for (const kind of ['group', 'dataset', 'datatype'] as ObjectKind[]) {
    const col = COLLECTION[kind];
    const base = `/${col}/:id/attributes`;

    // GET /{col}/:id/attributes
    routes.push(route('GET', base, { flag: 'read', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const id = ctx.params.id;
      const items = await d.store.listAttributes(ref.domain, kind, id, {
        limit: limitParam(ctx),
        marker: markerParam(ctx),
        createOrder: flag(ctx, 'CreateOrder'),
        includeData: includeData(ctx, false),
        pattern: globParam(ctx),
      });
      const h = new Hrefs(ctx, d.config, ref);
      const attributes = items.map((a) => ({ ...a, href: h.url(`/${col}/${id}/attributes/${encodeURIComponent(a.name)}`) }));
      sendJson(ctx, 200, { attributes, hrefs: ownedHrefs(h, `/${col}/${id}/attributes`, `/${col}/${id}`) }, { ignoreNan: flag(ctx, 'ignore_nan') });
    }));

    // POST /{col}/:id/attributes: attributes by name {"attr_names": [...]}
    routes.push(route('POST', base, { flag: 'read', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const body = await jsonObject(ctx, d.config, { required: true });
      if (!Array.isArray(body.attr_names) || !body.attr_names.every((n) => typeof n === 'string')) {
        throw badRequest('"attr_names" must be a list of attribute names');
      }
      const items = await d.store.attributesByName(ref.domain, kind, ctx.params.id, body.attr_names as string[], includeData(ctx, true));
      sendJson(ctx, 200, { attributes: items, hrefs: [] }, { ignoreNan: flag(ctx, 'ignore_nan') });
    }));

    // PUT /{col}/:id/attributes: several attributes {"attributes": {name: {type, shape, value}}}
    routes.push(route('PUT', base, { flag: 'create', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const body = await jsonObject(ctx, d.config, { required: true });
      const items = body.attributes;
      if (!items || typeof items !== 'object' || Array.isArray(items)) throw badRequest('"attributes" must be an object {name: attribute}');
      const r = await d.store.putAttributes(ref.domain, kind, ctx.params.id, items as Record<string, unknown>, replaceFlag(ctx));
      sendJson(ctx, r === 'created' ? 201 : 200, { hrefs: [] });
    }));

    // DELETE /{col}/:id/attributes?attr_names=a/b
    routes.push(route('DELETE', base, { flag: 'delete', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const names = param(ctx, 'attr_names');
      if (!names) throw badRequest('"attr_names" is required');
      await d.store.deleteAttributes(ref.domain, kind, ctx.params.id, names.split(param(ctx, 'separator') ?? '/'));
      sendJson(ctx, 200, { hrefs: [] });
    }));

    // GET /{col}/:id/attributes/:name
    routes.push(route('GET', `${base}/:name`, { flag: 'read', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const { id, name } = ctx.params;
      const a = await d.store.getAttribute(ref.domain, kind, id, name, includeData(ctx, true));
      const h = new Hrefs(ctx, d.config, ref);
      sendJson(
        ctx,
        200,
        { ...a, hrefs: ownedHrefs(h, `/${col}/${id}/attributes/${encodeURIComponent(name)}`, `/${col}/${id}`) },
        { ignoreNan: flag(ctx, 'ignore_nan') },
      );
    }));

    // PUT /{col}/:id/attributes/:name: create or replace
    routes.push(route('PUT', `${base}/:name`, { flag: 'create', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const { id, name } = ctx.params;
      const body = await jsonObject(ctx, d.config, { required: true });
      const r = await d.store.putAttribute(ref.domain, kind, id, name, body, replaceFlag(ctx));
      const h = new Hrefs(ctx, d.config, ref);
      sendJson(ctx, r === 'created' ? 201 : 200, {
        hrefs: [h.rel('self', `/${col}/${id}/attributes/${encodeURIComponent(name)}`), h.rel('owner', `/${col}/${id}`)],
      });
    }));

    // DELETE /{col}/:id/attributes/:name
    routes.push(route('DELETE', `${base}/:name`, { flag: 'delete', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      await d.store.deleteAttribute(ref.domain, kind, ctx.params.id, ctx.params.name);
      const h = new Hrefs(ctx, d.config, ref);
      sendJson(ctx, 200, { hrefs: [h.rel('owner', `/${col}/${ctx.params.id}`)] });
    }));

    // GET /{col}/:id/attributes/:name/value: JSON or binary
    routes.push(route('GET', `${base}/:name/value`, { flag: 'read', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const { id, name } = ctx.params;
      const v = await d.store.readAttributeValue(ref.domain, kind, id, name);
      if (wantsBinary(ctx)) {
        ctx.status = 200;
        ctx.type = 'application/octet-stream';
        ctx.body = v.wire;
        return;
      }
      const h = new Hrefs(ctx, d.config, ref);
      const text = valueToJson(v.wire, v.type, v.space.dims, { ignoreNan: flag(ctx, 'ignore_nan') });
      ctx.status = 200;
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = `{"value":${text},"hrefs":${JSON.stringify(ownedHrefs(h, `/${col}/${id}/attributes/${encodeURIComponent(name)}/value`, `/${col}/${id}/attributes/${encodeURIComponent(name)}`))}}`;
    }));

    // PUT /{col}/:id/attributes/:name/value: JSON {"value"} or binary
    routes.push(route('PUT', `${base}/:name/value`, { flag: 'update', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const { id, name } = ctx.params;
      if (bodyIsBinary(ctx)) {
        await d.store.writeAttributeValue(ref.domain, kind, id, name, { wire: await rawBody(ctx, d.config.maxBinaryBodyBytes) });
      } else {
        const body = await jsonObject(ctx, d.config, { required: true });
        if (!('value' in body)) throw badRequest('The body needs "value"');
        await d.store.writeAttributeValue(ref.domain, kind, id, name, { json: body.value });
      }
      sendJson(ctx, 200, { hrefs: [] });
    }));
  }

  // POST /datatypes: commit a datatype
  routes.push(route('POST', '/datatypes', { flag: 'create', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const body = bodyOf(ctx);
    const t = await d.store.createDatatype(ref.domain, body, flag(ctx, 'implicit'));
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 201, { ...t, hrefs: objectHrefs(h, 'datatypes', t.id, t.root) });
  }, createOpts));

  // GET /datatypes/:id
  routes.push(route('GET', '/datatypes/:id', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const t = await d.store.getDatatype(ref.domain, ctx.params.id, { includeAttrs: flag(ctx, 'include_attrs'), alias: flag(ctx, 'getalias') });
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 200, { ...t, hrefs: objectHrefs(h, 'datatypes', t.id, t.root) });
  }));
  return routes;
}
