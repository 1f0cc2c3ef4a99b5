/**
 * Root hooks of the whole suite (loaded by .mocharc.json): the run fails when any error that is
 * not an `H5StoreError` reached the error middleware of a server the tests started (issue 7
 * item 3: every failure is a deliberate status with a message, never an accident).
 */
import { currentTest, unexpectedErrors } from './server.js';
import { stopSharedKit } from './writekit.js';

export const mochaHooks = {
  beforeEach(this: Mocha.Context) {
    currentTest.title = this.currentTest?.fullTitle() ?? '';
  },
  async afterAll() {
    await stopSharedKit();
    // let the servers' last log lines arrive
    await new Promise((r) => setTimeout(r, 200));
    if (unexpectedErrors.length) {
      const list = unexpectedErrors.map((e) => `- during "${e.test}":\n  ${e.line}`).join('\n');
      throw new Error(`${unexpectedErrors.length} error(s) that are not H5StoreError reached the error middleware:\n${list}`);
    }
  },
};
