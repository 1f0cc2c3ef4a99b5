/**
 * A read-only mount of an S3 bucket prefix: `--mount /archive=s3://bucket/prefix` serves every
 * HDF5 object under the prefix (`.h5`, `.hdf5`, `.he5`) as a domain below `/archive`, and every
 * "directory" of keys as a folder (docs/deploy.md, "Archives in S3").
 *
 * - Folder listings and object versions come from the S3 API (`@aws-sdk/client-s3`:
 *   ListObjectsV2 with `Delimiter: '/'`, HeadObject, GetObject).
 * - Change detection: an object's ETag is trusted for `revalidateMs`; the next request after that
 *   asks S3 again (HEAD, one request shared by concurrent ones). A new ETag drops everything
 *   learnt about the file, as a changed local file does.
 * - Files are opened read-only, never written: every write is a 403 (mount.ts).
 * - How bytes are read (measured in bench/s3.ts; docs/deploy.md has the figures):
 *   objects up to `wholeObjectBytes` are fetched with one GET (asynchronously, If-Match the
 *   ETag) and opened from memory with libhdf5's core driver; larger objects are opened through
 *   libhdf5's read-only S3 driver (ROS3), one ranged GET per libhdf5 read, made on the main
 *   thread. In both cases the handle stays open for `idleCloseMs` (default a minute), so
 *   libhdf5's metadata cache (ROS3 has no cache of its own in 1.10) serves repeated requests.
 */
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { H5StoreError, badRequest, notFound, notImplemented } from '../../errors.js';
import type { Hid } from '../../hdf5/lib.js';
import { openImage, openRos3, type Ros3Credentials } from '../../hdf5/ros3.js';
import type { DomainFile } from '../objects/domainFile.js';
import { type FileSource, type FileStamp, sameStamp } from '../session/fileHandle.js';
import { DOWNLOAD_BLOCK_BYTES, type FileSnapshot } from '../session/download.js';
import type { FileCache } from '../session/files.js';
import { type Mount, type MountedEntry, type MountedItem, isUnder } from './mount.js';
import { normalizeDomain } from '../objects/paths.js';
export { type MountSpec, encodeKey, parseMountSpec } from './mountspec.js';
import { type MountSpec, encodeKey, isHdf5Name } from './mountspec.js';
import { pageLimit, unquoteMarker } from '../objects/paging.js';


/** Connection and caching settings shared by the S3 mounts (config keys `s3*`). */
export interface S3Settings {
  /** Endpoint URL (`http://127.0.0.1:5505`); undefined: AWS for `region`. */
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** Path-style URLs; default: true with an endpoint, false for AWS. */
  pathStyle?: boolean;
  /** How long an ETag is trusted before the next request checks it (ms). */
  revalidateMs: number;
  /** Objects up to this size are fetched whole and opened from memory (0: never). */
  wholeObjectBytes: number;
  /** Close an idle mounted file after this long (ms). */
  idleCloseMs: number;
}



/** Byte order of names, as S3 lists keys and the local folder listing sorts. */
const byteCompare = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** What the SDK throws, reduced to what matters here. */
function s3Failure(op: string, e: unknown): H5StoreError {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = err.$metadata?.httpStatusCode;
  if (status === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey') return notFound('Not found in the archive');
  const why = status === 403 ? 'access denied (check the S3 credentials)' : `${err.name ?? 'error'}${status ? ` (HTTP ${status})` : ''}`;
  return new H5StoreError('Unavailable', `The archive's S3 storage did not answer ${op}: ${why}`, { retryAfter: 1 });
}

/** One S3 object's current version, and how to open it (the file cache's `FileSource`). */
class S3Object implements FileSource {
  stamp: FileStamp;
  checkedAt = 0;
  /** Whole-object bytes of `stamp` fetched for the next open (dropped once opened). */
  image: { etag: string; bytes: Buffer } | undefined;
  checking: Promise<S3Object> | undefined;
  fetching: Promise<void> | undefined;

  constructor(
    private readonly mount: S3Mount,
    readonly key: string,
    stamp: FileStamp,
  ) {
    this.stamp = stamp;
  }

  get idleCloseMs(): number {
    return this.mount.settings.idleCloseMs;
  }

  get readOnlyMessage(): string {
    return `${this.mount.domainOf(this.key)} is in the read-only archive ${this.mount.at} (${this.mount.source}): writes are not allowed`;
  }

  get reachRefusal(): string {
    return `${this.mount.domainOf(this.key)} is in the archive ${this.mount.at} (${this.mount.source}), which cannot reach other files`;
  }

  /** Objects read whole: small enough and not empty. */
  get whole(): boolean {
    return this.stamp.size > 0 && this.stamp.size <= this.mount.settings.wholeObjectBytes;
  }

  open(): Hid {
    const img = this.image;
    if (img && img.etag === this.stamp.etag) {
      this.image = undefined;
      this.mount.stats.wholeOpens++;
      return openImage(`h5store-s3-image:/${this.mount.bucket}/${this.key}#${img.etag}`, img.bytes);
    }
    if (this.stamp.size === 0) throw badRequest('The domain file is not an HDF5 file (empty object)');
    if (this.mount.settings.sessionToken) {
      throw notImplemented(
        `${this.mount.domainOf(this.key)} is larger than s3WholeObjectBytes and libhdf5's ROS3 driver cannot sign with a session token (AWS_SESSION_TOKEN): use long-term keys, or raise s3WholeObjectBytes`,
      );
    }
    this.mount.stats.ros3Opens++;
    return openRos3(this.mount.urlOf(this.key), this.mount.ros3Credentials);
  }
}

/** Counters for tests and benchmarks. */
export interface S3MountStats {
  heads: number;
  lists: number;
  wholeGets: number;
  wholeBytes: number;
  wholeOpens: number;
  ros3Opens: number;
}

export class S3Mount implements Mount {
  readonly at: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly source: string;
  readonly client: S3Client;
  readonly stats: S3MountStats = { heads: 0, lists: 0, wholeGets: 0, wholeBytes: 0, wholeOpens: 0, ros3Opens: 0 };
  private readonly objects = new Map<string, S3Object>();
  private readonly startTime = Date.now() / 1000;

  constructor(
    spec: MountSpec,
    readonly settings: S3Settings,
  ) {
    this.at = spec.at;
    this.bucket = spec.bucket;
    this.prefix = spec.prefix;
    this.source = `s3://${spec.bucket}/${spec.prefix}`;
    // The SDK warns at load about Node versions it will drop in 2027; the server's log is not
    // the place for it (docs/deploy.md notes the Node version).
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const cfg: S3ClientConfig = {
      region: settings.region,
      forcePathStyle: this.pathStyle,
      maxAttempts: 2,
    };
    if (settings.endpoint) cfg.endpoint = settings.endpoint;
    if (settings.accessKeyId && settings.secretAccessKey) {
      cfg.credentials = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, sessionToken: settings.sessionToken };
    } else {
      // Anonymous (public bucket): unsigned requests, as ROS3 makes them without keys.
      cfg.signer = { sign: async (req) => req };
    }
    this.client = new S3Client(cfg);
  }

  private get pathStyle(): boolean {
    return this.settings.pathStyle ?? !!this.settings.endpoint;
  }

  /** Credentials for the ROS3 driver (same keys as the SDK; anonymous without them). */
  get ros3Credentials(): Ros3Credentials {
    return { region: this.settings.region, accessKeyId: this.settings.accessKeyId, secretAccessKey: this.settings.secretAccessKey };
  }

  /** The object's HTTP URL for ROS3 (path-style or virtual-hosted, key URI-encoded). */
  urlOf(key: string): string {
    const k = encodeKey(key);
    if (this.settings.endpoint) {
      const u = new URL(this.settings.endpoint);
      const base = u.pathname.replace(/\/$/, '');
      if (this.pathStyle) return `${u.protocol}//${u.host}${base}/${this.bucket}/${k}`;
      return `${u.protocol}//${this.bucket}.${u.host}${base}/${k}`;
    }
    return this.pathStyle
      ? `https://s3.${this.settings.region}.amazonaws.com/${this.bucket}/${k}`
      : `https://${this.bucket}.s3.${this.settings.region}.amazonaws.com/${k}`;
  }

  /** The S3 key of a domain path below the mount ('' prefix-relative for the mount point). */
  keyOf(domain: string): string {
    return this.prefix + domain.slice(this.at.length + 1);
  }

  /** The domain path of a key under the prefix. */
  domainOf(key: string): string {
    return `${this.at}/${key.slice(this.prefix.length)}`;
  }

  // -------------------------------------------------------------------------------------------

  async file(domain: string, cache: FileCache): Promise<DomainFile> {
    if (domain === this.at) throw badRequest(`${domain} is a folder, not a domain`);
    const key = this.keyOf(domain);
    if (!isHdf5Name(key)) {
      if ((await this.stat(domain)).kind === 'folder') throw badRequest(`${domain} is a folder, not a domain`);
    }
    const obj = await this.fresh(key);
    // (the entry's file counts as used now: the sweeper, which closes files idle longer than
    // idleCloseMs, stays away while this request gets to it) then make sure a whole-object copy
    // is ready if the file must be opened.
    const f = cache.mountedEntry(domain, `s3://${this.bucket}/${key}`, obj);
    if (obj.whole && (f.fid === undefined || !sameStamp(f.stamp, obj.stamp))) await this.fetchWhole(obj);
    return f;
  }

  async stat(domain: string): Promise<MountedEntry> {
    if (domain === this.at) return { kind: 'folder', created: this.startTime, lastModified: this.startTime };
    const key = this.keyOf(domain);
    if (isHdf5Name(key)) {
      try {
        const o = await this.fresh(key);
        return { kind: 'domain', created: o.stamp.mtimeMs / 1000, lastModified: o.stamp.mtimeMs / 1000 };
      } catch (e) {
        if (!(e instanceof H5StoreError && e.code === 'NotFound')) throw e;
      }
    }
    this.stats.lists++;
    const r = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: key + '/', MaxKeys: 1 })).catch((e) => {
      throw s3Failure('a listing', e);
    });
    if ((r.KeyCount ?? 0) > 0) return { kind: 'folder', created: this.startTime, lastModified: this.startTime };
    throw notFound(`Domain ${domain} not found`);
  }

  async list(folder: string, opts: { limit?: number; marker?: string; pattern?: (name: string) => boolean }): Promise<MountedItem[]> {
    const base = folder === this.at ? this.prefix : this.keyOf(folder) + '/';
    const limit = pageLimit(opts.limit);
    const marker = opts.marker === undefined ? undefined : unquoteMarker(opts.marker);
    const startAfter = marker && isUnder(marker, folder) && marker !== folder ? this.keyOf(marker) : undefined;
    const out: MountedItem[] = [];
    let token: string | undefined;
    let any = false;
    do {
      this.stats.lists++;
      const r = await this.client
        .send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: base,
            Delimiter: '/',
            ContinuationToken: token,
            StartAfter: token ? undefined : startAfter,
          }),
        )
        .catch((e) => {
          throw s3Failure('a listing', e);
        });
      if ((r.KeyCount ?? 0) > 0) any = true;
      const page: MountedItem[] = [];
      for (const p of r.CommonPrefixes ?? []) {
        const name = (p.Prefix ?? '').slice(base.length, -1);
        page.push({ name, kind: 'folder', created: this.startTime, lastModified: this.startTime });
      }
      for (const o of r.Contents ?? []) {
        const name = (o.Key ?? '').slice(base.length);
        if (!isHdf5Name(name)) continue;
        const t = (o.LastModified?.getTime() ?? 0) / 1000;
        page.push({ name, kind: 'domain', created: t, lastModified: t });
      }
      page.sort((a, b) => byteCompare(a.name, b.name));
      for (const item of page) {
        if (out.length >= limit) break;
        if (!item.name || item.name.includes('/')) continue;
        const full = this.validDomain(folder, item.name);
        if (!full || (marker && byteCompare(full, marker) <= 0)) continue;
        if (opts.pattern && !opts.pattern(item.name)) continue;
        out.push({ ...item, name: full });
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token && out.length < limit);
    if (!any && !marker && folder !== this.at) throw notFound(`Folder ${folder} not found`);
    return out;
  }

  async snapshot(domain: string): Promise<FileSnapshot> {
    if (domain === this.at) throw badRequest(`${domain} is a folder, not a domain`);
    const key = this.keyOf(domain);
    if (!isHdf5Name(key) && (await this.stat(domain)).kind === 'folder') throw badRequest(`${domain} is a folder, not a domain`);
    const obj = await this.fresh(key);
    const etag = obj.stamp.etag ?? '';
    const size = obj.stamp.size;
    const lastModified = new Date(obj.stamp.mtimeMs);
    const changed = () => new H5StoreError('Conflict', `${domain} changed in ${this.source} while it was being sent: download it again`);
    const mount = this;
    let closed = false;
    async function* blocks(start: number, end: number): AsyncGenerator<Buffer> {
      if (end < start) return;
      let r;
      try {
        // one GET for the range, If-Match the version the headers named (a weak ETag cannot be
        // matched: then the size is the only check, below)
        r = await mount.client.send(
          new GetObjectCommand({ Bucket: mount.bucket, Key: key, Range: `bytes=${start}-${end}`, IfMatch: etag && !etag.startsWith('W/') ? etag : undefined }),
        );
      } catch (e) {
        const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 412) throw changed();
        throw s3Failure('a GET request', e);
      }
      const body = r.Body as AsyncIterable<Uint8Array> | undefined;
      if (!body) throw changed();
      let got = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      try {
        for await (const part of body) {
          if (closed) return;
          const b = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
          got += b.length;
          if (got > end - start + 1) throw changed();
          pending.push(b);
          pendingBytes += b.length;
          if (pendingBytes >= DOWNLOAD_BLOCK_BYTES) {
            yield Buffer.concat(pending, pendingBytes);
            pending = [];
            pendingBytes = 0;
          }
        }
      } finally {
        (r.Body as { destroy?: () => void } | undefined)?.destroy?.();
      }
      if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
      if (got !== end - start + 1) throw changed();
    }
    return {
      size,
      etag: etag || `"${size.toString(36)}-${obj.stamp.mtimeMs.toString(36)}"`,
      lastModified,
      blocks,
      close: () => {
        closed = true;
      },
    };
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, MaxKeys: 1 }));
    } catch (e) {
      throw new Error(`${this.source}: ${s3Failure('a listing', e).message}`);
    }
  }

  close(): void {
    this.client.destroy();
    this.objects.clear();
  }

  // -------------------------------------------------------------------------------------------

  /** The domain path of `name` in `folder`, or undefined when it is not a valid domain name. */
  private validDomain(folder: string, name: string): string | undefined {
    try {
      const d = normalizeDomain(`${folder}/${name}`);
      return d === `${folder}/${name}` ? d : undefined;
    } catch {
      return undefined;
    }
  }

  /** The object's version, asking S3 (HEAD) when the last answer is older than revalidateMs. */
  private fresh(key: string): Promise<S3Object> {
    const o = this.objects.get(key);
    if (o && performance.now() - o.checkedAt < this.settings.revalidateMs) return Promise.resolve(o);
    if (o?.checking) return o.checking;
    const checking = this.head(key).finally(() => {
      const cur = this.objects.get(key);
      if (cur) cur.checking = undefined;
    });
    if (o) o.checking = checking;
    return checking;
  }

  private async head(key: string): Promise<S3Object> {
    this.stats.heads++;
    let r;
    try {
      r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (e) {
      const err = s3Failure('a HEAD request', e);
      if (err.code === 'NotFound') {
        this.objects.delete(key);
        throw notFound(`Domain ${this.domainOf(key)} not found`);
      }
      throw err;
    }
    return this.note(key, r.ETag ?? '', Number(r.ContentLength ?? 0), r.LastModified);
  }

  /** Record a version seen in an S3 answer (a new ETag drops a fetched copy of the old one). */
  private note(key: string, etag: string, size: number, lastModified: Date | undefined): S3Object {
    const t = lastModified?.getTime() ?? 0;
    const stamp: FileStamp = { size, mtimeMs: t, ctimeMs: t, birthtimeMs: t, ino: 0, etag };
    let o = this.objects.get(key);
    if (!o) this.objects.set(key, (o = new S3Object(this, key, stamp)));
    else if (!sameStamp(o.stamp, stamp)) {
      o.stamp = stamp;
      o.image = undefined;
    }
    o.checkedAt = performance.now();
    return o;
  }

  /** Fetch a small object whole (If-Match its ETag; on a change, take the new version). */
  private fetchWhole(o: S3Object): Promise<void> {
    if (o.image?.etag === o.stamp.etag) return Promise.resolve();
    if (!o.fetching) {
      o.fetching = (async () => {
        this.stats.wholeGets++;
        let r;
        try {
          r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: o.key }));
        } catch (e) {
          const err = s3Failure('a GET request', e);
          if (err.code === 'NotFound') throw notFound(`Domain ${this.domainOf(o.key)} not found`);
          throw err;
        }
        const bytes = Buffer.from(await r.Body!.transformToByteArray());
        this.stats.wholeBytes += bytes.length;
        const cur = this.note(o.key, r.ETag ?? '', bytes.length, r.LastModified);
        if (cur.whole) cur.image = { etag: cur.stamp.etag!, bytes };
      })().finally(() => {
        o.fetching = undefined;
      });
    }
    return o.fetching;
  }
}
