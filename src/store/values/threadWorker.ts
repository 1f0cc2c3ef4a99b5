/**
 * A value thread (threadPool.ts): decodes batches of stored chunks (decodeChunks.ts) and formats
 * parts of JSON values (`formatJsonPart`). Pure codec work on bytes the main thread hands over;
 * no libhdf5 here.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { ValueJsonWriter } from '../../codec/json.js';
import { type TypeJson, parseType } from '../../codec/types.js';
import { type ErrorCode, H5StoreError } from '../../errors.js';
import { type DecodeBatch, type DecodeDone, decodeBatch } from './decodeChunks.js';

/**
 * Format elements [start, start + count) of a value as JSON (the message): the text a
 * `ValueJsonWriter` of the whole value writes for them (`skipTo`), brackets and commas included.
 */
export interface JsonPart {
  kind: 'json';
  id: number;
  type: TypeJson;
  /** The whole value's shape (after `reduce_dim`). */
  shape: number[];
  ignoreNan: boolean;
  start: number;
  count: number;
  /** The part's wire bytes (transferred). */
  wire: ArrayBuffer;
}

/** One piece of text: bytes [offset, offset + length) of `buffer` (transferred). */
export interface TextPiece {
  buffer: ArrayBuffer;
  offset: number;
  length: number;
}

/** The answer to a `JsonPart`: its text as pieces, or the error the writer threw. */
export interface JsonPartDone {
  id: number;
  pieces?: TextPiece[];
  error?: { code: ErrorCode; message: string };
}

/** Pieces smaller than this are copied into buffers of their own (never transfer Node's shared small-buffer pool). */
const COPY_BELOW = 8192;

/** Format one part (see `JsonPart`). @returns the answer and the buffers to transfer with it */
export function formatJsonPart(job: JsonPart): { done: JsonPartDone; transfer: ArrayBuffer[] } {
  try {
    const w = new ValueJsonWriter(job.type, job.shape, { ignoreNan: job.ignoreNan });
    w.skipTo(job.start);
    const chunks = w.writeChunks(Buffer.from(job.wire), job.count);
    const transfer = new Set<ArrayBuffer>();
    const pieces = chunks.map((c): TextPiece => {
      if (c.length < COPY_BELOW) {
        const own = new ArrayBuffer(c.length);
        new Uint8Array(own).set(c);
        transfer.add(own);
        return { buffer: own, offset: 0, length: c.length };
      }
      transfer.add(c.buffer as ArrayBuffer);
      return { buffer: c.buffer as ArrayBuffer, offset: c.byteOffset, length: c.length };
    });
    return { done: { id: job.id, pieces }, transfer: [...transfer] };
  } catch (e) {
    const err = e instanceof H5StoreError ? { code: e.code, message: e.message } : { code: 'Internal' as const, message: `Formatting JSON failed: ${(e as Error).message}` };
    return { done: { id: job.id, error: err }, transfer: [] };
  }
}

/**
 * Run the number formatters once on made-up values when the thread starts, so the first large
 * JSON value is not formatted by code V8 has not compiled yet (measured: the first 1 Mi float32
 * JSON read of a server 255 ms, the following ones 50-70 ms).
 */
function warmUp(): void {
  const n = 1 << 16;
  const f32 = new Float32Array(n);
  for (let i = 0; i < n; i++) f32[i] = Math.sin(i) * 10 ** ((i % 15) - 7);
  const f64 = Float64Array.from(f32, (x, i) => x * (1 + i / n));
  const i32 = Int32Array.from(f32, (x) => x * 1000);
  for (const [base, arr] of [
    ['H5T_IEEE_F32LE', f32],
    ['H5T_IEEE_F64LE', f64],
    ['H5T_STD_I32LE', i32],
  ] as const) {
    const w = new ValueJsonWriter(parseType(base), [n / 256, 256]);
    w.writeChunks(Buffer.from(arr.buffer), n);
    w.endChunks();
  }
}

/**
 * Nice value of the value threads: below the main thread, which answers every request. On Linux
 * the nice value belongs to each thread (setpriority(2), "BUGS": `os.setPriority(0, ...)` from a
 * thread sets that thread's), so a large JSON value or chunk read using both cores no longer
 * delays small requests: the scheduler gives the main thread the core it needs at once.
 */
const THREAD_NICE = 10;

if (parentPort) {
  try {
    if (process.platform === 'linux') os.setPriority(0, Math.max(os.getPriority(0), THREAD_NICE));
  } catch {
    /* not allowed here: the threads run at the process's priority */
  }
  try {
    warmUp();
  } catch {
    /* only a warm-up */
  }
  parentPort.postMessage({ kind: 'ready' }); // threadPool.ts: jobs now start at once
}

parentPort?.on('message', (m: DecodeBatch | JsonPart) => {
  if (m.kind === 'json') {
    const { done, transfer } = formatJsonPart(m);
    parentPort!.postMessage(done, transfer);
    return;
  }
  let done: DecodeDone;
  try {
    done = decodeBatch(m);
  } catch (e) {
    done = { id: m.id, error: `Decoding chunks failed: ${(e as Error).message}` };
  }
  parentPort!.postMessage(done);
});
