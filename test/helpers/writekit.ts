/**
 * Helpers for the API write tests (test/api/write-*.test.ts, bad-input.test.ts): a server with a
 * fresh writable domain, h5py / h5dump views of the domain file while the server runs, and
 * little-/big-endian byte builders for expected binary bodies (wire-reference 3.5).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { timed } from './costs.js';
import { toolJson } from './python.js';
import { Client, type Reply, type TestServer, startServer } from './server.js';

/** A running server plus a counter for fresh domains. */
export interface Kit {
  server: TestServer;
  /** Client without a domain (use `domain(...)`). */
  base: Client;
  n: number;
}

/** A server of its own with `env` and `args`, and the folder `/w` for `newDomain`'s domains. Stop it with `releaseKit`. */
export async function startKit(env?: Record<string, string>, args?: string[]): Promise<Kit> {
  const server = await startServer({ env, args });
  fs.mkdirSync(path.join(server.root, 'w'), { recursive: true });
  return { server, base: new Client(server.url), n: 0 };
}

let shared: Promise<Kit> | undefined;

/**
 * The one server with default settings that the write suites share, started on first use and
 * stopped by the root hooks at the end of the run (`stopSharedKit`): a server start is 1-3 s, and
 * these suites started 15. Each suite works on domains of its own (`newDomain`'s counter is the
 * kit's, so names never meet) and names any file it writes itself uniquely. A suite that needs
 * settings of its own, a fresh server, the server's log or its open files calls `startKit`.
 */
export function sharedKit(): Promise<Kit> {
  shared ??= startKit();
  return shared;
}

/** Stop a kit of `startKit` and remove its directory; the shared kit is left running. */
export async function releaseKit(kit: Kit | undefined): Promise<void> {
  if (!kit || (shared && kit === (await shared))) return;
  await kit.server.stop();
  fs.rmSync(kit.server.root, { recursive: true, force: true });
}

/** Stop the shared kit, if it was started (root hooks, after the run). */
export async function stopSharedKit(): Promise<void> {
  if (!shared) return;
  const kit = await shared.catch(() => undefined);
  shared = undefined;
  if (!kit) return;
  await kit.server.stop();
  fs.rmSync(kit.server.root, { recursive: true, force: true });
}

/** A newly created, empty domain. */
export interface Dom {
  c: Client;
  domain: string;
  file: string;
  root: string;
}

/** Create a new domain `/w/<prefix>-<n>.h5` with PUT / and return its client, file and root id. */
export async function newDomain(kit: Kit, prefix = 'd'): Promise<Dom> {
  const domain = `/w/${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}-${++kit.n}.h5`;
  const c = kit.base.with(domain);
  const r = await c.put('/');
  expect(r.status, `PUT / ${domain}: ${r.text}`).to.equal(201);
  return { c, domain, file: path.join(kit.server.root, domain), root: r.json.root };
}

/** h5py's view of the whole file (or only `paths`), see test/tools/h5inspect.py. */
export function inspect(file: string, paths: string[] = []): Record<string, any> {
  return toolJson('h5inspect.py', [file, ...paths]).objects;
}

/** h5py's view of one object by path (throws when missing). */
export function inspectOne(file: string, p: string): any {
  const o = inspect(file, [p])[p];
  if (!o) throw new Error(`h5py: ${p} not found in ${file}`);
  return o;
}

/** h5dump output of a file, with HDF5 file locking off for the h5dump process only. */
export function h5dumpText(file: string, args: string[] = []): string {
  return timed('h5dump', () =>
    execFileSync('h5dump', [...args, file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, HDF5_USE_FILE_LOCKING: 'FALSE' },
    }),
  );
}

/** Collapse runs of whitespace (h5dump output is indented). */
export const squash = (s: string): string => s.replace(/\s+/g, ' ');

/** Expect a status, showing the body on failure. */
export function expectStatus(r: Reply, status: number, what = ''): void {
  expect(r.status, `${what} -> ${r.status} ${r.text.slice(0, 500)}`).to.equal(status);
}

/** Expect a 400 whose message mentions every fragment (case-insensitive). */
export function expect400(r: Reply, what: string, ...fragments: (string | RegExp)[]): void {
  expectStatus(r, 400, what);
  const msg = String(r.json?.message ?? r.text);
  for (const f of fragments) {
    if (typeof f === 'string') expect(msg.toLowerCase(), `${what}: message`).to.include(f.toLowerCase());
    else expect(msg, `${what}: message`).to.match(f);
  }
}

/** PUT a binary body. */
export function putBinary(c: Client, p: string, body: Buffer, query?: Record<string, string | number | boolean | undefined>): Promise<Reply> {
  return c.request('PUT', p, { raw: body, query, headers: { 'content-type': 'application/octet-stream' } });
}

/** GET with Accept: application/octet-stream. */
export function getBinary(c: Client, p: string, query?: Record<string, string | number | boolean | undefined>): Promise<Reply> {
  return c.request('GET', p, { query, headers: { accept: 'application/octet-stream' } });
}

/** POST a binary body, asking for a binary answer. */
export function postBinary(c: Client, p: string, body: Buffer, query?: Record<string, string | number | boolean | undefined>): Promise<Reply> {
  return c.request('POST', p, { raw: body, query, headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' } });
}

/** Create a dataset linked from the root group as `name`; returns its id. */
export async function makeDataset(d: Dom, name: string, body: Record<string, unknown>): Promise<string> {
  const r = await d.c.post('/datasets', { ...body, link: { id: d.root, name } });
  expectStatus(r, 201, `POST /datasets ${name} ${JSON.stringify(body).slice(0, 300)}`);
  return r.json.id;
}

/** Short form of GET .../value JSON `value`. */
export async function getValue(d: Dom, id: string, query?: Record<string, string | number | boolean | undefined>): Promise<any> {
  const r = await d.c.get(`/datasets/${id}/value`, query);
  expectStatus(r, 200, `GET value ${JSON.stringify(query ?? {})}`);
  return r.json.value;
}

// ---------------------------------------------------------------------------------------------
// byte builders (wire-reference 3.5)

type Num = number | bigint;

function pack(size: number, write: (b: Buffer, v: any, o: number) => void, vals: Num[]): Buffer {
  const b = Buffer.alloc(size * vals.length);
  vals.forEach((v, i) => write(b, v, i * size));
  return b;
}

export const bytes = {
  i8: (...v: Num[]) => pack(1, (b, x, o) => b.writeInt8(x, o), v),
  u8: (...v: Num[]) => pack(1, (b, x, o) => b.writeUInt8(x, o), v),
  i16le: (...v: Num[]) => pack(2, (b, x, o) => b.writeInt16LE(x, o), v),
  i16be: (...v: Num[]) => pack(2, (b, x, o) => b.writeInt16BE(x, o), v),
  u16le: (...v: Num[]) => pack(2, (b, x, o) => b.writeUInt16LE(x, o), v),
  u16be: (...v: Num[]) => pack(2, (b, x, o) => b.writeUInt16BE(x, o), v),
  i32le: (...v: Num[]) => pack(4, (b, x, o) => b.writeInt32LE(x, o), v),
  i32be: (...v: Num[]) => pack(4, (b, x, o) => b.writeInt32BE(x, o), v),
  u32le: (...v: Num[]) => pack(4, (b, x, o) => b.writeUInt32LE(x, o), v),
  u32be: (...v: Num[]) => pack(4, (b, x, o) => b.writeUInt32BE(x, o), v),
  i64le: (...v: Num[]) => pack(8, (b, x, o) => b.writeBigInt64LE(BigInt(x), o), v),
  i64be: (...v: Num[]) => pack(8, (b, x, o) => b.writeBigInt64BE(BigInt(x), o), v),
  u64le: (...v: Num[]) => pack(8, (b, x, o) => b.writeBigUInt64LE(BigInt(x), o), v),
  u64be: (...v: Num[]) => pack(8, (b, x, o) => b.writeBigUInt64BE(BigInt(x), o), v),
  f32le: (...v: number[]) => pack(4, (b, x, o) => b.writeFloatLE(x, o), v),
  f32be: (...v: number[]) => pack(4, (b, x, o) => b.writeFloatBE(x, o), v),
  f64le: (...v: number[]) => pack(8, (b, x, o) => b.writeDoubleLE(x, o), v),
  f64be: (...v: number[]) => pack(8, (b, x, o) => b.writeDoubleBE(x, o), v),
  /** IEEE binary16 bit patterns. */
  h16le: (...bits: number[]) => pack(2, (b, x, o) => b.writeUInt16LE(x, o), bits),
  h16be: (...bits: number[]) => pack(2, (b, x, o) => b.writeUInt16BE(x, o), bits),
  /** A fixed string of `len` bytes, padded with `pad` (0 or 0x20). */
  fixed: (len: number, s: string, pad = 0) => {
    const b = Buffer.alloc(len, pad);
    b.write(s, 0, 'utf8');
    return b;
  },
  /** A variable-length element: 4-byte LE byte count, then the bytes. */
  vlen: (payload: Buffer | string) => {
    const p = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
    const h = Buffer.alloc(4);
    h.writeInt32LE(p.length, 0);
    return Buffer.concat([h, p]);
  },
  /** uint64 LE point coordinates (POST .../value binary body). */
  coords: (...v: number[]) => pack(8, (b, x, o) => b.writeBigUInt64LE(BigInt(x), o), v),
  /** A 48-byte NUL-padded reference string. */
  ref: (s: string) => {
    const b = Buffer.alloc(48, 0);
    b.write(s, 0, 'utf8');
    return b;
  },
  cat: (...parts: Buffer[]) => Buffer.concat(parts),
};

/**
 * JSON text of a request value with the literals JSON.stringify cannot write: bigints as exact
 * digits and NaN/Infinity/-Infinity as the bare literals Python's json emits (wire-reference 0.6).
 */
export function jsonText(v: unknown): string {
  const marks: string[] = [];
  const s = JSON.stringify(v, (_k, x) => {
    if (typeof x === 'bigint') {
      marks.push(x.toString());
      return `\u0000${marks.length - 1}\u0000`;
    }
    if (typeof x === 'number' && !Number.isFinite(x)) {
      marks.push(Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity');
      return `\u0000${marks.length - 1}\u0000`;
    }
    return x;
  });
  return s.replace(/"\\u0000(\d+)\\u0000"/g, (_m, i) => marks[Number(i)]);
}

/** Send a JSON body written by `jsonText` (bigints, NaN). */
export function sendJsonText(c: Client, method: string, p: string, body: unknown, query?: Record<string, string | number | boolean | undefined>): Promise<Reply> {
  return c.request(method, p, { raw: jsonText(body), query, headers: { 'content-type': 'application/json' } });
}

/** The IEEE binary16 value nearest to `x` (round half to even), as a double. */
export function halfRound(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  if (a >= 65520) return sign * Infinity;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  if (e < -14) e = -14;
  const q = 2 ** (e - 10);
  const m = a / q;
  let r = Math.round(m);
  if (m - Math.floor(m) === 0.5 && r % 2 !== 0) r -= 1;
  return sign * r * q;
}

/** Map every number inside a JSON value (for comparing floats of a given precision). */
export function mapNumbers(v: unknown, f: (x: number) => number): unknown {
  if (typeof v === 'number') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapNumbers(x, f));
  return v;
}
