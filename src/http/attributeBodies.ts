/**
 * Query parameters and bodies of the attribute routes beyond one attribute (issue #12;
 * wire-reference 2.6): `encoding=base64`, `max_data_size`, and the `obj_ids` forms of the bulk
 * POST (reads) and PUT (writes) of `.../attributes`.
 */
import type { Context } from 'koa';
import { badRequest } from '../errors.js';
import type { ValueOptions } from '../store/objects/attributes.js';
import type { AclTarget } from '../store/store.js';
import { type AttributeReads, type AttributeWrites, attributeReadsBody, attributeWritesBody, parseBody } from './bodies.js';
import { bodyOf, param } from './request.js';

/** `encoding=base64` (the only encoding, wire-reference 2.6). @throws BadRequest for another. */
export function base64Param(ctx: Context): boolean {
  const e = param(ctx, 'encoding');
  if (e === undefined || e === '') return false;
  if (e !== 'base64') throw badRequest('only base64 encoding is supported');
  return true;
}

/** How values are presented: `encoding=base64`, `max_data_size` (bytes; 0 = no limit). */
export function valueOptions(ctx: Context): ValueOptions {
  const m = param(ctx, 'max_data_size');
  if (m !== undefined && m !== '' && !/^\d+$/.test(m)) throw badRequest('expected int for max_data_size');
  return { base64: base64Param(ctx), maxDataSize: m ? Number(m) : undefined };
}

/**
 * The objects a bulk attribute request names in `obj_ids` (a list of ids, or a dict keyed by id),
 * for the permission check of each (DIALECT.md).
 */
export function objIdTargets(ctx: Context): AclTarget[] {
  const ids = bodyOf(ctx).obj_ids;
  const list = Array.isArray(ids) ? ids : ids && typeof ids === 'object' ? Object.keys(ids) : [];
  return list.filter((id): id is string => typeof id === 'string').map((id) => ({ id }));
}

/**
 * The objects of `POST .../attributes` with `obj_ids` (a list, with optional `attr_names`, or a
 * dict): bodies.ts `attributeReadsBody`.
 * @throws BadRequest for another shape
 */
export function readItems(body: Record<string, unknown>): AttributeReads {
  const r = parseBody(attributeReadsBody, body);
  return 'objects' in r ? r.objects : [];
}

/**
 * The writes of `PUT .../attributes` with `obj_ids`: a list (the body's `attributes` go to each
 * object) or a dict `{id: {"attributes": {...}}}` (wire-reference 2.6, as HSDS): bodies.ts
 * `attributeWritesBody`.
 * @throws BadRequest for another shape
 */
export function writeItems(body: Record<string, unknown>): AttributeWrites {
  const r = parseBody(attributeWritesBody, body);
  return 'objects' in r ? r.objects : [];
}
