/**
 * Typed configuration, validated once: command-line flags > environment variables > config file
 * (JSON) > defaults. See docs/configuration.md for every setting.
 */
import fs from 'node:fs';
import os from 'node:os';
import { z } from 'zod';
import { parseMountSpecs } from './store/mounts/mountspec.js';

const MiB = 1024 * 1024;

export const ConfigSchema = z
  .object({
    /** Data directory: domains are files under it, folders are directories. */
    root: z.string().min(1).default('./data'),
    port: z.coerce.number().int().min(0).max(65535).default(5101),
    host: z.string().min(1).default('127.0.0.1'),
    /**
     * Processes serving the port (`serve --workers N`, src/cluster.ts): reads are answered by
     * whichever gets the connection, writes by the one that owns the domain. Default: one per core.
     */
    workers: z.coerce.number().int().min(1).max(256).default(() => os.availableParallelism()),
    /** Base URL used in `hrefs` (default: from the request's Host header). */
    endpoint: z.string().url().optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Write the sample domains (/samples/...) into the data directory when missing. */
    samples: z.coerce.boolean().default(false),
    /** Close a file handle after this many ms without requests (lets h5py open it for writing). */
    idleCloseMs: z.coerce.number().int().min(10).default(800),
    maxOpenFiles: z.coerce.number().int().min(1).default(256),
    /**
     * Longest wait (ms) for a file that another process holds (another h5store process writing
     * it, h5py having it open for writing) before a request gets 503 with Retry-After.
     */
    lockWaitMs: z.coerce.number().int().min(0).default(5000),
    /**
     * `always`: a write is acknowledged only once the journal and the file are on stable storage
     * (fdatasync), so it survives a power loss. `never`: no fsync; writes still survive the death
     * of the process (kill -9) but the OS may lose the last seconds on a power loss.
     */
    fsync: z.enum(['always', 'never']).default('always'),
    /**
     * How long (ms) a read reuses the stat of a domain path taken by another request (0: never).
     * Changes by this process are always seen at once; a file replaced or deleted behind the
     * server's back at most this much later.
     */
    statCacheMs: z.coerce.number().int().min(0).max(1000).default(2),
    /**
     * How long (ms) the shared lock of a file is kept after its last read ended, so a stream of
     * reads takes and checks it once instead of per request (0: released at once). Another
     * h5store process that wants to write the file makes it go at once; h5py cannot open the
     * file for writing while it is held.
     */
    readLeaseMs: z.coerce.number().int().min(0).max(10_000).default(0),
    /**
     * Longest time (ms) the shared lock of a file is held in one piece while reads continue
     * (the lease included); then it is let go for a gap once the reads in flight end, so h5py
     * (which tries its lock once and fails) can open the file for writing between reads (issue
     * #26 item 3). 0: no limit.
     */
    readHoldMs: z.coerce.number().int().min(0).max(10_000).default(10),
    /** The gap (ms) between two holds of a file's shared lock when one reached `readHoldMs`. */
    readGapMs: z.coerce.number().int().min(0).max(1000).default(1),
    /**
     * How often (ms) a domain that clients follow (`GET /events`) is looked at for changes other
     * programs make (this server's own writes are told at once).
     */
    eventPollMs: z.coerce.number().int().min(10).max(60_000).default(100),
    /** Change feeds (`GET /events`) one process serves at once; more answer 503. */
    maxEventStreams: z.coerce.number().int().min(0).max(100_000).default(1000),
    /**
     * The watchdog (ops/watchdog.ts): when the main thread has not answered for this long (ms), a
     * thread of its own logs what it is doing (libhdf5 call, requests in flight); 0: no watchdog.
     */
    watchdogMs: z.coerce.number().int().min(0).default(2000),
    /** Bytes per libhdf5 read/write page; the event loop runs between pages. */
    pageBytes: z.coerce.number().int().min(4096).default(4 * MiB),
    /** Largest JSON value response, counted in binary bytes of the selection (413 above). */
    maxJsonValueBytes: z.coerce.number().int().min(1024).default(64 * MiB),
    /**
     * Answers of at least this many bytes are compressed (brotli or gzip) for clients that accept
     * it (`Accept-Encoding`), JSON and other text; smaller ones never (0: never compress). Binary
     * values and file downloads are never compressed.
     */
    compressMinBytes: z.coerce.number().int().min(0).default(8 * 1024),
    /** Largest JSON request body. */
    maxJsonBodyBytes: z.coerce.number().int().min(1024).default(100 * MiB),
    /** Largest binary request body (dataset value writes). */
    maxBinaryBodyBytes: z.coerce.number().int().min(1024).default(16 * 1024 * MiB),
    /** Binary bodies above this size are spooled to a temporary file and written page by page. */
    spoolBodyBytes: z.coerce.number().int().min(1024).default(256 * MiB),
    /**
     * Largest request body of an anonymous request on a server with users (issue #24 item 7):
     * who may send more logs in first.
     */
    maxAnonymousBodyBytes: z.coerce.number().int().min(0).default(1 * MiB),
    /**
     * Most bytes of request bodies held in memory at once, over all requests (issue #24 item 10;
     * JSON bodies count twice: text and value). A binary value body beyond it is spooled to a
     * temporary file; any other body gets 503 with Retry-After.
     */
    bodyMemoryBytes: z.coerce.number().int().min(1 * MiB).default(512 * MiB),
    /** Most bytes of spooled request bodies on disk at once; beyond, 503 with Retry-After. */
    spoolBodyLimitBytes: z.coerce.number().int().min(1 * MiB).default(64 * 1024 * MiB),
    /** Longest wait for a request's headers (ms; Node's `headersTimeout`), then the connection is closed. */
    headersTimeoutMs: z.coerce.number().int().min(1000).default(10_000),
    /**
     * While a body is read: longest wait for its next bytes (ms), and the time after which it
     * must average `minBodyBytesPerSecond`; else 408 and the connection is closed (0: no rule).
     */
    bodyTimeoutMs: z.coerce.number().int().min(0).default(10_000),
    minBodyBytesPerSecond: z.coerce.number().int().min(0).default(1024),
    /**
     * Per-user limits (issue #24 item 11; http/userLimits.ts), none for the admin or in
     * single-user mode, 0 for none: requests per second (per client address for anonymous
     * requests), domains and folders created per hour, request-body bytes per hour. Beyond: 429.
     */
    userRequestsPerSecond: z.coerce.number().int().min(0).default(1000),
    userDomainsPerHour: z.coerce.number().int().min(0).default(500),
    userBodyBytesPerHour: z.coerce.number().int().min(0).default(256 * 1024 * MiB),
    /**
     * Addresses of reverse proxies in front of the server (comma-separated): for requests that
     * come through one, the client's address (per-address limits, logs) is the last address of
     * `X-Forwarded-For` that is not a listed proxy. Empty: the header is never read.
     */
    trustedProxies: z.string().default(''),
    /** Most connections open at once (0: no limit); more are closed as they arrive. */
    maxConnections: z.coerce.number().int().min(0).default(4096),
    /**
     * Most connections open at once from one client address (0: no limit). Behind a reverse
     * proxy every connection comes from the proxy: raise it above the proxy's, or 0.
     */
    maxConnectionsPerAddress: z.coerce.number().int().min(0).default(256),
    /**
     * Pace each streamed response, while other requests are being served, to at most this many
     * bytes per second (0: no limit; a read served alone is never paced). Over a
     * real network the link is slower; on loopback an unpaced stream can take both cores of a
     * small machine and starve every other request (measured: 60 ms stalls at 4.4 GB/s).
     */
    maxStreamBytesPerSec: z.coerce.number().int().min(0).default(2_000_000_000),
    /** Largest number of points / coordinates in one selection. */
    maxPoints: z.coerce.number().int().min(1).default(10_000_000),
    /** Largest chunk of a dataset created through the API (bytes; `max_chunk_size`). */
    maxChunkBytes: z.coerce.number().int().min(1024).default(4 * MiB),
    /** Largest dataset (extent x element size) created, resized or appended to (bytes). */
    maxDatasetBytes: z.coerce.number().int().min(1024).default(1024 * 1024 * MiB),
    /** Largest selection one value request reads or writes (bytes). */
    maxSelectionBytes: z.coerce.number().int().min(1024).default(16 * 1024 * MiB),
    /** Largest attribute value written (bytes). */
    maxAttributeBytes: z.coerce.number().int().min(1024).default(16 * MiB),
    /** Largest value a broadcast write (`element_count`) builds in memory (bytes). */
    maxBroadcastBytes: z.coerce.number().int().min(1024).default(256 * MiB),
    /** Largest dataset an `initializer` (arange) fills at creation (bytes of its elements). */
    maxInitializerBytes: z.coerce.number().int().min(1024).default(256 * MiB),
    /**
     * Reads of at least this many bytes (at most `pageBytes`) from chunked datasets filtered
     * only with deflate, shuffle and Fletcher-32 decode their chunks in parallel off the main
     * thread unless compressed more than 20:1 (0: every such read, whatever its size or ratio;
     * docs/architecture.md "Values").
     */
    parallelChunkMinBytes: z.coerce.number().int().min(0).default(1 * MiB),
    /**
     * Cores other processes must leave unused (measured every 250 ms) for a read's chunks to be
     * decoded on the value threads; 0: whatever the machine's load (src/store/values/chunked.ts).
     */
    parallelChunkSpareCores: z.coerce.number().min(0).max(1024).default(1.5),
    /** Most objects or links one answer lists (413 above, `max_objects_per_answer`; page with Limit). */
    maxObjectsPerAnswer: z.coerce.number().int().min(1).default(100_000),
    /** Most components of an h5path in a request (413 above, `max_path_depth`). */
    maxPathDepth: z.coerce.number().int().min(1).default(512),
    /** Deepest nesting of arrays and objects in a JSON request body. */
    maxJsonDepth: z.coerce.number().int().min(8).max(10_000).default(100),
    /** Owner reported for domains and folders without a recorded owner. */
    defaultOwner: z.string().min(1).default('admin'),
    /** Directories prepended to libhdf5's filter plugin search path. */
    pluginPath: z.string().optional(),
    /**
     * CORS: origins allowed to call the API from a browser page of another origin, separated by
     * commas or spaces (`https://a.example,http://localhost:3000`), `*` for any origin (never with
     * credentials), or empty (default) for none: the built-in viewer is same-origin and needs none.
     */
    corsOrigins: z.string().default(''),
    /**
     * Names (the `Host` header, without port) the server answers to besides loopback names, its
     * bound address and `endpoint`'s host, separated by commas or spaces; `*` for any. Default:
     * any name when bound to a non-loopback address, none else (DNS rebinding; http/hosts.ts).
     */
    allowedHosts: z.string().default(''),
    /**
     * Users, groups and API tokens (JSON; salted scrypt hashes, token hashes). Without it there
     * are no users: every request is `default`, with every right on a loopback address
     * (single-user mode) and read-only elsewhere (issue #11, secure defaults).
     */
    usersFile: z.string().optional(),
    /** The user who passes every ACL check and may set `owner` on PUT / (HSDS `admin_user`). */
    adminUser: z.string().min(1).default('admin'),
    /** Members of this group are admins too (HSDS `admin_group`); empty: none. */
    adminGroup: z.string().default(''),
    /**
     * `default_acl` (spec 5, step 5): the flags of a user with no entry anywhere, e.g. `read`,
     * `read,create`, `all`, `none`. Default: `read`; `all` in single-user mode (no users file,
     * loopback address).
     */
    defaultAcl: z.string().optional(),
    /** New domains readable by everyone (`default` read) instead of by their owner only. */
    defaultPublic: z.coerce.boolean().default(false),
    /** OpenID Connect: issuer whose JWTs are accepted as Bearer tokens (empty: off). */
    oidcIssuer: z.string().default(''),
    /** OpenID Connect: expected audience (`aud`) of the tokens. */
    oidcAudience: z.string().default(''),
    /** OpenID Connect: JWKS URL (default: from the issuer's /.well-known/openid-configuration). */
    oidcJwksUri: z.string().default(''),
    /**
     * OpenID Connect: the claim that identifies the user, unique at the issuer (`sub` by default;
     * another only when the issuer guarantees it unique, e.g. `oid`). The user is `oidc:<value>`:
     * never a local user, the admin or a group.
     */
    oidcUserClaim: z.string().min(1).default('sub'),
    /**
     * OpenID Connect users who are admins: values of `oidcUserClaim` (or `oidc:<value>` names),
     * a list (comma-separated in the variable). Nobody else from the issuer is an admin.
     */
    oidcAdmins: z
      .preprocess((v) => (typeof v === 'string' ? v.split(/[,\s]+/).filter(Boolean) : v), z.array(z.string().min(1)))
      .default([]),
    /** Seconds a verified password is remembered (so each request does not pay for scrypt). */
    authCacheSeconds: z.coerce.number().int().min(0).default(300),
    /**
     * Threads that hash passwords (scrypt), apart from libuv's thread pool that does the file
     * I/O (issue #24 item 8). One client address has at most one check running, so a flood
     * from one address leaves the other threads to everyone else.
     */
    passwordThreads: z.coerce.number().int().min(1).max(16).default(2),
    /** Most password checks waiting for a thread; beyond, a login gets 503 with Retry-After. */
    maxPasswordQueue: z.coerce.number().int().min(1).default(16),
    /**
     * Failed logins (401) from one client address within `authFailureWindowSeconds` after which
     * its new logins get 429 with Retry-After until the window ends (0: no limit). Logins already
     * verified are remembered and still pass.
     */
    authFailures: z.coerce.number().int().min(0).default(20),
    authFailureWindowSeconds: z.coerce.number().int().min(1).default(60),
    /** Directory of the built web viewer served at /view/ (default: the package's dist/viewer). */
    viewerDir: z.string().min(1).optional(),

    // --- operations (docs/deploy.md) -----------------------------------------------------------
    /**
     * Who may read `GET /metrics`: `public` (anyone), `user` (only authenticated requests, i.e.
     * `ctx.state.user` set by the auth middleware), `off` (not served on the main port).
     */
    metricsAccess: z.enum(['public', 'user', 'off']).default('public'),
    /** Serve `/metrics` (and `/healthz`, `/readyz`) on this port instead of the main one. */
    metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
    /** Bind address of `metricsPort` (default: `host`). */
    metricsHost: z.string().min(1).optional(),

    // --- read-only S3 archives (docs/deploy.md, "Archives in S3") --------------------------------
    /**
     * Read-only mounts: `"/archive=s3://bucket/prefix"` entries (a list, or one string of
     * comma-separated entries). Every `.h5` object under the prefix is a domain below the path.
     */
    mounts: z
      .preprocess((v) => (typeof v === 'string' ? v.split(/[,\s]+/).filter(Boolean) : v), z.array(z.string().min(1)))
      .default([])
      .superRefine((v, ctx) => {
        try {
          parseMountSpecs(v);
        } catch (e) {
          ctx.addIssue({ code: 'custom', message: (e as Error).message });
        }
      }),
    /** S3 endpoint URL (default: AWS, `https://s3.<region>.amazonaws.com`); `AWS_ENDPOINT_URL_S3`/`AWS_ENDPOINT_URL`. */
    s3Endpoint: z.string().url().optional(),
    /** S3 region (`AWS_REGION` / `AWS_DEFAULT_REGION`); signs requests. */
    s3Region: z.string().min(1).default('us-east-1'),
    /** S3 access key id (`AWS_ACCESS_KEY_ID`); without keys requests are anonymous. */
    s3AccessKeyId: z.string().min(1).optional(),
    /** S3 secret access key (`AWS_SECRET_ACCESS_KEY`). */
    s3SecretAccessKey: z.string().min(1).optional(),
    /** S3 session token (`AWS_SESSION_TOKEN`); libhdf5 1.10's ROS3 driver cannot send it. */
    s3SessionToken: z.string().min(1).optional(),
    /** Path-style URLs (`endpoint/bucket/key`); default: on with `s3Endpoint`, off for AWS. */
    s3PathStyle: z.coerce.boolean().optional(),
    /** How long an object's ETag is trusted before a request checks it again (HEAD), ms. */
    s3RevalidateMs: z.coerce.number().int().min(0).default(2000),
    /**
     * Objects up to this size are fetched whole (one GET) and opened from memory; larger ones
     * are opened through libhdf5's ROS3 driver (one ranged GET per libhdf5 read). 0: always ROS3.
     */
    s3WholeObjectBytes: z.coerce.number().int().min(0).default(16 * MiB),
    /** Close an idle S3-mounted file (and drop its metadata cache / memory copy) after this many ms. */
    s3IdleCloseMs: z.coerce.number().int().min(10).default(60_000),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;

/** Settings whose environment value is a boolean (`1`/`true`, anything else false). */
const BOOLEAN_KEYS = new Set(['samples', 'defaultPublic', 's3PathStyle']);

/** Standard AWS environment variables for the S3 settings, first found wins. */
export const AWS_ENV: Record<string, string[]> = {
  s3Endpoint: ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'],
  s3Region: ['AWS_REGION', 'AWS_DEFAULT_REGION'],
  s3AccessKeyId: ['AWS_ACCESS_KEY_ID'],
  s3SecretAccessKey: ['AWS_SECRET_ACCESS_KEY'],
  s3SessionToken: ['AWS_SESSION_TOKEN'],
};

/** True for loopback addresses (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Environment variable for each setting: H5STORE_ + upper snake case (e.g. H5STORE_IDLE_CLOSE_MS). */
export function envName(key: string): string {
  return 'H5STORE_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();
}

/**
 * Build the configuration.
 * @param flags values from the command line (undefined entries are ignored)
 * @param env environment (default process.env); `H5STORE_CONFIG` names a JSON config file
 * @throws Error with every problem listed when a value is invalid.
 */
export function loadConfig(flags: Partial<Record<keyof Config, unknown>> & { config?: string } = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const file = flags.config ?? env.H5STORE_CONFIG;
  let fromFile: Record<string, unknown> = {};
  if (file) {
    try {
      fromFile = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`Cannot read config file ${file}: ${(e as Error).message}`);
    }
  }
  const merged: Record<string, unknown> = { ...fromFile };
  // The standard AWS_* variables (as the AWS CLI and SDKs read them) for the S3 settings; an
  // H5STORE_S3_* variable or a flag still wins.
  for (const [key, names] of Object.entries(AWS_ENV)) {
    const v = names.map((n) => env[n]).find((x) => x !== undefined && x !== '');
    if (v !== undefined) merged[key] = v;
  }
  for (const key of Object.keys(ConfigSchema.shape)) {
    const v = env[envName(key)];
    if (v !== undefined && v !== '') merged[key] = BOOLEAN_KEYS.has(key) ? v === '1' || v.toLowerCase() === 'true' : v;
  }
  for (const [k, v] of Object.entries(flags)) if (v !== undefined && k !== 'config') merged[k] = v;
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${msg}`);
  }
  return parsed.data;
}
