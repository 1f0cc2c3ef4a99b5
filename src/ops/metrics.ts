/**
 * Prometheus metrics (prom-client), one registry per server (docs/deploy.md, "Metrics").
 *
 * | Metric | Type | Labels |
 * |---|---|---|
 * | `h5store_http_requests_total` | counter | method, route (the matched route template, e.g. `/datasets/:id/value`), status |
 * | `h5store_http_request_duration_seconds` | histogram | method, route (until the last byte is sent) |
 * | `h5store_http_requests_in_flight` | gauge | |
 * | `h5store_http_request_bytes_total` / `h5store_http_response_bytes_total` | counter | method, route |
 * | `h5store_http_unavailable_total` | counter | route (503 answers) |
 * | `h5store_open_files` / `h5store_open_hdf5_ids` | gauge | |
 * | `h5store_lock_wait_seconds` | histogram | lock (`domain`: in-process readers-writer lock, contended waits; `file`: cross-process lock, every write) |
 * | `h5store_lock_refusals_total` | counter | lock (`file`, `hdf5`) |
 * | `h5store_parallel_chunk_reads_total` | counter | (value reads whose chunks were decoded in parallel) |
 * | `h5store_chunk_cache_reads_total` | counter | where (`decoded`: chunks decoded on the main thread and cached; `cached`: all from the cache of decoded chunks) |
 * | `h5store_chunk_cache_bytes` | gauge | (bytes of decoded chunks held) |
 * | `h5store_s3_requests_total` / `h5store_s3_fetched_bytes_total` | counter | mount, op |
 * | `h5store_build_info` | gauge (1) | version, hdf5_version, node_version, commit |
 * | `h5store_event_loop_stalls_total` | counter | (times the watchdog saw the main thread not answer for `watchdogMs`) |
 * | `h5store_worker_deaths_total` | counter | dead_worker, cause (`serve --workers N`: workers that died, told by the primary) |
 * | `nodejs_eventloop_lag_seconds` (+ `_p50`, `_p90`, `_p99`, `_max`...), `process_*`, `nodejs_*` | prom-client's default metrics | |
 */
import fs from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LIB_INFO } from '../hdf5/lib.js';
import type { StoreObserver } from '../store/session/files.js';
import type { S3Mount } from '../store/mounts/s3mount.js';
import type { Store } from '../store/store.js';
import { decodedChunks } from '../store/values/chunkCache.js';
import { cachedChunkReads, decodedChunkReads, parallelChunkReads } from '../store/values/chunked.js';
import { jsonThreadParts } from '../store/values/threadPool.js';
import { linkPagesReadAheadCount } from '../http/routes/links.js';
import { queryColumns } from '../store/values/query.js';
import { requestsInFlight } from '../http/inflight.js';
import { RequestMetrics, type RequestSample } from './requestMetrics.js';

export type { RequestSample } from './requestMetrics.js';

/** The package version (package.json beside src/ or dist/). */
export const VERSION: string = (() => {
  try {
    return (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
})();

/** Request durations, seconds: 1 ms .. 60 s. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Lock waits, seconds. */
const LOCK_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  readonly registry = new Registry();
  /** Requests, durations, bytes and 503s, aggregated per route until a scrape (requestMetrics.ts). */
  private readonly requests = new RequestMetrics(DURATION_BUCKETS);
  private readonly lockWait: Histogram<'lock'>;
  private readonly lockRefusals: Counter<'lock'>;

  /** Feeds lock waits and refusals of the store into the metrics. */
  readonly storeObserver: StoreObserver;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    for (const m of this.requests.metrics()) this.registry.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
    new Gauge({
      name: 'h5store_http_requests_in_flight',
      help: 'HTTP requests being served',
      registers,
      collect() {
        this.set(requestsInFlight());
      },
    });
    this.lockWait = new Histogram({
      name: 'h5store_lock_wait_seconds',
      help: 'Time waited for locks: domain = in-process readers-writer lock (contended waits), file = cross-process lock (every write)',
      labelNames: ['lock'],
      buckets: LOCK_BUCKETS,
      registers,
    });
    this.lockRefusals = new Counter({
      name: 'h5store_lock_refusals_total',
      help: 'Lock attempts that failed because the lock stayed held (the request then answers 503 unless it can do without): file = another h5store process, hdf5 = another program',
      labelNames: ['lock'],
      registers,
    });
    const build = new Gauge({ name: 'h5store_build_info', help: 'Build information (value 1)', labelNames: ['version', 'hdf5_version', 'node_version', 'commit'], registers });
    build.set({ version: VERSION, hdf5_version: LIB_INFO.version, node_version: process.version, commit: process.env.H5STORE_BUILD_COMMIT ?? '' }, 1);
    this.storeObserver = {
      lockWait: (lock, seconds) => this.lockWait.observe({ lock }, seconds),
      lockRefused: (lock) => this.lockRefusals.inc({ lock }),
    };
  }

  /** Worker processes of `serve --workers N` that died, by worker and cause (told by the primary). */
  private workerDeaths: { worker: number; cause: string; count: number }[] = [];
  private workerDeathsMetric: Counter<'dead_worker' | 'cause'> | undefined;

  /**
   * The deaths of the cluster's workers so far (the primary tells every worker; every worker
   * reports the same numbers, so any scrape has them).
   */
  setWorkerDeaths(deaths: { worker: number; cause: string; count: number }[]): void {
    this.workerDeaths = deaths;
    if (this.workerDeathsMetric) return;
    const self = this;
    this.workerDeathsMetric = new Counter({
      name: 'h5store_worker_deaths_total',
      help: 'Worker processes of serve --workers N that died and were restarted, by the dead worker index and cause (signal or exit code); logged by the primary with their last requests',
      labelNames: ['dead_worker', 'cause'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const d of self.workerDeaths) this.inc({ dead_worker: String(d.worker), cause: d.cause }, d.count);
      },
    });
  }

  /** Count the watchdog's stalls (ops/watchdog.ts) at scrape time. */
  bindWatchdog(stalls: () => number): void {
    new Counter({
      name: 'h5store_event_loop_stalls_total',
      help: 'Times the main thread did not answer for watchdogMs (each logged by the watchdog with what it was doing)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(stalls());
      },
    });
  }

  /** Gauges read from the store at scrape time: open files, open HDF5 ids, S3 mount counters. */
  bindStore(store: Store): void {
    const registers = [this.registry];
    new Gauge({
      name: 'h5store_open_files',
      help: 'Domain files open in libhdf5',
      registers,
      collect() {
        this.set(store.files.openFiles);
      },
    });
    new Gauge({
      name: 'h5store_open_hdf5_ids',
      help: 'HDF5 object ids open over all files (0 between requests unless one leaked)',
      registers,
      collect() {
        this.set(store.openIdCount());
      },
    });
    new Counter({
      name: 'h5store_parallel_chunk_reads_total',
      help: 'Value reads whose compressed chunks were decoded in parallel off the main thread (src/store/values/chunked.ts)',
      registers,
      collect() {
        this.reset();
        this.inc(parallelChunkReads());
      },
    });
    new Counter({
      name: 'h5store_json_thread_parts_total',
      help: 'Parts of large JSON values formatted on the value threads, off the main thread (src/store/values/threadPool.ts)',
      registers,
      collect() {
        this.reset();
        this.inc(jsonThreadParts());
      },
    });
    new Counter({
      name: 'h5store_link_pages_read_ahead_total',
      help: 'Pages of links (GET .../links with Limit) built while the client still read the page before, and kept for its next request (src/http/routes/links.ts)',
      registers,
      collect() {
        this.reset();
        this.inc(linkPagesReadAheadCount());
      },
    });
    new Counter({
      name: 'h5store_chunk_cache_reads_total',
      help: 'Value reads of highly compressed chunks decoded on the main thread and cached (decoded), or served from the cache of decoded chunks alone (cached); src/store/values/chunkCache.ts',
      labelNames: ['where'],
      registers,
      collect() {
        this.reset();
        this.inc({ where: 'decoded' }, decodedChunkReads());
        this.inc({ where: 'cached' }, cachedChunkReads());
      },
    });
    new Gauge({
      name: 'h5store_chunk_cache_bytes',
      help: 'Bytes of decoded chunks held by the cache of decoded chunks (bounded; src/store/values/chunkCache.ts)',
      registers,
      collect() {
        this.set(decodedChunks.bytes);
      },
    });
    new Gauge({
      name: 'h5store_query_column_cache_bytes',
      help: 'Bytes of table columns kept from query scans for repeated queries (bounded; src/store/values/query.ts)',
      registers,
      collect() {
        this.set(queryColumns.bytes);
      },
    });
    const s3 = store.mounts.filter((m): m is S3Mount => 'stats' in m);
    if (!s3.length) return;
    new Counter({
      name: 'h5store_s3_requests_total',
      help: 'S3 requests made by the SDK for mounts (ROS3 range requests are not counted), and files opened',
      labelNames: ['mount', 'op'],
      registers,
      collect() {
        this.reset();
        for (const m of s3) {
          this.inc({ mount: m.at, op: 'head' }, m.stats.heads);
          this.inc({ mount: m.at, op: 'list' }, m.stats.lists);
          this.inc({ mount: m.at, op: 'get_whole' }, m.stats.wholeGets);
          this.inc({ mount: m.at, op: 'open_whole' }, m.stats.wholeOpens);
          this.inc({ mount: m.at, op: 'open_ros3' }, m.stats.ros3Opens);
        }
      },
    });
    new Counter({
      name: 'h5store_s3_fetched_bytes_total',
      help: 'Bytes of whole objects fetched from S3',
      labelNames: ['mount'],
      registers,
      collect() {
        this.reset();
        for (const m of s3) this.inc({ mount: m.at }, m.stats.wholeBytes);
      },
    });
  }

  /** Record one finished request. */
  observeRequest(s: RequestSample): void {
    this.requests.observe(s);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
