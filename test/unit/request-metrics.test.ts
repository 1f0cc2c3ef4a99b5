import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics, type RequestSample } from '../../src/ops/requestMetrics.js';

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The same samples through prom-client's own Counter/Histogram (what requestMetrics.ts replaces). */
async function promClientText(samples: RequestSample[]): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'h5store_http_requests_total', help: 'HTTP requests by route template, method and status', labelNames: ['method', 'route', 'status'], registers });
  const duration = new Histogram({ name: 'h5store_http_request_duration_seconds', help: 'HTTP request duration until the last byte of the response, by route template and method', labelNames: ['method', 'route'], buckets: BOUNDS, registers });
  const bytesIn = new Counter({ name: 'h5store_http_request_bytes_total', help: 'Request body bytes received', labelNames: ['method', 'route'], registers });
  const bytesOut = new Counter({ name: 'h5store_http_response_bytes_total', help: 'Response bytes sent (headers included)', labelNames: ['method', 'route'], registers });
  const unavailable = new Counter({ name: 'h5store_http_unavailable_total', help: '503 answers (locks held elsewhere, S3 not answering)', labelNames: ['route'], registers });
  for (const s of samples) {
    const l = { method: s.method, route: s.route };
    requests.inc({ ...l, status: String(s.status) });
    duration.observe(l, s.seconds);
    if (s.bytesIn > 0) bytesIn.inc(l, s.bytesIn);
    if (s.bytesOut > 0) bytesOut.inc(l, s.bytesOut);
    if (s.status === 503) unavailable.inc({ route: s.route });
  }
  return registry.metrics();
}

async function aggregatedText(samples: RequestSample[]): Promise<string> {
  const registry = new Registry();
  const m = new RequestMetrics(BOUNDS);
  for (const x of m.metrics()) registry.registerMetric(x as unknown as Parameters<Registry['registerMetric']>[0]);
  for (const s of samples) m.observe(s);
  return registry.metrics();
}

const sorted = (text: string) => text.split('\n').filter(Boolean).sort();

describe('request metrics (aggregated per route, rendered at scrape time)', () => {
  const s = (method: string, route: string, status: number, seconds: number, bytesIn = 0, bytesOut = 100): RequestSample => ({ method, route, status, seconds, bytesIn, bytesOut });
  const cases: [string, RequestSample[]][] = [
    ['no requests', []],
    ['one request', [s('GET', '/groups/:id', 200, 0.0004)]],
    ['bucket bounds are inclusive (le)', [s('GET', '/about', 200, 0.001), s('GET', '/about', 200, 0.0025), s('GET', '/about', 200, 0.00251), s('GET', '/about', 200, 60), s('GET', '/about', 200, 61)]],
    [
      'several routes, methods and statuses; bytes only where moved; 503s per route',
      [
        s('GET', '/datasets/:id/value', 200, 0.02, 0, 4096),
        s('PUT', '/datasets/:id/value', 200, 0.3, 1 << 20, 120),
        s('PUT', '/datasets/:id/value', 503, 0.001, 10, 0),
        s('GET', '/datasets/:id/value', 503, 0.002, 0, 90),
        s('GET', '(unmatched)', 404, 0.0001, 0, 0),
        s('DELETE', '/groups/:id', 410, 0.004),
      ],
    ],
  ];
  for (const [name, samples] of cases) {
    it(`gives the series prom-client gives: ${name}`, async () => {
      expect(sorted(await aggregatedText(samples))).to.deep.equal(sorted(await promClientText(samples)));
    });
  }

  it('reset() forgets everything', async () => {
    const registry = new Registry();
    const m = new RequestMetrics(BOUNDS);
    for (const x of m.metrics()) registry.registerMetric(x as unknown as Parameters<Registry['registerMetric']>[0]);
    m.observe(s('GET', '/about', 200, 0.01));
    registry.resetMetrics();
    expect(await registry.metrics()).not.to.include('route="/about"');
  });
});
