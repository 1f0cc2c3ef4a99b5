/**
 * The built web viewer for tests: builds it (scripts/build-viewer.mjs --if-stale) when
 * dist/viewer is missing or older than its sources, so `npx mocha` on one suite works too.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './server.js';

export const VIEWER_DIST = path.join(REPO, 'dist/viewer');

/** Build the viewer unless it is up to date; returns dist/viewer. Takes ~5 s when it builds. */
export function ensureViewerBuilt(): string {
  execFileSync(process.execPath, [path.join(REPO, 'scripts/build-viewer.mjs'), '--if-stale'], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
  if (!fs.existsSync(path.join(VIEWER_DIST, 'index.html'))) throw new Error('the viewer build wrote no dist/viewer/index.html');
  return VIEWER_DIST;
}

/** The hashed JS and CSS assets index.html refers to (paths relative to /view/). */
export function viewerAssets(dist = VIEWER_DIST): { js: string; css: string } {
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const js = /src="(assets\/[^"]+\.js)"/.exec(html)?.[1];
  const css = /href="(assets\/[^"]+\.css)"/.exec(html)?.[1];
  if (!js || !css) throw new Error('index.html names no assets');
  return { js, css };
}

/** Debian's Chromium (never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';

/** Chromium's flags for the browser tests: headless, no network extras, WebGL on the CPU. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // WebGL (h5web's heatmap, three.js) on the CPU: ANGLE over SwiftShader.
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
];

/** Distinct RGB colours in a PNG, counted by the browser's own decoder (no PNG library needed). */
export const COUNT_COLORS = `async (b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
  const c = new OffscreenCanvas(bmp.width, bmp.height);
  const g = c.getContext('2d');
  g.drawImage(bmp, 0, 0);
  const d = g.getImageData(0, 0, bmp.width, bmp.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  return seen.size;
}`;

/**
 * The viewer's probe for the raw-file download route (`HEAD /file`): a server without the route
 * answers 404, which is no failure of the page.
 */
export function isDownloadProbe(method: string, url: string): boolean {
  return method === 'HEAD' && new URL(url).pathname === '/file';
}
