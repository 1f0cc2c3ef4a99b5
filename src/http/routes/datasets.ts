/**
 * Dataset routes (wire-reference 2.3, 2.4): the collection, creating, reading and deleting
 * datasets, their shape (and resizing) and type. Their values are values.ts's; the route table
 * (index.ts) names every path.
 */
import type { Context } from 'koa';
import type { Deps } from '../deps.js';
import { objectHrefs, ownedHrefs } from '../deps.js';
import { parseBody, resizeBody } from '../bodies.js';
import { type Href, Hrefs, sendJson, sendWithHrefs } from '../present.js';
import { flag, jsonObject, refOf } from '../request.js';
import { createObject, deleteObject, listCollection } from './objects.js';

/** `GET /datasets` (and `/datasets/`): the domain's dataset ids, or the dataset at `h5path`. */
export function list(ctx: Context, d: Deps): Promise<void> {
  return listCollection(ctx, d, 'dataset');
}

/** `POST /datasets`: create a dataset, or several (a list body). */
export function create(ctx: Context, d: Deps): Promise<void> {
  return createObject(ctx, d, 'dataset');
}

/** `GET /datasets/:id`: the dataset (`include_attrs`, `getalias`, `verbose`), with a `data` or `preview` href. */
export async function get(ctx: Context, d: Deps): Promise<void> {
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
}

/** `DELETE /datasets/:id`. */
export function remove(ctx: Context, d: Deps): Promise<void> {
  return deleteObject(ctx, d, 'dataset');
}

/** `GET /datasets/:id/shape`: the dataspace. */
export async function shape(ctx: Context, d: Deps): Promise<void> {
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
}

/** `PUT /datasets/:id/shape`: resize (`{"shape"}` or `{"extend", "extend_dim"}`). */
export async function resize(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const body = parseBody(resizeBody, await jsonObject(ctx, d.config, { required: true }));
  const r = await d.store.resizeDataset(ref.domain, ctx.params.id, body);
  const h = new Hrefs(ctx, d.config, ref);
  const out: Record<string, unknown> = { hrefs: [h.rel('self', `/datasets/${ctx.params.id}/shape`), h.rel('owner', `/datasets/${ctx.params.id}`)] };
  if (r.selection) out.selection = r.selection;
  sendJson(ctx, 200, out); // spec 4.4: 200 OK (HSDS answers 201; h5pyd accepts both)
}

/** `GET /datasets/:id/type`: the datatype. */
export async function type(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const id = ctx.params.id;
  const r = await d.store.getDatasetTypeAndShape(ref.domain, id);
  const h = new Hrefs(ctx, d.config, ref);
  const root = await d.store.rootId(ref.domain);
  // self, owner, root: HSDS's hrefs of a type (no home; issue #25)
  sendJson(ctx, 200, { type: r.type, hrefs: [h.rel('self', `/datasets/${id}/type`), h.rel('owner', `/datasets/${id}`), h.rel('root', `/groups/${root}`)] });
}
