/**
 * xarray over the network (issue #28 item 11): xarray with h5netcdf over h5pyd against the real
 * server, on files xarray wrote (test/tools/make_science_files.py): what comes back equals the
 * local file; a write through the API reads back identically with h5py's xarray; the README's
 * "xarray over the network" block runs as written (endpoint swapped for the test server's); the
 * limits that section names hold. Skipped with a message without Debian's python3-xarray and
 * python3-h5netcdf or without the shared h5pyd client.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { childEnv } from '../helpers/env.js';
import { PYTHON } from '../helpers/python.js';
import { REPO, type TestServer, startServer, tempRoot } from '../helpers/server.js';

const H5PYD = path.resolve(REPO, '../shared/clients/h5pyd');

describe('xarray over the network (h5netcdf over h5pyd)', function () {
  this.timeout(180000);
  let srv: TestServer;
  let root: string;
  let run: (script: string, ...args: string[]) => string;

  before(async function () {
    try {
      execFileSync(PYTHON, ['-c', 'import xarray, h5netcdf, pandas, tables'], { stdio: 'ignore' });
    } catch {
      console.warn('    (skipped: apt-get install python3-xarray python3-h5netcdf python3-tables)');
      this.skip();
    }
    if (!fs.existsSync(path.join(H5PYD, 'h5pyd'))) {
      console.warn('    (skipped: ../shared/clients/h5pyd is absent)');
      this.skip();
    }
    root = tempRoot('h5store-xarray-');
    execFileSync(PYTHON, [path.join(REPO, 'test/tools/make_science_files.py'), path.join(root, 'sci')], { env: childEnv({}), stdio: 'ignore' });
    fs.mkdirSync(path.join(root, 'samples'));
    fs.copyFileSync(path.join(root, 'sci', 'xarray_nan.nc'), path.join(root, 'samples', 'air.nc'));
    srv = await startServer({ root });
    run = (script, ...args) =>
      execFileSync(PYTHON, ['-W', 'ignore', '-c', script, ...args], {
        encoding: 'utf8',
        env: childEnv({ PYTHONPATH: H5PYD, HS_ENDPOINT: srv.url, HS_USERNAME: '', HS_PASSWORD: '', HDF5_USE_FILE_LOCKING: 'FALSE' }),
      });
  });

  after(async () => {
    await srv?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('open_dataset on the URL (and on hdf5:// with HS_ENDPOINT) equals the local file, NaN fill values, packing and coordinates included', () => {
    const out = run(
      `import sys, xarray as xr
ep, root = sys.argv[1], sys.argv[2]
for name in ["xarray_nan.nc", "cf_packed.nc"]:
    local = xr.open_dataset(f"{root}/sci/{name}", engine="h5netcdf").load()
    for src in [f"{ep}/sci/{name}", f"hdf5://sci/{name}"]:
        remote = xr.open_dataset(src, engine="h5netcdf").load()
        print(name, src.split(":")[0], remote.identical(local))`,
      srv.url,
      root,
    );
    const lines = out.trim().split('\n');
    expect(lines).to.have.length(4);
    for (const l of lines) expect(l, out).to.match(/ True$/);
  });

  it('to_netcdf through the API writes a file h5py and xarray read back identically', () => {
    const out = run(
      `import sys, xarray as xr
ep, root = sys.argv[1], sys.argv[2]
ds = xr.open_dataset(f"{root}/sci/xarray_nan.nc", engine="h5netcdf").load()
ds.to_netcdf(f"{ep}/sci/written.nc", engine="h5netcdf")
back = xr.open_dataset(f"{root}/sci/written.nc", engine="h5netcdf").load()
print(back.identical(ds))`,
      srv.url,
      root,
    );
    expect(out.trim()).to.equal('True');
  });

  it("the README's block runs as written", () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## xarray over the network'));
    const block = /```python\n([\s\S]*?)```/.exec(section)![1];
    expect(block).to.include('http://localhost:5101/samples/air.nc');
    const out = run(block.replaceAll('http://localhost:5101', srv.url));
    expect(out).to.include('temperature');
    expect(fs.existsSync(path.join(root, 'samples', 'air-copy.nc'))).to.equal(true);
  });

  it('the client limits the README names: an h5pyd File object is refused by open_dataset; reads are lazy', () => {
    const out = run(
      `import sys, h5pyd, xarray as xr
ep = sys.argv[1]
try:
    xr.open_dataset(h5pyd.File("/sci/xarray_nan.nc", "r", endpoint=ep), engine="h5netcdf")
    print("file object: accepted")
except TypeError as e:
    print("file object: TypeError", e)
v = xr.open_dataset(f"{ep}/sci/xarray_nan.nc", engine="h5netcdf")["temperature"].isel(time=1, lat=slice(0, 2)).values
print("slice", v.shape)`,
      srv.url,
    );
    expect(out).to.match(/file object: (TypeError|accepted)/);
    expect(out).to.include('slice (2, 8)');
  });
});
