/**
 * ACL routes (service spec 2.3, 4.4, 5; wire-reference 4.2; DESIGN.md section 6):
 * `/acls[/<user>]` is the domain's (the root group's) ACL, or a folder's; the same routes under
 * `/groups/<id>`, `/datasets/<id>` and `/datatypes/<id>` are the object's own ACL (the root
 * group's id means the domain's). Reading needs `readACL`, except one's own entry and
 * `default`'s, which need `read` (h5pyd checks its own `update` flag that way); changing needs
 * `updateACL` (HSDS does not check it: a security bug not copied). One handler serves the four
 * places; the route table (index.ts) names every path.
 */
import type { Context } from 'koa';
import { DEFAULT_USER, FILES_DEFAULT, aclItems, checkAclName, effectiveEntry, mergeEntryBody } from '../../auth/acl.js';
import { aclEntriesBody, aclEntryBody, parseBody } from '../bodies.js';
import { fallbackAcl } from '../auth.js';
import { badRequest, notFound } from '../../errors.js';
import type { Deps } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import { bodyOf, refOf } from '../request.js';
import type { AuthState, Requirement, Scope } from '../routeTable.js';

/** The object whose ACL a route names: its `:id` (none: the domain's or folder's own ACL). */
function target(ctx: Context): { id?: string } {
  return { id: (ctx.params as { id?: string }).id };
}

/** The route's own path: `/acls`, or `/<collection>/<id>/acls`. */
function selfPath(ctx: Context): string {
  const id = (ctx.params as { id?: string }).id;
  if (id === undefined) return '/acls';
  return `${ctx.path.slice(0, ctx.path.indexOf('/', 1))}/${id}/acls`;
}

/** Reading one entry: `read` for one's own and `default`'s, `readACL` for others'. */
function entryNeed(ctx: Context, on: Scope): Requirement {
  const user = (ctx.params as { user: string }).user;
  const p = (ctx.state as AuthState).principal;
  return { flag: user === DEFAULT_USER || (p.authenticated && user === p.name) ? 'read' : 'readACL', on };
}

/** What `GET /acls/:user` needs (the domain's or folder's ACL): `entryNeed` on the domain. */
export function readEntryOfDomain(ctx: Context): Requirement {
  return entryNeed(ctx, 'domain');
}

/** What `GET /<collection>/:id/acls/:user` needs: `entryNeed` on the object. */
export function readEntryOfObject(ctx: Context): Requirement {
  return entryNeed(ctx, 'object');
}

/** `GET [/<collection>/:id]/acls`: every entry of the ACL, sorted by user name. */
export async function list(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const { owner, acl } = await d.store.getAcl(ref.domain, target(ctx));
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 200, { owner, acls: aclItems(acl), hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
}

/** `GET [/<collection>/:id]/acls/:user`: one entry (one's own: the effective flags when not listed). */
export async function get(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const user = checkAclName((ctx.params as { user: string }).user);
  const st = ctx.state as AuthState;
  const { acl } = await d.store.getAcl(ref.domain, target(ctx));
  let entry = acl[user];
  if (!entry && st.principal.authenticated && user === st.principal.name && st.acl) {
    entry = effectiveEntry(st.principal, { object: st.acl.object, root: st.acl.root, fallback: fallbackAcl(d.config) });
  }
  if (!entry) throw notFound(`No ACL entry for ${user}`);
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 200, { acl: { ...entry, userName: user }, hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
}

/** `PUT [/<collection>/:id]/acls/:user`: set flags of one entry (missing flags keep their value). */
export async function put(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const user = checkAclName((ctx.params as { user: string }).user);
  onlyFoldersHoldFilesDefault(ctx, [user]);
  const flags = parseBody(aclEntryBody, bodyOf(ctx)); // validated before taking the lock
  await d.store.updateAcl(ref.domain, target(ctx), (acl) => {
    acl[user] = mergeEntryBody(flags, acl[user]);
  });
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 201, { hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
}

/** `PUT [/<collection>/:id]/acls`: set several entries `{"acls": [{userName, ...flags}] | {user: flags}}`. */
export async function putMany(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const items = parseBody(aclEntriesBody, bodyOf(ctx));
  onlyFoldersHoldFilesDefault(ctx, Object.keys(items));
  await d.store.updateAcl(ref.domain, target(ctx), (acl) => {
    for (const [user, flags] of Object.entries(items)) acl[user] = mergeEntryBody(flags, acl[user]);
  });
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 201, { hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
}

/**
 * `default:files` (the `default` entry of the files dropped into a folder; auth/acl.ts
 * `droppedInAcl`) is an entry of folder ACLs only.
 * @throws BadRequest when a domain's or an object's ACL is to get it.
 */
function onlyFoldersHoldFilesDefault(ctx: Context, names: string[]): void {
  if (!names.includes(FILES_DEFAULT)) return;
  const st = ctx.state as AuthState;
  if (st.acl?.kind !== 'folder' || (ctx.params as { id?: string }).id !== undefined) {
    throw badRequest(`${FILES_DEFAULT} is an entry of folder ACLs only (what everyone may do with the files dropped into the folder); use default here`);
  }
}
