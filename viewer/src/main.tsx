/**
 * The h5store web viewer (served at /view/): a folder browser, and h5web on any domain.
 * URL: `/view/?domain=/folder` (a folder), `/view/?domain=/folder/file.h5[&path=/g1/dset]`
 * (a domain, opened at an object), `&marker=`/`&limit=` for folder pages.
 */
import '@h5web/app/styles.css';
import './viewer.css';
import { type FormEvent, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError, apiGet } from './api';
import { AuthProvider, useAuth } from './auth';
import { DomainView } from './DomainView';
import { ErrorBox, FolderView } from './FolderView';
import { breadcrumbs, normalizePath } from './format';
import { Link, navigate, useViewState } from './nav';
import { SignIn } from './SignIn';

/** `GET /?domain=` answer: enough to tell a domain from a folder. */
interface DomainInfo {
  class: 'domain' | 'folder';
  root?: string;
}

function Header({ domain }: { domain: string }) {
  const auth = useAuth();
  const [text, setText] = useState(domain);
  useEffect(() => setText(domain), [domain]);
  const go = (e: FormEvent) => {
    e.preventDefault();
    navigate({ domain: normalizePath(text || '/') });
  };
  const crumbs = breadcrumbs(domain);
  return (
    <header className="topbar">
      <Link to={{ domain: '/' }} className="brand" title="Top folder">
        h5store
      </Link>
      <nav className="crumbs" aria-label="Path">
        {crumbs.map((c, i) => (
          <span key={c.path}>
            {i > 1 && <span className="sep">/</span>}
            {i === crumbs.length - 1 ? <span className="current">{c.name}</span> : <Link to={{ domain: c.path }}>{c.name}</Link>}
          </span>
        ))}
      </nav>
      <form className="pathbox" onSubmit={go} role="search">
        <input aria-label="Folder or domain path" name="path" value={text} onChange={(e) => setText(e.target.value)} placeholder="/folder/file.h5" spellCheck={false} />
        <button type="submit">Go</button>
      </form>
      <span className="who">
        {auth.credentials && auth.refused ? (
          <>
            {auth.credentials.kind === 'basic' ? `Not signed in: the server refused user ${auth.credentials.user}` : 'Not signed in: the server refused the API token'}{' '}
            <button type="button" onClick={auth.openSignIn}>
              Sign in
            </button>
          </>
        ) : auth.credentials ? (
          <>
            {auth.credentials.kind === 'basic' ? `Signed in as ${auth.credentials.user}` : 'Signed in with an API token'}{' '}
            <button type="button" onClick={auth.signOut}>
              Sign out
            </button>
          </>
        ) : (
          <button type="button" onClick={auth.openSignIn}>
            Sign in
          </button>
        )}
      </span>
    </header>
  );
}

/** Decides whether the URL's path is a folder or a domain, then shows it. */
function Body() {
  const view = useViewState();
  const auth = useAuth();
  const key = `${view.domain}\n${auth.version}`;
  const [info, setInfo] = useState<{ key: string; info?: DomainInfo; error?: unknown }>({ key: '' });

  useEffect(() => {
    if (view.domain === '/') return;
    let stale = false;
    apiGet<DomainInfo>('/', { domain: view.domain }, auth.credentials).then(
      (r) => !stale && setInfo({ key, info: r }),
      (e: unknown) => {
        if (stale) return;
        setInfo({ key, error: e });
        if (e instanceof ApiError && e.status === 401) auth.requireSignIn(e.serverMessage);
      },
    );
    return () => {
      stale = true;
    };
  }, [key]);

  useEffect(() => {
    document.title = view.domain === '/' ? 'h5store' : `${view.domain} - h5store`;
  }, [view.domain]);

  let main;
  if (view.domain === '/') main = <FolderView folder="/" marker={view.marker} limit={view.limit} />;
  else if (info.key !== key) main = <p className="status">Opening {view.domain}&hellip;</p>;
  else if (info.error) main = <ErrorBox error={info.error} what={view.domain} />;
  else if (info.info!.class === 'folder') main = <FolderView folder={view.domain} marker={view.marker} limit={view.limit} />;
  else main = <DomainView domain={view.domain} path={view.path} />;

  return (
    <div className="viewer">
      <Header domain={view.domain} />
      <main className="content">{main}</main>
      <SignIn />
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <AuthProvider>
    <Body />
  </AuthProvider>,
);
