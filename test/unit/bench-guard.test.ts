/**
 * The benchmarks' regression guard (bench/guard.ts, issue #29): the previous release's figures
 * read from bench/README.md's table, compared with a run's, flagged beyond 20% worse, recorded.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { type Figure, compareFigure, parseRecorded, recordFigures, worseBy } from '../../bench/guard.js';

const TABLE = `# Benchmarks

text before

<!-- previous-release:begin -->
| id | figure | kind | better | scenario |
|---|---|---|---|---|
| gzip.again | 1.069 | reference | higher | binary GET gzip region again, over h5py |
| write.post | 2.89 | absolute | lower | POST /datasets |
<!-- previous-release:end -->

text after
`;

const fig = (id: string, figure: number, kind: Figure['kind'] = 'reference', better: Figure['better'] = 'higher'): Figure => ({ id, figure, kind, better, scenario: id });

describe('bench guard: the previous release figures', () => {
  it('reads the rows between the markers', () => {
    const m = parseRecorded(TABLE);
    expect([...m.keys()]).to.deep.equal(['gzip.again', 'write.post']);
    expect(m.get('write.post')).to.deep.equal({ id: 'write.post', figure: 2.89, kind: 'absolute', better: 'lower', scenario: 'POST /datasets' });
  });

  it('has no figures without the markers, and refuses malformed rows naming the line', () => {
    expect(parseRecorded('no table here').size).to.equal(0);
    const bad = (row: string) => TABLE.replace('| write.post | 2.89 | absolute | lower | POST /datasets |', row);
    expect(() => parseRecorded(bad('| write.post | 2.89 | absolute | lower |'))).to.throw(/line 9: expected 5 cells/);
    expect(() => parseRecorded(bad('| write.post | fast | absolute | lower | x |'))).to.throw(/positive number/);
    expect(() => parseRecorded(bad('| write.post | 0 | absolute | lower | x |'))).to.throw(/positive number/);
    expect(() => parseRecorded(bad('| write.post | 2 | relative | lower | x |'))).to.throw(/kind must be/);
    expect(() => parseRecorded(bad('| write.post | 2 | absolute | less | x |'))).to.throw(/better must be/);
    expect(() => parseRecorded(bad('| gzip.again | 2 | absolute | lower | x |'))).to.throw(/repeated/);
  });

  it('the repository README holds a table the bench can read', () => {
    const m = parseRecorded(fs.readFileSync(new URL('../../bench/README.md', import.meta.url), 'utf8'));
    for (const f of m.values()) expect(f.figure, f.id).to.be.above(0);
  });
});

describe('bench guard: comparing and flagging', () => {
  const cases: { name: string; now: Figure; before?: Figure; worse?: number; flagged: boolean; text: RegExp }[] = [
    { name: 'a ratio 10% lower', now: fig('a', 0.9), before: fig('a', 1), worse: 0.1, flagged: false, text: /vs reference 0\.900; previous release 1\.000 \(-10%\)/ },
    { name: 'a ratio 25% lower', now: fig('a', 0.75), before: fig('a', 1), worse: 0.25, flagged: true, text: /\(-25%, WORSE by more than 20%\)/ },
    { name: 'a ratio higher', now: fig('a', 1.5), before: fig('a', 1), worse: -0.5, flagged: false, text: /\(\+50%\)/ },
    { name: 'a time 30% longer', now: fig('t', 3.9, 'absolute', 'lower'), before: fig('t', 3, 'absolute', 'lower'), worse: 0.3, flagged: true, text: /absolute 3\.900; previous release 3\.000 \(-30%, WORSE/ },
    { name: 'a time 15% longer', now: fig('t', 3.45, 'absolute', 'lower'), before: fig('t', 3, 'absolute', 'lower'), worse: 0.15, flagged: false, text: /\(-15%\)/ },
    { name: 'never recorded', now: fig('n', 1), flagged: false, text: /no figure recorded/ },
    { name: 'recorded as another kind', now: fig('k', 1), before: fig('k', 5, 'absolute'), flagged: false, text: /not compared/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      if (c.worse !== undefined) expect(worseBy(c.now.figure, c.before!.figure, c.now.better)).to.be.closeTo(c.worse, 1e-9);
      const r = compareFigure(c.now, c.before);
      expect(r.flagged).to.equal(c.flagged);
      expect(r.text).to.match(c.text);
    });
  }
});

describe('bench guard: recording a run', () => {
  it('updates measured rows, keeps the others, adds new ones, leaves the text around alone', () => {
    const out = recordFigures(TABLE, [fig('gzip.again', 1.25), { ...fig('compressed.noise.first', 1.1), scenario: 'a | b' }]);
    expect(out.startsWith('# Benchmarks\n\ntext before\n')).to.equal(true);
    expect(out.endsWith('\ntext after\n')).to.equal(true);
    const m = parseRecorded(out);
    expect([...m.keys()]).to.deep.equal(['gzip.again', 'write.post', 'compressed.noise.first']);
    expect(m.get('gzip.again')!.figure).to.equal(1.25);
    expect(m.get('write.post')!.figure).to.equal(2.89);
    expect(m.get('compressed.noise.first')!.scenario).to.equal('a / b');
    expect(() => recordFigures('no markers', [])).to.throw(/no <!-- previous-release:begin -->/);
  });
});
