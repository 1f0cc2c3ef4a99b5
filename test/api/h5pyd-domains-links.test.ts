/**
 * The real h5pyd client (0.24.0, ../shared/clients/h5pyd) against h5store, for the domain, link
 * and group parts of the dialect (issue #12): File modes r, r+, w, w-, x, a; groups that track
 * creation order (listing order, attribute replace and delete, read back with and without the
 * `domain_objs` h5pyd loads in mode r, and by h5py); soft and external links; flush; and the
 * command-line tools `hsls -r` (folder and domain), `hsinfo` and `hsstat`.
 * Skipped with a message when ../shared is absent.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pythonJson } from '../helpers/python.js';
import { Client, REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const H5PYD = path.resolve(REPO, '../shared/clients/h5pyd');
const HAVE_H5PYD = fs.existsSync(path.join(H5PYD, 'h5pyd', '__init__.py'));

describe('h5pyd: files, groups, links and tools (issue #12)', function () {
  this.timeout(180_000);
  let srv: TestServer;
  let home: string;

  before(async function () {
    if (!HAVE_H5PYD) {
      console.log('      (skipped: ../shared/clients/h5pyd is not here)');
      this.skip();
    }
    home = tempRoot('h5store-h5pyd-home-');
    srv = await startServer();
    const api = new Client(srv.url);
    expect((await api.with('/home').put('/', { folder: true })).status).to.equal(201);
    expect((await api.with('/home/sub').put('/', { folder: true })).status).to.equal(201);
  });
  after(async () => srv?.stop());

  const env = () => ({ ...process.env, PYTHONPATH: H5PYD, HS_ENDPOINT: srv.url, HOME: home });
  /** Run Python with h5pyd; the last line of stdout parsed as JSON. */
  const py = (code: string): any => {
    const out = execFileSync('/usr/bin/python3', ['-c', `import h5pyd, json, numpy as np\n${code}`], { encoding: 'utf8', env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(out.trim().split('\n').pop()!);
  };
  /** Run one of h5pyd's command-line tools; stdout. */
  const tool = (name: string, args: string[]): string =>
    execFileSync('/usr/bin/python3', [path.join(H5PYD, 'h5pyd/_apps', name), '-e', srv.url, ...args], { encoding: 'utf8', env: env(), stdio: ['ignore', 'pipe', 'pipe'] });

  it('File modes w, w-, x, a, r, r+ behave as h5py/h5pyd define them', () => {
    const r = py(`
out = {}
D = '/home/modes.h5'
with h5pyd.File(D, 'w') as f:
    f.create_group('first')
with h5pyd.File(D, 'w') as f:          # w truncates an existing domain
    out['w_again'] = list(f)
    f.create_group('second')
for m in ('w-', 'x'):
    try:
        h5pyd.File(D, m); out[m] = 'opened'
    except IOError as e:
        out[m] = e.errno
with h5pyd.File('/home/new-x.h5', 'x') as f:       # x creates a new domain
    f.attrs['made'] = 1
with h5pyd.File('/home/new-x.h5', 'r') as f:
    out['x_new'] = int(f.attrs['made'])
try:                                                 # h5pyd 0.24 itself refuses w- for a new domain
    h5pyd.File('/home/new-w.h5', 'w-'); out['w-_new'] = 'opened'
except IOError as e:
    out['w-_new'] = e.errno
with h5pyd.File('/home/made-by-a.h5', 'a') as f:   # a creates a missing domain
    f.create_group('a1')
with h5pyd.File('/home/made-by-a.h5', 'a') as f:   # and opens an existing one for writing
    f.create_group('a2'); out['a'] = sorted(f)
with h5pyd.File(D, 'r') as f:
    out['r'] = list(f)
    try:
        f.create_group('nope'); out['r_write'] = 'written'
    except Exception as e:
        out['r_write'] = type(e).__name__
with h5pyd.File(D, 'r+') as f:
    f.create_group('third'); out['r+'] = sorted(f)
for m in ('r', 'r+'):
    try:
        h5pyd.File('/home/missing.h5', m); out[m + '_missing'] = 'opened'
    except IOError as e:
        out[m + '_missing'] = e.errno
print(json.dumps(out))`);
    expect(r).to.deep.equal({
      w_again: [],
      'w-': 409,
      x: 409,
      x_new: 1,
      'w-_new': 404,
      a: ['a1', 'a2'],
      r: ['second'],
      r_write: 'OSError',
      'r+': ['second', 'third'],
      r_missing: 404,
      'r+_missing': 404,
    });
  });

  it('groups with track_order: creation order through every listing, attributes replaced and deleted (dense too)', () => {
    const r = py(`
out = {}
D = '/home/order.h5'
with h5pyd.File(D, 'w', track_order=True) as f:
    for n in ('zz', 'aa', 'mm'):
        f.create_group(n)
    g = f.create_group('g1', track_order=True)
    for n in ('z', 'b', 'a', 'c'):
        g.create_group(n)
    g.create_dataset('d', data=np.arange(3))
    for i in range(12):
        g.attrs['k%02d' % (11 - i)] = i
    g.attrs['three'] = 3
    g.attrs['three'] = 42.0             # replace (another type)
    out['replaced'] = float(g.attrs['three'])
    del g.attrs['three']                # was a 500 with dense attribute storage
    g.attrs['k05'] = 'again'            # replacing moves it last, as with h5py
    out['w_links'] = list(g)
    out['w_attrs'] = list(g.attrs)
    out['w_root'] = list(f)
    out['track'] = g.track_order
    f.flush()
for mode in ('r', 'a'):                 # r reads domain_objs, a asks per object
    with h5pyd.File(D, mode) as f:
        g = f['g1']
        out[mode] = [list(g), list(g.attrs), list(f), g.track_order, g.attrs['k05']]
print(json.dumps(out))`);
    const links = ['z', 'b', 'a', 'c', 'd'];
    const attrs = [...Array.from({ length: 12 }, (_, i) => `k${String(11 - i).padStart(2, '0')}`).filter((k) => k !== 'k05'), 'k05'];
    expect(r.replaced).to.equal(42);
    expect(r.w_links).to.deep.equal(links);
    expect(r.w_attrs).to.deep.equal(attrs);
    expect(r.w_root).to.deep.equal(['zz', 'aa', 'mm', 'g1']);
    expect(r.track).to.equal(true);
    for (const m of ['r', 'a']) expect(r[m], m).to.deep.equal([links, attrs, ['zz', 'aa', 'mm', 'g1'], true, 'again']);
    // h5py reads the same file in the same order (h5py lists a root group by name once reopened)
    const h = pythonJson(
      `import h5py, json, sys\nwith h5py.File(sys.argv[1], 'r') as f: print(json.dumps([list(f['g1']), list(f['g1'].attrs)]))`,
      [path.join(srv.root, 'home/order.h5')],
      { lockFree: true },
    );
    expect(h).to.deep.equal([links, attrs]);
  });

  it('navigates soft and external links (relative and absolute file names), and sees them as links', () => {
    const r = py(`
out = {}
with h5pyd.File('/home/sub/target.h5', 'w') as t:
    t.create_group('x/y').attrs['where'] = 'target'
with h5pyd.File('/home/links.h5', 'w') as f:
    f.create_group('g/inner').attrs['where'] = 'inner'
    f['soft'] = h5pyd.SoftLink('/g/inner')
    f['g/rel'] = h5pyd.SoftLink('inner')
    f['ext'] = h5pyd.ExternalLink('sub/target.h5', '/x')
    f['extabs'] = h5pyd.ExternalLink('/home/sub/target.h5', '/x/y')
    f['dangling'] = h5pyd.SoftLink('/nowhere')
with h5pyd.File('/home/links.h5', 'r') as f:
    out['soft'] = f['soft'].attrs['where']
    out['rel'] = f['g'].get('rel', getlink=True).path  # (h5pyd resolves a relative soft link from the group it is asked on)
    out['ext'] = f['ext']['y'].attrs['where']
    out['extabs'] = f['extabs'].attrs['where']
    el = f.get('ext', getlink=True)
    out['ext_link'] = [type(el).__name__, el.filename, el.path]
    out['soft_link'] = [type(f.get('soft', getlink=True)).__name__, f.get('soft', getlink=True).path]
    out['classes'] = {k: f.get(k, getclass=True, getlink=True).__name__ for k in ('g', 'soft', 'ext')}
    out['dangling_in'] = 'dangling' in f
    out['get_default'] = f.get('dangling', 'none')
    links = f.get(None, getlink=True)
    out['all'] = sorted(links)
    out['deep'] = sorted(len(v) for v in f.get(None, getlink=True, follow_links=True).values())
print(json.dumps(out))`);
    expect(r).to.deep.equal({
      soft: 'inner',
      rel: 'inner',
      ext: 'target',
      extabs: 'target',
      ext_link: ['ExternalLink', 'sub/target.h5', '/x'],
      soft_link: ['SoftLink', '/g/inner'],
      classes: { g: 'HardLink', soft: 'SoftLink', ext: 'ExternalLink' },
      dangling_in: true,
      get_default: 'none',
      all: ['dangling', 'ext', 'extabs', 'g', 'soft'],
      deep: [0, 2, 5],
    });
  });

  it('hsls -r on a domain and on a folder, hsinfo, hsstat', () => {
    py(`
with h5pyd.File('/home/tools.h5', 'w') as f:
    f.create_group('a/b')
    f.create_dataset('a/data', data=np.arange(100, dtype='i4').reshape(10, 10), chunks=(5, 5))
    f['a/link'] = h5pyd.SoftLink('/a/b')
    f.attrs['title'] = 'tools'
print('{}')`);
    const dom = tool('hsls.py', ['-r', '/home/tools.h5']);
    expect(dom).to.match(/^\/a Group$/m);
    expect(dom).to.match(/^\/a\/b Group$/m);
    expect(dom).to.match(/^\/a\/data Dataset \{10, 10\}$/m);
    expect(dom).to.match(/^\/a\/link\s+SoftLink \{\/a\/b\}$/m);
    const folder = tool('hsls.py', ['-r', '/home/']);
    for (const n of ['/home/tools.h5', '/home/order.h5', '/home/sub/target.h5']) expect(folder).to.include(n);
    expect(folder).to.match(/folder\s+.*\/home\/sub/);
    const info = tool('hsinfo.py', []);
    expect(info).to.match(/server state: READY/);
    expect(info).to.match(/server version: 0\.9\.4/);
    expect(info).to.match(/node count: 1/);
    const stat = tool('hsstat.py', ['/home/tools.h5']);
    expect(stat).to.match(/domain: \/home\/tools\.h5/);
    expect(stat).to.match(/num objects:\s+4/); // root, a, a/b, a/data
    expect(stat).to.match(/num chunks:\s+4/);
    expect(stat).to.match(/md5 sum:\s+[0-9a-f]{32}/);
    expect(stat).to.match(/allocated_bytes: 400/);
    const fstat = tool('hsstat.py', ['/home/']);
    expect(fstat).to.match(/folder: \/home\//);
  });
});
