/**
 * Dataspaces: extents (`SpaceInfo`), creation, and the selections of a read or write (file and
 * memory dataspaces).
 * Part of the libhdf5 layer's dataset and attribute I/O (io.ts re-exports it whole).
 */
import type { TypeJson } from '../codec/types.js';
import * as C from './constants.js';
import { H5, type Hid } from './lib.js';
import { describeType } from './types.js';

// ---------------------------------------------------------------------------------------------
// Dataspaces

/** A dataspace's extent. `maxdims` uses `Infinity` for H5S_UNLIMITED. */
export interface SpaceInfo {
  cls: 'H5S_NULL' | 'H5S_SCALAR' | 'H5S_SIMPLE';
  dims: number[];
  maxdims: number[];
}

/** Describe an open dataspace. */
export function describeSpace(sid: Hid): SpaceInfo {
  const cls = H5.H5Sget_simple_extent_type(sid) as number;
  if (cls === C.H5S_NULL) return { cls: 'H5S_NULL', dims: [], maxdims: [] };
  if (cls === C.H5S_SCALAR) return { cls: 'H5S_SCALAR', dims: [], maxdims: [] };
  const rank = H5.H5Sget_simple_extent_ndims(sid) as number;
  const d = new BigUint64Array(Math.max(rank, 1));
  const m = new BigUint64Array(Math.max(rank, 1));
  H5.H5Sget_simple_extent_dims(sid, d, m);
  const dims: number[] = [];
  const maxdims: number[] = [];
  for (let i = 0; i < rank; i++) {
    dims.push(Number(d[i]));
    maxdims.push(m[i] === C.H5S_UNLIMITED ? Infinity : Number(m[i]));
  }
  return { cls: 'H5S_SIMPLE', dims, maxdims };
}

/** Create a dataspace. `maxdims` entries may be `Infinity` (unlimited); omitted = fixed. */
export function createSpace(space: SpaceInfo): Hid {
  if (space.cls === 'H5S_NULL') return H5.H5Screate(C.H5S_NULL);
  if (space.cls === 'H5S_SCALAR') return H5.H5Screate(C.H5S_SCALAR);
  const dims = new BigUint64Array(space.dims.map((d) => BigInt(d)));
  const max = space.maxdims.length
    ? new BigUint64Array(space.maxdims.map((d) => (d === Infinity ? C.H5S_UNLIMITED : BigInt(d))))
    : null;
  return H5.H5Screate_simple(space.dims.length, dims, max);
}

/** A selection in a dataset's dataspace, as libhdf5 takes it. */
export type SpaceSelection =
  | { kind: 'all' }
  | { kind: 'hyperslab'; start: number[]; step: number[]; count: number[] }
  | { kind: 'points'; coords: BigUint64Array; count: number };

export function applySelection(sid: Hid, sel: SpaceSelection): void {
  if (sel.kind === 'all') {
    H5.H5Sselect_all(sid);
  } else if (sel.kind === 'hyperslab') {
    const start = new BigUint64Array(sel.start.map(BigInt));
    const step = new BigUint64Array(sel.step.map(BigInt));
    const count = new BigUint64Array(sel.count.map(BigInt));
    H5.H5Sselect_hyperslab(sid, C.H5S_SELECT_SET, start, step, count, null);
  } else if (sel.count === 0) {
    H5.H5Sselect_none(sid);
  } else {
    H5.H5Sselect_elements(sid, C.H5S_SELECT_SET, BigInt(sel.count), sel.coords);
  }
}

export function memSpace(n: number): Hid {
  return H5.H5Screate_simple(1, new BigUint64Array([BigInt(n)]), null);
}

/**
 * The memory dataspace for a selection: for a hyperslab, the shape of its counts (same rank as
 * the file selection, so libhdf5 takes its fast per-chunk path; a 1-D memory space for a 2-D
 * hyperslab of a chunked dataset reads 3-5x slower); 1-D otherwise.
 */
export function memSpaceFor(sel: SpaceSelection, n: number): Hid {
  if (sel.kind === 'hyperslab' && sel.count.length > 1) {
    return H5.H5Screate_simple(sel.count.length, new BigUint64Array(sel.count.map(BigInt)), null);
  }
  return memSpace(n);
}

/**
 * The dataset's file dataspace with `sel` applied, and a memory dataspace of `n` elements shaped
 * for it (scalar for a scalar dataset). Close both with `closeSpaces`.
 */
export function selectedSpaces(did: Hid, sel: SpaceSelection, n: number, scalar: boolean): { fsid: Hid; msid: Hid } {
  const fsid = H5.H5Dget_space(did);
  try {
    if (!scalar) applySelection(fsid, sel);
    return { fsid, msid: scalar ? H5.H5Screate(C.H5S_SCALAR) : memSpaceFor(sel, n) };
  } catch (e) {
    H5.H5Sclose(fsid);
    throw e;
  }
}

export function closeSpaces(s: { fsid: Hid; msid: Hid }): void {
  try {
    H5.H5Sclose(s.msid);
  } finally {
    H5.H5Sclose(s.fsid);
  }
}

/** Describe a type and a dataspace, closing both ids. */
export function typeAndSpace(tid: Hid, sid: Hid, committedId?: (tid: Hid) => string | undefined): { type: TypeJson; space: SpaceInfo } {
  try {
    return { type: describeType(tid, committedId), space: describeSpace(sid) };
  } finally {
    H5.H5Tclose(tid);
    H5.H5Sclose(sid);
  }
}
