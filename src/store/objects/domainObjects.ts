/**
 * Whole-domain views (wire-reference 1.3): the JSON of any object by kind, `domain_objs`
 * (`GET /?getobjs=1`), and the `verbose=1` statistics computed from the file.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import * as io from '../../hdf5/io.js';
import * as dsets from './datasets.js';
import * as dtypes from './datatypes.js';
import type { DomainFile } from './domainFile.js';
import * as groups from './groups.js';
import type { AttrValueOptions } from './attributes.js';
import { WireValue } from '../../codec/json.js';
import { type TypeJson, isVariableLength, typeSize } from '../../codec/types.js';
import { H5StoreError } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import { Hdf5Error } from '../../hdf5/lib.js';
import { bytesOf } from '../access/limits.js';
import { storageKindOf } from '../access/reach.js';
import { filterSupport } from '../../hdf5/filters.js';

/** Options of an object's JSON in whole-domain views and path lookups. */
export interface ObjectJsonOptions {
  includeLinks?: boolean;
  includeAttrs?: boolean;
  createOrder?: boolean;
  /** Values in the `attributes` dict (`IncludeData`, `max_data_size`). */
  attrValues?: AttrValueOptions;
}

/** The JSON of an open object of any kind, as GET /groups|datasets|datatypes/<id> shows it (without hrefs). */
export function objectJsonOf(f: DomainFile, kind: ObjectKind, oid: Hid, addr: bigint, opts: ObjectJsonOptions = {}): Record<string, unknown> {
  const json =
    kind === 'group'
      ? groups.groupJsonOf(f, oid, addr, opts)
      : kind === 'dataset'
        ? dsets.datasetJsonOf(f, oid, addr, opts)
        : dtypes.datatypeJsonOf(f, oid, addr, opts);
  return json as unknown as Record<string, unknown>;
}

/** Most objects a domain may have for `getobjs=1` to list them (HSDS `domain_req_max_objects_limit`). */
export const DOMAIN_OBJS_MAX = 500;

/** Most bytes of a dataset's values that `domain_objs` includes (its "small" datasets). */
export const DOMAIN_OBJS_VALUE_BYTES = 4096;
/** Most elements of a variable-length dataset whose values `domain_objs` includes. */
const DOMAIN_OBJS_VALUE_ELEMENTS = 256;
/** Largest chunk a dataset may have for `domain_objs` to read its values (a small read of a huge compressed chunk is not small). */
const DOMAIN_OBJS_CHUNK_BYTES = 1024 * 1024;

/**
 * The values of a small dataset as `domain_objs` includes them (HSDS 1.0, issue #25; h5pyd 1.0
 * reads them from there instead of asking): the whole dataset as JSON when it holds at most
 * DOMAIN_OBJS_VALUE_BYTES (fixed-size types) or DOMAIN_OBJS_VALUE_ELEMENTS elements whose values
 * take at most that many bytes (variable-length types), is stored in this file (no external
 * files or virtual sources: those need their own access checks), has chunks of at most
 * DOMAIN_OBJS_CHUNK_BYTES and filters this server can decode. Undefined otherwise, or when the
 * read fails (the client then reads the values itself, and meets the error there; the JSON is
 * written after this returns, so a value that cannot be shown must be left out here, or one such
 * dataset would make the whole `getobjs` fail and h5pyd 1.0 could not open the file).
 */
function smallDatasetValue(f: DomainFile, did: Hid, addr: bigint, type: TypeJson): WireValue | undefined {
  if (storageKindOf(f, did, addr) !== 'plain') return undefined;
  const { space } = io.datasetTypeAndSpace(did);
  if (space.cls === 'H5S_NULL') return undefined;
  const dims = space.cls === 'H5S_SCALAR' ? [] : space.dims;
  const n = dims.reduce((a, b) => a * b, 1);
  if (n === 0) return undefined;
  const variable = isVariableLength(type);
  if (variable ? n > DOMAIN_OBJS_VALUE_ELEMENTS : n * typeSize(type) > DOMAIN_OBJS_VALUE_BYTES) return undefined;
  const creation = io.describeCreationOf(did, type);
  if (creation.layout === C.H5D_CHUNKED && bytesOf(creation.chunks ?? [], io.fixedOrPointerSize(type)) > DOMAIN_OBJS_CHUNK_BYTES) return undefined;
  if (creation.filters.some((fi) => !filterSupport(fi.id, fi.cdValues).read)) return undefined;
  try {
    const mt = io.createType(type);
    try {
      const wire = io.readDataset(did, type, mt, { kind: 'all' }, n, space.cls === 'H5S_SCALAR', f.refs);
      if (wire.length > DOMAIN_OBJS_VALUE_BYTES) return undefined;
      return new WireValue(wire, type, dims);
    } finally {
      io.closeType(mt);
    }
  } catch (e) {
    if (e instanceof Hdf5Error || e instanceof H5StoreError) return undefined;
    throw e;
  }
}

/**
 * `domain_objs` (wire-reference 1.3, 2.1, 2.6): every object of the domain (the root, everything
 * reachable from it by hard links, objects created without a link) keyed by id, as HSDS 1.0
 * answers `getobjs` (issue #25: h5pyd 1.0 asks for it on every open, without `include_attrs`,
 * and takes what it gets as the objects): groups with a `links` dict, every object with an
 * `attributes` dict (values included) and its creation properties, small datasets with their
 * `value` (`smallDatasetValue`); dicts in creation order for objects that track it (h5pyd sorts
 * them by `created`, a stable sort). Undefined when the domain has more than `max` objects
 * (h5pyd then asks per object). `includeAttrs` (HSDS 0.9's parameter) changes nothing now.
 * @param all every object of the file (Store `readWalked`), else found here
 */
export function domainObjects(f: DomainFile, opts: { includeAttrs?: boolean; max?: number } = {}, all = f.allObjects()): Record<string, Record<string, unknown>> | undefined {
  if (all.size > (opts.max ?? DOMAIN_OBJS_MAX)) return undefined;
  const out: Record<string, Record<string, unknown>> = {};
  const root = f.rootAddr;
  const order = [root, ...[...all.keys()].filter((a) => a !== root)];
  for (const addr of order) {
    const kind = all.get(addr) ?? (addr === root ? 'group' : undefined);
    if (!kind) continue;
    f.noteObject(addr, kind);
    h5.withObject(f.h, addr, (oid) => {
      const json = objectJsonOf(f, kind, oid, addr, { includeLinks: kind === 'group', includeAttrs: true, createOrder: true });
      delete json.domain;
      if (kind === 'dataset') {
        const value = smallDatasetValue(f, oid, addr, json.type as TypeJson);
        if (value !== undefined) json.value = value;
      }
      out[json.id as string] = json;
    });
  }
  return out;
}

/** `verbose=1` statistics of a domain file (wire-reference 1.3; docs/architecture.md). */
export interface DomainStats {
  num_groups: number;
  num_datasets: number;
  num_datatypes: number;
  /** Groups, datasets, committed datatypes and allocated chunks (HSDS counts stored objects). */
  num_objects: number;
  /** Allocated chunks of chunked datasets, plus one per contiguous dataset with storage. */
  num_chunks: number;
  /** Bytes of raw data allocated in the file. */
  allocated_bytes: number;
  /** Everything else in the file: object headers, indexes, heaps, free space. */
  metadata_bytes: number;
  /** File size in bytes. */
  total_size: number;
  linked_bytes: number;
  num_linked_chunks: number;
  /** MD5 of the file's bytes, for files up to MD5_MAX_BYTES; absent beyond. */
  md5_sum?: string;
  /** When these statistics were computed (seconds since the epoch); h5pyd reads it after `rescan`. */
  scan_info: { scan_start: number; scan_complete: number };
}

/** Files up to this size get an `md5_sum` (reading them is cheap next to the traversal). */
export const MD5_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Compute the statistics of an open domain file: one traversal of every object (or `all`, the
 * result of one: Store `readWalked`), one storage query per dataset, and the MD5 of small files.
 * @param pause awaited every 256 datasets (Store `readWalked`: the event loop runs between them)
 */
export async function computeDomainStats(f: DomainFile, all = f.allObjects(), pause?: () => Promise<void>): Promise<DomainStats> {
  const t0 = Date.now() / 1000;
  let g = 0;
  let ds = 0;
  let dt = 0;
  let chunks = 0;
  let allocated = 0;
  for (const [addr, kind] of all) {
    if (kind === 'group') g++;
    else if (kind === 'datatype') dt++;
    else if (kind === 'dataset') {
      ds++;
      if (pause && (ds & 255) === 0) await pause();
      const st = h5.withObject(f.h, addr, (did) => io.storageInfo(did));
      allocated += st.allocatedSize;
      chunks += st.numChunks;
    }
  }
  const size = fs.statSync(f.path).size;
  const out: DomainStats = {
    num_groups: g,
    num_datasets: ds,
    num_datatypes: dt,
    num_objects: g + ds + dt + chunks,
    num_chunks: chunks,
    allocated_bytes: allocated,
    metadata_bytes: Math.max(0, size - allocated),
    total_size: size,
    linked_bytes: 0,
    num_linked_chunks: 0,
    scan_info: { scan_start: t0, scan_complete: Date.now() / 1000 },
  };
  if (size <= MD5_MAX_BYTES) out.md5_sum = md5Of(f.path);
  return out;
}

function md5Of(file: string): string {
  const h = createHash('md5');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}
