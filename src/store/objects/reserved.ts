/**
 * The reserved group of a domain file (DESIGN.md section 4; docs/storage-format.md): a group
 * named `__h5store__` in the root group that holds REST-only state. Objects created without a
 * link are held in it under their ids; the `generations` dataset keeps, per object header
 * address, how many objects were freed there (so an old id never names a new object). The group
 * and its internal datasets are hidden from every listing and never addressable by id; the group
 * exists only while it holds something.
 *
 * Synchronous, with the domain lock held and the file open (as the object index, objectIndex.ts,
 * which owns one). It only changes the file inside a write, whose view keeps nothing
 * (fileState.ts), so listings never meet a root group cached from before.
 */
import * as io from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';

/** Name of the group that holds REST-only state, in the root group (docs/storage-format.md). */
export const RESERVED = '__h5store__';
/** Dataset in the reserved group: address generations, uint64 (N, 2) rows of (address, gen). */
export const GENERATIONS = 'generations';

const U64 = { class: 'H5T_INTEGER', base: 'H5T_STD_U64LE' } as const;
/** Type of the text attributes of the group (ACLs, what the file cannot say: JSON documents). */
const VLEN_UTF8 = { class: 'H5T_STRING', charSet: 'H5T_CSET_UTF8', strPad: 'H5T_STR_NULLTERM', length: 'H5T_VARIABLE' } as const;

/** What the reserved group needs from the file that owns it. */
export interface ReservedHost {
  /** The open file. */
  file(): Hid;
  /** Look the group up if not done since the file was (re)opened (`ReservedGroup.load`). */
  ensureLoaded(): void;
  /** An object at `addr` became internal (it must not be known as an addressable object). */
  becameInternal(addr: bigint): void;
}

export class ReservedGroup {
  /** Address of the group; null when the file has none; undefined = not looked up. */
  private addr: bigint | null | undefined;
  /** The group and its internal datasets: never addressable by id. */
  private readonly internal = new Set<bigint>();

  constructor(private readonly host: ReservedHost) {}

  /**
   * Look the group up in the root group and read the generations table.
   * @returns generation per object header address (empty without a group or table)
   */
  load(): Map<bigint, number> {
    const gens = new Map<bigint, number>();
    const root = this.host.file();
    const rec = h5.linkExists(root, RESERVED) ? h5.getLink(root, RESERVED) : undefined;
    if (!rec || rec.cls !== 'H5L_TYPE_HARD' || rec.addr === undefined) {
      this.addr = null;
      return gens;
    }
    this.addr = rec.addr;
    this.internal.add(rec.addr);
    const gid = h5.openByName(root, RESERVED);
    try {
      for (const [addr, gen] of this.tableRows(gid, GENERATIONS, 2) ?? []) gens.set(addr, Number(gen));
    } finally {
      h5.closeObject(gid);
    }
    return gens;
  }

  /** Whether the root group holds the reserved group. */
  get exists(): boolean {
    this.host.ensureLoaded();
    return this.addr !== null && this.addr !== undefined;
  }

  /** True for the group and its internal datasets (never addressable). */
  isInternal(addr: bigint): boolean {
    this.host.ensureLoaded();
    return this.internal.has(addr);
  }

  /** Open the group, creating it when `create` is set; undefined when absent. The caller closes it. */
  open(create: boolean): Hid | undefined {
    if (this.exists) return h5.openByName(this.host.file(), RESERVED);
    if (!create) return undefined;
    const gid = h5.createGroup(this.host.file(), RESERVED);
    const addr = h5.objectAddr(gid);
    this.addr = addr;
    this.internal.add(addr);
    this.host.becameInternal(addr);
    return gid;
  }

  /** Remove the group when nothing is left in it (no links, no attributes). */
  dropIfEmpty(): void {
    if (!this.exists) return;
    const root = this.host.file();
    const gid = h5.openByName(root, RESERVED);
    let empty: boolean;
    try {
      empty = h5.linkCount(gid) === 0 && h5.objectInfo(gid).numAttrs === 0;
    } finally {
      h5.closeObject(gid);
    }
    if (empty) {
      h5.deleteLink(root, RESERVED);
      if (this.addr) this.internal.delete(this.addr);
      this.addr = null;
    }
  }

  /** Hold a new object created without a link, under its id. */
  hold(oid: Hid, id: string): void {
    const gid = this.open(true)!;
    try {
      h5.linkObject(oid, gid, id);
    } finally {
      h5.closeObject(gid);
    }
  }

  /** Delete the holding link of an object once it has a real link (no-op if not held). */
  release(id: string): void {
    if (!this.exists) return;
    const gid = h5.openByName(this.host.file(), RESERVED);
    let held: boolean;
    try {
      held = h5.linkExists(gid, id);
      if (held) h5.deleteLink(gid, id);
    } finally {
      h5.closeObject(gid);
    }
    if (held) this.dropIfEmpty();
  }

  /** Whether an object is only held by the group (created without a link). */
  holds(id: string): boolean {
    if (!this.exists) return false;
    const gid = h5.openByName(this.host.file(), RESERVED);
    try {
      return h5.linkExists(gid, id);
    } finally {
      h5.closeObject(gid);
    }
  }

  /**
   * A text attribute of the group (a scalar variable-length UTF-8 string: the JSON documents of
   * acls.ts and given.ts).
   * @returns undefined when the group or the attribute is absent
   */
  readText(name: string): string | undefined {
    const gid = this.open(false);
    if (gid === undefined) return undefined;
    try {
      if (!io.attributeExists(gid, name)) return undefined;
      const aid = io.openAttribute(gid, name);
      try {
        const wire = io.readAttribute(aid, VLEN_UTF8, 1); // uint32 LE byte count, then the bytes
        return wire.subarray(4, 4 + wire.readUInt32LE(0)).toString('utf8');
      } finally {
        io.closeAttribute(aid);
      }
    } finally {
      h5.closeObject(gid);
    }
  }

  /**
   * Store (replace) a text attribute of the group, creating the group when needed; `undefined`
   * removes it, and the group with it when nothing else is left in it.
   */
  writeText(name: string, text: string | undefined): void {
    const gid = this.open(text !== undefined);
    if (gid === undefined) return; // nothing to remove
    try {
      if (io.attributeExists(gid, name)) io.deleteAttribute(gid, name);
      if (text !== undefined) {
        const bytes = Buffer.from(text, 'utf8');
        const wire = Buffer.alloc(4 + bytes.length);
        wire.writeUInt32LE(bytes.length, 0);
        bytes.copy(wire, 4);
        const ft = io.createType(VLEN_UTF8);
        try {
          const aid = io.createAttribute(gid, name, ft, { cls: 'H5S_SCALAR', dims: [], maxdims: [] });
          try {
            io.writeAttribute(aid, VLEN_UTF8, 1, wire);
          } finally {
            io.closeAttribute(aid);
          }
        } finally {
          io.closeType(ft);
        }
      }
    } finally {
      h5.closeObject(gid);
    }
    if (text === undefined) this.dropIfEmpty();
  }

  /**
   * The rows of a uint64 table of the group (an extensible (N, `width`) dataset; clientIds.ts):
   * undefined when the group or the table is absent. The table becomes internal (never
   * addressable by id).
   */
  readTable(name: string, width: number): bigint[][] | undefined {
    const gid = this.open(false);
    if (gid === undefined) return undefined;
    try {
      return this.tableRows(gid, name, width);
    } finally {
      h5.closeObject(gid);
    }
  }

  /** `readTable` in the open group `gid` (also while the group is being looked up: `load`). */
  private tableRows(gid: Hid, name: string, width: number): bigint[][] | undefined {
    const rec = h5.linkExists(gid, name) ? h5.getLink(gid, name) : undefined;
    if (rec?.addr === undefined) return undefined;
    this.internal.add(rec.addr);
    const did = io.openDataset(gid, name);
    try {
      const { space } = io.datasetTypeAndSpace(did);
      const n = space.dims[0] ?? 0;
      if (n === 0 || space.dims[1] !== width) return [];
      const mt = io.createType(U64);
      try {
        const buf = io.readDataset(did, U64, mt, { kind: 'all' }, n * width, false);
        const rows: bigint[][] = [];
        for (let i = 0; i < n; i++) rows.push(Array.from({ length: width }, (_, j) => buf.readBigUInt64LE(8 * (i * width + j))));
        return rows;
      } finally {
        io.closeType(mt);
      }
    } finally {
      h5.closeObject(did);
    }
  }

  /**
   * Write rows of a uint64 table of the group: appended after the `from` rows already there
   * (`from` = the current row count), or replacing them all (`from` 0). The table is created
   * (chunked, extensible) when missing, and removed, with the group when nothing else is left in
   * it, when the table ends up empty.
   */
  writeTable(name: string, rows: readonly (readonly bigint[])[], width: number, from = 0): void {
    if (from === 0 && rows.length === 0) {
      const gid = this.open(false);
      if (gid === undefined) return;
      try {
        if (h5.linkExists(gid, name)) h5.deleteLink(gid, name);
      } finally {
        h5.closeObject(gid);
      }
      this.dropIfEmpty();
      return;
    }
    const gid = this.open(true)!;
    try {
      const n = from + rows.length;
      let did: Hid;
      if (h5.linkExists(gid, name)) {
        did = io.openDataset(gid, name);
        io.setExtent(did, [n, width]);
      } else {
        const ft = io.createType(U64);
        try {
          did = io.createDataset(gid, name, ft, U64, { cls: 'H5S_SIMPLE', dims: [n, width], maxdims: [Infinity, width] }, { layout: 'H5D_CHUNKED', chunks: [256, width] });
        } finally {
          io.closeType(ft);
        }
        const addr = h5.objectAddr(did);
        this.internal.add(addr);
        this.host.becameInternal(addr);
      }
      try {
        if (rows.length) {
          const buf = Buffer.alloc(rows.length * width * 8);
          rows.forEach((r, i) => r.forEach((v, j) => buf.writeBigUInt64LE(v, 8 * (i * width + j))));
          const mt = io.createType(U64);
          try {
            const sel = { kind: 'hyperslab' as const, start: [from, 0], step: [1, 1], count: [rows.length, width] };
            io.writeDataset(did, U64, mt, sel, rows.length * width, false, buf);
          } finally {
            io.closeType(mt);
          }
        }
      } finally {
        h5.closeObject(did);
      }
    } finally {
      h5.closeObject(gid);
    }
  }

  /** Write the generations table (rows with a generation above 0), creating it when missing. */
  saveGenerations(gens: { entries(): Iterable<[bigint, number]> }): void {
    const rows = [...gens.entries()].filter(([, g]) => g > 0).map(([a, g]) => [a, BigInt(g)]);
    if (rows.length === 0) return;
    this.writeTable(GENERATIONS, rows, 2);
  }
}
