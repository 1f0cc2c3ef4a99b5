/**
 * Starting an h5store server for a benchmark: the built CLI (`npm run build`; the TypeScript
 * sources through tsx when there is no build), port 0, exiting with its stdin (so it never
 * outlives the benchmark), one process (`--workers 1`; `args` may give `--workers N`). Not a benchmark itself.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Start `h5store serve` with `args` (e.g. `['--root', dir]`) and the extra environment `env`;
 * `BENCH_SERVER_NODE_ARGS` (space-separated) gives the server's node options, for profiling.
 * `checkout`: another checkout's build to run (`<checkout>/dist/cli.js`, for side-by-side
 * benchmarks of two builds) instead of this one's.
 * @returns its URL (from the "listening on" line), its process id and `stop` (SIGTERM, resolves at exit)
 * @throws Error when the server exits before it listens, or `checkout` has no build
 */
export async function startBenchServer(args: string[], env: Record<string, string> = {}, checkout?: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const built = path.join(checkout ?? repo, 'dist/cli.js');
  if (checkout !== undefined && !fs.existsSync(built)) throw new Error(`build first: ${built} is missing`);
  const cli = fs.existsSync(built) ? [built] : ['--import', 'tsx', path.join(repo, 'src/cli.ts')];
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []; // e.g. "--cpu-prof --cpu-prof-dir=prof"
  return spawnListening([...nodeArgs, ...cli, 'serve', '--port', '0', '--log-level', process.env.BENCH_LOG_LEVEL ?? 'warn', '--exit-with-stdin', '--workers', '1', ...args], env);
}

/**
 * Spawn `node <nodeArgs>` (stdin a pipe: it exits with the benchmark) and wait for its
 * "listening on <url>" line. Shared by the h5store server and the reference server.
 * @returns its URL, process id and `stop` (SIGTERM, resolves at exit)
 * @throws Error when the process exits before it listens
 */
export async function spawnListening(nodeArgs: string[], env: Record<string, string> = {}): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, nodeArgs, {
    cwd: repo,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b) => {
      out += b;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (c) => reject(new Error(`${nodeArgs.join(' ')} exited ${c}`)));
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    url,
    pid: proc.pid!,
    stop: () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}
