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
