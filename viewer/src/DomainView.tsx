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

/** How often a followed dataset's shape is polled (ms) without the server's change feed. */
export const FOLLOW_POLL_MS = 1000;
/** How often it is polled while the change feed tells its changes (ms: in case the feed misses one). */
export const FOLLOW_FEED_POLL_MS = 10_000;
/** The view is reloaded at most this often, however fast the dataset grows (ms). */
export const FOLLOW_MIN_MS = 1000;
const CONVENTIONS_KEY = 'h5store.viewer.conventions';

export function DomainView({ domain, path }: { domain: string; path?: string }) {
  const auth = useAuth();
  const [denied, setDenied] = useState<string | undefined>();
  const { credentials, requireSignIn } = auth;
  const [conventions, setConventions] = useState(() => localStorage.getItem(CONVENTIONS_KEY) !== 'off');
  /** The object h5web shows (kept in the URL so a reload opens it again). */
  const selected = useRef(path ?? '/');
  const [follow, setFollow] = useState<
    | {
        path: string;
        dims?: number[];
        /** The followed dataset's id and domain, once looked up (polled by id, followed by the change feed). */
        target?: { id: string; domain: string };
        /** The server's change feed tells this dataset's changes. */
        live?: boolean;
        epoch: number;
        at?: Date;
        error?: string;
      }
    | undefined
  >();
  /** Look at the followed dataset now (the change feed said it changed). */
  const poke = useRef<(() => void) | undefined>(undefined);
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

  // Follow: look at the followed dataset's shape (polled; at once when the change feed below says
  // it changed); a change reopens h5web on it with fresh data.
  useEffect(() => {
    if (!follow) return;
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = performance.now();
    const tick = async () => {
      timer = undefined;
      last = performance.now();
      try {
        const now = await api.followed(follow.path, follow.target);
        if (stop) return;
        if (now === undefined) {
          setFollow((f) => f && { ...f, error: `${follow.path} is not a dataset` });
          return;
        }
        const target = { id: now.id, domain: now.domain };
        if (follow.dims && now.dims.join() !== follow.dims.join()) {
          setInitial(follow.path);
          setFollow((f) => f && { ...f, dims: now.dims, target, epoch: f.epoch + 1, at: new Date(), error: undefined });
          return;
        }
        setFollow((f) => f && { ...f, dims: now.dims, target, at: new Date(), error: undefined });
      } catch (e) {
        // a file momentarily being written answers 503: try again at the next tick
        if (!stop) setFollow((f) => f && { ...f, error: String((e as Error).message ?? e) });
      }
      if (!stop) timer = setTimeout(tick, follow.live ? FOLLOW_FEED_POLL_MS : FOLLOW_POLL_MS);
    };
    timer = setTimeout(tick, follow.dims ? FOLLOW_POLL_MS : 0);
    poke.current = () => {
      if (stop || timer === undefined) return; // a look is under way: it sees the change
      clearTimeout(timer);
      timer = setTimeout(tick, Math.max(0, last + FOLLOW_MIN_MS - performance.now()));
    };
    return () => {
      stop = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [api, follow?.path, follow?.dims?.join(), follow?.target?.id, follow?.live]);

  // The change feed of the followed dataset (GET /events): its changes poke the look above at
  // once, and polling slows down meanwhile. Without it (an older server) polling goes on.
  const target = follow?.target;
  useEffect(() => {
    if (!target) return;
    const ac = new AbortController();
    client
      .events(
        { domain: target.domain, ids: target.id },
        (name, data) => {
          if (name === 'initial') setFollow((f) => f && { ...f, live: true });
          else if (name === 'change' && (data as { shapes?: { id: string }[] }).shapes?.some((x) => x.id === target.id)) poke.current?.();
        },
        ac.signal,
      )
      .catch(() => undefined)
      .finally(() => {
        if (!ac.signal.aborted) setFollow((f) => f && { ...f, live: false });
      });
    return () => ac.abort();
  }, [client, target?.id, target?.domain]);

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
            {follow.live ? ', live' : ''}
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
