/**
 * The seam between the store and authorization (spec 5; docs/architecture.md "Access control").
 *
 * The HTTP layer decides; the store knows what each operation reaches. The guard checks the
 * object a route names before the handler runs; some operations reach further objects only the
 * store can name, after resolving paths or reading a dataset's storage:
 * - a path lookup (`h5path`) ends at an object whose own ACL applies, possibly in another domain
 *   after external links (each domain crossed is checked too);
 * - a create (`POST /groups|/datasets|/datatypes`) links the new object into the group a path
 *   resolves to (or the deepest existing group, with `implicit=1`);
 * - a value read or write of a virtual dataset or of external raw storage makes libhdf5 open
 *   source datasets (each with its own ACL) or read other files' bytes as they are.
 * For each, the store builds the ACL view (`AclView`: the object's own ACL and its domain's, or
 * the governing folder's) and asks the request's `Access` whether the requester may `flag` it.
 * The store never decides itself.
 */
import type { Acl, Flag } from '../../auth/acl.js';

/** Access to another object an operation reaches: `read` for reads, `write` for writes. */
export type AccessMode = 'read' | 'write';

/** The flag each mode needs (spec 2.3: writing values is `update`). */
export const FLAG_FOR_MODE: Record<AccessMode, Flag> = { read: 'read', write: 'update' };

/** What an access question is about, for the denial's message (and tests). */
export interface AccessAbout {
  /** The domain of the object (normalised domain path). */
  domain: string;
  /** How the denial names it, e.g. `/locked/x in /home/a.h5`. */
  what: string;
}

/** The requester's permissions, as the HTTP layer decides them (one per request). */
export interface Access {
  /** True when every check passes (the admin, internal tools): the store may skip building views. */
  readonly all: boolean;
  /**
   * Check that the requester may `flag` what `view` describes.
   * @throws H5StoreError Forbidden (Unauthorized for anonymous requests) naming `about.what`.
   */
  check(view: AclView, flag: Flag, about: AccessAbout): void;
}

/** Allows everything (internal use, tools, and tests of the store without users). */
export const allowAll: Access = Object.freeze({ all: true, check: () => undefined });

/**
 * What a permission decision on a domain, folder or object looks at (spec 5; acls.ts).
 * `kind` is what the path is: a domain file, a folder, or nothing yet (then the nearest existing
 * folder governs, e.g. for PUT / of a new domain).
 */
export interface AclView {
  kind: 'domain' | 'folder' | 'missing';
  owner: string;
  /** The root group's ACL (the domain's), or the governing folder's. */
  root: Acl;
  /** The object's own ACL, when the request names an object that has one. */
  object?: Acl;
  /** True when the domain file holds no ACL and its folder governs it. */
  inherited: boolean;
  /** True when some object of the domain has an ACL of its own (bulk requests check each object). */
  hasObjectAcls?: boolean;
  /**
   * The objects' own ACLs, when there are any (a view of the domain itself): what the most
   * permissive outcome of a request whose object is not known yet may be (http/auth.ts).
   */
  objectAcls?: Acl[];
}
