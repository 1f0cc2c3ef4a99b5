/**
 * "Use it from Python" snippets for a domain (issue #28 item 11): h5pyd, xarray through h5netcdf
 * over h5pyd, and curl, filled in with this server's endpoint, the domain and the object shown.
 * Pure (no DOM): unit-tested in test/unit/viewer-format.test.ts.
 */

export interface SnippetInput {
  /** Base URL of the REST API (no trailing slash). */
  endpoint: string;
  domain: string;
  /** Object path in the domain (default `/`). */
  path?: string;
  /** User name of the session (the password is never put in a snippet). */
  user?: string;
  /** True when the session uses an API token (sent as `Authorization: Bearer`). */
  token?: boolean;
}

export interface Snippet {
  id: 'h5pyd' | 'xarray' | 'curl';
  title: string;
  code: string;
}

/** A Python string literal for any text (JSON's escapes are valid Python). */
function py(s: string): string {
  return JSON.stringify(s);
}

/** A shell single-quoted word. */
function sh(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The snippets for a domain and object. */
export function pythonSnippets(i: SnippetInput): Snippet[] {
  const path = i.path && i.path !== '/' ? i.path : undefined;
  const auth = i.token
    ? ['# your API token in HS_API_KEY (h5pyd sends it as "Authorization: Bearer")', 'import os']
    : i.user
      ? [`# password: set HS_PASSWORD in the environment (or ~/.hscfg)`, 'import os']
      : [];
  const creds = i.token
    ? `, api_key=os.environ["HS_API_KEY"]`
    : i.user
      ? `, username=${py(i.user)}, password=os.environ["HS_PASSWORD"]`
      : '';
  const open = `f = h5pyd.File(${py(i.domain)}, "r", endpoint=${py(i.endpoint)}${creds})`;
  const h5pyd = ['import h5pyd  # pip install h5pyd; reads like h5py', ...auth, '', open];
  if (path) h5pyd.push(`obj = f[${py(path)}]`, 'print(obj)', 'data = obj[...]  # or a slice: obj[0, :10]');
  else h5pyd.push('f.visit(print)  # every object path');
  h5pyd.push('f.close()');
  const cut = path ? path.lastIndexOf('/') : -1;
  // xarray hands h5netcdf a path, not an h5pyd File: an http(s) URL makes h5netcdf use h5pyd,
  // with credentials from HS_USERNAME/HS_PASSWORD/HS_API_KEY or ~/.hscfg (README "xarray over the network")
  const xr = [
    'import xarray as xr  # pip install xarray h5netcdf h5pyd',
    ...(i.user || i.token ? [`# credentials: ${i.token ? 'HS_API_KEY' : `HS_USERNAME=${i.user} and HS_PASSWORD`} in the environment (or ~/.hscfg)`] : []),
    '',
    `ds = xr.open_dataset(${py(i.endpoint + i.domain)}, engine="h5netcdf"${cut > 0 ? `, group=${py(path!.slice(0, cut))}` : ''})`,
    'print(ds)',
  ];
  if (path) xr.push(`print(ds[${py(path.slice(cut + 1))}].values)`);
  const q = `domain=${encodeURIComponent(i.domain).replace(/%2F/g, '/')}`;
  const u = i.token ? ' -H "Authorization: Bearer $HS_API_KEY"' : i.user ? ` -u ${sh(i.user)}` : '';
  const curl = [
    '# the domain (root group id, times)',
    `curl -s${u} ${sh(`${i.endpoint}/?${q}`)}`,
    ...(path
      ? [
          '# the object at the path (its id, type, shape)',
          `curl -s${u} ${sh(`${i.endpoint}/?${q}&h5path=${encodeURIComponent(path).replace(/%2F/g, '/')}&follow_soft_links=1&follow_external_links=1`)}`,
          '# then its values: GET /datasets/<id>/value?select=[0:10] (add -H "Accept: application/octet-stream" for binary)',
        ]
      : []),
  ];
  return [
    { id: 'h5pyd', title: 'h5pyd', code: h5pyd.join('\n') },
    { id: 'xarray', title: 'xarray (h5netcdf over h5pyd)', code: xr.join('\n') },
    { id: 'curl', title: 'curl', code: curl.join('\n') },
  ];
}
