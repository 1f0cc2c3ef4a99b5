import fs from 'node:fs';
import { H5, G } from './src/hdf5/lib.js';
import * as h5 from './src/hdf5/objects.js';
import * as io from './src/hdf5/io.js';
const mark = (s: string) => fs.writeSync(2, `MARK ${s}\n`);
const dir = '/tmp/ha-exp/root/reach/';
const rw = process.argv[2] === 'rw';
const src = h5.openFile(dir + 'src_a.h5', rw);
mark('src open ' + rw);
const fid = h5.openFile(dir + 'vds_inside.h5', process.argv[3] === 'rw');
const did = h5.openByName(fid, 'data');
const t = { class: 'H5T_INTEGER', base: 'H5T_STD_I32LE' } as const;
const mt = io.createType(t);
try {
  const buf = io.readDataset(did, t, mt, { kind: 'all' }, 20, false);
  mark('read ' + Array.from(new Int32Array(buf.buffer, buf.byteOffset, 20)).join(','));
} catch (e) { mark('read err ' + (e as Error).message); }
if (process.argv[3] === 'rw') {
  try {
    const w = Buffer.alloc(80); for (let i = 0; i < 20; i++) w.writeInt32LE(-100 - i, 4 * i);
    io.writeDataset(did, t, mt, { kind: 'all' }, 20, false, w);
    mark('write ok');
  } catch (e) { mark('write err ' + (e as Error).message); }
}
mark('closing src while vds open');
try { h5.closeFile(src); mark('src closed'); } catch (e) { mark('src close err ' + (e as Error).message); }
try {
  const buf = io.readDataset(did, t, mt, { kind: 'all' }, 20, false);
  mark('read2 ' + Array.from(new Int32Array(buf.buffer, buf.byteOffset, 20)).join(','));
} catch (e) { mark('read2 err ' + (e as Error).message); }
h5.closeObject(did); h5.closeFile(fid);
mark('end');
