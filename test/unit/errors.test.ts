import { expect } from 'chai';
import { H5StoreError, STATUS, badRequest, unavailable } from '../../src/errors.js';

describe('errors', () => {
  it('maps codes to statuses', () => {
    expect(badRequest('x').status).to.equal(400);
    expect(new H5StoreError('Gone', 'y').status).to.equal(STATUS.Gone);
  });

  it('an error carries its Retry-After as a field; the answer headers name it (issue #27 item 4)', () => {
    const rows: [H5StoreError, Record<string, string>][] = [
      [unavailable('busy', 1), { 'Retry-After': '1' }],
      [unavailable('busy', 2.2), { 'Retry-After': '3' }], // whole seconds, rounded up
      [unavailable('busy', 0), { 'Retry-After': '1' }], // at least 1 s
      [new H5StoreError('TooManyRequests', 'slow down', { retryAfter: 30 }), { 'Retry-After': '30' }],
      [new H5StoreError('MethodNotAllowed', 'no', { headers: { Allow: 'GET, HEAD' } }), { Allow: 'GET, HEAD' }],
      [new H5StoreError('Unavailable', 'both', { retryAfter: 5, headers: { 'X-A': 'b' } }), { 'X-A': 'b', 'Retry-After': '5' }],
      [badRequest('none'), {}],
    ];
    for (const [e, want] of rows) expect(e.answerHeaders(), e.message).to.deep.equal(want);
    expect(unavailable('busy', 4).retryAfter).to.equal(4);
    expect(badRequest('x').retryAfter).to.equal(undefined);
  });
});
