/**
 * Bad input (issue items 1-4 and 6): one case per bad type, shape, creation property, attribute
 * value, dataset value, selection and resize. Each case shows the status (400 unless the wire
 * reference says otherwise: 409 past maxdims, 404 for missing names) with a message naming the
 * problem, and that the file is unchanged: h5py's complete view of the file (every object, type,
 * shape, layout, filter, fill value, attribute and value) and the full h5dump output are the
 * same before and after the request.
 */
import { expect } from 'chai';
import type { Reply } from '../helpers/server.js';
import { type FileMark, expectSameContent, markFile } from '../helpers/unchanged.js';
import {
  type Dom,
  type Kit,
  bytes,
  expectStatus,
  inspect,
  makeDataset,
  newDomain,
  postBinary,
  putBinary,
  sendJsonText,
  releaseKit,
  sharedKit,
} from '../helpers/writekit.js';
import { F64, I32, S4, VSTR } from '../helpers/types.js';

const U8 = { class: 'H5T_INTEGER', base: 'H5T_STD_U8LE' };
const I8 = { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' };
const CMP = { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: I32 }, { name: 'b', type: S4 }] };

/** Ids of the fixture objects. */
interface Fx {
  d: Dom;
  ids: Record<string, string>;
}

interface BadCase {
  name: string;
  run: (fx: Fx) => Promise<Reply>;
  /** Expected status (default 400). */
  status?: number;
  /** Fragments the error message must contain (case-insensitive). */
  msg?: (string | RegExp)[];
  /** Only run when this holds (e.g. a compressor is available). */
  when?: (fx: Fx & { compressors: string[] }) => boolean;
}

// ---------------------------------------------------------------------------------------------
// bad types: each tried as a dataset type and as the type of an existing attribute's replacement

const badTypes: [string, unknown, (string | RegExp)[]][] = [
  ['unknown type class', { class: 'H5T_FOO', base: 'H5T_STD_I32LE' }, ['H5T_FOO']],
  ['unknown predefined name', 'H5T_STD_I24LE', ['H5T_STD_I24LE']],
  ['unknown predefined name in a compound field', { class: 'H5T_COMPOUND', fields: [{ name: 'x', type: 'H5T_IEEE_F128LE' }] }, ['H5T_IEEE_F128LE']],
  ['integer class with a float base', { class: 'H5T_INTEGER', base: 'H5T_IEEE_F32LE' }, ['H5T_IEEE_F32LE']],
  ['float class with an integer base', { class: 'H5T_FLOAT', base: 'H5T_STD_I32LE' }, ['H5T_STD_I32LE']],
  ['integer order contradicting its base', { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE', order: 'H5T_ORDER_BE' }, ['order']],
  ['string without length', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD' }, ['length']],
  ['string of length 0', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', length: 0 }, ['length']],
  ['string with an unknown charSet', { class: 'H5T_STRING', charSet: 'H5T_CSET_LATIN1', length: 4 }, ['H5T_CSET_LATIN1']],
  ['string with an unknown strPad', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_ZEROPAD', length: 4 }, ['H5T_STR_ZEROPAD']],
  ['charSet and cset disagree', { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', cset: 'H5T_CSET_UTF8', length: 4 }, ['charSet', 'cset']],
  ['length and strsize disagree', { class: 'H5T_STRING', length: 4, strsize: 5 }, ['length', 'strsize']],
  ['strPad and strpad disagree', { class: 'H5T_STRING', length: 4, strPad: 'H5T_STR_NULLPAD', strpad: 'H5T_STR_SPACEPAD' }, ['strPad', 'strpad']],
  ['compound without fields', { class: 'H5T_COMPOUND', fields: [] }, ['fields']],
  ['compound with duplicate field names', { class: 'H5T_COMPOUND', fields: [{ name: 'a', type: I32 }, { name: 'a', type: F64 }] }, ['duplicate', 'a']],
  ['compound field without a type', { class: 'H5T_COMPOUND', fields: [{ name: 'lonely' }] }, ['lonely']],
  ['array without dims', { class: 'H5T_ARRAY', base: I32 }, ['dims']],
  ['array with a zero dim', { class: 'H5T_ARRAY', base: I32, dims: [0] }, ['dims']],
  ['enum without mapping', { class: 'H5T_ENUM', base: I32 }, ['mapping']],
  ['enum over a float base', { class: 'H5T_ENUM', base: F64, mapping: { A: 0 } }, ['integer']],
  ['enum with duplicate values', { class: 'H5T_ENUM', base: I32, mapping: { A: 1, B: 1 } }, ['duplicate']],
  ['enum value out of range of its base', { class: 'H5T_ENUM', base: U8, mapping: { A: 300 } }, ['300']],
  ['vlen without base', { class: 'H5T_VLEN' }, ['base']],
  ['opaque of size 0', { class: 'H5T_OPAQUE', size: 0, tag: '' }, ['size']],
  ['reference with an unknown base', { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_FOO' }, ['H5T_STD_REF_FOO']],
  ['type given as a number', 42, ['42']],
  ['type object without class', { base: 'H5T_STD_I32LE' }, ['class']],
];

const cases: BadCase[] = [];

for (const [label, type, msg] of badTypes) {
  cases.push({ name: `POST /datasets, ${label}`, run: ({ d }) => d.c.post('/datasets', { type, shape: [2], link: { id: d.root, name: 'never' } }), msg });
  cases.push({ name: `PUT attribute over an existing one, ${label}`, run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/keep`, { type, shape: [2], value: [1, 2] }), msg });
  cases.push({ name: `POST /datatypes, ${label}`, run: ({ d }) => d.c.post('/datatypes', { type, link: { id: d.root, name: 'never_t' } }), msg });
}

// ---------------------------------------------------------------------------------------------
// bad dataset creation requests

const newDs = (body: Record<string, unknown>) => ({ d }: Fx) => d.c.post('/datasets', { link: { id: d.root, name: 'never' }, ...body });

cases.push(
  { name: 'POST /datasets without a type', run: newDs({ shape: [2] }), msg: ['type'] },
  { name: 'POST /datasets with a body that is not JSON', run: ({ d }) => d.c.request('POST', '/datasets', { raw: '{"type": "H5T_STD_I32LE", shape: [2', headers: { 'content-type': 'application/json' } }), msg: ['JSON'] },
  { name: 'negative dimension', run: newDs({ type: I32, shape: [-1] }), msg: ['-1'] },
  { name: 'non-integer dimension', run: newDs({ type: I32, shape: [2.5] }), msg: ['2.5'] },
  { name: 'unknown shape class', run: newDs({ type: I32, shape: 'H5S_FOO' }), msg: ['H5S_FOO'] },
  { name: 'maxdims smaller than dims', run: newDs({ type: I32, shape: [4], maxdims: [3] }), msg: ['maxdims'] },
  { name: 'maxdims of another rank', run: newDs({ type: I32, shape: [4], maxdims: [4, 4] }), msg: ['maxdims'] },
  { name: 'maxdims with H5S_NULL', run: newDs({ type: I32, shape: 'H5S_NULL', maxdims: [4] }), msg: ['maxdims'] },
  { name: 'maxdims with a scalar shape', run: newDs({ type: I32, maxdims: [4] }), msg: ['maxdims'] },
  { name: 'maxdims given as a string other than H5S_UNLIMITED', run: newDs({ type: I32, shape: [4], maxdims: ['lots'] }), msg: ['maxdims'] },
  { name: 'chunk dims of another rank', run: newDs({ type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2, 2] } } }), msg: ['dims'] },
  { name: 'chunk dims with a zero', run: newDs({ type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [0] } } }), msg: ['chunk'] },
  { name: 'chunked layout without dims', run: newDs({ type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_CHUNKED' } } }), msg: ['dims'] },
  { name: 'chunked layout on a scalar dataset', run: newDs({ type: I32, creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [1] } } }), msg: ['chunk'] },
  { name: 'unknown layout class', run: newDs({ type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_VIRTUAL' } } }), msg: ['H5D_VIRTUAL'] },
  { name: 'contiguous layout with unlimited maxdims', run: newDs({ type: I32, shape: [4], maxdims: [0], creationProperties: { layout: { class: 'H5D_CONTIGUOUS' } } }), msg: ['contiguous'] },
  { name: 'compact layout larger than 64 KiB', run: newDs({ type: I32, shape: [100000], creationProperties: { layout: { class: 'H5D_COMPACT' } } }), msg: ['compact'] },
  { name: 'filters with a contiguous layout', run: newDs({ type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_CONTIGUOUS' }, filters: ['gzip'] } }), msg: ['chunk'] },
  { name: 'filters on a scalar dataset', run: newDs({ type: I32, creationProperties: { filters: ['gzip'] } }), msg: ['filter'] },
  { name: 'unknown filter name', run: newDs({ type: I32, shape: [4], creationProperties: { filters: ['foozip'] } }), msg: ['foozip'] },
  { name: 'unknown filter class', run: newDs({ type: I32, shape: [4], creationProperties: { filters: [{ class: 'H5Z_FILTER_MAGIC' }] } }), msg: ['H5Z_FILTER_MAGIC'] },
  { name: 'deflate level 10', run: newDs({ type: I32, shape: [4], creationProperties: { filters: [{ class: 'H5Z_FILTER_DEFLATE', id: 1, level: 10 }] } }), msg: ['level'] },
  { name: 'scaleoffset on strings', run: newDs({ type: S4, shape: [4], creationProperties: { filters: ['scaleoffset'] } }), msg: ['scaleoffset'] },
  {
    name: 'szip with chunks smaller than its pixels per block',
    run: newDs({ type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [4] }, filters: ['szip'] } }),
    msg: ['szip'],
    when: ({ compressors }) => compressors.includes('szip'),
  },
  { name: 'fillValue of the wrong type', run: newDs({ type: I32, shape: [4], creationProperties: { fillValue: 'abc' } }), msg: ['fillValue'] },
  { name: 'fillValue out of range', run: newDs({ type: U8, shape: [4], creationProperties: { fillValue: 300 } }), msg: ['300'] },
  { name: 'compound fillValue with too few fields', run: newDs({ type: CMP, shape: [4], creationProperties: { fillValue: [1] } }), msg: ['fillValue'] },
  { name: 'unknown fillTime', run: newDs({ type: I32, shape: [4], creationProperties: { fillTime: 'H5D_FILL_TIME_SOMETIMES' } }), msg: ['H5D_FILL_TIME_SOMETIMES'] },
  { name: 'link name containing "/"', run: ({ d }) => d.c.post('/datasets', { type: I32, shape: [2], link: { id: d.root, name: 'a/b' } }), msg: ['/'] },
  { name: 'link together with h5path', run: ({ d }) => d.c.post('/datasets', { type: I32, shape: [2], link: { id: d.root, name: 'never' }, h5path: '/never2' }) },
  { name: 'link name already taken (409)', run: ({ d }) => d.c.post('/datasets', { type: F64, shape: [9], link: { id: d.root, name: 'ints' } }), status: 409 },
);

// ---------------------------------------------------------------------------------------------
// bad create bodies (http/bodies.ts: POST /groups, /datasets, /datatypes, one object or a list)

const post = (col: string, body: unknown) => ({ d }: Fx) => d.c.post(`/${col}`, body);
const linked = (d: Dom, name = 'never') => ({ link: { id: d.root, name } });

for (const col of ['groups', 'datasets', 'datatypes']) {
  const typed = col === 'groups' ? {} : { type: I32 };
  const body = (d: Dom, extra: Record<string, unknown>) => ({ ...typed, ...extra });
  cases.push(
    { name: `POST /${col}, "link" that is not an object`, run: ({ d }) => d.c.post(`/${col}`, body(d, { link: 'root' })), msg: ['"link"'] },
    { name: `POST /${col}, "link" without "id"`, run: ({ d }) => d.c.post(`/${col}`, body(d, { link: { name: 'never' } })), msg: ['link.id'] },
    { name: `POST /${col}, "link.id" that is a number`, run: ({ d }) => d.c.post(`/${col}`, body(d, { link: { id: 5, name: 'never' } })), msg: ['link.id'] },
    { name: `POST /${col}, "link" without "name"`, run: ({ d }) => d.c.post(`/${col}`, body(d, { link: { id: d.root } })), msg: ['link.name'] },
    { name: `POST /${col}, "link.name" empty`, run: ({ d }) => d.c.post(`/${col}`, body(d, { link: { id: d.root, name: '' } })), msg: ['name'] },
    { name: `POST /${col}, "link.name" a number`, run: ({ d }) => d.c.post(`/${col}`, body(d, { link: { id: d.root, name: 7 } })), msg: ['name'] },
    { name: `POST /${col}, "link" and "h5path"`, run: ({ d }) => d.c.post(`/${col}`, body(d, { ...linked(d), h5path: '/never2' })), msg: ['link', 'h5path'] },
    { name: `POST /${col}, "h5path" a number`, run: ({ d }) => d.c.post(`/${col}`, body(d, { h5path: 3 })), msg: ['h5path'] },
    { name: `POST /${col}, "h5path" empty`, run: ({ d }) => d.c.post(`/${col}`, body(d, { h5path: '' })), msg: ['h5path'] },
    { name: `POST /${col}, "h5path" with a NUL`, run: ({ d }) => d.c.post(`/${col}`, body(d, { h5path: '/a\u0000b' })), msg: ['NUL'] },
    { name: `POST /${col}, "h5path" under a missing group (404)`, run: ({ d }) => d.c.post(`/${col}`, body(d, { h5path: '/nogroup/never' })), status: 404 },
    { name: `POST /${col}, "parent_id" of no group`, run: ({ d }) => d.c.post(`/${col}`, body(d, { h5path: 'never', parent_id: 'g-nope' })) },
    { name: `POST /${col}, "id" a number`, run: ({ d }) => d.c.post(`/${col}`, body(d, { ...linked(d), id: 5 })), msg: ['"id"'] },
    { name: `POST /${col}, "id" not an id`, run: ({ d }) => d.c.post(`/${col}`, body(d, { ...linked(d), id: 'g-nothex' })), msg: ['id'] },
    { name: `POST /${col}, a body that is a string`, run: post(col, 'group') },
    { name: `POST /${col} list, an item that is not an object`, run: ({ d }) => d.c.post(`/${col}`, [body(d, linked(d, 'never_a')), 5]), msg: ['item 1'] },
    { name: `POST /${col} list, an item with a bad link (none of the list made)`, run: ({ d }) => d.c.post(`/${col}`, [body(d, linked(d, 'never_a')), body(d, { link: 'root' })]), msg: ['"link"'] },
    { name: `POST /${col} list, more than 1000 items (413)`, run: ({ d }) => d.c.post(`/${col}`, Array.from({ length: 1001 }, () => body(d, {}))), status: 413, msg: ['1000'] },
  );
}
cases.push(
  { name: 'POST /groups, "creationProperties" a list', run: ({ d }) => d.c.post('/groups', { ...linked(d), creationProperties: [1] }), msg: ['creationProperties'] },
  { name: 'POST /groups, "creationProperties" null', run: ({ d }) => d.c.post('/groups', { ...linked(d), creationProperties: null }), msg: ['creationProperties'] },
  { name: 'POST /datasets, "creationProperties" a string', run: newDs({ type: I32, shape: [2], creationProperties: 'chunked' }), msg: ['creationProperties'] },
  { name: 'POST /datasets list, an item without a type', run: ({ d }) => d.c.post('/datasets', [{ type: I32, shape: [1] }, { shape: [1] }]), msg: ['type'] },
  { name: 'POST /datasets list, an initial value of the wrong length (none of the list made)', run: ({ d }) => d.c.post('/datasets', [{ type: I32, shape: [2], value: [1, 2] }, { type: I32, shape: [2], value: [1] }]) },
  { name: 'POST /datasets, an initial value with H5S_NULL', run: newDs({ type: I32, shape: 'H5S_NULL', value: [1] }), msg: ['H5S_NULL'] },
  { name: 'POST /datatypes without a type', run: ({ d }) => d.c.post('/datatypes', { link: { id: d.root, name: 'never_t' } }), msg: ['type'] },
  { name: 'POST /datatypes list, an item without a type', run: ({ d }) => d.c.post('/datatypes', [{ type: I32 }, {}]), msg: ['type'] },
);

// ---------------------------------------------------------------------------------------------
// bad attributes: the existing attribute "keep" ([10, 20] int32) must stay as it was

const putKeep = (body: Record<string, unknown>) => ({ d }: Fx) => d.c.put(`/groups/${d.root}/attributes/keep`, body);

cases.push(
  { name: 'attribute value given with H5S_NULL (new name)', run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/nullwithvalue`, { type: I32, shape: 'H5S_NULL', value: 1 }), msg: ['H5S_NULL'] },
  { name: 'attribute value given with H5S_NULL (existing name)', run: putKeep({ type: I32, shape: 'H5S_NULL', value: [1, 2] }), msg: ['H5S_NULL'] },
  { name: 'attribute with more values than the shape', run: putKeep({ type: I32, shape: [2], value: [1, 2, 3] }), msg: ['2', '3'] },
  { name: 'attribute with fewer values than the shape', run: putKeep({ type: I32, shape: [3], value: [1, 2] }) },
  { name: 'attribute 2-D value not nested like the shape', run: putKeep({ type: I32, shape: [2, 2], value: [1, 2, 3, 4] }) },
  { name: 'attribute ragged 2-D value', run: putKeep({ type: I32, shape: [2, 2], value: [[1, 2], [3]] }) },
  { name: 'attribute strings for an integer type', run: putKeep({ type: I32, shape: [2], value: ['a', 'b'] }), msg: ['a'] },
  { name: 'attribute integer out of range', run: putKeep({ type: I8, shape: [2], value: [1, 300] }), msg: ['300'] },
  { name: 'attribute non-integer for an integer type', run: putKeep({ type: I32, shape: [2], value: [1, 1.5] }), msg: ['1.5'] },
  { name: 'attribute compound value with the wrong number of fields', run: putKeep({ type: CMP, shape: [2], value: [[1, 'a'], [2]] }) },
  { name: 'attribute number for a string type', run: putKeep({ type: VSTR, shape: [2], value: ['a', 5] }), msg: ['5'] },
  { name: 'attribute shape with maxdims', run: putKeep({ type: I32, shape: { class: 'H5S_SIMPLE', dims: [2], maxdims: [4] }, value: [1, 2] }), msg: ['maxdims'] },
  { name: 'attribute without a type', run: putKeep({ shape: [2], value: [1, 2] }), msg: ['type'] },
  { name: 'attribute negative dimension', run: putKeep({ type: I32, shape: [-2] }), msg: ['-2'] },
  { name: 'attribute body that is not JSON', run: ({ d }) => d.c.request('PUT', `/groups/${d.root}/attributes/keep`, { raw: '{"type":', headers: { 'content-type': 'application/json' } }), msg: ['JSON'] },
  { name: 'PUT .../value with too many values', run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/keep/value`, { value: [1, 2, 3] }) },
  { name: 'PUT .../value with a value of the wrong type', run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/keep/value`, { value: [1, 'x'] }) },
  { name: 'PUT .../value with a binary body of the wrong size', run: ({ d }) => putBinary(d.c, `/groups/${d.root}/attributes/keep/value`, bytes.i32le(1, 2, 3)) },
  { name: 'PUT .../value on an H5S_NULL attribute', run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/nul/value`, { value: 1 }), msg: ['H5S_NULL'] },
  { name: 'PUT .../value on a missing attribute (404)', run: ({ d }) => d.c.put(`/groups/${d.root}/attributes/nope/value`, { value: 1 }), status: 404 },
  {
    name: 'bulk PUT .../attributes with one bad entry writes none of them',
    run: ({ d }) =>
      d.c.put(`/groups/${d.root}/attributes`, {
        attributes: { fresh1: { type: I32, value: 1 }, keep: { type: I32, shape: [2], value: [5, 6] }, bad: { type: I32, shape: [2], value: [1] } },
      }),
  },
  { name: 'bulk DELETE with one missing name deletes none of them (404)', run: ({ d }) => d.c.delete(`/groups/${d.root}/attributes`, { attr_names: 'keep/missing' }), status: 404 },
);

// ---------------------------------------------------------------------------------------------
// bad value writes: nothing may be written (ints = [1, 2, 3, 4], grid = 3x4, ...)

const putInts = (body: unknown, query?: Record<string, string | number>) => ({ d, ids }: Fx) => sendJsonText(d.c, 'PUT', `/datasets/${ids.ints}/value`, body, query);

cases.push(
  { name: 'binary body too short', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.ints}/value`, bytes.i32le(9, 9, 9)), msg: ['12', '16'] },
  { name: 'binary body too long', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.ints}/value`, bytes.i32le(9, 9, 9, 9, 9)), msg: ['20', '16'] },
  { name: 'binary body of the wrong size for the selection', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.ints}/value`, bytes.i32le(9, 9, 9), { select: '[0:2]' }) },
  { name: 'binary body not a whole number of elements', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.ints}/value`, Buffer.alloc(15)) },
  { name: 'JSON value with a string among integers (nothing written, not even the first elements)', run: putInts({ value: [9, 9, 'x', 9] }), msg: ['x'] },
  { name: 'JSON value with an integer out of range', run: putInts({ value: [9, 9, 9, 2n ** 31n] }), msg: ['2147483648'] },
  { name: 'JSON value with a fraction for an integer type', run: putInts({ value: [9, 9, 9, 0.5] }), msg: ['0.5'] },
  { name: 'JSON value with too few elements', run: putInts({ value: [9, 9, 9] }) },
  { name: 'JSON value with too many elements', run: putInts({ value: [9, 9, 9, 9, 9] }) },
  { name: 'JSON value nested deeper than the dataset', run: putInts({ value: [[9], [9], [9], [9]] }) },
  { name: 'JSON body without "value"', run: putInts({ values: [9, 9, 9, 9] }), msg: ['value'] },
  { name: 'JSON body that is not an object', run: putInts([9, 9, 9, 9]) },
  { name: 'invalid JSON body', run: ({ d, ids }) => d.c.request('PUT', `/datasets/${ids.ints}/value`, { raw: '{"value": [9, 9,', headers: { 'content-type': 'application/json' } }), msg: ['JSON'] },
  { name: 'Content-Type text/plain', run: ({ d, ids }) => d.c.request('PUT', `/datasets/${ids.ints}/value`, { raw: '{"value": [9, 9, 9, 9]}', headers: { 'content-type': 'text/plain' } }), msg: ['text/plain'] },
  { name: 'select past the extent', run: putInts({ value: [9, 9] }, { select: '[3:5]' }), msg: ['selection'] },
  { name: 'select with the wrong rank', run: putInts({ value: [9, 9] }, { select: '[0:2,0:1]' }), msg: ['selection'] },
  { name: 'select with step 0', run: putInts({ value: [9, 9] }, { select: '[0:4:0]' }), msg: ['selection'] },
  { name: 'select with start >= stop', run: putInts({ value: [9] }, { select: '[3:1]' }), msg: ['selection'] },
  { name: 'select with a negative index', run: putInts({ value: [9] }, { select: '[-1]' }), msg: ['selection'] },
  { name: 'select that is not a selection', run: putInts({ value: [9] }, { select: 'all' }), msg: ['selection'] },
  { name: 'select in the query and in the body', run: putInts({ value: [9, 9], select: '[0:2]' }, { select: '[0:2]' }) },
  { name: 'point out of range', run: putInts({ points: [0, 4], value: [9, 9] }), msg: ['4'] },
  { name: 'point of the wrong rank on a 2-D dataset', run: ({ d, ids }) => d.c.put(`/datasets/${ids.grid}/value`, { points: [[0, 0], [1]], value: [9, 9] }), msg: ['point'] },
  { name: 'points and values of different lengths', run: putInts({ points: [0, 1, 2], value: [9, 9] }) },
  { name: 'points together with a selection', run: putInts({ points: [0, 1], value: [9, 9] }, { select: '[0:2]' }) },
  { name: 'empty points list', run: putInts({ points: [], value: [] }), msg: ['points'] },
  { name: 'element_count that does not divide the selection', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.ints}/value`, bytes.i32le(9, 9, 9), { element_count: 3 }), msg: ['element_count'] },
  { name: 'element_count 1 with a body of two elements', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.ints}/value`, bytes.i32le(9, 9), { element_count: 1 }) },
  { name: 'a 2-D JSON value that is ragged', run: ({ d, ids }) => d.c.put(`/datasets/${ids.grid}/value`, { value: [[9, 9, 9, 9], [9, 9, 9], [9, 9, 9, 9]] }) },
  { name: 'write to an H5S_NULL dataset', run: ({ d, ids }) => d.c.put(`/datasets/${ids.nul}/value`, { value: 1 }), msg: ['H5S_NULL'] },
  { name: 'vlen string binary body with a count past the end', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.strs}/value`, bytes.cat(bytes.vlen('x'), Buffer.from([10, 0, 0, 0, 0x61]))) },
  { name: 'vlen string binary body with a negative count', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.strs}/value`, bytes.cat(bytes.vlen('x'), Buffer.from([0xff, 0xff, 0xff, 0xff]))) },
  { name: 'vlen string binary body with one element missing', run: ({ d, ids }) => putBinary(d.c, `/datasets/${ids.strs}/value`, bytes.vlen('x')) },
  { name: 'compound JSON value with the wrong number of fields', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: [[1, 'a'], [2, 'b', 3]] }) },
  { name: 'compound JSON value with a field of the wrong type', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: [[1, 'a'], ['two', 'b']] }), msg: ['two'] },
  { name: 'fields= naming an unknown field', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: [[1], [2]] }, { fields: 'zzz' }), msg: ['zzz'] },
  { name: 'fields= on a non-compound dataset', run: putInts({ value: [9, 9, 9, 9] }, { fields: 'a' }), msg: ['fields'] },
  { name: 'query update naming an unknown field', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: { zzz: 1 } }, { query: 'a > 0' }), msg: ['zzz'] },
  { name: 'query update with bad query syntax', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: { a: 1 } }, { query: 'a >>> 0' }) },
  { name: 'query update with a value of the wrong type', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: { a: 'x' } }, { query: 'a > 0' }), msg: ['x'] },
  { name: 'append on a non-extensible dataset', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ints}/value`, { value: [9], append: 1 }) },
  { name: 'append past maxdims (409)', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/value`, { value: [9, 9, 9], append: 3 }), status: 409 },
  { name: 'append together with a selection', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/value`, { value: [9], append: 1 }, { select: '[0:1]' }) },
  { name: 'append with a value of the wrong length', run: ({ d, ids }) => d.c.put(`/datasets/${ids.ext}/value`, { value: [9, 9], append: 1 }) },
  { name: 'object reference to an id of no object in this domain', run: ({ d, ids }) => d.c.put(`/datasets/${ids.refs}/value`, { value: ['groups/g-00000000-00000000-0000-000000-000000'] }) },
  { name: 'object reference that is not a reference string', run: ({ d, ids }) => d.c.put(`/datasets/${ids.refs}/value`, { value: ['not a reference'] }) },
  { name: 'enum value that is not a member', run: ({ d, ids }) => d.c.put(`/datasets/${ids.enm}/value`, { value: [1, 5] }), msg: ['5'] },
  { name: 'boolean enum given 2', run: ({ d, ids }) => d.c.put(`/datasets/${ids.flags}/value`, { value: [true, 2] }), msg: ['2'] },
  { name: 'opaque value that is not base64', run: ({ d, ids }) => d.c.put(`/datasets/${ids.opq}/value`, { value: ['AQIDBA==', '**not base64**'] }) },
  { name: 'opaque value of the wrong size', run: ({ d, ids }) => d.c.put(`/datasets/${ids.opq}/value`, { value: ['AQIDBA==', 'AQID'] }) },
  { name: 'scalar dataset written with a list of two', run: ({ d, ids }) => d.c.put(`/datasets/${ids.scal}/value`, { value: [1, 2] }) },
  { name: 'scalar dataset written with points', run: ({ d, ids }) => d.c.put(`/datasets/${ids.scal}/value`, { points: [0], value: [1] }) },
);

// ---------------------------------------------------------------------------------------------
// bad resizes

const resize = (key: string, body: unknown) => ({ d, ids }: Fx) => d.c.put(`/datasets/${ids[key]}/shape`, body);
cases.push(
  { name: 'resize past maxdims (409)', run: resize('ext', { shape: [5] }), status: 409 },
  { name: 'extend past maxdims (409)', run: resize('ext', { extend: 3 }), status: 409 },
  { name: 'resize a contiguous dataset', run: resize('ints', { shape: [8] }), msg: ['extensible'] },
  // In HDF5 a chunked dataset created without maxdims has maxdims equal to its dims: growing it
  // is past maxdims (409), as for any chunked dataset; contiguous ones are not extensible (400).
  { name: 'grow a chunked dataset created without maxdims (past maxdims, 409)', run: resize('fixedchunk', { shape: [8] }), status: 409, msg: ['maximum'] },
  { name: 'resize with the wrong rank', run: resize('ext', { shape: [2, 2] }), msg: ['shape'] },
  { name: 'resize to a negative size', run: resize('ext', { shape: [-1] }) },
  { name: 'resize with both shape and extend', run: resize('ext', { shape: [3], extend: 1 }) },
  { name: 'resize with neither shape nor extend', run: resize('ext', { size: [3] }) },
  { name: 'extend_dim out of range', run: resize('ext', { extend: 1, extend_dim: 1 }) },
  { name: 'resize an H5S_NULL dataset', run: resize('nul', { shape: [1] }) },
  { name: 'resize a scalar dataset', run: resize('scal', { shape: [1] }) },
  { name: 'resize with a shape that is a string', run: resize('ext', { shape: '3' }), msg: ['shape'] },
  { name: 'resize with a shape of fractions', run: resize('ext', { shape: [2.5] }), msg: ['shape'] },
  { name: 'resize with a shape of null', run: resize('ext', { shape: null }), msg: ['shape'] },
  { name: 'extend by a negative number', run: resize('ext', { extend: -1 }), msg: ['extend'] },
  { name: 'extend by a string', run: resize('ext', { extend: '1' }), msg: ['extend'] },
  { name: 'extend_dim negative', run: resize('ext', { extend: 1, extend_dim: -1 }), msg: ['extend_dim'] },
  { name: 'extend_dim a string', run: resize('ext', { extend: 1, extend_dim: '0' }), msg: ['extend_dim'] },
  { name: 'resize with a body that is a list', run: resize('ext', [3]) },
  { name: 'resize with an empty body', run: ({ d, ids }) => d.c.request('PUT', `/datasets/${ids.ext}/shape`, { raw: '', headers: { 'content-type': 'application/json' } }) },
  { name: 'resize of a missing dataset (404)', run: ({ d }) => d.c.put(`/datasets/d-00000000-00000000-0000-000000-000000/shape`, { shape: [3] }), status: 404 },
  { name: 'query update whose "value" is a list', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: [1, 2] }, { query: 'a > 0' }), msg: ['{field: value}'] },
  { name: 'query update whose "value" is null', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, { value: null }, { query: 'a > 0' }), msg: ['{field: value}'] },
  { name: 'query update with a body that is a list', run: ({ d, ids }) => d.c.put(`/datasets/${ids.cmp}/value`, [{ a: 1 }], { query: 'a > 0' }) },
);

describe('API write: bad input is refused with 400 (or 409/404) and leaves the file unchanged', function () {
  this.timeout(300000);
  let kit: Kit;
  let fx: Fx & { compressors: string[] };
  /** h5py's view of the fixture once built. */
  let fixture: Record<string, any>;
  /** The file's bytes after the last case (h5py and h5dump run only when a case changed them). */
  let mark: FileMark;

  before(async () => {
    kit = await sharedKit();
    const d = await newDomain(kit, 'bad');
    const ids: Record<string, string> = {};
    ids.ints = await makeDataset(d, 'ints', { type: I32, shape: [4] });
    expectStatus(await d.c.put(`/datasets/${ids.ints}/value`, { value: [1, 2, 3, 4] }), 200, 'ints');
    ids.grid = await makeDataset(d, 'grid', { type: I32, shape: [3, 4], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2, 2] } } });
    expectStatus(await d.c.put(`/datasets/${ids.grid}/value`, { value: [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]] }), 200, 'grid');
    ids.strs = await makeDataset(d, 'strs', { type: VSTR, shape: [2] });
    expectStatus(await d.c.put(`/datasets/${ids.strs}/value`, { value: ['a', 'bc'] }), 200, 'strs');
    ids.cmp = await makeDataset(d, 'cmp', { type: CMP, shape: [2] });
    expectStatus(await d.c.put(`/datasets/${ids.cmp}/value`, { value: [[1, 'one'], [2, 'two']] }), 200, 'cmp');
    ids.ext = await makeDataset(d, 'ext', { type: I32, shape: [2], maxdims: [4] });
    expectStatus(await d.c.put(`/datasets/${ids.ext}/value`, { value: [1, 2] }), 200, 'ext');
    ids.fixedchunk = await makeDataset(d, 'fixedchunk', { type: I32, shape: [4], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [2] } } });
    ids.nul = await makeDataset(d, 'nul', { type: I32, shape: 'H5S_NULL' });
    ids.refs = await makeDataset(d, 'refs', { type: { class: 'H5T_REFERENCE', base: 'H5T_STD_REF_OBJ' }, shape: [1] });
    expectStatus(await d.c.put(`/datasets/${ids.refs}/value`, { value: [`datasets/${ids.ints}`] }), 200, 'refs');
    ids.enm = await makeDataset(d, 'enm', { type: { class: 'H5T_ENUM', base: I8, mapping: { ONE: 1, TWO: 2 } }, shape: [2] });
    expectStatus(await d.c.put(`/datasets/${ids.enm}/value`, { value: [2, 1] }), 200, 'enm');
    ids.flags = await makeDataset(d, 'flags', { type: { class: 'H5T_ENUM', base: I8, mapping: { FALSE: 0, TRUE: 1 } }, shape: [2] });
    expectStatus(await d.c.put(`/datasets/${ids.flags}/value`, { value: [false, true] }), 200, 'flags');
    ids.opq = await makeDataset(d, 'opq', { type: { class: 'H5T_OPAQUE', size: 4, tag: '' }, shape: [2] });
    expectStatus(await d.c.put(`/datasets/${ids.opq}/value`, { value: ['AAAAAA==', '/////w=='] }), 200, 'opq');
    ids.scal = await makeDataset(d, 'scal', { type: F64 });
    expectStatus(await d.c.put(`/datasets/${ids.scal}/value`, { value: 1.5 }), 200, 'scal');
    expectStatus(await d.c.put(`/groups/${d.root}/attributes/keep`, { type: I32, shape: [2], value: [10, 20] }), 201, 'keep');
    expectStatus(await d.c.put(`/groups/${d.root}/attributes/nul`, { type: I32, shape: 'H5S_NULL' }), 201, 'nul attr');
    const comp = await d.c.get('/');
    fx = { d, ids, compressors: comp.json.compressors ?? [] };
    fixture = inspect(d.file);
    mark = markFile(d.file);
  });
  after(() => releaseKit(kit));

  it('the fixture is what the cases assume', () => {
    const py = fixture;
    expect(py['/ints'].value).to.deep.equal([1, 2, 3, 4]);
    expect(py['/'].attrs.items.keep.value).to.deep.equal([10, 20]);
    expect(py['/ext'].shape).to.deep.equal([2]);
    expect(py['/ext'].maxshape).to.deep.equal([4]);
    expect(py['/refs'].value).to.deep.equal(['/ints']);
    expect(py['/flags'].value).to.deep.equal([false, true]);
  });

  for (const c of cases) {
    it(c.name, async function () {
      if (c.when && !c.when(fx)) this.skip();
      const before = mark;
      const r = await c.run(fx);
      const after = markFile(fx.d.file);
      mark = after; // the next case starts from whatever this one left
      const status = c.status ?? 400;
      expect(r.status, `status; body: ${r.text.slice(0, 400)}`).to.equal(status);
      const msg = String(r.json?.message ?? r.text);
      for (const f of c.msg ?? []) {
        if (typeof f === 'string') expect(msg.toLowerCase(), 'error message').to.include(f.toLowerCase());
        else expect(msg, 'error message').to.match(f);
      }
      expectSameContent(before, after);
    });
  }

  it('the server still reads the untouched values back after all the bad requests', async () => {
    const { d, ids } = fx;
    expect((await d.c.get(`/datasets/${ids.ints}/value`)).json.value).to.deep.equal([1, 2, 3, 4]);
    expect((await d.c.get(`/groups/${d.root}/attributes/keep`)).json.value).to.deep.equal([10, 20]);
    expect((await d.c.get(`/datasets/${ids.ext}`)).json.shape.dims).to.deep.equal([2]);
    expect((await d.c.get(`/datasets/${ids.strs}/value`)).json.value).to.deep.equal(['a', 'bc']);
    expect((await d.c.get(`/groups/${d.root}/links`)).json.links.map((l: any) => l.title).sort()).to.deep.equal(
      ['cmp', 'enm', 'ext', 'fixedchunk', 'flags', 'grid', 'ints', 'nul', 'opq', 'refs', 'scal', 'strs'],
    );
  });
});

describe('API read: bad selections and points are 400', function () {
  this.timeout(60000);
  let kit: Kit;
  let d: Dom;
  let grid: string;
  let scal: string;
  before(async () => {
    kit = await sharedKit();
    d = await newDomain(kit, 'badread');
    grid = await makeDataset(d, 'grid', { type: I32, shape: [3, 4] });
    scal = await makeDataset(d, 'scal', { type: F64 });
  });
  after(() => releaseKit(kit));

  const reads: [string, (g: string, s: string) => Promise<Reply>][] = [
    ['GET select past the extent', (g) => d.c.get(`/datasets/${g}/value`, { select: '[0:4,0:4]' })],
    ['GET select with the wrong rank', (g) => d.c.get(`/datasets/${g}/value`, { select: '[0:2]' })],
    ['GET coordinate list with an index past the extent', (g) => d.c.get(`/datasets/${g}/value`, { select: '[0,[1,4]]' })],
    ['GET coordinate lists of different lengths', (g) => d.c.get(`/datasets/${g}/value`, { select: '[[0,1],[1,2,3]]' })],
    ['POST points out of range', (g) => d.c.post(`/datasets/${g}/value`, { points: [[0, 0], [3, 0]] })],
    ['POST points of the wrong rank', (g) => d.c.post(`/datasets/${g}/value`, { points: [[0, 0, 0]] })],
    ['POST binary points out of range', (g) => postBinary(d.c, `/datasets/${g}/value`, bytes.coords(0, 0, 2, 4))],
    ['POST binary points not a multiple of 8 x rank', (g) => postBinary(d.c, `/datasets/${g}/value`, bytes.coords(0, 0, 1))],
    ['POST with neither points nor a selection', (g) => d.c.post(`/datasets/${g}/value`, {})],
    ['POST with points and a selection', (g) => d.c.post(`/datasets/${g}/value`, { points: [[0, 0]], select: '[0:1,0:1]' })],
    ['POST points on a scalar dataset', (_g, s) => d.c.post(`/datasets/${s}/value`, { points: [0] })],
    ['POST points that are not a list', (g) => d.c.post(`/datasets/${g}/value`, { points: 3 })],
    ['POST points null', (g) => d.c.post(`/datasets/${g}/value`, { points: null })],
    ['POST an empty points list', (g) => d.c.post(`/datasets/${g}/value`, { points: [] })],
    ['POST a point that is a string', (g) => d.c.post(`/datasets/${g}/value`, { points: [[0, 0], 'x'] })],
    ['POST select that is a number', (g) => d.c.post(`/datasets/${g}/value`, { select: 3 })],
    ['POST select that is an object', (g) => d.c.post(`/datasets/${g}/value`, { select: { a: 1 } })],
    ['POST select as a list with a bad item', (g) => d.c.post(`/datasets/${g}/value`, { select: [0, { a: 1 }] })],
    ['POST select as a list of the wrong rank', (g) => d.c.post(`/datasets/${g}/value`, { select: [0] })],
    ['POST select together with start', (g) => d.c.post(`/datasets/${g}/value`, { select: '[0:1,0:1]', start: [0, 0] })],
    ['POST start that is a string', (g) => d.c.post(`/datasets/${g}/value`, { start: 'a', stop: [1, 1] })],
    ['POST stop with the wrong rank', (g) => d.c.post(`/datasets/${g}/value`, { stop: [1] })],
    ['POST step of 0', (g) => d.c.post(`/datasets/${g}/value`, { step: [0, 1] })],
    ['POST select in the body and in the query', (g) => d.c.request('POST', `/datasets/${g}/value`, { body: { select: '[0:1,0:1]' }, query: { select: '[0:1,0:1]' } })],
    ['POST a body that is a list', (g) => d.c.post(`/datasets/${g}/value`, [[0, 0]])],
    ['POST a body that is not JSON', (g) => d.c.request('POST', `/datasets/${g}/value`, { raw: '{"points": [[0, 0]', headers: { 'content-type': 'application/json' } })],
    ['GET fields= on a non-compound dataset', (g) => d.c.get(`/datasets/${g}/value`, { fields: 'a' })],
    ['GET query= on a non-compound dataset', (g) => d.c.get(`/datasets/${g}/value`, { query: 'a > 1' })],
  ];
  for (const [name, run] of reads) {
    it(name, async () => {
      const r = await run(grid, scal);
      expect(r.status, r.text.slice(0, 300)).to.equal(400);
    });
  }
});
