/**
 * What is learnt from a file, and for how long (src/store/session/fileState.ts): the table of which
 * state survives which event, one test per row, then the events as the file cache says them
 * (src/store/session/files.ts) on real files, driven in-process through the store: a write through one
 * name then a read through another, a failed write, a change by another program (h5py), a
 * restore (in place and by a move), a write's transient view, a file closed when idle.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { H5StoreError, badRequest } from '../../src/errors.js';
import * as h5 from '../../src/hdf5/objects.js';
import { keptFileAcl } from '../../src/store/access/acls.js';
import { DomainFile } from '../../src/store/objects/domainFile.js';
import { FileHandle } from '../../src/store/session/fileHandle.js';
import { AFTER, type FileEvent, FileView, StateSlot } from '../../src/store/session/fileState.js';
import { DomainPaths } from '../../src/store/objects/paths.js';
import { Store } from '../../src/store/store.js';
import { chunkScope } from '../../src/store/values/chunkCache.js';
import { hasH5py, python } from '../helpers/python.js';
import { tempRoot } from '../helpers/server.js';

const INDEX = new StateSlot('test index', 'index', () => ({ n: 0 }));
const KEPT = new StateSlot('test kept', 'kept', () => ({ n: 0 }));
const VIEW = new StateSlot('test view', 'view', () => ({ n: 0 }));

/** What each part of a domain entry becomes after each event: the table, row by row. */
const ROWS: Record<FileEvent, { index: 'keep' | 'new'; kept: 'keep' | 'new'; view: 'new' | 'transient'; others: FileEvent | null }> = {
  writing: { index: 'keep', kept: 'keep', view: 'transient', others: null },
  written: { index: 'keep', kept: 'keep', view: 'new', others: 'writtenElsewhere' },
  writtenElsewhere: { index: 'new', kept: 'new', view: 'new', others: null },
  writeFailed: { index: 'new', kept: 'new', view: 'new', others: 'writeFailed' },
  changed: { index: 'new', kept: 'new', view: 'new', others: 'changed' },
  appended: { index: 'keep', kept: 'keep', view: 'new', others: 'appended' },
  replaced: { index: 'new', kept: 'new', view: 'new', others: 'replaced' },
};

describe('file state: the table of what survives which event', () => {
  it('has exactly these rows', () => expect(Object.keys(AFTER).sort()).to.deep.equal(Object.keys(ROWS).sort()));
  const root = tempRoot('h5store-state-');
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  for (const [event, row] of Object.entries(ROWS) as [FileEvent, (typeof ROWS)[FileEvent]][]) {
    it(`${event}: index ${row.index}, kept state ${row.kept}, view ${row.view}; the other names hear ${row.others ?? 'nothing'}`, () => {
      expect(AFTER[event]).to.deep.equal(row);
      const f = new DomainFile('/x.h5', '/x.h5', new Set(), new FileHandle('1:2:3', 1n, 2n, '/x.h5', undefined), { paths: new DomainPaths(root) });
      f.noteDeleted('g-1/links/a');
      for (const slot of [INDEX, KEPT, VIEW]) f.state(slot).n = 1;
      const index = f.index;
      const view = f.view;
      f.apply(event);
      expect(f.index === index, 'index kept').to.equal(row.index === 'keep');
      expect(f.state(INDEX).n, 'index slot').to.equal(row.index === 'keep' ? 1 : 0);
      expect(f.state(KEPT).n, 'kept slot').to.equal(row.kept === 'keep' ? 1 : 0);
      expect(f.view, 'view').to.not.equal(view);
      expect(f.view.transient, 'transient view').to.equal(row.view === 'transient');
      expect(f.state(VIEW).n, 'view slot').to.equal(0);
      expect(f.isDeleted('g-1/links/a'), 'deleted names outlive every event').to.equal(true);
    });
  }
  it('docs/architecture.md shows the same table', () => {
    const doc = fs.readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    for (const [event, row] of Object.entries(AFTER)) {
      const m = new RegExp(`^\\s*\\| \`${event}\` \\|([^|]+)\\|([^|]+)\\|([^|]+)\\|([^|]*)\\|$`, 'm').exec(doc);
      expect(m, event).to.not.equal(null);
      const [, index, kept, view, others] = m!.map((x) => x.trim());
      expect([index, kept, view.split(' ')[0], others.startsWith('`') ? others.slice(1, others.indexOf('`', 1)) : null], event).to.deep.equal([
        row.index === 'keep' ? 'kept' : 'new',
        row.kept === 'keep' ? 'kept' : 'new',
        row.view,
        row.others,
      ]);
    }
  });
  it('a transient view keeps nothing and scopes no cache', () => {
    const v = new FileView(true);
    v.get(VIEW).n = 5;
    expect(v.get(VIEW).n).to.equal(0);
    expect(chunkScope(v, 1n)).to.equal(undefined);
    const w = new FileView();
    w.get(VIEW).n = 5;
    expect(w.get(VIEW).n).to.equal(5);
  });
});

describe('file state: the events of real files (in-process store)', function () {
  this.timeout(60_000);
  let root: string;
  let store: Store;
  const entry = (domain: string) => store.files.entry(domain, store.paths.resolve(domain));
  /** Read something through `domain` so its entry learns: the root id, the ACL state, a remembered answer. */
  const learn = async (domain: string) => {
    const root = await store.rootId(domain);
    await store.getDomain(domain);
    await store.getGroup(domain, root, {});
    return root;
  };

  beforeEach(async () => {
    root = tempRoot('h5store-events-');
    store = new Store({ root, idleCloseMs: 60_000, maxOpenFiles: 16, defaultOwner: 'admin', pageBytes: 1 << 20, maxPoints: 1000, statCacheMs: 0, fsync: 'never' });
    await store.createDomain('/a.h5', { owner: 'alice', acl: { alice: { create: true, read: true, update: true, delete: true, readACL: true, updateACL: true } } });
    fs.symlinkSync('a.h5', path.join(root, 'b.h5'));
  });
  afterEach(() => {
    store.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('written through name A, then read through name B: A keeps its index and ACL state, B learns again', async () => {
    await learn('/a.h5');
    await learn('/b.h5');
    const a = entry('/a.h5');
    const b = entry('/b.h5');
    expect(a.handle).to.equal(b.handle);
    const [ai, av, bi, bv] = [a.index, a.view, b.index, b.view];
    expect(keptFileAcl(a)?.owner).to.equal('alice');
    expect(keptFileAcl(b)?.owner).to.equal('alice');
    await store.createGroup('/a.h5', {}, false);
    expect(a.index).to.equal(ai);
    expect(keptFileAcl(a)?.owner, 'the writer keeps the ACL state').to.equal('alice');
    expect(a.view).to.not.equal(av);
    expect(b.index).to.not.equal(bi);
    expect(keptFileAcl(b), 'the other name drops it').to.equal(undefined);
    expect(b.view).to.not.equal(bv);
    // an ACL change through A is what B answers at once
    await store.updateAcl('/a.h5', {}, (acl) => (acl.bob = { create: false, read: true, update: false, delete: false, readACL: false, updateACL: false }));
    expect((await store.aclView('/b.h5')).root.bob?.read).to.equal(true);
  });

  it('a failed write: everything learnt is dropped and the file is as it was', async () => {
    const rootId = await learn('/a.h5');
    const a = entry('/a.h5');
    const [ai, av] = [a.index, a.view];
    let during: { transient: boolean; scope: string | undefined } | undefined;
    const err = await store
      .write('/a.h5', (f) => {
        during = { transient: f.view.transient, scope: chunkScope(f.view, 1n) };
        h5.closeObject(h5.createGroup(f.h, 'made'));
        throw badRequest('no');
      })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(H5StoreError);
    expect(during, 'inside the write: a transient view').to.deep.equal({ transient: true, scope: undefined });
    expect(a.index).to.not.equal(ai);
    expect(a.view).to.not.equal(av);
    expect(a.view.transient).to.equal(false);
    expect(keptFileAcl(a)).to.equal(undefined);
    expect(await store.listLinks('/a.h5', rootId, {})).to.deep.equal([]);
  });

  it('a change by another program (h5py): everything learnt is dropped, the change is seen', async function () {
    if (!hasH5py()) this.skip();
    const rootId = await learn('/a.h5');
    const a = entry('/a.h5');
    const [ai, av] = [a.index, a.view];
    await new Promise((r) => setTimeout(r, 50)); // the read lease ends (xlock.ts)
    python('import h5py, sys\nwith h5py.File(sys.argv[1], "a") as f: f.create_group("by_h5py")', [path.join(root, 'a.h5')], { lockFree: true });
    const links = await store.listLinks('/a.h5', rootId, {});
    expect(links.map((l) => l.title)).to.deep.equal(['by_h5py']);
    expect(a.index).to.not.equal(ai);
    expect(a.view).to.not.equal(av);
    expect(await store.rootId('/a.h5'), 'same file, same ids').to.equal(rootId);
  });

  // After a write of this process its read-write handle stays open (files.ts); closing it, when
  // idle or on noticing the change, must not take the changed file's stamp for its own.
  for (const idle of [false, true]) {
    it(`a restore in place (a backup copied over the file) after a write of this process${idle ? ', its handle closed when idle' : ''}: seen as a change`, async () => {
      const backup = path.join(root, 'backup.h5');
      fs.copyFileSync(path.join(root, 'a.h5'), backup);
      const rootId = await learn('/a.h5');
      await store.createGroup('/a.h5', { link: { id: rootId, name: 'later' } }, false);
      expect((await store.listLinks('/a.h5', rootId, {})).map((l) => l.title)).to.deep.equal(['later']);
      const a = entry('/a.h5');
      const [ai, av] = [a.index, a.view];
      await new Promise((r) => setTimeout(r, 50));
      fs.copyFileSync(backup, path.join(root, 'a.h5')); // same inode, older content
      if (idle) store.files.closeIdle(performance.now() + 3_600_000);
      expect(await store.listLinks('/a.h5', rootId, {})).to.deep.equal([]);
      expect(entry('/a.h5')).to.equal(a);
      expect(a.index).to.not.equal(ai);
      expect(a.view).to.not.equal(av);
    });
  }

  it('a restore by a move (another file at the path): a new entry, the old ids answer 410', async () => {
    const backup = path.join(root, 'backup.h5');
    fs.copyFileSync(path.join(root, 'a.h5'), backup);
    const rootId = await learn('/a.h5');
    const a = entry('/a.h5');
    await new Promise((r) => setTimeout(r, 50));
    fs.renameSync(backup, path.join(root, 'a.h5'));
    const after = entry('/a.h5');
    expect(after).to.not.equal(a);
    expect(after.handle).to.not.equal(a.handle);
    const newRoot = await store.rootId('/a.h5');
    expect(newRoot).to.not.equal(rootId);
    const err = await store.getGroup('/a.h5', rootId, {}).catch((e: unknown) => e);
    expect((err as H5StoreError).code).to.equal('Gone');
  });

  it('a file closed when idle and opened again unchanged: nothing is dropped', async () => {
    await learn('/a.h5');
    const a = entry('/a.h5');
    const [ai, av] = [a.index, a.view];
    store.files.closeIdle(performance.now() + 3_600_000);
    expect(store.files.openFiles).to.equal(0);
    await learn('/a.h5');
    expect(a.index).to.equal(ai);
    expect(a.view).to.equal(av);
  });
});
