/**
 * Who is asking: the `Authorization` header -> a Principal (issue #11; wire-reference 0.4).
 *
 * - No header: the user `default` (spec section 5).
 * - `Basic base64(user:password)`: checked against the users file (scrypt). A verified pair is
 *   remembered for `authCacheSeconds` under a SHA-256 of the header salted with a per-process
 *   secret, so a request does not pay for scrypt each time; the memory is dropped whenever the
 *   users file changes.
 * - `Bearer h5s_<id>_<secret>`: an API token (h5pyd sends its api key this way); only the
 *   token's SHA-256 is stored, compared in constant time; expiry is honoured.
 * - `Bearer <JWT>`: with OpenID Connect configured, validated against the issuer's JWKS (issuer,
 *   audience, expiry; `jose`). The user is `oidc:<id>`, `<id>` the value of the configured claim
 *   (`sub` by default: unique per issuer, which is fixed by the configuration): never a local
 *   user, the admin or a group by name, whatever the token's `preferred_username` says (issue #24
 *   item 5). Admin rights only by the explicit list `oidcAdmins`; groups only where the users
 *   file names `oidc:<id>` as a member.
 * - Malformed headers (other schemes, not exactly one space after the scheme, bad base64, no
 *   colon, an empty user name, credentials that are not UTF-8 or hold control characters, as
 *   RFC 7617 section 2 forbids, empty, over 4 KiB): 400, with or without users (issue #24 item 16).
 * - Unknown user, wrong password, unknown/expired/revoked token: 401 with `WWW-Authenticate`.
 * Password checks (issue #24 item 8) run on threads of their own (passwordPool.ts), never on
 * libuv's pool that serves file I/O; at most `maxPasswordQueue` wait (then 503), at most two at
 * once per client address (then 429), and a client address with `authFailures` failed logins in
 * `authFailureWindowSeconds` gets 429 with `Retry-After` for every new login until the window
 * ends (logins verified before still pass: they are remembered). A name that logged in from an
 * address before goes first in the queue, so an attack from elsewhere does not delay it. The
 * user name is never slowed down as such: that slowed the real user, not an attacker.
 * A server without a users file (and without OpenID Connect) has no users: well-formed
 * credentials are then ignored and the request is `default`'s (h5pyd users often have a user
 * name configured for every server).
 * The users file is re-read when it changes (checked by inode, size and mtime on each request
 * that carries credentials), so `h5store user remove` and `token revoke` take effect at once.
 */
import { hash, randomBytes } from 'node:crypto';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import fs from 'node:fs';
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.js';
import { H5StoreError, badRequest } from '../errors.js';
import { ANONYMOUS, OIDC_PREFIX, type Principal, checkAclName } from './acl.js';
import { PasswordPool } from './passwordPool.js';
import { parseToken, readUsersFile, sameHash, tokenHash, verifyPassword, type UsersDoc } from './users.js';

/** Longest Authorization header accepted (a JWT is about 1 KiB). */
const MAX_HEADER = 4096;
/** Password checks one client address may have running or waiting at once (beyond: 429). */
const CHECKS_PER_ADDRESS = 2;
/** How long a successful login of a name from an address gives its next logins priority. */
const KNOWN_LOGIN_MS = 30 * 24 * 3600_000;

/** 429 with `Retry-After` (whole seconds, at least 1). */
export function tooManyRequests(message: string, retryAfterMs: number): H5StoreError {
  return new H5StoreError('TooManyRequests', message, { retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)) });
}

/** 401 with a challenge. Browsers' pages (X-Requested-With) get no Basic challenge, so no native prompt. */
export function unauthorized(message: string, xhr = false): H5StoreError {
  const challenge = xhr ? 'Bearer realm="h5store"' : 'Basic realm="h5store", charset="UTF-8", Bearer realm="h5store"';
  return new H5StoreError('Unauthorized', message, { headers: { 'WWW-Authenticate': challenge } });
}

export interface AuthOptions {
  usersFile?: string;
  adminUser: string;
  adminGroup: string;
  authCacheSeconds: number;
  oidcIssuer: string;
  oidcAudience: string;
  oidcJwksUri: string;
  oidcUserClaim: string;
  /** Values of `oidcUserClaim` (or whole `oidc:<id>` names) of the OpenID Connect users who are admins. */
  oidcAdmins: string[];
  /** Threads hashing passwords (passwordPool.ts). */
  passwordThreads: number;
  /** Most password checks waiting for a thread (beyond: 503). */
  maxPasswordQueue: number;
  /** Failed logins from one client address within `authFailureWindowSeconds` before it gets 429 (0: no limit). */
  authFailures: number;
  authFailureWindowSeconds: number;
}

/** Whether the server has users: a users file, or OpenID Connect (then nobody is `default` by credentials). */
export function hasUsers(c: Pick<Config, 'usersFile' | 'oidcIssuer'>): boolean {
  return c.usersFile !== undefined || c.oidcIssuer !== '';
}

/** Authentication options from the configuration. */
export function authOptions(c: Config): AuthOptions {
  return {
    usersFile: c.usersFile,
    adminUser: c.adminUser,
    adminGroup: c.adminGroup,
    authCacheSeconds: c.authCacheSeconds,
    oidcIssuer: c.oidcIssuer,
    oidcAudience: c.oidcAudience,
    oidcJwksUri: c.oidcJwksUri,
    oidcUserClaim: c.oidcUserClaim,
    oidcAdmins: c.oidcAdmins,
    passwordThreads: c.passwordThreads,
    maxPasswordQueue: c.maxPasswordQueue,
    authFailures: c.authFailures,
    authFailureWindowSeconds: c.authFailureWindowSeconds,
  };
}

export class Authenticator {
  private doc: UsersDoc = { version: 1, users: {}, groups: {}, tokens: [] };
  private docStamp = '';
  private readonly secret = randomBytes(32).toString('hex');
  private readonly verified: LRUCache<string, Principal>;
  /** Failed logins per client address (issue #24 item 8). */
  private readonly failures: RateLimiterMemory | undefined;
  /** Checks in progress by header key: parallel requests with the same credentials share one. */
  private readonly checks = new Map<string, Promise<Principal>>();
  /** Password checks running or waiting per client address. */
  private readonly checking = new Map<string, number>();
  /** `<address>\0<user>` of successful password logins: their next logins go first. */
  private readonly knownLogins = new LRUCache<string, true>({ max: 10_000, ttl: KNOWN_LOGIN_MS });
  private readonly pool: PasswordPool;
  private jwks: JWTVerifyGetKey | undefined;

  constructor(private readonly opts: AuthOptions) {
    this.verified = new LRUCache({ max: 10_000, ttl: Math.max(1, opts.authCacheSeconds) * 1000 });
    this.failures = opts.authFailures > 0 ? new RateLimiterMemory({ points: opts.authFailures, duration: Math.max(1, opts.authFailureWindowSeconds) }) : undefined;
    this.pool = new PasswordPool({ threads: opts.passwordThreads, maxQueue: opts.maxPasswordQueue });
    this.refresh();
  }

  /** Password checks running or waiting now (for metrics and the bench). */
  get passwordChecks(): number {
    return this.pool.load;
  }

  /** True when a users file is configured (the server has users). */
  get hasUsers(): boolean {
    return this.opts.usersFile !== undefined;
  }

  /** Whether OpenID Connect is configured. */
  get hasOidc(): boolean {
    return this.opts.oidcIssuer !== '';
  }

  /** Whether there are users at all (a users file, or OpenID Connect): see `hasUsers`. */
  get hasAccounts(): boolean {
    return this.hasUsers || this.hasOidc;
  }

  /** Groups of a user (from the users file). */
  groupsOf(user: string): string[] {
    const out: string[] = [];
    for (const [g, members] of Object.entries(this.doc.groups)) if (members.includes(user)) out.push(g);
    return out;
  }

  private principal(name: string): Principal {
    const groups = this.groupsOf(name);
    const admin = name === this.opts.adminUser || (this.opts.adminGroup !== '' && groups.includes(this.opts.adminGroup));
    return { name, groups, authenticated: true, admin };
  }

  /**
   * Re-read the users file when it changed (inode, size or mtime).
   * @throws H5StoreError Unavailable when the file exists but cannot be parsed.
   */
  refresh(): void {
    const file = this.opts.usersFile;
    if (!file) return;
    let stamp = 'missing';
    try {
      const st = fs.statSync(file);
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      /* no users yet */
    }
    if (stamp === this.docStamp) return;
    try {
      this.doc = readUsersFile(file);
    } catch (e) {
      throw new H5StoreError('Unavailable', `The users file cannot be read: ${(e as Error).message}`);
    }
    this.docStamp = stamp;
    this.verified.clear();
  }

  /** Whether the users file can be read now (for readiness checks). */
  usersFileReadable(): boolean {
    if (!this.opts.usersFile) return true;
    try {
      fs.accessSync(this.opts.usersFile, fs.constants.R_OK);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The principal of a request.
   * @param header the `Authorization` header ('' or undefined: anonymous)
   * @param xhr the request came from a page's script (no Basic challenge on 401)
   * @param client the client's address (failed logins and password checks are counted per address)
   * @throws H5StoreError BadRequest (malformed header), Unauthorized (bad credentials),
   *   TooManyRequests (too many failures or checks from `client`), Unavailable (too many checks).
   */
  async authenticate(header: string | undefined, xhr = false, client = ''): Promise<Principal> {
    if (header === undefined || header === '') return ANONYMOUS;
    if (header.length > MAX_HEADER) throw badRequest('Authorization header too long');
    const sp = header.indexOf(' ');
    const scheme = (sp < 0 ? header : header.slice(0, sp)).toLowerCase();
    const value = sp < 0 ? '' : header.slice(sp + 1);
    if (scheme !== 'basic' && scheme !== 'bearer') throw badRequest('Unsupported Authorization scheme (use Basic or Bearer)');
    if (value.trim() === '') throw badRequest(`Empty ${scheme === 'basic' ? 'Basic' : 'Bearer'} credentials`);
    if (/\s/.test(value)) throw badRequest('Malformed Authorization header: one space between the scheme and the credentials, and none in them');
    if (scheme === 'basic') parseBasic(value); // malformed: 400 whether or not there are users
    this.refresh();
    const key = hash('sha256', this.secret + header, 'base64');
    const known = this.verified.get(key);
    if (known) return known;
    // the same credentials already being checked (a client's parallel first requests): one check
    const same = this.checks.get(key);
    if (same) return same;
    const check = this.check(key, scheme, value, xhr, client);
    this.checks.set(key, check);
    try {
      return await check;
    } finally {
      this.checks.delete(key);
    }
  }

  private async check(key: string, scheme: string, value: string, xhr: boolean, client: string): Promise<Principal> {
    await this.admit(client);
    let p: Principal & { expiresAt?: number };
    try {
      p = scheme === 'basic' ? await this.basic(value, xhr, client) : await this.bearer(value, xhr);
    } catch (e) {
      if (e instanceof H5StoreError && e.code === 'Unauthorized') await this.failures?.penalty(client, 1);
      throw e;
    }
    this.verified.set(key, p, p.expiresAt ? { ttl: Math.max(1, Math.min(p.expiresAt - Date.now(), this.opts.authCacheSeconds * 1000)) } : undefined);
    return p;
  }

  /** 429 when `client` failed `authFailures` logins in the current window. */
  private async admit(client: string): Promise<void> {
    if (!this.failures || !this.hasAccounts) return;
    const r = await this.failures.get(client);
    if (r && r.consumedPoints >= this.opts.authFailures) {
      throw tooManyRequests(`Too many failed logins from this address (${this.opts.authFailures} in ${this.opts.authFailureWindowSeconds} s, setting authFailures): try again later`, r.msBeforeNext);
    }
  }

  private async basic(value: string, xhr: boolean, client: string): Promise<Principal & { expiresAt?: number }> {
    const { user, password } = parseBasic(value);
    if (!this.hasUsers) return ANONYMOUS; // no users exist: nobody to be but `default`
    const rec = Object.prototype.hasOwnProperty.call(this.doc.users, user) ? this.doc.users[user] : undefined;
    const n = this.checking.get(client) ?? 0;
    if (n >= CHECKS_PER_ADDRESS) throw tooManyRequests(`Too many password checks from this address at once (at most ${CHECKS_PER_ADDRESS}): wait for the answers`, 1000);
    this.checking.set(client, n + 1);
    let ok: boolean;
    try {
      const priority = this.knownLogins.has(`${client}\0${user}`);
      const failed = this.failures ? ((await this.failures.get(client))?.consumedPoints ?? 0) : 0;
      ok = await verifyPassword(password, rec?.hash, (job) => this.pool.scrypt(job, { priority, from: client, suspect: failed > 0 && !priority }));
    } finally {
      const m = (this.checking.get(client) ?? 1) - 1;
      if (m > 0) this.checking.set(client, m);
      else this.checking.delete(client);
    }
    if (!ok || !rec) throw unauthorized('Invalid user name or password', xhr);
    this.knownLogins.set(`${client}\0${user}`, true);
    return this.principal(user);
  }

  private async bearer(value: string, xhr: boolean): Promise<Principal & { expiresAt?: number }> {
    const tok = parseToken(value);
    if (!this.hasUsers && !this.hasOidc) return ANONYMOUS; // no users exist: nobody to be but `default`
    if (tok) {
      const rec = this.doc.tokens.find((t) => t.id === tok.id);
      const ok = rec !== undefined && sameHash(tokenHash(tok.secret), rec.hash);
      if (!ok || !rec) throw unauthorized('Invalid or revoked API token', xhr);
      if (rec.expires !== null && rec.expires * 1000 <= Date.now()) throw unauthorized('The API token has expired', xhr);
      if (!Object.prototype.hasOwnProperty.call(this.doc.users, rec.user)) throw unauthorized('The API token belongs to a removed user', xhr);
      return { ...this.principal(rec.user), expiresAt: rec.expires === null ? undefined : rec.expires * 1000 };
    }
    if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value) && this.hasOidc) return this.jwt(value, xhr);
    throw unauthorized('Invalid bearer token', xhr);
  }

  private async jwt(token: string, xhr: boolean): Promise<Principal & { expiresAt?: number }> {
    try {
      this.jwks ??= createRemoteJWKSet(new URL(await this.jwksUri()));
      const { payload } = await jwtVerify(token, this.jwks, {
        issuer: this.opts.oidcIssuer,
        audience: this.opts.oidcAudience || undefined,
        requiredClaims: ['exp'],
      });
      const id = payload[this.opts.oidcUserClaim];
      if (typeof id !== 'string' || id === '') throw new Error(`no ${this.opts.oidcUserClaim} claim`);
      return { ...this.oidcPrincipal(id, xhr), expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : undefined };
    } catch (e) {
      if (e instanceof H5StoreError) throw e;
      throw unauthorized(`Invalid OpenID Connect token (${(e as { code?: string }).code ?? 'rejected'})`, xhr);
    }
  }

  /**
   * The principal of a verified OpenID Connect identity: `oidc:<id>`, an admin only when
   * `oidcAdmins` lists it, in the groups whose members name it in the users file.
   * @throws Unauthorized when the claim's value cannot name a user (`/`, control characters,
   *   more than 123 characters).
   */
  private oidcPrincipal(id: string, xhr: boolean): Principal {
    const name = OIDC_PREFIX + id;
    try {
      checkAclName(name);
    } catch {
      throw unauthorized(`The OpenID Connect claim ${this.opts.oidcUserClaim} cannot name a user here (no "/" or control characters, at most 123 characters): set oidcUserClaim to another claim`, xhr);
    }
    const groups = this.groupsOf(name);
    const admin = this.opts.oidcAdmins.includes(id) || this.opts.oidcAdmins.includes(name) || (this.opts.adminGroup !== '' && groups.includes(this.opts.adminGroup));
    return { name, groups, authenticated: true, admin };
  }

  private async jwksUri(): Promise<string> {
    if (this.opts.oidcJwksUri) return this.opts.oidcJwksUri;
    const url = this.opts.oidcIssuer.replace(/\/$/, '') + '/.well-known/openid-configuration';
    const r = await fetch(url);
    if (!r.ok) throw new H5StoreError('Unavailable', `OpenID configuration not available from the issuer (${r.status})`);
    const doc = (await r.json()) as { jwks_uri?: string };
    if (!doc.jwks_uri) throw new H5StoreError('Unavailable', 'The issuer publishes no jwks_uri');
    return doc.jwks_uri;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The user name and password of Basic credentials (RFC 7617): base64 of `user:password`, valid
 * UTF-8, no control characters in either (section 2), a user name that is not empty.
 * @throws H5StoreError BadRequest naming what is wrong.
 */
export function parseBasic(value: string): { user: string; password: string } {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 === 1) throw badRequest('Malformed Basic credentials (not base64)');
  let text: string;
  try {
    text = UTF8.decode(Buffer.from(value, 'base64'));
  } catch {
    throw badRequest('Malformed Basic credentials (not UTF-8)');
  }
  const colon = text.indexOf(':');
  if (colon < 0) throw badRequest('Malformed Basic credentials (no colon between user and password)');
  const user = text.slice(0, colon);
  const password = text.slice(colon + 1);
  if (user === '') throw badRequest('Malformed Basic credentials (empty user name)');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) throw badRequest('Malformed Basic credentials (control characters in the user name or password)');
  return { user, password };
}
