/**
 * The one error type of h5store.
 *
 * Every layer throws `H5StoreError` with a semantic `code`; only the HTTP error middleware turns
 * the code into a status (table `STATUS` below, from service spec section 7) and a JSON body.
 * The store, codec and selection layers never mention HTTP statuses directly.
 */

/**
 * Error code -> HTTP status (service spec section 7; 413/503 from the wire reference 0.7; 412 and
 * 416 of the file download, RFC 9110 sections 13.1 and 14; 422 of the h5grove API, as h5grove
 * answers a query argument it cannot use).
 */
export const STATUS = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  /** The client sent its request too slowly (headers or body; http/slowClients.ts). */
  RequestTimeout: 408,
  Conflict: 409,
  Gone: 410,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  RangeNotSatisfiable: 416,
  /** The request names a host this server does not answer to (`Host`; http/hosts.ts). */
  MisdirectedRequest: 421,
  UnprocessableEntity: 422,
  /** A per-user or per-address limit on requests, logins or creations (with `Retry-After`). */
  TooManyRequests: 429,
  Internal: 500,
  NotImplemented: 501,
  Unavailable: 503,
} as const;

export type ErrorCode = keyof typeof STATUS;

/** What an error adds to its answer besides the status and the message. */
export interface ErrorExtras {
  /**
   * Seconds after which the client may try again (503, 429): the answer's `Retry-After`
   * (RFC 9110 section 10.2.3), which only the error middleware (http/present.ts) writes.
   */
  retryAfter?: number;
  /** Other headers the answer needs: `Allow` of a 405, `WWW-Authenticate` of a 401, `Content-Range` of a 416. */
  headers?: Record<string, string>;
}

/** A failure with a semantic code and a message meant for the client. */
export class H5StoreError extends Error {
  readonly code: ErrorCode;
  /** Seconds after which to try again (see `ErrorExtras.retryAfter`); a whole number, at least 1. */
  readonly retryAfter?: number;
  /** Extra response headers (see `ErrorExtras.headers`). */
  readonly headers?: Record<string, string>;
  constructor(code: ErrorCode, message: string, extras: ErrorExtras = {}) {
    super(message);
    this.name = 'H5StoreError';
    this.code = code;
    if (extras.retryAfter !== undefined) this.retryAfter = Math.max(1, Math.ceil(extras.retryAfter));
    this.headers = extras.headers;
  }
  get status(): number {
    return STATUS[this.code];
  }
  /** The headers of the answer: `headers`, and `Retry-After` when the error has one. */
  answerHeaders(): Record<string, string> {
    const h: Record<string, string> = { ...this.headers };
    if (this.retryAfter !== undefined) h['Retry-After'] = String(this.retryAfter);
    return h;
  }
}

/** 503: the server or a file is busy for now; try again after `retryAfter` seconds. */
export const unavailable = (msg: string, retryAfter: number) => new H5StoreError('Unavailable', msg, { retryAfter });

/** 400: malformed request (bad JSON, bad selection, bad type, wrong body size, ...). */
export const badRequest = (msg: string) => new H5StoreError('BadRequest', msg);
/** 404: the domain, object, link or attribute does not exist. */
export const notFound = (msg: string) => new H5StoreError('NotFound', msg);
/** 409: the resource exists already with different content. */
export const conflict = (msg: string) => new H5StoreError('Conflict', msg);
/** 410: the resource was deleted earlier in this server process. */
export const gone = (msg: string) => new H5StoreError('Gone', msg);
/** 403: the request is understood but not allowed (e.g. deleting the root group). */
export const forbidden = (msg: string) => new H5StoreError('Forbidden', msg);
/** 413: the response or request would exceed a configured limit. */
export const tooLarge = (msg: string) => new H5StoreError('PayloadTooLarge', msg);
/** 501: a feature that is not implemented yet. */
export const notImplemented = (msg: string) => new H5StoreError('NotImplemented', msg);
/** 500: an unexpected failure (bug or I/O problem). */
export const internal = (msg: string) => new H5StoreError('Internal', msg);
