/**
 * The users file: users with salted password hashes, groups, and API tokens (issue #11).
 *
 * One JSON document, written atomically (temporary file, fsync, rename) so a reader never sees
 * half a file and the server notices a change by the new inode:
 *
 *   {"version": 1,
 *    "users":  {"alice": {"hash": "scrypt$15$8$1$<salt>$<key>", "created": 1795211058}},
 *    "groups": {"staff": ["alice", "bob"]},
 *    "tokens": [{"id": "q3Zx...", "user": "alice", "hash": "sha256$<hex>", "created": ..., "expires": null, "label": ""}]}
 *
 * Passwords are hashed with scrypt from `node:crypto` (N = 2^15, r = 8, p = 1, 16-byte salt,
 * 32-byte key); tokens are 32 random bytes shown once and stored as their SHA-256 (a token is
 * already high-entropy, so a fast hash suffices). Nothing secret is ever logged or returned.
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** User names: letters, digits and `._@+-`, 1 to 64 characters; `default` is reserved. */
const USER_NAME = /^[A-Za-z0-9._@+-]{1,64}$/;
/** Token form: `h5s_<id>_<secret>` (id: 12 base64url chars, secret: 43). */
const TOKEN_FORM = /^h5s_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/;

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 };

export interface UserRecord {
  hash: string;
  created: number;
}

export interface TokenRecord {
  id: string;
  user: string;
  hash: string;
  created: number;
  /** Seconds since the epoch, or null for no expiry. */
  expires: number | null;
  label: string;
}

export interface UsersDoc {
  version: 1;
  users: Record<string, UserRecord>;
  groups: Record<string, string[]>;
  tokens: TokenRecord[];
}

/** A problem with the users file or a users command (the CLI prints the message). */
export class UsersError extends Error {}

function scrypt(password: string, salt: Buffer, opts: { N: number; r: number; p: number; keylen: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const o: ScryptOptions = { N: opts.N, r: opts.r, p: opts.p, maxmem: SCRYPT.maxmem };
    scryptCb(password.normalize('NFC'), salt, opts.keylen, o, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Hash a password: `scrypt$<log2 N>$<r>$<p>$<salt base64>$<key base64>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT);
  return `scrypt$${Math.log2(SCRYPT.N)}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A hash that never matches, used to spend the same time on unknown users. */
let dummyHash: Promise<string> | undefined;

/** A stored hash's parts: scrypt's parameters, the salt and the key it must give. */
export interface StoredHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

/**
 * Parse a stored `scrypt$<log2 N>$<r>$<p>$<salt>$<key>` hash.
 * @returns undefined when it is not one, or its parameters are outside 2^10 <= N <= 2^20,
 *   1 <= r <= 32, 1 <= p <= 16 (a users file cannot make a check arbitrarily costly).
 */
export function parseHash(stored: string): StoredHash | undefined {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!m) return undefined;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (logN < 10 || logN > 20 || r < 1 || r > 32 || p < 1 || p > 16) return undefined;
  return { N: 2 ** logN, r, p, salt: Buffer.from(m[4], 'base64'), key: Buffer.from(m[5], 'base64') };
}

/** The hash an unknown user's password is checked against (made once per process). */
export function unknownUserHash(): Promise<string> {
  return (dummyHash ??= hashPassword(randomBytes(12).toString('hex')));
}

/**
 * Check a password against a stored hash in constant time (an unknown user costs the same),
 * computing scrypt with `derive` (default: `node:crypto`'s, on libuv's thread pool; the server
 * passes its password threads, passwordPool.ts).
 * @returns true when it matches.
 */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
  derive: (job: { password: string; salt: Buffer; N: number; r: number; p: number; keylen: number }) => Promise<Buffer> = (j) => scrypt(j.password, j.salt, j),
): Promise<boolean> {
  const h = parseHash(stored ?? (await unknownUserHash()));
  if (!h) return false;
  const got = await derive({ password, salt: h.salt, N: h.N, r: h.r, p: h.p, keylen: h.key.length });
  return got.length === h.key.length && timingSafeEqual(got, h.key) && stored !== undefined;
}

/** SHA-256 of a token secret, as stored. */
export function tokenHash(secret: string): string {
  return 'sha256$' + createHash('sha256').update(secret).digest('hex');
}

/** Split a token into its id and secret; undefined when it is not an h5store token. */
export function parseToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN_FORM.exec(token);
  return m ? { id: m[1], secret: m[2] } : undefined;
}

/** Constant-time comparison of two stored-hash strings. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Validate a user name for the users file. @throws UsersError */
export function checkUserName(name: string): string {
  if (!USER_NAME.test(name) || name === 'default') {
    throw new UsersError(`Invalid user name ${JSON.stringify(name)}: use 1-64 letters, digits or ._@+- (not "default")`);
  }
  return name;
}

function emptyDoc(): UsersDoc {
  return { version: 1, users: {}, groups: {}, tokens: [] };
}

/**
 * Parse a users file's text.
 * @throws UsersError when it is not a valid users document.
 */
export function parseUsersDoc(text: string): UsersDoc {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UsersError(`The users file is not valid JSON: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UsersError('The users file must hold a JSON object');
  const r = raw as Partial<UsersDoc>;
  const doc = emptyDoc();
  for (const [name, u] of Object.entries(r.users ?? {})) {
    if (!u || typeof u.hash !== 'string') throw new UsersError(`User ${name} has no password hash`);
    if (!u.hash.startsWith('scrypt$')) throw new UsersError(`User ${name}: only scrypt hashes are accepted (never plain text)`);
    doc.users[name] = { hash: u.hash, created: Number(u.created) || 0 };
  }
  for (const [g, members] of Object.entries(r.groups ?? {})) {
    if (!Array.isArray(members) || !members.every((m) => typeof m === 'string')) throw new UsersError(`Group ${g} must list user names`);
    doc.groups[g] = [...members];
  }
  for (const t of r.tokens ?? []) {
    if (!t || typeof t.id !== 'string' || typeof t.user !== 'string' || typeof t.hash !== 'string') throw new UsersError('A token record is incomplete');
    doc.tokens.push({ id: t.id, user: t.user, hash: t.hash, created: Number(t.created) || 0, expires: t.expires ?? null, label: String(t.label ?? '') });
  }
  return doc;
}

/** Read a users file; a missing file is an empty document. @throws UsersError */
export function readUsersFile(file: string): UsersDoc {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyDoc();
    throw new UsersError(`Cannot read the users file: ${(e as Error).message}`);
  }
  return parseUsersDoc(text);
}

/** Write a users file atomically (mode 0600: hashes are secrets too). */
export function writeUsersFile(file: string, doc: UsersDoc): void {
  const dir = path.dirname(path.resolve(file));
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(doc, null, 2) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** Change a users file under a simple exclusive lock (the CLI; concurrent commands wait). */
export async function updateUsersFile<T>(file: string, fn: (doc: UsersDoc) => T | Promise<T>): Promise<T> {
  const lock = `${path.resolve(file)}.lock`;
  const t0 = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let age = 0;
      try {
        age = Date.now() - fs.statSync(lock).mtimeMs;
      } catch {
        continue;
      }
      if (age > 10_000) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() - t0 > 15_000) throw new UsersError(`The users file is locked (${lock})`);
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    const doc = readUsersFile(file);
    const out = await fn(doc);
    writeUsersFile(file, doc);
    return out;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Make a new API token for `user`: the token (shown once) and the record to store. */
export function newToken(user: string, opts: { expires?: number | null; label?: string } = {}): { token: string; record: TokenRecord } {
  const id = randomBytes(9).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  return {
    token: `h5s_${id}_${secret}`,
    record: { id, user, hash: tokenHash(secret), created: Math.floor(Date.now() / 1000), expires: opts.expires ?? null, label: opts.label ?? '' },
  };
}
