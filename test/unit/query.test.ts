import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';
import { compileQuery, parseQuery, type FieldKind } from '../../src/selection/query.js';
import { expectH5StoreError } from '../helpers/errors.js';

/** A refused query: 400 with "Invalid query: ..." (and `re`, when given). */
const expectBadQuery = (fn: () => unknown, re?: RegExp) => expectH5StoreError(fn, 400, /^Invalid query: /, re);

// The table of HSDS's integ/query_test.py (stock_symbol, date, open, close).
const STOCK_FIELDS = ['stock_symbol', 'date', 'open', 'close'];
const STOCKS: [string, string, number, number][] = [
  ['EBAY', '20170102', 3023, 3088],
  ['AAPL', '20170102', 3054, 2933],
  ['AMZN', '20170102', 2973, 3011],
  ['EBAY', '20170103', 3042, 3128],
  ['AAPL', '20170103', 3182, 3034],
  ['AMZN', '20170103', 3021, 2788],
  ['EBAY', '20170104', 2798, 2876],
  ['AAPL', '20170104', 2834, 2867],
  ['AMZN', '20170104', 2891, 2978],
  ['EBAY', '20170105', 2973, 2962],
  ['AAPL', '20170105', 2934, 3010],
  ['AMZN', '20170105', 3018, 3086],
];
const hits = (expr: string) => {
  const test = compileQuery(expr, STOCK_FIELDS);
  return STOCKS.flatMap((row, i) => (test(row) ? [i] : []));
};

describe('query: HSDS query_test table', () => {
  const cases: [string, number[]][] = [
    ["stock_symbol == b'AAPL'", [1, 4, 7, 10]],
    ["open < 3000 AND stock_symbol IN (b'AAPL', b'EBAY')", [6, 7, 9, 10]],
    ["stock_symbol IN (b'AAPL', b'EBAY')", [0, 1, 3, 4, 6, 7, 9, 10]],
    ["open < 4000 AND stock_symbol IN (b'AAPL', b'EBAY')", [0, 1, 3, 4, 6, 7, 9, 10]],
    ['(open > 3000) AND (open < 3100)', [0, 1, 3, 5, 11]],
    ['(open > 3000) & (open < 3100)', [0, 1, 3, 5, 11]],
    ['open > 3000 & open < 3100', [0, 1, 3, 5, 11]],
    ['open == 0', []],
    // the older HSDS "where in" clause (PR #328)
    ["(open < 3000) where stock_symbol in (b'AAPL', b'EBAY')", [6, 7, 9, 10]],
    ["open < 3000 where stock_symbol in (b'AAPL', b'EBAY')", [6, 7, 9, 10]],
    ["where stock_symbol in (b'AAPL')", [1, 4, 7, 10]],
    ['where stock_symbol in (AAPL, EBAY)', [0, 1, 3, 4, 6, 7, 9, 10]],
    ["stock_symbol NOT IN ('AAPL', 'EBAY')", [2, 5, 8, 11]],
    ['close > open', [0, 2, 3, 6, 7, 8, 10, 11]],
    ["date >= '20170104' & date < '20170105'", [6, 7, 8]],
  ];
  for (const [expr, want] of cases) {
    it(`${expr} -> ${JSON.stringify(want)}`, () => expect(hits(expr)).to.deep.equal(want));
  }

  const bad = [
    'foobar',
    'open @ 12',
    'gloop < blag',
    'x = 12',
    'open > 12; close < 40',
    "import os; print(os.environ['FOO'])",
    'i = 2',
  ];
  for (const expr of bad) {
    it(`rejects ${JSON.stringify(expr)} like HSDS`, () => expectBadQuery(() => compileQuery(expr, STOCK_FIELDS)));
  }
});

describe('query: operators, literals and precedence', () => {
  const FIELDS = ['temp', 'dir', 'a', 'b', 'big', 'flag', 'in', 'or'];
  const row = (o: Partial<Record<string, unknown>>) => FIELDS.map((f) => o[f]);
  const cases: [string, Partial<Record<string, unknown>>, boolean][] = [
    // the documented form
    ["(temp > 32.0) & (dir == b'N')", { temp: 33, dir: 'N' }, true],
    ["(temp > 32.0) & (dir == b'N')", { temp: 32, dir: 'N' }, false],
    ["(temp > 32.0) & (dir == b'N')", { temp: 40, dir: 'S' }, false],
    ['temp >= 30 & temp < 40', { temp: 30 }, true],
    ['temp >= 30 & temp < 40', { temp: 40 }, false],
    ["(a == 1) | (dir != 'x')", { a: 2, dir: 'y' }, true],
    ["(a == 1) | (dir != 'x')", { a: 2, dir: 'x' }, false],
    ['~(a > 3)', { a: 3 }, true],
    ['~(a > 3)', { a: 4 }, false],
    ['~ ~(a > 3)', { a: 4 }, true],
    ['not (a > 3)', { a: 4 }, false],
    ['NOT a > 3', { a: 1 }, true],
    // comparison operators
    ['a == 2', { a: 2 }, true],
    ['a != 2', { a: 2 }, false],
    ['a < 2', { a: 1 }, true],
    ['a <= 2', { a: 2 }, true],
    ['a > 2', { a: 2 }, false],
    ['a >= 2', { a: 2 }, true],
    ['2 < a', { a: 3 }, true],
    ['0.8 < temp', { temp: 0.9 }, true],
    ['a == b', { a: 3, b: 3 }, true],
    ['a < b', { a: 3, b: 2 }, false],
    // precedence: comparison > not > and > or
    ['a == 1 | a == 2 & b == 3', { a: 1, b: 0 }, true],
    ['a == 1 | a == 2 & b == 3', { a: 2, b: 0 }, false],
    ['a == 1 | a == 2 & b == 3', { a: 2, b: 3 }, true],
    ['(a == 1 | a == 2) & b == 3', { a: 1, b: 0 }, false],
    ['~a == 1 | b == 1', { a: 1, b: 1 }, true],
    ['~a == 1 | b == 1', { a: 1, b: 0 }, false],
    ['not (a == 1 and b == 2)', { a: 1, b: 2 }, false],
    ['a == 1 and b == 2 or a == 5', { a: 5, b: 0 }, true],
    ['a == 1 And b == 2 Or a == 5', { a: 5, b: 0 }, true],
    ['((((a == 1))))', { a: 1 }, true],
    // keywords are still field names where an operand is expected
    ['in > 3', { in: 4 }, true],
    ['or == 1 or in == 1', { or: 0, in: 1 }, true],
    // numbers
    ['temp > -1.5e2', { temp: -100 }, true],
    ['temp < .5', { temp: 0.25 }, true],
    ['temp >= +3', { temp: 3 }, true],
    ['temp == 1E3', { temp: 1000 }, true],
    ['a>-1', { a: 0 }, true],
    ['big == 18446744073709551615', { big: 18446744073709551615n }, true],
    ['big == 18446744073709551615', { big: 18446744073709551614n }, false],
    ['big > 9007199254740992', { big: 9007199254740993n }, true],
    ['big == 9007199254740993', { big: 9007199254740992 }, false],
    ['big == 3', { big: 3n }, true],
    ['big < 3.5', { big: 3n }, true],
    ['big == -9223372036854775808', { big: -9223372036854775808n }, true],
    ['flag == 1', { flag: true }, true],
    ['flag == 0', { flag: true }, false],
    // NaN is unequal to everything
    ['temp == temp', { temp: NaN }, false],
    ['temp != temp', { temp: NaN }, true],
    ['temp < 1', { temp: NaN }, false],
    // strings: all quote forms alike
    ["dir == 'N'", { dir: 'N' }, true],
    ['dir == "N"', { dir: 'N' }, true],
    ["dir == b'N'", { dir: 'N' }, true],
    ['dir == b"N"', { dir: 'N' }, true],
    ["dir == B'N'", { dir: 'N' }, true],
    ["dir == 'W 5'", { dir: 'W 5' }, true],
    ["dir == 'a == b & (c)'", { dir: 'a == b & (c)' }, true],
    ["dir == 'it\\'s'", { dir: "it's" }, true],
    ["dir == 'tab\\there'", { dir: 'tab\there' }, true],
    ["dir == '\\x41\\\\'", { dir: 'A\\' }, true],
    ["dir == 'back\\slash'", { dir: 'back\\slash' }, true],
    ["dir == ''", { dir: '' }, true],
    ["dir < 'b'", { dir: 'abc' }, true],
    ["dir >= 'cat' & dir <= 'pig'", { dir: 'piglet' }, false],
    ["dir >= 'cat' & dir <= 'pig'", { dir: 'dog' }, true],
    ["dir == 'é'", { dir: 'é' }, true],
    // string vs number: never equal, no ordering (numpy-like)
    ['dir == 3', { dir: '3' }, false],
    ['dir != 3', { dir: '3' }, true],
    ['dir < 3', { dir: '1' }, false],
    ['a == 1', { a: undefined }, false],
    ['a != 1', { a: null }, true],
    // IN lists
    ['a IN (1, 2, 3)', { a: 2 }, true],
    ['a in (1, 2, 3,)', { a: 4 }, false],
    ['a IN (1, 2)', { a: 2n }, true],
    ['a IN (18446744073709551615)', { a: 18446744073709551615n }, true],
    ['a IN (1e20)', { a: 100000000000000000000n }, true],
    ['a IN (100000000000000000000)', { a: 1e20 }, true],
    ['a IN (1.5, 2)', { a: 1.5 }, true],
    ['a IN (1)', { a: true }, true],
    ['temp IN (1)', { temp: NaN }, false],
    ["dir IN ('N', b'S')", { dir: 'S' }, true],
    ["dir IN ('N', b'S')", { dir: 'E' }, false],
    ['dir IN (N, S)', { dir: 'N' }, true],
    ['dir IN (1)', { dir: '1' }, false],
    ['a NOT IN (1, 2)', { a: 3 }, true],
    ['a not in (1, 2)', { a: 1 }, false],
    ['~(a IN (1)) & b == 2', { a: 2, b: 2 }, true],
    // where clause = and
    ['a > 1 where dir in (N)', { a: 2, dir: 'N' }, true],
    ['a > 1 WHERE dir IN (N)', { a: 2, dir: 'S' }, false],
    ['a > 1 where b < 3 | b > 10', { a: 2, b: 11 }, true],
    ['a > 5 | b > 1 where dir in (N)', { a: 9, b: 0, dir: 'S' }, false],
    // constant sub-expressions are allowed once a field is referenced
    ['1 < 2 & a == 1', { a: 1 }, true],
    ["'x' == 'y' | a == 1", { a: 0 }, false],
  ];
  for (const [expr, values, want] of cases) {
    it(`${expr} on ${JSON.stringify(values, (_, v) => (typeof v === 'bigint' ? `${v}n` : Number.isNaN(v) ? 'NaN' : v))} -> ${want}`, () => {
      expect(compileQuery(expr, FIELDS)(row(values))).to.equal(want);
    });
  }

  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['   ', /empty/],
    ['a', /expected a comparison operator .* after field 'a'/],
    ['~a', /comparison operator/],
    ['a >', /expected a field name or a literal at position 4, got 'end of query'/],
    ['(a > 1', /expected '\)' at position 7/],
    ['a > 1)', /unexpected '\)' at position 6/],
    ['a > 1 &', /expected a field name or a literal/],
    ['a > 1 & & b > 2', /expected a field name or a literal at position 9, got '&'/],
    ['a > 1 && b > 2', /got '&'/],
    ['1 > 0', /no field referenced/],
    ["'x' == 'x'", /no field referenced/],
    ['1 < a < 3', /chained comparison/],
    ['a + 1 > 2', /arithmetic/],
    ['a * 2 > 2', /arithmetic/],
    ['-a > 2', /arithmetic/],
    ['a > 2 - 1', /arithmetic/],
    ["dir == 'abc", /unterminated string/],
    ['dir == "abc', /unterminated string/],
    ['a IN ()', /a value in the IN list/],
    ['a IN 1, 2', /'\(' after IN/],
    ['a IN (1 2)', /',' or '\)'/],
    ['a IN (1, (2))', /a value/],
    ['a IN (1', /',' or '\)'/],
    ['3 IN (1)', /must follow a field name/],
    ['a > 12abc', /invalid number '12abc'/],
    ['a == = 1', /use '=='/],
    ['a > 1 where', /expected a field name or a literal/],
    ['a > 1 where b > 1 where b > 2', /unexpected 'where'/],
    ['nosuch > 1', /unknown field 'nosuch' at position 1 \(fields: temp, dir, a, b, big, flag, in, or\)/],
    ['a > 1 and nosuch < 2', /unknown field 'nosuch' at position 11/],
    ['Temp > 1', /unknown field 'Temp'/],
    ['a > $x', /unexpected character '\$'/],
    ['a.b > 1', /unexpected character '.'/],
    ['a > 1 a < 2', /unexpected 'a' at position 7/],
    ['() ', /expected a field name or a literal/],
    ['a == 1 |', /expected a field name or a literal/],
    ['(a == 1) (b == 2)', /unexpected '\('/],
  ];
  for (const [expr, re] of bad) {
    it(`rejects ${JSON.stringify(expr)}`, () => expectBadQuery(() => compileQuery(expr, FIELDS), re));
  }
});

describe('query: parseQuery extras', () => {
  it('reports the fields it reads', () => {
    const q = parseQuery("close > open & stock_symbol == 'A' | open < 1", STOCK_FIELDS);
    expect(q.fields).to.deep.equal([0, 2, 3]);
    expect(parseQuery('where date in (x)', STOCK_FIELDS).fields).to.deep.equal([1]);
  });

  it('treats a field named not as a field where an operand is expected', () => {
    expect(compileQuery('not > 1', ['not'])([2])).to.equal(true);
  });

  it('accepts non-ASCII field names', () => {
    expect(compileQuery('température > 1 & 温度 < 3', ['température', '温度'])([2, 2])).to.equal(true);
  });

  describe('with field kinds', () => {
    const names = ['n', 's', 'arr'];
    const kinds: FieldKind[] = ['number', 'string', 'other'];
    const ok = ['n > 1', "s == 'x'", "s IN ('a', b)", 'n IN (1, 2)', 'n < n', "'a' < s"];
    for (const expr of ok) {
      it(`accepts ${expr}`, () => expect(() => parseQuery(expr, names, kinds)).to.not.throw());
    }
    const bad: [string, RegExp][] = [
      ["n == 'x'", /cannot compare number field 'n' with string 'x'/],
      ['s > 3', /cannot compare string field 's' with number 3/],
      ['n == s', /cannot compare number field 'n' with string field 's'/],
      ['arr == 1', /field 'arr' has a type that cannot be used in a query/],
      ["n IN (1, 'x')", /IN list for number field 'n' contains string 'x'/],
      ['s IN (1)', /IN list for string field 's' contains number 1/],
    ];
    for (const [expr, re] of bad) {
      it(`rejects ${expr}`, () => expectBadQuery(() => parseQuery(expr, names, kinds), re));
    }
  });

  it('float32 fields compare with literals rounded to float32 (numpy), others in float64', () => {
    const x = Math.fround(0.999); // 0.99900001287...
    const col = Float64Array.from([x, 0.9995, 0.5]);
    const mask = (expr: string, f32: boolean[]) => Array.from(parseQuery(expr, ['_'], ['number'], { float32: f32 }).mask([col], 3));
    const table: [string, number[], number[]][] = [
      // expr, float32 field, float64 field
      ['_ > 0.999', [0, 1, 0], [1, 1, 0]],
      ['0.999 < _', [0, 1, 0], [1, 1, 0]],
      ['_ == 0.999', [1, 0, 0], [0, 0, 0]],
      ['_ != 0.999 AND NOT _ >= 0.9995', [0, 0, 1], [1, 0, 1]],
      ['_ IN (0.999, 0.5)', [1, 0, 1], [0, 0, 1]],
    ];
    for (const [expr, f32, f64] of table) {
      expect(mask(expr, [true]), `${expr} float32`).to.deep.equal(f32);
      expect(mask(expr, [false]), `${expr} float64`).to.deep.equal(f64);
      expect(mask(expr, []), `${expr} no option`).to.deep.equal(f64);
    }
    // the row predicate agrees with the mask
    expect(parseQuery('_ == 0.999', ['_'], undefined, { float32: [true] }).test([x])).to.equal(true);
  });

  it('evaluates 1e6 rows quickly', () => {
    const test = compileQuery("(temp > 32.0) & (dir == b'N') | temp IN (1, 2, 3)", ['temp', 'dir']);
    const rows: [number, string][] = Array.from({ length: 1e6 }, (_, i) => [i % 100, i % 2 ? 'N' : 'S']);
    const t0 = performance.now();
    let n = 0;
    for (const r of rows) if (test(r)) n++;
    const ms = performance.now() - t0;
    expect(n).to.equal(370000); // 34% odd temps above 32 with dir N, plus 3% temps 1..3
    expect(ms).to.be.below(500);
  });
});

describe('query: messages', () => {
  it('escapes control characters echoed from the query', () => {
    expectBadQuery(() => compileQuery("a > 'x\ny' b", ['a']), /unexpected 'b'/);
    expectBadQuery(() => compileQuery('a > \u0001', ['a']), /unexpected character '\\u0001'/);
  });
});
