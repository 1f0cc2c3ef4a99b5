/**
 * The JSON request bodies the route layer reads itself, one zod schema each, parsed at the edge
 * (`parseBody`) before the store is called: a body that does not fit is a 400 whose message
 * names the field (the first problem, in the order the fields are checked), and the handler
 * gets a typed value. Messages are the API's own (tests and clients compare some of them).
 *
 * Bodies whose rules belong to the store (objects to create, values and points, resizes, each
 * attribute to write) are still checked by the store.
 */
import { z } from 'zod';
import { type AclEntry, FLAGS, type Flag, checkAclName } from '../auth/acl.js';
import { badRequest } from '../errors.js';
import { givenCreated } from '../store/objects/createdTimes.js';
import type { LinkPut, LinkSpec, LinksPost } from '../store/objects/linkWrites.js';

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
