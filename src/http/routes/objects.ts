/**
 * What the routes of the three object collections share (`/groups`, `/datasets`, `/datatypes`;
 * wire-reference 2.1-2.5): which collection a route's path names, listing a collection (or
 * looking an object up by `h5path`), creating objects (one, or HSDS 1.0's batch of a list
 * body), and deleting an object. The routes themselves are in
 * groups.ts, datasets.ts and datatypes.ts; attribute and ACL routes, written once for the three
 * collections, find the owner's kind here too.
 */
import type { Context } from 'koa';
import { badRequest } from '../../errors.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { COLLECTION } from '../../store/objects/ids.js';
import type { Deps } from '../deps.js';
import { objectHrefs } from '../deps.js';
import { datasetBody, datatypeBody, groupBody, newObjects, parseBody } from '../bodies.js';
import { Hrefs, sendJson } from '../present.js';
import { accessOf, bodyListOf, bodyOf, flag, limitParam, markerParam, param, pathOptions, refOf } from '../request.js';

/** The object kind of each collection's path segment. */
const KIND_OF: Readonly<Record<string, ObjectKind>> = { groups: 'group', datasets: 'dataset', datatypes: 'datatype' };

/**
 * The kind of object a route under `/groups`, `/datasets` or `/datatypes` serves, from the first
 * segment of the request's path (the route table dispatches on it, so it is one of the three).
 * @throws Error for a path outside the three collections (a route table mistake)
 */
export function ownerKind(ctx: Context): ObjectKind {
  const end = ctx.path.indexOf('/', 1);
  const kind = KIND_OF[end < 0 ? ctx.path.slice(1) : ctx.path.slice(1, end)];
  if (kind === undefined) throw new Error(`${ctx.path} is not under /groups, /datasets or /datatypes`);
  return kind;
}

/**
 * `GET /<collection>` (and with a trailing slash): the ids of the domain's objects of `kind`
 * (`Limit`, `Marker`), or with `h5path` (and `parent_id`/`grpid`) the object at that path,
 * which must be of `kind`.
 * @throws BadRequest for a relative path without a parent, an object of another kind, or a
 *   trailing slash without an `h5path` (an id was expected)
 */
export async function listCollection(ctx: Context, d: Deps, kind: ObjectKind): Promise<void> {
  const col = COLLECTION[kind];
  const ref = refOf(ctx);
  const h = new Hrefs(ctx, d.config, ref);
  const h5path = param(ctx, 'h5path');
  if (h5path !== undefined) {
    const parent = param(ctx, 'parent_id') ?? param(ctx, 'grpid');
    // as HSDS: a relative path names nothing without the group it starts from
    if (parent === undefined && !h5path.startsWith('/')) throw badRequest('h5path must be absolute when no parent_id is given');
    const found = await d.store.lookupPath(ref.domain, h5path, parent, pathOptions(ctx));
    if (found.kind !== kind) throw badRequest(`${h5path} is a ${found.kind}, not a ${kind}: look it up in /${COLLECTION[found.kind]}/`);
    const hf = new Hrefs(ctx, d.config, { ...ref, domain: found.domain });
    sendJson(ctx, 200, { ...found.json, hrefs: objectHrefs(hf, col, found.json.id as string, found.json.root as string) });
    return;
  }
  if (ctx.path.endsWith('/')) throw badRequest(`Missing ${kind} id`);
  const ids = await d.store.listCollection(ref.domain, kind, { limit: limitParam(ctx), marker: markerParam(ctx) });
  const root = await d.store.rootId(ref.domain);
  sendJson(ctx, 200, { [col]: ids, hrefs: [h.rel('self', `/${col}`), h.rel('root', `/groups/${root}`), h.rel('home', '/')] });
}

/** `DELETE /<collection>/:id`: delete the object (and the links to it). */
export async function deleteObject(ctx: Context, d: Deps, kind: ObjectKind): Promise<void> {
  const ref = refOf(ctx);
  await d.store.deleteObject(ref.domain, kind, ctx.params.id);
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 200, { hrefs: [h.rel('home', '/')] });
}

/**
 * `POST /<collection>`: create an object of `kind` from the body (parsed at the edge:
 * bodies.ts `groupBody`, `datasetBody`, `datatypeBody`; the store checks what needs the file:
 * type, shape, creation properties, id, link or path), answered `201` with its JSON and hrefs;
 * a list body is HSDS 1.0's batch create (issue #25; bodies.ts `newObjects`): all objects
 * created or none (store.ts `createObjects`; `create` checked on the group each item is linked
 * into), answered `201 {"objects": [...]}` in the order given.
 */
export async function createObject(ctx: Context, d: Deps, kind: ObjectKind): Promise<void> {
  const ref = refOf(ctx);
  const implicit = flag(ctx, 'implicit');
  const list = bodyListOf(ctx);
  if (list !== undefined) {
    const objects = await d.store.createObjects(ref.domain, newObjects(kind, list), implicit, accessOf(ctx));
    sendJson(ctx, 201, { objects, hrefs: [] });
    return;
  }
  const body = bodyOf(ctx);
  const o =
    kind === 'group'
      ? await d.store.createGroup(ref.domain, parseBody(groupBody, body), implicit, accessOf(ctx))
      : kind === 'dataset'
        ? await d.store.createDataset(ref.domain, parseBody(datasetBody, body), implicit, accessOf(ctx))
        : await d.store.createDatatype(ref.domain, parseBody(datatypeBody, body), implicit, accessOf(ctx));
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 201, { ...o, hrefs: objectHrefs(h, COLLECTION[kind], o.id, o.root) });
}
