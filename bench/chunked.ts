/**
 * Compressed chunked reads (issue #9 target 3): a binary GET of a 1024x1024 int32 region of a
 * gzip-chunked dataset, h5store over loopback HTTP against h5py reading the same region
 * in-process, in the same run. Not a test: numbers for the notes (bench/README.md).
 *
 * usage: npm run build:server && node --import tsx bench/chunked.ts [rounds]
 *
 * Writes (with /usr/bin/python3 + h5py) into a temporary directory a file with datasets like
 * bench/make_data.py's `chunked` one: int32 (4096, 4096), chunks (256, 256), gzip level 4, the
 * same values (`gzip`); the same with shuffle (`gzip+shuffle`); and less compressible values
 * (random 0..1e6, gzip 4: `gzip-random`). Two servers run: the default one (chunks decoded in
 * parallel, src/store/values/chunked.ts) and one with the parallel path turned off
 * (`parallelChunkMinBytes` above `pageBytes`: libhdf5's H5Dread). Each round alternates curl
 * (one keep-alive connection, several GETs) and h5py (the same number of reads); the figures are
 * medians over the rounds of each round's median. The bytes are checked against h5py's once.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const PER_ROUND = 9;
const PY = '/usr/bin/python3';
const SELECT = '[1024:2048,512:1536]';
const BYTES = 1024 * 1024 * 4;
const NAMES = ['gzip', 'gzip+shuffle', 'gzip-random'];

const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
};

function makeData(dir: string): string {
  const file = path.join(dir, 'chunked.h5');
  execFileSync(PY, [
    '-c',
    `import h5py, numpy as np, sys
rng = np.random.default_rng(42)
with h5py.File(sys.argv[1], 'w') as f:
    kw = dict(shape=(4096, 4096), dtype='<i4', chunks=(256, 256), compression='gzip', compression_opts=4)
    a = f.create_dataset('gzip', **kw)
    b = f.create_dataset('gzip+shuffle', shuffle=True, **kw)
    c = f.create_dataset('gzip-random', **kw)
    for i in range(0, 4096, 512):
        v = (np.arange(512 * 4096, dtype=np.int64).reshape(512, 4096) % 1000 + i).astype('<i4')
        a[i:i + 512] = v
        b[i:i + 512] = v
        c[i:i + 512] = rng.integers(0, 1000000, size=(512, 4096), dtype=np.int32)
`,
    file,
  ]);
  return file;
}

/** Seconds per GET of `url`, `n` GETs on one curl keep-alive connection. */
function curlTimes(url: string, n: number): number[] {
  const args = ['-g', '-s', '-H', 'Accept: application/octet-stream'];
  for (let i = 0; i < n; i++) args.push('-o', '/dev/null', url);
  args.push('-w', '%{http_code} %{size_download} %{time_total}\n');
  const out = execFileSync('curl', args, { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => {
      const [code, size, t] = l.split(' ');
      if (code !== '200' || Number(size) !== BYTES) throw new Error(`GET ${url}: ${code}, ${size} bytes`);
      return Number(t);
    });
}

/** Seconds per h5py read of the region, `n` reads in one process (file opened once). */
function h5pyTimes(file: string, name: string, n: number): number[] {
  const out = execFileSync(
    PY,
    [
      '-c',
      `import h5py, sys, time
d = h5py.File(sys.argv[1], 'r')[sys.argv[2]]
for i in range(int(sys.argv[3])):
    t = time.perf_counter(); a = d[1024:2048, 512:1536]; print(time.perf_counter() - t)
`,
      file,
      name,
      String(n),
    ],
    { encoding: 'utf8' },
  );
  return out.trim().split('\n').map(Number);
}

async function datasetIds(url: string): Promise<Record<string, string>> {
  const get = async (p: string) => (await fetch(url + p)).json() as Promise<any>;
  const root = (await get('/?domain=/chunked.h5')).root as string;
  const ids: Record<string, string> = {};
  for (const n of NAMES) ids[n] = (await get(`/groups/${root}/links/${encodeURIComponent(n)}?domain=/chunked.h5`)).link.id;
  return ids;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-chunked-'));
  try {
    const file = makeData(dir);
    const fast = await startBenchServer(['--root', dir]);
    const slow = await startBenchServer(['--root', dir], { H5STORE_PARALLEL_CHUNK_MIN_BYTES: String(1 << 40) });
    try {
      const ids = await datasetIds(fast.url);
      const slowIds = await datasetIds(slow.url);
      const load0 = os.loadavg()[0]!;
      console.log(`${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${ROUNDS} rounds of ${PER_ROUND} reads of ${SELECT} (4 MiB)`);
      for (const name of NAMES) {
        const url = (base: string, id: string) => `${base}/datasets/${id}/value?domain=/chunked.h5&select=${SELECT}`;
        // identical bytes
        const got = Buffer.from(await (await fetch(url(fast.url, ids[name]!), { headers: { Accept: 'application/octet-stream' } })).arrayBuffer());
        const want = execFileSync(PY, ['-c', `import h5py, sys; sys.stdout.buffer.write(h5py.File(sys.argv[1], 'r')[sys.argv[2]][1024:2048, 512:1536].tobytes())`, file, name], {
          maxBuffer: 64 << 20,
        });
        if (!got.equals(want)) throw new Error(`${name}: the server's bytes differ from h5py's`);
        const server: number[] = [];
        const fallback: number[] = [];
        const py: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          server.push(median(curlTimes(url(fast.url, ids[name]!), PER_ROUND).slice(1)));
          py.push(median(h5pyTimes(file, name, PER_ROUND).slice(1)));
          fallback.push(median(curlTimes(url(slow.url, slowIds[name]!), PER_ROUND).slice(1)));
        }
        const mbs = (t: number) => BYTES / t / 1e6;
        const s = median(server);
        const p = median(py);
        const f = median(fallback);
        console.log(
          `${name.padEnd(13)} h5store ${mbs(s).toFixed(0).padStart(5)} MB/s (H5Dread path ${mbs(f).toFixed(0).padStart(5)} MB/s)   h5py ${mbs(p).toFixed(0).padStart(5)} MB/s   ratio ${(p / s).toFixed(2)} (H5Dread path ${(p / f).toFixed(2)})`,
        );
      }
      console.log(`load average at start ${load0.toFixed(2)}, at end ${os.loadavg()[0]!.toFixed(2)}`);
    } finally {
      await fast.stop();
      await slow.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
