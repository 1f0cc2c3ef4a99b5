/**
 * `GET /groups/<id>/links` on files the server opens for the first time (issue #9 target 7): the
 * `collection` and `id` of every hard link come from the target object headers read in bulk
 * (src/store/headerKinds.ts) and must be what libhdf5 and h5py say, for groups, datasets and
 * committed datatypes, version 1 and 2 object headers, compact, dense and symbol-table groups,
 * creation-order groups, user blocks, soft and external links, and every shared fixture; the
 * body keeps the wire shape (wire-reference 2.2) and is canonical JSON.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { hasH5py, python } from '../helpers/python.js';
import { Client, HAVE_SHARED, type TestServer, copyFixtures, startServer, tempRoot } from '../helpers/server.js';

/** h5py: every group's links as {group path: {title: 'groups' | 'datasets' | 'datatypes' | 'soft' | 'external' | 'ud'}}. */
const TRUTH = `
import h5py, json, sys
out = {}
with h5py.File(sys.argv[1], 'r') as f:
    def links(path, g):
        d = {}
        for name in g:
            try: l = g.get(name, getlink=True)
            except TypeError: d[name] = 'ud'; continue
            if isinstance(l, h5py.SoftLink): d[name] = 'soft'
            elif isinstance(l, h5py.ExternalLink): d[name] = 'external'
            else:
                o = g[name]
                d[name] = 'groups' if isinstance(o, h5py.Group) else 'datasets' if isinstance(o, h5py.Dataset) else 'datatypes'
        out[path] = d
    seen = set()
    def walk(path, g):
        links(path, g)
        for name in g:
            try: l = g.get(name, getlink=True)
            except TypeError: continue
            if isinstance(l, h5py.HardLink) and isinstance(g[name], h5py.Group):
                key = h5py.h5o.get_info(g[name].id).addr
                if key in seen: continue
                seen.add(key)
                walk(path.rstrip('/') + '/' + name, g[name])
    walk('/', f)
print(json.dumps(out))
`;

/** Files of every storage kind, written by h5py (libhdf5 1.10). */
const MAKE = `
import h5py, numpy as np, sys, os
out = sys.argv[1]
def fill(f):
    g = f.create_group('g'); f.create_dataset('d', data=np.arange(10)); f.create_group('g/sub')
    f['t'] = np.dtype('<i4')
    f['g/t2'] = f['t']
    d = f.create_dataset('many_attrs', data=1.5)
    for i in range(200): d.attrs['a%03d' % i] = np.arange(i % 7 + 1)
    big = f.create_group('big')
    for i in range(60): big.create_group('x%03d' % i) if i % 3 else big.create_dataset('x%03d' % i, data=i)
    f.create_dataset('empty', shape=(0,), maxshape=(None,), chunks=(4,), dtype='f4')
    ct = f.create_group('ct', track_order=True)
    for i in range(20): ct.create_dataset('c%02d' % (19 - i), data=i)
    f['soft'] = h5py.SoftLink('/g'); f['dangling'] = h5py.SoftLink('/nowhere'); f['ext'] = h5py.ExternalLink('other.h5', '/x')
    f['g/again'] = f['d']
for lv in ['earliest', 'v108', 'latest']:
    with h5py.File(os.path.join(out, 'k_%s.h5' % lv), 'w', libver=(lv, 'latest')) as f: fill(f)
with h5py.File(os.path.join(out, 'k_userblock.h5'), 'w', userblock_size=1024) as f: fill(f)
with h5py.File(os.path.join(out, 'k_userblock_latest.h5'), 'w', userblock_size=4096, libver='latest') as f: fill(f)
with h5py.File(os.path.join(out, 'k_track.h5'), 'w', track_order=True, libver='latest') as f: fill(f)
`;

interface Item {
  title: string;
  class: string;
  id?: string;
  collection?: string;
  href: string;
  target?: string;
}

describe('link listings: target kinds on a file opened for the first time', function () {
  this.timeout(120000);
  let srv: TestServer;
  let root: string;
  const files: string[] = [];

  before(async function () {
    if (!hasH5py()) this.skip();
    root = tempRoot();
    fs.mkdirSync(path.join(root, 'k'));
    python(MAKE, [path.join(root, 'k')]);
    files.push(...fs.readdirSync(path.join(root, 'k')).map((n) => `/k/${n}`));
    if (HAVE_SHARED) files.push(...copyFixtures(root, 'fx').filter((n) => n !== 'notahdf5file.h5').map((n) => `/fx/${n}`));
    srv = await startServer({ root });
  });

  after(async () => {
    await srv?.stop();
  });

  /** Every page of a group's links, `Limit` at a time, as items and raw bodies. */
  async function pages(c: Client, gid: string, limit: number): Promise<{ items: Item[]; bodies: string[] }> {
    const items: Item[] = [];
    const bodies: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const r = await c.get(`/groups/${gid}/links`, { Limit: limit, Marker: marker });
      expect(r.status, r.text).to.equal(200);
      bodies.push(r.text);
      items.push(...r.json.links);
      if (r.json.links.length < limit) return { items, bodies };
      marker = items[items.length - 1]!.title;
    }
  }

  it('every hard link has the collection h5py sees (and the single-link route the same id)', async function () {
    expect(files.length).to.be.greaterThan(5);
    let total = 0;
    for (const domain of files) {
      const truth = JSON.parse(python(TRUTH, [path.join(root, domain)])) as Record<string, Record<string, string>>;
      const c = new Client(srv.url, domain);
      const origin = new URL(srv.url).origin;
      const rootId = (await c.get('/')).json.root as string;
      // walk the groups through the listings themselves (each group's first listing is cold)
      const queue: [string, string][] = [['/', rootId]];
      const seen = new Set<string>([rootId]);
      let checked = 0;
      while (queue.length) {
        const [gpath, gid] = queue.shift()!;
        const want = truth[gpath];
        if (!want) continue; // a second path to a group h5py walked once
        const { items, bodies } = await pages(c, gid, 7);
        expect(items.map((l) => l.title).sort(), `${domain} ${gpath}`).to.deep.equal(Object.keys(want).sort());
        for (const text of bodies) expect(JSON.stringify(JSON.parse(text)), 'canonical JSON').to.equal(text);
        for (const l of items) {
          const kind = want[l.title]!;
          const where = `${domain} ${gpath} ${l.title}`;
          const q = `?domain=${encodeURIComponent(domain).replace(/%2F/g, '/')}`;
          expect(l.href, where).to.equal(`${origin}/groups/${gid}/links/${encodeURIComponent(l.title)}${q}`);
          if (kind === 'soft' || kind === 'external' || kind === 'ud') {
            expect(l.class, where).to.equal({ soft: 'H5L_TYPE_SOFT', external: 'H5L_TYPE_EXTERNAL', ud: 'H5L_TYPE_UDLINK' }[kind]);
            expect(l).to.not.have.property('collection');
            expect(l).to.not.have.property('target');
            continue;
          }
          expect(l.collection, where).to.equal(kind);
          expect(l.target, where).to.equal(`${origin}/${kind}/${l.id}${q}`);
          checked++;
          if (checked % 5 === 1) {
            // the single-link route asks libhdf5 (kindOfAddr): the same answer
            const one = await c.get(`/groups/${gid}/links/${encodeURIComponent(l.title)}`);
            expect(one.json.link.id, where).to.equal(l.id);
            expect(one.json.link.collection, where).to.equal(kind);
          }
          if (kind === 'groups' && !seen.has(l.id!)) {
            seen.add(l.id!);
            queue.push([gpath === '/' ? `/${l.title}` : `${gpath}/${l.title}`, l.id!]);
          }
        }
      }
      total += checked;
    }
    expect(total).to.be.greaterThan(500);
  });

  it('titles that need JSON escaping or percent-encoding: canonical JSON, exact titles and hrefs', async () => {
    const c = new Client(srv.url, '/k/k_v108.h5');
    const origin = new URL(srv.url).origin;
    const rootId = (await c.get('/')).json.root as string;
    const names = ['quote"back\\slash', 'ünïcödé ✓', 'ctl\u0001\u001f', 'x?y#z&w=1', 'tab\there', '😀 astral'];
    const target = (await c.get(`/groups/${rootId}/links/g`)).json.link.id as string;
    const r = await c.put(`/groups/${rootId}/links`, { links: Object.fromEntries(names.map((n, i) => [n, i % 2 ? { h5path: '/g' } : { id: target }])) });
    expect(r.status, r.text).to.equal(201);
    const { items, bodies } = await pages(c, rootId, 5);
    for (const text of bodies) expect(JSON.stringify(JSON.parse(text))).to.equal(text);
    const q = `?domain=${encodeURIComponent('/k/k_v108.h5').replace(/%2F/g, '/')}`;
    for (const [i, n] of names.entries()) {
      const l = items.find((x) => x.title === n);
      expect(l, n).to.not.equal(undefined);
      expect(l!.href).to.equal(`${origin}/groups/${rootId}/links/${encodeURIComponent(n)}${q}`);
      if (i % 2) expect([l!.class, (l as { h5path?: string }).h5path]).to.deep.equal(['H5L_TYPE_SOFT', '/g']);
      else expect([l!.collection, l!.id, l!.target]).to.deep.equal(['groups', target, `${origin}/groups/${target}${q}`]);
    }
  });

  it('after a write through the server, a new listing shows the new objects with their kinds', async () => {
    const c = new Client(srv.url, '/k/k_latest.h5');
    const rootId = (await c.get('/')).json.root as string;
    const g = await c.post('/groups', { link: { id: rootId, name: 'new_group' } });
    expect(g.status, g.text).to.equal(201);
    const d = await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3], link: { id: rootId, name: 'new_dataset' } });
    expect(d.status, d.text).to.equal(201);
    const t = await c.post('/datatypes', { type: 'H5T_IEEE_F64LE', link: { id: rootId, name: 'new_type' } });
    expect(t.status, t.text).to.equal(201);
    const { items } = await pages(c, rootId, 4);
    const by = Object.fromEntries(items.map((l) => [l.title, l]));
    expect([by.new_group?.collection, by.new_group?.id]).to.deep.equal(['groups', g.json.id]);
    expect([by.new_dataset?.collection, by.new_dataset?.id]).to.deep.equal(['datasets', d.json.id]);
    expect([by.new_type?.collection, by.new_type?.id]).to.deep.equal(['datatypes', t.json.id]);
  });
});
