/**
 * Ids clients make (store/objects/clientIds.ts) and the created times of bulk PUTs (store/objects/createdTimes.ts),
 * issue #25: the forms accepted, the alias map over a table held in memory (the reserved group's
 * `readTable`/`writeTable` in the server), stale rows of freed objects, compaction.
 */
import { expect } from 'chai';
import { type AliasTables, CLIENT_IDS, ClientIds, checkClientId, givenId, isClientIdForm } from '../../src/store/objects/clientIds.js';
import { CREATED_SKEW_S, entriesInCreatedOrder, givenCreated, inCreatedOrder } from '../../src/store/objects/createdTimes.js';
import { errorCode } from '../helpers/errors.js';

const ROOT = 'g-0123abcd-4567ef01-89ab-cdef01-234567';
/** A table in memory, as the reserved group keeps it: rows of `width` uint64 numbers. */
class MemTables implements AliasTables {
  rows: bigint[][] | undefined;
  writes = 0;
  readTable(name: string): bigint[][] | undefined {
    expect(name).to.equal(CLIENT_IDS);
    return this.rows?.map((r) => r.slice());
  }
  writeTable(name: string, rows: readonly (readonly bigint[])[], _width: number, from = 0): void {
    expect(name).to.equal(CLIENT_IDS);
    this.writes++;
    const cur = (this.rows ?? []).slice(0, from);
    this.rows = [...cur, ...rows.map((r) => r.slice())];
  }
}

describe('client ids: the forms accepted for a new object', () => {
  const ok: [string, 'group' | 'dataset' | 'datatype'][] = [
    ['g-0123abcd-4567ef01-0000-000000-000001', 'group'],
    ['d-0123abcd-4567ef01-ffff-abcdef-012345', 'dataset'],
    ['t-0123abcd-4567ef01-1a2b-3c4d5e-6f7a8b', 'datatype'],
  ];
  for (const [id, kind] of ok) it(`accepts ${id} for a ${kind}`, () => expect(checkClientId(id, kind, ROOT)).to.equal(id));
  const bad: [unknown, 'group' | 'dataset', string][] = [
    ['g-0123ABCD-4567ef01-0000-000000-000001', 'group', 'upper case'],
    ['g-0123abcd-4567-ef01-0000-000000000001', 'group', 'a UUID form'],
    ['d-0123abcd-4567ef01-0000-000000-000001', 'group', 'a dataset prefix for a group'],
    ['g-ffffffff-4567ef01-0000-000000-000001', 'group', "another root's digits"],
    ['g-0123abcd-4567ef01-0000-000000-00001', 'group', 'too short'],
    [42, 'group', 'a number'],
  ];
  for (const [id, kind, what] of bad) it(`refuses ${what} with 400`, () => expect(errorCode(() => checkClientId(id, kind, ROOT))).to.equal('BadRequest'));
  it('recognizes the form of a root id given to PUT /', () => {
    expect(isClientIdForm(ROOT, 'group')).to.equal(true);
    expect(isClientIdForm(ROOT.replace(/^g/, 'd'), 'group')).to.equal(false);
    expect(isClientIdForm('g-123', 'group')).to.equal(false);
  });
  it('givenId: none when absent or null, 409 when taken', () => {
    const owner = { rootId: ROOT, idTaken: (id: string) => id.endsWith('000001') };
    expect(givenId(owner, {}, 'group')).to.equal(undefined);
    expect(givenId(owner, { id: null }, 'group')).to.equal(undefined);
    expect(errorCode(() => givenId(owner, { id: 'g-0123abcd-4567ef01-0000-000000-000001' }, 'group'))).to.equal('Conflict');
    expect(givenId(owner, { id: 'g-0123abcd-4567ef01-0000-000000-000002' }, 'group')).to.equal('g-0123abcd-4567ef01-0000-000000-000002');
  });
});

describe('client ids: the alias map and its table', () => {
  const id = (n: number, p = 'g') => `${p}-0123abcd-4567ef01-0000-000000-${n.toString(16).padStart(6, '0')}`;

  it('aliases are known at once, written by one save per request, and read back after a reload', () => {
    const t = new MemTables();
    const m = new ClientIds();
    m.load(t, () => 0);
    for (let i = 1; i <= 300; i++) m.add(id(i), { addr: BigInt(1000 + i), gen: 0, kind: 'group' });
    m.add(id(7, 'd'), { addr: 5000n, gen: 2, kind: 'dataset' });
    expect(m.lookup(id(5))).to.deep.equal({ addr: 1005n, gen: 0, kind: 'group' });
    expect(m.idAt(5000n)).to.equal(id(7, 'd'));
    expect(t.writes).to.equal(0);
    m.save(t);
    m.save(t); // nothing new: no write
    expect(t.writes).to.equal(1);
    expect(t.rows).to.have.length(301);
    const again = new ClientIds();
    again.load(t, (a) => (a === 5000n ? 2 : 0));
    expect(again.size).to.equal(301);
    expect(again.lookup(id(7, 'd'))).to.deep.equal({ addr: 5000n, gen: 2, kind: 'dataset' });
    expect(again.idAt(1300n)).to.equal(id(300));
  });

  it('rows whose generation is not the address\'s current one name nothing (a freed object)', () => {
    const t = new MemTables();
    const m = new ClientIds();
    m.load(t, () => 0);
    m.add(id(1), { addr: 10n, gen: 0, kind: 'group' });
    m.add(id(2), { addr: 20n, gen: 0, kind: 'group' });
    m.save(t);
    const again = new ClientIds();
    again.load(t, (a) => (a === 10n ? 1 : 0));
    expect(again.lookup(id(1))).to.equal(undefined);
    expect(again.idAt(10n)).to.equal(undefined);
    expect(again.lookup(id(2))?.addr).to.equal(20n);
  });

  it('freed objects are forgotten; their rows stay until they outnumber the live ones, then the table is compacted', () => {
    const t = new MemTables();
    const m = new ClientIds();
    m.load(t, () => 0);
    for (let i = 1; i <= 200; i++) m.add(id(i), { addr: BigInt(i), gen: 0, kind: 'group' });
    m.save(t);
    const writes = t.writes;
    for (let i = 1; i <= 90; i++) expect(m.drop(t, [BigInt(i)])).to.deep.equal([id(i)]);
    expect(t.writes, 'no rewrite while the stale rows are fewer').to.equal(writes);
    expect(t.rows).to.have.length(200);
    for (let i = 91; i <= 120; i++) m.drop(t, [BigInt(i)]);
    expect(t.writes).to.be.greaterThan(writes);
    expect(t.rows!.length).to.be.at.most(200 - 101 + 1);
    expect(m.lookup(id(1))).to.equal(undefined);
    expect(m.lookup(id(150))?.addr).to.equal(150n);
    const again = new ClientIds();
    again.load(t, (a) => (a <= 120n ? 1 : 0));
    expect(again.size).to.equal(80);
  });

  it('an alias added and dropped in the same write is never stored', () => {
    const t = new MemTables();
    const m = new ClientIds();
    m.load(t, () => 0);
    m.add(id(1), { addr: 1n, gen: 0, kind: 'group' });
    m.add(id(2), { addr: 2n, gen: 0, kind: 'group' });
    m.drop(t, [1n]);
    m.save(t);
    expect(t.rows).to.have.length(1);
  });
});

describe('created times of bulk PUTs', () => {
  const now = 1_800_000_000;
  it('a time is taken as given up to the skew ahead of the server, later ones count as now', () => {
    expect(givenCreated(undefined, 'x', now)).to.equal(undefined);
    expect(givenCreated(null, 'x', now)).to.equal(undefined);
    expect(givenCreated(now - 3600, 'x', now)).to.equal(now - 3600);
    expect(givenCreated(now + CREATED_SKEW_S, 'x', now)).to.equal(now + CREATED_SKEW_S);
    expect(givenCreated(now + CREATED_SKEW_S + 1, 'x', now)).to.equal(now);
    for (const bad of ['today', -1, Infinity, NaN, [1]]) expect(errorCode(() => givenCreated(bad, 'x', now)), String(bad)).to.equal('BadRequest');
  });
  it('items in the order of their times; ties keep their request order, an item without one goes right after the one before it', () => {
    const items = [
      { n: 'a', t: 3 },
      { n: 'b', t: 1 },
      { n: 'c', t: undefined },
      { n: 'd', t: 1 },
      { n: 'e', t: 2 },
    ];
    expect(inCreatedOrder(items, (i) => i.t).map((i) => i.n)).to.deep.equal(['b', 'c', 'd', 'e', 'a']);
    expect(inCreatedOrder([{ n: 'x' }, { n: 'y' }], () => undefined).map((i) => i.n)).to.deep.equal(['x', 'y']);
    const real = Date.now() / 1000;
    expect(entriesInCreatedOrder({ z: { created: real - 1 }, y: { created: real - 2 }, x: {} }, 'attribute').map(([k]) => k)).to.deep.equal(['y', 'x', 'z']);
  });
});
