/**
 * Committed datatype routes (wire-reference 2.5): the collection, committing, reading and
 * deleting datatypes. The route table (index.ts) names every path.
 */
import type { Context } from 'koa';
import type { Deps } from '../deps.js';
import { objectHrefs } from '../deps.js';
import { Hrefs, sendWithHrefs } from '../present.js';
import { flag, refOf } from '../request.js';
import { createObject, deleteObject, listCollection } from './objects.js';

/** `GET /datatypes` (and `/datatypes/`): the domain's committed datatype ids, or the datatype at `h5path`. */
export function list(ctx: Context, d: Deps): Promise<void> {
  return listCollection(ctx, d, 'datatype');
}

/** `POST /datatypes`: commit a datatype, or several (a list body). */
export function create(ctx: Context, d: Deps): Promise<void> {
  return createObject(ctx, d, 'datatype');
}

/** `GET /datatypes/:id`: the datatype (`include_attrs`, `getalias`). */
export async function get(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const t = await d.store.getDatatype(ref.domain, ctx.params.id, { includeAttrs: flag(ctx, 'include_attrs'), alias: flag(ctx, 'getalias') });
  const h = new Hrefs(ctx, d.config, ref);
  sendWithHrefs(ctx, 200, t, h, (h) => objectHrefs(h, 'datatypes', t.id, t.root));
}

/** `DELETE /datatypes/:id`. */
export function remove(ctx: Context, d: Deps): Promise<void> {
  return deleteObject(ctx, d, 'datatype');
}
