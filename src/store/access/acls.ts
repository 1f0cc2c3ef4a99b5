/**
 * Where ACLs and owners are kept (DESIGN.md section 4; docs/storage-format.md):
 *
 * - Domain files: the attribute `acl` of the reserved group `/__h5store__`, a scalar
 *   variable-length UTF-8 string holding JSON
 *   `{"version": 1, "owner": "alice", "root": {<user>: <flags>}, "objects": {"<addr hex>.<gen>": {<user>: <flags>}}}`.
 *   `root` is the root group's ACL, i.e. the domain's; `objects` holds per-object ACLs of groups,
 *   datasets and committed datatypes, keyed by header address and address generation (so a
 *   freed address reused by a new object never inherits an old ACL). Written only when an owner
 *   or ACL is set through the API (a domain created by a user, PUT .../acls).
 * - Folders: a sidecar file `.h5store-folder.json` in the folder's directory
 *   `{"version": 1, "owner": "alice", "acls": {...}}`, written atomically; never listed or served.
 *
 * A dropped-in file with no ACL inside is governed by its folder's ACL: the nearest folder up the
 * tree that has a sidecar (then `default_acl` from configuration, in `decide()`).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Acl, AclEntry } from '../../auth/acl.js';
import { FLAGS } from '../../auth/acl.js';
import type { DomainFile } from '../objects/domainFile.js';
import { StateSlot } from '../session/fileState.js';
import { FOLDER_META } from '../objects/paths.js';
import type { StatCache } from '../session/statCache.js';

/** The ACL state of a domain file. */
export interface FileAcl {
  owner: string;
  root: Acl;
  objects: Record<string, Acl>;
}

/** The ACL state of a folder (its sidecar). */
export interface FolderAcl {
  owner: string;
  acls: Acl;
}

/** Name of the attribute of the reserved group that holds the ACL state. */
export const ACL_ATTR = 'acl';

/** Keep only well-formed entries (six booleans) of a stored ACL. */
function cleanAcl(raw: unknown): Acl {
  const out: Acl = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [name, e] of Object.entries(raw as Record<string, unknown>)) {
    if (!e || typeof e !== 'object') continue;
    const entry = {} as AclEntry;
    for (const f of FLAGS) entry[f] = (e as Record<string, unknown>)[f] === true;
    out[name] = entry;
  }
  return out;
}

/** Parse a stored file ACL document; null when absent or unreadable (then the folder governs). */
export function parseFileAcl(text: string): FileAcl | null {
  try {
    const doc = JSON.parse(text) as { owner?: unknown; root?: unknown; objects?: Record<string, unknown> };
    const objects: Record<string, Acl> = {};
    for (const [k, v] of Object.entries(doc.objects ?? {})) objects[k] = cleanAcl(v);
    return { owner: typeof doc.owner === 'string' ? doc.owner : '', root: cleanAcl(doc.root), objects };
  } catch {
    return null;
  }
}

/**
 * A domain file's ACL state as read (null: none), undefined before it is read. Kept state
 * (fileState.ts): `writeFileAcl` keeps it current across this process's writes; every other
 * event drops it.
 */
const ACL_STATE = new StateSlot('acl', 'kept', () => ({ state: undefined as FileAcl | null | undefined }));

/**
 * The ACL state stored in an open domain file, or null when it has none. Read once, then kept
 * (`ACL_STATE`).
 */
export function readFileAcl(f: DomainFile): FileAcl | null {
  const kept = f.state(ACL_STATE);
  if (kept.state !== undefined) return kept.state;
  const text = f.reserved.readText(ACL_ATTR);
  kept.state = text === undefined ? null : parseFileAcl(text);
  return kept.state;
}

/**
 * The ACL state of a domain file as this entry knows it, without reading the file; undefined
 * when not read since the last event that dropped it. Who asks must know the file did not
 * change on disk since (files.ts `unchangedOnDisk`).
 */
export function keptFileAcl(f: DomainFile): FileAcl | null | undefined {
  return f.state(ACL_STATE).state;
}

/**
 * Store the ACL state in an open, writable domain file (replacing the previous one). Entries of
 * objects that no longer exist at their address and generation are dropped.
 */
export function writeFileAcl(f: DomainFile, state: FileAcl): void {
  const objects: Record<string, Acl> = {};
  for (const [k, v] of Object.entries(state.objects)) if (f.isCurrentObjectKey(k) && Object.keys(v).length) objects[k] = v;
  f.reserved.writeText(ACL_ATTR, JSON.stringify({ version: 1, owner: state.owner, root: state.root, objects }));
  f.state(ACL_STATE).state = { owner: state.owner, root: state.root, objects };
}

/**
 * Folder sidecars, each kept with the identity of the file it was read from (inode, size, mtime,
 * ctime: a sidecar is replaced by rename, so every write gives a new inode). A lookup checks that
 * identity with one `stat` of the sidecar path, reused for the stat cache's `freshMs` (statCache.ts,
 * 2 ms), which is dropped by every change of this process and, under `serve --workers N`, of its
 * siblings (changeFeed.ts): a change is seen at once by every worker, and within `freshMs` when
 * another program (or a server on another machine) made it.
 */
export class FolderAcls {
  private readonly cache = new Map<string, { at: number; generation: number; stamp: string; value: FolderAcl | null }>();

  constructor(
    private readonly realRoot: string,
    private readonly stats?: StatCache,
  ) {}

  /** The sidecar of one directory, or null when it has none (or it cannot be parsed). */
  own(dir: string): FolderAcl | null {
    const now = performance.now();
    const fresh = this.stats?.freshMs ?? 0;
    const generation = this.stats?.generation ?? 0;
    const hit = this.cache.get(dir);
    if (hit && hit.generation === generation && now - hit.at < fresh) return hit.value;
    const file = path.join(dir, FOLDER_META);
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(file, { throwIfNoEntry: false });
    } catch {
      st = undefined; // not a directory, no access: no sidecar
    }
    const stamp = st ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : '';
    if (hit && hit.stamp === stamp) {
      hit.at = now;
      hit.generation = generation;
      return hit.value;
    }
    let value: FolderAcl | null = null;
    if (st) {
      try {
        const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { owner?: unknown; acls?: unknown };
        value = { owner: typeof doc.owner === 'string' ? doc.owner : '', acls: cleanAcl(doc.acls) };
      } catch {
        value = null;
      }
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(dir, { at: now, generation, stamp, value });
    return value;
  }

  /**
   * The ACL that governs a directory: its own sidecar, else the nearest ancestor's inside the
   * data root; null when no folder up to the root has one.
   */
  effective(dir: string): FolderAcl | null {
    let d = dir;
    for (;;) {
      const own = this.own(d);
      if (own) return own;
      if (d === this.realRoot || !d.startsWith(this.realRoot)) return null;
      const up = path.dirname(d);
      if (up === d) return null;
      d = up;
    }
  }

  /** Write a folder's sidecar atomically (temporary file, fsync, rename). */
  write(dir: string, value: FolderAcl): void {
    const file = path.join(dir, FOLDER_META);
    const tmp = path.join(dir, `${FOLDER_META}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      fs.writeSync(fd, JSON.stringify({ version: 1, owner: value.owner, acls: value.acls }, null, 1) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    // the next lookup reads it again (its stamp is new): this process sees its own change at once
    this.cache.delete(dir);
  }

  /** Forget cached sidecars (after a folder was deleted or replaced). */
  forget(dir: string): void {
    for (const k of this.cache.keys()) if (k === dir || k.startsWith(dir + path.sep)) this.cache.delete(k);
  }
}
