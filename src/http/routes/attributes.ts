/**
 * Attribute routes on groups, datasets and committed datatypes (service spec 2.1, 4.1, 4.3;
 * wire-reference 2.6), and the committed datatype routes (wire-reference 2.5).
 */
import type { Context } from 'koa';
import { badRequest } from '../../errors.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { COLLECTION } from '../../store/ids.js';
import { base64Param, nameList, objIdTargets, readItems, valueOptions, writeItems } from '../attributeBodies.js';
import type { Deps } from '../deps.js';
import { objectHrefs, ownedHrefs } from '../deps.js';
import { Hrefs, attributeListBody, sendJson, sendJsonText, sendWithHrefs } from '../present.js';
import { onlyReadable } from '../visible.js';
import { accessOf, bodyIsBinary, bodyOf, emptyNameIs404, flag, globParam, jsonObject, limitParam, markerParam, param, rawBody, refOf, wantsBinary } from '../request.js';
import { type Route, createOpts, route } from '../routeTable.js';
import { createdObjects } from '../creates.js';

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

    // GET /{col}/:id/attributes (follow_links=1 on groups: every object below, keyed by id)
    routes.push(route('GET', base, { flag: 'read', on: 'object' }, async (ctx) => {
      emptyNameIs404(ctx, 'attribute');
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
    }, { conditional: true }));

    // POST /{col}/:id/attributes: by name {"attr_names": [...]}, or of several objects {"obj_ids"}
    routes.push(route('POST', base, { flag: 'read', on: 'object' }, async (ctx) => {
      emptyNameIs404(ctx, 'attribute');
      const ref = refOf(ctx);
      const body = bodyOf(ctx);
      const vopts = valueOptions(ctx);
      if (body.obj_ids !== undefined) {
        const byId = await d.store.attributesOfObjects(ref.domain, readItems(body), { includeData: includeData(ctx, true), ...vopts });
        sendJson(ctx, 200, { attributes: byId, hrefs: [] }, { ignoreNan: flag(ctx, 'ignore_nan') });
        return;
      }
      const names = nameList(body.attr_names, 'attr_names');
      const items = await d.store.attributesByName(ref.domain, kind, ctx.params.id, names, includeData(ctx, true), vopts);
      sendJson(ctx, 200, { attributes: items, hrefs: [] }, { ignoreNan: flag(ctx, 'ignore_nan') });
    }, { jsonBody: true, targets: objIdTargets }));

    // PUT /{col}/:id/attributes: several attributes {"attributes": {name: {type, shape, value}}},
    // to this object or to the objects of "obj_ids"
    routes.push(route('PUT', base, { flag: 'create', on: 'object' }, async (ctx) => {
      emptyNameIs404(ctx, 'attribute');
      const ref = refOf(ctx);
      const body = bodyOf(ctx);
      if (body.obj_ids !== undefined) {
        const r = await d.store.putAttributesTo(ref.domain, writeItems(body), replaceFlag(ctx));
        sendJson(ctx, r === 'created' ? 201 : 200, { hrefs: [] });
        return;
      }
      const items = body.attributes;
      if (!items || typeof items !== 'object' || Array.isArray(items)) throw badRequest('"attributes" must be an object {name: attribute}');
      const r = await d.store.putAttributes(ref.domain, kind, ctx.params.id, items as Record<string, unknown>, replaceFlag(ctx));
      sendJson(ctx, r === 'created' ? 201 : 200, { hrefs: [] });
    }, { jsonBody: true, targets: objIdTargets }));

    // DELETE /{col}/:id/attributes?attr_names=a/b
    routes.push(route('DELETE', base, { flag: 'delete', on: 'object' }, async (ctx) => {
      emptyNameIs404(ctx, 'attribute');
      const ref = refOf(ctx);
      let names = param(ctx, 'attr_names');
      if (!names) throw badRequest('"attr_names" is required');
      if (base64Param(ctx)) names = Buffer.from(names, 'base64').toString('utf8'); // names a URL cannot carry
      await d.store.deleteAttributes(ref.domain, kind, ctx.params.id, names.split(param(ctx, 'separator') ?? '/'));
      sendJson(ctx, 200, { hrefs: [] });
    }));

    // GET /{col}/:id/attributes/:name
    routes.push(route('GET', `${base}/:name`, { flag: 'read', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const { id, name } = ctx.params;
      const a = await d.store.getAttribute(ref.domain, kind, id, name, includeData(ctx, true), { base64: base64Param(ctx) });
      const h = new Hrefs(ctx, d.config, ref);
      const self = `/${col}/${id}/attributes/${encodeURIComponent(name)}`;
      sendWithHrefs(ctx, 200, a, h, (h) => ownedHrefs(h, self, `/${col}/${id}`), { ignoreNan: flag(ctx, 'ignore_nan'), hrefsKey: self });
    }, { conditional: true }));

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
      const v = await d.store.readAttributeValue(ref.domain, kind, id, name, { base64: base64Param(ctx) });
      if (wantsBinary(ctx)) {
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
    }, { conditional: true }));

    // PUT /{col}/:id/attributes/:name/value: JSON {"value"} or binary
    routes.push(route('PUT', `${base}/:name/value`, { flag: 'update', on: 'object' }, async (ctx) => {
      const ref = refOf(ctx);
      const { id, name } = ctx.params;
      if (bodyIsBinary(ctx)) {
        await d.store.writeAttributeValue(ref.domain, kind, id, name, { wire: await rawBody(ctx, d.config, d.config.maxBinaryBodyBytes, 'maxBinaryBodyBytes') });
      } else {
        const body = await jsonObject(ctx, d.config, { required: true });
        if (!('value' in body)) throw badRequest('The body needs "value"');
        if (body.encoding !== undefined && body.encoding !== 'base64') throw badRequest('only base64 encoding is supported');
        if (body.encoding === 'base64' && typeof body.value !== 'string') throw badRequest('A base64 value must be a string');
        const value = body.encoding === 'base64' ? { wire: Buffer.from(body.value as string, 'base64') } : { json: body.value };
        await d.store.writeAttributeValue(ref.domain, kind, id, name, value);
      }
      sendJson(ctx, 200, { hrefs: [] });
    }));
  }

  // POST /datatypes: commit a datatype
  routes.push(route('POST', '/datatypes', { flag: 'create', on: 'object' }, async (ctx) => {
    if (await createdObjects(ctx, d, 'datatype')) return;
    const ref = refOf(ctx);
    const body = bodyOf(ctx);
    const t = await d.store.createDatatype(ref.domain, body, flag(ctx, 'implicit'), accessOf(ctx));
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 201, { ...t, hrefs: objectHrefs(h, 'datatypes', t.id, t.root) });
  }, createOpts));

  // GET /datatypes/:id
  routes.push(route('GET', '/datatypes/:id', { flag: 'read', on: 'object' }, async (ctx) => {
    const ref = refOf(ctx);
    const t = await d.store.getDatatype(ref.domain, ctx.params.id, { includeAttrs: flag(ctx, 'include_attrs'), alias: flag(ctx, 'getalias') });
    const h = new Hrefs(ctx, d.config, ref);
    sendWithHrefs(ctx, 200, t, h, (h) => objectHrefs(h, 'datatypes', t.id, t.root));
  }, { conditional: true }));
  return routes;
}
