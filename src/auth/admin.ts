/**
 * The account commands behind `h5store user|group|token ...` (issue #11): changes to the users
 * file (users.ts), each under the file's lock and written atomically. The running server sees
 * each change on its next request.
 */
import { read } from 'read';
import { UsersError, checkUserName, hashPassword, newToken, updateUsersFile, readUsersFile } from './users.js';
import { OIDC_PREFIX, checkAclName } from './acl.js';

/**
 * A new password: asked twice on a terminal (not echoed), else the first line of standard input.
 * @throws UsersError when empty, or when the two entries differ.
 */
export async function askPassword(prompt = 'Password: '): Promise<string> {
  let pw: string;
  if (process.stdin.isTTY) {
    pw = String(await read({ prompt, silent: true, replace: '*', output: process.stderr }));
    const again = String(await read({ prompt: 'Again: ', silent: true, replace: '*', output: process.stderr }));
    if (pw !== again) throw new UsersError('The passwords differ');
  } else {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    pw = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
  }
  if (pw.length === 0) throw new UsersError('The password must not be empty');
  if (pw.length > 1024) throw new UsersError('The password is longer than 1024 characters');
  return pw;
}

/** Add a user. @throws UsersError when the name is taken or invalid. */
export async function userAdd(file: string, name: string, password: string): Promise<void> {
  checkUserName(name);
  const hash = await hashPassword(password);
  await updateUsersFile(file, (doc) => {
    if (doc.users[name]) throw new UsersError(`User ${name} exists already (use "user passwd")`);
    doc.users[name] = { hash, created: Math.floor(Date.now() / 1000) };
  });
}

/** Change a user's password. */
export async function userPasswd(file: string, name: string, password: string): Promise<void> {
  const hash = await hashPassword(password);
  await updateUsersFile(file, (doc) => {
    if (!doc.users[name]) throw new UsersError(`No user ${name}`);
    doc.users[name] = { hash, created: doc.users[name].created };
  });
}

/** Remove a user, their tokens and group memberships. */
export async function userRemove(file: string, name: string): Promise<void> {
  await updateUsersFile(file, (doc) => {
    if (!doc.users[name]) throw new UsersError(`No user ${name}`);
    delete doc.users[name];
    doc.tokens = doc.tokens.filter((t) => t.user !== name);
    for (const g of Object.keys(doc.groups)) doc.groups[g] = doc.groups[g].filter((m) => m !== name);
  });
}

/** User names with their groups (no hashes). */
export function userList(file: string): Array<{ name: string; groups: string[]; created: number }> {
  const doc = readUsersFile(file);
  return Object.keys(doc.users)
    .sort()
    .map((name) => ({ name, created: doc.users[name].created, groups: Object.keys(doc.groups).filter((g) => doc.groups[g].includes(name)) }));
}

/**
 * Add members to a group (created when new): local users, or OpenID Connect users by their
 * `oidc:<id>` name (the explicit way to put them in a group; authenticate.ts).
 */
export async function groupAdd(file: string, group: string, members: string[]): Promise<void> {
  checkUserName(group);
  await updateUsersFile(file, (doc) => {
    for (const m of members) if (!doc.users[m] && !isOidcName(m)) throw new UsersError(`No user ${m}`);
    const cur = new Set(doc.groups[group] ?? []);
    for (const m of members) cur.add(m);
    doc.groups[group] = [...cur].sort();
  });
}

/** Remove members from a group, or the whole group when no member is named. */
export async function groupRemove(file: string, group: string, members: string[]): Promise<void> {
  await updateUsersFile(file, (doc) => {
    if (!doc.groups[group]) throw new UsersError(`No group ${group}`);
    if (members.length === 0) delete doc.groups[group];
    else doc.groups[group] = doc.groups[group].filter((m) => !members.includes(m));
  });
}

/** Groups and their members. */
export function groupList(file: string): Record<string, string[]> {
  return readUsersFile(file).groups;
}

/**
 * Make an API token for a user. The token is returned once; only its hash is stored.
 * @param days lifetime in days (undefined: no expiry)
 */
export async function tokenAdd(file: string, user: string, opts: { days?: number; label?: string }): Promise<{ id: string; token: string; expires: number | null }> {
  const expires = opts.days === undefined ? null : Math.floor(Date.now() / 1000 + opts.days * 86400);
  const { token, record } = newToken(user, { expires, label: opts.label });
  await updateUsersFile(file, (doc) => {
    if (!doc.users[user]) throw new UsersError(`No user ${user}`);
    doc.tokens.push(record);
  });
  return { id: record.id, token, expires };
}

/** Tokens (ids, users, dates and labels; never the hashes). */
export function tokenList(file: string, user?: string): Array<{ id: string; user: string; created: number; expires: number | null; label: string }> {
  return readUsersFile(file)
    .tokens.filter((t) => user === undefined || t.user === user)
    .map(({ id, user: u, created, expires, label }) => ({ id, user: u, created, expires, label }));
}

/** Revoke a token by id. @throws UsersError when there is none. */
export async function tokenRevoke(file: string, id: string): Promise<void> {
  await updateUsersFile(file, (doc) => {
    const n = doc.tokens.length;
    doc.tokens = doc.tokens.filter((t) => t.id !== id);
    if (doc.tokens.length === n) throw new UsersError(`No token ${id}`);
  });
}

/** Whether `name` is a well-formed OpenID Connect user name (`oidc:<id>`). */
function isOidcName(name: string): boolean {
  if (!name.startsWith(OIDC_PREFIX)) return false;
  try {
    checkAclName(name);
    return true;
  } catch {
    return false;
  }
}
