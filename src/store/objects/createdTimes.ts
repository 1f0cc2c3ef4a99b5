/**
 * `created` times clients give links and attributes in bulk PUTs (issue #25 item 6): h5pyd 1.0
 * keeps new links and attributes in memory, stamped with its own clock, and sends them at
 * `flush()` in dict order. HDF5 records no time per link or attribute, only the creation order;
 * so the items of one owner are created in the order of their `created` times (the order the
 * client made them), and listings with `CreateOrder=1` follow it.
 *
 * A time is accepted as given up to `CREATED_SKEW_S` seconds ahead of the server's clock (as
 * HSDS accepts client times within a few seconds); one further ahead (a client clock running
 * fast) counts as the server's time instead, so it cannot sort before items made later.
 */
import { badRequest } from '../../errors.js';

/** Seconds a client's `created` may be ahead of the server's clock and still count as given. */
export const CREATED_SKEW_S = 10;

/**
 * The `created` of one item of a bulk PUT: undefined when absent or null; a finite number of
 * seconds since the epoch, capped at the server's clock when more than CREATED_SKEW_S ahead.
 * @param now the server's clock (seconds)
 * @throws H5StoreError BadRequest for anything but a finite non-negative number
 */
export function givenCreated(v: unknown, what: string, now = Date.now() / 1000): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw badRequest(`"created" of ${what} must be a time in seconds since 1970`);
  return v > now + CREATED_SKEW_S ? now : v;
}

/**
 * `items` in the order of their `created` times (a stable sort: items without one keep their
 * place after every item with one that precedes them in the request, ties keep request order).
 */
export function inCreatedOrder<T>(items: readonly T[], createdOf: (item: T) => number | undefined): T[] {
  const keyed = items.map((item, i) => ({ item, i, t: createdOf(item) }));
  if (keyed.every((k) => k.t === undefined)) return items.slice();
  // an item without a time sorts as if made right after the item before it in the request
  let last = -Infinity;
  for (const k of keyed) {
    if (k.t === undefined) k.t = last;
    else last = k.t;
  }
  keyed.sort((a, b) => a.t! - b.t! || a.i - b.i);
  return keyed.map((k) => k.item);
}

/**
 * The entries of a `{name: body}` map of a bulk PUT (attributes, links) in the order of their
 * bodies' `created` times (`inCreatedOrder`).
 * @throws H5StoreError BadRequest for a `created` that is not a time (`givenCreated`)
 */
export function entriesInCreatedOrder(items: Record<string, unknown>, what: string): [string, unknown][] {
  const now = Date.now() / 1000;
  const keyed = Object.entries(items).map(([n, b]) => ({ n, b, t: givenCreated(b && typeof b === 'object' ? (b as { created?: unknown }).created : undefined, `${what} ${JSON.stringify(n)}`, now) }));
  return inCreatedOrder(keyed, (k) => k.t).map((k) => [k.n, k.b]);
}
