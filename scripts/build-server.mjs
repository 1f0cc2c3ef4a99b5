#!/usr/bin/env node
/**
 * Compile the server (src/ -> dist/, `tsc -p tsconfig.json`; `npm run build:server`), and make
 * dist/cli.js executable (the package's `h5store` command).
 * Usage: node scripts/build-server.mjs [--if-stale]
 *   --if-stale: do nothing when dist/cli.js is newer than every input (src/, tsconfig.json,
 *   package-lock.json, this script): a second `npm start` does not compile again (~35 s).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime } from './newest-mtime.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (m) => process.stderr.write(`[server build] ${m}\n`);

if (process.argv.includes('--if-stale')) {
  const built = path.join(root, 'dist/cli.js');
  if (fs.existsSync(built)) {
    const inputs = Math.max(newestMtime(path.join(root, 'src')), ...['tsconfig.json', 'package-lock.json'].map((f) => fs.statSync(path.join(root, f)).mtimeMs), fs.statSync(fileURLToPath(import.meta.url)).mtimeMs);
    if (fs.statSync(built).mtimeMs >= inputs) {
      say('up to date');
      process.exit(0);
    }
  }
}
say('compiling src/ into dist/ (tsc)');
const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
// tsc leaves dist/cli.js's time alone when its text is unchanged: mark the build as done; and
// the `h5store` command (package.json `bin`, `npx h5store`) is run as a program
const cli = path.join(root, 'dist/cli.js');
const now = new Date();
fs.utimesSync(cli, now, now);
fs.chmodSync(cli, 0o755);
