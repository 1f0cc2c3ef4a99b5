/**
 * Value reads straight from the file (issue #9 target 4; store/values/read.ts `fileBytePages`,
 * store/session/fileBytes.ts `rangePages`): a selection that is one run of contiguously stored data whose
 * stored type is the wire type is read with plain `pread`s on the thread pool instead of
 * `H5Dread`. Which streamed binary reads take that path, table-driven on files written by h5py,
 * and that every one's bytes are h5py's; then over HTTP: streamed reads equal to h5py's, a client
 * that goes away mid-read (the reads in flight end, the file is let go: a write follows at once,
 * no descriptor left open), and a read of a file shortened under the server.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { PagePool } from '../../src/store/values/pagepool.js';
import { rangePages } from '../../src/store/session/fileBytes.js';
import { sleep } from '../helpers/apiExtra.js';
import { python } from '../helpers/python.js';
import { Client, type TestServer, startServer, tempRoot } from '../helpers/server.js';

/** h5py script writing the datasets the cases read (arg: the file). */
const MAKE = `
import sys, h5py, numpy as np
def fill(shape, dt):
    return (np.arange(int(np.prod(shape))) % 1013).reshape(shape).astype(dt)
with h5py.File(sys.argv[1], 'w', libver='earliest') as f:
    f['f32'] = fill((64, 1000), '<f4')
    f['be'] = fill((64, 1000), '>f8')
    f['i16'] = fill((70000,), '<i2')
    f['cmp'] = np.array([(i, i * 0.5) for i in range(5000)], dtype=[('a', '<i4'), ('b', '<f8')])
    f.create_dataset('chunked', data=fill((64, 1000), '<f4'), chunks=(8, 1000))
    f.create_dataset('unwritten', shape=(64, 1000), dtype='<f4', fillvalue=7)
    f.create_dataset('external', shape=(1000,), dtype='<f4', external=[('ext.bin', 0, 4000)])
with h5py.File(sys.argv[2], 'w', userblock_size=512) as f:
    f['f32'] = fill((64, 1000), '<f4')
`;

describe('value reads from the file (contiguous runs, read on the thread pool)', function () {
  this.timeout(60_000);

  describe('which reads take the path, and their bytes', () => {
    let root: string;
    let store: any;
    before(async () => {
      root = tempRoot('h5store-filepages-');
      fs.writeFileSync(path.join(root, 'ext.bin'), Buffer.alloc(4000));
      python(MAKE, [path.join(root, 'd.h5'), path.join(root, 'ub.h5')]);
      const { Store } = await import('../../src/store/store.js');
      // pages of 1 KiB: every case streams (binary values above a page), in pages of at most 1 KiB
      store = new Store({ root, idleCloseMs: 500, maxOpenFiles: 8, defaultOwner: 'admin', pageBytes: PAGE, maxPoints: 1000, fsync: 'never' });
      expected = JSON.parse(
        python(
          `
import sys, json, h5py, numpy as np
out = []
for domain, name, select, fields in json.loads(sys.argv[1]):
    with h5py.File(sys.argv[2] + domain, 'r') as f:
        d = f[name]
        if fields: d = d.fields(fields.split(':'))
        v = eval('d' + select) if select else d[()]
        out.append(np.ascontiguousarray(v).tobytes().hex())
print(json.dumps(out))
`,
          [JSON.stringify(cases.map((c) => [c.domain, c.name, c.select ?? '', c.fields ?? ''])), root],
        ),
      ) as string[];
    });
    after(() => {
      store.close();
      fs.rmSync(root, { recursive: true, force: true });
    });

    const idOf = async (domain: string, name: string): Promise<string> => {
      return (await store.lookupPath(domain, '/' + name)).json.id as string;
    };

    const PAGE = 1024;
    let expected: string[];
    const cases: { domain: string; name: string; select?: string; fields?: string; file: boolean; why: string }[] = [
      { domain: '/d.h5', name: 'f32', select: '[10:50,:]', file: true, why: 'whole rows' },
      { domain: '/d.h5', name: 'f32', file: true, why: 'the whole dataset' },
      { domain: '/d.h5', name: 'f32', select: '[3,100:900]', file: true, why: 'part of one row' },
      { domain: '/ub.h5', name: 'f32', select: '[10:50,:]', file: true, why: 'a file with a user block (offsets count it)' },
      { domain: '/d.h5', name: 'be', select: '[1:60,:]', file: true, why: 'big-endian, sent as stored' },
      { domain: '/d.h5', name: 'i16', select: '[7:69999]', file: true, why: 'one dimension' },
      { domain: '/d.h5', name: 'cmp', select: '[1:4999]', file: true, why: 'a compound type stored as sent' },
      { domain: '/d.h5', name: 'cmp', select: '[1:4999]', fields: 'b', file: false, why: 'one field of a compound (converted)' },
      { domain: '/d.h5', name: 'f32', select: '[10:50,1:1000]', file: false, why: 'an inner block (not one run)' },
      { domain: '/d.h5', name: 'f32', select: '[10:50:2,:]', file: false, why: 'a step' },
      { domain: '/d.h5', name: 'chunked', select: '[10:50,:]', file: false, why: 'chunked layout' },
      { domain: '/d.h5', name: 'unwritten', select: '[10:50,:]', file: false, why: 'no storage allocated (fill values)' },
      { domain: '/d.h5', name: 'external', file: false, why: 'external raw storage' },
    ];
    cases.forEach((c, k) => {
      it(`${c.file ? 'reads from the file' : 'reads through libhdf5'}: ${c.name}${c.select ?? ''}${c.fields ? ` fields=${c.fields}` : ''} (${c.why})`, async () => {
        const id = await idOf(c.domain, c.name);
        const source = await store.readValues(c.domain, id, { select: c.select, fields: c.fields }, { kind: 'binary' });
        const parts: Buffer[] = [];
        try {
          expect(source.whole, 'streamed').to.equal(false);
          expect(source.readBy).to.equal(c.file ? 'fileBytePages' : 'libhdf5Pages');
          for await (const page of source) {
            for (const b of page) {
              if (c.file) expect(b.length).to.be.at.most(PAGE);
              parts.push(Buffer.from(b));
              source.recycle(b);
            }
          }
        } finally {
          await source.close();
        }
        expect(Buffer.concat(parts).toString('hex') === expected[k], "h5py's bytes").to.equal(true);
        expect(store.openIdCount()).to.equal(0);
      });
    });
  });

  describe('rangePages', () => {
    let dir: string;
    before(() => {
      dir = tempRoot('h5store-range-');
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const openFds = () => fs.readdirSync('/proc/self/fd').length;

    it('pages of a range, whole; undefined for another file or a range past its end', async () => {
      const file = path.join(dir, 'r.bin');
      const data = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 251));
      fs.writeFileSync(file, data);
      const st = fs.statSync(file, { bigint: true });
      const pool = new PagePool(4096);
      const got: Buffer[] = [];
      for await (const p of rangePages(file, st.dev, st.ino, 1000, 90_000, 4096, pool)!) {
        got.push(Buffer.from(p.wire));
        pool.give(p.pooled);
      }
      expect(Buffer.concat(got).equals(data.subarray(1000, 91_000))).to.equal(true);
      expect(got.length).to.equal(Math.ceil(90_000 / 4096));
      const fds = openFds();
      expect(rangePages(file, st.dev, st.ino, 50_000, 50_001, 4096, pool)).to.equal(undefined);
      expect(rangePages(file, st.dev, st.ino + 1n, 0, 10, 4096, pool)).to.equal(undefined);
      expect(openFds()).to.equal(fds);
    });

    it('stopped early: the reads in flight end, their buffers come back, the file is closed', async () => {
      const file = path.join(dir, 's.bin');
      fs.writeFileSync(file, Buffer.alloc(1 << 20, 3));
      const st = fs.statSync(file, { bigint: true });
      const taken = new Set<Buffer>();
      const buffers = {
        take: (n: number) => {
          const b = Buffer.alloc(n);
          taken.add(b);
          return b;
        },
        give: (b: Buffer) => taken.delete(b),
      };
      const fds = openFds();
      const pages = rangePages(file, st.dev, st.ino, 0, 1 << 20, 8192, buffers)!;
      const first = await pages.next();
      expect(first.done).to.equal(false);
      buffers.give(first.value!.pooled);
      await pages.return(undefined);
      expect(taken.size, 'buffers not given back').to.equal(0);
      expect(openFds()).to.equal(fds);
    });

    it('a file shortened during the read: an H5StoreError, and the file is closed', async () => {
      const file = path.join(dir, 't.bin');
      fs.writeFileSync(file, Buffer.alloc(1 << 20, 5));
      const st = fs.statSync(file, { bigint: true });
      const pool = new PagePool(8192);
      const fds = openFds();
      const pages = rangePages(file, st.dev, st.ino, 0, 1 << 20, 8192, pool)!;
      await pages.next();
      fs.truncateSync(file, 100_000);
      let error: unknown;
      try {
        for await (const p of pages) pool.give(p.pooled);
      } catch (e) {
        error = e;
      }
      expect((error as { name?: string })?.name).to.equal('H5StoreError');
      expect((error as Error).message).to.match(/shortened/);
      expect(openFds()).to.equal(fds);
    });
  });

  describe('over HTTP', () => {
    let srv: TestServer;
    let c: Client;
    let root: string;
    let id: string;
    const rows = 2048;
    const cols = 2048; // float32: 16 MiB
    before(async () => {
      root = tempRoot('h5store-filepages-http-');
      python(
        `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    f['big'] = (np.arange(${rows * cols}, dtype='<f4') * 0.25).reshape(${rows}, ${cols})
`,
        [path.join(root, 'big.h5')],
      );
      srv = await startServer({ root });
      c = new Client(srv.url, '/big.h5');
      const rootId = (await c.get('/')).json.root;
      id = (await c.get(`/groups/${rootId}/links/big`)).json.link.id;
    });
    after(async () => srv.stop());

    const binary = (select?: string) => c.request('GET', `/datasets/${id}/value`, { query: select ? { select } : {}, headers: { accept: 'application/octet-stream' } });
    const expected = (r0: number, r1: number) => {
      const out = Buffer.alloc((r1 - r0) * cols * 4);
      for (let i = 0; i < (r1 - r0) * cols; i++) out.writeFloatLE((r0 * cols + i) * 0.25, i * 4);
      return out;
    };

    it('streams whole rows and the whole dataset (16 MiB: many pages, the socket drains during reads)', async () => {
      for (const [sel, r0, r1] of [['[100:1700,:]', 100, 1700], [undefined, 0, rows]] as const) {
        const r = await binary(sel);
        expect(r.status).to.equal(200);
        expect(r.body!.equals(expected(r0, r1)), `bytes of ${sel ?? 'all'}`).to.equal(true);
      }
    });

    it('a client that goes away mid-read: the file is let go (a write follows), no descriptor of the file stays open', async () => {
      // descriptors of the data file (threads and connections come and go on their own)
      const fdsOf = () =>
        fs.readdirSync(`/proc/${srv.proc.pid}/fd`).filter((x) => {
          try {
            return fs.readlinkSync(`/proc/${srv.proc.pid}/fd/${x}`) === path.join(fs.realpathSync(root), 'big.h5');
          } catch {
            return false;
          }
        }).length;
      await binary('[0:10,:]');
      const before = fdsOf();
      for (let k = 0; k < 3; k++) {
        await new Promise<void>((resolve) => {
          const req = http.get(c.url(`/datasets/${id}/value`), { headers: { accept: 'application/octet-stream' } }, (res) => {
            let got = 0;
            res.on('data', (b: Buffer) => {
              got += b.length;
              if (got > 2 << 20) req.destroy();
            });
          });
          req.on('close', () => resolve());
          req.on('error', () => resolve());
        });
      }
      await sleep(300);
      const w = await c.request('PUT', `/datasets/${id}/value`, { query: { select: '[0:1,0:2]' }, raw: Buffer.from(new Float32Array([1.5, 2.5]).buffer), headers: { 'content-type': 'application/octet-stream' } });
      expect(w.status, w.text).to.equal(200);
      const back = await binary('[0:2,:]');
      expect(back.body!.readFloatLE(4)).to.equal(2.5);
      expect(back.body!.subarray(8).equals(expected(0, 2).subarray(8))).to.equal(true);
      expect(fdsOf()).to.be.at.most(before);
    });
  });
});
