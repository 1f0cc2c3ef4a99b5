/**
 * The in-process tier (test/store/): a `Store` (src/store/store.ts) on a temporary data directory,
 * driven by direct calls without a server or HTTP. For what the store decides on its own (what is
 * learnt from a file and when it is dropped, caches, ids across restarts): a "restart" is a new
 * `Store` on the same directory (milliseconds, where a server takes seconds), and "the server
 * closed the idle file" is `closeIdleFiles()` instead of a wait.
 */
import fs from 'node:fs';
import { forgetDomainKeys } from '../../src/store/objects/ids.js';
import { Store, type StoreOptions } from '../../src/store/store.js';
import { tempRoot } from './server.js';

/** A store over a temporary directory (removed by `close`). */
export interface TempStore {
  /** The store now (a new one after each `restart`). */
  store: Store;
  /** The data directory. */
  root: string;
  /**
   * Close the store and open a new one on the same directory, as a server restart does (the
   * domain keys this process met are forgotten too: src/store/objects/ids.ts `forgetDomainKeys`).
   */
  restart(): Store;
  /** Close every file the store holds open and idle, as the server does after `idleCloseMs`. */
  closeIdleFiles(): void;
  /** Close the store and remove the directory. */
  close(): void;
}

/**
 * A store with the server's defaults where they matter (one process, no fsync), files kept open
 * until `closeIdleFiles` (no timer closes them under a test), stats never cached (each call sees the
 * file as it is now). `opts` overrides any of it; `root` reuses a directory (not removed by `close`).
 */
export function tempStore(opts: Partial<StoreOptions> = {}): TempStore {
  const own = opts.root === undefined;
  const root = opts.root ?? tempRoot('h5store-store-');
  const make = () =>
    new Store({ root, idleCloseMs: 3_600_000, maxOpenFiles: 64, defaultOwner: 'admin', pageBytes: 1 << 20, maxPoints: 10_000, statCacheMs: 0, fsync: 'never', ...opts });
  const t: TempStore = {
    store: make(),
    root,
    restart() {
      t.store.close();
      forgetDomainKeys();
      t.store = make();
      return t.store;
    },
    closeIdleFiles() {
      t.store.files.closeIdle(performance.now() + 7_200_000);
    },
    close() {
      t.store.close();
      if (own) fs.rmSync(root, { recursive: true, force: true });
    },
  };
  return t;
}
