/**
 * h5web's data provider for h5store (issue #28 items 1-5): what h5web's own `HsdsProvider`
 * does, made to work on the files scientists have.
 *
 * - JSON with `NaN`/`Infinity` literals is read (json.ts); numeric values travel as binary
 *   (`Accept: application/octet-stream`), so non-finite values arrive as themselves.
 * - Soft links and external links (into files the server can open: the same folder) are
 *   followed by the server's path lookup (`POST /` with `h5paths`, `follow_soft_links`,
 *   `follow_external_links`): NeXus groups whose signal or axes are links work.
 * - A group's members come in pages of `PAGE_SIZE`: one request for the links of every group
 *   h5web asks for at once (`POST /groups/<id>/links` with `grp_ids`), one for their objects
 *   (`POST /` with `h5paths`), one for their attributes (`POST .../attributes` with `obj_ids`);
 *   a group with more members ends with a "⋯ more after <name>" entry holding the next page.
 * - With `conventions` on: CF `_FillValue`/`missing_value`/valid range masked and
 *   `scale_factor`/`add_offset` applied; a variable with dimension scales shown as an NXdata
 *   group (its data and its coordinate variables as axes); pandas/PyTables tables shown with
 *   their column names. Off: the file as stored.
 * - `follow`: the dataset at that path, when it is a stack (3 or more dimensions), opens at its
 *   newest frame.
 *
 * h5web paths are paths in the opened domain; paths inside a "more" entry or a CF NXdata group
 * are mapped back to the file's own paths (`lookupPath`).
 */
import {
  type Attribute,
  type AttributeValues,
  type ChildEntity,
  type Dataset,
  DataProviderApi,
  type DType,
  DTypeClass,
  type Entity,
  EntityKind,
  type ExportFormat,
  type ExportURL,
  type Group,
  type GroupWithChildren,
  type ProvidedEntity,
  ShapeClass,
  type ValuesStoreParams,
} from '@h5web/app';
import { ApiError } from '../api.js';
import { Batcher, chunked } from './batch.js';
import type { ApiClient } from './client.js';
import { type CfPacking, cfDecode, cfPacking, dimensionScaleIds, pandasColumns, textOf } from './conventions.js';
import { type ApiShape, type ApiType, binaryBase, decodeBinary, dtypeOf, selectionCount, shapeOf } from './types.js';

/** Members of a group shown per page of the tree. */
export const PAGE_SIZE = 1000;
/** Name prefix of the tree entry holding a group's next page (followed by the last name shown). */
export const MORE_PREFIX = '⋯ more after ';
/** Objects per bulk lookup or attribute request. */
const BULK = 500;
/** Attribute values larger than this (bytes) are fetched when needed, not with the bulk metadata. */
const ATTR_INLINE_BYTES = 65536;

type Collection = 'groups' | 'datasets' | 'datatypes';
const COLLECTIONS: Record<string, Collection> = { group: 'groups', dataset: 'datasets', datatype: 'datatypes' };

/** An object found by path: the domain it lives in (another one past an external link), its id and JSON. */
interface Located {
  domain: string;
  id: string;
  collection: Collection;
  json: Record<string, unknown>;
}

interface ApiAttr {
  name: string;
  type: ApiType;
  shape: ApiShape;
  value?: unknown;
}

interface ApiLink {
  title: string;
  class: string;
  id?: string;
  h5path?: string;
  h5domain?: string;
  file?: string;
}

/** A compound table shown with flattened columns: each stored field, and the columns it becomes. */
interface TableLayout {
  fields: { name: string; columns: string[] | undefined }[];
}

/** Where an entity's data live on the server, and how its values are turned into what is shown. */
export interface Where {
  domain: string;
  id: string;
  collection: Collection;
  apiType?: ApiType;
  cf?: CfPacking;
  /** Decoded CF values as float32 (stored as float32). */
  float32?: boolean;
  table?: TableLayout;
}

/** Entities this provider makes carry where their data are, or the attribute values of a virtual group. */
type Tagged = Entity & { h5s?: Where; virtualAttrs?: Record<string, unknown>; more?: { group: Where; marker: string } };

export interface H5StoreApiOptions {
  /** Apply netCDF/CF and pandas conventions (default true). */
  conventions?: boolean;
  /** h5web path of a dataset to show at its newest frame. */
  follow?: string;
}

const STR: DType = { class: DTypeClass.String, charSet: 'UTF-8', strPad: 'null-terminated' };

export class H5StoreApi extends DataProviderApi {
  private readonly entities = new Map<string, Promise<ProvidedEntity>>();
  private readonly located = new Map<string, Promise<Located>>();
  /** Attribute values known from bulk answers, per `domain\nid`. */
  private readonly attrValues = new Map<string, Record<string, unknown>>();
  /** h5web paths of entities shown under another path (CF NXdata members) -> lookup paths. */
  private readonly aliases = new Map<string, string>();
  private readonly conventions: boolean;
  private readonly follow: string | undefined;

  private readonly lookups = new Batcher<Located>((paths) => this.lookupMany(paths));
  private readonly attrBatch = new Batcher<ApiAttr[]>((keys) => this.attrsMany(keys));
  private readonly linkBatch = new Batcher<ApiLink[]>((keys) => this.linksMany(keys));

  constructor(
    filepath: string,
    private readonly client: ApiClient,
    opts: H5StoreApiOptions = {},
  ) {
    super(filepath);
    this.conventions = opts.conventions ?? true;
    this.follow = opts.follow;
  }

  // ---------------------------------------------------------------------------------------------
  // DataProviderApi

  override getEntity(path: string): Promise<ProvidedEntity> {
    let p = this.entities.get(path);
    if (!p) {
      p = this.loadEntity(path);
      this.entities.set(path, p);
      p.catch(() => this.entities.delete(path));
    }
    return p;
  }

  override async getValue(params: ValuesStoreParams, abortSignal?: AbortSignal, onProgress?: (v: number) => void): Promise<unknown> {
    const ds = params.dataset as Dataset & Tagged;
    const w = ds.h5s;
    if (!w || !w.apiType) throw new Error(`No data behind ${ds.path}`);
    const dims = ds.shape.class === ShapeClass.Array ? ds.shape.dims : [];
    const scalar = ds.shape.class === ShapeClass.Scalar;
    const sel = params.selection;
    const single = scalar || (sel !== undefined && /^\d+(?:,\d+)*$/.test(sel));
    const count = scalar ? 1 : selectionCount(dims, sel);
    const query = { domain: w.domain, select: sel && !scalar ? `[${sel}]` : undefined };
    if (count === 0) return ds.type.class === DTypeClass.Float || ds.type.class === DTypeClass.Integer ? new Float64Array(0) : [];
    const base = w.table ? undefined : binaryBase(w.apiType);
    if (base) {
      const buf = await this.client.bytes(`/datasets/${w.id}/value`, query, { accept: 'application/octet-stream', signal: abortSignal, onProgress });
      let arr: ArrayLike<number | bigint> = decodeBinary(buf, base, count);
      if (w.cf) arr = cfDecode(arr, w.cf, w.float32);
      return single ? arr[0] : arr;
    }
    const body = await this.client.json<{ value: unknown }>(`/datasets/${w.id}/value`, query, { signal: abortSignal, onProgress });
    let v = body.value;
    if (scalar) return w.table ? flattenRow(v, w.table) : v;
    if (!Array.isArray(v)) throw new Error(`Expected an array of values for ${ds.path}`);
    let flat: unknown[] = dims.length > 1 ? v.flat(dims.length - 1) : v;
    if (w.table) flat = flat.map((row) => flattenRow(row, w.table!));
    if (w.cf) flat = Array.from(cfDecode(flat as number[], w.cf, w.float32));
    return single ? flat[0] : flat;
  }

  override async getAttrValues(entity: Entity): Promise<AttributeValues> {
    const e = entity as Tagged;
    if (e.virtualAttrs) return e.virtualAttrs;
    const w = e.h5s;
    if (!w || entity.attributes.length === 0) return {};
    const key = `${w.domain}\n${w.id}`;
    const known = this.attrValues.get(key);
    if (known && entity.attributes.every((a) => a.name in known)) return known;
    const body = await this.client.json<{ attributes: ApiAttr[] }>(`/${w.collection}/${w.id}/attributes`, { domain: w.domain, IncludeData: '1' });
    const out = Object.fromEntries(body.attributes.map((a) => [a.name, a.value]));
    this.attrValues.set(key, out);
    return out;
  }

  override getExportURL(_format: ExportFormat, _dataset: Dataset, _selection?: string, builtInExporter?: () => string): ExportURL | undefined {
    if (builtInExporter) return async () => new Blob([builtInExporter()]);
    return undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Public helpers for the page

  /** The path in the file an h5web path stands for (virtual tree entries left out). */
  lookupPath(path: string): string {
    for (const [from, to] of this.aliases) {
      if (path === from) return to;
      if (path.startsWith(from + '/')) return to + path.slice(from.length);
    }
    const parts = path.split('/').filter((s) => s && !s.startsWith(MORE_PREFIX));
    return '/' + parts.join('/');
  }

  /**
   * The dataset at an h5web path now: its dims, id and domain (another one when an external link
   * leads there); undefined when it is not a dataset. Looked up by path the first time, then by
   * id (`at`): `GET /datasets/<id>`, which the browser asks again with its ETag (a 304 while the
   * dataset did not change).
   */
  async followed(path: string, at?: { id: string; domain: string }): Promise<{ dims: number[]; id: string; domain: string } | undefined> {
    const dimsOf = (s: ApiShape) => (s.class === 'H5S_SIMPLE' ? s.dims ?? [] : []);
    if (at) {
      const j = await this.client.json<{ shape?: ApiShape }>(`/datasets/${at.id}`, { domain: at.domain }, { revalidate: true });
      return j.shape ? { dims: dimsOf(j.shape), ...at } : undefined;
    }
    const j = await this.client.json<{ class?: string; shape?: ApiShape; id?: string; domain?: string }>('/', {
      domain: this.filepath,
      h5path: this.lookupPath(path),
      follow_soft_links: '1',
      follow_external_links: '1',
    }, { fresh: true });
    if (j.class !== 'dataset' || !j.shape || !j.id) return undefined;
    return { dims: dimsOf(j.shape), id: j.id, domain: j.domain ?? this.filepath };
  }

  // ---------------------------------------------------------------------------------------------
  // Entities

  private async loadEntity(path: string): Promise<ProvidedEntity> {
    if (path === '/') {
      const loc = await this.locate('/');
      const e = (await this.childEntity('/', this.filepath, undefined, loc)) as Group & Tagged;
      return this.withChildren(e);
    }
    const cut = path.lastIndexOf('/');
    const parentPath = path.slice(0, cut) || '/';
    const name = path.slice(cut + 1);
    const parent = await this.getEntity(parentPath);
    if (parent.kind !== EntityKind.Group) throw new Error(`No entity found at ${path}: ${parentPath} is not a group`);
    let child = (parent as GroupWithChildren).children.find((c) => c.name === name) as (ChildEntity & Tagged) | undefined;
    if (!child && name.startsWith(MORE_PREFIX)) {
      const g = (parent as Tagged).h5s ?? (parent as Tagged).more?.group;
      if (g) child = this.moreEntry(parentPath, g, name.slice(MORE_PREFIX.length));
    }
    if (!child) {
      // beyond the pages loaded so far: looked up directly
      const loc = await this.locate(this.lookupPath(path)).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) throw new Error(`No entity found at ${path}`);
        throw e;
      });
      child = (await this.childEntity(path, name, undefined, loc)) as ChildEntity & Tagged;
    }
    if (child.kind === EntityKind.Group && !('children' in child)) return this.withChildren(child as Group & Tagged);
    return child as ProvidedEntity;
  }

  /** A group entity with its members (one page; the next pages under a "more" entry). */
  private async withChildren(g: Group & Tagged): Promise<GroupWithChildren> {
    const where = g.more?.group ?? g.h5s;
    if (!where) return { ...g, children: [] };
    const links = await this.linkBatch.load(`${where.domain}\n${where.id}\n${g.more?.marker ?? ''}`);
    const page = links.slice(0, PAGE_SIZE);
    const real = this.lookupPath(g.path);
    const locs = await Promise.allSettled(page.map((l) => this.locate(real === '/' ? `/${l.title}` : `${real}/${l.title}`)));
    let children = await Promise.all(
      page.map((l, i) => {
        const r = locs[i];
        const p = g.path === '/' ? `/${l.title}` : `${g.path}/${l.title}`;
        return this.childEntity(p, l.title, l, r.status === 'fulfilled' ? r.value : undefined);
      }),
    );
    if (this.conventions || this.follow) children = this.applyConventions(children);
    if (links.length > PAGE_SIZE) children.push(this.moreEntry(g.path, where, page[page.length - 1].title));
    return { ...g, children };
  }

  /** The tree entry that holds the members of group `group` after `marker`. */
  private moreEntry(parentPath: string, group: Where, marker: string): Group & Tagged {
    const name = MORE_PREFIX + marker;
    return { name, path: parentPath === '/' ? `/${name}` : `${parentPath}/${name}`, kind: EntityKind.Group, attributes: [], more: { group, marker } };
  }

  /** The entity of a located object (Unresolved when it could not be found: a dangling link). */
  private async childEntity(path: string, name: string, link: ApiLink | undefined, loc: Located | undefined): Promise<ChildEntity & Tagged> {
    const linkInfo =
      link && link.class !== 'H5L_TYPE_HARD'
        ? { class: link.class === 'H5L_TYPE_SOFT' ? ('Soft' as const) : ('External' as const), path: link.h5path, file: link.h5domain ?? link.file }
        : undefined;
    if (!loc) return { name, path, kind: EntityKind.Unresolved, attributes: [], link: linkInfo };
    const items = await this.attrs(loc);
    const attributes: Attribute[] = items.map((a) => ({ name: a.name, shape: shapeOf(a.shape), type: dtypeOf(a.type) }));
    const h5s: Where = { domain: loc.domain, id: loc.id, collection: loc.collection };
    const base = { name, path, attributes, h5s, ...(linkInfo ? { link: linkInfo } : {}) };
    if (loc.collection === 'groups') return { ...base, kind: EntityKind.Group };
    const apiType = loc.json.type as ApiType;
    if (loc.collection === 'datatypes') return { ...base, kind: EntityKind.Datatype, type: dtypeOf(apiType), rawType: apiType };
    h5s.apiType = apiType;
    let type = dtypeOf(apiType);
    if (this.conventions) {
      const values = this.attrValues.get(`${loc.domain}\n${loc.id}`) ?? {};
      if (type.class === DTypeClass.Integer || type.class === DTypeClass.Float) {
        const cf = cfPacking(values);
        if (cf) {
          h5s.cf = cf;
          h5s.float32 = type.class === DTypeClass.Float && type.size === 32;
          type = { class: DTypeClass.Float, size: h5s.float32 ? 32 : 64, endianness: 'little-endian' };
        }
      } else if (type.class === DTypeClass.Compound) {
        const flat = flattenTable(apiType, values);
        if (flat) {
          h5s.table = flat.layout;
          type = flat.type;
        }
      }
    }
    const layout = loc.json.layout as { class?: string; dims?: number[] } | undefined;
    const cprops = (loc.json.creationProperties ?? {}) as { filters?: { id?: number; class?: string; name?: string }[] };
    return {
      ...base,
      kind: EntityKind.Dataset,
      shape: shapeOf(loc.json.shape as ApiShape),
      type,
      rawType: apiType,
      ...(layout?.class === 'H5D_CHUNKED' && layout.dims ? { chunks: layout.dims } : {}),
      ...(cprops.filters?.length ? { filters: cprops.filters.map((f) => ({ id: f.id ?? 0, name: f.name ?? f.class ?? '' })) } : {}),
    } as Dataset & Tagged;
  }

  /**
   * Members shown by convention: a netCDF variable with dimension scales as an NXdata group (its
   * data as the signal, its numeric 1-D coordinate variables among the siblings as axes); the
   * followed stack as an NXdata group opening at its newest frame.
   */
  private applyConventions(children: (ChildEntity & Tagged)[]): (ChildEntity & Tagged)[] {
    const byId = new Map<string, Dataset & Tagged>();
    for (const c of children) if (c.kind === EntityKind.Dataset && c.h5s) byId.set(c.h5s.id, c as Dataset & Tagged);
    return children.map((c) => {
      if (c.kind !== EntityKind.Dataset || !c.h5s) return c;
      const d = c as Dataset & Tagged;
      const numeric = d.type.class === DTypeClass.Float || d.type.class === DTypeClass.Integer;
      if (!numeric || d.shape.class !== ShapeClass.Array || d.shape.dims.includes(0)) return c;
      const dims = d.shape.dims;
      const values = this.attrValues.get(`${d.h5s!.domain}\n${d.h5s!.id}`) ?? {};
      const axes: (Dataset & Tagged)[] = [];
      const axisNames: string[] = [];
      if (this.conventions && textOf(values.CLASS) !== 'DIMENSION_SCALE') {
        dimensionScaleIds(values.DIMENSION_LIST).forEach((id, i) => {
          const a = id ? byId.get(id) : undefined;
          const ok =
            a && a !== d && a.shape.class === ShapeClass.Array && a.shape.dims.length === 1 && a.shape.dims[0] === dims[i] &&
            (a.type.class === DTypeClass.Float || a.type.class === DTypeClass.Integer) && !axes.some((x) => x.name === a.name);
          axisNames.push(ok ? a!.name : '.');
          if (ok) axes.push(a!);
        });
      }
      const following = this.follow === d.path && dims.length >= 3 && dims[0] > 0;
      if (axes.length === 0 && !following) return c;
      const vattrs: Record<string, unknown> = { NX_class: 'NXdata', signal: d.name };
      const attributes: Attribute[] = [
        { name: 'NX_class', shape: { class: ShapeClass.Scalar, dims: [] }, type: STR },
        { name: 'signal', shape: { class: ShapeClass.Scalar, dims: [] }, type: STR },
      ];
      if (axes.length) {
        vattrs.axes = axisNames;
        attributes.push({ name: 'axes', shape: { class: ShapeClass.Array, dims: [axisNames.length] }, type: STR });
      }
      if (following) {
        vattrs.default_slice = dims.map((n, i) => (i < dims.length - 2 ? String(i === 0 ? n - 1 : 0) : '.'));
        attributes.push({ name: 'default_slice', shape: { class: ShapeClass.Array, dims: [dims.length] }, type: STR });
      }
      const real = this.lookupPath(d.path);
      const members = [d, ...axes].map((m) => {
        const p = `${d.path}/${m.name}`;
        this.aliases.set(p, m === d ? real : this.lookupPath(m.path));
        return { ...m, path: p };
      });
      const group: GroupWithChildren & Tagged = { name: d.name, path: d.path, kind: EntityKind.Group, attributes, children: members, virtualAttrs: vattrs };
      return group;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Bulk requests

  private locate(path: string): Promise<Located> {
    let p = this.located.get(path);
    if (!p) {
      p = this.lookups.load(path);
      this.located.set(path, p);
      p.catch(() => this.located.delete(path));
    }
    return p;
  }

  private async attrs(loc: Located): Promise<ApiAttr[]> {
    if (loc.json.attributeCount === 0) return [];
    return this.attrBatch.load(`${loc.domain}\n${loc.collection}\n${loc.id}`);
  }

  /** Objects by path in the opened domain, following soft and external links (`POST /` with `h5paths`). */
  private async lookupMany(paths: string[]): Promise<Map<string, Located | Error>> {
    const out = new Map<string, Located | Error>();
    const params = { domain: this.filepath, follow_soft_links: '1', follow_external_links: '1', ignore_missing: '1' };
    const one = async (list: string[]): Promise<void> => {
      try {
        const body = await this.client.json<{ h5paths: Record<string, Record<string, unknown>> }>('/', params, { body: { h5paths: list } });
        for (const p of list) {
          const j = body.h5paths[p];
          if (!j) out.set(p, new Error(`No entity found at ${p}`));
          else out.set(p, { domain: (j.domain as string) ?? this.filepath, id: j.id as string, collection: COLLECTIONS[j.class as string] ?? 'groups', json: j });
        }
      } catch (e) {
        // one path that cannot be looked up (a dangling link, a file not readable) fails the
        // whole request: halve until it is found
        if (!(e instanceof ApiError) || e.status >= 500 || e.status === 401) throw e;
        if (list.length === 1) {
          out.set(list[0], e);
          return;
        }
        const mid = list.length >> 1;
        await Promise.all([one(list.slice(0, mid)), one(list.slice(mid))]);
      }
    };
    await Promise.all(chunked(paths, BULK).map(one));
    return out;
  }

  /** Attributes (and values up to ATTR_INLINE_BYTES) of many objects (`POST .../attributes` with `obj_ids`), per domain. */
  private async attrsMany(keys: string[]): Promise<Map<string, ApiAttr[] | Error>> {
    const out = new Map<string, ApiAttr[] | Error>();
    const byDomain = new Map<string, { col: string; id: string; key: string }[]>();
    for (const key of keys) {
      const [domain, col, id] = key.split('\n');
      const list = byDomain.get(domain) ?? [];
      list.push({ col, id, key });
      byDomain.set(domain, list);
    }
    const jobs: Promise<void>[] = [];
    for (const [domain, items] of byDomain) {
      for (const part of chunked(items, BULK)) {
        jobs.push(
          (async () => {
            const first = part[0];
            const body = await this.client.json<{ attributes: Record<string, ApiAttr[]> }>(
              `/${first.col}/${first.id}/attributes`,
              { domain, IncludeData: '1', max_data_size: String(ATTR_INLINE_BYTES) },
              { body: { obj_ids: part.map((p) => p.id) } },
            );
            for (const p of part) {
              const list = body.attributes?.[p.id] ?? [];
              out.set(p.key, list);
              const values: Record<string, unknown> = {};
              for (const a of list) if ('value' in a) values[a.name] = a.value;
              this.attrValues.set(`${domain}\n${p.id}`, values);
            }
          })().catch((e: unknown) => {
            for (const p of part) out.set(p.key, e instanceof Error ? e : new Error(String(e)));
          }),
        );
      }
    }
    await Promise.all(jobs);
    return out;
  }

  /** Links of many groups: first pages in one request per domain (`grp_ids`), later pages by `Marker`. */
  private async linksMany(keys: string[]): Promise<Map<string, ApiLink[] | Error>> {
    const out = new Map<string, ApiLink[] | Error>();
    const firsts = new Map<string, { id: string; key: string }[]>();
    const jobs: Promise<void>[] = [];
    const limit = String(PAGE_SIZE + 1);
    for (const key of keys) {
      const [domain, id, marker] = key.split('\n');
      if (marker) {
        jobs.push(
          this.client.json<{ links: ApiLink[] }>(`/groups/${id}/links`, { domain, Limit: limit, Marker: marker }).then(
            (b) => void out.set(key, b.links),
            (e: unknown) => void out.set(key, e instanceof Error ? e : new Error(String(e))),
          ),
        );
        continue;
      }
      const list = firsts.get(domain) ?? [];
      list.push({ id, key });
      firsts.set(domain, list);
    }
    for (const [domain, groups] of firsts) {
      for (const part of chunked(groups, 200)) {
        jobs.push(
          this.client
            .json<{ links: Record<string, ApiLink[]> | ApiLink[] }>(`/groups/${part[0].id}/links`, { domain, Limit: limit }, { body: { grp_ids: part.map((g) => g.id) } })
            .then(
              (b) => {
                for (const g of part) out.set(g.key, Array.isArray(b.links) ? b.links : (b.links[g.id] ?? []));
              },
              (e: unknown) => {
                for (const g of part) out.set(g.key, e instanceof Error ? e : new Error(String(e)));
              },
            ),
        );
      }
    }
    await Promise.all(jobs);
    return out;
  }
}

/**
 * A compound type whose fields of array type are spread into one column per element (named by
 * pandas' `<field>_kind` attribute, else `field[i]`), or undefined when no field is an array.
 */
function flattenTable(t: ApiType, attrs: Record<string, unknown>): { type: DType; layout: TableLayout } | undefined {
  const fields = t.fields ?? [];
  if (!fields.some((f) => f.type.class === 'H5T_ARRAY')) return undefined;
  const named = pandasColumns(attrs, fields.map((f) => f.name));
  const out = new Map<string, DType>();
  const layout: TableLayout = { fields: [] };
  for (const f of fields) {
    const dims = f.type.dims ?? [];
    const n = dims.reduce((a, b) => a * b, 1);
    if (f.type.class !== 'H5T_ARRAY' || dims.length !== 1 || n > 64) {
      out.set(f.name, dtypeOf(f.type));
      layout.fields.push({ name: f.name, columns: undefined });
      continue;
    }
    const names = named.get(f.name);
    const cols = Array.from({ length: n }, (_, i) => (names && names.length === n ? names[i] : `${f.name}[${i}]`));
    const base = dtypeOf(f.type.base as ApiType);
    for (const c of cols) out.set(out.has(c) ? `${f.name}.${c}` : c, base);
    layout.fields.push({ name: f.name, columns: cols });
  }
  return { type: { class: DTypeClass.Compound, fields: out }, layout };
}

/** One stored row (a list of field values) as the flattened row. */
function flattenRow(row: unknown, t: TableLayout): unknown[] {
  if (!Array.isArray(row)) return [row];
  const out: unknown[] = [];
  t.fields.forEach((f, i) => {
    const v = row[i];
    if (f.columns) out.push(...(Array.isArray(v) ? v : [v]));
    else out.push(v);
  });
  return out;
}
