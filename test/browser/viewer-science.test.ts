/**
 * The web viewer on the files scientists have (issue #28 items 1-6 and 11, issue #26 item 4's
 * viewer part), in headless Debian Chromium against the real server: an xarray netCDF-4 file
 * with NaN fill values and ±Inf values, a CF file with packed values and coordinate variables,
 * a NeXus file with soft-linked signal/axes and an external link into the same folder, a pandas
 * table, a group of 50,000 datasets, and a dataset an h5py child process appends frames to.
 * Each test checks what is drawn (no error panel, plotted values, axes); screenshots go to
 * test-output/viewer-science/. Files are written by test/tools/make_science_files.py (xarray,
 * pandas/PyTables, h5py) and test/tools/make_big_group.py (kept between runs in the system's
 * temporary folder, keyed by the script's content).
 */
import { expect } from 'chai';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { parseJsonBody } from '../../src/codec/json.js';
import { childEnv } from '../helpers/env.js';
import { PYTHON } from '../helpers/python.js';
import { REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { type PageWatch, CHROMIUM, canvasColors, gridCells, launchBrowser, showVis, watchProblems } from '../helpers/browser.js';
import { ensureViewerBuilt } from '../helpers/viewer.js';

const SHOTS = path.join(REPO, 'test-output/viewer-science');
const BIG_COUNT = 50000;

interface ScienceInfo {
  xarray: { temperature_row0: (number | null)[]; flux: (number | string)[]; lat: number[]; lon: number[] };
  cf: { raw_row1: number[]; decoded: (number | null)[][]; lat: number[]; lon: number[] };
  nexus: { energy: number[]; counts_max: number; frames_shape: number[] };
  pandas: { columns: string[]; rows: (number | string | null)[][] };
}

/** The 50,000-dataset file, written once per version of its generator and kept in the temporary folder. */
function bigGroupFile(): string {
  const tool = path.join(REPO, 'test/tools/make_big_group.py');
  const hash = crypto.createHash('sha256').update(fs.readFileSync(tool)).update(String(BIG_COUNT)).digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), 'h5store-test-cache');
  const file = path.join(dir, `big-group-${hash}.h5`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync(PYTHON, [tool, file, String(BIG_COUNT)], { env: childEnv({}) });
  }
  return file;
}

describe('web viewer on the files scientists have (Chromium)', function () {
  this.timeout(240000);
  let srv: TestServer;
  let root: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  /** Problems seen since the last check, allowed statuses, API requests. */
  let watch: PageWatch;
  let info: ScienceInfo;

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      console.warn(`    (skipped: ${CHROMIUM} is missing; install it with apt-get install chromium)`);
      this.skip();
    }
    root = tempRoot('h5store-viewer-science-');
    const sci = path.join(root, 'sci');
    try {
      info = JSON.parse(execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_science_files.py'), sci], { encoding: 'utf8', env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] }));
    } catch (e) {
      const err = e as { status?: number; stderr?: string };
      if (err.status === 3) {
        console.warn(`    (skipped: ${String(err.stderr).trim()})`);
        this.skip();
      }
      throw e;
    }
    fs.mkdirSync(path.join(root, 'big'));
    fs.copyFileSync(bigGroupFile(), path.join(root, 'big', 'many.h5'));
    fs.mkdirSync(path.join(root, 'live'));
    ensureViewerBuilt();
    srv = await startServer({ root });
    fs.rmSync(SHOTS, { recursive: true, force: true });
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser();
    page = browser.page;
    // every page starts with the viewer's default (conventions on), whatever a test toggled
    await browser.ctx.addInitScript(() => localStorage.removeItem('h5store.viewer.conventions'));
    watch = watchProblems(page, { downloadProbe: true });
  });

  beforeEach(() => watch?.reset());

  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, name) });
  const treeItem = (p: string) => page.locator(`[role="treeitem"][data-path="${p}"]`);
  const open = async (domain: string, p?: string) => {
    await page.goto(`${srv.url}/view/?domain=${domain}${p ? `&path=${p}` : ''}`);
    await page.locator('.h5web-host [role="tree"]').waitFor();
  };

  /** No h5web error panel and none of the errors these files used to give. */
  async function expectNoErrorPanel(): Promise<void> {
    const text = (await page.locator('.h5web-host').textContent()) ?? '';
    for (const bad of ['Expected valid JSON', 'Expected child', 'Failed to fetch', 'Something went wrong', 'Error:']) expect(text, bad).to.not.include(bad);
  }

  /** A number as h5web's matrix writes it (a Unicode minus sign). */
  const num = (t: string | undefined) => Number((t ?? '').replace('−', '-'));

  /** Text of the SVG axis ticks and labels of the visualization. */
  const axisText = () => page.locator('.h5web-host svg text, .h5web-host [class*="axis"]').allTextContents();

  it('an xarray netCDF-4 file with NaN fill values opens; NaN and ±Infinity show as such', async () => {
    await open('/sci/xarray_nan.nc');
    for (const name of ['temperature', 'flux', 'lat', 'lon', 'time', 'empty']) await treeItem(`/${name}`).waitFor();
    // the variable with coordinates plots against them (NXdata made from its dimension scales)
    await treeItem('/temperature').click();
    expect(await canvasColors(page, '.h5web-host canvas', 400), 'heatmap colours').to.be.greaterThan(20);
    const axes = (await axisText()).join(' ');
    expect(axes).to.include('lat').and.include('lon');
    await expectNoErrorPanel();
    await shot('01-xarray-temperature.png');
    // the 1-D variable: a line against lon; its values as stored, NaN/Inf included
    await treeItem('/flux').click();
    await page.locator('.h5web-host svg').first().waitFor();
    await treeItem('/flux/flux').click();
    await showVis(page, 'Matrix');
    await page.getByRole('radio', { name: 'Exact' }).click();
    const cells = await gridCells(page);
    const shown = info.xarray.flux.map((_, i) => cells.get(`${i},0`));
    expect(shown[2]).to.match(/^(Infinity|∞)$/);
    expect(shown[5]).to.match(/^[-−](Infinity|∞)$/);
    expect(shown[6]).to.match(/^NaN$/i);
    expect(num(shown[0])).to.equal(-1);
    await shot('02-xarray-flux-nan-inf.png');
    // an empty variable opens without an error
    await treeItem('/empty').click();
    await page.waitForTimeout(500);
    await expectNoErrorPanel();
    watch.expectClean();
  });

  it('a CF file: packed values unpacked, fill and missing values masked, coordinates as axes; raw values one toggle away', async () => {
    await open('/sci/cf_packed.nc', '/sst');
    expect(await canvasColors(page, '.h5web-host canvas', 400)).to.be.greaterThan(10);
    const axes = (await axisText()).join(' ');
    expect(axes).to.include('lat').and.include('lon');
    await expectNoErrorPanel();
    await shot('03-cf-sst-heatmap.png');
    await treeItem('/sst/sst').click();
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    for (const [r, row] of info.cf.decoded.entries()) {
      for (const [c, want] of row.entries()) {
        const got = cells.get(`${r},${c}`);
        if (got === undefined) continue;
        if (want === null) expect(got, `cell ${r},${c}`).to.match(/^NaN$/i);
        else expect(num(got), `cell ${r},${c}`).to.be.closeTo(want, 1e-6);
      }
    }
    await shot('04-cf-sst-decoded.png');
    // as stored: the int16 values
    await page.locator('input[name="conventions"]').uncheck();
    await treeItem('/sst').click();
    await showVis(page, 'Matrix');
    await page.getByRole('radio', { name: 'Exact' }).click();
    const raw = await gridCells(page);
    // the stored int16 values (h5web itself shows the _FillValue cell as NaN)
    info.cf.raw_row1.forEach((want, c) => {
      const got = raw.get(`1,${c}`);
      if (want === -32767) expect(got).to.match(/^(NaN|[-−]32767)$/);
      else expect(num(got), `raw cell 1,${c}`).to.equal(want);
    });
    await page.locator('input[name="conventions"]').check();
    watch.expectClean();
  });

  it('NeXus: the default plot follows soft-linked signal and axes; an external link into the same folder plots', async () => {
    await open('/sci/nexus.nxs');
    await treeItem('/').click();
    // the root's default -> /entry -> /entry/data: a line of counts against energy
    await page.locator('.h5web-host svg').first().waitFor();
    await page.waitForTimeout(500);
    const axes = (await axisText()).join(' ');
    expect(axes).to.include('energy').and.include('keV');
    await expectNoErrorPanel();
    expect(await page.locator('.h5web-host').textContent()).to.include('energy scan with soft-linked axes');
    await shot('05-nexus-default-line.png');
    // the soft links are resolved in the tree: the signal is a dataset (not "unresolved")
    await treeItem('/entry').click();
    await treeItem('/entry/data').click();
    await treeItem('/entry/data/counts').click();
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect(cells.size).to.be.greaterThan(3);
    // the NXdata group whose signal is an external link to nexus_detector.h5
    await treeItem('/entry/ext_data').click();
    expect(await canvasColors(page, '.h5web-host canvas', 400)).to.be.greaterThan(10);
    await expectNoErrorPanel();
    await shot('06-nexus-external-heatmap.png');
    watch.expectClean();
  });

  it('a pandas table shows its named columns and values', async () => {
    await open('/sci/pandas_table.h5', '/weather/table');
    await page.locator('[role="columnheader"]').first().waitFor();
    const headers = await page.locator('[role="columnheader"]').allTextContents();
    expect(headers).to.deep.equal(info.pandas.columns);
    await page.getByRole('radio', { name: 'Exact' }).click();
    const cells = await gridCells(page);
    for (const [r, row] of info.pandas.rows.entries()) {
      for (const [c, want] of row.entries()) {
        const got = cells.get(`${r},${c}`);
        if (want === null) expect(got).to.match(/^NaN$/i);
        else if (typeof want === 'number') expect(num(got), `row ${r} col ${c}`).to.equal(want);
        else expect(got).to.equal(want);
      }
    }
    await shot('07-pandas-table.png');
    watch.expectClean();
  });

  it('a group of 50,000 datasets opens in pages, with few requests', async () => {
    const t0 = Date.now();
    await open('/big/many.h5');
    await treeItem('/big').click();
    await treeItem('/big/d00999').waitFor();
    const opened = Date.now() - t0;
    expect(await page.locator('.h5web-host [role="treeitem"][data-path^="/big/"]').count()).to.equal(1001);
    const more = treeItem('/big/⋯ more after d00999');
    await more.waitFor();
    // a handful of requests, not one per member
    expect(watch.requests.length, watch.requests.map((r) => r.url()).join('\n')).to.be.below(20);
    await shot('08-big-group-page1.png');
    await more.click();
    await treeItem('/big/⋯ more after d00999/d01000').click();
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect([0, 1, 2, 3].map((i) => Number(cells.get(`${i},0`)))).to.deep.equal([1000, 1001, 1002, 1003]);
    // a deep link beyond the first page
    await open('/big/many.h5', '/big/d49999');
    await page.locator('[role="tab"][aria-selected="true"]').first().waitFor();
    await showVis(page, 'Matrix');
    await page.getByRole('radio', { name: 'Exact' }).click();
    const last = await gridCells(page);
    expect(Number(last.get('3,0'))).to.equal(49999 + 3);
    await shot('09-big-group-deep-link.png');
    console.log(`      (first page of 50,000 members shown in ${opened} ms)`);
    watch.expectClean();
  });

  describe('following a growing dataset', () => {
    let writer: ChildProcess | undefined;
    const file = () => path.join(root, 'live', 'stack.h5');

    before(() => {
      execFileSync(PYTHON, ['-c', WRITER, file(), 'init'], { env: childEnv({ HDF5_USE_FILE_LOCKING: 'FALSE' }) });
    });
    after(() => {
      writer?.kill();
    });

    it('"Follow" shows the newest frame of an image stack and the growing line while h5py appends', async () => {
      // a file momentarily being written may answer 503 (Retry-After); the viewer tries again
      watch.allowed = new Set([503]);
      await open('/live/stack.h5', '/frames');
      await page.locator('.h5web-host [role="slider"][aria-orientation="vertical"]').waitFor();
      await page.getByRole('button', { name: 'Follow' }).click();
      await page.locator('.follow-status', { hasText: '[2 × 24 × 32]' }).waitFor();
      // the server's change feed (GET /events) tells the changes: polling slows down
      await page.locator('.follow-status', { hasText: ', live' }).waitFor({ timeout: 10000 });
      writer = spawn(PYTHON, ['-c', WRITER, file(), 'append', '6', '0.4'], { env: childEnv({ HDF5_USE_FILE_LOCKING: 'FALSE' }), stdio: 'ignore' });
      // the viewer reopens on each new shape, at the newest frame
      for (const frames of [4, 8]) {
        await page.locator('.follow-status', { hasText: new RegExp(`\\[(${frames}|${frames + 1}|${frames + 2}|${frames + 3}) × 24 × 32\\]`) }).waitFor({ timeout: 30000 });
        const slider = page.locator('.h5web-host [role="slider"][aria-orientation="vertical"]');
        await slider.waitFor();
        const max = Number(await slider.getAttribute('aria-valuemax'));
        expect(max).to.be.at.least(frames - 1);
        expect(Number(await slider.getAttribute('aria-valuenow'))).to.equal(max);
        expect(await canvasColors(page, '.h5web-host canvas', 400)).to.be.greaterThan(5);
      }
      await new Promise<void>((res) => (writer!.exitCode !== null ? res() : writer!.once('exit', () => res())));
      await page.locator('.follow-status', { hasText: '[8 × 24 × 32]' }).waitFor({ timeout: 10000 });
      await shot('10-follow-stack.png');
      await page.getByRole('button', { name: 'Following' }).click();
      expect(await page.locator('.follow-status').count()).to.equal(0);
      // the line of values grows too
      await open('/live/stack.h5', '/sums');
      await page.getByRole('button', { name: 'Follow' }).click();
      await page.locator('.follow-status', { hasText: '[14]' }).waitFor();
      execFileSync(PYTHON, ['-c', WRITER, file(), 'append', '2', '0'], { env: childEnv({ HDF5_USE_FILE_LOCKING: 'FALSE' }) });
      await page.locator('.follow-status', { hasText: '[16]' }).waitFor({ timeout: 15000 });
      await page.locator('.h5web-host svg').first().waitFor();
      await shot('11-follow-line.png');
      await page.getByRole('button', { name: 'Following' }).click();
      watch.expectClean();
    });
  });

  it('"Use from Python" gives h5pyd, xarray and curl snippets for the file and object shown', async () => {
    await open('/sci/xarray_nan.nc', '/temperature');
    await page.getByRole('button', { name: 'Use from Python' }).click();
    const panel = page.getByRole('region', { name: 'Use from Python' });
    await panel.waitFor();
    const texts = Object.fromEntries(await panel.locator('section').evaluateAll((ss) => ss.map((s) => [s.getAttribute('data-snippet'), s.querySelector('code')?.textContent ?? ''])));
    expect(Object.keys(texts)).to.deep.equal(['h5pyd', 'xarray', 'curl']);
    expect(texts.h5pyd).to.include(`h5pyd.File("/sci/xarray_nan.nc", "r", endpoint="${srv.url}")`).and.include('f["/temperature"]');
    expect(texts.xarray).to.include('engine="h5netcdf"');
    // the curl snippet runs as shown
    const curl = (texts.curl as string).split('\n').filter((l) => l.startsWith('curl '));
    for (const c of curl) {
      const out = execFileSync('bash', ['-c', c], { encoding: 'utf8' });
      expect(parseJsonBody(out)).to.satisfy((j: Record<string, unknown>) => 'id' in j || 'root' in j);
    }
    await shot('12-python-snippets.png');
    watch.expectClean();
  });

  it('the download button shows when the server offers the file route', async () => {
    await open('/sci/nexus.nxs');
    const head = await fetch(`${srv.url}/file?domain=/sci/nexus.nxs`, { method: 'HEAD' });
    await page.waitForTimeout(300);
    expect(await page.locator('a.download').count()).to.equal(head.status === 200 ? 1 : 0);
    if (head.status === 200) expect(await page.locator('a.download').getAttribute('href')).to.include('/file?domain=/sci/nexus.nxs');
    watch.expectClean();
  });
});

/**
 * An h5py writer: `init` makes /frames (2 frames of 24x32, unlimited first dimension) and
 * /sums (8 values); `append N DELAY` adds N frames and N sums, opening and closing the file
 * for each (as acquisition scripts without SWMR do), DELAY seconds apart.
 */
const WRITER = `
import sys, time, h5py, numpy as np
path, cmd = sys.argv[1], sys.argv[2]
def frame(i):
    y, x = np.mgrid[0:24, 0:32]
    return (np.sin(x / 4 + i) * np.cos(y / 5) * 100 + i).astype("f4")
if cmd == "init":
    with h5py.File(path, "w") as f:
        f.create_dataset("frames", data=np.stack([frame(0), frame(1)]), maxshape=(None, 24, 32), chunks=(1, 24, 32))
        f.create_dataset("sums", data=np.arange(8, dtype="f8"), maxshape=(None,), chunks=(64,))
else:
    n, delay = int(sys.argv[3]), float(sys.argv[4])
    for k in range(n):
        time.sleep(delay)
        with h5py.File(path, "a") as f:
            d = f["frames"]; i = d.shape[0]
            d.resize(i + 1, axis=0); d[i] = frame(i)
            s = f["sums"]; j = s.shape[0]
            s.resize(j + 1, axis=0); s[j] = j
`;
