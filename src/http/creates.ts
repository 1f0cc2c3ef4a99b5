/**
 * The create routes' shared part (POST /groups, /datasets, /datatypes): a JSON list body is
 * HSDS 1.0's batch create (issue #25), answered `201 {"objects": [...]}`.
 */
import type { Context } from 'koa';
import type { ObjectKind } from '../hdf5/objects.js';
import type { Deps } from './deps.js';
import { sendJson } from './present.js';
import { accessOf, bodyListOf, flag, refOf } from './request.js';

/**
 * Answer a batch create when the body is a list (all objects created or none, store.ts
 * `createObjects`; `create` checked on the group each item is linked into): 201 with the
 * objects' JSON in the order given.
 * @returns false when the body is not a list (the route creates one object itself)
 */
export async function createdObjects(ctx: Context, d: Deps, kind: ObjectKind): Promise<boolean> {
  const list = bodyListOf(ctx);
  if (list === undefined) return false;
  const objects = await d.store.createObjects(refOf(ctx).domain, kind, list, flag(ctx, 'implicit'), accessOf(ctx));
  sendJson(ctx, 201, { objects, hrefs: [] });
  return true;
}
