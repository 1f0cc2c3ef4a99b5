/**
 * What the store learns from a file and when it learns again, driven in-process (no server, no
 * HTTP; test/helpers/store.ts): ids of a file replaced by another program and of an unchanged file
 * across restarts, creation properties read back after a restart, domain statistics cached by
 * file version. The HTTP tests keep what only HTTP shows (statuses, headers, wire forms); these
 * cases moved here from test/api/dialect-domains.test.ts and dialect-links.test.ts, where each
 * needed a server restart and a wait for the idle file to be closed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { expectH5StoreErrorAsync } from '../helpers/errors.js';
import { python } from '../helpers/python.js';
import { type TempStore, tempStore } from '../helpers/store.js';

describe('store in-process: what is learnt from a file, across changes and restarts', function () {
  this.timeout(60000);
  let t: TempStore;
  beforeEach(() => {
    t = tempStore();
  });
  afterEach(() => t.close());

  it('a file replaced by another program (h5py, same path) gives new ids; an unchanged file keeps its ids across restarts', async () => {
    const keep = path.join(t.root, 'keep.h5');
    const swap = path.join(t.root, 'swap.h5');
    python(`import h5py, sys\nfor p in sys.argv[1:]:\n    with h5py.File(p, 'w') as f: f.create_group('g')`, [keep, swap]);
    const idsOfKeep = async () => [await t.store.rootId('/keep.h5'), (await t.store.lookupPath('/keep.h5', '/g')).json.id];
    const keepIds = await idsOfKeep();
    const swapRoot = await t.store.rootId('/swap.h5');
    t.closeIdleFiles();
    fs.rmSync(swap);
    python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'w') as f: f.create_group('g')`, [swap]);
    expect(await t.store.rootId('/swap.h5')).to.not.equal(swapRoot);
    t.restart();
    expect(await idsOfKeep()).to.deep.equal(keepIds);
    // the old file's id after a restart: names nothing
    await expectH5StoreErrorAsync(() => t.store.getGroup('/swap.h5', swapRoot, {}), 404);
  });

  it('creation properties given at creation (kept in the reserved group) are read back after a restart', async () => {
    await t.store.createDomain('/p.h5', {});
    const root = await t.store.rootId('/p.h5');
    const cp = { CreateOrder: 1, rdcc_nbytes: 1024, note: 'x', nested: { a: [1, 2] } };
    const g = (await t.store.createGroup('/p.h5', { link: { id: root, name: 'cp' }, creationProperties: cp }, false)) as { id: string; creationProperties: unknown };
    expect(g.creationProperties).to.deep.equal(cp);
    t.restart();
    expect((await t.store.getGroup('/p.h5', g.id, {})).creationProperties).to.deep.equal(cp);
  });

  it('domain statistics are cached by file version: the same until the file changes, then computed again', async () => {
    await t.store.createDomain('/cached.h5', {});
    const a = await t.store.domainStats('/cached.h5');
    const b = await t.store.domainStats('/cached.h5');
    expect(b, 'the same answer, not computed again').to.equal(a);
    expect(a.num_groups).to.equal(1);
    await t.store.createGroup('/cached.h5', { link: { id: await t.store.rootId('/cached.h5'), name: 'g' } }, false);
    const d = await t.store.domainStats('/cached.h5');
    expect(d.num_groups).to.equal(2);
    expect(d.scan_info.scan_complete).to.be.at.least(a.scan_info.scan_complete);
    expect(d.md5_sum).to.not.equal(a.md5_sum);
  });
});
