/**
 * Region references (`H5T_STD_REF_DSETREG`, issue #12 item 10): values read and written in
 * hdf5-json's form, one object per element, `{"id", "select_type", "selection"}` with points as
 * coordinates and hyperslab blocks as hdf5-json's corners (the first element and one past the
 * last, as the hdf5-json corpus has them: issue #25), `H5S_SEL_ALL` and
 * `H5S_SEL_NONE` without a selection, JSON `null` for a null reference. Checked against a file
 * h5py writes (`dset.regionref[...]` in datasets, attributes and a compound) and, for writes,
 * against what h5py selects with the references the server stored. Binary form: per element a
 * 4-byte LE byte count and the JSON text (0 for null), documented in docs/architecture.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { python, pythonJson } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { bytes, expectStatus, getBinary, putBinary } from '../helpers/writekit.js';

const REGREF = { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_DSETREG' };

/** What h5py selects with each region reference of a dataset or attribute (null for null refs). */
function h5pySelects(file: string, where: string): unknown {
  return pythonJson(
    `import h5py, json, sys
with h5py.File(sys.argv[1], 'r', locking=False) as f:
    obj, _, attr = sys.argv[2].partition('@')
    refs = f[obj].attrs[attr] if attr else f[obj][...]
    out = []
    for r in refs.flat:
        if not r:
            out.append(None)
            continue
        target = f[r]
        sel = h5py.h5r.get_region(r, target.id)
        out.append({'target': target.name, 'type': int(sel.get_select_type()),
                    'points': sel.get_select_elem_pointlist().tolist() if sel.get_select_type() == 1 else None,
                    'blocks': sel.get_select_hyper_blocklist().tolist() if sel.get_select_type() == 2 else None,
                    'count': int(sel.get_select_npoints())})
    print(json.dumps(out))`,
    [file, where],
    { lockFree: true },
  );
}

describe('region references (issue #12 item 10)', function () {
  this.timeout(120000);
  let srv: TestServer;
  let c: Client;
  let root: string;
  let data: string;
  let file: string;

  before(async () => {
    const dataRoot = tempRoot();
    fs.mkdirSync(path.join(dataRoot, 'rr'));
    file = path.join(dataRoot, 'rr', 'h5py.h5');
    python(
      `import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('data', data=np.arange(48).reshape(3, 16))
    r = f.create_dataset('refs', (5,), dtype=h5py.regionref_dtype)
    r[0] = d.regionref[0:2, 1:4]
    r[1] = d.regionref[:, 3]
    sel = np.zeros((3, 16), bool); sel[0, 1] = True; sel[2, 11] = True
    r[2] = d.regionref[sel]
    r[3] = d.regionref[0:3:2, 0:16:8]
    f.attrs.create('ra', [d.regionref[1:3, 0:2], d.regionref[...]], dtype=h5py.regionref_dtype)
    ct = np.dtype([('n', 'i4'), ('r', h5py.regionref_dtype)])
    c = f.create_dataset('cmp', (1,), dtype=ct)
    c[0] = (7, d.regionref[2, 5:7])
`,
      [file],
    );
    srv = await startServer({ root: dataRoot });
    c = new Client(srv.url, '/rr/h5py.h5');
    root = (await c.get('/')).json.root;
    data = (await c.get(`/groups/${root}/links/data`)).json.link.id;
  });
  after(async () => srv?.stop());

  const linkId = async (name: string) => (await c.get(`/groups/${root}/links/${name}`)).json.link.id;

  it("reads h5py's region references in a dataset: hyperslab blocks (end corner one past the last element), points, null", async () => {
    const r = await c.get(`/datasets/${await linkId('refs')}/value`);
    expectStatus(r, 200, 'GET value');
    expect(r.json.value).to.deep.equal([
      { id: data, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 1], [2, 4]]] },
      { id: data, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 3], [3, 4]]] },
      { id: data, select_type: 'H5S_SEL_POINTS', selection: [[0, 1], [2, 11]] },
      { id: data, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [1, 1]], [[0, 8], [1, 9]], [[2, 0], [3, 1]], [[2, 8], [3, 9]]] },
      null,
    ]);
    // the same selections h5py reads back
    const py = h5pySelects(file, '/refs') as any[];
    expect(py[0].blocks).to.deep.equal([[[0, 1], [1, 3]]]);
    expect(py[2].points).to.deep.equal([[0, 1], [2, 11]]);
    expect(py[4]).to.equal(null);
  });

  it('reads them in attributes (H5S_SEL_ALL too) and inside compounds', async () => {
    const a = await c.get(`/groups/${root}/attributes/ra`);
    expect(a.json.type).to.deep.equal(REGREF);
    expect(a.json.value).to.deep.equal([
      { id: data, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[1, 0], [3, 2]]] },
      { id: data, select_type: 'H5S_SEL_ALL' },
    ]);
    const v = await c.get(`/datasets/${await linkId('cmp')}/value`);
    expect(v.json.value).to.deep.equal([[7, { id: data, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[2, 5], [3, 7]]] }]]);
  });

  it('binary: a byte count and the JSON text per element (0 for null)', async () => {
    const b = await getBinary(c, `/datasets/${await linkId('refs')}/value`, { select: '[2:5]' });
    expectStatus(b, 200, 'binary');
    const first = JSON.stringify({ id: data, select_type: 'H5S_SEL_POINTS', selection: [[0, 1], [2, 11]] });
    expect(b.body.subarray(0, 4 + Buffer.byteLength(first)).equals(bytes.vlen(first))).to.equal(true);
    expect(b.body.subarray(b.body.length - 4).equals(bytes.i32le(0))).to.equal(true);
  });

  describe('writes', () => {
    let w: Client;
    let wfile: string;
    let target: string;
    let refs: string;
    const vals = () => [
      { id: target, select_type: 'H5S_SEL_POINTS', selection: [[0, 1], [2, 11]] },
      { id: target, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [2, 4]], [[2, 5], [3, 7]]] },
      { id: `datasets/${target}`, select_type: 'H5S_SEL_ALL' },
      { id: target, select_type: 'H5S_SEL_NONE' },
      null,
    ];

    before(async () => {
      w = c.with('/rr/written.h5');
      expectStatus(await w.put('/'), 201, 'PUT /');
      const wroot = (await w.get('/')).json.root;
      wfile = path.join(srv.root, 'rr', 'written.h5');
      target = (await w.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3, 16], link: { id: wroot, name: 'data' } })).json.id;
      refs = (await w.post('/datasets', { type: REGREF, shape: [5], link: { id: wroot, name: 'refs' } })).json.id;
    });

    it('JSON values are stored as libhdf5 region references that h5py selects with', async () => {
      expectStatus(await w.put(`/datasets/${refs}/value`, { value: vals() }), 200, 'PUT value');
      const back = (await w.get(`/datasets/${refs}/value`)).json.value;
      const want = vals();
      (want[2] as { id: string }).id = target;
      expect(back).to.deep.equal(want);
      const py = h5pySelects(wfile, '/refs') as any[];
      expect(py.map((x) => x && x.target)).to.deep.equal(['/data', '/data', '/data', '/data', null]);
      expect(py[0]).to.include({ type: 1, count: 2 });
      expect(py[0].points).to.deep.equal([[0, 1], [2, 11]]);
      expect(py[1]).to.include({ type: 2, count: 10 });
      expect(py[1].blocks).to.deep.equal([[[0, 0], [1, 3]], [[2, 5], [2, 6]]]);
      expect(py[2]).to.include({ type: 3, count: 48 });
      expect(py[3]).to.include({ type: 0, count: 0 });
      expect(py[4]).to.equal(null);
    });

    it('attributes, and binary writes in the same form', async () => {
      const wroot = (await w.get('/')).json.root;
      expectStatus(await w.put(`/groups/${wroot}/attributes/ra`, { type: REGREF, shape: [2], value: vals().slice(0, 2) }), 201, 'PUT attribute');
      expect((await w.get(`/groups/${wroot}/attributes/ra`)).json.value).to.deep.equal(vals().slice(0, 2));
      expect((h5pySelects(wfile, '/@ra') as any[])[0].points).to.deep.equal([[0, 1], [2, 11]]);
      const one = JSON.stringify({ id: target, select_type: 'H5S_SEL_POINTS', selection: [[1, 1]] });
      expectStatus(await putBinary(w, `/datasets/${refs}/value`, bytes.cat(bytes.vlen(one), bytes.i32le(0)), { select: '[3:5]' }), 200, 'binary PUT');
      const back = (await w.get(`/datasets/${refs}/value`, { select: '[3:5]' })).json.value;
      expect(back).to.deep.equal([{ id: target, select_type: 'H5S_SEL_POINTS', selection: [[1, 1]] }, null]);
    });

    it('bad references are a 400 (or 404 for an unknown dataset) and change nothing', async () => {
      const before = (await w.get(`/datasets/${refs}/value`)).json.value;
      const wroot = (await w.get('/')).json.root;
      const unknown = target.slice(0, -6) + 'fff000';
      const bad: [unknown, number][] = [
        [{ id: target, select_type: 'H5S_SEL_POINTS', selection: [[3, 0]] }, 400],
        [{ id: target, select_type: 'H5S_SEL_POINTS', selection: [[0]] }, 400],
        [{ id: target, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [1, 17]]] }, 400],
        [{ id: target, select_type: 'H5S_SEL_HYPERSLABS', selection: [[[0, 0], [0, 3]]] }, 400],
        [{ id: wroot, select_type: 'H5S_SEL_ALL' }, 400],
        [{ id: unknown, select_type: 'H5S_SEL_ALL' }, 404],
        [{ id: target, select_type: 'H5S_SEL_BOGUS' }, 400],
        ['datasets/' + target, 400],
      ];
      for (const [v, status] of bad) {
        const r = await w.put(`/datasets/${refs}/value`, { value: [v, null, null, null, null] });
        expectStatus(r, status, JSON.stringify(v));
      }
      expect((await w.get(`/datasets/${refs}/value`)).json.value).to.deep.equal(before);
    });
  });
});
