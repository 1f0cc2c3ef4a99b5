/**
 * Growth of the process's memory over repeated calls, for leak tests (test/store/vlen-memory).
 */
import { setImmediate as turn } from 'node:timers/promises';
import { LIBC } from '../../src/hdf5/lib.js';

// glibc's malloc_trim (Debian, where CI runs): free memory handed back to the system
const mallocTrim = (() => {
  try {
    return LIBC.func('int malloc_trim(size_t pad)') as (pad: number) => number;
  } catch {
    return undefined;
  }
})();

/**
 * RSS growth in MiB over `times` calls of `once`, after `warm` calls (the allocator's and V8's
 * steady state). Before measuring, the event loop turns (what earlier calls left for it is
 * freed), V8 collects (with `--expose-gc`) and glibc gives its free memory back to the system
 * (`malloc_trim`), so memory freed by an earlier test is not reused unseen. The calls themselves
 * run with no turn of the event loop between them, as the elements of one large read do: memory
 * that only a turn frees counts as grown.
 */
export async function rssGrowthMiB(once: () => Promise<unknown>, times = 1000, warm = 50): Promise<number> {
  for (let i = 0; i < warm; i++) await once();
  await turn();
  global.gc?.();
  mallocTrim?.(0);
  const before = process.memoryUsage().rss;
  for (let i = 0; i < times; i++) await once();
  global.gc?.();
  return (process.memoryUsage().rss - before) / 2 ** 20;
}
