/**
 * `GET /domains?query=<expr>` (wire-reference 1.7): keep the domains of a folder whose root group's
 * scalar attributes satisfy a boolean expression, e.g. `attr1 > 7 AND attr2 != 'A0000004'`. The
 * expression language is the one of dataset `query=` (selection/query.ts); the names it uses are
 * root attribute names.
 *
 * A domain matches only when every attribute the expression names exists on its root group as a
 * scalar (or one-element) integer, float or string attribute; otherwise it is left out.
 */
import type { TypeJson } from '../../codec/types.js';
import { decodeElements } from '../../codec/values.js';
import * as io from '../../hdf5/io.js';
import * as h5 from '../../hdf5/objects.js';
import { type QueryValue, parseQuery } from '../../selection/query.js';
import type { DomainFile } from './domainFile.js';

/** A parsed domain query: the attribute names it reads and the row predicate over them. */
export interface DomainQuery {
  names: string[];
  test: (row: readonly unknown[]) => boolean;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'where']);

/**
 * Parse a domain query. The words of the expression (outside string literals, other than the
 * keywords) are the candidate attribute names.
 * @throws H5StoreError BadRequest for a syntax error or an expression naming no attribute.
 */
export function parseDomainQuery(expr: string): DomainQuery {
  const bare = expr.replace(/[bB]?'(?:[^'\\]|\\.)*'|[bB]?"(?:[^"\\]|\\.)*"/g, ' ');
  const words = [...new Set((bare.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).filter((w) => !KEYWORDS.has(w.toLowerCase())))];
  const q = parseQuery(expr, words);
  const names = q.fields.map((i) => words[i]);
  const pos = q.fields;
  return { names, test: (row) => q.test(remap(row, pos, words.length)) };
}

/** Place the values of the used names at their indexes in the parser's field list. */
function remap(row: readonly unknown[], pos: number[], n: number): unknown[] {
  const full = new Array<unknown>(n);
  pos.forEach((p, i) => (full[p] = row[i]));
  return full;
}

/**
 * The values of the named root attributes of an open domain file, for `DomainQuery.test`;
 * undefined when one is missing or not a scalar number or string.
 */
export function rootAttributeRow(f: DomainFile, names: string[]): QueryValue[] | undefined {
  return h5.withObject(f.h, f.rootAddr, (root) => {
    const row: QueryValue[] = [];
    for (const name of names) {
      if (!io.attributeExists(root, name)) return undefined;
      const aid = io.openAttribute(root, name);
      try {
        const meta = io.describeAttribute(aid, name);
        const n = meta.space.cls === 'H5S_SCALAR' ? 1 : meta.space.cls === 'H5S_SIMPLE' ? meta.space.dims.reduce((a, b) => a * b, 1) : 0;
        if (n !== 1 || !isScalarKind(meta.type)) return undefined;
        const v = decodeElements(io.readAttribute(aid, meta.type, 1), meta.type, 1).values[0];
        if (typeof v !== 'number' && typeof v !== 'bigint' && typeof v !== 'string') return undefined;
        row.push(v);
      } finally {
        io.closeAttribute(aid);
      }
    }
    return row;
  });
}

function isScalarKind(t: TypeJson): boolean {
  return t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT' || t.class === 'H5T_STRING';
}
