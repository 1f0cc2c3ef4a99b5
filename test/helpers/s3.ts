/**
 * A real S3 server for tests and benchmarks: Debian's Ceph radosgw on loopback, started with
 * `../shared/tools/ceph-s3-up.sh DIR` (about 15 s; needs `apt-get install ceph-mon ceph-osd
 * radosgw`) and stopped with `ceph-s3-down.sh DIR`. `H5STORE_TEST_S3_ENDPOINT` (with
 * `H5STORE_TEST_S3_KEY`/`H5STORE_TEST_S3_SECRET`, and `H5STORE_TEST_S3_RGW_LOG` for request
 * counts) points at an S3 server already running instead.
 *
 * The up script's `rgw_frontends` line must carry `tcp_nodelay=1` (otherwise every ranged GET of
 * libhdf5's ROS3 driver waits ~43 ms for delayed ACKs); when a copy of the script lacks it, the
 * helper adds it to ceph.conf and restarts radosgw.
 */
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO } from './server.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const TOOLS = path.resolve(REPO, '../shared/tools');
const UP = path.join(TOOLS, 'ceph-s3-up.sh');
const DOWN = path.join(TOOLS, 'ceph-s3-down.sh');

export interface TestS3 {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  client: S3Client;
  /** radosgw's log (one line per request), when the helper started radosgw. */
  rgwLog?: string;
  put(bucket: string, key: string, body: Buffer | string): Promise<void>;
  del(bucket: string, key: string): Promise<void>;
  bucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Why S3 tests cannot run here (undefined when they can). */
export function s3Unavailable(): string | undefined {
  if (process.env.H5STORE_TEST_S3_ENDPOINT) return undefined;
  if (!fs.existsSync(UP)) return `${UP} not found (the shared tools are not beside the clone)`;
  for (const bin of ['ceph-mon', 'ceph-osd', 'radosgw', 'monmaptool']) {
    try {
      execFileSync('which', [bin], { stdio: 'ignore' });
    } catch {
      return `${bin} is not installed (apt-get install ceph-mon ceph-osd radosgw)`;
    }
  }
  return undefined;
}

function client(endpoint: string, accessKeyId: string, secretAccessKey: string): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
}

function wrap(endpoint: string, accessKeyId: string, secretAccessKey: string, stop: () => Promise<void>, rgwLog?: string): TestS3 {
  const c = client(endpoint, accessKeyId, secretAccessKey);
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    client: c,
    rgwLog,
    async put(bucket, key, body) {
      await c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async del(bucket, key) {
      await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async bucket(name) {
      try {
        await c.send(new CreateBucketCommand({ Bucket: name }));
      } catch (e) {
        if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes((e as Error).name)) throw e;
      }
    },
    async stop() {
      c.destroy();
      await stop();
    },
  };
}

/**
 * Start Ceph radosgw in a temporary directory (or use H5STORE_TEST_S3_ENDPOINT). A start that
 * fails (seen now and then on a loaded machine: the OSD refusing with "wrong fsid", the script
 * then waiting for it forever) is stopped and tried once more in a fresh directory.
 */
export async function startS3(): Promise<TestS3> {
  const given = process.env.H5STORE_TEST_S3_ENDPOINT;
  if (given) {
    const key = process.env.H5STORE_TEST_S3_KEY ?? 'H5ACCESSKEY';
    return wrap(given, key, process.env.H5STORE_TEST_S3_SECRET ?? 'H5SECRETKEY', async () => undefined, process.env.H5STORE_TEST_S3_RGW_LOG);
  }
  let last: Error | undefined;
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      return await startCeph();
    } catch (e) {
      last = e as Error;
      process.stderr.write(`      (Ceph start attempt ${attempt} failed: ${last.message.slice(0, 300)})\n`);
    }
  }
  throw last!;
}

async function startCeph(): Promise<TestS3> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-ceph-'));
  const port = Number(process.env.H5STORE_TEST_S3_PORT ?? 5505);
  const env = { ...process.env, S3_PORT: String(port) };
  const down = async () => {
    await run(DOWN, [dir], env).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const out = await run(UP, [dir], env, 90_000);
    const m = /S3 at (http:\/\/\S+) \((\w+)\/(\w+)\)/.exec(out);
    if (!m) throw new Error(`unexpected output of ceph-s3-up.sh: ${out}`);
    await ensureNoDelay(dir, env, m[1]);
    return wrap(m[1], m[2], m[3], down, path.join(dir, 'log/client.rgw.a.log'));
  } catch (e) {
    await down();
    throw e;
  }
}

/** Add tcp_nodelay=1 to radosgw's frontend line when missing, and restart radosgw. */
async function ensureNoDelay(dir: string, env: NodeJS.ProcessEnv, endpoint: string): Promise<void> {
  const conf = path.join(dir, 'ceph.conf');
  const text = fs.readFileSync(conf, 'utf8');
  if (/^rgw_frontends = .*tcp_nodelay=1/m.test(text)) return;
  fs.writeFileSync(conf, text.replace(/^(rgw_frontends = .*)$/m, '$1 tcp_nodelay=1'));
  const pidFile = path.join(dir, 'run/rgw.mypid');
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
      await sleep(100);
    } catch {
      break;
    }
  }
  const p = spawn('radosgw', ['-c', conf, '-n', 'client.rgw.a', '-f'], { cwd: dir, env, detached: true, stdio: ['ignore', fs.openSync(path.join(dir, 'log/rgw.out'), 'a'), 'ignore'] });
  p.unref();
  fs.writeFileSync(pidFile, String(p.pid));
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(endpoint + '/')).status < 500) return;
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  throw new Error('radosgw did not come back after adding tcp_nodelay=1');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', [cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      p.kill('SIGTERM');
    }, timeoutMs);
    p.stdout.on('data', (b) => (out += b));
    p.stderr.on('data', (b) => (err += b));
    p.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${path.basename(cmd)} ${timedOut ? `did not finish within ${timeoutMs / 1000} s` : `exited with ${code}`}: ${err.slice(-2000)}`));
    });
  });
}

/** Count the requests radosgw has logged whose line matches (ROS3's ranged GETs included). */
export function rgwRequests(s3: TestS3, match: RegExp): number {
  if (!s3.rgwLog || !fs.existsSync(s3.rgwLog)) return NaN;
  return fs
    .readFileSync(s3.rgwLog, 'utf8')
    .split('\n')
    .filter((l) => l.includes(' beast: ') && match.test(l)).length;
}
