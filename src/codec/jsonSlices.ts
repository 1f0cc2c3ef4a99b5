/**
 * Large JSON request bodies parsed in slices, with the event loop running between them (issue
 * #24 item 7: one 24 MiB body kept every other request waiting 6 s while it was parsed).
 *
 * One pass over the body's bytes (itself in slices of `SCAN_BYTES`) finds the containers larger
 * than `sliceBytes`: each is cut at the commas between its elements (members, for objects) into
 * runs of consecutive elements of at most about `sliceBytes`, and its elements that are large
 * containers themselves are cut the same way. Each run is then parsed by `parseJsonBody`
 * (`JSON.parse`, or the tolerant parser for `NaN`/`Infinity` and long integers) as `[run]` or
 * `{run}`, one run per turn of the event loop, and the pieces are put together: the same value
 * `parseJsonBody` gives for the whole text. The depth limit is checked by the same pass.
 * Structural characters of JSON are ASCII, so cutting the UTF-8 bytes there never splits a
 * character.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { badRequest } from '../errors.js';
import { parseJsonBody } from './json.js';

/** Bytes scanned per turn of the event loop. */
const SCAN_BYTES = 512 * 1024;
/** Default largest piece parsed in one turn (bytes of text). */
export const SLICE_BYTES = 512 * 1024;

/** A run of whole elements `[start, end)` of a cut container, or one large element. */
type Segment = { start: number; end: number } | { node: Cut; key?: { start: number; end: number } };

/** A container larger than the slice size, cut into segments. */
interface Cut {
  kind: 0x5b | 0x7b; // '[' or '{'
  start: number;
  end: number;
  segments: Segment[];
}

/** A container being scanned. */
interface Open {
  kind: 0x5b | 0x7b;
  start: number;
  /** Segments so far (kept only while the container may turn out large). */
  segments: Segment[];
  /** The current run of small elements: its start, or -1. */
  runStart: number;
  /** Where the current element starts (first non-space byte), or -1 before it. */
  elemStart: number;
  /** End of the last complete element (exclusive), for closing a run. */
  lastEnd: number;
  /** The current element is one large container (set when it closes), with its member key. */
  bigChild?: Cut;
  bigKey?: { start: number; end: number };
  /** Objects: where the current member's key string starts and ends. */
  keyStart: number;
  keyEnd: number;
  /** Bytes after the big child closed that are not space (then the element is malformed). */
  afterBig: boolean;
  /** Elements seen so far. */
  count: number;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Byte classes of the scan: everything else (numbers, literals, `:`, bytes >= 128) is OTHER. */
const OTHER = 0;
const SPACE = 1;
const QUOTE = 2;
const OPEN = 3;
const CLOSE = 4;
const COMMA = 5;
const CLASS = new Uint8Array(128);
for (const c of [0x20, 0x0a, 0x0d, 0x09]) CLASS[c] = SPACE;
CLASS[0x22] = QUOTE;
CLASS[0x5b] = OPEN;
CLASS[0x7b] = OPEN;
CLASS[0x5d] = CLOSE;
CLASS[0x7d] = CLOSE;
CLASS[0x2c] = COMMA;

/**
 * Parse a JSON body of any size as `parseJsonBody` does, in slices (see the module comment).
 * @param buf the body's bytes (UTF-8)
 * @param opts.maxDepth deepest nesting of arrays and objects (400 above, naming `maxJsonDepth`)
 * @param opts.sliceBytes largest piece parsed in one turn (default `SLICE_BYTES`)
 * @throws badRequest `Unable to load JSON body: ...` for invalid JSON, or naming the depth limit.
 */
export async function parseJsonSliced(buf: Buffer, opts: { maxDepth?: number; sliceBytes?: number } = {}): Promise<unknown> {
  const slice = opts.sliceBytes ?? SLICE_BYTES;
  if (buf.length <= slice) return parseJsonBody(buf.toString('utf8'), { maxDepth: opts.maxDepth });
  const root = await scan(buf, slice, opts.maxDepth ?? Infinity);
  if (!root) return parseJsonBody(buf.toString('utf8')); // no container larger than a slice (e.g. one long string)
  const text = (a: number, b: number) => buf.toString('utf8', a, b);
  // the text around the top container: spaces only
  for (const [a, b] of [
    [0, root.start],
    [root.end, buf.length],
  ]) {
    for (let i = a; i < b; i++) if (!isSpace(buf[i]!)) throw badRequest(`Unable to load JSON body: Unexpected data at position ${i}`);
  }
  return build(root, text);
}

/** Put a cut container together from its parsed segments, one run per turn of the event loop. */
async function build(c: Cut, text: (a: number, b: number) => string): Promise<unknown> {
  if (c.kind === 0x5b) {
    const out: unknown[] = [];
    for (const s of c.segments) {
      if ('node' in s) out.push(await build(s.node, text));
      else {
        const part = parseJsonBody('[' + text(s.start, s.end) + ']') as unknown[];
        for (let i = 0; i < part.length; i++) out.push(part[i]);
        await nextTurn();
      }
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  const put = (k: string, v: unknown) => Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
  for (const s of c.segments) {
    if ('node' in s) {
      const key = parseJsonBody(text(s.key!.start, s.key!.end));
      if (typeof key !== 'string') throw badRequest('Unable to load JSON body: object keys must be strings');
      put(key, await build(s.node, text));
    } else {
      const part = parseJsonBody('{' + text(s.start, s.end) + '}') as Record<string, unknown>;
      for (const k of Object.keys(part)) put(k, part[k]);
      await nextTurn();
    }
  }
  return out;
}

/**
 * Scan the body: check the nesting depth and cut every container larger than `slice`.
 * @returns the top container when it was cut, else undefined.
 */
async function scan(buf: Buffer, slice: number, maxDepth: number): Promise<Cut | undefined> {
  const stack: Open[] = [];
  let top: Cut | undefined;
  const n = buf.length;
  const fail = (i: number, msg: string): never => {
    throw badRequest(`Unable to load JSON body: ${msg} at position ${i}`);
  };

  /** Close the element that ends at `end` (exclusive) in container `o`, at a comma (`comma`) or its closing bracket. */
  const endElement = (o: Open, end: number, at: number, comma: boolean) => {
    if (o.elemStart < 0) {
      if (comma || o.count > 0) fail(at, comma ? "Unexpected ','" : 'Unexpected end of a list after a comma');
      return; // an empty container
    }
    o.count++;
    if (o.bigChild) {
      if (o.runStart >= 0) o.segments.push({ start: o.runStart, end: o.lastEnd });
      o.runStart = -1;
      if (o.afterBig) fail(at, 'Unexpected data after a value');
      o.segments.push({ node: o.bigChild, key: o.bigKey });
      o.bigChild = undefined;
      o.bigKey = undefined;
    } else {
      if (o.runStart >= 0 && end - o.runStart > slice) {
        o.segments.push({ start: o.runStart, end: o.lastEnd });
        o.runStart = -1;
      }
      if (o.runStart < 0) o.runStart = o.elemStart;
    }
    o.lastEnd = end;
    o.elemStart = -1;
    o.keyStart = -1;
    o.keyEnd = -1;
    o.afterBig = false;
  };

  let lastNonSpace = -1; // end (exclusive) of the last non-space byte seen
  let o: Open | undefined; // the innermost open container
  let i = 0;
  while (i < n) {
    const to = Math.min(n, i + SCAN_BYTES);
    for (; i < to; i++) {
      const c = buf[i]!;
      const cls = c < 128 ? CLASS[c]! : OTHER;
      if (cls === SPACE) continue;
      if (cls === OTHER) {
        if (o) {
          if (o.elemStart < 0) o.elemStart = i;
          else if (o.bigChild) o.afterBig = true;
        }
        // the rest of a number or literal
        while (i + 1 < n && (buf[i + 1]! >= 128 || CLASS[buf[i + 1]!] === OTHER)) i++;
        lastNonSpace = i + 1;
        continue;
      }
      if (cls === QUOTE) {
        if (o) {
          if (o.elemStart < 0) {
            o.elemStart = i;
            if (o.kind === 0x7b) o.keyStart = i;
          } else if (o.bigChild) o.afterBig = true;
        }
        // the closing quote: the next one not escaped by an odd number of backslashes
        let q = i;
        for (;;) {
          q = buf.indexOf(0x22, q + 1);
          if (q < 0) fail(n, 'Unterminated string');
          let b = 0;
          while (buf[q - 1 - b] === 0x5c) b++;
          if (b % 2 === 0) break;
        }
        if (o && o.keyStart === i) o.keyEnd = q + 1;
        i = q;
        lastNonSpace = i + 1;
        continue;
      }
      if (cls === OPEN) {
        if (o) {
          if (o.elemStart < 0) o.elemStart = i;
          else if (o.bigChild) o.afterBig = true;
        }
        if (stack.length >= maxDepth) throw badRequest(`The JSON body nests arrays and objects more than ${maxDepth} levels deep (limit maxJsonDepth)`);
        o = { kind: c as 0x5b | 0x7b, start: i, segments: [], runStart: -1, elemStart: -1, lastEnd: i + 1, keyStart: -1, keyEnd: -1, afterBig: false, count: 0 };
        stack.push(o);
      } else if (cls === CLOSE) {
        const closing = stack.pop();
        if (!closing || (closing.kind === 0x5b) !== (c === 0x5d)) fail(i, 'Unexpected bracket');
        endElement(closing!, lastNonSpace, i, false);
        const end = i + 1;
        const parent = (o = stack[stack.length - 1]);
        if (end - closing!.start > slice) {
          if (closing!.runStart >= 0) closing!.segments.push({ start: closing!.runStart, end: closing!.lastEnd });
          const cut: Cut = { kind: closing!.kind, start: closing!.start, end, segments: closing!.segments };
          if (!parent) top = cut;
          else if (parent.kind === 0x5b) {
            if (parent.elemStart !== closing!.start) fail(closing!.start, 'Unexpected data before a value');
            parent.bigChild = cut;
          } else {
            // a member: "key" : value, nothing else
            if (parent.keyStart < 0 || parent.keyEnd < 0 || parent.elemStart !== parent.keyStart) fail(closing!.start, 'Expected a string key before a value');
            let colons = 0;
            for (let j = parent.keyEnd; j < closing!.start; j++) {
              if (buf[j] === 0x3a) colons++;
              else if (!isSpace(buf[j]!)) fail(j, 'Unexpected data before a value');
            }
            if (colons !== 1) fail(closing!.start, "Expected ':' after a key");
            parent.bigKey = { start: parent.keyStart, end: parent.keyEnd };
            parent.bigChild = cut;
          }
        }
      } else {
        // a comma
        if (o) endElement(o, lastNonSpace, i, true);
        else fail(i, "Unexpected ','");
      }
      lastNonSpace = i + 1;
    }
    if (i < n) await nextTurn();
  }
  if (stack.length) fail(n, 'Unexpected end of JSON input');
  return top;
}
