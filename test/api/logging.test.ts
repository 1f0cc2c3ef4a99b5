/** One log line per request with method, path, status and milliseconds (pino JSON on stdout). */
import { expect } from 'chai';
import { Client, startServer, tempRoot } from '../helpers/server.js';

describe('request log', function () {
  this.timeout(30000);
  it('writes method, path, status and ms for every request, errors included', async () => {
    const srv = await startServer({ root: tempRoot(), args: ['--log-level', 'info'] });
    let out = '';
    srv.proc.stdout!.on('data', (b) => (out += b.toString()));
    try {
      const c = new Client(srv.url, '/nope.h5');
      await c.get('/about');
      await c.get('/');
      await new Promise((r) => setTimeout(r, 300));
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((j) => j.msg === 'request');
      const about = lines.find((j) => j.path === '/about');
      expect(about).to.include({ method: 'GET', status: 200 });
      expect(about.ms).to.be.a('number');
      expect(lines.find((j) => j.path === '/')).to.include({ method: 'GET', status: 404 });
    } finally {
      await srv.stop();
    }
  });
});
