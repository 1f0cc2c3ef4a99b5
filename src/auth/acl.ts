/**
 * ACLs and the permission decision (service spec 2.3 and 5; DESIGN.md section 6). Pure: no I/O.
 *
 * An ACL maps a user name, `default` (everyone not listed, anonymous requests included) or
 * `g:<group>` (members of a group) to six flags. `decide()` applies the spec's lookup order:
 *   1. the user's entry in the object's ACL;
 *   2. the user's entry in the root group's ACL (the domain's ACL);
 *   3. the `default` entry in the object's ACL;
 *   4. the `default` entry in the root ACL;
 *   5. the `default_acl` configuration setting.
 * The first step that has an entry decides, allowing or denying. Entries for the user's groups
 * count as the user's own entries (spec section 5 with HSDS's `g:` entries, wire-reference 4.1):
 * a direct entry wins over group entries of the same ACL; several group entries are combined
 * (a flag is granted when any of them grants it). The admin user passes every check.
 * A denial is 401 when the request carried no credentials (spec 5 rule 1), else 403 (rule 2).
 */
import { badRequest } from '../errors.js';

/** ACL flags (spec 2.3), in the order the wire shows them (wire-reference 4.2). */
export const FLAGS = ['create', 'read', 'update', 'delete', 'readACL', 'updateACL'] as const;
export type Flag = (typeof FLAGS)[number];

/** One ACL item without its user name: the six flags. */
export type AclEntry = Record<Flag, boolean>;

/** An ACL: user name (or `default`, or `g:<group>`) -> flags. */
export type Acl = Record<string, AclEntry>;

/** The user that stands for everyone not listed, and for requests without credentials. */
export const DEFAULT_USER = 'default';
/** Prefix of group entries in an ACL (as HSDS and h5pyd's `hsacl` write them). */
export const GROUP_PREFIX = 'g:';
/**
 * Prefix of the names of OpenID Connect users (`oidc:<subject>`, auth/authenticate.ts): never a
 * local user name (those cannot hold `:`), the admin or a group (issue #24 item 5).
 */
export const OIDC_PREFIX = 'oidc:';
/**
 * The folder ACL entry that stands for `default` on the files dropped into the folder (issue #24
 * item 1): a folder's own `default` entry lets everyone list it, and says nothing about reading
 * the files in it. Only folders hold it; it never matches a requester.
 */
export const FILES_DEFAULT = 'default:files';

/** An entry with every flag set to `value`. */
export function entryOf(value: boolean): AclEntry {
  return { create: value, read: value, update: value, delete: value, readACL: value, updateACL: value };
}

/** An entry with only the given flags set. */
export function entryWith(flags: Iterable<Flag>): AclEntry {
  const e = entryOf(false);
  for (const f of flags) e[f] = true;
  return e;
}

/**
 * Parse a flag list such as `read`, `read,update`, `all` or `none` (configuration and CLI).
 * @throws BadRequest for an unknown flag name.
 */
export function parseFlagList(text: string): AclEntry {
  const t = text.trim();
  if (t === 'all') return entryOf(true);
  if (t === 'none' || t === '') return entryOf(false);
  const flags: Flag[] = [];
  for (const raw of t.split(/[,\s]+/)) {
    const f = raw === 'writeACL' ? 'updateACL' : raw;
    if (!(FLAGS as readonly string[]).includes(f)) throw badRequest(`Unknown ACL flag ${JSON.stringify(raw)} (one of ${FLAGS.join(', ')}, all, none)`);
    flags.push(f as Flag);
  }
  return entryWith(flags);
}

/**
 * Validate a PUT body for an ACL entry (wire-reference 4.2): any subset of the six flags, with
 * `writeACL` accepted as an alias of `updateACL` (DESIGN.md section 6). Missing flags keep their
 * value in `current`, or become false for a new entry.
 * @throws BadRequest for an unknown key or a non-boolean value.
 */
export function mergeEntryBody(body: Record<string, unknown>, current?: AclEntry): AclEntry {
  const out: AclEntry = { ...(current ?? entryOf(false)) };
  for (const [k, v] of Object.entries(body)) {
    if (k === 'userName' || k === 'domain') continue;
    const flag = k === 'writeACL' ? 'updateACL' : k;
    if (!(FLAGS as readonly string[]).includes(flag)) throw badRequest(`Unexpected key in request body: ${k}`);
    if (typeof v !== 'boolean') throw badRequest(`ACL flag ${k} must be true or false`);
    out[flag as Flag] = v;
  }
  return out;
}

/**
 * Validate a user or group name used as an ACL key: `default`, `default:files` (folders),
 * `g:<group>`, `oidc:<subject>` or a user name.
 * @throws BadRequest for empty names, control characters, `/`, `:` (but after `oidc:`), or more
 *   than 128 characters.
 */
export function checkAclName(name: string): string {
  if (name === FILES_DEFAULT) return name;
  const oidc = name.startsWith(OIDC_PREFIX);
  const bare = name.startsWith(GROUP_PREFIX) ? name.slice(GROUP_PREFIX.length) : oidc ? name.slice(OIDC_PREFIX.length) : name;
  // eslint-disable-next-line no-control-regex
  if (bare === '' || name.length > 128 || /[\u0000-\u001f\u007f/]/.test(bare) || (!oidc && bare.includes(':'))) {
    throw badRequest(`Invalid user or group name ${JSON.stringify(name)}`);
  }
  return name;
}

/** Who is asking. */
export interface Principal {
  /** User name; `default` for a request without credentials. */
  name: string;
  /** Groups the user belongs to (from the groups section of the users file). */
  groups: readonly string[];
  /** True when the request carried credentials that were verified. */
  authenticated: boolean;
  /** The admin passes every check and may set `owner` (DESIGN.md 6, issue #11). */
  admin: boolean;
}

/** The anonymous principal. */
export const ANONYMOUS: Principal = Object.freeze({ name: DEFAULT_USER, groups: [], authenticated: false, admin: false });

/** The ACLs a decision looks at (spec 5). */
export interface AclContext {
  /** The object's own ACL (absent for the root group itself and for folders). */
  object?: Acl;
  /** The root group's ACL, i.e. the domain's (or the folder's, for folders and dropped-in files). */
  root: Acl;
  /** `default_acl` from configuration (step 5). */
  fallback: AclEntry;
}

/** The user's own entry in one ACL: the direct entry, else the union of their group entries. */
export function ownEntry(acl: Acl | undefined, p: Principal): AclEntry | undefined {
  if (!acl) return undefined;
  if (p.authenticated && p.name !== DEFAULT_USER) {
    const direct = acl[p.name];
    if (direct) return direct;
    let merged: AclEntry | undefined;
    for (const g of p.groups) {
      const e = acl[GROUP_PREFIX + g];
      if (!e) continue;
      merged ??= entryOf(false);
      for (const f of FLAGS) merged[f] ||= e[f];
    }
    return merged;
  }
  return undefined;
}

/**
 * The effective flags of a principal (spec 5 lookup order). The admin has every flag.
 */
export function effectiveEntry(p: Principal, ctx: AclContext): AclEntry {
  if (p.admin) return entryOf(true);
  return ownEntry(ctx.object, p) ?? ownEntry(ctx.root, p) ?? ctx.object?.[DEFAULT_USER] ?? ctx.root[DEFAULT_USER] ?? ctx.fallback;
}

/** The outcome of a permission check. */
export type Decision = 'allow' | 'unauthorized' | 'forbidden';

/**
 * Decide whether `p` may do `flag` (spec 5): allow, or deny with 401 for a request without
 * credentials (rule 1) and 403 for an identified user (rule 2).
 */
export function decide(p: Principal, flag: Flag, ctx: AclContext): Decision {
  if (effectiveEntry(p, ctx)[flag]) return 'allow';
  return p.authenticated ? 'forbidden' : 'unauthorized';
}

/** ACL items as the wire shows them (wire-reference 4.2): sorted by user name. */
export function aclItems(acl: Acl): Array<{ userName: string } & AclEntry> {
  return Object.keys(acl)
    .sort()
    .map((userName) => ({ userName, ...acl[userName] }));
}

/**
 * The ACL a new domain or folder starts with (wire-reference 1.5): the parent folder's entries
 * (except `default`, the owner and the admin, `default:files` for a domain, and only entries
 * with a flag set), the owner with
 * every flag, and `default` as the `default_public` setting says: read-only when public, no
 * rights otherwise (an explicit entry, so `default_acl` does not apply). Folders are readable
 * by everyone, as in HSDS.
 */
export function initialAcl(opts: { owner: string; parent: Acl; admin: string; folder: boolean; defaultPublic: boolean }): Acl {
  const acl: Acl = {};
  for (const [name, e] of Object.entries(opts.parent)) {
    if (name === DEFAULT_USER || name === opts.owner || name === opts.admin || (name === FILES_DEFAULT && !opts.folder)) continue;
    if (FLAGS.some((f) => e[f])) acl[name] = { ...e };
  }
  acl[opts.owner] = entryOf(true);
  if (opts.owner !== DEFAULT_USER) acl[DEFAULT_USER] = entryWith(opts.folder || opts.defaultPublic ? ['read'] : []);
  return acl;
}

/**
 * The ACL that governs a dropped-in file (a domain file without ACL state of its own) from the
 * ACL of the folder that governs it (issue #24 item 1; README "Users and access control").
 * Listing a folder does not imply reading the files in it: the folder's entries apply, except
 * its `default` entry (which lets everyone list the folder). `default` on the file is the
 * folder's `default:files` entry when it has one; else, when dropped-in files are not private
 * (`private` false: no users exist, or `defaultPublic`), the folder's own `default` entry (as
 * before); else no rights at all (an explicit entry, so `default_acl` does not apply either).
 * `default:files` itself is not passed on.
 * @param folder the governing folder's ACL
 */
export function droppedInAcl(folder: Acl, opts: { private: boolean }): Acl {
  const acl: Acl = {};
  for (const [name, e] of Object.entries(folder)) if (name !== DEFAULT_USER && name !== FILES_DEFAULT) acl[name] = e;
  const given = folder[FILES_DEFAULT] ?? (opts.private ? entryOf(false) : folder[DEFAULT_USER]);
  if (given) acl[DEFAULT_USER] = given;
  return acl;
}
