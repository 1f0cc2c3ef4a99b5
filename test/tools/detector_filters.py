#!/usr/bin/env python3
"""Files compressed the way detectors write them, made by the upstream implementations, and the
checks of files h5store wrote with those filters (issue #26 item 5).

usage:
  detector_filters.py make OUT.h5
      Writes each case NAME with its filter and NAME__ref with the same values uncompressed:
      - bslz4_*, bs_*: bitshuffle (32008) with LZ4 inside / without compression, written by h5py
        through the bitshuffle plugin built from Debian's source (HDF5_PLUGIN_PATH);
      - zfp_*: zfp (32013) through Debian's H5Z-ZFP plugin, reversible and fixed-rate (lossy:
        the reference holds what h5py reads back through the plugin);
      - zstd_*: zstd (32015), chunks compressed by python3-zstandard (libzstd) and written with
        write_direct_chunk (no zstd plugin here: allow_unknown_filter);
      - bszstd_*: bitshuffle with zstd inside: the upstream plugin's LZ4 chunks with each block
        decompressed (python3-lz4) and compressed again with python3-zstandard, so the bit
        transposition is the plugin's own and the blocks are libzstd's.
      Prints {"cases": [names]}.
  detector_filters.py check FILE.h5 SPEC_JSON|@SPEC_FILE
      SPEC_JSON: [{"name", "codec": "plugin"|"zstd"|"bszstd", "expect": values (nested lists)}].
      "plugin": h5py reads the dataset through the upstream plugins; "zstd": every stored chunk is
      one zstd frame (python3-zstandard decompresses it); "bszstd": every stored chunk's blocks are
      zstd frames of bitshuffled data: recompressed as LZ4 they are read by the upstream
      bitshuffle plugin. Prints {"name": {"ok": bool, "detail": str}}.
"""
import os

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import json  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402

import h5py  # noqa: E402
import lz4.block  # noqa: E402
import numpy as np  # noqa: E402
import zstandard  # noqa: E402

BSHUF = 32008
ZFP = 32013
ZSTD = 32015


def stack(shape, dtype, seed):
    """Detector-like frames: a smooth background, a few bright spots, Poisson-like noise."""
    rng = np.random.default_rng(seed)
    base = np.fromfunction(lambda *ix: sum((i % 17) for i in ix), shape, dtype=np.int64)
    data = base + rng.integers(0, 7, size=shape)
    data.flat[rng.integers(0, data.size, size=max(1, data.size // 500))] += 60000
    return data.astype(dtype)


def floats(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = np.fromfunction(lambda *ix: np.sin(sum(i * 0.05 * (k + 1) for k, i in enumerate(ix))), shape)
    return (x + rng.normal(0, 0.01, size=shape)).astype(dtype)


def chunk_slices(shape, chunks):
    for idx in np.ndindex(*[(s + c - 1) // c for s, c in zip(shape, chunks)]):
        yield tuple(i * c for i, c in zip(idx, chunks))


def lz4_to_zstd(chunk, elem):
    """An upstream bitshuffle+LZ4 chunk, its blocks recompressed with zstd (bitshuffle 0.4+ format)."""
    return recompress(chunk, elem, lambda b, n: lz4.block.decompress(b, uncompressed_size=n), lambda raw: zstandard.ZstdCompressor(level=3).compress(raw))


def zstd_to_lz4(chunk, elem):
    """A bitshuffle+zstd chunk, its blocks recompressed with LZ4 (what the upstream plugin reads)."""
    return recompress(chunk, elem, lambda b, n: zstandard.ZstdDecompressor().decompress(b, max_output_size=n), lambda raw: lz4.block.compress(raw, store_size=False))


def recompress(chunk, elem, decode, encode):
    total, block_bytes = struct.unpack(">QI", chunk[:12])
    count, block = total // elem, block_bytes // elem
    sizes = [block] * (count // block)
    last = count % block
    last -= last % 8
    if last:
        sizes.append(last)
    out = [chunk[:12]]
    pos = 12
    for n in sizes:
        (length,) = struct.unpack(">I", chunk[pos:pos + 4])
        raw = decode(chunk[pos + 4:pos + 4 + length], n * elem)
        if len(raw) != n * elem:
            raise ValueError(f"block decoded to {len(raw)} bytes, expected {n * elem}")
        enc = encode(raw)
        out.append(struct.pack(">I", len(enc)) + enc)
        pos += 4 + length
    rest = (count % 8) * elem
    out.append(chunk[pos:pos + rest])
    return b"".join(out)


def make(path):
    cases = []
    lossy = []
    with h5py.File(path, "w") as f:
        def ref(name, data):
            f.create_dataset(name + "__ref", data=data)
            cases.append(name)

        # bitshuffle + LZ4 (the Eiger default) and plain bitshuffle, through the upstream plugin
        for name, dtype, shape, chunks, opts in [
            ("bslz4_u32", "<u4", (6, 100, 130), (1, 100, 130), (0, 2)),
            ("bslz4_u16_odd", "<u2", (5, 37, 41), (2, 37, 41), (0, 2)),
            ("bslz4_i64_block", "<i8", (3, 1000), (2, 999), (256, 2)),
            ("bs_u16", "<u2", (4, 50, 60), (1, 50, 60), (0, 0)),
        ]:
            data = stack(shape, dtype, len(cases))
            f.create_dataset(name, data=data, chunks=chunks, compression=BSHUF, compression_opts=opts)
            ref(name, data)

        # zfp through Debian's H5Z-ZFP plugin: reversible (lossless) and fixed rate (lossy)
        rate8 = struct.unpack("<II", struct.pack("<d", 8.0))
        for name, dtype, shape, chunks, opts in [
            ("zfp_rev_f32", "<f4", (40, 60), (20, 30), (5, 0)),
            ("zfp_rev_i32", "<i4", (10, 64), (5, 64), (5, 0)),
            ("zfp_rate_f64", "<f8", (3, 30, 30), (1, 30, 30), (1, 0, rate8[0], rate8[1])),
        ]:
            data = stack(shape, dtype, len(cases)) if dtype == "<i4" else floats(shape, dtype, len(cases))
            f.create_dataset(name, data=data, chunks=chunks, compression=ZFP, compression_opts=opts)
            lossy.append(name)

        # zstd: chunks made by libzstd (python3-zstandard), stored as they are
        for name, dtype, shape, chunks, level in [
            ("zstd_u16", "<u2", (4, 64, 64), (1, 64, 64), 3),
            ("zstd_f32_edge", "<f4", (7, 45), (3, 20), 19),
        ]:
            data = stack(shape, dtype, len(cases)) if dtype == "<u2" else floats(shape, dtype, len(cases))
            ds = f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, compression=ZSTD, compression_opts=(level,), allow_unknown_filter=True)
            cctx = zstandard.ZstdCompressor(level=level)
            for start in chunk_slices(shape, chunks):
                block = np.zeros(chunks, dtype=dtype)
                part = data[tuple(slice(s, s + c) for s, c in zip(start, chunks))]
                block[tuple(slice(0, n) for n in part.shape)] = part
                ds.id.write_direct_chunk(start, cctx.compress(block.tobytes()))
            ref(name, data)

        # bitshuffle + zstd: the upstream plugin's LZ4 chunks, blocks recompressed with zstd
        for name, dtype, shape, chunks in [
            ("bszstd_u32", "<u4", (4, 100, 130), (1, 100, 130)),
            ("bszstd_u16_odd", "<u2", (5, 37, 41), (2, 37, 41)),
        ]:
            data = stack(shape, dtype, len(cases))
            tmp = f.create_dataset(name + "__lz4", data=data, chunks=chunks, compression=BSHUF, compression_opts=(0, 2))
            ds = f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, compression=BSHUF, compression_opts=(0, 3, 3), allow_unknown_filter=True)
            elem = np.dtype(dtype).itemsize
            for start in chunk_slices(shape, chunks):
                mask, raw = tmp.id.read_direct_chunk(start)
                ds.id.write_direct_chunk(start, lz4_to_zstd(raw, elem), mask)
            del f[name + "__lz4"]
            ref(name, data)
        # damaged chunks (never part of "cases"): not a zstd frame; a block length past the chunk's end
        bad = f.create_dataset("zstd_bad", shape=(16,), dtype="<u2", chunks=(8,), compression=ZSTD, allow_unknown_filter=True)
        bad.id.write_direct_chunk((0,), zstandard.ZstdCompressor().compress(np.arange(8, dtype="<u2").tobytes()))
        bad.id.write_direct_chunk((8,), b"this is not a zstd frame")
        for name, comp in (("bszstd_bad", 3), ("bslz4_bad", 2)):
            b = f.create_dataset(name, shape=(16,), dtype="<u4", chunks=(16,), compression=BSHUF, compression_opts=(0, comp), allow_unknown_filter=True)
            b.id.write_direct_chunk((0,), struct.pack(">QI", 64, 64) + struct.pack(">I", 1 << 30) + b"\0" * 20)
    # lossy: the reference is what the upstream decoder gives, read from the file once written
    # (a read in the same session could come from libhdf5's chunk cache, not the decoder)
    with h5py.File(path, "a") as f:
        for name in lossy:
            f.create_dataset(name + "__ref", data=f[name][...])
            cases.append(name)
    print(json.dumps({"cases": cases}))


def check(path, spec):
    out = {}
    with h5py.File(path, "r") as f:
        for item in spec:
            name = item["name"]
            ds = f[name]
            expect = np.array(item["expect"], dtype=ds.dtype)
            try:
                if item["codec"] == "plugin":
                    got = ds[...]
                else:
                    elem = ds.dtype.itemsize
                    got = np.zeros(ds.shape, dtype=ds.dtype)
                    chunks = ds.chunks
                    for start in chunk_slices(ds.shape, chunks):
                        mask, raw = ds.id.read_direct_chunk(start)
                        if item["codec"] == "zstd":
                            block = np.frombuffer(zstandard.ZstdDecompressor().decompress(raw), dtype=ds.dtype).reshape(chunks)
                        else:
                            block = decode_bszstd_upstream(zstd_to_lz4(raw, elem), ds.dtype, chunks)
                        part = tuple(slice(s, min(s + c, n)) for s, c, n in zip(start, chunks, ds.shape))
                        got[part] = block[tuple(slice(0, p.stop - p.start) for p in part)]
                ok = bool(np.array_equal(got, expect))
                out[name] = {"ok": ok, "detail": "" if ok else f"first difference at {np.argwhere(got != expect)[:1].tolist()}"}
            except Exception as e:  # noqa: BLE001
                out[name] = {"ok": False, "detail": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))


def decode_bszstd_upstream(lz4_chunk, dtype, chunks):
    """Decode a bitshuffle+LZ4 chunk with the upstream plugin (through an in-memory file)."""
    with h5py.File("mem", "w", driver="core", backing_store=False) as m:
        ds = m.create_dataset("c", shape=chunks, dtype=dtype, chunks=chunks, compression=BSHUF, compression_opts=(0, 2))
        ds.id.write_direct_chunk((0,) * len(chunks), lz4_chunk)
        return ds[...]


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        arg = sys.argv[3]
        check(sys.argv[2], json.load(open(arg[1:])) if arg.startswith("@") else json.loads(arg))
