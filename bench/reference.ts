/**
 * The reference server of the benchmarks (issue #9): a bare `node:http` server, run as its own
 * process like h5store, that shows what Node itself allows on this machine in the same run.
 * Not a benchmark by itself; bench/run.ts starts it with `startReference()`.
 *
 * - `PUT /json/<name>` stores a body; `GET /json/<name>` answers it as `application/json`
 *   (the same bytes h5store answered for that request: the Node limit for small requests);
 * - `GET /bytes?n=<bytes>` streams n bytes from memory in 4 MiB writes, waiting for `drain`
 *   as h5store's streaming does (the loopback limit for large reads);
 * - `PUT /sink` reads a request body and drops it (the loopback limit for uploads).
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { spawnListening } from './server.js';

const SLICE = 4 * 1024 * 1024;

function serve(): void {
  const bodies = new Map<string, Buffer>();
  let memory = Buffer.alloc(0);
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url.startsWith('/json/')) {
      const body = bodies.get(url.slice(6));
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
      return;
    }
    if (req.method === 'GET' && url.startsWith('/bytes')) {
      const n = Number(new URL(url, 'http://x').searchParams.get('n'));
      if (memory.length < Math.min(n, 1 << 30)) memory = Buffer.alloc(Math.min(n, 1 << 30), 7);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': n });
      let sent = 0;
      const more = () => {
        while (sent < n) {
          const k = Math.min(SLICE, n - sent);
          const ok = res.write(memory.subarray(sent % memory.length, (sent % memory.length) + k));
          sent += k;
          if (!ok) {
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      more();
      return;
    }
    if (req.method === 'PUT') {
      const parts: Buffer[] = [];
      let bytes = 0;
      req.on('data', (c: Buffer) => {
        bytes += c.length;
        if (url.startsWith('/json/')) parts.push(c);
      });
      req.on('end', () => {
        if (url.startsWith('/json/')) bodies.set(url.slice(6), Buffer.concat(parts));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ bytes }));
      });
      return;
    }
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    const a = server.address() as { port: number };
    process.stdout.write(`listening on http://127.0.0.1:${a.port}\n`);
  });
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

/**
 * Start the reference server as a child process (exits with the benchmark: its stdin).
 * @returns its URL, process id and `stop`
 */
export function startReference(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  return spawnListening(['--import', 'tsx', fileURLToPath(import.meta.url), 'serve']);
}

if (process.argv[2] === 'serve') serve();
