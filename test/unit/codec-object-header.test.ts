/**
 * The pure object-header decoder (src/codec/objectHeader.ts) and the symbol table decoder
 * (src/codec/symbolTable.ts), table-driven on headers, B-trees and heaps built here
 * byte by byte after the format specification (version 1 and 2 headers, continuation chunks,
 * checksums, superblocks of versions 0 and 2, user blocks) and on what must make it answer null
 * (libhdf5 decides then). Files written by h5py are checked against libhdf5 in
 * test/api/link-kinds.test.ts.
 */
import { expect } from 'chai';
import { type HeaderKind, type ReadAt, type SuperblockInfo, lookup3, objectKindAt, readSuperblock, symbolTableAt } from '../../src/codec/objectHeader.js';
import { readSymbolTable } from '../../src/codec/symbolTable.js';

const SDSPACE = 0x01;
const LINFO = 0x02;
const DTYPE = 0x03;
const FILL = 0x05;
const LAYOUT = 0x08;
const ATTR = 0x0c;
const CONT = 0x10;
const STAB = 0x11;

const SB: SuperblockInfo = { base: 0, offsets: 8, lengths: 8 };

/** A file image: bytes placed at positions. */
class Image {
  bytes = new Uint8Array(0);
  put(pos: number, b: Uint8Array): void {
    if (pos + b.length > this.bytes.length) {
      const n = new Uint8Array(pos + b.length);
      n.set(this.bytes);
      this.bytes = n;
    }
    this.bytes.set(b, pos);
  }
  read: ReadAt = (pos, len) => (pos >= this.bytes.length ? undefined : this.bytes.subarray(pos, Math.min(pos + len, this.bytes.length)));
}

const le = (v: number, n: number) => Uint8Array.from({ length: n }, (_, i) => Math.floor(v / 256 ** i) % 256);
const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
const withSum = (b: Uint8Array) => cat(b, le(lookup3(b), 4));
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** A message body: a continuation (address, length) or `size` filler bytes. */
type Msg = { type: number; size?: number; cont?: [number, number] };
const body = (m: Msg) => (m.cont ? cat(le(m.cont[0], 8), le(m.cont[1], 8)) : new Uint8Array(m.size ?? 8));

/** Version 1 messages: type (2), size (2), flags (1), reserved (3), body padded to 8. */
const v1Msgs = (msgs: Msg[]) => cat(...msgs.map((m) => cat(le(m.type, 2), le(body(m).length, 2), new Uint8Array(4), body(m))));
/** A version 1 header (16-byte prefix, then chunk 0). */
const v1 = (msgs: Msg[], opts: { version?: number } = {}) => {
  const chunk = v1Msgs(msgs);
  return cat(Uint8Array.of(opts.version ?? 1, 0), le(msgs.length, 2), le(1, 4), le(chunk.length, 4), new Uint8Array(4), chunk);
};

/** Version 2 messages: type (1), size (2), flags (1), [creation order (2)], body. */
const v2Msgs = (msgs: Msg[], crt: boolean) => cat(...msgs.map((m) => cat(Uint8Array.of(m.type), le(body(m).length, 2), Uint8Array.of(0), crt ? le(0, 2) : new Uint8Array(0), body(m))));
/** A version 2 header: "OHDR", version 2, flags, [times], chunk 0 size, messages, [gap], checksum. */
const v2 = (msgs: Msg[], opts: { flags?: number; gap?: number; badSum?: boolean } = {}) => {
  const flags = opts.flags ?? 0x02; // chunk 0 size in 4 bytes
  const crt = (flags & 0x04) !== 0;
  const chunk = cat(v2Msgs(msgs, crt), new Uint8Array(opts.gap ?? 0));
  const sizeBytes = 1 << (flags & 3);
  const times = new Uint8Array(flags & 0x20 ? 16 : 0);
  const phase = flags & 0x10 ? cat(le(8, 2), le(6, 2)) : new Uint8Array(0);
  const out = withSum(cat(ascii('OHDR'), Uint8Array.of(2, flags), times, phase, le(chunk.length, sizeBytes), chunk));
  if (opts.badSum) out[out.length - 1] ^= 0xff;
  return out;
};
/** A version 2 continuation chunk: "OCHK", messages, checksum. */
const ochk = (msgs: Msg[], crt = false) => withSum(cat(ascii('OCHK'), v2Msgs(msgs, crt)));

const DATASET: Msg[] = [{ type: SDSPACE }, { type: DTYPE }, { type: FILL }, { type: LAYOUT, size: 24 }];

describe('codec: lookup3 (libhdf5 metadata checksums)', () => {
  const cases: [string, number][] = [
    ['', 0xdeadbeef],
    ['Four score and seven years ago', 0x17770551],
  ];
  for (const [s, h] of cases) it(`"${s}" -> ${h.toString(16)}`, () => expect(lookup3(ascii(s))).to.equal(h));
  it('a range of a buffer hashes as the same bytes alone', () => {
    const b = ascii('xxFour score and seven years agoyy');
    expect(lookup3(b, 2, b.length - 2)).to.equal(0x17770551);
  });
});

describe('codec: object kind from the header bytes', () => {
  const cases: { name: string; header: Uint8Array; extra?: [number, Uint8Array][]; kind: HeaderKind | null }[] = [
    { name: 'v1 group (symbol table)', header: v1([{ type: STAB, size: 16 }]), kind: 'group' },
    { name: 'v1 group (link info)', header: v1([{ type: LINFO, size: 16 }, { type: 0x0a }]), kind: 'group' },
    { name: 'v1 dataset', header: v1(DATASET), kind: 'dataset' },
    { name: 'v1 committed datatype', header: v1([{ type: DTYPE, size: 16 }]), kind: 'datatype' },
    { name: 'v1 group wins over a datatype and a dataspace (libhdf5 tests groups first)', header: v1([{ type: DTYPE }, { type: SDSPACE }, { type: STAB, size: 16 }]), kind: 'group' },
    { name: 'v1 dataset with its dataspace in a continuation chunk', header: v1([{ type: DTYPE }, { type: CONT, cont: [4096, 16] }]), extra: [[4096, v1Msgs([{ type: SDSPACE }])]], kind: 'dataset' },
    { name: 'v1 with only attributes and a null message: not decided', header: v1([{ type: ATTR, size: 32 }, { type: 0 }]), kind: null },
    { name: 'v1 message running past its chunk', header: (() => { const h = v1([{ type: STAB, size: 16 }]); h[16 + 2] = 64; return h; })(), kind: null },
    { name: 'v1 message size not a multiple of 8', header: (() => { const h = v1([{ type: STAB, size: 16 }]); h[16 + 2] = 12; return h; })(), kind: null },
    { name: 'v1 continuation past the end of the file', header: v1([{ type: DTYPE }, { type: CONT, cont: [1 << 20, 16] }]), kind: null },
    { name: 'unknown header version', header: v1([{ type: STAB, size: 16 }], { version: 3 }), kind: null },
    { name: 'v2 group (link info)', header: v2([{ type: LINFO, size: 18 }, { type: 0x0a, size: 2 }]), kind: 'group' },
    { name: 'v2 dataset, times stored, 1-byte chunk size', header: v2(DATASET, { flags: 0x20 }), kind: 'dataset' },
    { name: 'v2 dataset, attribute creation order tracked (6-byte message headers)', header: v2(DATASET, { flags: 0x06 }), kind: 'dataset' },
    { name: 'v2 datatype with a gap at the end of chunk 0', header: v2([{ type: DTYPE, size: 12 }], { gap: 3 }), kind: 'datatype' },
    { name: 'v2 with attribute phase change values stored', header: v2([{ type: STAB, size: 16 }], { flags: 0x12 }), kind: 'group' },
    { name: 'v2 group in an OCHK continuation chunk', header: v2([{ type: ATTR }, { type: CONT, cont: [8192, 4 + 4 + 16 + 4] }]), extra: [[8192, ochk([{ type: STAB, size: 16 }])]], kind: 'group' },
    { name: 'v2 bad checksum', header: v2([{ type: STAB, size: 16 }], { badSum: true }), kind: null },
    { name: 'v2 continuation with a bad signature', header: v2([{ type: CONT, cont: [8192, 28] }]), extra: [[8192, withSum(cat(ascii('XCHK'), v2Msgs([{ type: STAB, size: 16 }], false)))]], kind: null },
    { name: 'v2 unknown flags', header: v2([{ type: STAB, size: 16 }], { flags: 0x42 }), kind: null },
    { name: 'truncated header', header: v1([{ type: STAB, size: 16 }]).subarray(0, 20), kind: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const img = new Image();
      img.put(800, c.header);
      for (const [pos, b] of c.extra ?? []) img.put(pos, b);
      expect(objectKindAt(img.read, 800, SB)).to.equal(c.kind);
    });
  }

  it('addresses are relative to the base (a user block before the superblock)', () => {
    const img = new Image();
    img.put(512 + 800, v1(DATASET));
    expect(objectKindAt(img.read, 800, { ...SB, base: 512 })).to.equal('dataset');
    expect(objectKindAt(img.read, 800, SB)).to.equal(null);
  });

  it('4-byte addresses and lengths in continuation messages', () => {
    const img = new Image();
    const cont = cat(le(4096, 4), le(16, 4));
    img.put(800, cat(Uint8Array.of(1, 0), le(2, 2), le(1, 4), le(32, 4), new Uint8Array(4), le(DTYPE, 2), le(8, 2), new Uint8Array(4), new Uint8Array(8), le(CONT, 2), le(8, 2), new Uint8Array(4), cont));
    img.put(4096, v1Msgs([{ type: SDSPACE }]));
    expect(objectKindAt(img.read, 800, { base: 0, offsets: 4, lengths: 4 })).to.equal('dataset');
  });

  it('a continuation loop ends in null, not a hang', () => {
    const img = new Image();
    img.put(800, v1([{ type: DTYPE }, { type: CONT, cont: [4096, 24] }]));
    img.put(4096, v1Msgs([{ type: CONT, cont: [4096, 24] }]));
    expect(objectKindAt(img.read, 800, SB)).to.equal(null);
  });
});

describe('codec: superblock', () => {
  const sig = Uint8Array.of(0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a);
  const cases: { name: string; at: number; sb: Uint8Array; want: SuperblockInfo | undefined }[] = [
    { name: 'version 0 at 0', at: 0, sb: cat(sig, Uint8Array.of(0, 0, 0, 0, 0, 8, 8, 0)), want: { base: 0, offsets: 8, lengths: 8 } },
    { name: 'version 0, 4-byte offsets, after a 512-byte user block', at: 512, sb: cat(sig, Uint8Array.of(0, 0, 0, 0, 0, 4, 8, 0)), want: { base: 512, offsets: 4, lengths: 8 } },
    { name: 'version 2 after a 4096-byte user block', at: 4096, sb: cat(sig, Uint8Array.of(2, 8, 4, 0, 0, 0, 0, 0)), want: { base: 4096, offsets: 8, lengths: 4 } },
    { name: 'version 3 at 0', at: 0, sb: cat(sig, Uint8Array.of(3, 8, 8, 0, 0, 0, 0, 0)), want: { base: 0, offsets: 8, lengths: 8 } },
    { name: 'unknown version', at: 0, sb: cat(sig, Uint8Array.of(4, 8, 8, 0, 0, 0, 0, 0)), want: undefined },
    { name: 'odd field sizes', at: 0, sb: cat(sig, Uint8Array.of(2, 3, 8, 0, 0, 0, 0, 0)), want: undefined },
    { name: 'no signature where libhdf5 looks (at 100)', at: 100, sb: cat(sig, Uint8Array.of(0, 0, 0, 0, 0, 8, 8, 0)), want: undefined },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const img = new Image();
      img.put(c.at, c.sb);
      img.put(8191, Uint8Array.of(0));
      expect(readSuperblock(img.read, img.bytes.length)).to.deep.equal(c.want);
    });
  }
});

describe('codec: links of a symbol table group (version 1 B-tree, symbol table nodes, local heap)', () => {
  /** Names and values in a local heap: offsets of each string placed (NUL-terminated) after an empty string at 0. */
  const heapOf = (strings: (string | Uint8Array)[]) => {
    const offs: number[] = [];
    const parts: Uint8Array[] = [new Uint8Array(8)]; // offset 0: the empty string, as libhdf5 starts every group heap
    let o = 8;
    for (const s of strings) {
      const b = typeof s === 'string' ? new TextEncoder().encode(s) : s;
      offs.push(o);
      const padded = new Uint8Array(Math.ceil((b.length + 1) / 8) * 8);
      padded.set(b);
      parts.push(padded);
      o += padded.length;
    }
    return { data: cat(...parts), offs };
  };
  /** "HEAP" version 0: data segment size, free list offset (undefined: 0xff..), data address. */
  const heapHeader = (size: number, dataAt: number, o = 8, l = 8, version = 0) => cat(ascii('HEAP'), Uint8Array.of(version, 0, 0, 0), le(size, l), new Uint8Array(l).fill(0xff), le(dataAt, o));
  /** "TREE" group node: level, children (with keys 0 around them), no siblings. */
  const tree = (level: number, children: number[], o = 8, l = 8, type = 0) =>
    cat(ascii('TREE'), Uint8Array.of(type, level), le(children.length, 2), new Uint8Array(o).fill(0xff), new Uint8Array(o).fill(0xff), le(0, l), ...children.map((c) => cat(le(c, o), le(0, l))));
  /** One symbol table entry: name offset, header address, cache type, reserved, scratch pad. */
  const entry = (nameOff: number, addr: number, cache: number, scratch: Uint8Array = new Uint8Array(16), o = 8, l = 8) => cat(le(nameOff, l), le(addr, o), le(cache, 4), new Uint8Array(4), scratch);
  const snod = (entries: Uint8Array[], version = 1) => cat(ascii('SNOD'), Uint8Array.of(version, 0), le(entries.length, 2), ...entries);
  const stabMsg = (btree: number, heap: number, o = 8) => ({ type: STAB, size: 2 * o, body: cat(le(btree, o), le(heap, o)) });
  /** A version 1 header whose only message is a symbol table message (and optionally a link info message). */
  const groupHeader = (btree: number, heap: number, o = 8, linfo = false) => {
    const m = stabMsg(btree, heap, o);
    const msgs = cat(le(STAB, 2), le(m.size, 2), new Uint8Array(4), m.body, ...(linfo ? [cat(le(LINFO, 2), le(16, 2), new Uint8Array(4), new Uint8Array(16))] : []));
    return cat(Uint8Array.of(1, 0), le(linfo ? 2 : 1, 2), le(1, 4), le(msgs.length, 4), new Uint8Array(4), msgs);
  };

  type Case = { name: string; build: (img: Image) => void; sb?: SuperblockInfo; want: unknown };
  /** Heap at 2000 (data at 2100), root node at 3000, leaves at 4000+; the group header at 800. */
  const standard = (mutate: { names?: (string | Uint8Array)[]; leafVersion?: number; cache?: number; heapVersion?: number; rootType?: number; nameOff?: number } = {}) => (img: Image) => {
    const names = mutate.names ?? ['alpha', 'beta', 'gamma', 'link', '/target/path'];
    const h = heapOf(names);
    img.put(800, groupHeader(3000, 2000));
    img.put(2000, heapHeader(h.data.length, 2100, 8, 8, mutate.heapVersion ?? 0));
    img.put(2100, h.data);
    img.put(3000, tree(0, [4000, 4400], 8, 8, mutate.rootType ?? 0));
    img.put(4000, snod([entry(mutate.nameOff ?? h.offs[0]!, 10000, mutate.cache ?? 0), entry(h.offs[1]!, 10400, 1)], mutate.leafVersion ?? 1));
    img.put(4400, snod([entry(h.offs[2]!, 10800, 0), entry(h.offs[3]!, 0, 2, cat(le(h.offs[4]!, 4), new Uint8Array(12)))]));
  };
  const STANDARD = {
    links: [
      { name: 'alpha', cls: 'H5L_TYPE_HARD', addr: 10000n },
      { name: 'beta', cls: 'H5L_TYPE_HARD', addr: 10400n },
      { name: 'gamma', cls: 'H5L_TYPE_HARD', addr: 10800n },
      { name: 'link', cls: 'H5L_TYPE_SOFT', path: '/target/path' },
    ],
    groups: [10400],
  };
  const cases: Case[] = [
    { name: 'hard links (nothing cached, a cached group) and a soft link, in node order', build: standard(), want: STANDARD },
    {
      name: 'a two-level tree: children left to right',
      build: (img) => {
        standard()(img);
        img.put(3000, tree(1, [3500, 3700]));
        img.put(3500, tree(0, [4000]));
        img.put(3700, tree(0, [4400]));
      },
      want: STANDARD,
    },
    {
      name: 'an empty group (a root node without entries)',
      build: (img) => {
        const h = heapOf([]);
        img.put(800, groupHeader(3000, 2000));
        img.put(2000, heapHeader(h.data.length, 2100));
        img.put(2100, h.data);
        img.put(3000, tree(0, []));
      },
      want: { links: [], groups: [] },
    },
    {
      name: 'UTF-8 names',
      build: standard({ names: ['ünï', 'b✓', '😀', 'l', '/ö'] }),
      want: { links: [{ ...STANDARD.links[0], name: 'ünï' }, { ...STANDARD.links[1], name: 'b✓' }, { ...STANDARD.links[2], name: '😀' }, { name: 'l', cls: 'H5L_TYPE_SOFT', path: '/ö' }], groups: [10400] },
    },
    {
      name: '4-byte offsets and lengths, after a 512-byte user block',
      sb: { base: 512, offsets: 4, lengths: 4 },
      build: (img) => {
        const h = heapOf(['a', 'b']);
        img.put(512 + 800, groupHeader(3000, 2000, 4));
        img.put(512 + 2000, heapHeader(h.data.length, 2100, 4, 4));
        img.put(512 + 2100, h.data);
        img.put(512 + 3000, tree(0, [4000], 4, 4));
        img.put(512 + 4000, snod([entry(h.offs[0]!, 7000, 1, undefined, 4, 4), entry(h.offs[1]!, 7400, 0, undefined, 4, 4)]));
      },
      want: { links: [{ name: 'a', cls: 'H5L_TYPE_HARD', addr: 7000n }, { name: 'b', cls: 'H5L_TYPE_HARD', addr: 7400n }], groups: [7000] },
    },
    { name: 'a symbol table node of another version: null', build: standard({ leafVersion: 2 }), want: null },
    { name: 'a B-tree node of another type (raw data chunks): null', build: standard({ rootType: 1 }), want: null },
    { name: 'an unknown cache type: null', build: standard({ cache: 3 }), want: null },
    { name: 'a heap of another version: null', build: standard({ heapVersion: 1 }), want: null },
    { name: 'a name offset past the heap: null', build: standard({ nameOff: 1 << 16 }), want: null },
    { name: 'a name that is not UTF-8: null', build: standard({ names: [Uint8Array.of(0x66, 0xff, 0x66), 'b', 'c', 'd', '/e'] }), want: null },
    {
      name: 'a name without its NUL (the heap ends first): null',
      build: (img) => {
        standard()(img);
        img.put(2000, heapHeader(8 + 5, 2100)); // the segment ends inside "alpha"
      },
      want: null,
    },
    {
      name: 'a soft link value past the heap: null',
      build: (img) => {
        standard()(img);
        img.put(4400, snod([entry(16, 10800, 0), entry(24, 0, 2, cat(le(1 << 20, 4), new Uint8Array(12)))]));
      },
      want: null,
    },
    {
      name: 'a child of the wrong level: null',
      build: (img) => {
        standard()(img);
        img.put(3000, tree(2, [3500]));
        img.put(3500, tree(0, [4000]));
      },
      want: null,
    },
    {
      name: 'a node that is its own child (a loop): null, not a hang',
      build: (img) => {
        standard()(img);
        img.put(3000, tree(1, [3000]));
      },
      want: null,
    },
    {
      name: 'a symbol table node listed twice: null',
      build: (img) => {
        standard()(img);
        img.put(3000, tree(0, [4000, 4000]));
      },
      want: null,
    },
    {
      name: 'a bad B-tree signature: null',
      build: (img) => {
        standard()(img);
        img.put(3000, ascii('XREE'));
      },
      want: null,
    },
    {
      name: 'a group with a link info message too (libhdf5 reads link messages): null',
      build: (img) => {
        standard()(img);
        img.put(800, groupHeader(3000, 2000, 8, true));
      },
      want: null,
    },
    {
      name: 'a dataset header (no symbol table message): null',
      build: (img) => {
        standard()(img);
        img.put(800, v1(DATASET));
      },
      want: null,
    },
    {
      name: 'a node past the end of the file: null',
      build: (img) => {
        standard()(img);
        img.put(3000, tree(0, [4000, 1 << 24]));
      },
      want: null,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const img = new Image();
      c.build(img);
      const sb = c.sb ?? SB;
      const stab = symbolTableAt(img.read, 800, sb);
      expect(stab === null ? null : readSymbolTable(img.read, stab, sb)).to.deep.equal(c.want);
    });
  }

  it('a reader that reuses its buffer for every read gives the same links', () => {
    const img = new Image();
    standard()(img);
    const shared = new Uint8Array(4096);
    const reuse: ReadAt = (pos, len) => {
      const b = img.read(pos, len);
      if (!b) return undefined;
      shared.set(b);
      return shared.subarray(0, b.length);
    };
    expect(readSymbolTable(reuse, symbolTableAt(reuse, 800, SB)!, SB)).to.deep.equal(STANDARD);
  });
});
