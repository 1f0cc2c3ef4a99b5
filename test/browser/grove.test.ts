/**
 * h5web's `H5GroveProvider` against h5store's h5grove API (issue #28 item 7) in headless
 * Chromium: a jupyterlab-h5web-style page (test/browser/grove-page/main.ts, bundled here with
 * esbuild and served on the server's own origin through the browser's request routing) opens
 * tall.h5 and files written as xarray, CF, NeXus writers and pandas write them, and a group of
 * 50,000 datasets (test/tools/make_grove_fixtures.py, written once per version of it: test/helpers/fixtureCache.ts); the test checks what is drawn (no error,
 * the heatmap painted, matrix cells equal to h5py's values, NeXus titles and axes, table
 * columns). Screenshots go to test-output/grove/.
 */
import { expect } from 'chai';
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { CHROMIUM, canvasColors, gridCells, launchBrowser, showVis, watchProblems } from '../helpers/browser.js';
import { cachedOutput, copyCached } from '../helpers/fixtureCache.js';
import { PYTHON, pythonJson } from '../helpers/python.js';
import { REPO, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';

const SHOTS = path.join(REPO, 'test-output/grove');

/** A number as h5web's matrix shows it (scientific notation, U+2212 minus signs). */
const num = (text: string | undefined) => Number((text ?? '').replace(/\u2212/g, '-'));
const MANY = 50_000;

describe('h5web H5GroveProvider in Chromium against /h5grove/ (issue #28 item 7)', function () {
  this.timeout(300_000);
  let srv: TestServer;
  let root: string;
  let bundle: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let watch: ReturnType<typeof watchProblems>;
  let requests: Request[] = [];

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      console.warn(`    (skipped: ${CHROMIUM} is missing; install it with apt-get install chromium)`);
      this.skip();
    }
    root = tempRoot('h5store-grove-browser-');
    copyFixtures(root, 'fx', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    copyCached(cachedOutput('make_grove_fixtures.py', [String(MANY)]), path.join(root, 'g'));
    bundle = tempRoot('h5store-grove-page-');
    await esbuild.build({
      absWorkingDir: REPO,
      entryPoints: { page: path.join(REPO, 'test/browser/grove-page/main.ts') },
      bundle: true,
      minify: true,
      format: 'esm',
      target: ['es2022'],
      define: { 'process.env.NODE_ENV': '"production"' },
      outdir: bundle,
      loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
      logLevel: 'warning',
    });
    srv = await startServer({ root });
    fs.rmSync(SHOTS, { recursive: true, force: true });
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser();
    page = browser.page;
    watch = watchProblems(page);
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/h5grove/')) requests.push(r);
    });
    // the page, on the server's origin (same-origin requests, as a page served beside the API)
    await page.route(`${srv.url}/grove-page/**`, (route) => {
      const name = new URL(route.request().url()).pathname.split('/').pop()!;
      if (name === 'page.js' || name === 'page.css') return route.fulfill({ body: fs.readFileSync(path.join(bundle, name)), contentType: name.endsWith('.js') ? 'text/javascript' : 'text/css' });
      return route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/grove-page/page.css"></head><body><div id="root"></div><script type="module" src="/grove-page/page.js"></script></body></html>',
      });
    });
  });

  beforeEach(() => {
    requests = [];
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await page.screenshot({ path: path.join(SHOTS, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, '-')}.png`) });
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
    for (const d of [root, bundle]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  const open = (file: string, p: string) => page.goto(`${srv.url}/grove-page/index.html?file=${encodeURIComponent(file)}&path=${encodeURIComponent(p)}`);
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, name) });
  const treeItem = (p: string) => page.locator(`[role="treeitem"][data-path="${p}"]`);
  /** No error panel of h5web's. */
  const noErrorPanel = async () => expect(await page.locator('text=/Expected|Error|error|not found/').count(), await page.locator('body').innerText()).to.equal(0);

  it('tall.h5: the heatmap paints and the matrix shows the values h5py reads, from binary (dtype=safe) reads', async () => {
    const values: number[][] = pythonJson("import h5py, json, sys\nwith h5py.File(sys.argv[1], 'r') as f: print(json.dumps(f['/g1/g1.1/dset1.1.1'][...].tolist()))", [path.join(root, 'fx', 'tall.h5')], { lockFree: true });
    await open('fx/tall.h5', '/g1/g1.1/dset1.1.1');
    await page.locator('[role="tab"][aria-selected="true"]', { hasText: 'Heatmap' }).waitFor();
    expect(await canvasColors(page), 'distinct colours in the heatmap').to.be.greaterThan(20);
    await shot('01-tall-heatmap.png');
    const data = requests.map((r) => new URL(r.url())).find((u) => u.pathname === '/h5grove/data');
    expect(data, 'a /h5grove/data request').to.not.equal(undefined);
    expect(Object.fromEntries(data!.searchParams)).to.deep.include({ file: 'fx/tall.h5', path: '/g1/g1.1/dset1.1.1', format: 'bin', dtype: 'safe' });
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect(cells.size).to.be.at.least(25);
    for (const [rc, text] of cells) {
      const [r, c] = rc.split(',').map(Number);
      expect(num(text), `cell ${rc}`).to.equal(values[r]![c]);
    }
    await treeItem('/g2').click();
    await treeItem('/g2/dset2.1').waitFor();
    await noErrorPanel();
    watch.expectClean();
  });

  it('xarray netCDF-4 file: NaN values plot and show as NaN; a NaN _FillValue attribute is what h5web 17 cannot take from any h5grove server', async () => {
    await open('g/xarray.h5', '/pressure');
    await showVis(page, 'Heatmap'); // h5web remembers the last one chosen
    expect(await canvasColors(page)).to.be.greaterThan(10);
    await shot('02-xarray-heatmap.png');
    await showVis(page, 'Matrix');
    let cells = await gridCells(page);
    expect(num(cells.get('0,1'))).to.equal(1010);
    expect(cells.get('0,3')).to.equal('NaN');
    await open('g/xarray.h5', '/temperature');
    await showVis(page, 'Matrix');
    cells = await gridCells(page);
    expect(num(cells.get('0,1'))).to.equal(0.25);
    expect(cells.get('1,2')).to.equal('NaN');
    expect(cells.get('3,0')).to.equal('NaN');
    expect(num(cells.get('4,3'))).to.equal(4.75);
    await noErrorPanel();
    watch.expectClean();
    // h5grove's JSON has no NaN (orjson writes null, as h5store does), and h5web's netCDF support
    // asserts that _FillValue is a number before it plots: the variable xarray writes with a NaN
    // _FillValue shows h5web's error in the heatmap (the values themselves, read as binary,
    // carry their NaN: the matrix above)
    await page.getByRole('tab', { name: 'Heatmap', exact: true }).click(); // h5web's error then takes the place of its tabs
    await page.getByText('Expected number').waitFor();
    const attr = await fetch(`${srv.url}/h5grove/attr/?file=g/xarray.h5&path=/temperature&attr_keys=_FillValue`);
    expect(await attr.json()).to.deep.equal({ _FillValue: null });
    await page.waitForTimeout(300);
    const problems = watch.take();
    expect(problems.every((x) => x.includes('Expected number')), problems.join('\n')).to.equal(true);
  });

  it('CF file with packed values and coordinates: the packed values plot', async () => {
    await open('g/cf.h5', '/tas');
    await showVis(page, 'Heatmap');
    expect(await canvasColors(page)).to.be.greaterThan(10);
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect(num(cells.get('0,1'))).to.equal(-1900);
    await shot('03-cf-matrix.png');
    await noErrorPanel();
    watch.expectClean();
  });

  it('NeXus: the default plot through a soft-linked axis, with its title and axis label; an external link in the folder opens', async () => {
    await open('g/nexus.h5', '/');
    await page.getByText('Detector counts').first().waitFor();
    await page.getByText(/energy \(keV\)/).first().waitFor();
    await shot('04-nexus-default-plot.png');
    await noErrorPanel();
    await open('g/nexus.h5', '/entry/data/monitor');
    await page.locator('[role="tab"][aria-selected="true"]').first().waitFor();
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect([0, 1, 2, 3, 4, 5].map((i) => num(cells.get(`${i},0`)))).to.deep.equal([10, 11, 12, 13, 14, 15]);
    watch.expectClean();
  });

  it('pandas table (compound rows): named columns and the rows', async () => {
    await open('g/table.h5', '/df/table');
    await page.locator('[role="columnheader"]').first().waitFor();
    const headers = await page.locator('[role="columnheader"]').allTextContents();
    expect(headers).to.deep.equal(['index', 'temperature', 'station']);
    const cells = await gridCells(page);
    expect(cells.get('2,2')).to.equal('CHARLIE');
    expect(num(cells.get('1,1'))).to.equal(13.25);
    await shot('05-table.png');
    await noErrorPanel();
    watch.expectClean();
  });

  it('the viewer test\'s files written by xarray, PyTables and NeXus writers (make_science_files.py) open through H5GroveProvider', async function () {
    const sci = path.join(root, 'sci');
    const made = spawnSync(PYTHON, [path.join(REPO, 'test/tools/make_science_files.py'), sci], { encoding: 'utf8' });
    if (made.status === 3) {
      console.warn(`      (skipped: ${made.stderr.trim()})`);
      this.skip();
    }
    expect(made.status, made.stderr).to.equal(0);
    const info = JSON.parse(made.stdout);
    // xarray's NaN _FillValue attributes are what h5web 17 cannot take through any h5grove
    // server (see the xarray test above); the values come through
    const lat = await fetch(`${srv.url}/h5grove/data/?file=sci/xarray_nan.nc&path=/lat`);
    expect(await lat.json()).to.deep.equal(info.xarray.lat);
    await open('sci/cf_packed.nc', '/sst');
    await showVis(page, 'Heatmap');
    expect(await canvasColors(page)).to.be.greaterThan(10);
    await open('sci/nexus.nxs', '/entry/ext_data'); // its signal: an external link into the same folder
    await page.locator('[role="tab"][aria-selected="true"]', { hasText: 'NX Heatmap' }).waitFor();
    expect(await canvasColors(page)).to.be.greaterThan(10);
    await shot('07-sci-nexus-external.png');
    await open('sci/nexus.nxs', '/');
    await page.locator('[role="tab"][aria-selected="true"]', { hasText: /^NX/ }).waitFor();
    await open('sci/pandas_table.h5', '/weather/table');
    await page.getByText('"alpha"').first().waitFor(); // h5web shows PyTables' array fields as raw rows
    await noErrorPanel();
    watch.expectClean();
  });

  it(`a group of ${MANY.toLocaleString('en')} datasets: its members are listed and one opens`, async () => {
    const t0 = performance.now();
    await open('g/many.h5', '/big/d49999');
    await page.getByText('49999', { exact: true }).first().waitFor({ timeout: 120_000 });
    await treeItem('/big/d00000').waitFor({ timeout: 120_000 });
    const ms = performance.now() - t0;
    console.log(`      (opened in ${(ms / 1000).toFixed(1)} s)`);
    await shot('06-many.png');
    await noErrorPanel();
    watch.expectClean();
  });
});
