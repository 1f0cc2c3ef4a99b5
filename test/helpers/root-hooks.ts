/**
 * Root hooks of the whole suite (loaded by .mocharc.json): the run fails when any error that is
 * not an `H5StoreError` reached the error middleware of a server the tests started (issue 7
 * item 3: every failure is a deliberate status with a message, never an accident).
 *
 * In a serial run (`npx mocha ...`) `afterAll` runs once, after every file; in `npm test`'s
 * parallel run (`mocha --parallel`) once after each file, in the worker process that ran it (a
 * worker runs one file after another): the shared kit is stopped (the next write suite in that
 * worker starts another) and the errors are reported with that file, then forgotten.
 */
import fs from 'node:fs';
import { type Cost, costsNow } from './costs.js';
import { currentTest, removeTempRoots, serverLogsRead, unexpectedErrors } from './server.js';
import { stopSharedKit } from './writekit.js';

/**
 * A worker of a parallel run with H5STORE_TEST_TIMES set: each file's wall time, CPU time and
 * costs are measured here, where the file runs, and appended to
 * `<H5STORE_TEST_TIMES>.files.jsonl` for the timing reporter (which, in the main process, sees a
 * file's events only once it has finished).
 */
const fileTimes = process.env.MOCHA_WORKER_ID !== undefined && process.env.H5STORE_TEST_TIMES ? `${process.env.H5STORE_TEST_TIMES}.files.jsonl` : undefined;
let fileStart: { t0: number; cpu: number; costs: Record<string, Cost> } | undefined;

/**
 * CPU time of this process and of the children it has reaped (servers and tools the file started
 * and stopped; not the long-lived Python worker), ms: /proc/self/stat utime + stime + cutime +
 * cstime, in clock ticks of 10 ms.
 */
function cpuMsWithChildren(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
}

export const mochaHooks = {
  beforeAll() {
    if (fileTimes) fileStart = { t0: performance.now(), cpu: cpuMsWithChildren(), costs: costsNow() };
  },
  beforeEach(this: Mocha.Context) {
    currentTest.title = this.currentTest?.fullTitle() ?? '';
  },
  async afterAll(this: Mocha.Context) {
    await stopSharedKit();
    if (fileTimes && fileStart) {
      const file = this.test?.parent?.suites.find((s) => s.file)?.file;
      const costs: Record<string, Cost> = {};
      for (const [k, c] of Object.entries(costsNow())) {
        const was = fileStart.costs[k] ?? { n: 0, ms: 0 };
        if (c.n > was.n) costs[k] = { n: c.n - was.n, ms: Math.round(c.ms - was.ms) };
      }
      const ms = Math.round(performance.now() - fileStart.t0);
      fs.appendFileSync(fileTimes, JSON.stringify({ file, ms, cpuMs: cpuMsWithChildren() - fileStart.cpu, costs, worker: process.env.MOCHA_WORKER_ID }) + '\n');
    }
    // the last log lines of the servers that have exited (instead of a fixed 200 ms after every file)
    await serverLogsRead();
    removeTempRoots();
    if (unexpectedErrors.length) {
      const list = unexpectedErrors.map((e) => `- during "${e.test}":\n  ${e.line}`).join('\n');
      const n = unexpectedErrors.length;
      unexpectedErrors.length = 0;
      throw new Error(`${n} error(s) that are not H5StoreError reached the error middleware:\n${list}`);
    }
  },
};
