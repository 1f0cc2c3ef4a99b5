/**
 * The attacks of issue #24 items 7-11 at the issue's sizes, against a server with a users file:
 * for each, the server's RSS (before and at its peak), how long `GET /about` took meanwhile (p50
 * and worst, asked again and again on one connection), and the attack's own figures (a real
 * user's login during a password flood, a 16 MiB read, how many slow connections are left...).
 * Other clients are played by other loopback addresses (127.0.0.2, 127.0.1.x). Every loop is
 * bounded in time. Not a test: figures for bench/README.md ("Issue #24").
 *
 *   npm run build && node --import tsx bench/attacks.ts [--only bodies,passwords,walks,binary,limits] [--checkout DIR]
 *
 * `--checkout DIR` runs another checkout's build (`DIR/dist/cli.js`, e.g. main before the
 * change) with the same attacks. Needs /usr/bin/python3 with h5py (the files of `walks`).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { userAdd } from '../src/auth/admin.js';
import { fileURLToPath } from 'node:url';
import { type Answer, basic, bigJson, writeWalkFiles, probe, resetPeak, rssOf, send, slowClients } from '../test/helpers/attacks.js';
import { startBenchServer } from './server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const ONLY = (opt('only') ?? 'bodies,passwords,walks,binary,limits').split(',');
const CHECKOUT = opt('checkout');
const MiB = 1024 * 1024;
const PW = { admin: 'admin-pw-bench', alice: 'alice-pw-bench' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (b: number) => `${(b / MiB).toFixed(0)} MiB`;
const ms = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
const auth = (u: keyof typeof PW) => ({ authorization: basic(u, PW[u]) });

interface Server {
  url: string;
  pid: number;
  root: string;
  stop(): Promise<void>;
}

async function start(users: string, env: Record<string, string> = {}): Promise<Server> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-attacks-'));
  const s = await startBenchServer(['--root', root, '--users-file', users], env, CHECKOUT);
  return {
    ...s,
    root,
    stop: async () => {
      await s.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Run `attack` while /about is probed; print RSS and /about figures with `label`. */
async function measure<T>(srv: Server, label: string, attack: () => Promise<T>): Promise<T> {
  await sleep(500);
  const before = rssOf(srv.pid);
  resetPeak(srv.pid);
  const p = probe(`${srv.url}/about`);
  const t0 = performance.now();
  const out = await attack();
  const took = performance.now() - t0;
  const l = await p.stop();
  const after = rssOf(srv.pid);
  console.log(
    `  ${label}: ${ms(took)}; RSS ${mib(before.rss)} -> peak ${mib(after.peak)}; /about p50 ${ms(l.p50)}, worst ${ms(l.max)} (${l.n} probes, ${l.failed} failed)`,
  );
  return out;
}

const statuses = (rs: (Answer | Error)[]) =>
  JSON.stringify(rs.reduce<Record<string, number>>((m, r) => ((m[r instanceof Error ? r.message.slice(0, 30) : r.status] = (m[r instanceof Error ? r.message.slice(0, 30) : r.status] ?? 0) + 1), m), {}));

async function bodies(users: string): Promise<void> {
  console.log('item 7: bodies read before the permission check');
  const srv = await start(users);
  try {
    const admin = (p: string, method = 'GET', body?: unknown) => send(`${srv.url}${p}`, { method, headers: { ...auth('admin'), 'content-type': 'application/json' }, body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)) });
    await admin('/?domain=/t.h5', 'PUT');
    const rootId = (await admin('/?domain=/t.h5')).json.root;
    const n = Math.floor((24 * MiB) / 12);
    const ds = (await admin('/datasets?domain=/t.h5', 'POST', { type: 'H5T_IEEE_F64LE', shape: [n], link: { id: rootId, name: 'x' } })).json.id;
    const b24 = bigJson(24 * MiB, { link: { id: rootId, name: 'g' } });
    const b98 = bigJson(98 * MiB, { link: { id: rootId, name: 'g' } });
    let r: (Answer | Error)[] = await measure(srv, 'one anonymous 24 MiB POST /groups', () => Promise.all([send(`${srv.url}/groups?domain=/t.h5`, { method: 'POST', body: b24, headers: { 'content-type': 'application/json' } }).catch((e: Error) => e)]));
    console.log(`    answers ${statuses(r)}${r[0] instanceof Error ? '' : `, the refusal after ${ms((r[0] as Answer).ms)}`}`);
    r = await measure(srv, 'four anonymous 98 MiB POST /groups at once', () => Promise.all(Array.from({ length: 4 }, () => send(`${srv.url}/groups?domain=/t.h5`, { method: 'POST', body: b98, headers: { 'content-type': 'application/json' } }).catch((e: Error) => e))));
    console.log(`    answers ${statuses(r)}`);
    const value = bigJson(24 * MiB); // made before the measure: the bench's own work would delay its probes
    r = await measure(srv, "the admin's 24 MiB JSON value write (parsed in slices)", () => Promise.all([send(`${srv.url}/datasets/${ds}/value?domain=/t.h5`, { method: 'PUT', body: value, headers: { ...auth('admin'), 'content-type': 'application/json' } }).catch((e: Error) => e)]));
    console.log(`    answers ${statuses(r)}`);
  } finally {
    await srv.stop();
  }
}

async function passwords(users: string): Promise<void> {
  console.log('item 8: password floods (32 looping clients)');
  for (const spread of ['one address', '32 addresses'] as const) {
    const srv = await start(users);
    try {
      fs.mkdirSync(path.join(srv.root, 'big'));
      execFileSync('/usr/bin/python3', ['-c', 'import h5py, numpy as np, sys\nwith h5py.File(sys.argv[1], "w") as f: f["x"] = np.arange(4 * 1024 * 1024, dtype="<i4")', path.join(srv.root, 'big', 'b.h5')]);
      const adminGet = (p: string, headers: Record<string, string> = {}) => send(`${srv.url}${p}`, { headers: { ...auth('admin'), ...headers } });
      const rootId = (await adminGet('/?domain=/big/b.h5')).json.root;
      const dsId = (await adminGet(`/groups/${rootId}/links/x?domain=/big/b.h5`)).json.link.id;
      const quiet = await send(`${srv.url}/about`, { headers: { authorization: basic('user0', 'pw0') } });
      console.log(`  ${spread}: a login with no attack ${ms(quiet.ms)}`);
      await measure(srv, `${spread}: 12 s of guesses`, async () => {
        // the flood in a process of its own: its client work must not delay these measures
        const addresses = spread === 'one address' ? ['127.0.0.2'] : Array.from({ length: 32 }, (_, i) => `127.0.1.${i + 1}`);
        const flood = execFile(process.execPath, ['--import', 'tsx', path.join(here, 'flood.ts'), `${srv.url}/about`, spread === 'one address' ? '32' : '1', '12', addresses.join(',')], { encoding: 'utf8' });
        const floodOut = new Promise<string>((resolve) => {
          let out = '';
          flood.stdout!.on('data', (b: string) => (out += b));
          flood.once('exit', () => resolve(out.trim()));
        });
        await sleep(2500);
        const logins: number[] = [];
        const codes: number[] = [];
        for (let i = 1; i <= 6; i++) {
          const l = await send(`${srv.url}/about`, { headers: { authorization: basic(`user${i}`, `pw${i}`) } });
          logins.push(l.ms);
          codes.push(l.status);
          await sleep(500);
        }
        const t0 = performance.now();
        const read = await adminGet(`/datasets/${dsId}/value?domain=/big/b.h5`, { accept: 'application/octet-stream' }).catch((e: Error) => e);
        const readMs = performance.now() - t0;
        const counts = await floodOut;
        const sorted = [...logins].sort((a, b) => a - b);
        console.log(`    real logins (6 users, fresh) ${logins.map((x) => x.toFixed(0)).join(' / ')} ms (median ${ms(sorted[3]!)}), answers ${codes.join(',')}`);
        console.log(`    a 16 MiB read ${read instanceof Error ? read.message : ms(readMs)}; the guesses got ${counts}`);
      });
    } finally {
      await srv.stop();
    }
  }
}

async function walks(users: string): Promise<void> {
  console.log('item 9: one request that walks a large or deep file');
  const srv = await start(users);
  try {
    fs.mkdirSync(path.join(srv.root, 'x'));
    writeWalkFiles(path.join(srv.root, 'x', 'deep.h5'), path.join(srv.root, 'x', 'flat.h5'), 1500, 200000);
    const get = (p: string) => send(`${srv.url}${p}`, { headers: auth('admin'), timeoutMs: 600_000 }).catch((e: Error) => e);
    for (const [label, p] of [
      ['GET /groups of a chain of 1,500 groups', '/groups?domain=/x/deep.h5'],
      ['getobjs of a group of 200,000 links', '/?domain=/x/flat.h5&getobjs=1'],
      ['GET /groups?Limit=10 of the 200,000', '/groups?domain=/x/flat.h5&Limit=10'],
      ['GET /groups of the 200,000 (above max_objects_per_answer)', '/groups?domain=/x/flat.h5'],
    ] as const) {
      const r = await measure(srv, label, () => get(p));
      console.log(`    answer ${r instanceof Error ? r.message : `${r.status} ${r.status >= 400 ? r.json?.message?.slice(0, 90) : `(${r.text.length} bytes)`}`}`);
    }
  } finally {
    await srv.stop();
  }
}

async function binary(users: string): Promise<void> {
  console.log('item 10: binary bodies held in memory');
  const srv = await start(users);
  try {
    const admin = (p: string, method = 'GET', body?: unknown) => send(`${srv.url}${p}`, { method, headers: { ...auth('admin'), 'content-type': 'application/json' }, body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)) });
    await admin('/?domain=/b.h5', 'PUT');
    const rootId = (await admin('/?domain=/b.h5')).json.root;
    const ds = (await admin('/datasets?domain=/b.h5', 'POST', { type: 'H5T_STD_U8LE', shape: [256 * MiB], link: { id: rootId, name: 'x' } })).json.id;
    const body = Buffer.alloc(256 * MiB, 3);
    const r = await measure(srv, 'eight 256 MiB binary PUTs at once', () =>
      Promise.all(Array.from({ length: 8 }, () => send(`${srv.url}/datasets/${ds}/value?domain=/b.h5`, { method: 'PUT', body, headers: { ...auth('admin'), 'content-type': 'application/octet-stream' }, timeoutMs: 600_000 }).catch((e: Error) => e))),
    );
    console.log(`    answers ${statuses(r)}`);
  } finally {
    await srv.stop();
  }
}

async function limits(users: string): Promise<void> {
  console.log('item 11: rate limits, quotas, slow clients');
  const srv = await start(users);
  try {
    await send(`${srv.url}/?domain=/home`, { method: 'PUT', headers: { ...auth('admin'), 'content-type': 'application/json' }, body: Buffer.from('{"folder": true}') });
    await send(`${srv.url}/acls/alice?domain=/home`, { method: 'PUT', headers: { ...auth('admin'), 'content-type': 'application/json' }, body: Buffer.from('{"create": true, "read": true}') });
    let made = 0;
    const codes: Record<number, number> = {};
    await measure(srv, 'one user creating domains for 20 s (4 at once)', async () => {
      const until = performance.now() + 20_000;
      let k = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() < until) {
            const r = await send(`${srv.url}/?domain=/home/d${k++}.h5`, { method: 'PUT', headers: auth('alice') });
            codes[r.status] = (codes[r.status] ?? 0) + 1;
            if (r.status === 201) made++;
          }
        }),
      );
    });
    console.log(`    created ${made}; answers ${JSON.stringify(codes)}`);
    await measure(srv, '600 slow-header and 200 slow-body connections from 8 addresses, 20 s', async () => {
      const groups = [
        ...Array.from({ length: 6 }, (_, i) => slowClients(srv.url, 100, 'headers', { localAddress: `127.0.2.${i + 1}`, everyMs: 2000 })),
        ...Array.from({ length: 2 }, (_, i) => slowClients(srv.url, 100, 'body', { localAddress: `127.0.3.${i + 1}`, everyMs: 2000, path: '/?domain=/home/slow.h5', headers: auth('alice') })),
      ];
      const open: string[] = [];
      let t = 0;
      for (const at of [1, 5, 12, 20]) {
        await sleep((at - t) * 1000);
        t = at;
        open.push(`${at} s: ${groups.slice(0, 6).reduce((n, g) => n + g.open(), 0)} + ${groups.slice(6).reduce((n, g) => n + g.open(), 0)}`);
      }
      for (const g of groups) g.close();
      console.log(`    still open (slow headers + slow bodies): ${open.join('; ')}`);
    });
  } finally {
    await srv.stop();
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-attack-users-'));
  const users = path.join(dir, 'users.json');
  for (const [u, pw] of Object.entries(PW)) await userAdd(users, u, pw);
  for (let i = 0; i <= 6; i++) await userAdd(users, `user${i}`, `pw${i}`);
  console.log(`h5store ${CHECKOUT ? `build of ${CHECKOUT}` : 'this build'}; ${os.cpus().length} CPUs, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  const all: Record<string, (u: string) => Promise<void>> = { bodies, passwords, walks, binary, limits };
  for (const name of ONLY) await all[name]!(users);
  fs.rmSync(dir, { recursive: true, force: true });
}

await main();
