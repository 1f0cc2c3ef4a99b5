/**
 * The worker processes of a `serve --workers N` test server (src/cluster.ts): found as the
 * primary's children that carry a worker index in their environment.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { TestServer } from './server.js';

/** A variable of a process's environment (undefined when it has none or is gone). */
export function envOf(pid: number, name: string): string | undefined {
  try {
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
  } catch {
    return undefined;
  }
}

/** The worker processes of a primary now (its children with a worker index: tsx has an esbuild child too). */
export function workerPidsNow(primary: number): number[] {
  let children: number[];
  try {
    children = execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    children = [];
  }
  return children.filter((p) => envOf(p, 'H5STORE_WORKER_INDEX') !== undefined);
}

/** The worker index of a worker process. */
export function workerIndexOf(pid: number): number {
  return Number(envOf(pid, 'H5STORE_WORKER_INDEX'));
}

/** The private runtime directory of a worker (its socket `w<index>.sock` is there). */
export function workerDir(pid: number): string {
  const d = envOf(pid, 'H5STORE_WORKER_DIR');
  if (!d) throw new Error(`process ${pid} is not a worker`);
  return d;
}

/**
 * The `n` workers of a test server, by index, once all are up.
 * @throws Error when they are not all there within `ms`
 */
export async function workerPids(srv: TestServer, n: number, ms = 15_000): Promise<number[]> {
  const t0 = Date.now();
  for (;;) {
    const pids = workerPidsNow(srv.proc.pid!);
    if (pids.length === n) return pids.sort((a, b) => workerIndexOf(a) - workerIndexOf(b));
    if (Date.now() - t0 > ms) throw new Error(`expected ${n} workers, found ${pids.length}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
