/**
 * Where a dataset's raw data lives and how much of it is allocated (for `verbose=1` statistics,
 * wire-reference 1.3): layout, allocated bytes (`H5Dget_storage_size`) and allocated chunks
 * (`H5Dget_num_chunks`, libhdf5 1.10.5+; counted as 0 on older releases).
 */
import { H5, type Hid, optionalH5 } from './lib.js';

const H5Dget_num_chunks = optionalH5('herr_t H5Dget_num_chunks(hid_t dset, hid_t fspace, _Out_ hsize_t *nchunks)');

/** Layout code of `H5Pget_layout` (H5D_COMPACT 0, H5D_CONTIGUOUS 1, H5D_CHUNKED 2, H5D_VIRTUAL 3). */
export const LAYOUT_CHUNKED = 2;
export const LAYOUT_CONTIGUOUS = 1;

/** Storage facts of an open dataset. */
export interface DatasetStorage {
  /** `H5Pget_layout` of its creation property list. */
  layout: number;
  /** Bytes of raw data allocated in the file (after filters). */
  allocated: number;
  /** Allocated chunks (chunked layout only; 0 otherwise). */
  chunks: number;
}

/** Layout, allocated bytes and allocated chunks of an open dataset. */
export function datasetStorage(did: Hid): DatasetStorage {
  const dcpl = H5.H5Dget_create_plist(did);
  let layout: number;
  try {
    layout = Number(H5.H5Pget_layout(dcpl));
  } finally {
    H5.H5Pclose(dcpl);
  }
  const allocated = Number(H5.H5Dget_storage_size(did));
  let chunks = 0;
  if (layout === LAYOUT_CHUNKED && H5Dget_num_chunks && allocated > 0) {
    const sid = H5.H5Dget_space(did);
    try {
      const n = [0n];
      H5Dget_num_chunks(did, sid, n);
      chunks = Number(n[0]);
    } finally {
      H5.H5Sclose(sid);
    }
  }
  return { layout, allocated, chunks };
}
