/**
 * Object ids are never trusted (DESIGN.md 3; wire-reference 0.1, 0.7): malformed -> 400,
 * another domain's -> 400, wrong collection -> 400, unknown or forged -> 404, deleted -> 410
 * (also after a restart: the file records address generations), and an id never silently starts naming a different object.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ID_RE, addrOf, expectError, withAddr, withGen } from '../helpers/apiExtra.js';
import { h5dump, pythonJson } from '../helpers/python.js';
import { parseId } from '../../src/store/objects/ids.js';
import { Client, type Reply, type TestServer, fixturePath, startServer, tempRoot, untilServerClosed } from '../helpers/server.js';

type Kind = 'group' | 'dataset';
const COL: Record<Kind, string> = { group: 'groups', dataset: 'datasets' };

describe('object ids', function () {
  this.timeout(180000);
  let srv: TestServer;
  let root: string;
  let tall: Client;
  let tallRoot: string;
  let tallDsets: string[];
  let tallGroups: string[];
  /** h5py facts about tall.h5: raw data offsets and object header addresses. */
  let facts: { raw: Record<string, number>; addr: Record<string, number> };


  before(async () => {
    root = tempRoot('h5store-ids-');
    fs.copyFileSync(fixturePath('tall.h5'), path.join(root, 'tall.h5'));
    fs.chmodSync(path.join(root, 'tall.h5'), 0o644);
    facts = pythonJson(
      `
import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
raw, addr = {}, {}
def v(name, o):
    addr[name] = h5py.h5o.get_info(o.id).addr
    if isinstance(o, h5py.Dataset):
        raw[name] = o.id.get_offset() or 0
f.visititems(v)
print(json.dumps({'raw': raw, 'addr': addr}))
`,
      [path.join(root, 'tall.h5')],
    );
    srv = await startServer({ root });
    tall = new Client(srv.url, '/tall.h5');
    tallRoot = (await tall.get('/')).json.root;
    tallDsets = (await tall.get('/datasets')).json.datasets;
    tallGroups = (await tall.get('/groups')).json.groups;
    expect(tallDsets).to.have.length(4);
    expect(tallGroups).to.have.length(5);
  });

  after(async () => {
    await srv?.stop();
  });

  async function healthy(): Promise<void> {
    const r = await tall.get(`/groups/${tallRoot}/links`);
    expect(r.status).to.equal(200);
    expect(r.json.links.map((l: { title: string }) => l.title)).to.deep.equal(['g1', 'g2']);
    const d = await tall.get(`/datasets/${tallDsets[0]}/value`);
    expect(d.status).to.equal(200);
    expect((await tall.get('/about')).status).to.equal(200);
  }

  describe('malformed ids', () => {
    const malformed = (id: string): string[] => [
      id.slice(0, -1), // 37 chars
      id + '0', // 39 chars
      'g-123',
      'x' + id.slice(1), // bad prefix
      'q' + id.slice(1),
      id.slice(0, 1) + '_' + id.slice(2), // bad separator
      id.slice(0, 5) + 'z' + id.slice(6), // non-hex
      id.slice(0, 30) + 'G' + id.slice(31),
      id.slice(0, 10) + '0' + id.slice(11), // dash moved
      id.replace(/-/g, ''),
      `${id.slice(0, 2)}${'0'.repeat(36)}`,
      'groups',
      '%20',
    ];

    it('answer 400 on every route that takes an id', async () => {
      const failures: string[] = [];
      for (const bad of [...malformed(tallRoot), ...malformed(tallDsets[0])]) {
        const e = encodeURIComponent(bad);
        const reqs: [string, Promise<Reply>][] = [
          [`GET /groups/${bad}`, tall.get(`/groups/${e}`)],
          [`GET /groups/${bad}/links`, tall.get(`/groups/${e}/links`)],
          [`GET /groups/${bad}/links/x`, tall.get(`/groups/${e}/links/x`)],
          [`GET /datasets/${bad}`, tall.get(`/datasets/${e}`)],
          [`GET /datasets/${bad}/value`, tall.get(`/datasets/${e}/value`)],
          [`GET /groups/${bad}/attributes`, tall.get(`/groups/${e}/attributes`)],
          [`DELETE /groups/${bad}`, tall.delete(`/groups/${e}`)],
          [`PUT link to ${bad}`, tall.put(`/groups/${tallRoot}/links/forged`, { id: bad })],
          [`POST /groups under ${bad}`, tall.post('/groups', { link: { id: bad, name: 'forged' } })],
        ];
        for (const [what, p] of reqs) {
          const r = await p;
          if (r.status !== 400) failures.push(`${what} -> ${r.status}`);
          else expectError(r, 400, what);
        }
      }
      expect(failures).to.deep.equal([]);
      await healthy();
    });

    it('an id of another domain answers 400', async () => {
      const other = new Client(srv.url, '/other.h5');
      const r = await other.put('/');
      expect(r.status, r.text).to.equal(201);
      const otherRoot = r.json.root as string;
      const og = await other.post('/groups', { link: { id: otherRoot, name: 'og' } });
      expect(og.status).to.equal(201);
      expect(otherRoot.slice(2, 19)).to.not.equal(tallRoot.slice(2, 19));
      expectError(await tall.get(`/groups/${otherRoot}`), 400);
      expectError(await tall.get(`/groups/${og.json.id}`), 400);
      expectError(await tall.get(`/groups/${og.json.id}/links`), 400);
      expectError(await tall.delete(`/groups/${og.json.id}`), 400);
      expectError(await tall.put(`/groups/${tallRoot}/links/x`, { id: og.json.id }), 400);
      expectError(await other.get(`/groups/${tallRoot}`), 400);
      expectError(await other.get(`/datasets/${tallDsets[0]}`), 400);
      expectError(await other.put(`/groups/${otherRoot}/links/x`, { id: tallDsets[0] }), 400);
      // tall.h5's domain key with an address that exists in other.h5: still 400.
      expectError(await other.get(`/groups/${tallRoot.slice(0, 20) + og.json.id.slice(20)}`), 400);
      expect((await other.get(`/groups/${tallRoot}/links`)).status).to.equal(400);
      expect((await tall.get(`/groups/${tallRoot}/links/x`)).status).to.equal(404);
    });

    it('an id of the wrong collection answers 400', async () => {
      expectError(await tall.get(`/groups/${tallDsets[0]}`), 400);
      expectError(await tall.get(`/groups/${tallDsets[0]}/links`), 400);
      expectError(await tall.delete(`/groups/${tallDsets[0]}`), 400);
      expectError(await tall.get(`/datasets/${tallRoot}`), 400);
      expectError(await tall.get(`/datasets/${tallGroups[0]}/value`), 400);
      expectError(await tall.delete(`/datasets/${tallGroups[0]}`), 400);
      expectError(await tall.get(`/datatypes/${tallGroups[0]}`), 400);
      expectError(await tall.get(`/groups/${'t' + tallRoot.slice(1)}`), 400);
      expectError(await tall.post('/groups', { link: { id: tallDsets[0], name: 'x' } }), 400);
      await healthy();
    });
  });

  describe('unknown and forged ids', () => {
    it('a well-formed unknown id answers 404', async () => {
      expectError(await tall.get(`/groups/${withAddr(tallRoot, 0x7ffff0n)}`), 404);
      expectError(await tall.get(`/datasets/${withAddr(tallDsets[0], 0x7ffff0n)}`), 404);
    });

    it('an object header address with the prefix of another kind answers 404', async () => {
      const asGroup = 'g' + tallDsets[0].slice(1);
      expectError(await tall.get(`/groups/${asGroup}`), 404);
      expectError(await tall.get(`/groups/${asGroup}/links`), 404);
      expectError(await tall.put(`/groups/${asGroup}/links/x`, { h5path: '/x' }), 404);
      const asDataset = 'd' + tallGroups[0].slice(1);
      expectError(await tall.get(`/datasets/${asDataset}`), 404);
      expectError(await tall.get(`/datasets/${asDataset}/value`), 404);
      await healthy();
    });

    it('forged addresses (raw data, 0, 1, inside a header, huge) answer 404 and the server stays healthy', async () => {
      await untilServerClosed(srv, path.join(root, 'tall.h5')); // earlier failed writes opened the file read-write; let the server close it
      const before = h5dump(path.join(root, 'tall.h5'));
      const raw = Object.values(facts.raw).filter((x) => x > 0);
      expect(raw.length).to.be.greaterThan(0);
      const headers = Object.values(facts.addr);
      const addrs: bigint[] = [
        ...raw.map(BigInt),
        ...raw.map((x) => BigInt(x + 8)),
        0n,
        1n,
        8n,
        0x60n,
        ...headers.map((x) => BigInt(x + 1)),
        ...headers.map((x) => BigInt(x + 16)),
        0xffffffffffffn,
        0x800000000000n,
        BigInt(fs.statSync(path.join(root, 'tall.h5')).size),
        BigInt(fs.statSync(path.join(root, 'tall.h5')).size - 8),
        // 0x60 is the root header in files written with libver earliest: keep only non-objects
      ].filter((a) => a !== parseId(tallRoot).addr && !headers.some((h) => BigInt(h) === a));
      const failures: string[] = [];
      for (const a of addrs) {
        for (const [kind, base] of [
          ['groups', tallRoot],
          ['datasets', tallDsets[0]],
        ] as const) {
          const id = withAddr(base, a);
          const checks: [string, Promise<Reply>][] = [
            [`GET /${kind}/${id}`, tall.get(`/${kind}/${id}`)],
            [`GET /${kind}/${id}/attributes`, tall.get(`/${kind}/${id}/attributes`)],
            [`DELETE /${kind}/${id}`, tall.delete(`/${kind}/${id}`)],
            [`PUT link to ${id}`, tall.put(`/groups/${tallRoot}/links/forged`, { id })],
          ];
          if (kind === 'groups') {
            checks.push([`GET /groups/${id}/links`, tall.get(`/groups/${id}/links`)]);
            checks.push([`POST /groups under ${id}`, tall.post('/groups', { link: { id, name: 'forged' } })]);
          } else {
            checks.push([`GET /datasets/${id}/value`, tall.get(`/datasets/${id}/value`)]);
          }
          for (const [what, p] of checks) {
            const r = await p;
            if (r.status !== 404) failures.push(`${what} (addr ${a}) -> ${r.status} ${r.text.slice(0, 200)}`);
          }
        }
      }
      expect(failures, 'forged ids that did not answer 404').to.deep.equal([]);
      await healthy();
      await untilServerClosed(srv, path.join(root, 'tall.h5'));
      // Failed writes leave the content unchanged (libhdf5 itself may touch superblock flags when
      // opening read-write, so compare what h5dump shows, not bytes).
      expect(h5dump(path.join(root, 'tall.h5')), 'tall.h5 content unchanged').to.equal(before);
    });

    it('a forged generation answers 404', async () => {
      expectError(await tall.get(`/groups/${withGen(tallRoot, 1)}`), 404);
      expectError(await tall.get(`/datasets/${withGen(tallDsets[0], 0xffff)}`), 404);
      await healthy();
    });

    it('the reserved group and its contents cannot be addressed by id', async () => {
      const c = new Client(srv.url, '/reserved.h5');
      expect((await c.put('/')).status).to.equal(201);
      const rootId = (await c.get('/')).json.root as string;
      const anon = await c.post('/groups', {});
      expect(anon.status).to.equal(201);
      // Delete a linked object so that generation state may be kept too.
      const g = await c.post('/groups', { link: { id: rootId, name: 'tmp' } });
      expect(g.status).to.equal(201);
      await c.delete(`/groups/${rootId}/links/tmp`);
      await c.delete(`/groups/${g.json.id}`); // unlinked, it stayed anonymous until deleted by id
      await untilServerClosed(srv, path.join(root, 'reserved.h5'));
      const f = pythonJson(
        `
import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
out = {}
def v(name, o):
    out[name] = [h5py.h5o.get_info(o.id).addr, 'group' if isinstance(o, h5py.Group) else 'dataset']
f.visititems(v)
print(json.dumps(out))
`,
        [path.join(root, 'reserved.h5')],
      ) as Record<string, [number, string]>;
      // Everything left in the file lives in the reserved group (the only linked group was deleted).
      expect(Object.keys(f).length, JSON.stringify(f)).to.be.greaterThan(1);
      const internal = Object.entries(f);
      const failures: string[] = [];
      for (const [name, [addr, kind]] of internal) {
        const id = withAddr(kind === 'group' ? rootId : 'd' + rootId.slice(1), BigInt(addr));
        if (id === anon.json.id) continue; // the held anonymous group itself is addressable
        for (const u of [`/${kind}s/${id}`, `/${kind}s/${id}/attributes`, ...(kind === 'group' ? [`/groups/${id}/links`] : [])]) {
          const r = await c.get(u);
          // 404; or 410 when the address had a generation before (an object deleted there: the
          // generations dataset often takes the first address freed)
          if (r.status !== 404 && r.status !== 410) failures.push(`GET ${u} (${name}) -> ${r.status} ${r.text.slice(0, 200)}`);
        }
      }
      expect(failures).to.deep.equal([]);
      expect((await c.get(`/groups/${anon.json.id}`)).status).to.equal(200);
    });
  });

  describe('deleted objects', () => {
    it('answer 410 on every route', async () => {
      const c = new Client(srv.url, '/deleted.h5');
      expect((await c.put('/')).status).to.equal(201);
      const rootId = (await c.get('/')).json.root as string;
      const keep = await c.post('/groups', { link: { id: rootId, name: 'keep' } });
      expect(keep.status).to.equal(201);
      const ds = await c.post('/datasets', { type: 'H5T_STD_I32LE', shape: [3], link: { id: rootId, name: 'ds' } });
      expect(ds.status, ds.text).to.equal(201);
      const dsId = ds.json.id as string;
      expect((await c.delete(`/datasets/${dsId}`)).status).to.equal(200);
      expectError(await c.get(`/datasets/${dsId}`), 410);
      expectError(await c.get(`/datasets/${dsId}/value`), 410);
      expectError(await c.get(`/datasets/${dsId}/attributes`), 410);
      expectError(await c.delete(`/datasets/${dsId}`), 410);
      expectError(await c.put(`/groups/${rootId}/links/relink`, { id: dsId }), 410);
      const g = await c.post('/groups', { link: { id: rootId, name: 'g' } });
      expect(g.status).to.equal(201);
      const gd = await c.delete(`/groups/${g.json.id}`);
      expect(gd.status, gd.text).to.equal(200);
      expectError(await c.get(`/groups/${g.json.id}`), 410);
      expectError(await c.get(`/groups/${g.json.id}/links`), 410);
      expectError(await c.post('/groups', { link: { id: g.json.id, name: 'x' } }), 410);
      expect((await c.get(`/groups/${keep.json.id}`)).status).to.equal(200);
    });
  });

  /**
   * Create/delete loops (DESIGN.md 3): every object gets a unique `token` attribute when it is
   * created, so whatever an id answers can be checked against the object it was issued for.
   * - an id whose object was deleted (DELETE answered 200) answers 404 or 410 for ever after;
   * - no id ever answers with another object (a different token), whatever happened;
   * - no new object is given an id that was handed out before.
   * Each way of deleting runs in its own domain so that one broken path does not hide the others.
   */
  class IdLedger {
    c: Client;
    rootId = '';
    readonly issued = new Map<string, { kind: Kind; token: number; path: string }>();
    readonly deleted = new Set<string>();
    /** Ids whose DELETE failed: their state is unknown, but they must never name another object. */
    readonly uncertain = new Set<string>();
    readonly problems: string[] = [];
    static nextToken = 1;

    constructor(readonly domain: string) {
      this.c = new Client(srv.url, domain);
    }

    reconnect(): void {
      this.c = new Client(srv.url, this.domain);
    }

    async init(): Promise<void> {
      const r = await this.c.put('/');
      expect(r.status, r.text).to.equal(201);
      this.rootId = r.json.root;
    }

    /** Create a group or dataset (linked when `parent` and `name` are given); undefined on failure. */
    async create(kind: Kind, parent?: string, name?: string, parentPath = ''): Promise<string | undefined> {
      const body: Record<string, unknown> = kind === 'dataset' ? { type: 'H5T_STD_I32LE', shape: [4] } : {};
      if (parent && name) body.link = { id: parent, name };
      const r = await this.c.post(`/${COL[kind]}`, body);
      if (r.status !== 201) {
        this.problems.push(`POST /${COL[kind]} ${name ?? '(anonymous)'} -> ${r.status} ${r.text.slice(0, 200)}`);
        return undefined;
      }
      const id = r.json.id as string;
      if (!ID_RE.test(id)) this.problems.push(`bad id ${id}`);
      if (this.issued.has(id)) {
        this.problems.push(`new ${kind} ${name ?? '(anonymous)'} was given the id ${id}, issued before to ${JSON.stringify(this.issued.get(id))}`);
      }
      const token = IdLedger.nextToken++;
      this.issued.set(id, { kind, token, path: name && parent ? `${parentPath}/${name}` : '' });
      this.deleted.delete(id);
      this.uncertain.delete(id);
      const a = await this.c.put(`/${COL[kind]}/${id}/attributes/token`, { type: 'H5T_STD_I32LE', value: token });
      if (a.status !== 201) this.problems.push(`PUT token on ${id} -> ${a.status} ${a.text.slice(0, 200)}`);
      return id;
    }

    /** Record the outcome of a delete that removes `ids`. */
    settle(what: string, r: Reply, ids: (string | undefined)[]): void {
      const ok = r.status === 200;
      if (!ok) this.problems.push(`${what} -> ${r.status} ${r.text.slice(0, 200)}`);
      for (const id of ids) {
        if (!id) continue;
        (ok ? this.deleted : this.uncertain).add(id);
      }
    }

    isLive(id: string): boolean {
      return !this.deleted.has(id) && !this.uncertain.has(id);
    }

    /** Check every id ever issued. */
    async check(stage: string, goneStatuses: number[]): Promise<void> {
      for (const [id, info] of this.issued) {
        const r = await this.c.get(`/${COL[info.kind]}/${id}/attributes/token`);
        if (r.status === 200 && r.json.value !== info.token) {
          this.problems.push(`${stage}: ${id} (${this.deleted.has(id) ? 'deleted' : this.uncertain.has(id) ? 'delete failed' : 'live'}) names another object: token ${r.json.value}, issued with ${info.token}`);
          continue;
        }
        if (this.deleted.has(id)) {
          if (!goneStatuses.includes(r.status)) this.problems.push(`${stage}: deleted ${info.kind} ${id} answered ${r.status} ${r.text.slice(0, 160)}`);
        } else if (!this.uncertain.has(id)) {
          if (r.status !== 200) this.problems.push(`${stage}: live ${info.kind} ${id} answered ${r.status} ${r.text.slice(0, 160)}`);
          else {
            const o = await this.c.get(`/${COL[info.kind]}/${id}`);
            if (o.status !== 200 || o.json.id !== id) this.problems.push(`${stage}: live ${id}: GET answered ${o.status} id ${o.json?.id}`);
          }
        }
      }
    }
  }

  describe('ids are never reused for new objects', () => {
    const ITER = 30;
    const byGroupDelete = () => ledgers[0];
    const byLinkDelete = () => ledgers[1];
    const byDatasetDelete = () => ledgers[2];
    const ledgers: IdLedger[] = [];

    before(async () => {
      for (const d of ['/loop-delete-group.h5', '/loop-delete-link.h5', '/loop-delete-dataset.h5']) {
        const l = new IdLedger(d);
        await l.init();
        ledgers.push(l);
      }
    });

    it(`DELETE /groups/<id>, ${ITER} rounds (leaf, with children, anonymous)`, async () => {
      const L = byGroupDelete();
      const root = L.rootId;
      for (let i = 0; i < ITER && L.problems.length < 40; i++) {
        const g = await L.create('group', root, `g${i}`);
        const gd = g && (await L.create('dataset', g, 'child', `/g${i}`));
        const gg = g && (await L.create('group', g, 'sub', `/g${i}`));
        if (g) L.settle(`round ${i}: DELETE /groups/${g} (group with children)`, await L.c.delete(`/groups/${g}`), [g, gd, gg]);
        const leaf = await L.create('group', root, `leaf${i}`);
        if (leaf) L.settle(`round ${i}: DELETE /groups/${leaf} (leaf group)`, await L.c.delete(`/groups/${leaf}`), [leaf]);
        const ag = await L.create('group');
        if (ag) L.settle(`round ${i}: DELETE /groups/${ag} (anonymous group)`, await L.c.delete(`/groups/${ag}`), [ag]);
        await L.create('group', root, `keep${i}`);
        await L.check(`round ${i}`, [404, 410]);
      }
      expect(L.problems, 'id problems:\n  ' + L.problems.join('\n  ') + '\n').to.deep.equal([]);
      expect(L.deleted.size).to.equal(ITER * 5);
    });

    it(`DELETE /groups/<id>/links/<name>, then DELETE of the target left anonymous, ${ITER} rounds`, async () => {
      const L = byLinkDelete();
      const root = L.rootId;
      // deleting the last link leaves the object anonymous (reachable by id, issue #25); the
      // delete by id that follows frees it
      const unlink = async (what: string, name: string, col: string, id: string): Promise<Reply> => {
        const r = await L.c.delete(`/groups/${root}/links/${name}`);
        if (r.status !== 200) L.problems.push(`${what}: DELETE link ${name} -> ${r.status}`);
        const still = await L.c.get(`/${col}/${id}`);
        if (still.status !== 200) L.problems.push(`${what}: the unlinked ${id} answered ${still.status}, not 200`);
        return L.c.delete(`/${col}/${id}`);
      };
      for (let i = 0; i < ITER && L.problems.length < 40; i++) {
        const g = await L.create('group', root, `g${i}`);
        const gd = g && (await L.create('dataset', g, 'child', `/g${i}`));
        const gg = g && (await L.create('group', g, 'sub', `/g${i}`));
        if (g) L.settle(`round ${i}: DELETE link g${i} (group with children)`, await unlink(`round ${i}`, `g${i}`, 'groups', g), [g, gd, gg]);
        const d = await L.create('dataset', root, `d${i}`);
        if (d) L.settle(`round ${i}: DELETE link d${i} (dataset)`, await unlink(`round ${i}`, `d${i}`, 'datasets', d), [d]);
        await L.create('group', root, `keep${i}`);
        await L.create('dataset', root, `keepd${i}`);
        await L.check(`round ${i}`, [404, 410]);
      }
      expect(L.problems, 'id problems:\n  ' + L.problems.join('\n  ') + '\n').to.deep.equal([]);
      expect(L.deleted.size).to.equal(ITER * 4);
    });

    it(`DELETE /datasets/<id>, ${ITER} rounds (linked and anonymous)`, async () => {
      const L = byDatasetDelete();
      const root = L.rootId;
      for (let i = 0; i < ITER && L.problems.length < 40; i++) {
        const d = await L.create('dataset', root, `d${i}`);
        if (d) L.settle(`round ${i}: DELETE /datasets/${d}`, await L.c.delete(`/datasets/${d}`), [d]);
        const ad = await L.create('dataset');
        if (ad) L.settle(`round ${i}: DELETE /datasets/${ad} (anonymous)`, await L.c.delete(`/datasets/${ad}`), [ad]);
        await L.create('dataset', root, `keepd${i}`);
        await L.check(`round ${i}`, [404, 410]);
      }
      expect(L.problems, 'id problems:\n  ' + L.problems.join('\n  ') + '\n').to.deep.equal([]);
      expect(L.deleted.size).to.equal(ITER * 2);
    });

    it('the survivors are listed with the ids they were given', async () => {
      const problems: string[] = [];
      for (const L of ledgers) {
        const links = await L.c.get(`/groups/${L.rootId}/links`);
        expect(links.status).to.equal(200);
        const byTitle = new Map<string, string>((links.json.links as { title: string; id: string }[]).map((l) => [l.title, l.id]));
        for (const [id, info] of L.issued) {
          if (!L.isLive(id) || !info.path || info.path.lastIndexOf('/') !== 0) continue;
          if (byTitle.get(info.path.slice(1)) !== id) problems.push(`${L.domain}${info.path}: listed as ${byTitle.get(info.path.slice(1))}, issued ${id}`);
        }
        for (const [title, id] of byTitle) if (L.deleted.has(id)) problems.push(`${L.domain}: link ${title} names deleted id ${id}`);
      }
      expect(problems, problems.join('\n')).to.deep.equal([]);
    });

    it('after a restart on the same data directory: deleted ids still answer 410 (the file records their address generations), live ids are unchanged', async () => {
      const before = new Map<string, unknown>();
      for (const L of ledgers) before.set(L.domain, (await L.c.get(`/groups/${L.rootId}/links`)).json.links.map((l: { title: string; id?: string }) => [l.title, l.id]));
      await srv.stop();
      srv = await startServer({ root });
      tall = new Client(srv.url, '/tall.h5');
      expect((await tall.get('/')).json.root).to.equal(tallRoot);
      expect((await tall.get('/datasets')).json.datasets).to.deep.equal(tallDsets);
      const problems: string[] = [];
      for (const L of ledgers) {
        L.reconnect();
        const r = await L.c.get('/');
        expect(r.status).to.equal(200);
        expect(r.json.root).to.equal(L.rootId);
        const after = (await L.c.get(`/groups/${L.rootId}/links`)).json.links.map((l: { title: string; id?: string }) => [l.title, l.id]);
        expect(after, `${L.domain} root links`).to.deep.equal(before.get(L.domain));
        L.problems.length = 0;
        await L.check('after restart', [410]);
        problems.push(...L.problems.map((p) => `${L.domain}: ${p}`));
      }
      expect(problems, 'id problems after restart:\n  ' + problems.join('\n  ') + '\n').to.deep.equal([]);
    });

    it('after the restart, more create/delete rounds still never reuse an id', async () => {
      const problems: string[] = [];
      for (const L of ledgers) {
        L.problems.length = 0;
        const root = L.rootId;
        for (let i = 0; i < 10 && L.problems.length < 20; i++) {
          const g = await L.create('group', root, `r${i}`);
          const d = g && (await L.create('dataset', g, 'child', `/r${i}`));
          if (g) {
            // the unlinked group stays anonymous until deleted by id (issue #25)
            expect((await L.c.delete(`/groups/${root}/links/r${i}`)).status).to.equal(200);
            L.settle(`restart round ${i}: DELETE link r${i}, then /groups/${g}`, await L.c.delete(`/groups/${g}`), [g, d]);
          }
          const ds = await L.create('dataset', root, `rd${i}`);
          if (ds) L.settle(`restart round ${i}: DELETE /datasets/${ds}`, await L.c.delete(`/datasets/${ds}`), [ds]);
          await L.create('group', root, `rkeep${i}`);
        }
        await L.check('after restart rounds', [404, 410]);
        problems.push(...L.problems.map((p) => `${L.domain}: ${p}`));
      }
      expect(problems, 'id problems:\n  ' + problems.join('\n  ') + '\n').to.deep.equal([]);
    });
  });

  describe('after all', () => {
    it('the id addresses of tall.h5 are its object header addresses (h5py)', async () => {
      const addrs = new Set(Object.values(facts.addr).map(BigInt));
      for (const id of [...tallDsets, ...tallGroups]) expect(addrs.has(addrOf(id)), id).to.equal(true);
    });

    it('no HDF5 ids are left open', async () => {
      const r = await tall.get('/info');
      expect(r.status).to.equal(200);
      expect(r.json.open_hdf5_ids).to.equal(0);
    });
  });
});
