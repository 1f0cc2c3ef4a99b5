/**
 * h5grove's API (issue #28 item 7) under `/h5grove/`, so that h5web's `H5GroveProvider` (and
 * jupyterlab-h5web-style pages) work against h5store with the same users and ACLs as the REST
 * API: every route is in the route table with `read` on the object at `path`, checked by the one
 * guard; the domain is h5grove's `file` parameter.
 *
 *   GET /h5grove/                 "ok" (h5grove's status check; public)
 *   GET /h5grove/meta/?file=&path=&resolve_links=none|only_valid|all
 *   GET /h5grove/attr/?file=&path=&attr_keys=a&attr_keys=b
 *   GET /h5grove/data/?file=&path=&selection=&format=json|bin|npy|csv|tiff&dtype=origin|safe&flatten=
 *   GET /h5grove/stats/?file=&path=&selection=
 *   GET /h5grove/paths/?file=&path=&resolve_links=
 *
 * (each with or without the trailing slash: @koa/router matches both; h5grove serves `/meta/`,
 * h5web asks `/meta`). Shapes follow h5grove's OpenAPI description and code
 * (store/objects/grove.ts has the details): JSON with NaN and infinities as `null` (orjson's way),
 * argument errors 422, missing files and paths 404, errors as `{"message": ...}` (the REST API's
 * error body, which has it). Values as h5grove's `encode`: `bin` the elements' bytes (numpy's
 * `tobytes`: the dataset's byte order unless `dtype=safe`), `npy` a numpy file, `csv` text of
 * 1-D/2-D numeric data; `tiff` answers 501 (no well-kept npm library writes plain TIFF images).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Context } from 'koa';
import { stringifyJson } from '../../codec/json.js';
import { CsvWriter, type NumpyNumeric, StatsAccumulator, npyHeader, numpyDescr, numpyNumeric, safeNumeric } from '../../codec/numpy.js';
import { type TypeJson, arrayElementView, isVariableLength } from '../../codec/types.js';
import { H5StoreError, notImplemented } from '../../errors.js';
import { type LinkResolution, datasetFacts, normalizePath } from '../../store/objects/grove.js';
import * as grove from '../../store/objects/grove.js';
import type { Store } from '../../store/store.js';
import { type ValueFormat, type ValueSource, emptyValueSource } from '../../store/values.js';
import { parseNumpySelection } from '../../selection/numpy.js';
import type { Deps } from '../deps.js';
import { accessOf, param, refOf } from '../request.js';
import type { AclTarget } from '../../store/store.js';
import type { AuthState } from '../routeTable.js';
import { type ValueAnswer, sendValueSource } from '../valueAnswer.js';

/** 422: an argument h5grove's API cannot use (h5grove's `QueryArgumentError`). */
function unprocessable(msg: string): H5StoreError {
  return new H5StoreError('UnprocessableEntity', msg);
}

/** `path`: the object's path in the file (default `/`). */
function pathParam(ctx: Context): string {
  return normalizePath(param(ctx, 'path') || '/');
}

/** `resolve_links` (h5grove's `parse_link_resolution_arg`: `true`/`false` as `all`/`none`). */
function resolveParam(ctx: Context): LinkResolution {
  const v = param(ctx, 'resolve_links');
  if (v === undefined) return 'only_valid';
  const l = v.toLowerCase();
  if (l === 'true' || l === 'all') return 'all';
  if (l === 'false' || l === 'none') return 'none';
  if (l === 'only_valid') return 'only_valid';
  throw unprocessable(`${v.slice(0, 40)} is not a valid value for link resolution. Accepted values are: all, none or only_valid`);
}

/** A boolean argument (`flatten`): true/1/yes/on, false/0/no/off. */
function boolParam(ctx: Context, name: string): boolean {
  const v = param(ctx, name);
  if (v === undefined) return false;
  const l = v.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(l)) return true;
  if (['false', '0', 'no', 'off', ''].includes(l)) return false;
  throw unprocessable(`${name}=${v.slice(0, 40)} is not a boolean (true or false)`);
}

/**
 * Whether the requester may read an object of a domain, for objects with ACLs of their own
 * (children of a group, groups below a path): undefined when there is nothing to check (the
 * admin; a domain without object ACLs costs one cached view).
 */
function readableOf(ctx: Context, store: Store): ((domain: string, id: string) => Promise<boolean>) | undefined {
  const st = ctx.state as AuthState;
  if (st.principal.admin) return undefined;
  const hasObjectAcls = new Map<string, boolean>();
  return async (domain, id) => {
    let has = hasObjectAcls.get(domain);
    if (has === undefined) hasObjectAcls.set(domain, (has = !!(await store.aclView(domain)).hasObjectAcls));
    return !has || st.may(await store.aclView(domain, { id }), 'read');
  };
}

/** A JSON answer (NaN and infinities as null, as orjson writes them). */
function sendGroveJson(ctx: Context, body: unknown): void {
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = stringifyJson(body, { ignoreNan: true });
}

/** The dataset at `path`: its domain and id, type and dataspace. @throws 400 when not a dataset */
async function datasetAt(d: Deps, ctx: Context, domain: string, path: string) {
  return d.store.groveObject(domain, path, accessOf(ctx), (f, dom, addr, kind) => {
    if (kind !== 'dataset') throw unprocessable(`${path} is not a dataset`);
    return { domain: dom, id: f.idOf(addr, 'dataset'), ...datasetFacts(f, addr) };
  });
}

/** The numeric layout of a type, or 422 naming what needs it. */
function numericOr422(type: TypeJson, what: string): NumpyNumeric {
  const n = numpyNumeric(type);
  if (!n) throw unprocessable(`Unsupported ${what} for non-numeric content`);
  return n;
}

/** The object a route names: the one at `path` (its own ACL applies; the table's `object`). */
export function objectAtPath(ctx: Context): AclTarget {
return { h5path: pathParam(ctx) };
}

/** `GET /h5grove`: h5grove's status check. */
export function status(ctx: Context): void {
ctx.type = 'text/plain';
ctx.body = 'ok';
}

/** `GET /h5grove/meta`: the object at `path` (`resolve_links`). */
export async function meta(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  sendGroveJson(ctx, await d.store.groveMeta(ref.domain, pathParam(ctx), resolveParam(ctx), accessOf(ctx), readableOf(ctx, d.store)));
}

/** `GET /h5grove/attr`: attribute values of the object at `path` (`attr_keys`). */
export async function attr(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const path = pathParam(ctx);
  const raw = ctx.query.attr_keys;
  const keys = raw === undefined ? undefined : Array.isArray(raw) ? [...raw] : [raw as string];
  sendGroveJson(ctx, await d.store.groveObject(ref.domain, path, accessOf(ctx), (f, _dom, addr) => grove.attributeValues(f, addr, keys, path)));
}

/** `GET /h5grove/paths`: the paths below `path` (`resolve_links`). */
export async function paths(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  sendGroveJson(ctx, await d.store.grovePaths(ref.domain, pathParam(ctx), resolveParam(ctx), accessOf(ctx), readableOf(ctx, d.store)));
}

/** `GET /h5grove/data`: values of the dataset at `path` (`selection`, `format`, `dtype`, `flatten`). */
export async function data(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const path = pathParam(ctx);
  const format = param(ctx, 'format') ?? 'json';
  if (!['json', 'bin', 'npy', 'csv', 'tiff'].includes(format)) throw unprocessable(`Unsupported encoding ${format.slice(0, 40)}`);
  const dtype = param(ctx, 'dtype') ?? 'origin';
  if (dtype !== 'origin' && dtype !== 'safe') throw unprocessable(`Unsupported dtype ${dtype.slice(0, 40)}`);
  const flatten = boolParam(ctx, 'flatten');
  const ds = await datasetAt(d, ctx, ref.domain, path);
  if (ds.space.cls === 'H5S_NULL') {
    // h5py's Empty: JSON null; nothing else can hold it
    if (format !== 'json') throw unprocessable(`Unsupported encoding ${format} for empty datasets`);
    if (dtype === 'safe') throw unprocessable('Unsupported dtype safe for non-numeric data');
    return sendGroveJson(ctx, null);
  }
  const sel = parseNumpySelection(param(ctx, 'selection'), ds.space.dims);
  const { elem, dims: elemDims, cells: k } = arrayElementView(ds.type);
  const fullShape = [...sel.shape, ...elemDims];
  const shape = flatten && fullShape.length > 0 ? [sel.count * k] : fullShape;
  let numeric = numpyNumeric(elem);
  let convert = (w: Buffer) => w;
  if (dtype === 'safe') {
    const n = numericOr422(elem, 'dtype safe');
    const safe = safeNumeric(n);
    numeric = safe.to;
    convert = safe.convert;
  }
  if (format === 'npy' || format === 'csv' || format === 'tiff') numericOr422(elem, `encoding ${format}`);
  if ((format === 'csv' || format === 'tiff') && shape.length === 0) throw unprocessable(`Unsupported encoding ${format} for empty and scalar datasets`);
  if (format === 'tiff') {
    throw notImplemented('TIFF is not available: no well-kept npm library writes plain TIFF images of every numeric type (ask format=npy, or bin)');
  }
  if (format === 'csv' && (shape.length > 2 || numeric!.kind === 'c')) {
    throw unprocessable(shape.length > 2 ? `CSV holds 1-D and 2-D arrays, not ${shape.length}-D ones: select a slice or flatten` : 'CSV cannot hold complex numbers');
  }
  const name = path.split('/').pop() || 'data';
  const answer: ValueAnswer =
    format === 'json'
      ? { type: 'application/json' }
      : format === 'csv'
        ? { type: 'text/csv', disposition: `attachment; filename="${name.replace(/[^\w.-]/g, '_')}.csv"` }
        : { type: 'application/octet-stream', disposition: format === 'npy' ? `attachment; filename="${name.replace(/[^\w.-]/g, '_')}.npy"` : undefined };
  // (dtype=safe changes no number JSON can hold: the values are written from their own type)
  const valueFormat: ValueFormat =
    format === 'json'
      ? { kind: 'json', ignoreNan: true, shape, arrayElements: true, maxBytes: d.config.maxJsonValueBytes, tooLargeHint: 'ask format=bin or npy, or a smaller selection' }
      : // CSV is text: read whole up to a page, sent with a Content-Length (compressible)
        { kind: 'binary', arrayElements: true, maxWholeBytes: format === 'csv' ? d.config.pageBytes : undefined };
  if (format !== 'json' && format !== 'csv' && isVariableLength(elem)) throw unprocessable(`Unsupported encoding ${format} for variable-length data`);
  const source = sel.count === 0 ? emptyValueSource(elem, fullShape, valueFormat) : await d.store.readValues(ds.domain, ds.id, { select: sel.select }, valueFormat, accessOf(ctx));
  try {
    if (format === 'csv') {
      const w = new CsvWriter(numeric!, shape);
      const itemSize = source.itemSize!;
      answer.encode = (b) => w.write(convert(b), b.length / itemSize);
    } else if (format !== 'json') {
      // bin, npy: the elements' bytes
      answer.head = format === 'npy' ? [npyHeader(numpyDescr(numeric!), shape)] : [];
      answer.length = answer.head.reduce((a, b) => a + b.length, 0) + source.count * (numeric?.size ?? source.itemSize ?? 0);
      if (dtype === 'safe') answer.encode = (b) => [convert(b)];
    }
  } catch (e) {
    await source.close();
    throw e;
  }
  await sendValueSource(ctx, source, answer, d.config.maxStreamBytesPerSec);
}

/** `GET /h5grove/stats`: statistics of the values of the dataset at `path` (`selection`). */
export async function stats(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const path = pathParam(ctx);
  const ds = await datasetAt(d, ctx, ref.domain, path);
  if (ds.space.cls === 'H5S_NULL') throw unprocessable(`${path} is empty (null dataspace): no statistics`);
  const { elem } = arrayElementView(ds.type);
  const n = numericOr422(elem, 'statistics');
  if (n.kind === 'c') throw unprocessable('Unsupported statistics for complex content (no order)');
  const acc = new StatsAccumulator(n);
  const sel = parseNumpySelection(param(ctx, 'selection'), ds.space.dims);
  if (sel.count > 0) {
    const source: ValueSource = await d.store.readValues(ds.domain, ds.id, { select: sel.select }, { kind: 'binary', arrayElements: true }, accessOf(ctx));
    try {
      const itemSize = source.itemSize!;
      for (let r = await source.next(); !r.done; r = await source.next()) {
        for (const b of r.value) {
          acc.add(b, b.length / itemSize);
          source.recycle(b);
        }
        if (!source.whole) await nextTurn(); // other requests between pages
      }
    } finally {
      await source.close();
    }
  }
  sendGroveJson(ctx, acc.result());
}
