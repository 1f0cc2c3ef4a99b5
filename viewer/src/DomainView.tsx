/**
 * A domain in h5web: `DataProvider` with h5store's own provider (provider/H5StoreApi.ts) pointed
 * at this same server with the session's credentials, and h5web's `App` opened at the object
 * path of the URL (`path=`). Above it, a bar with the conventions toggle (netCDF/CF, pandas),
 * "Follow" for a growing dataset, the file download (when the server offers it) and the
 * "Use from Python" snippets.
 */
import { App, DataProvider } from '@h5web/app';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { apiBase } from './api';
import { useAuth } from './auth';
import { ApiClient } from './provider/client';
import { H5StoreApi } from './provider/H5StoreApi';
import { pythonSnippets } from './snippets';

/** How often a followed dataset's shape is polled (ms). */
export const FOLLOW_POLL_MS = 1000;
const CONVENTIONS_KEY = 'h5store.viewer.conventions';

export function DomainView({ domain, path }: { domain: string; path?: string }) {
  const auth = useAuth();
  const [denied, setDenied] = useState<string | undefined>();
  const { credentials, requireSignIn } = auth;
  const [conventions, setConventions] = useState(() => localStorage.getItem(CONVENTIONS_KEY) !== 'off');
  /** The object h5web shows (kept in the URL so a reload opens it again). */
  const selected = useRef(path ?? '/');
  const [follow, setFollow] = useState<{ path: string; dims?: number[]; epoch: number; at?: Date; error?: string } | undefined>();
  const [initial, setInitial] = useState(path);
  const [panel, setPanel] = useState<'python' | undefined>();
  const [download, setDownload] = useState<string | undefined>();

  const client = useMemo(
    () =>
      new ApiClient(apiBase(), credentials, (status, message) => {
        if (status === 401) requireSignIn(message);
        else setDenied(message);
      }),
    [credentials, requireSignIn],
  );
  const api = useMemo(
    () => new H5StoreApi(domain, client, { conventions, follow: follow?.path }),
    // a new provider (fresh caches) whenever a followed dataset grew
    [domain, client, conventions, follow?.path, follow?.epoch],
  );

  // The object the user selects in h5web's tree (h5web tells nobody: its tree items carry data-path).
  const onHostClick = useCallback((e: React.MouseEvent) => {
    const item = (e.target as HTMLElement).closest('[role="treeitem"][data-path]');
    const p = item?.getAttribute('data-path');
    if (!p) return;
    selected.current = p;
    const u = new URL(window.location.href);
    if (p === '/') u.searchParams.delete('path');
    else u.searchParams.set('path', p);
    window.history.replaceState(window.history.state, '', u.pathname + u.search.replace(/%2F/g, '/'));
  }, []);

  // Follow: poll the followed dataset's shape; a change reopens h5web on it with fresh data.
  useEffect(() => {
    if (!follow) return;
    let stop = false;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      try {
        const dims = await api.currentDims(follow.path);
        if (stop) return;
        if (dims === undefined) {
          setFollow((f) => f && { ...f, error: `${follow.path} is not a dataset` });
          return;
        }
        if (follow.dims && dims.join() !== follow.dims.join()) {
          setInitial(follow.path);
          setFollow((f) => f && { ...f, dims, epoch: f.epoch + 1, at: new Date(), error: undefined });
          return;
        }
        if (!follow.dims) setFollow((f) => f && { ...f, dims, at: new Date() });
      } catch (e) {
        // a file momentarily being written answers 503: try again at the next tick
        if (!stop) setFollow((f) => f && { ...f, error: String((e as Error).message ?? e) });
      }
      if (!stop) timer = setTimeout(tick, FOLLOW_POLL_MS);
    };
    timer = setTimeout(tick, follow.dims ? FOLLOW_POLL_MS : 0);
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [api, follow?.path, follow?.dims?.join()]);

  // The raw file download, when the server offers it (HEAD first: older servers answer 404).
  useEffect(() => {
    let stale = false;
    setDownload(undefined);
    client.headStatus('/file', { domain }).then((s) => {
      if (!stale && s === 200) setDownload(client.url('/file', { domain }));
    });
    return () => {
      stale = true;
    };
  }, [client, domain]);

  const toggleFollow = () => {
    if (follow) {
      setFollow(undefined);
      return;
    }
    setInitial(selected.current);
    setFollow({ path: selected.current, epoch: 0 });
  };
  const toggleConventions = () => {
    localStorage.setItem(CONVENTIONS_KEY, conventions ? 'off' : 'on');
    // a member of a group the conventions made (a CF variable's NXdata) is the file's own path without them
    selected.current = api.lookupPath(selected.current);
    setInitial(selected.current);
    setConventions(!conventions);
  };
  const snippets = pythonSnippets({
    endpoint: apiBase(),
    domain,
    path: selected.current,
    user: credentials?.kind === 'basic' ? credentials.user : undefined,
    token: credentials?.kind === 'token',
  });

  return (
    <div className="domain-view">
      <div className="domain-bar" role="toolbar" aria-label="Domain tools">
        <label title="netCDF/CF: fill values masked, packed values unpacked, coordinate variables as axes; pandas tables with their column names">
          <input type="checkbox" name="conventions" checked={conventions} onChange={toggleConventions} /> Apply netCDF/CF and pandas conventions
        </label>
        <button type="button" className={`follow${follow ? ' on' : ''}`} aria-pressed={!!follow} onClick={toggleFollow} title="Reload the selected dataset whenever it grows (newest frame of a stack)">
          {follow ? 'Following' : 'Follow'}
        </button>
        {follow && (
          <span className="follow-status" role="status">
            {follow.path}
            {follow.dims ? ` [${follow.dims.join(' × ')}]` : ''}
            {follow.at ? `, checked ${follow.at.toLocaleTimeString()}` : ''}
            {follow.error ? ` (${follow.error})` : ''}
          </span>
        )}
        <span className="spacer" />
        {download && (
          <a className="download" href={download} download={domain.slice(domain.lastIndexOf('/') + 1)} onClick={(e) => credentials && downloadWithCredentials(e, client, domain)}>
            Download file
          </a>
        )}
        <button type="button" aria-expanded={panel === 'python'} onClick={() => setPanel(panel === 'python' ? undefined : 'python')}>
          Use from Python
        </button>
      </div>
      {panel === 'python' && (
        <div className="snippets" role="region" aria-label="Use from Python">
          {snippets.map((s) => (
            <section key={s.id} data-snippet={s.id}>
              <h3>
                {s.title}{' '}
                <button type="button" onClick={() => void navigator.clipboard?.writeText(s.code)}>
                  Copy
                </button>
              </h3>
              <pre>
                <code>{s.code}</code>
              </pre>
            </section>
          ))}
        </div>
      )}
      {denied !== undefined && (
        <div className="error-box status-403 banner" role="alert">
          <strong>You may not read this</strong> (403 Forbidden): part of {domain} is not readable with your account. {denied}{' '}
          <button type="button" onClick={auth.openSignIn}>
            Sign in as another user
          </button>
        </div>
      )}
      <div className="h5web-host" onClick={onHostClick}>
        {/* A new key on sign-in/out, conventions or a followed change drops h5web's caches and state. */}
        <DataProvider key={`${domain}\n${auth.version}\n${conventions}\n${follow?.path ?? ''}\n${follow?.epoch ?? 0}`} api={api}>
          <App initialPath={initial} sidebarOpen />
        </DataProvider>
      </div>
    </div>
  );
}

/** Download with the session's credentials (a plain link cannot carry an Authorization header). */
async function downloadWithCredentials(e: React.MouseEvent, client: ApiClient, domain: string): Promise<void> {
  e.preventDefault();
  const buf = await client.bytes('/file', { domain }, { accept: 'application/octet-stream' });
  const url = URL.createObjectURL(new Blob([buf], { type: 'application/x-hdf5' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = domain.slice(domain.lastIndexOf('/') + 1);
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
