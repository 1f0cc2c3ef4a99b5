/**
 * Object ids (DESIGN.md section 3; wire-reference 0.1).
 *
 * Form: `<p>-xxxxxxxx-xxxxxxxx-xxxx-xxxxxx-xxxxxx`, 38 characters, prefix `g`/`d`/`t`.
 * - hex digits 1-16: the domain key (from the domain path; same for every object of a domain);
 * - hex digits 17-20: the address generation (0 unless an object header address was reused
 *   after a delete, see docs/storage-format.md);
 * - hex digits 21-32: the object header address in the file (48 bits).
 * No id table is stored: an object has an id the moment it is asked for.
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../errors.js';
import type { ObjectKind } from '../hdf5/objects.js';

export const PREFIX: Record<ObjectKind, string> = { group: 'g', dataset: 'd', datatype: 't' };
const KIND_OF: Record<string, ObjectKind> = { g: 'group', d: 'dataset', t: 'datatype' };
/** REST collection name per kind (`link.collection`, route prefixes). */
export const COLLECTION: Record<ObjectKind, 'groups' | 'datasets' | 'datatypes'> = {
  group: 'groups',
  dataset: 'datasets',
  datatype: 'datatypes',
};

const MAX_ADDR = (1n << 48n) - 1n;

/** The 16-hex-digit key of a domain: a hash of its normalised path. */
export function domainKey(domain: string): string {
  return createHash('sha256').update(domain).digest('hex').slice(0, 16);
}

/** Build an object id. */
export function makeId(kind: ObjectKind, key: string, addr: bigint, gen = 0): string {
  if (addr > MAX_ADDR) throw badRequest('object address beyond 2^48 cannot be given an id');
  const tail = gen.toString(16).padStart(4, '0') + addr.toString(16).padStart(12, '0');
  const hex = key + tail;
  return `${PREFIX[kind]}-${hex.slice(0, 8)}-${hex.slice(8, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 26)}-${hex.slice(26, 32)}`;
}

/** A parsed id. */
export interface ParsedId {
  kind: ObjectKind;
  key: string;
  gen: number;
  addr: bigint;
}

const ID_RE = /^([gdt])-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{6})-([0-9a-f]{6})$/;

/**
 * Parse and validate an id's syntax.
 * @throws H5StoreError BadRequest for anything that is not a well-formed id of this service.
 */
export function parseId(id: string): ParsedId {
  const m = ID_RE.exec(id);
  if (!m) throw badRequest(`Invalid id: ${JSON.stringify(id.length > 80 ? id.slice(0, 80) + '...' : id)}`);
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
