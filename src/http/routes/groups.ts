/**
 * Group routes (service spec 4.2-4.4; wire-reference 2.1): the collection, creating, reading and
 * deleting groups. Their links are links.ts's; the route table (index.ts) names every path.
 */
import type { Context } from 'koa';
import { COLLECTION } from '../../store/objects/ids.js';
import type { Deps } from '../deps.js';
import { objectHrefs } from '../deps.js';
import { Hrefs, sendJson, sendWithHrefs } from '../present.js';
import { flag, param, pathOptions, refOf } from '../request.js';
import { createObject, deleteObject, listCollection } from './objects.js';

/** `GET /groups` (and `/groups/`): the domain's group ids, or the group at `h5path`. */
export function list(ctx: Context, d: Deps): Promise<void> {
  return listCollection(ctx, d, 'group');
}

/** `POST /groups`: create a group (anonymous, or linked with link/h5path), or several (a list body). */
export function create(ctx: Context, d: Deps): Promise<void> {
  return createObject(ctx, d, 'group');
}

/** `GET /groups/:id`: the group (`include_links`, `include_attrs`, `getalias`), or the object at `h5path` below it. */
export async function get(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const h5path = param(ctx, 'h5path');
  const h = new Hrefs(ctx, d.config, ref);
  if (h5path !== undefined) {
    const found = await d.store.lookupPath(ref.domain, h5path, ctx.params.id, pathOptions(ctx));
    const hf = new Hrefs(ctx, d.config, { ...ref, domain: found.domain });
    sendJson(ctx, 200, { ...found.json, hrefs: objectHrefs(hf, COLLECTION[found.kind], found.json.id as string, found.json.root as string) });
    return;
  }
  const includeAttrs = flag(ctx, 'include_attrs');
  const g = await d.store.getGroup(ref.domain, ctx.params.id, {
    includeLinks: flag(ctx, 'include_links'),
    includeAttrs,
    alias: flag(ctx, 'getalias'),
    createOrder: flag(ctx, 'CreateOrder'),
  });
  // Only attribute values can hold NaN or Infinity: without them, plain JSON.stringify.
  sendWithHrefs(ctx, 200, g, h, (h) => objectHrefs(h, 'groups', g.id, g.root), { plain: !includeAttrs });
}

/** `DELETE /groups/:id`. */
export function remove(ctx: Context, d: Deps): Promise<void> {
  return deleteObject(ctx, d, 'group');
}
