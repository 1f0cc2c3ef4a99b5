/**
 * The HTTP side of the viewer's data provider: requests to the h5store REST API with the
 * session's credentials, JSON bodies parsed with the non-finite literals allowed, binary value
 * bodies, h5web's abort semantics, and 401/403 answers reported to the page.
 */
import { ApiError, authHeaders, type Credentials } from '../api.js';
import { errorMessageOf } from '../format.js';
import { parseApiJson } from './json.js';

/** Tries of a request answered 503 (the file momentarily inconsistent) before the error is shown. */
const RETRIES_503 = 4;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'HEAD';
  body?: unknown;
  accept?: string;
  signal?: AbortSignal;
  /** Skip the browser's HTTP cache (polling a growing dataset). */
  fresh?: boolean;
  /** Let the browser ask again with the validators of what it has (ETag: a 304 when nothing changed). */
  revalidate?: boolean;
  onProgress?: (fraction: number) => void;
}

/** Requests to one server's REST API with one set of credentials. */
export class ApiClient {
  constructor(
    /** Base URL of the API, no trailing slash. */
    readonly base: string,
    readonly credentials: Credentials | undefined,
    /** Told about every 401/403 answer before the error is thrown. */
    private readonly onDenied?: (status: 401 | 403, message: string) => void,
  ) {}

  /** The URL of a route with query parameters (`domain` first, as h5pyd sends it). */
  url(route: string, params: Record<string, string | undefined>): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
    const s = q.toString().replace(/%2F/g, '/');
    return `${this.base}${route}${s ? '?' + s : ''}`;
  }

  /**
   * One request; resolves with the body bytes of a 2xx answer. A 503 (a file another program is
   * writing, momentarily inconsistent) is asked again after its Retry-After, up to RETRIES_503 tries.
   * @throws ApiError for other statuses (after telling `onDenied` about 401/403); the abort
   *   signal's reason when aborted (h5web's AbortError); TypeError for network failures
   */
  async bytes(route: string, params: Record<string, string | undefined>, o: RequestOptions = {}): Promise<ArrayBuffer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(route, params, o);
      } catch (e) {
        // 503: a file momentarily being written by another program; asked again after Retry-After
        if (!(e instanceof ApiError) || e.status !== 503 || attempt >= RETRIES_503 || o.signal?.aborted) throw e;
        await new Promise((res) => setTimeout(res, Math.min(2000, Math.max(100, (this.retryAfter ?? 0.2) * 1000))));
      }
    }
  }

  /** Seconds of the last 503's Retry-After. */
  private retryAfter: number | undefined;

  private async once(route: string, params: Record<string, string | undefined>, o: RequestOptions): Promise<ArrayBuffer> {
    const headers: Record<string, string> = { Accept: o.accept ?? 'application/json', ...authHeaders(this.credentials) };
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    let r: Response;
    try {
      r = await fetch(this.url(route, params), {
        method: o.method ?? (o.body !== undefined ? 'POST' : 'GET'),
        headers,
        body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
        signal: o.signal,
        cache: o.fresh ? 'no-store' : o.revalidate ? 'no-cache' : 'default',
      });
    } catch (e) {
      throw o.signal?.aborted && o.signal.reason !== undefined ? o.signal.reason : e;
    }
    const buf = await readBody(r, o.onProgress).catch((e: unknown) => {
      throw o.signal?.aborted && o.signal.reason !== undefined ? o.signal.reason : e;
    });
    if (!r.ok) {
      if (r.status === 503) this.retryAfter = Number(r.headers.get('retry-after')) || undefined;
      const message = errorMessageOf(new TextDecoder().decode(buf)) || r.statusText;
      if (r.status === 401 || r.status === 403) this.onDenied?.(r.status, message);
      throw new ApiError(r.status, message, params.domain ?? route);
    }
    return buf;
  }

  /** A JSON request (GET, or POST when a body is given), parsed with NaN/Infinity allowed. */
  async json<T = Record<string, unknown>>(route: string, params: Record<string, string | undefined>, o: RequestOptions = {}): Promise<T> {
    const buf = await this.bytes(route, params, o);
    return parseApiJson(new TextDecoder().decode(buf)) as T;
  }

  /**
   * Follow a change feed (`GET /events`, Server-Sent Events, read with fetch so the session's
   * credentials go with it): `onEvent` for each event (name, parsed data). Resolves when the
   * stream ends or `signal` aborts it.
   * @throws ApiError when the server answers otherwise (an older server: 404); TypeError for
   *   network failures
   */
  async events(params: Record<string, string | undefined>, onEvent: (name: string, data: unknown) => void, signal: AbortSignal): Promise<void> {
    let r: Response;
    try {
      r = await fetch(this.url('/events', params), { headers: { Accept: 'text/event-stream', ...authHeaders(this.credentials) }, signal, cache: 'no-store' });
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    }
    if (!r.ok || !r.body || !(r.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const message = errorMessageOf(await r.text().catch(() => '')) || r.statusText;
      throw new ApiError(r.status, message, params.domain ?? '/events');
    }
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buf += dec.decode(value, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let name = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) name = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (data.length) onEvent(name, JSON.parse(data.join('\n')));
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    }
  }

  /** The status of a HEAD request (0 when the server cannot be reached). */
  async headStatus(route: string, params: Record<string, string | undefined>): Promise<number> {
    try {
      const r = await fetch(this.url(route, params), { method: 'HEAD', headers: authHeaders(this.credentials) });
      return r.status;
    } catch {
      return 0;
    }
  }
}

/** A response body, reporting progress against Content-Length when asked. */
async function readBody(r: Response, onProgress?: (f: number) => void): Promise<ArrayBuffer> {
  const total = Number(r.headers.get('content-length'));
  if (!onProgress || !r.body || !total) return r.arrayBuffer();
  const reader = r.body.getReader();
  const parts: Uint8Array[] = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    onProgress(Math.min(1, got / total));
  }
  const out = new Uint8Array(got);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out.buffer;
}
