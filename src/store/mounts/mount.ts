/**
 * Read-only mounts: a subtree of domains served from somewhere other than the data directory
 * (an S3 bucket prefix, see s3mount.ts). The store asks the mount that owns a domain path for the
 * file entry, the folder/domain record and folder listings; every write under a mount is a 403.
 */
import { forbidden } from '../../errors.js';
import type { DomainFile } from '../objects/domainFile.js';
import type { FileSnapshot } from '../session/download.js';
import type { FileCache } from '../session/files.js';

/** Times of a mounted domain or folder, seconds since the epoch. */
export interface MountedEntry {
  kind: 'domain' | 'folder';
  created: number;
  lastModified: number;
}

/** One item of a mounted folder listing (`name` is the full domain path). */
export interface MountedItem extends MountedEntry {
  name: string;
}

export interface Mount {
  /** The mount point: a normalised domain path such as `/archive`. */
  readonly at: string;
  /** Where the domains come from, for messages (`s3://bucket/prefix`). */
  readonly source: string;
  /**
   * The file entry of a domain below the mount, with its version checked (I/O allowed).
   * @throws NotFound when there is no such domain; BadRequest when it is a folder.
   */
  file(domain: string, cache: FileCache): Promise<DomainFile>;
  /** Whether a path below (or at) the mount is a domain or a folder. @throws NotFound */
  stat(domain: string): Promise<MountedEntry>;
  /**
   * Entries of a folder below (or at) the mount, in byte order of their names, after `marker`
   * (a full domain path), at most `limit`, names filtered by `pattern`.
   * @throws NotFound when the folder does not exist.
   */
  list(folder: string, opts: { limit?: number; marker?: string; pattern?: (name: string) => boolean }): Promise<MountedItem[]>;
  /**
   * The object's bytes for a download (download.ts): its current version, read by ranges that
   * each ask for that version only (a newer version ends the transfer with Conflict).
   * @throws NotFound when there is no such domain; BadRequest when it is a folder.
   */
  snapshot(domain: string): Promise<FileSnapshot>;
  /** Check that the backing store answers (readiness). @throws Error saying what failed */
  check(): Promise<void>;
  close(): void;
}

/** True when `domain` is the mount point or below it. */
export function isUnder(domain: string, at: string): boolean {
  return domain === at || domain.startsWith(at + '/');
}

/** The 403 every write under a mount gets (service spec section 7: the user lacks access). */
export function readOnly(m: Mount, domain: string) {
  return forbidden(`${domain} is in the read-only archive ${m.at} (${m.source}): writes are not allowed`);
}
