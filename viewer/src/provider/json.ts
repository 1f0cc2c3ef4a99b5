/**
 * JSON text as the HDF REST API writes it: standard JSON plus the bare literals `NaN`,
 * `Infinity` and `-Infinity` that HSDS (Python's `json` with `allow_nan`) and h5store put in
 * float values, fill values and attribute values (wire-reference 0.6). `JSON.parse` throws on
 * them ("Expected valid JSON" in h5web); `parseApiJson` reads them as the numbers they stand for.
 * Pure (no DOM): unit-tested in test/unit/viewer-provider.test.ts.
 */

/** A string no JSON text the server writes contains, standing for a non-finite number while parsing. */
const MARK = '\u0000h5store-nonfinite:';

/**
 * Parse API JSON text. Standard JSON goes straight to `JSON.parse`; text with non-finite
 * literals outside strings has them rewritten to marked strings first and turned back into
 * `NaN`/`Infinity`/`-Infinity` numbers by a reviver (strings that merely contain "NaN" stay
 * strings).
 * @throws SyntaxError for text that is not JSON even with the literals allowed
 */
export function parseApiJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (!/NaN|Infinity/.test(text)) throw e;
  }
  const marked = markNonFinite(text);
  return JSON.parse(marked, (_k, v: unknown) => {
    if (typeof v === 'string' && v.startsWith(MARK)) {
      const w = v.slice(MARK.length);
      return w === 'NaN' ? NaN : w === '-Infinity' ? -Infinity : Infinity;
    }
    return v;
  });
}

/** The text with each `NaN`, `Infinity`, `-Infinity` outside a string replaced by a marked string. */
export function markNonFinite(text: string): string {
  let out = '';
  let last = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // skip the string, honouring escapes
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i += 2;
        else if (d === 34) break;
        else i++;
      }
      i++;
      continue;
    }
    let word: string | undefined;
    if (c === 78 /* N */ && text.startsWith('NaN', i)) word = 'NaN';
    else if (c === 73 /* I */ && text.startsWith('Infinity', i)) word = 'Infinity';
    else if (c === 45 /* - */ && text.startsWith('-Infinity', i)) word = '-Infinity';
    if (word) {
      out += text.slice(last, i) + JSON.stringify(MARK + word);
      i += word.length;
      last = i;
      continue;
    }
    i++;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * A number the API may also write as a string (HSDS 1.0 sends NaN/Inf fill values as `"nan"`,
 * `"inf"`, `"-inf"` under `ignore_nan`): the number, or undefined for anything else.
 */
export function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  if (s === 'nan' || s === '-nan' || s === '+nan') return NaN;
  if (s === 'inf' || s === '+inf' || s === 'infinity' || s === '+infinity') return Infinity;
  if (s === '-inf' || s === '-infinity') return -Infinity;
  const x = Number(s);
  return s !== '' && !Number.isNaN(x) ? x : undefined;
}
