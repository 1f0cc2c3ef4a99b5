/**
 * Opening HDF5 files that are not local files: objects in S3 through libhdf5's read-only S3
 * driver (ROS3), and whole files held in memory (the core driver with a file image).
 *
 * ROS3 (`H5FDros3.c`, `H5FDs3comms.c`; in libhdf5 since 1.10.6 when built with it, as Debian's
 * 1.10.8 is) fetches the file with one ranged HTTP GET per libhdf5 read, signed with AWS
 * signature V4 from the `H5FD_ros3_fapl_t` credentials. It has no cache of its own in 1.10: what
 * stays cached is libhdf5's metadata cache, for as long as the file stays open. Its HTTP requests
 * are made by libcurl on the calling (main) thread and block it for their duration.
 * 1.10's ROS3 cannot send a session token (temporary credentials): only long-term keys, or
 * anonymous requests.
 */
import koffi from 'koffi';
import { H5StoreError, badRequest } from '../errors.js';
import * as C from './constants.js';
import { G, H5, Hdf5Error, type Hid, named, optionalFunction } from './lib.js';
import { openFailure } from './objects.js';

/** `H5FD_ros3_fapl_t` of libhdf5 1.10.6+ (H5FDros3.h; version 1). */
const ROS3_FAPL = named('H5FD_ros3_fapl_t', () =>
  koffi.struct('H5FD_ros3_fapl_t', {
    version: 'int32_t',
    authenticate: 'bool',
    aws_region: koffi.array('char', 33, 'String'),
    secret_id: koffi.array('char', 129, 'String'),
    secret_key: koffi.array('char', 129, 'String'),
  }),
);
const H5FD_CURR_ROS3_FAPL_T_VERSION = 1;

const setFaplRos3 = optionalFunction('herr_t H5Pset_fapl_ros3(hid_t fapl, H5FD_ros3_fapl_t *fa)');

/** True when the loaded libhdf5 has the ROS3 driver. */
export const ROS3_AVAILABLE = setFaplRos3 !== undefined;

/** Credentials and region the ROS3 driver signs its requests with. */
export interface Ros3Credentials {
  region: string;
  /** Both keys, or neither (anonymous requests, for public buckets). */
  accessKeyId?: string;
  secretAccessKey?: string;
}

export interface Ros3Tuning {
  /**
   * libhdf5's sieve buffer (bytes): reads of contiguous raw data smaller than this are widened to
   * this size, so neighbouring small reads cost one GET. 0 keeps libhdf5's default (64 KiB).
   */
  sieveBytes?: number;
}

const faplCache = new Map<string, Hid>();

function ros3Fapl(cred: Ros3Credentials, tuning: Ros3Tuning): Hid {
  if (!setFaplRos3) {
    throw new H5StoreError('NotImplemented', 'This libhdf5 has no read-only S3 driver (ROS3): S3 mounts need libhdf5 1.10.6+ built with it (Debian\'s libhdf5-103-1 is)');
  }
  const key = JSON.stringify([cred.region, cred.accessKeyId ?? '', cred.secretAccessKey ?? '', tuning.sieveBytes ?? 0]);
  let fapl = faplCache.get(key);
  if (fapl !== undefined) return fapl;
  if (cred.region.length > 32) throw badRequest('S3 region is longer than 32 characters (ROS3 limit)');
  if ((cred.accessKeyId?.length ?? 0) > 128 || (cred.secretAccessKey?.length ?? 0) > 128) {
    throw badRequest('S3 keys longer than 128 characters cannot be used by the ROS3 driver');
  }
  const p: Hid = H5.H5Pcreate(G.P_FILE_ACCESS);
  try {
    const auth = !!(cred.accessKeyId && cred.secretAccessKey);
    setFaplRos3(p, {
      version: H5FD_CURR_ROS3_FAPL_T_VERSION,
      authenticate: auth,
      aws_region: auth ? cred.region : '',
      secret_id: auth ? cred.accessKeyId : '',
      secret_key: auth ? cred.secretAccessKey : '',
    });
    H5.H5Pset_fclose_degree(p, C.H5F_CLOSE_STRONG);
    if (tuning.sieveBytes) H5.H5Pset_sieve_buf_size(p, tuning.sieveBytes);
  } catch (e) {
    H5.H5Pclose(p);
    throw e;
  }
  fapl = p;
  faplCache.set(key, fapl);
  return fapl;
}

/**
 * Open an S3 object read-only through ROS3.
 * @param url the object's HTTP(S) URL, path-style (`http://host:port/bucket/key`) or
 *   virtual-hosted (`https://bucket.s3.region.amazonaws.com/key`); the key URL-encoded.
 * @throws H5StoreError BadRequest (not HDF5 / damaged), Unavailable (S3 could not be reached),
 *   NotImplemented (no ROS3 in this libhdf5); Hdf5Error (500) for other failures.
 */
export function openRos3(url: string, cred: Ros3Credentials, tuning: Ros3Tuning = {}): Hid {
  const fapl = ros3Fapl(cred, tuning);
  try {
    return H5.H5Fopen(url, C.H5F_ACC_RDONLY, fapl);
  } catch (e) {
    if (e instanceof Hdf5Error && e.mentions('curl cannot perform request')) {
      throw new H5StoreError('Unavailable', 'The archive object could not be read from S3 (request failed); try again', { retryAfter: 1 });
    }
    throw openFailure(url, e, false);
  }
}

/**
 * Open a whole HDF5 file held in memory (the core driver with a file image, no backing store),
 * read-only. libhdf5 copies `image`; the caller may drop it after the call.
 * @param name a name for libhdf5 that must not exist as a local path (libhdf5 checks); it also
 *   tells apart files open at once, so it should name the version (e.g. include the ETag).
 * @throws H5StoreError BadRequest when the bytes are not an HDF5 file.
 */
export function openImage(name: string, image: Buffer): Hid {
  const p: Hid = H5.H5Pcreate(G.P_FILE_ACCESS);
  try {
    H5.H5Pset_fapl_core(p, 1024 * 1024, false);
    H5.H5Pset_file_image(p, image, image.length);
    H5.H5Pset_fclose_degree(p, C.H5F_CLOSE_STRONG);
    return H5.H5Fopen(name, C.H5F_ACC_RDONLY, p);
  } catch (e) {
    throw openFailure(name, e, false);
  } finally {
    H5.H5Pclose(p);
  }
}
