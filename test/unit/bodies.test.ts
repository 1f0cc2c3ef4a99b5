/**
 * The request bodies of object creation, resizes, POST .../value and query updates, parsed at the
 * edge (src/http/bodies.ts, issue #27 item 4): what each client line sends (h5pyd 0.24 and 1.0,
 * HSDS's own forms) comes out typed, and each wrong shape is a 400 (413 for a list too long)
 * with the message of the route. What needs the file (types, shapes against each other, ids
 * against the root, paths, extents) is the store's, and the API tables' (test/api/bad-input).
 */
import { expect } from 'chai';
import { datasetBody, datatypeBody, groupBody, newObjects, parseBody, queryUpdateBody, resizeBody, valueReadBody } from '../../src/http/bodies.js';
import { expectH5StoreError } from '../helpers/errors.js';
import { I32 } from '../helpers/types.js';

const G = 'g-329517ad-4f00e600-0000-000000-000060';

describe('create bodies (POST /groups, /datasets, /datatypes)', () => {
  const accepted: [string, () => unknown, unknown][] = [
    ['h5pyd 0.24 group: link and CreateOrder', () => parseBody(groupBody, { link: { id: G, name: 'g1' }, creationProperties: { CreateOrder: 1 } }), { link: { id: G, name: 'g1' }, creationProperties: { CreateOrder: 1 } }],
    ['anonymous group', () => parseBody(groupBody, {}), {}],
    ['h5path with parent_id', () => parseBody(groupBody, { h5path: 'a/b', parent_id: G }), { h5path: 'a/b', parent_id: G }],
    ['an id of null is none', () => parseBody(groupBody, { id: null, link: { id: G, name: 'x' } }), { id: undefined, link: { id: G, name: 'x' } }],
    [
      "h5pyd 1.0 dataset item: the object's JSON (created, lastModified kept as given, not looked at)",
      () => parseBody(datasetBody, { id: G, type: I32, shape: [4], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [4] } }, value: [1, 2, 3, 4], created: 1, lastModified: 2 }),
      { id: G, type: I32, shape: [4], maxdims: [0], creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [4] } }, value: [1, 2, 3, 4], created: 1, lastModified: 2 },
    ],
    ['dataset creationProperties of null are none', () => parseBody(datasetBody, { type: I32, creationProperties: null }), { type: I32, creationProperties: undefined }],
    ['datatype', () => parseBody(datatypeBody, { type: 'H5T_STD_I32LE', link: { id: G, name: 't' } }), { type: 'H5T_STD_I32LE', link: { id: G, name: 't' } }],
    ['a list of group items, each typed with its kind', () => newObjects('group', [{}, { link: { id: G, name: 'a' } }]), [{ kind: 'group', body: {} }, { kind: 'group', body: { link: { id: G, name: 'a' } } }]],
  ];
  for (const [name, run, out] of accepted) it(`accepts: ${name}`, () => expect(run()).to.deep.equal(out));

  it('keeps every key of creationProperties as given (__proto__ too)', () => {
    const cp = JSON.parse('{"CreateOrder": 1, "__proto__": {"x": 1}, "z": 2}');
    const b = parseBody(groupBody, { creationProperties: cp });
    expect(Object.keys(b.creationProperties!)).to.deep.equal(['CreateOrder', '__proto__', 'z']);
  });

  const refused: [string, () => unknown, number, string][] = [
    ['link and h5path', () => parseBody(groupBody, { link: { id: G, name: 'a' }, h5path: '/b' }), 400, 'Give "link" or "h5path", not both'],
    ['link a string', () => parseBody(groupBody, { link: G }), 400, '"link" must be an object with "id" and "name"'],
    ['link a list', () => parseBody(groupBody, { link: [G, 'a'] }), 400, '"link" must be an object'],
    ['link without id (h5pyd 0.24 without a parent)', () => parseBody(groupBody, { link: { name: 'a' } }), 400, '"link.id" (the parent group id) is required'],
    ['link without name', () => parseBody(datasetBody, { type: I32, link: { id: G } }), 400, 'no h5path given: "link.name" is required'],
    ['link name with a slash', () => parseBody(datatypeBody, { type: I32, link: { id: G, name: 'a/b' } }), 400, 'must not contain "/"'],
    ['link name a number', () => parseBody(groupBody, { link: { id: G, name: 3 } }), 400, 'Link name must be a non-empty string'],
    ['h5path a number', () => parseBody(groupBody, { h5path: 3 }), 400, '"h5path" must name an object'],
    ['parent_id a number', () => parseBody(groupBody, { h5path: 'a', parent_id: 3 }), 400, '"parent_id" must be a group id'],
    ['id a number', () => parseBody(groupBody, { id: 3 }), 400, '"id" must be a string'],
    ['group creationProperties a list', () => parseBody(groupBody, { creationProperties: [1] }), 400, '"creationProperties" must be an object'],
    ['group creationProperties null', () => parseBody(groupBody, { creationProperties: null }), 400, '"creationProperties" must be an object'],
    ['dataset without type (first, whatever else is wrong)', () => parseBody(datasetBody, { shape: [2], id: 3 }), 400, 'POST Dataset has no type key in body'],
    ['datatype without type', () => parseBody(datatypeBody, {}), 400, 'POST Datatype has no type key in body'],
    ['dataset creationProperties a string', () => parseBody(datasetBody, { type: I32, creationProperties: 'x' }), 400, '"creationProperties" must be an object'],
    ['a list item that is not an object', () => newObjects('dataset', [{ type: I32 }, [1]]), 400, 'Item 1 of the list is not a JSON object'],
    ['a list item with a bad body, named by its index', () => newObjects('datatype', [{ type: I32 }, { type: I32 }, {}]), 400, 'Item 2 of the list: POST Datatype has no type key in body'],
    ['a list of 1,001 items, before any item is looked at', () => newObjects('group', Array.from({ length: 1001 }, () => 5)), 413, 'at most 1000'],
  ];
  for (const [name, run, status, msg] of refused) it(`refuses: ${name}`, () => expectH5StoreError(run, status, msg));
});

describe('resize bodies (PUT /datasets/:id/shape)', () => {
  const accepted: [unknown, unknown][] = [
    [{ shape: [5, 3] }, { shape: [5, 3] }],
    [{ shape: 5 }, { shape: [5] }], // h5pyd 0.24 resize of a 1-D dataset
    [{ shape: [0] }, { shape: [0] }],
    [{ extend: 2 }, { extend: 2, extendDim: 0 }],
    [{ extend: 2, extend_dim: 1 }, { extend: 2, extendDim: 1 }],
    [{ extend: 2, extend_dim: null }, { extend: 2, extendDim: 0 }],
  ];
  for (const [body, out] of accepted) it(`accepts ${JSON.stringify(body)}`, () => expect(parseBody(resizeBody, body)).to.deep.equal(out));
  const refused: [unknown, string][] = [
    [{}, 'Give either "shape" or "extend"'],
    [{ shape: [2], extend: 1 }, 'Give either "shape" or "extend"'],
    [{ shape: '3' }, '"shape" must be a list of integers'],
    [{ shape: null }, '"shape" must be a list of integers'],
    [{ shape: [2.5] }, 'Shape dimensions must be non-negative integers'],
    [{ shape: [-1] }, 'Shape dimensions must be non-negative integers'],
    [{ shape: [2 ** 53] }, 'Shape dimensions must be non-negative integers'],
    [{ extend: -1 }, '"extend" must be a non-negative integer'],
    [{ extend: '1' }, '"extend" must be a non-negative integer'],
    [{ extend: 1, extend_dim: -1 }, '"extend_dim" is out of range'],
    [{ extend: 1, extend_dim: 0.5 }, '"extend_dim" is out of range'],
  ];
  for (const [body, msg] of refused) it(`refuses ${JSON.stringify(body)}`, () => expectH5StoreError(() => parseBody(resizeBody, body), 400, msg));
});

describe('POST .../value bodies and query updates', () => {
  const accepted: [string, unknown, unknown][] = [
    ['points', { points: [[0, 1], [2, 3]] }, { points: [[0, 1], [2, 3]] }],
    ["h5pyd 1.0's long selection: select, fields and query (query left to the route)", { select: '[0:10,5]', fields: 'a:b', query: 'a > 1' }, { select: '[0:10,5]', fields: 'a:b', query: 'a > 1' }],
    ["HSDS's select as a list", { select: [0, '0:10', [1, 2]] }, { select: [0, '0:10', [1, 2]] }],
    ['start, stop and step', { start: [0, 0], stop: 4, step: null }, { start: [0, 0], stop: 4, step: null }],
    ['fields that is not a string is ignored, as it always was', { select: '[0]', fields: 5 }, { select: '[0]', fields: undefined }],
  ];
  for (const [name, body, out] of accepted) it(`accepts: ${name}`, () => expect(parseBody(valueReadBody, body)).to.deep.equal(out));
  const refused: [unknown, string][] = [
    [{ points: 3 }, 'Invalid points: expected a list of points'],
    [{ points: null }, 'Invalid points: expected a list of points'],
    [{ select: 3 }, "'select' must be a string such as '[0:10,:]' or a list"],
    [{ select: { a: 1 } }, "'select' must be a string"],
    [{ start: 'a' }, "'start' must be an integer or a list of integers"],
    [{ stop: [0.5] }, "'stop' must be an integer or a list of integers"],
  ];
  for (const [body, msg] of refused) it(`refuses ${JSON.stringify(body)}`, () => expectH5StoreError(() => parseBody(valueReadBody, body), 400, msg));

  it('a query update is the body, or its "value" when that is an object', () => {
    expect(parseBody(queryUpdateBody, { a: 1, b: 'x' })).to.deep.equal({ a: 1, b: 'x' });
    expect(parseBody(queryUpdateBody, { value: { a: 1 } })).to.deep.equal({ a: 1 });
    expect(parseBody(queryUpdateBody, { value: 3 })).to.deep.equal({ value: 3 });
    for (const body of [{ value: [1] }, { value: null }]) expectH5StoreError(() => parseBody(queryUpdateBody, body), 400, 'A query update needs a JSON object {field: value}');
  });
});
