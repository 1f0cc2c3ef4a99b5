/**
 * A readers-writer lock for one domain inside this process (DESIGN.md section 5).
 *
 * Many readers or one writer; writers are preferred (a waiting writer stops new readers), so a
 * stream of reads cannot starve a write. Acquiring an uncontended lock completes synchronously
 * (`tryRead`) so the common read path costs no promise.
 */
export class RWLock {
  private readers = 0;
  private writer = false;
  private readonly queue: { write: boolean; resolve: () => void }[] = [];

  /** Take a read lock now if no writer holds or waits for the lock. */
  tryRead(): boolean {
    if (this.writer || this.queue.length > 0) return false;
    this.readers++;
    return true;
  }

  /** Take the write lock now if nobody holds or waits for the lock. */
  tryWrite(): boolean {
    if (this.writer || this.readers > 0 || this.queue.length > 0) return false;
    this.writer = true;
    return true;
  }

  /** Wait for a read lock. */
  async read(): Promise<void> {
    if (this.tryRead()) return;
    await new Promise<void>((resolve) => this.queue.push({ write: false, resolve }));
  }

  /** Wait for the write lock. */
  async write(): Promise<void> {
    if (!this.writer && this.readers === 0 && this.queue.length === 0) {
      this.writer = true;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push({ write: true, resolve }));
  }

  /** Release a read lock. */
  releaseRead(): void {
    this.readers--;
    this.drain();
  }

  /** Release the write lock. */
  releaseWrite(): void {
    this.writer = false;
    this.drain();
  }

  /** How many readers hold the lock now. */
  get readerCount(): number {
    return this.readers;
  }

  /** True when the next in line is a writer (a write burst can go on). */
  get writerWaiting(): boolean {
    return this.queue.length > 0 && this.queue[0].write;
  }

  /** True when nobody holds or waits for the lock. */
  get idle(): boolean {
    return !this.writer && this.readers === 0 && this.queue.length === 0;
  }

  private drain(): void {
    while (this.queue.length > 0 && !this.writer) {
      const next = this.queue[0];
      if (next.write) {
        if (this.readers > 0) return;
        this.queue.shift();
        this.writer = true;
        next.resolve();
        return;
      }
      this.queue.shift();
      this.readers++;
      next.resolve();
    }
  }
}
