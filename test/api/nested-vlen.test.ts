/**
 * Values of vlen sequences whose base is itself variable-length (issue #25): a vlen of compounds
 * with vlen fields (h5pyd's test_nested_compound_vlen), of compounds with vlen strings, of vlen
 * strings, of vlen sequences. Read and written as JSON on every value route (datasets, points,
 * selections, attributes, getobjs), checked against what libhdf5 wrote and reads: h5py for the
 * kinds Debian's h5py 3.7 handles (vlen of vlen strings and of vlen int32; it crashes on a vlen
 * of compounds with vlen fields, its own test_nested_compound_vlen), a small C program of
 * libhdf5 (test/tools/nested_vlen.c) for the compounds, and h5dump. The REST API has no binary
 * form for these types: binary bodies are 415 and base64 values 400, with nothing written, and
 * binary reads answer JSON, which both h5pyd lines read.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { expectError } from '../helpers/apiExtra.js';
import { h5pydPython, haveClient, missingClient } from '../helpers/clients.js';
import { h5dump, python, pythonJson } from '../helpers/python.js';
import { Client, REPO, type TestServer, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';
import { expectUnchangedBy } from '../helpers/unchanged.js';

const I32 = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' };
const I64 = { class: 'H5T_INTEGER', base: 'H5T_STD_I64LE' };
const VSTR = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' };
const vlen = (base: unknown) => ({ class: 'H5T_VLEN', base });
const compound = (fields: [string, unknown][]) => ({ class: 'H5T_COMPOUND', fields: fields.map(([name, type]) => ({ name, type })) });
/** The C program's "ints" type: {f1: vlen of {a: vlen int32, b: vlen int32}, f2: int64}. */
const INTS = compound([['f1', vlen(compound([['a', vlen(I32)], ['b', vlen(I32)]]))], ['f2', I64]]);
/** The C program's "strs" type: {f: vlen of {a: vlen string, b: vlen string}}. */
const STRS = compound([['f', vlen(compound([['a', VSTR], ['b', VSTR]]))]]);
/** What the C program writes. */
const C_INTS = [[[[[1, 2], [6, 7, 8]], [[10, 11, 12, 13], [16, 17, 18, 19, 20]]], 2], [[], 3], [[[[], [-7]]], -4]];
const C_STRS = [[[['apples', 'bananas'], ['peaches', '']]], [[['été', '"q"']]]];

/** Python: h5py's values as plain lists (bytes decoded, object arrays of arrays unpacked). */
const PLAIN = `def plain(x):
    if isinstance(x, bytes): return x.decode()
    if hasattr(x, 'tolist') and not isinstance(x, (int, float)): x = list(x) if getattr(x, 'dtype', None) is not None and x.dtype == object else x.tolist()
    return [plain(e) for e in x] if isinstance(x, (list, tuple)) else x
`;

/** test/tools/nested_vlen.c built against Debian's libhdf5 (gcc and libhdf5-dev: .ci/run installs both). */
function buildTool(): string {
  const out = path.join(tempRoot('h5store-nested-vlen-'), 'nested_vlen');
  execFileSync('gcc', ['-O1', '-I/usr/include/hdf5/serial', path.join(REPO, 'test/tools/nested_vlen.c'), '-o', out, '-lhdf5_serial'], { stdio: 'pipe' });
  return out;
}

describe('vlen sequences of variable-length elements (issue #25)', function () {
  this.timeout(120000);
  let srv: TestServer;
  let tool: string;
  let c: Client;
  /** libhdf5's own reading of dataset `name` of a file ("ints" or "strs"). */
  const cRead = (file: string, name: string) => JSON.parse(execFileSync(tool, ['read', file, name], { encoding: 'utf8', env: { ...process.env, HDF5_USE_FILE_LOCKING: 'FALSE' } }));
  const idOf = async (cl: Client, name: string) => {
    const r = await cl.get(`/groups/${(await cl.get('/')).json.root}/links/${name}`);
    expect(r.status, r.text).to.equal(200);
    return r.json.link.id as string;
  };

  before(async () => {
    tool = buildTool();
    const root = tempRoot();
    execFileSync(tool, ['write', path.join(root, 'c.h5')]);
    // h5py 3.7 writes vlens of vlen strings and of vlen int32 (and crashes on the compound kinds)
    python(
      `import h5py, numpy as np, sys
vs = h5py.string_dtype()
vi = h5py.vlen_dtype(np.int32)
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('vvs', (3,), dtype=h5py.vlen_dtype(vs))
    d[0] = np.array(['apples', 'bananas', '', 'été'], dtype=object)
    d[2] = np.array(['x'], dtype=object)
    d = f.create_dataset('vvi', (2, 2), dtype=h5py.vlen_dtype(vi))
    x = np.empty(3, dtype=object); x[0] = np.array([1, 2], np.int32); x[1] = np.array([], np.int32); x[2] = np.array([-5], np.int32)
    d[0, 1] = x
    a = np.empty(2, dtype=object); a[0] = np.array(['p', 'q'], dtype=object); a[1] = np.array([], dtype=object)
    f.attrs.create('vvs_attr', a, dtype=h5py.vlen_dtype(vs))`,
      [path.join(root, 'py.h5')],
    );
    srv = await startServer({ root });
    c = new Client(srv.url, '/c.h5');
  });
  after(async () => srv?.stop());

  it('reads what libhdf5 wrote: vlens of compounds with vlen fields and with vlen strings, dataset and attribute, whole and selected', async () => {
    expect(cRead(path.join(srv.root, 'c.h5'), 'ints')).to.deep.equal(C_INTS);
    expect(cRead(path.join(srv.root, 'c.h5'), 'strs')).to.deep.equal(C_STRS);
    const ints = await idOf(c, 'ints');
    const strs = await idOf(c, 'strs');
    expect((await c.get(`/datasets/${ints}`)).json.type).to.deep.equal(INTS);
    expect((await c.get(`/datasets/${ints}/value`)).json.value).to.deep.equal(C_INTS);
    expect((await c.get(`/datasets/${strs}/value`)).json.value).to.deep.equal(C_STRS);
    expect((await c.get(`/datasets/${ints}/value`, { select: '[1:3]' })).json.value).to.deep.equal(C_INTS.slice(1));
    expect((await c.get(`/datasets/${ints}/value`, { select: '[[2,0,2]]' })).json.value).to.deep.equal([C_INTS[2], C_INTS[0], C_INTS[2]]);
    expect((await c.post(`/datasets/${ints}/value`, { points: [2, 0] })).json.value).to.deep.equal([C_INTS[2], C_INTS[0]]);
    expect((await c.get(`/datasets/${ints}/value`, { fields: 'f2' })).json.value).to.deep.equal([[2], [3], [-4]]);
    const root = (await c.get('/')).json.root;
    expect((await c.get(`/groups/${root}/attributes/ints_attr`)).json.value).to.deep.equal(C_INTS[0]);
    expect((await c.get(`/groups/${root}/attributes/ints_attr/value`)).json.value).to.deep.equal(C_INTS[0]);
    // getobjs: the small datasets come with their values (h5pyd 1.0 reads them from there)
    const objs = (await c.get('/', { getobjs: 1 })).json.domain_objs;
    expect(objs[ints].value).to.deep.equal(C_INTS);
    expect(objs[strs].value).to.deep.equal(C_STRS);
  });

  it('reads what h5py wrote: vlens of vlen strings and of vlen int32, as h5py reads them', async () => {
    const py = new Client(srv.url, '/py.h5');
    const want = pythonJson(
      `import h5py, json, sys
${PLAIN}with h5py.File(sys.argv[1], 'r') as f:
    print(json.dumps({'vvs': plain(f['vvs'][...]), 'vvi': [plain(r) for r in f['vvi'][...]], 'attr': plain(f.attrs['vvs_attr'])}))`,
      [path.join(srv.root, 'py.h5')],
      { lockFree: true },
    );
    expect(want.vvs).to.deep.equal([['apples', 'bananas', '', 'été'], [], ['x']]);
    expect(want.vvi[0][1]).to.deep.equal([[1, 2], [], [-5]]);
    expect((await py.get(`/datasets/${await idOf(py, 'vvs')}/value`)).json.value).to.deep.equal(want.vvs);
    expect((await py.get(`/datasets/${await idOf(py, 'vvi')}/value`)).json.value).to.deep.equal(want.vvi);
    const root = (await py.get('/')).json.root;
    expect((await py.get(`/groups/${root}/attributes/vvs_attr/value`)).json.value).to.deep.equal(want.attr);
  });

  it('writes as JSON (PUT values, a selection, points, POST /datasets value, attributes one and bulk): libhdf5, h5py and h5dump read what was written', async () => {
    const w = new Client(srv.url, '/written.h5');
    expect((await w.put('/')).status).to.equal(201);
    const root = (await w.get('/')).json.root;
    const make = async (name: string, type: unknown, shape: number[], value?: unknown) => {
      const r = await w.post('/datasets', { type, shape, link: { id: root, name }, ...(value === undefined ? {} : { value }) });
      expect(r.status, r.text).to.equal(201);
      return r.json.id as string;
    };
    const ints = await make('ints', INTS, [3]);
    expect((await w.put(`/datasets/${ints}/value`, { value: C_INTS })).status).to.equal(200);
    // a selection and points change parts of it
    expect((await w.put(`/datasets/${ints}/value`, { value: [[[[[9], []]], 5]] }, { select: '[1:2]' })).status).to.equal(200);
    expect((await w.put(`/datasets/${ints}/value`, { points: [0], value: [[[], 6]] })).status).to.equal(200);
    const wantInts = [[[], 6], [[[[9], []]], 5], C_INTS[2]];
    expect((await w.get(`/datasets/${ints}/value`)).json.value).to.deep.equal(wantInts);
    const strs = await make('strs', STRS, [2], C_STRS);
    expect((await w.get(`/datasets/${strs}/value`)).json.value).to.deep.equal(C_STRS);
    const vvs = await make('vvs', vlen(VSTR), [2]);
    expect((await w.put(`/datasets/${vvs}/value`, { value: [['a', '', 'ü'], []] })).status).to.equal(200);
    await make('vvi', vlen(vlen(I32)), [2], [[[1], [], [2, 3]], [[]]]);
    expect((await w.put(`/groups/${root}/attributes/ints_attr`, { type: INTS, shape: [], value: C_INTS[0] })).status).to.equal(201);
    const bulk = await w.put(`/groups/${root}/attributes`, { attributes: { strs_attr: { type: STRS, shape: [1], value: [C_STRS[1]] }, vvs_attr: { type: vlen(VSTR), shape: [], value: ['z', ''] } } });
    expect(bulk.status, bulk.text).to.equal(201);
    expect((await w.put(`/groups/${root}/attributes/vvs_attr/value`, { value: ['y'] })).status).to.equal(200);
    const file = path.join(srv.root, 'written.h5');
    await untilServerClosed(srv, file); // the server lets the file go
    expect(cRead(file, 'ints')).to.deep.equal(wantInts);
    expect(cRead(file, 'strs')).to.deep.equal(C_STRS);
    const py = pythonJson(
      `import h5py, json, sys
${PLAIN}with h5py.File(sys.argv[1], 'r') as f:
    print(json.dumps([plain(f['vvs'][...]), plain(f['vvi'][...]), plain(f.attrs['vvs_attr'])]))`,
      [file],
      { lockFree: true },
    );
    expect(py).to.deep.equal([[['a', '', 'ü'], []], [[[1], [], [2, 3]], [[]]], ['y']]);
    // libhdf5's own tool reads the whole file, the attribute as written
    expect(h5dump(file).replace(/\s+/g, '')).to.include('DATA{(0):{({(1,2),(6,7,8)},{(10,11,12,13),(16,17,18,19,20)}),2}}');
  });

  it('the binary form is undefined: binary bodies 415, base64 values 400, nothing written; binary reads answer JSON', async () => {
    const ints = await idOf(c, 'ints');
    const strs = await idOf(c, 'strs');
    const root = (await c.get('/')).json.root;
    const file = path.join(srv.root, 'c.h5');
    await expectUnchangedBy(file, async () => {
      // what h5pyd 0.24 and 1.0 send for such a value: a count, then numpy's object pointers
      const pointers = Buffer.from('20000000b0fa6beb907f0000f0fc6beb907f0000b0fd6beb907f000010fe6beb907f00000200000000000000', 'hex');
      for (const raw of [pointers, Buffer.alloc(0), Buffer.from('00000000000000000000000000000000000000000000000000000000', 'hex')]) {
        const r = await c.request('PUT', `/datasets/${ints}/value`, { raw, headers: { 'Content-Type': 'application/octet-stream' } });
        expectError(r, 415, 'binary body');
        expect(r.json.message).to.match(/no binary form.*send the value as JSON/);
      }
      expectError(await c.request('PUT', `/datasets/${strs}/value`, { raw: Buffer.alloc(8), headers: { 'Content-Type': 'application/octet-stream' }, query: { select: '[0:1]' } }), 415);
      expectError(await c.put(`/datasets/${ints}/value`, { value_base64: 'AAAAAA==' }), 400, 'value_base64');
      const ar = await c.request('PUT', `/groups/${root}/attributes/ints_attr/value`, { raw: Buffer.alloc(28), headers: { 'Content-Type': 'application/octet-stream' } });
      expectError(ar, 415, 'attribute binary body');
      expectError(await c.put(`/groups/${root}/attributes/ints_attr/value`, { value: 'AAAA', encoding: 'base64' }), 400, 'attribute base64');
      expectError(await c.put(`/groups/${root}/attributes/b64`, { type: INTS, shape: [], value: 'AAAA', encoding: 'base64' }), 400, 'new attribute base64');
      expectError(await c.post('/datasets', { type: INTS, shape: [1], creationProperties: { fillValue: 'AAAA', fillValue_encoding: 'base64' } }), 400, 'fill value base64');
    });
    // binary asked: the JSON answer (Content-Type says so), as HSDS answers vlen attribute values
    const bin = { Accept: 'application/octet-stream' };
    for (const [r, want] of [
      [await c.get(`/datasets/${ints}/value`, undefined, bin), C_INTS],
      [await c.get(`/datasets/${strs}/value`, { select: '[1:2]' }, bin), C_STRS.slice(1)],
      [await c.request('POST', `/datasets/${ints}/value`, { raw: Buffer.from('0200000000000000', 'hex'), headers: { ...bin, 'Content-Type': 'application/octet-stream' } }), [C_INTS[2]]],
      [await c.get(`/groups/${root}/attributes/ints_attr/value`, undefined, bin), C_INTS[0]],
    ] as const) {
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^application\/json/);
      expect(r.json.value).to.deep.equal(want);
    }
    // base64 asked of an attribute: its JSON value (base64 is of the binary form)
    const a = (await c.get(`/groups/${root}/attributes/ints_attr`, { encoding: 'base64' })).json;
    expect(a.value).to.deep.equal(C_INTS[0]);
    expect(a).to.not.have.property('encoding');
  });

  it('bad JSON values are 400 naming the problem, nothing written', async () => {
    const ints = await idOf(c, 'ints');
    await expectUnchangedBy(path.join(srv.root, 'c.h5'), async () => {
      for (const [value, what] of [
        [[[[[[1], [2]]], 1], [[], 2], [5, 3]], 'expected a list'],
        [[[[[[1], 'x']], 1], [[], 2], [[], 3]], 'expected a list'],
        [[[[[[1.5], []]], 1], [[], 2], [[], 3]], 'not an integer'],
        [[[[[[1]]], 1], [[], 2], [[], 3]], '2 field values'],
        [[[[], 1], [[], 2]], ''],
      ] as const) {
        const r = await c.put(`/datasets/${ints}/value`, { value });
        expectError(r, 400, JSON.stringify(value));
        expect(r.json.message).to.include(what);
      }
    });
  });

  it('h5pyd 0.24 reads them (binary asked, JSON answered) and writes a nested attribute; h5pyd 1.0 reads a vlen of vlen strings', async function () {
    for (const line of ['0.24', '1.0'] as const) if (!haveClient(line)) return void console.log(`      ${missingClient(line)}`);
    const old = h5pydPython('0.24', srv.url).json(
      `import h5pyd, json, numpy as np
def plain(x):
    if isinstance(x, bytes): return x.decode()
    if isinstance(x, np.ndarray): x = list(x)
    if isinstance(x, (list, tuple, np.void)): return [plain(e) for e in x]
    return x.item() if isinstance(x, np.generic) else x
with h5pyd.File('/c.h5', 'r') as f:
    a = [plain(r) for r in f['ints'][...]]
    b = [plain(r) for r in f['strs'][...]]
    at = plain(f.attrs['ints_attr'])
with h5pyd.File('/py.h5', 'r') as f:
    v = plain(f['vvs'][...])
with h5pyd.File('/h5pyd.h5', 'w') as f:
    dt_inner = np.dtype([('a', h5pyd.vlen_dtype(np.int32)), ('b', h5pyd.vlen_dtype(np.int32))])
    dt = np.dtype([('f1', h5pyd.vlen_dtype(dt_inner)), ('f2', np.int64)])
    inner = (np.array([1, 2], dtype=np.int32), np.array([6, 7, 8], dtype=np.int32))
    f.attrs['nested'] = np.array((np.array([inner], dtype=dt_inner), 2), dtype=dt)[()]
print(json.dumps([a, b, at, v]))`,
    );
    expect(old).to.deep.equal([C_INTS, C_STRS, C_INTS[0], [['apples', 'bananas', '', 'été'], [], ['x']]]);
    const h = new Client(srv.url, '/h5pyd.h5');
    expect((await h.get(`/groups/${(await h.get('/')).json.root}/attributes/nested/value`)).json.value).to.deep.equal([[[[1, 2], [6, 7, 8]]], 2]);
    const now = h5pydPython('1.0', srv.url).json(
      `import h5pyd, json
with h5pyd.File('/py.h5', 'r') as f:
    print(json.dumps([[str(s) for s in r] for r in f['vvs'][...]]))`,
    );
    expect(now).to.deep.equal([['apples', 'bananas', '', 'été'], [], ['x']]);
  });
});
