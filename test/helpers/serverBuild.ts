/**
 * The server the tests start, as JavaScript: src/ transpiled by esbuild, one file per module, into
 * dist-test/ (beside dist/, so the paths the server finds from its own place, `../package.json`,
 * `../../dist/viewer`, `../../build/hdf5-plugins`, are the same). The same transform tsx applies
 * (tsx is esbuild too) done once per `npm test` (its pretest) instead of in every server process:
 * a server started under tsx spends about 0.5 s of CPU more in tsx's module hooks, and the suite
 * starts more than a hundred.
 *
 * A build is used only while it matches src/ (a fingerprint of every file's path and bytes, the
 * esbuild version and this file): after an edit of src/, a test run without the pretest (`npx
 * mocha test/api/foo.test.ts`) starts the server with tsx from src/ as before, never an old build.
 *
 *   node --import tsx test/helpers/serverBuild.ts      build dist-test/ unless it matches src/
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(REPO, 'src');
/** Where the build goes: a folder of the repository's top level, as dist/ is. */
export const TEST_SERVER_DIR = path.join(REPO, 'dist-test');
const STAMP = 'fingerprint';

/** Every file below `dir` (relative paths, sorted). */
function filesBelow(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...filesBelow(dir, r));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

/** Hex digest of src/ (paths and bytes), the esbuild version and this file: what a build is made from. */
export function sourceFingerprint(): string {
  const h = createHash('sha256');
  const esbuild = JSON.parse(fs.readFileSync(path.join(REPO, 'node_modules/esbuild/package.json'), 'utf8')) as { version: string };
  h.update(`esbuild ${esbuild.version}\0`);
  h.update(fs.readFileSync(fileURLToPath(import.meta.url)));
  for (const f of filesBelow(SRC)) {
    h.update(`\0${f}\0`);
    h.update(fs.readFileSync(path.join(SRC, f)));
  }
  return h.digest('hex');
}

let current: boolean | undefined;

/** Whether dist-test/ holds a build of src/ as it is now (asked once per process). */
export function testServerBuilt(): boolean {
  if (current === undefined) {
    try {
      current = fs.readFileSync(path.join(TEST_SERVER_DIR, STAMP), 'utf8') === sourceFingerprint();
    } catch {
      current = false;
    }
  }
  return current;
}

/**
 * The node arguments that run the `h5store` command: dist-test/cli.js when it is a build of src/
 * as it is, else src/cli.ts under tsx.
 */
export function cliArgs(): string[] {
  return testServerBuilt() ? [path.join(TEST_SERVER_DIR, 'cli.js')] : ['--import', path.join(REPO, 'node_modules/tsx/dist/esm/index.mjs'), path.join(SRC, 'cli.ts')];
}

/**
 * Build dist-test/ from src/ unless it is a build of src/ as it is now (then nothing is written).
 * Written into a new folder first, which then replaces the old one: a reader never sees half a build.
 */
export async function buildTestServer(): Promise<'built' | 'up to date'> {
  const fp = sourceFingerprint();
  try {
    if (fs.readFileSync(path.join(TEST_SERVER_DIR, STAMP), 'utf8') === fp) return 'up to date';
  } catch {
    /* no build yet */
  }
  const { build } = await import('esbuild');
  const tmp = `${TEST_SERVER_DIR}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const files = filesBelow(SRC);
  await build({
    entryPoints: files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => path.join(SRC, f)),
    outdir: tmp,
    outbase: SRC,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    tsconfig: path.join(REPO, 'tsconfig.json'),
    logLevel: 'warning',
  });
  // files of src/ that are not TypeScript (none today) are copied as they are
  for (const f of files.filter((x) => !x.endsWith('.ts'))) {
    fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
    fs.copyFileSync(path.join(SRC, f), path.join(tmp, f));
  }
  fs.writeFileSync(path.join(tmp, STAMP), fp);
  fs.rmSync(TEST_SERVER_DIR, { recursive: true, force: true });
  fs.renameSync(tmp, TEST_SERVER_DIR);
  return 'built';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  buildTestServer().then(
    (r) => process.stderr.write(`[test server] ${r === 'built' ? `built dist-test/ from src/ in ${Math.round(performance.now() - t0)} ms` : 'dist-test/ is up to date'}\n`),
    (e: Error) => {
      process.stderr.write(`[test server] build failed: ${e.message}\n`);
      process.exitCode = 1;
    },
  );
}
