/**
 * A mocha reporter that prints like `spec` and, when the environment names a file in
 * H5STORE_TEST_TIMES, writes there the wall time of each test file (first suite begin to last
 * suite end, hooks included, in ms), what test/helpers/costs.ts counted in it (server starts,
 * python and h5dump runs), the slowest tests and hooks, and the failures. Used to find where the
 * suite's time goes (docs/architecture.md, "Tests"): `H5STORE_TEST_TIMES=/tmp/t.json npx mocha
 * --reporter ./test/helpers/timing-reporter.cjs test/api/foo.test.ts`, or `npm test -- --reporter
 * ./test/helpers/timing-reporter.cjs` (a parallel run: each worker measures its files itself, in
 * the root hooks, since this reporter sees a file's events only once it has finished; they add its CPU
 * time, children it reaped included: `cpuMs`).
 */
'use strict';
const Mocha = require('mocha');
const fs = require('node:fs');
const path = require('node:path');
const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END, EVENT_TEST_FAIL, EVENT_HOOK_END, EVENT_RUN_END } = Mocha.Runner.constants;

class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map(); // file -> { ms, tests, open, since }
    const tests = [];
    const hooks = [];
    const failed = [];
    const started = Date.now();
    if (process.env.H5STORE_TEST_TIMES) fs.rmSync(`${process.env.H5STORE_TEST_TIMES}.files.jsonl`, { force: true });
    const rel = (f) => (f ? path.relative(process.cwd(), f) : '(none)');
    const entry = (f) => {
      let e = files.get(f);
      if (!e) files.set(f, (e = { ms: 0, tests: 0, hookMs: 0, open: 0, since: 0, costs: {}, costsAtBegin: {} }));
      return e;
    };
    // counted by test/helpers/costs.ts: server starts, python and h5dump runs
    const costNow = () => JSON.parse(JSON.stringify(globalThis.__h5storeTestCosts ?? {}));
    const addCosts = (e) => {
      const now = costNow();
      for (const [k, c] of Object.entries(now)) {
        const was = e.costsAtBegin[k] ?? { n: 0, ms: 0 };
        const acc = (e.costs[k] ??= { n: 0, ms: 0 });
        acc.n += c.n - was.n;
        acc.ms += Math.round(c.ms - was.ms);
      }
    };
    runner.on(EVENT_SUITE_BEGIN, (s) => {
      if (!s.file || s.root) return;
      const e = entry(rel(s.file));
      if (e.open++ === 0) {
        e.since = Date.now();
        e.costsAtBegin = costNow();
      }
    });
    runner.on(EVENT_SUITE_END, (s) => {
      if (!s.file || s.root) return;
      const e = entry(rel(s.file));
      if (--e.open === 0) {
        e.ms += Date.now() - e.since;
        addCosts(e);
      }
    });
    runner.on(EVENT_TEST_END, (t) => {
      entry(rel(t.file)).tests++;
      tests.push({ file: rel(t.file), title: t.fullTitle(), ms: t.duration ?? 0 });
    });
    runner.on(EVENT_TEST_FAIL, (t, err) => failed.push({ file: rel(t.file ?? t.parent?.file), title: t.fullTitle(), error: String(err?.message ?? err).slice(0, 500) }));
    runner.on(EVENT_HOOK_END, (h) => {
      const f = rel(h.file ?? h.parent?.file);
      if (f !== '(none)') entry(f).hookMs += h.duration ?? 0;
      hooks.push({ file: f, title: h.fullTitle(), ms: h.duration ?? 0 });
    });
    // a parallel run: the workers measured each file where it ran (test/helpers/root-hooks.ts)
    const workerFiles = () => {
      const out = process.env.H5STORE_TEST_TIMES;
      try {
        return fs.readFileSync(`${out}.files.jsonl`, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      } catch {
        return [];
      }
    };
    runner.once(EVENT_RUN_END, () => {
      const out = process.env.H5STORE_TEST_TIMES;
      if (!out) return;
      const measured = new Map(workerFiles().map((w) => [rel(w.file), w]));
      fs.rmSync(`${out}.files.jsonl`, { force: true });
      const byFile = [...files].map(([file, e]) => {
        const w = measured.get(file);
        return w ? { file, ms: w.ms, cpuMs: w.cpuMs, tests: e.tests, hookMs: e.hookMs, costs: w.costs, worker: w.worker } : { file, ms: e.ms, tests: e.tests, hookMs: e.hookMs, costs: e.costs };
      }).sort((a, b) => b.ms - a.ms);
      tests.sort((a, b) => b.ms - a.ms);
      hooks.sort((a, b) => b.ms - a.ms);
      const load = require('node:os').loadavg();
      fs.writeFileSync(out, JSON.stringify({ wallMs: Date.now() - started, load, failed, byFile,
        costs: costNow(), slowTests: tests.slice(0, 300), slowHooks: hooks.slice(0, 150) }, null, 1));
    });
  }
}
module.exports = TimingReporter;
