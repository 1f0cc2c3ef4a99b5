/**
 * The real h5pyd client with users (issue #11): the admin makes a home folder for alice, alice
 * creates her first file with h5pyd, reopens it in mode "a" (h5pyd checks her ACL), `hsacl`
 * grants bob read access, and bob is refused until then. Skipped without ../shared.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { userAdd } from '../../src/auth/admin.js';
import { Client, REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const H5PYD = path.resolve(REPO, '../shared/clients/h5pyd');
const HAVE_H5PYD = fs.existsSync(path.join(H5PYD, 'h5pyd', '__init__.py'));

describe('h5pyd with users and ACLs (issue #11)', function () {
  this.timeout(120_000);
  let srv: TestServer;

  before(async function () {
    if (!HAVE_H5PYD) {
      console.log('      (skipped: ../shared/clients/h5pyd is not here)');
      this.skip();
    }
    const users = path.join(tempRoot('h5store-users-'), 'users.json');
    for (const [u, p] of [['admin', 'admin-pw'], ['alice', 'alice-pw'], ['bob', 'bob-pw']]) await userAdd(users, u, p);
    srv = await startServer({ args: ['--users-file', users] });
    const adm = new Client(srv.url).as({ user: 'admin', password: 'admin-pw' });
    expect((await adm.with('/home').put('/', { folder: true })).status).to.equal(201);
    expect((await adm.with('/home/alice').put('/', { folder: true, owner: 'alice' })).status).to.equal(201);
  });
  after(async () => srv?.stop());

  /** Run Python with h5pyd as a user; returns stdout. */
  const py = (user: string, code: string) =>
    execFileSync('/usr/bin/python3', ['-c', code], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: H5PYD, HS_ENDPOINT: srv.url, HS_USERNAME: user, HS_PASSWORD: `${user}-pw`, HOME: tempRoot('h5store-home-') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const hsacl = (user: string, args: string[]) =>
    execFileSync('/usr/bin/python3', [path.join(H5PYD, 'h5pyd/_apps/hsacl.py'), '-e', srv.url, '-u', user, '-p', `${user}-pw`, ...args], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: H5PYD, HOME: tempRoot('h5store-home-') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  it('alice creates her first file, writes, reopens in mode "a" and reads back', () => {
    const out = py(
      'alice',
      `
import h5pyd, numpy as np
with h5pyd.File('/home/alice/first.h5', 'w') as f:
    f.create_dataset('x', data=np.arange(10, dtype='i4'))
    f.attrs['note'] = 'hello'
with h5pyd.File('/home/alice/first.h5', 'a') as f:
    f['x'][0] = 42
with h5pyd.File('/home/alice/first.h5', 'r') as f:
    print(f.owner, list(f['x'][:3]), f.attrs['note'])
`,
    );
    expect(out.trim()).to.equal("alice [42, 1, 2] hello");
  });

  it('bob is refused until alice grants him read with hsacl; then he reads but cannot write', () => {
    const read = `
import h5pyd
try:
    with h5pyd.File('/home/alice/first.h5', 'r') as f:
        print('read', int(f['x'][0]))
except IOError as e:
    print('refused', e.errno)
`;
    expect(py('bob', read).trim()).to.equal('refused 403');
    hsacl('alice', ['/home/alice/first.h5', '+r', 'bob']);
    expect(hsacl('alice', ['/home/alice/first.h5'])).to.match(/bob\s+False\s+True\s+False/);
    expect(py('bob', read).trim()).to.equal('read 42');
    const write = `
import h5pyd
try:
    with h5pyd.File('/home/alice/first.h5', 'a') as f:
        f['x'][1] = 7
    print('wrote')
except IOError as e:
    print('refused', e.errno)
`;
    expect(py('bob', write).trim()).to.equal('refused 403');
  });
});
