/**
 * Dataset values, by job: reads (values/read.ts), `query=` (values/query.ts), writes
 * (values/write.ts), and what they share (values/common.ts). The store imports them from here.
 */
export * from './values/common.js';
export * from './values/read.js';
export * from './values/query.js';
export * from './values/write.js';
/** JSON values of fixed-size types formatted on the value threads (values/threadPool.ts). */
export { valueJsonOnThreads } from './values/threadPool.js';

/** Whether a long libhdf5 call runs on the worker thread, and waiting for it (for streams). */
export { hdf5Busy, whenIdle } from '../hdf5/heavy.js';
