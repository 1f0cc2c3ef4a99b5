/**
 * Query parameters and bodies of the attribute routes beyond one attribute (issue #12;
 * wire-reference 2.6): `encoding=base64`, `max_data_size`, and the `obj_ids` forms of the bulk
 * POST (reads) and PUT (writes) of `.../attributes`.
 */
import type { Context } from 'koa';
import { badRequest } from '../errors.js';
import type { ValueOptions } from '../store/attributes.js';
import type { AclTarget } from '../store/store.js';
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

/** A list of attribute names. @throws BadRequest otherwise. */
export function nameList(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'string')) throw badRequest(`"${what}" must be a list of attribute names`);
  return v as string[];
}

/** The objects of POST .../attributes with `obj_ids` (list, with optional `attr_names`, or dict). */
export function readItems(body: Record<string, unknown>): { id: string; names?: string[] }[] {
  const ids = body.obj_ids;
  if (Array.isArray(ids)) {
    const names = body.attr_names === undefined ? undefined : nameList(body.attr_names, 'attr_names');
    return ids.map((id) => {
      if (typeof id !== 'string') throw badRequest('"obj_ids" must hold object ids');
      return { id, names };
    });
  }
  if (!ids || typeof ids !== 'object') throw badRequest('"obj_ids" must be a list of ids or an object {id: [names]}');
  if (body.attr_names !== undefined) throw badRequest('attr_names must not be provided if obj_ids is a dict');
  return Object.entries(ids as Record<string, unknown>).map(([id, names]) => ({ id, names: nameList(names, `obj_ids.${id}`) }));
}

/**
 * The writes of PUT .../attributes with `obj_ids`: a list (the body's `attributes` go to each
 * object) or a dict `{id: {"attributes": {...}}}` (wire-reference 2.6, as HSDS).
 */
export function writeItems(body: Record<string, unknown>): { id: string; items: Record<string, unknown> }[] {
  const ids = body.obj_ids;
  const attrsOf = (v: unknown, where: string): Record<string, unknown> => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${where} must be an object {name: attribute}`);
    return v as Record<string, unknown>;
  };
  if (Array.isArray(ids)) {
    const items = attrsOf(body.attributes, '"attributes"');
    return ids.map((id) => {
      if (typeof id !== 'string') throw badRequest('"obj_ids" must hold object ids');
      return { id, items };
    });
  }
  if (!ids || typeof ids !== 'object') throw badRequest('"obj_ids" must be a list of ids or an object {id: {"attributes": {...}}}');
  if (body.attributes !== undefined) throw badRequest('attributes defined outside the obj_ids dict');
  return Object.entries(ids as Record<string, unknown>).map(([id, v]) => ({
    id,
    items: attrsOf((v as { attributes?: unknown } | null)?.attributes, `obj_ids.${id}.attributes`),
  }));
}
