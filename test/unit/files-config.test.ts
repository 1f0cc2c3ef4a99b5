/**
 * Settings of file sharing and durability (docs/configuration.md): `fsync`, `lockWaitMs`, and
 * the names of the service files kept beside domain files (src/store/session/xlock.ts).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { LOCK_SUFFIX, normalizeDomain } from '../../src/store/objects/paths.js';
import { legacyLockOf, legacyLockState, lockFileOf, serviceName } from '../../src/store/session/servicefiles.js';
import { tempRoot } from '../helpers/server.js';

describe('config: fsync policy and lock waits', () => {
  const cases: Array<[Record<string, string>, { fsync?: string; lockWaitMs?: number } | 'error']> = [
    [{}, { fsync: 'always', lockWaitMs: 5000 }],
    [{ H5STORE_FSYNC: 'never' }, { fsync: 'never' }],
    [{ H5STORE_FSYNC: 'always' }, { fsync: 'always' }],
    [{ H5STORE_FSYNC: 'sometimes' }, 'error'],
    [{ H5STORE_FSYNC: 'false' }, 'error'],
    [{ H5STORE_LOCK_WAIT_MS: '250' }, { lockWaitMs: 250 }],
    [{ H5STORE_LOCK_WAIT_MS: '0' }, { lockWaitMs: 0 }],
    [{ H5STORE_LOCK_WAIT_MS: '-1' }, 'error'],
    [{ H5STORE_LOCK_WAIT_MS: 'soon' }, 'error'],
  ];
  for (const [env, want] of cases) {
    it(`${JSON.stringify(env)} -> ${JSON.stringify(want)}`, () => {
      if (want === 'error') {
        expect(() => loadConfig({}, env)).to.throw(/Invalid configuration/);
        return;
      }
      const c = loadConfig({}, env);
      if (want.fsync) expect(c.fsync).to.equal(want.fsync);
      if (want.lockWaitMs !== undefined) expect(c.lockWaitMs).to.equal(want.lockWaitMs);
    });
  }
});

describe('service file names', () => {
  const names = ['a.h5', 'x'.repeat(255), 'é'.repeat(127), '温'.repeat(85), '𝒳'.repeat(63), 'run 1 (copy).h5', '.hidden.h5'];
  for (const n of names) {
    it(`fit in NAME_MAX and are reserved and hidden, for a ${Buffer.byteLength(n)}-byte name`, () => {
      for (const s of [serviceName(n), serviceName(n, '.0123456789ab.new'), lockFileOf(`/data/${n}`).split('/').pop()!]) {
        expect(Buffer.byteLength(s)).to.be.at.most(255);
        expect(s.startsWith('.')).to.equal(true);
        expect(s.endsWith(LOCK_SUFFIX)).to.equal(true);
        expect(() => normalizeDomain(`/${s}`)).to.throw(/reserved/);
      }
    });
  }
  it('differ for names that share their first 64 bytes', () => {
    const a = 'p'.repeat(100) + 'a.h5';
    const b = 'p'.repeat(100) + 'b.h5';
    expect(serviceName(a)).to.not.equal(serviceName(b));
  });
  it('the lock directory of earlier versions of h5store is only looked for where it could exist', () => {
    expect(legacyLockOf('/d/a.h5')).to.equal(`/d/.a.h5${LOCK_SUFFIX}`);
    expect(legacyLockOf('/d/' + 'x'.repeat(250))).to.equal(undefined);
  });
  it('the state of that lock directory: none (absent, not a directory, name too long), live, stale', () => {
    const dir = tempRoot('h5store-legacy-');
    try {
      const file = (n: string) => path.join(dir, n);
      fs.mkdirSync(legacyLockOf(file('live.h5'))!);
      fs.mkdirSync(legacyLockOf(file('stale.h5'))!);
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(legacyLockOf(file('stale.h5'))!, old, old);
      fs.writeFileSync(legacyLockOf(file('plain.h5'))!, '');
      const cases: Array<[string, string]> = [
        ['absent.h5', 'none'],
        ['plain.h5', 'none'],
        ['x'.repeat(250), 'none'],
        ['live.h5', 'live'],
        ['stale.h5', 'stale'],
      ];
      for (const [name, state] of cases) expect(legacyLockState(file(name)), name).to.equal(state);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
