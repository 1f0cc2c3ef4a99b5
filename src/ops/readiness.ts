/**
 * Readiness: a list of named checks that `GET /readyz` runs (docs/deploy.md, "Health").
 *
 * Any module registers its own check (the data directory, libhdf5, each S3 mount, the users
 * file, ...). A check passes by returning (optionally a short detail string) and fails by
 * throwing or by taking longer than its timeout; `/readyz` answers 200 only when all pass.
 * Checks must not block the event loop (use fs.promises, not fs.*Sync, for file systems that may
 * hang, such as NFS).
 */
import fs from 'node:fs';

/** A readiness check: resolves (with an optional detail) when ready, throws when not. */
export type ReadinessCheck = () => void | string | Promise<void | string>;

/** The outcome of one check. */
export interface CheckResult {
  name: string;
  ok: boolean;
  /** Detail on success, the reason on failure. */
  message?: string;
  /** Time the check took, milliseconds. */
  ms: number;
}

export class Readiness {
  private readonly checks: { name: string; check: ReadinessCheck; timeoutMs: number }[] = [];

  /**
   * Add a named check (names are unique; registering a name again replaces its check).
   * @param timeoutMs a check still running after this long fails (default 2000 ms)
   */
  register(name: string, check: ReadinessCheck, opts: { timeoutMs?: number } = {}): void {
    const entry = { name, check, timeoutMs: opts.timeoutMs ?? 2000 };
    const i = this.checks.findIndex((c) => c.name === name);
    if (i >= 0) this.checks[i] = entry;
    else this.checks.push(entry);
  }

  /** Names of the registered checks, in registration order. */
  get names(): string[] {
    return this.checks.map((c) => c.name);
  }

  /** Run every check concurrently. */
  async run(): Promise<{ ready: boolean; checks: CheckResult[] }> {
    const results = await Promise.all(this.checks.map((c) => runOne(c.name, c.check, c.timeoutMs)));
    return { ready: results.every((r) => r.ok), checks: results };
  }
}

async function runOne(name: string, check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      Promise.resolve().then(check),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { name, ok: true, ...(typeof detail === 'string' && detail ? { message: detail } : {}), ms: elapsed(t0) };
  } catch (e) {
    return { name, ok: false, message: (e as Error)?.message ?? String(e), ms: elapsed(t0) };
  } finally {
    clearTimeout(timer);
  }
}

const elapsed = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;

/**
 * Check that a directory exists and that this process may list it and, when `writable`, create
 * files in it (access(2) with R_OK|X_OK[|W_OK]: a read-only mount answers EROFS).
 * @throws Error naming what is missing
 */
export async function checkDirectory(dir: string, writable: boolean): Promise<string> {
  const st = await fs.promises.stat(dir).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`data directory: ${e.code ?? e.message}`);
  });
  if (!st.isDirectory()) throw new Error('data directory: not a directory');
  const mode = fs.constants.R_OK | fs.constants.X_OK | (writable ? fs.constants.W_OK : 0);
  await fs.promises.access(dir, mode).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`data directory not ${writable ? 'readable and writable' : 'readable'}: ${e.code ?? e.message}`);
  });
  return writable ? 'readable and writable' : 'readable';
}
