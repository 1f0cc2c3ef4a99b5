/**
 * A user's whole session with each real h5pyd line (issue #25 item 10): h5pyd 1.0 (which keeps
 * writes in memory and sends batch creates with ids it made at flush/close) and h5pyd 0.24 each
 * create a file with groups, datasets of every type, attributes, links and a committed type
 * (test/tools/h5pyd_session.py), flush and close it, reopen it read-only and read it back; then
 * reopen it in mode "a", change and add, and read again. Every read is compared with what was
 * written, with what h5py reads from the file on disk, and with what the other line reads; the
 * requests h5web's HSDS provider makes are answered for a file h5pyd 1.0 wrote. Skipped with a
 * message when ../shared/clients is absent.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { CLIENT_LINES, type ClientLine, h5pydPython, haveClient, missingClient } from '../helpers/clients.js';
import { PYTHON } from '../helpers/python.js';
import { Client, REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';
import { execFileSync } from 'node:child_process';
import { parseJsonBody } from '../../src/codec/json.js';

const SESSION = path.join(REPO, 'test/tools/h5pyd_session.py');

type Summary = Record<string, Record<string, unknown>>;

describe('a whole session with each h5pyd line (issue #25 item 10)', function () {
  this.timeout(600_000);
  let srv: TestServer;
  let root: string;
  const written: Partial<Record<ClientLine, string>> = {};

  before(async () => {
    root = tempRoot('h5store-sessions-');
    fs.mkdirSync(path.join(root, 'home'));
    srv = await startServer({ root });
  });
  after(async () => srv?.stop());

  const session = (line: ClientLine, args: string[]): string => h5pydPython(line, srv.url).file(SESSION, args);
  const summaryBy = (line: ClientLine, domain: string): Summary => parseJsonBody(session(line, ['summary', domain])) as Summary;
  /** What h5py reads from the file itself (the server may keep it open: no HDF5 file locking). */
  const summaryByH5py = (file: string): Summary =>
    parseJsonBody(execFileSync(PYTHON, [SESSION, 'h5py', file], { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, HDF5_USE_FILE_LOCKING: 'FALSE' } })) as Summary;
  const expected = (appended: boolean): Record<string, { dtype: unknown; shape: number[]; value: unknown }> =>
    parseJsonBody(execFileSync(PYTHON, [SESSION, 'expected', appended ? 'appended' : 'first'], { encoding: 'utf8' })) as Record<string, { dtype: unknown; shape: number[]; value: unknown }>;

  /** Every dataset holds what the session wrote (dtype, shape, values). */
  function checkWritten(s: Summary, appended: boolean, who: string): void {
    for (const [p, want] of Object.entries(expected(appended))) {
      const got = s[p];
      expect(got, `${who}: ${p} is missing`).to.not.equal(undefined);
      expect({ dtype: got!.dtype, shape: got!.shape, value: got!.value }, `${who}: ${p}`).to.deep.equal(want);
    }
    expect(s['/g1']!.attrs, `${who}: attributes of /g1`).to.deep.include({ int: 5, floats: [[0, 1, 2], [3, 4, 5]], text: 'some text', texts: ['a', 'bb'], cmp: [[7, 0.5, 'q']] });
    expect(s['/']!.attrs).to.deep.equal({ title: 'a session' });
    // made with track_order: attributes and links in the order they were made
    expect(s['/g1/g2']!.attr_order).to.deep.equal(Array.from({ length: 12 }, (_, i) => `z${String(11 - i).padStart(2, '0')}`));
    expect(Object.keys(s['/g1/g2']!.links as object)).to.deep.equal(['c', 'a', 'b']);
    const links = s['/']!.links as Record<string, Record<string, string>>;
    expect(links.soft).to.deep.equal({ class: 'SoftLink', path: '/g1/nested' });
    expect(links.ext).to.deep.equal({ class: 'ExternalLink', file: 'other.h5', path: '/x' });
    expect(s['/mytype']).to.deep.equal({ kind: 'datatype', dtype: [['x', '<f8'], ['y', '<f8']] });
    if (appended) {
      expect(s['/g1']!.attrs).to.deep.include({ added: 1.25 });
      expect(s['/g3']!.attrs).to.deep.equal({ n: 3 });
    }
  }

  for (const line of CLIENT_LINES) {
    describe(`h5pyd ${line}`, () => {
      const domain = `/home/session-${line}.h5`;
      const file = () => path.join(root, 'home', `session-${line}.h5`);

      before(function () {
        if (!haveClient(line)) {
          console.log(`      ${missingClient(line)}`);
          this.skip();
        }
      });

      it('creates a file (every type, attributes, soft and external links, a committed type), flushes and closes it; read-only, it reads back what was written, and h5py reads the same', () => {
        session(line, ['write', domain]);
        written[line] = domain;
        const s = summaryBy(line, domain);
        checkWritten(s, false, `h5pyd ${line}`);
        expect(summaryByH5py(file())).to.deep.equal(s);
      });

      it('reopened in mode "a": a value changed, a resize, a new dataset, group and attributes; read-only again, h5pyd and h5py agree', () => {
        session(line, ['append', domain]);
        const s = summaryBy(line, domain);
        checkWritten(s, true, `h5pyd ${line} after mode a`);
        expect(summaryByH5py(file())).to.deep.equal(s);
      });

      it('the other line reads the file the same way', function () {
        const other: ClientLine = line === '1.0' ? '0.24' : '1.0';
        if (!haveClient(other)) this.skip();
        expect(summaryBy(other, domain)).to.deep.equal(summaryBy(line, domain));
      });
    });
  }

  describe('dropped-in files', () => {
    /**
     * What h5pyd 1.0 shows differently from h5py for reasons of its own (the server's answers are
     * checked against h5py in fixtures.test.ts): object references as the REST API's
     * "groups/<id>" strings (HSDS's form), and `[()]` of a (1,) dataset as a scalar.
     */
    const clientQuirks: Record<string, string[]> = { 'objref_dset.h5': ['/DS1'], 'scalar.h5': ['/1d', '/1ds'] };

    it('h5pyd 1.0 reads every shared fixture as h5py reads the file (structure, types, values, attributes, links)', function () {
      if (!haveClient('1.0')) this.skip();
      const fixtures = path.resolve(REPO, '../shared/fixtures/hdf5');
      if (!fs.existsSync(fixtures)) this.skip();
      fs.mkdirSync(path.join(root, 'fx'), { recursive: true });
      const problems: string[] = [];
      for (const name of fs.readdirSync(fixtures).filter((n) => n.endsWith('.h5') && n !== 'notahdf5file.h5')) {
        const file = path.join(root, 'fx', name);
        fs.copyFileSync(path.join(fixtures, name), file);
        fs.chmodSync(file, 0o644);
        let byClient: Summary;
        try {
          byClient = summaryBy('1.0', `/fx/${name}`);
        } catch (e) {
          problems.push(`${name}: ${(e as Error).message.slice(-400)}`);
          continue;
        }
        const byH5py = summaryByH5py(file);
        for (const p of new Set([...Object.keys(byClient), ...Object.keys(byH5py)])) {
          if (clientQuirks[name]?.includes(p)) continue;
          if (JSON.stringify(byClient[p]) !== JSON.stringify(byH5py[p])) problems.push(`${name} ${p}: h5pyd ${JSON.stringify(byClient[p])?.slice(0, 200)} h5py ${JSON.stringify(byH5py[p])?.slice(0, 200)}`);
        }
      }
      expect(problems, problems.join('\n')).to.deep.equal([]);
    });
  });

  describe('the viewer', () => {
    it("h5web's HSDS provider's requests are answered for a file h5pyd 1.0 wrote (ids the client made, values, attributes)", async function () {
      const domain = written['1.0'];
      if (!domain) this.skip();
      const c = new Client(srv.url, domain!);
      const dom = await c.get('/');
      expect(dom.status).to.equal(200);
      const rootId = dom.json.root as string;
      const rootGroup = await c.get(`/groups/${rootId}`);
      expect(rootGroup.status).to.equal(200);
      const links = (await c.get(`/groups/${rootId}/links`)).json.links as { title: string; id?: string; collection?: string }[];
      const byTitle = new Map(links.map((l) => [l.title, l]));
      const g1 = byTitle.get('g1')!;
      expect(g1.collection).to.equal('groups');
      const attrs = await c.get(`/groups/${g1.id}/attributes`);
      expect(attrs.status).to.equal(200);
      expect((attrs.json.attributes as { name: string }[]).map((a) => a.name)).to.include.members(['int', 'text', 'added']);
      const text = await c.get(`/groups/${g1.id}/attributes/text`);
      expect(text.json.value).to.equal('some text');
      const cmp = byTitle.get('cmp')!;
      const ds = await c.get(`/datasets/${cmp.id}`);
      expect(ds.json.shape.dims).to.deep.equal([2]);
      expect((await c.get(`/datasets/${cmp.id}/value`)).json.value).to.deep.equal([[1, 2.5, 'x'], [-3, 4.5, 'yyyy']]);
      const big = byTitle.get('big')!;
      expect((await c.get(`/datasets/${big.id}/value`, { select: '[2999998:3000000]' })).json.value).to.deep.equal([2999998, 2999999]);
      // the same objects by path, as the next provider asks for them (h5paths with links and attributes)
      const batch = await c.post('/', { h5paths: ['/g1', '/cmp'] }, { include_links: 1, include_attrs: 1 });
      expect(batch.status).to.equal(200);
      expect(batch.json.h5paths['/g1'].id).to.equal(g1.id);
      expect(Object.keys(batch.json.h5paths['/g1'].links)).to.deep.equal(['g2', 'nested']);
      expect(batch.json.h5paths['/g1'].attributes.text.value).to.equal('some text');
    });
  });
});
