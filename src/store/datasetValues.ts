/**
 * Dataset values behind locks (a part of the `Store` facade, store.ts): reads, queries and
 * writes of a dataset's values (values.ts), with the files its values live in (external raw
 * storage, virtual datasets' sources: access/reach.ts) checked for the requester and locked for
 * as long as the operation runs.
 */
import { H5StoreError } from '../errors.js';
import { hdf5Turn } from '../hdf5/heavy.js';
import { type Access, type AccessMode, allowAll } from './access/access.js';
import type { Limits } from './access/limits.js';
import type { ReachedFile } from './access/reach.js';
import type { AclViews } from './aclViews.js';
import type { DomainFiles } from './domainFiles.js';
import type { DomainFile } from './objects/domainFile.js';
import * as values from './values.js';
import type { PagePool } from './values/pagepool.js';

/** How long a value operation waits for the locks of the other domains it reaches (ms). */
const REACH_LOCK_WAIT_MS = 2000;

export class DatasetValues {
  constructor(
    private readonly core: DomainFiles,
    private readonly acls: AclViews,
    private readonly limits: Limits,
    private readonly pagePool: PagePool,
  ) {}

  /**
   * A read of dataset values in `format`, for `GET`/`POST .../value` and any route that sends
   * values: a `ValueSource` (values/source.ts), an async iterator of buffers (the wire bytes, or
   * the JSON text of the elements) with `close()`. The domain stays read-locked until the source
   * has given its last page or is closed (a value of one page is read at once and the file let
   * go). When the dataset's values live in other files (external raw storage, virtual dataset
   * sources), each must be inside the data root (403 otherwise, before libhdf5 touches it) and
   * readable by the user (`access`), and their domains stay read-locked as long as the file.
   * @throws H5StoreError before anything is sent: BadRequest (selection, fields, points),
   *   Forbidden, NotFound, PayloadTooLarge (limits, `format.maxBytes`), UnsupportedMediaType
   *   (a filter this server cannot decode), Unavailable (locks)
   */
  async readValues(domain: string, id: string, req: values.ReadRequest, format: values.ValueFormat, access: Access = allowAll): Promise<values.ValueSource> {
    const f = await this.core.fileFor(domain);
    // A file verified unchanged: a value read whole (no longer than a page) is read without the
    // file's cross-process locks and stands if the file is still unchanged afterwards
    // (files.ts `beginUnlocked`); a stream, or a read the file changed under, takes the locks.
    const unlocked = this.core.files.beginUnlocked(f);
    if (unlocked !== undefined) {
      let src: values.ValueSource | undefined;
      try {
        src = await this.openValues(f, id, req, format, access, unlocked, true);
      } catch (e) {
        if (unlocked()) throw e;
      }
      if (src && unlocked()) return src;
      await src?.close();
    }
    return (await this.openValues(f, id, req, format, access, await this.core.files.acquireRead(f), false))!;
  }

  /**
   * `readValues` once the file is held (`unlock` lets it go: called once, when the value is
   * read or the read fails). `wholeOnly`: a value that would be streamed is not opened (the
   * file let go, undefined returned) before anything is read.
   */
  private async openValues(f: DomainFile, id: string, req: values.ReadRequest, format: values.ValueFormat, access: Access, unlock: () => void, wholeOnly: boolean): Promise<values.ValueSource | undefined> {
    let leave: (() => Promise<void>) | undefined;
    let plan: values.ReadPlan | undefined;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      plan!.close();
      void leave!();
      unlock();
    };
    try {
      leave = await this.enterReached(f, id, 'read', access);
      plan = await hdf5Turn(() => values.planRead(f, id, req, this.limits));
      if (wholeOnly && !values.readsWhole(plan, format)) {
        release();
        return undefined;
      }
      // a file another program writes: libhdf5 failing on it while the pages are read is the
      // file changing under the read (503, Retry-After), not a fault of the server (issue #26)
      return await values.openValueSource(plan, format, this.pagePool, release, { log: this.core.opts.log, mapError: (e) => this.core.files.liveFailure(f, e) });
    } catch (e) {
      if (!released) {
        released = true;
        plan?.close();
        if (leave) await leave();
        unlock();
      }
      throw this.core.files.liveFailure(f, e);
    }
  }

  /** GET .../value?query=: matching rows (values in other files: as `readValues`). */
  async queryValues(domain: string, id: string, query: string, opts: values.QueryRequest, access: Access = allowAll) {
    const f = await this.core.fileFor(domain);
    const unlock = await this.core.files.acquireRead(f);
    try {
      const leave = await this.enterReached(f, id, 'read', access);
      try {
        return await hdf5Turn(() => values.queryRows(f, id, query, opts, this.limits, this.pagePool));
      } finally {
        await leave();
      }
    } catch (e) {
      throw this.core.files.liveFailure(f, e);
    } finally {
      unlock();
    }
  }

  /** PUT .../value?query=: update matching rows (values in other files need `write` access). */
  queryUpdate(domain: string, id: string, query: string, update: Record<string, unknown>, opts: { select?: string; limit?: number }, access: Access = allowAll) {
    return this.core.write(domain, async (f) => {
      const leave = await this.enterReached(f, id, 'write', access);
      try {
        return await hdf5Turn(() => values.queryUpdate(f, id, query, update, opts, this.limits, this.pagePool));
      } finally {
        await leave();
      }
    });
  }

  /** PUT .../value (values in other files need `write` access to each of their domains). */
  writeValues(domain: string, id: string, req: values.WriteRequest, access: Access = allowAll) {
    return this.core.write(domain, async (f) => {
      const leave = await this.enterReached(f, id, 'write', access);
      try {
        return await hdf5Turn(() => values.writeValues(f, id, req, this.limits, this.pagePool));
      } finally {
        await leave();
      }
    });
  }

  /**
   * Before a value operation on dataset `id` of `f` (whose own lock is held): work out the files
   * inside the root it reaches (reach.ts; 403 when one leads outside), check the user may `mode`
   * what it reaches in each (`mayReach`), and lock those domains in this process (read locks for
   * reads; write locks, the cross-process lock and no read-only handle of ours for writes, as
   * libhdf5 opens them read-write), waiting at most REACH_LOCK_WAIT_MS (503 after). The reach is
   * worked out again once the locks are held and must not have grown.
   * @returns the function that releases the locks (flushing our handles of written domains).
   */
  private async enterReached(f: DomainFile, id: string, mode: AccessMode, access: Access): Promise<() => Promise<void>> {
    const reached = values.reachFor(f, id);
    if (reached.length === 0) return async () => undefined;
    await this.acls.mayReach(f, reached, mode, access);
    const first = reachedDomains(f, reached);
    if (first.length === 0) return async () => undefined;
    const held: { entry: DomainFile; release: () => Promise<void> }[] = [];
    const leave = async () => {
      for (const h of held.reverse()) await h.release();
      held.length = 0;
    };
    // libhdf5 opens the sources with the intent of the handle it reads through: a read through a
    // read-write handle (kept after a write) opens them read-write, so lock them as for a write.
    const handling: AccessMode = mode === 'read' && f.writable ? 'write' : mode;
    try {
      for (const d of first) {
        let entry: DomainFile;
        try {
          entry = this.core.files.entry(d.domain, this.core.paths.resolve(d.domain));
        } catch (e) {
          if (!d.exists && e instanceof H5StoreError && e.code === 'NotFound') continue; // a missing VDS source
          throw e;
        }
        held.push({ entry, release: await this.lockReached(entry, d, handling) });
      }
      const again = await hdf5Turn(() => reachedDomains(f, values.reachFor(f, id)));
      const locked = new Set(first.map((d) => d.domain));
      if (again.some((d) => !locked.has(d.domain))) {
        throw new H5StoreError('Unavailable', 'The files this dataset reaches changed meanwhile; try again', { retryAfter: 1 });
      }
      return leave;
    } catch (e) {
      await leave();
      throw e;
    }
  }

  /** Lock one reached domain (see `enterReached`); returns its release. */
  private async lockReached(entry: DomainFile, d: ReachedFile, mode: AccessMode): Promise<() => Promise<void>> {
    const lock = entry.lock;
    const t0 = performance.now();
    const busy = () =>
      new H5StoreError('Unavailable', `Domain ${d.domain}, which this dataset's values live in, is busy; try again`, { retryAfter: 1 });
    while (!(mode === 'read' ? lock.tryRead() : lock.tryWrite())) {
      if (performance.now() - t0 > REACH_LOCK_WAIT_MS) throw busy();
      await new Promise((r) => setTimeout(r, 5));
    }
    if (mode === 'read') return async () => lock.releaseRead();
    let release: (() => void) | undefined;
    try {
      // The cross-process lock, our read-only handle closed (libhdf5 opens the file read-write
      // itself, through the journaling driver of the dataset's file), and the driver told it
      // may write this file in place (vfd.ts allowDirectWrites).
      release = await this.core.files.holdForDirectWrite(entry, Math.max(0, REACH_LOCK_WAIT_MS - (performance.now() - t0)));
    } catch (e) {
      lock.releaseWrite();
      throw e;
    }
    return async () => {
      try {
        release?.();
      } finally {
        lock.releaseWrite();
      }
    };
  }
}

/**
 * The other domains among the files a dataset reaches, sorted (locks are taken in this order),
 * without its own domain and without files that do not exist and cannot be created.
 */
function reachedDomains(own: DomainFile, files: ReachedFile[]): ReachedFile[] {
  const by = new Map<string, ReachedFile>();
  for (const r of files) if (r.domain && r.domain !== own.domain && r.real !== own.path && !by.has(r.domain)) by.set(r.domain, r);
  return [...by.values()].sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
}
