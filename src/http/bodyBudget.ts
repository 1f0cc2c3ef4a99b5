/**
 * How many request-body bytes the process holds at once (issue #24 item 10: 8 PUTs of 256 MiB
 * took the RSS to 2.2 GiB; four 98 MiB JSON bodies to 1.5 GiB).
 *
 * - Memory (`bodyMemoryBytes`): bodies read into memory reserve their bytes here from the moment
 *   they are read until their response is finished. JSON bodies reserve twice their size (the
 *   text and the parsed value). A binary value body that does not fit is spooled to a temporary
 *   file instead (as bodies above `spoolBodyBytes` always are); any other body that does not fit
 *   is refused with 503 and `Retry-After` before it is read.
 * - Spool files (`spoolBodyLimitBytes`): bytes of spooled bodies on disk at once; beyond, 503.
 *
 * One budget per process (each worker of `serve --workers N` has its own). `setBodyBudget` sets
 * the sizes (createApp does, from the configuration).
 */
import type { Context } from 'koa';
import { H5StoreError } from '../errors.js';

/** Bytes reserved for bodies in memory and in spool files. */
export class BodyBudget {
  /** Bytes of bodies in memory now. */
  memory = 0;
  /** Bytes of spool files now. */
  spool = 0;
  /** Most memory reserved at once since start (bench). */
  peakMemory = 0;

  constructor(
    /** Most bytes of bodies in memory at once. */
    public memoryLimit: number,
    /** Most bytes of spooled bodies on disk at once. */
    public spoolLimit: number,
  ) {}

  /** Reserve `n` bytes of memory if they fit. @returns whether they were reserved. */
  tryMemory(n: number): boolean {
    if (n > 0 && this.memory + n > this.memoryLimit) return false;
    this.memory += n;
    if (this.memory > this.peakMemory) this.peakMemory = this.memory;
    return true;
  }

  /** Give back memory reserved with `tryMemory`. */
  releaseMemory(n: number): void {
    this.memory = Math.max(0, this.memory - n);
  }

  /** Reserve `n` bytes of spool space if they fit. @returns whether they were reserved. */
  trySpool(n: number): boolean {
    if (n > 0 && this.spool + n > this.spoolLimit) return false;
    this.spool += n;
    return true;
  }

  /** Give back spool space reserved with `trySpool`. */
  releaseSpool(n: number): void {
    this.spool = Math.max(0, this.spool - n);
  }
}

/** The process's budget (sizes set by `setBodyBudget`). */
export const bodyBudget = new BodyBudget(512 * 1024 * 1024, 64 * 1024 * 1024 * 1024);

/** Set the budget's sizes (bytes). */
export function setBodyBudget(memoryBytes: number, spoolBytes: number): void {
  bodyBudget.memoryLimit = memoryBytes;
  bodyBudget.spoolLimit = spoolBytes;
}

/** 503 for a body the budget has no room for. */
export function noRoom(what: string, bytes: number, limit: number, setting: string): H5StoreError {
  return new H5StoreError('Unavailable', `The server holds too many request bodies at once: no room for ${what} of ${bytes} bytes (at most ${limit} bytes at once, ${setting}); try again shortly`, { retryAfter: 2 });
}

/**
 * Reserve `n` bytes of memory for the request's body until its response is finished (or the
 * connection closes).
 * @throws H5StoreError Unavailable (503, `Retry-After`) when they do not fit.
 */
export function reserveMemoryFor(ctx: Context, n: number, what: string): void {
  if (!bodyBudget.tryMemory(n)) throw noRoom(what, n, bodyBudget.memoryLimit, 'bodyMemoryBytes');
  releaseWithResponse(ctx, () => bodyBudget.releaseMemory(n));
}

/** Run `release` once, when the response of `ctx` is finished or its connection closes. */
export function releaseWithResponse(ctx: Context, release: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    release();
  };
  ctx.res.once('close', once);
  ctx.res.once('finish', once);
}
