/**
 * What the suite spends its time on, counted where it is spent: server starts, Python (h5py)
 * runs, h5dump runs. The timing reporter (test/helpers/timing-reporter.cjs) reads the totals per
 * test file from `globalThis.__h5storeTestCosts`.
 */

/** Count and milliseconds of one kind of work. */
export interface Cost {
  n: number;
  ms: number;
}

const costs: Record<string, Cost> = ((globalThis as any).__h5storeTestCosts ??= {});

/** Add `ms` of work of `kind` (one occurrence). */
export function addCost(kind: 'server start' | 'python' | 'h5dump', ms: number): void {
  const c = (costs[kind] ??= { n: 0, ms: 0 });
  c.n++;
  c.ms += ms;
}

/** Run `f`, counting its time as `kind`. */
export function timed<T>(kind: 'server start' | 'python' | 'h5dump', f: () => T): T {
  const t0 = performance.now();
  try {
    return f();
  } finally {
    addCost(kind, performance.now() - t0);
  }
}

/** A copy of the counts so far (for differences over a span). */
export function costsNow(): Record<string, Cost> {
  return JSON.parse(JSON.stringify(costs)) as Record<string, Cost>;
}
