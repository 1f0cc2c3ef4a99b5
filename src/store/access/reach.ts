/**
 * Files beyond a dataset's own file that libhdf5 opens to read or write its values: the files of
 * an external file list (`H5Pset_external`) and the source files of a virtual dataset
 * (`H5Pset_virtual`), followed through nested virtual and external datasets (DESIGN.md 4;
 * docs/architecture.md "Files a dataset reaches").
 *
 * libhdf5 opens whatever path such a file names (absolute, relative, with `..`, through
 * symlinks), so before it may touch a dataset whose values live elsewhere, every file it *may*
 * open is worked out here the way libhdf5 looks it up, and must resolve, after symlinks, inside
 * the data root; otherwise the value operation answers 403 naming the file. Metadata never needs
 * these files, except the extent of a virtual dataset with unlimited (`%b`) mappings, which
 * libhdf5 computes by opening the sources (see `datasetTypeAndSpaceOf`).
 *
 * How libhdf5 1.10 looks the files up (checked with strace on 1.10.8; `src/hdf5/lib.ts` sets
 * `HDF5_EXTFILE_PREFIX` and `HDF5_VDS_PREFIX` to `${ORIGIN}`):
 * - external file list: one path, the name itself when absolute, else
 *   `<folder of the HDF5 file>/<name>` (`H5D__efl_read`/`_write` open it with `open(2)`, the
 *   write with `O_CREAT`);
 * - virtual dataset source: `.` is the same file; else an absolute name as is, then
 *   `<folder of the HDF5 file>/<basename>`, then `<working directory>/<basename>`; a relative
 *   name `<folder>/<name>`, then `<working directory>/<name>`. The first that opens as HDF5 is
 *   used, and its source dataset is opened by path with the default link access (which would
 *   follow external links). A name with `%b` is a pattern: block b = 0, 1, ... until no file
 *   opens (`H5Pset_virtual_printf_gap` 0, the default).
 * The check here is stricter than that order: every candidate that exists must be inside the
 * root, all existing candidates are followed, and a source dataset path that crosses an
 * external link is refused.
 */
import fs from 'node:fs';
import type { TypeJson } from '../../codec/types.js';
import { H5StoreError, forbidden } from '../../errors.js';
import * as C from '../../hdf5/constants.js';
import * as io from '../../hdf5/io.js';
import type { ExternalFile, VirtualMapping } from '../../hdf5/io.js';
import { type Hid, openPathNoElink } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import { AddrMap } from '../objects/addrMap.js';
import type { DomainFile } from '../objects/domainFile.js';
import { StateSlot } from '../session/fileState.js';
import { type ReachContext, normalizeDomain } from '../objects/paths.js';

/** Most files one dataset may reach (sources of `%b` patterns and nested datasets included). */
export const MAX_REACHED_FILES = 4096;
/** Most levels of virtual datasets whose sources are virtual datasets. */
export const MAX_REACH_DEPTH = 8;

/**
 * A file inside the root that an operation on a dataset may make libhdf5 open (the dataset's
 * own file too, when a virtual dataset maps sources of the same file or its external file list
 * names it).
 */
export interface ReachedFile {
  /** `external`: raw data of an external file list; `virtual`: a virtual dataset source file. */
  kind: 'external' | 'virtual';
  /**
   * True when libhdf5 reads or writes bytes of the file as they are (external raw storage): any
   * object of it may lie there, so every object's ACL applies (issue #24 item 3).
   */
  raw: boolean;
  /** Addresses of the source datasets libhdf5 opens in it (virtual datasets; their own ACLs apply). */
  sources: Set<bigint>;
  /** The name as stored in the HDF5 file (a `%b` pattern expanded). */
  stored: string;
  /** The real path (after symlinks), or the path it would be created at (external, writes). */
  real: string;
  /** Its domain path. */
  domain: string;
  /** Whether the file exists now. */
  exists: boolean;
}

/** The storage kinds whose values live in other files. */
export type StorageKind = 'plain' | 'external' | 'virtual' | 'virtual-unlimited';

/** What kind of storage a dataset has (from its creation properties; no file opened). */
export function storageKind(storage: { layout: number; external?: ExternalFile[]; virtual?: VirtualMapping[] }): StorageKind {
  if (storage.external?.length) return 'external';
  if (storage.layout === C.H5D_VIRTUAL) return storage.virtual?.some((m) => m.unlimited) ? 'virtual-unlimited' : 'virtual';
  return 'plain';
}

export type { ReachContext };

/**
 * Storage kinds of datasets by address, with the address generation they were learnt for (a
 * dataset's layout never changes; an address freed and reused gets a new generation). Part of
 * the object index (fileState.ts): kept across this process's writes.
 */
const STORAGE_KINDS = new StateSlot('storage kinds', 'index', () => new AddrMap<{ gen: number; kind: StorageKind }>());

interface Walk {
  ctx: ReachContext;
  /** Judgements of the files source datasets were found in, by the path they were opened by. */
  judged: Map<string, Judged>;
  /** The process's working directory (libhdf5's last resort for source file names). */
  cwd: string;
  out: Map<string, ReachedFile>;
  seen: Set<string>;
  count: number;
}

/**
 * Every file inside the root that reading (or writing) the values of the open dataset `did` may
 * make libhdf5 open, nested virtual/external datasets included; [] for an ordinary dataset.
 * @param file the dataset's file: its open id and the path libhdf5 opened it by
 * @throws H5StoreError Forbidden naming the stored file name when one may lead outside the data
 *   root (after symlinks), when a source dataset path crosses an external link, or when the
 *   nesting is deeper than MAX_REACH_DEPTH; PayloadTooLarge beyond MAX_REACHED_FILES.
 */
export function reachOf(ctx: ReachContext, file: { fid: Hid; path: string }, did: Hid): ReachedFile[] {
  if (ctx.refuse && storageKind(io.datasetStorage(did)) !== 'plain') {
    throw forbidden(`The values of this dataset are kept in other files (external raw storage or virtual dataset sources): ${ctx.refuse}`);
  }
  const walk: Walk = { ctx, judged: new Map(), cwd: process.cwd(), out: new Map(), seen: new Set(), count: 0 };
  visitDataset(walk, file, did, 0);
  return [...walk.out.values()];
}

function visitDataset(w: Walk, file: { fid: Hid; path: string }, did: Hid, depth: number): void {
  const storage = io.datasetStorage(did);
  const origin = dirOf(file.path);
  if (storage.external?.length) {
    for (const e of storage.external) {
      const p = e.name.startsWith('/') ? e.name : `${origin}/${e.name}`;
      add(w, 'external', e.name, judge(w.ctx, p, `external raw data file ${JSON.stringify(e.name)}`), { raw: true });
    }
    return;
  }
  if (storage.layout !== C.H5D_VIRTUAL || !storage.virtual) return;
  if (depth >= MAX_REACH_DEPTH) {
    throw forbidden(`Virtual datasets nest more than ${MAX_REACH_DEPTH} levels deep: the values of this dataset cannot be read or written`);
  }
  for (const m of storage.virtual) visitMapping(w, file, origin, m, depth);
}

function visitMapping(w: Walk, file: { fid: Hid; path: string }, origin: string, m: VirtualMapping, depth: number): void {
  const filePattern = parsePattern(m.file);
  const dsetPattern = parsePattern(m.dataset);
  for (let b = 0; ; b++) {
    if (++w.count > MAX_REACHED_FILES) {
      throw new H5StoreError('PayloadTooLarge', `The values of this dataset are spread over more than ${MAX_REACHED_FILES} source datasets`);
    }
    const fname = expand(filePattern, b);
    const dname = expand(dsetPattern, b);
    let fileThere = false;
    let datasetThere = false;
    if (fname === '.') {
      fileThere = true;
      datasetThere = visitSource(w, file, dname, fname, depth, true);
    } else {
      const what = `virtual dataset source file ${JSON.stringify(fname)}${filePattern.length > 1 ? ` (pattern ${JSON.stringify(m.file)})` : ''}`;
      for (const cand of candidates(fname, origin, w.cwd)) {
        // libhdf5 never creates a source file: only what exists can be opened.
        if (!existsFile(cand)) continue;
        const j = judge(w.ctx, cand, what);
        fileThere = true;
        add(w, 'virtual', fname, j);
        w.judged.set(cand, j);
        if (visitSourceFile(w, cand, dname, fname, depth)) datasetThere = true;
      }
    }
    // libhdf5 goes on to the next block while the source opens; this goes on while a file of
    // the pattern exists (or, for a pattern in the dataset name only, while the dataset exists).
    const more = (filePattern.length > 1 && fileThere) || (filePattern.length === 1 && dsetPattern.length > 1 && datasetThere);
    if (!more) return;
  }
}

/** Open a candidate source file (when it is HDF5) and follow its source dataset. */
function visitSourceFile(w: Walk, candidate: string, dname: string, fname: string, depth: number): boolean {
  let fid: Hid;
  try {
    fid = h5.openFile(candidate, false);
  } catch {
    return false; // not HDF5, damaged or locked: libhdf5 cannot open it either
  }
  try {
    return visitSource(w, { fid, path: candidate }, dname, fname, depth, false);
  } finally {
    h5.closeFile(fid);
  }
}

/** Follow source dataset `dname` of an open file; false when it is not there. */
function visitSource(w: Walk, file: { fid: Hid; path: string }, dname: string, fname: string, depth: number, same: boolean): boolean {
  const key = `${realOr(file.path)}\u0000${dname}`;
  if (w.seen.has(key)) return true;
  w.seen.add(key);
  const { oid, crossesExternal } = openPathNoElink(file.fid, dname);
  if (crossesExternal) {
    throw forbidden(
      `Virtual dataset source ${JSON.stringify(dname)} in ${same ? 'the same file' : JSON.stringify(fname)} goes through an external link: the values of this dataset cannot be read or written`,
    );
  }
  if (oid === undefined) return false;
  try {
    if (h5.objectInfo(oid).kind !== 'dataset') return false;
    // the source dataset itself: its own ACL applies (recorded with its file; the same file's
    // judgement is made here, once per path)
    let j = w.judged.get(file.path);
    if (!j) w.judged.set(file.path, (j = judge(w.ctx, file.path, same ? 'the same file' : `virtual dataset source file ${JSON.stringify(fname)}`)));
    add(w, 'virtual', same ? '.' : fname, j, { source: h5.objectAddr(oid) });
    visitDataset(w, file, oid, depth + 1);
    return true;
  } finally {
    h5.closeObject(oid);
  }
}

/**
 * Record a reached file once per real path: read raw (`raw`) when any way reaches it so, with
 * every source dataset met in it.
 */
function add(w: Walk, kind: ReachedFile['kind'], stored: string, j: Judged, what: { raw?: boolean; source?: bigint } = {}): void {
  let r = w.out.get(j.real);
  if (!r) w.out.set(j.real, (r = { kind, stored, raw: false, sources: new Set(), real: j.real, domain: j.domain, exists: j.exists }));
  if (what.raw) r.raw = true;
  if (what.source !== undefined) r.sources.add(what.source);
}

/** The paths libhdf5 tries for a virtual dataset source file name (see the module comment). */
export function candidates(name: string, origin: string, cwd: string): string[] {
  if (name.startsWith('/')) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return [name, `${origin}/${base}`, `${cwd}/${base}`];
  }
  return [`${origin}/${name}`, `${cwd}/${name}`];
}

/**
 * A source name split at `%b` (block number); `%%` is a literal `%` (libhdf5's printf-style
 * source names, `H5Pset_virtual`). A name without `%b` gives one part.
 */
export function parsePattern(name: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '%' && name[i + 1] === '%') {
      cur += '%';
      i++;
    } else if (c === '%' && name[i + 1] === 'b') {
      parts.push(cur);
      cur = '';
      i++;
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function expand(parts: string[], b: number): string {
  return parts.join(String(b));
}

/** The directory part of a path as libhdf5 takes it (no normalisation). */
function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

/** Whether `open(2)` could find something at `p` (symlinks followed). */
function existsFile(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

function realOr(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return p;
  }
}

interface Judged {
  real: string;
  domain: string;
  exists: boolean;
}

/**
 * Where a path libhdf5 would open really leads (the kernel's resolution: symlinks, then `..`),
 * and its domain path. A missing file is judged by the real path of its folder (libhdf5 may
 * create it on a write); a dangling symlink by where it points.
 * @throws Forbidden naming `what` when it leads outside the data root or is not a domain.
 */
function judge(ctx: ReachContext, p: string, what: string, hops = 0): Judged {
  const outside = () =>
    forbidden(`The values of this dataset are kept in ${what}, which is outside the data directory: they cannot be read or written`);
  let real: string | undefined;
  let exists = false;
  try {
    real = fs.realpathSync.native(p);
    exists = true;
  } catch {
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(p);
    } catch {
      st = undefined;
    }
    if (st?.isSymbolicLink()) {
      // A dangling symlink: opening it (for writing) would create its target.
      if (hops > 16) throw outside();
      const target = fs.readlinkSync(p);
      return judge(ctx, target.startsWith('/') ? target : `${dirOf(p)}/${target}`, what, hops + 1);
    }
    const base = p.slice(p.lastIndexOf('/') + 1);
    if (base === '' || base === '.' || base === '..') throw outside();
    let dir: string | undefined;
    try {
      dir = fs.realpathSync.native(dirOf(p));
    } catch {
      dir = undefined;
    }
    if (dir === undefined) {
      // No such folder: libhdf5 cannot open or create anything there (it makes no folders), but
      // where the path would lead is still judged by its nearest existing folder.
      let up = dirOf(p);
      for (;;) {
        try {
          const r = fs.realpathSync.native(up);
          if (!ctx.paths.inside(r)) throw outside();
          break;
        } catch (e) {
          if (e instanceof H5StoreError) throw e;
          if (up === '/' || up === '') break;
          up = dirOf(up);
        }
      }
      return { real: p, domain: '', exists: false };
    }
    real = `${dir}/${base}`;
  }
  if (!ctx.paths.inside(real) || real === ctx.paths.realRoot) throw outside();
  const domain = ctx.paths.toDomain(real);
  try {
    normalizeDomain(domain);
  } catch {
    throw forbidden(`The values of this dataset are kept in ${what}, which is not a domain of this server (a reserved or invalid name)`);
  }
  return { real, domain, exists };
}

/** The storage kind of an open dataset of `f` (learnt once per address and generation). */
export function storageKindOf(f: DomainFile, did: Hid, addr: bigint): StorageKind {
  const kinds = f.state(STORAGE_KINDS);
  const gen = f.index.generation(addr);
  const known = kinds.get(addr);
  if (known !== undefined && known.gen === gen) return known.kind;
  const kind = storageKind(io.datasetStorage(did));
  kinds.set(addr, { gen, kind });
  return kind;
}

/**
 * The files inside the root that a value operation on the dataset `did` (at `addr` of `f`) may
 * make libhdf5 open; [] for an ordinary dataset (cheap: the storage kind is cached).
 * @throws H5StoreError Forbidden when one may lead outside the data root (see `reachOf`).
 */
export function reachOfDataset(f: DomainFile, did: Hid, addr: bigint): ReachedFile[] {
  if (storageKindOf(f, did, addr) === 'plain') return [];
  return reachOf(f.reach, { fid: f.h, path: f.path }, did);
}

/**
 * Type and dataspace of an open dataset for metadata routes, without libhdf5 opening a file
 * outside the root: for a virtual dataset with unlimited mappings, `H5Dget_space` opens the
 * source files to compute the extent, so it is asked only when every file it may open is inside
 * the root; otherwise the extent stored in the file is reported.
 */
export function typeAndSpaceOf(
  f: DomainFile,
  did: Hid,
  addr: bigint,
  committedId?: (tid: Hid) => string | undefined,
): { type: TypeJson; space: io.SpaceInfo; extentStored?: boolean } {
  if (storageKindOf(f, did, addr) === 'virtual-unlimited') {
    try {
      reachOf(f.reach, { fid: f.h, path: f.path }, did);
    } catch (e) {
      if (!(e instanceof H5StoreError)) throw e;
      const space = io.storedVirtualSpace(did);
      if (space) return { type: io.datasetType(did, committedId), space, extentStored: true };
    }
  }
  return io.datasetTypeAndSpace(did, committedId);
}
