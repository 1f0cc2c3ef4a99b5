/**
 * The web viewer's pure helpers (viewer/src/format.ts): URL state, paths, sizes, times, Basic
 * credentials, error bodies.
 */
import { expect } from 'chai';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  basicAuthorization,
  baseName,
  breadcrumbs,
  domainsParam,
  errorMessageOf,
  formatBytes,
  formatTime,
  normalizePath,
  parentFolder,
  parseViewState,
  viewQuery,
} from '../../viewer/src/format.js';

describe('viewer: paths', () => {
  const cases: [string, string][] = [
    ['', '/'],
    ['/', '/'],
    ['  /samples/tall.h5  ', '/samples/tall.h5'],
    ['samples/tall.h5', '/samples/tall.h5'],
    ['/a//b///c.h5', '/a/b/c.h5'],
    ['/folder/', '/folder'],
    ['hdf5://home/u/f.h5', '/home/u/f.h5'],
    ['hdf5:/home/u/f.h5', '/home/u/f.h5'],
    ['/données/température.h5', '/données/température.h5'],
  ];
  for (const [raw, want] of cases) it(`normalizes ${JSON.stringify(raw)}`, () => expect(normalizePath(raw)).to.equal(want));

  const parents: [string, string, string][] = [
    ['/', '/', '/'],
    ['/a.h5', '/', 'a.h5'],
    ['/x/y/z.h5', '/x/y', 'z.h5'],
    ['/x/y/', '/x', 'y'],
  ];
  for (const [p, parent, base] of parents) {
    it(`parent and base name of ${p}`, () => {
      expect(parentFolder(p)).to.equal(parent);
      expect(baseName(p)).to.equal(base);
    });
  }

  it('breadcrumbs go from the root to the path', () => {
    expect(breadcrumbs('/')).to.deep.equal([{ name: '/', path: '/' }]);
    expect(breadcrumbs('/a/b.h5')).to.deep.equal([
      { name: '/', path: '/' },
      { name: 'a', path: '/a' },
      { name: 'b.h5', path: '/a/b.h5' },
    ]);
  });

  it('GET /domains folder argument has the trailing slash h5pyd sends', () => {
    expect(domainsParam('/')).to.equal('/');
    expect(domainsParam('/samples')).to.equal('/samples/');
    expect(domainsParam('/samples/')).to.equal('/samples/');
  });
});

describe('viewer: URL state', () => {
  const cases: [string, ReturnType<typeof parseViewState>][] = [
    ['', { domain: '/', path: undefined, marker: undefined, limit: DEFAULT_PAGE_SIZE }],
    ['?domain=/samples/tall.h5', { domain: '/samples/tall.h5', path: undefined, marker: undefined, limit: DEFAULT_PAGE_SIZE }],
    ['?domain=%2Fs%2Ft.h5&path=/g1/g1.1/dset1.1.1', { domain: '/s/t.h5', path: '/g1/g1.1/dset1.1.1', marker: undefined, limit: DEFAULT_PAGE_SIZE }],
    ['?domain=/many&marker=/many/f09.h5&limit=10', { domain: '/many', path: undefined, marker: '/many/f09.h5', limit: 10 }],
    ['?limit=0', { domain: '/', path: undefined, marker: undefined, limit: DEFAULT_PAGE_SIZE }],
    ['?limit=abc', { domain: '/', path: undefined, marker: undefined, limit: DEFAULT_PAGE_SIZE }],
    ['?limit=2.5', { domain: '/', path: undefined, marker: undefined, limit: DEFAULT_PAGE_SIZE }],
    ['?limit=99999', { domain: '/', path: undefined, marker: undefined, limit: MAX_PAGE_SIZE }],
    ['?path=%20', { domain: '/', path: undefined, marker: undefined, limit: DEFAULT_PAGE_SIZE }],
  ];
  for (const [search, want] of cases) it(`parses ${JSON.stringify(search)}`, () => expect(parseViewState(search)).to.deep.equal(want));

  it('writes readable queries that parse back to the same state', () => {
    expect(viewQuery({ domain: '/' })).to.equal('?');
    expect(viewQuery({ domain: '/samples/tall.h5', path: '/g1/g1.1' })).to.equal('?domain=/samples/tall.h5&path=/g1/g1.1');
    expect(viewQuery({ domain: '/a b/c&d.h5' })).to.equal('?domain=/a+b/c%26d.h5');
    for (const s of [
      { domain: '/x/y', marker: '/x/y/f 1.h5', limit: 7 },
      { domain: '/a b/c&d=e.h5', path: '/g#1/d?s', limit: DEFAULT_PAGE_SIZE },
    ]) {
      const back = parseViewState(viewQuery(s));
      expect(back).to.deep.include(s);
    }
  });
});

describe('viewer: formatting', () => {
  const sizes: [number, string][] = [
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [10 * 1024, '10 KiB'],
    [1024 * 1024 - 1, '1.0 MiB'],
    [5.25 * 1024 ** 3, '5.3 GiB'],
    [-1, ''],
    [Number.NaN, ''],
  ];
  for (const [n, want] of sizes) it(`formats ${n} bytes as ${JSON.stringify(want)}`, () => expect(formatBytes(n)).to.equal(want));

  it('formats epoch seconds as YYYY-MM-DD HH:MM:SS', () => {
    expect(formatTime(0, true)).to.equal('1970-01-01 00:00:00');
    expect(formatTime(1700000000.9, true)).to.equal('2023-11-14 22:13:20');
    expect(formatTime(Number.NaN)).to.equal('');
    expect(formatTime(1795211058)).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('encodes Basic credentials as UTF-8 (RFC 7617)', () => {
    expect(basicAuthorization('alice', 'secret')).to.equal('Basic ' + Buffer.from('alice:secret').toString('base64'));
    expect(basicAuthorization('zoë', 'pässwörd:1')).to.equal('Basic ' + Buffer.from('zoë:pässwörd:1', 'utf8').toString('base64'));
  });

  it("reads the message of an h5store error body, or the text", () => {
    expect(errorMessageOf('{"status": 403, "message": "no read permission", "hrefs": []}')).to.equal('no read permission');
    expect(errorMessageOf('403: Forbidden\n')).to.equal('403: Forbidden');
    expect(errorMessageOf('')).to.equal('');
  });
});
