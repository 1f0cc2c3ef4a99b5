/**
 * JSON compression for a remote viewer (issue #28 item 9): a 1 MiB float32 frame (512 x 512, a
 * detector-like image: smooth signal plus noise, bench data written here with h5py) read as JSON
 * (`GET /datasets/<id>/value`, what h5web's HSDS provider asks for) with `Accept-Encoding:
 * identity`, `gzip` and `br`, on loopback and through a throttled link (a proxy in this process
 * that paces the answer at a given bandwidth and adds half the round trip each way).
 *
 *   npm run build && node --import tsx bench/compression.ts [--rounds 5] [--links 20,100]
 *
 * For each encoding: bytes on the wire; the server's time to the last byte on loopback (median);
 * the client's decoding time; and per link (Mbit/s, 20 ms round trip) the time from request to
 * decoded value (median). The server is this checkout's build (bench/server.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startBenchServer } from './server.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : def;
};
const ROUNDS = Number(opt('rounds', '5'));
const LINKS = opt('links', '20,100').split(',').map(Number);
const RTT_MS = 20;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * A TCP proxy to `target` whose server-to-client direction is paced at `mbit` Mbit/s, each
 * direction delayed by half of RTT_MS (a long-distance link as seen by one connection).
 */
function throttledProxy(target: URL, mbit: number): Promise<{ port: number; close: () => void }> {
  const bytesPerMs = (mbit * 1e6) / 8 / 1000;
  const server = net.createServer((client) => {
    const up = net.connect(Number(target.port), target.hostname);
    let freeAt = 0; // when the link is free again (ms, performance.now())
    let last = Promise.resolve(); // deliveries in order: each waits for the one before
    const deliver = (at: number, fn: () => void) => {
      const prev = last;
      last = (async () => {
        await prev;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        fn();
      })();
    };
    client.on('data', (b) => setTimeout(() => up.write(b), RTT_MS / 2));
    up.on('data', (b: Buffer) => {
      const start = Math.max(performance.now(), freeAt);
      freeAt = start + b.length / bytesPerMs;
      deliver(freeAt + RTT_MS / 2, () => client.write(b));
    });
    const end = () => {
      client.destroy();
      up.destroy();
    };
    client.on('error', end);
    up.on('error', end);
    up.on('end', () => deliver(freeAt + RTT_MS / 2, () => client.end()));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as net.AddressInfo).port, close: () => server.close() })));
}

/** One GET: wire bytes, time to the last byte, decoding time (ms). */
function get(url: string, encoding: string): Promise<{ wire: number; ms: number; decodeMs: number; text: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http
      .get(url, { headers: { 'Accept-Encoding': encoding }, agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => parts.push(b));
        res.on('end', () => {
          const ms = performance.now() - t0;
          const body = Buffer.concat(parts);
          const t1 = performance.now();
          const ce = res.headers['content-encoding'];
          let raw: Buffer;
          try {
            raw = ce === 'br' ? zlib.brotliDecompressSync(body) : ce === 'gzip' ? zlib.gunzipSync(body) : body;
          } catch (e) {
            reject(new Error(`${encoding}: ${(e as Error).message} (${body.length} bytes, complete: ${res.complete})`));
            return;
          }
          const decodeMs = performance.now() - t1;
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          else if ((ce ?? 'identity') !== encoding) reject(new Error(`asked ${encoding}, got ${ce ?? 'identity'}`));
          else resolve({ wire: body.length, ms, decodeMs, text: raw.toString() });
        });
      })
      .on('error', reject);
  });
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-bench-compress-'));
  execFileSync('/usr/bin/python3', [
    '-c',
    "import h5py, numpy as np, sys\ny, x = np.mgrid[0:512, 0:512]\nrng = np.random.default_rng(7)\nimg = 1000 * np.exp(-((x - 256.0) ** 2 + (y - 200.0) ** 2) / 8000) + 100 + rng.normal(0, 5, (512, 512))\nwith h5py.File(sys.argv[1], 'w') as f: f['frame'] = img.astype('<f4')",
    path.join(tmp, 'frame.h5'),
  ]);
  const srv = await startBenchServer(['--root', tmp]);
  try {
    const rootId = ((await (await fetch(`${srv.url}/?domain=/frame.h5`)).json()) as { root: string }).root;
    const links = (await (await fetch(`${srv.url}/groups/${rootId}/links?domain=/frame.h5`)).json()) as { links: { id: string }[] };
    const valuePath = `/datasets/${links.links[0]!.id}/value?domain=/frame.h5`;
    console.log(`1 MiB float32 frame (512 x 512) as JSON, ${ROUNDS} rounds; links with ${RTT_MS} ms round trip`);
    const encodings = ['identity', 'gzip', 'br'];
    let identityText = '';
    const header = ['encoding', 'wire bytes', 'ratio', 'loopback ms', 'decode ms', ...LINKS.map((l) => `${l} Mbit/s ms`)];
    const rows: string[][] = [];
    for (const enc of encodings) {
      const loop = [];
      for (let r = 0; r < ROUNDS + 1; r++) loop.push(await get(srv.url + valuePath, enc));
      loop.shift(); // warm-up
      if (enc === 'identity') identityText = loop[0]!.text;
      else if (loop[0]!.text !== identityText) throw new Error(`${enc}: the decoded value differs`);
      const row = [enc, String(loop[0]!.wire), (identityText.length / loop[0]!.wire).toFixed(2), median(loop.map((x) => x.ms)).toFixed(1), median(loop.map((x) => x.decodeMs)).toFixed(1)];
      for (const mbit of LINKS) {
        const proxy = await throttledProxy(new URL(srv.url), mbit);
        const times = [];
        for (let r = 0; r < ROUNDS; r++) {
          const g = await get(`http://127.0.0.1:${proxy.port}${valuePath}`, enc);
          times.push(g.ms + g.decodeMs);
        }
        proxy.close();
        row.push(median(times).toFixed(0));
      }
      rows.push(row);
    }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const r of [header, ...rows]) console.log('  ' + r.map((c, i) => c.padStart(widths[i]!)).join('  '));
  } finally {
    await srv.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
