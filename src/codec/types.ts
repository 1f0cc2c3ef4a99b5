/**
 * Type JSON: validation of a client's `type` and the canonical form the service emits.
 *
 * Grammar: wire-reference 3.1 (HSDS / hdf5-json), with the spec's old spellings (service spec 2.1,
 * wire-reference section 7 row 4, DESIGN.md section 6): `cset`/`strpad`/`strsize` are accepted as
 * input aliases of `charSet`/`strPad`/`length`; enum `members` (row 13) as an alias of `mapping`;
 * `H5T_IEEE_F16` is accepted (row 25). Canonical output always uses type objects (never bare
 * predefined names in nested positions, wire-reference 2.8) and always carries `charSet`, `strPad`
 * and `length` on strings (h5web needs `strPad`).
 */
import { H5StoreError, badRequest, internal } from '../errors.js';

/** Canonical type JSON (wire-reference 3.1). `id` is set when the type is a committed datatype. */
export type TypeJson =
  | { class: 'H5T_INTEGER'; base: string; id?: string }
  | { class: 'H5T_FLOAT'; base: string; id?: string }
  | {
      class: 'H5T_STRING';
      charSet: 'H5T_CSET_ASCII' | 'H5T_CSET_UTF8';
      strPad: 'H5T_STR_NULLTERM' | 'H5T_STR_NULLPAD' | 'H5T_STR_SPACEPAD';
      length: number | 'H5T_VARIABLE';
      id?: string;
    }
  | { class: 'H5T_COMPOUND'; fields: { name: string; type: TypeJson }[]; id?: string }
  | { class: 'H5T_ARRAY'; base: TypeJson; dims: number[]; id?: string }
  | { class: 'H5T_ENUM'; base: TypeJson; mapping: Record<string, number>; id?: string }
  | { class: 'H5T_VLEN'; base: TypeJson; id?: string }
  | { class: 'H5T_OPAQUE'; size: number; tag: string; id?: string }
  | { class: 'H5T_BITFIELD'; base: string; id?: string }
  | { class: 'H5T_REFERENCE'; base: 'H5T_STD_REF_OBJ' | 'H5T_STD_REF_DSETREG'; id?: string };

export type TypeClass = TypeJson['class'];
export type StringType = Extract<TypeJson, { class: 'H5T_STRING' }>;
export type CompoundType = Extract<TypeJson, { class: 'H5T_COMPOUND' }>;
export type EnumType = Extract<TypeJson, { class: 'H5T_ENUM' }>;

/** Size in bytes of a reference element on the wire (wire-reference 3.1, 3.5). */
export const REFERENCE_SIZE = 48;
/** Largest rank of an HDF5 array type (H5S_MAX_RANK). */
const MAX_RANK = 32;
/** Largest fixed string / opaque / array element size accepted, in bytes. */
const MAX_TYPE_SIZE = 0x7fffffff;
/** HDF5's limit on an opaque tag (H5T_OPAQUE_TAG_MAX, including the NUL). */
const OPAQUE_TAG_MAX = 256;

const NUMERIC_RE = /^H5T_(STD_[IUB](?:8|16|32|64)|IEEE_F(?:16|32|64))(LE|BE)?$/;

/** Information about a numeric base name such as `H5T_STD_U16BE`. */
export interface NumericBase {
  kind: 'int' | 'uint' | 'bitfield' | 'float';
  /** Size in bytes. */
  size: 1 | 2 | 4 | 8;
  littleEndian: boolean;
}

const numericCache = new Map<string, NumericBase>();

/**
 * Decode a canonical numeric base name (`H5T_STD_I32LE`, `H5T_IEEE_F16BE`, `H5T_STD_B8LE`).
 * Returns undefined for anything else (including names without the LE/BE suffix).
 */
export function numericBase(base: string): NumericBase | undefined {
  let info = numericCache.get(base);
  if (info) return info;
  const m = NUMERIC_RE.exec(base);
  if (!m || !m[2]) return undefined;
  const body = m[1];
  const bits = Number(/\d+$/.exec(body)![0]);
  const kindChar = body.startsWith('IEEE') ? 'F' : body[4];
  info = {
    kind: kindChar === 'F' ? 'float' : kindChar === 'I' ? 'int' : kindChar === 'U' ? 'uint' : 'bitfield',
    size: (bits / 8) as 1 | 2 | 4 | 8,
    littleEndian: m[2] === 'LE',
  };
  if (info.kind === 'float' && info.size === 1) return undefined;
  numericCache.set(base, info);
  return info;
}

/** Like `numericBase` but for an already-validated type; throws `internal` if it is not numeric. */
export function numericInfo(t: TypeJson): NumericBase {
  const info =
    t.class === 'H5T_INTEGER' || t.class === 'H5T_FLOAT' || t.class === 'H5T_BITFIELD'
      ? numericBase(t.base)
      : t.class === 'H5T_ENUM'
        ? numericInfo(t.base)
        : undefined;
  if (!info) throw internal(`not a numeric type: ${JSON.stringify(t)}`);
  return info;
}

/**
 * The type object of a predefined type name (wire-reference 3.1 "Rules"):
 * `H5T_STD_[IU](8|16|32|64)(LE|BE)`, `H5T_IEEE_F(16|32|64)(LE|BE)`, `H5T_STD_B(8|16|32|64)(LE|BE)`
 * (bitfield) and `H5T_STD_REF_OBJ` / `H5T_STD_REF_DSETREG`. The LE/BE suffix may be left out
 * (h5pyd sends `H5T_STD_I32` as a vlen base); no suffix means little-endian.
 * Returns undefined if `name` is not a predefined name.
 */
export function predefinedType(name: string): TypeJson | undefined {
  if (name === 'H5T_STD_REF_OBJ' || name === 'H5T_STD_REF_DSETREG') return { class: 'H5T_REFERENCE', base: name };
  const m = NUMERIC_RE.exec(name);
  if (!m) return undefined;
  const base = `H5T_${m[1]}${m[2] ?? 'LE'}`;
  if (m[1].startsWith('IEEE')) return { class: 'H5T_FLOAT', base };
  if (m[1][4] === 'B') return { class: 'H5T_BITFIELD', base };
  return { class: 'H5T_INTEGER', base };
}

/** Resolves a committed datatype id (`t-...`) to its type; should throw 400/404 for bad ids. */
export type CommittedResolver = (id: string) => TypeJson;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const describe = (v: unknown): string => {
  if (typeof v === 'string') return `'${v}'`;
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 80 ? s.slice(0, 77) + '...' : s;
  } catch {
    return String(v);
  }
};

const fail = (where: string, msg: string): never => {
  throw badRequest(`Invalid type: ${where ? where + ': ' : ''}${msg}`);
};

const isPositiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** Integer range of an integer base, as bigint bounds. */
export function integerRange(info: NumericBase): { min: bigint; max: bigint } {
  const bits = BigInt(info.size * 8);
  if (info.kind === 'int') return { min: -(1n << (bits - 1n)), max: (1n << (bits - 1n)) - 1n };
  return { min: 0n, max: (1n << bits) - 1n };
}

/**
 * Validate a client's type and return its canonical form (wire-reference 3.1; spec 2.1).
 *
 * Accepts: a predefined name (see `predefinedType`), a committed type id (`t-...`, resolved with
 * `resolveCommitted`; the result carries `id`), or a type object of any class, recursively
 * (predefined names and committed ids are also accepted in nested positions: compound field
 * types, array/vlen/enum bases). String keys `cset`/`strpad`/`strsize` are aliases of
 * `charSet`/`strPad`/`length`; `strPad` defaults to `H5T_STR_NULLPAD` for fixed and
 * `H5T_STR_NULLTERM` for variable strings, `charSet` to ASCII. Enum members may be given as a
 * `mapping` dict or a `members` list of `{name, value}`. Old keys `order`, `size`, `base_size`
 * are ignored unless they contradict the type.
 *
 * @throws badRequest (`Invalid type: ...`) naming the problem for anything unknown or inconsistent.
 */
export function parseType(input: unknown, resolveCommitted?: CommittedResolver): TypeJson {
  return parseAt(input, '', resolveCommitted, 0);
}

/** Nesting limit of type definitions (compound/array/vlen/enum inside each other). */
const MAX_DEPTH = 32;

function parseAt(input: unknown, where: string, resolve: CommittedResolver | undefined, depth: number): TypeJson {
  if (depth > MAX_DEPTH) return fail('', `type nested more than ${MAX_DEPTH} levels deep`);
  if (typeof input === 'string') {
    if (input.startsWith('t-')) {
      if (!resolve) return fail(where, `committed type ${describe(input)} can't be used here`);
      const t = resolve(input);
      return { ...t, id: input };
    }
    const t = predefinedType(input);
    if (!t) return fail(where, `unknown predefined type ${describe(input)}`);
    return t;
  }
  if (input === undefined || input === null) return fail(where, 'no type given');
  if (!isObject(input)) return fail(where, `expected a type name or object, got ${describe(input)}`);
  const cls = input.class;
  if (typeof cls !== 'string') return fail(where, "type object has no 'class'");
  switch (cls) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
    case 'H5T_BITFIELD':
      return parseNumeric(input, cls, where);
    case 'H5T_STRING':
      return parseString(input, where);
    case 'H5T_COMPOUND':
      return parseCompound(input, where, resolve, depth);
    case 'H5T_ARRAY':
      return parseArray(input, where, resolve, depth);
    case 'H5T_ENUM':
      return parseEnum(input, where, resolve, depth);
    case 'H5T_VLEN': {
      if (input.base === undefined) return fail(where, "H5T_VLEN requires 'base'");
      const base = parseAt(input.base, join(where, 'vlen base'), resolve, depth + 1);
      return { class: 'H5T_VLEN', base };
    }
    case 'H5T_OPAQUE': {
      const size = input.size;
      if (!isPositiveInt(size) || size > MAX_TYPE_SIZE) return fail(where, `H5T_OPAQUE size must be a positive integer, got ${describe(size)}`);
      const tag = input.tag ?? '';
      if (typeof tag !== 'string') return fail(where, `H5T_OPAQUE tag must be a string, got ${describe(tag)}`);
      if (Buffer.byteLength(tag) >= OPAQUE_TAG_MAX) return fail(where, `H5T_OPAQUE tag longer than ${OPAQUE_TAG_MAX - 1} bytes`);
      return { class: 'H5T_OPAQUE', size, tag };
    }
    case 'H5T_REFERENCE': {
      const base = input.base;
      if (base !== 'H5T_STD_REF_OBJ' && base !== 'H5T_STD_REF_DSETREG')
        return fail(where, `H5T_REFERENCE base must be H5T_STD_REF_OBJ or H5T_STD_REF_DSETREG, got ${describe(base)}`);
      return { class: 'H5T_REFERENCE', base };
    }
    default:
      return fail(where, `unknown type class ${describe(cls)}`);
  }
}

const join = (where: string, part: string) => (where ? `${where}: ${part}` : part);

const ORDER_SUFFIX = new Map<unknown, 'LE' | 'BE'>([
  ['H5T_ORDER_LE', 'LE'],
  ['H5T_ORDER_BE', 'BE'],
]);

function parseNumeric(input: Record<string, unknown>, cls: 'H5T_INTEGER' | 'H5T_FLOAT' | 'H5T_BITFIELD', where: string): TypeJson {
  let base = input.base;
  if (typeof base !== 'string') return fail(where, `${cls} requires a 'base' name, got ${describe(base)}`);
  const m = NUMERIC_RE.exec(base);
  const kindOk =
    m !== null &&
    (cls === 'H5T_FLOAT' ? m[1].startsWith('IEEE') : cls === 'H5T_BITFIELD' ? m[1][4] === 'B' : /^STD_[IU]/.test(m[1]));
  if (!m || !kindOk) return fail(where, `invalid base ${describe(base)} for ${cls}`);
  let suffix = m[2] as 'LE' | 'BE' | undefined;
  const order = input.order;
  if (order !== undefined && order !== 'H5T_ORDER_NONE') {
    const o = ORDER_SUFFIX.get(order);
    if (!o) return fail(where, `invalid order ${describe(order)}`);
    if (suffix && suffix !== o) return fail(where, `order ${String(order)} contradicts base ${base}`);
    suffix = o;
  }
  base = `H5T_${m[1]}${suffix ?? 'LE'}`;
  const info = numericBase(base as string)!;
  const size = input.size;
  if (size !== undefined && size !== info.size) return fail(where, `size ${describe(size)} contradicts base ${base}`);
  return { class: cls, base: base as string } as TypeJson;
}

const CHARSETS = new Set(['H5T_CSET_ASCII', 'H5T_CSET_UTF8']);
const STRPADS = new Set(['H5T_STR_NULLTERM', 'H5T_STR_NULLPAD', 'H5T_STR_SPACEPAD']);

/** Value of `key` or its alias; 400 if both are given and differ. */
function aliased(input: Record<string, unknown>, key: string, alias: string, where: string): unknown {
  const a = input[key];
  const b = input[alias];
  if (a !== undefined && b !== undefined && a !== b) return fail(where, `'${key}' and '${alias}' disagree`);
  return a !== undefined ? a : b;
}

function parseString(input: Record<string, unknown>, where: string): TypeJson {
  const length = aliased(input, 'length', 'strsize', where);
  if (length === undefined) return fail(where, "H5T_STRING requires 'length'");
  if (length !== 'H5T_VARIABLE' && (!isPositiveInt(length) || length > MAX_TYPE_SIZE))
    return fail(where, `string length must be a positive integer or H5T_VARIABLE, got ${describe(length)}`);
  const charSet = aliased(input, 'charSet', 'cset', where) ?? 'H5T_CSET_ASCII';
  if (typeof charSet !== 'string' || !CHARSETS.has(charSet)) return fail(where, `invalid charSet ${describe(charSet)}`);
  const strPad = aliased(input, 'strPad', 'strpad', where) ?? (length === 'H5T_VARIABLE' ? 'H5T_STR_NULLTERM' : 'H5T_STR_NULLPAD');
  if (typeof strPad !== 'string' || !STRPADS.has(strPad)) return fail(where, `invalid strPad ${describe(strPad)}`);
  return {
    class: 'H5T_STRING',
    charSet: charSet as StringType['charSet'],
    strPad: strPad as StringType['strPad'],
    length: length as number | 'H5T_VARIABLE',
  };
}

function parseCompound(input: Record<string, unknown>, where: string, resolve: CommittedResolver | undefined, depth: number): TypeJson {
  const fields = input.fields;
  if (!Array.isArray(fields) || fields.length === 0) return fail(where, "H5T_COMPOUND requires a non-empty 'fields' list");
  const seen = new Set<string>();
  const out: { name: string; type: TypeJson }[] = [];
  for (const f of fields) {
    if (!isObject(f)) return fail(where, `compound field must be an object with 'name' and 'type', got ${describe(f)}`);
    const name = f.name;
    if (typeof name !== 'string' || name === '') return fail(where, `compound field name must be a non-empty string, got ${describe(name)}`);
    if (seen.has(name)) return fail(where, `duplicate compound field name '${name}'`);
    seen.add(name);
    if (f.type === undefined) return fail(where, `compound field '${name}' has no 'type'`);
    out.push({ name, type: parseAt(f.type, join(where, `field '${name}'`), resolve, depth + 1) });
  }
  return { class: 'H5T_COMPOUND', fields: out };
}

function parseArray(input: Record<string, unknown>, where: string, resolve: CommittedResolver | undefined, depth: number): TypeJson {
  let dims = input.dims;
  if (typeof dims === 'number') dims = [dims];
  if (!Array.isArray(dims) || dims.length === 0 || dims.length > MAX_RANK)
    return fail(where, `H5T_ARRAY requires 'dims', a list of 1 to ${MAX_RANK} positive integers, got ${describe(dims)}`);
  for (const d of dims) if (!isPositiveInt(d)) return fail(where, `H5T_ARRAY dims must be positive integers, got ${describe(dims)}`);
  if (input.base === undefined) return fail(where, "H5T_ARRAY requires 'base'");
  const base = parseAt(input.base, join(where, 'array base'), resolve, depth + 1);
  const t: TypeJson = { class: 'H5T_ARRAY', base, dims: [...(dims as number[])] };
  if (!isVariableLength(base) && typeSize(t) > MAX_TYPE_SIZE) return fail(where, 'H5T_ARRAY element too large');
  return t;
}

function parseEnum(input: Record<string, unknown>, where: string, resolve: CommittedResolver | undefined, depth: number): TypeJson {
  if (input.base === undefined) return fail(where, "H5T_ENUM requires 'base'");
  const base = parseAt(input.base, join(where, 'enum base'), resolve, depth + 1);
  if (base.class !== 'H5T_INTEGER') return fail(where, `H5T_ENUM base must be an integer type, got ${base.class}`);
  const range = integerRange(numericBase(base.base)!);
  let entries: [unknown, unknown][];
  if (input.mapping !== undefined) {
    if (!isObject(input.mapping)) return fail(where, `H5T_ENUM mapping must be an object, got ${describe(input.mapping)}`);
    entries = Object.entries(input.mapping);
  } else if (input.members !== undefined) {
    if (!Array.isArray(input.members)) return fail(where, `H5T_ENUM members must be a list, got ${describe(input.members)}`);
    entries = input.members.map((m) => {
      if (!isObject(m)) return fail(where, `H5T_ENUM member must be {name, value}, got ${describe(m)}`);
      return [m.name, m.value] as [unknown, unknown];
    });
  } else {
    return fail(where, "H5T_ENUM requires 'mapping'");
  }
  if (entries.length === 0) return fail(where, 'H5T_ENUM needs at least one member');
  const mapping: Record<string, number> = {};
  const values = new Set<number>();
  for (const [name, value] of entries) {
    if (typeof name !== 'string' || name === '') return fail(where, `enum member name must be a non-empty string, got ${describe(name)}`);
    if (Object.prototype.hasOwnProperty.call(mapping, name)) return fail(where, `duplicate enum member name '${name}'`);
    let v: number;
    if (typeof value === 'bigint') {
      if (value < range.min || value > range.max) return fail(where, `enum value ${value} of '${name}' out of range for ${base.base}`);
      if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER))
        return fail(where, `enum value ${value} of '${name}' beyond 2^53 is not supported`);
      v = Number(value);
    } else if (typeof value === 'number' && Number.isInteger(value)) {
      if (BigInt(value) < range.min || BigInt(value) > range.max) return fail(where, `enum value ${value} of '${name}' out of range for ${base.base}`);
      if (!Number.isSafeInteger(value)) return fail(where, `enum value ${value} of '${name}' beyond 2^53 is not supported`);
      v = value;
    } else {
      return fail(where, `enum value of '${name}' must be an integer, got ${describe(value)}`);
    }
    if (values.has(v)) return fail(where, `duplicate enum value ${v}`);
    values.add(v);
    mapping[name] = v;
  }
  return { class: 'H5T_ENUM', base, mapping };
}

/**
 * Bytes of one element in the binary wire format (wire-reference 3.5): numbers by their base,
 * fixed strings `length`, compounds packed (sum of fields), arrays product(dims) x base, enums their
 * base, opaque `size`, object references 48. The one definition (codec, hdf5/memory.ts and the
 * store's value reads and writes use it); the size in HDF5 memory is `memSize` (hdf5/memory.ts).
 * @throws internal if the type is variable-length (check `isVariableLength` first).
 */
export function typeSize(t: TypeJson): number {
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
    case 'H5T_BITFIELD':
      return numericInfo(t).size;
    case 'H5T_ENUM':
      return typeSize(t.base);
    case 'H5T_STRING':
      if (t.length === 'H5T_VARIABLE') throw internal('typeSize of a variable-length string');
      return t.length;
    case 'H5T_COMPOUND': {
      let n = 0;
      for (const f of t.fields) n += typeSize(f.type);
      return n;
    }
    case 'H5T_ARRAY': {
      let n = typeSize(t.base);
      for (const d of t.dims) n *= d;
      return n;
    }
    case 'H5T_VLEN':
      throw internal('typeSize of a variable-length sequence');
    case 'H5T_OPAQUE':
      return t.size;
    case 'H5T_REFERENCE':
      if (t.base === 'H5T_STD_REF_DSETREG') throw internal('typeSize of a region reference (variable-length on the wire)');
      return REFERENCE_SIZE;
  }
}

/**
 * True if the type is a vlen sequence or variable string, or contains one anywhere (wire-reference
 * 3.5). Region references are variable-length too: on the wire each is a byte count and the JSON
 * text of its region (docs/architecture.md).
 */
export function isVariableLength(t: TypeJson): boolean {
  switch (t.class) {
    case 'H5T_STRING':
      return t.length === 'H5T_VARIABLE';
    case 'H5T_VLEN':
      return true;
    case 'H5T_REFERENCE':
      return t.base === 'H5T_STD_REF_DSETREG';
    case 'H5T_COMPOUND':
      return t.fields.some((f) => isVariableLength(f.type));
    case 'H5T_ARRAY':
    case 'H5T_ENUM':
      return isVariableLength(t.base);
    default:
      return false;
  }
}

/**
 * True if the REST API defines no binary form for values of this type: it holds, anywhere
 * inside, a vlen sequence whose base is itself variable-length (a vlen of compounds with vlen
 * fields, of vlen strings, of vlen sequences, of region references). Wire-reference 3.5 counts a
 * sequence's bytes as "element count x base item size", which such a base does not have, and
 * HSDS's clients send the memory addresses of numpy's objects there (h5json `copyElement`).
 * Their values travel as JSON only; inside h5store they use the nested form of
 * `codec/values.ts` (`vlenCodec`).
 */
export function lacksBinaryForm(t: TypeJson): boolean {
  switch (t.class) {
    case 'H5T_VLEN':
      return isVariableLength(t.base) || lacksBinaryForm(t.base);
    case 'H5T_COMPOUND':
      return t.fields.some((f) => lacksBinaryForm(f.type));
    case 'H5T_ARRAY':
    case 'H5T_ENUM':
      return lacksBinaryForm(t.base);
    default:
      return false;
  }
}

/**
 * Values of a type the REST API defines no binary form for (`lacksBinaryForm`: a vlen sequence
 * of variable-length elements) travel as JSON only: a binary body (415) or `value_base64` (400)
 * for one is refused with the reason, before anything is written.
 * @param how `'body'` for a binary request body, `'base64'` for base64 text in a JSON body
 * @throws H5StoreError UnsupportedMediaType (body) or BadRequest (base64)
 */
export function refuseBinaryForm(type: TypeJson, how: 'body' | 'base64'): void {
  if (!lacksBinaryForm(type)) return;
  const why = "the type holds a variable-length sequence of variable-length elements, which has no binary form in the REST API (wire-reference 3.5 counts a sequence's bytes as element count x base size, and such a base has no size)";
  if (how === 'body') throw new H5StoreError('UnsupportedMediaType', `Binary data cannot be written here: ${why}; send the value as JSON`);
  throw badRequest(`Base64 values cannot be written here: ${why}; send "value" as JSON`);
}

/**
 * numpy's (h5py's) view of the elements of an array type (H5T_ARRAY, nested ones included): an
 * element of the innermost base per array cell, the array's dims (outer first) appended to the
 * dataspace's shape; `dims` is `[]` and `elem` the type itself for other types. h5py reads a
 * dataset of `H5T_ARRAY` of shape (2, 3) over 5 elements as a (5, 2, 3) array of the base.
 * @returns the element type and the dims to append; `cells` is their product (1 for `[]`)
 */
export function arrayElementView(t: TypeJson): { elem: TypeJson; dims: number[]; cells: number } {
  const dims: number[] = [];
  let elem = t;
  while (elem.class === 'H5T_ARRAY') {
    dims.push(...elem.dims);
    elem = elem.base;
  }
  return { elem, dims, cells: dims.reduce((a, b) => a * b, 1) };
}

/**
 * True for h5py's boolean convention (wire-reference 3.1): an enum over an 8-bit integer base whose
 * mapping is exactly `{FALSE: 0, TRUE: 1}`. Values of such types are JSON `true`/`false`.
 */
export function isBooleanEnum(t: TypeJson): boolean {
  if (t.class !== 'H5T_ENUM' || t.base.class !== 'H5T_INTEGER') return false;
  if (numericBase(t.base.base)?.size !== 1) return false;
  const keys = Object.keys(t.mapping);
  return keys.length === 2 && t.mapping.FALSE === 0 && t.mapping.TRUE === 1;
}

/** Structural equality of two canonical types, ignoring `id` (and the order of enum mapping keys). */
export function typesEqual(a: TypeJson, b: TypeJson): boolean {
  if (a.class !== b.class) return false;
  switch (a.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
    case 'H5T_BITFIELD':
    case 'H5T_REFERENCE':
      return a.base === (b as typeof a).base;
    case 'H5T_STRING': {
      const s = b as typeof a;
      return a.charSet === s.charSet && a.strPad === s.strPad && a.length === s.length;
    }
    case 'H5T_OPAQUE': {
      const o = b as typeof a;
      return a.size === o.size && a.tag === o.tag;
    }
    case 'H5T_VLEN':
      return typesEqual(a.base, (b as typeof a).base);
    case 'H5T_ARRAY': {
      const r = b as typeof a;
      return a.dims.length === r.dims.length && a.dims.every((d, i) => d === r.dims[i]) && typesEqual(a.base, r.base);
    }
    case 'H5T_ENUM': {
      const e = b as typeof a;
      if (!typesEqual(a.base, e.base)) return false;
      const ka = Object.keys(a.mapping);
      if (ka.length !== Object.keys(e.mapping).length) return false;
      return ka.every((k) => Object.prototype.hasOwnProperty.call(e.mapping, k) && e.mapping[k] === a.mapping[k]);
    }
    case 'H5T_COMPOUND': {
      const c = b as typeof a;
      return (
        a.fields.length === c.fields.length &&
        a.fields.every((f, i) => f.name === c.fields[i].name && typesEqual(f.type, c.fields[i].type))
      );
    }
  }
}

/**
 * A compact key of a type's structure (committed-type `id`s ignored), for caches of compiled
 * codecs: types described from files are fresh objects on every request.
 */
export function typeKey(t: TypeJson): string {
  switch (t.class) {
    case 'H5T_INTEGER':
    case 'H5T_FLOAT':
    case 'H5T_BITFIELD':
    case 'H5T_REFERENCE':
      return t.base;
    case 'H5T_STRING':
      return `S(${t.charSet},${t.strPad},${t.length})`;
    case 'H5T_OPAQUE':
      return `O(${t.size},${JSON.stringify(t.tag)})`;
    case 'H5T_ARRAY':
      return `A(${t.dims.join('x')},${typeKey(t.base)})`;
    case 'H5T_VLEN':
      return `V(${typeKey(t.base)})`;
    case 'H5T_ENUM':
      return `E(${typeKey(t.base)},${JSON.stringify(t.mapping)})`;
    case 'H5T_COMPOUND':
      return `C(${t.fields.map((f) => JSON.stringify(f.name) + ':' + typeKey(f.type)).join(',')})`;
  }
}
