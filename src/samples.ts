/**
 * Sample domains the server writes itself (no Python needed): `/samples/tall.h5`, shaped like
 * the classic HSDS/h5pyd test file, and `/samples/types.h5` with one dataset per type class.
 * Written through the store, i.e. through the same code paths as the REST API.
 */
import fs from 'node:fs';
import type { Store } from './store/store.js';

const I32BE = { class: 'H5T_INTEGER', base: 'H5T_STD_I32BE' };
const F32BE = { class: 'H5T_FLOAT', base: 'H5T_IEEE_F32BE' };
const I8BE = { class: 'H5T_INTEGER', base: 'H5T_STD_I8BE' };

/** Bytes of a NUL-terminated ASCII string as int8 values (tall.h5 stores text that way). */
function asciiCodes(s: string): number[] {
  return [...Buffer.from(s + '\0', 'latin1')];
}

async function createTall(store: Store, domain: string): Promise<void> {
  await store.createDomain(domain, {});
  const root = await store.rootId(domain);
  await store.putAttribute(domain, 'group', root, 'attr1', { type: I8BE, shape: [10], value: asciiCodes('abcdefghi') }, true);
  await store.putAttribute(domain, 'group', root, 'attr2', { type: I32BE, shape: [2, 2], value: [[0, 1], [2, 3]] }, true);
  const g1 = await store.createGroup(domain, { link: { id: root, name: 'g1' } }, false);
  const g11 = await store.createGroup(domain, { link: { id: g1.id, name: 'g1.1' } }, false);
  const g12 = await store.createGroup(domain, { link: { id: g1.id, name: 'g1.2' } }, false);
  const g121 = await store.createGroup(domain, { link: { id: g12.id, name: 'g1.2.1' } }, false);
  const g2 = await store.createGroup(domain, { link: { id: root, name: 'g2' } }, false);
  const d111 = await store.createDataset(domain, { type: I32BE, shape: [10, 10], link: { id: g11.id, name: 'dset1.1.1' } }, false);
  const v111 = Array.from({ length: 10 }, (_, i) => Array.from({ length: 10 }, (_, j) => i * j));
  await store.writeValues(domain, d111.id, { json: { value: v111 } });
  await store.putAttribute(domain, 'dataset', d111.id, 'attr1', { type: I8BE, shape: [27], value: asciiCodes('1st attribute of dset1.1.1') }, true);
  await store.putAttribute(domain, 'dataset', d111.id, 'attr2', { type: I8BE, shape: [27], value: asciiCodes('2nd attribute of dset1.1.1') }, true);
  const d112 = await store.createDataset(domain, { type: I32BE, shape: [20], link: { id: g11.id, name: 'dset1.1.2' } }, false);
  await store.writeValues(domain, d112.id, { json: { value: Array.from({ length: 20 }, (_, i) => i) } });
  await store.putLink(domain, g12.id, 'extlink', { h5path: 'somepath', h5domain: 'somefile' });
  await store.putLink(domain, g121.id, 'slink', { h5path: 'somevalue' });
  const d21 = await store.createDataset(domain, { type: F32BE, shape: [10], link: { id: g2.id, name: 'dset2.1' } }, false);
  await store.writeValues(domain, d21.id, { json: { value: Array.from({ length: 10 }, (_, i) => 1 + i / 10) } });
  const d22 = await store.createDataset(domain, { type: F32BE, shape: [3, 5], link: { id: g2.id, name: 'dset2.2' } }, false);
  await store.writeValues(domain, d22.id, { json: { value: Array.from({ length: 3 }, (_, i) => Array.from({ length: 5 }, (_, j) => i * 0.1 + j * 0.01)) } });
}

async function createTypes(store: Store, domain: string): Promise<void> {
  await store.createDomain(domain, {});
  const root = await store.rootId(domain);
  const put = async (name: string, body: { type: unknown; shape?: unknown; maxdims?: unknown; creationProperties?: Record<string, unknown> }, value: unknown) => {
    const ds = await store.createDataset(domain, { ...body, link: { id: root, name } }, false);
    if (value !== undefined) await store.writeValues(domain, ds.id, { json: { value } });
  };
  const vstr = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' };
  await put('int64', { type: 'H5T_STD_I64LE', shape: [5] }, [-2, -1, 0, 1, 2 ** 40]);
  await put('float64_2d', { type: 'H5T_IEEE_F64LE', shape: [2, 3] }, [[0.5, 1.5, 2.5], [NaN, Infinity, -Infinity]]);
  await put('fixed_string', { type: { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 8 }, shape: [3] }, ['alpha', 'beta', 'gamma']);
  await put('vlen_string', { type: vstr, shape: [3] }, ['α', 'beta and more', '']);
  await put('bool', { type: { class: 'H5T_ENUM', base: { class: 'H5T_INTEGER', base: 'H5T_STD_I8LE' }, mapping: { FALSE: 0, TRUE: 1 } }, shape: [4] }, [true, false, true, true]);
  await put(
    'table',
    {
      type: {
        class: 'H5T_COMPOUND',
        fields: [
          { name: 'time', type: 'H5T_STD_I64LE' },
          { name: 'temp', type: 'H5T_IEEE_F32LE' },
          { name: 'station', type: { class: 'H5T_STRING', charSet: 'H5T_CSET_ASCII', strPad: 'H5T_STR_NULLPAD', length: 4 } },
        ],
      },
      shape: [6],
      maxdims: [0],
      creationProperties: { layout: { class: 'H5D_CHUNKED', dims: [64] }, filters: ['gzip'] },
    },
    [
      [1, 20.5, 'KORD'],
      [2, 33.25, 'KSFO'],
      [3, 31.5, 'KORD'],
      [4, 40, 'KLAX'],
      [5, -3.75, 'PANC'],
      [6, 35.5, 'KSFO'],
    ],
  );
  await put('vlen_int', { type: { class: 'H5T_VLEN', base: 'H5T_STD_I32LE' }, shape: [3] }, [[1], [2, 3], []]);
  await put('scalar', { type: 'H5T_IEEE_F64LE' }, 3.5);
  await store.putAttribute(domain, 'group', root, 'description', { type: vstr, value: 'one dataset per HDF5 type class' }, true);
  // a scalar root attribute, for the README's `GET /domains?query=` example
  await store.putAttribute(domain, 'group', root, 'sample_version', { type: 'H5T_STD_I32LE', value: 2 }, true);
}

/**
 * Write the sample domains under `/samples` when they are missing (first start).
 * @returns the domains written now.
 */
export async function ensureSamples(store: Store): Promise<string[]> {
  const written: string[] = [];
  const folder = store.paths.resolve('/samples');
  if (!fs.existsSync(folder)) await store.createDomain('/samples', { folder: true });
  for (const [domain, make] of [
    ['/samples/tall.h5', createTall],
    ['/samples/types.h5', createTypes],
  ] as const) {
    if (fs.existsSync(store.paths.resolve(domain))) continue;
    try {
      await make(store, domain);
      written.push(domain);
    } catch (e) {
      fs.rmSync(store.paths.resolve(domain), { force: true });
      throw e;
    }
  }
  return written;
}
