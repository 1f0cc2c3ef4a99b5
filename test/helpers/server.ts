/**
 * Test harness: a real h5store server process on a free port over a temporary data directory,
 * plain HTTP helpers, and fixture copying. The server exits when the test process goes away
 * (`--exit-with-stdin`), so no stray servers survive a crashed run.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonBody } from '../../src/codec/json.js';
import { addCost } from './costs.js';
import { childEnv } from './env.js';
import { cliArgs } from './serverBuild.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '../..');
/** The shared fixtures written by others (CI has ../shared beside the clone). */
export const SHARED_FIXTURES = path.resolve(REPO, '../shared/fixtures/hdf5');
/** Whether the shared fixtures are here; without them the tests use files of their own. */
export const HAVE_SHARED = fs.existsSync(path.join(SHARED_FIXTURES, 'tall.h5'));

let ownFixtures: string | undefined;
/**
 * Path of a fixture file: the shared one when present, else the project's own equivalent
 * (`tall.h5` written by test/tools/make_tall.py, `notahdf5file.h5` a text file), so a plain clone
 * runs every suite.
 */
export function fixturePath(name: 'tall.h5' | 'notahdf5file.h5'): string {
  if (HAVE_SHARED) return path.join(SHARED_FIXTURES, name);
  if (!ownFixtures) {
    ownFixtures = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-own-fixtures-'));
    execFileSync('/usr/bin/python3', [path.join(REPO, 'test/tools/make_tall.py'), path.join(ownFixtures, 'tall.h5')]);
    fs.writeFileSync(path.join(ownFixtures, 'notahdf5file.h5'), 'this is not an HDF5 file\n');
    process.once('exit', () => fs.rmSync(ownFixtures!, { recursive: true, force: true }));
  }
  return path.join(ownFixtures, name);
}

/**
 * Errors that reached the server's error middleware without being an `H5StoreError` (the
 * middleware logs them as `unexpected error`), from every server the tests started, with the
 * test that was running. The root hook (test/helpers/root-hooks.ts) fails the run when any
 * arrived: each must become an H5StoreError with a 4xx (or work).
 */
export const unexpectedErrors: { test: string; line: string }[] = [];
/** The title of the test running now (set by the root hooks). */
export const currentTest = { title: '' };

/** Output streams of servers that have exited but may not have been read to their end yet. */
const draining = new Set<Promise<void>>();
/** Servers running now. */
const running = new Set<ChildProcess>();

/**
 * Wait until the last log lines of the servers are in `unexpectedErrors` (the root hooks, after
 * each file): the output of every server that has exited read to its end (at most `maxMs`), and
 * 200 ms more when a server still runs (its lines of the last request may still be on their way).
 */
export async function serverLogsRead(maxMs = 2000): Promise<void> {
  if (draining.size) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(draining), new Promise((r) => (timer = setTimeout(r, maxMs)))]);
    clearTimeout(timer);
  }
  if (running.size) await new Promise((r) => setTimeout(r, 200));
}

/** Collect `unexpected error` lines from a server's JSON log (pino, one object per line). */
function watchLog(proc: ChildProcess): void {
  running.add(proc);
  // from its exit until its output is closed, the server's last lines may still be on their way
  proc.once('exit', () => {
    running.delete(proc);
    if (proc.stdout!.closed) return;
    const closed = new Promise<void>((r) => proc.stdout!.once('close', () => r()));
    draining.add(closed);
    void closed.then(() => draining.delete(closed));
  });
  let buf = '';
  proc.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.includes('"unexpected error"')) unexpectedErrors.push({ test: currentTest.title, line: line.slice(0, 2000) });
    }
  });
}

export interface TestServer {
  url: string;
  root: string;
  proc: ChildProcess;
  /** Everything the server wrote to stdout and stderr so far (its log lines). */
  log(): string;
  stop(): Promise<void>;
  /** The same as `log()` (the name harden tests use). */
  output(): string;
}

/** A fresh temporary data directory. */
export function tempRoot(prefix = 'h5store-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // also when no root hook runs (mocha --dry-run loads every file: directories made at load)
  if (!exitHooked) exitHooked = process.once('exit', removeTempRoots) !== undefined;
  madeRoots.add(dir);
  return dir;
}

/** The directories `tempRoot` made in this process and that are still there. */
const madeRoots = new Set<string>();
/** `removeTempRoots` runs when the process exits. */
let exitHooked = false;

/**
 * Remove every directory `tempRoot` made in this process (the root hooks call it after each test
 * file, its servers stopped: runs left about 2,000 of them, gigabytes, in the temporary folder).
 * Set H5STORE_KEEP_TEST_DIRS=1 to keep them for a look after a failure.
 */
export function removeTempRoots(): void {
  if (process.env.H5STORE_KEEP_TEST_DIRS) return;
  for (const dir of madeRoots) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  madeRoots.clear();
}

/**
 * Copy fixture files (from ../shared/fixtures/hdf5 by default) into `<root>/<folder>`, writable.
 * @returns the names copied
 */
export function copyFixtures(root: string, folder = 'fx', names?: string[], from = SHARED_FIXTURES): string[] {
  const dir = path.join(root, folder);
  fs.mkdirSync(dir, { recursive: true });
  const list = names ?? fs.readdirSync(from).filter((n) => n.endsWith('.h5'));
  for (const n of list) {
    fs.copyFileSync(path.join(from, n), path.join(dir, n));
    fs.chmodSync(path.join(dir, n), 0o644);
  }
  return list;
}

/** Start the server (src/ as JavaScript, test/helpers/serverBuild.ts) on a free port, one process (`--workers 1`; `args` may give `--workers N`). */
export async function startServer(opts: { root?: string; env?: Record<string, string>; args?: string[]; cwd?: string } = {}): Promise<TestServer> {
  const root = opts.root ?? tempRoot();
  const t0 = performance.now();
  const proc = spawn(
    process.execPath,
    [...cliArgs(), 'serve', '--root', root, '--port', '0', '--log-level', 'warn', '--exit-with-stdin', '--workers', '1', ...(opts.args ?? [])],
    { cwd: opts.cwd ?? REPO, env: childEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  let all = '';
  proc.stderr!.on('data', (b) => {
    stderr += b.toString();
    all += b.toString();
  });
  proc.stdout!.on('data', (b) => (all += b.toString()));
  watchLog(proc);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let started = false;
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 30000);
    proc.stdout!.on('data', (b) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && !started) {
        started = true;
        clearTimeout(timer);
        addCost('server start', performance.now() - t0);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    root,
    proc,
    log: () => all,
    output: () => all,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The files process `pid` holds a descriptor of now (the targets of its /proc/<pid>/fd links;
 * a deleted file's target ends in " (deleted)").
 */
export function openFilesOf(pid: number): string[] {
  const dir = `/proc/${pid}/fd`;
  const out: string[] = [];
  let fds: string[];
  try {
    fds = fs.readdirSync(dir);
  } catch {
    return out; // the process is gone: it holds nothing
  }
  for (const fd of fds) {
    try {
      out.push(fs.readlinkSync(path.join(dir, fd)));
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/**
 * Wait until the server holds no descriptor of `files` (files, or folders: any file below them):
 * it closes a file (and its kernel locks with it) `idleCloseMs` after the file's last request
 * (800 ms by default), and only then may h5py with file locking write it, the file system give
 * its inode to another file, or a test be sure the server writes it no more. Polls the server's
 * /proc/<pid>/fd every 25 ms instead of sleeping a fixed 1.2-2.5 s; throws naming the files still
 * held after `deadlineMs`.
 */
export async function untilServerClosed(srv: { proc: ChildProcess }, files: string | string[], deadlineMs = 15_000): Promise<void> {
  const wanted = (Array.isArray(files) ? files : [files]).map((f) => {
    const real = fs.existsSync(f) ? fs.realpathSync(f) : path.resolve(f);
    return fs.existsSync(f) && fs.statSync(f).isDirectory() ? real + '/' : real;
  });
  const holds = (f: string) => wanted.some((w) => (w.endsWith('/') ? f.startsWith(w) : f === w));
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const held = openFilesOf(srv.proc.pid!).filter(holds);
    if (!held.length) return;
    if (performance.now() > deadline) throw new Error(`the server (pid ${srv.proc.pid}) still holds ${held.join(', ')} after ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A response: status, headers, raw body, and the parsed JSON body (NaN literals allowed). */
export interface Reply {
  status: number;
  headers: Headers;
  body: Buffer;
  json: any;
  text: string;
}

/** An HTTP client bound to a server and (optionally) a domain. */
export class Client {
  constructor(
    readonly base: string,
    readonly domain?: string,
    /** Headers sent with every request (e.g. Authorization). */
    readonly headers: Record<string, string> = {},
  ) {}

  /** Same server, another domain. */
  with(domain: string): Client {
    return new Client(this.base, domain, this.headers);
  }

  /** Same server and domain as another user: Basic credentials, a Bearer token, or anonymous. */
  as(who: { user: string; password: string } | { token: string } | undefined): Client {
    const headers = { ...this.headers };
    delete headers.authorization;
    if (who && 'token' in who) headers.authorization = `Bearer ${who.token}`;
    else if (who) headers.authorization = 'Basic ' + Buffer.from(`${who.user}:${who.password}`).toString('base64');
    return new Client(this.base, this.domain, headers);
  }

  url(p: string, query: Record<string, string | number | boolean | undefined> = {}): string {
    const u = new URL(this.base + p);
    if (this.domain !== undefined && query.domain === undefined) u.searchParams.set('domain', this.domain);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async request(method: string, p: string, opts: { query?: Record<string, string | number | boolean | undefined>; body?: unknown; raw?: Buffer | string; headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...this.headers, ...(opts.headers ?? {}) };
    let body: Buffer | string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const r = await fetch(this.url(p, opts.query), { method, headers, body: body as BodyInit | undefined });
    const buf = Buffer.from(await r.arrayBuffer());
    const text = buf.toString('utf8');
    let json: unknown;
    if ((r.headers.get('content-type') ?? '').includes('json') && text) json = parseJsonBody(text);
    return { status: r.status, headers: r.headers, body: buf, json, text };
  }

  get(p: string, query?: Record<string, string | number | boolean | undefined>, headers?: Record<string, string>) {
    return this.request('GET', p, { query, headers });
  }
  put(p: string, body?: unknown, query?: Record<string, string | number | boolean | undefined>) {
    return this.request('PUT', p, { body, query });
  }
  post(p: string, body?: unknown, query?: Record<string, string | number | boolean | undefined>) {
    return this.request('POST', p, { body, query });
  }
  delete(p: string, query?: Record<string, string | number | boolean | undefined>) {
    return this.request('DELETE', p, { query });
  }
}
