/**
 * Sending a value read (store/values/source.ts `ValueSource`) as an HTTP answer: the REST API's
 * `GET`/`POST .../value` (routes/datasets.ts) and h5grove's `/data/` (routes/grove.ts). The store
 * reads and formats; this frames (head, tail), encodes further when asked (h5grove's npy with
 * `dtype=safe`, CSV), and writes at the pace the socket and `maxStreamBytesPerSec` allow.
 * Buffers the source gives go back to it (`recycle`) once written or no longer needed; the
 * source is closed once done with, also when the client goes away.
 */
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { ValueSource } from '../store/values.js';
import { requestsInFlight } from './inflight.js';

/** How a value read is sent. */
export interface ValueAnswer {
  /** Content-Type. */
  type: string;
  /** Content-Disposition (h5grove's downloads). */
  disposition?: string;
  /**
   * Bytes of the whole answer when known before reading (a streamed answer's Content-Length).
   * Default: the source's `length` when there is no head, tail or encoding, else unknown.
   */
  length?: number;
  /** Written before the value's buffers. */
  head?: Buffer[];
  /** Written after the last of them (called once, after the source's last buffer). */
  tail?: () => Buffer[];
  /**
   * What to send for each buffer the source gives (in order); a buffer of the source not among
   * what is returned goes back to it at once. Default: the buffer itself.
   * @throws H5StoreError when the value cannot be encoded (a 4xx before the status line for a
   *   value read whole, an aborted stream otherwise)
   */
  encode?: (b: Buffer) => Buffer[] | Promise<Buffer[]>;
}

/**
 * Send a value read as `answer` says. A value the store read whole (`source.whole`) is gathered
 * before the status line (a value that cannot be shown is still a 4xx/501) and sent with a
 * Content-Length (one buffer as the body, several as a stream of them: no copy), its buffers
 * recycled once the response is written or the connection is gone; a larger one is streamed
 * (`streamSource`), the status line first. The source is closed once done with.
 * @param maxRate most bytes/s of a streamed answer while other requests are served (0: unpaced)
 * @throws H5StoreError any error of the read or of the encoding of a value read whole
 */
export async function sendValueSource(ctx: Context, source: ValueSource, answer: ValueAnswer, maxRate: number): Promise<void> {
  let streaming = false;
  const parts: Buffer[] = [];
  let sent = false;
  try {
    if (answer.disposition) ctx.set('Content-Disposition', answer.disposition);
    if (!source.whole) {
      ctx.respond = false;
      const headers: Record<string, string | number> = { 'Content-Type': answer.type };
      const length = answer.length ?? (answer.head || answer.tail || answer.encode ? undefined : source.length);
      if (length !== undefined) headers['Content-Length'] = length;
      ctx.res.writeHead(200, headers);
      for (const h of answer.head ?? []) ctx.res.write(h);
      streaming = true;
      void streamSource(ctx, source, answer, maxRate);
      return;
    }
    if (answer.head) parts.push(...answer.head);
    for (let r = await source.next(); !r.done; r = await source.next()) {
      for (const b of await encoded(source, r.value, answer.encode)) parts.push(b);
      if (ctx.req.socket.destroyed) return; // the client went away: nothing to send
    }
    if (answer.tail) parts.push(...answer.tail());
    ctx.status = 200;
    ctx.type = answer.type;
    if (parts.length === 1) ctx.body = parts[0];
    else {
      let length = 0;
      for (const c of parts) length += c.length;
      ctx.body = Readable.from(parts);
      ctx.length = length;
    }
    sent = true;
    let given = false;
    const giveBack = () => {
      if (given) return;
      given = true;
      for (const b of parts) source.recycle(b);
    };
    ctx.res.once('finish', giveBack);
    ctx.res.once('close', giveBack);
  } finally {
    if (!streaming) {
      if (!sent) for (const b of parts) source.recycle(b);
      await source.close();
    }
  }
}

/** What is sent for one page's buffers (`ValueAnswer.encode`); the source's buffers not sent go back to it. */
async function encoded(source: ValueSource, bufs: Buffer[], encode: ValueAnswer['encode']): Promise<Buffer[]> {
  if (!encode) return bufs;
  const out: Buffer[] = [];
  let i = 0;
  try {
    for (; i < bufs.length; i++) {
      const b = bufs[i]!;
      const made = await encode(b);
      if (!made.includes(b)) source.recycle(b);
      for (const m of made) out.push(m);
    }
  } catch (e) {
    for (; i < bufs.length; i++) source.recycle(bufs[i]!);
    for (const m of out) source.recycle(m);
    throw e;
  }
  return out;
}

/**
 * Write a value's buffers to the response as the socket takes them: the next page is read
 * (`source.next`) as soon as the previous one is written, while the kernel still sends the
 * bytes it took (the socket buffers hold megabytes on loopback), then the socket is waited for;
 * written buffers are recycled, the event loop runs between pages, and the pace is kept at most
 * `maxRate` bytes/s (0: unpaced). Mid-stream failures can only abort the connection (the status
 * line is gone). `answer.tail` is written after the last; the source is closed at the end.
 */
async function streamSource(ctx: Context, source: ValueSource, answer: ValueAnswer, maxRate: number): Promise<void> {
  const res = ctx.res;
  let pacedFrom = performance.now();
  let pacedSent = 0;
  let sent = 0;
  let closed = false;
  res.once('close', () => (closed = true));
  // the next page's buffers, read while the kernel sends those of the previous one
  let next: IteratorResult<Buffer[], undefined> | undefined;
  try {
    for (;;) {
      if (closed) break;
      const r = await (next ?? source.next());
      next = undefined;
      if (r.done) break;
      if (closed) {
        next = r; // recycled below
        break;
      }
      const bufs = await encoded(source, r.value, answer.encode);
      if (closed) {
        for (const b of bufs) source.recycle(b);
        break;
      }
      const ok = writeAll(res, bufs, source);
      for (const b of bufs) sent += b.length;
      if (closed) break;
      next = await source.next();
      // `drain` may have come while the next page was read (file pages are read on the thread pool)
      if (!ok && res.writableNeedDrain) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
      // Paced only while other requests are being served (alone, at the speed of the link).
      const now = performance.now();
      if (requestsInFlight() <= 1) {
        pacedFrom = now;
        pacedSent = sent;
      }
      const ahead = maxRate > 0 ? ((sent - pacedSent) / maxRate) * 1000 - (now - pacedFrom) : 0;
      // Always give the event loop a turn: a write the kernel took at once reports `drain` from
      // process.nextTick, so awaiting it alone would run the whole stream in one macrotask and
      // leave every other request (and timer) waiting until its end.
      if (ahead >= 1) await new Promise<void>((resolve) => setTimeout(resolve, ahead));
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (!closed) {
      if (answer.tail) writeAll(res, answer.tail(), source);
      res.end();
    }
  } catch (e) {
    streamFailed(ctx, e);
    res.destroy(e as Error);
  } finally {
    if (next && !next.done) for (const b of next.value) source.recycle(b); // the client went away
    try {
      await source.close(); // a file read in flight ends first (it holds the read lease's file)
    } catch (e) {
      streamFailed(ctx, e);
    }
  }
}

/** Write buffers to the response in one go (corked: one `writev`), each recycled once written; false when it should drain first. */
function writeAll(res: Context['res'], parts: Buffer[], source: ValueSource): boolean {
  if (parts.length === 1) {
    const b = parts[0]!;
    return res.write(b, () => source.recycle(b));
  }
  let ok = true;
  res.cork();
  for (const b of parts) ok = res.write(b, () => source.recycle(b));
  res.uncork();
  return ok;
}

/** Log a failure that happened after the response started (it can only abort the stream). */
function streamFailed(ctx: Context, e: unknown): void {
  ctx.app.emit('error', e, ctx);
}
