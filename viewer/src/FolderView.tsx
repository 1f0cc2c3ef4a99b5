/**
 * The folder browser: one page of a folder's entries (`GET /domains` with `Limit`/`Marker`),
 * with kind, size and modification time (files another program is writing are marked), and
 * links to the next and previous pages. Files that are not HDF5 are not domains: the server
 * does not list them.
 */
import { useEffect, useState } from 'react';
import { FiFile, FiFolder } from 'react-icons/fi';
import { ApiError, apiGet, describeError } from './api';
import { useAuth } from './auth';
import { baseName, domainsParam, formatBytes, formatTime, parentFolder } from './format';
import { Link } from './nav';

/** One `GET /domains` item (wire-reference 1.7, plus h5store's `size`). */
interface FolderItem {
  name: string;
  class: 'domain' | 'folder';
  owner?: string;
  created?: number;
  lastModified?: number;
  size?: number;
  /** Another program holds the file open for writing (listed from its file status). */
  beingWritten?: boolean;
}

/** Paging history kept in the history entry: markers of the pages before this one. */
interface PagingState {
  prev?: string[];
}

type Load = { key: string; items?: FolderItem[]; more?: boolean; error?: unknown };

export function FolderView({ folder, marker, limit }: { folder: string; marker?: string; limit: number }) {
  const auth = useAuth();
  const key = `${folder}\n${marker ?? ''}\n${limit}\n${auth.version}`;
  const [load, setLoad] = useState<Load>({ key: '' });

  useEffect(() => {
    let stale = false;
    // One item more than shown tells whether a next page exists.
    const params: Record<string, string> = { domain: domainsParam(folder), Limit: String(limit + 1) };
    if (marker) params.Marker = marker;
    apiGet<{ domains: FolderItem[] }>('/domains', params, auth.credentials).then(
      (r) => !stale && setLoad({ key, items: r.domains.slice(0, limit), more: r.domains.length > limit }),
      (e: unknown) => {
        if (stale) return;
        setLoad({ key, error: e });
        if (e instanceof ApiError && e.status === 401) auth.requireSignIn(e.serverMessage);
      },
    );
    return () => {
      stale = true;
    };
  }, [key]);

  if (load.key !== key) return <p className="status">Loading {folder}&hellip;</p>;
  if (load.error) return <ErrorBox error={load.error} what={folder} />;
  const items = load.items!;
  const prev = ((window.history.state as PagingState | null)?.prev ?? []).slice();
  const page = prev.length + 1;
  const last = items.at(-1);

  return (
    <div className="folder-view">
      <table className="listing">
        <thead>
          <tr>
            <th className="name">Name</th>
            <th>Kind</th>
            <th className="num">Size</th>
            <th>Modified</th>
          </tr>
        </thead>
        <tbody>
          {folder !== '/' && !marker && (
            <tr className="parent">
              <td className="name">
                <Link to={{ domain: parentFolder(folder), limit }}>..</Link>
              </td>
              <td>parent folder</td>
              <td />
              <td />
            </tr>
          )}
          {items.map((it) => (
            <tr key={it.name} className={`row-${it.class}`} data-name={it.name}>
              <td className="name">
                <Link to={{ domain: it.name, limit: it.class === 'folder' ? limit : undefined }} className={`entry ${it.class}`}>
                  {it.class === 'folder' ? <FiFolder aria-hidden /> : <FiFile aria-hidden />}
                  {baseName(it.name)}
                  {it.class === 'folder' ? '/' : ''}
                </Link>
              </td>
              <td>
                {it.class === 'folder' ? 'folder' : 'domain'}
                {it.beingWritten && (
                  <span className="being-written" title="Another program has this file open for writing: what you see may still change">
                    being written
                  </span>
                )}
              </td>
              <td className="num" title={it.size !== undefined ? `${it.size} bytes` : undefined}>
                {it.size !== undefined ? formatBytes(it.size) : ''}
              </td>
              <td>{it.lastModified !== undefined ? formatTime(it.lastModified) : ''}</td>
            </tr>
          ))}
          {items.length === 0 && (
            <tr>
              <td colSpan={4} className="empty">
                {marker ? 'No more entries.' : 'This folder is empty.'}
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <nav className="pager" aria-label="Pages">
        {prev.length > 0 ? (
          <Link to={{ domain: folder, marker: prev.at(-1) || undefined, limit }} state={{ prev: prev.slice(0, -1) }} className="prev">
            &larr; Previous
          </Link>
        ) : marker ? (
          <Link to={{ domain: folder, limit }} className="prev">
            &larr; First page
          </Link>
        ) : null}
        {(prev.length > 0 || marker || load.more) && <span className="page">Page {page}</span>}
        {load.more && last && (
          <Link to={{ domain: folder, marker: last.name, limit }} state={{ prev: [...prev, marker ?? ''] }} className="next">
            Next &rarr;
          </Link>
        )}
      </nav>
    </div>
  );
}

/** An API error as a message box; a 401 also offers the sign-in form. */
export function ErrorBox({ error, what }: { error: unknown; what: string }) {
  const auth = useAuth();
  const { title, detail } = describeError(error, what);
  const status = error instanceof ApiError ? error.status : undefined;
  return (
    <div className={`error-box status-${status ?? 'network'}`} role="alert">
      <h2>{title}</h2>
      <p>{detail}</p>
      {(status === 401 || status === 403) && (
        <button type="button" onClick={auth.openSignIn}>
          {status === 401 ? 'Sign in' : 'Sign in as another user'}
        </button>
      )}
      {status !== 401 && status !== 403 && what !== '/' && (
        <p>
          <Link to={{ domain: parentFolder(what) }}>Go to {parentFolder(what)}</Link>
        </p>
      )}
    </div>
  );
}
