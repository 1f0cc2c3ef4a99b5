/**
 * Group creation properties (wire-reference 2.1; docs/storage-format.md).
 *
 * `creationProperties` of a group is what the file says plus what the client gave at creation:
 * - `CreateOrder: 1` is derived from the file (the group tracks link creation order), so it is
 *   right for dropped-in files too and costs nothing to store;
 * - any other keys given to `POST /groups` (HSDS stores them as given; h5pyd only sends
 *   `CreateOrder`) have no place in HDF5: they are kept in the attribute `creationProperties` of
 *   the reserved group, a scalar variable-length UTF-8 string holding
 *   `{"version": 1, "objects": {"<address hex>.<generation>": {<key>: <value>}}}`, written only
 *   when such keys are given; entries of freed objects are dropped on the next write.
 */
import type { TypeJson } from '../codec/types.js';
import { badRequest, internal } from '../errors.js';
import * as io from '../hdf5/io.js';
import type { Hid } from '../hdf5/lib.js';
import * as h5 from '../hdf5/objects.js';
import type { DomainFile } from './domainFile.js';

/** Name of the reserved group's attribute that holds the extra creation properties. */
export const CPROPS_ATTR = 'creationProperties';
/** Largest JSON text of one object's extra creation properties. */
export const CPROPS_MAX_BYTES = 16 * 1024;

const VLEN_UTF8: TypeJson = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' } as TypeJson;

type Extras = Record<string, Record<string, unknown>>;

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

/** The stored extras of a file (cached until the file changes or is written). */
function extrasOf(f: DomainFile): Extras {
  const cached = f.reservedState.get(CPROPS_ATTR) as Extras | undefined;
  if (cached) return cached;
  let extras: Extras = {};
  if (f.hasReserved) {
    const gid = f.openReserved(false)!;
    try {
      if (io.attributeExists(gid, CPROPS_ATTR)) {
        const aid = io.openAttribute(gid, CPROPS_ATTR);
        try {
          const wire = io.readAttribute(aid, VLEN_UTF8, 1);
          const doc = JSON.parse(wire.subarray(4, 4 + wire.readUInt32LE(0)).toString('utf8')) as { objects?: Extras };
          if (doc.objects && typeof doc.objects === 'object') extras = doc.objects;
        } catch {
          extras = {};
        } finally {
          io.closeAttribute(aid);
        }
      }
    } finally {
      h5.closeObject(gid);
    }
  }
  f.reservedState.set(CPROPS_ATTR, extras);
  return extras;
}

/** `creationProperties` of an open group: derived from the file plus stored extras; undefined when empty. */
export function groupCreationProperties(f: DomainFile, gid: Hid, gaddr: bigint): Record<string, unknown> | undefined {
  const extra = extrasOf(f)[f.objectKey(gaddr)];
  const tracked = h5.groupTracksOrder(gid);
  if (!extra && !tracked) return undefined;
  return { ...(extra ?? {}), ...(tracked ? { CreateOrder: 1 } : {}) };
}

/** Record the extra creation properties of a new object (open, writable file). */
export function storeCreationProperties(f: DomainFile, addr: bigint, extra: Record<string, unknown>): void {
  const objects: Extras = {};
  for (const [k, v] of Object.entries(extrasOf(f))) if (f.isCurrentObjectKey(k)) objects[k] = v;
  objects[f.objectKey(addr)] = extra;
  const bytes = Buffer.from(JSON.stringify({ version: 1, objects }), 'utf8');
  const wire = Buffer.alloc(4 + bytes.length);
  wire.writeUInt32LE(bytes.length, 0);
  bytes.copy(wire, 4);
  const gid = f.openReserved(true);
  if (gid === undefined) throw internal('Cannot create the reserved group');
  try {
    if (io.attributeExists(gid, CPROPS_ATTR)) io.deleteAttribute(gid, CPROPS_ATTR);
    const ft = io.createType(VLEN_UTF8);
    try {
      const aid = io.createAttribute(gid, CPROPS_ATTR, ft, { cls: 'H5S_SCALAR', dims: [], maxdims: [] });
      try {
        io.writeAttribute(aid, VLEN_UTF8, 1, wire);
      } finally {
        io.closeAttribute(aid);
      }
    } finally {
      io.closeType(ft);
    }
  } finally {
    h5.closeObject(gid);
  }
  f.invalidateCaches();
}
