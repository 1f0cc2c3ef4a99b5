/**
 * Writes of dataset values (hyperslabs, points, broadcast, append, fields; wire-reference 3.5):
 * everything is validated before anything is written.
 */
import fs from 'node:fs';
import { type TypeJson, isVariableLength, refuseBinaryForm, typeSize } from '../../codec/types.js';
import { decodeElements, encodeElements, selectionValues, wrapSingleFieldValues } from '../../codec/values.js';
import { badRequest, conflict, tooLarge } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import { hdf5Turn } from '../../hdf5/heavy.js';
import * as io from '../../hdf5/io.js';
import type { SpaceSelection } from '../../hdf5/io.js';
import { type Hid } from '../../hdf5/lib.js';
import { memSize } from '../../hdf5/memory.js';
import * as h5 from '../../hdf5/objects.js';
import { type Selection, hyperslabSelection, pageHyperslab, parsePoints, parseSelect, selectionFromBody } from '../../selection/select.js';
import type { DomainFile } from '../objects/domainFile.js';
import { bytesOf, checkDatasetBytes, checkSelectionBytes } from '../access/limits.js';
import type { PagePool } from './pagepool.js';
import { fieldSubset, pickElements, pointSelection, refuseMissingFilters, storageErrors, toSpaceSelection, type ValueLimits } from './common.js';

/** How a write selects and supplies elements. */
export interface WriteRequest {
  select?: string;
  fields?: string;
  /** `append=n` (grow `appendDim` by n and write there). */
  append?: number;
  appendDim?: number;
  /** Number of elements in the body when broadcasting (`element_count`). */
  elementCount?: number;
  /** Binary body (wire format). */
  wire?: Buffer;
  /** A large binary body spooled to a temporary file (fixed-size types, hyperslabs only). */
  spool?: { path: string; size: number };
  /** JSON body. */
  json?: Record<string, unknown>;
}

/** A validated write: everything checked, nothing written yet. */
interface WritePlan {
  type: TypeJson;
  sel?: Selection;
  points?: { coords: BigUint64Array; count: number };
  count: number;
  /** The data, in memory... */
  wire?: Buffer;
  /** ...or spooled to a file (then fixed-size and a hyperslab). */
  spool?: { path: string; size: number };
  newDims?: number[];
  scalar: boolean;
  /** The dataset's extent (before an append). */
  dims: number[];
  /** Chunks larger than `maxChunkBytes` (a dropped-in file): write on the worker thread. */
  heavy: boolean;
}

function planWrite(f: DomainFile, did: Hid, req: WriteRequest, limits: ValueLimits): WritePlan {
  const { type: fullType, space } = io.datasetTypeAndSpace(did);
  const creation = io.describeCreationOf(did, fullType);
  // a write into an existing chunk decodes it first: both ways are needed
  refuseMissingFilters(creation, 'read');
  refuseMissingFilters(creation, 'write');
  const heavy = creation.layout === C.H5D_CHUNKED && bytesOf(creation.chunks ?? [], memSize(fullType)) > limits.maxChunkBytes;
  if (space.cls === 'H5S_NULL') throw badRequest('The dataset has a null dataspace (H5S_NULL): it holds no values');
  const scalar = space.cls === 'H5S_SCALAR';
  const type = fieldSubset(fullType, req.fields ?? (req.json?.fields as string | undefined));
  const body = req.json ?? {};
  let append = req.append ?? (body.append as number | undefined);
  let appendDim = req.appendDim ?? (body.append_dim as number | undefined) ?? 0;
  let sel: Selection | undefined;
  let points: { coords: BigUint64Array; count: number } | undefined;
  let newDims: number[] | undefined;
  const bodySel = req.json ? selectionFromBody(body as { select?: unknown }, space.dims) : undefined;
  if (append !== undefined) {
    if (typeof append !== 'number' || !Number.isSafeInteger(append) || append < 1) throw badRequest('"append" must be a positive integer');
    if (req.select || bodySel || body.points !== undefined) throw badRequest('"append" cannot be combined with a selection or points');
    if (space.cls !== 'H5S_SIMPLE') throw badRequest('Only simple dataspaces can be appended to');
    if (!Number.isInteger(appendDim) || appendDim < 0 || appendDim >= space.dims.length) throw badRequest('"append_dim" is out of range');
    if (creation.layout !== C.H5D_CHUNKED) throw badRequest('Dataset is not extensible (it is not chunked)');
    newDims = space.dims.slice();
    newDims[appendDim] += append;
    if (newDims[appendDim] > space.maxdims[appendDim]) {
      throw conflict(`Cannot append: dimension ${appendDim} would grow to ${newDims[appendDim]}, beyond its maximum ${space.maxdims[appendDim]}`);
    }
    checkDatasetBytes(newDims, memSize(fullType), limits, `Appending ${append}`);
    const start = space.dims.map((_, i) => (i === appendDim ? space.dims[i] : 0));
    const count = newDims.map((d, i) => (i === appendDim ? append! : d));
    sel = hyperslabSelection(newDims, start, count);
  } else if (body.points !== undefined) {
    if (req.select || bodySel) throw badRequest('Give "points" or a selection, not both');
    if (scalar) throw badRequest('Point writes are not supported for scalar datasets');
    points = parsePoints(body.points, space.dims);
    if (points.count > limits.maxPoints) throw tooLarge(`${points.count} points exceed the limit of ${limits.maxPoints} (max_points)`);
  } else {
    if (req.select && bodySel) throw badRequest('Give the selection in the query or in the body, not both');
    sel = bodySel ?? parseSelect(req.select, space.dims);
  }
  const count = points ? points.count : sel!.count;
  if (count === 0) throw badRequest('Selection is empty');
  checkSelectionBytes(count, isVariableLength(type) ? memSize(type) : typeSize(type), limits);
  const elementCount = req.elementCount ?? (body.element_count as number | undefined);
  if (req.spool) {
    if (isVariableLength(type) || !sel || !sel.isHyperslab) {
      throw tooLarge('Bodies this large can only be written to a hyperslab of a fixed-size type; send smaller requests');
    }
    if (elementCount !== undefined && elementCount !== count) throw badRequest('"element_count" broadcast needs a small body');
    const need = count * typeSize(type);
    if (req.spool.size !== need) throw badRequest(`Binary data is ${req.spool.size} bytes, expected ${need} (${count} elements of ${typeSize(type)} bytes)`);
    return { type, sel, count, spool: req.spool, newDims, scalar, dims: space.dims, heavy };
  }
  let wire: Buffer;
  if (req.wire) {
    refuseBinaryForm(type, 'body');
    wire = req.wire;
  } else if (typeof body.value_base64 === 'string') {
    refuseBinaryForm(type, 'base64');
    wire = Buffer.from(body.value_base64, 'base64');
  } else if (body.value !== undefined) {
    const shape = points ? [points.count] : elementCount === 1 ? [] : sel!.shape;
    // A flat list fills an N-D selection when the count matches; with element_count > 1 the
    // value holds that many elements, broadcast below (selectionValues).
    const n = typeof elementCount === 'number' && elementCount > 1 ? elementCount : shape.reduce((a, b) => a * b, 1);
    wire = encodeElements(selectionValues(wrapSingleFieldValues(body.value, type), shape, n, type), type);
    if (elementCount === 1) return finish(broadcast(wire, type, 1, count, limits));
  } else {
    throw badRequest('The write has no "value" (or binary body)');
  }
  if (elementCount !== undefined) {
    if (typeof elementCount !== 'number' || !Number.isSafeInteger(elementCount) || elementCount < 1) {
      throw badRequest('"element_count" must be a positive integer');
    }
    if (elementCount !== count) {
      if (count % elementCount !== 0) throw badRequest(`element_count ${elementCount} does not divide the selection of ${count} elements`);
      wire = broadcast(wire, type, elementCount, count, limits);
    }
  }
  return finish(wire);

  function finish(w: Buffer): WritePlan {
    if (!isVariableLength(type)) {
      const need = count * typeSize(type);
      if (w.length !== need) throw badRequest(`Binary data is ${w.length} bytes, expected ${need} (${count} elements of ${typeSize(type)} bytes)`);
    } else {
      w = checkVariableWire(w, type, count);
    }
    return { type, sel, points, count, wire: w, newDims, scalar, dims: space.dims, heavy };
  }
}

/**
 * Check that `wire` holds `count` elements of a variable-length type in the wire format
 * (length-prefixed parts), before anything is written: every element takes 4 bytes at least.
 * Bytes after the last element are ignored, as HSDS ignores them (issue #25).
 * @returns the elements' bytes
 * @throws BadRequest naming the sizes when the data ends before the last element does.
 */
function checkVariableWire(wire: Buffer, type: TypeJson, count: number): Buffer {
  if (count * 4 > wire.length) {
    throw badRequest(`Binary data is ${wire.length} bytes, too short for ${count} elements of a variable-length type (4 bytes each at least)`);
  }
  const { end } = decodeElements(wire, type, count);
  // bytes after the last element are ignored, as HSDS ignores them (its client sends 16 extra)
  return end === wire.length ? wire : wire.subarray(0, end);
}

/** Repeat `n` elements of wire data to fill `total` elements (at most `maxBroadcastBytes`). */
function broadcast(wire: Buffer, type: TypeJson, n: number, total: number, limits: ValueLimits): Buffer {
  const bytes = (wire.length / n) * total;
  if (bytes > limits.maxBroadcastBytes) {
    throw tooLarge(`The element_count broadcast would build ${bytes} bytes, above the limit of ${limits.maxBroadcastBytes} (maxBroadcastBytes): write smaller selections`);
  }
  if (!isVariableLength(type)) {
    const size = typeSize(type);
    if (wire.length !== n * size) throw badRequest(`Binary data is ${wire.length} bytes, expected ${n * size} for ${n} elements`);
    const out = Buffer.allocUnsafe(total * size);
    for (let o = 0; o < out.length; o += wire.length) wire.copy(out, o);
    return out;
  }
  const reps = total / n;
  return Buffer.concat(Array.from({ length: reps }, () => wire));
}

/**
 * PUT /datasets/<id>/value: validate everything (selection, sizes, types) before writing, then
 * write in pages (reading a spooled body page by page). `append` grows the dataset first.
 * @throws BadRequest (sizes, selection, types), Conflict (append beyond maxdims), 413 (points)
 */
export async function writeValues(f: DomainFile, id: string, req: WriteRequest, limits: ValueLimits, pool?: PagePool): Promise<void> {
  try {
    await writeValuesOf(f, id, req, limits, pool);
  } catch (e) {
    storageErrors(() => {
      throw e;
    });
  }
}

async function writeValuesOf(f: DomainFile, id: string, req: WriteRequest, limits: ValueLimits, pool?: PagePool): Promise<void> {
  const did = f.open(id, 'dataset');
  try {
    const plan = planWrite(f, did, req, limits);
    if (plan.newDims) io.setExtent(did, plan.newDims);
    try {
      await writePlanned(f, did, plan, limits, pool);
    } catch (e) {
      // An append whose write failed after the extent grew: shrink it back.
      if (plan.newDims) io.setExtent(did, plan.dims);
      throw e;
    }
  } finally {
    h5.closeObject(did);
  }
}

/**
 * Let the event loop run (other requests, I/O) between two pages of a large write, then wait
 * until libhdf5 is free again (heavy.ts). The write stays in its transaction and under the
 * file's exclusive locks meanwhile (files.ts `write`): nobody else sees or touches the file
 * until the commit, and a failure in a later page rolls back the earlier ones too.
 */
export async function nextTurn(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await hdf5Turn(() => undefined);
}

/**
 * The writes of a validated plan (see `writeValues`): a hyperslab of a fixed-size type is written
 * in pages of `pageBytes`, one page per turn of the event loop (`nextTurn`), so a 16 MiB body
 * does not keep the server from answering others for the whole `H5Dwrite`.
 */
async function writePlanned(f: DomainFile, did: Hid, plan: WritePlan, limits: ValueLimits, pool?: PagePool): Promise<void> {
  {
    const mt = io.createType(plan.type);
    // Into chunks larger than the chunk limit, one H5Dwrite can take a second: on the worker
    // thread (src/hdf5/heavy.ts), so the server answers other requests meanwhile.
    const put = (sel: SpaceSelection, n: number, scalar: boolean, wire: Buffer): void | Promise<void> =>
      plan.heavy ? io.writeDatasetOnWorker(did, plan.type, mt, sel, n, scalar, wire, f.refs) : io.writeDataset(did, plan.type, mt, sel, n, scalar, wire, f.refs);
    try {
      if (plan.points || (!plan.scalar && !plan.sel!.isHyperslab)) {
        // sorted, unique points; a point given twice gets the value given last
        const ps = plan.points ? pointSelection(plan.points, plan.dims) : (toSpaceSelection(plan.sel!, limits) as ReturnType<typeof pointSelection>);
        const wire = ps.last ? pickElements(plan.wire!, plan.type, plan.count, ps.last) : plan.wire!;
        await put(ps, ps.count, false, wire);
      } else if (plan.scalar || isVariableLength(plan.type)) {
        await put(toSpaceSelection(plan.sel!, limits), plan.count, plan.scalar, plan.wire!);
      } else {
        const size = typeSize(plan.type);
        const fd = plan.spool ? fs.openSync(plan.spool.path, 'r') : undefined;
        try {
          let off = 0;
          for (const p of pageHyperslab(plan.sel!, size, limits.pageBytes)) {
            if (off > 0) await nextTurn();
            const n = p.elements * size;
            let bytes: Buffer;
            let pooled: Buffer | undefined;
            if (fd !== undefined) {
              pooled = pool ? pool.take(n) : Buffer.allocUnsafe(n);
              bytes = pooled.subarray(0, n);
              let got = 0;
              while (got < n) {
                const r = fs.readSync(fd, bytes, got, n - got, off + got);
                if (r <= 0) throw badRequest('The spooled request body ended early');
                got += r;
              }
            } else {
              bytes = plan.wire!.subarray(off, off + n);
            }
            try {
              await put({ kind: 'hyperslab', start: p.start, step: p.step, count: p.count }, p.elements, false, bytes);
            } finally {
              if (pooled && pool) pool.give(pooled);
            }
            off += n;
          }
        } finally {
          if (fd !== undefined) fs.closeSync(fd);
        }
      }
    } finally {
      io.closeType(mt);
    }
  }
}
