/**
 * Names of the service files h5store keeps beside a domain file (docs/storage-format.md "Files
 * beside a domain file"): the lock file, temporary files of domain creation, and the lock
 * directory of earlier versions of h5store.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LOCK_SUFFIX } from '../objects/paths.js';

/** proper-lockfile (earlier versions of h5store) refreshed its lock directory every 5 s, stale after 10 s. */
const LEGACY_STALE_MS = 10_000;

/** Longest bytes of a file name kept readable in the names of its service files. */
const NAME_PREFIX_BYTES = 64;

/** The start of `name` in at most `max` UTF-8 bytes, cut at a character boundary. */
function utf8Prefix(name: string, max: number): string {
  if (Buffer.byteLength(name) <= max) return name;
  let out = '';
  let n = 0;
  for (const ch of name) {
    const b = Buffer.byteLength(ch);
    if (n + b > max) break;
    out += ch;
    n += b;
  }
  return out;
}

/**
 * Name of a service file beside the domain file `base` (a file name): hidden, at most
 * 1 + 64 + 1 + 16 + len(tag) + 13 bytes whatever the length of `base` (NAME_MAX is 255), with a
 * hash that tells apart names sharing their first 64 bytes, and ending in `.h5store-lock` so that
 * listings hide it and no domain can be named like it.
 */
export function serviceName(base: string, tag = ''): string {
  const hash = crypto.createHash('sha256').update(base).digest('hex').slice(0, 16);
  return `.${utf8Prefix(base, NAME_PREFIX_BYTES)}~${hash}${tag}${LOCK_SUFFIX}`;
}

/** The lock file (commit counter + journal) of a domain file, beside it. */
export function lockFileOf(realFile: string): string {
  return path.join(path.dirname(realFile), serviceName(path.basename(realFile)));
}

/**
 * The lock directory h5store used before (proper-lockfile, `.<name>.h5store-lock`), or undefined
 * when that name would not fit in NAME_MAX (such a lock could never exist).
 */
export function legacyLockOf(file: string): string | undefined {
  const base = path.basename(file);
  if (Buffer.byteLength(`.${base}${LOCK_SUFFIX}`) > 255) return undefined;
  return path.join(path.dirname(file), `.${base}${LOCK_SUFFIX}`);
}

/** State of a legacy lock directory: none, held by a live old server, or left by a dead one. */
export function legacyLockState(file: string, now = Date.now()): 'none' | 'live' | 'stale' {
  const p = legacyLockOf(file);
  if (!p) return 'none';
  let st: fs.Stats | undefined;
  try {
    // checked before every write, and almost always absent: no exception for ENOENT (creating
    // one was ~40 us of a POST)
    st = fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return 'none';
  }
  if (!st?.isDirectory()) return 'none';
  return now - st.mtimeMs > LEGACY_STALE_MS ? 'stale' : 'live';
}
