/**
 * What reads, queries and writes of dataset values share: the limits, the files a dataset
 * reaches, `fields=` subsets, selections as libhdf5 dataspaces (points sorted and de-duplicated,
 * with the maps back to the order asked), and turning storage failures into clear errors.
 */
import { type TypeJson, isVariableLength, typeSize } from '../../codec/types.js';
import { decodeElements } from '../../codec/values.js';
import { H5StoreError, badRequest, notFound, tooLarge } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import { filterHint, filterSupport } from '../../hdf5/filters.js';
import * as io from '../../hdf5/io.js';
import type { SpaceSelection } from '../../hdf5/io.js';
import { Hdf5Error } from '../../hdf5/lib.js';
import { type Selection, expandPoints, sortPoints } from '../../selection/select.js';
import type { DomainFile } from '../objects/domainFile.js';
import { type Limits } from '../access/limits.js';
import { type ReachedFile, reachOfDataset } from '../access/reach.js';

/** Limits of value requests (from config; src/store/access/limits.ts). */
export type ValueLimits = Limits;

/**
 * The files inside the root that a value operation on dataset `id` makes libhdf5 open (its
 * external raw data files, virtual dataset sources); [] for an ordinary dataset.
 * @throws H5StoreError Forbidden when one leads outside the data root (reach.ts).
 */
export function reachFor(f: DomainFile, id: string): ReachedFile[] {
  return f.withId(id, 'dataset', (did, addr) => reachOfDataset(f, did, addr));
}

/** Split `fields=a:b` and build the compound subset type (HDF5 converts by field name). */
export function fieldSubset(type: TypeJson, fields: string | undefined): TypeJson {
  if (fields === undefined || fields === '') return type;
  if (type.class !== 'H5T_COMPOUND') throw badRequest('"fields" can only be used with compound datasets');
  const names = fields.split(':');
  const chosen = names.map((n) => {
    const fld = type.fields.find((x) => x.name === n);
    if (!fld) throw badRequest(`Unknown field ${JSON.stringify(n)} in "fields"`);
    return fld;
  });
  if (new Set(names).size !== names.length) throw badRequest('"fields" names a field twice');
  return { class: 'H5T_COMPOUND', fields: chosen };
}

/**
 * libhdf5 selection for a parsed selection. Coordinate lists become point selections, sorted
 * and without repeats (`sortPoints`): the caller puts results back in the order asked with
 * `order` (reads) or picks each point's last value with `last` (writes).
 */
export function toSpaceSelection(sel: Selection, limits: ValueLimits): SpaceSelection & { order?: Uint32Array; last?: Uint32Array } {
  if (sel.dims.length === 0) return { kind: 'all' };
  if (sel.isHyperslab) {
    const s = sel.sel as { start: number; step: number; count: number }[];
    return { kind: 'hyperslab', start: s.map((x) => x.start), step: s.map((x) => x.step), count: s.map((x) => x.count) };
  }
  if (sel.count > limits.maxPoints) throw tooLarge(`Selection of ${sel.count} coordinates exceeds the limit of ${limits.maxPoints}`);
  const sp = sortPoints(expandPoints(sel, limits.maxPoints), sel.count, sel.dims);
  return { kind: 'points', coords: sp.coords, count: sp.count, order: sp.order, last: sp.last };
}

/** Point selection (sorted, unique) for a point list, with its `order`/`last` maps. */
export function pointSelection(points: { coords: BigUint64Array; count: number }, dims: number[]): SpaceSelection & { kind: 'points'; order?: Uint32Array; last?: Uint32Array } {
  const sp = sortPoints(points.coords, points.count, dims);
  return { kind: 'points', coords: sp.coords, count: sp.count, order: sp.order, last: sp.last };
}

/**
 * The elements `pick[0], pick[1], ...` of `n` elements of type `t` in the wire format, in that
 * order (repeats allowed): results of sorted point reads put back in the order asked, or the
 * last value of each point of a write.
 */
export function pickElements(wire: Buffer, t: TypeJson, n: number, pick: Uint32Array): Buffer {
  if (!isVariableLength(t)) {
    const size = typeSize(t);
    const out = Buffer.allocUnsafe(pick.length * size);
    for (let i = 0; i < pick.length; i++) wire.copy(out, i * size, pick[i]! * size, (pick[i]! + 1) * size);
    return out;
  }
  const starts = new Array<number>(n + 1);
  let off = 0;
  for (let k = 0; k < n; k++) {
    starts[k] = off;
    off = decodeElements(wire, t, 1, off).end;
  }
  starts[n] = off;
  return Buffer.concat(Array.from(pick, (k) => wire.subarray(starts[k]!, starts[k + 1]!)));
}

/**
 * Run a libhdf5 read or write of dataset values, turning a missing external raw data file (the
 * dataset names a file inside the root that is not there, or a folder that does not exist) into
 * a 404 naming the cause instead of libhdf5's error.
 */
export function storageErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Hdf5Error && e.mentions('external raw data file')) {
      throw notFound('An external raw data file of this dataset is missing (its layout lists the files)');
    }
    throw e;
  }
}

/**
 * A dataset whose filter this server cannot decode (`read`) or encode (`write`) answers 415
 * naming the filter's name and id and how to get it (issue #26 item 5; DESIGN.md 1: never
 * garbage bytes or an opaque libhdf5 error). Metadata of such datasets still works: only value
 * routes call this. bitshuffle is judged by its inner compression (src/hdf5/filters.ts).
 * @throws H5StoreError UnsupportedMediaType
 */
export function refuseMissingFilters(creation: io.DatasetCreation, need: 'read' | 'write' = 'read'): void {
  for (const fi of creation.filters) {
    const can = filterSupport(fi.id, fi.cdValues);
    if (can[need]) continue;
    // an optional filter libhdf5 may skip when writing (H5Z_FLAG_OPTIONAL), never when reading a chunk it applied
    if (need === 'write' && fi.flags & C.H5Z_FLAG_OPTIONAL && can.read) continue;
    throw new H5StoreError(
      'UnsupportedMediaType',
      `The dataset uses filter ${can.label}, which this server cannot ${need === 'read' ? 'decode' : 'encode'}: ${filterHint(fi.id)}. GET / lists the filters it reads and writes.`,
    );
  }
}

