/**
 * Table-driven tests of the pure parts of the dialect work (issue #12): id syntax (HSDS forms),
 * domain keys from file identity, bucket names, the bodies of the bulk link routes, external
 * link targets, and domain queries.
 */
import { expect } from 'chai';
import { isValidBucketName } from '../../src/http/request.js';
import { extraCreationProperties } from '../../src/store/objects/cprops.js';
import { parseDomainQuery } from '../../src/store/objects/domainQuery.js';
import { domainKey, fileIdentity, parseId } from '../../src/store/objects/ids.js';
import { parseLinksPost, parseLinksPut } from '../../src/http/bodies.js';
import { externalTarget, linkNameFromPath } from '../../src/store/objects/links.js';
import { groupIdsIn } from '../../src/store/objects/linkWrites.js';
import { errorCode } from '../helpers/errors.js';

describe('ids: HSDS-style forms (wire-reference 0.1)', () => {
  const ours = 'g-329517ad-4f00e600-0000-000000-000060';
  it('our form parses to key, generation and address', () => {
    expect(parseId(ours)).to.deep.equal({ kind: 'group', key: '329517ad4f00e600', gen: 0, addr: 0x60n });
  });
  const foreign = [
    'g-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c', // g- + a UUID (clients' test ids, HSDS v1 ids)
    'd-0A8F3C2E-6B1D-4E9A-9C3F-1D2E3F4A5B6C',
    't-329517AD-4F00E600-0000-000000-000060', // upper-case hex: never made here
  ];
  for (const id of foreign) it(`${id} is well-formed but names nothing (foreign)`, () => expect(parseId(id).foreign).to.equal(true));
  const bad = ['', 'g-', 'g-123', 'x-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c', 'g_0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6c', 'g-0a8f3c2e-6b1d-4e9a-9c3f-1d2e3f4a5b6g', 'g-0a8f3c2e-6b1d4e9a-9c3f-1d2e3f4a5b6c', `${ours}0`];
  for (const id of bad) it(`${JSON.stringify(id)} is malformed: 400`, () => expect(errorCode(() => parseId(id))).to.equal('BadRequest'));
});

describe('domain keys from path and file identity', () => {
  it('same path and identity: same key; another birth time or inode: another key; no identity: the path alone', () => {
    const a = fileIdentity({ ino: 7, birthtimeMs: 1795431391104.427 });
    const b = fileIdentity({ ino: 7, birthtimeMs: 1795431391128.427 });
    expect(a).to.not.equal(b);
    expect(domainKey('/x.h5', a)).to.equal(domainKey('/x.h5', a));
    expect(domainKey('/x.h5', a)).to.not.equal(domainKey('/x.h5', b));
    expect(domainKey('/x.h5', a)).to.not.equal(domainKey('/y.h5', a));
    expect(domainKey('/x.h5', fileIdentity({ ino: 7, birthtimeMs: 0 }))).to.not.equal(domainKey('/x.h5', fileIdentity({ ino: 8, birthtimeMs: 0 })));
    expect(domainKey('/x.h5')).to.match(/^[0-9a-f]{16}$/);
  });
});

describe('bucket names (S3 rules)', () => {
  const good = ['abc', 'hsdstest', 'my.bucket-01', 'a'.repeat(63), '1bucket'];
  const bad = ['ab', 'a'.repeat(64), 'Bad', 'under_score', '-abc', 'abc-', '.abc', 'abc.', 'a..b', '192.168.0.1', 'xn--abc', 'sthree-x', 'abc-s3alias', 'abc--ol-s3', 'a b', ''];
  for (const b of good) it(`accepts ${b.slice(0, 20)}`, () => expect(isValidBucketName(b)).to.equal(true));
  for (const b of bad) it(`refuses ${JSON.stringify(b.slice(0, 20))}`, () => expect(isValidBucketName(b)).to.equal(false));
});

describe('bulk link bodies (wire-reference 2.2)', () => {
  const G = 'g-329517ad-4f00e600-0000-000000-000060';
  const H = 'g-329517ad-4f00e600-0000-000000-000320';
  it('POST: titles; grp_ids list (with titles); grp_ids dict', () => {
    expect(parseLinksPost({ titles: ['a', 'b'] })).to.deep.equal({ titles: ['a', 'b'] });
    expect(parseLinksPost({ grp_ids: [G, H] })).to.deep.equal({ titles: undefined, groups: [{ id: G, titles: undefined }, { id: H, titles: undefined }] });
    expect(parseLinksPost({ grp_ids: [G], titles: ['x'] })).to.deep.equal({ titles: ['x'], groups: [{ id: G, titles: ['x'] }] });
    expect(parseLinksPost({ grp_ids: { [G]: ['a'], [H]: null } })).to.deep.equal({ groups: [{ id: G, titles: ['a'] }, { id: H, titles: undefined }] });
    expect(parseLinksPost({})).to.deep.equal({ titles: undefined });
  });
  const badPost: Record<string, unknown>[] = [{ titles: 'a' }, { titles: [1] }, { grp_ids: 'x' }, { grp_ids: [1] }, { grp_ids: { [G]: 'a' } }, { grp_ids: { [G]: ['a'] }, titles: ['b'] }];
  for (const b of badPost) it(`POST ${JSON.stringify(b)}: 400`, () => expect(errorCode(() => parseLinksPost(b))).to.equal('BadRequest'));

  it('PUT: links map; the same map in each grp_ids group; per-group maps (with or without "links")', () => {
    expect(parseLinksPut({ links: { a: { id: H }, s: { h5path: '/x' } } }, G)).to.deep.equal([
      { groupId: G, title: 'a', spec: { id: H } },
      { groupId: G, title: 's', spec: { h5path: '/x' } },
    ]);
    expect(parseLinksPut({ grp_ids: [G, H], links: { e: { h5path: '/p', h5domain: 'f.h5' } } }, G).map((p) => p.groupId)).to.deep.equal([G, H]);
    expect(parseLinksPut({ grp_ids: { [G]: { links: { a: { h5path: '/' } } }, [H]: { b: { h5path: '/' } } } }, G)).to.deep.equal([
      { groupId: G, title: 'a', spec: { h5path: '/' } },
      { groupId: H, title: 'b', spec: { h5path: '/' } },
    ]);
  });
  const badPut: Record<string, unknown>[] = [{}, { links: [] }, { links: { a: {} } }, { links: { a: { id: 1 } } }, { grp_ids: 'x', links: {} }, { grp_ids: { [G]: [] } }];
  for (const b of badPut) it(`PUT ${JSON.stringify(b)}: 400`, () => expect(errorCode(() => parseLinksPut(b, G))).to.equal('BadRequest'));

  it('group ids named by a body (ACL targets)', () => {
    expect(groupIdsIn({ grp_ids: [G, 3, H] })).to.deep.equal([G, H]);
    expect(groupIdsIn({ grp_ids: { [G]: [] } })).to.deep.equal([G]);
    expect(groupIdsIn({})).to.deep.equal([]);
  });

  it('a name with "/" from a single-link path is 404', () => {
    expect(linkNameFromPath('a b%')).to.equal('a b%');
    expect(errorCode(() => linkNameFromPath('a/b'))).to.equal('NotFound');
  });
});

describe('external link targets', () => {
  const exists = (set: string[]) => (d: string) => set.includes(d);
  const cases: [string, string, string[], string][] = [
    ['/a/b/x.h5', 'y.h5', [], '/a/b/y.h5'],
    ['/a/b/x.h5', '../y.h5', [], '/a/y.h5'],
    ['/a/b/x.h5', 'sub/y.h5', [], '/a/b/sub/y.h5'],
    ['/a/b/x.h5', '/c/y.h5', ['/c/y.h5'], '/c/y.h5'],
    // an absolute name that is no domain here: the file name beside the linking domain (libhdf5's fallback)
    ['/a/b/x.h5', '/data/files/y.h5', ['/a/b/y.h5'], '/a/b/y.h5'],
    ['/a/b/x.h5', '/data/files/y.h5', [], '/data/files/y.h5'],
    ['/a/b/x.h5', 'hdf5://c/y.h5', ['/c/y.h5'], '/c/y.h5'],
    ['/x.h5', '../../y.h5', [], '/y.h5'],
  ];
  for (const [from, file, present, want] of cases) it(`${file} from ${from} -> ${want}`, () => expect(externalTarget(from, file, exists(present))).to.equal(want));
});

describe('domain queries (GET /domains?query=)', () => {
  const rows: [string, Record<string, number | string>, boolean][] = [
    ["attr1 > 7 AND attr2 != 'A0000004'", { attr1: 8, attr2: 'A0000005' }, true],
    ["attr1 > 7 AND attr2 != 'A0000004'", { attr1: 8, attr2: 'A0000004' }, false],
    ["attr1 > 7 AND attr2 != 'A0000004'", { attr1: 7, attr2: 'x' }, false],
    ["attr1 < 2 OR attr2 == b'and'", { attr1: 5, attr2: 'and' }, true],
    ['(a >= 1.5) & (b < 0)', { a: 1.5, b: -1 }, true],
    ["name IN ('x', 'y')", { name: 'y' }, true],
  ];
  for (const [q, vals, want] of rows) {
    it(`${q} on ${JSON.stringify(vals)} -> ${want}`, () => {
      const p = parseDomainQuery(q);
      expect(p.test(p.names.map((n) => vals[n]))).to.equal(want);
    });
  }
  it('names only the attributes used (not words inside strings or keywords)', () => {
    expect(parseDomainQuery("attr1 > 7 AND attr2 != 'AND other'").names).to.deep.equal(['attr1', 'attr2']);
  });
  for (const q of ['', 'attr1 >', 'attr1 = 3', '(attr1 > 3', 'attr1 @ 3', '3 > 2', "'a' == 'b'"]) {
    it(`${JSON.stringify(q)} is a 400`, () => expect(errorCode(() => parseDomainQuery(q))).to.equal('BadRequest'));
  }
});

describe('group creation properties beyond CreateOrder', () => {
  it('keeps every key but CreateOrder; refuses non-objects and huge ones', () => {
    expect(extraCreationProperties(undefined)).to.equal(undefined);
    expect(extraCreationProperties({ CreateOrder: 1 })).to.equal(undefined);
    expect(extraCreationProperties({ CreateOrder: 1, a: [1], b: 'x' })).to.deep.equal({ a: [1], b: 'x' });
    expect(errorCode(() => extraCreationProperties([1]))).to.equal('BadRequest');
    expect(errorCode(() => extraCreationProperties({ x: 'y'.repeat(20000) }))).to.equal('BadRequest');
  });
});
