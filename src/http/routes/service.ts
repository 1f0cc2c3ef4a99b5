/**
 * Service routes: /about and /info (wire-reference 1.1, 1.2). Public: no domain, no ACL, but
 * credentials that are sent are still checked (a bad password is a 401 here too).
 */
import os from 'node:os';
import { filterReport } from '../../store/objects/datasets.js';
import { H5STORE_VERSION } from '../../version.js';
import type { Deps } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import type { Context } from 'koa';
import type { AuthState } from '../routeTable.js';

/** Version reported as `hsds_version`: h5pyd needs it to start with "0.9." (wire-reference 1.1). */
export const HSDS_COMPAT_VERSION = '0.9.4';

/** `GET /about`: the server, its versions and filters, and who is asking. */
export function about(ctx: Context, d: Deps): void {
  const p = (ctx.state as AuthState).principal;
  sendJson(ctx, 200, {
    start_time: d.startTime,
    state: 'READY',
    hsds_version: HSDS_COMPAT_VERSION,
    name: 'h5store',
    greeting: 'Welcome to h5store!',
    about: 'h5store serves HDF5 files over the HDF REST API',
    h5store_version: H5STORE_VERSION,
    hdf5_version: d.store.libraryVersion,
    /** Filters this server reads (decodes) and writes (encodes): src/hdf5/filters.ts. */
    filters: filterReport(),
    node_count: 1,
    dn_urls: [],
    dn_ids: [],
    username: p.authenticated ? p.name : 'anonymous',
    isadmin: p.admin,
    hrefs: [new Hrefs(ctx, d.config).rel('self', '/about')],
  });
}

/** `GET /info`: the process (memory, load, open files and libhdf5 ids). */
export function info(ctx: Context, d: Deps): void {
  const mem = process.memoryUsage();
  sendJson(ctx, 200, {
    node: { id: 'sn-1', type: 'sn', start_time: d.startTime, state: 'READY', node_count: 1 },
    cpu: { cores: os.cpus().length, load: os.loadavg() },
    memory: { rss: mem.rss, heapUsed: mem.heapUsed, total: os.totalmem(), free: os.freemem() },
    open_files: d.store.files.openFiles,
    /** Object ids open in libhdf5 now: 0 between requests unless an id leaked. */
    open_hdf5_ids: d.store.openIdCount(),
    hrefs: [new Hrefs(ctx, d.config).rel('self', '/info')],
  });
}
