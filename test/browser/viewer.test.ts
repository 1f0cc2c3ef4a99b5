/**
 * The web viewer in a real browser (issue #8): headless Debian Chromium driven by playwright-core
 * against the real server on copies of the shared fixtures and files written here with h5py.
 * Any console error, page error, failed request or HTTP error status fails the test it happens
 * in (except the statuses a test provokes on purpose). Screenshots go to test-output/viewer/.
 *
 * Signing in is tested against a second server with a real users file.
 * Skips with a message when /usr/bin/chromium is missing (`apt-get install chromium`).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { formatBytes, formatTime } from '../../viewer/src/format.js';
import { PYTHON, pythonJson } from '../helpers/python.js';
import { tokenAdd, userAdd } from '../../src/auth/admin.js';
import { fileStatus } from '../../src/store/session/fileStatus.js';
import { Client, HAVE_SHARED, REPO, SHARED_FIXTURES, type TestServer, copyFixtures, fixturePath, startServer, tempRoot } from '../helpers/server.js';
import { type PageWatch, CHROMIUM, canvasColors, gridCells, launchBrowser, pngColors, showVis, watchProblems } from '../helpers/browser.js';
import { ensureViewerBuilt } from '../helpers/viewer.js';

const SHOTS = path.join(REPO, 'test-output/viewer');

/** Values written by test/tools/make_viewer_fixture.py, as h5py reads them back. */
interface FixtureInfo {
  table: [number, number, string][];
  fields: string[];
  fixed: string[];
  vlen: string[];
  cube: { shape: number[]; chunks: number[]; compression: string };
  lzf: { compression: string; row0: number[] };
}

describe('web viewer in Chromium', function () {
  this.timeout(180000);
  let srv: TestServer;
  let root: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let ctx: BrowserContext;
  let page: Page;
  /** Problems seen since the last check (console errors, page errors, failed requests, HTTP errors), allowed statuses, API requests. */
  let watch: PageWatch;
  let info: FixtureInfo;
  let tallValues: number[][];

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      console.warn(`    (skipped: ${CHROMIUM} is missing; install it with apt-get install chromium)`);
      this.skip();
    }
    ensureViewerBuilt();
    root = tempRoot('h5store-viewer-browser-');
    if (HAVE_SHARED) copyFixtures(root, 'fx');
    else copyFixtures(root, 'fx', ['tall.h5'], path.dirname(fixturePath('tall.h5')));
    fs.mkdirSync(path.join(root, 'fx', 'empty-folder'));
    info = JSON.parse(execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_viewer_fixture.py'), path.join(root, 'h5py')], { encoding: 'utf8' }));
    fs.mkdirSync(path.join(root, 'many'));
    for (let i = 0; i < 25; i++) fs.copyFileSync(path.join(root, 'fx', 'tall.h5'), path.join(root, 'many', `f${String(i).padStart(2, '0')}.h5`));
    tallValues = pythonJson(`import h5py, json, sys
with h5py.File(sys.argv[1], 'r') as f:
    print(json.dumps(f['/g1/g1.1/dset1.1.1'][...].tolist()))`, [path.join(root, 'fx', 'tall.h5')], { lockFree: true });
    srv = await startServer({ root });

    fs.rmSync(SHOTS, { recursive: true, force: true });
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser({ timeout: 20000 });
    ({ ctx, page } = browser);
    watch = watchProblems(page, { downloadProbe: true });
  });

  beforeEach(() => watch?.reset());

  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, name) });
  const rowNames = () => page.locator('table.listing tbody tr[data-name]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')));
  const treeItem = (p: string) => page.locator(`[role="treeitem"][data-path="${p}"]`);

  it('a browser opening / is redirected to the folder browser at /view/', async () => {
    const resp = await page.goto(srv.url + '/');
    expect(page.url()).to.equal(srv.url + '/view/');
    expect(resp!.status()).to.equal(200);
    await page.locator('table.listing').waitFor();
    expect(await rowNames()).to.deep.equal(['/fx', '/h5py', '/many']);
    await shot('01-top-folder.png');
    watch.expectClean();
  });

  it('a folder lists domains and folders with size and modification time', async () => {
    await page.goto(srv.url + '/view/');
    await page.locator('a.entry.folder', { hasText: 'fx' }).click();
    await page.waitForURL(/\?domain=\/fx$/);
    await page.locator('tr[data-name="/fx/tall.h5"]').waitFor();
    const names = await rowNames();
    // files that are not HDF5 are not listed (issue #28 item 6)
    const want = fs
      .readdirSync(path.join(root, 'fx'))
      .filter((n) => fs.statSync(path.join(root, 'fx', n)).isDirectory() || fileStatus(path.join(root, 'fx', n)).hdf5)
      .map((n) => `/fx/${n}`)
      .sort();
    expect(names).to.deep.equal(want);
    const st = fs.statSync(path.join(root, 'fx', 'tall.h5'));
    const cells = await page.locator('tr[data-name="/fx/tall.h5"] td').allTextContents();
    expect(cells[0]).to.contain('tall.h5');
    expect(cells[1]).to.equal('domain');
    expect(cells[2]).to.equal(formatBytes(st.size));
    expect(await page.locator('tr[data-name="/fx/tall.h5"] td.num').getAttribute('title')).to.equal(`${st.size} bytes`);
    expect(cells[3]).to.equal(formatTime(st.mtimeMs / 1000));
    // Each entry is one table row (a page style must not turn rows into blocks).
    for (const n of ['/fx/tall.h5', '/fx/empty-folder']) {
      const tops = await page.locator(`tr[data-name="${n}"] td`).evaluateAll((tds) => tds.map((td) => Math.round(td.getBoundingClientRect().top)));
      expect(new Set(tops).size, `${n} cells on one line: ${tops}`).to.equal(1);
    }
    const lefts = await page.locator('a.entry').evaluateAll((as) => as.map((a) => Math.round(a.getBoundingClientRect().left)));
    expect(new Set(lefts).size, `names aligned: ${lefts}`).to.equal(1);
    const folderCells = await page.locator('tr[data-name="/fx/empty-folder"] td').allTextContents();
    expect(folderCells.slice(1, 3)).to.deep.equal(['folder', '']);
    // The breadcrumb and the path box show where we are.
    expect(await page.locator('input[name="path"]').inputValue()).to.equal('/fx');
    await shot('02-folder-fx.png');
    watch.expectClean();
  });

  it('a large folder pages with Limit/Marker (next, previous, back button)', async () => {
    await page.goto(srv.url + '/view/?domain=/many&limit=10');
    await page.locator('tr[data-name="/many/f00.h5"]').waitFor();
    const pageOf = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `/many/f${String(from + i).padStart(2, '0')}.h5`);
    expect(await rowNames()).to.deep.equal(pageOf(0, 10));
    expect(await page.locator('.pager .prev').count()).to.equal(0);
    const listing = watch.requests.find((r) => new URL(r.url()).pathname === '/domains')!;
    expect(Object.fromEntries(new URL(listing.url()).searchParams)).to.deep.include({ domain: '/many/', Limit: '11' });

    await page.locator('.pager .next').click();
    await page.locator('tr[data-name="/many/f10.h5"]').waitFor();
    expect(await rowNames()).to.deep.equal(pageOf(10, 20));
    expect(new URL(page.url()).searchParams.get('marker')).to.equal('/many/f09.h5');
    const second = watch.requests.filter((r) => new URL(r.url()).pathname === '/domains').at(-1)!;
    expect(new URL(second.url()).searchParams.get('Marker')).to.equal('/many/f09.h5');

    await page.locator('.pager .next').click();
    await page.locator('tr[data-name="/many/f20.h5"]').waitFor();
    expect(await rowNames()).to.deep.equal(pageOf(20, 25));
    expect(await page.locator('.pager .next').count()).to.equal(0);
    expect(await page.locator('.pager .page').textContent()).to.equal('Page 3');
    await shot('03-paging-last.png');

    await page.locator('.pager .prev').click();
    await page.locator('tr[data-name="/many/f10.h5"]').waitFor();
    expect(await rowNames()).to.deep.equal(pageOf(10, 20));
    await page.locator('.pager .prev').click();
    await page.locator('tr[data-name="/many/f00.h5"]').waitFor();
    expect(await rowNames()).to.deep.equal(pageOf(0, 10));
    expect(await page.locator('.pager .prev').count()).to.equal(0);
    // The browser's back button returns to the page before.
    await page.goBack();
    await page.locator('tr[data-name="/many/f10.h5"]').waitFor();
    expect(await rowNames()).to.deep.equal(pageOf(10, 20));
    // A reload keeps the page (the marker is in the URL).
    await page.reload();
    await page.locator('tr[data-name="/many/f10.h5"]').waitFor();
    expect(await rowNames()).to.deep.equal(pageOf(10, 20));
    watch.expectClean();
  });

  it('the path box opens a domain in h5web', async () => {
    await page.goto(srv.url + '/view/');
    await page.locator('table.listing').waitFor();
    // underscores stay visible at 1x (the line box once clipped them): dark pixels inside the box
    const box = page.locator('input[name="path"]');
    await box.fill('______');
    await box.blur();
    const r = (await box.boundingBox())!;
    const inner = await page.screenshot({ clip: { x: r.x + 3, y: r.y + 3, width: r.width - 6, height: r.height - 6 } });
    expect(await pngColors(page, inner), 'colours inside the path box').to.be.greaterThan(1);
    await page.locator('input[name="path"]').fill(' /fx/tall.h5 ');
    await page.locator('input[name="path"]').press('Enter');
    await page.waitForURL(/\?domain=\/fx\/tall\.h5$/);
    await treeItem('/g1').waitFor();
    await treeItem('/g2').waitFor();
    watch.expectClean();
  });

  it('tall.h5: open it from its folder, navigate to /g1/g1.1/dset1.1.1, the heatmap renders', async () => {
    await page.goto(srv.url + '/view/?domain=/fx');
    await page.locator('a.entry.domain', { hasText: /^tall\.h5$/ }).click();
    await page.waitForURL(/\?domain=\/fx\/tall\.h5$/);
    await treeItem('/g1').click();
    await treeItem('/g1/g1.1').click();
    await treeItem('/g1/g1.1/dset1.1.1').click();
    await page.locator('[role="tab"][aria-selected="true"]', { hasText: 'Heatmap' }).waitFor(); // h5web's default for 2-D numbers
    const colors = await canvasColors(page);
    expect(colors, 'distinct colours in the heatmap canvas').to.be.greaterThan(20);
    // The domain's requests all went to this server's REST API.
    for (const r of watch.requests) expect(r.url().startsWith(srv.url + '/')).to.equal(true);
    expect(watch.requests.some((r) => /\/datasets\/d-[^/]+\/value$/.test(new URL(r.url()).pathname))).to.equal(true);
    await shot('04-tall-dset1.1.1-heatmap.png');
    watch.expectClean();
  });

  it('tall.h5: the matrix view shows the values h5py reads', async () => {
    await page.goto(srv.url + '/view/?domain=/fx/tall.h5&path=/g1/g1.1/dset1.1.1');
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect(cells.size).to.be.at.least(25);
    for (let r = 0; r < 5; r++) for (let c = 0; c < 5; c++) expect(cells.has(`${r},${c}`), `cell ${r},${c} shown`).to.equal(true);
    for (const [rc, text] of cells) {
      const [r, c] = rc.split(',').map(Number);
      expect(Number(text), `cell ${rc}`).to.equal(tallValues[r][c]);
    }
    await shot('05-tall-dset1.1.1-matrix.png');
    watch.expectClean();
  });

  it('a deep link opens an object path directly (h5web initialPath)', async () => {
    await page.goto(srv.url + '/view/?domain=/fx/tall.h5&path=/g1/g1.1/dset1.1.1');
    await page.locator('[role="treeitem"][data-path="/g1/g1.1/dset1.1.1"][aria-selected="true"]').waitFor();
    await showVis(page, 'Heatmap');
    expect(await canvasColors(page)).to.be.greaterThan(20);
    watch.expectClean();
  });

  it('a compound table written by h5py shows its fields and rows', async () => {
    await page.goto(srv.url + '/view/?domain=/h5py/viewer.h5&path=/table');
    await page.locator('[role="columnheader"]').first().waitFor();
    const headers = await page.locator('[role="columnheader"]').allTextContents();
    expect(headers).to.deep.equal(info.fields);
    await page.getByRole('radio', { name: 'Exact' }).click();
    const cells = await gridCells(page);
    info.table.forEach((row, r) => {
      expect(Number(cells.get(`${r},0`)), `row ${r} id`).to.equal(row[0]);
      expect(Number(cells.get(`${r},1`)), `row ${r} temperature`).to.equal(row[1]);
      expect(cells.get(`${r},2`), `row ${r} station`).to.equal(row[2]);
    });
    await shot('06-compound-table.png');
    watch.expectClean();
  });

  it('fixed-length and variable-length UTF-8 strings show as h5py reads them', async () => {
    for (const [p, want] of [
      ['/strings/fixed', info.fixed],
      ['/strings/vlen', info.vlen],
    ] as [string, string[]][]) {
      await page.goto(srv.url + `/view/?domain=/h5py/viewer.h5&path=${p}`);
      const cells = await gridCells(page);
      expect(want.map((_, i) => cells.get(`${i},0`)), p).to.deep.equal(want);
    }
    await shot('07-strings-vlen.png');
    watch.expectClean();
  });

  it('a 3-D chunked gzip dataset renders as a heatmap with a slider for the third dimension', async () => {
    expect(info.cube).to.deep.equal({ shape: [6, 40, 50], chunks: [2, 20, 25], compression: 'gzip' });
    await page.goto(srv.url + '/view/?domain=/h5py/viewer.h5&path=/cube_gzip');
    await showVis(page, 'Heatmap');
    const slider = page.locator('[role="slider"][aria-orientation="vertical"]');
    await slider.waitFor();
    expect(await slider.getAttribute('aria-valuemax')).to.equal('5');
    expect(await canvasColors(page)).to.be.greaterThan(20);
    await shot('08-cube-gzip-heatmap.png');
    // Another slice: the selection goes to the server as select=[3,:,:].
    await slider.focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowUp');
    await page.waitForResponse((r) => decodeURIComponent(r.url()).includes('select=[3,:,:]') && r.status() === 200);
    expect(await canvasColors(page)).to.be.greaterThan(20);
    watch.expectClean();
  });

  it('an LZF dataset is decoded by the server and shown', async () => {
    expect(info.lzf.compression).to.equal('lzf');
    await page.goto(srv.url + '/view/?domain=/h5py/viewer.h5&path=/lzf');
    await showVis(page, 'Heatmap');
    expect(await canvasColors(page)).to.be.greaterThan(20);
    await showVis(page, 'Matrix');
    const cells = await gridCells(page);
    expect(info.lzf.row0.map((_, c) => Number(cells.get(`0,${c}`)))).to.deep.equal(info.lzf.row0);
    watch.expectClean();
  });

  it('soft and external links are listed and can be selected', async () => {
    await page.goto(srv.url + '/view/?domain=/h5py/viewer.h5');
    for (const p of ['/soft', '/external']) {
      await treeItem(p).click();
      await page.locator(`[role="treeitem"][data-path="${p}"][aria-selected="true"]`).waitFor();
      await page.getByRole('tab', { name: 'Inspect' }).click();
      await page.locator('table').filter({ hasText: p === '/soft' ? '/cube_gzip' : '/data' }).first().waitFor();
      await page.getByRole('tab', { name: 'Display' }).click();
    }
    await shot('09-links.png');
    watch.expectClean();
  });

  it('a missing domain and a file that is not HDF5 give clear messages', async () => {
    watch.allowed = new Set([400, 404]);
    await page.goto(srv.url + '/view/?domain=/fx/no-such-file.h5');
    await page.locator('.error-box h2', { hasText: 'Not found' }).waitFor();
    expect(await page.locator('.error-box').textContent()).to.contain('/fx/no-such-file.h5');
    if (HAVE_SHARED && fs.existsSync(path.join(SHARED_FIXTURES, 'notahdf5file.h5'))) {
      await page.goto(srv.url + '/view/?domain=/fx/notahdf5file.h5');
      await page.locator('.error-box').waitFor();
      expect(await page.locator('.error-box').textContent()).to.match(/HDF5/i);
    }
    await shot('10-not-found.png');
    watch.expectClean();
  });

  /**
   * Signing in, against a second server with a real users file (issue #11): `/pub` is readable
   * by anyone (the server's default ACL), `/private` only by alice (anonymous: 401), `/secret` by
   * nobody but the admin (alice: 403), and one dataset of `/private/viewer.h5` has an object ACL
   * that refuses alice.
   */
  describe('signing in (a server with users)', () => {
    const PW = { admin: 'admin-pw-4k2j', alice: 's3cret-ÿ-pw' };
    let authSrv: TestServer;
    let token: string;
    let seenAuth: (string | undefined)[] = [];
    const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`, 'utf8').toString('base64');
    const NONE = { create: false, read: false, update: false, delete: false, readACL: false, updateACL: false };

    before(async () => {
      const usersDir = tempRoot('h5store-viewer-users-');
      const usersFile = path.join(usersDir, 'users.json');
      await userAdd(usersFile, 'admin', PW.admin);
      await userAdd(usersFile, 'alice', PW.alice);
      token = (await tokenAdd(usersFile, 'alice', { label: 'viewer test' })).token;
      const aroot = tempRoot('h5store-viewer-auth-');
      for (const folder of ['pub', 'private', 'secret']) copyFixtures(aroot, folder, ['tall.h5'], path.join(root, 'fx'));
      copyFixtures(aroot, 'private', ['viewer.h5', 'ext_target.h5'], path.join(root, 'h5py'));
      authSrv = await startServer({ root: aroot, args: ['--users-file', usersFile] });
      const admin = new Client(authSrv.url).as({ user: 'admin', password: PW.admin });
      for (const [folder, acls] of [
        ['/private', { default: NONE, alice: { ...NONE, read: true } }],
        ['/secret', { default: NONE }],
      ] as [string, Record<string, typeof NONE>][]) {
        for (const [who, acl] of Object.entries(acls)) expect((await admin.with(folder).put(`/acls/${who}`, acl)).status, `${folder} ${who}`).to.equal(201);
      }
      const vlen = await admin.with('/private/viewer.h5').get('/', { h5path: '/strings/vlen' });
      expect(vlen.status).to.equal(200);
      expect((await admin.with('/private/viewer.h5').put(`/datasets/${vlen.json.id}/acls/alice`, NONE)).status).to.equal(201);
      page.on('request', (r) => {
        if (r.url().startsWith(authSrv.url) && !new URL(r.url()).pathname.startsWith('/view/')) seenAuth.push(r.headers()['authorization']);
      });
    });

    after(async () => {
      await authSrv?.stop();
      if (authSrv) fs.rmSync(authSrv.root, { recursive: true, force: true });
    });

    beforeEach(() => {
      seenAuth = [];
    });

    it('anonymous reading works with no prompt where the server allows it', async () => {
      await page.goto(authSrv.url + '/view/?domain=/pub/tall.h5&path=/g1/g1.1/dset1.1.1');
      await page.locator('[role="treeitem"][data-path="/g1/g1.1/dset1.1.1"][aria-selected="true"]').waitFor();
      await showVis(page, 'Heatmap');
      expect(await canvasColors(page)).to.be.greaterThan(20);
      expect(await page.locator('form.signin').count()).to.equal(0);
      expect(seenAuth.length).to.be.greaterThan(3);
      expect(new Set(seenAuth)).to.deep.equal(new Set([undefined]));
      watch.expectClean();
    });

    it('a 401 shows the sign-in form (no browser dialog); user and password go as Basic, kept in sessionStorage only', async () => {
      watch.allowed = new Set([401]);
      const challenges: string[] = [];
      const onResponse = (r: import('playwright-core').Response) => {
        if (r.status() === 401) challenges.push(r.headers()['www-authenticate'] ?? '');
      };
      page.on('response', onResponse);
      await page.goto(authSrv.url + '/view/?domain=/private');
      const form = page.locator('form.signin');
      await form.waitFor();
      page.off('response', onResponse);
      // X-Requested-With: the server's 401 offers no Basic challenge, so Chromium shows no dialog.
      expect(challenges.length).to.be.greaterThan(0);
      for (const c of challenges) expect(c).to.not.match(/basic/i);
      expect(await form.locator('[role="alert"]').textContent()).to.contain('401');
      await shot('11-sign-in.png');
      await form.locator('input[name="username"]').fill('alice');
      await form.locator('input[name="password"]').fill(PW.alice);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('tr[data-name="/private/tall.h5"]').waitFor();
      expect(await form.count()).to.equal(0);
      expect(seenAuth.at(-1)).to.equal(basic('alice', PW.alice));
      expect(await page.locator('.who').textContent()).to.contain('Signed in as alice');
      const stored = JSON.parse((await page.evaluate('sessionStorage.getItem("h5store.viewer.credentials")')) as string);
      expect(stored).to.deep.equal({ kind: 'basic', user: 'alice', authorization: basic('alice', PW.alice) });
      // h5web keeps its display preferences in localStorage; the credentials are not there.
      const local = (await page.evaluate('JSON.stringify(Object.entries(localStorage))')) as string;
      for (const secret of [PW.alice, basic('alice', PW.alice).slice(6)]) expect(local).to.not.include(secret);
      expect(await ctx.cookies()).to.deep.equal([]);
      watch.expectClean();
    });

    it('h5web then reads the domain with the same credentials; a reload keeps them', async () => {
      await page.goto(authSrv.url + '/view/?domain=/private/tall.h5&path=/g1/g1.1/dset1.1.1');
      await page.locator('[role="treeitem"][data-path="/g1/g1.1/dset1.1.1"][aria-selected="true"]').waitFor();
      await showVis(page, 'Heatmap');
      expect(await canvasColors(page)).to.be.greaterThan(20);
      await page.reload();
      await page.locator('[role="treeitem"][data-path="/g1/g1.1/dset1.1.1"][aria-selected="true"]').waitFor();
      expect(await canvasColors(page)).to.be.greaterThan(20);
      expect(seenAuth.length).to.be.greaterThan(3);
      expect(new Set(seenAuth)).to.deep.equal(new Set([basic('alice', PW.alice)]));
      expect(await page.locator('form.signin').count()).to.equal(0);
      watch.expectClean();
    });

    it('a 403 says plainly that the user may not read it', async () => {
      watch.allowed = new Set([403]);
      await page.goto(authSrv.url + '/view/?domain=/secret');
      await page.locator('.error-box h2', { hasText: 'You may not read this' }).waitFor();
      expect(await page.locator('.error-box').textContent()).to.contain('403').and.contain('alice');
      await shot('12-forbidden.png');
      watch.expectClean();
    });

    it("a 403 from one of h5web's requests is shown above the viewer; the rest stays readable", async () => {
      watch.allowed = new Set([403]);
      watch.allowedConsole = [/Request failed: 403/];
      await page.goto(authSrv.url + '/view/');
      await page.evaluate(`sessionStorage.setItem("h5store.viewer.credentials", ${JSON.stringify(JSON.stringify({ kind: 'basic', user: 'alice', authorization: basic('alice', PW.alice) }))})`);
      await page.goto(authSrv.url + '/view/?domain=/private/viewer.h5&path=/strings');
      const banner = page.locator('.error-box.banner');
      await banner.waitFor();
      expect(await banner.textContent()).to.contain('You may not read this').and.contain('/private/viewer.h5').and.contain('alice');
      await shot('13-forbidden-object.png');
      // The other objects stay readable (h5web may still fetch the refused one for its tree,
      // so the banner may show again).
      await page.goto(authSrv.url + '/view/?domain=/private/viewer.h5&path=/cube_gzip');
      await showVis(page, 'Heatmap');
      expect(await canvasColors(page)).to.be.greaterThan(20);
      watch.expectClean();
    });

    it('signing out asks again; an API token is sent as Bearer', async () => {
      watch.allowed = new Set([401]);
      await page.goto(authSrv.url + '/view/?domain=/private');
      await page.locator('tr[data-name="/private/tall.h5"]').waitFor();
      await page.locator('.who').getByRole('button', { name: 'Sign out' }).click();
      const form = page.locator('form.signin');
      await form.waitFor();
      expect(await page.evaluate('sessionStorage.getItem("h5store.viewer.credentials")')).to.equal(null);
      await form.getByRole('tab', { name: 'API token' }).click();
      await form.locator('input[name="token"]').fill(token);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('tr[data-name="/private/tall.h5"]').waitFor();
      expect(seenAuth.at(-1)).to.equal(`Bearer ${token}`);
      expect(await page.locator('.who').textContent()).to.contain('API token');
      watch.expectClean();
    });

    it('wrong credentials are refused with a message, and another tab starts signed out', async () => {
      watch.allowed = new Set([401]);
      await page.evaluate(`sessionStorage.setItem("h5store.viewer.credentials", JSON.stringify({kind: "basic", user: "alice", authorization: ${JSON.stringify(basic('alice', 'wrong'))}}))`);
      await page.goto(authSrv.url + '/view/?domain=/pub');
      await page.locator('form.signin').waitFor();
      expect(await page.locator('form.signin [role="alert"]').textContent()).to.contain('did not accept the credentials of user "alice"');
      // the header does not claim a sign-in the server refused (issue #28 item 6)
      const who = await page.locator('.who').textContent();
      expect(who).to.not.contain('Signed in as');
      expect(who).to.contain('refused user alice');
      // the same after a wrong password typed into the form
      await page.locator('form.signin input[name="password"]').fill('also-wrong');
      await page.locator('form.signin').getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('form.signin').waitFor();
      await page.locator('.who', { hasText: 'refused user alice' }).waitFor();
      expect(await page.locator('.who').textContent()).to.not.contain('Signed in as');
      // "Continue without signing in" drops them: /pub is readable anonymously.
      await page.locator('form.signin').getByRole('button', { name: 'Continue without signing in' }).click();
      await page.locator('tr[data-name="/pub/tall.h5"]').waitFor();
      expect(seenAuth.at(-1)).to.equal(undefined);
      const other = await ctx.newPage();
      try {
        await other.goto(authSrv.url + '/view/?domain=/private');
        await other.locator('form.signin').waitFor();
        expect(await other.evaluate('sessionStorage.length')).to.equal(0);
      } finally {
        await other.close();
      }
      await page.evaluate('sessionStorage.clear()');
      watch.expectClean();
    });
  });

  it('anonymous use needs no sign-in and sends no credentials', async () => {
    await page.goto(srv.url + '/view/?domain=/fx/tall.h5&path=/g1/g1.1/dset1.1.1');
    await page.locator('[role="treeitem"][data-path="/g1/g1.1/dset1.1.1"][aria-selected="true"]').waitFor();
    expect(await page.locator('form.signin').count()).to.equal(0);
    expect(watch.requests.length).to.be.greaterThan(3);
    for (const r of watch.requests) expect(r.headers()['authorization'], r.url()).to.equal(undefined);
    watch.expectClean();
  });
});
