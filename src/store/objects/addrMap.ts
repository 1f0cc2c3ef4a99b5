/**
 * A map keyed by file addresses (`bigint`, haddr_t) for the per-file tables looked up once or
 * more per link or object of every listing (DomainFile's known objects and address
 * generations). V8 hashes bigint keys slowly (measured on Node 20: ~1 us a `Map.get`, against
 * ~20 ns for a number key), so addresses up to 2^53 (every address of a real file: ids refuse
 * more than 2^48) are kept under their exact number value, and larger ones in a bigint map.
 */
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export class AddrMap<V> {
  private readonly small = new Map<number, V>();
  private readonly big = new Map<bigint, V>();

  /** Number of entries. */
  get size(): number {
    return this.small.size + this.big.size;
  }
  get(addr: bigint): V | undefined {
    return addr <= SAFE && addr >= 0n ? this.small.get(Number(addr)) : this.big.get(addr);
  }
  has(addr: bigint): boolean {
    return addr <= SAFE && addr >= 0n ? this.small.has(Number(addr)) : this.big.has(addr);
  }
  set(addr: bigint, v: V): this {
    if (addr <= SAFE && addr >= 0n) this.small.set(Number(addr), v);
    else this.big.set(addr, v);
    return this;
  }
  /** `get` of an address already known to be a number (a safe integer, as the file decoders give). */
  getNumber(addr: number): V | undefined {
    return this.small.get(addr);
  }
  /** `set` of an address already known to be a number (a safe integer, as the file decoders give). */
  setNumber(addr: number, v: V): this {
    this.small.set(addr, v);
    return this;
  }
  delete(addr: bigint): boolean {
    return addr <= SAFE && addr >= 0n ? this.small.delete(Number(addr)) : this.big.delete(addr);
  }
  clear(): void {
    this.small.clear();
    this.big.clear();
  }
  /** Entries with their bigint addresses (small ones first, each part in insertion order). */
  *entries(): IterableIterator<[bigint, V]> {
    for (const [k, v] of this.small) yield [BigInt(k), v];
    yield* this.big.entries();
  }
  [Symbol.iterator](): IterableIterator<[bigint, V]> {
    return this.entries();
  }
}
