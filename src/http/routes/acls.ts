/**
 * ACL routes (service spec 2.3, 4.4, 5; wire-reference 4.2; DESIGN.md section 6):
 * `/acls[/<user>]` is the domain's (the root group's) ACL, or a folder's; the same routes under
 * `/groups/<id>`, `/datasets/<id>` and `/datatypes/<id>` are the object's own ACL (the root
 * group's id means the domain's). Reading needs `readACL`, except one's own entry and
 * `default`'s, which need `read` (h5pyd checks its own `update` flag that way); changing needs
 * `updateACL` (HSDS does not check it: a security bug not copied).
 */
import type { Context } from 'koa';
import { DEFAULT_USER, FILES_DEFAULT, aclItems, checkAclName, effectiveEntry, mergeEntryBody } from '../../auth/acl.js';
import { fallbackAcl } from '../auth.js';
import { badRequest, notFound } from '../../errors.js';
import type { Deps } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import { bodyOf, refOf } from '../request.js';
import { type AuthState, type Requirement, type Route, type Scope, route } from '../routeTable.js';

export function aclRoutes(d: Deps): Route[] {
  const fallback = fallbackAcl(d.config);
  const routes: Route[] = [];
  const bases: Array<{ prefix: string; on: Scope }> = [
    { prefix: '', on: 'domain' },
    { prefix: '/groups/:id', on: 'object' },
    { prefix: '/datasets/:id', on: 'object' },
    { prefix: '/datatypes/:id', on: 'object' },
  ];
  for (const { prefix, on } of bases) {
    const target = (ctx: Context) => ({ id: (ctx.params as { id?: string }).id });
    const selfPath = (ctx: Context) => (prefix ? prefix.replace(':id', (ctx.params as { id: string }).id) : '') + '/acls';
    /** Reading one entry: `read` for one's own and `default`'s, `readACL` for others'. */
    const readOne = (ctx: Context): Requirement => {
      const user = (ctx.params as { user: string }).user;
      const p = (ctx.state as AuthState).principal;
      return { flag: user === DEFAULT_USER || (p.authenticated && user === p.name) ? 'read' : 'readACL', on };
    };

    // GET [/{col}/:id]/acls: every entry of the ACL, sorted by user name
    routes.push(
      route('GET', `${prefix}/acls`, { flag: 'readACL', on }, async (ctx) => {
        const ref = refOf(ctx);
        const { owner, acl } = await d.store.getAcl(ref.domain, target(ctx));
        const h = new Hrefs(ctx, d.config, ref);
        sendJson(ctx, 200, { owner, acls: aclItems(acl), hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
      }),
    );

    // GET [/{col}/:id]/acls/:user: one entry (one's own: the effective flags when not listed)
    routes.push(
      route('GET', `${prefix}/acls/:user`, readOne, async (ctx) => {
        const ref = refOf(ctx);
        const user = checkAclName((ctx.params as { user: string }).user);
        const st = ctx.state as AuthState;
        const { acl } = await d.store.getAcl(ref.domain, target(ctx));
        let entry = acl[user];
        if (!entry && st.principal.authenticated && user === st.principal.name && st.acl) {
          entry = effectiveEntry(st.principal, { object: st.acl.object, root: st.acl.root, fallback });
        }
        if (!entry) throw notFound(`No ACL entry for ${user}`);
        const h = new Hrefs(ctx, d.config, ref);
        sendJson(ctx, 200, { acl: { ...entry, userName: user }, hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
      }),
    );

    // PUT [/{col}/:id]/acls/:user: set flags of one entry (missing flags keep their value)
    routes.push(
      route(
        'PUT',
        `${prefix}/acls/:user`,
        { flag: 'updateACL', on },
        async (ctx) => {
          const ref = refOf(ctx);
          const user = checkAclName((ctx.params as { user: string }).user);
          onlyFoldersHoldFilesDefault(ctx, [user]);
          const body = bodyOf(ctx);
          mergeEntryBody(body); // validate before taking the lock
          await d.store.updateAcl(ref.domain, target(ctx), (acl) => {
            acl[user] = mergeEntryBody(body, acl[user]);
          });
          const h = new Hrefs(ctx, d.config, ref);
          sendJson(ctx, 201, { hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
        },
        { jsonBody: true },
      ),
    );

    // PUT [/{col}/:id]/acls: set several entries {"acls": [{userName, ...flags}] | {user: flags}}
    routes.push(
      route(
        'PUT',
        `${prefix}/acls`,
        { flag: 'updateACL', on },
        async (ctx) => {
          const ref = refOf(ctx);
          const items = aclBody(bodyOf(ctx));
          onlyFoldersHoldFilesDefault(ctx, Object.keys(items));
          await d.store.updateAcl(ref.domain, target(ctx), (acl) => {
            for (const [user, flags] of Object.entries(items)) acl[user] = mergeEntryBody(flags, acl[user]);
          });
          const h = new Hrefs(ctx, d.config, ref);
          sendJson(ctx, 201, { hrefs: [h.rel('self', selfPath(ctx)), h.rel('home', '/')] });
        },
        { jsonBody: true },
      ),
    );
  }
  return routes;
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

/**
 * The entries of a PUT .../acls body: `{"acls": [{"userName": u, ...flags}]}` (the GET shape)
 * or `{"acls": {u: {...flags}}}` (the PUT / shape). Every entry is validated.
 * @throws BadRequest for another shape, a bad name, an unknown flag or a non-boolean value.
 */
export function aclBody(body: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const raw = body.acls;
  const out: Record<string, Record<string, unknown>> = {};
  const add = (user: unknown, flags: unknown) => {
    if (typeof user !== 'string') throw badRequest('Each ACL entry needs a "userName"');
    if (!flags || typeof flags !== 'object' || Array.isArray(flags)) throw badRequest(`ACL entry of ${user} must be an object of flags`);
    const f = { ...(flags as Record<string, unknown>) };
    delete f.userName;
    mergeEntryBody(f);
    out[checkAclName(user)] = f;
  };
  if (Array.isArray(raw)) for (const e of raw) add((e as { userName?: unknown })?.userName, e);
  else if (raw && typeof raw === 'object') for (const [u, f] of Object.entries(raw)) add(u, f);
  else throw badRequest('The body needs "acls": a list of {"userName", flags...} or an object {user: flags}');
  return out;
}

