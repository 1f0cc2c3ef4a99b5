/**
 * Pure helpers of the viewer (no DOM, no React): the viewer's URL state, domain paths, and the
 * formatting of sizes and times in folder listings. Unit-tested in test/unit/viewer-format.test.ts.
 */

/** Folder page size when the URL gives none, and the largest one accepted. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/**
 * What the viewer shows, as carried in its URL (`/view/?domain=...&path=...`):
 * - `domain`: a folder or domain path of the server (`/` when absent);
 * - `path`: an object path inside the domain that h5web opens first (its `initialPath`);
 * - `marker`, `limit`: folder paging (`GET /domains` `Marker` and `Limit`).
 */
export interface ViewState {
  domain: string;
  path?: string;
  marker?: string;
  limit: number;
}

/**
 * A path typed or linked by a user, made canonical: leading `/`, no repeated or trailing `/`
 * (except the root `/`), surrounding blanks removed. `hdf5://` prefixes are dropped like HSDS.
 */
export function normalizePath(input: string): string {
  let p = input.trim().replace(/^hdf5:\/+/, '/');
  p = ('/' + p).replace(/\/{2,}/g, '/');
  if (p.length > 1) p = p.replace(/\/+$/, '');
  return p;
}

/** The folder holding a domain or folder (`/` for top-level entries and for `/` itself). */
export function parentFolder(p: string): string {
  const n = normalizePath(p);
  const i = n.lastIndexOf('/');
  return i <= 0 ? '/' : n.slice(0, i);
}

/** Last component of a path (`/` for the root). */
export function baseName(p: string): string {
  const n = normalizePath(p);
  return n === '/' ? '/' : n.slice(n.lastIndexOf('/') + 1);
}

/** Each ancestor folder of a path and the path itself, root first: `[{name, path}]`. */
export function breadcrumbs(p: string): { name: string; path: string }[] {
  const n = normalizePath(p);
  const out = [{ name: '/', path: '/' }];
  if (n === '/') return out;
  let acc = '';
  for (const part of n.slice(1).split('/')) {
    acc += '/' + part;
    out.push({ name: part, path: acc });
  }
  return out;
}

/** The folder argument of `GET /domains` for a folder path (with the trailing `/` h5pyd sends). */
export function domainsParam(folder: string): string {
  const n = normalizePath(folder);
  return n === '/' ? '/' : n + '/';
}

/** Parse the viewer's URL query (`location.search`). Invalid `limit` values fall back to the default. */
export function parseViewState(search: string): ViewState {
  const q = new URLSearchParams(search);
  const domain = normalizePath(q.get('domain') ?? '/');
  const rawPath = q.get('path');
  const path = rawPath && rawPath.trim() ? normalizePath(rawPath) : undefined;
  const marker = q.get('marker') || undefined;
  const lim = Number(q.get('limit'));
  const limit = Number.isInteger(lim) && lim >= 1 ? Math.min(lim, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
  return { domain, path, marker, limit };
}

/** The query string (with `?`) for a view state; default values are left out. */
export function viewQuery(s: Partial<ViewState> & { domain: string }): string {
  const q = new URLSearchParams();
  const domain = normalizePath(s.domain);
  if (domain !== '/') q.set('domain', domain);
  if (s.path && s.path !== '/') q.set('path', normalizePath(s.path));
  if (s.marker) q.set('marker', s.marker);
  if (s.limit && s.limit !== DEFAULT_PAGE_SIZE) q.set('limit', String(s.limit));
  const str = q.toString().replace(/%2F/g, '/');
  return str ? '?' + str : '?';
}

/**
 * A size in bytes for people, in binary units like `ls -h`: `0 B`, `1023 B`, `1.5 KiB`,
 * `12 MiB`. One decimal below 10 units, none above.
 */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${n} B`;
  const s = v < 10 ? v.toFixed(1) : Math.round(v).toString();
  // 1023.9 KiB rounds to "1024 KiB": show the next unit instead.
  if (s === '1024' && u < units.length - 1) return `1.0 ${units[u + 1]}`;
  return `${s} ${units[u]}`;
}

/**
 * A timestamp (epoch seconds, as in `lastModified`) as `YYYY-MM-DD HH:MM:SS`, in local time or
 * in UTC.
 */
export function formatTime(seconds: number, utc = false): string {
  if (!Number.isFinite(seconds)) return '';
  const d = new Date(seconds * 1000);
  const parts = utc
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()];
  const p = parts.map((x, i) => String(x).padStart(i === 0 ? 4 : 2, '0'));
  return `${p[0]}-${p[1]}-${p[2]} ${p[3]}:${p[4]}:${p[5]}`;
}

/**
 * The `Authorization` value of HTTP Basic authentication for a user and password, encoding
 * them as UTF-8 (RFC 7617) so that non-ASCII names work (plain `btoa` throws on them).
 */
export function basicAuthorization(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'Basic ' + btoa(bin);
}

/** The message of an h5store error body (`{"status", "message"}`), or the text itself. */
export function errorMessageOf(body: string): string {
  try {
    const j = JSON.parse(body) as { message?: unknown };
    if (j && typeof j.message === 'string') return j.message;
  } catch {
    /* not JSON */
  }
  return body.trim().slice(0, 500);
}
