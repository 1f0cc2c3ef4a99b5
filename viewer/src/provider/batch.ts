/**
 * Requests asked for in one go (one React render of h5web asks for every visible group's
 * metadata at once) gathered into one bulk request: `load(key)` calls made before the next
 * macrotask are answered by a single `run(keys)`. Each key is asked for once while pending.
 */
export class Batcher<V> {
  private pending = new Map<string, { resolve: (v: V) => void; reject: (e: unknown) => void; promise: Promise<V> }>();
  private scheduled = false;

  constructor(
    /** Answers every key: a value or an Error per key (a thrown error fails them all). */
    private readonly run: (keys: string[]) => Promise<Map<string, V | Error>>,
  ) {}

  load(key: string): Promise<V> {
    const p = this.pending.get(key);
    if (p) return p.promise;
    let resolve!: (v: V) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<V>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.pending.set(key, { resolve, reject, promise });
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => void this.flush(), 0);
    }
    return promise;
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    try {
      const out = await this.run([...batch.keys()]);
      for (const [k, w] of batch) {
        const v = out.get(k);
        if (v instanceof Error) w.reject(v);
        else if (v === undefined) w.reject(new Error(`No answer for ${k}`));
        else w.resolve(v);
      }
    } catch (e) {
      for (const w of batch.values()) w.reject(e);
    }
  }
}

/** `list` in consecutive pieces of at most `n` items. */
export function chunked<T>(list: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += n) out.push(list.slice(i, i + n));
  return out;
}
