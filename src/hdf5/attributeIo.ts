/**
 * Attributes: names in name or creation order, metadata, and value reads and writes in the wire
 * format.
 * Part of the libhdf5 layer's dataset and attribute I/O (io.ts re-exports it whole).
 */
import type { TypeJson } from '../codec/types.js';
import * as C from './constants.js';
import { ACPL_UTF8, H5, H5Aiterate2, type Hid } from './lib.js';
import { type RefCodec, hasIndirect, memSize, memToWire, wireToMem } from './memory.js';
import { type H5pyType, createType, describeH5pyType } from './types.js';
import { type SpaceInfo, createSpace, describeSpace, memSpace, typeAndSpace } from './spaces.js';

// ---------------------------------------------------------------------------------------------
// Attributes

/** An attribute's name, type and dataspace. */
export interface AttributeMeta {
  name: string;
  type: TypeJson;
  space: SpaceInfo;
  /** Creation order, when the owner tracks it. */
  corder?: number;
}

/** Names of the attributes of an object, in name or creation order. */
export function listAttributeNames(oid: Hid, order: 'name' | 'crt' = 'name'): string[] {
  const names: string[] = [];
  H5Aiterate2(
    oid,
    order === 'crt' ? C.H5_INDEX_CRT_ORDER : C.H5_INDEX_NAME,
    C.H5_ITER_INC,
    [0n],
    (_loc: Hid, name: string) => {
      names.push(name);
      return 0;
    },
    null,
  );
  return names;
}

/** Whether the object has an attribute of this name (an empty name or one with NUL: none). */
export function attributeExists(oid: Hid, name: string): boolean {
  if (name === '' || name.includes('\u0000')) return false;
  return H5.H5Aexists(oid, name) as boolean;
}

/** Open an attribute by name (caller closes with `closeAttribute`). */
export function openAttribute(oid: Hid, name: string): Hid {
  return H5.H5Aopen(oid, name, C.H5P_DEFAULT);
}

/** Close an attribute id. */
export function closeAttribute(aid: Hid): void {
  H5.H5Aclose(aid);
}

/** Name, type and dataspace of an open attribute. */
export function describeAttribute(aid: Hid, name: string, committedId?: (tid: Hid) => string | undefined): AttributeMeta {
  return { name, ...typeAndSpace(H5.H5Aget_type(aid), H5.H5Aget_space(aid), committedId) };
}

/**
 * The h5py view of a dataset's type and dataspace (h5grove metadata): the type as
 * `describeH5pyType`, the shape as h5py's (`[]` scalar, `null` for H5S_NULL).
 */
export function datasetH5pyMeta(did: Hid): { type: H5pyType; shape: number[] | null } {
  return h5pyMeta(H5.H5Dget_type(did), H5.H5Dget_space(did));
}

/** The same for an open attribute. */
export function attributeH5pyMeta(aid: Hid): { type: H5pyType; shape: number[] | null } {
  return h5pyMeta(H5.H5Aget_type(aid), H5.H5Aget_space(aid));
}

/** Describe, then close, a type and a dataspace id. */
function h5pyMeta(tid: Hid, sid: Hid): { type: H5pyType; shape: number[] | null } {
  try {
    const space = describeSpace(sid);
    return { type: describeH5pyType(tid), shape: space.cls === 'H5S_NULL' ? null : space.dims };
  } finally {
    H5.H5Sclose(sid);
    H5.H5Tclose(tid);
  }
}

/** Read a whole attribute value in the wire format (`n` elements; 0 for H5S_NULL). */
export function readAttribute(aid: Hid, type: TypeJson, n: number, refs?: RefCodec): Buffer {
  if (n === 0) return Buffer.alloc(0);
  const mt = createType(type);
  try {
    const size = memSize(type);
    if (!hasIndirect(type)) {
      const buf = Buffer.allocUnsafe(n * size);
      H5.H5Aread(aid, mt, buf);
      return buf;
    }
    const mem = Buffer.alloc(n * size);
    H5.H5Aread(aid, mt, mem);
    const sid = memSpace(n);
    try {
      return memToWire(mem, type, n, refs);
    } finally {
      H5.H5Dvlen_reclaim(mt, sid, C.H5P_DEFAULT, mem);
      H5.H5Sclose(sid);
    }
  } finally {
    H5.H5Tclose(mt);
  }
}

/** Write a whole attribute value given in the wire format. */
export function writeAttribute(aid: Hid, type: TypeJson, n: number, wire: Buffer, refs?: RefCodec): void {
  const { mem, keep } = wireToMem(wire, type, n, refs);
  if (n === 0) return;
  const mt = createType(type);
  try {
    H5.H5Awrite(aid, mt, mem);
  } finally {
    H5.H5Tclose(mt);
  }
  keep.length = 0;
}

/**
 * Create an attribute (the name must not exist). `fileType` is an open datatype (committed types
 * are shared). Returns the open attribute id.
 */
export function createAttribute(oid: Hid, name: string, fileType: Hid, space: SpaceInfo): Hid {
  const sid = createSpace(space);
  try {
    return H5.H5Acreate2(oid, name, fileType, sid, ACPL_UTF8, C.H5P_DEFAULT);
  } finally {
    H5.H5Sclose(sid);
  }
}

/** Delete an attribute by name. */
export function deleteAttribute(oid: Hid, name: string): void {
  H5.H5Adelete(oid, name);
}

/** Rename an attribute. */
export function renameAttribute(oid: Hid, from: string, to: string): void {
  H5.H5Arename(oid, from, to);
}
