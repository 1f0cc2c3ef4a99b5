/**
 * A read of dataset values as the store hands it to HTTP (issue #27): an async iterator of
 * buffers, the value's wire bytes (wire-reference 3.5) or the JSON text of its elements, with
 * `close()`. The read's locks, its pooled page buffers and libhdf5's turns (src/hdf5/heavy.ts)
 * stay inside: the caller only frames what it is given (headers, `{"value": ... }`, status).
 */
import { ValueJsonWriter } from '../../codec/json.js';
import type { TypeJson } from '../../codec/types.js';
import { H5StoreError, internal, tooLarge } from '../../errors.js';
import { hdf5Turn } from '../../hdf5/heavy.js';
import type { FileLog } from '../files.js';
import type { PagePool } from '../pagepool.js';
import { type PageSource, type PageUse, type ReadPlan, type ValuePage, pagesFor, pagesOf } from './read.js';
import { valueJsonOnThreads } from './threadPool.js';

/**
 * How a value is given: its wire bytes, or the JSON text of its elements (HDF REST `value`: NaN
 * and Infinity as literals, or null with `ignoreNan`; `reduceDim` drops dimensions of extent 1;
 * `maxBytes`: the most bytes of data a JSON value may hold, 413 above).
 */
export type ValueFormat = { kind: 'binary' } | { kind: 'json'; ignoreNan?: boolean; reduceDim?: boolean; maxBytes?: number };

/**
 * Binary values up to this many bytes (at most `pageBytes`) are read whole before they are
 * given; larger ones stream in pages of about this size, so the first bytes leave after one
 * small read and the next page is read while the kernel sends the previous one.
 */
export const STREAM_PAGE_BYTES = 1024 * 1024;

/**
 * JSON values of fixed-size types above this many bytes of data are formatted on the value
 * threads (threadPool.ts): formatting a 4 MiB page of float32 takes ~70-110 ms of CPU, which on
 * the main thread held every other request that long (and on one core only).
 */
const JSON_THREAD_BYTES = 256 * 1024;

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A value read: its pages in C order of the result, as buffers (`next`, or `for await`), the
 * wire bytes of each page or the JSON text of its elements followed by the closing brackets.
 * The file stays read-locked until the last page is read or the source is closed. Buffers the
 * caller has written may go back to the page pool: `recycle` each (buffers never recycled are
 * left to the garbage collector). Call `close()` once done, also after a failure; it is
 * idempotent.
 */
export class ValueSource implements AsyncIterableIterator<Buffer[]> {
  /** Element type of the value. */
  readonly type: TypeJson;
  /** Shape of the value (JSON with `reduceDim`: without dimensions of extent 1); [] for a scalar. */
  readonly shape: number[];
  /** Elements of the value. */
  readonly count: number;
  /** Bytes this source yields in all, when known before reading (binary values of fixed-size types). */
  readonly length: number | undefined;
  /**
   * True when the value was read whole, and the file let go, before the source was handed out
   * (binary values up to STREAM_PAGE_BYTES, JSON values up to `pageBytes`): what `next` yields
   * is only formatted, so the caller may gather all of it before its status line (a value that
   * cannot be shown as JSON is still an error status) and send it with a Content-Length.
   */
  readonly whole: boolean;
  /** The page source that read it (read.ts `pagesFor`). */
  readonly readBy: PageSource['name'];
  private readonly json: JsonValueText | undefined;
  /** The pooled buffers of binary pages given out and not recycled yet, by the bytes given. */
  private readonly pooledOf = new Map<Buffer, Buffer>();
  private state: 'pages' | 'done' = 'pages';
  private closed = false;

  /** @param release lets the file go (called once; undefined when it was let go already) */
  constructor(
    plan: ReadPlan,
    /** What the buffers are: wire bytes, or JSON text. */
    readonly format: ValueFormat,
    whole: boolean,
    readBy: PageSource['name'],
    private readonly pages: PageSource,
    private readonly pool: PagePool,
    private release: (() => void) | undefined,
    log: FileLog | undefined,
  ) {
    this.type = plan.type;
    this.count = plan.count;
    this.whole = whole;
    this.readBy = readBy;
    if (format.kind === 'json') {
      this.shape = format.reduceDim ? plan.shape.filter((x) => x !== 1) : plan.shape;
      this.json = new JsonValueText(plan, this.shape, { ignoreNan: format.ignoreNan === true }, log);
      this.length = undefined;
    } else {
      this.shape = plan.shape;
      this.length = plan.itemSize === undefined ? undefined : plan.count * plan.itemSize;
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * The next buffers to write (one page's), done after the last.
   * @throws H5StoreError of the read (a stream can then only be aborted), or when a value cannot
   *   be shown as JSON
   */
  async next(): Promise<IteratorResult<Buffer[], undefined>> {
    if (this.state === 'done') return DONE;
    // a streamed page is read now, while libhdf5 is free; a whole value's are read already
    const page = await (this.whole ? this.pages.next() : hdf5Turn(() => this.pages.next()));
    if (page !== undefined) return { done: false, value: await this.bytesOf(page) };
    this.state = 'done';
    this.letGo();
    return this.json ? { done: false, value: this.json.end() } : DONE;
  }

  /** Stop early (the iterator protocol's `return`: `break` in `for await`). */
  async return(): Promise<IteratorReturnResult<undefined>> {
    await this.close();
    return DONE;
  }

  /** The caller has written `b` (a buffer `next` gave) and needs it no more: it may be reused. */
  recycle(b: Buffer): void {
    const pooled = this.pooledOf.get(b);
    if (pooled === undefined) return;
    this.pooledOf.delete(b);
    this.pool.give(pooled);
  }

  /**
   * End the read: a page read in flight ends first, and the file is let go (idempotent).
   * @throws what stopping the read in flight threw (the file is let go all the same)
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.state === 'done') return this.letGo();
    this.state = 'done';
    try {
      await this.pages.stop();
    } finally {
      this.letGo();
    }
  }

  private letGo(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  private async bytesOf(page: ValuePage): Promise<Buffer[]> {
    if (!this.json) {
      if (page.pooled) this.pooledOf.set(page.wire, page.pooled);
      return [page.wire];
    }
    try {
      return await this.json.part(page);
    } finally {
      if (page.pooled) this.pool.give(page.pooled); // its text is made
    }
  }
}

/**
 * Open the source of a planned read in `format` (see `ValueSource`): the page source chosen
 * (read.ts `pagesFor`; file bytes for streamed binary values), and a value of one page read
 * now and the file let go (`release`) before it is formatted. Call with libhdf5 free; on a
 * failure the caller releases the file.
 * @param release closes the plan and lets the file's locks go (idempotent)
 * @throws H5StoreError PayloadTooLarge when a JSON value holds more than `format.maxBytes` bytes
 *   of data; what the read throws
 */
export async function openValueSource(plan: ReadPlan, format: ValueFormat, pool: PagePool, release: () => void, log?: FileLog): Promise<ValueSource> {
  const binary = format.kind === 'binary';
  if (!binary && format.maxBytes !== undefined && plan.bytes > format.maxBytes) {
    throw tooLarge(
      `The JSON value would hold ${plan.bytes} bytes of data, above the limit of ${format.maxBytes}: ` +
        'ask for binary (Accept: application/octet-stream) or a smaller selection',
    );
  }
  const streamPage = Math.min(STREAM_PAGE_BYTES, plan.limits.pageBytes);
  const whole = plan.bytes <= (binary ? streamPage : plan.limits.pageBytes);
  // JSON values of one page are read into buffers of their own (their text is made at once)
  const use: PageUse = binary ? (whole ? { pool, pooled: true } : { pool, pooled: true, pageBytes: streamPage, fileBytes: true }) : { pool, pooled: !whole };
  const pages = await pagesFor(plan, use);
  if (!whole) return new ValueSource(plan, format, false, pages.name, pages, pool, release, log);
  const read = await hdf5Turn(() => readNow(pages));
  release();
  return new ValueSource(plan, format, true, pages.name, pagesOf(pages.name, read), pool, undefined, log);
}

/** Every page of a source that reads synchronously. */
function readNow(pages: PageSource): ValuePage[] {
  const out: ValuePage[] = [];
  for (let p = pages.next(); p !== undefined; p = pages.next()) {
    if (p instanceof Promise) throw internal('A value read whole read asynchronously');
    out.push(p);
  }
  return out;
}

/**
 * The JSON text of a value's elements, page by page in element order (`part`), then the closing
 * brackets (`end`). Pages of values above JSON_THREAD_BYTES of a fixed-size type are formatted
 * on the value threads, a part per thread, each by a writer skipped to the page's first element
 * (`ValueJsonWriter.skipTo`: the brackets and commas depend only on the element's position);
 * other values by one writer on this thread. Should a value thread fail (not the value: the
 * writer's own errors are thrown as they are), that page is formatted here, in one go.
 */
class JsonValueText {
  /** The one writer of a value formatted on this thread; undefined for values on the value threads. */
  private readonly writer: ValueJsonWriter | undefined;
  /** Elements given to `part` so far. */
  private next = 0;
  private readonly type: TypeJson;
  private readonly itemSize: number | undefined;

  constructor(
    plan: ReadPlan,
    private readonly shape: number[],
    private readonly opts: { ignoreNan: boolean },
    private readonly log: FileLog | undefined,
  ) {
    this.type = plan.type;
    this.itemSize = plan.itemSize;
    const threaded = plan.itemSize !== undefined && plan.bytes > JSON_THREAD_BYTES;
    this.writer = threaded ? undefined : new ValueJsonWriter(plan.type, shape, opts);
  }

  /** A writer on this thread that continues after the value's first `start` elements. */
  private writerAt(start: number): ValueJsonWriter {
    const w = new ValueJsonWriter(this.type, this.shape, this.opts);
    w.skipTo(start);
    return w;
  }

  /**
   * The text of the next page's elements, as chunks the caller owns.
   * @throws H5StoreError when a value cannot be shown as JSON
   */
  async part(p: ValuePage): Promise<Buffer[]> {
    if (this.writer) return this.writer.writeChunks(p.wire, p.count);
    const start = this.next;
    this.next += p.count;
    try {
      return await valueJsonOnThreads(this.type, this.shape, this.opts, p.wire, start, p.count, this.itemSize!);
    } catch (e) {
      if (e instanceof H5StoreError) throw e;
      this.log?.warn({ err: (e as Error).message }, 'a value thread failed formatting JSON; formatting on the main thread');
      return this.writerAt(start).writeChunks(p.wire, p.count);
    }
  }

  /** The closing text, after all elements. @throws internal when elements are missing */
  end(): Buffer[] {
    return (this.writer ?? this.writerAt(this.next)).endChunks();
  }
}
