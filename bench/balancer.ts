/**
 * Throughput through the shipped nginx config (deploy/nginx/h5store.conf) in front of two
 * h5store processes on one data directory, against one h5store process alone, in the same run.
 *
 * usage: npm run build && npm run bench:lb
 *
 * 1. mixed: the balancer test's workload (test/helpers/balancer.ts): 16 domains, 2 writers each
 *    (value writes and attribute creations), 8 readers checking they see every acknowledged
 *    write; more writes per writer than the test.
 * 2. reads: wrk, 32 connections, 10 s, GET /groups/<root>?domain= rotating over the 16 domains.
 * Rounds alternate (one process, nginx + two) to even out the machine's noise.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { have, runWorkload, startNginx } from '../test/helpers/balancer.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const LOAD = { domains: 16, writersPerDomain: 2, writesPerWriter: 40, readers: 8 };
const ROUNDS = Number(process.env.ROUNDS ?? 2);

async function server(root: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const cli = fs.existsSync(path.join(repo, 'dist/cli.js')) ? [path.join(repo, 'dist/cli.js')] : ['--import', 'tsx', path.join(repo, 'src/cli.ts')];
  const proc = spawn(process.execPath, [...cli, 'serve', '--root', root, '--port', '0', '--log-level', 'warn', '--exit-with-stdin', '--workers', '1'], { cwd: repo, stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b) => {
      out += b;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return { url, stop: () => new Promise((r) => (proc.once('exit', () => r()), proc.kill('SIGTERM'))) };
}

/** wrk over 16 domains' root groups; requests per second. */
function wrkReads(base: string, roots: [string, string][]): number {
  const lua = path.join(os.tmpdir(), `h5store-lb-${process.pid}.lua`);
  const paths = roots.map(([d, id]) => `"/groups/${id}?domain=${d}"`).join(',');
  fs.writeFileSync(lua, `local paths = {${paths}}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("GET", paths[(i % #paths) + 1])\nend\n`);
  const r = spawnSync('wrk', ['-t', '2', '-c', '32', '-d', '10s', '-s', lua, base], { encoding: 'utf8' });
  fs.rmSync(lua, { force: true });
  const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  if (!m) throw new Error(`wrk: ${r.stdout} ${r.stderr}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(r.stdout);
  if (non2xx) throw new Error(`wrk saw ${non2xx[1]} non-2xx answers`);
  return Number(m[1]);
}

async function roots(base: string, folder: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for (let d = 0; d < LOAD.domains; d++) {
    const name = `${folder}/d${d}.h5`;
    const j = (await (await fetch(`${base}/?domain=${name}`)).json()) as { root: string };
    out.push([name, j.root]);
  }
  return out;
}

async function main() {
  if (!have('nginx')) throw new Error('nginx is not installed');
  const rows: string[] = [];
  const mixed: Record<string, number[]> = { one: [], nginx: [] };
  const reads: Record<string, number[]> = { one: [], nginx: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of ['one', 'nginx'] as const) {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-lb-'));
      fs.mkdirSync(path.join(root, 'b'));
      const procs = await Promise.all(Array.from({ length: way === 'one' ? 1 : 2 }, () => server(root)));
      const ngxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-nginx-'));
      const ngx = way === 'nginx' ? await startNginx(ngxDir, procs.map((p) => p.url)) : undefined;
      const base = ngx?.url ?? procs[0].url;
      try {
        const r = await runWorkload(base, { folder: '/b', ...LOAD });
        const rps = (r.writes + r.reads) / r.seconds;
        mixed[way].push(rps);
        rows.push(
          `| ${round + 1} | ${way === 'one' ? 'one process' : 'nginx + 2 processes'} | mixed | ${r.writes} writes + ${r.reads} reads in ${r.seconds.toFixed(2)} s = ${rps.toFixed(0)} req/s | ` +
            `worst write ${r.worstWriteMs.toFixed(0)} ms | non-2xx ${Object.values(r.failures).reduce((a, b) => a + b, 0)}, stale ${r.staleReads.length}, lost ${r.lost.length} |`,
        );
        if (have('wrk')) {
          const rr = wrkReads(base, await roots(base, '/b'));
          reads[way].push(rr);
          rows.push(`| ${round + 1} | ${way === 'one' ? 'one process' : 'nginx + 2 processes'} | reads (wrk, 32 conn) | ${rr.toFixed(0)} req/s | | |`);
        }
      } finally {
        await ngx?.stop();
        for (const p of procs) await p.stop();
        fs.rmSync(root, { recursive: true, force: true });
        fs.rmSync(ngxDir, { recursive: true, force: true });
      }
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  process.stdout.write(`\n| round | setup | load | throughput | latency | errors |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n\n`);
  process.stdout.write(`mixed: nginx + 2 processes / one process = ${(med(mixed.nginx) / med(mixed.one)).toFixed(2)}\n`);
  if (reads.one.length) process.stdout.write(`reads: nginx + 2 processes / one process = ${(med(reads.nginx) / med(reads.one)).toFixed(2)}\n`);
  process.stdout.write(`(${os.cpus().length} cores; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})\n`);
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
