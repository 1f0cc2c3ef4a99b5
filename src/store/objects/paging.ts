/**
 * `Limit` / `Marker` paging, the one implementation behind every listing (links, attributes,
 * collections of ids, folders, S3 folders). wire-reference 0.9: `Limit` caps the items of a page
 * (absent, 0 or negative: no cap); `Marker` names the last item of the previous page, with or
 * without surrounding double quotes (h5pyd quotes link names). Two kinds of marker:
 * - exact (links, attributes): the marker must be an item of the list, the page starts after it,
 *   and an unknown marker is a 404 (HSDS answers so);
 * - ordered (ids, folder entries): the page starts at the first item ordered after the marker,
 *   which need not exist any more (an id or a file deleted between two pages).
 */
import { notFound } from '../../errors.js';

/** A marker without the double quotes a client may have put around it. */
export function unquoteMarker(marker: string): string {
  return marker.replace(/^"(.*)"$/s, '$1');
}

/** The cap a `Limit` means: Infinity when absent, 0 or negative. */
export function pageLimit(limit: number | undefined): number {
  return limit && limit > 0 ? limit : Infinity;
}

/**
 * Where a page starts after an exact marker (see the module comment).
 * @param indexOf the index of an item by its name, or undefined/-1 when it is not in the list
 * @param what how the 404 names the list's items, e.g. "a link of this group"
 * @returns 0 without a marker, else the index after the marker's item
 * @throws H5StoreError NotFound when neither the marker nor its unquoted form is an item
 */
export function startAfterExact(marker: string | undefined, indexOf: (name: string) => number | undefined, what: string): number {
  if (marker === undefined || marker === '') return 0;
  let i = indexOf(marker);
  if ((i === undefined || i < 0) && /^".*"$/s.test(marker)) i = indexOf(marker.slice(1, -1));
  if (i === undefined || i < 0) throw notFound(`Marker ${JSON.stringify(marker)} is not ${what}`);
  return i + 1;
}

/**
 * Where a page starts after an ordered marker: the first item whose key sorts after it.
 * @param keys the items' keys, sorted ascending by `before`
 * @param before strict order of keys (default: JavaScript string order)
 * @returns 0 without a marker; keys.length when every key sorts before or at it
 */
export function startAfterOrdered(keys: readonly string[], marker: string | undefined, before: (a: string, b: string) => boolean = (a, b) => a < b): number {
  if (!marker) return 0;
  const m = unquoteMarker(marker);
  const i = keys.findIndex((k) => before(m, k));
  return i < 0 ? keys.length : i;
}

/**
 * One page: from `start`, the items `keep` accepts, at most `limit` of them, mapped by `map`.
 * @param items the whole list in its listing order
 */
export function takePage<T, R>(items: readonly T[], start: number, limit: number, map: (item: T, index: number) => R, keep?: (item: T) => boolean): R[] {
  const out: R[] = [];
  for (let i = start; i < items.length && out.length < limit; i++) {
    if (keep && !keep(items[i])) continue;
    out.push(map(items[i], i));
  }
  return out;
}
