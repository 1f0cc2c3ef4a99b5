#!/usr/bin/env node
/**
 * Make sure everything `npm start` / `npm test` needs is here, installing what is missing:
 *   - npm packages (npm ci when node_modules is missing or older than package-lock.json);
 *   - the libhdf5 runtime and filter plugins, libzstd and liblz4 (and, for tests, h5py, numpy,
 *     python3-zstandard, python3-lz4, hdf5-tools and chromium) from Debian/Ubuntu packages:
 *     installed with apt-get when running as root, otherwise the exact command to run is printed
 *     and the script fails;
 *   - the bitshuffle filter plugin, built from Debian's source package into build/hdf5-plugins/
 *     (scripts/build-plugins.mjs; without it the server reports bitshuffle as not readable).
 * Usage: node scripts/ensure-deps.mjs start|test
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2] === 'test' ? 'test' : 'start';
const say = (m) => process.stderr.write(`[h5store setup] ${m}\n`);

const RUNTIME = ['libhdf5-103-1', 'liblzf1', 'hdf5-plugin-lzf', 'hdf5-filter-plugin', 'hdf5-filter-plugin-blosc-serial', 'hdf5-filter-plugin-zfp-serial', 'libzstd1', 'liblz4-1', 'libdeflate0'];
// xarray, h5netcdf and PyTables (with pandas) write the files scientists have for the viewer's
// browser test and run xarray over the network (test/tools/make_science_files.py); zstandard and
// lz4 make the detector filter test files (test/tools/detector_filters.py); fatrace (fanotify)
// shows that the server writes nothing into files other programs write (test/api/live-files.test.ts)
const TEST_PKGS = ['python3-h5py', 'python3-numpy', 'hdf5-tools', 'python3-requests', 'python3-requests-unixsocket', 'python3-tz', 'python3-packaging', 'python3-fsspec', 'python3-aiohttp', 'chromium', 'python3-xarray', 'python3-h5netcdf', 'python3-tables', 'python3-zstandard', 'python3-lz4', 'fatrace'];

function npmPackages() {
  const nm = path.join(root, 'node_modules');
  const lock = path.join(root, 'package-lock.json');
  const stamp = path.join(nm, '.package-lock.json');
  const stale = !fs.existsSync(stamp) || (fs.existsSync(lock) && fs.statSync(lock).mtimeMs > fs.statSync(stamp).mtimeMs + 1000);
  if (!fs.existsSync(nm) || stale) {
    say('installing npm packages (npm ci)');
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

function has(cmd, args) {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

function libhdf5Present() {
  const probe = `
    const koffi = require('koffi');
    const names = process.env.HDF5_LIBRARY ? [process.env.HDF5_LIBRARY] : ['libhdf5_serial.so.103','libhdf5.so.103','libhdf5.so','libhdf5.so.310','libhdf5.so.200','libhdf5.dylib'];
    for (const n of names) { try { koffi.load(n); process.exit(0); } catch {} }
    process.exit(1);`;
  return spawnSync(process.execPath, ['-e', probe], { cwd: root, stdio: 'ignore' }).status === 0;
}

function missingDebianPackages() {
  const want = mode === 'test' ? [...RUNTIME, ...TEST_PKGS] : RUNTIME;
  if (!has('dpkg-query', ['--version'])) return [];
  return want.filter((p) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return r.status !== 0 || !String(r.stdout).includes('install ok installed');
  });
}

function systemPackages() {
  const missing = missingDebianPackages();
  const needH5py = mode === 'test' && !has('/usr/bin/python3', ['-c', 'import h5py, numpy']);
  const needTools = mode === 'test' && !has('h5dump', ['--version']);
  if (libhdf5Present() && missing.length === 0 && !needH5py && !needTools) return;
  const pkgs = missing.length ? missing : [...RUNTIME, ...(mode === 'test' ? TEST_PKGS : [])];
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && has('apt-get', ['--version'])) {
    say(`installing Debian packages: ${pkgs.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { stdio: 'inherit', env });
    return;
  }
  if (!libhdf5Present() || (mode === 'test' && (needH5py || needTools))) {
    say('missing system packages. Install them with:');
    say(`  sudo apt-get install -y ${pkgs.join(' ')}`);
    say('(other systems: install the HDF5 C library 1.10+ and set HDF5_LIBRARY to libhdf5.so; tests also need h5py and h5dump)');
    process.exit(1);
  }
  if (missing.includes('chromium') && !fs.existsSync('/usr/bin/chromium')) {
    say('chromium is missing: the browser test (test/browser) will be skipped. Install it with:');
    say('  sudo apt-get install -y chromium');
  }
}

/** The bitshuffle plugin (scripts/build-plugins.mjs: does nothing when it is up to date). */
function filterPlugins() {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-plugins.mjs'), '--quiet'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    if (mode === 'test') process.exit(r.status ?? 1);
    say('continuing without the bitshuffle plugin: bitshuffle datasets will answer 415');
  }
}

npmPackages();
systemPackages();
filterPlugins();
