import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';
import {
  allSelection,
  contiguousRun,
  expandPoints,
  formatSelection,
  hyperslabSelection,
  pageHyperslab,
  pagesKeepChunksWhole,
  parsePoints,
  parseSelect,
  pointsFromBinary,
  selectionFromBody,
  type Selection,
} from '../../src/selection/select.js';
import { expectH5StoreError } from '../helpers/errors.js';

/** Naive reference: coordinates of every selected element in C order of the result. */
function referencePoints(sel: Selection): number[][] {
  const axes: { len: number; dims: number[]; coords: number[][] }[] = [];
  let listAxis: (typeof axes)[number] | undefined;
  sel.sel.forEach((s, d) => {
    if (s.kind === 'slice') {
      const c = Array.from({ length: s.count }, (_, i) => s.start + i * s.step);
      axes.push({ len: s.count, dims: [d], coords: [c] });
    } else if (!listAxis) {
      listAxis = { len: s.coords.length, dims: [d], coords: [s.coords] };
      axes.push(listAxis);
    } else {
      listAxis.dims.push(d);
      listAxis.coords.push(s.coords);
    }
  });
  const out: number[][] = [];
  const rank = sel.dims.length;
  const rec = (a: number, cur: number[]) => {
    if (a === axes.length) {
      out.push([...cur]);
      return;
    }
    const ax = axes[a]!;
    for (let i = 0; i < ax.len; i++) {
      ax.dims.forEach((d, j) => (cur[d] = ax.coords[j]![i]!));
      rec(a + 1, cur);
    }
  };
  if (sel.count > 0 && rank > 0) rec(0, new Array(rank).fill(0));
  return out;
}

/** Group a flat BigUint64Array into points of numbers. */
function toPoints(flat: BigUint64Array, rank: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < flat.length; i += rank) out.push(Array.from(flat.subarray(i, i + rank), Number));
  return out;
}

describe('selection: parseSelect', () => {
  const ok: [string | undefined | null, number[], Partial<Selection> & { points?: number[][] }][] = [
    [undefined, [4, 5], { shape: [4, 5], count: 20, isHyperslab: true }],
    [null, [3], { shape: [3], count: 3 }],
    ['', [3], { shape: [3], count: 3 }],
    ['   ', [3], { shape: [3], count: 3 }],
    ['[:]', [7], { shape: [7], count: 7 }],
    ['[:,:]', [2, 3], { shape: [2, 3], count: 6 }],
    ['[1:3]', [10], { shape: [2], points: [[1], [2]] }],
    ['[1:9:3]', [10], { shape: [3], points: [[1], [4], [7]] }],
    ['[1:10:3]', [10], { shape: [3], points: [[1], [4], [7]] }],
    ['[:5]', [10], { shape: [5] }],
    ['[7:]', [10], { shape: [3], points: [[7], [8], [9]] }],
    ['[::4]', [10], { shape: [3], points: [[0], [4], [8]] }],
    ['[:4:]', [10], { shape: [4] }],
    ['[ 1 : 3 ,\t2 ]', [4, 5], { shape: [2, 1], points: [[1, 2], [2, 2]] }],
    ['[2,:]', [4, 5], { shape: [1, 5], count: 5, isHyperslab: true }],
    ['[3]', [4], { shape: [1], points: [[3]] }],
    ['[[1,3,2]]', [4], { shape: [3], isHyperslab: false, points: [[1], [3], [2]] }],
    ['[[1,1]]', [4], { shape: [2], points: [[1], [1]] }],
    ['[[0,2],[1,3]]', [3, 4], { shape: [2], points: [[0, 1], [2, 3]] }],
    ['[:,[0,2]]', [2, 3], { shape: [2, 2], points: [[0, 0], [0, 2], [1, 0], [1, 2]] }],
    ['[[1,0],:]', [2, 3], { shape: [2, 3], points: [[1, 0], [1, 1], [1, 2], [0, 0], [0, 1], [0, 2]] }],
    ['[[0,1],:,[2,3]]', [2, 2, 4], { shape: [2, 2], points: [[0, 0, 2], [0, 1, 2], [1, 0, 3], [1, 1, 3]] }],
    ['[1,[0,2]]', [2, 3], { shape: [1, 2], points: [[1, 0], [1, 2]] }],
    // zero extent: only ':' (count 0)
    ['[:]', [0], { shape: [0], count: 0 }],
    ['[:,1:2]', [0, 3], { shape: [0, 1], count: 0 }],
    // scalar: treated as dims [1] by HSDS; result shape [] count 1
    [undefined, [], { shape: [], count: 1, sel: [] }],
    ['[]', [], { shape: [], count: 1 }],
    ['[0]', [], { shape: [], count: 1 }],
    ['[:]', [], { shape: [], count: 1 }],
    ['[0:1]', [], { shape: [], count: 1 }],
  ];
  for (const [text, dims, want] of ok) {
    it(`parses ${JSON.stringify(text)} on ${JSON.stringify(dims)}`, () => {
      const s = parseSelect(text, dims);
      expect(s.dims).to.deep.equal(dims);
      expect(s.sel.length).to.equal(dims.length);
      const { points, ...rest } = want;
      for (const [k, v] of Object.entries(rest)) expect((s as unknown as Record<string, unknown>)[k], k).to.deep.equal(v);
      expect(s.count).to.equal(s.shape.reduce((a, b) => a * b, 1));
      if (points) expect(toPoints(expandPoints(s), dims.length)).to.deep.equal(points);
    });
  }

  it('marks a single index', () => {
    const s = parseSelect('[2,1:3]', [4, 5]);
    expect(s.sel[0]).to.deep.equal({ kind: 'slice', start: 2, step: 1, count: 1, index: true });
    expect(s.sel[1]).to.deep.equal({ kind: 'slice', start: 1, step: 1, count: 2 });
  });

  const bad: [string, number[], RegExp][] = [
    ['0:2', [10], /brackets/],
    ['0:2,1:3', [10, 10], /brackets/],
    ['[0:2', [10], /brackets/],
    ['0:2]', [10], /brackets/],
    ['[', [10], /brackets/],
    ['[-1]', [10], /negative index -1/],
    ['[1:-1]', [10], /negative stop/],
    ['[-3:]', [10], /negative start/],
    ['[[1,-2]]', [10], /negative coordinate/],
    ['[10]', [10], /index 10 out of range for dimension 0 of extent 10/],
    ['[0:11]', [10], /stop 11 out of range/],
    ['[12:]', [10], /start 12 out of range for dimension 0 of extent 10/],
    ['[5:5]', [10], /stop 5 must be greater than start 5/],
    ['[5:3]', [10], /greater than start/],
    ['[0:5:0]', [10], /step 0 .* at least 1/],
    ['[a]', [10], /'a'.*not a non-negative integer/],
    ['[1.5]', [10], /not a non-negative integer/],
    ['[0:x]', [10], /stop 'x'/],
    ['[1:2:3:4]', [10], /too many ':'/],
    ['[1,2]', [10], /expected 1 dimension selections, got 2/],
    ['[1]', [10, 10], /expected 2 dimension selections, got 1/],
    ['[]', [10], /expected 1 dimension selections, got 0/],
    ['[0:2,]', [10, 10], /empty selection for dimension 1/],
    ['[,]', [10, 10], /empty selection for dimension 0/],
    ['[[]]', [10], /empty coordinate list/],
    ['[[1,,2]]', [10], /empty coordinate/],
    ['[[1,2],]', [10, 10], /empty selection/],
    ['[[1,2]', [10], /unterminated/],
    ['[[1,[2]]]', [10], /nested/],
    ['[1]]', [10], /unbalanced/],
    ['[[1,10]]', [10], /coordinate 10 out of range for dimension 0 of extent 10/],
    ['[[1,2],[1]]', [10, 10], /equal lengths.*2 and 1/],
    ['[[1:2]]', [10], /coordinate '1:2'/],
    ['[0]', [0], /index 0 out of range for dimension 0 of extent 0/],
    ['[0:1]', [0], /start 0 out of range/],
    ['[1]', [], /index 1 out of range/],
    ['[0,0]', [], /scalar/],
    ['[[0,0]]', [], /exactly one element/],
  ];
  for (const [text, dims, re] of bad) {
    it(`rejects ${JSON.stringify(text)} on ${JSON.stringify(dims)}`, () => {
      const err = expectH5StoreError(() => parseSelect(text, dims), 400, re);
      expect(err.message).to.match(/^Invalid selection: /);
    });
  }
});

describe('selection: formatSelection / hyperslabSelection / allSelection', () => {
  const cases: [string, number[], string][] = [
    ['[4:6,:]', [6, 5], '[4:6,:]'],
    ['[2,:]', [4, 5], '[2,:]'],
    ['[1:10:3]', [10], '[1:8:3]'],
    ['[:]', [10], '[:]'],
    ['[0:10]', [10], '[:]'],
    ['[0:9]', [10], '[0:9]'],
    ['[::2]', [10], '[0:9:2]'],
    ['[[1,3],[0,2]]', [4, 4], '[[1,3],[0,2]]'],
    ['[:]', [0], '[:]'],
    ['[]', [], '[]'],
  ];
  for (const [text, dims, want] of cases) {
    it(`formats ${text} on ${JSON.stringify(dims)} as ${want} and round-trips`, () => {
      const s = parseSelect(text, dims);
      expect(formatSelection(s)).to.equal(want);
      const back = parseSelect(formatSelection(s), dims);
      expect(back.shape).to.deep.equal(s.shape);
      expect(toPoints(expandPoints(back), dims.length)).to.deep.equal(toPoints(expandPoints(s), dims.length));
    });
  }

  it('builds the region a resize added', () => {
    const s = hyperslabSelection([6, 5], [4, 0], [2, 5]);
    expect(formatSelection(s)).to.equal('[4:6,:]');
    expect(s.count).to.equal(10);
    expect(formatSelection(hyperslabSelection([10], [1], [3], [3]))).to.equal('[1:8:3]');
  });

  it('rejects a hyperslab that does not fit', () => {
    expectH5StoreError(() => hyperslabSelection([6, 5], [4, 0], [3, 5]), 400, /does not fit dimension 0/);
    expectH5StoreError(() => hyperslabSelection([6], [0, 0], [1, 1]), 400, /rank/);
    expectH5StoreError(() => hyperslabSelection([6], [0], [2], [0]), 400, /does not fit/);
  });

  it('selects the whole extent', () => {
    expect(allSelection([3, 4])).to.include({ count: 12, isHyperslab: true });
    expect(allSelection([])).to.deep.include({ shape: [], count: 1, sel: [] });
    expect(allSelection([0, 4]).count).to.equal(0);
  });
});

describe('selection: selectionFromBody', () => {
  it('returns undefined when no selection key is given', () => {
    expect(selectionFromBody({}, [10])).to.equal(undefined);
    expect(selectionFromBody({ select: null, start: undefined }, [10])).to.equal(undefined);
  });

  const ok: [Record<string, unknown>, number[], string, number[]][] = [
    [{ select: '[1:3]' }, [10], '[1:3]', [2]],
    [{ start: 1, stop: 3 }, [10], '[1:3]', [2]],
    [{ start: [1], stop: [3] }, [10], '[1:3]', [2]],
    [{ start: [0, 1], stop: [2, 5], step: [1, 2] }, [4, 5], '[0:2,1:4:2]', [2, 2]],
    [{ step: 2 }, [10], '[0:9:2]', [5]],
    [{ stop: 4 }, [10], '[0:4]', [4]],
    [{ start: 6 }, [10], '[6:10]', [4]],
    [{ start: [0, 0], stop: [1, 1] }, [3, 3], '[0:1,0:1]', [1, 1]],
    [{ step: [1, 3] }, [0, 7], '[:,0:7:3]', [0, 3]],
    [{ start: 0, stop: 1 }, [], '[]', []],
  ];
  for (const [body, dims, fmt, shape] of ok) {
    it(`accepts ${JSON.stringify(body)} on ${JSON.stringify(dims)}`, () => {
      const s = selectionFromBody(body, dims)!;
      expect(s.shape).to.deep.equal(shape);
      expect(formatSelection(s)).to.equal(fmt);
    });
  }

  const bad: [Record<string, unknown>, number[], RegExp][] = [
    [{ select: '[1:3]', start: 1 }, [10], /cannot be combined/],
    [{ select: 3 }, [10], /must be a string/],
    [{ select: '[1:30]' }, [10], /stop 30 out of range/],
    [{ start: 1, stop: 3 }, [10, 10], /'start' must be a list of 2 integers/],
    [{ start: [1], stop: [3, 4] }, [10, 10], /'start' has 1 values, expected 2/],
    [{ start: [1.5] }, [10], /integers/],
    [{ start: ['1'] }, [10], /integers/],
    [{ start: -1 }, [10], /negative 'start'/],
    [{ start: 3, stop: 3 }, [10], /stop 3 must be greater than start 3/],
    [{ start: 10 }, [10], /start 10 out of range for dimension 0 of extent 10/],
    [{ stop: 11 }, [10], /stop 11 out of range/],
    [{ step: 0 }, [10], /step 0 .* at least 1/],
    [{ start: 0 }, [0], /start 0 out of range/],
    [{ start: 1, stop: 2 }, [], /start 1 out of range/],
  ];
  for (const [body, dims, re] of bad) {
    it(`rejects ${JSON.stringify(body)} on ${JSON.stringify(dims)}`, () => {
      expectH5StoreError(() => selectionFromBody(body, dims), 400, re);
    });
  }
});

describe('selection: expandPoints', () => {
  it('matches a naive reference on random selections', () => {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let trial = 0; trial < 200; trial++) {
      const rank = 1 + rnd(3);
      const dims = Array.from({ length: rank }, () => 1 + rnd(6));
      const listLen = 1 + rnd(3);
      const parts = dims.map((extent) => {
        switch (rnd(4)) {
          case 0: return ':';
          case 1: return String(rnd(extent));
          case 2: {
            const start = rnd(extent);
            const stop = start + 1 + rnd(extent - start);
            return `${start}:${stop}:${1 + rnd(3)}`;
          }
          default: return `[${Array.from({ length: listLen }, () => rnd(extent)).join(',')}]`;
        }
      });
      const sel = parseSelect(`[${parts.join(',')}]`, dims);
      const got = toPoints(expandPoints(sel), rank);
      expect(got, `[${parts.join(',')}] on ${dims}`).to.deep.equal(referencePoints(sel));
      expect(got.length).to.equal(sel.count);
    }
  });

  it('writes coordinates beyond 2^32 exactly', () => {
    const big = 2 ** 40;
    const s = parseSelect(`[${big - 1},[0,${2 ** 33 + 5}]]`, [big, 2 ** 34]);
    expect(Array.from(expandPoints(s))).to.deep.equal([
      BigInt(big - 1), 0n,
      BigInt(big - 1), BigInt(2 ** 33 + 5),
    ]);
  });

  it('gives an empty array for a scalar or an empty selection', () => {
    expect(expandPoints(parseSelect(undefined, [])).length).to.equal(0);
    expect(expandPoints(parseSelect('[:,0]', [0, 3])).length).to.equal(0);
  });

  it('enforces maxPoints with 413', () => {
    const s = parseSelect('[0:10,:]', [10, 10]);
    expect(expandPoints(s, 100).length).to.equal(200);
    expectH5StoreError(() => expandPoints(s, 99), 413, /100 elements exceeds the limit of 99/);
  });

  it('expands 1e6 points (speed is measured in bench/, not here)', () => {
    const s = parseSelect('[:,[0,5,7,9]]', [250000, 10]);
    expect(s.count).to.equal(1e6);
    const pts = expandPoints(s);
    expect(pts.length).to.equal(2e6);
    expect(pts[2 * 999999]).to.equal(249999n);
    expect(pts[2 * 999999 + 1]).to.equal(9n);
  });
});

describe('selection: parsePoints', () => {
  const ok: [unknown, number[], number[][]][] = [
    [[1, 5, 3], [10], [[1], [5], [3]]],
    [[[1], [2]], [10], [[1], [2]]],
    [[[0, 1], [2, 3]], [3, 4], [[0, 1], [2, 3]]],
    [[[9, 0, 1]], [10, 1, 2], [[9, 0, 1]]],
    [[2 ** 35], [2 ** 36], [[2 ** 35]]],
  ];
  for (const [points, dims, want] of ok) {
    it(`parses ${JSON.stringify(points)} on ${JSON.stringify(dims)}`, () => {
      const { coords, count } = parsePoints(points, dims);
      expect(count).to.equal(want.length);
      expect(toPoints(coords, dims.length)).to.deep.equal(want);
    });
  }
  const bad: [unknown, number[], RegExp][] = [
    [[0], [], /scalar/],
    [{ a: 1 }, [10], /expected a list of points/],
    ['[1,2]', [10], /expected a list of points/],
    [[], [10], /empty/],
    [[1.5], [10], /non-integer coordinate 1.5/],
    [['1'], [10], /non-integer/],
    [[-1], [10], /coordinate -1 out of range for dimension 0 of extent 10/],
    [[10], [10], /point 0 coordinate 10 out of range/],
    [[[0, 1], [1]], [3, 4], /point 1 must be a list of 2 coordinates/],
    [[1, 2], [3, 4], /point 0 must be a list of 2/],
    [[[0, 1, 2]], [3, 4], /list of 2/],
    [[[0, 4]], [3, 4], /coordinate 4 out of range for dimension 1 of extent 4/],
    [[[0, 1], [1]], [3], /must be a list of 1 coordinates/],
  ];
  for (const [points, dims, re] of bad) {
    it(`rejects ${JSON.stringify(points)} on ${JSON.stringify(dims)}`, () => {
      expectH5StoreError(() => parsePoints(points, dims), 400, re);
    });
  }
});

describe('selection: pointsFromBinary', () => {
  const le = (vals: bigint[], offset = 0) => {
    const b = Buffer.alloc(vals.length * 8 + offset);
    vals.forEach((v, i) => b.writeBigUInt64LE(v, offset + 8 * i));
    return b.subarray(offset);
  };

  it('reads rank-2 points', () => {
    const { coords, count } = pointsFromBinary(le([0n, 1n, 2n, 3n]), [3, 4]);
    expect(count).to.equal(2);
    expect(Array.from(coords)).to.deep.equal([0n, 1n, 2n, 3n]);
  });

  it('reads an unaligned buffer', () => {
    const buf = le([5n, 7n, 2n ** 40n], 3);
    expect(buf.byteOffset % 8).to.not.equal(0);
    const { coords, count } = pointsFromBinary(buf, [2 ** 41]);
    expect(count).to.equal(3);
    expect(Array.from(coords)).to.deep.equal([5n, 7n, 2n ** 40n]);
  });

  const bad: [Buffer, number[], RegExp][] = [
    [le([1n]), [], /scalar/],
    [Buffer.alloc(0), [10], /0 bytes/],
    [Buffer.alloc(12), [10], /12 bytes is not a non-zero multiple of 8/],
    [le([1n]), [10, 10], /multiple of 16/],
    [le([10n]), [10], /point 0 coordinate 10 out of range for dimension 0 of extent 10/],
    [le([0n, 0n, 1n, 2n ** 63n]), [10, 10], /point 1 coordinate 9223372036854775808 out of range for dimension 1/],
  ];
  for (const [buf, dims, re] of bad) {
    it(`rejects ${buf.length} bytes on ${JSON.stringify(dims)} (${re.source})`, () => {
      expectH5StoreError(() => pointsFromBinary(buf, dims), 400, re);
    });
  }
});

describe('selection: pageHyperslab', () => {
  /** Points of a page, in C order. */
  const pagePoints = (dims: number[], p: { start: number[]; step: number[]; count: number[] }) =>
    toPoints(expandPoints(hyperslabSelection(dims, p.start, p.count, p.step)), dims.length);

  const cases: { select: string; dims: number[]; item: number; page: number; chunk?: number[] }[] = [
    { select: '[:]', dims: [1000], item: 1, page: 100 },
    { select: '[:]', dims: [1000], item: 1, page: 100, chunk: [64] },
    { select: '[3:997]', dims: [1000], item: 4, page: 400, chunk: [64] },
    { select: '[:,:]', dims: [1000, 10], item: 8, page: 8 * 10 * 30, chunk: [100, 10] },
    { select: '[:,:]', dims: [4, 1000], item: 1, page: 100 },
    { select: '[:,:]', dims: [4, 1000], item: 1, page: 100, chunk: [1, 128] },
    { select: '[1:4,2:900:3,5]', dims: [5, 1000, 7], item: 2, page: 64 },
    { select: '[1:9:2,:,:]', dims: [10, 20, 30], item: 4, page: 1000, chunk: [3, 7, 30] },
    { select: '[:,:,:]', dims: [6, 7, 8], item: 1, page: 7 },
    { select: '[:]', dims: [10], item: 1000, page: 10 }, // one element larger than a page
    { select: '[:,:]', dims: [5, 5], item: 1, page: 1000 }, // fits: one page
  ];
  for (const c of cases) {
    it(`pages ${c.select} on ${JSON.stringify(c.dims)} (item ${c.item}, page ${c.page}${c.chunk ? `, chunk ${c.chunk}` : ''})`, () => {
      const sel = parseSelect(c.select, c.dims);
      const pages = [...pageHyperslab(sel, c.item, c.page, c.chunk)];
      // concatenation equals the whole selection in C order
      const all = pages.flatMap((p) => pagePoints(c.dims, p));
      expect(all).to.deep.equal(toPoints(expandPoints(sel), c.dims.length));
      const rowCounts = (p: { count: number[] }) => p.count.reduce((a, b) => a * b, 1);
      for (const p of pages) {
        expect(p.elements).to.equal(rowCounts(p));
        expect(p.elements).to.be.above(0);
        const bytes = p.elements * c.item;
        const limit = c.chunk ? 2 * c.page : c.page;
        // each page fits the budget, or is the smallest unit (one element)
        if (bytes > limit) expect(p.elements).to.equal(1);
      }
      if (sel.count * c.item <= c.page) expect(pages.length).to.equal(1);
      else expect(pages.length).to.be.above(1);
    });
  }

  it('aligns page boundaries to chunks', () => {
    const sel = parseSelect('[:]', [1000]);
    const pages = [...pageHyperslab(sel, 1, 100, [64])];
    for (const p of pages.slice(0, -1)) expect((p.start[0]! + p.count[0]!) % 64).to.equal(0);
    expect(pages.map((p) => p.count[0])).to.deep.equal([...new Array(15).fill(64), 40]);
  });

  it('snaps to the next chunk boundary when the page stays within 2x', () => {
    const sel = parseSelect('[:,:]', [1000, 10]);
    const pages = [...pageHyperslab(sel, 8, 8 * 10 * 30, [100, 10])];
    const ends = pages.map((p) => p.start[0]! + p.count[0]!);
    expect(ends.slice(0, 3)).to.deep.equal([30, 60, 100]);
    expect(ends.filter((e) => e % 100 === 0).length).to.equal(10);
  });

  it('ignores chunks when the step along the split dimension is not 1', () => {
    const sel = parseSelect('[::2]', [1000]);
    const pages = [...pageHyperslab(sel, 1, 100, [64])];
    expect(pages.map((p) => p.count[0])).to.deep.equal([100, 100, 100, 100, 100]);
    expect(pages[1]!.start).to.deep.equal([200]);
    expect(pages[1]!.step).to.deep.equal([2]);
  });

  it('splits an inner dimension with outer dimensions one index at a time', () => {
    const sel = parseSelect('[:,:]', [4, 1000]);
    const pages = [...pageHyperslab(sel, 1, 250)];
    expect(pages.length).to.equal(16);
    expect(pages[5]).to.deep.equal({ start: [1, 250], step: [1, 1], count: [1, 250], elements: 250 });
  });

  it('yields one page for a scalar, none for an empty selection', () => {
    expect([...pageHyperslab(parseSelect(undefined, []), 8, 1)]).to.deep.equal([
      { start: [], step: [], count: [], elements: 1 },
    ]);
    expect([...pageHyperslab(parseSelect('[:,:]', [0, 5]), 8, 1)]).to.deep.equal([]);
  });

  it('refuses a coordinate-list selection (programming error, 500)', () => {
    const sel = parseSelect('[[1,2]]', [5]);
    expectH5StoreError(() => [...pageHyperslab(sel, 1, 1)], 500, /hyperslab/);
  });
});

describe('selection: contiguousRun', () => {
  /** C-order indexes of the selected elements, from the coordinate expansion. */
  const linear = (select: string, dims: number[]): number[] => {
    const coords = expandPoints(parseSelect(select, dims));
    const out: number[] = [];
    for (let i = 0; i < coords.length; i += dims.length) {
      let x = 0;
      for (let d = 0; d < dims.length; d++) x = x * dims[d]! + Number(coords[i + d]!);
      out.push(x);
    }
    return out;
  };
  const cases: { select: string | undefined; dims: number[]; run: { first: number; count: number } | undefined }[] = [
    { select: '[1000:1512,0:8192]', dims: [8192, 8192], run: { first: 1000 * 8192, count: 512 * 8192 } },
    { select: undefined, dims: [6, 7], run: { first: 0, count: 42 } },
    { select: '[5,10:20]', dims: [8, 100], run: { first: 510, count: 10 } },
    { select: '[2,3,4]', dims: [5, 6, 7], run: { first: 2 * 42 + 3 * 7 + 4, count: 1 } },
    { select: '[3:7]', dims: [10], run: { first: 3, count: 4 } },
    { select: '[1,2:4,:]', dims: [3, 5, 7], run: { first: 35 + 14, count: 14 } },
    { select: '[1:2,0:5,:]', dims: [3, 5, 7], run: { first: 35, count: 35 } },
    { select: '[0:3,0:1,:]', dims: [3, 1, 7], run: { first: 0, count: 21 } }, // a dimension of extent 1 in between
    { select: '[0:4,10:20]', dims: [8, 100], run: undefined }, // an inner block: 4 runs
    { select: '[0:4,1:100]', dims: [8, 100], run: undefined },
    { select: '[0:8:2]', dims: [8], run: undefined }, // a step
    { select: '[1:3,::1]', dims: [4, 3], run: { first: 3, count: 6 } },
    { select: '[1:3,0:3:2]', dims: [4, 3], run: undefined },
    { select: '[:,:]', dims: [0, 5], run: undefined }, // no elements
  ];
  for (const c of cases) {
    it(`${c.select ?? '(all)'} of ${JSON.stringify(c.dims)}`, () => {
      const run = contiguousRun(parseSelect(c.select, c.dims));
      expect(run).to.deep.equal(c.run);
      const idx = linear(c.select ?? `[${c.dims.map(() => ':').join(',')}]`, c.dims);
      const consecutive = idx.length > 0 && idx.every((x, i) => x === idx[0]! + i);
      // defined exactly when the elements are consecutive, and then it names them
      expect(run !== undefined).to.equal(consecutive);
      if (run) expect([run.first, run.count]).to.deep.equal([idx[0], idx.length]);
    });
  }
  it('no run for a scalar dataspace or coordinate lists', () => {
    expect(contiguousRun(parseSelect(undefined, []))).to.equal(undefined);
    expect(contiguousRun(parseSelect('[[1,2,3]]', [10]))).to.equal(undefined);
  });
});

describe('selection: messages', () => {
  it('shortens and escapes echoed text', () => {
    const long = '0:1,'.repeat(100);
    const err = expectH5StoreError(() => parseSelect(long, [10]), 400, /brackets/);
    expect(err.message.length).to.be.below(200);
    expectH5StoreError(() => parseSelect('\u00010:1', [10]), 400, /got '\\u00010:1'/);
  });
});

describe('selection: pagesKeepChunksWhole', () => {
  /** Whether some chunk is touched by two pages of pageHyperslab (the property the function promises). */
  const splits = (sel: Selection, item: number, page: number, chunk: number[]) => {
    const seen = new Map<string, number>();
    let i = 0;
    for (const p of pageHyperslab(sel, item, page, chunk)) {
      const pts = toPoints(expandPoints(hyperslabSelection(sel.sel.map(() => 1 << 30), p.start, p.count, p.step)), chunk.length);
      for (const pt of pts) {
        const key = pt.map((x, d) => Math.floor(x / chunk[d]!)).join(',');
        const was = seen.get(key);
        if (was !== undefined && was !== i) return true;
        seen.set(key, i);
      }
      i++;
    }
    return false;
  };
  const cases: { select: string; dims: number[]; item: number; page: number; chunk: number[]; whole: boolean }[] = [
    // the bench region: 1024 rows of 4 KiB in 1 MiB pages, 256-row chunks: 4 pages, chunks whole
    { select: '[1024:2048,512:1536]', dims: [4096, 4096], item: 4, page: 1 << 20, chunk: [256, 256], whole: true },
    { select: '[:]', dims: [1000], item: 1, page: 100, chunk: [64], whole: true },
    { select: '[3:997]', dims: [1000], item: 4, page: 400, chunk: [64], whole: true },
    { select: '[:,:]', dims: [1000, 10], item: 8, page: 8 * 10 * 30, chunk: [100, 10], whole: false }, // a chunk: 8000 bytes > 2x 2400
    { select: '[:,:]', dims: [1000, 10], item: 8, page: 8 * 10 * 50, chunk: [100, 10], whole: true },
    { select: '[0:1000:2,:]', dims: [1000, 10], item: 8, page: 8 * 10 * 50, chunk: [100, 10], whole: false }, // step along the split
    { select: '[:,:]', dims: [4, 1000], item: 1, page: 100, chunk: [2, 128], whole: false }, // outer rows one at a time
    { select: '[2,:]', dims: [4, 1000], item: 1, page: 100, chunk: [2, 128], whole: true }, // only one outer row
    { select: '[:,:]', dims: [5, 5], item: 1, page: 1000, chunk: [2, 2], whole: true }, // one page
  ];
  for (const c of cases) {
    it(`${c.select} on ${JSON.stringify(c.dims)} (item ${c.item}, page ${c.page}, chunk ${c.chunk}): ${c.whole ? 'whole' : 'split'}`, () => {
      const sel = parseSelect(c.select, c.dims);
      expect(pagesKeepChunksWhole(sel, c.item, c.page, c.chunk)).to.equal(c.whole);
      if (c.whole && sel.count <= 100_000) expect(splits(sel, c.item, c.page, c.chunk)).to.equal(false);
    });
  }
});
