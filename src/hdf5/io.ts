/**
 * Dataspaces, datasets, committed datatypes and attributes: metadata, creation and value I/O in
 * the wire format (wire-reference 3.5; `memory.ts` converts variable-length parts and
 * references). One module per job, re-exported here whole, so callers use `io.<name>`:
 * spaces.ts (dataspaces and selections), datasetIo.ts (datasets), committed.ts (committed
 * datatypes), attributeIo.ts (attributes).
 */
import { H5, type Hid } from './lib.js';
import { createType, describeType } from './types.js';

export * from './spaces.js';
export * from './datasetIo.js';
export * from './committed.js';
export * from './attributeIo.js';

/** Close a datatype id. */
export function closeType(tid: Hid): void {
  H5.H5Tclose(tid);
}

/** Create the HDF5 type for a type JSON (caller closes). */
export { createType, describeType };

