/**
 * A page of h5web's app with its h5grove provider (`H5GroveProvider`), as a jupyterlab-h5web-style
 * page would use it, against h5store's h5grove API on the same origin (test/browser/grove.test.ts
 * bundles it with esbuild). Query: `file` (the domain), `path` (the entity opened first), `auth`
 * (an Authorization header sent with every request).
 */
import '@h5web/app/styles.css';
import { App, H5GroveProvider, createBasicFetcher } from '@h5web/app';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

const q = new URLSearchParams(location.search);
const auth = q.get('auth');
const fetcher = createBasicFetcher(auth ? { headers: { Authorization: auth } } : {});
const app = createElement(App, { initialPath: q.get('path') ?? '/', propagateErrors: false });
const provider = createElement(H5GroveProvider, { url: `${location.origin}/h5grove`, filepath: q.get('file') ?? '', fetcher }, app);
createRoot(document.getElementById('root')!).render(createElement('div', { style: { height: '100vh' } }, provider));
