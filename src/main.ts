/**
 * Start the server: load the store, write samples when asked, listen; close every file on
 * SIGTERM/SIGINT.
 */
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { createApp } from './app.js';
import { Authenticator, authOptions } from './auth/authenticate.js';
import { type Config, isLoopbackHost } from './config.js';
import { addPluginPath } from './hdf5/lib.js';
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
    maxChunkBytes: config.maxChunkBytes,
    maxDatasetBytes: config.maxDatasetBytes,
    maxSelectionBytes: config.maxSelectionBytes,
    maxAttributeBytes: config.maxAttributeBytes,
    maxBroadcastBytes: config.maxBroadcastBytes,
  });
  if (config.samples) {
    const written = await ensureSamples(store);
    if (written.length) logger.info({ domains: written }, 'wrote sample domains');
  }
  const auth = new Authenticator(authOptions(config));
  if (!config.usersFile) {
    if (isLoopbackHost(config.host)) {
      logger.info(`no users file: single-user mode, every request may do everything (only from this machine: ${config.host}); serve other machines with --host 0.0.0.0 and --users-file FILE`);
    } else {
      logger.warn(`no users file while listening on ${config.host}: every request is the user "default", read-only; add users (h5store user add NAME --users-file FILE) and pass --users-file to allow writes`);
    }
  }
  const app = createApp({ config, store, logger, auth, startTime: Math.floor(Date.now() / 1000) });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, root: store.paths.root, hdf5: store.libraryVersion }, 'h5store listening');
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
