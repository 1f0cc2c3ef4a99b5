/**
 * Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by playwright-core
 * (never a downloaded browser), what counts as a failure on a page, and how h5web's views are
 * read (the heatmap canvas's colours, the matrix view's cells).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type Page, type Request, chromium } from 'playwright-core';

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

/**
 * A browser with a profile of its own (removed by `close`): one page, `timeout` ms for each of
 * its waits (default 30 s), the machine's time zone, 1280x800.
 */
export async function launchBrowser(opts: { timeout?: number } = {}): Promise<{ ctx: BrowserContext; page: Page; close(): Promise<void> }> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'h5store-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    timezoneId: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  page.setDefaultTimeout(opts.timeout ?? 30000);
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
 * The viewer's probe for the raw-file download route (`HEAD /file`): a server without the route
 * answers 404, which is no failure of the page.
 */
export function isDownloadProbe(method: string, url: string): boolean {
  return method === 'HEAD' && new URL(url).pathname === '/file';
}

/** What `watchProblems` records and lets pass; a test sets `allowed` / `allowedConsole` for what it provokes. */
export interface PageWatch {
  /** HTTP statuses a test provokes on purpose (e.g. 401 before signing in). */
  allowed: Set<number>;
  /** Console errors a test provokes on purpose (h5web logs the errors it displays). */
  allowedConsole: RegExp[];
  /** Requests to the API (paths outside `/view/`) since the last `reset`. */
  requests: Request[];
  /** Fail on anything seen since the last call (or `reset`), and forget it. */
  expectClean(): void;
  /** The problems seen since the last call, forgotten (a test that provokes some checks them). */
  take(): string[];
  /** Forget problems and requests; nothing allowed any more (call before each test). */
  reset(): void;
}

/**
 * What goes wrong on a page: console errors, page errors, failed requests (not those the page
 * aborts itself), HTTP error statuses other than `allowed`, and with `downloadProbe` not the 404 of
 * the viewer's `HEAD /file` probe. `expectClean()` fails on anything seen since the last call.
 */
export function watchProblems(page: Page, opts: { downloadProbe?: boolean } = {}): PageWatch {
  let problems: string[] = [];
  const w: PageWatch = {
    allowed: new Set<number>(),
    allowedConsole: [],
    requests: [],
    expectClean() {
      const seen = problems;
      problems = [];
      expect(seen, seen.join('\n')).to.deep.equal([]);
    },
    take() {
      const seen = problems;
      problems = [];
      return seen;
    },
    reset() {
      problems = [];
      w.allowed = new Set();
      w.allowedConsole = [];
      w.requests = [];
    },
  };
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // Chromium reports every HTTP error status as a console error too: judged by status below.
    const st = /^Failed to load resource: the server responded with a status of (\d+)/.exec(m.text());
    if (st && w.allowed.has(Number(st[1]))) return;
    if (st && opts.downloadProbe && st[1] === '404' && m.location().url && isDownloadProbe('HEAD', m.location().url)) return;
    if (w.allowedConsole.some((re) => re.test(m.text()))) return;
    problems.push(`console error: ${m.text()} ${m.location().url ?? ''}`.trimEnd());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    // Requests the page itself cancels (h5web aborts value fetches it no longer needs) are fine.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() < 400 || w.allowed.has(r.status())) return;
    if (r.status() === 404 && opts.downloadProbe && isDownloadProbe(r.request().method(), r.url())) return;
    problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  page.on('request', (r) => {
    if (!new URL(r.url()).pathname.startsWith('/view/')) w.requests.push(r);
  });
  return w;
}

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

/** Distinct colours of a PNG screenshot, counted in `page`. */
export function pngColors(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(`(${COUNT_COLORS})(${JSON.stringify(png.toString('base64'))})`) as Promise<number>;
}

/**
 * Distinct colours of the first visible canvas matching `selector` (h5web's heatmap; 1-2 for a
 * blank one), `settleMs` after it shows (WebGL draws its first frame). A canvas replaced between
 * finding it and taking its picture (h5web reopens a followed dataset on each new shape) is found
 * again, five times at most.
 */
export async function canvasColors(page: Page, selector = 'canvas', settleMs = 300): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const canvas = page.locator(selector).first();
    await canvas.waitFor({ state: 'visible' });
    await page.waitForTimeout(settleMs);
    try {
      return await pngColors(page, await canvas.screenshot());
    } catch (e) {
      if (attempt >= 5 || !/not attached|detached/i.test(String(e))) throw e;
    }
  }
}

/** Choose one of h5web's visualizations. */
export async function showVis(page: Page, name: string): Promise<void> {
  await page.getByRole('tab', { name, exact: true }).click();
  await page.locator('[role="tab"][aria-selected="true"]', { hasText: name }).first().waitFor();
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
