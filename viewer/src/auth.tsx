/**
 * Credentials of the viewer: anonymous until the server answers 401, then a sign-in form (user
 * and password for HTTP Basic, or an API token sent as `Bearer`). Credentials live in this tab's
 * sessionStorage only (gone when the tab closes) and go only to the API, never to fetch the
 * viewer's own files.
 */
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import type { Credentials } from './api';
import { basicAuthorization } from './format';

const STORAGE_KEY = 'h5store.viewer.credentials';

function load(): Credentials | undefined {
  try {
    const raw = window.sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return undefined;
    const c = JSON.parse(raw) as Credentials;
    return typeof c?.authorization === 'string' ? c : undefined;
  } catch {
    return undefined;
  }
}

function store(c: Credentials | undefined): void {
  try {
    if (c) window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify(c));
    else window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    /* storage disabled: credentials last as long as the page */
  }
}

/** Basic credentials for a user name and password. */
export function basicCredentials(user: string, password: string): Credentials {
  return { kind: 'basic', user, authorization: basicAuthorization(user, password) };
}

/** Bearer credentials for an API token (a pasted `Bearer ` prefix is tolerated). */
export function tokenCredentials(token: string): Credentials {
  return { kind: 'token', authorization: 'Bearer ' + token.trim().replace(/^Bearer\s+/i, '') };
}

interface AuthValue {
  credentials: Credentials | undefined;
  /** Changes whenever the credentials change: views refetch with it. */
  version: number;
  /** The server refused the current credentials (401): nobody is signed in with them. */
  refused: boolean;
  /** Why the sign-in form is shown (undefined: hidden). */
  prompt: string | undefined;
  /** A 401 was answered: show the sign-in form. */
  requireSignIn(message?: string): void;
  /** Show the sign-in form on the user's request. */
  openSignIn(): void;
  closeSignIn(): void;
  signIn(c: Credentials): void;
  signOut(): void;
}

const AuthContext = createContext<AuthValue | undefined>(undefined);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [credentials, setCredentials] = useState<Credentials | undefined>(load);
  const [version, setVersion] = useState(0);
  const [prompt, setPrompt] = useState<string | undefined>();
  const [refused, setRefused] = useState(false);

  const requireSignIn = useCallback(
    (message?: string) => {
      const who = credentials ? (credentials.kind === 'basic' ? `user "${credentials.user}"` : 'this API token') : undefined;
      if (credentials) setRefused(true);
      const why = who
        ? `The server did not accept the credentials of ${who} (401).`
        : 'This server needs you to sign in to read this (401 Unauthorized).';
      setPrompt(message ? `${why} ${message}` : why);
    },
    [credentials],
  );
  const value = useMemo<AuthValue>(
    () => ({
      credentials,
      version,
      refused,
      prompt,
      requireSignIn,
      openSignIn: () => setPrompt('Sign in to this server.'),
      closeSignIn: () => setPrompt(undefined),
      signIn: (c) => {
        store(c);
        setRefused(false);
        setCredentials(c);
        setPrompt(undefined);
        setVersion((v) => v + 1);
      },
      signOut: () => {
        store(undefined);
        setRefused(false);
        setCredentials(undefined);
        setPrompt(undefined);
        setVersion((v) => v + 1);
      },
    }),
    [credentials, version, refused, prompt, requireSignIn],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthValue {
  const v = useContext(AuthContext);
  if (!v) throw new Error('useAuth outside AuthProvider');
  return v;
}
