/** One log line per request with method, path, status and milliseconds (pino JSON on stdout). */
import { expect } from 'chai';
import net from 'node:net';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';

/**
 * Run `fn` against a server logging at `info`; `lines()` gives its request log lines so far
 * (after a moment for the last ones to be written).
 */
async function withLoggingServer(fn: (srv: TestServer, lines: () => Promise<Record<string, any>[]>) => Promise<void>): Promise<void> {
  const srv = await startServer({ root: tempRoot(), args: ['--log-level', 'info'] });
  let out = '';
  srv.proc.stdout!.on('data', (b) => (out += b.toString()));
  const lines = async () => {
    await new Promise((r) => setTimeout(r, 300));
    return out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((j) => j.msg === 'request');
  };
  try {
    await fn(srv, lines);
  } finally {
    await srv.stop();
  }
}

describe('request log', function () {
  this.timeout(30000);
  it('writes method, path, status and ms for every request, errors included', () =>
    withLoggingServer(async (srv, requestLines) => {
      const c = new Client(srv.url, '/nope.h5');
      await c.get('/about');
      await c.get('/');
      const lines = await requestLines();
      const about = lines.find((j) => j.path === '/about');
      expect(about).to.include({ method: 'GET', status: 200 });
      expect(about!.ms).to.be.a('number');
      expect(lines.find((j) => j.path === '/')).to.include({ method: 'GET', status: 404 });
    }));

  it('a client that goes away before the answer begins is logged and counted as 499, not as the status not yet set', () =>
    withLoggingServer(async (srv, requestLines) => {
      const c = new Client(srv.url, '/gone.h5');
      expect((await c.request('PUT', '/')).status).to.equal(201);
      const ds = (await c.request('POST', '/datasets', { body: { type: 'H5T_STD_I32LE', shape: [1000000] } })).json.id;
      const u = new URL(srv.url);
      await new Promise<void>((resolve) => {
        const s = net.connect(Number(u.port), u.hostname, () => {
          s.write(`PUT /datasets/${ds}/value?domain=/gone.h5 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: 4000000\r\n\r\n`);
          s.write(Buffer.alloc(1000));
          setTimeout(() => {
            s.destroy();
            resolve();
          }, 100);
        });
        s.on('error', () => undefined);
      });
      // an answer cut off after its headers keeps its status
      const big = (await c.request('POST', '/datasets', { body: { type: 'H5T_STD_I32LE', shape: [8000000] } })).json.id;
      await new Promise<void>((resolve) => {
        const s = net.connect(Number(u.port), u.hostname, () => {
          s.write(`GET /datasets/${big}/value?domain=/gone.h5 HTTP/1.1\r\nHost: localhost\r\nAccept: application/octet-stream\r\n\r\n`);
        });
        s.once('data', () => {
          s.destroy();
          resolve();
        });
        s.on('error', () => resolve());
      });
      expect((await c.get('/')).status).to.equal(200);
      const lines = await requestLines();
      expect(lines.find((j) => j.method === 'PUT' && j.route === '/datasets/:id/value')).to.include({ status: 499 });
      expect(lines.filter((j) => j.method === 'GET' && j.path === '/').map((j) => j.status)).to.deep.equal([200]);
      const cut = lines.find((j) => j.method === 'GET' && j.route === '/datasets/:id/value');
      expect(cut).to.include({ status: 200 });
      expect(cut!.bytesOut).to.be.below(32_000_000);
      const metrics = (await c.get('/metrics')).text;
      expect(metrics).to.match(/h5store_http_requests_total\{[^}]*route="\/datasets\/:id\/value"[^}]*status="499"[^}]*\} 1/);
    }));
});
