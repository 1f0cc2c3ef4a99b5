/**
 * The real h5pyd client (0.24.0, ../shared/clients/h5pyd) against h5store (issue #12 evidence):
 * datasets with every compression the server lists in `compressors`, fancy and point selections,
 * resize, attributes (replace and delete, also on objects that track creation order), the
 * initializer, fill values, chunk statistics, and the command-line tools: `hsload` of a file h5py
 * wrote (several types, compression, attributes, links), `hsget` back and a comparison with h5py
 * (test/tools/h5compare.py: structure, types, values, attributes, filters), `hsdiff`, `hsls -v`.
 * Skipped with a message when ../shared is absent.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseJsonBody } from '../../src/codec/json.js';
import { python } from '../helpers/python.js';
import { REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const H5PYD = path.resolve(REPO, '../shared/clients/h5pyd');
const HAVE_H5PYD = fs.existsSync(path.join(H5PYD, 'h5pyd', '__init__.py'));
const APPS = path.join(H5PYD, 'h5pyd', '_apps');

describe('h5pyd speaks the HDF REST dialect with h5store (issue #12)', function () {
  this.timeout(300_000);
  let srv: TestServer;
  let home: string;
  let scratch: string;

  before(async function () {
    if (!HAVE_H5PYD) {
      console.log('      (skipped: ../shared/clients/h5pyd is not here)');
      this.skip();
    }
    const root = tempRoot('h5store-h5pyd-');
    fs.mkdirSync(path.join(root, 'home'));
    srv = await startServer({ root });
    home = tempRoot('h5store-home-');
    scratch = tempRoot('h5store-scratch-');
  });
  after(async () => srv?.stop());

  const env = () => ({ ...process.env, PYTHONPATH: H5PYD, HS_ENDPOINT: srv.url, HOME: home });
  /** Run a Python command with h5pyd on the path; stdout, or an error showing stdout and stderr. */
  const run = (args: string[]): string => {
    try {
      return execFileSync('/usr/bin/python3', args, { encoding: 'utf8', env: env(), stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
    } catch (e) {
      const x = e as { status?: number; stdout?: string; stderr?: string };
      throw new Error(`python exited with ${x.status}\n${x.stdout ?? ''}\n${(x.stderr ?? '').slice(-3000)}`);
    }
  };
  /** Run Python with h5pyd; the script prints one JSON document (NaN literals allowed). */
  const py = (code: string, args: string[] = []): any => parseJsonBody(run(['-c', code, ...args]));
  /** Run one of h5pyd's tools that exits non-zero to report a finding; stdout either way. */
  const report = (name: string, args: string[]): string => {
    try {
      return run([path.join(APPS, `${name}.py`), '-e', srv.url, ...args]);
    } catch (e) {
      return (e as Error).message;
    }
  };
  /** Run one of h5pyd's command-line tools; returns stdout. */
  const app = (name: string, args: string[]): string => run([path.join(APPS, `${name}.py`), '-e', srv.url, ...args]);

  it('datasets with each compression the server lists, chunked as h5py would, read back by h5pyd and by h5py', () => {
    const out = py(`
import h5pyd, h5py, numpy as np, json
from h5py._hl.filters import guess_chunk
res = {}
with h5pyd.File('/home/compress.h5', 'w') as f:
    comps = list(f.compressors)
    data = np.arange(20000, dtype='f8').reshape(100, 200) % 97
    for c in comps:
        kw = {'compression': c}
        if c == 'szip':
            kw['compression_opts'] = ('nn', 8)  # h5pyd's own szip default is broken (DEFAULT_SZIP is an int)
        d = f.create_dataset('c_' + c, data=data, **kw)
        res[c] = {'compression': d.compression, 'opts': d.compression_opts, 'chunks': list(d.chunks),
                  'same': bool((d[...] == data).all())}
    d = f.create_dataset('gz9', data=data, compression='gzip', compression_opts=9, shuffle=True)
    res['gz9'] = {'compression': d.compression, 'opts': d.compression_opts, 'shuffle': d.shuffle, 'same': bool((d[...] == data).all())}
    if 'lz4' in comps:
        d = f.create_dataset('lz4_7', data=data, compression='lz4', compression_opts=7)
        res['lz4_7'] = {'opts': d.compression_opts}
print(json.dumps({'compressors': comps, 'res': res, 'guess': list(guess_chunk((100, 200), None, 8))}))
`);
    expect(out.compressors).to.include.members(['gzip', 'deflate']);
    for (const c of out.compressors) {
      const r = out.res[c];
      expect(r.same, `${c}: values`).to.equal(true);
      expect(r.chunks, `${c}: chunks`).to.deep.equal(out.guess);
      expect(r.compression, `${c}: compression`).to.equal(c === 'deflate' ? 'gzip' : c);
      if (c === 'gzip' || c === 'deflate') expect(r.opts, c).to.equal(4);
      else if (c !== 'szip') expect(r.opts, `${c}: compression_opts`).to.equal(null);
    }
    expect(out.res.gz9).to.deep.equal({ compression: 'gzip', opts: 9, shuffle: true, same: true });
    if (out.res.lz4_7) expect(out.res.lz4_7.opts).to.equal(7);
    // h5py reads every one of them (its own filters or the system plugins)
    const file = path.join(srv.root, 'home', 'compress.h5');
    const seen = JSON.parse(
      python(
        `import h5py, json, sys, numpy as np
data = np.arange(20000, dtype='f8').reshape(100, 200) % 97
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    print(json.dumps({k: bool((f[k][...] == data).all()) for k in f if k not in ('lz4_7', '__h5store__')}))`,
        [file],
        { lockFree: true },
      ),
    );
    for (const [k, same] of Object.entries(seen)) expect(same, `h5py reads ${k}`).to.equal(true);
  });

  it('fancy and point selections (reads and writes) agree with numpy', () => {
    const out = py(`
import h5pyd, numpy as np, json
a = np.arange(600, dtype='i4').reshape(20, 30)
res = {}
with h5pyd.File('/home/select.h5', 'w') as f:
    d = f.create_dataset('a', data=a)
    cases = {
        'row_list': (5, [1, 3, 7]),
        'rows_cols': ([0, 4, 9], slice(2, 6)),
        'cols': (slice(None), [0, 29]),
        'step_fancy': (slice(1, 19, 3), [2, 5]),
    }
    for k, sel in cases.items():
        res[k] = bool((d[sel] == a[sel]).all()) and d[sel].shape == a[sel].shape
    # a coordinate list whose select= text is over 100 characters goes as POST .../value {"select"}
    big = np.arange(1000, dtype='i8') * 3
    dl = f.create_dataset('long', data=big)
    idx = list(range(0, 1000, 7))
    res['long_fancy'] = bool((dl[idx] == big[idx]).all())
    mask = (a % 37) == 0
    res['mask_read'] = bool((d[mask] == a[mask]).all())   # points (POST .../value, binary uint64)
    # (h5pyd cannot write through a point selection: PointSelection has no getQueryParam)
    b = a.copy()
    d[[2, 4], 1:3] = [[7, 8], [9, 10]]
    b[[2, 4], 1:3] = [[7, 8], [9, 10]]
    res['fancy_write'] = bool((d[...] == b).all())
    t = f.create_dataset('t', data=np.array([(i, i * 0.5) for i in range(10)], dtype=[('n', 'i4'), ('x', 'f8')]))
    res['cmp_points'] = [list(map(float, r)) for r in t[[1, 8]]]
    res['where'] = [int(r['n']) for r in f['t'].read_where('n > 6')]   # a 1-D compound opens as a Table
print(json.dumps(res))
`);
    expect(out).to.deep.equal({
      row_list: true,
      rows_cols: true,
      cols: true,
      step_fancy: true,
      long_fancy: true,
      mask_read: true,
      fancy_write: true,
      cmp_points: [[1, 0.5], [8, 4]],
      where: [7, 8, 9],
    });
  });

  it('file modes w, w-, r, r+, a', () => {
    const out = py(`
import h5pyd, json
res = {}
with h5pyd.File('/home/modes.h5', 'w') as f:
    f.create_group('g')
try:
    h5pyd.File('/home/modes.h5', 'w-')
    res['w-'] = 'opened'
except Exception as e:
    res['w-'] = type(e).__name__
with h5pyd.File('/home/modes.h5', 'r') as f:
    res['r'] = list(f)
    try:
        f.create_group('nope')
        res['r_write'] = 'wrote'
    except Exception as e:
        res['r_write'] = type(e).__name__
with h5pyd.File('/home/modes.h5', 'r+') as f:
    f.create_group('rplus')
with h5pyd.File('/home/modes.h5', 'a') as f:
    f.create_group('app')
    res['a'] = sorted(f)
with h5pyd.File('/home/modes_new.h5', 'a') as f:
    res['a_new'] = list(f)
with h5pyd.File('/home/modes.h5', 'w') as f:
    res['w_again'] = list(f)
print(json.dumps(res))
`);
    expect(out.r).to.deep.equal(['g']);
    expect(out['w-']).to.not.equal('opened');
    expect(out.r_write).to.not.equal('wrote');
    expect(out.a).to.deep.equal(['app', 'g', 'rplus']);
    expect(out.a_new).to.deep.equal([]);
    expect(out.w_again).to.deep.equal([]);
  });

  it('resize: grow and shrink within maxshape (maxshape equal to shape too); grown elements are the fill value', () => {
    const out = py(`
import h5pyd, numpy as np, json
res = {}
with h5pyd.File('/home/resize.h5', 'w') as f:
    d = f.create_dataset('u', data=np.arange(20).reshape(2, 10), maxshape=(None, 10), fillvalue=-1)
    d.resize((5, 10))
    res['grown'] = d[4].tolist()
    d.resize(1, axis=0)
    d.resize(3, axis=0)
    res['regrown'] = d[...].tolist()
    e = f.create_dataset('e', data=np.arange(8), maxshape=(8,))
    res['e_chunks'] = list(e.chunks)
    e.resize((3,))
    res['e_small'] = e[...].tolist()
    e.resize((8,))
    res['e_back'] = e[...].tolist()
    try:
        e.resize((9,))
        res['e_past'] = 'resized'
    except Exception as ex:
        res['e_past'] = type(ex).__name__
    res['maxshape'] = [list(d.maxshape), list(e.maxshape)]
print(json.dumps(res))
`);
    expect(out.grown).to.deep.equal(new Array(10).fill(-1));
    expect(out.regrown).to.deep.equal([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], new Array(10).fill(-1), new Array(10).fill(-1)]);
    expect(out.e_chunks).to.deep.equal([8]);
    expect(out.e_small).to.deep.equal([0, 1, 2]);
    expect(out.e_back).to.deep.equal([0, 1, 2, 0, 0, 0, 0, 0]);
    expect(out.e_past).to.not.equal('resized');
    expect(out.maxshape).to.deep.equal([[null, 10], [8]]);
  });

  it('attributes: create, replace (other type), delete, bulk create, patterns; creation order kept on track_order objects', () => {
    const out = py(`
import h5pyd, numpy as np, json
res = {}
with h5pyd.File('/home/attrs.h5', 'w') as f:
    for label, obj in (('plain', f.create_group('plain')), ('ordered', f.create_group('ordered', track_order=True)),
                       ('dset', f.create_dataset('d', data=[1, 2], track_order=True))):
        obj.attrs['one'] = 1
        obj.attrs['two'] = 2.0
        obj.attrs['three'] = 'x'
        obj.attrs['three'] = 42.0          # replace with another type
        obj.attrs['zero'] = np.zeros(3)
        del obj.attrs['two']
        obj.attrs.create('made', [5, 6], shape=(2,), dtype='i8')
        obj.attrs['made'] = np.array([7, 8], dtype='i8')   # (h5pyd's attrs.modify() is a no-op, "TBD")
        res[label] = {'names': list(obj.attrs), 'three': float(obj.attrs['three']), 'made': obj.attrs['made'].tolist(),
                      'has_two': 'two' in obj.attrs, 'n': len(obj.attrs)}
    g = f['ordered']
    g.attrs.create(['b1', 'b2'], [[1, 2], [3, 4]])   # several at once (PUT .../attributes)
    res['bulk'] = [g.attrs['b1'].tolist(), g.attrs['b2'].tolist()]
    res['pattern'] = sorted(g.attrs.get_attributes(pattern='b*').keys())
    del g.attrs[['b1', 'b2']]
    res['after_bulk_delete'] = list(g.attrs)
with h5pyd.File('/home/attrs.h5', 'r') as f:
    res['reread'] = list(f['ordered'].attrs)
print(json.dumps(res))
`);
    expect(out.plain.names).to.deep.equal(['made', 'one', 'three', 'zero']);
    expect(out.ordered.names).to.deep.equal(['one', 'three', 'zero', 'made']);
    expect(out.dset.names).to.deep.equal(['one', 'three', 'zero', 'made']);
    for (const k of ['plain', 'ordered', 'dset']) expect(out[k]).to.deep.include({ three: 42, made: [7, 8], has_two: false, n: 4 });
    expect(out.bulk).to.deep.equal([[1, 2], [3, 4]]);
    expect(out.pattern).to.deep.equal(['b1', 'b2']);
    expect(out.after_bulk_delete).to.deep.equal(['one', 'three', 'zero', 'made']);
    expect(out.reread).to.deep.equal(['one', 'three', 'zero', 'made']);
    // h5py sees the same (creation order included)
    const file = path.join(srv.root, 'home', 'attrs.h5');
    const seen = JSON.parse(
      python(
        `import h5py, json, sys
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    print(json.dumps([list(f['ordered'].attrs), float(f['ordered'].attrs['three'])]))`,
        [file],
        { lockFree: true },
      ),
    );
    expect(seen).to.deep.equal([['one', 'three', 'zero', 'made'], 42]);
  });

  it('initializer, NaN fill value, and chunk statistics (num_chunks, allocated_size)', () => {
    const out = py(`
import h5pyd, numpy as np, json
res = {}
with h5pyd.File('/home/init.h5', 'w') as f:
    d = f.create_dataset('ar', (40,), dtype='i8', initializer='arange', initializer_opts=['--start=10', '--step=2'])
    res['ar'] = d[:5].tolist()
    n = f.create_dataset('nanfill', (4,), dtype='f4', fillvalue=np.nan)
    res['nan'] = [bool(np.isnan(n.fillvalue)), bool(np.isnan(n[0]))]
    c = f.create_dataset('ch', (100,), dtype='i4', chunks=(10,))
    res['before'] = [c.num_chunks, c.allocated_size]
    c[0:25] = np.arange(25)
    c._verboseUpdated = None
    res['after'] = [c.num_chunks, c.allocated_size]
print(json.dumps(res))
`);
    expect(out.ar).to.deep.equal([10, 12, 14, 16, 18]);
    expect(out.nan).to.deep.equal([true, true]);
    expect(out.before).to.deep.equal([0, 0]);
    expect(out.after).to.deep.equal([3, 120]);
    const ls = app('hsls', ['-v', '/home/init.h5']);
    expect(ls).to.match(/ch Dataset \{100\/100\}[\s\S]*Chunks: \[10\] 40 bytes, 3\/10 allocated chunks/);
  });

  describe('command-line tools on a file h5py wrote', () => {
    let src: string;
    let plain: string;

    before(() => {
      src = path.join(scratch, 'source.h5');
      plain = path.join(scratch, 'plain.h5');
      python(
        `import h5py, numpy as np, sys
def fill(f, full):
    f.attrs['title'] = 'source file'
    f.attrs['version'] = np.int32(3)
    f.attrs['scales'] = np.array([0.5, 1.5], dtype='f4')
    g = f.create_group('g1'); g.attrs['a'] = [1.5, 2.5]
    g2 = g.create_group('g2')
    f.create_dataset('ints', data=np.arange(100, dtype='i4').reshape(10, 10), compression='gzip', compression_opts=6, shuffle=True)
    f.create_dataset('floats', data=np.linspace(0, 1, 50), chunks=(10,), maxshape=(None,))
    f.create_dataset('be', data=np.arange(5, dtype='>i8'))
    f.create_dataset('fstr', data=np.array([b'ab', b'cde'], dtype='S5'))
    f.create_dataset('vstr', data=np.array(['h\\u00e9llo', 'x'], dtype=h5py.string_dtype()))
    ct = np.dtype([('a', 'i4'), ('b', 'f8'), ('c', 'S3')])
    f.create_dataset('cmp', data=np.array([(1, 1.5, b'x'), (2, 2.5, b'yz')], dtype=ct))
    f.create_dataset('scalar', data=42.0)
    f.create_dataset('bools', data=np.array([True, False, True]))
    f.create_dataset('enum', data=np.array([0, 1, 2], dtype='u1'), dtype=h5py.enum_dtype({'R': 0, 'G': 1, 'B': 2}, basetype='u1'))
    f.create_dataset('empty', data=h5py.Empty('f4'))
    f.create_dataset('lzf', data=np.arange(1000), compression='lzf')
    f.create_dataset('filled', shape=(4,), dtype='f8', fillvalue=-2.5)
    g2['ds'] = np.ones((3, 3))
    g2['ds'].attrs['units'] = 'm'
    f['soft'] = h5py.SoftLink('/g1/g2')
    f['hard2'] = f['ints']
    f['dtype'] = np.dtype('f4')
    f.create_dataset('typed', data=np.ones(2, 'f4'), dtype=f['dtype'])
    if full:
        f.create_dataset('vlen', data=np.array([np.array([1, 2]), np.array([3])], dtype=object), dtype=h5py.vlen_dtype('i4'))
        f.create_dataset('refs', data=[f['ints'].ref, f['g1'].ref], dtype=h5py.ref_dtype)
        f['ext'] = h5py.ExternalLink('other.h5', '/x')
with h5py.File(sys.argv[1], 'w') as f:
    fill(f, True)
with h5py.File(sys.argv[2], 'w') as f:
    fill(f, False)
`,
        [src, plain],
      );
    });

    const compare = (a: string, b: string, extra: string[] = []): any[] =>
      JSON.parse(execFileSync('/usr/bin/python3', [path.join(REPO, 'test/tools/h5compare.py'), a, b, ...extra], { encoding: 'utf8' })).differences;

    it('hsload, then hsget back: h5py sees the same structure, types, values, attributes and filters', () => {
      app('hsload', [src, '/home/loaded.h5']);
      const back = path.join(scratch, 'back.h5');
      app('hsget', ['/home/loaded.h5', back]);
      // The server's file itself, and the file hsget wrote, against the source. Layouts differ by
      // design (hsload passes maxshape, so every dataset is chunked, as h5py does); the external
      // link is compared by its target path only (its stored file name is dialect item 4).
      const skip = (d: any) => d.key === 'chunked' || (d.path === '/ext' && d.key === 'file');
      for (const other of [path.join(srv.root, 'home', 'loaded.h5'), back]) {
        const diffs = compare(src, other).filter((d) => !skip(d));
        expect(diffs, `${other}: ${JSON.stringify(diffs, null, 1)}`).to.deep.equal([]);
      }
    });

    it('hsdiff finds no difference (h5py file against the loaded domain)', () => {
      app('hsload', [plain, '/home/plain.h5']);
      const out = app('hsdiff', [plain, '/home/plain.h5']);
      expect(out).to.not.match(/differ|not found|different/);
      // a changed value is found
      py(`
import h5pyd
with h5pyd.File('/home/plain.h5', 'a') as f:
    f['ints'][0, 0] = 999
print(1)`);
      expect(report('hsdiff', [plain, '/home/plain.h5'])).to.match(/values for dataset \/(ints|hard2) differ/);
    });

    it('hsls -r lists the loaded tree', () => {
      const out = app('hsls', ['-r', '/home/loaded.h5']);
      for (const p of ['/g1/g2/ds Dataset {3, 3}', '/cmp Table {2}', '/soft', 'SoftLink {/g1/g2}', '/empty Dataset {NULL}']) expect(out).to.include(p);
    });
  });
});
