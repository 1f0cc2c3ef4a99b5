/**
 * A domain in h5web: `HsdsProvider` pointed at this same server, with the session's
 * credentials, and h5web's `App` opened at the object path of the URL (`path=`).
 */
import { App, HsdsProvider } from '@h5web/app';
import { useMemo, useState } from 'react';
import { apiBase, viewerFetcher } from './api';
import { useAuth } from './auth';

export function DomainView({ domain, path }: { domain: string; path?: string }) {
  const auth = useAuth();
  const [denied, setDenied] = useState<string | undefined>();
  const { credentials, requireSignIn } = auth;
  const fetcher = useMemo(
    () =>
      viewerFetcher(credentials, (status, message) => {
        if (status === 401) requireSignIn(message);
        else setDenied(message);
      }),
    [credentials, requireSignIn],
  );
  return (
    <div className="domain-view">
      {denied !== undefined && (
        <div className="error-box status-403 banner" role="alert">
          <strong>You may not read this</strong> (403 Forbidden): part of {domain} is not readable with your account. {denied}{' '}
          <button type="button" onClick={auth.openSignIn}>
            Sign in as another user
          </button>
        </div>
      )}
      <div className="h5web-host">
        {/* A new key on sign-in/out drops h5web's caches and refetches with the new credentials. */}
        <HsdsProvider key={`${domain}\n${auth.version}`} url={apiBase()} filepath={domain} fetcher={fetcher}>
          <App initialPath={path} sidebarOpen />
        </HsdsProvider>
      </div>
    </div>
  );
}
