#!/usr/bin/env node
/**
 * The `h5store` command.
 *
 *   h5store serve [DIR] [--root DIR] [--port N] [--host ADDR] [--config FILE] [--users-file FILE] ...
 *                 [--mount /archive=s3://bucket/prefix ...] [--s3-endpoint URL]
 *                 [--metrics-access public|user|off] [--metrics-port N] [--workers N]
 *   h5store samples [--root DIR]          write the sample domains and exit
 *   h5store repair DOMAIN [--root DIR] [--force]   clear what a crashed writer left in a domain file
 *   h5store user add|remove|passwd NAME    users (password from a prompt, or stdin when piped)
 *   h5store user list
 *   h5store group add GROUP USER... | group remove GROUP [USER...] | group list
 *   h5store token add USER [--days N] [--label TEXT] | token list [USER] | token revoke ID
 *
 * Settings also come from H5STORE_* environment variables and a JSON config file
 * (flags > environment > file > defaults; see docs/configuration.md). The account commands use
 * the same users file as `serve` (`--users-file`, H5STORE_USERS_FILE, or `usersFile` in the
 * config file).
 */
import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { loadConfig } from './config.js';

/** How long `serve` (one process) may take to close on SIGINT/SIGTERM before it exits anyway, ms. */
const STOP_DEADLINE_MS = 10_000;

function common(cmd: Command): Command {
  return cmd
    .option('-r, --root <dir>', 'data directory (domains are files under it)')
    .option('-c, --config <file>', 'JSON config file')
    .option('--users-file <file>', 'users, groups and API tokens (JSON)')
    .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']));
}

const program = new Command('h5store').description('Serve HDF5 files over the HDF REST API').showHelpAfterError();

common(program.command('serve').argument('[root]', 'data directory (the same as --root)').description('start the server'))
  .option('-p, --port <port>', 'TCP port (0 picks a free one)')
  .option('-H, --host <addr>', 'address to bind (default 127.0.0.1; 0.0.0.0 for every interface)')
  .option('--endpoint <url>', 'base URL used in hrefs')
  .option('--admin-user <name>', 'the user who passes every ACL check (default admin)')
  .option('--default-acl <flags>', 'flags of users with no ACL entry, e.g. read, all, none')
  .option('--default-public', 'new domains are readable by everyone')
  .option('--cors-origins <list>', 'origins allowed to call the API from other sites ("*" for any, without credentials)')
  .option('--allowed-hosts <list>', 'names (Host) the server answers to besides loopback names ("*" for any; default: any when bound to a non-loopback address)')
  .option('--samples', 'write the sample domains under /samples when missing')
  .option('--mount <path=s3url>', 'serve an S3 prefix read-only below a path: /archive=s3://bucket/prefix (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
  .option('--s3-endpoint <url>', 'S3 endpoint URL for mounts (default: AWS)')
  .addOption(new Option('--metrics-access <who>', 'who may read GET /metrics').choices(['public', 'user', 'off']))
  .option('--metrics-port <port>', 'serve /metrics (and /healthz, /readyz) on this port instead')
  .option('-w, --workers <n>', 'processes serving the port: reads on all of them, writes to a domain in one (default: one per core; 1: a single process)')
  .option('--exit-with-stdin', 'exit when standard input closes (for test harnesses)')
  .action(async (rootArg: string | undefined, opts) => {
    if (rootArg !== undefined && opts.root !== undefined && opts.root !== rootArg) fail(`two data directories given: ${rootArg} and --root ${opts.root}`);
    const config = load({ ...opts, root: opts.root ?? rootArg });
    if (cluster.isWorker) {
      await (await import('./cluster.js')).runWorker(config);
      return;
    }
    if (config.workers > 1) {
      await (await import('./cluster.js')).runPrimary(config, { exitWithStdin: !!opts.exitWithStdin });
      return;
    }
    const { startServer } = await import('./main.js');
    const running = await startServer(config);
    process.stdout.write(`h5store listening on ${running.url}\n`);
    const stop = async () => {
      // closing ends every connection and closes every file at once; should it not finish (a
      // connection the HTTP server does not let go of), the process still ends
      const deadline = setTimeout(() => {
        running.logger.error({ afterMs: STOP_DEADLINE_MS }, 'shutdown did not finish in time: exiting anyway');
        process.exit(1);
      }, STOP_DEADLINE_MS);
      deadline.unref();
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

common(program.command('repair <domain>').description('repair a domain file a crashed writer left: clear its superblock status flags (h5clear -s), the stale lock of an older h5store, an interrupted write (never done by the server itself)'))
  .option('--quiet-ms <ms>', 'the file must not change for this long first (a program still writing it changes it)', '2000')
  .option('--force', 'repair even if the file changes meanwhile (only when no program has it open)')
  .action(
    run(async (domain: string, opts) => {
      const config = load(opts);
      const quietMs = Number(opts.quietMs);
      if (!Number.isFinite(quietMs) || quietMs < 0) throw new Error('--quiet-ms must be a number of milliseconds');
      const { pino } = await import('pino');
      const { Store } = await import('./store/store.js');
      // logged like the server's own lines (JSON on stderr), so the repair shows in the same logs
      const log = pino({ level: config.logLevel === 'silent' ? 'silent' : 'info' }, pino.destination(2));
      const store = new Store({ ...config, root: config.root, mounts: [], log });
      try {
        const d = domain.startsWith('/') ? domain : `/${domain}`;
        const done = await store.repairDomain(d, { quietMs, force: !!opts.force });
        const what: Record<string, string> = {
          journal: 'an interrupted write rolled back',
          'legacy-lock': "an older h5store's stale lock removed, EOA set to the end of file",
          'status-flags': 'superblock status flags cleared, EOA set to the end of file',
        };
        process.stdout.write(done.length ? `repaired ${d}: ${done.map((w) => what[w] ?? w).join('; ')}\n` : `${d}: nothing to repair\n`);
      } finally {
        store.close();
      }
    }),
  );

// ---------------------------------------------------------------------------------------------
// Accounts

/** The users file for an account command. */
function usersFileOf(opts: Record<string, unknown>): string {
  const file = load(opts).usersFile;
  if (!file) fail('No users file: give --users-file FILE (or H5STORE_USERS_FILE, or usersFile in the config file)');
  return file;
}

function fail(msg: string): never {
  process.stderr.write(`h5store: ${msg}\n`);
  process.exit(2);
}

/** Run an account command, printing its error (not a stack) and exiting with 2 on failure. */
function run(fn: (...args: any[]) => Promise<void> | void) {
  return async (...args: any[]) => {
    try {
      await fn(...args);
    } catch (e) {
      fail((e as Error).message);
    }
  };
}

const accountOpts = (cmd: Command) => cmd.option('-c, --config <file>', 'JSON config file').option('--users-file <file>', 'users file');
const admin = () => import('./auth/admin.js');
const date = (s: number | null) => (s === null ? 'never' : new Date(s * 1000).toISOString());

const user = program.command('user').description('manage users (passwords are read from a prompt, or from stdin when piped)');
accountOpts(user.command('add <name>').description('add a user')).action(
  run(async (name: string, opts) => {
    const file = usersFileOf(opts);
    const a = await admin();
    await a.userAdd(file, name, await a.askPassword());
    process.stdout.write(`added user ${name}\n`);
  }),
);
accountOpts(user.command('passwd <name>').description("change a user's password")).action(
  run(async (name: string, opts) => {
    const file = usersFileOf(opts);
    const a = await admin();
    await a.userPasswd(file, name, await a.askPassword('New password: '));
    process.stdout.write(`changed the password of ${name}\n`);
  }),
);
accountOpts(user.command('remove <name>').description('remove a user (and their tokens)')).action(
  run(async (name: string, opts) => {
    await (await admin()).userRemove(usersFileOf(opts), name);
    process.stdout.write(`removed user ${name}\n`);
  }),
);
accountOpts(user.command('list').description('list users and their groups')).action(
  run(async (opts) => {
    for (const u of (await admin()).userList(usersFileOf(opts))) process.stdout.write(`${u.name}${u.groups.length ? `\tgroups: ${u.groups.join(',')}` : ''}\n`);
  }),
);

const group = program.command('group').description('manage groups (ACL entries g:<group> apply to their members)');
accountOpts(group.command('add <group> <users...>').description('add users to a group')).action(
  run(async (g: string, users: string[], opts) => {
    await (await admin()).groupAdd(usersFileOf(opts), g, users);
    process.stdout.write(`group ${g}: added ${users.join(', ')}\n`);
  }),
);
accountOpts(group.command('remove <group> [users...]').description('remove users from a group, or the group')).action(
  run(async (g: string, users: string[], opts) => {
    await (await admin()).groupRemove(usersFileOf(opts), g, users ?? []);
    process.stdout.write(users?.length ? `group ${g}: removed ${users.join(', ')}\n` : `removed group ${g}\n`);
  }),
);
accountOpts(group.command('list').description('list groups and members')).action(
  run(async (opts) => {
    for (const [g, m] of Object.entries((await admin()).groupList(usersFileOf(opts)))) process.stdout.write(`${g}\t${m.join(',')}\n`);
  }),
);

const token = program.command('token').description('manage API tokens (sent as "Authorization: Bearer <token>"; h5pyd: api key)');
accountOpts(token.command('add <user>').description('make a token (printed once; only its hash is kept)'))
  .option('--days <n>', 'expire after this many days')
  .option('--label <text>', 'a note to recognise the token by')
  .action(
    run(async (u: string, opts) => {
      const days = opts.days === undefined ? undefined : Number(opts.days);
      if (days !== undefined && !(days > 0)) throw new Error('--days must be a positive number');
      const t = await (await admin()).tokenAdd(usersFileOf(opts), u, { days, label: opts.label });
      process.stderr.write(`token ${t.id} for ${u}, expires ${date(t.expires)}; it is shown only now:\n`);
      process.stdout.write(`${t.token}\n`);
    }),
  );
accountOpts(token.command('list [user]').description('list tokens (ids, never the tokens)')).action(
  run(async (u: string | undefined, opts) => {
    for (const t of (await admin()).tokenList(usersFileOf(opts), u)) {
      process.stdout.write(`${t.id}\t${t.user}\tcreated ${date(t.created)}\texpires ${date(t.expires)}${t.label ? `\t${t.label}` : ''}\n`);
    }
  }),
);
accountOpts(token.command('revoke <id>').description('revoke a token (takes effect at once)')).action(
  run(async (id: string, opts) => {
    await (await admin()).tokenRevoke(usersFileOf(opts), id);
    process.stdout.write(`revoked token ${id}\n`);
  }),
);

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
      workers: opts.workers,
      usersFile: opts.usersFile,
      adminUser: opts.adminUser,
      defaultAcl: opts.defaultAcl,
      defaultPublic: opts.defaultPublic,
      corsOrigins: opts.corsOrigins,
      allowedHosts: opts.allowedHosts,
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
