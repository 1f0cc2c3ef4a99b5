/**
 * Who is asking and what they may do. For now every request acts as the user `default` with
 * full rights: this module is the one place the ACL work (spec section 5) will replace.
 */
import type { Context } from 'koa';

/** ACL actions (spec 2.3 / wire-reference 4.3). */
export type Action = 'read' | 'create' | 'update' | 'delete' | 'readACL' | 'updateACL';

export const ACTIONS: readonly Action[] = ['create', 'read', 'update', 'delete', 'readACL', 'updateACL'];

/** The requesting user's name (`default` for every request until authentication exists). */
export function currentUser(_ctx: Context): string {
  return 'default';
}

/**
 * Check that the current user may perform `action` on `domain`. Allows everything for now.
 * @throws H5StoreError Unauthorized/Forbidden once ACLs exist (spec section 5).
 */
export function authorize(_ctx: Context, _domain: string, _action: Action): void {
  /* every request acts as `default` with full rights */
}

/** The effective rights of a user on a domain (what GET /acls reports). */
export function effectiveAcl(_user: string): Record<Action, boolean> {
  return { create: true, read: true, update: true, delete: true, readACL: true, updateACL: true };
}
