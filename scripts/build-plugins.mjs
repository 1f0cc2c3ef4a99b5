#!/usr/bin/env node
/**
 * Build the HDF5 filter plugins that Debian 12 ships only as source, into a plugin directory
 * (default `build/hdf5-plugins/` of this project, which the server uses when `pluginPath` is not
 * set; never committed).
 *
 * Built now: the bitshuffle plugin (filter 32008, `libh5bshuf.so`), from the `bitshuffle/` folder
 * of Debian's `hdf5-filter-plugin` source package (its binary package builds only LZ4 and BZip2),
 * with Debian's compiler, libhdf5-dev and liblz4-dev. That source is bitshuffle 0.3 (LZ4 inside,
 * no zstd); h5store adds the zstd variant in-process on top of it (src/hdf5/filters.ts).
 *
 * Steps, each skipped when already done:
 *   1. the build packages (`BUILD` below) are installed with apt-get when running as root;
 *   2. a `deb-src` entry is added (/etc/apt/sources.list.d/h5store-deb-src.sources, the URIs and
 *      suites of the machine's own `deb` entries) when apt has none, then `apt-get update`;
 *   3. `apt-get source --download-only hdf5-filter-plugin` in a temporary folder; its upstream
 *      tarball is checked against the SHA-256 the signed .dsc names;
 *   4. `cc` builds the plugin; a stamp file (`SOURCE.json`) records the source and the recipe, so
 *      a later run with the same recipe does nothing.
 *
 * Usage: node scripts/build-plugins.mjs [--out DIR] [--quiet]
 * Exit status 0 when the plugin is there (built or up to date), 1 when it cannot be built (the
 * reason is printed: the server then reports bitshuffle as not readable).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const outArg = args.indexOf('--out');
const OUT = path.resolve(outArg >= 0 ? args[outArg + 1] : path.join(root, 'build', 'hdf5-plugins'));
const quiet = args.includes('--quiet');
const say = (m) => process.stderr.write(`[h5store plugins] ${m}\n`);

/** Debian packages the build needs (installed here when running as root). */
export const BUILD = ['gcc', 'libc6-dev', 'libhdf5-dev', 'liblz4-dev', 'xz-utils'];
const SOURCE_PACKAGE = 'hdf5-filter-plugin';
const PLUGIN = 'libh5bshuf.so';
const SOURCES = ['bitshuffle.c', 'bshuf_h5filter.c', 'bshuf_h5plugin.c'];
/** Bump when the compile recipe changes: the stamp then no longer matches and the plugin is rebuilt. */
const RECIPE = 'bitshuffle-1: cc -O2 -fPIC -shared -std=gnu99 (LZ4_decompress_safe), -lhdf5 -llz4';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const has = (cmd, a) => spawnSync(cmd, a, { stdio: 'ignore' }).status === 0;
const run = (cmd, a, opts = {}) => spawnSync(cmd, a, { encoding: 'utf8', ...opts });

function upToDate() {
  try {
    const stamp = JSON.parse(fs.readFileSync(path.join(OUT, 'SOURCE.json'), 'utf8'));
    return stamp.recipe === RECIPE && fs.existsSync(path.join(OUT, PLUGIN));
  } catch {
    return false;
  }
}

function multiarch() {
  const r = run('gcc', ['-print-multiarch']);
  const m = r.status === 0 ? r.stdout.trim() : '';
  return m || `${os.arch() === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`;
}

/** Where libhdf5-dev puts the serial headers and library (Debian layout). */
function hdf5Dev(arch) {
  return { include: '/usr/include/hdf5/serial', lib: `/usr/lib/${arch}/hdf5/serial` };
}

function missingBuildPackages() {
  if (!has('dpkg-query', ['--version'])) return [];
  return BUILD.filter((p) => {
    const r = run('dpkg-query', ['-W', '-f=${Status}', p]);
    return r.status !== 0 || !String(r.stdout).includes('install ok installed');
  });
}

const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
let aptUpdated = false;
function aptUpdate() {
  if (aptUpdated) return;
  execFileSync('apt-get', ['update', '-qq'], { stdio: quiet ? 'ignore' : 'inherit', env: aptEnv });
  aptUpdated = true;
}

function ensureBuildPackages() {
  const missing = missingBuildPackages();
  if (!missing.length) return true;
  if (!isRoot || !has('apt-get', ['--version'])) {
    say(`cannot build the bitshuffle plugin: missing ${missing.join(' ')}. Install them with:`);
    say(`  sudo apt-get install -y ${missing.join(' ')}`);
    return false;
  }
  say(`installing build packages: ${missing.join(' ')}`);
  aptUpdate();
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: quiet ? 'ignore' : 'inherit', env: aptEnv });
  return true;
}

/** Text of every apt source file (one-line and deb822 forms). */
function aptSourceFiles() {
  const files = [];
  if (fs.existsSync('/etc/apt/sources.list')) files.push('/etc/apt/sources.list');
  const dir = '/etc/apt/sources.list.d';
  if (fs.existsSync(dir)) for (const n of fs.readdirSync(dir).sort()) if (n.endsWith('.list') || n.endsWith('.sources')) files.push(path.join(dir, n));
  return files.map((f) => ({ file: f, text: fs.readFileSync(f, 'utf8') }));
}

/**
 * deb-src entries mirroring the machine's `deb` entries (same URIs, suites, components and keys),
 * in deb822 form; undefined when there is a deb-src entry already or no deb entry to copy.
 */
export function debSrcEntries(sources) {
  const stanzas = [];
  for (const { file, text } of sources) {
    if (file.endsWith('.list')) {
      for (const raw of text.split('\n')) {
        const line = raw.trim();
        if (/^deb-src\s/.test(line)) return undefined;
        const m = /^deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.+)$/.exec(line);
        if (!m) continue;
        const signed = m[1] && /signed-by=(\S+?)[\s\]]/.exec(m[1] + ' ');
        stanzas.push(['Types: deb-src', `URIs: ${m[2]}`, `Suites: ${m[3]}`, `Components: ${m[4].trim()}`, ...(signed ? [`Signed-By: ${signed[1]}`] : [])].join('\n'));
      }
    } else {
      for (const block of text.split(/\n\s*\n/)) {
        const fields = {};
        for (const l of block.split('\n')) {
          const m = /^([A-Za-z-]+):\s*(.*)$/.exec(l);
          if (m) fields[m[1].toLowerCase()] = m[2].trim();
        }
        if (!fields.types || /^no$/i.test(fields.enabled ?? '')) continue;
        const types = fields.types.split(/\s+/);
        if (types.includes('deb-src')) return undefined;
        if (!types.includes('deb') || !fields.uris || !fields.suites) continue;
        stanzas.push(
          ['Types: deb-src', `URIs: ${fields.uris}`, `Suites: ${fields.suites}`, `Components: ${fields.components ?? 'main'}`, ...(fields['signed-by'] ? [`Signed-By: ${fields['signed-by']}`] : [])].join('\n'),
        );
      }
    }
  }
  return stanzas.length ? stanzas.join('\n\n') + '\n' : undefined;
}

function ensureDebSrc() {
  const entries = debSrcEntries(aptSourceFiles());
  if (entries === undefined) return true;
  if (!isRoot) {
    say('apt has no deb-src entry (needed for apt-get source); as root, add one, e.g. /etc/apt/sources.list.d/h5store-deb-src.sources:');
    say(entries);
    return false;
  }
  const file = '/etc/apt/sources.list.d/h5store-deb-src.sources';
  say(`adding ${file} (deb-src of the machine's deb entries)`);
  fs.writeFileSync(file, '# Added by h5store scripts/build-plugins.mjs: Debian source packages of filter plugins\n' + entries);
  aptUpdated = false;
  aptUpdate();
  return true;
}

/** The SHA-256 the .dsc names for `name`. */
function dscSha256(dscText, name) {
  const i = dscText.indexOf('Checksums-Sha256:');
  if (i < 0) return undefined;
  for (const line of dscText.slice(i).split('\n').slice(1)) {
    if (!/^\s/.test(line)) break;
    const [sum, , file] = line.trim().split(/\s+/);
    if (file === name) return sum;
  }
  return undefined;
}

/** Download the source package; returns the path of its verified upstream tarball and its version. */
function fetchSource(tmp) {
  let r = run('apt-get', ['source', '--download-only', SOURCE_PACKAGE], { cwd: tmp, env: aptEnv });
  let names = fs.readdirSync(tmp);
  if (!names.some((n) => n.endsWith('.dsc')) && isRoot) {
    // package lists without sources yet: refresh once
    aptUpdated = false;
    aptUpdate();
    r = run('apt-get', ['source', '--download-only', SOURCE_PACKAGE], { cwd: tmp, env: aptEnv });
    names = fs.readdirSync(tmp);
  }
  const dsc = names.find((n) => n.startsWith(`${SOURCE_PACKAGE}_`) && n.endsWith('.dsc'));
  const orig = names.find((n) => n.startsWith(`${SOURCE_PACKAGE}_`) && /\.orig\.tar\.(xz|gz|bz2)$/.test(n));
  // apt-get exits non-zero when any file of the package fails (a mirror without the Debian
  // packaging tarball): the upstream tarball and the .dsc are all this build needs.
  if (!dsc || !orig) throw new Error(`apt-get source ${SOURCE_PACKAGE} failed: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' | ')}`);
  const dscText = fs.readFileSync(path.join(tmp, dsc), 'utf8');
  const want = dscSha256(dscText, orig);
  const got = crypto.createHash('sha256').update(fs.readFileSync(path.join(tmp, orig))).digest('hex');
  if (!want || want !== got) throw new Error(`${orig}: SHA-256 ${got} does not match the .dsc (${want ?? 'none'})`);
  const version = /^Version:\s*(\S+)/m.exec(dscText)?.[1] ?? '?';
  return { tarball: path.join(tmp, orig), version, sha256: got };
}

function build() {
  if (upToDate()) {
    if (!quiet) say(`${path.join(OUT, PLUGIN)} is up to date`);
    return 0;
  }
  if (!has('apt-get', ['--version'])) {
    say('not a Debian/Ubuntu system: build the bitshuffle HDF5 plugin yourself and give its folder as pluginPath');
    return 1;
  }
  if (!ensureBuildPackages() || !ensureDebSrc()) return 1;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-plugins-'));
  try {
    const src = fetchSource(tmp);
    const x = path.join(tmp, 'x');
    fs.mkdirSync(x);
    execFileSync('tar', ['-xf', src.tarball, '-C', x, '--wildcards', '*/bitshuffle/src/*', '*/bitshuffle/LICENSE']);
    const top = fs.readdirSync(x)[0];
    const dir = path.join(x, top, 'bitshuffle', 'src');
    const arch = multiarch();
    const dev = hdf5Dev(arch);
    fs.mkdirSync(OUT, { recursive: true });
    const target = path.join(OUT, PLUGIN);
    const tmpOut = `${target}.${process.pid}.tmp`;
    const ccArgs = ['-O2', '-fPIC', '-shared', '-std=gnu99', `-I${dev.include}`, '-o', tmpOut, ...SOURCES.map((s) => path.join(dir, s)), `-L${dev.lib}`, '-lhdf5', '-llz4'];
    const cc = run('cc', ccArgs);
    if (cc.status !== 0) throw new Error(`cc failed:\n${cc.stderr}`);
    fs.renameSync(tmpOut, target);
    fs.copyFileSync(path.join(x, top, 'bitshuffle', 'LICENSE'), path.join(OUT, 'LICENSE.bitshuffle'));
    fs.writeFileSync(
      path.join(OUT, 'SOURCE.json'),
      JSON.stringify({ plugin: PLUGIN, filter: 32008, source: `Debian source package ${SOURCE_PACKAGE} ${src.version}, bitshuffle/src`, sha256: src.sha256, recipe: RECIPE, built: new Date().toISOString() }, null, 2) + '\n',
    );
    say(`built ${target} from ${SOURCE_PACKAGE} ${src.version}`);
    return 0;
  } catch (e) {
    say(`cannot build the bitshuffle plugin: ${e.message}`);
    return 1;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(build());
