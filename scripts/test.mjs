#!/usr/bin/env node
/**
 * `npm test` after its pretest: the type check (`npm run typecheck`) and the test files at the same
 * time, the files in parallel jobs (`mocha --parallel`, 2 jobs; H5STORE_TEST_JOBS to change), and
 * a failure of either fails the run. The type check's output is shown once mocha is done (on
 * success it has none), so the two do not interleave.
 *
 * Usage: node scripts/test.mjs SUITE... [mocha options]   (package.json's `test` names the suites;
 * `npm test -- --reporter ./test/helpers/timing-reporter.cjs` adds options)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const jobs = process.env.H5STORE_TEST_JOBS ?? '2';
if (!/^[1-9]\d*$/.test(jobs)) {
  process.stderr.write(`H5STORE_TEST_JOBS must be a positive integer, not ${JSON.stringify(jobs)}\n`);
  process.exit(2);
}

const exited = (p) => new Promise((resolve) => p.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));

const typecheck = spawn('npm', ['run', '--silent', 'typecheck'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
let typecheckOut = '';
typecheck.stdout.on('data', (b) => (typecheckOut += b));
typecheck.stderr.on('data', (b) => (typecheckOut += b));
const typechecked = exited(typecheck);

const mocha = spawn(process.execPath, [path.join(root, 'node_modules/mocha/bin/mocha.js'), '--parallel', '--jobs', jobs, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
const tested = await exited(mocha);
const typeStatus = await typechecked;
if (typeStatus !== 0) process.stderr.write(`${typecheckOut}\nnpm run typecheck failed (exit status ${typeStatus})\n`);
process.exit(tested !== 0 || typeStatus !== 0 ? 1 : 0);
