/**
 * Per-user rate limits and quotas (issue #24 item 11: one user made 1,500 domains in 52 s),
 * counted with rate-limiter-flexible's in-memory limiters, per process (each worker of
 * `serve --workers N` counts its own requests; domain creations and body bytes are counted by
 * the worker that owns the domain, writes being forwarded there):
 *
 * - requests: at most `userRequestsPerSecond` per user (and per client address for anonymous
 *   requests) in each second;
 * - domains and folders created (`PUT /`): at most `userDomainsPerHour` per user per hour;
 * - request-body bytes: at most `userBodyBytesPerHour` per user per hour (each body is counted
 *   when it starts, by its Content-Length, before it is read).
 *
 * Beyond one: 429 with `Retry-After` naming the setting. 0 turns a limit off. The admin has no
 * limits, and neither has single-user mode (one person on their own machine).
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Principal } from '../auth/acl.js';
import { tooManyRequests } from '../auth/authenticate.js';
import type { Config } from '../config.js';

/** The settings of the limits. */
export type UserLimitSettings = Pick<Config, 'userRequestsPerSecond' | 'userDomainsPerHour' | 'userBodyBytesPerHour'>;

export class UserLimits {
  private readonly requests?: RateLimiterMemory;
  private readonly domains?: RateLimiterMemory;
  private readonly bytes?: RateLimiterMemory;

  /** @param active false in single-user mode (no limits at all) */
  constructor(
    private readonly s: UserLimitSettings,
    private readonly active: boolean,
  ) {
    if (!active) return;
    if (s.userRequestsPerSecond > 0) this.requests = new RateLimiterMemory({ points: s.userRequestsPerSecond, duration: 1 });
    if (s.userDomainsPerHour > 0) this.domains = new RateLimiterMemory({ points: s.userDomainsPerHour, duration: 3600 });
    if (s.userBodyBytesPerHour > 0) this.bytes = new RateLimiterMemory({ points: s.userBodyBytesPerHour, duration: 3600 });
  }

  /** Whose counters a request uses: the user's, or the client address's when anonymous; undefined for the admin and in single-user mode. */
  keyOf(p: Principal, ctx: { ip: string }): string | undefined {
    if (!this.active || p.admin) return undefined;
    return p.authenticated ? `u:${p.name}` : `a:${ctx.ip}`;
  }

  /** Count one request. @throws TooManyRequests (429) beyond `userRequestsPerSecond`. */
  async request(key: string | undefined): Promise<void> {
    if (key === undefined || !this.requests) return;
    await consume(this.requests, key, 1, `Too many requests (more than ${this.s.userRequestsPerSecond} per second, userRequestsPerSecond)`);
  }

  /**
   * Count one domain or folder about to be created; `undo` gives it back when the creation
   * failed (only domains made count).
   * @throws TooManyRequests (429) beyond `userDomainsPerHour`.
   */
  async domainCreated(key: string | undefined): Promise<{ undo(): Promise<void> }> {
    const none = { undo: async () => undefined };
    if (key === undefined || !this.domains) return none;
    const l = this.domains;
    await consume(l, key, 1, `Too many domains and folders created (more than ${this.s.userDomainsPerHour} per hour, userDomainsPerHour)`);
    return { undo: async () => void (await l.reward(key, 1)) };
  }

  /**
   * Count `n` bytes of a request's body, for the user the guard found (`AuthState`).
   * @throws TooManyRequests (429) beyond `userBodyBytesPerHour`.
   */
  static async chargeBody(ctx: { state: unknown }, n: number): Promise<void> {
    const st = ctx.state as { limits?: UserLimits; limitKey?: string };
    if (st.limits) await st.limits.bodyBytes(st.limitKey, n);
  }

  /** Count `n` bytes of request body. @throws TooManyRequests (429) beyond `userBodyBytesPerHour`. */
  async bodyBytes(key: string | undefined, n: number): Promise<void> {
    if (key === undefined || !this.bytes || n <= 0) return;
    await consume(this.bytes, key, n, `Too many bytes sent (more than ${this.s.userBodyBytesPerHour} per hour, userBodyBytesPerHour)`);
  }
}

async function consume(l: RateLimiterMemory, key: string, n: number, message: string): Promise<void> {
  try {
    await l.consume(key, n);
  } catch (e) {
    if (e instanceof RateLimiterRes) throw tooManyRequests(`${message}: try again in ${Math.ceil(e.msBeforeNext / 1000)} s`, e.msBeforeNext);
    throw e;
  }
}
