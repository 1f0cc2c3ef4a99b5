/**
 * The pure permission decision (spec 5) and ACL helpers, table-driven.
 */
import { expect } from 'chai';
import {
  ANONYMOUS,
  type Acl,
  type AclEntry,
  type Principal,
  decide,
  effectiveEntry,
  entryOf,
  entryWith,
  checkAclName,
  droppedInAcl,
  initialAcl,
  mergeEntryBody,
  parseFlagList,
} from '../../src/auth/acl.js';
import { parseOrigins } from '../../src/http/cors.js';
import { UsersError, hashPassword, parseToken, parseUsersDoc, verifyPassword } from '../../src/auth/users.js';

const user = (name: string, groups: string[] = [], admin = false): Principal => ({ name, groups, authenticated: true, admin });
const R = entryWith(['read']);
const RU = entryWith(['read', 'update']);
const ALL = entryOf(true);
const NONE = entryOf(false);

describe('decide(): spec section 5 lookup order', () => {
  const cases: Array<{ name: string; p: Principal; flag: keyof AclEntry; object?: Acl; root: Acl; fallback?: AclEntry; want: string }> = [
    { name: '1. the user entry in the object ACL decides (allow)', p: user('a'), flag: 'update', object: { a: RU }, root: { a: R }, want: 'allow' },
    { name: '1. the user entry in the object ACL decides (deny beats root)', p: user('a'), flag: 'update', object: { a: R }, root: { a: ALL }, want: 'forbidden' },
    { name: '1. the object entry denies even when default allows', p: user('a'), flag: 'read', object: { a: NONE, default: R }, root: {}, want: 'forbidden' },
    { name: '2. no object entry: the user entry in the root ACL', p: user('a'), flag: 'delete', object: { b: ALL }, root: { a: ALL }, want: 'allow' },
    { name: '2. the root entry of the user beats default in the object ACL', p: user('a'), flag: 'read', object: { default: R }, root: { a: NONE }, want: 'forbidden' },
    { name: '3. default in the object ACL', p: user('a'), flag: 'read', object: { default: R }, root: { default: NONE }, want: 'allow' },
    { name: '4. default in the root ACL', p: user('a'), flag: 'read', root: { default: R }, fallback: NONE, want: 'allow' },
    { name: '4. default in the root ACL denies before default_acl', p: user('a'), flag: 'read', root: { default: NONE }, fallback: ALL, want: 'forbidden' },
    { name: '5. default_acl from configuration', p: user('a'), flag: 'read', root: {}, fallback: R, want: 'allow' },
    { name: '5. default_acl denies', p: user('a'), flag: 'update', root: {}, fallback: R, want: 'forbidden' },
    { name: 'anonymous denied: 401 (rule 1)', p: ANONYMOUS, flag: 'update', root: { default: R }, want: 'unauthorized' },
    { name: 'anonymous allowed by default', p: ANONYMOUS, flag: 'read', root: { default: R }, want: 'allow' },
    { name: 'anonymous never matches an entry named default as a user entry', p: ANONYMOUS, flag: 'update', object: { default: R }, root: { default: ALL }, want: 'unauthorized' },
    { name: 'a group entry counts as the user own entry', p: user('a', ['staff']), flag: 'update', root: { 'g:staff': RU, default: R }, want: 'allow' },
    { name: 'the direct entry wins over a group entry', p: user('a', ['staff']), flag: 'update', root: { a: R, 'g:staff': RU }, want: 'forbidden' },
    { name: 'several group entries are combined', p: user('a', ['x', 'y']), flag: 'delete', root: { 'g:x': R, 'g:y': entryWith(['delete']) }, want: 'allow' },
    { name: 'a group entry in the object ACL comes before the root entry', p: user('a', ['staff']), flag: 'read', object: { 'g:staff': NONE }, root: { a: ALL }, want: 'forbidden' },
    { name: 'groups of others do not apply', p: user('a', ['x']), flag: 'read', root: { 'g:y': R }, fallback: NONE, want: 'forbidden' },
    { name: 'the admin passes every check', p: user('root', [], true), flag: 'updateACL', object: { root: NONE }, root: { default: NONE }, fallback: NONE, want: 'allow' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(decide(c.p, c.flag, { object: c.object, root: c.root, fallback: c.fallback ?? NONE })).to.equal(c.want);
    });
  }

  it('effectiveEntry gives the flags of the deciding entry', () => {
    expect(effectiveEntry(user('a'), { root: { a: RU }, fallback: NONE })).to.deep.equal(RU);
    expect(effectiveEntry(ANONYMOUS, { root: {}, fallback: R })).to.deep.equal(R);
  });
});

describe('ACL helpers', () => {
  it('parseFlagList', () => {
    const table: Array<[string, AclEntry | 'error']> = [
      ['read', R],
      ['read,update', RU],
      ['read update', RU],
      ['all', ALL],
      ['none', NONE],
      ['', NONE],
      ['writeACL', entryWith(['updateACL'])],
      ['bogus', 'error'],
    ];
    for (const [text, want] of table) {
      if (want === 'error') expect(() => parseFlagList(text), text).to.throw(/Unknown ACL flag/);
      else expect(parseFlagList(text), text).to.deep.equal(want);
    }
  });

  it('mergeEntryBody: missing flags keep their value; writeACL is updateACL; bad keys and values throw', () => {
    expect(mergeEntryBody({ read: true })).to.deep.equal(R);
    expect(mergeEntryBody({ update: true }, R)).to.deep.equal(RU);
    expect(mergeEntryBody({ writeACL: true, userName: 'x' })).to.deep.equal(entryWith(['updateACL']));
    expect(() => mergeEntryBody({ foo: true })).to.throw(/Unexpected key/);
    expect(() => mergeEntryBody({ read: 1 })).to.throw(/true or false/);
  });

  it('initialAcl: parent entries without default/owner/admin/empty ones; owner all; default by default_public', () => {
    const parent: Acl = { default: R, owner1: RU, admin: ALL, bob: R, empty: NONE };
    expect(initialAcl({ owner: 'owner1', parent, admin: 'admin', folder: false, defaultPublic: false })).to.deep.equal({ bob: R, owner1: ALL, default: NONE });
    expect(initialAcl({ owner: 'owner1', parent, admin: 'admin', folder: false, defaultPublic: true }).default).to.deep.equal(R);
    expect(initialAcl({ owner: 'owner1', parent: {}, admin: 'admin', folder: true, defaultPublic: false }).default).to.deep.equal(R);
  });

  it('initialAcl: default:files passes to new folders, not to new domains', () => {
    const parent: Acl = { 'default:files': R, bob: R };
    expect(initialAcl({ owner: 'o', parent, admin: 'admin', folder: true, defaultPublic: false })).to.deep.equal({ 'default:files': R, bob: R, o: ALL, default: R });
    expect(initialAcl({ owner: 'o', parent, admin: 'admin', folder: false, defaultPublic: false })).to.deep.equal({ bob: R, o: ALL, default: NONE });
  });

  describe('droppedInAcl: a folder ACL -> the ACL of the files dropped into it (issue #24 item 1)', () => {
    const cases: Array<[string, Acl, boolean, Acl]> = [
      ['private: the folder entries, default none', { alice: ALL, 'g:staff': R, default: R }, true, { alice: ALL, 'g:staff': R, default: NONE }],
      ['private: default:files decides', { alice: ALL, default: R, 'default:files': RU }, true, { alice: ALL, default: RU }],
      ['private: no default in the folder still gives none', { alice: ALL }, true, { alice: ALL, default: NONE }],
      ['not private: the folder default applies', { alice: ALL, default: R }, false, { alice: ALL, default: R }],
      ['not private: default:files still decides', { default: R, 'default:files': NONE }, false, { default: NONE }],
      ['not private, no default anywhere: none set (default_acl applies)', { alice: ALL }, false, { alice: ALL }],
    ];
    for (const [name, folder, priv, want] of cases) it(name, () => expect(droppedInAcl(folder, { private: priv })).to.deep.equal(want));
  });

  it('checkAclName: default:files and oidc:<id> (colons allowed after the prefix); other colons refused', () => {
    for (const ok of ['alice', 'default', 'g:staff', 'default:files', 'oidc:abc', 'oidc:google-oauth2|123', 'oidc:urn:x:1']) expect(checkAclName(ok)).to.equal(ok);
    for (const bad of ['a:b', 'g:a:b', 'oidc:', 'oidc:a/b', 'g:', 'x/y', 'default:other', 'oidc:' + 'x'.repeat(124)]) expect(() => checkAclName(bad), bad).to.throw(/Invalid/);
  });

  it('parseOrigins', () => {
    expect(parseOrigins('')).to.deep.equal({ any: false, list: new Set() });
    expect(parseOrigins('*').any).to.equal(true);
    expect([...parseOrigins('http://a.example, https://b.example/').list]).to.deep.equal(['http://a.example', 'https://b.example']);
  });
});

describe('users file', () => {
  it('scrypt hashes verify the right password only, in a fixed format', async () => {
    const h = await hashPassword('s3cret');
    expect(h).to.match(/^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(await verifyPassword('s3cret', h)).to.equal(true);
    expect(await verifyPassword('s3cret ', h)).to.equal(false);
    expect(await verifyPassword('s3cret', undefined)).to.equal(false);
    expect(await verifyPassword('s3cret', 'plain')).to.equal(false);
  });

  it('refuses plain-text passwords and malformed documents', () => {
    expect(() => parseUsersDoc('{"users": {"a": {"hash": "secret"}}}')).to.throw(UsersError, /scrypt/);
    expect(() => parseUsersDoc('[]')).to.throw(UsersError);
    expect(() => parseUsersDoc('{')).to.throw(UsersError);
    expect(parseUsersDoc('{}').users).to.deep.equal({});
  });

  it('parseToken recognises only h5store tokens', () => {
    expect(parseToken('h5s_abcdefghijkl_' + 'x'.repeat(43))).to.deep.equal({ id: 'abcdefghijkl', secret: 'x'.repeat(43) });
    expect(parseToken('h5s_short_x')).to.equal(undefined);
    expect(parseToken('eyJ.a.b')).to.equal(undefined);
  });
});
