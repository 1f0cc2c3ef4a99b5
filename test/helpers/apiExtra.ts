/**
 * Small extras for the API tests: raw-URL requests (for percent-encoded traversal attempts that
 * `Client.url` would re-encode), error-body checks, id syntax, file snapshots.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { parseJsonBody } from '../../src/codec/json.js';
import type { Reply } from './server.js';

/** The 38-character object id form of wire-reference 0.1 (`<p>-8-8-4-6-6`, lowercase hex). */
export const ID_RE = /^[gdt]-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{6}-[0-9a-f]{6}$/;
export const GROUP_ID_RE = /^g-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{6}-[0-9a-f]{6}$/;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A request whose path and query are sent exactly as written (no re-encoding), e.g.
 * `rawRequest(base, 'GET', '/?domain=/%2e%2e/x.h5')`.
 */
export async function rawRequest(
  base: string,
  method: string,
  pathAndQuery: string,
  opts: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const r = await fetch(base + pathAndQuery, { method, headers, body });
  const buf = Buffer.from(await r.arrayBuffer());
  const text = buf.toString('utf8');
  let json: unknown;
  if ((r.headers.get('content-type') ?? '').includes('json') && text) json = parseJsonBody(text);
  return { status: r.status, headers: r.headers, body: buf, json, text };
}

/**
 * A request sent with node:http, so that every header goes as given (`Host` included, which
 * fetch sets itself): e.g. the `Host` of a DNS-rebinding page.
 */
export function headerRequest(
  base: string,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + pathAndQuery, { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        const buf = Buffer.concat(parts);
        const text = buf.toString('utf8');
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        let json: unknown;
        if ((h.get('content-type') ?? '').includes('json') && text) json = parseJsonBody(text);
        resolve({ status: res.statusCode ?? 0, headers: h, body: buf, json, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Assert an error reply: status, JSON content type, body `{status, message, hrefs}`. */
export function expectError(r: Reply, status: number, what = ''): void {
  expect(r.status, `${what} status (body: ${r.text.slice(0, 300)})`).to.equal(status);
  expect(r.headers.get('content-type') ?? '', `${what} content-type`).to.match(/^application\/json/);
  expect(r.json, `${what} error body`).to.be.an('object');
  expect(r.json.status, `${what} body.status`).to.equal(status);
  expect(r.json.message, `${what} body.message`).to.be.a('string').and.not.equal('');
  expect(r.json.hrefs, `${what} body.hrefs`).to.be.an('array');
}

/** sha256 of a file's bytes. */
export function digest(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A recursive snapshot of a directory: relative path -> sha256 (files) or 'dir'. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      const st = fs.lstatSync(p);
      const rel = path.relative(dir, p);
      if (st.isDirectory()) {
        out[rel] = 'dir';
        walk(p);
      } else if (st.isSymbolicLink()) out[rel] = 'link:' + fs.readlinkSync(p);
      else out[rel] = digest(p);
    }
  };
  walk(dir);
  return out;
}

/** Collect every page of a Limit/Marker iteration. */
export async function allPages<T>(
  fetchPage: (marker: string | undefined) => Promise<T[]>,
  markerOf: (item: T) => string,
  limit: number,
  maxPages = 1000,
): Promise<{ items: T[]; pages: T[][] }> {
  const items: T[] = [];
  const pages: T[][] = [];
  let marker: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await fetchPage(marker);
    pages.push(page);
    expect(page.length, 'page size').to.be.at.most(limit);
    items.push(...page);
    if (page.length < limit) return { items, pages };
    marker = markerOf(page[page.length - 1]);
  }
  throw new Error('iteration did not finish');
}

/** The object address an id carries in its last 12 hex digits (this service's id layout). */
export function addrOf(id: string): bigint {
  return BigInt('0x' + id.slice(25, 31) + id.slice(32, 38));
}

/** A copy of `id` with the address digits (last 12 hex digits) replaced. */
export function withAddr(id: string, addr: bigint): string {
  const a = addr.toString(16).padStart(12, '0');
  if (a.length !== 12) throw new Error('address too large for an id');
  return id.slice(0, 25) + a.slice(0, 6) + '-' + a.slice(6);
}

/** A copy of `id` with the 4 generation digits (hex 17-20) replaced. */
export function withGen(id: string, gen: number): string {
  return id.slice(0, 20) + gen.toString(16).padStart(4, '0') + id.slice(24);
}
