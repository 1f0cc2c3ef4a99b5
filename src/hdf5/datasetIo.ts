/**
 * Datasets: creation properties, storage (chunks, filters, external and virtual), metadata, and
 * value reads and writes in the wire format (wire-reference 3.5; `memory.ts` converts
 * variable-length parts and references).
 * Part of the libhdf5 layer's dataset and attribute I/O (io.ts re-exports it whole).
 */
import type { TypeJson } from '../codec/types.js';
import * as C from './constants.js';
import { datasetIoOnWorker } from './heavy.js';
import { G, H5, H5Dget_num_chunks, type Hid, LCPL_UTF8 } from './lib.js';
import { type RefCodec, hasIndirect, memSize, memToWire, wireToMem } from './memory.js';
import { createType, describeType } from './types.js';
import { type SpaceInfo, type SpaceSelection, closeSpaces, createSpace, describeSpace, selectedSpaces, typeAndSpace } from './spaces.js';

// ---------------------------------------------------------------------------------------------
// Datasets

/** Open dataset facts needed to answer GET /datasets/<id>. */
export interface DatasetMeta {
  type: TypeJson;
  space: SpaceInfo;
  creation: DatasetCreation;
}

/** A filter in a dataset's pipeline. */
export interface FilterInfo {
  id: number;
  /** Filter name as recorded in the file (may be empty). */
  name: string;
  flags: number;
  cdValues: number[];
}

/** One file of an external file list (`H5Pget_external`): raw bytes `[offset, offset+size)`. */
export interface ExternalFile {
  /** The name as stored in the file (relative names are resolved against the file's folder). */
  name: string;
  offset: number;
  /** Bytes reserved in the file; `Infinity` for `H5F_UNLIMITED`. */
  size: number;
}

/**
 * A selection of a virtual dataset mapping (`H5Pget_virtual_vspace`/`srcspace`): the class,
 * and for a regular hyperslab its start/stride/count/block (`count` entries may be `Infinity`
 * for `H5S_UNLIMITED`), else its bounds.
 */
export interface SelectionInfo {
  cls: 'H5S_SEL_NONE' | 'H5S_SEL_POINTS' | 'H5S_SEL_HYPERSLABS' | 'H5S_SEL_ALL';
  start?: number[];
  stride?: number[];
  count?: number[];
  block?: number[];
  /** Bounds (inclusive) of an irregular selection. */
  bounds?: { start: number[]; end: number[] };
}

/** One mapping of a virtual dataset: which elements come from which dataset of which file. */
export interface VirtualMapping {
  /** Source file name as stored: `.` for the same file; may hold `%b` (block number). */
  file: string;
  /** Source dataset path as stored; may hold `%b`. */
  dataset: string;
  virtual: SelectionInfo;
  source: SelectionInfo;
  /** True when the virtual selection is unlimited (the extent depends on the sources). */
  unlimited: boolean;
}

/** What a dataset creation property list holds. */
export interface DatasetCreation {
  layout: number;
  chunks?: number[];
  /** Contiguous layout kept in other files (`H5Pset_external`). */
  external?: ExternalFile[];
  /** `H5D_VIRTUAL` layout: the mappings (`H5Pset_virtual`). */
  virtual?: VirtualMapping[];
  filters: FilterInfo[];
  /** `H5D_FILL_VALUE_*` status. */
  fillStatus: number;
  /** User-defined fill value in the wire format (absent unless fillStatus is user-defined). */
  fillValue?: Buffer;
  fillTime: number;
  allocTime: number;
  /** Attribute creation order tracked and indexed (h5py `track_order`: `CreateOrder: 1`; C.creationOrderFlags). */
  trackAttrOrder: boolean;
}

/** Read a dataset creation property list (fill value converted with the dataset's type). */
export function describeCreation(dcpl: Hid, type: TypeJson, refs?: RefCodec): DatasetCreation {
  const layout = H5.H5Pget_layout(dcpl) as number;
  let chunks: number[] | undefined;
  if (layout === C.H5D_CHUNKED) {
    const d = new BigUint64Array(32);
    const n = H5.H5Pget_chunk(dcpl, 32, d) as number;
    chunks = Array.from(d.slice(0, Math.max(n, 0)), Number);
  }
  const storage = describeStorage(dcpl, layout);
  const filters: FilterInfo[] = [];
  const nf = H5.H5Pget_nfilters(dcpl) as number;
  for (let i = 0; i < nf; i++) {
    const flags = [0];
    const nelm = [32];
    const cd = new Uint32Array(32);
    const name = Buffer.alloc(256);
    const cfg = [0];
    const id = H5.H5Pget_filter2(dcpl, i, flags, nelm, cd, 256, name, cfg) as number;
    const end = name.indexOf(0);
    filters.push({
      id,
      name: name.toString('latin1', 0, end < 0 ? 256 : end),
      flags: flags[0],
      cdValues: Array.from(cd.slice(0, Math.min(nelm[0], 32))),
    });
  }
  const status = [0];
  H5.H5Pfill_value_defined(dcpl, status);
  let fillValue: Buffer | undefined;
  if (status[0] === C.H5D_FILL_VALUE_USER_DEFINED) {
    fillValue = readFillValue(dcpl, type, refs);
  }
  const ft = [0];
  H5.H5Pget_fill_time(dcpl, ft);
  const at = [0];
  H5.H5Pget_alloc_time(dcpl, at);
  const ao = [0];
  H5.H5Pget_attr_creation_order(dcpl, ao);
  return {
    layout,
    chunks,
    ...storage,
    filters,
    fillStatus: status[0],
    fillValue,
    fillTime: ft[0],
    allocTime: at[0],
    trackAttrOrder: (ao[0] & 3) === 3,
  };
}

/** The files a dataset's values live in besides its own: external file list, virtual mappings. */
export function describeStorage(dcpl: Hid, layout = H5.H5Pget_layout(dcpl) as number): { external?: ExternalFile[]; virtual?: VirtualMapping[] } {
  if (layout === C.H5D_CONTIGUOUS) {
    const n = H5.H5Pget_external_count(dcpl) as number;
    if (n <= 0) return {};
    const external: ExternalFile[] = [];
    for (let i = 0; i < n; i++) {
      const name = Buffer.alloc(4097);
      const off = [0n];
      const size = [0n];
      H5.H5Pget_external(dcpl, i, 4097, name, off, size);
      const end = name.indexOf(0);
      const sz = BigInt(size[0]);
      external.push({
        name: name.toString('utf8', 0, end < 0 ? 4096 : end),
        offset: Number(off[0]),
        size: sz === C.H5S_UNLIMITED ? Infinity : Number(sz),
      });
    }
    return { external };
  }
  if (layout === C.H5D_VIRTUAL) {
    const count = [0n];
    H5.H5Pget_virtual_count(dcpl, count);
    const virtual: VirtualMapping[] = [];
    for (let i = 0; i < Number(count[0]); i++) {
      const vspace = H5.H5Pget_virtual_vspace(dcpl, BigInt(i));
      const sspace = H5.H5Pget_virtual_srcspace(dcpl, BigInt(i));
      try {
        const v = describeSelection(vspace);
        virtual.push({
          file: virtualString(H5.H5Pget_virtual_filename, dcpl, i),
          dataset: virtualString(H5.H5Pget_virtual_dsetname, dcpl, i),
          virtual: v,
          source: describeSelection(sspace),
          unlimited: (v.count ?? []).some((c) => c === Infinity),
        });
      } finally {
        H5.H5Sclose(vspace);
        H5.H5Sclose(sspace);
      }
    }
    return { virtual };
  }
  return {};
}

function virtualString(fn: (...a: unknown[]) => unknown, dcpl: Hid, i: number): string {
  const n = Number(fn(dcpl, BigInt(i), null, 0n));
  const buf = Buffer.alloc(n + 1);
  fn(dcpl, BigInt(i), buf, BigInt(n + 1));
  return buf.toString('utf8', 0, n);
}

/** The selection of a dataspace, as `SelectionInfo`. */
export function describeSelection(sid: Hid): SelectionInfo {
  const t = H5.H5Sget_select_type(sid) as number;
  if (t === C.H5S_SEL_ALL) return { cls: 'H5S_SEL_ALL' };
  if (t === C.H5S_SEL_NONE) return { cls: 'H5S_SEL_NONE' };
  const rank = Math.max(H5.H5Sget_simple_extent_ndims(sid) as number, 0);
  const num = (a: BigUint64Array) => Array.from(a, (x) => (x === C.H5S_UNLIMITED ? Infinity : Number(x)));
  if (t === C.H5S_SEL_HYPERSLABS && (H5.H5Sis_regular_hyperslab(sid) as boolean)) {
    const start = new BigUint64Array(rank);
    const stride = new BigUint64Array(rank);
    const count = new BigUint64Array(rank);
    const block = new BigUint64Array(rank);
    H5.H5Sget_regular_hyperslab(sid, start, stride, count, block);
    return { cls: 'H5S_SEL_HYPERSLABS', start: num(start), stride: num(stride), count: num(count), block: num(block) };
  }
  const start = new BigUint64Array(rank);
  const end = new BigUint64Array(rank);
  try {
    H5.H5Sget_select_bounds(sid, start, end);
  } catch {
    return { cls: t === C.H5S_SEL_POINTS ? 'H5S_SEL_POINTS' : 'H5S_SEL_HYPERSLABS' };
  }
  return { cls: t === C.H5S_SEL_POINTS ? 'H5S_SEL_POINTS' : 'H5S_SEL_HYPERSLABS', bounds: { start: num(start), end: num(end) } };
}

/**
 * The extent stored for a virtual dataset (from its first mapping's virtual dataspace), without
 * asking libhdf5 for the dataset's dataspace: for a virtual dataset with unlimited mappings,
 * `H5Dget_space` opens the source files to compute the extent.
 */
export function storedVirtualSpace(did: Hid): SpaceInfo | undefined {
  const dcpl = H5.H5Dget_create_plist(did);
  try {
    const count = [0n];
    H5.H5Pget_virtual_count(dcpl, count);
    if (Number(count[0]) === 0) return undefined;
    const vspace = H5.H5Pget_virtual_vspace(dcpl, 0n);
    try {
      return describeSpace(vspace);
    } finally {
      H5.H5Sclose(vspace);
    }
  } finally {
    H5.H5Pclose(dcpl);
  }
}

/** Storage of an open dataset: layout, external file list, virtual mappings (no file opened). */
export function datasetStorage(did: Hid): { layout: number; external?: ExternalFile[]; virtual?: VirtualMapping[] } {
  const dcpl = H5.H5Dget_create_plist(did);
  try {
    const layout = H5.H5Pget_layout(dcpl) as number;
    return { layout, ...describeStorage(dcpl, layout) };
  } finally {
    H5.H5Pclose(dcpl);
  }
}

function readFillValue(dcpl: Hid, type: TypeJson, refs?: RefCodec): Buffer {
  const mt = createType(type);
  try {
    const mem = Buffer.alloc(Math.max(memSize(type), 1));
    H5.H5Pget_fill_value(dcpl, mt, mem);
    if (!hasIndirect(type)) return mem.subarray(0, memSize(type));
    const wire = memToWire(mem, type, 1, refs);
    const sid = H5.H5Screate(C.H5S_SCALAR);
    try {
      H5.H5Dvlen_reclaim(mt, sid, C.H5P_DEFAULT, mem);
    } finally {
      H5.H5Sclose(sid);
    }
    return wire;
  } finally {
    H5.H5Tclose(mt);
  }
}

/**
 * Type, dataspace and creation properties of an open dataset.
 * @param committedId maps a committed datatype (by open type id) to its REST id
 */
export function describeDataset(did: Hid, committedId?: (tid: Hid) => string | undefined, refs?: RefCodec): DatasetMeta {
  const { type, space } = datasetTypeAndSpace(did, committedId);
  const dcpl = H5.H5Dget_create_plist(did);
  try {
    return { type, space, creation: describeCreation(dcpl, type, refs) };
  } finally {
    H5.H5Pclose(dcpl);
  }
}


/** Type only (no dataspace: see `storedVirtualSpace`). */
export function datasetType(did: Hid, committedId?: (tid: Hid) => string | undefined): TypeJson {
  const tid = H5.H5Dget_type(did);
  try {
    return describeType(tid, committedId);
  } finally {
    H5.H5Tclose(tid);
  }
}

/** Type and dataspace only (cheap; for value reads). */
export function datasetTypeAndSpace(did: Hid, committedId?: (tid: Hid) => string | undefined): { type: TypeJson; space: SpaceInfo } {
  return typeAndSpace(H5.H5Dget_type(did), H5.H5Dget_space(did), committedId);
}

/**
 * Read `n` selected elements of a dataset into a wire-format Buffer.
 * @param memType a type from `createType(type)` (the caller may reuse it across pages)
 * @param into optional destination for fixed-size types (must be n*size bytes)
 */
export function readDataset(
  did: Hid,
  type: TypeJson,
  memType: Hid,
  sel: SpaceSelection,
  n: number,
  scalar: boolean,
  refs?: RefCodec,
  into?: Buffer,
): Buffer {
  if (n === 0) return Buffer.alloc(0);
  const { fsid, msid } = selectedSpaces(did, sel, n, scalar);
  try {
    const size = memSize(type);
    if (!hasIndirect(type)) {
      const buf = into ?? Buffer.allocUnsafe(n * size);
      H5.H5Dread(did, memType, msid, fsid, C.H5P_DEFAULT, buf);
      return buf;
    }
    const mem = Buffer.alloc(n * size);
    H5.H5Dread(did, memType, msid, fsid, C.H5P_DEFAULT, mem);
    try {
      return memToWire(mem, type, n, refs);
    } finally {
      H5.H5Dvlen_reclaim(memType, msid, C.H5P_DEFAULT, mem);
    }
  } finally {
    closeSpaces({ fsid, msid });
  }
}

/**
 * What a write of `n` elements of `wire` needs for `H5Dwrite`: the elements in memory form and
 * the selected dataspaces (undefined for no element); `done()` closes the dataspaces and lets the
 * memory's referenced buffers go. Shared by `writeDataset` and `writeDatasetOnWorker`.
 * @throws H5StoreError BadRequest when `wire` does not hold exactly `n` elements.
 */
function prepareWrite(did: Hid, type: TypeJson, sel: SpaceSelection, n: number, scalar: boolean, wire: Buffer, refs?: RefCodec) {
  const { mem, keep } = wireToMem(wire, type, n, refs);
  if (n === 0) return undefined;
  const spaces = selectedSpaces(did, sel, n, scalar);
  return {
    mem,
    spaces,
    done: () => {
      closeSpaces(spaces);
      keep.length = 0;
    },
  };
}

/**
 * Write `n` elements in the wire format to the selected elements of a dataset.
 * @throws H5StoreError BadRequest when `wire` does not hold exactly `n` elements.
 */
export function writeDataset(
  did: Hid,
  type: TypeJson,
  memType: Hid,
  sel: SpaceSelection,
  n: number,
  scalar: boolean,
  wire: Buffer,
  refs?: RefCodec,
): void {
  const w = prepareWrite(did, type, sel, n, scalar, wire, refs);
  if (!w) return;
  try {
    H5.H5Dwrite(did, memType, w.spaces.msid, w.spaces.fsid, C.H5P_DEFAULT, w.mem);
  } finally {
    w.done();
  }
}

/**
 * `writeDataset` with the `H5Dwrite` itself on the worker thread (src/hdf5/heavy.ts): for writes
 * into chunks so large that one call would keep the server from answering anyone else.
 */
export async function writeDatasetOnWorker(
  did: Hid,
  type: TypeJson,
  memType: Hid,
  sel: SpaceSelection,
  n: number,
  scalar: boolean,
  wire: Buffer,
  refs?: RefCodec,
): Promise<void> {
  const w = prepareWrite(did, type, sel, n, scalar, wire, refs);
  if (!w) return;
  try {
    await datasetIoOnWorker('write', did, memType, w.spaces.msid, w.spaces.fsid, C.H5P_DEFAULT, w.mem);
  } finally {
    w.done();
  }
}

/**
 * `readDataset` of a fixed-size type (no variable-length parts, no references) with the
 * `H5Dread` itself on the worker thread (src/hdf5/heavy.ts).
 */
export async function readDatasetOnWorker(did: Hid, type: TypeJson, memType: Hid, sel: SpaceSelection, n: number, scalar: boolean): Promise<Buffer> {
  if (n === 0) return Buffer.alloc(0);
  if (hasIndirect(type)) throw new Error('readDatasetOnWorker: fixed-size types only');
  const buf = Buffer.allocUnsafe(n * memSize(type));
  const spaces = selectedSpaces(did, sel, n, scalar);
  try {
    await datasetIoOnWorker('read', did, memType, spaces.msid, spaces.fsid, C.H5P_DEFAULT, buf);
  } finally {
    closeSpaces(spaces);
  }
  return buf;
}

/**
 * Whether a dataset's file type is the type `tid` exactly (`H5Tequal`): then `H5Dread` into
 * `tid` converts nothing and the stored bytes are the bytes read.
 */
export function datasetTypeEquals(did: Hid, tid: Hid): boolean {
  const ft = H5.H5Dget_type(did);
  try {
    return H5.H5Tequal(ft, tid) as boolean;
  } finally {
    H5.H5Tclose(ft);
  }
}

/** Creation properties of an open dataset; `type` (its type JSON) when the caller has it. */
export function describeCreationOf(did: Hid, type?: TypeJson, refs?: RefCodec): DatasetCreation {
  const dcpl = H5.H5Dget_create_plist(did);
  try {
    return describeCreation(dcpl, type ?? datasetType(did), refs);
  } finally {
    H5.H5Pclose(dcpl);
  }
}

/**
 * Where a dataset's raw data lies in its own file when its stored bytes are exactly what
 * `H5Dread` into `memType` gives: contiguous layout (no filters: they need chunks), no external
 * storage, storage allocated (an unallocated dataset reads as fill values), and `memType` equal
 * to the stored type (`H5Tequal`: no conversion). The caller can then read values with plain
 * file reads (store/values/read.ts `fileBytePages`).
 * @returns the absolute file offset of element 0 (`H5Dget_offset`, which counts a user block)
 *   and the bytes allocated (`H5Dget_storage_size`), or undefined when any condition fails
 */
export function storedContiguous(did: Hid, memType: Hid, creation: DatasetCreation): { offset: number; bytes: number } | undefined {
  if (creation.layout !== C.H5D_CONTIGUOUS || creation.external?.length || creation.filters.length > 0) return undefined;
  const bytes = Number(H5.H5Dget_storage_size(did));
  if (!(bytes > 0)) return undefined;
  const offset = BigInt(H5.H5Dget_offset(did) as number | bigint);
  if (offset === C.HADDR_UNDEF || offset > BigInt(Number.MAX_SAFE_INTEGER) - BigInt(bytes)) return undefined;
  if (!datasetTypeEquals(did, memType)) return undefined;
  return { offset: Number(offset), bytes };
}

/** Bytes per element in memory (pointer size for variable-length parts), for chunk sizing. */
export function fixedOrPointerSize(type: TypeJson): number {
  return memSize(type);
}

/**
 * Storage facts of a dataset (`GET /datasets/<id>?verbose=1`, wire-reference 2.3): the bytes
 * allocated for its raw data (`H5Dget_storage_size`) and its allocated chunks
 * (`H5Dget_num_chunks` for chunked layouts; 1 for a contiguous dataset with allocated storage,
 * 0 for compact or unallocated storage, or when the library lacks the call).
 */
export function storageInfo(did: Hid): { numChunks: number; allocatedSize: number } {
  const allocatedSize = Number(H5.H5Dget_storage_size(did));
  const dcpl = H5.H5Dget_create_plist(did);
  let layout: number;
  try {
    layout = H5.H5Pget_layout(dcpl) as number;
  } finally {
    H5.H5Pclose(dcpl);
  }
  let numChunks = 0;
  if (layout === C.H5D_CHUNKED && H5Dget_num_chunks) {
    const n = [0n];
    const sid = H5.H5Dget_space(did);
    try {
      H5Dget_num_chunks(did, sid, n);
    } finally {
      H5.H5Sclose(sid);
    }
    numChunks = Number(n[0]);
  } else if (layout === C.H5D_CONTIGUOUS && allocatedSize > 0) {
    numChunks = 1;
  }
  return { numChunks, allocatedSize };
}

/**
 * A dataset's chunk dims and filter pipeline as h5py shows them (`dset.chunks`, and h5grove's
 * `{id, name}` per filter): `null` when not chunked / without filters. Only the calls needed
 * (a group's metadata in h5grove's API describes every dataset in it).
 */
export function datasetChunking(did: Hid): { chunks: number[] | null; filters: { id: number; name: string }[] | null } {
  const dcpl = H5.H5Dget_create_plist(did);
  try {
    let chunks: number[] | null = null;
    if ((H5.H5Pget_layout(dcpl) as number) === C.H5D_CHUNKED) {
      const d = new BigUint64Array(32);
      const n = H5.H5Pget_chunk(dcpl, 32, d) as number;
      chunks = Array.from(d.slice(0, Math.max(n, 0)), Number);
    }
    const nf = H5.H5Pget_nfilters(dcpl) as number;
    const filters: { id: number; name: string }[] = [];
    for (let i = 0; i < nf; i++) {
      const name = Buffer.alloc(256);
      const id = H5.H5Pget_filter2(dcpl, i, [0], [0], null, 256, name, [0]) as number;
      const end = name.indexOf(0);
      filters.push({ id, name: name.toString('latin1', 0, end < 0 ? 256 : end) });
    }
    return { chunks, filters: filters.length ? filters : null };
  } finally {
    H5.H5Pclose(dcpl);
  }
}

/** Open a dataset by name relative to `loc` (no external links). */
export function openDataset(loc: Hid, name: string): Hid {
  return H5.H5Dopen2(loc, name, C.H5P_DEFAULT);
}

/** `H5Dset_extent`. */
export function setExtent(did: Hid, dims: number[]): void {
  H5.H5Dset_extent(did, new BigUint64Array(dims.map(BigInt)));
}

/** Options for creating a dataset (see wire-reference 2.3 and 3.4). */
export interface DatasetCreateOptions {
  layout?: 'H5D_CONTIGUOUS' | 'H5D_CHUNKED' | 'H5D_COMPACT';
  chunks?: number[];
  /**
   * Filters in pipeline order. Filters set with `H5Pset_filter` are optional unless
   * `mandatory` (as h5py sets them): a chunk the filter cannot shrink is stored unfiltered
   * instead of failing the write.
   */
  filters?: { id: number; cdValues: number[]; mandatory?: boolean }[];
  /** Fill value in the wire format. */
  fillValue?: Buffer;
  fillTime?: number;
  allocTime?: number;
  /** Index attribute creation order too (`CreateOrder`); it is tracked in any case (C.creationOrderFlags). */
  trackAttrOrder?: boolean;
}

/**
 * Create a dataset, anonymous when `name` is undefined. `fileType` is an open datatype (a
 * committed one is shared, not copied). Returns the open dataset id.
 */
export function createDataset(
  loc: Hid,
  name: string | undefined,
  fileType: Hid,
  type: TypeJson,
  space: SpaceInfo,
  opts: DatasetCreateOptions,
  refs?: RefCodec,
): Hid {
  const dcpl = H5.H5Pcreate(G.P_DATASET_CREATE);
  const sid = createSpace(space);
  try {
    if (opts.layout === 'H5D_COMPACT') H5.H5Pset_layout(dcpl, C.H5D_COMPACT);
    else if (opts.layout === 'H5D_CONTIGUOUS') H5.H5Pset_layout(dcpl, C.H5D_CONTIGUOUS);
    if (opts.chunks) H5.H5Pset_chunk(dcpl, opts.chunks.length, new BigUint64Array(opts.chunks.map(BigInt)));
    for (const f of opts.filters ?? []) {
      if (f.id === C.H5Z_FILTER_DEFLATE) H5.H5Pset_deflate(dcpl, f.cdValues[0] ?? 4);
      else if (f.id === C.H5Z_FILTER_SHUFFLE) H5.H5Pset_shuffle(dcpl);
      else if (f.id === C.H5Z_FILTER_FLETCHER32) H5.H5Pset_fletcher32(dcpl);
      else if (f.id === C.H5Z_FILTER_NBIT) H5.H5Pset_nbit(dcpl);
      else if (f.id === C.H5Z_FILTER_SCALEOFFSET) H5.H5Pset_scaleoffset(dcpl, f.cdValues[0], f.cdValues[1]);
      else
        H5.H5Pset_filter(
          dcpl,
          f.id,
          f.mandatory ? C.H5Z_FLAG_MANDATORY : C.H5Z_FLAG_OPTIONAL,
          BigInt(f.cdValues.length),
          new Uint32Array(f.cdValues),
        );
    }
    if (opts.fillValue) {
      const mt = createType(type);
      try {
        const { mem, keep } = wireToMem(opts.fillValue, type, 1, refs);
        H5.H5Pset_fill_value(dcpl, mt, mem);
        keep.length = 0;
      } finally {
        H5.H5Tclose(mt);
      }
    }
    if (opts.fillTime !== undefined) H5.H5Pset_fill_time(dcpl, opts.fillTime);
    if (opts.allocTime !== undefined) H5.H5Pset_alloc_time(dcpl, opts.allocTime);
    H5.H5Pset_attr_creation_order(dcpl, C.creationOrderFlags(opts.trackAttrOrder));
    return name === undefined
      ? H5.H5Dcreate_anon(loc, fileType, sid, dcpl, C.H5P_DEFAULT)
      : H5.H5Dcreate2(loc, name, fileType, sid, LCPL_UTF8, dcpl, C.H5P_DEFAULT);
  } finally {
    H5.H5Sclose(sid);
    H5.H5Pclose(dcpl);
  }
}

/** Whether libhdf5 can use a filter here (built in, or a loadable plugin). */
export function filterAvailable(id: number): boolean {
  try {
    if (!(H5.H5Zfilter_avail(id) as boolean)) return false;
    const cfg = [0];
    H5.H5Zget_filter_info(id, cfg);
    return (cfg[0] & C.H5Z_FILTER_CONFIG_ENCODE_ENABLED) !== 0;
  } catch {
    return false;
  }
}
