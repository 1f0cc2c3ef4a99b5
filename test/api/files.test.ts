/**
 * File handling (issue #7 items 3 and 6; DESIGN.md 5; docs/storage-format.md "Lock file and
 * journal"): names of service files that always fit, one libhdf5 handle per file whatever the
 * names that lead to it, writes interrupted by kill -9 rolled back before the file is served,
 * files left open by crashed writers (older h5store, h5py) served without being written and
 * repaired only by `h5store repair` (issue #26 item 1), logged.
 */
import { expect } from 'chai';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { digest, expectError, sleep } from '../helpers/apiExtra.js';
import { PYTHON, h5dump, hasH5py, python, pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';
import { cliArgs } from '../helpers/serverBuild.js';

/** Names in a directory, with their byte lengths. */
function entries(dir: string): { name: string; bytes: number; dir: boolean }[] {
  return fs.readdirSync(dir).map((n) => ({ name: n, bytes: Buffer.byteLength(n), dir: fs.lstatSync(path.join(dir, n)).isDirectory() }));
}

/** Wait until the server has logged a line matching `re` (pino writes asynchronously). */
async function logged(srv: TestServer, re: RegExp): Promise<void> {
  for (let i = 0; i < 200 && !re.test(srv.output()); i++) await sleep(10);
  expect(srv.output()).to.match(re);
}

async function rootOf(c: Client): Promise<string> {
  const r = await c.get('/');
  expect(r.status, r.text).to.equal(200);
  return r.json.root as string;
}

describe('file handling: names, handles, crashes', function () {
  this.timeout(120_000);
  let srv: TestServer;
  let root: string;
  let api: Client;

  before(async function () {
    if (!hasH5py()) this.skip();
    root = tempRoot('h5store-files-');
    srv = await startServer({ root, env: { H5STORE_LOCK_WAIT_MS: '1500' } });
    api = new Client(srv.url);
  });
  after(async () => {
    await srv?.stop();
  });

  describe('service file names always fit (ENAMETOOLONG class)', () => {
    const names = [
      ['250 ASCII characters', 'n'.repeat(246) + '.h5'],
      ['255 bytes (the longest name a file can have)', 'm'.repeat(252) + '.h5'],
      ['253 bytes of 2-byte characters', 'é'.repeat(125) + '.h5'],
      ['254 bytes of 3- and 4-byte characters', '𝒳'.repeat(31) + '温'.repeat(42) + '.h5'],
    ] as const;
    for (const [what, name] of names) {
      it(`a domain named with ${what}: create, write, read, list, delete`, async () => {
        expect(Buffer.byteLength(name)).to.be.at.most(255);
        fs.mkdirSync(path.join(root, 'long'), { recursive: true });
        const c = api.with(`/long/${name}`);
        expect((await c.put('/')).status).to.equal(201);
        const rid = await rootOf(c);
        expect((await c.post('/groups', { link: { id: rid, name: 'g' } })).status).to.equal(201);
        expect((await c.put(`/groups/${rid}/attributes/a`, { type: 'H5T_STD_I32LE', value: 7 })).status).to.equal(201);
        expect((await c.get(`/groups/${rid}/attributes/a`)).json.value).to.equal(7);
        for (const e of entries(path.join(root, 'long'))) expect(e.bytes, e.name).to.be.at.most(255);
        const listed = (await api.get('/domains', { domain: '/long/' })).json.domains.map((d: { name: string }) => d.name);
        expect(listed).to.deep.equal([`/long/${name}`]);
        expect((await c.delete('/')).status).to.equal(200);
        expect(entries(path.join(root, 'long'))).to.deep.equal([]);
      });
    }

    it('a folder holding only service files (lock files, old lock directories) can be deleted', async () => {
      fs.mkdirSync(path.join(root, 'f2'));
      const c = api.with('/f2/x.h5');
      expect((await c.put('/')).status).to.equal(201);
      const rid = await rootOf(c);
      expect((await c.post('/groups', { link: { id: rid, name: 'g' } })).status).to.equal(201);
      fs.rmSync(path.join(root, 'f2', 'x.h5')); // removed behind the server's back
      fs.mkdirSync(path.join(root, 'f2', '.gone.h5.h5store-lock'));
      expect(entries(path.join(root, 'f2')).length).to.equal(2);
      expect((await api.delete('/', { domain: '/f2/' })).status).to.equal(200);
      expect(fs.existsSync(path.join(root, 'f2'))).to.equal(false);
    });
  });

  describe('one file under several domain names ("file is already open for read-only" class)', () => {
    const kinds = ['symlink to the file', 'symlinked folder', 'hard link'] as const;
    for (const kind of kinds) {
      it(`${kind}: reads and writes through both names agree, no error`, async () => {
        const dir = path.join(root, `alias-${kinds.indexOf(kind)}`);
        fs.mkdirSync(dir);
        python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n    f.create_group('g').attrs['v'] = 0`, [path.join(dir, 'a.h5')]);
        let other: string;
        if (kind === 'symlink to the file') {
          fs.symlinkSync('a.h5', path.join(dir, 'b.h5'));
          other = 'b.h5';
        } else if (kind === 'hard link') {
          fs.linkSync(path.join(dir, 'a.h5'), path.join(dir, 'b.h5'));
          other = 'b.h5';
        } else {
          fs.symlinkSync('.', path.join(dir, 'same'));
          other = 'same/a.h5';
        }
        const rel = path.basename(dir);
        const a = api.with(`/${rel}/a.h5`);
        const b = api.with(`/${rel}/${other}`);
        const ra = await rootOf(a);
        const rb = await rootOf(b);
        // Read through A (opens the file), write through B, read through A: the change is seen.
        expect((await a.get(`/groups/${ra}/links`)).json.links.length).to.equal(1);
        for (let i = 0; i < 5; i++) {
          const w = await b.put(`/groups/${rb}/attributes/b${i}`, { type: 'H5T_STD_I32LE', value: i });
          expect(w.status, w.text).to.equal(201);
          const seen = await a.get(`/groups/${ra}/attributes`);
          expect(seen.status).to.equal(200);
          expect(seen.json.attributes.map((x: { name: string }) => x.name)).to.include(`b${i}`);
          const w2 = await a.post('/groups', { link: { id: ra, name: `a${i}` } });
          expect(w2.status, w2.text).to.equal(201);
          const l = await b.get(`/groups/${rb}/links`);
          expect(l.json.links.map((x: { title: string }) => x.title)).to.include(`a${i}`);
        }
        // Concurrent requests through both names.
        const rs = await Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            i % 3 === 0
              ? a.put(`/groups/${ra}/attributes/c${i}`, { type: 'H5T_STD_I32LE', value: i })
              : i % 3 === 1
                ? b.post('/groups', { link: { id: rb, name: `c${i}` } })
                : (i % 2 ? a : b).get(`/groups/${i % 2 ? ra : rb}/links`),
          ),
        );
        for (const r of rs) expect(r.status, r.text).to.be.oneOf([200, 201]);
        const names = pythonJson(`import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps(sorted(f.keys()) + sorted(f.attrs.keys())))`, [path.join(dir, 'a.h5')]);
        expect(names).to.include.members(['a0', 'a4', 'c1', 'c22', 'b0', 'b4', 'c0', 'c21']);
      });
    }
  });

  describe('a file deleted behind the server\'s back whose inode the file system reuses', () => {
    it('another file with the same inode (a new domain, or the same name) is served as itself, not through the old handle', async () => {
      // Handles are shared by device and inode (one file under several names). Deleting a served
      // file leaves its handle behind; the file system gives the inode to the next new file, whose
      // requests then went to the old handle and answered 404 "Domain not found".
      const dir = path.join(root, 'reuse');
      fs.mkdirSync(dir);
      const template = path.join(tempRoot('h5store-reuse-'), 't.h5');
      python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n    f.attrs['which'] = 0`, [template]);
      const old = path.join(dir, 'old.h5');
      fs.copyFileSync(template, old);
      const oc = api.with('/reuse/old.h5');
      const orid = await rootOf(oc);
      expect((await oc.put(`/groups/${orid}/attributes/x`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
      let served = old; // the file whose inode the server has a handle for
      let checked = 0;
      // first under a new name, then under the deleted file's own name (the same domain)
      for (const name of ['new.h5', 'old.h5']) {
        // the server closes idle files (and their descriptors) after idleCloseMs: only then can
        // the file system give the inode to another file
        await untilServerClosed(srv, served);
        const ino = fs.statSync(served).ino;
        fs.rmSync(served);
        let found: string | undefined;
        for (let k = 0; k < 200 && !found; k++) {
          const p = path.join(dir, k === 0 ? name : `pad-${k}-${name}`);
          if (fs.existsSync(p)) continue;
          fs.copyFileSync(template, p);
          if (fs.statSync(p).ino === ino) found = p;
        }
        if (!found) break; // this file system did not reuse the inode: nothing to check here
        checked++;
        const c = api.with(`/reuse/${path.basename(found)}`);
        const r = await c.get('/');
        expect(r.status, `${path.basename(found)} (inode reused): ${r.text}`).to.equal(200);
        const attrs = await c.get(`/groups/${r.json.root}/attributes`);
        expect(attrs.json.attributes.map((x: { name: string }) => x.name), 'the new file, not the old one').to.deep.equal(['which']);
        expect((await c.put(`/groups/${r.json.root}/attributes/y`, { type: 'H5T_STD_I32LE', value: 2 })).status).to.equal(201);
        served = found;
      }
      if (checked === 0) console.warn('    (this file system did not reuse the inode: checked nothing)');
    });
  });

  describe('a write killed half-way (kill -9) is rolled back before the file is served', () => {
    it('a paged 64 MiB value write interrupted by kill -9: restart, rollback logged, old values, writes accepted at once', async () => {
      const croot = tempRoot('h5store-kill-');
      const file = path.join(croot, 'big.h5');
      const N = 8 * 1024 * 1024;
      python(`import h5py, numpy, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n    f.create_dataset('d', data=numpy.arange(${N}, dtype='<f8'))\n    f.create_group('g')`, [file]);
      let s = await startServer({ root: croot, env: { H5STORE_PAGE_BYTES: String(1 << 20) } });
      try {
        const c = new Client(s.url, '/big.h5');
        const rid = await rootOf(c);
        const did = (await c.get(`/groups/${rid}/links/d`)).json.link.id as string;
        const body = Buffer.alloc(N * 8, 0x41);
        // Start the write, and kill the server once the file has started to change: the
        // journal is active (byte 16 of the lock file's header) and has records.
        const pending = fetch(c.url(`/datasets/${did}/value`), { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body }).catch(() => undefined);
        let active = false;
        for (let i = 0; i < 5000 && !active; i++) {
          const ln = fs.readdirSync(croot).find((n) => n.endsWith('.h5store-lock'));
          active = !!ln && fs.statSync(path.join(croot, ln)).size > 64 && fs.readFileSync(path.join(croot, ln)).readUInt32LE(16) === 1;
          if (!active) await sleep(2);
        }
        expect(active, 'saw the write in progress').to.equal(true);
        s.proc.kill('SIGKILL');
        await new Promise((r) => s.proc.once('exit', r));
        await pending;
        const journal = fs.readdirSync(croot).find((n) => n.endsWith('.h5store-lock'))!;
        expect(fs.readFileSync(path.join(croot, journal)).readUInt32LE(16), 'the journal is active after the kill').to.equal(1);
        // A domain creation a crash interrupted leaves a hidden temporary file: removed at start.
        const tmpLeft = path.join(croot, '.new.h5~0123456789abcdef.a1b2c3d4e5f6.new.h5store-lock');
        fs.writeFileSync(tmpLeft, 'partial');
        fs.utimesSync(tmpLeft, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
        // Restart: the first write is accepted without waiting for any stale lock.
        s = await startServer({ root: croot });
        const t0 = performance.now();
        const c2 = new Client(s.url, '/big.h5');
        const w = await c2.put(`/groups/${rid}/attributes/after`, { type: 'H5T_STD_I32LE', value: 1 });
        const ms = performance.now() - t0;
        expect(w.status, w.text).to.equal(201);
        expect(ms, 'first write after the restart (ms)').to.be.below(1000);
        await logged(s, /rolled back a write interrupted when process \d+ died/);
        for (let i = 0; i < 200 && fs.existsSync(tmpLeft); i++) await sleep(10);
        expect(fs.existsSync(tmpLeft), 'left-over creation file removed').to.equal(false);
        // The values are the old ones, the file is whole.
        const sample = pythonJson(`import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nd = f['d']\nprint(json.dumps([float(d[0]), float(d[12345678 % ${N}]), float(d[-1]), int(f.attrs['after'])]))`, [file]);
        expect(sample).to.deep.equal([0, 12345678 % N, N - 1, 1]);
        h5dump(file, ['-H']);
      } finally {
        await s.stop();
        fs.rmSync(croot, { recursive: true, force: true });
      }
    });
  });

  describe('files left open by crashed writers: served without a write, repaired only by `h5store repair` (logged)', () => {
    /** Run `h5store repair` on this suite's data directory: its stdout; throws its stderr when it fails; its log lines (stderr) in `repairLog`. */
    let repairLog = '';
    const repair = (domain: string, extra: string[] = ['--quiet-ms', '300']) => {
      const r = spawnSync(process.execPath, [...cliArgs(), 'repair', domain, '--root', root, ...extra], { encoding: 'utf8' });
      repairLog = r.stderr;
      if (r.status !== 0) throw new Error(r.stderr);
      return r.stdout;
    };

    it('h5py (libver latest) killed with the file open for writing: served read-only and unchanged, writes 409 until `h5store repair`', async () => {
      const file = path.join(root, 'h5py-crash.h5');
      python(
        `import h5py, os, sys, numpy\nf = h5py.File(sys.argv[1], 'w', libver='latest')\nf.create_group('kept')\nf.create_dataset('d', data=numpy.arange(10))\nf.flush()\nf.create_group('lost')\nos._exit(0)`,
        [file],
      );
      expect(() => execFileSync(PYTHON, ['-c', `import h5py, sys\nh5py.File(sys.argv[1], 'r')`, file], { stdio: 'pipe', encoding: 'utf8' })).to.throw(/already open for write/);
      const before = digest(file);
      const c = api.with('/h5py-crash.h5');
      const rid = await rootOf(c);
      const l = await c.get(`/groups/${rid}/links`);
      expect(l.json.links.map((x: { title: string }) => x.title)).to.deep.equal(['d', 'kept']);
      const did = l.json.links.find((x: { title: string }) => x.title === 'd').id as string;
      expect((await c.get(`/datasets/${did}/value`)).json.value).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // a write: refused with what to do, and the file is byte for byte what the crash left
      const w = await c.post('/groups', { link: { id: rid, name: 'new' } });
      expectError(w, 409);
      expect(w.json.message).to.match(/open for writing by another program/).and.match(/h5store repair \/h5py-crash\.h5/);
      expect(Number(w.headers.get('retry-after'))).to.be.at.least(1);
      expect(digest(file), 'the server wrote nothing into the file').to.equal(before);
      expect(srv.output()).not.to.match(/repaired a file/);
      // the administrator repairs it: logged, and h5py opens it
      const out = repair('/h5py-crash.h5');
      expect(out).to.match(/repaired \/h5py-crash\.h5: superblock status flags cleared/);
      expect(repair('/h5py-crash.h5')).to.match(/nothing to repair/);
      expect((await c.post('/groups', { link: { id: rid, name: 'new' } })).status).to.equal(201);
      const keys = pythonJson(`import h5py, sys, json\nprint(json.dumps(sorted(h5py.File(sys.argv[1], 'r').keys())))`, [file]);
      expect(keys).to.deep.equal(['d', 'kept', 'new']);
    });

    it('`h5store repair` refuses a file that changes while it watches (a program still writes it), logs what it repairs', async () => {
      const file = path.join(root, 'still-written.h5');
      python(`import h5py, os, sys\nf = h5py.File(sys.argv[1], 'w', libver='latest')\nf.flush()\nos._exit(0)`, [file]);
      // a writer's changes, as the mtime moving every 50 ms (in a child: this process is busy in spawnSync)
      const toucher = spawn(PYTHON, ['-c', 'import os, sys, time\nwhile True:\n    os.utime(sys.argv[1])\n    time.sleep(0.05)', file], { stdio: 'ignore' });
      try {
        await sleep(100);
        expect(() => repair('/still-written.h5')).to.throw(/changed during the 300 ms it was watched: a program is still writing it/);
      } finally {
        toucher.kill();
      }
      expect(repair('/still-written.h5', ['--force'])).to.match(/superblock status flags cleared/);
      expect(repairLog).to.match(/"level":40.*repaired a file a crashed program left open for writing/);
      expect(() => repair('/missing.h5')).to.throw(/not found/);
    });

    it('an older h5store died holding its lock directory and left the EOA short: read as it is, writes 409 until `h5store repair` repairs it', async () => {
      const file = path.join(root, 'old-crash.h5');
      python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n    f.create_group('a')\n    f.create_group('b').attrs['x'] = 1`, [file]);
      const addrB = pythonJson(`import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps(h5py.h5o.get_info(f['b'].id).addr))`, [file]) as number;
      // The superblock (version 0) keeps the EOA at byte 40: cut it inside /b's object header,
      // as a crash between writing the group and the superblock leaves it.
      const b = fs.readFileSync(file);
      b.writeBigUInt64LE(BigInt(addrB + 8), 40);
      fs.writeFileSync(file, b);
      expect(() => execFileSync('h5dump', [file], { stdio: 'pipe' })).to.throw();
      const legacy = path.join(root, '.old-crash.h5.h5store-lock');
      fs.mkdirSync(legacy);
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(legacy, old, old);
      const before = digest(file);
      const c = api.with('/old-crash.h5');
      const rid = await rootOf(c);
      const w = await c.put(`/groups/${rid}/attributes/ok`, { type: 'H5T_STD_I32LE', value: 1 });
      expectError(w, 409);
      expect(w.json.message).to.match(/older h5store process that died while writing it/).and.match(/h5store repair \/old-crash\.h5/);
      expect(digest(file)).to.equal(before);
      expect(fs.existsSync(legacy)).to.equal(true);
      expect(repair('/old-crash.h5')).to.match(/stale lock removed/);
      expect(fs.existsSync(legacy)).to.equal(false);
      const w2 = await c.put(`/groups/${rid}/attributes/ok`, { type: 'H5T_STD_I32LE', value: 1 });
      expect(w2.status, w2.text).to.equal(201);
      const attrs = pythonJson(`import h5py, sys, json\nf = h5py.File(sys.argv[1], 'r')\nprint(json.dumps([sorted(f.keys()), int(f['b'].attrs['x'])]))`, [file]);
      expect(attrs).to.deep.equal([['a', 'b'], 1]);
      h5dump(file);
    });

    it('a live lock directory of an older h5store process makes writes wait (503 with Retry-After after the wait), reads go on', async () => {
      const file = path.join(root, 'old-live.h5');
      python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w') as f:\n    f.create_group('a')`, [file]);
      const legacy = path.join(root, '.old-live.h5.h5store-lock');
      fs.mkdirSync(legacy);
      const c = api.with('/old-live.h5');
      const rid = await rootOf(c);
      const t0 = performance.now();
      const w = await c.put(`/groups/${rid}/attributes/x`, { type: 'H5T_STD_I32LE', value: 1 });
      expectError(w, 503);
      expect(performance.now() - t0).to.be.above(1000);
      expect(Number(w.headers.get('retry-after'))).to.be.at.least(1);
      expect(w.json.message).to.match(/older h5store/);
      fs.rmdirSync(legacy);
      expect((await c.put(`/groups/${rid}/attributes/x`, { type: 'H5T_STD_I32LE', value: 1 })).status).to.equal(201);
    });
  });

  describe('a failed write leaves nothing behind (rolled back)', () => {
    // In-process: the store itself, with requests that fail after libhdf5 changed the file.
    it('any error thrown by a write after changes (ours or libhdf5\'s) leaves the file byte for byte as before', async () => {
      const { Store } = await import('../../src/store/store.js');
      const h5 = await import('../../src/hdf5/objects.js');
      const { badRequest } = await import('../../src/errors.js');
      const sroot = tempRoot('h5store-rollback-');
      const store = new Store({ root: sroot, idleCloseMs: 500, maxOpenFiles: 8, defaultOwner: 'admin', pageBytes: 1 << 20, maxPoints: 1000, fsync: 'never' });
      try {
        await store.createDomain('/r.h5', {});
        await store.write('/r.h5', (f) => h5.closeObject(h5.createGroup(f.h, 'kept')));
        const file = path.join(sroot, 'r.h5');
        const before = fs.readFileSync(file);
        const failures: Array<[string, (f: any) => void]> = [
          ['an H5StoreError after a change', (f) => {
            h5.closeObject(h5.createGroup(f.h, 'x1'));
            throw badRequest('late validation');
          }],
          ['a libhdf5 error after a change', (f) => {
            for (let i = 0; i < 50; i++) h5.closeObject(h5.createGroup(f.h, `y${i}`));
            h5.createGroup(f.h, 'kept'); // exists: libhdf5 fails
          }],
          ['a plain Error after many changes', (f) => {
            const g = h5.createGroup(f.h, 'z');
            for (let i = 0; i < 200; i++) h5.closeObject(h5.createGroup(g, `z${i}`));
            h5.closeObject(g);
            throw new Error('bug');
          }],
        ];
        for (const [what, fn] of failures) {
          let threw = false;
          try {
            await store.write('/r.h5', fn);
          } catch {
            threw = true;
          }
          expect(threw, what).to.equal(true);
          expect(fs.readFileSync(file).equals(before), `${what}: file unchanged`).to.equal(true);
          const names = await store.read('/r.h5', (f) => h5.listLinks(f.h, 'name').map((l) => l.name));
          expect(names, what).to.deep.equal(['kept']);
        }
        // And the next write works.
        await store.write('/r.h5', (f) => h5.closeObject(h5.createGroup(f.h, 'after')));
        expect(await store.read('/r.h5', (f) => h5.listLinks(f.h, 'name').map((l) => l.name))).to.deep.equal(['after', 'kept']);
      } finally {
        store.close();
        fs.rmSync(sroot, { recursive: true, force: true });
      }
    });
  });

  describe('a large binary write: one page per turn of the event loop, still all-or-nothing', () => {
    // In-process: the store itself, so the test sees its event loop. Pages of 1 MiB, fsync always.
    it('the loop runs between pages (the file is seen half-written), and a failure in a late page undoes the earlier ones', async () => {
      const { Store } = await import('../../src/store/store.js');
      const sroot = tempRoot('h5store-pages-');
      const store = new Store({ root: sroot, idleCloseMs: 500, maxOpenFiles: 8, defaultOwner: 'admin', pageBytes: 1 << 20, maxPoints: 1000, fsync: 'always' });
      try {
        await store.createDomain('/p.h5', {});
        const file = path.join(sroot, 'p.h5');
        const size = 8 << 20; // 8 pages
        const did = (await store.createDataset('/p.h5', { type: 'H5T_IEEE_F32LE', shape: [2048, 1024] }, false)) as { id: string };
        const wire = Buffer.alloc(size);
        for (let i = 0; i < size / 4; i++) wire.writeFloatLE(i, i * 4);
        const start = fs.statSync(file).size;
        const seen: number[] = [];
        let done = false;
        const w = store.writeValues('/p.h5', did.id, { wire }).finally(() => (done = true));
        while (!done) {
          await new Promise<void>((r) => setImmediate(r));
          seen.push(fs.statSync(file).size);
        }
        await w;
        const half = seen.filter((n) => n > start + (1 << 20) && n < start + size - (1 << 20));
        expect(half.length, `sizes seen during the write: ${seen.join(' ')} (start ${start})`).to.be.greaterThan(0);
        if (hasH5py()) {
          // what h5py reads is what was sent, byte for byte (the store's handle is closed after the write)
          const out = python(
            'import sys, h5py, numpy\nf = h5py.File(sys.argv[1], "r")\nds = [o for o in f["__h5store__"].values() if o.shape == (2048, 1024)]\nprint(ds[0][...].astype("<f4").tobytes() == numpy.arange(2048 * 1024, dtype="<f4").tobytes())',
            [file],
            { lockFree: true },
          );
          expect(out.trim()).to.equal('True');
        }
        // A body that ends in its fourth page (spooled: read page by page): the three pages
        // already written are rolled back with it.
        const did2 = (await store.createDataset('/p.h5', { type: 'H5T_IEEE_F32LE', shape: [2048, 1024] }, false)) as { id: string };
        const before = fs.readFileSync(file);
        const spool = path.join(sroot, 'short.bin');
        fs.writeFileSync(spool, wire.subarray(0, 3.5 * (1 << 20)));
        let err: unknown;
        try {
          await store.writeValues('/p.h5', did2.id, { spool: { path: spool, size } });
        } catch (e) {
          err = e;
        }
        expect((err as { status?: number })?.status, String(err)).to.equal(400);
        expect((err as Error).message).to.match(/ended early/);
        expect(fs.readFileSync(file).equals(before), 'file unchanged by the failed write').to.equal(true);
      } finally {
        store.close();
        fs.rmSync(sroot, { recursive: true, force: true });
      }
    });
  });

  it('no stray processes or files: the lock file of a written domain is hidden and tiny', async () => {
    const names = fs.readdirSync(root).filter((n) => n.endsWith('.h5store-lock'));
    for (const n of names) {
      expect(n.startsWith('.')).to.equal(true);
      expect(Buffer.byteLength(n)).to.be.at.most(255);
    }
    const listed = (await api.get('/domains', { domain: '/' })).json.domains.map((d: { name: string }) => d.name);
    for (const n of listed) expect(n).to.not.match(/h5store-lock/);
  });
});
