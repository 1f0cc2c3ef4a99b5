import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { envName, loadConfig } from '../../src/config.js';
import { domainKey, makeId, parseId } from '../../src/store/objects/ids.js';
import { PagePool } from '../../src/store/values/pagepool.js';
import { DomainPaths, normalizeDomain, parentDomain } from '../../src/store/objects/paths.js';
import { RWLock } from '../../src/store/session/rwlock.js';
import { errorCode } from '../helpers/errors.js';
import { tempRoot } from '../helpers/server.js';

describe('domain paths', () => {
  const ok: [string, string][] = [
    ['/home/alice/run1.h5', '/home/alice/run1.h5'],
    ['/a//b///c.h5', '/a/b/c.h5'],
    ['/folder/', '/folder'],
    ['hdf5://home/u/f.h5', '/home/u/f.h5'],
    ['hdf5:/home/u/f.h5', '/home/u/f.h5'],
    ['/données/température.h5', '/données/température.h5'],
    ['/a b/c?.h5', '/a b/c?.h5'],
    // HSDS's bucket/path form: the bucket (S3 naming rules) is ignored (issue #25)
    ['mybucket/home/u/f.h5', '/home/u/f.h5'],
    ['relative/path.h5', '/path.h5'],
  ];
  for (const [raw, want] of ok) it(`normalizes ${JSON.stringify(raw)}`, () => expect(normalizeDomain(raw)).to.equal(want));
  it('gives the same answers when asked again (accepted names are remembered)', () => {
    for (let round = 0; round < 3; round++) for (const [raw, want] of ok) expect(normalizeDomain(raw)).to.equal(want);
    for (let round = 0; round < 3; round++) for (const raw of bad) expect(errorCode(() => normalizeDomain(raw))).to.equal('BadRequest');
    expect(errorCode(() => normalizeDomain('/'))).to.equal('BadRequest');
    expect(normalizeDomain('/', { allowRoot: true })).to.equal('/');
    expect(errorCode(() => normalizeDomain('/'))).to.equal('BadRequest');
  });
  const bad = ['relative.h5', 'Not_A_Bucket/path.h5', 'ab/path.h5', 'bucket/../x.h5', '/a/../b.h5', '/..', '/./a.h5', '/a\\b.h5', '/a\u0000b', '/a/\u0007', '/x/.f.h5.h5store-lock', '/' + 'x'.repeat(256), '/'];
  for (const raw of bad) it(`refuses ${JSON.stringify(raw)} with 400`, () => expect(errorCode(() => normalizeDomain(raw))).to.equal('BadRequest'));
  it('allows the top folder only when asked', () => {
    expect(normalizeDomain('/', { allowRoot: true })).to.equal('/');
    expect(parentDomain('/a.h5')).to.equal('/');
    expect(parentDomain('/x/y/z.h5')).to.equal('/x/y');
  });

  it('refuses symlinks that lead outside the root, dangling or not', () => {
    const base = tempRoot('h5store-paths-');
    const root = path.join(base, 'root');
    const outside = path.join(base, 'outside');
    fs.mkdirSync(root);
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'secret.h5'), 'x');
    fs.symlinkSync(outside, path.join(root, 'out'));
    fs.symlinkSync(path.join(outside, 'missing.h5'), path.join(root, 'dangling.h5'));
    fs.mkdirSync(path.join(root, 'in'));
    fs.symlinkSync(path.join(root, 'in'), path.join(root, 'inlink'));
    const paths = new DomainPaths(root);
    expect(errorCode(() => paths.resolve('/out/secret.h5'))).to.equal('BadRequest');
    expect(errorCode(() => paths.resolve('/out/new.h5'))).to.equal('BadRequest');
    expect(errorCode(() => paths.resolve('/dangling.h5'))).to.equal('BadRequest');
    expect(paths.resolve('/inlink/x.h5')).to.equal(path.join(fs.realpathSync(root), 'inlink', 'x.h5'));
    expect(paths.resolve('/in/new/deep.h5')).to.equal(path.join(fs.realpathSync(root), 'in', 'new', 'deep.h5'));
    fs.rmSync(base, { recursive: true, force: true });
  });
});

describe('object ids', () => {
  const key = domainKey('/home/a.h5');
  const cases: [bigint, number][] = [
    [0x60n, 0],
    [0x1234_5678_9abcn, 7],
    [(1n << 48n) - 1n, 0xffff],
  ];
  for (const [addr, gen] of cases) {
    it(`round-trips address ${addr} generation ${gen}`, () => {
      const id = makeId('dataset', key, addr, gen);
      expect(id).to.have.length(38);
      expect(id).to.match(/^d-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{6}-[0-9a-f]{6}$/);
      expect(parseId(id)).to.deep.equal({ kind: 'dataset', key, gen, addr });
    });
  }
  it('shares the domain key across objects and differs across domains', () => {
    expect(makeId('group', key, 1n).slice(2, 19)).to.equal(makeId('datatype', key, 2n).slice(2, 19));
    expect(domainKey('/home/a.h5')).to.not.equal(domainKey('/home/b.h5'));
  });
  const malformed = ['', 'g-', 'x-00000000-00000000-0000-000000-000060', 'g-0000000-000000000-0000-000000-000060', 'g-00000000-00000000-0000-000000-00006z', 'G-00000000-00000000-0000-000000-000060', 'g-00000000-00000000-0000-000000-000060 '];
  for (const id of malformed) it(`rejects ${JSON.stringify(id)}`, () => expect(errorCode(() => parseId(id))).to.equal('BadRequest'));
  it('refuses addresses beyond 48 bits', () => expect(errorCode(() => makeId('group', key, 1n << 48n))).to.equal('BadRequest'));
});

describe('RWLock', () => {
  it('lets readers share and makes a writer wait for them, and new readers wait for a writer', async () => {
    const l = new RWLock();
    const order: string[] = [];
    expect(l.tryRead()).to.equal(true);
    const w = l.write().then(() => order.push('write'));
    expect(l.tryRead()).to.equal(false); // a waiting writer stops new readers
    const r2 = l.read().then(() => order.push('read2'));
    await Promise.resolve();
    expect(order).to.deep.equal([]);
    l.releaseRead();
    await w;
    expect(order).to.deep.equal(['write']);
    l.releaseWrite();
    await r2;
    expect(order).to.deep.equal(['write', 'read2']);
    l.releaseRead();
    expect(l.idle).to.equal(true);
  });
});

describe('PagePool', () => {
  it('reuses page buffers and hands out one-offs for larger requests', () => {
    const p = new PagePool(1024, 2);
    const a = p.take(100);
    expect(a.length).to.equal(1024);
    p.give(a);
    expect(p.take(1024)).to.equal(a);
    const big = p.take(4096);
    expect(big.length).to.equal(4096);
    p.give(big);
    expect(p.take(10)).to.not.equal(big);
  });

  it('keeps shared pages apart: takeShared gives SharedArrayBuffer pages back to takeShared only', () => {
    const p = new PagePool(1024, 2);
    const s = p.takeShared(1000);
    expect(s.buffer).to.be.instanceOf(SharedArrayBuffer);
    expect(s.length).to.equal(1024);
    const plain = p.take(10);
    expect(plain.buffer).to.not.be.instanceOf(SharedArrayBuffer);
    p.give(s);
    p.give(plain);
    expect(p.take(10)).to.equal(plain);
    expect(p.take(10)).to.not.equal(s);
    expect(p.takeShared(10)).to.equal(s);
    expect(() => p.takeShared(1025)).to.throw(RangeError);
  });
});

describe('config', () => {
  it('takes flags over environment over file over defaults', () => {
    const file = path.join(tempRoot('h5store-cfg-'), 'c.json');
    fs.writeFileSync(file, JSON.stringify({ port: 7000, root: '/from/file', idleCloseMs: 500 }));
    const c = loadConfig({ config: file, port: 9000 }, { H5STORE_ROOT: '/from/env', H5STORE_SAMPLES: 'true' });
    expect(c.port).to.equal(9000);
    expect(c.root).to.equal('/from/env');
    expect(c.idleCloseMs).to.equal(500);
    expect(c.samples).to.equal(true);
    expect(c.host).to.equal('127.0.0.1');
    expect(envName('maxJsonValueBytes')).to.equal('H5STORE_MAX_JSON_VALUE_BYTES');
  });
  it('names every invalid setting', () => {
    expect(() => loadConfig({ port: 'abc' }, {})).to.throw(/port/);
    expect(() => loadConfig({}, { H5STORE_PAGE_BYTES: '12' })).to.throw(/pageBytes/);
    expect(() => loadConfig({ config: '/nonexistent/x.json' }, {})).to.throw(/Cannot read config file/);
  });
});
