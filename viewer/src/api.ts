/**
 * Talking to the h5store server the viewer was loaded from: its base URL, JSON GETs with the
 * session's credentials, and errors for people (the data provider's requests: provider/client.ts).
 */
import { errorMessageOf } from './format';

/** Credentials of this browser tab (kept in sessionStorage, see auth.tsx). */
export type Credentials = { kind: 'basic'; user: string; authorization: string } | { kind: 'token'; authorization: string };

/**
 * Base URL of the REST API: the folder above the viewer's own (`/view/` -> `/`), so the viewer
 * also works behind a reverse proxy that mounts h5store under a prefix. No trailing slash.
 */
export function apiBase(): string {
  return new URL('../', window.location.href).href.replace(/\/$/, '');
}

/** A failed API request: HTTP status and the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly serverMessage: string,
    readonly what: string,
  ) {
    super(`${status}: ${serverMessage}`);
    this.name = 'ApiError';
  }
}

/**
 * Headers of every API request: `X-Requested-With` (so a 401 carries no Basic challenge and the
 * browser shows no login dialog of its own: the viewer asks), and the credentials if any.
 */
export function authHeaders(c: Credentials | undefined): Record<string, string> {
  const h: Record<string, string> = { 'X-Requested-With': 'XMLHttpRequest' };
  if (c) h.Authorization = c.authorization;
  return h;
}

/**
 * GET a JSON resource of the API.
 * @param route e.g. `/domains`; `params` become the query string
 * @throws ApiError for any non-2xx answer (401, 403, 404...), TypeError for network failures
 */
export async function apiGet<T>(route: string, params: Record<string, string>, creds: Credentials | undefined): Promise<T> {
  const url = `${apiBase()}${route}?${new URLSearchParams(params).toString()}`;
  const r = await fetch(url, { headers: { Accept: 'application/json', ...authHeaders(creds) } });
  const text = await r.text();
  if (!r.ok) throw new ApiError(r.status, errorMessageOf(text) || r.statusText, params.domain ?? route);
  return JSON.parse(text) as T;
}

/** Title and detail of an error, for people. 403 says plainly that reading is not allowed. */
export function describeError(e: unknown, what: string): { title: string; detail: string } {
  if (e instanceof ApiError) {
    switch (e.status) {
      case 401:
        return { title: 'Sign-in required', detail: `The server needs credentials to read ${what}. ${e.serverMessage}` };
      case 403:
        return { title: 'You may not read this', detail: `Your account is not allowed to read ${what} (403 Forbidden). ${e.serverMessage}` };
      case 404:
        return { title: 'Not found', detail: `There is no domain or folder ${what} on this server. ${e.serverMessage}` };
      case 410:
        return { title: 'Deleted', detail: `${what} was deleted. ${e.serverMessage}` };
      default:
        return { title: `Error ${e.status}`, detail: e.serverMessage };
    }
  }
  return { title: 'Cannot reach the server', detail: String((e as Error)?.message ?? e) };
}
