/**
 * Typed configuration, validated once: command-line flags > environment variables > config file
 * (JSON) > defaults. See docs/configuration.md for every setting.
 */
import fs from 'node:fs';
import { z } from 'zod';

const MiB = 1024 * 1024;

export const ConfigSchema = z
  .object({
    /** Data directory: domains are files under it, folders are directories. */
    root: z.string().min(1).default('./data'),
    port: z.coerce.number().int().min(0).max(65535).default(5101),
    host: z.string().min(1).default('127.0.0.1'),
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
    /** Bytes per libhdf5 read/write page; the event loop runs between pages. */
    pageBytes: z.coerce.number().int().min(4096).default(4 * MiB),
    /** Largest JSON value response, counted in binary bytes of the selection (413 above). */
    maxJsonValueBytes: z.coerce.number().int().min(1024).default(64 * MiB),
    /** Largest JSON request body. */
    maxJsonBodyBytes: z.coerce.number().int().min(1024).default(100 * MiB),
    /** Largest binary request body (dataset value writes). */
    maxBinaryBodyBytes: z.coerce.number().int().min(1024).default(16 * 1024 * MiB),
    /** Binary bodies above this size are spooled to a temporary file and written page by page. */
    spoolBodyBytes: z.coerce.number().int().min(1024).default(256 * MiB),
    /**
     * Pace each streamed response to at most this many bytes per second (0: no limit). Over a
     * real network the link is slower; on loopback an unpaced stream can take both cores of a
     * small machine and starve every other request (measured: 60 ms stalls at 4.4 GB/s).
     */
    maxStreamBytesPerSec: z.coerce.number().int().min(0).default(2_000_000_000),
    /** Largest number of points / coordinates in one selection. */
    maxPoints: z.coerce.number().int().min(1).default(10_000_000),
    /** Owner reported for domains and folders without a recorded owner. */
    defaultOwner: z.string().min(1).default('admin'),
    /** Directories prepended to libhdf5's filter plugin search path. */
    pluginPath: z.string().optional(),
    /** CORS: allowed origin (`*` echoes the request's Origin), or empty to disable. */
    corsOrigin: z.string().default('*'),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;

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
  for (const key of Object.keys(ConfigSchema.shape)) {
    const v = env[envName(key)];
    if (v !== undefined && v !== '') merged[key] = key === 'samples' ? v === '1' || v.toLowerCase() === 'true' : v;
  }
  for (const [k, v] of Object.entries(flags)) if (v !== undefined && k !== 'config') merged[k] = v;
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${msg}`);
  }
  return parsed.data;
}
