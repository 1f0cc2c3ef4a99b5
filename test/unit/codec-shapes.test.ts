import { expect } from 'chai';
import { elementCount, parseShape, shapeDims, type ShapeJson } from '../../src/codec/shapes.js';
import { expect400 } from '../helpers/errors.js';

describe('codec/shapes parseShape', () => {
  const accepted: [string, unknown, unknown, ShapeJson][] = [
    ['omitted', undefined, undefined, { class: 'H5S_SCALAR' }],
    ['null', null, undefined, { class: 'H5S_SCALAR' }],
    ['[]', [], undefined, { class: 'H5S_SCALAR' }],
    ['"H5S_SCALAR"', 'H5S_SCALAR', undefined, { class: 'H5S_SCALAR' }],
    ['{class:H5S_SCALAR}', { class: 'H5S_SCALAR' }, undefined, { class: 'H5S_SCALAR' }],
    ['"H5S_NULL"', 'H5S_NULL', undefined, { class: 'H5S_NULL' }],
    ['{class:H5S_NULL}', { class: 'H5S_NULL' }, undefined, { class: 'H5S_NULL' }],
    ['int', 10, undefined, { class: 'H5S_SIMPLE', dims: [10] }],
    ['int 0', 0, undefined, { class: 'H5S_SIMPLE', dims: [0] }],
    ['list', [4, 5], undefined, { class: 'H5S_SIMPLE', dims: [4, 5] }],
    ['list with zero', [0, 5], undefined, { class: 'H5S_SIMPLE', dims: [0, 5] }],
    ['object', { class: 'H5S_SIMPLE', dims: [3] }, undefined, { class: 'H5S_SIMPLE', dims: [3] }],
    ['object with maxdims', { class: 'H5S_SIMPLE', dims: [4, 5], maxdims: [0, 5] }, undefined, { class: 'H5S_SIMPLE', dims: [4, 5], maxdims: [0, 5] }],
    ['maxdims list, 0 = unlimited', [4, 5], [0, 10], { class: 'H5S_SIMPLE', dims: [4, 5], maxdims: [0, 10] }],
    ['maxdims int', 4, 8, { class: 'H5S_SIMPLE', dims: [4], maxdims: [8] }],
    ['maxdims int 0', 4, 0, { class: 'H5S_SIMPLE', dims: [4], maxdims: [0] }],
    ['maxdims H5S_UNLIMITED', [4, 5], ['H5S_UNLIMITED', 5], { class: 'H5S_SIMPLE', dims: [4, 5], maxdims: [0, 5] }],
    ['maxdims null entry', [4], [null], { class: 'H5S_SIMPLE', dims: [4], maxdims: [0] }],
    ['maxdims null = none', [4], null, { class: 'H5S_SIMPLE', dims: [4] }],
    ['maxdims equal to dims', [4], [4], { class: 'H5S_SIMPLE', dims: [4], maxdims: [4] }],
    ['maxdims in both places agreeing', { class: 'H5S_SIMPLE', dims: [4], maxdims: [0] }, [0], { class: 'H5S_SIMPLE', dims: [4], maxdims: [0] }],
  ];
  for (const [name, shape, maxdims, expected] of accepted) {
    it(`accepts ${name}`, () => {
      expect(parseShape(shape, maxdims)).to.deep.equal(expected);
      // the canonical form is a fixed point
      expect(parseShape(expected)).to.deep.equal(expected);
    });
  }

  const rejected: [string, unknown, unknown, string][] = [
    ['negative int', -1, undefined, 'non-negative integers'],
    ['fractional int', 2.5, undefined, 'non-negative integers'],
    ['negative dim', [3, -1], undefined, 'non-negative integers'],
    ['string dim', ['3'], undefined, 'non-negative integers'],
    ['unknown string', 'H5S_FOO', undefined, 'Invalid shape'],
    ['boolean', true, undefined, 'Invalid shape'],
    ['unknown class', { class: 'H5S_FOO' }, undefined, 'unknown shape class'],
    ['simple without dims', { class: 'H5S_SIMPLE' }, undefined, "requires 'dims'"],
    ['simple with empty dims', { class: 'H5S_SIMPLE', dims: [] }, undefined, 'at least one dimension'],
    ['too many elements', [2 ** 30, 2 ** 30, 2 ** 30], undefined, 'more than 2^53'],
    ['rank > 32', new Array(33).fill(1), undefined, 'exceeds the maximum'],
    ['maxdims with null space', 'H5S_NULL', [3], 'not allowed with H5S_NULL'],
    ['maxdims with scalar', undefined, [3], 'not allowed with a scalar'],
    ['maxdims rank mismatch', [3, 4], [3], 'does not match'],
    ['maxdims smaller than dim', [3, 4], [3, 2], 'smaller than dim'],
    ['maxdims negative', [3], [-1], 'non-negative integers'],
    ['maxdims bad string', [3], ['big'], 'non-negative integers'],
    ['maxdims disagree', { class: 'H5S_SIMPLE', dims: [4], maxdims: [0] }, [8], 'disagree'],
  ];
  for (const [name, shape, maxdims, fragment] of rejected) {
    it(`rejects ${name}`, () => {
      expect400(() => parseShape(shape, maxdims), fragment);
    });
  }

  it('shapeDims and elementCount', () => {
    expect(shapeDims({ class: 'H5S_SCALAR' })).to.deep.equal([]);
    expect(shapeDims({ class: 'H5S_NULL' })).to.equal(null);
    expect(shapeDims({ class: 'H5S_SIMPLE', dims: [2, 3] })).to.deep.equal([2, 3]);
    expect(elementCount([])).to.equal(1);
    expect(elementCount([2, 3])).to.equal(6);
    expect(elementCount([2, 0])).to.equal(0);
  });
});
