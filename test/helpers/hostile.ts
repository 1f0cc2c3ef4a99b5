/**
 * A concurrent hostile-input run (issue #24 item 14): many clients, every route of the route
 * table, valid and malformed requests mixed, bounded in time, from a seeded generator so that a
 * failure can be replayed. Used by `bench/hostile.ts` (the long runs and their figures) and by a
 * short bounded run in test/api/hostile.test.ts.
 *
 * Determinism: request `i` of seed `s` is made by a generator of its own (`rngFor(s, i)`) from the
 * *symbolic* world the setup made (domains, objects by role, names), so the same seed and index
 * give the same request in any run, whatever ids the files got (ids depend on inodes). What
 * differs between runs is only the interleaving, which is the point of running them concurrently.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { routeTable } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Route } from '../../src/http/routeTable.js';

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: a small, fast 32-bit generator; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generator of request `i` of run `seed` (independent of every other request's). */
export function rngFor(seed: number, i: number): Rng {
  return new Rng(mulberry32((Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(i + 1, 0xc2b2ae35)) >>> 0));
}

export class Rng {
  constructor(readonly next: () => number) {}
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  /** Pick by weight: [[weight, value], ...]. */
  weighted<T>(xs: readonly (readonly [number, T])[]): T {
    const total = xs.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of xs) {
      r -= w;
      if (r < 0) return v;
    }
    return xs[xs.length - 1][1];
  }
}

// ---------------------------------------------------------------------------------------------
// The world the setup makes

/** Roles of the objects made in every created domain. */
export const ROLES = ['root', 'g1', 'g2', 'i32', 'f64', 'vstr', 'cmp', 'fstr', 'scal', 'big', 't1'] as const;
/** Objects made to be deleted (`DELETE /groups/<id>`... mostly name these, so the others live). */
export const VICTIMS = ['vg0', 'vg1', 'vg2', 'vd0', 'vd1', 'vd2', 'vt0', 'vt1'] as const;
export type Role = (typeof ROLES)[number];

export interface DomainWorld {
  name: string;
  /** Object ids by role (created domains), or by `<kind><n>` (dropped-in files). */
  ids: Record<string, string>;
  /** True for a file copied in (not made through the API). */
  dropped: boolean;
  /** A file of `madeFiles` (large chunks, virtual and external storage): asked more often. */
  special?: boolean;
}

export interface World {
  /** Folder of every domain of the run, e.g. `/hostile`. */
  folder: string;
  domains: DomainWorld[];
  /** Names of domains that are created and deleted over and over. */
  churn: string[];
  /** Credentials (users mode), by name. */
  users?: Record<string, string>;
  /** Dataspace dims of the datasets of numeric types the setup saw, by id (for matching value bodies). */
  shapes?: Record<string, number[]>;
}

/** Link and attribute names the requests use (a small set, so creates and deletes meet). */
const NAMES = ['a', 'b', 'c', 'x1', 'x2', 'link', 'grp', 'ds', 'é', 'with space', 'a1', 'a2', 'a3'];
const HOSTILE_NAMES = ['', '.', '..', '/', 'a/b', '%2F', '__h5store__', 'x'.repeat(300), '\u0000nul', '\ud800', 'a\nb', '*', '?', 'Ω'.repeat(70)];

const TYPES: unknown[] = [
  'H5T_STD_I32LE',
  'H5T_STD_U8LE',
  'H5T_IEEE_F64LE',
  'H5T_IEEE_F32BE',
  'H5T_STD_I64BE',
  { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', length: 'H5T_VARIABLE', strPad: 'H5T_STR_NULLTERM' },
  { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', length: 8, strPad: 'H5T_STR_NULLPAD' },
  { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I16LE' }, { name: 'b', type: 'H5T_IEEE_F32LE' }] },
  { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [3] },
  { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' }, mapping: { RED: 0, GREEN: 1 } },
  { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' },
  { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' },
  { class: 'H5T_OPAQUE', size: 4, tag: 'x' },
];
const BAD_TYPES: unknown[] = [
  'H5T_NOPE',
  { class: 'H5T_INTEGER' },
  { class: 'H5T_COMPOUND', fields: [] },
  { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_STD_I8LE' }, { name: 'a', type: 'H5T_STD_I8LE' }] },
  { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', length: 1e12 },
  { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', length: -1 },
  { class: 'H5T_ARRAY', base: 'H5T_STD_I32LE', dims: [1e9, 1e9] },
  { class: 'H5T_ARRAY', base: { class: 'H5T_ARRAY', base: { class: 'H5T_ARRAY', base: 'H5T_STD_I8LE', dims: [0] }, dims: [2] }, dims: [2] },
  { class: 'H5T_ENUM', base: 'H5T_IEEE_F32LE', mapping: { A: 1.5 } },
  { class: 'H5T_OPAQUE', size: 0 },
  { class: 'H5T_VLEN', base: { class: 'H5T_VLEN', base: { class: 'H5T_VLEN', base: 'H5T_STD_I8LE' } } },
  null,
  42,
  [],
];

// ---------------------------------------------------------------------------------------------
// Requests

export interface HostileRequest {
  i: number;
  method: string;
  /** Path and query, sent as written. */
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send this many bytes of the body, then go away (a client that disconnects). */
  abortAfter?: number;
  /** Which route template made it (for the report). */
  route: string;
}

/** Percent-encode; a lone surrogate becomes the bytes of its (invalid) UTF-8 form, sent as such. */
const ENC = (s: string) => s.split(/([\ud800-\udfff])/).map((part, k) => (k % 2 ? '%ED%A0%80' : encodeURIComponent(part))).join('');

let ROUTES: Route[] | undefined;
/** The server's route table (every route the generator covers). */
export function serverRoutes(): Route[] {
  ROUTES ??= routeTable({ config: loadConfig({}), store: {} as never, logger: {} as never, auth: {} as never, startTime: 0 });
  return ROUTES;
}

/** Routes outside the table that every server has. */
const EXTRA_ROUTES = [
  ['GET', '/metrics'],
  ['GET', '/healthz'],
  ['GET', '/readyz'],
  ['PATCH', '/'],
  ['GET', '/nope/route'],
] as const;

/** A JSON value of random shape (for bodies that should be refused). */
function junk(r: Rng, depth = 0): unknown {
  const k = r.int(0, depth > 3 ? 5 : 8);
  switch (k) {
    case 0:
      return null;
    case 1:
      return r.pick([0, -1, 1e308, -1e-308, 2 ** 64, 3.5, NaN]);
    case 2:
      return r.pick(['', 'x', 'H5T_STD_I32LE', 'g-00000000-00000000-0000-000000-000000', '\u0000', '%00', 'Ω']);
    case 3:
      return r.chance(0.5);
    case 4:
      return r.pick(NAMES);
    case 5:
      return [];
    case 6:
      return Array.from({ length: r.int(0, 4) }, () => junk(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let n = r.int(0, 4); n > 0; n--) o[r.pick(['type', 'shape', 'value', 'link', 'id', 'name', 'h5path', 'creationProperties', 'attributes', 'links', 'acls', 'points', 'select', 'titles', 'obj_ids', 'maxdims', r.pick(NAMES)])] = junk(r, depth + 1);
      return o;
    }
  }
}

/** A body that is not valid JSON (or not what a JSON body may be). */
function brokenJson(r: Rng): string {
  return r.pick(['{', '{"type": ', '[1, 2', '{"a": 1}}', 'null', '"x"', '12', '{"value": [1, 2, NaN, Infinity]}', '\u0000{}', '{"a":' + '['.repeat(500) + ']'.repeat(500) + '}', '\xff\xfe{}', '{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {"x": 1}}}']);
}

/** Values for `n` elements of a type (often right, sometimes not). */
function valuesFor(r: Rng, type: unknown, n: number): unknown {
  const one = (): unknown => {
    if (typeof type === 'string') return type.includes('IEEE') ? r.pick([0.5, -1e300, NaN, 'NaN', 1, 'x']) : r.pick([0, 1, -1, 255, 2 ** 31, 2 ** 63, -(2 ** 70), 'x', 1.5, null]);
    const t = type as { class?: string };
    if (t?.class === 'H5T_STRING') return r.pick(['', 'abc', 'Ω', 'x'.repeat(20), 5, null]);
    if (t?.class === 'H5T_COMPOUND') return r.pick([[1, 2.5], [1], { a: 1, b: 2 }, 3]);
    if (t?.class === 'H5T_ARRAY') return r.pick([[1, 2, 3], [1], 7]);
    if (t?.class === 'H5T_ENUM') return r.pick([0, 1, 7, 'RED']);
    if (t?.class === 'H5T_VLEN') return r.pick([[1, 2], [], [1, 2, 3, 4, 5], 3]);
    if (t?.class === 'H5T_REFERENCE') return r.pick(['', 'groups/g-00000000-00000000-0000-000000-000000', 'x']);
    return junk(r, 2);
  };
  if (r.chance(0.1)) return one();
  return Array.from({ length: r.chance(0.1) ? r.int(0, n + 3) : n }, one);
}

/** A `select=` value: hyperslabs over up to 2 dimensions, often good, sometimes not. */
function selectParam(r: Rng): string {
  if (r.chance(0.25)) return r.pick(['[', '[0:', '[a]', '[-1:5]', '[1:2:0]', '[0:99999999999999999999]', '[5:2]', '[0:10:-1]', '[,]', '[0:1,0:1,0:1,0:1]', '[]', '[1;2]', '[0:1000000000000]', '[[0,1],[2,3]]', '[0:4:2:1]']);
  const dim = () => {
    const a = r.int(0, 40);
    const b = a + r.int(0, 30);
    return r.pick([`${a}:${b}`, `${a}`, `${a}:${b}:${r.int(1, 4)}`, ':']);
  };
  return `[${Array.from({ length: r.int(1, 2) }, dim).join(',')}]`;
}

/**
 * Request `i` of run `seed` on `world`: a route of the table (or outside it), its parameters,
 * query and body, valid or broken in one or more ways.
 */
export function makeRequest(world: World, seed: number, i: number): HostileRequest {
  const r = rngFor(seed, i);
  const routes = serverRoutes();
  // writes a bit more often than their share of the table: they are where the trouble was
  const pickExtra = r.chance(0.03);
  const route = pickExtra ? undefined : r.weighted(routes.map((rt) => [rt.method === 'GET' ? 1 : 1.6, rt] as const));
  const method = pickExtra ? r.pick(EXTRA_ROUTES)[0] : route!.method;
  let p = pickExtra ? r.pick(EXTRA_ROUTES.filter((e) => e[0] === method))[1] : route!.path;
  const headers: Record<string, string> = {};
  const query: string[] = [];
  let body: Buffer | undefined;
  // half the requests are well-formed in every part the generator breaks (so writes happen)
  const clean = r.chance(0.5);

  // the domain
  // DELETE / names a domain of the churn (or a bad name): the others live through the run
  const churnFirst = route?.path === '/' && (method === 'DELETE' || (method === 'PUT' && r.chance(0.8)));
  const special = world.domains.filter((d) => d.special);
  const dw = special.length && r.chance(0.25) ? r.pick(special) : r.pick(world.domains);
  let domain = churnFirst ? r.pick(world.churn) : dw.name;
  const domainStyle = clean ? 'query' : r.weighted([
    [80, 'query'],
    [6, 'header'],
    [3, 'missing'],
    [3, 'other'],
    [4, 'bad'],
    [4, 'folder'],
  ] as const);
  if (domainStyle === 'other' && !churnFirst) domain = r.pick(world.domains).name;
  if (domainStyle === 'folder') domain = r.pick([world.folder + '/', world.folder, '/', world.folder + '/fx/', '/nope/']);
  if (domainStyle === 'bad') domain = r.pick(['/../etc/passwd', '/hostile/%00.h5', 'relative.h5', '/' + 'x'.repeat(5000), '/hostile/.x.h5store-lock', '/hostile/.h5store-folder.json', '//', '/hostile/d0.h5/../d1.h5', 'hdf5://hostile/d0.h5', '/hostile/ü.h5']);
  if (domainStyle === 'query' || domainStyle === 'other' || domainStyle === 'bad' || domainStyle === 'folder') query.push(`domain=${r.chance(0.7) ? ENC(domain) : domain.replace(/[?&#%\s]/g, (c) => ENC(c))}`);
  if (domainStyle === 'header') headers[r.pick(['X-Hdf-domain', 'X-Store-domain'])] = domain;
  if (r.chance(0.01)) query.push(`domain=${ENC(r.pick(world.domains).name)}`); // twice

  // ids and names in the path
  const ownIds = Object.entries(dw.ids);
  const valueRoute = /\/value$/.test(route?.path ?? '');
  // DELETE of an object names one made to be deleted (or a broken id): the others live
  const victims = method === 'DELETE' && /^\/(groups|datasets|datatypes)\/:id$/.test(route?.path ?? '');
  const idOfKind = (kind: 'g' | 'd' | 't'): string => {
    let mine = ownIds.filter(([role, id]) => id.startsWith(kind + '-') && (!victims || role.startsWith('v')));
    // value routes mostly name datasets whose shape is known (so their bodies can fit)
    if (valueRoute && kind === 'd' && r.chance(0.7)) {
      const shaped = mine.filter(([, id]) => world.shapes?.[id]);
      if (shaped.length) mine = shaped;
    }
    const style = clean ? 'own' : r.weighted([
      [78, 'own'],
      [5, 'otherDomain'],
      [5, 'wrongKind'],
      [4, 'garbage'],
      [4, 'unknown'],
      [4, 'uuid'],
    ] as const);
    if (style === 'own' && mine.length) return r.pick(mine)[1];
    if (style === 'otherDomain') {
      const o = Object.values(r.pick(world.domains).ids).filter((id) => id.startsWith(kind + '-'));
      if (o.length) return r.pick(o);
    }
    if (style === 'wrongKind' && ownIds.length) return r.pick(ownIds)[1];
    if (style === 'uuid') return `${kind}-${'0123abcd-4567-89ef-0123-456789abcdef'}`;
    if (style === 'unknown' && mine.length) {
      const id = r.pick(mine)[1];
      return id.slice(0, -6) + r.int(0, 0xffffff).toString(16).padStart(6, '0');
    }
    return r.pick([`${kind}-`, `${kind}-zz`, 'x', '..', '%00', `${kind}-${'f'.repeat(32)}`, `${kind}-00000000-00000000-0000-000000-00000g`, `${kind}-${'0'.repeat(400)}`]);
  };
  const name = () => (clean || r.chance(0.85) ? r.pick(NAMES) : r.pick(HOSTILE_NAMES));
  const kindOf = (q: string): 'g' | 'd' | 't' => (q.startsWith('/datasets') ? 'd' : q.startsWith('/datatypes') ? 't' : 'g');
  const pathId = p.includes(':id') ? idOfKind(kindOf(p)) : undefined;
  if (pathId !== undefined) p = p.replace(':id', ENC(pathId));
  const dims = pathId !== undefined ? world.shapes?.[pathId] : undefined;
  /** A selection inside `dims` and its element count. */
  const fitting = (d: number[]): { select: string; n: number } => {
    const parts = d.map((len) => {
      const a = r.int(0, Math.max(0, len - 1));
      const k = r.int(1, Math.max(1, Math.min(len - a, 12)));
      return { text: `${a}:${a + k}`, k };
    });
    return { select: `[${parts.map((x) => x.text).join(',')}]`, n: parts.reduce((m, x) => m * x.k, 1) };
  };
  if (p.includes(':name')) p = p.replace(':name', ENC(name()));
  if (p.includes(':user')) p = p.replace(':user', ENC(r.pick(['alice', 'bob', 'admin', ...(world.users || method === 'GET' ? ['default'] : []), 'g:staff', '', 'a/b', 'x'.repeat(200)])));

  // what the body and query should be, by route
  const key = `${method} ${route?.path ?? p}`;
  let json: unknown;
  const anyGroup = () => idOfKind('g');
  const link = () => ({ id: anyGroup(), name: name() });
  switch (key) {
    case 'GET /':
      if (r.chance(0.3)) query.push('getobjs=1', 'include_attrs=1');
      if (r.chance(0.2)) query.push('verbose=1');
      if (r.chance(0.2)) query.push(`h5path=${ENC(r.pick(['/g1', '/g1/g2', '/nope', 'g1', '/i32', '/soft', '/ext', '//', '/../x']))}`);
      break;
    case 'PUT /':
      if (r.chance(0.15)) query.push(r.pick(['flush=1', 'rescan=1', 'flush=1&getdnids=1']));
      json = r.weighted([
        [5, {}],
        [2, { folder: true }],
        [1, { owner: 'bob' }],
        [1, { group: { creationProperties: { CreateOrder: 1 } } }],
        [1, junk(r)],
      ] as const);
      break;
    case 'DELETE /':
      if (r.chance(0.1)) query.push('keep_root=1');
      break;
    case 'POST /':
      json = r.chance(0.8) ? { h5paths: Array.from({ length: r.int(0, 5) }, () => r.pick(['/g1', '/i32', '/g1/g2', '/nope', 'x', '/soft', '/ext'])) } : junk(r);
      if (r.chance(0.3)) query.push('follow_soft_links=1', 'follow_external_links=1');
      break;
    case 'GET /domains':
      query.length = 0;
      query.push(`domain=${ENC(r.pick([world.folder + '/', '/', world.folder + '/fx/', world.folder + '/churn/', '/nope/']))}`);
      if (r.chance(0.3)) query.push(`Limit=${r.pick([1, 2, 0, -1, 'x', 1e9])}`);
      if (r.chance(0.2)) query.push(`Marker=${ENC(r.pick(world.domains).name)}`);
      if (r.chance(0.2)) query.push('verbose=1');
      if (r.chance(0.1)) query.push(`query=${ENC(r.pick(['a1 > 1', 'a1 ==', "a2 == 'x'", '(((']))}`);
      if (r.chance(0.1)) query.push(`pattern=${ENC(r.pick(['*.h5', '[', 'd?.h5']))}`);
      break;
    case 'POST /groups':
      json = r.weighted([
        [4, { link: link() }],
        [2, {}],
        [2, { h5path: r.pick(['/new', '/g1/new', 'x', '/nope/new', '/g1']) }],
        [1, { parent_id: anyGroup(), h5path: 'sub' }],
        [1, { link: link(), creationProperties: { CreateOrder: 1 } }],
        [1, junk(r)],
      ] as const);
      if (r.chance(0.1)) query.push('implicit=1');
      break;
    case 'POST /datasets': {
      const shape = r.pick<unknown>([[10], [4, 5], 'H5S_SCALAR', 'H5S_NULL', [0], [1e12], [-1], [2, 3, 4], 7, [], [1e6, 1e6]]);
      json = {
        type: r.chance(0.85) ? r.pick(TYPES) : r.pick(BAD_TYPES),
        shape,
        ...(r.chance(0.3) ? { maxdims: r.pick([[0], [null], [100], [0, 0], ['H5S_UNLIMITED'], [5]]) } : {}),
        ...(r.chance(0.3) ? { creationProperties: r.pick([{ layout: { class: 'H5D_CHUNKED', dims: [r.int(0, 8)] } }, { filters: [{ class: 'H5Z_FILTER_DEFLATE', level: 9 }] }, { filters: ['gzip', 'shuffle'] }, { fillValue: r.pick([1, 'nan', 'x']) }, { layout: { class: 'H5D_CONTIGUOUS' } }, { layout: { class: 'H5D_COMPACT' } }, { filters: [{ id: 32000 }] }, junk(r)]) } : {}),
        ...(r.chance(0.7) ? { link: link() } : {}),
        ...(r.chance(0.05) ? { initializer: ['arange', 0, 1] } : {}),
      };
      if (r.chance(0.1)) json = junk(r);
      break;
    }
    case 'POST /datatypes':
      json = { type: r.chance(0.8) ? r.pick(TYPES) : r.pick(BAD_TYPES), ...(r.chance(0.6) ? { link: link() } : {}) };
      break;
    case 'GET /groups':
    case 'GET /datasets':
    case 'GET /datatypes':
    case 'GET /groups/':
    case 'GET /datasets/':
    case 'GET /datatypes/':
      if (r.chance(0.5)) query.push(`h5path=${ENC(r.pick(['/g1', '/i32', '/t1', 'g2', '/nope', '/soft', '/ext']))}`);
      if (r.chance(0.2)) query.push(`parent_id=${anyGroup()}`);
      if (r.chance(0.2)) query.push(`Limit=${r.pick([1, 0, 'x'])}`);
      break;
    case 'GET /groups/:id':
      if (r.chance(0.3)) query.push('include_links=1', 'include_attrs=1');
      if (r.chance(0.1)) query.push('getalias=1');
      if (r.chance(0.1)) query.push(`h5path=${ENC(r.pick(['g2', '/g1', 'x']))}`);
      break;
    case 'GET /groups/:id/links':
      if (r.chance(0.3)) query.push(`Limit=${r.pick([1, 2, 0, -5, 'x'])}`);
      if (r.chance(0.3)) query.push(`Marker=${ENC(name())}`);
      if (r.chance(0.2)) query.push('CreateOrder=1');
      if (r.chance(0.1)) query.push('follow_links=1');
      if (r.chance(0.1)) query.push(`pattern=${ENC(r.pick(['a*', '[', '*']))}`);
      break;
    case 'POST /groups/:id/links':
      json = r.pick<unknown>([{ titles: [name(), name()] }, { grp_ids: [anyGroup(), anyGroup()] }, { grp_ids: { [anyGroup()]: [name()] } }, {}, junk(r)]);
      break;
    case 'PUT /groups/:id/links':
      json = { links: Object.fromEntries(Array.from({ length: r.int(0, 3) }, () => [name(), r.pick<unknown>([{ id: r.pick(Object.values(dw.ids)) }, { h5path: '/g1' }, { h5path: 'x', h5domain: r.pick(world.domains).name }, junk(r)])])) };
      if (r.chance(0.2)) (json as Record<string, unknown>).grp_ids = [anyGroup()];
      break;
    case 'DELETE /groups/:id/links':
      if (r.chance(0.9)) query.push(`titles=${ENC([name(), name()].join('/'))}`);
      break;
    case 'PUT /groups/:id/links/:name':
      json = r.pick<unknown>([{ id: r.pick(Object.values(dw.ids)) }, { id: r.pick(Object.values(dw.ids)) }, { h5path: r.pick(['/g1', '/nope', '']) }, { h5path: '/g1', h5domain: r.pick(world.domains).name }, { h5path: '/g1', file: 'x.h5' }, {}, junk(r)]);
      break;
    case 'PUT /datasets/:id/shape':
      json = r.pick<unknown>([{ shape: [r.int(0, 60)] }, { shape: [r.int(0, 60), 30] }, { extend: r.int(-2, 10), extend_dim: r.int(-1, 2) }, { shape: [1e15] }, { shape: 'x' }, junk(r)]);
      break;
    case 'GET /datasets/:id/value':
      if (dims && dims.length && (clean || r.chance(0.5))) query.push(`select=${ENC(fitting(dims).select)}`);
      else if (r.chance(0.7)) query.push(`select=${ENC(selectParam(r))}`);
      if (r.chance(0.1)) query.push(`query=${ENC(r.pick(['a > 1', 'b < 0.5 AND a == 2', 'x ==', '(a > 1']))}`);
      if (r.chance(0.2)) headers.accept = 'application/octet-stream';
      if (r.chance(0.1)) query.push(r.pick(['ignore_nan=1', 'Limit=2', 'reduce_dim=1', 'nonstrict=1']));
      break;
    case 'POST /datasets/:id/value':
      if (r.chance(0.8)) json = { points: Array.from({ length: r.int(0, 8) }, () => (r.chance(0.5) ? r.int(-1, 40) : [r.int(0, 25), r.int(0, 35)])) };
      else if (r.chance(0.5)) {
        headers['content-type'] = 'application/octet-stream';
        body = Buffer.alloc(r.pick([0, 7, 8, 16, 24]));
      } else json = junk(r);
      break;
    case 'PUT /datasets/:id/value': {
      if (dims && dims.length && (clean || r.chance(0.5))) {
        // a write that fits: numbers for every element of a selection inside the dataset
        const f = fitting(dims);
        query.push(`select=${ENC(f.select)}`);
        json = { value: Array.from({ length: f.n }, () => r.int(0, 100)) };
        break;
      }
      if (r.chance(0.7)) query.push(`select=${ENC(selectParam(r))}`);
      if (r.chance(0.05)) query.push(`append=${r.int(-1, 5)}`);
      if (r.chance(0.3)) {
        headers['content-type'] = 'application/octet-stream';
        body = Buffer.alloc(r.pick([0, 1, 4, 40, 400, 4000, 240 * 8, 100000]), r.int(0, 255));
      } else json = r.chance(0.85) ? { value: valuesFor(r, r.pick(TYPES.slice(0, 5)), r.int(1, 40)) } : r.pick<unknown>([{ value: [] }, { value: null }, { value_base64: 'AAAA' }, { value_base64: '!!' }, junk(r), { value: 1, element_count: 1e9 }]);
      break;
    }
    case 'PUT /acls':
    case 'PUT /groups/:id/acls':
    case 'PUT /datasets/:id/acls':
    case 'PUT /datatypes/:id/acls':
      // (not `default` without a users file: every request is `default` there, and one revoke would end the run's coverage)
      json = r.pick<unknown>([{ acls: { [r.pick(world.users ? ['alice', 'bob', 'default', 'g:staff'] : ['alice', 'bob', 'g:staff'])]: { read: r.chance(0.5), update: r.chance(0.5) } } }, { acls: [{ userName: 'bob', read: true }] }, { acls: 'x' }, junk(r)]);
      break;
    case 'PUT /acls/:user':
    case 'PUT /groups/:id/acls/:user':
    case 'PUT /datasets/:id/acls/:user':
    case 'PUT /datatypes/:id/acls/:user':
      json = r.pick<unknown>([{ read: true }, { read: false, update: true }, { create: 'yes' }, { fly: true }, junk(r)]);
      break;
    default:
      if (/attributes$/.test(route?.path ?? '')) {
        if (method === 'PUT') {
          const attrs = Object.fromEntries(Array.from({ length: r.int(0, 3) }, () => [name(), { type: r.chance(0.9) ? r.pick(TYPES) : r.pick(BAD_TYPES), shape: r.pick<unknown>([[3], 'H5S_SCALAR', [2, 2], 'H5S_NULL']), value: valuesFor(r, r.pick(TYPES), 3) }]));
          json = r.pick<unknown>([{ attributes: attrs }, { attributes: attrs, obj_ids: [idOfKind('g'), idOfKind('d')] }, junk(r)]);
          if (r.chance(0.2)) query.push('replace=1');
        } else if (method === 'POST') {
          json = r.pick<unknown>([{ attr_names: [name(), name()] }, { obj_ids: [idOfKind('g'), idOfKind('d')] }, { obj_ids: { [idOfKind('d')]: [name()] } }, junk(r)]);
          if (r.chance(0.3)) query.push('IncludeData=1');
        } else if (method === 'DELETE') {
          if (r.chance(0.9)) query.push(`attr_names=${ENC([name(), name()].join('/'))}`);
        } else {
          if (r.chance(0.3)) query.push(`Limit=${r.pick([1, 0, 'x'])}`, `Marker=${ENC(name())}`);
          if (r.chance(0.3)) query.push('IncludeData=1');
        }
      } else if (/attributes\/:name$/.test(route?.path ?? '') && method === 'PUT') {
        const type = r.chance(0.9) ? r.pick(TYPES) : r.pick(BAD_TYPES);
        const shape = r.pick<unknown>([[3], 'H5S_SCALAR', [2, 2], 'H5S_NULL', [100000], [1e9], 5, undefined]);
        json = { type, shape, value: valuesFor(r, type, shape === 'H5S_SCALAR' ? 1 : 3) };
        if (r.chance(0.2)) query.push(r.pick(['replace=0', 'replace=1']));
        if (r.chance(0.05)) json = junk(r);
      } else if (/attributes\/:name\/value$/.test(route?.path ?? '') && method === 'PUT') {
        if (r.chance(0.2)) {
          headers['content-type'] = 'application/octet-stream';
          body = Buffer.alloc(r.pick([0, 4, 12, 13]));
        } else json = r.chance(0.8) ? { value: valuesFor(r, r.pick(TYPES), 3) } : junk(r);
      } else if (method === 'GET' && r.chance(0.1)) query.push(r.pick(['IncludeData=0', 'encoding=base64', 'ignore_nan=1', 'max_data_size=1']));
  }

  // broken in other ways
  if (json !== undefined && body === undefined) {
    const style = clean ? 'json' : r.weighted([
      [85, 'json'],
      [6, 'broken'],
      [3, 'wrongType'],
      [3, 'junk'],
      [3, 'big'],
    ] as const);
    if (style === 'json') body = Buffer.from(JSON.stringify(json));
    else if (style === 'broken') body = Buffer.from(brokenJson(r), 'latin1');
    else if (style === 'junk') body = Buffer.from(JSON.stringify(junk(r)));
    else if (style === 'big') body = Buffer.from(JSON.stringify({ ...(typeof json === 'object' && json ? json : {}), pad: 'x'.repeat(r.pick([1 << 16, 1 << 20])) }));
    else body = Buffer.from(JSON.stringify(json));
    headers['content-type'] ??= style === 'wrongType' ? r.pick(['text/plain', 'application/octet-stream', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']) : 'application/json';
  } else if (body === undefined && method !== 'GET' && r.chance(0.05)) {
    body = Buffer.from(brokenJson(r), 'latin1');
    headers['content-type'] = 'application/json';
  }
  if (!clean && r.chance(0.06)) query.push(r.pick(['select=[', 'Limit=-1', 'h5path=', 'domain=', 'bucket=BAD_BUCKET!', 'follow_links=2', 'CreateOrder=x', `junk=${'%'.repeat(3)}`]));
  if (!clean && r.chance(0.04)) // malformed only: a wrong password costs a scrypt on libuv's pool each time (password
  // guessing is issue #24 item 8, measured on its own)
  headers.authorization = r.pick(['Basic', 'Basic !!!', 'Bearer x', 'Basic ' + Buffer.from('nocolon').toString('base64'), 'Digest x']);
  else if (world.users) {
    const who = r.weighted([
      [60, 'admin'],
      [15, 'alice'],
      [15, 'bob'],
      [10, 'anonymous'],
    ] as const);
    if (who !== 'anonymous') headers.authorization = 'Basic ' + Buffer.from(`${who}:${world.users[who]}`).toString('base64');
  }
  if (r.chance(0.02)) headers['x-requested-with'] = 'XMLHttpRequest';
  if (r.chance(0.01)) headers.origin = 'http://evil.example';
  if (r.chance(0.01)) headers['accept-encoding'] = 'gzip, br';
  const abortAfter = body && body.length > 1 && r.chance(0.02) ? r.int(1, body.length - 1) : undefined;
  const url = p + (query.length ? '?' + query.join('&') : '');
  return { i, method, url, headers, body, abortAfter, route: route ? `${route.method} ${route.path}` : `${method} ${p}` };
}

// ---------------------------------------------------------------------------------------------
// Setup

interface Reply {
  status: number;
  json: any;
  text: string;
}

/** One request of the setup (JSON in and out). @throws Error on a status other than 2xx */
async function call(base: string, method: string, p: string, body?: unknown, auth?: string): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (auth) headers.authorization = auth;
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.status >= 300) throw new Error(`setup: ${method} ${p} answered ${res.status}: ${text.slice(0, 300)}`);
  return { status: res.status, json, text };
}

/**
 * Make the world of a run in a server's data directory (the server runs, as `base`): `domains`
 * domains under `/hostile` made through the API, each with groups, datasets of several types and
 * layouts, a committed type, attributes, soft and external links and values; and copies of
 * `fixtures` (HDF5 files) dropped into `/hostile/fx/`, whose objects are learnt by `getobjs`.
 * @param auth an Authorization header for the setup (users mode: the admin's)
 */
export async function setupWorld(base: string, root: string, opts: { domains?: number; fixtures?: string[]; auth?: string; users?: Record<string, string>; made?: boolean } = {}): Promise<World> {
  const folder = '/hostile';
  const a = opts.auth;
  const q = (d: string) => `domain=${ENC(d)}`;
  await call(base, 'PUT', `/?${q(folder)}`, { folder: true }, a).catch(() => undefined);
  await call(base, 'PUT', `/?${q(folder + '/churn')}`, { folder: true }, a).catch(() => undefined);
  const domains: DomainWorld[] = [];
  const n = opts.domains ?? 4;
  for (let k = 0; k < n; k++) {
    const name = `${folder}/d${k}.h5`;
    const made = await call(base, 'PUT', `/?${q(name)}`, {}, a);
    const ids: Record<string, string> = { root: made.json.root };
    const post = async (col: string, body: unknown) => (await call(base, 'POST', `/${col}?${q(name)}`, body, a)).json.id as string;
    ids.g1 = await post('groups', { link: { id: ids.root, name: 'g1' } });
    ids.g2 = await post('groups', { link: { id: ids.g1, name: 'g2' } });
    ids.i32 = await post('datasets', { type: 'H5T_STD_I32LE', shape: [40], link: { id: ids.root, name: 'i32' } });
    ids.f64 = await post('datasets', { type: 'H5T_IEEE_F64LE', shape: [20, 30], maxdims: [0, 30], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [8, 10] }, filters: [{ class: 'H5Z_FILTER_DEFLATE', level: 4 }] }, link: { id: ids.g1, name: 'f64' } });
    ids.vstr = await post('datasets', { type: TYPES[5], shape: [10], link: { id: ids.root, name: 'vstr' } });
    ids.cmp = await post('datasets', { type: TYPES[7], shape: [8], link: { id: ids.g2, name: 'cmp' } });
    ids.fstr = await post('datasets', { type: TYPES[6], shape: [6], link: { id: ids.root, name: 'fstr' } });
    ids.scal = await post('datasets', { type: 'H5T_STD_I64BE', shape: 'H5S_SCALAR', link: { id: ids.root, name: 'scal' } });
    ids.big = await post('datasets', { type: 'H5T_STD_U8LE', shape: [1 << 18], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [1 << 16] } }, link: { id: ids.root, name: 'big' } });
    ids.t1 = (await call(base, 'POST', `/datatypes?${q(name)}`, { type: TYPES[7], link: { id: ids.root, name: 't1' } }, a)).json.id;
    await call(base, 'PUT', `/datasets/${ids.i32}/value?${q(name)}`, { value: Array.from({ length: 40 }, (_, j) => j) }, a);
    await call(base, 'PUT', `/datasets/${ids.vstr}/value?${q(name)}`, { value: Array.from({ length: 10 }, (_, j) => `s${j}`) }, a);
    for (const [owner, col] of [[ids.root, 'groups'], [ids.i32, 'datasets']] as const) {
      await call(base, 'PUT', `/${col}/${owner}/attributes/a1?${q(name)}`, { type: 'H5T_STD_I32LE', value: k }, a);
      await call(base, 'PUT', `/${col}/${owner}/attributes/a2?${q(name)}`, { type: TYPES[5], value: 'x' }, a);
      await call(base, 'PUT', `/${col}/${owner}/attributes/a3?${q(name)}`, { type: 'H5T_IEEE_F32LE', shape: [3], value: [1, 2, 3] }, a);
    }
    for (const v of ['vg0', 'vg1', 'vg2']) ids[v] = await post('groups', { link: { id: ids.g2, name: v } });
    for (const v of ['vd0', 'vd1', 'vd2']) ids[v] = await post('datasets', { type: 'H5T_STD_I16LE', shape: [4], link: { id: ids.g2, name: v } });
    for (const v of ['vt0', 'vt1']) ids[v] = (await call(base, 'POST', `/datatypes?${q(name)}`, { type: 'H5T_IEEE_F32LE', link: { id: ids.g2, name: v } }, a)).json.id;
    await call(base, 'PUT', `/groups/${ids.root}/links/soft?${q(name)}`, { h5path: '/g1' }, a);
    await call(base, 'PUT', `/groups/${ids.root}/links/ext?${q(name)}`, { h5path: '/g1', h5domain: `${folder}/d${(k + 1) % n}.h5` }, a);
    domains.push({ name, ids, dropped: false });
  }
  const fixtures = [...(opts.fixtures ?? [])];
  const madeDir = opts.made !== false ? fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-hostile-made-')) : undefined;
  if (madeDir) fixtures.push(...madeFiles(madeDir));
  if (fixtures.length) {
    const dir = path.join(root, folder.slice(1), 'fx');
    fs.mkdirSync(dir, { recursive: true });
    for (const f of fixtures) {
      const to = path.join(dir, path.basename(f));
      fs.copyFileSync(f, to);
      fs.chmodSync(to, 0o644);
      if (!f.endsWith('.h5')) continue;
      const name = `${folder}/fx/${path.basename(f)}`;
      const got = await call(base, 'GET', `/?${q(name)}&getobjs=1`, undefined, a).catch(() => undefined);
      if (!got) continue;
      const ids: Record<string, string> = { root: got.json.root };
      let j = 0;
      for (const id of Object.keys(got.json.domain_objs ?? {}).slice(0, 24)) ids[`${id[0]}${j++}`] = id;
      // objects to delete, so that the file's own objects live through the run
      const post = async (col: string, body: unknown) => (await call(base, 'POST', `/${col}?${q(name)}`, body, a).catch(() => undefined))?.json?.id as string | undefined;
      for (const [v, col, body] of [
        ['vg0', 'groups', {}],
        ['vg1', 'groups', {}],
        ['vd0', 'datasets', { type: 'H5T_STD_I16LE', shape: [4] }],
        ['vt0', 'datatypes', { type: 'H5T_IEEE_F32LE' }],
      ] as const) {
        const id = await post(col, { ...body, link: { id: ids.root, name: v } });
        if (id) ids[v] = id;
      }
      domains.push({ name, ids, dropped: true, special: madeDir !== undefined && f.startsWith(madeDir) });
    }
  }
  if (madeDir) fs.rmSync(madeDir, { recursive: true, force: true });
  // the dims of every dataset of a numeric type, so value requests can fit
  const shapes: Record<string, number[]> = {};
  for (const d of domains) {
    for (const id of Object.values(d.ids)) {
      if (!id.startsWith('d-')) continue;
      const got = await call(base, 'GET', `/datasets/${id}?${q(d.name)}`, undefined, a).catch(() => undefined);
      const t = got?.json?.type;
      const cls = typeof t === 'string' ? t : t?.class;
      if (got?.json?.shape?.class === 'H5S_SIMPLE' && /INTEGER|FLOAT|H5T_STD_[IU]|H5T_IEEE/.test(String(cls))) shapes[id] = got.json.shape.dims;
    }
  }
  const churn = Array.from({ length: 6 }, (_, k) => `${folder}/churn/c${k}.h5`);
  return { folder, domains, churn, users: opts.users, shapes };
}

/**
 * Files h5py writes for the run (in `dir`, then copied in with the fixtures): a dataset in one
 * 8 MiB gzip chunk and one in an 8 MiB chunk without filter (writes into them run on the HDF5
 * worker thread, src/hdf5/heavy.ts), a virtual dataset over a sibling file and over itself,
 * external raw storage. Their sibling files are written beside them.
 */
function madeFiles(dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const script = `
import h5py, numpy as np, sys, os
d = sys.argv[1]
with h5py.File(os.path.join(d, 'heavy.h5'), 'w') as f:
    f.create_dataset('gz', shape=(2048, 1024), dtype='<f4', chunks=(2048, 1024), compression='gzip', compression_opts=1)
    f.create_dataset('raw', shape=(2048, 1024), dtype='<i4', chunks=(2048, 1024))
    f.create_dataset('small', data=np.arange(100, dtype='<i2'))
with h5py.File(os.path.join(d, 'vsrc.h5'), 'w') as f:
    f.create_dataset('data', data=np.arange(40, dtype='<i4'))
with h5py.File(os.path.join(d, 'vds.h5'), 'w', libver='latest') as f:
    f.create_dataset('local', data=np.arange(40, dtype='<i4'))
    lay = h5py.VirtualLayout(shape=(80,), dtype='<i4')
    lay[0:40] = h5py.VirtualSource('vsrc.h5', 'data', shape=(40,))
    lay[40:80] = h5py.VirtualSource('.', 'local', shape=(40,))
    f.create_virtual_dataset('v', lay, fillvalue=-1)
with open(os.path.join(d, 'efl.bin'), 'wb') as b:
    b.write(np.arange(40, dtype='<i4').tobytes())
with h5py.File(os.path.join(d, 'efl.h5'), 'w') as f:
    f.create_dataset('e', shape=(40,), dtype='<i4', external=[('efl.bin', 0, 160)])
`;
  execFileSync('/usr/bin/python3', ['-c', script, dir]);
  return ['vsrc.h5', 'efl.bin', 'heavy.h5', 'vds.h5', 'efl.h5'].map((n) => path.join(dir, n));
}

// ---------------------------------------------------------------------------------------------
// The run

export interface Problem {
  i: number;
  route: string;
  method: string;
  url: string;
  status?: number;
  ms: number;
  message?: string;
  /** The request sent before it on the same kept-alive connection, if it was on one. */
  after?: string;
}

export interface HostileReport {
  seed: number;
  /** Requests sent (aborted ones included). */
  requests: number;
  answered: number;
  /** Requests the client went away from on purpose (half a body sent). */
  aborted: number;
  /** Requests with no answer within `timeoutMs`. */
  noAnswer: Problem[];
  /** Answers 500-599. */
  serverErrors: Problem[];
  /** Connection errors other than the deliberate aborts (resets, refused). */
  connectionErrors: Problem[];
  statuses: Record<string, number>;
  /** Per route template: requests and how they were answered. */
  routes: Record<string, Record<string, number>>;
  /** Longest time `GET /about` went unanswered (ms), and how often that was over 2 s. */
  probe: { maxGapMs: number; stalls: number };
  durationMs: number;
  /** The slowest answers. */
  slowest: Problem[];
}

export interface RunOptions {
  url: string;
  world: World;
  seed: number;
  /** Requests to send (indices `from`..`from+requests-1`), unless `only` is given. */
  requests: number;
  from?: number;
  /** Send exactly these indices (a replay). */
  only?: number[];
  clients: number;
  /** A request not answered in this long counts as no answer (ms). */
  timeoutMs?: number;
  /** Stop sending after this long (ms). */
  maxMs?: number;
  /** Told every 1,000 requests. */
  progress?: (done: number) => void;
  /** Stop early (the server died). */
  stopped?: () => boolean;
}

/** Send one request; resolves with its status, or an error kind. */
function send(base: URL, req: HostileRequest, timeoutMs: number, agent: http.Agent | false): Promise<{ status?: number; error?: 'timeout' | 'aborted' | string; text?: string; reused?: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: { status?: number; error?: string; text?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...v, reused: cr?.reusedSocket });
    };
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body) headers['content-length'] = req.body.length;
    let cr: http.ClientRequest;
    try {
      cr = http.request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers, agent });
    } catch (e) {
      // a path or header node:http refuses to send
      resolve({ error: `client: ${(e as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      done({ error: 'timeout' });
      cr.destroy();
    }, timeoutMs);
    cr.on('response', (res) => {
      if (/^text\/event-stream\b/.test(String(res.headers['content-type'] ?? ''))) {
        // a change feed (GET /events) lasts as long as its client: its headers are the answer
        done({ status: res.statusCode, text: '' });
        cr.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < 4096) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => done({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8', 0, Math.min(size, 4096)) }));
      res.on('error', (e) => done({ error: e.message }));
      res.on('aborted', () => done({ error: 'response aborted' }));
    });
    cr.on('error', (e) => done({ error: req.abortAfter !== undefined ? 'aborted' : (e as NodeJS.ErrnoException).code ?? e.message }));
    if (req.abortAfter !== undefined && req.body) {
      cr.write(req.body.subarray(0, req.abortAfter));
      setTimeout(() => {
        cr.destroy();
        done({ error: 'aborted' });
      }, 20);
      return;
    }
    cr.end(req.body);
  });
}

/** Ask `GET /about` every 200 ms while the run goes on; the longest gap between answers. */
function probe(base: URL, stop: () => boolean): Promise<{ maxGapMs: number; stalls: number }> {
  return new Promise((resolve) => {
    let last = performance.now();
    let maxGapMs = 0;
    let stalls = 0;
    let inStall = false;
    const tick = async () => {
      while (!stop()) {
        const r = await send(base, { i: -1, method: 'GET', url: '/about', headers: {}, route: 'probe' }, 30_000, false);
        const now = performance.now();
        if (r.status !== undefined) {
          maxGapMs = Math.max(maxGapMs, now - last);
          last = now;
          inStall = false;
        }
        if (now - last > 2000 && !inStall) {
          inStall = true;
          stalls++;
        }
        await new Promise((res) => setTimeout(res, 200));
      }
      resolve({ maxGapMs: Math.round(Math.max(maxGapMs, performance.now() - last)), stalls });
    };
    void tick();
  });
}

/**
 * Run the requests of a seed against a server with `clients` concurrent clients (about half
 * the requests on a fresh connection each, so they spread over `--workers`), each request
 * bounded by `timeoutMs`, and report how they were answered.
 */
export async function runHostile(o: RunOptions): Promise<HostileReport> {
  const base = new URL(o.url);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const indices = o.only ?? Array.from({ length: o.requests }, (_, k) => (o.from ?? 0) + k);
  const t0 = performance.now();
  const deadline = o.maxMs === undefined ? Infinity : t0 + o.maxMs;
  let next = 0;
  let finished = false;
  const report: HostileReport = { seed: o.seed, requests: 0, answered: 0, aborted: 0, noAnswer: [], serverErrors: [], connectionErrors: [], statuses: {}, routes: {}, probe: { maxGapMs: 0, stalls: 0 }, durationMs: 0, slowest: [] };
  const probing = probe(base, () => finished);
  const agents = Array.from({ length: o.clients }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const note = (route: string, what: string) => {
    const m = (report.routes[route] ??= {});
    m[what] = (m[what] ?? 0) + 1;
  };
  await Promise.all(
    agents.map(async (agent) => {
      let lastOnAgent: string | undefined;
      while (next < indices.length && performance.now() < deadline && !o.stopped?.()) {
        const i = indices[next++];
        const req = makeRequest(o.world, o.seed, i);
        const r = rngFor(o.seed ^ 0x5bd1e995, i);
        const t = performance.now();
        const viaAgent = !r.chance(0.5);
        const got = await send(base, req, timeoutMs, viaAgent ? agent : false);
        const after = viaAgent && got.reused ? lastOnAgent : undefined;
        if (viaAgent) lastOnAgent = `#${i} ${req.method} ${req.url.slice(0, 200)} (${got.status ?? got.error})`;
        const ms = Math.round(performance.now() - t);
        report.requests++;
        if (report.requests % 1000 === 0) o.progress?.(report.requests);
        const problem = (extra: Partial<Problem>): Problem => ({ i, route: req.route, method: req.method, url: req.url.slice(0, 300), ms, ...(after ? { after } : {}), ...extra });
        if (got.status !== undefined) {
          report.answered++;
          report.statuses[got.status] = (report.statuses[got.status] ?? 0) + 1;
          note(req.route, String(got.status));
          if (got.status >= 500) {
            let message: string | undefined;
            try {
              message = JSON.parse(got.text ?? '').message;
            } catch {
              message = got.text?.slice(0, 200);
            }
            report.serverErrors.push(problem({ status: got.status, message }));
          }
          report.slowest.push(problem({ status: got.status }));
          if (report.slowest.length > 40) report.slowest = report.slowest.sort((a, b) => b.ms - a.ms).slice(0, 10);
        } else if (got.error === 'aborted') {
          report.aborted++;
          note(req.route, 'aborted');
        } else if (got.error === 'timeout') {
          report.noAnswer.push(problem({}));
          note(req.route, 'no answer');
        } else if (got.error?.startsWith('client:')) {
          report.requests--; // node:http would not send it: not a request
        } else {
          report.connectionErrors.push(problem({ message: got.error }));
          note(req.route, 'connection error');
        }
      }
    }),
  );
  finished = true;
  for (const a of agents) a.destroy();
  report.probe = await probing;
  report.durationMs = Math.round(performance.now() - t0);
  report.slowest = report.slowest.sort((a, b) => b.ms - a.ms).slice(0, 10);
  return report;
}
