/**
 * What every route module receives, and the href sets of each resource (service spec section 6).
 */
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import type { Store } from '../store/store.js';
import type { Href, Hrefs } from './present.js';

export interface Deps {
  config: Config;
  store: Store;
  logger: Logger;
  /** Who is asking (users file, tokens, OpenID Connect). */
  auth: Authenticator;
  /** Server start, seconds since the epoch. */
  startTime: number;
}

/** hrefs of a domain (GET /). */
export function domainHrefs(h: Hrefs, root: string | undefined, parent: string | undefined): Href[] {
  const out = [h.rel('self', '/')];
  if (root) {
    out.push(h.rel('database', '/datasets'), h.rel('groupbase', '/groups'), h.rel('typebase', '/datatypes'), h.rel('root', `/groups/${root}`));
  } else {
    out.push(h.rel('domains', '/domains'));
  }
  out.push(h.rel('acls', '/acls'));
  if (parent) out.push({ rel: 'parent', href: h.domainUrl(parent) });
  return out;
}

/** hrefs of an object (group, dataset, datatype). */
export function objectHrefs(h: Hrefs, collection: string, id: string, root: string, extra: Href[] = []): Href[] {
  return [
    h.rel('self', `/${collection}/${id}`),
    ...(collection === 'groups' ? [h.rel('links', `/groups/${id}/links`)] : []),
    h.rel('root', `/groups/${root}`),
    h.rel('home', '/'),
    h.rel('attributes', `/${collection}/${id}/attributes`),
    ...extra,
  ];
}

/** hrefs of a sub-resource owned by an object (links, attributes, shape, type, value). */
export function ownedHrefs(h: Hrefs, selfPath: string, ownerPath: string, root?: string): Href[] {
  const out = [h.rel('self', selfPath), h.rel('home', '/'), h.rel('owner', ownerPath)];
  if (root) out.push(h.rel('root', `/groups/${root}`));
  return out;
}
