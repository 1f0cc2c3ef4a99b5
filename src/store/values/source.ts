/**
 * A read of dataset values as the store hands it to HTTP (issue #27): an async iterator of
 * buffers, the value's wire bytes (wire-reference 3.5) or the JSON text of its elements, with
 * `close()`. The read's locks, its pooled page buffers and libhdf5's turns (src/hdf5/heavy.ts)
 * stay inside: the caller only frames what it is given (headers, `{"value": ... }`, status), or
 * encodes it further (h5grove's npy, CSV, statistics: routes/grove.ts).
 */
import { ValueJsonWriter } from '../../codec/json.js';
import { type TypeJson, arrayElementView, lacksBinaryForm } from '../../codec/types.js';
import { H5StoreError, internal, tooLarge } from '../../errors.js';
import { hdf5Turn } from '../../hdf5/heavy.js';
import type { FileLog } from '../session/files.js';
import type { PagePool } from './pagepool.js';
import { type PageSource, type PageUse, type ReadPlan, type ValuePage, pagesFor, pagesOf } from './read.js';
import { valueJsonOnThreads } from './threadPool.js';

/**
 * How a value is given: its wire bytes, or the JSON text of its elements (HDF REST `value`: NaN
 * and Infinity as literals, or null with `ignoreNan`; `reduceDim` drops dimensions of extent 1;
 * `shape`: the shape the text has instead, of as many elements (h5grove's numpy shape of a
 * selection, or `flatten`); `maxBytes`: the most bytes of data a JSON value may hold, 413 above,
 * the answer saying `tooLargeHint` (default: ask for binary)). Binary values up to
 * `maxWholeBytes` (default STREAM_PAGE_BYTES, at most `pageBytes`) are read whole, larger ones
 * streamed. With `arrayElements`, elements of an array type (H5T_ARRAY) are given as elements
 * of its innermost base, the array's dims appended to the shape (h5py's view,
 * codec/types.ts `arrayElementView`): the same bytes, other `type`, `shape`, `count`.
 */
export type ValueFormat = (
  | {
      kind: 'binary';
      maxWholeBytes?: number;
      /**
       * The JSON to give instead when the type has no binary form in the REST API
       * (`lacksBinaryForm`: a vlen sequence of variable-length elements; the value routes, as
       * HSDS answers attribute values of vlen types); without it such a read is 406.
       */
      orJson?: JsonValueFormat;
    }
  | JsonValueFormat
) & { arrayElements?: boolean };

/** A value asked for as JSON (`ignore_nan`, `reduce_dim`, a shape of its own, a size limit). */
export type JsonValueFormat = { kind: 'json'; ignoreNan?: boolean; reduceDim?: boolean; shape?: number[]; maxBytes?: number; tooLargeHint?: string; arrayElements?: boolean };

/** What the store gives a value source besides the read (`openValueSource`). */
export interface ValueSourceOptions {
  /** Where a value thread's failure is told (formatting then goes on on the main thread). */
  log?: FileLog;
  /**
   * What an error of reading the pages becomes (the store: files.ts `liveFailure`, a 503 for a
   * file another program writes), on every read of the source: the one before it is handed out
   * and those of a streamed value's later pages. Default: the error itself.
   */
  mapError?: (e: unknown) => unknown;
}

/** What a source gives, the read seen as `format` asks (`arrayElements`, the JSON shape). */
export interface ValueView {
  type: TypeJson;
  shape: number[];
  count: number;
  itemSize: number | undefined;
  /** Elements of the view per element read (the cells of an array type; 1 without `arrayElements`). */
  cells: number;
}

/**
 * The view of a planned read in `format`.
 * @throws H5StoreError Internal when a JSON `shape` does not hold the value's elements
 */
function viewOf(plan: ReadPlan, format: ValueFormat): ValueView {
  const v = format.arrayElements ? arrayElementView(plan.type) : { elem: plan.type, dims: [], cells: 1 };
  const count = plan.count * v.cells;
  let shape = v.dims.length ? [...plan.shape, ...v.dims] : plan.shape;
  if (format.kind === 'json') {
    if (format.shape) {
      if (format.shape.reduce((a, b) => a * b, 1) !== count) throw internal(`A value of ${count} elements cannot be given in the shape ${JSON.stringify(format.shape)}`);
      shape = format.shape;
    } else if (format.reduceDim) shape = shape.filter((x) => x !== 1);
  }
  return { type: v.elem, shape, count, itemSize: plan.itemSize === undefined ? undefined : plan.itemSize / v.cells, cells: v.cells };
}

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
  /** Element type of the value (with `arrayElements`: the innermost base of an array type). */
  readonly type: TypeJson;
  /** Shape of the value (JSON: `format.shape`, or without dimensions of extent 1 with `reduceDim`); [] for a scalar. */
  readonly shape: number[];
  /** Elements of the value. */
  readonly count: number;
  /** Wire bytes of one element (of `type`), undefined for variable-length types: a binary buffer holds `length / itemSize` elements. */
  readonly itemSize: number | undefined;
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

  /** Elements of the view per element read (`ValueView.cells`). */
  private readonly cells: number;
  /** What reading a page threw becomes (`ValueSourceOptions.mapError`). */
  private readonly mapError: (e: unknown) => unknown;

  /**
   * @param view the value as the format sees it (`viewOf`)
   * @param bytes bytes of data of the value (`ReadPlan.bytes`: JSON values above
   *   JSON_THREAD_BYTES of fixed-size types are formatted on the value threads)
   * @param pool the pool the pages' buffers come from (undefined: none is pooled, `emptyValueSource`)
   * @param release lets the file go (called once; undefined when it was let go already)
   */
  constructor(
    view: ValueView,
    bytes: number,
    /** What the buffers are: wire bytes, or JSON text. */
    readonly format: ValueFormat,
    whole: boolean,
    readBy: PageSource['name'],
    private readonly pages: PageSource,
    private readonly pool: PagePool | undefined,
    private release: (() => void) | undefined,
    opts: ValueSourceOptions,
  ) {
    this.type = view.type;
    this.shape = view.shape;
    this.count = view.count;
    this.itemSize = view.itemSize;
    this.cells = view.cells;
    this.whole = whole;
    this.readBy = readBy;
    this.mapError = opts.mapError ?? ((e) => e);
    if (format.kind === 'json') {
      this.json = new JsonValueText(view, bytes, { ignoreNan: format.ignoreNan === true }, opts.log);
      this.length = undefined;
    } else {
      this.length = view.itemSize === undefined ? undefined : view.count * view.itemSize;
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
    let page: ValuePage | undefined;
    try {
      page = await (this.whole ? this.pages.next() : hdf5Turn(() => this.pages.next()));
    } catch (e) {
      throw this.mapError(e);
    }
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
    this.pool?.give(pooled);
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
      return await this.json.part(page.wire, page.count * this.cells);
    } finally {
      if (page.pooled) this.pool?.give(page.pooled); // its text is made
    }
  }
}

/**
 * Whether `openValueSource` reads the value of `plan` whole before it hands the source out
 * (binary values up to `format.maxWholeBytes`, default STREAM_PAGE_BYTES, and JSON values up to
 * `pageBytes`; both at most `pageBytes`), rather than streaming it in pages.
 */
export function readsWhole(plan: ReadPlan, format: ValueFormat): boolean {
  const pageBytes = plan.limits.pageBytes;
  if (format.kind !== 'binary') return plan.bytes <= pageBytes;
  return plan.bytes <= Math.min(format.maxWholeBytes ?? Math.min(STREAM_PAGE_BYTES, pageBytes), pageBytes);
}

/**
 * Open the source of a planned read in `format` (see `ValueSource`): the page source chosen
 * (read.ts `pagesFor`; file bytes for streamed binary values), and a value of one page read
 * now and the file let go (`release`) before it is formatted. Call with libhdf5 free; on a
 * failure the caller releases the file.
 * @param release closes the plan and lets the file's locks go (idempotent)
 * Binary asked of a type without a binary form (`lacksBinaryForm`) gives `format.orJson`.
 * @throws H5StoreError PayloadTooLarge when a JSON value holds more than `format.maxBytes` bytes
 *   of data; NotAcceptable (406) for binary of a type without a binary form and no `orJson`;
 *   what the read throws
 */
export async function openValueSource(plan: ReadPlan, asked: ValueFormat, pool: PagePool, release: () => void, opts: ValueSourceOptions = {}): Promise<ValueSource> {
  const format = formatFor(plan.type, asked);
  const binary = format.kind === 'binary';
  if (!binary && format.maxBytes !== undefined && plan.bytes > format.maxBytes) {
    throw tooLarge(
      `The JSON value would hold ${plan.bytes} bytes of data, above the limit of ${format.maxBytes}: ` +
        (format.tooLargeHint ?? 'ask for binary (Accept: application/octet-stream) or a smaller selection'),
    );
  }
  const view = viewOf(plan, format);
  const streamPage = Math.min(STREAM_PAGE_BYTES, plan.limits.pageBytes);
  const whole = readsWhole(plan, format);
  // JSON values of one page are read into buffers of their own (their text is made at once)
  const use: PageUse = binary ? (whole ? { pool, pooled: true } : { pool, pooled: true, pageBytes: streamPage, fileBytes: true }) : { pool, pooled: !whole };
  let pages: PageSource;
  let read: ValuePage[] | undefined;
  try {
    pages = await pagesFor(plan, use);
    if (whole) read = await hdf5Turn(() => readNow(pages));
  } catch (e) {
    throw opts.mapError ? opts.mapError(e) : e;
  }
  if (!read) return new ValueSource(view, plan.bytes, format, false, pages.name, pages, pool, release, opts);
  release();
  return new ValueSource(view, plan.bytes, format, true, pages.name, pagesOf(pages.name, read), pool, undefined, opts);
}

/**
 * The format a value of `type` is given in: `asked`, or its `orJson` for binary of a type
 * without a binary form (`lacksBinaryForm`).
 * @throws H5StoreError NotAcceptable (406) for binary of such a type without `orJson`
 */
function formatFor(type: TypeJson, asked: ValueFormat): ValueFormat {
  if (asked.kind !== 'binary' || !lacksBinaryForm(type)) return asked;
  if (!asked.orJson) throw new H5StoreError('NotAcceptable', 'The values have no binary form (a variable-length sequence of variable-length elements): ask for JSON');
  return { ...asked.orJson, arrayElements: asked.arrayElements };
}

/**
 * The source of a value with no elements (h5grove's empty slices, which a REST selection cannot
 * name): nothing to read and no file held; JSON gives the empty nested brackets of `shape`.
 * @param type the element type (of the view `format` asks: the caller applies `arrayElements`)
 * @param shape a shape with a 0 extent (or the JSON shape the format gives)
 */
export function emptyValueSource(type: TypeJson, shape: number[], format: ValueFormat): ValueSource {
  if (shape.reduce((a, b) => a * b, 1) !== 0) throw internal(`A value of shape ${JSON.stringify(shape)} is not empty`);
  const view: ValueView = { type, shape: format.kind === 'json' && format.shape ? format.shape : shape, count: 0, itemSize: undefined, cells: 1 };
  return new ValueSource(view, 0, format, true, 'none', pagesOf('none', []), undefined, undefined, {});
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
  private readonly shape: number[];
  private readonly itemSize: number | undefined;

  /** @param bytes bytes of data of the whole value */
  constructor(
    view: ValueView,
    bytes: number,
    private readonly opts: { ignoreNan: boolean },
    private readonly log: FileLog | undefined,
  ) {
    this.type = view.type;
    this.shape = view.shape;
    this.itemSize = view.itemSize;
    const threaded = view.itemSize !== undefined && bytes > JSON_THREAD_BYTES;
    this.writer = threaded ? undefined : new ValueJsonWriter(view.type, view.shape, opts);
  }

  /** A writer on this thread that continues after the value's first `start` elements. */
  private writerAt(start: number): ValueJsonWriter {
    const w = new ValueJsonWriter(this.type, this.shape, this.opts);
    w.skipTo(start);
    return w;
  }

  /**
   * The text of the next page's elements (`count` of them in `wire`), as chunks the caller owns.
   * @throws H5StoreError when a value cannot be shown as JSON
   */
  async part(wire: Buffer, count: number): Promise<Buffer[]> {
    if (this.writer) return this.writer.writeChunks(wire, count);
    const start = this.next;
    this.next += count;
    try {
      return await valueJsonOnThreads(this.type, this.shape, this.opts, wire, start, count, this.itemSize!);
    } catch (e) {
      if (e instanceof H5StoreError) throw e;
      this.log?.warn({ err: (e as Error).message }, 'a value thread failed formatting JSON; formatting on the main thread');
      return this.writerAt(start).writeChunks(wire, count);
    }
  }

  /** The closing text, after all elements. @throws internal when elements are missing */
  end(): Buffer[] {
    return (this.writer ?? this.writerAt(this.next)).endChunks();
  }
}
