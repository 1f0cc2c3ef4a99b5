/**
 * The benchmarks' regression guard (issue #29): each scenario's figure of this run against the
 * figure recorded for the previous release in bench/README.md, in a machine-readable table
 * between two markers:
 *
 *     <!-- previous-release:begin -->
 *     | id | figure | kind | better | scenario |
 *     |---|---|---|---|---|
 *     | gzip.again | 1.069 | reference | higher | binary GET ... over h5py in-process |
 *     <!-- previous-release:end -->
 *
 * `figure` is the scenario's ratio to a reference measured in the same run (kind `reference`:
 * h5py in-process, the bare node:http server, the loopback) where it has one, else its plain
 * value (kind `absolute`: milliseconds, MB/s; these follow the machine, not only the server).
 * `better` says which way is good. A scenario more than `tolerance` (20%) worse than its
 * recorded figure is flagged. Not a benchmark by itself: bench/run.ts uses it.
 */

/** One scenario's figure, as recorded and as measured. */
export interface Figure {
  /** Stable key of the scenario (e.g. `compressed.noise.first`). */
  id: string;
  figure: number;
  kind: 'reference' | 'absolute';
  better: 'higher' | 'lower';
  /** What was measured (the report line's name). */
  scenario: string;
}

const BEGIN = '<!-- previous-release:begin -->';
const END = '<!-- previous-release:end -->';

/**
 * The recorded figures of `markdown` (bench/README.md): the table rows between the markers.
 * @returns figures by id (empty when the markers are missing)
 * @throws Error naming the line when a row between the markers is malformed (a wrong number of
 *   cells, a figure that is not a positive number, an unknown kind or direction, a repeated id)
 */
export function parseRecorded(markdown: string): Map<string, Figure> {
  const out = new Map<string, Figure>();
  const lines = markdown.split('\n');
  const b = lines.findIndex((l) => l.trim() === BEGIN);
  const e = lines.findIndex((l, i) => i > b && l.trim() === END);
  if (b < 0 || e < 0) return out;
  for (let i = b + 1; i < e; i++) {
    const line = lines[i]!.trim();
    if (!line.startsWith('|') || /^\|\s*id\s*\|/.test(line) || /^\|[\s|:-]+\|$/.test(line)) continue;
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim());
    const bad = (why: string) => new Error(`bench/README.md line ${i + 1}: ${why}: ${line}`);
    if (cells.length !== 5) throw bad('expected 5 cells (id, figure, kind, better, scenario)');
    const [id, fig, kind, better, scenario] = cells as [string, string, string, string, string];
    const figure = Number(fig);
    if (!id || !(figure > 0) || !Number.isFinite(figure)) throw bad('the figure must be a positive number');
    if (kind !== 'reference' && kind !== 'absolute') throw bad('kind must be reference or absolute');
    if (better !== 'higher' && better !== 'lower') throw bad('better must be higher or lower');
    if (out.has(id)) throw bad(`id ${id} is repeated`);
    out.set(id, { id, figure, kind, better, scenario });
  }
  return out;
}

/**
 * How much worse `now` is than `before` (a fraction: 0.25 = 25% worse; negative: better): for
 * higher-is-better figures the share lost (1 - now/before), for lower-is-better ones the time
 * added (now/before - 1).
 */
export function worseBy(now: number, before: number, better: 'higher' | 'lower'): number {
  return better === 'higher' ? 1 - now / before : now / before - 1;
}

/**
 * The comparison text of one figure, and whether it is flagged (more than `tolerance` worse).
 * A figure never recorded, or recorded with another kind or direction, is not compared.
 */
export function compareFigure(now: Figure, before: Figure | undefined, tolerance = 0.2): { text: string; flagged: boolean } {
  const mine = `${now.kind === 'reference' ? 'vs reference' : 'absolute'} ${fmt(now.figure)}`;
  if (!before) return { text: `${mine}; no figure recorded`, flagged: false };
  if (before.kind !== now.kind || before.better !== now.better) return { text: `${mine}; recorded as ${before.kind}/${before.better}: not compared`, flagged: false };
  const w = worseBy(now.figure, before.figure, now.better);
  const flagged = w > tolerance;
  const pct = `${w > 0 ? '' : '+'}${(-w * 100).toFixed(0)}%`;
  return { text: `${mine}; previous release ${fmt(before.figure)} (${pct}${flagged ? `, WORSE by more than ${(tolerance * 100).toFixed(0)}%` : ''})`, flagged };
}

function fmt(x: number): string {
  return x >= 100 ? x.toFixed(1) : x >= 10 ? x.toFixed(2) : x.toFixed(3);
}

/**
 * `markdown` with the table between the markers replaced by `recorded` updated with `figures`
 * (figures of scenarios not run keep their recorded row), rows in the order of first appearance.
 * @throws Error when the markers are missing
 */
export function recordFigures(markdown: string, figures: Figure[]): string {
  const lines = markdown.split('\n');
  const b = lines.findIndex((l) => l.trim() === BEGIN);
  const e = lines.findIndex((l, i) => i > b && l.trim() === END);
  if (b < 0 || e < 0) throw new Error(`bench/README.md has no ${BEGIN} ... ${END} table`);
  const all = parseRecorded(markdown);
  for (const f of figures) all.set(f.id, f);
  const rows = [...all.values()].map((f) => `| ${f.id} | ${fmt(f.figure)} | ${f.kind} | ${f.better} | ${f.scenario.replace(/\|/g, '/')} |`);
  return [...lines.slice(0, b + 1), '| id | figure | kind | better | scenario |', '|---|---|---|---|---|', ...rows, ...lines.slice(e)].join('\n');
}
