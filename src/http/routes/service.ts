/**
 * Service routes: /about, /info, and the read side of /acls.
 */
import type Router from '@koa/router';
import os from 'node:os';
import { authorize, currentUser, effectiveAcl } from '../../auth/policy.js';
import { notImplemented } from '../../errors.js';
import type { Deps } from '../deps.js';
import { Hrefs, sendJson } from '../present.js';
import { requireDomain } from '../request.js';

/** Version reported as `hsds_version`: h5pyd needs it to start with "0.9." (wire-reference 1.1). */
export const HSDS_COMPAT_VERSION = '0.9.4';

export function serviceRoutes(router: Router, d: Deps): void {
  // GET /about
  router.get('/about', (ctx) => {
    sendJson(ctx, 200, {
      start_time: d.startTime,
      state: 'READY',
      hsds_version: HSDS_COMPAT_VERSION,
      name: 'h5store',
      greeting: 'Welcome to h5store!',
      about: 'h5store serves HDF5 files over the HDF REST API',
      h5store_version: process.env.npm_package_version ?? '0.1.0',
      hdf5_version: d.store.libraryVersion,
      node_count: 1,
      dn_urls: [],
      dn_ids: [],
      username: currentUser(ctx) === 'default' ? 'anonymous' : currentUser(ctx),
      isadmin: false,
      hrefs: [new Hrefs(ctx, d.config).rel('self', '/about')],
    });
  });

  // GET /info
  router.get('/info', (ctx) => {
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
  });

  // GET /acls: the domain's ACL (every user acts as `default` with full rights for now)
  router.get('/acls', async (ctx) => {
    const ref = requireDomain(ctx);
    authorize(ctx, ref.domain, 'readACL');
    await d.store.getDomain(ref.domain);
    const acl = effectiveAcl('default');
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 200, { acls: [{ userName: 'default', ...acl }], hrefs: [h.rel('self', '/acls'), h.rel('home', '/')] });
  });

  // GET /acls/:user
  router.get('/acls/:user', async (ctx) => {
    const ref = requireDomain(ctx);
    authorize(ctx, ref.domain, 'read');
    await d.store.getDomain(ref.domain);
    const acl = effectiveAcl(ctx.params.user);
    const h = new Hrefs(ctx, d.config, ref);
    sendJson(ctx, 200, { acl: { ...acl, userName: ctx.params.user }, hrefs: [h.rel('self', '/acls'), h.rel('home', '/')] });
  });

  // PUT /acls/:user and per-object ACL routes: not implemented yet
  const aclNotImplemented = () => {
    throw notImplemented('Changing ACLs is not implemented yet: every request acts as the default user with full rights');
  };
  router.put('/acls/:user', aclNotImplemented);
  for (const col of ['groups', 'datasets', 'datatypes']) {
    router.get(`/${col}/:id/acls`, aclNotImplemented);
    router.get(`/${col}/:id/acls/:user`, aclNotImplemented);
    router.put(`/${col}/:id/acls/:user`, aclNotImplemented);
  }
}
