/**
 * Domain paths -> files under the data directory (DESIGN.md section 2; wire-reference 0.3).
 *
 * Every domain path is normalised and checked before the disk is touched: no `..` or `.`
 * components, no NUL or control characters, no backslashes, no empty components; the real path
 * (after symlinks) of the deepest existing ancestor must stay inside the root. A violation is a
 * 400 and no file outside the root is ever opened, created or removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { badRequest } from '../../errors.js';
import type { StatCache } from '../session/statCache.js';

/** Names the service keeps beside domain files; hidden from listings, refused as domains. */
export const LOCK_SUFFIX = '.h5store-lock';
export const FOLDER_META = '.h5store-folder.json';

/** Names of the service's own files beside domains (locks, folder sidecars and their temporaries). */
export function isServiceName(name: string): boolean {
  return name.endsWith(LOCK_SUFFIX) || name.startsWith(FOLDER_META);
}

/**
 * Domains `normalizeDomain` accepted, raw -> canonical (pure function of the string; the top
 * folder, whose answer depends on `allowRoot`, and refused names are not kept). Clients send
 * the same domain with every request.
 */
const NORMALIZED = new Map<string, string>();

/**
 * S3 bucket naming rules (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html):
 * 3-63 characters of lower-case letters, digits, `.` and `-`, starting and ending with a letter
 * or digit, no `..`, not an IPv4 address, no `xn--`/`sthree-` prefix or `-s3alias`/`--ol-s3`
 * suffix (HSDS refuses other names with 400).
 */
export function isValidBucketName(b: string): boolean {
  if (b.length < 3 || b.length > 63) return false;
  if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(b)) return false;
  if (b.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(b)) return false;
  if (b.startsWith('xn--') || b.startsWith('sthree-') || b.endsWith('-s3alias') || b.endsWith('--ol-s3')) return false;
  return true;
}

/**
 * Normalise a domain string: strip a leading `hdf5:/` (HSDS accepts `hdf5://home/u/f.h5`) or a
 * bucket (`mybucket/home/u/f.h5`, HSDS's `<bucket>/<path>` form: h5store has one storage root,
 * so the bucket is ignored, as the `bucket` parameter is; issue #25), require an absolute path,
 * collapse repeated slashes, drop one trailing slash (folders).
 * @returns the canonical domain path, e.g. `/home/alice/run1.h5`; `/` for the top folder.
 * @throws H5StoreError BadRequest for traversal, NUL, backslash, control characters, reserved
 *   names, or a relative path whose first component is not a bucket name.
 */
export function normalizeDomain(raw: string, opts: { allowRoot?: boolean } = {}): string {
  const known = NORMALIZED.get(raw);
  if (known !== undefined) return known;
  let d = raw;
  if (d.startsWith('hdf5://')) d = d.slice(6);
  else if (d.startsWith('hdf5:/')) d = d.slice(5);
  const slash = d.indexOf('/');
  if (slash > 0 && isValidBucketName(d.slice(0, slash))) d = d.slice(slash);
  if (!d.startsWith('/')) throw badRequest(`Invalid domain: ${JSON.stringify(raw)} (must be an absolute path like /home/user/file.h5, or bucket/path)`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(d)) throw badRequest('Invalid domain: control characters and backslashes are not allowed');
  const parts = d.split('/').filter((p) => p !== '');
  for (const p of parts) {
    if (p === '.' || p === '..') throw badRequest('Invalid domain: "." and ".." path components are not allowed');
    if (isServiceName(p)) throw badRequest(`Invalid domain: ${p} is a reserved name`);
    if (Buffer.byteLength(p) > 255) throw badRequest('Invalid domain: a path component is longer than 255 bytes');
  }
  if (parts.length === 0) {
    if (opts.allowRoot) return '/';
    throw badRequest('Invalid domain: the top folder "/" is not a domain');
  }
  const out = '/' + parts.join('/');
  if (NORMALIZED.size >= 4096) NORMALIZED.clear();
  NORMALIZED.set(raw, out);
  return out;
}

/** The parent folder of a domain path (`/` for top-level names). */
export function parentDomain(domain: string): string {
  const i = domain.lastIndexOf('/');
  return i <= 0 ? '/' : domain.slice(0, i);
}

/** Maps normalised domain paths to file system paths under one root directory. */
/** Where the files a dataset reaches are judged from (reach.ts; one per domain entry). */
export interface ReachContext {
  paths: DomainPaths;
  /**
   * Set for files that may reach no other file (read-only mounts: their stored names would name
   * files on this server's disk): any dataset whose values live elsewhere answers 403 with this.
   */
  refuse?: string;
}

export class DomainPaths {
  readonly root: string;
  /** The data directory's real path (symlinks resolved). */
  readonly realRoot: string;
  /**
   * Checked real paths of existing domains and folders (domain -> real path, time of the check),
   * so a request does not walk the path again; kept `ttlMs` at most. The real path (not the
   * joined one) is what is returned and opened, so a component replaced by a symlink after the
   * check cannot lead an open outside the root.
   */
  private readonly checked = new Map<string, { real: string; at: number }>();

  constructor(
    root: string,
    private readonly ttlMs = 2000,
    /** Cleared with `forget` (a domain or folder created, deleted or moved). */
    private readonly stats?: StatCache,
  ) {
    this.root = path.resolve(root);
    fs.mkdirSync(this.root, { recursive: true });
    this.realRoot = fs.realpathSync.native(this.root);
  }

  /**
   * File system path of a normalised domain, after checking that following symlinks of the
   * existing part of the path stays inside the root. For an existing domain or folder this is
   * its real path (symlinks resolved); for a missing one, the path it would be created at.
   * @throws H5StoreError BadRequest when the path escapes the root.
   */
  resolve(domain: string): string {
    const hit = this.checked.get(domain);
    const now = performance.now();
    if (hit && now - hit.at < this.ttlMs) return hit.real;
    const rel = domain === '/' ? '' : domain.slice(1);
    const full = path.join(this.realRoot, ...rel.split('/'));
    // Find the deepest existing entry (lstat: dangling symlinks exist too) and check where it
    // really leads; a dangling symlink is checked by its target path.
    let probe = full;
    for (;;) {
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(probe);
      } catch {
        st = undefined;
      }
      if (st) {
        let real: string;
        try {
          real = fs.realpathSync.native(probe);
        } catch {
          // Dangling symlink (or a loop): judge by the link's target.
          real = this.linkTarget(probe);
        }
        if (!this.inside(real)) throw badRequest('Invalid domain: the path leads outside the data directory');
        if (probe === full && DomainPaths.exists(real)) {
          if (this.checked.size >= 10_000) this.checked.clear();
          this.checked.set(domain, { real, at: now });
          return real;
        }
        break;
      }
      const up = path.dirname(probe);
      if (up === probe) break;
      probe = up;
    }
    return full;
  }

  /** The path of a domain joined under the root, symlinks not followed (to remove a link itself). */
  joined(domain: string): string {
    return domain === '/' ? this.realRoot : path.join(this.realRoot, ...domain.slice(1).split('/'));
  }

  /** Forget checked paths of a domain or folder and everything below it (after create/delete). */
  forget(domain: string): void {
    this.stats?.clear();
    for (const k of this.checked.keys()) if (k === domain || k.startsWith(domain === '/' ? '/' : domain + '/')) this.checked.delete(k);
  }

  /** True when a real path (after symlinks) is the root or below it. */
  inside(real: string): boolean {
    return real === this.realRoot || real.startsWith(this.realRoot + path.sep);
  }

  /** Where a (possibly dangling) symlink points, resolving its parent's real path. */
  private linkTarget(p: string): string {
    try {
      const target = fs.readlinkSync(p);
      return path.resolve(fs.realpathSync.native(path.dirname(p)), target);
    } catch {
      return p;
    }
  }

  /** True when something (a file, folder, or even a dangling symlink) is at `fsPath`. */
  static exists(fsPath: string): boolean {
    try {
      fs.lstatSync(fsPath);
      return true;
    } catch {
      return false;
    }
  }

  /** Domain path of a file system path inside the root (for listings). */
  toDomain(fsPath: string): string {
    const rel = path.relative(this.realRoot, fsPath);
    return '/' + rel.split(path.sep).join('/');
  }
}
