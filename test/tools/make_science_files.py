#!/usr/bin/env python3
"""Write the files scientists have, for the viewer's browser test (issue #28 items 1-4).

usage: make_science_files.py DIR
Writes, with the tools that write them in the field (Debian python3-xarray, python3-h5netcdf,
python3-pandas, python3-tables; h5py for NeXus):
  DIR/xarray_nan.nc     xarray -> netCDF-4 (h5netcdf): float variables with NaN fill values and
                        NaN/±Inf values, time/lat/lon coordinates, an empty variable
  DIR/cf_packed.nc      CF packed data: int16 with scale_factor/add_offset, _FillValue and
                        missing_value, lat/lon coordinate variables (xarray encoding)
  DIR/nexus.nxs         NeXus: /entry (NXentry, default=data); /entry/data (NXdata) whose
                        signal and axis are soft links into /entry/instrument; /entry/ext_data
                        (NXdata) whose signal is an external link to nexus_detector.h5
  DIR/nexus_detector.h5 the external link's target, in the same folder
  DIR/pandas_table.h5   pandas DataFrame.to_hdf(format="table") (PyTables), mixed dtypes
Prints JSON with the values the test compares against what the browser shows.
Exit status 3 (and a message) when xarray or pandas/PyTables are missing.
"""
import os

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import json  # noqa: E402
import sys  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402

try:
    import pandas as pd  # noqa: E402
    import xarray as xr  # noqa: E402
    import h5netcdf  # noqa: E402,F401
    import tables  # noqa: E402,F401
except ImportError as e:  # pragma: no cover
    print(f"missing: {e.name} (apt-get install python3-xarray python3-h5netcdf python3-tables)", file=sys.stderr)
    sys.exit(3)


def xarray_nan(path):
    rng = np.random.default_rng(7)
    temp = (280 + 10 * rng.random((4, 6, 8))).astype("f4")
    temp[0, 0, 0] = np.nan
    temp[1, 2, 3] = np.nan
    temp[2, 1, :] = np.nan
    flux = np.linspace(-1, 1, 8)
    flux[2] = np.inf
    flux[5] = -np.inf
    flux[6] = np.nan
    ds = xr.Dataset(
        {
            "temperature": (("time", "lat", "lon"), temp, {"units": "K", "long_name": "air temperature"}),
            "flux": (("lon",), flux, {"units": "W m-2"}),
            "empty": (("nothing",), np.zeros(0, "f8")),
        },
        coords={
            "time": pd.date_range("2024-01-01", periods=4),
            "lat": ("lat", np.linspace(-50, 50, 6), {"units": "degrees_north"}),
            "lon": ("lon", np.linspace(0, 315, 8), {"units": "degrees_east"}),
        },
        attrs={"title": "xarray file with NaN fill values"},
    )
    ds.to_netcdf(path, engine="h5netcdf")
    return {
        "temperature_row0": [None if np.isnan(v) else float(v) for v in temp[0, 0, :]],
        "flux": [("NaN" if np.isnan(v) else ("Infinity" if v > 0 else "-Infinity")) if not np.isfinite(v) else float(v) for v in flux],
        "lat": [float(v) for v in np.linspace(-50, 50, 6)],
        "lon": [float(v) for v in np.linspace(0, 315, 8)],
    }


def cf_packed(path):
    lat = np.linspace(40, 50, 5)
    lon = np.linspace(-10, 10, 9)
    sst = 15 + 0.01 * np.arange(5 * 9).reshape(5, 9)
    sst[1, 1] = np.nan  # written as _FillValue
    ds = xr.Dataset(
        {"sst": (("lat", "lon"), sst, {"units": "degC", "long_name": "sea surface temperature"})},
        coords={"lat": ("lat", lat, {"units": "degrees_north"}), "lon": ("lon", lon, {"units": "degrees_east"})},
    )
    enc = {"sst": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 10.0, "_FillValue": -32767}}
    ds.to_netcdf(path, engine="h5netcdf", encoding=enc)
    with h5py.File(path, "a") as f:
        # a second "missing" marker, as netCDF writers also set; one raw value uses it
        f["sst"].attrs["missing_value"] = np.int16(-32000)
        raw = f["sst"][...]
        raw[3, 4] = -32000
        f["sst"][...] = raw
    with h5py.File(path, "r") as f:
        raw = f["sst"][...]
    decoded = [[None if v in (-32767, -32000) else round(float(v) * 0.01 + 10.0, 6) for v in row] for row in raw]
    return {"raw_row1": [int(v) for v in raw[1]], "decoded": decoded, "lat": [float(v) for v in lat], "lon": [float(v) for v in lon]}


def nexus(path, ext_path):
    energy = np.linspace(8.0, 9.0, 50)
    counts = (1000 * np.exp(-(((energy - 8.5) / 0.1) ** 2)) + 10).astype("f8")
    frames = np.arange(3 * 16 * 20, dtype="f4").reshape(3, 16, 20)
    with h5py.File(ext_path, "w") as f:
        d = f.create_dataset("frames", data=frames)
        d.attrs["units"] = "counts"
    with h5py.File(path, "w") as f:
        f.attrs["default"] = "entry"
        e = f.create_group("entry")
        e.attrs["NX_class"] = "NXentry"
        e.attrs["default"] = "data"
        e["title"] = "energy scan with soft-linked axes"
        inst = e.create_group("instrument")
        inst.attrs["NX_class"] = "NXinstrument"
        mono = inst.create_group("monochromator")
        mono.attrs["NX_class"] = "NXmonochromator"
        en = mono.create_dataset("energy", data=energy)
        en.attrs["units"] = "keV"
        det = inst.create_group("detector")
        det.attrs["NX_class"] = "NXdetector"
        c = det.create_dataset("data", data=counts)
        c.attrs["units"] = "counts"
        c.attrs["long_name"] = "detector counts"
        data = e.create_group("data")
        data.attrs["NX_class"] = "NXdata"
        data.attrs["signal"] = "counts"
        data.attrs["axes"] = ["energy"]
        data["counts"] = h5py.SoftLink("/entry/instrument/detector/data")
        data["energy"] = h5py.SoftLink("/entry/instrument/monochromator/energy")
        data["title"] = h5py.SoftLink("/entry/title")
        ext = e.create_group("ext_data")
        ext.attrs["NX_class"] = "NXdata"
        ext.attrs["signal"] = "frames"
        ext["frames"] = h5py.ExternalLink(os.path.basename(ext_path), "/frames")
    return {"energy": [float(v) for v in energy[:3]], "counts_max": float(counts.max()), "frames_shape": list(frames.shape)}


def pandas_table(path):
    df = pd.DataFrame(
        {
            "station": ["alpha", "beta", "gamma", "delta", "eps"],
            "temp": [1.5, np.nan, 3.0, 4.25, -2.0],
            "pressure": [1013.0, 1009.5, 1001.25, 998.0, 1020.0],
            "count": [1, 2, 3, 4, 5],
        }
    )
    df.to_hdf(path, key="weather", format="table")
    back = pd.read_hdf(path, "weather")
    return {
        "columns": ["index", *[str(c) for c in back.columns]],
        "rows": [[int(i), r.station, None if np.isnan(r.temp) else float(r.temp), float(r.pressure), int(r["count"])] for i, r in back.iterrows()],
    }


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    info = {
        "xarray": xarray_nan(os.path.join(out, "xarray_nan.nc")),
        "cf": cf_packed(os.path.join(out, "cf_packed.nc")),
        "nexus": nexus(os.path.join(out, "nexus.nxs"), os.path.join(out, "nexus_detector.h5")),
        "pandas": pandas_table(os.path.join(out, "pandas_table.h5")),
    }
    print(json.dumps(info))


main()
