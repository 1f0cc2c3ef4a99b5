/**
 * The pure parts of conditional GETs (src/http/conditional.ts): validator matching and the
 * ETag memo. The middleware itself is tested over HTTP in test/api/live-feed.test.ts.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { EtagMemo, modifiedSinceHits, noneMatchHits } from '../../src/http/conditional.js';

describe('conditional GETs: validators and tags', () => {
  it('noneMatchHits compares weakly, in lists, with *', () => {
    const table: [string, string, boolean][] = [
      ['W/"abc"', 'W/"abc"', true],
      ['"abc"', 'W/"abc"', true],
      ['W/"x", W/"abc"', 'W/"abc"', true],
      ['*', 'W/"abc"', true],
      ['W/"abd"', 'W/"abc"', false],
      ['', 'W/"abc"', false],
    ];
    for (const [header, tag, want] of table) expect(noneMatchHits(header, tag), header).to.equal(want);
  });

  it('modifiedSinceHits works in whole seconds and refuses dates it cannot read', () => {
    const t = Date.UTC(2026, 10, 28, 5, 0, 0, 400);
    const table: [string, boolean][] = [
      [new Date(t - 400).toUTCString(), true],
      [new Date(t + 5000).toUTCString(), true],
      [new Date(t - 1400).toUTCString(), false],
      ['not a date', false],
    ];
    for (const [header, want] of table) expect(modifiedSinceHits(header, t), header).to.equal(want);
  });

  it('EtagMemo: the SHA-1 of the inputs and the build, the same tag again, another for other inputs', () => {
    const memo = new EtagMemo('b1', 3);
    const want = `W/"${createHash('sha1').update('v\u0000/x').update('b1').digest('base64url').slice(0, 22)}"`;
    expect(memo.of('v\u0000/x')).to.equal(want);
    expect(memo.of('v\u0000/x')).to.equal(want);
    expect(memo.of('v2\u0000/x')).to.not.equal(want);
    expect(new EtagMemo('b2').of('v\u0000/x'), 'another build or settings').to.not.equal(want);
    // bounded: past `max` entries it starts again, with the same answers
    for (let i = 0; i < 10; i++) memo.of(`k${i}`);
    expect(memo.of('v\u0000/x')).to.equal(want);
  });
});
