/**
 * The route table (DESIGN.md section 7; docs/architecture.md "Permissions"): every route of the
 * API, once, as a literal entry with its method, its path, the permission it needs (`need`:
 * the ACL flag and what it is checked on, routeTable.ts `Scope`), its other options (routeTable.ts
 * `Route`: `domain`, `jsonBody`, `bodyDecides`, `object`, `targets`, `conditional`...) and its
 * handler, a named function of the module of the resource it serves (`handler(ctx, deps)`).
 *
 * To add a route: write its handler in the resource's module (or a new one named after the
 * resource), add one entry here, and add its `METHOD path need` line to the frozen list of
 * test/unit/route-table.test.ts. Paths are @koa/router paths; a path is matched with or without
 * a trailing slash, and among the routes of one first segment in the order written here (the
 * methods of one path in the order of `Allow`). The operations routes (`/healthz`, `/readyz`,
 * `/metrics`) depend on the process's metrics and configuration and are http/ops.ts's.
 */
import type { Deps } from '../deps.js';
import { type Route, type RouteEntry, bindRoutes, createdIn } from '../routeTable.js';
import * as acls from './acls.js';
import * as attributes from './attributes.js';
import * as datasets from './datasets.js';
import * as datatypes from './datatypes.js';
import * as domains from './domains.js';
import * as download from './download.js';
import * as events from './events.js';
import * as groups from './groups.js';
import * as grove from './grove.js';
import * as links from './links.js';
import * as service from './service.js';
import * as values from './values.js';

export const ROUTES: readonly RouteEntry[] = [
  // service (public: credentials sent are still checked)
  { method: 'GET', path: '/about', need: 'public', handler: service.about },
  { method: 'GET', path: '/info', need: 'public', handler: service.info },

  // domains and folders
  { method: 'GET', path: '/', need: { flag: 'read', on: 'object' }, domain: 'optional', object: domains.pathTarget, handler: domains.get },
  { method: 'PUT', path: '/', need: domains.putNeed, jsonBody: true, bodyDecides: [{ flag: 'update', on: 'domain' }, { flag: 'create', on: 'parent' }], handler: domains.put },
  { method: 'DELETE', path: '/', need: { flag: 'delete', on: 'domain' }, handler: domains.remove },
  { method: 'POST', path: '/', need: { flag: 'read', on: 'domain' }, jsonBody: true, targets: domains.lookupTargets, handler: domains.lookup },
  { method: 'GET', path: '/domains', need: { flag: 'read', on: 'domain' }, domain: 'optional', handler: domains.list },

  // groups
  { method: 'GET', path: '/groups', need: { flag: 'read', on: 'domain' }, handler: groups.list },
  { method: 'GET', path: '/groups/', need: { flag: 'read', on: 'domain' }, handler: groups.list },
  { method: 'POST', path: '/groups', need: { flag: 'create', on: 'object' }, jsonBody: true, jsonList: true, bodyDecides: [{ flag: 'create', on: 'object' }], object: createdIn, handler: groups.create },
  { method: 'GET', path: '/groups/:id', need: { flag: 'read', on: 'object' }, conditional: true, handler: groups.get },
  { method: 'DELETE', path: '/groups/:id', need: { flag: 'delete', on: 'object' }, handler: groups.remove },

  // links
  { method: 'GET', path: '/groups/:id/links', need: { flag: 'read', on: 'object' }, conditional: true, handler: links.list },
  { method: 'POST', path: '/groups/:id/links', need: { flag: 'read', on: 'object' }, jsonBody: true, targets: links.groupTargets, handler: links.read },
  { method: 'PUT', path: '/groups/:id/links', need: { flag: 'create', on: 'object' }, jsonBody: true, targets: links.groupTargets, handler: links.createMany },
  { method: 'DELETE', path: '/groups/:id/links', need: { flag: 'delete', on: 'object' }, handler: links.removeMany },
  { method: 'GET', path: '/groups/:id/links/:name', need: { flag: 'read', on: 'object' }, handler: links.get },
  { method: 'PUT', path: '/groups/:id/links/:name', need: { flag: 'create', on: 'object' }, handler: links.put },
  { method: 'DELETE', path: '/groups/:id/links/:name', need: { flag: 'delete', on: 'object' }, handler: links.remove },

  // datasets
  { method: 'GET', path: '/datasets', need: { flag: 'read', on: 'domain' }, handler: datasets.list },
  { method: 'GET', path: '/datasets/', need: { flag: 'read', on: 'domain' }, handler: datasets.list },
  { method: 'POST', path: '/datasets', need: { flag: 'create', on: 'object' }, jsonBody: true, jsonList: true, bodyDecides: [{ flag: 'create', on: 'object' }], object: createdIn, handler: datasets.create },
  { method: 'DELETE', path: '/datasets/:id', need: { flag: 'delete', on: 'object' }, handler: datasets.remove },
  { method: 'GET', path: '/datasets/:id', need: { flag: 'read', on: 'object' }, conditional: true, handler: datasets.get },
  { method: 'GET', path: '/datasets/:id/shape', need: { flag: 'read', on: 'object' }, conditional: true, handler: datasets.shape },
  { method: 'PUT', path: '/datasets/:id/shape', need: { flag: 'update', on: 'object' }, handler: datasets.resize },
  { method: 'GET', path: '/datasets/:id/type', need: { flag: 'read', on: 'object' }, conditional: true, handler: datasets.type },

  // dataset values
  { method: 'GET', path: '/datasets/:id/value', need: { flag: 'read', on: 'object' }, conditional: true, handler: values.read },
  { method: 'POST', path: '/datasets/:id/value', need: { flag: 'read', on: 'object' }, handler: values.readPoints },
  { method: 'PUT', path: '/datasets/:id/value', need: { flag: 'update', on: 'object' }, handler: values.write },

  // committed datatypes
  { method: 'GET', path: '/datatypes', need: { flag: 'read', on: 'domain' }, handler: datatypes.list },
  { method: 'GET', path: '/datatypes/', need: { flag: 'read', on: 'domain' }, handler: datatypes.list },
  { method: 'POST', path: '/datatypes', need: { flag: 'create', on: 'object' }, jsonBody: true, jsonList: true, bodyDecides: [{ flag: 'create', on: 'object' }], object: createdIn, handler: datatypes.create },
  { method: 'DELETE', path: '/datatypes/:id', need: { flag: 'delete', on: 'object' }, handler: datatypes.remove },
  { method: 'GET', path: '/datatypes/:id', need: { flag: 'read', on: 'object' }, conditional: true, handler: datatypes.get },

  // attributes of groups
  { method: 'GET', path: '/groups/:id/attributes', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.list },
  { method: 'POST', path: '/groups/:id/attributes', need: { flag: 'read', on: 'object' }, jsonBody: true, targets: attributes.objIdTargets, handler: attributes.read },
  { method: 'PUT', path: '/groups/:id/attributes', need: { flag: 'create', on: 'object' }, jsonBody: true, targets: attributes.objIdTargets, handler: attributes.putMany },
  { method: 'DELETE', path: '/groups/:id/attributes', need: { flag: 'delete', on: 'object' }, handler: attributes.removeMany },
  { method: 'GET', path: '/groups/:id/attributes/:name', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.get },
  { method: 'PUT', path: '/groups/:id/attributes/:name', need: { flag: 'create', on: 'object' }, handler: attributes.put },
  { method: 'DELETE', path: '/groups/:id/attributes/:name', need: { flag: 'delete', on: 'object' }, handler: attributes.remove },
  { method: 'GET', path: '/groups/:id/attributes/:name/value', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.readValue },
  { method: 'PUT', path: '/groups/:id/attributes/:name/value', need: { flag: 'update', on: 'object' }, handler: attributes.writeValue },

  // attributes of datasets
  { method: 'GET', path: '/datasets/:id/attributes', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.list },
  { method: 'POST', path: '/datasets/:id/attributes', need: { flag: 'read', on: 'object' }, jsonBody: true, targets: attributes.objIdTargets, handler: attributes.read },
  { method: 'PUT', path: '/datasets/:id/attributes', need: { flag: 'create', on: 'object' }, jsonBody: true, targets: attributes.objIdTargets, handler: attributes.putMany },
  { method: 'DELETE', path: '/datasets/:id/attributes', need: { flag: 'delete', on: 'object' }, handler: attributes.removeMany },
  { method: 'GET', path: '/datasets/:id/attributes/:name', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.get },
  { method: 'PUT', path: '/datasets/:id/attributes/:name', need: { flag: 'create', on: 'object' }, handler: attributes.put },
  { method: 'DELETE', path: '/datasets/:id/attributes/:name', need: { flag: 'delete', on: 'object' }, handler: attributes.remove },
  { method: 'GET', path: '/datasets/:id/attributes/:name/value', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.readValue },
  { method: 'PUT', path: '/datasets/:id/attributes/:name/value', need: { flag: 'update', on: 'object' }, handler: attributes.writeValue },

  // attributes of committed datatypes
  { method: 'GET', path: '/datatypes/:id/attributes', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.list },
  { method: 'POST', path: '/datatypes/:id/attributes', need: { flag: 'read', on: 'object' }, jsonBody: true, targets: attributes.objIdTargets, handler: attributes.read },
  { method: 'PUT', path: '/datatypes/:id/attributes', need: { flag: 'create', on: 'object' }, jsonBody: true, targets: attributes.objIdTargets, handler: attributes.putMany },
  { method: 'DELETE', path: '/datatypes/:id/attributes', need: { flag: 'delete', on: 'object' }, handler: attributes.removeMany },
  { method: 'GET', path: '/datatypes/:id/attributes/:name', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.get },
  { method: 'PUT', path: '/datatypes/:id/attributes/:name', need: { flag: 'create', on: 'object' }, handler: attributes.put },
  { method: 'DELETE', path: '/datatypes/:id/attributes/:name', need: { flag: 'delete', on: 'object' }, handler: attributes.remove },
  { method: 'GET', path: '/datatypes/:id/attributes/:name/value', need: { flag: 'read', on: 'object' }, conditional: true, handler: attributes.readValue },
  { method: 'PUT', path: '/datatypes/:id/attributes/:name/value', need: { flag: 'update', on: 'object' }, handler: attributes.writeValue },

  // ACLs: the domain's (its root group's) or a folder's, then each object's own
  { method: 'GET', path: '/acls', need: { flag: 'readACL', on: 'domain' }, handler: acls.list },
  { method: 'GET', path: '/acls/:user', need: acls.readEntryOfDomain, handler: acls.get },
  { method: 'PUT', path: '/acls/:user', need: { flag: 'updateACL', on: 'domain' }, jsonBody: true, handler: acls.put },
  { method: 'PUT', path: '/acls', need: { flag: 'updateACL', on: 'domain' }, jsonBody: true, handler: acls.putMany },
  { method: 'GET', path: '/groups/:id/acls', need: { flag: 'readACL', on: 'object' }, handler: acls.list },
  { method: 'GET', path: '/groups/:id/acls/:user', need: acls.readEntryOfObject, handler: acls.get },
  { method: 'PUT', path: '/groups/:id/acls/:user', need: { flag: 'updateACL', on: 'object' }, jsonBody: true, handler: acls.put },
  { method: 'PUT', path: '/groups/:id/acls', need: { flag: 'updateACL', on: 'object' }, jsonBody: true, handler: acls.putMany },
  { method: 'GET', path: '/datasets/:id/acls', need: { flag: 'readACL', on: 'object' }, handler: acls.list },
  { method: 'GET', path: '/datasets/:id/acls/:user', need: acls.readEntryOfObject, handler: acls.get },
  { method: 'PUT', path: '/datasets/:id/acls/:user', need: { flag: 'updateACL', on: 'object' }, jsonBody: true, handler: acls.put },
  { method: 'PUT', path: '/datasets/:id/acls', need: { flag: 'updateACL', on: 'object' }, jsonBody: true, handler: acls.putMany },
  { method: 'GET', path: '/datatypes/:id/acls', need: { flag: 'readACL', on: 'object' }, handler: acls.list },
  { method: 'GET', path: '/datatypes/:id/acls/:user', need: acls.readEntryOfObject, handler: acls.get },
  { method: 'PUT', path: '/datatypes/:id/acls/:user', need: { flag: 'updateACL', on: 'object' }, jsonBody: true, handler: acls.put },
  { method: 'PUT', path: '/datatypes/:id/acls', need: { flag: 'updateACL', on: 'object' }, jsonBody: true, handler: acls.putMany },

  // the domain's file, whole or by ranges (and HEAD)
  { method: 'GET', path: '/file', need: { flag: 'read', on: 'domain' }, handler: download.file },

  // h5grove's API (the domain is its file parameter; the object is the one at path)
  { method: 'GET', path: '/h5grove', need: 'public', handler: grove.status },
  { method: 'GET', path: '/h5grove/meta', need: { flag: 'read', on: 'object' }, domainParam: 'file', object: grove.objectAtPath, handler: grove.meta },
  { method: 'GET', path: '/h5grove/attr', need: { flag: 'read', on: 'object' }, domainParam: 'file', object: grove.objectAtPath, handler: grove.attr },
  { method: 'GET', path: '/h5grove/data', need: { flag: 'read', on: 'object' }, domainParam: 'file', object: grove.objectAtPath, handler: grove.data },
  { method: 'GET', path: '/h5grove/stats', need: { flag: 'read', on: 'object' }, domainParam: 'file', object: grove.objectAtPath, handler: grove.stats },
  { method: 'GET', path: '/h5grove/paths', need: { flag: 'read', on: 'object' }, domainParam: 'file', object: grove.objectAtPath, handler: grove.paths },

  // the domain's change feed (Server-Sent Events)
  { method: 'GET', path: '/events', need: { flag: 'read', on: 'domain' }, handler: events.follow },
];

/** Every route of the API for one server (`ROUTES`, each handler given `d`). */
export function routeTable(d: Deps): Route[] {
  return bindRoutes(ROUTES, d);
}
