/**
 * Object ids (DESIGN.md section 3; wire-reference 0.1).
 *
 * Form: `<p>-xxxxxxxx-xxxxxxxx-xxxx-xxxxxx-xxxxxx`, 38 characters, prefix `g`/`d`/`t`.
 * - hex digits 1-16: the domain key (from the domain path and the identity of the file there,
 *   inode and birth time: the same for every object of one file, new for a re-created file);
 * - hex digits 17-20: the address generation (0 unless an object header address was reused
 *   after a delete, see docs/storage-format.md);
 * - hex digits 21-32: the object header address in the file (48 bits).
 * No id table is stored: an object has an id the moment it is asked for.
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../../errors.js';
import type { ObjectKind } from '../../hdf5/objects.js';

export const PREFIX: Record<ObjectKind, string> = { group: 'g', dataset: 'd', datatype: 't' };
const KIND_OF: Record<string, ObjectKind> = { g: 'group', d: 'dataset', t: 'datatype' };
/** REST collection name per kind (`link.collection`, route prefixes). */
export const COLLECTION: Record<ObjectKind, 'groups' | 'datasets' | 'datatypes'> = {
  group: 'groups',
  dataset: 'datasets',
  datatype: 'datatypes',
};

const MAX_ADDR = (1n << 48n) - 1n;

/**
 * The 16-hex-digit key of a domain: a hash of its normalised path and of the identity of the
 * file at that path (`fileIdentity`), so a file deleted and created again at the same path gives
 * its objects new ids while an unchanged file keeps its ids across restarts.
 */
export function domainKey(domain: string, identity = ''): string {
  return createHash('sha256').update(identity ? `${domain}\u0000${identity}` : domain).digest('hex').slice(0, 16);
}

/**
 * What tells one file at a path from a later file at the same path: inode and birth time
 * (sub-millisecond; an inode number is often reused at once after a delete, a birth time is
 * not). Filesystems without birth times give the inode only.
 */
export function fileIdentity(st: { ino: number; birthtimeMs: number }): string {
  return st.birthtimeMs > 0 ? `${st.ino}:${st.birthtimeMs}` : `${st.ino}`;
}

/** Domain keys met in this process -> their domain (to tell a stale or foreign id from a made-up one). */
const keyOwners = new Map<string, string>();

/** Remember that `key` is (or was) the key of a file at `domain`. */
export function noteDomainKey(key: string, domain: string): void {
  if (keyOwners.size > 100_000) keyOwners.clear();
  keyOwners.set(key, domain);
}

/** The domain a key belonged to in this process, if any. */
export function domainOfKey(key: string): string | undefined {
  return keyOwners.get(key);
}

/**
 * Forget every domain key met: what a new process knows. For the in-process tests
 * (test/helpers/store.ts), whose "restart" is a new `Store` in the same process.
 */
export function forgetDomainKeys(): void {
  keyOwners.clear();
}

/** `key` (16 hex digits) as it appears in ids: `xxxxxxxx-xxxxxxxx-` (a few keys per process). */
const keyParts = new Map<string, string>();

/**
 * Build an object id: `<g|d|t>-` then the 16 hex digits of the domain key, 4 of the address
 * generation and 12 of the address, grouped 8-8-4-6-6 (a UUID's length, as HSDS ids).
 * @throws H5StoreError BadRequest for an address beyond 2^48
 */
export function makeId(kind: ObjectKind, key: string, addr: bigint, gen = 0): string {
  if (addr > MAX_ADDR || addr < 0n) throw badRequest('object address beyond 2^48 cannot be given an id');
  let k = keyParts.get(key);
  if (k === undefined) {
    const hex = key.padEnd(16, '0').slice(0, 16);
    k = `${hex.slice(0, 8)}-${hex.slice(8, 16)}-`;
    if (keyParts.size > 10_000) keyParts.clear();
    keyParts.set(key, k);
  }
  // below 2^48 a number's hex digits are exact (and much cheaper than a bigint's)
  const a = Number(addr).toString(16).padStart(12, '0');
  const g = gen === 0 ? '0000' : gen.toString(16).padStart(4, '0');
  return flat(PREFIX[kind] + '-' + k + g + '-' + a.slice(0, 6) + '-' + a.slice(6));
}

/**
 * `s`, flattened: a string built by `+` is a tree of pieces (one heap object per `+`, slices
 * pointing into their parents) until V8 flattens it. Strings cached per object or link (ids,
 * link texts) are flattened when made, so caches hold one string each instead of a dozen
 * objects that every garbage collection copies and traces while they are young (10,000 links
 * listed from a file never opened: scavenges of 8-13 ms -> 4-9 ms, 18 MB less heap after four
 * such files; issue #9 target 7). Converting a string to a number flattens it (V8
 * `String::Flatten`).
 */
export function flat(s: string): string {
  flatSink = Number(s); // kept in a variable, so the optimizing compiler cannot drop the call
  return s;
}
let flatSink = 0;

/** A parsed id. */
export interface ParsedId {
  kind: ObjectKind;
  key: string;
  gen: number;
  addr: bigint;
  /**
   * A well-formed HSDS-style id that this service never makes (a `g-` + UUID as clients
   * generate for tests, upper-case hex): it names nothing (404), it is not malformed (400).
   */
  foreign?: boolean;
}

const ID_RE = /^([gdt])-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{6})-([0-9a-f]{6})$/;
/** HSDS's id forms (wire-reference 0.1): prefix, then 32 hex digits as 8-8-4-6-6 or a UUID's 8-4-4-4-12. */
const HSDS_ID_RE = /^[gdt]-(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{6}-[0-9a-fA-F]{6}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

/**
 * Parse and validate an id's syntax.
 * @throws H5StoreError BadRequest for anything that is not a well-formed HSDS-style id.
 */
export function parseId(id: string): ParsedId {
  const m = ID_RE.exec(id);
  if (!m) {
    if (HSDS_ID_RE.test(id)) return { kind: KIND_OF[id[0]], key: '', gen: 0, addr: 0n, foreign: true };
    throw badRequest(`Invalid id: ${JSON.stringify(id.length > 80 ? id.slice(0, 80) + '...' : id)}`);
  }
  return {
    kind: KIND_OF[m[1]],
    key: m[2] + m[3],
    gen: parseInt(m[4], 16),
    addr: BigInt('0x' + m[5] + m[6]),
  };
}

/** The kind an id's prefix names, or undefined when it is not an id at all. */
export function kindOfId(id: string): ObjectKind | undefined {
  return ID_RE.test(id) ? KIND_OF[id[0]] : undefined;
}
