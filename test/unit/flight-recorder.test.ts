/**
 * The flight record (src/ops/flightRecorder.ts): the last requests of a process in a ring that
 * outlives it; what was in flight and what ended, after wrapping around and with torn slots.
 */
import { expect } from 'chai';
import { FlightRecorder, RECORD_BYTES, SLOTS, parseFlightRecord } from '../../src/ops/flightRecorder.js';

describe('flight record of requests', () => {
  it('tells the requests in flight from the last ones that ended, oldest first', () => {
    const mem = Buffer.alloc(RECORD_BYTES);
    const r = new FlightRecorder(mem, -1);
    const a = r.start('GET', '/groups/g-1?domain=/a.h5');
    const b = r.start('PUT', '/datasets/d-1/value?select=[0:1]');
    r.start('DELETE', '/?domain=/x.h5');
    r.end(a);
    r.end(b);
    const got = parseFlightRecord(mem);
    expect(got.last.map((x) => x.request)).to.deep.equal(['GET /groups/g-1?domain=/a.h5', 'PUT /datasets/d-1/value?select=[0:1]']);
    expect(got.inFlight.map((x) => x.request)).to.deep.equal(['DELETE /?domain=/x.h5']);
    expect(got.inFlight[0].end).to.equal(undefined);
    expect(got.last[0].end).to.be.a('string');
  });

  it(`keeps the last ${SLOTS} after wrapping around; an old request ending late changes nothing`, () => {
    const mem = Buffer.alloc(RECORD_BYTES);
    const r = new FlightRecorder(mem, -1);
    const first = r.start('GET', '/first');
    for (let i = 0; i < 3 * SLOTS; i++) r.end(r.start('GET', `/n${i}`));
    r.end(first); // its slot is another request's now
    const got = parseFlightRecord(mem);
    expect(got.inFlight).to.deep.equal([]);
    expect(got.last).to.have.length(SLOTS);
    expect(got.last[0].request).to.equal(`GET /n${2 * SLOTS}`);
    expect(got.last[SLOTS - 1].request).to.equal(`GET /n${3 * SLOTS - 1}`);
  });

  it('cuts long URLs (UTF-8 whole characters) and skips torn or empty slots, and anything that is not a record', () => {
    const mem = Buffer.alloc(RECORD_BYTES);
    const r = new FlightRecorder(mem, -1);
    r.start('GET', '/' + 'é'.repeat(500));
    const torn = r.start('GET', '/torn');
    // a slot half written when the process died: its start time is garbage
    const at = 32 + (torn % SLOTS) * 256;
    mem.writeDoubleLE(Number.NaN, at + 8);
    const got = parseFlightRecord(mem);
    expect(got.inFlight).to.have.length(1);
    expect(Buffer.byteLength(got.inFlight[0].request)).to.be.at.most(230);
    expect(got.inFlight[0].request).to.match(/^GET \/é+$/);
    expect(parseFlightRecord(Buffer.from('not a record at all, no, not at all'))).to.deep.equal({ inFlight: [], last: [] });
  });
});
