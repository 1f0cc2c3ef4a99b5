/**
 * Benchmark of the JSON value writer (src/codec/json.ts), the hot path of `GET .../value` as JSON.
 * Run: npx tsx bench/codec-json.ts
 */
import { ValueJsonWriter, parseJsonBody, stringifyJson } from '../src/codec/json.js';
import { encodeElements } from '../src/codec/values.js';
import type { TypeJson } from '../src/codec/types.js';

const N = 1 << 20;
const REPS = 7;

/** Wall and CPU time (the process's user + system: less sensitive to other processes on a shared machine). */
function time(label: string, f: () => number): void {
  const ts: number[] = [];
  const cpu: number[] = [];
  let size = 0;
  for (let r = 0; r < REPS; r++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    size = f();
    const c = process.cpuUsage(c0);
    ts.push(performance.now() - t0);
    cpu.push((c.user + c.system) / 1000);
  }
  ts.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(44)} median ${ts[REPS >> 1].toFixed(1).padStart(7)} ms   best ${ts[0].toFixed(1).padStart(7)} ms   ` +
      `CPU median ${cpu[REPS >> 1].toFixed(1).padStart(7)} ms   (${(size / 1e6).toFixed(1)} MB)`,
  );
}

function writeAll(type: TypeJson, buf: Buffer, shape: number[], pages = 1): number {
  const w = new ValueJsonWriter(type, shape);
  let len = 0;
  const per = Math.ceil(N / pages);
  const size = buf.length / N;
  for (let i = 0; i < N; i += per) {
    const n = Math.min(per, N - i);
    len += w.write(buf.subarray(i * size, (i + n) * size), n).length;
  }
  return len + w.end().length;
}

/** As the server sends a value: UTF-8 chunks, no strings. */
function writeAllChunks(type: TypeJson, buf: Buffer, shape: number[]): number {
  const w = new ValueJsonWriter(type, shape);
  let len = 0;
  for (const c of w.writeChunks(buf, N)) len += c.length;
  for (const c of w.endChunks()) len += c.length;
  return len;
}

const f32 = new Float32Array(N);
for (let i = 0; i < N; i++) f32[i] = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 8 - 3);
const f32buf = Buffer.from(f32.buffer);
const f32u = new Float32Array(N);
for (let i = 0; i < N; i++) f32u[i] = Math.random();
const f32ubuf = Buffer.from(f32u.buffer);
const f64 = new Float64Array(N);
for (let i = 0; i < N; i++) f64[i] = Math.random() * 1000;
const f64buf = Buffer.from(f64.buffer);
const i32 = new Int32Array(N);
for (let i = 0; i < N; i++) i32[i] = (Math.random() * 2 ** 32) | 0;
const i32buf = Buffer.from(i32.buffer);
const i64buf = Buffer.from(new BigInt64Array(N).map((_, i) => BigInt(i) * 1234567n).buffer);

const F32: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' };
const F32BE: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32BE' };
const F64: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };
const I32: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' };
const I64: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I64LE' };
const f32bebuf = encodeElements(Array.from(f32), F32BE);

console.log(`Node ${process.version}, ${N} elements per run, ${REPS} runs`);
time('float32 random (mixed magnitudes), 1-D', () => writeAll(F32, f32buf, [N]));
const f32r = new Float32Array(N);
for (let i = 0; i < N; i++) f32r[i] = Math.random() * 1000 - 500;
const f32rbuf = Buffer.from(f32r.buffer);
time('float32 [-500,500) (bench/run.ts), chunks', () => writeAllChunks(F32, f32rbuf, [1024, 1024]));
time('float32 uniform [0,1), 1-D', () => writeAll(F32, f32ubuf, [N]));
time('float32 BE, 1-D', () => writeAll(F32BE, f32bebuf, [N]));
time('float32, [1024,1024] in 16 pages', () => writeAll(F32, f32buf, [1024, 1024], 16));
time('float64 random, 1-D', () => writeAll(F64, f64buf, [N]));
time('int32 random, 1-D', () => writeAll(I32, i32buf, [N]));
time('int64, 1-D', () => writeAll(I64, i64buf, [N]));
time('JSON.stringify(Array.from(float32)) (ref)', () => JSON.stringify(Array.from(f32)).length);
time('JSON.stringify(Array.from(float64)) (ref)', () => JSON.stringify(Array.from(f64)).length);
const body = JSON.stringify({ value: Array.from(f64) });
time('parseJsonBody 1 Mi float64 (fast path)', () => (parseJsonBody(body) as { value: unknown[] }).value.length);
const meta = { id: 'd-1', type: F32, shape: { class: 'H5S_SIMPLE', dims: [4, 5] }, hrefs: [{ rel: 'self', href: 'x' }] };
time('stringifyJson small metadata x 100k', () => {
  let n = 0;
  for (let i = 0; i < 100_000; i++) n += stringifyJson(meta).length;
  return n;
});
