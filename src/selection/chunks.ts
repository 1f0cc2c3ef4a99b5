/**
 * Which chunks of a chunked dataset a regular hyperslab touches, and copying each chunk's part
 * of the selection into the packed, row-major result. Pure: the parallel chunk reads
 * (src/store/values/chunked.ts) use it with decoded chunks.
 */

/** A regular hyperslab: per dimension, `count` indices `start, start+step, ...`. */
export interface Slab {
  start: number[];
  step: number[];
  count: number[];
}

/**
 * The selected indices of one dimension that fall into one chunk: `count` indices
 * `inStart, inStart+step, ...` inside the chunk (chunk-relative), which are the result's indices
 * `outStart, outStart+1, ...` in that dimension.
 */
export interface ChunkRun {
  /** Chunk index along the dimension (the chunk starts at `chunk * chunkDim`). */
  chunk: number;
  inStart: number;
  step: number;
  count: number;
  outStart: number;
}

/**
 * The runs of one dimension: consecutive selected indices grouped by the chunk they fall into,
 * in increasing order.
 * @param start first selected index; @param step >= 1; @param count >= 0 selected indices
 * @param chunkDim the chunk's extent in this dimension (>= 1)
 */
export function dimRuns(start: number, step: number, count: number, chunkDim: number): ChunkRun[] {
  const runs: ChunkRun[] = [];
  let k = 0;
  while (k < count) {
    const x = start + k * step;
    const chunk = Math.floor(x / chunkDim);
    const lastInChunk = (chunk + 1) * chunkDim - 1;
    const kmax = Math.min(count - 1, Math.floor((lastInChunk - start) / step));
    runs.push({ chunk, inStart: x - chunk * chunkDim, step, count: kmax - k + 1, outStart: k });
    k = kmax + 1;
  }
  return runs;
}

/** The runs of every dimension (see `dimRuns`); the chunks touched are their cartesian product. */
export function slabRuns(slab: Slab, chunkDims: number[]): ChunkRun[][] {
  return slab.count.map((n, d) => dimRuns(slab.start[d]!, slab.step[d]!, n, chunkDims[d]!));
}

/** Number of chunks the runs touch (product of the runs per dimension). */
export function chunkCount(runs: ChunkRun[][]): number {
  return runs.reduce((a, r) => a * r.length, 1);
}

/**
 * Visit every chunk the runs touch, in C order of chunk indices.
 * @param fn called with one run per dimension (the array is reused: copy it to keep it)
 */
export function forEachChunk(runs: ChunkRun[][], fn: (pick: ChunkRun[]) => void): void {
  const rank = runs.length;
  if (runs.some((r) => r.length === 0)) return;
  const idx = new Array<number>(rank).fill(0);
  const pick = runs.map((r) => r[0]!);
  for (;;) {
    fn(pick);
    let d = rank - 1;
    while (d >= 0) {
      idx[d]!++;
      if (idx[d]! < runs[d]!.length) {
        pick[d] = runs[d]![idx[d]!]!;
        break;
      }
      idx[d] = 0;
      pick[d] = runs[d]![0]!;
      d--;
    }
    if (d < 0) return;
  }
}

/** `b` as a plain Uint8Array over the same memory. */
function plainBytes(b: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(b) === Uint8Array.prototype ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Copy one chunk's selected elements into the result.
 * @param chunk the decoded chunk: all `prod(chunkDims)` elements, row-major, `itemSize` bytes each
 *   (edge chunks are stored whole too)
 * @param out the result: `prod(outShape)` elements, row-major
 * @param pick one run per dimension (from `forEachChunk`)
 * @param outShape the selection's count per dimension
 */
export function copyChunkPart(chunkBytes: Uint8Array, outBytes: Uint8Array, pick: ChunkRun[], chunkDims: number[], outShape: number[], itemSize: number): void {
  const rank = pick.length;
  // plain Uint8Array views: a Buffer's subarray costs ~3x a plain one's (one per row copied)
  const chunk = plainBytes(chunkBytes);
  const out = plainBytes(outBytes);
  // element strides of the chunk and of the result
  const cs = new Array<number>(rank);
  const os = new Array<number>(rank);
  let c = 1;
  let o = 1;
  for (let d = rank - 1; d >= 0; d--) {
    cs[d] = c;
    os[d] = o;
    c *= chunkDims[d]!;
    o *= outShape[d]!;
  }
  const last = pick[rank - 1]!;
  const runBytes = last.count * itemSize;
  const contiguous = last.step === 1;
  const inner = (src: number, dst: number) => {
    // src, dst: element offsets of the run's first element
    if (contiguous) {
      out.set(chunk.subarray(src * itemSize, src * itemSize + runBytes), dst * itemSize);
      return;
    }
    const srcStep = last.step * itemSize;
    let s = src * itemSize;
    let t = dst * itemSize;
    for (let k = 0; k < last.count; k++, s += srcStep, t += itemSize) {
      for (let b = 0; b < itemSize; b++) out[t + b] = chunk[s + b]!;
    }
  };
  const lastSrc = last.inStart * cs[rank - 1]!;
  const lastDst = last.outStart * os[rank - 1]!;
  if (rank === 1) {
    inner(lastSrc, lastDst);
    return;
  }
  // odometer over the outer dimensions
  const j = new Array<number>(rank - 1).fill(0);
  for (;;) {
    let src = lastSrc;
    let dst = lastDst;
    for (let d = 0; d < rank - 1; d++) {
      const p = pick[d]!;
      src += (p.inStart + j[d]! * p.step) * cs[d]!;
      dst += (p.outStart + j[d]!) * os[d]!;
    }
    inner(src, dst);
    let d = rank - 2;
    while (d >= 0) {
      j[d]!++;
      if (j[d]! < pick[d]!.count) break;
      j[d] = 0;
      d--;
    }
    if (d < 0) return;
  }
}
