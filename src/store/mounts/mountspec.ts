/**
 * `--mount` entries: `"/archive=s3://bucket/prefix"` (docs/configuration.md). Pure; used by the
 * config check and by the S3 mount.
 */
import { isUnder } from './mount.js';
import { normalizeDomain } from '../objects/paths.js';

/** Object names a mount serves as domains (other objects are neither listed nor served). */
export const HDF5_SUFFIXES = ['.h5', '.hdf5', '.he5'];

/** Whether an object name (or domain path) ends in one of HDF5_SUFFIXES. */
export function isHdf5Name(name: string): boolean {
  return HDF5_SUFFIXES.some((s) => name.toLowerCase().endsWith(s));
}

/** A parsed `--mount` entry. */
export interface MountSpec {
  /** Mount point, a normalised domain path. */
  at: string;
  bucket: string;
  /** Key prefix, '' or ending in '/'. */
  prefix: string;
}

/**
 * Parse `"/archive=s3://bucket/prefix"`.
 * @throws Error with a message naming the entry when it is malformed.
 */
export function parseMountSpec(spec: string): MountSpec {
  const m = /^([^=]+)=s3:\/\/([^/]+)(\/.*)?$/.exec(spec.trim());
  if (!m) throw new Error(`Invalid mount ${JSON.stringify(spec)}: expected /path=s3://bucket/prefix`);
  let at: string;
  try {
    at = normalizeDomain(m[1]);
  } catch (e) {
    throw new Error(`Invalid mount ${JSON.stringify(spec)}: ${(e as Error).message}`);
  }
  const bucket = m[2];
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$/.test(bucket)) throw new Error(`Invalid mount ${JSON.stringify(spec)}: bad bucket name ${bucket}`);
  const parts = (m[3] ?? '').split('/').filter(Boolean);
  return { at, bucket, prefix: parts.length ? parts.join('/') + '/' : '' };
}

/**
 * Parse every entry and check they do not overlap (one mount inside another).
 * @throws Error naming the bad entry
 */
export function parseMountSpecs(specs: string[]): MountSpec[] {
  const out = specs.map(parseMountSpec);
  for (const a of out) {
    if (a.at === '/') throw new Error('A mount cannot be the top folder "/"');
    for (const b of out) if (a !== b && isUnder(b.at, a.at)) throw new Error(`Mounts ${a.at} and ${b.at} overlap`);
  }
  return out;
}

/** URI-encode a key for a signed URL (AWS SigV4: everything but unreserved characters and '/'). */
export function encodeKey(key: string): string {
  return key
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()))
    .join('/');
}
