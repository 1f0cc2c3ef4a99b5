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
import { sleep } from '../helpers/apiExtra.js';
import { holdFlock } from '../helpers/live.js';
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

describe('store in-process: reads without the locks of a file verified unchanged (files.ts unchangedSinceVerified, readUnlocked)', function () {
  this.timeout(60000);
  let t: TempStore;
  beforeEach(() => {
    // a short lock wait: a read that must take the file's lock while another program holds it answers 503 soon
    t = tempStore({ lockWaitMs: 300 });
  });
  afterEach(() => t.close());

  /** A domain with a group `g` carrying an int attribute `a`, a clock tick old. */
  async function made(name: string): Promise<{ file: string; root: string; g: string }> {
    await t.store.createDomain(name, {});
    const root = await t.store.rootId(name);
    const g = ((await t.store.createGroup(name, { link: { id: root, name: 'g' } }, false)) as { id: string }).id;
    await t.store.putAttribute(name, 'group', g, 'a', { type: 'H5T_STD_I32LE', shape: [], value: 1 }, false);
    await sleep(40);
    return { file: path.join(t.root, name), root, g };
  }

  it('while another program holds the file unchanged, GETs are answered (remembered or read); once it changes they wait for it', async () => {
    const { file, g } = await made('/held.h5');
    const first = await t.store.getGroup('/held.h5', g, {}); // read under the locks: verified and remembered
    const held = await holdFlock(file);
    try {
      const t0 = performance.now();
      expect(await t.store.getGroup('/held.h5', g, {}), 'the remembered answer itself').to.equal(first);
      expect(performance.now() - t0, 'no wait for the lock').to.be.below(250);
      // what was not remembered is read from the file as it is, without its lock (files.ts
      // readUnlocked): the holder is not kept out, nor is the read
      const withLinks = await t.store.getGroup('/held.h5', g, { includeLinks: true });
      expect(withLinks.id).to.equal(g);
      // the holder changes the file (here only its times): now every read needs the lock, and waits
      const later = new Date(Date.now() + 5000);
      fs.utimesSync(file, later, later);
      await expectH5StoreErrorAsync(() => t.store.getGroup('/held.h5', g, {}), 503);
      await expectH5StoreErrorAsync(() => t.store.getGroup('/held.h5', g, { includeAttrs: true }), 503);
    } finally {
      held.release();
    }
  });

  it('values: a value read whole is read while another program holds the unchanged file; a stream waits for the lock', async () => {
    const { file, root } = await made('/values.h5');
    const small = ((await t.store.createDataset('/values.h5', { type: 'H5T_STD_I32LE', shape: [4], value: [1, 2, 3, 4], link: { id: root, name: 's' } }, false)) as { id: string }).id;
    const big = ((await t.store.createDataset('/values.h5', { type: 'H5T_IEEE_F32LE', shape: [1 << 19], link: { id: root, name: 'b' } }, false)) as { id: string }).id;
    await sleep(40);
    const bytes = async (id: string) => {
      const src = await t.store.readValues('/values.h5', id, {}, { kind: 'binary', maxWholeBytes: 1 << 20 });
      try {
        const parts: Buffer[] = [];
        for await (const p of src) parts.push(...p);
        return Buffer.concat(parts);
      } finally {
        await src.close();
      }
    };
    expect([...new Int32Array(new Uint8Array(await bytes(small)).buffer)]).to.deep.equal([1, 2, 3, 4]); // verifies the file
    const held = await holdFlock(file);
    try {
      expect([...new Int32Array(new Uint8Array(await bytes(small)).buffer)]).to.deep.equal([1, 2, 3, 4]);
      // 2 MiB: streamed in pages, which hold the file's lock between them
      await expectH5StoreErrorAsync(() => bytes(big), 503);
    } finally {
      held.release();
    }
    expect((await bytes(big)).length).to.equal(4 << 19);
  });

  it('a read without the locks during which the file changes is given up and made again under them, its result or error dropped', async () => {
    const { file, g } = await made('/race.h5');
    await t.store.getGroup('/race.h5', g, {}); // verified
    const files = t.store.files;
    const f = files.entry('/race.h5', file);
    const touch = (ms: number) => {
      const later = new Date(Date.now() + ms);
      fs.utimesSync(file, later, later);
    };
    let calls = 0;
    // another program writes while the read runs: the read's answer is not used
    expect(await files.read(f, () => (++calls === 1 && touch(5000), calls))).to.equal(2);
    await sleep(40);
    await t.store.getGroup('/race.h5', g, {}); // verified again, a tick after the change
    // the same with a read that failed on what it saw (a torn state): its error is not answered
    calls = 0;
    const r = await files.read(f, () => {
      if (++calls === 1) {
        touch(10000);
        throw new Error('libhdf5 failed on a half-written file');
      }
      return calls;
    });
    expect(r).to.equal(2);
  });

  it('a change by another program right after a read is seen by the next read (same size, in place)', async () => {
    const { file, g } = await made('/inplace.h5');
    const value = async () => JSON.parse(((await t.store.getAttribute('/inplace.h5', 'group', g, 'a')).value as { text: string }).text);
    expect(await value()).to.equal(1);
    expect(await value()).to.equal(1); // remembered
    const size = fs.statSync(file).size;
    python(`import h5py, sys\nwith h5py.File(sys.argv[1], 'r+') as f: f['g'].attrs.modify('a', 2)`, [file]);
    expect(fs.statSync(file).size, 'written in place').to.equal(size);
    expect(await value()).to.equal(2);
    // and again right away, then a tick later (the lock-free path once verified again)
    expect(await value()).to.equal(2);
    await sleep(40);
    expect(await value()).to.equal(2);
    expect(await value()).to.equal(2);
  });

  it('this process\'s write is seen by the next read at once, through every name of the file', async () => {
    const { file } = await made('/own.h5');
    fs.symlinkSync(file, path.join(t.root, 'alias.h5'));
    // ids are a domain name's: the group through each name
    const idAt = async (d: string) => (await t.store.lookupPath(d, '/g')).json.id as string;
    const gOf = { '/own.h5': await idAt('/own.h5'), '/alias.h5': await idAt('/alias.h5') };
    const value = async (d: '/own.h5' | '/alias.h5') => JSON.parse(((await t.store.getAttribute(d, 'group', gOf[d], 'a')).value as { text: string }).text);
    for (const d of ['/own.h5', '/alias.h5'] as const) {
      expect(await value(d)).to.equal(1);
      expect(await value(d)).to.equal(1);
    }
    await sleep(40);
    for (const d of ['/own.h5', '/alias.h5'] as const) expect(await value(d)).to.equal(1);
    await t.store.putAttribute('/own.h5', 'group', gOf['/own.h5'], 'a', { type: 'H5T_STD_I32LE', shape: [], value: 3 }, true);
    for (const d of ['/alias.h5', '/own.h5'] as const) expect(await value(d), d).to.equal(3);
  });
});

