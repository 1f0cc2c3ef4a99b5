/**
 * JSON values formatted on the value threads (src/store/values/threadPool.ts): for every
 * fixed-size type class and several shapes, the parts formatted on the threads (from any
 * starting element, as pages of a streamed value) joined with the closing text of a writer
 * skipped to the end are exactly the text of one `ValueJsonWriter` on this thread.
 */
import { expect } from 'chai';
import { ValueJsonWriter, valueToJson } from '../../src/codec/json.js';
import { parseType, typeSize } from '../../src/codec/types.js';
import { encodeElements } from '../../src/codec/values.js';
import os from 'node:os';
import { idleValueThreads, jsonThreadParts, spareCores, startValueThreads, stopValueThreads, valueJsonOnThreads } from '../../src/store/values/threadPool.js';

/** Text of elements cut into pages of `page` elements, each formatted on the threads. */
async function onThreads(typeIn: unknown, values: unknown[], shape: number[], page: number, ignoreNan: boolean): Promise<string> {
  const t = parseType(typeIn);
  const wire = encodeElements(values, t);
  const size = typeSize(t);
  const out: Buffer[] = [];
  for (let s = 0; s < values.length; s += page) {
    const n = Math.min(page, values.length - s);
    out.push(...(await valueJsonOnThreads(t, shape, { ignoreNan }, wire.subarray(s * size, (s + n) * size), s, n, size)));
  }
  const closing = new ValueJsonWriter(t, shape);
  closing.skipTo(values.length);
  out.push(...closing.endChunks());
  return Buffer.concat(out).toString('utf8');
}

describe('JSON values on the value threads', function () {
  this.timeout(60000);
  after(stopValueThreads);
  const n = 70_000; // above the part minimum (16 Ki elements): several parts per call
  const f32 = Array.from({ length: n }, (_, i) => (i % 11 === 0 ? [NaN, Infinity, -Infinity, -0][i % 4] : Math.fround(Math.sin(i) * 10 ** ((i % 13) - 6))));
  const cases: [string, unknown, (i: number) => unknown][] = [
    ['float32 (non-finite, -0, all magnitudes)', 'H5T_IEEE_F32LE', (i) => f32[i]],
    ['float64 BE', 'H5T_IEEE_F64BE', (i) => (i % 7 === 0 ? NaN : Math.cos(i) * 1e10)],
    ['float16', 'H5T_IEEE_F16LE', (i) => (i % 50) / 7],
    ['int64 beyond 2^53', 'H5T_STD_I64LE', (i) => BigInt(i) * 2n ** 44n - 2n ** 62n],
    ['uint8', 'H5T_STD_U8LE', (i) => i % 256],
    ['boolean enum', { class: 'H5T_ENUM', base: 'H5T_STD_I8LE', mapping: { FALSE: 0, TRUE: 1 } }, (i) => i % 3 === 0],
    ['UTF-8 fixed strings', { class: 'H5T_STRING', length: 8, charSet: 'H5T_CSET_UTF8' }, (i) => ['é"', 'a\\b', '€', ''][i % 4]],
    [
      'compound',
      { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: 'H5T_IEEE_F32LE' }, { name: 'b', type: { class: 'H5T_STRING', length: 3 } }] },
      (i) => [i % 5 === 0 ? NaN : i / 4, String(i % 1000)],
    ],
    ['array type', { class: 'H5T_ARRAY', base: 'H5T_STD_I16BE', dims: [2] }, (i) => [i % 30000, -(i % 30000)]],
  ];
  // shapes of n elements: flat, rows that pages cut in the middle, a middle dimension of 1
  const shapes = [[n], [700, 100], [350, 1, 200], [7, 10_000]];
  for (const [name, type, make] of cases) {
    it(`${name}: the same text as one writer, whole and in pages from any element`, async () => {
      const values = Array.from({ length: n }, (_, i) => make(i));
      const t = parseType(type);
      for (const shape of shapes) {
        for (const ignoreNan of [false, true]) {
          const want = valueToJson(encodeElements(values, t), t, shape, { ignoreNan });
          const before = jsonThreadParts();
          expect(await onThreads(type, values, shape, n, ignoreNan), `${JSON.stringify(shape)} whole`).to.equal(want);
          expect(jsonThreadParts() - before, 'parts formatted on threads').to.be.at.least(1);
          expect(await onThreads(type, values, shape, 23_457, ignoreNan), `${JSON.stringify(shape)} in pages`).to.equal(want);
        }
      }
    });
  }

  it('a small value is one part; many requests at once each get their own text', async () => {
    const t = parseType('H5T_STD_I32LE');
    const jobs = Array.from({ length: 12 }, (_, k) => {
      const values = Array.from({ length: 1000 + k * 5000 }, (_, i) => i * (k + 1));
      const want = valueToJson(encodeElements(values, t), t, [values.length]);
      return onThreads('H5T_STD_I32LE', values, [values.length], values.length, false).then((got) => expect(got).to.equal(want));
    });
    await Promise.all(jobs);
  });

  it('idle threads: none before they start, all once warmed up with nothing to do; spare cores sampled while they run', async () => {
    await stopValueThreads();
    expect(idleValueThreads()).to.equal(0);
    expect(spareCores()).to.equal(0);
    startValueThreads();
    expect(idleValueThreads(), 'still warming up').to.equal(0);
    const threads = Math.max(1, Math.min(4, os.availableParallelism()));
    const until = Date.now() + 30_000;
    while (idleValueThreads() < threads) {
      expect(Date.now(), 'the threads never became idle').to.be.below(until);
      await new Promise((r) => setTimeout(r, 50));
    }
    // a job outstanding makes its thread not idle until it answers
    const t = parseType('H5T_STD_I32LE');
    const big = encodeElements(Array.from({ length: 200_000 }, (_, i) => i), t);
    const job = valueJsonOnThreads(t, [200_000], {}, big, 0, 200_000, 4);
    expect(idleValueThreads()).to.be.below(threads);
    await job;
    expect(idleValueThreads()).to.equal(threads);
    await new Promise((r) => setTimeout(r, 600)); // two samples of the CPU time
    expect(spareCores()).to.be.within(0, os.availableParallelism());
    await stopValueThreads();
    expect(spareCores()).to.equal(0);
  });
});
