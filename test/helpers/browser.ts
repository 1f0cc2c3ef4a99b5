/**
 * Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by playwright-core
 * (never a downloaded browser), what counts as a failure on a page, and how h5web's views are
 * read (the heatmap canvas's colours, the matrix view's cells).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
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

/** A browser with a profile of its own (removed by `close`). */
export async function launchBrowser(): Promise<{ ctx: BrowserContext; page: Page; close(): Promise<void> }> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    timezoneId: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  page.setDefaultTimeout(30000);
  return {
    ctx,
    page,
    async close() {
      await ctx.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * What goes wrong on a page: console errors, page errors, failed requests (not those the page
 * aborts itself), HTTP error statuses other than `allowed`. `expectClean()` fails on anything
 * seen since the last call.
 */
export function watchProblems(page: Page): { allowed: Set<number>; expectClean(): void; take(): string[] } {
  let problems: string[] = [];
  const allowed = new Set<number>();
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const st = /^Failed to load resource: the server responded with a status of (\d+)/.exec(m.text());
    if (st && allowed.has(Number(st[1]))) return;
    problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allowed.has(r.status())) problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  return {
    allowed,
    expectClean() {
      const seen = problems;
      problems = [];
      expect(seen, seen.join('\n')).to.deep.equal([]);
    },
    /** The problems seen since the last call, forgotten (a test that provokes some checks them). */
    take() {
      const seen = problems;
      problems = [];
      return seen;
    },
  };
}

/** Distinct RGB colours in a PNG, counted by the browser's own decoder (no PNG library needed). */
const COUNT_COLORS = `async (b64) => {
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

/** Distinct colours of the first visible canvas (h5web's heatmap; 1-2 for a blank one). */
export async function canvasColors(page: Page): Promise<number> {
  const canvas = page.locator('canvas').first();
  await canvas.waitFor({ state: 'visible' });
  await page.waitForTimeout(300); // let WebGL draw its first frame
  const png = await canvas.screenshot();
  return page.evaluate(`(${COUNT_COLORS})(${JSON.stringify(png.toString('base64'))})`) as Promise<number>;
}

/** Choose one of h5web's visualizations. */
export async function showVis(page: Page, name: string): Promise<void> {
  await page.getByRole('tab', { name, exact: true }).click();
  await page.locator('[role="tab"][aria-selected="true"]', { hasText: name }).waitFor();
}

/** Text of h5web's rendered matrix cells: `row,column` (0-based) -> text. */
export async function gridCells(page: Page): Promise<Map<string, string>> {
  const grid = page.locator('[role="grid"]');
  await grid.locator('[role="gridcell"]').first().waitFor();
  const cells = await grid.locator('[role="row"][aria-rowindex] [role="gridcell"]').evaluateAll((els) =>
    els.map((e) => [Number(e.parentElement!.getAttribute('aria-rowindex')) - 1, Number(e.getAttribute('aria-colindex')) - 1, e.textContent ?? ''] as const),
  );
  return new Map(cells.map(([r, c, t]) => [`${r},${c}`, t]));
}
