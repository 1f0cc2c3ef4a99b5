/**
 * Datasets: metadata, creation, resize (wire-reference 2.3, 3.3, 3.4).
 */
import { parseShape } from '../../codec/shapes.js';
import type { ShapeJson } from '../../codec/shapes.js';
import type { TypeJson } from '../../codec/types.js';
import { parseType, refuseBinaryForm } from '../../codec/types.js';
import { RawJson, WireValue, showJson, stringifyJson } from '../../codec/json.js';
import { decodeElements, encodeElements, flattenValue } from '../../codec/values.js';
import { badRequest, conflict } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import * as io from '../../hdf5/io.js';
import type { DatasetCreateOptions, DatasetCreation, SpaceInfo } from '../../hdf5/io.js';
import { bitshuffleCodecName, filterSupport } from '../../hdf5/filters.js';
import { Hdf5Error, type Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import { type AttrValueOptions, attributesDict, committedType, fileTypeFor, shapeJson, spaceOf } from './attributes.js';
import type { DomainFile } from './domainFile.js';
import { type NewObjectPlace, linkNewObject, planObjectPlace } from './h5paths.js';
import { DEFAULT_LIMITS, type Limits, bytesOf, checkChunkBytes, checkDatasetBytes, checkInitializerBytes } from '../access/limits.js';
import { typeAndSpaceOf } from '../access/reach.js';
import { type GivenCreation, givenOf, updateGiven } from '../access/given.js';
import { type Initializer, parseInitializer, runInitializer } from './initializer.js';
import { givenId } from './clientIds.js';

/** A dataset as GET /datasets/<id> shows it (without hrefs). */
export interface DatasetJson {
  id: string;
  root: string;
  shape: ShapeJson;
  type: TypeJson;
  creationProperties: Record<string, unknown>;
  layout?: Record<string, unknown>;
  attributeCount: number;
  created: number;
  lastModified: number;
  domain: string;
  attributes?: Record<string, unknown>;
  alias?: string[];
  /** `verbose=1`: allocated chunks and bytes of raw data (libhdf5's, not HSDS's scan). */
  num_chunks?: number;
  allocated_size?: number;
}

/** REST JSON of one filter of a pipeline (wire-reference 3.4). */
export function filterJson(fi: io.FilterInfo): Record<string, unknown> {
  const known = C.FILTERS.find((k) => k.id === fi.id);
  const out: Record<string, unknown> = {
    class: known?.cls ?? 'H5Z_FILTER_USER',
    id: fi.id,
    name: known?.name ?? (fi.name || `filter${fi.id}`),
  };
  switch (fi.id) {
    case C.H5Z_FILTER_DEFLATE:
      out.level = fi.cdValues[0] ?? 0;
      break;
    case C.H5Z_FILTER_SZIP:
      out.coding = fi.cdValues[0] & 0x20 ? 'H5_SZIP_NN_OPTION_MASK' : 'H5_SZIP_EC_OPTION_MASK';
      out.pixelsPerBlock = fi.cdValues[1];
      break;
    case C.H5Z_FILTER_SCALEOFFSET:
      out.scaleType = fi.cdValues[0] === C.H5Z_SO_INT ? 'H5Z_SO_INT' : fi.cdValues[0] === 1 ? 'H5Z_SO_FLOAT_ESCALE' : 'H5Z_SO_FLOAT_DSCALE';
      out.scaleOffset = fi.cdValues[1];
      break;
    case C.H5Z_FILTER_BITSHUFFLE:
      // bitshuffle: cd_values [major, minor, element size, block size, compression, zstd level]
      out.compression = bitshuffleCodecName(fi.cdValues[4] ?? 0);
      if (fi.cdValues[3]) out.blockSize = fi.cdValues[3];
      if (fi.cdValues[4] === BSHUF_CODES.zstd && fi.cdValues.length > 5) out.level = fi.cdValues[5] | 0;
      break;
    case C.H5Z_FILTER_ZSTD:
      if (fi.cdValues.length) out.level = fi.cdValues[0] | 0;
      break;
    case 32001: {
      // hdf5-blosc: cd_values [version, format, typesize, bytes, clevel, shuffle, compcode]
      const codes = ['blosclz', 'lz4', 'lz4hc', 'snappy', 'zlib', 'zstd'];
      if (fi.cdValues.length >= 7) {
        out.compressor = codes[fi.cdValues[6]] ?? fi.cdValues[6];
        out.level = fi.cdValues[4];
        out.shuffle = fi.cdValues[5];
        out.name = typeof out.compressor === 'string' ? out.compressor : 'blosc';
      }
      break;
    }
    default:
      if (!known && fi.cdValues.length) out.cd_values = fi.cdValues;
  }
  return out;
}

/** JSON of a virtual dataset mapping's selection (`H5S_UNLIMITED` for unlimited counts). */
function selectionJson(s: io.SelectionInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { class: s.cls };
  const n = (a: number[]) => a.map((x) => (x === Infinity ? 'H5S_UNLIMITED' : x));
  if (s.start) Object.assign(out, { start: n(s.start), stride: n(s.stride!), count: n(s.count!), block: n(s.block!) });
  if (s.bounds) out.bounds = { start: n(s.bounds.start), end: n(s.bounds.end) };
  return out;
}

/**
 * The `layout` JSON of a dataset: HSDS's classes, plus what h5store adds for layouts HSDS does
 * not have (docs/architecture.md): an external file list on `H5D_CONTIGUOUS` (`external`, names
 * as stored) and the mappings of `H5D_VIRTUAL` (`mappings`: source file and dataset as stored,
 * virtual and source selections).
 */
export function layoutJson(cr: DatasetCreation): Record<string, unknown> {
  if (cr.layout === C.H5D_CHUNKED) return { class: 'H5D_CHUNKED', dims: cr.chunks };
  if (cr.external) {
    return {
      class: 'H5D_CONTIGUOUS',
      external: cr.external.map((e) => ({ name: e.name, offset: e.offset, size: e.size === Infinity ? 'H5F_UNLIMITED' : e.size })),
    };
  }
  if (cr.virtual) {
    return {
      class: 'H5D_VIRTUAL',
      mappings: cr.virtual.map((m) => ({ file: m.file, dataset: m.dataset, virtual: selectionJson(m.virtual), source: selectionJson(m.source) })),
    };
  }
  return { class: C.LAYOUT_NAMES[cr.layout] };
}

/** A JS value with its non-finite numbers as the words HSDS uses for fill values. */
function nanWords(v: unknown): unknown {
  if (typeof v === 'number') return v === v ? (v === Infinity ? 'inf' : v === -Infinity ? '-inf' : v) : 'nan';
  if (Array.isArray(v)) return v.map(nanWords);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nanWords(x)]));
  return v;
}

/**
 * The `fillValue` of `creationProperties`: the element as JSON, with NaN and ±Infinity as the
 * words `"nan"`, `"inf"`, `"-inf"` under `ignore_nan=1` (not `null`: a fill value of null would
 * read as "no fill value"; HSDS writes the words; issue #25) and as JSON literals otherwise.
 */
export function fillValueJson(fill: Buffer, type: TypeJson): WireValue | RawJson {
  const wv = new WireValue(fill, type, []);
  let value: unknown;
  try {
    value = decodeElements(fill, type, 1).values[0];
  } catch {
    return wv;
  }
  const nonFinite = (v: unknown): boolean =>
    typeof v === 'number' ? !Number.isFinite(v) : Array.isArray(v) ? v.some(nonFinite) : !!v && typeof v === 'object' && Object.values(v).some(nonFinite);
  if (!nonFinite(value)) return wv;
  return new RawJson(stringifyJson(wv), stringifyJson(nanWords(value)));
}

/** `creationProperties` of a dataset as the file has them (wire-reference 3.3, 3.4). */
export function creationJson(cr: DatasetCreation, type: TypeJson): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  out.layout = layoutJson(cr);
  if (cr.filters.length) out.filters = cr.filters.map(filterJson);
  if (cr.fillValue) out.fillValue = fillValueJson(cr.fillValue, type);
  out.fillTime = C.FILL_TIME_NAMES[cr.fillTime];
  out.allocTime = C.ALLOC_TIME_NAMES[cr.allocTime];
  if (cr.trackAttrOrder) out.CreateOrder = 1;
  return out;
}

/** JSON of an open dataset. */
export function datasetJsonOf(f: DomainFile, did: Hid, addr: bigint, opts: DatasetOptions = {}): DatasetJson {
  const info = h5.objectInfo(did);
  const t = f.objectTimes(info);
  const { type, space } = typeAndSpaceOf(f, did, addr, f.committedId);
  const meta = { type, space, creation: io.describeCreationOf(did, type, f.refs) };
  const cp = creationJson(meta.creation, meta.type);
  applyGivenCreation(cp, givenOf(f, addr)?.creation, meta.creation.fillValue, meta.type);
  const out: DatasetJson = {
    id: f.idOf(addr, 'dataset'),
    root: f.rootId,
    shape: shapeJson(meta.space),
    type: meta.type,
    creationProperties: cp,
    attributeCount: info.numAttrs,
    created: t.created,
    lastModified: t.lastModified,
    domain: f.domain,
  };
  if (meta.space.cls !== 'H5S_NULL') out.layout = cp.layout as Record<string, unknown>;
  if (opts.includeAttrs) out.attributes = attributesDict(f, did, addr, !!opts.createOrder, opts.attrValues);
  if (opts.alias) out.alias = f.aliasOf(addr);
  if (opts.verbose) {
    const s = io.storageInfo(did);
    out.num_chunks = s.numChunks;
    out.allocated_size = s.allocatedSize;
  }
  return out;
}

/** Options of GET /datasets/<id>. */
export interface DatasetOptions {
  includeAttrs?: boolean;
  alias?: boolean;
  /** `verbose=1`: add `num_chunks` and `allocated_size`. */
  verbose?: boolean;
  /** The `attributes` dict in creation order (for datasets that track it). */
  createOrder?: boolean;
  /** Values in the `attributes` dict (`IncludeData`, `max_data_size`). */
  attrValues?: AttrValueOptions;
}

/** GET /datasets/<id>. */
export function getDataset(f: DomainFile, id: string, opts: DatasetOptions): DatasetJson {
  return f.withId(id, 'dataset', (did, addr) => datasetJsonOf(f, did, addr, opts));
}

/** GET /datasets/<id>/type and /shape. */
export function getTypeAndShape(
  f: DomainFile,
  id: string,
): { type: TypeJson; shape: ShapeJson; space: SpaceInfo; created: number; lastModified: number } {
  return f.withId(id, 'dataset', (did, addr) => {
    const { type, space } = typeAndSpaceOf(f, did, addr, f.committedId);
    const t = f.objectTimes(h5.objectInfo(did));
    return { type, shape: shapeJson(space), space, created: t.created, lastModified: t.lastModified };
  });
}

// ---------------------------------------------------------------------------------------------
// Creation

/** Blosc compressor codes of the hdf5-blosc plugin (cd_values[6]). */
const BLOSC_CODES: Record<string, number> = { blosclz: 0, lz4: 1, lz4hc: 2, snappy: 3, zlib: 4, zstd: 5 };
const BLOSC_ID = 32001;
/** Blosc level used when none is given (hdf5-blosc's own default). */
const BLOSC_DEFAULT_LEVEL = 5;

/** Compressor names this server can write (domain `compressors`, wire-reference 1.3/3.4). */
export function availableCompressors(): string[] {
  const out = ['gzip', 'deflate'];
  if (io.filterAvailable(C.H5Z_FILTER_SZIP)) out.push('szip');
  if (io.filterAvailable(32000)) out.push('lzf');
  if (io.filterAvailable(BLOSC_ID)) out.push(...Object.keys(BLOSC_CODES));
  if (io.filterAvailable(307)) out.push('bzip2');
  if (io.filterAvailable(C.H5Z_FILTER_ZFP)) out.push('zfp');
  return out;
}

let compressorCache: string[] | undefined;
/** The filters this server reads and writes (`filters` of GET /about, and their names in GET /). */
export { filterNames, filterReport } from '../../hdf5/filters.js';

/** Cached `availableCompressors()`. */
export function compressors(): string[] {
  return (compressorCache ??= availableCompressors());
}

type FilterSpec = NonNullable<DatasetCreateOptions['filters']>[number];

/**
 * One filter of a create request: a name, an id, or an object (`class`, `id`, `name`, options).
 * Normalised to libhdf5's (id, cd_values). `id` wins over `class` wins over `name` (h5pyd has
 * sent a misspelled class with the right id).
 * @throws BadRequest for unknown or unavailable filters and bad options.
 */
export function parseFilter(entry: unknown, type: TypeJson): FilterSpec {
  let obj: Record<string, unknown>;
  if (typeof entry === 'string') obj = { name: entry };
  else if (typeof entry === 'number') obj = { id: entry };
  else if (entry && typeof entry === 'object' && !Array.isArray(entry)) obj = entry as Record<string, unknown>;
  else throw badRequest(`Invalid filter ${showJson(entry)}`);
  const name = typeof obj.name === 'string' ? obj.name.toLowerCase() : undefined;
  let id: number | undefined = typeof obj.id === 'number' ? obj.id : undefined;
  if (id === undefined && typeof obj.class === 'string' && obj.class !== 'H5Z_FILTER_USER') {
    id = C.FILTERS.find((k) => k.cls === obj.class)?.id;
    if (id === undefined) throw badRequest(`filter ${obj.class} not recognized`);
  }
  let bloscCode: number | undefined;
  if (id === undefined && name !== undefined) {
    if (name === 'deflate' || name === 'gzip') id = C.H5Z_FILTER_DEFLATE;
    else if (name in BLOSC_CODES) {
      id = BLOSC_ID;
      bloscCode = BLOSC_CODES[name];
    } else if (name === 'blosc') id = BLOSC_ID;
    else id = C.FILTERS.find((k) => k.name === name)?.id;
    if (id === undefined) throw badRequest(`filter ${name} not recognized`);
  }
  if (id === undefined) throw badRequest(`Filter needs an id, class or name: ${showJson(entry)}`);
  if (id === BLOSC_ID && bloscCode === undefined && typeof obj.compressor === 'string') bloscCode = BLOSC_CODES[obj.compressor];
  const spec = filterOptions(id, obj, type, bloscCode);
  const can = filterSupport(id, spec.cdValues, 'user');
  if (!can.write) throw badRequest(`filter ${can.label} is not supported by this server (no encoder available; GET / lists the filters it reads and writes)`);
  return spec;
}

/** bitshuffle's inner compression codes (cd_values[1] as given, [4] in the file). */
const BSHUF_CODES: Record<string, number> = { none: 0, lz4: 2, zstd: 3 };
/** zstd's level range (negative levels are its fast modes). */
const ZSTD_LEVELS = [-131072, 22];

/** An unsigned 32-bit cd_value of a signed level (two's complement, as C stores an int there). */
const u32 = (n: number) => n >>> 0;

function intOption(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw badRequest(`${what} must be an integer from ${min} to ${max}`);
  return v;
}

function positiveNumber(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw badRequest(`${what} must be a positive number`);
  return v;
}

/** The two 32-bit words of a double (low first), as H5Z-ZFP's generic interface stores them. */
function doubleWords(x: number): [number, number] {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(x);
  return [b.readUInt32LE(0), b.readUInt32LE(4)];
}

/** (id, cd_values) of one filter entry whose id is known (see `parseFilter`). */
function filterOptions(id: number, obj: Record<string, unknown>, type: TypeJson, bloscCode: number | undefined): FilterSpec {
  const level = obj.level ?? obj.scaleOffset;
  switch (id) {
    case C.H5Z_FILTER_DEFLATE: {
      const l = level === undefined ? 4 : level;
      if (typeof l !== 'number' || !Number.isInteger(l) || l < 0 || l > 9) throw badRequest('deflate level must be an integer from 0 to 9');
      return { id, cdValues: [l] };
    }
    case C.H5Z_FILTER_SHUFFLE:
    case C.H5Z_FILTER_FLETCHER32:
    case C.H5Z_FILTER_NBIT:
      return { id, cdValues: [] };
    case C.H5Z_FILTER_SCALEOFFSET: {
      const isInt = type.class === 'H5T_INTEGER' || (type.class === 'H5T_ENUM');
      if (!isInt && type.class !== 'H5T_FLOAT') throw badRequest('scaleoffset works only on integer and float types');
      const st = obj.scaleType ?? (isInt ? 'H5Z_SO_INT' : 'H5Z_SO_FLOAT_DSCALE');
      const code = st === 'H5Z_SO_INT' ? C.H5Z_SO_INT : st === 'H5Z_SO_FLOAT_DSCALE' ? C.H5Z_SO_FLOAT_DSCALE : st === 'H5Z_SO_FLOAT_ESCALE' ? 1 : -1;
      if (code < 0) throw badRequest(`Invalid scaleType ${String(st)}`);
      const factor = level === undefined ? 0 : level;
      if (typeof factor !== 'number' || !Number.isInteger(factor) || factor < 0) throw badRequest('scaleOffset must be a non-negative integer');
      if (!isInt && level === undefined) throw badRequest('scaleoffset on a float type needs "scaleOffset" (decimal digits)');
      return { id, cdValues: [code, factor] };
    }
    case C.H5Z_FILTER_SZIP: {
      const ppb = typeof obj.pixelsPerBlock === 'number' ? obj.pixelsPerBlock : typeof obj.bitsPerPixel === 'number' ? obj.bitsPerPixel : 8;
      const mask = obj.coding === 'H5_SZIP_EC_OPTION_MASK' || obj.coding === 'H5Z_SZIP_EC_OPTION_MASK' ? 4 : 32;
      return { id, cdValues: [mask, ppb] };
    }
    case BLOSC_ID: {
      const l = typeof level === 'number' ? level : BLOSC_DEFAULT_LEVEL;
      const shuffle = typeof obj.shuffle === 'number' ? obj.shuffle : 1;
      return { id, cdValues: [0, 0, 0, 0, l, shuffle, bloscCode ?? 0] };
    }
    case C.H5Z_FILTER_BITSHUFFLE: {
      // cd_values as given to H5Pset_filter: [block size (elements, 0: automatic), compression, zstd level]
      if (Array.isArray(obj.cd_values)) break;
      const comp = obj.compression ?? obj.compressor;
      if (comp !== undefined && !(typeof comp === 'string' && Object.hasOwn(BSHUF_CODES, comp))) throw badRequest('bitshuffle "compression" must be "none", "lz4" or "zstd"');
      const code = comp === undefined ? 0 : BSHUF_CODES[comp as string];
      const block = obj.blockSize === undefined ? 0 : intOption(obj.blockSize, 'bitshuffle "blockSize"', 0, 2 ** 28);
      if (block % 8) throw badRequest('bitshuffle "blockSize" must be a multiple of 8 (0: automatic)');
      if (level !== undefined && code !== BSHUF_CODES.zstd) throw badRequest('bitshuffle takes a "level" only with "compression": "zstd"');
      if (code === BSHUF_CODES.zstd) return { id, cdValues: [block, code, u32(level === undefined ? 3 : intOption(level, 'zstd "level"', ZSTD_LEVELS[0], ZSTD_LEVELS[1]))] };
      return { id, cdValues: code || block ? [block, code] : [] };
    }
    case C.H5Z_FILTER_ZSTD: {
      if (Array.isArray(obj.cd_values)) break;
      return { id, cdValues: level === undefined ? [] : [u32(intOption(level, 'zstd "level"', ZSTD_LEVELS[0], ZSTD_LEVELS[1]))] };
    }
    case C.H5Z_FILTER_ZFP: {
      // H5Z-ZFP's generic interface: [mode, 0, parameters...]; the plugin rewrites them in the file
      if (Array.isArray(obj.cd_values)) break;
      const modes = ['rate', 'precision', 'accuracy', 'reversible', 'expert'].filter((k) => obj[k] !== undefined && obj[k] !== false);
      if (level !== undefined) throw badRequest('zfp takes one of "rate", "precision", "accuracy", "reversible" or "expert", not "level"');
      if (modes.length > 1) throw badRequest(`zfp takes one mode, not ${modes.join(' and ')}`);
      switch (modes[0]) {
        case 'rate':
          return { id, cdValues: [1, 0, ...doubleWords(positiveNumber(obj.rate, 'zfp "rate" (bits per value)'))] };
        case 'precision':
          return { id, cdValues: [2, 0, intOption(obj.precision, 'zfp "precision" (bit planes)', 1, 64)] };
        case 'accuracy':
          return { id, cdValues: [3, 0, ...doubleWords(positiveNumber(obj.accuracy, 'zfp "accuracy" (absolute error bound)'))] };
        case 'expert': {
          const e = obj.expert as Record<string, unknown>;
          if (!e || typeof e !== 'object') throw badRequest('zfp "expert" must be an object {minbits, maxbits, maxprec, minexp}');
          return {
            id,
            cdValues: [4, 0, intOption(e.minbits, 'zfp minbits', 0, 2 ** 31), intOption(e.maxbits, 'zfp maxbits', 1, 2 ** 31), intOption(e.maxprec, 'zfp maxprec', 1, 64), u32(intOption(e.minexp, 'zfp minexp', -1074, 1024))],
          };
        }
        default:
          // reversible (lossless): what a client that names no mode gets
          if (modes[0] === 'reversible' && obj.reversible !== true) throw badRequest('zfp "reversible" must be true');
          return { id, cdValues: [5, 0] };
      }
    }
  }
  const cd = Array.isArray(obj.cd_values) ? obj.cd_values : typeof level === 'number' ? [level] : [];
  if (!cd.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 32)) {
    throw badRequest('cd_values must be unsigned 32-bit integers');
  }
  return { id, cdValues: cd as number[] };
}

const FILL_TIMES: Record<string, number> = {
  H5D_FILL_TIME_ALLOC: C.H5D_FILL_TIME_ALLOC,
  H5D_FILL_TIME_NEVER: C.H5D_FILL_TIME_NEVER,
  H5D_FILL_TIME_IFSET: C.H5D_FILL_TIME_IFSET,
};
const ALLOC_TIMES: Record<string, number> = {
  H5D_ALLOC_TIME_DEFAULT: C.H5D_ALLOC_TIME_DEFAULT,
  H5D_ALLOC_TIME_EARLY: C.H5D_ALLOC_TIME_EARLY,
  H5D_ALLOC_TIME_LATE: C.H5D_ALLOC_TIME_LATE,
  H5D_ALLOC_TIME_INCR: C.H5D_ALLOC_TIME_INCR,
};

/**
 * Validate `creationProperties` of POST /datasets against the type, dataspace and limits
 * (src/store/access/limits.ts): chunks at most `maxChunkBytes`; a dataset larger than that without a
 * layout is created chunked (chunks of about 1 MiB: `largeChunkBounds`; extensible and filtered
 * datasets get h5py's guess, as h5py chunks them), and storage that
 * libhdf5 would allocate and fill whole in one go (early allocation, or a contiguous layout with
 * a fill value written at allocation) is refused above it.
 * @throws BadRequest for every inconsistency (layout rank, chunks larger than fixed maxdims,
 *   filters without chunking, unknown filters, bad fill value) and limit.
 */
export function parseCreationProperties(cp: Record<string, unknown> | undefined, type: TypeJson, space: SpaceInfo, itemSize: number, limits: Limits = DEFAULT_LIMITS): DatasetCreateOptions {
  const p = cp ?? {};
  const opts: DatasetCreateOptions = {};
  const extensible = space.cls === 'H5S_SIMPLE' && space.maxdims.some((m, i) => m !== space.dims[i]);
  const layout = p.layout as { class?: unknown; dims?: unknown } | undefined;
  if (layout !== undefined) {
    if (!layout || typeof layout !== 'object') throw badRequest('"layout" must be an object with "class"');
    const cls = layout.class;
    if (cls === 'H5D_CHUNKED') {
      if (space.cls !== 'H5S_SIMPLE') throw badRequest('Chunked layout needs a simple (non-scalar, non-null) shape');
      if (!Array.isArray(layout.dims) || layout.dims.length !== space.dims.length) {
        throw badRequest(`Chunked layout needs "dims" of rank ${space.dims.length}`);
      }
      const dims = layout.dims.map((d) => {
        if (typeof d !== 'number' || !Number.isInteger(d) || d < 1) throw badRequest('Chunk dims must be positive integers');
        return d;
      });
      dims.forEach((d, i) => {
        if (space.maxdims.length && space.maxdims[i] !== Infinity && d > space.maxdims[i] && space.maxdims[i] > 0) {
          throw badRequest(`Chunk dimension ${i} (${d}) is larger than the maximum extent ${space.maxdims[i]}`);
        }
        if (!space.maxdims.length && d > space.dims[i] && space.dims[i] > 0) {
          throw badRequest(`Chunk dimension ${i} (${d}) is larger than the fixed extent ${space.dims[i]}`);
        }
      });
      checkChunkBytes(dims, itemSize);
      opts.layout = 'H5D_CHUNKED';
      opts.chunks = dims;
    } else if (cls === 'H5D_CONTIGUOUS') {
      if (extensible) throw badRequest('A contiguous layout cannot be used with maxdims (extensible datasets are chunked)');
      opts.layout = 'H5D_CONTIGUOUS';
    } else if (cls === 'H5D_COMPACT') {
      if (extensible) throw badRequest('A compact layout cannot be used with maxdims');
      const n = space.cls === 'H5S_SIMPLE' ? space.dims.reduce((a, b) => a * b, 1) : 1;
      if (n * itemSize > 64000) throw badRequest('A compact dataset must hold less than 64 KB');
      opts.layout = 'H5D_COMPACT';
    } else {
      throw badRequest(`Invalid layout class ${showJson(cls)}`);
    }
  }
  if (p.filters !== undefined) {
    if (!Array.isArray(p.filters)) throw badRequest('"filters" must be a list');
    if (p.filters.length) {
      if (space.cls !== 'H5S_SIMPLE') throw badRequest('Filters need a simple (chunked) dataspace');
      if (opts.layout && opts.layout !== 'H5D_CHUNKED') throw badRequest('Filters need a chunked layout');
      opts.filters = p.filters.map((e) => parseFilter(e, type));
    }
  }
  // h5py chunks a dataset created with maxshape (even equal to shape) or with filters, guessing
  // the chunk dims when none are given (h5py/_hl/filters.py generate_dcpl); a dataset larger than
  // the chunk limit without a layout is chunked too (one allocation never fills more than it).
  const maxdimsGiven = space.cls === 'H5S_SIMPLE' && space.maxdims.length > 0;
  const bytes = space.cls === 'H5S_SIMPLE' ? bytesOf(space.dims, itemSize) : itemSize;
  if ((opts.filters?.length || (maxdimsGiven && !opts.layout)) && !opts.chunks) {
    opts.layout = 'H5D_CHUNKED';
    opts.chunks = guessChunks(space.dims, space.maxdims, h5pyItemSize(type));
  } else if (!opts.layout && bytes > limits.maxChunkBytes) {
    // h5py would store it contiguous: no h5py guess to follow. Chunks of about 1 MiB, as HSDS lays
    // out datasets (its chunk size bounds), rather than h5py's 32 KiB for 16 MiB: 16 times fewer
    // chunks to write, index and journal (a 16 MiB binary write, in-process: 40 -> 15 ms of CPU).
    opts.layout = 'H5D_CHUNKED';
    opts.chunks = guessChunks(space.dims, space.maxdims, h5pyItemSize(type), largeChunkBounds(limits.maxChunkBytes));
  }
  if (p.fillValue !== undefined && p.fillValue !== null) {
    if (p.fillValue_encoding === 'base64') {
      if (typeof p.fillValue !== 'string') throw badRequest('A base64 fillValue must be a string');
      refuseBinaryForm(type, 'base64');
      opts.fillValue = Buffer.from(p.fillValue, 'base64');
    } else {
      try {
        opts.fillValue = encodeElements(flattenValue(p.fillValue, [], type), type);
      } catch (e) {
        throw badRequest(`Invalid fillValue: ${(e as Error).message}`);
      }
    }
  }
  if (p.fillTime !== undefined) {
    const v = FILL_TIMES[String(p.fillTime)];
    if (v === undefined) throw badRequest(`Invalid fillTime ${showJson(p.fillTime)}`);
    opts.fillTime = v;
  }
  if (p.allocTime !== undefined) {
    const v = ALLOC_TIMES[String(p.allocTime)];
    if (v === undefined) throw badRequest(`Invalid allocTime ${showJson(p.allocTime)}`);
    opts.allocTime = v;
  }
  if (p.CreateOrder) opts.trackAttrOrder = true;
  // What libhdf5 would allocate and fill in one call, without a chance to answer anyone else.
  const oneGo = opts.layout === 'H5D_CHUNKED' ? bytesOf(opts.chunks!, itemSize) : bytes;
  if (opts.allocTime === C.H5D_ALLOC_TIME_EARLY && bytes > limits.maxChunkBytes && opts.layout !== 'H5D_COMPACT') {
    throw badRequest(
      `Early allocation would allocate ${bytes} bytes when the dataset is created, above the limit of ${limits.maxChunkBytes} (max_chunk_size): leave allocTime to the default`,
    );
  }
  const fillsAtAllocation = opts.fillTime === C.H5D_FILL_TIME_ALLOC || (opts.fillTime !== C.H5D_FILL_TIME_NEVER && opts.fillValue !== undefined);
  if (opts.layout === 'H5D_CONTIGUOUS' && fillsAtAllocation && oneGo > limits.maxChunkBytes) {
    throw badRequest(
      `A contiguous dataset of ${bytes} bytes with a fill value is filled whole on its first write, above the limit of ${limits.maxChunkBytes} (max_chunk_size): use a chunked layout`,
    );
  }
  return opts;
}

/** h5py's chunk-size constants (h5py/_hl/filters.py: CHUNK_BASE, CHUNK_MIN, CHUNK_MAX). */
const CHUNK_BASE = 16 * 1024;
const CHUNK_MIN = 8 * 1024;
const CHUNK_MAX = 1024 * 1024;

/** Bounds of a chunk guess: the target is kept in [min, max], and a chunk stays below max. */
export interface ChunkBounds {
  min: number;
  max: number;
}

/**
 * Bounds of the chunk guess for datasets chunked only because they are larger than
 * `maxChunkBytes` (no layout, no maxdims, no filters): a target of 1 MiB (HSDS's
 * `min_chunk_size`), chunks at most `maxChunkBytes` (HSDS's `max_chunk_size`); a smaller
 * `maxChunkBytes` lowers both.
 * @param maxChunkBytes the server's chunk limit (bytes)
 */
export function largeChunkBounds(maxChunkBytes: number): ChunkBounds {
  return { min: Math.min(1024 * 1024, maxChunkBytes), max: maxChunkBytes + 1 };
}

/**
 * h5py's `guess_chunk(shape, maxshape, typesize)` (h5py/_hl/filters.py, the PyTables rule), for
 * datasets that must be chunked (maxdims given, or filters) but name no chunk dims: a target of
 * 16 KiB x 2^log10(MiB of data), kept between 8 KiB and 1 MiB; axes are halved in turn (rounding
 * up) until the chunk is below the target, or within 50% of it, and below 1 MiB. Zero-length
 * dimensions count as 1024, as in h5py. One addition: a dimension whose fixed maximum is smaller
 * than the guess is capped at that maximum (libhdf5 refuses such chunks; h5py would fail there).
 * @param shape current dims; @param maxdims the maxima (`Infinity` = unlimited; [] = none)
 * @param typesize numpy's itemsize of the element (see `h5pyItemSize`)
 * @param bounds target bounds other than h5py's 8 KiB and 1 MiB (`largeChunkBounds`)
 * @returns chunk dims, each >= 1
 */
export function guessChunks(shape: readonly number[], maxdims: readonly number[], typesize: number, bounds: ChunkBounds = { min: CHUNK_MIN, max: CHUNK_MAX }): number[] {
  if (shape.length === 0) throw badRequest('Chunks are not allowed for scalar datasets');
  const dims = shape.map((x) => (x !== 0 ? x : 1024));
  const chunks = dims.slice();
  const prod = (a: number[]) => a.reduce((x, y) => x * y, 1);
  const dsetSize = prod(chunks) * typesize;
  let target = CHUNK_BASE * 2 ** Math.log10(dsetSize / (1024 * 1024));
  if (target > bounds.max) target = bounds.max;
  else if (target < bounds.min) target = bounds.min;
  for (let idx = 0; ; idx++) {
    const chunkBytes = prod(chunks) * typesize;
    if ((chunkBytes < target || Math.abs(chunkBytes - target) / target < 0.5) && chunkBytes < bounds.max) break;
    if (prod(chunks) === 1) break; // element larger than CHUNK_MAX
    const i = idx % chunks.length;
    chunks[i] = Math.ceil(chunks[i] / 2);
  }
  return chunks.map((c, i) => (maxdims[i] !== undefined && maxdims[i] !== Infinity && maxdims[i] > 0 ? Math.min(c, maxdims[i]) : c));
}

/**
 * numpy's itemsize of the dtype h5py/h5pyd use for a type (what `guess_chunk` is given):
 * variable-length strings and sequences and references are Python objects (8 bytes).
 */
export function h5pyItemSize(t: TypeJson): number {
  switch (t.class) {
    case 'H5T_STRING':
      return t.length === 'H5T_VARIABLE' ? 8 : t.length;
    case 'H5T_VLEN':
    case 'H5T_REFERENCE':
      return 8;
    case 'H5T_ENUM':
      return h5pyItemSize(t.base);
    case 'H5T_ARRAY':
      return t.dims.reduce((a, b) => a * b, 1) * h5pyItemSize(t.base);
    case 'H5T_COMPOUND':
      return t.fields.reduce((a, f) => a + h5pyItemSize(f.type), 0);
    case 'H5T_OPAQUE':
      return t.size;
    default:
      return Number(/(\d+)(LE|BE)?$/.exec(t.base)?.[1] ?? 8) / 8;
  }
}

/** A validated POST /datasets request. */
export interface DatasetSpec {
  type: TypeJson;
  space: SpaceInfo;
  options: DatasetCreateOptions;
  /** `creationProperties.initializer`: fills the dataset at creation. */
  initializer?: Initializer;
  /** What to report back as given (given.ts), when the file cannot say it. */
  given?: GivenCreation;
}

/** Float fill values given as words, reported back as given (wire-reference 3.4). */
const FILL_WORDS = new Set(['nan', 'inf', '-inf', '+inf', 'infinity', '-infinity', '+infinity', '-nan', '+nan']);

/**
 * The parts of `creationProperties` the file cannot express and that are reported back as
 * given: a fill value given as a word (`"nan"`) or in base64, the initializer, and blosc-codec
 * filters given without a level (issue #12; given.ts).
 */
export function givenCreationOf(cp: Record<string, unknown>, options: DatasetCreateOptions): GivenCreation | undefined {
  const out: GivenCreation = {};
  if (cp.fillValue_encoding === 'base64' && typeof cp.fillValue === 'string') {
    out.fillValue = cp.fillValue;
    out.fillValue_encoding = 'base64';
  } else if (typeof cp.fillValue === 'string' && FILL_WORDS.has(cp.fillValue.toLowerCase())) {
    out.fillValue = cp.fillValue;
  }
  if (cp.initializer !== undefined) out.initializer = cp.initializer as unknown[];
  if (Array.isArray(cp.filters)) {
    const noLevel: number[] = [];
    cp.filters.forEach((e, i) => {
      if (options.filters?.[i]?.id !== BLOSC_ID) return;
      const o = e && typeof e === 'object' ? (e as Record<string, unknown>) : {};
      if (o.level === undefined) noLevel.push(i);
    });
    if (noLevel.length) out.noLevel = noLevel;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Report what was given where the file agrees (given.ts): the fill value in its given form when
 * it encodes to the bytes the file holds, the initializer, and no `level` for blosc filters given
 * without one (when the file still has the default level h5store used).
 */
export function applyGivenCreation(cp: Record<string, unknown>, given: GivenCreation | undefined, fill: Buffer | undefined, type: TypeJson): void {
  if (!given) return;
  if (given.fillValue !== undefined && fill) {
    let bytes: Buffer | undefined;
    try {
      bytes = given.fillValue_encoding === 'base64' ? Buffer.from(String(given.fillValue), 'base64') : encodeElements([given.fillValue], type);
    } catch {
      bytes = undefined;
    }
    if (bytes && bytes.equals(fill)) {
      cp.fillValue = given.fillValue;
      if (given.fillValue_encoding) cp.fillValue_encoding = given.fillValue_encoding;
    }
  }
  if (given.initializer !== undefined) cp.initializer = given.initializer;
  const filters = cp.filters as Record<string, unknown>[] | undefined;
  for (const i of given.noLevel ?? []) {
    const fj = filters?.[i];
    if (fj && fj.id === BLOSC_ID && fj.level === BLOSC_DEFAULT_LEVEL) delete fj.level;
  }
}

/**
 * A dataset to create (POST /datasets; parsed by http/bodies.ts `datasetBody`; wire-reference
 * 2.3): its type JSON (codec/types.ts `parseType`), shape and maxdims (codec/shapes.ts
 * `parseShape`), `creationProperties` (`parseCreationProperties`), an initial `value` (written
 * as `PUT .../value` writes it), the id its client gave it, and where it goes.
 */
export type DatasetCreate = NewObjectPlace & {
  id?: string;
  type: unknown;
  shape?: unknown;
  maxdims?: unknown;
  creationProperties?: Record<string, unknown>;
  value?: unknown;
};

/**
 * Validate a POST /datasets body (type, shape, maxdims, creationProperties) before anything is
 * written (wire-reference 2.3).
 */
export function parseDatasetBody(f: DomainFile, body: DatasetCreate, limits: Limits = DEFAULT_LIMITS): DatasetSpec {
  const type = parseType(body.type, (id) => committedType(f, id));
  const shape = parseShape(body.shape, body.maxdims);
  const space = spaceOf(shape);
  const itemSize = io.fixedOrPointerSize(type);
  if (space.cls === 'H5S_SIMPLE') checkDatasetBytes(space.dims, itemSize, limits, 'The shape');
  const options = parseCreationProperties(body.creationProperties, type, space, itemSize, limits);
  const cp = body.creationProperties ?? {};
  const initializer = cp.initializer !== undefined ? parseInitializer(cp.initializer, type, space) : undefined;
  if (initializer) checkInitializerBytes(space, itemSize, limits);
  return { type, space, options, initializer, given: givenCreationOf(cp, options) };
}

/** POST /datasets (an initializer fills the new dataset page by page, letting others run between pages). */
export async function createDataset(f: DomainFile, body: DatasetCreate, implicit: boolean, limits: Limits = DEFAULT_LIMITS): Promise<DatasetJson> {
  const spec = parseDatasetBody(f, body, limits);
  const clientId = givenId(f, body, 'dataset');
  const place = planObjectPlace(f, body, implicit);
  const ft = fileTypeFor(f, spec.type);
  let did: Hid;
  // Created anonymous, linked last: a failure leaves the file as it was. libhdf5 refusing the
  // creation properties (e.g. szip pixels per block larger than a chunk) is the client's
  // error: 400 with libhdf5's reason.
  try {
    did = io.createDataset(f.h, undefined, ft, spec.type, spec.space, spec.options, f.refs);
  } catch (e) {
    if (e instanceof Hdf5Error) throw badRequest(`Cannot create the dataset with these properties: ${e.message}`);
    throw e;
  } finally {
    io.closeType(ft);
  }
  try {
    if (place) linkNewObject(f, did, place);
    const { addr } = f.registerNew(did, 'dataset', !!place, clientId);
    if (spec.initializer) await runInitializer(did, spec.space, spec.initializer, limits.pageBytes);
    if (spec.given) updateGiven(f, addr, (e) => (e.creation = spec.given));
    return datasetJsonOf(f, did, addr);
  } finally {
    h5.closeObject(did);
  }
}

/**
 * A resize (PUT /datasets/<id>/shape; parsed by http/bodies.ts `resizeBody`; wire-reference
 * 2.3): the new extent (non-negative integers, one per dimension), or a growth of `extend`
 * elements along dimension `extendDim`.
 */
export type Resize = { shape: number[] } | { extend: number; extendDim: number };

/**
 * PUT /datasets/<id>/shape: `{"shape": [...]}` or `{"extend": n, "extend_dim": d}`
 * (wire-reference 2.3). Shrinking is allowed.
 * @returns the newly added region as a selection string when exactly one dimension grew.
 * @throws BadRequest (not extensible, rank, `extendDim` past the rank), Conflict (beyond maxdims)
 */
export function resizeDataset(f: DomainFile, id: string, body: Resize, limits: Limits = DEFAULT_LIMITS): { selection?: string; dims: number[] } {
  return f.withId(id, 'dataset', (did, addr) => {
    const { type, space } = typeAndSpaceOf(f, did, addr);
    if (space.cls !== 'H5S_SIMPLE') throw badRequest('Only datasets with a simple dataspace can be resized');
    let dims: number[];
    if ('shape' in body) {
      if (body.shape.length !== space.dims.length) throw badRequest(`"shape" must be a list of ${space.dims.length} integers`);
      dims = body.shape.slice();
    } else {
      if (body.extendDim >= space.dims.length) throw badRequest('"extend_dim" is out of range');
      dims = space.dims.slice();
      dims[body.extendDim] += body.extend;
    }
    if (dims.every((d, i) => d === space.dims[i])) return { dims };
    // Only chunked datasets can change their extent (HDF5); beyond maxdims is a 409.
    const cr = io.describeCreationOf(did, type);
    if (cr.layout !== C.H5D_CHUNKED) throw badRequest('Dataset is not extensible (it is not chunked)');
    dims.forEach((d, i) => {
      if (d > space.maxdims[i]) throw conflict(`Dimension ${i} cannot grow to ${d}: the maximum is ${space.maxdims[i]}`);
    });
    if (dims.some((d, i) => d > space.dims[i])) checkDatasetBytes(dims, io.fixedOrPointerSize(type), limits, 'The new shape');
    io.setExtent(did, dims);
    const grown = dims.map((d, i) => d > space.dims[i]);
    let selection: string | undefined;
    if (grown.filter(Boolean).length === 1) {
      const k = grown.indexOf(true);
      selection = '[' + dims.map((d, i) => (i === k ? `${space.dims[i]}:${d}` : ':')).join(',') + ']';
    }
    return { selection, dims };
  });
}
