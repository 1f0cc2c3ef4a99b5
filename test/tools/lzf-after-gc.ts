/**
 * Run with `node --expose-gc --import tsx test/tools/lzf-after-gc.ts <data root> <domain> <dataset path>`:
 * opens a store, forces several full garbage collections, then reads an LZF-compressed dataset
 * through the store and prints `{"compressors": [...], "sum": <sum of the values>}` as JSON.
 * Used by test/api/lzf-gc.test.ts (issue #12: liblzf was unloaded by the first collection).
 */
import { Store } from '../../src/store/store.js';
import { availableCompressors } from '../../src/store/objects/datasets.js';

const [root, domain, dsetPath] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

for (let i = 0; i < 5; i++) {
  gc();
  await new Promise((r) => setTimeout(r, 20));
}
const store = new Store({ root, idleCloseMs: 800, maxOpenFiles: 8, defaultOwner: 'admin', pageBytes: 1 << 20, maxPoints: 1000 });
const { json } = await store.lookupPath(domain, dsetPath);
const source = await store.readValues(domain, json.id as string, {}, { kind: 'binary' });
let sum = 0;
try {
  for await (const parts of source) for (const b of parts) for (let i = 0; i + 4 <= b.length; i += 4) sum += b.readInt32LE(i);
} finally {
  await source.close();
}
gc();
console.log(JSON.stringify({ compressors: availableCompressors(), sum }));
store.close();
