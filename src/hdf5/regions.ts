/**
 * Region references (`H5T_STD_REF_DSETREG`, libhdf5's deprecated-but-current 1.10 API:
 * `H5Rcreate`, `H5Rdereference2`, `H5Rget_region`): a dataset and a selection of its elements,
 * stored in the file's global heap; in memory a 12-byte `hdset_reg_ref_t`.
 */
import * as C from './constants.js';
import { H5, type Hid } from './lib.js';
import { REGION_REF_MEM_SIZE } from './memory.js';
import { objectAddr } from './objects.js';

/** A selection as libhdf5 reports it. */
export interface RegionSelection {
  selectType: 'H5S_SEL_NONE' | 'H5S_SEL_POINTS' | 'H5S_SEL_HYPERSLABS' | 'H5S_SEL_ALL';
  /** Point coordinates (H5S_SEL_POINTS). */
  points?: number[][];
  /** Blocks as inclusive [start, end] corners (H5S_SEL_HYPERSLABS). */
  blocks?: [number[], number[]][];
}

const SELECT_NAMES: Record<number, RegionSelection['selectType']> = {
  [C.H5S_SEL_NONE]: 'H5S_SEL_NONE',
  [C.H5S_SEL_POINTS]: 'H5S_SEL_POINTS',
  [C.H5S_SEL_HYPERSLABS]: 'H5S_SEL_HYPERSLABS',
  [C.H5S_SEL_ALL]: 'H5S_SEL_ALL',
};

/**
 * The dataset (header address) and selection of a region reference, or null when it names
 * nothing libhdf5 can open (a dangling reference).
 * @param file any id of the file that holds the reference
 */
export function readRegionRef(file: Hid, ref: Buffer): ({ addr: bigint } & RegionSelection) | null {
  let did: Hid;
  try {
    did = H5.H5Rdereference2(file, C.H5P_DEFAULT, C.H5R_DATASET_REGION, ref);
  } catch {
    return null;
  }
  try {
    const addr = objectAddr(did);
    const sid = H5.H5Rget_region(did, C.H5R_DATASET_REGION, ref);
    try {
      const selectType = SELECT_NAMES[H5.H5Sget_select_type(sid) as number] ?? 'H5S_SEL_NONE';
      const rank = H5.H5Sget_simple_extent_ndims(sid) as number;
      const out: { addr: bigint } & RegionSelection = { addr, selectType };
      if (selectType === 'H5S_SEL_POINTS') {
        const n = Number(H5.H5Sget_select_elem_npoints(sid));
        const buf = new BigUint64Array(n * rank);
        if (n > 0) H5.H5Sget_select_elem_pointlist(sid, 0n, BigInt(n), buf);
        out.points = Array.from({ length: n }, (_, i) => Array.from(buf.subarray(i * rank, (i + 1) * rank), Number));
      } else if (selectType === 'H5S_SEL_HYPERSLABS') {
        const n = Number(H5.H5Sget_select_hyper_nblocks(sid));
        const buf = new BigUint64Array(n * 2 * rank);
        if (n > 0) H5.H5Sget_select_hyper_blocklist(sid, 0n, BigInt(n), buf);
        out.blocks = Array.from({ length: n }, (_, i) => {
          const o = i * 2 * rank;
          return [Array.from(buf.subarray(o, o + rank), Number), Array.from(buf.subarray(o + rank, o + 2 * rank), Number)];
        });
      }
      return out;
    } finally {
      H5.H5Sclose(sid);
    }
  } finally {
    H5.H5Oclose(did);
  }
}

/**
 * Create a region reference to a selection of an open dataset (bounds already checked).
 * @returns the 12 bytes of the `hdset_reg_ref_t`
 */
export function createRegionRef(did: Hid, sel: RegionSelection): Buffer {
  const sid = H5.H5Dget_space(did);
  try {
    const u64 = (a: number[]) => new BigUint64Array(a.map(BigInt));
    switch (sel.selectType) {
      case 'H5S_SEL_ALL':
        H5.H5Sselect_all(sid);
        break;
      case 'H5S_SEL_NONE':
        H5.H5Sselect_none(sid);
        break;
      case 'H5S_SEL_POINTS': {
        const pts = sel.points ?? [];
        if (pts.length === 0) H5.H5Sselect_none(sid);
        else H5.H5Sselect_elements(sid, C.H5S_SELECT_SET, BigInt(pts.length), u64(pts.flat()));
        break;
      }
      case 'H5S_SEL_HYPERSLABS': {
        H5.H5Sselect_none(sid);
        for (const [start, end] of sel.blocks ?? []) {
          const ones = start.map(() => 1);
          H5.H5Sselect_hyperslab(sid, C.H5S_SELECT_OR, u64(start), null, u64(ones), u64(end.map((e, d) => e - start[d] + 1)));
        }
        break;
      }
    }
    const ref = Buffer.alloc(REGION_REF_MEM_SIZE);
    H5.H5Rcreate(ref, did, '.', C.H5R_DATASET_REGION, sid);
    return ref;
  } finally {
    H5.H5Sclose(sid);
  }
}
