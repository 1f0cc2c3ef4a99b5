/**
 * Results gathered by traversal (`follow_links=1`, `getobjs=1`) leave out objects whose own ACL
 * denies the requester `read` (issue #11): only domains with per-object ACLs need the check, so
 * the usual case costs nothing.
 */
import type { Context } from 'koa';
import type { Store } from '../store/store.js';
import type { AuthState } from './routeTable.js';

/** The ids of `ids` the requester may read, or undefined when every one may be read. */
export async function readableIds(ctx: Context, store: Store, domain: string, ids: Iterable<string>): Promise<Set<string> | undefined> {
  const st = ctx.state as AuthState;
  if (!st.acl?.hasObjectAcls || st.principal?.admin) return undefined;
  const out = new Set<string>();
  for (const id of ids) if (st.may(await store.aclView(domain, { id }), 'read')) out.add(id);
  return out;
}

/** A dict keyed by object id without the objects the requester may not read. */
export async function readableOnly<T>(ctx: Context, store: Store, domain: string, byId: Record<string, T>): Promise<Record<string, T>> {
  const keep = await readableIds(ctx, store, domain, Object.keys(byId));
  if (!keep) return byId;
  return Object.fromEntries(Object.entries(byId).filter(([id]) => keep.has(id)));
}
