/**
 * What the permission check costs (issue #11): `GET /groups/<root>` anonymous vs with Basic
 * credentials vs with an API token, on one server with a users file, measured with wrk in
 * interleaved rounds (so drift on a shared machine hits every variant alike), plus the same
 * request on a server without users (single-user mode, no ACL lookup beyond the domain's).
 *
 * usage: npm run build && node --import tsx bench/auth.ts [seconds per round, default 3] [rounds, default 3]
 * Needs wrk (apt-get install wrk) and /usr/bin/python3 with h5py (the data file).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenAdd, userAdd } from '../src/auth/admin.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 3);

/** CPU seconds (user + system) the process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

async function start(root: string, args: string[]): Promise<{ url: string; pid: number; stop: () => void }> {
  const proc = spawn(process.execPath, [path.join(repo, 'dist/cli.js'), 'serve', '--root', root, '--port', '0', '--log-level', 'warn', '--exit-with-stdin', '--workers', '1', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b) => {
      out += b;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return { url, pid: proc.pid!, stop: () => proc.kill('SIGTERM') };
}

/** wrk with 16 connections (throughput) and 1 connection (sequential p50). */
function wrk(url: string, conns: number, header?: string): { rps: number; p50us: number; requests: number } {
  const args = ['-t', conns > 1 ? '2' : '1', '-c', String(conns), '-d', `${seconds}s`, '--latency'];
  if (header) args.push('-H', header);
  const out = execFileSync('wrk', [...args, url], { encoding: 'utf8' });
  if (/Non-2xx/.test(out)) throw new Error('wrk saw errors:\n' + out);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]);
  const requests = Number(/(\d+) requests in/.exec(out)![1]);
  const m = /50%\s+([\d.]+)(us|ms|s)/.exec(out)!;
  const p50us = Number(m[1]) * (m[2] === 'us' ? 1 : m[2] === 'ms' ? 1000 : 1e6);
  return { rps, p50us, requests };
}

async function main() {
  if (!fs.existsSync(path.join(repo, 'dist/cli.js'))) throw new Error('build first: npm run build');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-auth-'));
  fs.mkdirSync(path.join(root, 'b'));
  execFileSync('/usr/bin/python3', ['-c', 'import h5py,sys; f=h5py.File(sys.argv[1],"w"); f.create_group("g"); f.attrs["a"]=1', path.join(root, 'b', 'f.h5')]);
  const users = path.join(root, '..', path.basename(root) + '-users.json');
  await userAdd(users, 'alice', 'alice-password');
  const { token } = await tokenAdd(users, 'alice', {});
  const withUsers = await start(root, ['--users-file', users]);
  const single = await start(root, []);
  try {
    const rootId = JSON.parse(execFileSync('curl', ['-s', `${withUsers.url}/?domain=/b/f.h5`], { encoding: 'utf8' })).root;
    const variants: Array<[string, { url: string; pid: number }, string | undefined]> = [
      ['no users (single-user mode)', single, undefined],
      ['anonymous', withUsers, undefined],
      ['Basic', withUsers, 'Authorization: Basic ' + Buffer.from('alice:alice-password').toString('base64')],
      ['Bearer token', withUsers, `Authorization: Bearer ${token}`],
    ];
    const got = new Map<string, { rps: number[]; p50: number[]; cpu: number[] }>(variants.map(([n]) => [n, { rps: [], p50: [], cpu: [] }]));
    for (let r = 0; r < rounds; r++) {
      for (const [name, srv, header] of variants) {
        const url = `${srv.url}/groups/${rootId}?domain=/b/f.h5`;
        const c0 = cpuSeconds(srv.pid);
        const w = wrk(url, 16, header);
        got.get(name)!.cpu.push(((cpuSeconds(srv.pid) - c0) / w.requests) * 1e6);
        got.get(name)!.rps.push(w.rps);
        got.get(name)!.p50.push(wrk(url, 1, header).p50us);
      }
    }
    const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
    const anon = med(got.get('anonymous')!.rps);
    console.log(`GET /groups/<root>, ${rounds} interleaved rounds of ${seconds}s, medians (wrk):`);
    const anonCpu = med(got.get('anonymous')!.cpu);
    console.log('variant                      req/s (16 conns)  vs anonymous   server CPU/request  vs anonymous   p50 (1 conn)');
    for (const [name] of variants) {
      const g = got.get(name)!;
      const rps = med(g.rps);
      const cpu = med(g.cpu);
      console.log(
        `${name.padEnd(28)} ${rps.toFixed(0).padStart(10)}        ${((rps / anon) * 100).toFixed(1).padStart(6)}%     ${cpu.toFixed(0).padStart(8)} us     ${((cpu / anonCpu) * 100).toFixed(1).padStart(6)}%      ${med(g.p50).toFixed(0)} us`,
      );
    }
  } finally {
    withUsers.stop();
    single.stop();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(users, { force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
