import fs from 'node:fs';
import { H5, G } from './src/hdf5/lib.js';
import * as h5 from './src/hdf5/objects.js';
import * as io from './src/hdf5/io.js';
const mark = (s: string) => fs.writeSync(2, `MARK ${s}\n`);
const file = process.argv[2];
mark('open file');
const fid = h5.openFile(file, process.argv[3] === 'rw');
mark('open dataset by name');
const did = h5.openByName(fid, 'data');
mark('get_create_plist');
const dcpl = H5.H5Dget_create_plist(did);
mark('layout ' + H5.H5Pget_layout(dcpl));
mark('get_type');
const tid = H5.H5Dget_type(did);
mark('get_space');
try { const sid = H5.H5Dget_space(did); mark('space done'); H5.H5Sclose(sid);} catch (e) { mark('space err ' + e.message); }
mark('read');
try {
  const t = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' } as const;
  const mt = io.createType(t);
  const { space } = io.datasetTypeAndSpace(did);
  const n = space.dims[0];
  const buf = io.readDataset(did, t, mt, { kind: 'all' }, n, false);
  mark('read done ' + Array.from(new Int32Array(buf.buffer, buf.byteOffset, n)).join(','));
} catch (e) { mark('read err ' + (e as Error).message); }
mark('close');
h5.closeObject(did);
h5.closeFile(fid);
mark('end');
