#!/usr/bin/env node
/**
 * The `h5store` command.
 *
 *   h5store serve [--root DIR] [--port N] [--host ADDR] [--config FILE] [--samples] [--log-level L]
 *                 [--mount /archive=s3://bucket/prefix ...] [--s3-endpoint URL]
 *                 [--metrics-access public|user|off] [--metrics-port N]
 *   h5store samples [--root DIR]      write the sample domains and exit
 *
 * Settings also come from H5STORE_* environment variables and a JSON config file
 * (flags > environment > file > defaults; see docs/configuration.md).
 */
import { Command, Option } from 'commander';
import { loadConfig } from './config.js';

function common(cmd: Command): Command {
  return cmd
    .option('-r, --root <dir>', 'data directory (domains are files under it)')
    .option('-c, --config <file>', 'JSON config file')
    .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']));
}

const program = new Command('h5store').description('Serve HDF5 files over the HDF REST API').showHelpAfterError();

common(program.command('serve').description('start the server'))
  .option('-p, --port <port>', 'TCP port (0 picks a free one)')
  .option('-H, --host <addr>', 'address to bind')
  .option('--endpoint <url>', 'base URL used in hrefs')
  .option('--samples', 'write the sample domains under /samples when missing')
  .option('--mount <path=s3url>', 'serve an S3 prefix read-only below a path: /archive=s3://bucket/prefix (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
  .option('--s3-endpoint <url>', 'S3 endpoint URL for mounts (default: AWS)')
  .addOption(new Option('--metrics-access <who>', 'who may read GET /metrics').choices(['public', 'user', 'off']))
  .option('--metrics-port <port>', 'serve /metrics (and /healthz, /readyz) on this port instead')
  .option('--exit-with-stdin', 'exit when standard input closes (for test harnesses)')
  .action(async (opts) => {
    const config = load(opts);
    const { startServer } = await import('./main.js');
    const running = await startServer(config);
    process.stdout.write(`h5store listening on ${running.url}\n`);
    const stop = async () => {
      await running.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (opts.exitWithStdin) {
      process.stdin.on('end', stop);
      process.stdin.on('error', stop);
      process.stdin.resume();
    }
  });

common(program.command('samples').description('write the sample domains under /samples and exit')).action(async (opts) => {
  const config = load({ ...opts, samples: true });
  const { Store } = await import('./store/store.js');
  const { ensureSamples } = await import('./samples.js');
  const store = new Store({ ...config, root: config.root, mounts: [] });
  const written = await ensureSamples(store);
  store.close();
  process.stdout.write(written.length ? `wrote ${written.join(', ')}\n` : 'samples already present\n');
});

function load(opts: Record<string, unknown>) {
  try {
    return loadConfig({
      root: opts.root,
      port: opts.port,
      host: opts.host,
      endpoint: opts.endpoint,
      samples: opts.samples,
      logLevel: opts.logLevel,
      mounts: opts.mount,
      s3Endpoint: opts.s3Endpoint,
      metricsAccess: opts.metricsAccess,
      metricsPort: opts.metricsPort,
      config: opts.config as string | undefined,
    });
  } catch (e) {
    process.stderr.write(`h5store: ${(e as Error).message}\n`);
    process.exit(2);
  }
}

program.parseAsync().catch((e: Error) => {
  process.stderr.write(`h5store: ${e.message}\n`);
  process.exit(1);
});
