/**
 * S3 mounts: a tall.h5 walk and a 16 MiB read through a real S3 server (Ceph radosgw on
 * loopback, started here), with each way of reading (docs/deploy.md, "Archives in S3").
 *
 * usage: npm run build && npm run bench:s3
 *   (H5STORE_TEST_S3_ENDPOINT=http://... to use an S3 server already running)
 *
 * Ways measured, each in a fresh server process:
 *   ros3-reopen  ROS3, file closed after every request (s3IdleCloseMs=10, 70 ms pause between
 *                requests, pauses not counted): nothing survives between requests
 *   ros3         ROS3, handle kept open (libhdf5's metadata cache serves repeated reads)
 *   whole        objects fetched whole (one GET) and opened from memory, handle kept open
 *   local        the same files on local disk (reference)
 * "cold" is the first pass after the server started (includes opening), "warm" the second.
 * S3 requests are counted from radosgw's log (ROS3's ranged GETs included).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { rgwRequests, startS3, type TestS3 } from '../test/helpers/s3.js';
import { startBenchServer } from './server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const PY = '/usr/bin/python3';
const BUCKET = 'bench';
const MiB = 1024 * 1024;


async function getJson(url: string): Promise<any> {
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Walk a domain like a viewer: root, every group with links and attributes, every dataset with its value and attributes. */
async function walk(base: string, domain: string, pauseMs: number): Promise<{ ms: number; requests: number }> {
  let ms = 0;
  let requests = 0;
  const q = `domain=${encodeURIComponent(domain)}`;
  const get = async (p: string) => {
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    const t0 = performance.now();
    const j = await getJson(`${base}${p}${p.includes('?') ? '&' : '?'}${q}`);
    ms += performance.now() - t0;
    requests++;
    return j;
  };
  const root = (await get('/')).root as string;
  const queue = [root];
  const seen = new Set(queue);
  while (queue.length) {
    const id = queue.shift()!;
    await get(`/groups/${id}`);
    await get(`/groups/${id}/attributes?IncludeData=1`);
    const links = (await get(`/groups/${id}/links`)).links as any[];
    for (const l of links) {
      if (l.class !== 'H5L_TYPE_HARD' || seen.has(l.id)) continue;
      seen.add(l.id);
      if (l.collection === 'groups') queue.push(l.id);
      else if (l.collection === 'datasets') {
        await get(`/datasets/${l.id}`);
        await get(`/datasets/${l.id}/attributes?IncludeData=1`);
        const d = await getJson(`${base}/datasets/${l.id}?${q}`);
        const n = (d.shape?.dims ?? [1]).reduce((a: number, b: number) => a * b, 1);
        if (n <= 100_000) await get(`/datasets/${l.id}/value`);
      }
    }
  }
  return { ms, requests };
}

/** GET /, the root's links, then 16 MiB of float32 (4 Mi elements) of /data of big.h5, binary; all timed. */
async function read16(base: string, domain: string): Promise<number> {
  const q = `domain=${encodeURIComponent(domain)}`;
  const t0 = performance.now();
  const root = (await getJson(`${base}/?${q}`)).root;
  const links = (await getJson(`${base}/groups/${root}/links?${q}`)).links as any[];
  const id = links.find((l) => l.title === 'data').id;
  const r = await fetch(`${base}/datasets/${id}/value?select=[0:${(16 * MiB) / 4}]&${q}`, { headers: { Accept: 'application/octet-stream' } });
  const buf = Buffer.from(await r.arrayBuffer());
  const ms = performance.now() - t0;
  if (buf.length !== 16 * MiB) throw new Error(`16 MiB read returned ${buf.length} bytes (${r.status})`);
  const f = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  if (f[12345] !== 12345 || f[f.length - 1] !== f.length - 1) throw new Error('16 MiB read returned wrong values');
  return ms;
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-s3-'));
  const tall = path.resolve(repo, '../shared/fixtures/hdf5/tall.h5');
  const local = path.join(work, 'root');
  fs.mkdirSync(path.join(local, 'arc'), { recursive: true });
  if (fs.existsSync(tall)) fs.copyFileSync(tall, path.join(local, 'arc/tall.h5'));
  else execFileSync(PY, [path.join(repo, 'test/tools/make_tall.py'), path.join(local, 'arc/tall.h5')]);
  execFileSync(PY, [path.join(repo, 'test/tools/make_big.py'), path.join(local, 'arc/big.h5'), '24']);
  process.stdout.write('starting S3 (Ceph radosgw)...\n');
  const s3: TestS3 = await startS3();
  const rows: string[] = [];
  try {
    await s3.bucket(BUCKET);
    await s3.put(BUCKET, 'arc/tall.h5', fs.readFileSync(path.join(local, 'arc/tall.h5')));
    await s3.put(BUCKET, 'arc/big.h5', fs.readFileSync(path.join(local, 'arc/big.h5')));
    const env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey };
    const mount = ['--mount', `/arc=s3://${BUCKET}/arc`, '--s3-endpoint', s3.endpoint];
    const ways: { name: string; args: string[]; env: Record<string, string>; pause: number; s3: boolean }[] = [
      { name: 'ros3-reopen', args: mount, env: { ...env, H5STORE_S3_WHOLE_OBJECT_BYTES: '0', H5STORE_S3_IDLE_CLOSE_MS: '10' }, pause: 70, s3: true },
      { name: 'ros3', args: mount, env: { ...env, H5STORE_S3_WHOLE_OBJECT_BYTES: '0' }, pause: 0, s3: true },
      { name: 'whole', args: mount, env: { ...env, H5STORE_S3_WHOLE_OBJECT_BYTES: String(64 * MiB) }, pause: 0, s3: true },
      { name: 'local', args: ['--root', local], env: {}, pause: 0, s3: false },
    ];
    const count = () => rgwRequests(s3, /"(GET|HEAD) \/bench\//);
    for (const w of ways) {
      const root = fs.mkdtempSync(path.join(work, 'r-'));
      const srv = await startBenchServer(w.s3 ? ['--root', root, ...w.args] : w.args, w.env);
      try {
        for (const pass of ['cold', 'warm']) {
          const c0 = count();
          const wk = await walk(srv.url, '/arc/tall.h5', w.pause);
          const c1 = count();
          rows.push(`| ${w.name} | tall.h5 walk, ${pass} | ${wk.ms.toFixed(1)} ms (${wk.requests} API requests) | ${w.s3 ? c1 - c0 : '-'} |`);
        }
        for (const pass of ['cold', 'warm']) {
          const c0 = count();
          const ms = w.pause ? (await new Promise((r) => setTimeout(r, w.pause)), await read16(srv.url, '/arc/big.h5')) : await read16(srv.url, '/arc/big.h5');
          const c1 = count();
          rows.push(`| ${w.name} | GET / + links + 16 MiB read of big.h5 (26 MB), ${pass} | ${ms.toFixed(1)} ms (${((16 * MiB) / 1e6 / (ms / 1000)).toFixed(0)} MB/s) | ${w.s3 ? c1 - c0 : '-'} |`);
        }
      } finally {
        await srv.stop();
      }
      process.stdout.write(`${w.name} done\n`);
    }
  } finally {
    await s3.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write('\n| way | measure | time | S3 requests |\n|---|---|---|---|\n' + rows.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
