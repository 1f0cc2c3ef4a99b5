/**
 * The last requests of a process, kept where they outlive it (issue #24 item 14): a ring of the
 * last `SLOTS` requests (method, URL, when it began, when it ended or not yet) in a small file
 * mapped into memory (hdf5/posix.ts `mapSharedFile`), so recording costs a few memory writes and
 * no system call, and what was written is in the file even after a native crash (SIGSEGV).
 *
 * - Under `serve --workers N` each worker's ring is `w<index>.requests` in the runtime directory:
 *   when a worker dies, the primary reads it (`readFlightRecord`, no libhdf5, no koffi) and logs
 *   the requests that were in flight and the last ones before them.
 * - The watchdog thread (watchdog.ts) reads it from the file descriptor when the main thread
 *   stops answering, to say which requests it was serving.
 *
 * Layout, little-endian: a 32-byte header (`H5SREQS1`, slots u32, slot size u32, last sequence
 * number f64), then the slots; slot k holds the request whose sequence number is k modulo the
 * slot count: sequence f64 (0: empty; written last), start f64 (epoch ms), end f64 (epoch ms; 0
 * while in flight), text length u16, then `METHOD url` in UTF-8, cut to fit. (Numbers are
 * doubles: no BigInt per request.)
 */
import fs from 'node:fs';

const MAGIC = 'H5SREQS1';
const HEADER = 32;
/** Requests kept. */
export const SLOTS = 64;
const SLOT = 256;
const TEXT_AT = 26;
const TEXT_MAX = SLOT - TEXT_AT;
/** Bytes of a flight record file. */
export const RECORD_BYTES = HEADER + SLOTS * SLOT;

/** One recorded request. */
export interface RecordedRequest {
  seq: number;
  /** `METHOD /path?query` (cut to about 230 bytes). */
  request: string;
  /** When it began and ended (ISO times); `end` missing while it was in flight. */
  start: string;
  end?: string;
  /** How long it ran, ms (until the record was read, for one in flight). */
  ms: number;
}

/** What a flight record says. */
export interface FlightRecord {
  /** Requests not finished when the record was read (oldest first). */
  inFlight: RecordedRequest[];
  /** The last finished requests (oldest first). */
  last: RecordedRequest[];
}

/** The writer: one per process, fed by the request middleware (http/inflight.ts). */
export class FlightRecorder {
  private seq = 0;

  /**
   * @param mem the ring's memory (RECORD_BYTES), mapped from `fd` (or a plain buffer in tests)
   * @param fd the file's descriptor (the watchdog thread reads it)
   */
  constructor(
    private readonly mem: Buffer,
    readonly fd: number,
  ) {
    mem.fill(0);
    mem.write(MAGIC, 0, 'latin1');
    mem.writeUInt32LE(SLOTS, 8);
    mem.writeUInt32LE(SLOT, 12);
  }

  /**
   * Record a request that begins. @returns its sequence number, for `end`
   */
  start(method: string, url: string): number {
    const seq = ++this.seq;
    const at = HEADER + (seq % SLOTS) * SLOT;
    const m = this.mem;
    m.writeDoubleLE(0, at); // torn while being written
    m.writeDoubleLE(Date.now(), at + 8);
    m.writeDoubleLE(0, at + 16);
    let n = m.write(method, at + TEXT_AT, TEXT_MAX, 'latin1');
    if (n < TEXT_MAX) m[at + TEXT_AT + n++] = 0x20;
    if (n < TEXT_MAX) n += m.write(url, at + TEXT_AT + n, TEXT_MAX - n, 'utf8');
    m.writeUInt16LE(n, at + 24);
    m.writeDoubleLE(seq, at);
    m.writeDoubleLE(seq, 16);
    return seq;
  }

  /** Record that request `seq` ended (nothing when its slot was taken since). */
  end(seq: number): void {
    const at = HEADER + (seq % SLOTS) * SLOT;
    if (this.mem.readDoubleLE(at) === seq) this.mem.writeDoubleLE(Date.now(), at + 16);
  }

  /** What the ring says now. */
  read(): FlightRecord {
    return parseFlightRecord(this.mem);
  }
}

/**
 * A recorder on a file: `file` (created or emptied, mode 0600) under `serve --workers N`, else a
 * file made and removed at once (only its descriptor stays).
 * @param map maps the descriptor (hdf5/posix.ts `mapSharedFile`)
 */
export function openFlightRecorder(map: (fd: number, bytes: number) => Buffer, file?: string): FlightRecorder {
  const p = file ?? `${fs.mkdtempSync(`${process.env.TMPDIR ?? '/tmp'}/h5store-requests-`)}/requests`;
  const fd = fs.openSync(p, 'w+', 0o600);
  if (!file) fs.rmSync(p.slice(0, p.lastIndexOf('/')), { recursive: true, force: true });
  fs.ftruncateSync(fd, RECORD_BYTES);
  return new FlightRecorder(map(fd, RECORD_BYTES), fd);
}

/**
 * Parse a flight record (the file's bytes, or the memory itself). Self-contained (no names of
 * this module inside): the watchdog thread runs its source (watchdog.ts).
 */
export function parseFlightRecord(b: Buffer, now = Date.now()): FlightRecord {
  const out: FlightRecord = { inFlight: [], last: [] };
  if (b.length < 32 || b.toString('latin1', 0, 8) !== 'H5SREQS1') return out;
  const slots = b.readUInt32LE(8);
  const size = b.readUInt32LE(12);
  const textAt = 26;
  const all: (RecordedRequest & { ended: boolean })[] = [];
  for (let k = 0; k < slots && 32 + (k + 1) * size <= b.length; k++) {
    const at = 32 + k * size;
    const seq = b.readDoubleLE(at);
    const start = b.readDoubleLE(at + 8);
    const end = b.readDoubleLE(at + 16);
    // empty, or torn (being written when the process died)
    if (!(seq > 0) || !(start > 0 && start < 1e14) || !(end >= 0 && end < 1e14)) continue;
    const n = Math.min(b.readUInt16LE(at + 24), size - textAt);
    const r: RecordedRequest & { ended: boolean } = {
      seq,
      request: b.toString('utf8', at + textAt, at + textAt + n),
      start: new Date(start).toISOString(),
      ms: Math.round((end || now) - start),
      ended: end > 0,
    };
    if (end > 0) r.end = new Date(end).toISOString();
    all.push(r);
  }
  all.sort((x, y) => x.seq - y.seq);
  for (const { ended, ...r } of all) (ended ? out.last : out.inFlight).push(r);
  return out;
}

/** Read a flight record file; empty when it is missing or unreadable. */
export function readFlightRecord(file: string): FlightRecord {
  try {
    return parseFlightRecord(fs.readFileSync(file));
  } catch {
    return { inFlight: [], last: [] };
  }
}
