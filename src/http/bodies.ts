/**
 * The JSON request bodies the route layer reads itself, one zod schema each, parsed at the edge
 * (`parseBody`) before the store is called: a body that does not fit is a 400 whose message
 * names the field (the first problem, in the order the fields are checked), and the handler
 * gets a typed value. Messages are the API's own (tests and clients compare some of them).
 *
 * Bodies whose rules belong to the store (objects to create, link specs, values and points,
 * resizes, attributes to write) are still parsed by the store's own functions.
 */
import { z } from 'zod';
import { type AclEntry, FLAGS, type Flag, checkAclName } from '../auth/acl.js';
import { badRequest } from '../errors.js';

/**
 * A body parsed with its schema.
 * @throws BadRequest with the first problem's message (a schema's own, else `"field" must be ...`)
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body, { error: fieldMessage });
  if (r.success) return r.data;
  throw badRequest(r.error.issues[0]?.message ?? 'The JSON body is not valid');
}

/** The message of a problem a schema gives no message of its own: the field, and what it must be. */
function fieldMessage(iss: z.core.$ZodRawIssue): string {
  const where = iss.path?.length ? `"${iss.path.join('.')}"` : 'The JSON body';
  if (iss.code === 'invalid_type' && iss.expected === 'nonoptional') return `${where} is required`;
  if (iss.code === 'invalid_type') return `${where} must be ${iss.expected === 'array' ? 'a list' : `of type ${iss.expected}`}`;
  return `${where} is not valid`;
}

/**
 * A JSON object (not a list) taken as it is: every own key kept, `__proto__` included, in its
 * order (zod's object and record schemas build a new object without it).
 */
function jsonObject(message: string) {
  return z.custom<Record<string, unknown>>((v) => !!v && typeof v === 'object' && !Array.isArray(v), { error: message });
}

/**
 * `PUT .../attributes/:name/value` with a JSON body: `{"value": ...}`, or `{"value": "<base64>",
 * "encoding": "base64"}` (the value's wire bytes; wire-reference 2.6). Gives what
 * `Store.writeAttributeValue` takes: `{json}` or `{wire}`.
 */
export const attributeValueBody = z
  .looseObject({
    value: z.custom<unknown>((v) => v !== undefined, { error: 'The body needs "value"' }),
    encoding: z.literal('base64', { error: 'only base64 encoding is supported' }).optional(),
  })
  .refine((b) => b.encoding !== 'base64' || typeof b.value === 'string', { error: 'A base64 value must be a string' })
  .transform((b): { json: unknown } | { wire: Buffer } => (b.encoding === 'base64' ? { wire: Buffer.from(b.value as string, 'base64') } : { json: b.value }));

/**
 * `PUT /datasets/:id/value` with a JSON body: an object, `{"value": ...}` (or the forms of
 * wire-reference 3.5: `value_base64`, points, `append`), whose keys the store checks
 * (store/values/write.ts).
 */
export const valueWriteBody = jsonObject('The JSON body must be an object with "value"');

/** A body flag: `true`, a non-zero number, or a string other than `0`/`false`/empty (as query flags). */
function truthy(v: unknown): boolean {
  if (typeof v === 'string') return !['', '0', 'false', 'f', 'no', 'n'].includes(v.toLowerCase());
  return !!v;
}

/** A flag of a body: anything, read as `truthy` (absent: false). */
const bodyFlag = z.unknown().optional().transform(truthy);

/** `PUT /` as a flush or rescan (wire-reference 1.5): `flush`, `rescan`, `getdnids` flags, anything else ignored. */
export const flushBody = z.looseObject({ flush: bodyFlag, rescan: bodyFlag, getdnids: bodyFlag });

/**
 * `PUT /` creating a domain or folder (wire-reference 1.3, 1.4): `owner` (a user name),
 * `folder` (any truthy value: a folder), `group` (the root group's `creationProperties`,
 * checked by the store), `root_id` (the root group's id, as a client chose it), `getdnids`;
 * `linked_domain` is kept for the handler to refuse (501).
 */
export const newDomainBody = z.looseObject({
  owner: z.string({ error: '"owner" must be a user name' }).optional(),
  folder: z.unknown().optional().transform((v) => !!v),
  group: z.looseObject({ creationProperties: z.unknown().optional() }, { error: '"group" must be an object' }).nullable().optional(),
  root_id: z.string({ error: '"root_id" must be a group id' }).nullable().optional(),
  linked_domain: z.unknown().optional(),
  getdnids: z.unknown().optional().transform((v) => !!v),
});

/**
 * `POST /`: several paths looked up at once, `{"h5paths": [...]}`; the other keys are the
 * options of the objects' JSON (request.ts `objectJsonOptions`).
 */
export const pathsBody = z.looseObject({
  h5paths: z.array(z.string({ error: '"h5paths" must be a list of paths' }), { error: '"h5paths" must be a list of paths' }),
});

/** The flags of an ACL entry body, in the body's order: `writeACL` is `updateACL`; `userName` and `domain` are ignored. */
function entryFlags(body: Record<string, unknown>, ctx: z.core.$RefinementCtx<unknown>, at: (string | number)[] = []): Partial<AclEntry> | undefined {
  const out: Partial<AclEntry> = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === 'userName' || k === 'domain') continue;
    const flag = k === 'writeACL' ? 'updateACL' : k;
    if (!(FLAGS as readonly string[]).includes(flag)) {
      ctx.addIssue({ code: 'custom', message: `Unexpected key in request body: ${k}`, path: [...at, k] });
      return undefined;
    }
    if (typeof v !== 'boolean') {
      ctx.addIssue({ code: 'custom', message: `ACL flag ${k} must be true or false`, path: [...at, k] });
      return undefined;
    }
    out[flag as Flag] = v;
  }
  return out;
}

/**
 * `PUT .../acls/:user`: the flags to set, `{"read": true, ...}` (auth/acl.ts `FLAGS`; missing
 * flags keep their value). Gives the flags given, by their names.
 */
export const aclEntryBody = jsonObject('The JSON body must be an object').transform((b, ctx) => entryFlags(b, ctx) ?? z.NEVER);

/**
 * `PUT .../acls`: several entries, `{"acls": [{"userName": u, ...flags}]}` (the GET shape) or
 * `{"acls": {u: {...flags}}}` (the PUT / shape). Gives the flags given per user or group name
 * (each checked: auth/acl.ts `checkAclName`).
 */
export const aclEntriesBody = z.looseObject({ acls: z.unknown().optional() }).transform((body, ctx) => {
  const raw = body.acls;
  const out: Record<string, Partial<AclEntry>> = {};
  const add = (user: unknown, flags: unknown, at: (string | number)[]): boolean => {
    if (typeof user !== 'string') {
      ctx.addIssue({ code: 'custom', message: 'Each ACL entry needs a "userName"', path: at });
      return false;
    }
    if (!flags || typeof flags !== 'object' || Array.isArray(flags)) {
      ctx.addIssue({ code: 'custom', message: `ACL entry of ${user} must be an object of flags`, path: at });
      return false;
    }
    const f = entryFlags(flags as Record<string, unknown>, ctx, at);
    if (f === undefined) return false;
    try {
      out[checkAclName(user)] = f;
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message, path: at });
      return false;
    }
    return true;
  };
  if (Array.isArray(raw)) {
    for (let i = 0; i < raw.length; i++) if (!add((raw[i] as { userName?: unknown } | null)?.userName, raw[i], ['acls', i])) return z.NEVER;
  } else if (raw && typeof raw === 'object') {
    for (const [u, f] of Object.entries(raw)) if (!add(u, f, ['acls', u])) return z.NEVER;
  } else {
    ctx.addIssue({ code: 'custom', message: 'The body needs "acls": a list of {"userName", flags...} or an object {user: flags}', path: ['acls'] });
    return z.NEVER;
  }
  return out;
});

/** A list of attribute names; `what` names the field in the message. */
function attributeNames(what: string) {
  const message = `"${what}" must be a list of attribute names`;
  return z.array(z.string({ error: message }), { error: message });
}

/** Object ids of a bulk attribute body's `obj_ids` list. */
const objectIdList = z.array(z.string({ error: '"obj_ids" must hold object ids' }));

/** An `{name: attribute}` map of a bulk attribute write; `where` names it in the message. */
function attributeMap(where: string) {
  return jsonObject(`${where} must be an object {name: attribute}`);
}

/** The objects of `POST .../attributes` with `obj_ids`: each id, with the names to read (undefined: all). */
export type AttributeReads = { id: string; names?: string[] }[];

/**
 * `POST .../attributes` (wire-reference 2.6): `{"attr_names": [...]}` (of the path's object),
 * `{"obj_ids": [ids], "attr_names"?: [...]}` or `{"obj_ids": {id: [names]}}` (of several objects).
 */
export const attributeReadsBody = z.looseObject({ obj_ids: z.unknown().optional(), attr_names: z.unknown().optional() }).transform((b): { names: string[] } | { objects: AttributeReads } => {
  if (b.obj_ids === undefined) return { names: parseBody(attributeNames('attr_names'), b.attr_names) };
  const ids = b.obj_ids;
  if (Array.isArray(ids)) {
    const names = b.attr_names === undefined ? undefined : parseBody(attributeNames('attr_names'), b.attr_names);
    return { objects: parseBody(objectIdList, ids).map((id) => ({ id, names })) };
  }
  if (!ids || typeof ids !== 'object') throw badRequest('"obj_ids" must be a list of ids or an object {id: [names]}');
  if (b.attr_names !== undefined) throw badRequest('attr_names must not be provided if obj_ids is a dict');
  return { objects: Object.entries(ids as Record<string, unknown>).map(([id, names]) => ({ id, names: parseBody(attributeNames(`obj_ids.${id}`), names) })) };
});

/** The writes of `PUT .../attributes` with `obj_ids`: each object's id and its `{name: attribute}` map. */
export type AttributeWrites = { id: string; items: Record<string, unknown> }[];

/**
 * `PUT .../attributes` (wire-reference 2.6, as HSDS): `{"attributes": {name: attribute}}` (to
 * the path's object), `{"obj_ids": [ids], "attributes": {...}}` (the same to each) or
 * `{"obj_ids": {id: {"attributes": {...}}}}`. Each attribute is checked by the store.
 */
export const attributeWritesBody = z.looseObject({ obj_ids: z.unknown().optional(), attributes: z.unknown().optional() }).transform((b): { items: Record<string, unknown> } | { objects: AttributeWrites } => {
  if (b.obj_ids === undefined) return { items: parseBody(attributeMap('"attributes"'), b.attributes) };
  const ids = b.obj_ids;
  if (Array.isArray(ids)) {
    const items = parseBody(attributeMap('"attributes"'), b.attributes);
    return { objects: parseBody(objectIdList, ids).map((id) => ({ id, items })) };
  }
  if (!ids || typeof ids !== 'object') throw badRequest('"obj_ids" must be a list of ids or an object {id: {"attributes": {...}}}');
  if (b.attributes !== undefined) throw badRequest('attributes defined outside the obj_ids dict');
  return {
    objects: Object.entries(ids as Record<string, unknown>).map(([id, v]) => ({ id, items: parseBody(attributeMap(`obj_ids.${id}.attributes`), (v as { attributes?: unknown } | null)?.attributes) })),
  };
});
