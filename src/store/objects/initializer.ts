/**
 * `creationProperties.initializer` of POST /datasets (HSDS chunk initializers, sent by h5pyd's
 * `create_dataset(..., initializer=..., initializer_opts=[...])`): the dataset is filled once, at
 * creation, into the file (h5py and h5dump see the values), page by page with the event loop
 * running between pages; datasets above `maxInitializerBytes` are refused (413) before anything
 * is created (limits.ts `checkInitializerBytes`; docs/architecture.md "Decisions": HSDS fills
 * lazily, chunk by chunk, which a plain HDF5 file read by h5py cannot do). Only `arange` exists:
 * element k (C order over the whole extent) is `start + k * step`.
 *
 * Forms accepted: `["arange"]`, `["arange", start, step]` (numbers), and h5pyd's option strings
 * `["arange", "--start=10", "--step=2"]`. Defaults: start 0, step 1.
 */
import type { TypeJson } from '../../codec/types.js';
import { badRequest } from '../../errors.js';
import * as io from '../../hdf5/io.js';
import type { SpaceInfo } from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import { hyperslabSelection, pageHyperslab } from '../../selection/select.js';
import { nextTurn } from '../values/write.js';

/** A validated initializer. */
export interface Initializer {
  kind: 'arange';
  start: number;
  step: number;
}

const OPTION = /^--(start|step)=(.+)$/;

/**
 * Validate an `initializer` (wire-reference 3.4: stored and echoed; filled here at creation).
 * @throws BadRequest for an unknown initializer, bad options, or a type that holds no numbers.
 */
export function parseInitializer(value: unknown, type: TypeJson, space: SpaceInfo): Initializer {
  if (!Array.isArray(value) || value.length === 0 || typeof value[0] !== 'string') {
    throw badRequest('"initializer" must be a list: the initializer name, then its options (e.g. ["arange", 0, 1])');
  }
  if (value[0] !== 'arange') throw badRequest(`Unknown initializer ${JSON.stringify(value[0])}: only "arange" is supported`);
  if (type.class !== 'H5T_INTEGER' && type.class !== 'H5T_FLOAT') throw badRequest('The arange initializer needs an integer or float type');
  if (space.cls === 'H5S_NULL') throw badRequest('An initializer cannot be used with an H5S_NULL dataspace');
  const out: Initializer = { kind: 'arange', start: 0, step: 1 };
  const positional: number[] = [];
  for (const opt of value.slice(1)) {
    if (typeof opt === 'number' && Number.isFinite(opt)) {
      positional.push(opt);
      continue;
    }
    const m = typeof opt === 'string' ? OPTION.exec(opt.trim()) : null;
    const n = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(n)) throw badRequest(`Invalid arange option ${JSON.stringify(opt)}: expected a number, "--start=N" or "--step=N"`);
    out[m[1] as 'start' | 'step'] = n;
  }
  if (positional.length > 2) throw badRequest('arange takes at most two numbers: start and step');
  if (positional.length > 0) out.start = positional[0];
  if (positional.length > 1) out.step = positional[1];
  return out;
}

const F64: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };

/**
 * Fill a new dataset with its initializer, in pages of `pageBytes` of float64 values (converted
 * by libhdf5 to the dataset's type, as HDF5 converts any float write: integers truncated,
 * out-of-range clipped), one page per turn of the event loop (`nextTurn`: the write stays in its
 * transaction, under the file's locks).
 */
export async function runInitializer(did: Hid, space: SpaceInfo, init: Initializer, pageBytes: number): Promise<void> {
  const mt = io.createType(F64);
  try {
    if (space.cls === 'H5S_SCALAR') {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(init.start);
      io.writeDataset(did, F64, mt, { kind: 'all' }, 1, true, b);
      return;
    }
    const dims = space.dims;
    if (dims.some((d) => d === 0)) return;
    const sel = hyperslabSelection(dims, dims.map(() => 0), dims);
    let k = 0;
    for (const p of pageHyperslab(sel, 8, pageBytes)) {
      if (k > 0) await nextTurn();
      const b = Buffer.allocUnsafe(p.elements * 8);
      for (let i = 0; i < p.elements; i++) b.writeDoubleLE(init.start + (k + i) * init.step, i * 8);
      io.writeDataset(did, F64, mt, { kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, false, b);
      k += p.elements;
    }
  } finally {
    io.closeType(mt);
  }
}
