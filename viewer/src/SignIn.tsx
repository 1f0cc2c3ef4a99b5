/**
 * The sign-in form: user and password (HTTP Basic) or an API token (Bearer). Shown when the
 * server answers 401, or when the user asks for it.
 */
import { type FormEvent, useState } from 'react';
import { basicCredentials, tokenCredentials, useAuth } from './auth';

export function SignIn() {
  const auth = useAuth();
  const [mode, setMode] = useState<'password' | 'token'>('password');
  const [user, setUser] = useState(auth.credentials?.kind === 'basic' ? auth.credentials.user : '');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  if (auth.prompt === undefined) return null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (mode === 'password') {
      if (!user) return;
      auth.signIn(basicCredentials(user, password));
    } else {
      if (!token.trim()) return;
      auth.signIn(tokenCredentials(token));
    }
    setPassword('');
    setToken('');
  };

  return (
    <div className="signin-backdrop">
      <form className="signin" onSubmit={submit} aria-label="Sign in">
        <h2>Sign in</h2>
        <p className="signin-why" role="alert">
          {auth.prompt}
        </p>
        <div className="signin-modes" role="tablist">
          <button type="button" role="tab" aria-selected={mode === 'password'} onClick={() => setMode('password')}>
            User and password
          </button>
          <button type="button" role="tab" aria-selected={mode === 'token'} onClick={() => setMode('token')}>
            API token
          </button>
        </div>
        {mode === 'password' ? (
          <>
            <label>
              User
              <input name="username" autoComplete="username" value={user} onChange={(e) => setUser(e.target.value)} autoFocus required />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
          </>
        ) : (
          <label>
            API token
            <input name="token" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} autoFocus required />
          </label>
        )}
        <p className="signin-note">Kept in this browser tab only (sessionStorage) and sent only to this server&rsquo;s API.</p>
        <div className="signin-actions">
          <button type="submit">Sign in</button>
          {auth.credentials ? (
            <button type="button" onClick={auth.signOut}>
              Continue without signing in
            </button>
          ) : (
            <button type="button" onClick={auth.closeSignIn}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </div>
  );
}
