/**
 * Committed datatypes: describing, committing, and the storable form of a type for a file (the
 * superblock version decides the datatype message version).
 * Part of the libhdf5 layer's dataset and attribute I/O (io.ts re-exports it whole).
 */
import type { TypeJson } from '../codec/types.js';
import { badRequest } from '../errors.js';
import * as C from './constants.js';
import { G, H5, type Hid, LCPL_UTF8 } from './lib.js';
import { memSize } from './memory.js';
import { MAX_ENCODED_TYPE, createType, describeType, encodedTypeSize } from './types.js';

// ---------------------------------------------------------------------------------------------
// Committed datatypes

/** Open a committed datatype object (from `H5Oopen*`) is already a datatype id; describe it. */
export function describeCommitted(tid: Hid): TypeJson {
  return describeType(tid);
}

/**
 * A new type that the file `fid` can hold (to create a dataset, attribute or committed type
 * in): `createType`, then the size of its description checked against what an object header
 * message holds (65535 bytes; an attribute message records its type's size in 2 bytes too),
 * before libhdf5 writes anything: past it libhdf5 fails half-way, or damages the attribute
 * storage of the object. `H5Tencode` gives the size in the original format's encoding (the
 * largest); files of the 1.8 format and later encode types more compactly (datatype message
 * version 3), whose size `fitsNewFormat` works out.
 * @throws H5StoreError BadRequest naming the size and the limit.
 */
export function createStorableType(type: TypeJson, fid: Hid): Hid {
  const tid = createType(type);
  try {
    const n = encodedTypeSize(tid);
    if (n > MAX_ENCODED_TYPE && !(superblockVersion(fid) >= 2 && fitsNewFormat(type))) {
      throw badRequest(
        `The type takes ${n} bytes to describe in the file, more than the ${MAX_ENCODED_TYPE} an HDF5 object header message holds (too many fields, or names too long)`,
      );
    }
    return tid;
  } catch (e) {
    H5.H5Tclose(tid);
    throw e;
  }
}

/** The superblock version of an open file (0/1: original format; 2/3: HDF5 1.8 / 1.10). */
export function superblockVersion(fid: Hid): number {
  const fcpl = H5.H5Fget_create_plist(fid);
  try {
    const sup = [0];
    H5.H5Pget_version(fcpl, sup, [0], [0], [0]);
    return sup[0];
  } finally {
    H5.H5Pclose(fcpl);
  }
}

/** Whether a type can be committed in a file of the 1.8 format (tried in memory). */
/**
 * Whether a type's description fits an object header message in a file of the 1.8 format and
 * later, which encodes types as datatype messages of version 3 (HDF5 File Format
 * Specification, "Datatype Message"): an 8-byte header, then per class: integer and bitfield 4
 * bytes, float 12, string and reference 0, opaque its tag padded to 8; compound members as their
 * name with NUL (no padding), their offset in as few bytes as the compound's size needs (1-4),
 * and their type; enum the base type, names with NUL and the values; array the rank, 4 bytes per
 * dimension and the base type; variable-length the base type. (Committing it in a scratch file
 * to find out is no option: libhdf5 1.10.8 then cannot close that file, "flush invalidate ring
 * failed".)
 */
function fitsNewFormat(t: TypeJson): boolean {
  return datatypeMessageV3(t) <= MAX_ENCODED_TYPE - 2;
}

function datatypeMessageV3(t: TypeJson): number {
  const utf8 = (s: string) => Buffer.byteLength(s, 'utf8') + 1;
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_BITFIELD':
      return 8 + 4;
    case 'H5T_FLOAT':
      return 8 + 12;
    case 'H5T_STRING':
    case 'H5T_REFERENCE':
      return 8;
    case 'H5T_OPAQUE':
      return 8 + Math.ceil(utf8(t.tag) / 8) * 8;
    case 'H5T_COMPOUND': {
      const size = memSize(t);
      const offBytes = size < 2 ** 8 ? 1 : size < 2 ** 16 ? 2 : size < 2 ** 24 ? 3 : 4;
      return t.fields.reduce((a, f) => a + utf8(f.name) + offBytes + datatypeMessageV3(f.type), 8);
    }
    case 'H5T_ENUM': {
      const names = Object.keys(t.mapping);
      return 8 + datatypeMessageV3(t.base) + names.reduce((a, n) => a + utf8(n), 0) + names.length * memSize(t.base);
    }
    case 'H5T_ARRAY':
      return 8 + 1 + 4 * t.dims.length + datatypeMessageV3(t.base);
    case 'H5T_VLEN':
      return 8 + datatypeMessageV3(t.base);
    default:
      return 8;
  }
}

/** Commit a datatype, anonymous when `name` is undefined. Returns the open datatype id. */
export function commitType(loc: Hid, name: string | undefined, type: TypeJson): Hid {
  const tid = createStorableType(type, loc);
  const tcpl = H5.H5Pcreate(G.P_DATATYPE_CREATE);
  try {
    H5.H5Pset_attr_creation_order(tcpl, C.creationOrderFlags(false)); // tracked (objects.ts creationOrderFlags)
    if (name === undefined) H5.H5Tcommit_anon(loc, tid, tcpl, C.H5P_DEFAULT);
    else H5.H5Tcommit2(loc, name, tid, LCPL_UTF8, tcpl, C.H5P_DEFAULT);
    return tid;
  } catch (e) {
    H5.H5Tclose(tid);
    throw e;
  } finally {
    H5.H5Pclose(tcpl);
  }
}
