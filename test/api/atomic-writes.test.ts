/**
 * Multi-step writes are all or nothing (issue 7 item 4): every write that takes several libhdf5
 * steps (append = grow, then write; resize; bulk links; bulk attributes; attribute replace;
 * creating an object at a new path with intermediate groups) is fed a bad *last* step, and
 * answers 4xx with a message while the file stays exactly as it was: h5py's complete view of the
 * file (every object, type, shape, layout, attribute and value) and the full h5dump output are
 * the same before and after. A domain created by the server and a file h5py wrote in the
 * original format (version 1 object headers, where attributes hold 64 KiB at most) are used.
 */
import path from 'node:path';
import { expect } from 'chai';
import { python } from '../helpers/python.js';
import { Client, type Reply, untilServerClosed } from '../helpers/server.js';
import { expectSameContent, markFile } from '../helpers/unchanged.js';
import { type Dom, type Kit, bytes, expectStatus, inspect, makeDataset, newDomain, putBinary, releaseKit, sharedKit } from '../helpers/writekit.js';
import { I32, VSTR } from '../helpers/types.js';

const HUGE_TYPE = { class: 'H5T_COMPOUND', fields: [{ name: 'x'.repeat(70000), type: I32 }] };

interface Fx {
  d: Dom;
  /** A file h5py wrote in the original format (libver earliest). */
  old: { c: Client; file: string; root: string; group: string };
  ids: Record<string, string>;
}

interface Case {
  name: string;
  run: (fx: Fx) => Promise<Reply>;
  status: number;
  msg?: RegExp;
  /** Which file the case must leave unchanged. */
  file?: 'new' | 'old';
}

const cases: Case[] = [
  // append: grow, then write
  { name: 'append 1000 with a 4-byte body (fixed size)', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.unl}/value`, bytes.i32le(1), { append: 1000 }), status: 400, msg: /4 bytes/ },
  { name: 'append 1000 with a 4-byte body (variable-length strings)', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.vext}/value`, Buffer.from('abcd'), { append: 1000 }), status: 400, msg: /too short/ },
  { name: 'append 1 with a variable-length body that ends early', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.vext}/value`, bytes.cat(bytes.vlen('ab').subarray(0, 5)), { append: 1 }), status: 400 },
  { name: 'append 3 with a variable-length body of 2 elements', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.vext}/value`, bytes.cat(bytes.vlen('a'), bytes.vlen('b')), { append: 3 }), status: 400 },
  { name: 'append 99999999999 (fixed size)', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.unl}/value`, bytes.i32le(1), { append: 99999999999 }), status: 413, msg: /max_dataset_size|max_selection_size/ },
  { name: 'append 99999999999 (variable-length strings)', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.vext}/value`, Buffer.from('abcd'), { append: 99999999999 }), status: 413 },
  { name: 'append 99999999999 with a JSON value', run: ({ d, ids }) => d.c.put(`/datasets/${ids.unl}/value`, { value: [1] }, { append: 99999999999 }), status: 413 },
  { name: 'append 3 with a JSON value of 2 elements', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/value`, { value: [1, 2] }, { append: 3 }), status: 400 },
  { name: 'append 3 with a JSON value of the wrong type', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/value`, { value: [1, 2, 'x'] }, { append: 3 }), status: 400 },
  { name: 'append past maxdims', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/value`, { value: Array(100).fill(1) }, { append: 100 }), status: 409 },
  // resize
  { name: 'extend to a dataset past max_dataset_size', run: ({ d, ids }) => d.c.put(`/datasets/${ids.unl}/shape`, { extend: 2 ** 50 }), status: 413, msg: /max_dataset_size/ },
  { name: 'resize past maxdims', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/shape`, { shape: [50] }), status: 409 },
  // bulk links
  {
    name: 'bulk links whose last one exists with another target',
    run: ({ d, ids }) => d.c.put(`/groups/${d.root}/links`, { links: { n1: { id: ids.ext }, n2: { h5path: '/x' }, ext: { h5path: '/elsewhere' } } }),
    status: 409,
  },
  {
    name: 'bulk links whose last one targets an unknown id',
    run: ({ d, ids }) => d.c.put(`/groups/${d.root}/links`, { links: { n1: { id: ids.ext }, n2: { id: 'd-00000000-00000000-0000-000000-000999' } } }),
    status: 404, // a well-formed id naming nothing (wire-reference 2.2: hard-link target does not exist)
  },
  { name: 'bulk links whose last name has a slash', run: ({ d }) => d.c.put(`/groups/${d.root}/links`, { links: { n1: { h5path: '/x' }, 'a/b': { h5path: '/y' } } }), status: 400, msg: /\// },
  { name: 'bulk links whose last name is empty', run: ({ d }) => d.c.put(`/groups/${d.root}/links`, { links: { n1: { h5path: '/x' }, '': { h5path: '/y' } } }), status: 400 },
  { name: 'bulk links whose last one is the reserved name', run: ({ d }) => d.c.put(`/groups/${d.root}/links`, { links: { n1: { h5path: '/x' }, __h5store__: { h5path: '/y' } } }), status: 400 },
  { name: 'bulk delete of links whose last one is missing', run: ({ d }) => d.c.delete(`/groups/${d.root}/links`, { titles: 'ext/nope' }), status: 404 },
  // bulk attributes
  {
    name: 'bulk attributes whose last one has an invalid type',
    run: ({ d }) => d.c.put(`/groups/${d.root}/attributes`, { attributes: { a1: { type: I32, value: 1 }, keep: { type: I32, value: 5 }, a3: { type: 'H5T_NOPE' } } }),
    status: 400,
  },
  {
    name: 'bulk attributes whose last one conflicts (replace=0)',
    run: ({ d }) => d.c.request('PUT', `/groups/${d.root}/attributes`, { body: { attributes: { a1: { type: I32, value: 1 }, keep: { type: I32, shape: [2], value: [7, 8] } } }, query: { replace: 0 } }),
    status: 409,
  },
  {
    name: 'bulk attributes whose last one is larger than max_attribute_size',
    run: ({ d }) => d.c.put(`/groups/${d.root}/attributes`, { attributes: { a1: { type: I32, value: 1 }, big: { type: I32, shape: [5000000] } } }),
    status: 413,
    msg: /max_attribute_size/,
  },
  {
    name: 'bulk attributes whose last one has a type too large for a file',
    run: ({ d }) => d.c.put(`/groups/${d.root}/attributes`, { attributes: { a1: { type: I32, value: 1 }, keep: { type: HUGE_TYPE, value: [[1]] } } }),
    status: 400,
    msg: /object header message/,
  },
  {
    name: 'bulk attributes whose last one is over 64 KiB, on an object of the original file format',
    run: ({ old }) => old.c.put(`/groups/${old.group}/attributes`, { attributes: { a1: { type: I32, value: 1 }, keep: { type: I32, shape: [40000] } } }),
    status: 413,
    msg: /64 KiB/,
    file: 'old',
  },
  // attribute replace
  {
    name: 'replacing an attribute with one over 64 KiB, on an object of the original file format',
    run: ({ old }) => old.c.put(`/groups/${old.group}/attributes/keep`, { type: I32, shape: [40000] }),
    status: 413,
    msg: /64 KiB/,
    file: 'old',
  },
  { name: 'replacing an attribute with a type too large for a file', run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/keep`, { type: HUGE_TYPE, value: [[1]] }), status: 400 },
  // new objects at new paths: intermediate groups are created only when the object is
  {
    name: 'POST /datasets at a new path whose creation properties libhdf5 refuses',
    run: ({ d }) =>
      d.c.request('POST', '/datasets', {
        body: { type: I32, shape: [4], h5path: '/p1/p2/ds', creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2] }, filters: [{ class: 'H5Z_FILTER_SZIP', id: 4, pixelsPerBlock: 64 }] } },
        query: { implicit: 1 },
      }),
    status: 400,
  },
  { name: 'POST /datatypes at a new path with a type too large for a file', run: ({ d }) => d.c.request('POST', '/datatypes', { body: { type: HUGE_TYPE, h5path: '/t1/t2/t' }, query: { implicit: 1 } }), status: 400 },
  { name: 'POST /datasets at a new path with a type too large for a file', run: ({ d }) => d.c.request('POST', '/datasets', { body: { type: HUGE_TYPE, shape: [1], h5path: '/q1/ds' }, query: { implicit: 1 } }), status: 400 },
  { name: 'POST /groups at a new path whose last name exists', run: ({ d }) => d.c.request('POST', '/groups', { body: { h5path: '/ext' }, query: { implicit: 1 } }), status: 409 },
];

describe('multi-step writes are all or nothing', function () {
  this.timeout(300000);
  let kit: Kit;
  let fx: Fx;

  before(async () => {
    kit = await sharedKit();
    const d = await newDomain(kit, 'atomic');
    const ids: Record<string, string> = {};
    ids.ext = await makeDataset(d, 'ext', { type: I32, shape: [2], maxdims: [20] });
    expectStatus(await d.c.put(`/datasets/${ids.ext}/value`, { value: [1, 2] }), 200, 'ext');
    ids.vext = await makeDataset(d, 'vext', { type: VSTR, shape: [1], maxdims: [0] });
    expectStatus(await d.c.put(`/datasets/${ids.vext}/value`, { value: ['one'] }), 200, 'vext');
    ids.unl = await makeDataset(d, 'unl', { type: I32, shape: [1], maxdims: [0] });
    expectStatus(await d.c.put(`/groups/${d.root}/attributes/keep`, { type: I32, shape: [2], value: [10, 20] }), 201, 'keep');
    const file = path.join(kit.server.root, 'w', 'old.h5');
    python(
      'import h5py, sys\nwith h5py.File(sys.argv[1], "w", libver="earliest") as f:\n  g = f.create_group("g")\n  g.attrs["keep"] = [1, 2, 3]',
      [file],
    );
    const oc = kit.base.with('/w/old.h5');
    const oroot = (await oc.get('/')).json.root;
    const group = (await oc.get(`/groups/${oroot}/links/g`)).json.link.id;
    fx = { d, ids, old: { c: oc, file, root: oroot, group } };
  });
  after(() => releaseKit(kit));

  for (const c of cases) {
    it(c.name, async () => {
      const file = c.file === 'old' ? fx.old.file : fx.d.file;
      const before = markFile(file);
      const r = await c.run(fx);
      expect(r.status, `status; body: ${r.text.slice(0, 400)}`).to.equal(c.status);
      expect(r.json?.message, 'message').to.be.a('string').and.not.equal('');
      if (c.msg) expect(r.json.message).to.match(c.msg);
      expectSameContent(before, markFile(file));
    });
  }

  it('the same writes without the bad last step work whole', async () => {
    const { d, ids, old } = fx;
    expectStatus(await putBinary(d.c, `/datasets/${ids.ext}/value`, bytes.i32le(3, 4), { append: 2 }), 200, 'append');
    expect((await d.c.get(`/datasets/${ids.ext}/value`)).json.value).to.deep.equal([1, 2, 3, 4]);
    expectStatus(await putBinary(d.c, `/datasets/${ids.vext}/value`, bytes.cat(bytes.vlen('two'), bytes.vlen('three')), { append: 2 }), 200, 'vlen append');
    expect((await d.c.get(`/datasets/${ids.vext}/value`)).json.value).to.deep.equal(['one', 'two', 'three']);
    expectStatus(await d.c.put(`/groups/${d.root}/links`, { links: { n1: { id: ids.ext }, n2: { h5path: '/x' } } }), 201, 'links');
    expectStatus(await d.c.put(`/groups/${d.root}/attributes`, { attributes: { a1: { type: I32, value: 1 }, keep: { type: I32, value: 5 } } }), 201, 'attrs');
    expect((await d.c.get(`/groups/${d.root}/attributes/keep`)).json.value).to.equal(5);
    // a domain created by the server holds attributes larger than 64 KiB (dense storage)
    const big = Array.from({ length: 40000 }, (_, i) => i);
    expectStatus(await d.c.put(`/groups/${d.root}/attributes/big`, { type: I32, shape: [40000], value: big }), 201, 'big attribute');
    expect((await d.c.get(`/groups/${d.root}/attributes/big`)).json.value).to.deep.equal(big);
    expectStatus(await old.c.put(`/groups/${old.group}/attributes/small`, { type: I32, shape: [10] }), 201, 'small attribute, old format');
    await untilServerClosed(kit.server, [d.file, old.file]);
    const py = inspect(d.file);
    expect(py['/'].attrs.items.big.value).to.deep.equal(big);
    expect(py['/ext'].value).to.deep.equal([1, 2, 3, 4]);
  });
});
