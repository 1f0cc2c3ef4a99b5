/**
 * The source files one warm request runs code of (issue #27: "a value read crosses at most a
 * handful of files"): the server runs in this process, each request is sent `--warm` times, then
 * once more between two precise-coverage snapshots (V8's function call counts, `node:inspector`);
 * every file of `src/` with a function called during that one request is listed, grouped by
 * folder. Not a benchmark: a map of the code a request goes through.
 *
 *   node --import tsx bench/request-path.ts --root DIR [--warm 20] [--header 'Accept: application/octet-stream'] \
 *     'GET /datasets/{id}/value?domain=/f.h5' ['POST /datasets/{id}/value?domain=/f.h5 {"points":[1,2]}' ...]
 *
 * `{id}`, `{id:NAME}` in a path: the id of the dataset linked as NAME in the root group (the
 * first dataset without a name). A body after the path is sent as JSON. `--beside SPEC` (e.g. the
 * metadata `GET /datasets/{id:NAME}`) lists, for every request, also the files it runs beyond
 * those SPEC runs: what is its own rather than the path every request takes (middleware,
 * authentication, the domain's locks).
 */
import inspector from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/main.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src') + path.sep;
const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const root = opt('root');
const warm = Number(opt('warm') ?? '20');
const beside = opt('beside');
const headers: Record<string, string> = {};
for (let h = opt('header'); h !== undefined; h = opt('header')) {
  const at = h.indexOf(':');
  headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
}
if (!root || args.length === 0) {
  console.error('usage: bench/request-path.ts --root DIR [--warm N] [--header H] "METHOD PATH [JSON]" ...');
  process.exit(2);
}

const running = await startServer(loadConfig({ root, port: 0, logLevel: 'warn', workers: 1 }));
const base = running.url.replace(/\/$/, '');
const session = new inspector.Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** GET JSON of a path. */
async function json(p: string): Promise<Record<string, unknown>> {
  const r = await fetch(base + p);
  if (!r.ok) throw new Error(`${p}: ${r.status}`);
  return (await r.json()) as Record<string, unknown>;
}

/** `{id}` / `{id:NAME}` replaced by dataset ids of the domain the path names. */
async function resolve(p: string): Promise<string> {
  const domain = /[?&]domain=([^&]+)/.exec(p)?.[1];
  if (!domain || !p.includes('{id')) return p;
  const rootId = (await json(`/?domain=${domain}`)).root as string;
  const links = (await json(`/groups/${rootId}/links?domain=${domain}`)).links as { title: string; id?: string; collection?: string }[];
  return p.replace(/\{id(?::([^}]+))?\}/g, (_m, name: string | undefined) => {
    const l = links.find((x) => x.collection === 'datasets' && (name === undefined || x.title === name));
    if (!l) throw new Error(`no dataset ${name ?? ''} in ${domain}`);
    return l.id!;
  });
}

async function send(method: string, p: string, body: string | undefined): Promise<number> {
  const r = await fetch(base + p, { method, headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body });
  await r.arrayBuffer();
  return r.status;
}

/** The files of src/ one warm request of `spec` runs code of, with the number of functions called in each. */
async function filesOf(spec: string): Promise<{ status: number; files: Map<string, number> }> {
  const m = /^(\S+)\s+(\S+)(?:\s+(.*))?$/.exec(spec);
  if (!m) throw new Error(`not "METHOD PATH [BODY]": ${spec}`);
  const [, method, raw, body] = m;
  const p = await resolve(raw!);
  for (let i = 0; i < warm; i++) await send(method!, p, body);
  await new Promise((r) => setTimeout(r, 50));
  await session.post('Profiler.takePreciseCoverage'); // resets the counts
  const status = await send(method!, p, body);
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Map<string, number>();
  for (const s of result) {
    const file = s.url.startsWith('file://') ? fileURLToPath(s.url) : s.url;
    if (!file.startsWith(SRC)) continue;
    const called = s.functions.filter((f) => f.ranges[0]!.count > 0).length;
    if (called > 0) files.set(file.slice(SRC.length), called);
  }
  return { status, files };
}

try {
  const common = beside === undefined ? undefined : (await filesOf(beside)).files;
  for (const spec of args) {
    const { status, files } = await filesOf(spec);
    const names = [...files.keys()].sort();
    console.log(`${spec} -> ${status}: ${names.length} files of src/`);
    if (common) {
      const own = names.filter((n) => !common.has(n));
      console.log(`  beyond ${beside}: ${own.length}: ${own.join(', ')}`);
    }
    const byDir = new Map<string, string[]>();
    for (const n of names) {
      const dir = path.dirname(n);
      if (!byDir.has(dir)) byDir.set(dir, []);
      byDir.get(dir)!.push(`${path.basename(n)} (${files.get(n)})`);
    }
    for (const [dir, list] of byDir) console.log(`  ${dir}/: ${list.join(', ')}`);
  }
} finally {
  session.disconnect();
  await running.close();
  process.exit(0); // the value threads and the libhdf5 worker would keep it alive
}
