/**
 * The per-request HTTP metrics, aggregated as they arrive and turned into Prometheus series only
 * when `/metrics` is scraped (issue #9: prom-client validates and hashes the label set of every
 * `inc`/`observe`, about 4% of a small GET's CPU; here a request costs one Map lookup and a few
 * additions).
 *
 * The series are the same as prom-client's Counter/Histogram would give (docs/deploy.md, "Metrics"):
 * - `h5store_http_requests_total{method,route,status}` (counter)
 * - `h5store_http_request_duration_seconds{method,route}` (histogram: `_bucket{le}`, `_sum`, `_count`)
 * - `h5store_http_request_bytes_total{method,route}`, `h5store_http_response_bytes_total{method,route}`
 *   (counters; a series appears once a request of that route moved bytes)
 * - `h5store_http_unavailable_total{route}` (counter of 503 answers)
 * Each is an object with prom-client's metric interface (`name`, `help`, `type`, `get()`), so a
 * prom-client `Registry` registers and renders it like its own metrics.
 */

/** One finished request, as the HTTP middleware reports it. */
export interface RequestSample {
  method: string;
  /** Route template (`/datasets/:id/value`), or `(unmatched)`. */
  route: string;
  status: number;
  /** Until the last byte of the response. */
  seconds: number;
  bytesIn: number;
  bytesOut: number;
}

/** What a prom-client Registry reads from a metric (prom-client 15 `MetricObjectWithValues`). */
export interface MetricValues {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { metricName?: string; labels: Record<string, string | number>; value: number }[];
}

/** A metric as a prom-client Registry takes it (`registry.registerMetric`). */
export interface RegistrableMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<MetricValues>;
  reset(): void;
}

/** Totals of one (method, route). */
interface RouteTotals {
  method: string;
  route: string;
  /** Requests per status code. */
  statuses: Map<number, number>;
  /** Observations per duration bucket (not cumulative; the last slot is above the last bound). */
  buckets: Float64Array;
  seconds: number;
  count: number;
  bytesIn: number;
  bytesOut: number;
  unavailable: number;
}

/**
 * Aggregates request samples per method and route.
 * @param bounds the duration histogram's upper bounds in seconds, ascending (`le` labels)
 */
export class RequestMetrics {
  private readonly byRoute = new Map<string, RouteTotals>();

  constructor(private readonly bounds: readonly number[]) {}

  /** Record one finished request (O(1) but the bucket search, at most `bounds.length` compares). */
  observe(s: RequestSample): void {
    const key = s.method + ' ' + s.route;
    let t = this.byRoute.get(key);
    if (t === undefined) {
      t = { method: s.method, route: s.route, statuses: new Map(), buckets: new Float64Array(this.bounds.length + 1), seconds: 0, count: 0, bytesIn: 0, bytesOut: 0, unavailable: 0 };
      this.byRoute.set(key, t);
    }
    t.statuses.set(s.status, (t.statuses.get(s.status) ?? 0) + 1);
    let b = 0;
    while (b < this.bounds.length && s.seconds > this.bounds[b]) b++;
    t.buckets[b]++;
    t.seconds += s.seconds;
    t.count++;
    if (s.bytesIn > 0) t.bytesIn += s.bytesIn;
    if (s.bytesOut > 0) t.bytesOut += s.bytesOut;
    if (s.status === 503) t.unavailable++;
  }

  /** The five metrics above, for `registry.registerMetric`. */
  metrics(): RegistrableMetric[] {
    const all = () => [...this.byRoute.values()];
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValues['values']): RegistrableMetric => ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => this.byRoute.clear(),
    });
    return [
      metric('h5store_http_requests_total', 'HTTP requests by route template, method and status', 'counter', () =>
        all().flatMap((t) => [...t.statuses].map(([status, n]) => ({ labels: { method: t.method, route: t.route, status: String(status) }, value: n }))),
      ),
      metric('h5store_http_request_duration_seconds', 'HTTP request duration until the last byte of the response, by route template and method', 'histogram', () =>
        all().flatMap((t) => {
          const labels = { method: t.method, route: t.route };
          const out: MetricValues['values'] = [];
          let cumulative = 0;
          for (let i = 0; i <= this.bounds.length; i++) {
            cumulative += t.buckets[i];
            out.push({ metricName: 'h5store_http_request_duration_seconds_bucket', labels: { le: i < this.bounds.length ? this.bounds[i] : '+Inf', ...labels }, value: cumulative });
          }
          out.push({ metricName: 'h5store_http_request_duration_seconds_sum', labels, value: t.seconds });
          out.push({ metricName: 'h5store_http_request_duration_seconds_count', labels, value: t.count });
          return out;
        }),
      ),
      metric('h5store_http_request_bytes_total', 'Request body bytes received', 'counter', () =>
        all().filter((t) => t.bytesIn > 0).map((t) => ({ labels: { method: t.method, route: t.route }, value: t.bytesIn })),
      ),
      metric('h5store_http_response_bytes_total', 'Response bytes sent (headers included)', 'counter', () =>
        all().filter((t) => t.bytesOut > 0).map((t) => ({ labels: { method: t.method, route: t.route }, value: t.bytesOut })),
      ),
      metric('h5store_http_unavailable_total', '503 answers (locks held elsewhere, S3 not answering)', 'counter', () => {
        // one series per route, whatever the methods
        const byRoute = new Map<string, number>();
        for (const t of all()) if (t.unavailable > 0) byRoute.set(t.route, (byRoute.get(t.route) ?? 0) + t.unavailable);
        return [...byRoute].map(([route, n]) => ({ labels: { route }, value: n }));
      }),
    ];
  }
}
