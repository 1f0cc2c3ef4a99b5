/**
 * Dataset values, by job: reads (values/read.ts: the plan and its page sources; values/source.ts:
 * the `ValueSource` HTTP is given), `query=` (values/query.ts), writes (values/write.ts), and
 * what they share (values/common.ts). The store imports them from here.
 */
export * from './values/common.js';
export * from './values/read.js';
export * from './values/source.js';
export * from './values/query.js';
export * from './values/write.js';
