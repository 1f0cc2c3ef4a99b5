import { expect } from 'chai';
import { H5StoreError, STATUS, badRequest } from '../../src/errors.js';

describe('errors', () => {
  it('maps codes to statuses', () => {
    expect(badRequest('x').status).to.equal(400);
    expect(new H5StoreError('Gone', 'y').status).to.equal(STATUS.Gone);
  });
});
