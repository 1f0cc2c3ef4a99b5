/**
 * The `query=` condition of `GET`/`PUT /datasets/{id}/value` on one-dimensional compound
 * datasets (wire-reference 2.4), compiled into a row predicate. No `eval`, no `new Function`:
 * the text is tokenized, parsed by recursive descent, and turned into closures.
 *
 * What HSDS accepts (read in its source and tests, HDFGroup/hsds):
 * - Until early 2024 (`chunkUtil._getEvalStr`) the query was rewritten into a numpy expression:
 *   field names became `arr['field']` and the rest was passed to Python `eval`, so the documented
 *   form is numpy's: `(temp > 32.0) & (dir == b'N')`, with `&`, `|`, `~` and mandatory
 *   parentheses (Python binds `&` tighter than `>`). PR #328 (2024-03) added a trailing
 *   `… where field in (b'A', b'B')` clause (and a query that is only `where field in (...)`),
 *   meaning "and the field is one of these"; list items are quoted strings (optionally `b`) or
 *   bare tokens converted to the field's type.
 * - Later versions (`util/boolparser.BooleanParser`, tests `bool_parser_test.py` and
 *   `integ/query_test.py`) parse instead: `Expression -> AndTerm {OR AndTerm}`,
 *   `AndTerm -> Condition {AND Condition}`, `Condition -> Terminal op Terminal | (Expression)`,
 *   where AND is `AND` or `&`, OR is `OR` or `|`, and `field IN (b'A', b'B')` is a condition,
 *   e.g. `open < 3000 AND stock_symbol IN (b'AAPL', b'EBAY')`. Comparisons bind tighter than
 *   AND/OR, so `temp >= 30 & temp < 40` works. Numbers are floats; `'x'` and `b'x'` compare alike.
 *   Rejected (400): `foobar`, `open @ 12`, `gloop < blag`, `x = 12`, `open > 12; close < 40`.
 * - Neither has lowercase `and`/`or`/`not` keywords (the old form would take them for field
 *   names), nor arithmetic in the newer form.
 *
 * This module accepts the union, with comparison binding tighter than NOT, AND, OR, WHERE:
 * ```
 * query      := orExpr [WHERE orExpr] | WHERE orExpr        (WHERE means AND)
 * orExpr     := andExpr { ('|' | OR) andExpr }
 * andExpr    := notExpr { ('&' | AND) notExpr }
 * notExpr    := ('~' | NOT) notExpr | '(' orExpr ')' | condition
 * condition  := operand cmp operand | field [NOT] IN '(' item {',' item} [','] ')'
 * cmp        := '==' | '!=' | '<' | '<=' | '>' | '>='
 * operand    := field | number | string
 * item       := number | string | bare word (taken as a string, like HSDS's where-in list)
 * ```
 * - Keywords `AND OR NOT IN WHERE` are case-insensitive. Where an operand is expected a word that
 *   names a field is the field, so a field called `in` or `or` still works there.
 * - Field names are words of letters, digits and `_` (HSDS: `isalnum()` or `_`); no quoting form
 *   exists in HSDS, so none is offered. Names are case-sensitive.
 * - Numbers: `12`, `-3`, `+4.5`, `.5`, `1e-3`; integers beyond 2^53 are kept exact as bigints.
 * - Strings: `'..'`, `".."`, `b'..'`, `b".."` (prefix `b`/`B`); `'x'` and `b'x'` are the same
 *   (fixed-length and vlen strings are decoded to JS strings). Escapes `\\ \' \" \n \r \t \0
 *   \xHH` are understood; other backslashes are kept.
 * - At least one field must be referenced (HSDS: "No field value").
 * - Not supported (400 with a message): chained comparisons (`1 < a < 3`), a bare field as a
 *   condition, arithmetic, `=`.
 *
 * Comparison semantics at run time (row values are numbers, bigints, strings or booleans):
 * numbers, bigints and booleans (as 0/1) compare numerically, exactly across number/bigint;
 * NaN is unequal to everything; strings compare by UTF-16 code units (bytewise for ASCII, like
 * numpy). A string compared with a number is never equal (`!=` is true, ordering false), like
 * numpy's elementwise comparison; pass `fieldKinds` to reject such queries up front instead.
 */
import { badRequest } from '../errors.js';
import { printable } from './select.js';

/** A decoded field value as the predicate receives it. */
export type QueryValue = number | bigint | string | boolean;

/**
 * Fixed-length strings left encoded: equality tests compare bytes (no string per row), other
 * uses decode one value at a time.
 */
export interface EncodedStrings {
  readonly encoded: true;
  readonly length: number;
  /** The decoded string of row k. */
  get(k: number): string;
  /** Whether row k decodes to `s` (compares bytes). */
  equals(k: number, s: string): boolean;
  /** Set out[k] = 1 where row k decodes to `s` (0 elsewhere), for k < n: one tight loop. */
  matchInto(s: string, out: Uint8Array, n: number): void;
}

/** One column of values for `CompiledQuery.mask`. */
export type Column = ArrayLike<unknown> | EncodedStrings;

const isEncoded = (c: Column | undefined): c is EncodedStrings => !!c && (c as EncodedStrings).encoded === true;

/** What kind of values a field holds, for compile-time type checks. */
export type FieldKind = 'number' | 'string' | 'other';

/** A compiled query. */
export interface CompiledQuery {
  /** True when the row satisfies the query; `row[i]` is the value of `fieldNames[i]`. */
  test: (row: readonly unknown[]) => boolean;
  /**
   * Column-wise evaluation: `cols[i]` holds `n` values of field i (a Float64Array or other
   * typed array for numbers, an array of strings or other values otherwise; only the fields in
   * `fields` are read). Returns a mask with 1 for every matching row. Same semantics as `test`,
   * numpy style: one tight loop per condition instead of one closure call per row.
   */
  mask: (cols: readonly Column[], n: number) => Uint8Array;
  /** Indexes (into `fieldNames`) of the fields the query reads, ascending. */
  fields: number[];
}

type CmpOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

type Token =
  | { t: 'num'; v: number | bigint; text: string; pos: number }
  | { t: 'str'; v: string; text: string; pos: number }
  | { t: 'word'; v: string; text: string; pos: number }
  | { t: 'cmp'; v: CmpOp; text: string; pos: number }
  | { t: 'punct'; v: '(' | ')' | ',' | '&' | '|' | '~'; text: string; pos: number }
  | { t: 'end'; text: string; pos: number };

type Operand = { kind: 'field'; index: number } | { kind: 'lit'; value: number | bigint | string };

type Node =
  | { kind: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'not'; arg: Node }
  | { kind: 'cmp'; op: CmpOp; left: Operand; right: Operand }
  | { kind: 'in'; field: number; items: (number | bigint | string)[]; negate: boolean };

/** 400 with the common prefix every query error carries (control characters escaped). */
function invalid(msg: string) {
  return badRequest(`Invalid query: ${printable(msg)}`);
}

const WORD_START = /[\p{L}_]/u;
const WORD_CHAR = /[\p{L}\p{N}_]/u;
const NUMBER = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const ESCAPES = new Map([['\\', '\\'], ["'", "'"], ['"', '"'], ['n', '\n'], ['r', '\r'], ['t', '\t'], ['0', '\0']]);

/** Parse a numeric literal: integers stay exact (bigint beyond 2^53), the rest are floats. */
function numberValue(text: string): number | bigint {
  if (/^[+-]?\d+$/.test(text)) {
    const b = BigInt(text);
    return b > MAX_SAFE || b < -MAX_SAFE ? b : Number(b);
  }
  return Number(text);
}

/** Read a quoted string starting at `s[i]` (the quote); returns the value and the end index. */
function readString(s: string, i: number): { value: string; end: number } {
  const quote = s[i]!;
  let out = '';
  let j = i + 1;
  while (j < s.length) {
    const ch = s[j]!;
    if (ch === quote) return { value: out, end: j + 1 };
    if (ch === '\\' && j + 1 < s.length) {
      const e = s[j + 1]!;
      const simple = ESCAPES.get(e);
      if (simple !== undefined) {
        out += simple;
        j += 2;
        continue;
      }
      if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(j + 2, j + 4))) {
        out += String.fromCharCode(parseInt(s.slice(j + 2, j + 4), 16));
        j += 4;
        continue;
      }
      out += ch; // unknown escape: keep the backslash (Python does)
      j += 1;
      continue;
    }
    out += ch;
    j += 1;
  }
  throw invalid(`unterminated string starting at position ${i + 1}`);
}

/** Split the query text into tokens. Positions in errors are 1-based. */
function tokenize(s: string): Token[] {
  const toks: Token[] = [];
  let i = 0;
  const valueBefore = () => {
    const p = toks[toks.length - 1];
    return p !== undefined && (p.t === 'num' || p.t === 'str' || p.t === 'word' || (p.t === 'punct' && p.v === ')'));
  };
  while (i < s.length) {
    const ch = s[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const pos = i + 1;
    const two = s.slice(i, i + 2);
    if (two === '==' || two === '!=' || two === '<=' || two === '>=') {
      toks.push({ t: 'cmp', v: two as CmpOp, text: two, pos });
      i += 2;
      continue;
    }
    if (ch === '<' || ch === '>') {
      toks.push({ t: 'cmp', v: ch as CmpOp, text: ch, pos });
      i++;
      continue;
    }
    if (ch === '=') throw invalid(`'=' at position ${pos}: use '==' to compare`);
    if (ch === '(' || ch === ')' || ch === ',' || ch === '&' || ch === '|' || ch === '~') {
      toks.push({ t: 'punct', v: ch as '(' | ')' | ',' | '&' | '|' | '~', text: ch, pos });
      i++;
      continue;
    }
    if (ch === "'" || ch === '"') {
      const { value, end } = readString(s, i);
      toks.push({ t: 'str', v: value, text: s.slice(i, end), pos });
      i = end;
      continue;
    }
    if ((ch === 'b' || ch === 'B') && (s[i + 1] === "'" || s[i + 1] === '"')) {
      const { value, end } = readString(s, i + 1);
      toks.push({ t: 'str', v: value, text: s.slice(i, end), pos });
      i = end;
      continue;
    }
    const signed = (ch === '-' || ch === '+') && !valueBefore();
    const numAt = signed ? i + 1 : i;
    NUMBER.lastIndex = numAt;
    const m = /[\d.]/.test(s[numAt] ?? '') ? NUMBER.exec(s) : null;
    if (m) {
      const end = numAt + m[0].length;
      if (end < s.length && WORD_CHAR.test(s[end]!)) {
        let e = end;
        while (e < s.length && WORD_CHAR.test(s[e]!)) e++;
        throw invalid(`invalid number '${s.slice(i, e)}' at position ${pos}`);
      }
      const text = s.slice(i, end);
      toks.push({ t: 'num', v: numberValue(text), text, pos });
      i = end;
      continue;
    }
    if (WORD_START.test(ch)) {
      let e = i + 1;
      while (e < s.length && WORD_CHAR.test(s[e]!)) e++;
      const text = s.slice(i, e);
      toks.push({ t: 'word', v: text, text, pos });
      i = e;
      continue;
    }
    if (ch === '-' || ch === '+' || ch === '*' || ch === '/' || ch === '%') {
      throw invalid(`'${ch}' at position ${pos}: arithmetic is not supported`);
    }
    throw invalid(`unexpected character '${ch}' at position ${pos}`);
  }
  toks.push({ t: 'end', text: 'end of query', pos: s.length + 1 });
  return toks;
}

/** Recursive-descent parser over the tokens (grammar in the module comment). */
class Parser {
  private i = 0;
  readonly used = new Set<number>();
  constructor(
    private readonly toks: Token[],
    private readonly fieldIndex: Map<string, number>,
    private readonly fieldNames: readonly string[],
  ) {}

  private peek(offset = 0): Token {
    return this.toks[Math.min(this.i + offset, this.toks.length - 1)]!;
  }
  private next(): Token {
    const t = this.peek();
    if (t.t !== 'end') this.i++;
    return t;
  }
  private isKeyword(t: Token, kw: string): boolean {
    return t.t === 'word' && t.v.toLowerCase() === kw;
  }
  private isPunct(t: Token, p: string): boolean {
    return t.t === 'punct' && t.v === p;
  }
  private unexpected(t: Token, expected: string) {
    return invalid(`expected ${expected} at position ${t.pos}, got '${t.text}'`);
  }

  parseQuery(): Node {
    let node: Node;
    if (this.isKeyword(this.peek(), 'where') && this.peek(1).t === 'word') {
      this.next();
      node = this.parseOr();
    } else {
      node = this.parseOr();
      if (this.isKeyword(this.peek(), 'where')) {
        this.next();
        node = { kind: 'and', left: node, right: this.parseOr() };
      }
    }
    const t = this.peek();
    if (t.t !== 'end') throw invalid(`unexpected '${t.text}' at position ${t.pos}`);
    if (this.used.size === 0) throw invalid('no field referenced');
    return node;
  }

  private parseOr(): Node {
    let left = this.parseAnd();
    for (;;) {
      const t = this.peek();
      if (!this.isPunct(t, '|') && !this.isKeyword(t, 'or')) return left;
      this.next();
      left = { kind: 'or', left, right: this.parseAnd() };
    }
  }

  private parseAnd(): Node {
    let left = this.parseNot();
    for (;;) {
      const t = this.peek();
      if (!this.isPunct(t, '&') && !this.isKeyword(t, 'and')) return left;
      this.next();
      left = { kind: 'and', left, right: this.parseNot() };
    }
  }

  private parseNot(): Node {
    const t = this.peek();
    if (this.isPunct(t, '~') || (this.isKeyword(t, 'not') && !this.fieldIndex.has(t.text))) {
      this.next();
      return { kind: 'not', arg: this.parseNot() };
    }
    if (this.isPunct(t, '(')) {
      this.next();
      const inner = this.parseOr();
      const close = this.next();
      if (!this.isPunct(close, ')')) throw this.unexpected(close, "')'");
      return inner;
    }
    return this.parseCondition();
  }

  private parseCondition(): Node {
    const left = this.parseOperand();
    const t = this.peek();
    if (t.t === 'cmp') {
      this.next();
      const right = this.parseOperand();
      const after = this.peek();
      if (after.t === 'cmp') {
        throw invalid(
          `chained comparison at position ${after.pos} is not supported; combine two comparisons with '&'`,
        );
      }
      return { kind: 'cmp', op: t.v, left, right };
    }
    let negate = false;
    if (this.isKeyword(t, 'not') && this.isKeyword(this.peek(1), 'in')) {
      this.next();
      negate = true;
    }
    if (this.isKeyword(this.peek(), 'in')) {
      const kw = this.next();
      if (left.kind !== 'field') throw invalid(`'IN' at position ${kw.pos} must follow a field name`);
      return { kind: 'in', field: left.index, items: this.parseList(), negate };
    }
    const what = left.kind === 'field' ? `field '${this.fieldNames[left.index]}'` : 'a literal';
    throw invalid(
      `expected a comparison operator (==, !=, <, <=, >, >=) or IN after ${what} at position ${t.pos}, got '${t.text}'`,
    );
  }

  private parseList(): (number | bigint | string)[] {
    const open = this.next();
    if (!this.isPunct(open, '(')) throw this.unexpected(open, "'(' after IN");
    const items: (number | bigint | string)[] = [];
    for (;;) {
      const t = this.next();
      if (this.isPunct(t, ')') && items.length > 0) break;
      if (t.t === 'num' || t.t === 'str' || t.t === 'word') items.push(t.v);
      else throw this.unexpected(t, items.length === 0 ? 'a value in the IN list' : 'a value');
      const sep = this.next();
      if (this.isPunct(sep, ')')) break;
      if (!this.isPunct(sep, ',')) throw this.unexpected(sep, "',' or ')' in the IN list");
    }
    return items;
  }

  private parseOperand(): Operand {
    const t = this.next();
    if (t.t === 'num' || t.t === 'str') return { kind: 'lit', value: t.v };
    if (t.t === 'word') {
      const index = this.fieldIndex.get(t.v);
      if (index === undefined) {
        const names = this.fieldNames.slice(0, 20).join(', ') + (this.fieldNames.length > 20 ? ', ...' : '');
        throw invalid(`unknown field '${t.v}' at position ${t.pos} (fields: ${names})`);
      }
      this.used.add(index);
      return { kind: 'field', index };
    }
    throw this.unexpected(t, 'a field name or a literal');
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

const EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5;
const OP_CODE: Record<CmpOp, number> = { '==': EQ, '!=': NE, '<': LT, '<=': LE, '>': GT, '>=': GE };

/** Compare two values under the semantics described in the module comment. */
function compare(op: number, a: unknown, b: unknown): boolean {
  if (typeof a === 'boolean') a = a ? 1 : 0;
  if (typeof b === 'boolean') b = b ? 1 : 0;
  const ta = typeof a;
  const tb = typeof b;
  if ((ta === 'number' || ta === 'bigint') && (tb === 'number' || tb === 'bigint')) {
    const x = a as number | bigint;
    const y = b as number | bigint;
    switch (op) {
      case EQ: return x == y; // loose on purpose: exact number/bigint equality
      case NE: return x != y;
      case LT: return x < y;
      case LE: return x <= y;
      case GT: return x > y;
      default: return x >= y;
    }
  }
  if (ta === 'string' && tb === 'string') {
    const x = a as string;
    const y = b as string;
    switch (op) {
      case EQ: return x === y;
      case NE: return x !== y;
      case LT: return x < y;
      case LE: return x <= y;
      case GT: return x > y;
      default: return x >= y;
    }
  }
  return op === NE;
}

/** Membership test for an IN list, with the same equality as `==`, in O(1) per row. */
function membership(items: (number | bigint | string)[]): (v: unknown) => boolean {
  const nums = new Set<number>();
  const bigs = new Set<bigint>();
  const strs = new Set<string>();
  for (const it of items) {
    if (typeof it === 'string') strs.add(it);
    else if (typeof it === 'bigint') bigs.add(it);
    else if (!Number.isNaN(it)) nums.add(it);
  }
  return (v: unknown): boolean => {
    if (typeof v === 'boolean') v = v ? 1 : 0;
    if (typeof v === 'string') return strs.has(v);
    if (typeof v === 'number') {
      if (nums.has(v)) return true;
      return bigs.size > 0 && Number.isInteger(v) && bigs.has(BigInt(v));
    }
    if (typeof v === 'bigint') {
      if (v <= MAX_SAFE && v >= -MAX_SAFE) return nums.has(Number(v));
      if (bigs.has(v)) return true;
      const f = Number(v);
      return nums.has(f) && BigInt(f) === v;
    }
    return false;
  };
}

type Pred = (row: readonly unknown[]) => boolean;

function compileNode(n: Node): Pred {
  switch (n.kind) {
    case 'and': {
      const l = compileNode(n.left), r = compileNode(n.right);
      return (row) => l(row) && r(row);
    }
    case 'or': {
      const l = compileNode(n.left), r = compileNode(n.right);
      return (row) => l(row) || r(row);
    }
    case 'not': {
      const a = compileNode(n.arg);
      return (row) => !a(row);
    }
    case 'in': {
      const has = membership(n.items);
      const i = n.field;
      return n.negate ? (row) => !has(row[i]) : (row) => has(row[i]);
    }
    case 'cmp': {
      const op = OP_CODE[n.op];
      const { left: l, right: r } = n;
      if (l.kind === 'field' && r.kind === 'lit') {
        const i = l.index, v = r.value;
        return (row) => compare(op, row[i], v);
      }
      if (l.kind === 'lit' && r.kind === 'field') {
        const v = l.value, j = r.index;
        return (row) => compare(op, v, row[j]);
      }
      if (l.kind === 'field' && r.kind === 'field') {
        const i = l.index, j = r.index;
        return (row) => compare(op, row[i], row[j]);
      }
      const c = compare(op, (l as { value: unknown }).value, (r as { value: unknown }).value);
      return () => c;
    }
  }
}

/**
 * The query with every number literal compared with a float32 field rounded to float32, so the
 * comparison is numpy's: a float32 array against a Python scalar compares in float32
 * (`a > 0.999` is false for the float32 nearest 0.999), as HSDS's and h5pyd 1.0's numpy
 * evaluation (`h5json.query_util`) do; `IN` items likewise (`_ IN (v)` is `_ == v`).
 * Bigint literals (beyond 2^53) are kept.
 */
function roundToFloat32(n: Node, float32: readonly boolean[]): Node {
  const lit = (o: Operand, other: Operand): Operand =>
    o.kind === 'lit' && typeof o.value === 'number' && other.kind === 'field' && float32[other.index] ? { kind: 'lit', value: Math.fround(o.value) } : o;
  switch (n.kind) {
    case 'and':
    case 'or':
      return { kind: n.kind, left: roundToFloat32(n.left, float32), right: roundToFloat32(n.right, float32) };
    case 'not':
      return { kind: 'not', arg: roundToFloat32(n.arg, float32) };
    case 'in':
      // as `_ == v` for each item (numpy 1.x's isin compares item by item, value-based)
      return float32[n.field] ? { ...n, items: n.items.map((v) => (typeof v === 'number' ? Math.fround(v) : v)) } : n;
    case 'cmp':
      return { ...n, left: lit(n.left, n.right), right: lit(n.right, n.left) };
  }
}

/** Vectorized evaluation of a parsed query over columns (see `CompiledQuery.mask`). */
function maskNode(node: Node, cols: readonly Column[], n: number): Uint8Array {
  const out = new Uint8Array(n);
  switch (node.kind) {
    case 'and': {
      const a = maskNode(node.left, cols, n), b = maskNode(node.right, cols, n);
      for (let k = 0; k < n; k++) out[k] = a[k] & b[k];
      return out;
    }
    case 'or': {
      const a = maskNode(node.left, cols, n), b = maskNode(node.right, cols, n);
      for (let k = 0; k < n; k++) out[k] = a[k] | b[k];
      return out;
    }
    case 'not': {
      const a = maskNode(node.arg, cols, n);
      for (let k = 0; k < n; k++) out[k] = a[k] ^ 1;
      return out;
    }
    case 'in': {
      const c = cols[node.field]!;
      if (isEncoded(c) && node.items.every((it) => typeof it === 'string')) {
        const items = node.items as string[];
        for (let k = 0; k < n; k++) out[k] = items.some((it) => c.equals(k, it)) !== node.negate ? 1 : 0;
        return out;
      }
      const has = membership(node.items);
      const at = valueAt(c);
      for (let k = 0; k < n; k++) out[k] = has(at(k)) !== node.negate ? 1 : 0;
      return out;
    }
    case 'cmp': {
      const op = OP_CODE[node.op];
      const { left: l, right: r } = node;
      if ((op === EQ || op === NE) && l.kind === 'field' && r.kind === 'lit' && typeof r.value === 'string' && isEncoded(cols[l.index])) {
        (cols[l.index] as EncodedStrings).matchInto(r.value, out, n);
        if (op === NE) for (let k = 0; k < n; k++) out[k] ^= 1;
        return out;
      }
      if (l.kind === 'field' && r.kind === 'lit' && typeof r.value === 'number' && isNumericColumn(cols[l.index])) {
        numericCompare(op, cols[l.index] as ArrayLike<number>, r.value, n, out);
        return out;
      }
      if (l.kind === 'lit' && r.kind === 'field' && typeof l.value === 'number' && isNumericColumn(cols[r.index])) {
        // v op x  ==  x (flipped op) v
        const flip = [EQ, NE, GT, GE, LT, LE][op]!;
        numericCompare(flip, cols[r.index] as ArrayLike<number>, l.value, n, out);
        return out;
      }
      const get = (o: Operand): ((k: number) => unknown) => {
        if (o.kind === 'lit') {
          const v = o.value;
          return () => v;
        }
        return valueAt(cols[o.index]!);
      };
      const a = get(l), b = get(r);
      for (let k = 0; k < n; k++) out[k] = compare(op, a(k), b(k)) ? 1 : 0;
      return out;
    }
  }
}

function valueAt(c: Column): (k: number) => unknown {
  if (isEncoded(c)) return (k) => c.get(k);
  return (k) => c[k];
}

function isNumericColumn(c: Column | undefined): boolean {
  return ArrayBuffer.isView(c) && !(c instanceof BigInt64Array) && !(c instanceof BigUint64Array) && !(c instanceof DataView);
}

/** One comparison over a numeric column (NaN compares false except for !=). */
function numericCompare(op: number, c: ArrayLike<number>, v: number, n: number, out: Uint8Array): void {
  switch (op) {
    case EQ:
      for (let k = 0; k < n; k++) out[k] = c[k] === v ? 1 : 0;
      return;
    case NE:
      for (let k = 0; k < n; k++) out[k] = c[k] !== v ? 1 : 0;
      return;
    case LT:
      for (let k = 0; k < n; k++) out[k] = c[k] < v ? 1 : 0;
      return;
    case LE:
      for (let k = 0; k < n; k++) out[k] = c[k] <= v ? 1 : 0;
      return;
    case GT:
      for (let k = 0; k < n; k++) out[k] = c[k] > v ? 1 : 0;
      return;
    default:
      for (let k = 0; k < n; k++) out[k] = c[k] >= v ? 1 : 0;
  }
}

/** Compile-time type checks against `fieldKinds` (when the caller knows the field types). */
function checkKinds(n: Node, names: readonly string[], kinds: readonly FieldKind[]): void {
  const kindOf = (o: Operand): { kind: FieldKind; desc: string } => {
    if (o.kind === 'lit') {
      return typeof o.value === 'string'
        ? { kind: 'string', desc: `string '${o.value}'` }
        : { kind: 'number', desc: `number ${o.value}` };
    }
    const kind = kinds[o.index] ?? 'other';
    const name = names[o.index]!;
    if (kind === 'other') throw invalid(`field '${name}' has a type that cannot be used in a query`);
    return { kind, desc: `${kind} field '${name}'` };
  };
  switch (n.kind) {
    case 'and':
    case 'or':
      checkKinds(n.left, names, kinds);
      checkKinds(n.right, names, kinds);
      return;
    case 'not':
      checkKinds(n.arg, names, kinds);
      return;
    case 'cmp': {
      const a = kindOf(n.left), b = kindOf(n.right);
      if (a.kind !== b.kind) throw invalid(`cannot compare ${a.desc} with ${b.desc}`);
      return;
    }
    case 'in': {
      const f = kindOf({ kind: 'field', index: n.field });
      for (const it of n.items) {
        const k = typeof it === 'string' ? 'string' : 'number';
        if (k !== f.kind) throw invalid(`IN list for ${f.desc} contains ${k} ${typeof it === 'string' ? `'${it}'` : it}`);
      }
      return;
    }
  }
}

/**
 * Parse and compile a query (grammar and semantics in the module comment).
 * @param expr the `query=` text.
 * @param fieldNames the compound's field names, in the order of the row arrays the predicate
 *   receives.
 * @param fieldKinds optional kind of each field; when given, comparisons between mismatched
 *   kinds and fields of kind `other` are rejected here (400) instead of silently evaluating false.
 * @param opts.float32 per field, whether it is float32: number literals compared with such a
 *   field are rounded to float32 first (numpy's comparison of a float32 array with a scalar).
 * @throws badRequest (400) naming the problem: empty query, syntax error, unknown field, no field
 *   referenced, type mismatch.
 */
export function parseQuery(
  expr: string,
  fieldNames: readonly string[],
  fieldKinds?: readonly FieldKind[],
  opts: { float32?: readonly boolean[] } = {},
): CompiledQuery {
  if (typeof expr !== 'string' || expr.trim() === '') throw invalid('the query is empty');
  const fieldIndex = new Map<string, number>();
  fieldNames.forEach((name, i) => fieldIndex.set(name, i));
  const parser = new Parser(tokenize(expr), fieldIndex, fieldNames);
  let root = parser.parseQuery();
  if (fieldKinds) checkKinds(root, fieldNames, fieldKinds);
  if (opts.float32?.some(Boolean)) root = roundToFloat32(root, opts.float32);
  return {
    test: compileNode(root),
    mask: (cols, n) => maskNode(root, cols, n),
    fields: [...parser.used].sort((a, b) => a - b),
  };
}

/**
 * Compile a query into a row predicate: `row[i]` is the decoded value of field `fieldNames[i]`
 * (number, bigint, string or boolean). See `parseQuery`.
 * @throws badRequest (400) for an invalid query.
 */
export function compileQuery(
  expr: string,
  fieldNames: readonly string[],
  fieldKinds?: readonly FieldKind[],
): (row: readonly unknown[]) => boolean {
  return parseQuery(expr, fieldNames, fieldKinds).test;
}
