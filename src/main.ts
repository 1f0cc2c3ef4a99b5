/**
 * Start the server: load the store, write samples when asked, listen; close every file on
 * SIGTERM/SIGINT.
 */
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { addPluginPath } from './hdf5/lib.js';
import { HDF5_FILE_LOCKING_ENV } from './hdf5/vfd.js';
import { ensureSamples } from './samples.js';
import { Store } from './store/store.js';

export interface Running {
  server: Server;
  store: Store;
  logger: Logger;
  /** The bound address, e.g. http://127.0.0.1:5101 */
  url: string;
  close(): Promise<void>;
}

/**
 * Start h5store with a configuration.
 * @throws Error when the port cannot be bound or the data directory cannot be created.
 */
export async function startServer(config: Config, logger: Logger = pino({ level: config.logLevel })): Promise<Running> {
  if (config.pluginPath) addPluginPath(config.pluginPath);
  const store = new Store({
    root: config.root,
    idleCloseMs: config.idleCloseMs,
    maxOpenFiles: config.maxOpenFiles,
    defaultOwner: config.defaultOwner,
    pageBytes: config.pageBytes,
    maxPoints: config.maxPoints,
    lockWaitMs: config.lockWaitMs,
    fsync: config.fsync,
    log: logger,
  });
  if (HDF5_FILE_LOCKING_ENV !== undefined) {
    logger.info({ HDF5_USE_FILE_LOCKING: HDF5_FILE_LOCKING_ENV }, 'ignoring HDF5_USE_FILE_LOCKING: h5store locks served files itself, only while a request uses them');
  }
  if (config.samples) {
    const written = await ensureSamples(store);
    if (written.length) logger.info({ domains: written }, 'wrote sample domains');
  }
  const app = createApp({ config, store, logger, startTime: Math.floor(Date.now() / 1000) });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, root: store.paths.root, hdf5: store.libraryVersion, fsync: config.fsync }, 'h5store listening');
  // Writes interrupted by a crash are rolled back on first use of their file anyway; this scan
  // repairs them (and logs it) for other programs too, without delaying the first request.
  void store.recoverInterrupted().then(
    (n) => n > 0 && logger.warn({ repaired: n }, 'repaired files whose writes a crash interrupted'),
    (e: Error) => logger.warn({ err: e.message }, 'start-up scan for interrupted writes failed'),
  );
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    store.close();
  };
  return { server, store, logger, url, close };
}
