/**
 * h5grove's numpy side (issue #28 item 7): `selection` text as numpy indexing
 * (selection/numpy.ts), and codec/numpy.ts: numeric layouts, `dtype=safe`, `.npy` headers, CSV
 * text and statistics.
 */
import { expect } from 'chai';
import { CsvWriter, StatsAccumulator, npyHeader, numpyDescr, numpyNumeric, safeNumeric } from '../../src/codec/numpy.js';
import type { TypeJson } from '../../src/codec/types.js';
import { parseNumpySelection } from '../../src/selection/numpy.js';

describe('h5grove selection as numpy indexing', () => {
  const dims = [10, 20, 30];
  const rows: [string | undefined, string | undefined, number[]][] = [
    [undefined, undefined, [10, 20, 30]],
    ['', undefined, [10, 20, 30]],
    ['5', '[5:6,0:20,0:30]', [20, 30]],
    ['-1', '[9:10,0:20,0:30]', [20, 30]],
    ['1, 2:5', '[1:2,2:5,0:30]', [3, 30]],
    [' 0:10:5 , 2 ', '[0:6:5,2:3,0:30]', [2, 30]],
    ['3:', '[3:10,0:20,0:30]', [7, 20, 30]],
    [':4, -3:', '[0:4,17:20,0:30]', [4, 3, 30]],
    ['::3', '[0:10:3,0:20,0:30]', [4, 20, 30]],
    ['-100:100', '[0:10,0:20,0:30]', [10, 20, 30]],
    ['8:2', '[0:1,0:20,0:30]', [0, 20, 30]],
    ['1,2,3', '[1:2,2:3,3:4]', []],
  ];
  for (const [text, select, shape] of rows) {
    it(`${JSON.stringify(text)} -> ${select ?? 'everything'}, shape [${shape}]`, () => {
      const s = parseNumpySelection(text, dims);
      expect(s.select).to.equal(select);
      expect(s.shape).to.deep.equal(shape);
      expect(s.count).to.equal(shape.reduce((a, b) => a * b, 1));
    });
  }
  it('refuses (422) what numpy and h5py refuse', () => {
    for (const bad of ['1,2,3,4', 'x', '1:2:0', '1:2:-1', '10', '-11', '1:2:3:4', '1,,2', '1.5', '2**3']) {
      expect(() => parseNumpySelection(bad, dims), bad).to.throw().with.property('code', 'UnprocessableEntity');
    }
    expect(() => parseNumpySelection('0', [])).to.throw().with.property('code', 'UnprocessableEntity');
  });
});

describe('numpy codec', () => {
  const f16le: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F16LE' };
  const i32be: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I32BE' };
  const bool: TypeJson = { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' }, mapping: { FALSE: 0, TRUE: 1 } };
  const c8: TypeJson = { class: 'H5T_COMPOUND', fields: [{ name: 'r', type: { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' } }, { name: 'i', type: { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' } }] };

  it('numeric layouts and their numpy descr; strings and other compounds are not numeric', () => {
    expect(numpyDescr(numpyNumeric(f16le)!)).to.equal('<f2');
    expect(numpyDescr(numpyNumeric(i32be)!)).to.equal('>i4');
    expect(numpyDescr(numpyNumeric(bool)!)).to.equal('|b1');
    expect(numpyDescr(numpyNumeric(c8)!)).to.equal('<c8');
    expect(numpyDescr(numpyNumeric({ class: 'H5T_BITFIELD', base: 'H5T_STD_B16BE' })!)).to.equal('>u2');
    expect(numpyNumeric({ class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 3 })).to.equal(undefined);
    expect(numpyNumeric({ class: 'H5T_COMPOUND', fields: [{ name: 'a', type: i32be }] })).to.equal(undefined);
  });

  it('dtype=safe: float16 to float32, big-endian to little-endian, little-endian unchanged', () => {
    const half = safeNumeric(numpyNumeric(f16le)!);
    expect(numpyDescr(half.to)).to.equal('<f4');
    const h = Buffer.from([0x00, 0x3c, 0x00, 0xc0, 0x00, 0x7e]); // 1, -2, NaN
    const f = half.convert(h);
    expect([f.readFloatLE(0), f.readFloatLE(4)]).to.deep.equal([1, -2]);
    expect(Number.isNaN(f.readFloatLE(8))).to.equal(true);
    const be = safeNumeric(numpyNumeric(i32be)!);
    expect(numpyDescr(be.to)).to.equal('<i4');
    const w = Buffer.alloc(8);
    w.writeInt32BE(-5, 0);
    w.writeInt32BE(70000, 4);
    const le = be.convert(w);
    expect([le.readInt32LE(0), le.readInt32LE(4)]).to.deep.equal([-5, 70000]);
    expect(w.readInt32BE(0), 'the input is not changed').to.equal(-5);
    const same = safeNumeric(numpyNumeric(bool)!);
    const b = Buffer.from([1, 0]);
    expect(same.convert(b)).to.equal(b);
  });

  it('.npy headers: magic, version 1.0, the dict numpy writes, a multiple of 64 bytes', () => {
    for (const shape of [[], [5], [2, 3], [1, 2, 3, 4, 5, 6, 7, 8]]) {
      const h = npyHeader('<f4', shape);
      expect(h.subarray(0, 6).toString('latin1')).to.equal('\x93NUMPY');
      expect([h[6], h[7]]).to.deep.equal([1, 0]);
      expect(h.length % 64).to.equal(0);
      expect(h.readUInt16LE(8)).to.equal(h.length - 10);
      const tuple = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
      expect(h.subarray(10).toString('latin1')).to.match(new RegExp(`^\\{'descr': '<f4', 'fortran_order': False, 'shape': ${tuple.replace(/[()]/g, '\\$&')}, \\} *\\n$`));
    }
  });

  it('CSV: rows of a 2-D array, shortest float text per type, nan/inf, exact 64-bit integers', () => {
    const f32: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32LE' };
    const b = Buffer.alloc(16);
    [0.1, NaN, -Infinity, 3].forEach((v, i) => b.writeFloatLE(v, 4 * i));
    const w = new CsvWriter(numpyNumeric(f32)!, [2, 2]);
    expect(Buffer.concat(w.write(b, 4)).toString()).to.equal('0.1,nan\n-inf,3\n');
    const i64: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I64LE' };
    const q = Buffer.alloc(16);
    q.writeBigInt64LE(2n ** 62n, 0);
    q.writeBigInt64LE(-7n, 8);
    expect(Buffer.concat(new CsvWriter(numpyNumeric(i64)!, [2]).write(q, 2)).toString()).to.equal(`${2n ** 62n}\n-7\n`);
    expect(() => new CsvWriter(numpyNumeric(f32)!, [2, 2, 2])).to.throw();
    expect(() => new CsvWriter(numpyNumeric(c8)!, [2])).to.throw();
  });

  it('statistics as h5grove: finite values only, integers truncated for integer data, nulls when empty', () => {
    const f64: TypeJson = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F64LE' };
    const vals = [-10, -5, -1, 0, 1, 5, 10, NaN, Infinity];
    const b = Buffer.alloc(8 * vals.length);
    vals.forEach((v, i) => b.writeDoubleLE(v, 8 * i));
    const acc = new StatsAccumulator(numpyNumeric(f64)!);
    acc.add(b.subarray(0, 32), 4); // in two pages
    acc.add(b.subarray(32), 5);
    expect(acc.result()).to.deep.equal({ strict_positive_min: 1, positive_min: 0, min: -10, max: 10, mean: 0, std: 6 });
    const i16: TypeJson = { class: 'H5T_INTEGER', base: 'H5T_STD_I16LE' };
    const ib = Buffer.alloc(6);
    [1, 2, 2].forEach((v, i) => ib.writeInt16LE(v, 2 * i));
    const ia = new StatsAccumulator(numpyNumeric(i16)!);
    ia.add(ib, 3);
    expect(ia.result()).to.deep.equal({ strict_positive_min: 1, positive_min: 1, min: 1, max: 2, mean: 1, std: 0 });
    expect(new StatsAccumulator(numpyNumeric(f64)!).result()).to.deep.equal({ strict_positive_min: null, positive_min: null, min: null, max: null, mean: null, std: null });
  });
});
