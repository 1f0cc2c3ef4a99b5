#!/usr/bin/env python3
"""Files written the way the tools scientists use write them, for the h5grove API tests
(test/api/grove.test.ts, test/browser/grove.test.ts), into the folder argv[1]:

  xarray.h5     netCDF-4 layout as xarray/netCDF4 write it: dimension scales (time, x), a float32
                variable with NaN as _FillValue and NaN values, a float64 one with NaN values
                and a finite _FillValue, CF attributes
  cf.h5         packed values: int16 with scale_factor/add_offset/_FillValue, lat/lon coordinates
  nexus.h5      NeXus: /entry (NXentry, default=data), /entry/data (NXdata, signal=counts,
                axes=energy) whose axis is a soft link into /entry/instrument and whose monitor is
                an external link to nexus_ext.h5 (same folder); a dangling soft link
  nexus_ext.h5  the external link's target
  table.h5      a pandas/PyTables-style table: compound rows (index, temperature, station)
  types.h5      one dataset of each kind of type h5py writes (ints of every size and byte order,
                float16/32/64, bool, enum, strings, compound, complex, array, vlen, opaque,
                references, bitfields, scalar, empty and null-dataspace datasets, a committed type)
  many.h5       /big: a group of `argv[2]` (default 50,000) scalar float32 datasets d00000...

Prints a JSON object: {"many": count}.
"""
import json
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
many = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
os.makedirs(out, exist_ok=True)


def path(name):
    return os.path.join(out, name)


# --- xarray / netCDF-4 -----------------------------------------------------------------------
with h5py.File(path('xarray.h5'), 'w') as f:
    time = f.create_dataset('time', data=np.arange(5, dtype='<i8'))
    time.attrs['units'] = 'days since 2000-01-01'
    time.attrs['calendar'] = 'proleptic_gregorian'
    time.make_scale('time')
    x = f.create_dataset('x', data=np.linspace(0.0, 1.5, 4))
    x.make_scale('x')
    t = np.arange(20, dtype='<f4').reshape(5, 4) / 4
    t[1, 2] = np.nan
    t[3, :] = np.nan
    temp = f.create_dataset('temperature', data=t, fillvalue=np.nan, chunks=(5, 4), compression='gzip')
    temp.attrs['_FillValue'] = np.float32(np.nan)
    temp.attrs['units'] = 'degC'
    temp.attrs['long_name'] = 'air temperature'
    temp.dims[0].attach_scale(time)
    temp.dims[1].attach_scale(x)
    p = np.arange(20, dtype='<f8').reshape(5, 4) * 10 + 1000
    p[0, 3] = np.nan
    pres = f.create_dataset('pressure', data=p, fillvalue=-9999.0)
    pres.attrs['_FillValue'] = -9999.0
    pres.attrs['units'] = 'hPa'
    pres.dims[0].attach_scale(time)
    pres.dims[1].attach_scale(x)
    f.attrs['Conventions'] = 'CF-1.8'
    f.attrs['history'] = 'written like xarray.Dataset.to_netcdf(engine="h5netcdf")'

# --- CF packed values --------------------------------------------------------------------------
with h5py.File(path('cf.h5'), 'w') as f:
    lat = f.create_dataset('lat', data=np.linspace(-60, 60, 7, dtype='<f4'))
    lat.attrs['units'] = 'degrees_north'
    lat.make_scale('lat')
    lon = f.create_dataset('lon', data=np.linspace(0, 350, 8, dtype='<f4'))
    lon.attrs['units'] = 'degrees_east'
    lon.make_scale('lon')
    packed = (np.arange(56, dtype='<i2').reshape(7, 8) * 100) - 2000
    packed[0, 0] = -32767
    tas = f.create_dataset('tas', data=packed)
    tas.attrs['scale_factor'] = np.float32(0.01)
    tas.attrs['add_offset'] = np.float32(273.15)
    tas.attrs['_FillValue'] = np.int16(-32767)
    tas.attrs['units'] = 'K'
    tas.dims[0].attach_scale(lat)
    tas.dims[1].attach_scale(lon)

# --- NeXus with soft and external links ---------------------------------------------------------
with h5py.File(path('nexus_ext.h5'), 'w') as f:
    m = f.create_dataset('monitor', data=np.array([10, 11, 12, 13, 14, 15], dtype='<i4'))
    m.attrs['units'] = 'counts'
with h5py.File(path('nexus.h5'), 'w') as f:
    f.attrs['NX_class'] = 'NXroot'
    f.attrs['default'] = 'entry'
    entry = f.create_group('entry')
    entry.attrs['NX_class'] = 'NXentry'
    entry.attrs['default'] = 'data'
    inst = entry.create_group('instrument')
    inst.attrs['NX_class'] = 'NXinstrument'
    e = inst.create_dataset('energy', data=np.linspace(1.0, 6.0, 6))
    e.attrs['units'] = 'keV'
    data = entry.create_group('data')
    data.attrs['NX_class'] = 'NXdata'
    data.attrs['signal'] = 'counts'
    data.attrs['axes'] = ['energy']
    data.attrs['title'] = 'Counts against energy'
    c = data.create_dataset('counts', data=np.array([3.0, 5.0, 8.0, 13.0, 21.0, 34.0]))
    c.attrs['units'] = 'counts'
    c.attrs['long_name'] = 'Detector counts'
    data['energy'] = h5py.SoftLink('/entry/instrument/energy')
    data['monitor'] = h5py.ExternalLink('nexus_ext.h5', '/monitor')
    data['dangling'] = h5py.SoftLink('/entry/nowhere')
    entry['missing_file'] = h5py.ExternalLink('no_such_file.h5', '/x')

# --- pandas / PyTables-style table ----------------------------------------------------------------
with h5py.File(path('table.h5'), 'w') as f:
    g = f.create_group('df')
    g.attrs['pandas_type'] = 'frame_table'
    rows = np.array(
        [(0, 12.5, b'ALPHA'), (1, 13.25, b'BRAVO'), (2, -1.5, b'CHARLIE'), (3, np.nan, b'DELTA')],
        dtype=[('index', '<i8'), ('temperature', '<f8'), ('station', 'S8')],
    )
    t = g.create_dataset('table', data=rows)
    t.attrs['CLASS'] = 'TABLE'
    t.attrs['FIELD_0_NAME'] = 'index'

# --- one dataset of each kind of type -------------------------------------------------------------
with h5py.File(path('types.h5'), 'w') as f:
    for code in ['i1', 'u1', '<i2', '>i2', '<u2', '<i4', '>i4', '<u4', '<i8', '>i8', '<u8']:
        name = 'int_' + code.replace('<', 'le').replace('>', 'be')
        f[name] = (np.arange(12).reshape(3, 4) - (0 if 'u' in code else 3)).astype(code)
    f['f16'] = (np.arange(6, dtype='<f2') / 3).reshape(2, 3)
    f['f16be'] = (np.arange(6, dtype='>f2') / 3).reshape(2, 3)
    f['f32'] = np.array([0.1, -2.5, np.nan, np.inf, -np.inf, 1e-30], dtype='<f4')
    f['f32be'] = np.array([0.1, -2.5, 3.25, 1e3], dtype='>f4')
    f['f64'] = np.array([[0.1, 1 / 3, -1e300], [np.nan, 2.0, 5e-324]], dtype='<f8')
    f['bool'] = np.array([True, False, True, True])
    f['enum'] = np.array([1, 2, 1], dtype=h5py.enum_dtype({'RED': 1, 'GREEN': 2}, basetype='i2'))
    f['fixed_str'] = np.array([b'abc', b'de', b''], dtype='S4')
    f['vlen_str'] = np.array(['alpha', 'βeta', ''], dtype=h5py.string_dtype())
    f['scalar_str'] = 'a scalar string'
    f['scalar_int'] = np.int32(-7)
    f['scalar_f64'] = 2.5
    f['compound'] = np.array([(1, 2.5, b'x'), (2, -1.0, b'yz')], dtype=[('a', '<i4'), ('b', '<f8'), ('c', 'S2')])
    f['complex64'] = np.array([1 + 2j, -3.5 + 0.25j], dtype='<c8')
    f['complex128'] = np.array([[1 + 2j, 3 - 4j]], dtype='<c16')
    f.create_dataset('array_of_3', data=np.zeros(2, dtype=[('v', '<i4', (3,))]))
    vl = f.create_dataset('vlen_int', (2,), dtype=h5py.vlen_dtype(np.int32))
    vl[0] = [1, 2, 3]
    vl[1] = [4]
    f['opaque'] = np.void(b'\x00\x11\x22')
    f['empty_1d'] = np.zeros((0,), dtype='<f4')
    f['empty_2d'] = np.zeros((3, 0), dtype='<i4')
    f['null_space'] = h5py.Empty('<f4')
    refs = f.create_dataset('refs', (2,), dtype=h5py.ref_dtype)
    refs[0] = f['f32'].ref
    refs[1] = f['bool'].ref
    tid = h5py.h5t.STD_B8LE.copy()
    h5py.h5d.create(f.id, b'bitfield', tid, h5py.h5s.create_simple((3,)))
    f['committed'] = np.dtype('<f8')
    f['big'] = np.arange(300 * 400, dtype='<f4').reshape(300, 400)
    f.create_dataset('chunked', data=np.arange(1000, dtype='<u2').reshape(10, 100), chunks=(5, 50), compression='gzip', shuffle=True)
    f.create_dataset('int64_big', data=np.array([2**62, -(2**62) - 5, 3], dtype='<i8'))
    f.attrs['title'] = 'every type'
    f.attrs['numbers'] = np.array([1.5, np.nan, 3.0])
    f.attrs['bytes'] = np.bytes_(b'raw bytes')
    f.attrs['empty'] = h5py.Empty('<i4')
    f['f32'].attrs['units'] = 'm'
    f['f32'].attrs['scale'] = np.float32(0.5)

# --- a group of many datasets ---------------------------------------------------------------------
with h5py.File(path('many.h5'), 'w', libver='latest') as f:
    g = f.create_group('big')
    for i in range(many):
        g.create_dataset('d%05d' % i, data=np.float32(i))

print(json.dumps({'many': many}))
