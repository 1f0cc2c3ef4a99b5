/**
 * The seam between the store and authorization for files that an operation reaches beyond its
 * own domain (external raw storage files, virtual dataset sources, external link targets).
 *
 * The HTTP layer builds one `DomainAccess` per request (it knows the user); store operations that
 * make libhdf5 open another file call it first, with the domain path of that file, and it throws
 * `H5StoreError` Forbidden/Unauthorized when the user may not read (or write) that domain.
 */

/** Access to another domain that an operation reaches: `read` for reads, `write` for writes. */
export type AccessMode = 'read' | 'write';

/**
 * Check that the requesting user may `mode` the domain `domain` (a normalised domain path).
 * @throws H5StoreError Forbidden (or Unauthorized for anonymous requests) when not allowed.
 */
export type DomainAccess = (domain: string, mode: AccessMode) => Promise<void>;

/** Allows every domain (internal use, tools, and tests of the store without users). */
export const allowAllDomains: DomainAccess = async () => undefined;
