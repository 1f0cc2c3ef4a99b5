/**
 * The JSON request bodies the route layer reads itself, one zod schema each, parsed at the edge
 * (`parseBody`) before the store is called: a body that does not fit is a 400 whose message
 * names the field (the first problem, in the order the fields are checked), and the handler
 * gets a typed value. Messages are the API's own (tests and clients compare some of them).
 *
 * What only the file can tell stays the store's to check: an object's type JSON, shape and
 * creation properties against each other (codec/, store/objects/datasets.ts), ids against the
 * domain's root and its objects, paths and link names against the groups they lead through,
 * selections and points against the dataset's extent, values against their type, and each
 * attribute to write.
 */
import { z } from 'zod';
import { type AclEntry, FLAGS, type Flag, checkAclName } from '../auth/acl.js';
import { H5StoreError, badRequest } from '../errors.js';
import type { ObjectKind } from '../hdf5/objects.js';
import { givenCreated } from '../store/objects/createdTimes.js';
import type { DatasetCreate, Resize } from '../store/objects/datasets.js';
import type { DatatypeCreate } from '../store/objects/datatypes.js';
import type { GroupCreate } from '../store/objects/groups.js';
import type { NewObjectPlace } from '../store/objects/h5paths.js';
import { checkLinkName } from '../store/objects/links.js';
import type { LinkPut, LinkSpec, LinksPost } from '../store/objects/linkWrites.js';
import type { ValueReadBody } from '../store/values/read.js';
import { type NewObject, checkBatchSize } from '../store/store.js';

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

/** The link classes a client may create (user-defined links are refused). */
const LINK_CLASSES = ['H5L_TYPE_HARD', 'H5L_TYPE_SOFT', 'H5L_TYPE_EXTERNAL'];

/** A path or file name of a link: a non-empty string without NUL; `key` names it in the message. */
function linkText(key: string) {
  return z
    .string({ error: `"${key}" must be a non-empty string` })
    .min(1, { error: `"${key}" must be a non-empty string` })
    .refine((s) => !s.includes('\u0000'), { error: `"${key}" must not contain NUL` });
}

/** A soft or external link's body, once it has no `id`: `h5path`, and `h5domain` (or `file`) for an external link. */
const pathLinkBody = z
  .looseObject({
    class: z.unknown().optional(),
    h5path: z.custom<unknown>((v) => v !== undefined, { error: 'Link body must have "id" (hard link) or "h5path" (soft or external link)' }).pipe(linkText('h5path')),
    h5domain: z.unknown().optional(),
    file: z.unknown().optional(),
  })
  .refine((b) => b.h5domain === undefined || b.file === undefined || b.h5domain === b.file, { error: '"h5domain" and "file" name different files' })
  .transform((b): LinkSpec => {
    const file = b.h5domain ?? b.file;
    if (file !== undefined) return { h5path: b.h5path, h5domain: parseBody(linkText(b.h5domain !== undefined ? 'h5domain' : 'file'), file) };
    if (b.class === 'H5L_TYPE_EXTERNAL') throw badRequest('An external link needs "h5domain" (or "file")');
    return { h5path: b.h5path };
  });

/**
 * A link to create (`PUT /groups/:id/links/:name`, and each link of a bulk PUT; wire-reference
 * 2.2): `{"id"}` hard, `{"h5path"}` soft, `{"h5path", "h5domain"}` or `{"h5path", "file"}`
 * (HSDS 1.0's name, issue #25) external; a `class` is checked (user-defined classes are
 * refused), a `created` time is the bulk PUT's.
 */
export const linkBody = jsonObject('Link body must be a JSON object')
  .pipe(
    z.looseObject({
      class: z
        .unknown()
        .optional()
        .refine((c) => typeof c !== 'string' || LINK_CLASSES.includes(c), {
        error: (iss) => `invalid link class ${String(iss.input)}: only hard, soft and external links can be created`,
      }),
      id: z.unknown().optional(),
      h5path: z.unknown().optional(),
    }),
  )
  .refine((b) => b.id === undefined || b.h5path === undefined, { error: 'Link body must have either "id" or "h5path", not both' })
  .transform((b): LinkSpec => (b.id !== undefined ? { id: parseBody(z.string({ error: '"id" must be a string' }), b.id) } : parseBody(pathLinkBody, b)));

/** A list of strings (titles, group ids); `what` names it in the message. */
function stringList(what: string) {
  const message = `${what} must be a list of strings`;
  return z.array(z.string({ error: message }), { error: message });
}

/**
 * `POST /groups/:id/links` (wire-reference 2.2): `{"titles": [...]}`, `{"grp_ids": [ids],
 * "titles"?: [...]}`, or `{"grp_ids": {id: [titles] | null}}`.
 */
export const linksReadBody = z.looseObject({ titles: z.unknown().optional(), grp_ids: z.unknown().optional() }).transform((b): LinksPost => {
  const titles = b.titles === undefined ? undefined : parseBody(stringList('"titles"'), b.titles);
  const g = b.grp_ids;
  if (g === undefined) return { titles };
  if (Array.isArray(g)) return { titles, groups: parseBody(stringList('"grp_ids"'), g).map((id) => ({ id, titles })) };
  if (g && typeof g === 'object') {
    if (titles) throw badRequest('"titles" cannot be given with "grp_ids" as a dict (give the titles of each group there)');
    return {
      groups: Object.entries(g as Record<string, unknown>).map(([id, t]) => ({ id, titles: t === null || t === undefined ? undefined : parseBody(stringList(`"grp_ids" of ${id}`), t) })),
    };
  }
  throw badRequest('"grp_ids" must be a list of group ids or a dict {group id: [titles]}');
});

/** A POST .../links body (`linksReadBody`). @throws BadRequest for other shapes */
export function parseLinksPost(body: Record<string, unknown>): LinksPost {
  return parseBody(linksReadBody, body);
}

/** A `{title: link}` map of a bulk PUT: title, link, and the `created` time the client gave (createdTimes.ts). */
function linkMap(v: unknown, what: string): [string, LinkSpec, number | undefined][] {
  const map = parseBody(jsonObject(`${what} must be an object {title: link}`), v);
  const now = Date.now() / 1000;
  return Object.entries(map).map(([t, b]) => [t, parseBody(linkBody, b), givenCreated((b as { created?: unknown }).created, `link ${JSON.stringify(t)}`, now)]);
}

/**
 * Parse a bulk PUT .../links body (wire-reference 2.2): `{"links": {title: link}}` for the group
 * of the path, the same map in each group of `"grp_ids": [ids]`, or
 * `"grp_ids": {id: {"links": {title: link}}}` (or `{id: {title: link}}`) per group.
 * @throws H5StoreError BadRequest for other shapes or an invalid link body (`linkBody`).
 */
export function parseLinksPut(body: Record<string, unknown>, pathGroupId: string): LinkPut[] {
  const g = body.grp_ids;
  const out: LinkPut[] = [];
  if (g === undefined || Array.isArray(g)) {
    const map = linkMap(body.links, '"links"');
    const ids = g === undefined ? [pathGroupId] : parseBody(stringList('"grp_ids"'), g);
    for (const groupId of ids) for (const [title, spec, created] of map) out.push({ groupId, title, spec, ...(created === undefined ? {} : { created }) });
    return out;
  }
  if (!g || typeof g !== 'object') throw badRequest('"grp_ids" must be a list of group ids or a dict {group id: {"links": {...}}}');
  for (const [groupId, v] of Object.entries(g as Record<string, unknown>)) {
    const inner = v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'links' in v ? (v as { links: unknown }).links : v;
    for (const [title, spec, created] of linkMap(inner ?? body.links, `the links of ${groupId}`)) out.push({ groupId, title, spec, ...(created === undefined ? {} : { created }) });
  }
  return out;
}

/** A client's id for a new object (h5pyd 1.0); `null` is none. Its form is checked by the store (clientIds.ts `checkClientId`). */
const clientId = z
  .string({ error: '"id" must be a string' })
  .nullable()
  .optional()
  .transform((v) => v ?? undefined);

/** `link` of a create: the group the new object is linked into and the link's name (checked: links.ts `checkLinkName`). */
const newObjectLink = z
  .object(
    {
      id: z.string({ error: '"link.id" (the parent group id) is required' }),
      name: z.custom<unknown>((v) => v !== undefined, { error: 'no h5path given: "link.name" is required' }),
    },
    { error: '"link" must be an object with "id" and "name"' },
  )
  .transform((l) => ({ id: l.id, name: checkLinkName(l.name) }));

/** Where a new object goes (h5paths.ts `NewObjectPlace`): the fields, checked after the rest of the body's. */
const placeFields = {
  link: newObjectLink.optional(),
  h5path: z.string({ error: '"h5path" must name an object' }).optional(),
  parent_id: z.string({ error: '"parent_id" must be a group id' }).optional(),
};

/**
 * A create body: a JSON object whose `link` and `h5path` exclude each other (checked first), then
 * `fields` in their order, then `id` and the place (`placeFields`); other keys are left alone
 * (h5pyd 1.0 sends an object's whole JSON: `created`, `lastModified`...).
 */
function createBody<S extends z.core.$ZodLooseShape>(fields: S) {
  return jsonObject('The JSON body must be an object')
    .refine((b) => b.link === undefined || b.h5path === undefined, { error: 'Give "link" or "h5path", not both' })
    .pipe(z.looseObject({ ...fields, id: clientId, ...placeFields }))
    .transform((b) => b as typeof b & NewObjectPlace); // link and h5path exclude each other (above)
}

/** A `type` that must be given (its JSON is the store's to check: codec/types.ts `parseType`). */
function requiredType(message: string) {
  return z.custom<unknown>((v) => v !== undefined, { error: message });
}

/**
 * `POST /groups` (wire-reference 2.1): `creationProperties` (an object: `CreateOrder`, other keys
 * kept as given), `id`, `link` or `h5path` (with `parent_id`).
 */
export const groupBody = createBody({ creationProperties: jsonObject('"creationProperties" must be an object').optional() }).transform((b): GroupCreate => b);

/**
 * `POST /datasets` (wire-reference 2.3): `type` (required), `shape`, `maxdims`,
 * `creationProperties` (an object, or null for none), an initial `value`, `id`, `link` or
 * `h5path` (with `parent_id`).
 */
export const datasetBody = createBody({
  type: requiredType('POST Dataset has no type key in body'),
  shape: z.unknown().optional(),
  maxdims: z.unknown().optional(),
  creationProperties: jsonObject('"creationProperties" must be an object')
    .nullable()
    .optional()
    .transform((v) => v ?? undefined),
  value: z.unknown().optional(),
}).transform((b): DatasetCreate => b);

/** `POST /datatypes` (wire-reference 2.5): `type` (required), `id`, `link` or `h5path` (with `parent_id`). */
export const datatypeBody = createBody({ type: requiredType('POST Datatype has no type key in body') }).transform((b): DatatypeCreate => b);

/** One object of `kind` to create, from its body (`groupBody`, `datasetBody`, `datatypeBody`). @throws BadRequest */
export function newObject(kind: ObjectKind, body: unknown): NewObject {
  if (kind === 'group') return { kind, body: parseBody(groupBody, body) };
  if (kind === 'dataset') return { kind, body: parseBody(datasetBody, body) };
  return { kind, body: parseBody(datatypeBody, body) };
}

/**
 * `POST /groups`, `/datasets`, `/datatypes` with a JSON list (HSDS 1.0's batch create, issue
 * #25): at most MAX_BATCH_OBJECTS items (413 before any item is looked at), each an object body
 * of `kind` (`newObject`; a problem is named with the item's index).
 * @throws PayloadTooLarge, BadRequest
 */
export function newObjects(kind: ObjectKind, items: unknown[]): NewObject[] {
  checkBatchSize(items.length); // the store checks it too: here it comes before any item's problem
  return items.map((it, i) => {
    if (!it || typeof it !== 'object' || Array.isArray(it)) throw badRequest(`Item ${i} of the list is not a JSON object`);
    try {
      return newObject(kind, it);
    } catch (e) {
      if (e instanceof H5StoreError && e.code === 'BadRequest') throw badRequest(`Item ${i} of the list: ${e.message}`);
      throw e;
    }
  });
}

/** A non-negative safe integer; `message` for anything else. */
function count(message: string) {
  return z.int({ error: message }).min(0, { error: message });
}

/** The new extent of a resize. */
const resizeDims = z.array(count('Shape dimensions must be non-negative integers'), { error: '"shape" must be a list of integers, one per dimension' });

/**
 * `PUT /datasets/:id/shape` (wire-reference 2.3): `{"shape": [dims]}` (a number for one
 * dimension) or `{"extend": n, "extend_dim": d}` (`d` 0 when left out or null), not both. The
 * rank and the limits are the store's to check.
 */
export const resizeBody = z
  .looseObject({ shape: z.unknown().optional(), extend: z.unknown().optional(), extend_dim: z.unknown().optional() })
  .refine((b) => (b.shape === undefined) !== (b.extend === undefined), { error: 'Give either "shape" or "extend" (with optional "extend_dim")' })
  .transform((b): Resize => {
    if (b.shape !== undefined) return { shape: parseBody(resizeDims, typeof b.shape === 'number' ? [b.shape] : b.shape) };
    return { extend: parseBody(count('"extend" must be a non-negative integer'), b.extend), extendDim: parseBody(count('"extend_dim" is out of range'), b.extend_dim ?? 0) };
  });

/** `start`, `stop` or `step` of a selection in a body: an integer (one dimension) or a list of integers; null is none. */
function slabVector(key: string) {
  const message = `'${key}' must be an integer or a list of integers, one per dimension`;
  return z.union([z.int(), z.array(z.int())], { error: message }).nullable().optional();
}

/**
 * `POST /datasets/:id/value` with a JSON body (wire-reference 2.4, 3.5): `points` (a list of
 * coordinates), or a selection: `select` (the string grammar, or a list with one item per
 * dimension: HSDS's and h5pyd's) or `start`/`stop`/`step`; `fields` (a string: the fields of a
 * compound to read; another type is ignored, as it always was). Other keys (h5pyd 1.0 sends
 * `query` there too) are left alone. Their values against the dataset's extent are the store's.
 */
export const valueReadBody = z
  .looseObject({
    points: z.array(z.unknown(), { error: 'Invalid points: expected a list of points' }).optional(),
    select: z
      .union([z.string(), z.array(z.unknown())], { error: "'select' must be a string such as '[0:10,:]' or a list with one item per dimension" })
      .nullable()
      .optional(),
    start: slabVector('start'),
    stop: slabVector('stop'),
    step: slabVector('step'),
    fields: z
      .unknown()
      .optional()
      .transform((v) => (typeof v === 'string' ? v : undefined)),
  })
  .transform((b): ValueReadBody & { fields?: string } => b);

/**
 * `PUT /datasets/:id/value?query=` (a query update of a compound table, wire-reference 3.5): the
 * fields to set, `{field: value}`, given as the body or as its `value`.
 */
export const queryUpdateBody = jsonObject('The JSON body must be an object').transform((b, ctx): Record<string, unknown> => {
  const update = 'value' in b && typeof b.value === 'object' ? b.value : b;
  if (!update || typeof update !== 'object' || Array.isArray(update)) {
    ctx.addIssue({ code: 'custom', message: 'A query update needs a JSON object {field: value}' });
    return z.NEVER;
  }
  return update as Record<string, unknown>;
});
