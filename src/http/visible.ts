/**
 * Results gathered by traversal (`follow_links=1`) leave out objects whose own ACL denies read
 * (DIALECT.md; spec 5): only checked when some object of the domain has an ACL of its own.
 */
import type { Context } from 'koa';
import type { Store } from '../store/store.js';
import type { AuthState } from './routeTable.js';

/**
 * The entries of a result keyed by object id that the requester may read.
 * @returns `byId` itself when no object of the domain has its own ACL (the usual case).
 */
export async function onlyReadable<T>(ctx: Context, store: Store, domain: string, byId: Record<string, T>): Promise<Record<string, T>> {
  const state = ctx.state as AuthState;
  if (!state.acl?.hasObjectAcls || state.principal?.admin) return byId;
  const out: Record<string, T> = {};
  for (const [id, v] of Object.entries(byId)) {
    if (state.may(await store.aclView(domain, { id }), 'read')) out[id] = v;
  }
  return out;
}
