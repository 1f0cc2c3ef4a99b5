/**
 * Every shared fixture file, served as a dropped-in domain, checked against what h5py reads from the
 * same file (test/tools/dump_h5.py run by Debian's /usr/bin/python3): link structure, object kinds,
 * counts, types, shapes, creation properties, dataset values (JSON and binary) and attributes.
 *
 * References: wire-reference sections 0, 1.3, 2, 3 (JSON shapes); DESIGN.md (one domain per file,
 * ids, user-defined links as H5L_TYPE_UDLINK, JSON error bodies).
 *
 * Each check collects every mismatch it finds in a file (with the request and the path of the
 * object) and fails once at the end with the whole list, so one run reports all server bugs.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TypeJson } from '../../src/codec/types.js';
import { decodeElements } from '../../src/codec/values.js';
import { PYTHON, toolJson } from '../helpers/python.js';
import { Client, copyFixtures, HAVE_SHARED, REPO, type Reply, SHARED_FIXTURES, startServer, tempRoot, type TestServer } from '../helpers/server.js';

// ---------------------------------------------------------------------------------------------
// the reference dump (see test/tools/dump_h5.py)

type Kind = 'group' | 'dataset' | 'datatype';

interface DumpType {
  class: string;
  committed?: string;
  [k: string]: unknown;
}
interface DumpShape {
  class: 'H5S_NULL' | 'H5S_SCALAR' | 'H5S_SIMPLE';
  dims?: number[];
  maxdims?: (number | null)[];
}
interface DumpAttr {
  name: string;
  type: DumpType;
  committed?: string;
  shape: DumpShape;
  value: unknown;
}
interface DumpLink {
  title: string;
  class: 'H5L_TYPE_HARD' | 'H5L_TYPE_SOFT' | 'H5L_TYPE_EXTERNAL' | 'H5L_TYPE_USER_DEFINED';
  addr?: string;
  kind?: Kind;
  h5path?: string;
  file?: string;
  linkClass?: number;
}
interface DumpObject {
  kind: Kind;
  paths: string[];
  attributeCount: number;
  attributes: DumpAttr[];
  links?: DumpLink[];
  /** link titles in creation order, when the group tracks it */
  linksByCreation?: string[];
  /** attribute names in creation order, when the object tracks it */
  attributesByCreation?: string[];
  type?: DumpType;
  committed?: string;
  shape?: DumpShape;
  layout?: { class: string; dims?: number[] };
  filters?: { id: number; flags: number; cd_values: number[]; name: string }[];
  fillValue?: unknown;
  value?: unknown;
}
interface Dump {
  root: string;
  objects: Record<string, DumpObject>;
}

const COLLECTION: Record<Kind, string> = { group: 'groups', dataset: 'datasets', datatype: 'datatypes' };
const PREFIX: Record<Kind, string> = { group: 'g-', dataset: 'd-', datatype: 't-' };
const ID_RE = /^[gdt]-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{6}-[0-9a-f]{6}$/;

/** Known filters (wire-reference 3.4): id -> class and name. */
const FILTER_TABLE: Record<number, { cls: string; name: string }> = {
  0: { cls: 'H5Z_FILTER_NONE', name: 'none' },
  1: { cls: 'H5Z_FILTER_DEFLATE', name: 'gzip' },
  2: { cls: 'H5Z_FILTER_SHUFFLE', name: 'shuffle' },
  3: { cls: 'H5Z_FILTER_FLETCHER32', name: 'fletcher32' },
  4: { cls: 'H5Z_FILTER_SZIP', name: 'szip' },
  5: { cls: 'H5Z_FILTER_NBIT', name: 'nbit' },
  6: { cls: 'H5Z_FILTER_SCALEOFFSET', name: 'scaleoffset' },
  32000: { cls: 'H5Z_FILTER_LZF', name: 'lzf' },
  32001: { cls: 'H5Z_FILTER_BLOSC', name: 'blosclz' },
  32003: { cls: 'H5Z_FILTER_SNAPPY', name: 'snappy' },
  32004: { cls: 'H5Z_FILTER_LZ4', name: 'lz4' },
  32005: { cls: 'H5Z_FILTER_LZ4HC', name: 'lz4hc' },
  32008: { cls: 'H5Z_FILTER_BITSHUFFLE', name: 'bitshuffle' },
  32015: { cls: 'H5Z_FILTER_ZSTD', name: 'zstd' },
};

/** True when the file starts with the HDF5 signature at offset 0, 512, 1024, ... (superblock search). */
function hasHdf5Signature(file: string): boolean {
  const sig = Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);
  const buf = fs.readFileSync(file);
  for (let off = 0; off + 8 <= buf.length; off = off === 0 ? 512 : off * 2) if (buf.subarray(off, off + 8).equals(sig)) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// mismatch collection

class Mismatches {
  readonly list: string[] = [];
  add(msg: string): void {
    this.list.push(msg);
  }
  /** Run a chai assertion; a failure is recorded with `where` instead of thrown. */
  check(where: string, fn: () => void): boolean {
    try {
      fn();
      return true;
    } catch (e) {
      this.add(`${where}: ${(e as Error).message}`);
      return false;
    }
  }
  /** Deep equality; the message shows both sides as JSON (chai's own truncates nested objects). */
  eq(where: string, actual: unknown, expected: unknown): boolean {
    try {
      expect(actual).to.deep.equal(expected);
      return true;
    } catch {
      this.add(`${where}: expected ${show(expected, 600)}, got ${show(actual, 600)}`);
      return false;
    }
  }
  /** A reply must have `status`; otherwise records the status and body and returns false. */
  status(where: string, r: Reply, status = 200): boolean {
    if (r.status === status) return true;
    this.add(`${where}: expected HTTP ${status}, got ${r.status} ${r.text.slice(0, 300)}`);
    return false;
  }
  done(): void {
    if (this.list.length === 0) return;
    const shown = this.list.slice(0, 60);
    const more = this.list.length > shown.length ? `\n... and ${this.list.length - shown.length} more` : '';
    expect.fail(`${this.list.length} mismatch(es):\n- ${shown.join('\n- ')}${more}`);
  }
}

// ---------------------------------------------------------------------------------------------
// types, values, shapes

/** The expected type JSON: the dump's type with `committed: <addr>` replaced by `id: <datatype id>`. */
function expectedType(t: DumpType, idOf: Map<string, string>): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (k === 'committed') out.id = idOf.get(x as string) ?? `<no id for committed type at addr ${x}>`;
        else out[k] = walk(x);
      }
      return out;
    }
    return v;
  };
  return walk(t);
}

/** Bytes of one element on the binary wire (wire-reference 3.5); undefined for variable-length types. */
function wireSize(t: any): number | undefined {
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
    case 'H5T_BITFIELD':
      return Number(/(\d+)(LE|BE)$/.exec(t.base)![1]) / 8;
    case 'H5T_ENUM':
      return wireSize(t.base);
    case 'H5T_STRING':
      return t.length === 'H5T_VARIABLE' ? undefined : t.length;
    case 'H5T_COMPOUND': {
      let n = 0;
      for (const f of t.fields) {
        const s = wireSize(f.type);
        if (s === undefined) return undefined;
        n += s;
      }
      return n;
    }
    case 'H5T_ARRAY': {
      const s = wireSize(t.base);
      return s === undefined ? undefined : s * t.dims.reduce((a: number, b: number) => a * b, 1);
    }
    case 'H5T_VLEN':
      return undefined;
    case 'H5T_OPAQUE':
      return t.size;
    case 'H5T_REFERENCE':
      return 48;
    default:
      throw new Error(`wireSize: unknown class ${t.class}`);
  }
}

interface RefContext {
  idOf: Map<string, string>;
  kindOf: Map<string, Kind>;
}

function show(v: unknown, max = 160): string {
  const repl = (_k: string, x: unknown) => (typeof x === 'bigint' ? `${x}n` : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x);
  const s = typeof v === 'bigint' ? `${v}n` : typeof v === 'number' ? String(v) : JSON.stringify(v, repl);
  return s === undefined ? String(v) : s.length > max ? s.slice(0, max - 3) + '...' : s;
}

/** Round to the nearest IEEE binary16 value (ties to even), like Math.fround for binary32. */
function f16round(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const quantum = 2 ** (Math.max(e, -14) - 10);
  const m = a / quantum;
  let n = Math.floor(m);
  const rest = m - n;
  if (rest > 0.5 || (rest === 0.5 && n % 2 === 1)) n++;
  const r = n * quantum;
  return r > 65504 ? sign * Infinity : sign * r;
}

/**
 * First difference between an expected element (`exp`, dump form or server form) and a server
 * element (`act`) of type `t`; undefined when equal. float32 is compared after Math.fround on both
 * sides, float64 exactly, NaN equals NaN. Object references in dump form ({"$ref": addr}) are
 * turned into the server form "<collection>/<id>" ("" for a null reference).
 */
function diffElement(t: any, exp: unknown, act: unknown, refs: RefContext, where: string): string | undefined {
  const bad = () => `${where}: expected ${show(exp)}, got ${show(act)}`;
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_BITFIELD': {
      if ((typeof act !== 'number' && typeof act !== 'bigint') || (typeof act === 'number' && !Number.isInteger(act))) return bad();
      return BigInt(exp as number | bigint) === BigInt(act) ? undefined : bad();
    }
    case 'H5T_FLOAT': {
      if (typeof act !== 'number' || typeof exp !== 'number') return bad();
      if (Number.isNaN(exp)) return Number.isNaN(act) ? undefined : bad();
      const bits = Number(/F(\d+)/.exec(t.base)![1]);
      if (bits === 32) return Math.fround(exp) === Math.fround(act) ? undefined : bad();
      if (bits === 16) return f16round(exp) === f16round(act) ? undefined : bad();
      return exp === act ? undefined : bad();
    }
    case 'H5T_STRING':
    case 'H5T_OPAQUE':
      return exp === act ? undefined : bad();
    case 'H5T_ENUM': {
      if (typeof exp === 'boolean') return exp === act ? undefined : bad();
      return diffElement(t.base, exp, act, refs, where);
    }
    case 'H5T_COMPOUND': {
      if (!Array.isArray(exp) || !Array.isArray(act) || act.length !== t.fields.length) return bad();
      for (let i = 0; i < t.fields.length; i++) {
        const d = diffElement(t.fields[i].type, exp[i], act[i], refs, `${where}.${t.fields[i].name}`);
        if (d) return d;
      }
      return undefined;
    }
    case 'H5T_ARRAY':
      return diffNested(t.base, t.dims, exp, act, refs, where);
    case 'H5T_VLEN': {
      if (!Array.isArray(exp) || !Array.isArray(act) || act.length !== exp.length) return bad();
      for (let i = 0; i < exp.length; i++) {
        const d = diffElement(t.base, exp[i], act[i], refs, `${where}[${i}]`);
        if (d) return d;
      }
      return undefined;
    }
    case 'H5T_REFERENCE': {
      let e = exp;
      if (e && typeof e === 'object' && '$ref' in e) {
        const addr = (e as { $ref: string | null }).$ref;
        e = addr === null ? '' : `${COLLECTION[refs.kindOf.get(addr)!] ?? '?'}/${refs.idOf.get(addr) ?? `<no id for addr ${addr}>`}`;
      } else if (e && typeof e === 'object' && '$regionref' in e) {
        // region references: the referenced object's id must appear in the value
        const addr = (e as { $regionref: string | null }).$regionref;
        const id = addr === null ? undefined : refs.idOf.get(addr);
        if (id === undefined) return act === '' || act === null ? undefined : bad();
        return JSON.stringify(act).includes(id) ? undefined : bad();
      }
      return e === act ? undefined : `${where}: expected ${show(e)}, got ${show(act)}`;
    }
    default:
      return `${where}: no comparison for type class ${t.class}`;
  }
}

/** First difference of values nested like `dims` ([] = a bare scalar element). */
function diffNested(t: any, dims: readonly number[], exp: unknown, act: unknown, refs: RefContext, where: string): string | undefined {
  if (dims.length === 0) return diffElement(t, exp, act, refs, where);
  if (!Array.isArray(exp)) return `${where}: the reference value is not a list (${show(exp)})`;
  if (!Array.isArray(act) || act.length !== dims[0]) return `${where}: expected a list of ${dims[0]}, got ${show(act)}`;
  for (let i = 0; i < dims[0]; i++) {
    const d = diffNested(t, dims.slice(1), exp[i], act[i], refs, `${where}[${i}]`);
    if (d) return d;
  }
  return undefined;
}

/** Nest a flat C-order list like `dims` ([] = the single element). */
function nest(flat: unknown[], dims: readonly number[]): unknown {
  if (dims.length === 0) return flat[0];
  let k = 0;
  const build = (level: number): unknown[] => {
    const out: unknown[] = [];
    for (let i = 0; i < dims[level]; i++) out.push(level === dims.length - 1 ? flat[k++] : build(level + 1));
    return out;
  };
  return build(0);
}

const dimsOf = (s: DumpShape): number[] => (s.class === 'H5S_SIMPLE' ? s.dims! : []);
const countOf = (s: DumpShape): number => (s.class === 'H5S_NULL' ? 0 : dimsOf(s).reduce((a, b) => a * b, 1));

/**
 * Shape check (wire-reference 3.2): NULL and SCALAR exactly `{class}`; SIMPLE has `dims`, and
 * `maxdims` (0 = unlimited) when extensible; a non-extensible shape may leave `maxdims` out or give
 * it equal to `dims`.
 */
function checkShape(m: Mismatches, where: string, act: any, exp: DumpShape): void {
  if (exp.class !== 'H5S_SIMPLE') {
    m.eq(`${where} shape`, act, { class: exp.class });
    return;
  }
  const maxdims = exp.maxdims!.map((x) => (x === null ? 0 : x));
  const extensible = exp.maxdims!.some((x, i) => x !== exp.dims![i]);
  if (!m.check(`${where} shape`, () => expect(act).to.be.an('object'))) return;
  if (extensible || 'maxdims' in act) m.eq(`${where} shape`, act, { class: 'H5S_SIMPLE', dims: exp.dims, maxdims });
  else m.eq(`${where} shape`, act, { class: 'H5S_SIMPLE', dims: exp.dims });
}

function rels(hrefs: unknown): string[] {
  return Array.isArray(hrefs) ? hrefs.map((h) => h?.rel).sort() : [`<hrefs is ${show(hrefs)}>`];
}

// ---------------------------------------------------------------------------------------------
// the suite

// Without ../shared beside the clone only the generated edge-case file is checked.
const SHARED_FILES = HAVE_SHARED
  ? fs
      .readdirSync(SHARED_FIXTURES)
      .filter((n) => n.endsWith('.h5'))
      .sort()
  : [];

/**
 * One more file, written here by h5py (test/tools/make_edge_fixture.py): the edge cases the shared
 * corpus lacks (aliases and cycles, creation order, odd names, extreme numbers, string paddings,
 * nested compounds, opaque, bitfield, more references and creation properties).
 */
const EDGE_FILE = 'edge_cases.h5';
const GENERATED = tempRoot('h5store-fixtures-gen-');
process.once('exit', () => fs.rmSync(GENERATED, { recursive: true, force: true }));
execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_edge_fixture.py'), path.join(GENERATED, EDGE_FILE)]);

const ALL_FILES = [...SHARED_FILES, EDGE_FILE];
const sourceOf = (file: string) => path.join(file === EDGE_FILE ? GENERATED : SHARED_FIXTURES, file);

let server: TestServer;
let root: string;
let base: Client;

/** What the walk over HTTP found for one file, aligned with the dump by link titles. */
interface Walk {
  domainReply: Reply;
  rootId?: string;
  /** dump object address -> server id */
  idOf: Map<string, string>;
  /** server id -> dump object address */
  addrOf: Map<string, string>;
  kindOf: Map<string, Kind>;
  /** ids that map to two addresses or addresses reached under two ids */
  conflicts: string[];
  /** group address -> GET /groups/<id>/links reply */
  links: Map<string, Reply>;
}

async function walkDomain(c: Client, dump: Dump): Promise<Walk> {
  const w: Walk = {
    domainReply: await c.get('/'),
    idOf: new Map(),
    addrOf: new Map(),
    kindOf: new Map(),
    conflicts: [],
    links: new Map(),
  };
  for (const [addr, o] of Object.entries(dump.objects)) w.kindOf.set(addr, o.kind);
  if (w.domainReply.status !== 200 || typeof w.domainReply.json?.root !== 'string') return w;
  w.rootId = w.domainReply.json.root as string;
  w.idOf.set(dump.root, w.rootId);
  w.addrOf.set(w.rootId, dump.root);
  const queue = [dump.root];
  const seen = new Set(queue);
  while (queue.length) {
    const addr = queue.shift()!;
    const id = w.idOf.get(addr)!;
    const r = await c.get(`/groups/${id}/links`);
    w.links.set(addr, r);
    if (r.status !== 200 || !Array.isArray(r.json?.links)) continue;
    const byTitle = new Map<string, any>(r.json.links.map((l: any) => [l.title, l]));
    for (const dl of dump.objects[addr].links ?? []) {
      if (dl.class !== 'H5L_TYPE_HARD') continue;
      const sl = byTitle.get(dl.title);
      if (!sl || typeof sl.id !== 'string') continue;
      const prevId = w.idOf.get(dl.addr!);
      const prevAddr = w.addrOf.get(sl.id);
      if (prevId !== undefined && prevId !== sl.id) w.conflicts.push(`object at addr ${dl.addr} has two ids: ${prevId} and ${sl.id} (link ${dl.title})`);
      if (prevAddr !== undefined && prevAddr !== dl.addr) w.conflicts.push(`id ${sl.id} names two objects: addr ${prevAddr} and ${dl.addr} (link ${dl.title})`);
      if (prevId === undefined) w.idOf.set(dl.addr!, sl.id);
      if (prevAddr === undefined) w.addrOf.set(sl.id, dl.addr!);
      if (dl.kind === 'group' && !seen.has(dl.addr!)) {
        seen.add(dl.addr!);
        queue.push(dl.addr!);
      }
    }
  }
  return w;
}

/** Where an object is, for messages. */
const at = (o: DumpObject) => `${o.kind} ${o.paths[0]}`;

describe('fixtures: every shared HDF5 file served as a domain, checked against h5py', function () {
  this.timeout(180000);

  before(async function () {
    this.timeout(60000);
    root = tempRoot('h5store-fixtures-');
    if (HAVE_SHARED) copyFixtures(root);
    copyFixtures(root, 'fx', [EDGE_FILE], GENERATED);
    server = await startServer({ root });
    base = new Client(server.url);
  });

  after(async function () {
    this.timeout(30000);
    if (server) await server.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(GENERATED, { recursive: true, force: true });
  });

  for (const file of ALL_FILES) {
    const src = sourceOf(file);
    const domain = `/fx/${file}`;

    if (!hasHdf5Signature(src)) {
      describe(file, () => {
        it('is not HDF5: GET / answers 400 with a JSON message, and the server keeps serving other domains', async () => {
          const c = base.with(domain);
          for (const p of ['/', '/groups', '/datasets']) {
            const r = await c.get(p);
            expect(r.status, `GET ${p}?domain=${domain}: ${r.text}`).to.equal(400);
            expect(r.headers.get('content-type') ?? '', `GET ${p} content-type`).to.match(/^application\/json/);
            expect(r.json, `GET ${p} body`).to.be.an('object');
            expect(r.json.status, `GET ${p} body.status`).to.equal(400);
            expect(r.json.message, `GET ${p} body.message`).to.be.a('string').and.not.equal('');
          }
          const other = ALL_FILES.find((n) => n !== file && hasHdf5Signature(sourceOf(n)))!;
          const ok = await base.with(`/fx/${other}`).get('/');
          expect(ok.status, `GET /?domain=/fx/${other} after the bad file: ${ok.text}`).to.equal(200);
          expect(ok.json.root).to.match(ID_RE);
          // the same bad file again: still a 400, not a cached crash
          const again = await c.get('/');
          expect(again.status).to.equal(400);
        });
      });
      continue;
    }

    describe(file, function () {
      const dump = toolJson('dump_h5.py', [src]) as Dump;
      const objects = Object.entries(dump.objects);
      const groups = objects.filter(([, o]) => o.kind === 'group');
      const datasets = objects.filter(([, o]) => o.kind === 'dataset');
      const datatypes = objects.filter(([, o]) => o.kind === 'datatype');
      let client: Client;
      let w: Walk;

      before(async function () {
        this.timeout(120000);
        client = base.with(domain);
        w = await walkDomain(client, dump);
      });

      it('GET / returns the domain with a root group id', () => {
        const r = w.domainReply;
        expect(r.status, r.text).to.equal(200);
        expect(r.json.class).to.equal('domain');
        expect(r.json.root).to.be.a('string').and.match(ID_RE);
        expect(r.json.root.startsWith('g-')).to.equal(true);
        expect(r.json.owner, 'owner').to.be.a('string');
        expect(r.json.created, 'created').to.be.a('number');
        expect(r.json.lastModified, 'lastModified').to.be.a('number');
      });

      it(`links: titles, classes and targets of all ${groups.length} group(s) match h5py; one id per object`, async () => {
        const m = new Mismatches();
        expect(w.rootId, 'no root id from GET /').to.be.a('string');
        for (const [addr, o] of groups) {
          const id = w.idOf.get(addr);
          if (!id) {
            m.add(`${at(o)}: no server id found (its parent's links did not list it with an id)`);
            continue;
          }
          const r = w.links.get(addr)!;
          const where = `GET /groups/${id}/links (${o.paths[0]})`;
          if (!m.status(where, r)) continue;
          const got: any[] = r.json.links;
          const exp = o.links!;
          if (!m.eq(`${where} titles`, got.map((l) => l.title), exp.map((l) => l.title))) continue;
          for (let i = 0; i < exp.length; i++) {
            const dl = exp[i];
            const sl = got[i];
            const lw = `${where} link ${JSON.stringify(dl.title)}`;
            switch (dl.class) {
              case 'H5L_TYPE_HARD': {
                const tid = w.idOf.get(dl.addr!);
                const col = COLLECTION[dl.kind!];
                m.eq(`${lw} class`, sl.class, 'H5L_TYPE_HARD');
                m.eq(`${lw} id`, sl.id, tid);
                m.eq(`${lw} collection`, sl.collection, col);
                m.check(`${lw} id format`, () => expect(sl.id).to.match(ID_RE).and.satisfy((s: string) => s.startsWith(PREFIX[dl.kind!])));
                m.check(`${lw} target`, () => expect(sl.target).to.be.a('string').and.satisfy((s: string) => s.split('?')[0].endsWith(`/${col}/${tid}`)));
                m.check(`${lw} href`, () => expect(sl.href).to.be.a('string'));
                for (const k of ['h5path', 'h5domain']) m.check(`${lw} has no ${k}`, () => expect(sl).to.not.have.property(k));
                break;
              }
              case 'H5L_TYPE_SOFT':
                m.eq(`${lw} class`, sl.class, 'H5L_TYPE_SOFT');
                m.eq(`${lw} h5path`, sl.h5path, dl.h5path);
                for (const k of ['id', 'collection', 'target', 'h5domain']) m.check(`${lw} has no ${k}`, () => expect(sl).to.not.have.property(k));
                break;
              case 'H5L_TYPE_EXTERNAL':
                m.eq(`${lw} class`, sl.class, 'H5L_TYPE_EXTERNAL');
                m.eq(`${lw} h5path`, sl.h5path, dl.h5path);
                // the file name exactly as stored (as HSDS and h5py show it; resolved only when followed)
                m.eq(`${lw} h5domain`, sl.h5domain, dl.file!);
                m.eq(`${lw} file`, sl.file, dl.file!);
                for (const k of ['id', 'collection', 'target']) m.check(`${lw} has no ${k}`, () => expect(sl).to.not.have.property(k));
                break;
              default:
                // user-defined link: class H5L_TYPE_UDLINK (DESIGN.md 6, spec 2.2), no target of any kind
                m.eq(`${lw} class`, sl.class, 'H5L_TYPE_UDLINK');
                for (const k of ['id', 'collection', 'target', 'h5path', 'h5domain']) m.check(`${lw} has no ${k}`, () => expect(sl).to.not.have.property(k));
            }
          }
          // creation order (wire-reference 0.9: CreateOrder=1 lists by creation time)
          if (o.linksByCreation) {
            const cr = await client.get(`/groups/${id}/links`, { CreateOrder: 1 });
            if (m.status(`${where}?CreateOrder=1`, cr)) m.eq(`${where}?CreateOrder=1 titles`, (cr.json.links as any[]).map((l) => l.title), o.linksByCreation);
          }
          // every link again by name: GET /groups/<id>/links/<title> (wire-reference 2.2)
          for (const dl of exp) {
            const lr = await client.get(`/groups/${id}/links/${encodeURIComponent(dl.title)}`);
            const lw = `GET /groups/${id}/links/${dl.title} (${o.paths[0]})`;
            if (!m.status(lw, lr)) continue;
            let link: Record<string, unknown>;
            let hrefRels: string[];
            switch (dl.class) {
              case 'H5L_TYPE_HARD':
                link = { title: dl.title, class: 'H5L_TYPE_HARD', id: w.idOf.get(dl.addr!), collection: COLLECTION[dl.kind!] };
                hrefRels = ['home', 'owner', 'self', 'target'];
                break;
              case 'H5L_TYPE_SOFT':
                link = { title: dl.title, class: 'H5L_TYPE_SOFT', h5path: dl.h5path };
                hrefRels = ['home', 'owner', 'self'];
                break;
              case 'H5L_TYPE_EXTERNAL':
                link = {
                  title: dl.title,
                  class: 'H5L_TYPE_EXTERNAL',
                  h5path: dl.h5path,
                  h5domain: dl.file!,
                  file: dl.file!, // HSDS 1.0's name for it (issue #25)
                };
                hrefRels = ['home', 'owner', 'self'];
                break;
              default:
                link = { title: dl.title, class: 'H5L_TYPE_UDLINK' };
                hrefRels = ['home', 'owner', 'root', 'self'];
            }
            m.eq(`${lw} link`, lr.json.link, link);
            m.eq(`${lw} hrefs rels`, rels(lr.json.hrefs), hrefRels);
            m.check(`${lw} created/lastModified`, () => {
              expect(lr.json.created).to.be.a('number');
              expect(lr.json.lastModified).to.be.a('number');
            });
          }
        }
        // ids: one per object, all distinct, same domain key as the root (wire-reference 0.1)
        for (const cf of w.conflicts) m.add(cf);
        m.eq('number of distinct ids', new Set(w.idOf.values()).size, objects.length);
        const key = (id: string) => id.slice(2, 19);
        for (const [addr, id] of w.idOf) {
          const o = dump.objects[addr];
          m.check(`${at(o)} id ${id}`, () => {
            expect(id).to.match(ID_RE);
            expect(id.slice(0, 2)).to.equal(PREFIX[o.kind]);
            expect(key(id)).to.equal(key(w.rootId!));
          });
        }
        // paths: the same breadth-first walk over the server's links gives every object the same paths
        const serverPaths = new Map<string, string[]>([[w.rootId!, ['/']]]);
        const first = new Map<string, string>([[w.rootId!, '/']]);
        const queue = [w.rootId!];
        while (queue.length) {
          const gid = queue.shift()!;
          const r = w.links.get(w.addrOf.get(gid) ?? '');
          if (!r || r.status !== 200) continue;
          for (const l of r.json.links as any[]) {
            if (l.class !== 'H5L_TYPE_HARD' || typeof l.id !== 'string') continue;
            const p = first.get(gid)!.replace(/\/$/, '') + '/' + l.title;
            if (serverPaths.has(l.id)) serverPaths.get(l.id)!.push(p);
            else {
              serverPaths.set(l.id, [p]);
              first.set(l.id, p);
              if (l.collection === 'groups') queue.push(l.id);
            }
          }
        }
        for (const [addr, o] of objects) {
          const id = w.idOf.get(addr);
          if (id) m.eq(`${at(o)} paths reached over HTTP`, (serverPaths.get(id) ?? []).sort(), o.paths);
        }
        m.done();
      });

      it('groups: GET /groups/<id> has exact linkCount and attributeCount', async () => {
        const m = new Mismatches();
        for (const [addr, o] of groups) {
          const id = w.idOf.get(addr);
          if (!id) {
            m.add(`${at(o)}: no id`);
            continue;
          }
          const r = await client.get(`/groups/${id}`);
          const where = `GET /groups/${id} (${o.paths[0]})`;
          if (!m.status(where, r)) continue;
          m.eq(`${where} id`, r.json.id, id);
          m.eq(`${where} root`, r.json.root, w.rootId);
          m.eq(`${where} linkCount`, r.json.linkCount, o.links!.length);
          m.eq(`${where} attributeCount`, r.json.attributeCount, o.attributeCount);
          m.check(`${where} created/lastModified`, () => {
            expect(r.json.created).to.be.a('number');
            expect(r.json.lastModified).to.be.a('number');
          });
        }
        m.done();
      });

      if (datasets.length) {
        it(`datasets: GET /datasets/<id> of ${datasets.length} dataset(s): type, shape, layout, filters, fillValue`, async () => {
          const m = new Mismatches();
          for (const [addr, o] of datasets) {
            const id = w.idOf.get(addr);
            if (!id) {
              m.add(`${at(o)}: no id`);
              continue;
            }
            const r = await client.get(`/datasets/${id}`);
            const where = `GET /datasets/${id} (${o.paths[0]})`;
            if (!m.status(where, r)) continue;
            const ds = r.json;
            m.eq(`${where} id`, ds.id, id);
            m.eq(`${where} root`, ds.root, w.rootId);
            m.eq(`${where} attributeCount`, ds.attributeCount, o.attributeCount);
            m.eq(`${where} type`, ds.type, expectedType({ ...o.type!, ...(o.committed ? { committed: o.committed } : {}) }, w.idOf));
            checkShape(m, where, ds.shape, o.shape!);
            if (!m.check(`${where} creationProperties`, () => expect(ds.creationProperties).to.be.an('object'))) continue;
            const cp = ds.creationProperties;
            m.eq(`${where} creationProperties.layout`, cp.layout, o.layout);
            if (o.layout!.class === 'H5D_CHUNKED') m.eq(`${where} layout`, ds.layout, o.layout);
            if (o.shape!.class === 'H5S_NULL') m.check(`${where} layout`, () => expect(ds).to.not.have.property('layout'));
            // filters: ids in pipeline order; class and name from the wire-reference table; deflate level
            const expFilters = o.filters!;
            if (expFilters.length === 0) {
              m.check(`${where} creationProperties.filters`, () => expect(cp.filters === undefined || (Array.isArray(cp.filters) && cp.filters.length === 0), show(cp.filters)).to.equal(true));
            } else if (m.check(`${where} creationProperties.filters`, () => expect(cp.filters).to.be.an('array').with.lengthOf(expFilters.length))) {
              expFilters.forEach((f, i) => {
                const got = cp.filters[i];
                const fw = `${where} creationProperties.filters[${i}]`;
                m.eq(`${fw}.id`, got?.id, f.id);
                const known = FILTER_TABLE[f.id];
                if (known) {
                  m.eq(`${fw}.class`, got?.class, known.cls);
                  m.eq(`${fw}.name`, got?.name, known.name);
                }
                if (f.id === 1) m.eq(`${fw}.level`, got?.level, f.cd_values[0]);
              });
            }
            // fill value: only when the file has a user-defined one
            if (o.fillValue !== undefined) {
              const d = diffElement(o.type, o.fillValue, cp.fillValue, w, `${where} creationProperties.fillValue`);
              if (d) m.add(d);
            } else {
              m.check(`${where} creationProperties.fillValue (the file has no user-defined fill value)`, () => expect(cp).to.not.have.property('fillValue'));
            }
          }
          m.done();
        });

        it('datasets: GET /datasets/<id>/value (JSON) equals what h5py reads', async () => {
          const m = new Mismatches();
          for (const [addr, o] of datasets) {
            const id = w.idOf.get(addr);
            if (!id) {
              m.add(`${at(o)}: no id`);
              continue;
            }
            const r = await client.get(`/datasets/${id}/value`);
            const where = `GET /datasets/${id}/value (${o.paths[0]})`;
            if (o.shape!.class === 'H5S_NULL') {
              // wire-reference 2.4: a null dataspace has no value -> 400
              m.status(where, r, 400);
              continue;
            }
            if (!m.status(where, r)) continue;
            m.check(`${where} content-type`, () => expect(r.headers.get('content-type') ?? '').to.match(/^application\/json/));
            if (!m.check(`${where} body`, () => expect(r.json).to.be.an('object').with.property('value'))) continue;
            const d = diffNested(o.type, dimsOf(o.shape!), o.value, r.json.value, w, `${where} value`);
            if (d) m.add(d);
          }
          m.done();
        });

        it('datasets: GET /datasets/<id>/value (binary) has count x item size bytes and decodes to the JSON values', async () => {
          const m = new Mismatches();
          for (const [addr, o] of datasets) {
            const id = w.idOf.get(addr);
            if (!id) {
              m.add(`${at(o)}: no id`);
              continue;
            }
            const where = `GET /datasets/${id}/value Accept: application/octet-stream (${o.paths[0]})`;
            const r = await client.get(`/datasets/${id}/value`, undefined, { Accept: 'application/octet-stream' });
            if (o.shape!.class === 'H5S_NULL') {
              m.status(where, r, 400);
              continue;
            }
            if (!m.status(where, r)) continue;
            m.eq(`${where} content-type`, r.headers.get('content-type'), 'application/octet-stream');
            const count = countOf(o.shape!);
            const size = wireSize(o.type);
            if (size !== undefined) {
              m.eq(`${where} body length (${count} x ${size})`, r.body.length, count * size);
              m.eq(`${where} content-length`, r.headers.get('content-length'), String(count * size));
            }
            const type = expectedType(o.type!, w.idOf) as TypeJson;
            let decoded: unknown;
            try {
              const { values, end } = decodeElements(r.body, type, count);
              m.eq(`${where} decoded bytes`, end, r.body.length);
              decoded = nest(values, dimsOf(o.shape!));
            } catch (e) {
              m.add(`${where}: decodeElements failed: ${(e as Error).message}`);
              continue;
            }
            // the decoded binary equals h5py's values ...
            const d1 = diffNested(o.type, dimsOf(o.shape!), o.value, decoded, w, `${where} decoded value vs h5py`);
            if (d1) m.add(d1);
            // ... and the JSON reply
            const j = await client.get(`/datasets/${id}/value`);
            if (m.status(`GET /datasets/${id}/value (${o.paths[0]})`, j)) {
              const d2 = diffNested(o.type, dimsOf(o.shape!), j.json?.value, decoded, w, `${where} decoded value vs JSON value`);
              if (d2) m.add(d2);
            }
          }
          m.done();
        });
      }

      it('attributes: GET .../attributes (?IncludeData=1) and .../attributes/<name> match h5py for every object', async () => {
        const m = new Mismatches();
        for (const [addr, o] of objects) {
          const id = w.idOf.get(addr);
          if (!id) {
            m.add(`${at(o)}: no id`);
            continue;
          }
          const col = COLLECTION[o.kind];
          const names = o.attributes.map((a) => a.name);
          // the list without data: names, types and shapes, no values
          const plain = await client.get(`/${col}/${id}/attributes`);
          const pw = `GET /${col}/${id}/attributes (${o.paths[0]})`;
          if (m.status(pw, plain) && m.check(`${pw} attributes`, () => expect(plain.json.attributes).to.be.an('array'))) {
            m.eq(`${pw} names`, plain.json.attributes.map((a: any) => a.name), names);
            for (const a of plain.json.attributes) m.check(`${pw} ${a.name}: no value without IncludeData`, () => expect(a).to.not.have.property('value'));
          }
          const withData = await client.get(`/${col}/${id}/attributes`, { IncludeData: 1 });
          const lw = `GET /${col}/${id}/attributes?IncludeData=1 (${o.paths[0]})`;
          if (m.status(lw, withData) && m.check(`${lw} attributes`, () => expect(withData.json.attributes).to.be.an('array'))) {
            const got: any[] = withData.json.attributes;
            if (m.eq(`${lw} names`, got.map((a) => a.name), names)) {
              o.attributes.forEach((a, i) => {
                const aw = `${lw} ${JSON.stringify(a.name)}`;
                const g = got[i];
                m.eq(`${aw} type`, g.type, expectedType({ ...a.type, ...(a.committed ? { committed: a.committed } : {}) }, w.idOf));
                checkShape(m, aw, g.shape, a.shape);
                if (a.shape.class === 'H5S_NULL') m.eq(`${aw} value`, g.value, null);
                else {
                  const d = diffNested(a.type, dimsOf(a.shape), a.value, g.value, w, `${aw} value`);
                  if (d) m.add(d);
                }
                m.check(`${aw} href`, () => expect(g.href).to.be.a('string'));
                m.check(`${aw} created`, () => expect(g.created).to.be.a('number'));
              });
            }
          }
          if (o.attributesByCreation) {
            const cw = `GET /${col}/${id}/attributes?CreateOrder=1 (${o.paths[0]})`;
            const cr = await client.get(`/${col}/${id}/attributes`, { CreateOrder: 1 });
            if (m.status(cw, cr)) m.eq(`${cw} names`, (cr.json.attributes as any[]).map((a) => a.name), o.attributesByCreation);
          }
          for (const a of o.attributes) {
            const aw = `GET /${col}/${id}/attributes/${a.name} (${o.paths[0]})`;
            const r = await client.get(`/${col}/${id}/attributes/${encodeURIComponent(a.name)}`);
            if (!m.status(aw, r)) continue;
            m.eq(`${aw} name`, r.json.name, a.name);
            m.eq(`${aw} type`, r.json.type, expectedType({ ...a.type, ...(a.committed ? { committed: a.committed } : {}) }, w.idOf));
            checkShape(m, aw, r.json.shape, a.shape);
            if (a.shape.class === 'H5S_NULL') m.eq(`${aw} value`, r.json.value, null);
            else {
              const d = diffNested(a.type, dimsOf(a.shape), a.value, r.json.value, w, `${aw} value`);
              if (d) m.add(d);
            }
            m.check(`${aw} created/lastModified`, () => {
              expect(r.json.created).to.be.a('number');
              expect(r.json.lastModified).to.be.a('number');
            });
          }
        }
        m.done();
      });

      if (datatypes.length) {
        it(`datatypes: GET /datatypes/<id> of ${datatypes.length} committed type(s)`, async () => {
          const m = new Mismatches();
          for (const [addr, o] of datatypes) {
            const id = w.idOf.get(addr);
            if (!id) {
              m.add(`${at(o)}: no id`);
              continue;
            }
            const r = await client.get(`/datatypes/${id}`);
            const where = `GET /datatypes/${id} (${o.paths[0]})`;
            if (!m.status(where, r)) continue;
            m.eq(`${where} id`, r.json.id, id);
            m.eq(`${where} root`, r.json.root, w.rootId);
            m.eq(`${where} attributeCount`, r.json.attributeCount, o.attributeCount);
            // the type of the datatype itself; an `id` in it may only name this datatype
            const { id: typeId, ...type } = (r.json.type ?? {}) as Record<string, unknown>;
            if (typeId !== undefined) m.eq(`${where} type.id`, typeId, id);
            m.eq(`${where} type`, type, expectedType(o.type!, w.idOf));
          }
          // objects typed by a committed datatype carry its id in type.id (wire-reference 3.1)
          let users = 0;
          for (const [addr, o] of objects) {
            const oid = w.idOf.get(addr);
            if (!oid) continue;
            if (o.committed) {
              users++;
              const r = await client.get(`/datasets/${oid}`);
              if (m.status(`GET /datasets/${oid}`, r)) m.eq(`GET /datasets/${oid} (${o.paths[0]}) type.id`, r.json.type?.id, w.idOf.get(o.committed));
            }
            for (const a of o.attributes) {
              if (!a.committed) continue;
              users++;
              const r = await client.get(`/${COLLECTION[o.kind]}/${oid}/attributes/${encodeURIComponent(a.name)}`);
              if (m.status(`GET attribute ${a.name} of ${o.paths[0]}`, r)) m.eq(`attribute ${a.name} of ${o.paths[0]} type.id`, r.json.type?.id, w.idOf.get(a.committed));
            }
          }
          if (file === 'committed_type.h5') m.eq('objects using the committed type', users, 2);
          m.done();
        });
      }

      // ---- file-specific checks

      if (file === 'tall_with_udlink.h5') {
        it('the user-defined link answers with only title and class, hrefs self, root, home, owner', async () => {
          const [gaddr, g] = groups.find(([, o]) => o.links!.some((l) => l.class === 'H5L_TYPE_USER_DEFINED'))!;
          const ud = g.links!.find((l) => l.class === 'H5L_TYPE_USER_DEFINED')!;
          expect(g.paths).to.deep.equal(['/g2']);
          const gid = w.idOf.get(gaddr)!;
          const r = await client.get(`/groups/${gid}/links/${encodeURIComponent(ud.title)}`);
          expect(r.status, r.text).to.equal(200);
          expect(r.json.link).to.deep.equal({ title: 'udlink', class: 'H5L_TYPE_UDLINK' });
          expect(rels(r.json.hrefs)).to.deep.equal(['home', 'owner', 'root', 'self']);
          const byRel = Object.fromEntries((r.json.hrefs as any[]).map((h) => [h.rel, h.href]));
          expect(byRel.root.split('?')[0]).to.match(new RegExp(`/groups/${w.rootId}$`));
          expect(byRel.owner.split('?')[0]).to.match(new RegExp(`/groups/${gid}$`));
          // and in the listing
          const list = await client.get(`/groups/${gid}/links`);
          expect(list.status).to.equal(200);
          const item = (list.json.links as any[]).find((l) => l.title === 'udlink');
          expect(item, 'udlink in the listing').to.be.an('object');
          expect(item.class).to.equal('H5L_TYPE_UDLINK');
          for (const k of ['id', 'collection', 'target', 'h5path', 'h5domain']) expect(item).to.not.have.property(k);
        });
      }

      if (file === 'tall.h5' || file === 'tall_with_udlink.h5') {
        it('the external link extlink has h5path and h5domain; the soft link slink has h5path', async () => {
          const g12 = groups.find(([, o]) => o.paths.includes('/g1/g1.2'))!;
          const g121 = groups.find(([, o]) => o.paths.includes('/g1/g1.2/g1.2.1'))!;
          const r = await client.get(`/groups/${w.idOf.get(g12[0])}/links/extlink`);
          expect(r.status, r.text).to.equal(200);
          expect(r.json.link).to.deep.equal({ title: 'extlink', class: 'H5L_TYPE_EXTERNAL', h5path: 'somepath', h5domain: 'somefile', file: 'somefile' });
          expect(rels(r.json.hrefs)).to.deep.equal(['home', 'owner', 'self']);
          const s = await client.get(`/groups/${w.idOf.get(g121[0])}/links/slink`);
          expect(s.status, s.text).to.equal(200);
          expect(s.json.link).to.deep.equal({ title: 'slink', class: 'H5L_TYPE_SOFT', h5path: 'somevalue' });
        });
      }

      if (file === 'group1k.h5') {
        it('links listed in pages of Limit=100 with Marker=<last title> concatenate to the full sorted list', async () => {
          const rootLinks = dump.objects[dump.root].links!.map((l) => l.title);
          expect(rootLinks).to.have.lengthOf(1000);
          const full = await client.get(`/groups/${w.rootId}/links`);
          expect(full.status).to.equal(200);
          const fullTitles = (full.json.links as any[]).map((l) => l.title);
          expect(fullTitles).to.deep.equal(rootLinks);
          expect(fullTitles).to.deep.equal([...fullTitles].sort());
          const all: string[] = [];
          let marker: string | undefined;
          let pages = 0;
          for (;;) {
            const r = await client.get(`/groups/${w.rootId}/links`, { Limit: 100, Marker: marker });
            expect(r.status, `page after ${marker}: ${r.text}`).to.equal(200);
            const titles = (r.json.links as any[]).map((l) => l.title);
            expect(titles.length, `page after ${marker}`).to.be.at.most(100);
            if (titles.length === 0) break;
            pages++;
            all.push(...titles);
            marker = titles[titles.length - 1];
            expect(pages, 'too many pages').to.be.at.most(11);
          }
          expect(pages).to.equal(10);
          expect(all).to.deep.equal(fullTitles);
          // wire-reference 0.9: an unknown marker is a 404; a Limit that is not an int is a 400
          const missing = await client.get(`/groups/${w.rootId}/links`, { Limit: 100, Marker: 'g9999' });
          expect(missing.status, `Marker=g9999: ${missing.text}`).to.equal(404);
          const badLimit = await client.get(`/groups/${w.rootId}/links`, { Limit: 'ten' });
          expect(badLimit.status, `Limit=ten: ${badLimit.text}`).to.equal(400);
        });
      }

      if (file === 'attr1k.h5') {
        it('attributes listed in pages of Limit=100 with Marker=<last name> concatenate to the full sorted list', async () => {
          const names = dump.objects[dump.root].attributes.map((a) => a.name);
          expect(names).to.have.lengthOf(1000);
          const full = await client.get(`/groups/${w.rootId}/attributes`);
          expect(full.status).to.equal(200);
          const fullNames = (full.json.attributes as any[]).map((a) => a.name);
          expect(fullNames).to.deep.equal(names);
          expect(fullNames).to.deep.equal([...fullNames].sort());
          const all: string[] = [];
          let marker: string | undefined;
          let pages = 0;
          for (;;) {
            const r = await client.get(`/groups/${w.rootId}/attributes`, { Limit: 100, Marker: marker, IncludeData: 1 });
            expect(r.status, `page after ${marker}: ${r.text}`).to.equal(200);
            const items = r.json.attributes as any[];
            expect(items.length, `page after ${marker}`).to.be.at.most(100);
            if (items.length === 0) break;
            pages++;
            for (const a of items) {
              const exp = dump.objects[dump.root].attributes.find((x) => x.name === a.name);
              expect(a.value, `value of ${a.name}`).to.equal(exp?.value);
            }
            all.push(...items.map((a) => a.name));
            marker = all[all.length - 1];
            expect(pages, 'too many pages').to.be.at.most(11);
          }
          expect(pages).to.equal(10);
          expect(all).to.deep.equal(fullNames);
          const missing = await client.get(`/groups/${w.rootId}/attributes`, { Limit: 100, Marker: 'a9999' });
          expect(missing.status, `Marker=a9999: ${missing.text}`).to.equal(404);
          const badLimit = await client.get(`/groups/${w.rootId}/attributes`, { Limit: 'ten' });
          expect(badLimit.status, `Limit=ten: ${badLimit.text}`).to.equal(400);
        });
      }
    });
  }

  // runs after every per-file suite above (child suites run in definition order)
  describe('after all files were served', () => {
    it('GET /info reports no open HDF5 ids (nothing leaked)', async () => {
      const r = await base.get('/info');
      expect(r.status, r.text).to.equal(200);
      expect(r.json.open_hdf5_ids).to.equal(0);
    });

    it('every served file is byte for byte unchanged (a file that is only read is never written, DESIGN.md 4)', () => {
      const changed = ALL_FILES.filter((n) => !fs.readFileSync(path.join(root, 'fx', n)).equals(fs.readFileSync(sourceOf(n))));
      expect(changed).to.deep.equal([]);
    });
  });
});
