/**
 * Group creation properties (wire-reference 2.1; docs/storage-format.md).
 *
 * `creationProperties` of a group is what the file says plus what the client gave at creation:
 * - `CreateOrder: 1` is derived from the file (the group tracks link creation order), so it is
 *   right for dropped-in files too and costs nothing to store;
 * - any other keys given to `POST /groups` (HSDS stores them as given; h5pyd only sends
 *   `CreateOrder`) have no place in HDF5: they are kept "as given" (given.ts) under
 *   `creation.extra` of the group's entry, written only when such keys are given.
 */
import { badRequest } from '../../errors.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { DomainFile } from './domainFile.js';
import { givenOf, updateGiven } from '../access/given.js';

/** Largest JSON text of one group's extra creation properties. */
export const CPROPS_MAX_BYTES = 16 * 1024;

/**
 * The keys of a `creationProperties` request object that HDF5 cannot record (all but
 * `CreateOrder`); undefined when there are none.
 * @throws H5StoreError BadRequest when not an object, or larger than CPROPS_MAX_BYTES as JSON.
 */
export function extraCreationProperties(cp: unknown): Record<string, unknown> | undefined {
  if (cp === undefined || cp === null) return undefined;
  if (typeof cp !== 'object' || Array.isArray(cp)) throw badRequest('"creationProperties" must be an object');
  const { CreateOrder: _order, ...rest } = cp as Record<string, unknown>;
  if (Object.keys(rest).length === 0) return undefined;
  if (Buffer.byteLength(JSON.stringify(rest)) > CPROPS_MAX_BYTES) throw badRequest(`"creationProperties" is larger than ${CPROPS_MAX_BYTES} bytes`);
  return rest;
}

/** `creationProperties` of an open group: stored extras plus `CreateOrder` from the file; undefined when empty. */
export function groupCreationProperties(f: DomainFile, gid: Hid, gaddr: bigint): Record<string, unknown> | undefined {
  const extra = givenOf(f, gaddr)?.creation?.extra;
  const tracked = h5.groupTracksOrder(gid);
  if (!extra && !tracked) return undefined;
  return { ...(extra ?? {}), ...(tracked ? { CreateOrder: 1 } : {}) };
}

/** Record the extra creation properties of a new group (open, writable file). */
export function storeCreationProperties(f: DomainFile, addr: bigint, extra: Record<string, unknown>): void {
  updateGiven(f, addr, (e) => {
    e.creation = { ...(e.creation ?? {}), extra };
  });
}
