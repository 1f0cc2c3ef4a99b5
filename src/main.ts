/**
 * Start the server: load the store, write samples when asked, listen; close every file on
 * SIGTERM/SIGINT.
 */
import fs from 'node:fs';
import http, { type RequestListener, type Server } from 'node:http';
import type Koa from 'koa';
import type { Route } from './http/routeTable.js';
import { pino, type Logger } from 'pino';
import { createApp, routeTable } from './app.js';
import { Authenticator, authOptions, hasUsers } from './auth/authenticate.js';
import { type Config, isLoopbackHost } from './config.js';
import { configureFilters } from './hdf5/filters.js';
import { type Ops, createOps, startMetricsServer } from './http/ops.js';
import { fileLockingWarning, hdf5FileLocking } from './ops/filelocking.js';
import { Metrics } from './ops/metrics.js';
import { HDF5_FILE_LOCKING_ENV } from './hdf5/vfd.js';
import { ensureSamples } from './samples.js';
import { parseMountSpec } from './store/mounts/mountspec.js';
import type { ChangeFeed } from './store/session/changeFeed.js';
import { compressors, filterReport } from './store/objects/datasets.js';
import { Store } from './store/store.js';
import { startValueThreads } from './store/values/threadPool.js';
import { recordRequestsIn, requestsInFlight } from './http/inflight.js';
import { limitConnections } from './http/slowClients.js';
import { mapSharedFile } from './hdf5/posix.js';
import { type FlightRecorder, openFlightRecorder } from './ops/flightRecorder.js';
import { startWatchdog } from './ops/watchdog.js';

export interface Running {
  server: Server;
  store: Store;
  logger: Logger;
  /** The bound address, e.g. http://127.0.0.1:5101 */
  url: string;
  /** Metrics and readiness checks (register more with `ops.readiness.register`). */
  ops: Ops;
  /** The metrics port's address, when `metricsPort` is set. */
  metricsUrl?: string;
  /** The application (a worker serves it on its private socket too). */
  app: Koa;
  close(): Promise<void>;
  /**
   * Stop accepting connections on the public ports and wait until the requests in flight are
   * answered (idle keep-alive connections are closed; after `timeoutMs` every connection is).
   * The store stays open: `close()` closes it.
   */
  drain(timeoutMs: number): Promise<void>;
}

/** How a worker of `serve --workers N` (src/cluster.ts) starts its server. */
export interface WorkerOptions {
  /** The worker's index: a `worker` label on every metric, and only worker 0 scans for interrupted writes. */
  index: number;
  /** The request listener of the public port, given the app's and its route table (forwards writes to their owner). */
  listener(app: RequestListener, routes: Route[]): RequestListener;
  /** What the workers tell each other (store/session/changeFeed.ts). */
  changes?: ChangeFeed;
  /** The number the workers share in their file locks (store/session/xlock.ts). */
  family?: number;
  /** Where the worker's flight record lives (ops/flightRecorder.ts): the primary reads it when the worker dies. */
  recordFile?: string;
}

/**
 * Start h5store with a configuration.
 * @throws Error when the port cannot be bound or the data directory cannot be created.
 */
export async function startServer(config: Config, logger: Logger = pino({ level: config.logLevel }), worker?: WorkerOptions): Promise<Running> {
  configureFilters(config.pluginPath);
  // vfd.ts took HDF5_USE_FILE_LOCKING out of the environment (the store locks files itself).
  const locking = fileLockingWarning(hdf5FileLocking({ HDF5_USE_FILE_LOCKING: HDF5_FILE_LOCKING_ENV }));
  if (locking) logger.warn({ HDF5_USE_FILE_LOCKING: HDF5_FILE_LOCKING_ENV }, locking);
  // the AWS SDK takes a fifth of the server's start to load: only a server with mounts loads it
  const { S3Mount } = config.mounts.length ? await import('./store/mounts/s3mount.js') : { S3Mount: undefined };
  const mounts = config.mounts.map(
    (m) =>
      new S3Mount!(parseMountSpec(m), {
        endpoint: config.s3Endpoint,
        region: config.s3Region,
        accessKeyId: config.s3AccessKeyId,
        secretAccessKey: config.s3SecretAccessKey,
        sessionToken: config.s3SessionToken,
        pathStyle: config.s3PathStyle,
        revalidateMs: config.s3RevalidateMs,
        wholeObjectBytes: config.s3WholeObjectBytes,
        idleCloseMs: config.s3IdleCloseMs,
      }),
  );
  const metrics = new Metrics();
  if (worker) metrics.registry.setDefaultLabels({ worker: String(worker.index) });
  // the last requests, where they outlive the process (and where the watchdog reads them)
  let record: FlightRecorder | undefined;
  try {
    record = openFlightRecorder(mapSharedFile, worker?.recordFile);
    recordRequestsIn(record);
  } catch (e) {
    logger.warn({ err: (e as Error).message }, 'no flight record of requests (they will not be named after a crash)');
  }
  if (config.watchdogMs > 0) {
    const dog = startWatchdog({ stallMs: config.watchdogMs, recordFd: record?.fd, bindings: { ...logger.bindings(), pid: process.pid } });
    metrics.bindWatchdog(dog.stalls);
  }
  const store = new Store({
    root: config.root,
    idleCloseMs: config.idleCloseMs,
    maxOpenFiles: config.maxOpenFiles,
    defaultOwner: config.defaultOwner,
    pageBytes: config.pageBytes,
    maxPoints: config.maxPoints,
    maxChunkBytes: config.maxChunkBytes,
    maxDatasetBytes: config.maxDatasetBytes,
    maxSelectionBytes: config.maxSelectionBytes,
    maxAttributeBytes: config.maxAttributeBytes,
    maxBroadcastBytes: config.maxBroadcastBytes,
    maxInitializerBytes: config.maxInitializerBytes,
    parallelChunkMinBytes: config.parallelChunkMinBytes,
    parallelChunkSpareCores: config.parallelChunkSpareCores,
    maxObjectsPerAnswer: config.maxObjectsPerAnswer,
    maxPathDepth: config.maxPathDepth,
    lockWaitMs: config.lockWaitMs,
    fsync: config.fsync,
    statCacheMs: config.statCacheMs,
    readLeaseMs: config.readLeaseMs,
    readHoldMs: config.readHoldMs,
    readGapMs: config.readGapMs,
    eventPollMs: config.eventPollMs,
    maxEventStreams: config.maxEventStreams,
    log: logger,
    observer: metrics.storeObserver,
    mounts,
    droppedInPrivate: hasUsers(config) && !config.defaultPublic,
    changes: worker?.changes,
    lockFamily: worker?.family,
  });
  // what libhdf5 can compress and decode with, asked once now (GET / and /about answer it):
  // never later while a long call runs on the HDF5 worker thread (heavy.ts), where the question
  // would fail and the filter list be kept without the filters libhdf5 has
  compressors();
  filterReport();
  const ops = createOps(store, metrics);
  if (config.samples) {
    const written = await ensureSamples(store);
    if (written.length) logger.info({ domains: written }, 'wrote sample domains');
  }
  const auth = new Authenticator(authOptions(config));
  if (config.usersFile && !fs.existsSync(config.usersFile)) {
    // not fatal (the file is read again when it appears), but nobody can sign in until it exists
    logger.warn(
      { usersFile: config.usersFile },
      `the users file ${config.usersFile} does not exist: no user can sign in until it does. Add the first user with: h5store user add admin --users-file ${config.usersFile}`,
    );
  }
  if (!hasUsers(config)) {
    if (isLoopbackHost(config.host)) {
      logger.info(`no users file: single-user mode, every request may do everything (only from this machine: ${config.host}); serve other machines with --host 0.0.0.0 and --users-file FILE`);
    } else {
      logger.warn(`no users file while listening on ${config.host}: every request is the user "default", read-only; add users (h5store user add NAME --users-file FILE) and pass --users-file to allow writes`);
    }
  }
  const deps = { config, store, logger, auth, startTime: Math.floor(Date.now() / 1000) };
  const app = createApp(deps, ops);
  const routes = routeTable(deps);
  // headersTimeout is checked every second, not every 30 s (slowloris; http/slowClients.ts)
  const serverOpts = { connectionsCheckingInterval: 1000 };
  const server = worker ? http.createServer(serverOpts, worker.listener(app.callback(), routes)) : http.createServer(serverOpts, app.callback());
  limitConnections(server, config);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const metricsServer = config.metricsPort !== undefined ? await startMetricsServer(ops, config, logger, store.paths.root) : undefined;
  logger.info(
    { url, root: store.paths.root, hdf5: store.libraryVersion, fsync: config.fsync, metricsUrl: metricsServer?.url, mounts: store.mounts.map((m) => `${m.at}=${m.source}`) },
    'h5store listening',
  );
  // The threads that decode chunks and format large JSON values start (and compile their code)
  // at the first second without a request in flight: warm before they are needed, not competing
  // with the first requests for the cores. A job before that starts them itself.
  const warmUp = setInterval(() => {
    if (requestsInFlight() > 0) return;
    clearInterval(warmUp);
    try {
      startValueThreads();
    } catch (e) {
      // jobs start them again when needed, and format or decode on this thread if they cannot
      logger.warn({ err: (e as Error).message }, 'could not start the value threads');
    }
  }, 1000);
  warmUp.unref();
  // Writes interrupted by a crash are rolled back on first use of their file anyway; this scan
  // repairs them (and logs it) for other programs too, without delaying the first request.
  if (!worker || worker.index === 0) void store.recoverInterrupted().then(
    (n) => n > 0 && logger.warn({ repaired: n }, 'repaired files whose writes a crash interrupted'),
    (e: Error) => logger.warn({ err: e.message }, 'start-up scan for interrupted writes failed'),
  );
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    clearInterval(warmUp);
    const closing = [server, ...(metricsServer ? [metricsServer.server] : [])].map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    );
    await Promise.all(closing);
    // a libhdf5 call still running on the worker thread (heavy.ts) ends first
    await store.closeWhenIdle();
  };
  const drain = async (timeoutMs: number) => {
    const t0 = performance.now();
    const servers = [server, ...(metricsServer ? [metricsServer.server] : [])];
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            // A connection that finishes its request while we wait is closed at the next tick.
            const tick = setInterval(() => {
              s.closeIdleConnections();
              if (performance.now() - t0 > timeoutMs) s.closeAllConnections();
            }, 50);
            s.close(() => {
              clearInterval(tick);
              resolve();
            });
            s.closeIdleConnections();
          }),
      ),
    );
  };
  return { server, store, logger, url, ops, metricsUrl: metricsServer?.url, app, close, drain };
}
