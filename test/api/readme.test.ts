/**
 * Every command the README shows runs (issue #28 item 10): each line of its `sh` blocks is run as
 * written, or named below with the reason it is not (the test fails on a command that is
 * neither). Commands run in a scratch folder holding the build (`dist`, `package.json`,
 * `node_modules`: a checkout after `npm run build`) with these substitutions only, so that a test
 * can run them: the README's port 5101 becomes a free port of the server the block talks to (the
 * `npm start` one, or the one started with the users file for the access-control block), a
 * `serve` line without `--port` gets one (`H5STORE_PORT`), `--host 0.0.0.0` becomes 127.0.0.1
 * (tests bind loopback), `/path/to/data` and `/data` scratch folders, `ADMIN_PW` the password
 * typed at the prompt, `<id>` the id of a token. `curl` fails on HTTP errors (`--fail-with-body`),
 * every block under `set -euo pipefail`. `serve` and `npm start` lines are started, must print
 * "listening on" and answer, and are stopped. Also: the `h5store` command, a second `npm start`
 * that compiles nothing, the users-file message, the README's figures, the `query=` example.
 */
import { expect } from 'chai';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../helpers/balancer.js';
import { childEnv } from '../helpers/env.js';
import { PYTHON } from '../helpers/python.js';
import { REPO, fixturePath, tempRoot } from '../helpers/server.js';

const H5PYD = path.resolve(REPO, '../shared/clients/h5pyd');

/** Commands not run here, and why. */
const EXCUSED: [RegExp, string][] = [
  [/^npm test\b/, 'the test suite itself'],
  [/^npm run typecheck$/, '`npm test` runs it (beside the tests: scripts/test.mjs)'],
  [/^npx mocha test\//, '`npm test` runs every suite'],
  [/^npm run bench$/, 'benchmarks: minutes of load on every core (bench/README.md); not a test'],
  [/^docker /, 'no Docker here: test/unit/deploy-files.test.ts checks the Dockerfile, its packages and steps, and runs its HEALTHCHECK'],
];

/** The `sh` blocks of the README: their commands (continuations joined, comments and blank lines dropped). */
function shellBlocks(readme: string): string[][] {
  const out: string[][] = [];
  for (const m of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = m[1]!.replace(/\\\n\s*/g, ' ').split('\n');
    out.push(lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
  }
  return out;
}

/** A README command without its trailing comment (a ` #` outside quotes). */
function withoutComment(line: string): string {
  let q: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (q) {
      if (ch === q) q = undefined;
    } else if (ch === "'" || ch === '"') q = ch;
    else if (ch === '#' && line[i - 1] === ' ') return line.slice(0, i).trimEnd();
  }
  return line;
}

const isServe = (cmd: string) => /^(\w+=\S+ )*(node dist\/cli\.js|npx h5store) serve\b/.test(cmd) || cmd === 'npm start';

describe('README: every command runs as written (issue #28 item 10)', function () {
  this.timeout(600_000);
  let work: string;
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const blocks = shellBlocks(readme);
  const running: ChildProcess[] = [];
  const ADMIN_PW = 'admin-pw-first-hour';
  /** Ports of the servers the blocks talk to. */
  const ports: { main?: number; users?: number } = {};
  const done = new Set<string>();

  /** The HS_* settings the README's h5pyd section exports (its commented lines left out), for the server with users. */
  function h5pydSettings(): Record<string, string> {
    const env = /```sh\n(export HS_ENDPOINT[\s\S]*?)```/.exec(readme)![1]!;
    const lines = env.split('\n').filter((l) => l.startsWith('export '));
    return Object.fromEntries(lines.flatMap((l) => [...withoutComment(l).matchAll(/(HS_\w+)=(\S+)/g)]).map((m) => [m[1]!, m[2]!.replace('localhost:5101', `127.0.0.1:${ports.users}`)]));
  }

  /** Start a server command (bash), wait for "listening on", check it answers. */
  async function startCommand(cmd: string, opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ proc: ChildProcess; url: string; output: () => string }> {
    const proc = spawn('bash', ['-c', cmd], { cwd: opts.cwd ?? work, env: childEnv(opts.env ?? {}), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    running.push(proc);
    let out = '';
    proc.stdout!.on('data', (b) => (out += b));
    proc.stderr!.on('data', (b) => (out += b));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${cmd}: no "listening on" in 180 s:\n${out}`)), 180_000);
      const check = () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      proc.stdout!.on('data', check);
      proc.stderr!.on('data', check);
      proc.once('exit', (c) => {
        clearTimeout(timer);
        reject(new Error(`${cmd} exited with ${c}:\n${out}`));
      });
    });
    const about = await fetch(`${url}/about`);
    expect(about.status, `${cmd}: GET /about`).to.be.oneOf([200, 401]);
    return { proc, url, output: () => out };
  }

  async function stop(proc: ChildProcess): Promise<void> {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    process.kill(-proc.pid!, 'SIGTERM');
    await exited;
  }

  /** A README command made runnable here (see the file's header). */
  function substitute(cmd: string, port: number | undefined): string {
    let c = cmd;
    if (port !== undefined) c = c.replace(/localhost:5101/g, `localhost:${port}`);
    c = c.replace(/--host 0\.0\.0\.0/g, '--host 127.0.0.1');
    c = c.replace(/\/path\/to\/data/g, path.join(work, 'other-data'));
    c = c.replace(/H5STORE_ROOT=\/data\b/g, `H5STORE_ROOT=${path.join(work, 'env-data')}`);
    c = c.replace(/ADMIN_PW/g, ADMIN_PW);
    c = c.replace(/<id>/g, '"$(node dist/cli.js token list alice --users-file users.json | cut -f1 | head -1)"');
    return c;
  }

  /** Run a block's commands (not servers) in one bash. */
  function runScript(lines: string[], port: number | undefined, env: Record<string, string> = {}, stdin = ''): string {
    const script = ['set -euo pipefail', 'curl() { command curl -sS --fail-with-body "$@"; }', ...lines.map((l) => substitute(l, port))].join('\n');
    const r = spawnSync('bash', ['-c', script], { cwd: work, env: childEnv(env), input: stdin, encoding: 'utf8', timeout: 300_000 });
    expect(r.status, `the block failed (${r.signal ?? ""} ${r.error?.message ?? ""}):\n${script}\n--- output:\n${r.stdout}\n${r.stderr}`).to.equal(0);
    return r.stdout;
  }

  before(async () => {
    work = tempRoot('h5store-readme-');
    // a checkout after `npm run build`: the build, the package (for `npx h5store`), its modules
    execFileSync(process.execPath, [path.join(REPO, 'scripts/build-server.mjs'), '--if-stale'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
    for (const n of ['dist', 'node_modules', 'package.json', 'package-lock.json', 'scripts']) fs.symlinkSync(path.join(REPO, n), path.join(work, n));
    fs.writeFileSync(path.join(work, 'h5store.json'), JSON.stringify({ root: './data', samples: true }));
    fs.copyFileSync(fixturePath('tall.h5'), path.join(work, 'run1.h5'));
  });

  after(async () => {
    for (const p of running) await stop(p);
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('npm start serves on the port given (H5STORE_PORT), and a second start compiles nothing', async () => {
    const port = await freePort();
    const env = { H5STORE_PORT: String(port), H5STORE_ROOT: path.join(work, 'data') };
    const first = await startCommand('npm start', { cwd: REPO, env });
    expect(first.url).to.equal(`http://127.0.0.1:${port}`);
    await stop(first.proc);
    const t0 = performance.now();
    const second = await startCommand('npm start', { cwd: REPO, env });
    const s = (performance.now() - t0) / 1000;
    expect(second.output()).to.include('[server build] up to date');
    expect(second.output()).to.not.include('compiling src/');
    console.log(`      (second npm start listening after ${s.toFixed(1)} s)`);
    ports.main = port; // the blocks below talk to it (it wrote /samples)
    done.add('npm start');
  });

  it('the README\'s sh blocks run: every command is run or excused', async () => {
    expect(ports.main, 'npm start runs first').to.be.a('number');
    const excused: string[] = [];
    for (const lines of blocks) {
      const cmds = lines.map(withoutComment);
      const toRun: string[] = [];
      const flush = (port: number | undefined, env: Record<string, string> = {}, stdin = '') => {
        if (toRun.length) runScript(toRun.splice(0), port, env, stdin);
      };
      const usersBlock = cmds.some((c) => c.includes('user add admin'));
      const aclBlock = cmds.some((c) => /^curl -u /.test(c)); // signed-in requests: the server with users
      const hsBlock = cmds.some((c) => /^hs(touch|load|ls|get) /.test(c));
      for (const c of cmds) {
        const why = EXCUSED.find(([re]) => re.test(c));
        if (why) {
          excused.push(`${c}  (${why[1]})`);
          continue;
        }
        if (c === 'npm start') continue; // the test above
        if (isServe(c)) {
          flush(usersBlock ? undefined : ports.main, {}, usersBlock ? `${ADMIN_PW}\n${ADMIN_PW}\n` : '');
          const port = await freePort();
          let cmd = substitute(c, undefined).replace(/--port 5101\b/, `--port ${port}`).replace(/H5STORE_PORT=\d+/, `H5STORE_PORT=${port}`);
          if (!/--port |H5STORE_PORT=/.test(cmd)) cmd = `H5STORE_PORT=${port} ${cmd}`;
          if (cmd.includes('/path/to/data') || cmd.includes('other-data')) fs.mkdirSync(path.join(work, 'other-data'), { recursive: true });
          const s = await startCommand(cmd);
          if (usersBlock && c.includes('--users-file')) ports.users = port; // kept for the access-control block
          else await stop(s.proc);
          continue;
        }
        toRun.push(c);
      }
      if (hsBlock) {
        if (!fs.existsSync(path.join(H5PYD, 'h5pyd'))) {
          console.warn('      (h5pyd tools skipped: ../shared/clients/h5pyd is absent)');
          continue;
        }
        const fns = ['hstouch', 'hsload', 'hsls', 'hsget'].map((t) => `${t}() { ${PYTHON} -c "import sys; from h5pyd._apps.${t} import main; sys.argv[0] = '${t}'; main()" "$@"; }`);
        toRun.unshift(...fns);
        // with the settings of the README's h5pyd section (alice, on the server with users)
        flush(ports.users, { PYTHONPATH: H5PYD, ...h5pydSettings() });
        continue;
      }
      flush(aclBlock ? ports.users : ports.main, {}, usersBlock ? `${ADMIN_PW}\n${ADMIN_PW}\n` : '');
    }
    expect(ports.users, 'the access-control block ran against the server with users').to.be.a('number');
    console.log(`      excused:\n${excused.map((e) => `        ${e}`).join('\n')}`);
  });

  it('the Python examples run: h5pyd (with the sign-in settings shown), fsspec over GET /file', function () {
    const fsspec = /```python\n(import fsspec[\s\S]*?)```/.exec(readme)![1]!.replace(/localhost:5101/g, `localhost:${ports.main}`);
    const out = execFileSync(PYTHON, ['-c', fsspec], { encoding: 'utf8', env: childEnv({}) });
    expect(out).to.match(/\[\[\s*0\s+0\s+0/);
    if (!fs.existsSync(path.join(H5PYD, 'h5pyd'))) this.skip();
    const h5pyd = /```python\n(import h5pyd[\s\S]*?)```/.exec(readme)![1]!;
    const r = execFileSync(PYTHON, ['-W', 'ignore', '-c', h5pyd], { encoding: 'utf8', env: childEnv({ PYTHONPATH: H5PYD, ...h5pydSettings() }) });
    expect(r).to.match(/\[\[\s*0\s+0\s+0\s+0\s+0\]/);
  });

  it('the query= example matches a domain; the README\'s test count is the suite\'s', async () => {
    const q = /curl '(localhost:5101\/domains\?domain=\/samples\/&query=[^']+)'/.exec(readme)![1]!.replace('localhost:5101', `127.0.0.1:${ports.main}`);
    const r = (await (await fetch(`http://${q.replace(/>/g, '%3E')}`)).json()) as { domains: { name: string }[] };
    expect(r.domains.map((d) => d.name)).to.deep.equal(['/samples/types.h5']);
    const claimed = Number(/about ([\d,]+) tests/.exec(readme)![1]!.replace(/,/g, ''));
    // the suites `npm test` runs, as package.json names them
    const suites = [...(JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).scripts.test as string).matchAll(/'(test\/[^']+)'/g)].map((m) => m[1]!);
    expect(suites).to.include('test/api/**/*.test.ts');
    const out = execFileSync(process.execPath, [path.join(REPO, 'node_modules/mocha/bin/mocha.js'), '--dry-run', ...suites], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const real = Number(/(\d+) passing/.exec(out)![1]);
    expect(Math.abs(real - claimed) / real, `README says about ${claimed} tests, the suite has ${real}`).to.be.below(0.15);
  });

  it('serve with a users file that does not exist says so at start-up, and how to add the first user', async () => {
    const port = await freePort();
    const s = await startCommand(`node dist/cli.js serve --root ./data --port ${port} --users-file nobody-yet.json --log-level info`);
    expect(s.output()).to.include('the users file nobody-yet.json does not exist');
    expect(s.output()).to.include('h5store user add admin --users-file nobody-yet.json');
    await stop(s.proc);
  });

  it('the h5store command: npx h5store serve ./data', async () => {
    const port = await freePort();
    const s = await startCommand(`npx --no-install h5store serve ./data --port ${port}`);
    expect(s.url).to.equal(`http://127.0.0.1:${port}`);
    await stop(s.proc);
  });
});
