/**
 * The pure parts of issue #24 items 7-11 and 16: the sliced JSON parser (the same value as
 * `parseJsonBody`, the event loop turning meanwhile), the password threads (one check per
 * address at a time, fair turns, a bounded queue), the object walk (the objects and first paths
 * of `H5Ovisit2`, linear in depth), the path-depth and answer-size limits, Basic parsing.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseBasic } from '../../src/auth/authenticate.js';
import { PasswordPool } from '../../src/auth/passwordPool.js';
import { parseJsonBody } from '../../src/codec/json.js';
import { parseJsonSliced } from '../../src/codec/jsonSlices.js';
import { H5StoreError } from '../../src/errors.js';
import * as C from '../../src/hdf5/constants.js';
import { type Hid, H5Ovisit2, peekI32, peekU64 } from '../../src/hdf5/lib.js';
import { ObjectWalk, closeFile, openFile, walkObjects } from '../../src/hdf5/objects.js';
import { checkAnswerSize, checkPathDepth } from '../../src/store/access/limits.js';
import { fixturePath, HAVE_SHARED, SHARED_FIXTURES, tempRoot } from '../helpers/server.js';
import { thrownBy } from '../helpers/errors.js';
import { rng } from '../helpers/random.js';

describe('codec/jsonSlices parseJsonSliced (issue #24 item 7)', () => {
  const same = [
    '{"value": [1,2,3,[4,5,[6,7]],{"a":[1,2,3]}], "b": {"c": "d\\\\\\"]", "e": [NaN, Infinity, -Infinity, 12345678901234567890]}}',
    ' [ [1,2] , [3 , 4] ,[5,6],"x,y]"] ',
    '{"__proto__": [1,2,3,4,5,6,7,8,9,10,11,12], "k": [[1,2,3],[4,5,6],[7,8,9],[10,11,12]]}',
    '[]',
    '{}',
    '[[],[[]],{}]',
    '{"a":{"b":{"c":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}}, "a": [9]}',
    '["\\u00e9\\\\", "é", "日本語日本語日本語日本語", [1.5e3, -0.0, 1e-7]]',
  ];
  const bad = [
    '[1,2,]',
    '[,1,2]',
    '[1 2]',
    '{"a" [1,2,3,4,5,6,7,8,9]}',
    '{"a": x[1,2,3,4,5,6,7,8,9,10]}',
    '[1,2,3',
    '[1,2,3]]',
    '{"a":1,,"b":2}',
    '[x [1,2,3,4,5,6,7,8,9,10,11]]',
    '[[1,2,3,4,5,6,7,8,9,10,11] x]',
    '{[1,2,3,4,5,6,7,8,9,10,11,12,13]: 1}',
    '{"a": 1 : [1,2,3,4,5,6,7,8,9,10]}',
    '["unterminated, 1, 2, 3, 4, 5, 6]',
  ];

  it('gives what parseJsonBody gives, for every slice size (a table, then 2,000 random documents)', async () => {
    for (const sliceBytes of [4, 8, 16, 1000]) {
      for (const t of same) {
        const got = await parseJsonSliced(Buffer.from(t), { sliceBytes, maxDepth: 100 });
        expect(got, `${sliceBytes}: ${t}`).to.deep.equal(parseJsonBody(t));
        if (t.includes('__proto__')) expect(Object.getPrototypeOf(got)).to.equal(Object.prototype);
      }
    }
    const r = rng(24);
    const value = (d: number): unknown => {
      const x = r();
      if (d > 5 || x < 0.3) return [1, 'a,]}"', 2.5, null, true, 'é', -3e-5][Math.floor(r() * 7)];
      if (x < 0.65) return Array.from({ length: Math.floor(r() * 8) }, () => value(d + 1));
      const o: Record<string, unknown> = {};
      for (let i = 0; i < r() * 6; i++) o[`k${i}"{`] = value(d + 1);
      return o;
    };
    for (let i = 0; i < 2000; i++) {
      const text = JSON.stringify(value(0), null, i % 2 ? 1 : undefined);
      expect(await parseJsonSliced(Buffer.from(text), { sliceBytes: 1 + (i % 40) })).to.deep.equal(JSON.parse(text));
    }
  });

  it('refuses what parseJsonBody refuses (400), and the depth limit names maxJsonDepth', async () => {
    for (const sliceBytes of [4, 8, 1000]) {
      for (const t of bad) {
        expect(() => parseJsonBody(t), t).to.throw();
        const e = await thrownBy(() => parseJsonSliced(Buffer.from(t), { sliceBytes }));
        expect(e.status, `${sliceBytes}: ${t}`).to.equal(400);
        expect(e.message).to.match(/Unable to load JSON body/);
      }
    }
    const deep = '['.repeat(50) + '1,2,3'.repeat(10) + ']'.repeat(50);
    expect((await thrownBy(() => parseJsonSliced(Buffer.from(deep), { sliceBytes: 8, maxDepth: 20 }))).message).to.match(/maxJsonDepth/);
  });

  it('lets the event loop turn while it parses a large body', async () => {
    const n = 400_000;
    const text = Buffer.from(`{"value": [${Array.from({ length: n }, (_, i) => i * 0.5).join(',')}], "shape": [${n}]}`);
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    const v = (await parseJsonSliced(text, { sliceBytes: 64 * 1024 })) as { value: number[] };
    clearInterval(tick);
    expect(v.value).to.have.length(n);
    expect(v.value[n - 1]).to.equal((n - 1) * 0.5);
    expect(turns, 'timer turns during the parse').to.be.above(5);
  });
});

describe('auth/passwordPool PasswordPool (issue #24 item 8)', () => {
  const job = (password: string) => ({ password, salt: Buffer.alloc(16, 1), N: 2 ** 10, r: 8, p: 1, keylen: 32 });

  it('one check per address at a time, addresses in fair turns, a bounded queue (503 with Retry-After)', async () => {
    const pool = new PasswordPool({ threads: 1, maxQueue: 3 });
    try {
      const order: string[] = [];
      const run = (pw: string, from: string, priority = false) =>
        pool.scrypt(job(pw), { priority, from }).then(
          () => void order.push(pw),
          (e: H5StoreError) => void order.push(`${pw}:${e.status}:${e.answerHeaders()['Retry-After']}`),
        );
      // a1 runs; a2, a3 (same address) and b1 wait: b1 goes before a2 and a3
      const all = [run('a1', 'A'), run('a2', 'A'), run('a3', 'A'), run('b1', 'B'), run('c1', 'C')];
      await Promise.all(all);
      expect(order).to.deep.equal(['c1:503:1', 'a1', 'b1', 'a2', 'a3']);
      // a known login goes first
      order.length = 0;
      await Promise.all([run('x1', 'X'), run('x2', 'X'), run('y1', 'Y'), run('k1', 'K', true)]);
      expect(order).to.deep.equal(['x1', 'k1', 'y1', 'x2']);
    } finally {
      pool.close();
    }
  });

  it('two lanes: checks of addresses that failed recently never take the first thread', async () => {
    const pool = new PasswordPool({ threads: 2, maxQueue: 8 });
    try {
      const order: string[] = [];
      const run = (pw: string, from: string, suspect: boolean) => pool.scrypt({ ...job(pw), N: 2 ** 13 }, { from, suspect }).then(() => void order.push(pw));
      await Promise.all([run('s1', 'S1', true), run('s2', 'S2', true), run('s3', 'S3', true), run('s4', 'S4', true), run('c1', 'C1', false)]);
      // the suspect checks take turns on their one thread; the clean one ran at once beside them
      expect(order.indexOf('c1'), order.join()).to.be.below(order.indexOf('s3'));
      expect(order.filter((x) => x.startsWith('s'))).to.deep.equal(['s1', 's2', 's3', 's4']);
    } finally {
      pool.close();
    }
  });

  it('computes the same key as node:crypto, off libuv\'s pool', async () => {
    const { scryptSync } = await import('node:crypto');
    const pool = new PasswordPool({ threads: 2, maxQueue: 4 });
    try {
      const key = await pool.scrypt(job('s3cret'));
      expect(key.equals(scryptSync('s3cret', Buffer.alloc(16, 1), 32, { N: 2 ** 10, r: 8, p: 1 }))).to.equal(true);
    } finally {
      pool.close();
    }
  });
});

describe('auth/authenticate parseBasic (issue #24 item 16)', () => {
  const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');
  it('user and password of well-formed credentials; 400 for what RFC 7617 forbids', async () => {
    expect(parseBasic(b64('alice:pw:with:colons é'))).to.deep.equal({ user: 'alice', password: 'pw:with:colons é' });
    for (const [what, v] of [
      ['NUL', b64('a\0b:pw')],
      ['control character in the password', b64('alice:p\tw')],
      ['DEL', b64('alice:p\x7fw')],
      ['invalid UTF-8', b64(Buffer.from([0x61, 0xc3, 0x28, 0x3a, 0x70]))],
      ['no colon', b64('alice')],
      ['empty user', b64(':pw')],
      ['not base64', 'a b'],
    ]) {
      const e = await thrownBy(() => parseBasic(v));
      expect(e.status, what).to.equal(400);
    }
  });
});

describe('store/limits checkPathDepth, checkAnswerSize (issue #24 item 9)', () => {
  it('counts the components of a path (empty ones do not count) and names the limit', () => {
    for (const [p, n] of [
      ['/', 0],
      ['a', 1],
      ['/a/b', 2],
      ['//a//b/', 2],
      ['a/b/c', 3],
    ] as [string, number][]) {
      expect(() => checkPathDepth(p, n)).to.not.throw();
      if (n > 0) expect(() => checkPathDepth(p, n - 1)).to.throw(/max_path_depth/);
    }
    expect(() => checkAnswerSize(10, 10, 'ids')).to.not.throw();
    expect(() => checkAnswerSize(11, 10, 'ids')).to.throw(/max_objects_per_answer/);
    expect(() => checkAnswerSize(11, undefined, 'ids')).to.not.throw();
  });
});

describe('hdf5/objects ObjectWalk (issue #24 item 9)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = tempRoot('h5store-walk-');
    execFileSync('/usr/bin/python3', [
      '-c',
      `import h5py, sys
with h5py.File(sys.argv[1], "w") as f:
    g = f
    for i in range(300): g = g.create_group("g")
with h5py.File(sys.argv[2], "w", libver="latest") as f:
    g = f.create_group("big")
    for i in range(5000): g.create_group("x%04d" % i) if i % 3 else g.create_dataset("d%04d" % i, data=i)
    f["again"] = f["big"]
    f["big/x0001/up"] = f["big"]
    f["soft"] = h5py.SoftLink("/big")`,
      path.join(dir, 'deep.h5'),
      path.join(dir, 'wide.h5'),
    ]);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** What H5Ovisit2 finds: address -> [kind, first path]. */
  function visit(fid: Hid): Map<bigint, [string, string]> {
    const out = new Map<bigint, [string, string]>();
    const kinds: Record<number, string> = { [C.H5O_TYPE_GROUP]: 'group', [C.H5O_TYPE_DATASET]: 'dataset', [C.H5O_TYPE_NAMED_DATATYPE]: 'datatype' };
    H5Ovisit2(fid, C.H5_INDEX_NAME, C.H5_ITER_INC, (_o: Hid, name: string, info: bigint) => (out.set(BigInt(peekU64(info, 8)), [kinds[peekI32(info, 16)]!, name]), 0), null, C.H5O_INFO_BASIC);
    return out;
  }

  it("finds H5Ovisit2's objects and first paths (every fixture, a deep chain, a wide group with cycles), in steps too", () => {
    const files = [path.join(dir, 'deep.h5'), path.join(dir, 'wide.h5'), fixturePath('tall.h5')];
    if (HAVE_SHARED) for (const n of fs.readdirSync(SHARED_FIXTURES)) if (n.endsWith('.h5') && n !== 'notahdf5file.h5') files.push(path.join(SHARED_FIXTURES, n));
    for (const file of files) {
      const fid = openFile(file, false);
      try {
        const want = visit(fid);
        const got = walkObjects(fid, { paths: true, order: 'name' });
        expect(new Map([...got.kinds].map(([a, k]) => [a, [k, got.paths!.get(a)]])), file).to.deep.equal(want);
        // native order, in small steps: the same objects
        const w = new ObjectWalk(fid);
        let steps = 0;
        while (!w.step(0)) steps++;
        expect(new Set(w.kinds.keys()), file).to.deep.equal(new Set(want.keys()));
        if (want.size > 100) expect(steps, file).to.be.above(1);
      } finally {
        closeFile(fid);
      }
    }
  });

  it('stops at max objects (truncated), closing what it opened', () => {
    const fid = openFile(path.join(dir, 'wide.h5'), false);
    try {
      const w = walkObjects(fid, { max: 501 });
      expect(w.truncated).to.equal(true);
      expect(w.kinds.size).to.equal(501);
      expect(walkObjects(fid, { max: 100_000 }).truncated).to.equal(false);
    } finally {
      closeFile(fid);
    }
  });
});
