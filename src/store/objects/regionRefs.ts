/**
 * Region references of a domain file <-> their JSON (issue #12; codec `parseRegionRef` form):
 * `{"id": "d-...", "select_type": "H5S_SEL_POINTS", "selection": [[0, 1], [2, 11]]}`, hyperslabs
 * as hdf5-json's block corners: the first element and one past the last (`[[[0, 0], [1, 3]], ...]`
 * is row 0, columns 0 to 2; issue #25: the hdf5-json corpus), `H5S_SEL_ALL` / `H5S_SEL_NONE`
 * without a selection, JSON `null` for a null (or dangling) reference.
 */
import { parseRegionRef } from '../../codec/values.js';
import { badRequest } from '../../errors.js';
import * as io from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import type { ObjectKind } from '../../hdf5/objects.js';
import { createRegionRef, readRegionRef } from '../../hdf5/regions.js';

/** What region references need of their domain file (domainFile.ts's entry, which builds its codec with them). */
export interface RegionFile {
  /** The open file. */
  readonly h: Hid;
  idOf(addr: bigint, kind: ObjectKind): string;
  withId<T>(id: string, expected: ObjectKind | undefined, fn: (oid: Hid, addr: bigint) => T): T;
}

/** JSON text of a (non-null) region reference; `''` when it names no dataset of the file. */
export function regionToJson(f: RegionFile, ref: Buffer): string {
  const r = readRegionRef(f.h, ref);
  if (!r) return '';
  const out: Record<string, unknown> = { id: f.idOf(r.addr, 'dataset'), select_type: r.selectType };
  if (r.points) out.selection = r.points;
  if (r.blocks) out.selection = r.blocks.map(([s, e]) => [s, e.map((x) => x + 1)]);
  return JSON.stringify(out);
}

/**
 * A region reference for its JSON text: the dataset must be a dataset of this file, points and
 * blocks must have its rank and lie inside its extent.
 * @throws BadRequest (malformed, wrong rank, out of bounds, not a dataset), NotFound (unknown id)
 */
export function regionFromJson(f: RegionFile, text: string): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('Invalid region reference: not JSON text');
  }
  const r = parseRegionRef(parsed);
  if (!r) return Buffer.alloc(12);
  return f.withId(r.id, 'dataset', (did) => {
    const { space } = io.datasetTypeAndSpace(did);
    if (space.cls === 'H5S_NULL') throw badRequest('Invalid region reference: the dataset has an H5S_NULL dataspace');
    const dims = space.cls === 'H5S_SCALAR' ? [] : space.dims;
    const inside = (p: number[], what: string) => {
      if (p.length !== dims.length) throw badRequest(`Invalid region reference: ${what} has rank ${p.length}, the dataset ${dims.length}`);
      p.forEach((x, d) => {
        if (x >= dims[d]) throw badRequest(`Invalid region reference: ${what} is outside the dataset's extent [${dims.join(', ')}]`);
      });
    };
    if (r.select_type === 'H5S_SEL_POINTS') {
      const points = r.selection as number[][];
      points.forEach((p, i) => inside(p, `point ${i}`));
      return createRegionRef(did, { selectType: 'H5S_SEL_POINTS', points });
    }
    if (r.select_type === 'H5S_SEL_HYPERSLABS') {
      // parseRegionRef's end corners are one past the block; libhdf5's are its last element
      const blocks = (r.selection as unknown as [number[], number[]][]).map(([s, e]) => [s, e.map((x) => x - 1)] as [number[], number[]]);
      blocks.forEach(([s, e], i) => {
        inside(s, `block ${i} start`);
        inside(e, `block ${i} end`);
      });
      return createRegionRef(did, { selectType: 'H5S_SEL_HYPERSLABS', blocks });
    }
    return createRegionRef(did, { selectType: r.select_type });
  });
}

