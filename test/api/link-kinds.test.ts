/**
 * `GET /groups/<id>/links` on files the server opens for the first time (issue #9 target 7): the
 * links of symbol table groups are read from the file's bytes, and the `collection` and `id` of
 * every hard link come from the target object headers read in bulk (src/store/session/fileBytes.ts); all
 * must be what libhdf5 and h5py say, for groups, datasets and
 * committed datatypes, version 1 and 2 object headers, compact, dense and symbol-table groups,
 * creation-order groups, user blocks, soft and external links, and every shared fixture; the
 * body keeps the wire shape (wire-reference 2.2) and is canonical JSON.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { hasH5py, python } from '../helpers/python.js';
import { symbolTableLinks } from '../../src/store/session/fileBytes.js';
import { Client, HAVE_SHARED, type TestServer, copyFixtures, startServer, tempRoot } from '../helpers/server.js';

/**
 * h5py: every group's links as {group path: {title: 'groups' | 'datasets' | 'datatypes' | 'soft' |
 * 'external' | 'ud'}}, and the soft links' paths as {group path: {title: path}} under "~soft".
 */
const TRUTH = `
import h5py, json, sys
out = {}
soft = {}
with h5py.File(sys.argv[1], 'r') as f:
    def links(path, g):
        d = {}
        for name in g:
            try: l = g.get(name, getlink=True)
            except TypeError: d[name] = 'ud'; continue
            if isinstance(l, h5py.SoftLink):
                d[name] = 'soft'
                soft.setdefault(path, {})[name] = l.path
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
out['~soft'] = soft
print(json.dumps(out))
`;

/** Names in libhdf5's name order: by the bytes of their UTF-8 (code point order, not UTF-16's). */
const byteOrder = (names: string[]) => [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

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
with h5py.File(os.path.join(out, 'k_wide.h5'), 'w', libver='earliest') as f:
    # a symbol table group of 1,500 links: a B-tree of more than one level
    w = f.create_group('wide')
    for i in range(1500):
        n = 'w%04d' % ((i * 7919) % 1500)
        if i % 100 == 0: w.create_group(n)
        elif i % 7 == 0: w[n] = h5py.SoftLink('/wide/w%04d' % (i % 50))
        else: w.create_dataset(n, data=i)
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
      const softPaths = truth['~soft'] as unknown as Record<string, Record<string, string>>;
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
        // in name order (the listing's order, whatever order h5py iterates in)
        expect(items.map((l) => l.title), `${domain} ${gpath}`).to.deep.equal(byteOrder(Object.keys(want)));
        for (const text of bodies) expect(JSON.stringify(JSON.parse(text)), 'canonical JSON').to.equal(text);
        for (const l of items) {
          const kind = want[l.title]!;
          const where = `${domain} ${gpath} ${l.title}`;
          const q = `?domain=${encodeURIComponent(domain).replace(/%2F/g, '/')}`;
          expect(l.href, where).to.equal(`${origin}/groups/${gid}/links/${encodeURIComponent(l.title)}${q}`);
          if (kind === 'soft' || kind === 'external' || kind === 'ud') {
            expect(l.class, where).to.equal({ soft: 'H5L_TYPE_SOFT', external: 'H5L_TYPE_EXTERNAL', ud: 'H5L_TYPE_UDLINK' }[kind]);
            if (kind === 'soft') expect((l as { h5path?: string }).h5path, where).to.equal(softPaths[gpath]?.[l.title]);
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

  it('symbol table groups read from the file\'s bytes: the links libhdf5 lists, in its order', function () {
    // every group of every file: header address, storage type and links as libhdf5 iterates them
    const GROUPS = `
import h5py, json, sys
out = []
with h5py.File(sys.argv[1], 'r') as f:
    seen = set()
    def walk(g):
        addr = h5py.h5o.get_info(g.id).addr
        if addr in seen: return
        seen.add(addr)
        links = []
        def one(name):
            info = g.id.links.get_info(name)
            if info.type == h5py.h5l.TYPE_HARD:
                t = h5py.h5o.open(g.id, name)
                links.append([name.decode('utf-8'), 'hard', info.u, h5py.h5i.get_type(t) == h5py.h5i.GROUP])
            elif info.type == h5py.h5l.TYPE_SOFT:
                links.append([name.decode('utf-8'), 'soft', g.id.links.get_val(name).decode('utf-8')])
            else:
                links.append([name.decode('utf-8'), 'other'])
        g.id.links.iterate(one)
        # libhdf5's own word (H5Oget_info's header message bitmap): a symbol table message, no link info message
        present = h5py.h5o.get_info(g.id).hdr.mesg.present
        out.append({'addr': addr, 'stab': bool(present & (1 << 0x11)) and not present & (1 << 0x02), 'links': links})
        for l in links:
            if l[1] == 'hard' and l[3]: walk(g[l[0]])
    walk(f['/'])
print(json.dumps(out))
`;
    let stabGroups = 0;
    let stabLinks = 0;
    for (const domain of files) {
      const file = path.join(root, domain);
      const st = fs.statSync(file, { bigint: true });
      const groups = JSON.parse(python(GROUPS, [file])) as { addr: number; stab: boolean; links: [string, string, (number | string)?, boolean?][] }[];
      for (const g of groups) {
        const got = symbolTableLinks(file, st.dev, st.ino, g.addr);
        const where = `${domain} group at ${g.addr}`;
        if (!g.stab) {
          expect(got, where).to.equal(undefined);
          continue;
        }
        expect(got, where).to.not.equal(undefined);
        stabGroups++;
        stabLinks += g.links.length;
        expect(got!.links, where).to.deep.equal(g.links.map(([name, type, v]) => (type === 'hard' ? { name, cls: 'H5L_TYPE_HARD', addr: BigInt(v as number) } : { name, cls: 'H5L_TYPE_SOFT', path: v })));
        // entries said to cache a symbol table are groups
        const groupAddrs = new Set(g.links.filter((l) => l[1] === 'hard' && l[3]).map((l) => l[2]));
        for (const a of got!.groups) expect(groupAddrs.has(a), `${where}: ${a}`).to.equal(true);
      }
      // another file at the path (not the same inode): nothing read
      expect(symbolTableLinks(file, st.dev, st.ino + 1n, groups[0]!.addr)).to.equal(undefined);
    }
    expect(stabGroups).to.be.greaterThan(10);
    expect(stabLinks).to.be.greaterThan(1500);
  });

  it('kept link bytes: repeated pages, other page boundaries and other hrefs answer what a first listing does', async () => {
    // each link keeps its bytes for the hrefs of the page that wrote them (http/present.ts
    // linkListBody): a page is copied from them only when every link has them for its hrefs
    const fresh = (n: string) => {
      fs.copyFileSync(path.join(root, 'k/k_wide.h5'), path.join(root, `k/${n}`));
      return new Client(srv.url, `/k/${n}`);
    };
    const c = fresh('kept_a.h5');
    const rootId = (await c.get('/')).json.root as string;
    const wide = (await c.get(`/groups/${rootId}/links/wide`)).json.link.id as string;
    const first = await pages(c, wide, 100);
    expect(first.items).to.have.length(1500);
    const again = await pages(c, wide, 100);
    expect(again.bodies).to.deep.equal(first.bodies);
    // other boundaries: pages made of links kept by two earlier pages, and of kept and new ones
    for (const limit of [37, 250, 1500]) {
      const other = await pages(c, wide, limit);
      expect(other.items, `Limit=${limit}`).to.deep.equal(first.items);
      for (const text of other.bodies) expect(JSON.stringify(JSON.parse(text))).to.equal(text);
    }
    // the domain in a header: hrefs without ?domain=, then with it again
    const viaHeader = new Client(srv.url, undefined, { 'X-Hdf-domain': '/k/kept_a.h5' });
    const q = `?domain=${encodeURIComponent('/k/kept_a.h5').replace(/%2F/g, '/')}`;
    for (let round = 0; round < 2; round++) {
      const h = await pages(viaHeader, wide, 100);
      expect(h.items.map((l) => ({ ...l, href: l.href + q, ...(l.target ? { target: l.target + q } : {}) }))).to.deep.equal(first.items);
      expect((await pages(c, wide, 100)).bodies).to.deep.equal(first.bodies);
    }
    // a listing of the same file through another group id spelling is not possible; another file
    // (other ids) gets its own bytes
    const d = fresh('kept_b.h5');
    const droot = (await d.get('/')).json.root as string;
    const dwide = (await d.get(`/groups/${droot}/links/wide`)).json.link.id as string;
    const other = await pages(d, dwide, 100);
    expect(other.items.map((l) => l.title)).to.deep.equal(first.items.map((l) => l.title));
    expect(other.items.some((l, i) => l.id !== undefined && l.id === first.items[i]!.id)).to.equal(false);
    // a new link: seen at once
    const r = await c.put(`/groups/${wide}/links/w9999`, { h5path: '/wide/w0000' });
    expect(r.status, r.text).to.equal(201);
    const after = await pages(c, wide, 100);
    expect(after.items.map((l) => l.title)).to.deep.equal([...first.items.map((l) => l.title), 'w9999']);
  });

  // Read-ahead (routes/links.ts): after a page that was not kept yet, the next page is built and
  // kept before the client asks for it. What the client then gets must be what a listing without
  // read-ahead answers, also when a write comes between the two pages.
  it('read-ahead of link pages: the next page is kept before it is asked for; a write between pages is seen', async () => {
    const readAhead = async (c: Client) => Number(/^h5store_link_pages_read_ahead_total (\d+)/m.exec((await c.get('/metrics')).text)?.[1] ?? NaN);
    const settle = async (c: Client, from: number) => {
      for (let i = 0; i < 100 && (await readAhead(c)) === from; i++) await new Promise((r) => setTimeout(r, 20));
      return (await readAhead(c)) - from;
    };
    const fresh = async (n: string) => {
      fs.copyFileSync(path.join(root, 'k/k_wide.h5'), path.join(root, `k/${n}`));
      const c = new Client(srv.url, `/k/${n}`);
      const rootId = (await c.get('/')).json.root as string;
      return { c, wide: (await c.get(`/groups/${rootId}/links/wide`)).json.link.id as string };
    };
    // a whole listing in pages: every page after the first was read ahead, none when listed again
    const { c, wide } = await fresh('ahead_a.h5');
    let before = await readAhead(c);
    const listed = await pages(c, wide, 100);
    expect(listed.items).to.have.length(1500);
    // 14 when every read-ahead is done before its request arrives (a request that comes first
    // builds its page itself, and the read-ahead then finds it kept)
    expect(await settle(c, before), 'pages read ahead').to.be.at.least(5);
    const whole = (await c.get(`/groups/${wide}/links`)).json.links;
    expect(listed.items).to.deep.equal(whole);
    before = await readAhead(c);
    expect((await pages(c, wide, 100)).bodies).to.deep.equal(listed.bodies);
    await new Promise((r) => setTimeout(r, 100));
    expect(await readAhead(c), 'no read-ahead of pages kept already').to.equal(before);
    // page 2 read ahead, then a link that sorts into it, and one of it deleted: page 2 shows both
    const b = await fresh('ahead_b.h5');
    before = await readAhead(b.c);
    const p1 = (await b.c.get(`/groups/${b.wide}/links`, { Limit: 100 })).json.links as Item[];
    expect(await settle(b.c, before)).to.equal(1);
    const inPage2 = `${p1[99]!.title}_new`; // right after page 1's last link
    expect((await b.c.put(`/groups/${b.wide}/links/${inPage2}`, { h5path: '/wide' })).status).to.equal(201);
    const p2 = (await b.c.get(`/groups/${b.wide}/links`, { Limit: 100, Marker: p1[99]!.title })).json.links as Item[];
    expect(p2[0]!.title).to.equal(inPage2);
    const gone = p2[50]!.title;
    expect((await b.c.delete(`/groups/${b.wide}/links/${gone}`)).status).to.equal(200);
    const again = (await b.c.get(`/groups/${b.wide}/links`, { Limit: 100, Marker: p1[99]!.title })).json.links as Item[];
    expect(again.map((l) => l.title)).to.deep.equal(p2.filter((l) => l.title !== gone).map((l) => l.title).concat(again[99]!.title));
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
