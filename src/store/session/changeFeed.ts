/**
 * What the worker processes of one `serve --workers N` tell each other, so that every worker
 * answers as one process would, at once (issue #24 item 12): a domain, folder, link or
 * attribute deleted (then 410, not 404), one created again, an ACL or owner changed (the other
 * workers' short-lived caches of stats, ACL views and folder sidecars must not answer from
 * before it).
 *
 * The feed is one append-only file in the workers' private runtime directory: the worker that
 * makes a change appends one line (a single `write(2)` on a descriptor opened `O_APPEND`, so
 * lines of several writers never mix) before it answers the request; every worker, at the start
 * of each request's first store call, compares the file's size with what it has read (`fstat`,
 * about a microsecond) and applies the new lines. A change acknowledged to a client is thus
 * known to every worker before that client's next request. A restarted worker reads the whole
 * file and knows what its siblings know. Objects deleted need no line: their address
 * generations are in the file itself (docs/storage-format.md), so every process tells them apart
 * from objects that never were.
 */
import fs from 'node:fs';

/** One change, as a line of the feed. */
export type ChangeEvent =
  /** An ACL or owner of a domain (file) or folder (sidecar) changed. */
  | { t: 'acl'; domain: string }
  /** A domain or folder was created (it no longer answers 410). */
  | { t: 'made'; domain: string }
  /** A domain or folder was deleted; `key` is the domain key (ids.ts) of the deleted file. */
  | { t: 'removed'; domain: string; key?: string }
  /** A link or attribute (`<owner id>/links/<name>`, `<owner id>/attributes/<name>`) was deleted. */
  | { t: 'gone'; domain: string; what: string }
  /** A link or attribute deleted earlier was made again. */
  | { t: 'back'; domain: string; what: string };

/** How the store hears of, and tells, changes made by the other processes of its cluster. */
export interface ChangeFeed {
  /** Tell the others (synchronously: before the request that made the change is answered). */
  publish(e: ChangeEvent): void;
  /** The changes the others published since the last call (none: `[]`, after one `fstat`). */
  poll(): ChangeEvent[];
}

/** A change feed in a file shared by the workers (see the module comment). */
export class SharedChangeLog implements ChangeFeed {
  private readonly fd: number;
  /** Bytes of the file already read. */
  private readPos = 0;
  /** A last line not complete yet when read (its writer's bytes still arriving). */
  private partial = '';
  private readonly me = process.pid;

  /** @param file the feed's path (created when missing); readers start at its beginning */
  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'a+', 0o600);
  }

  publish(e: ChangeEvent): void {
    fs.writeSync(this.fd, JSON.stringify({ ...e, p: this.me }) + '\n');
  }

  poll(): ChangeEvent[] {
    const size = fs.fstatSync(this.fd).size;
    if (size <= this.readPos) return [];
    const buf = Buffer.allocUnsafe(size - this.readPos);
    let got = 0;
    while (got < buf.length) {
      const n = fs.readSync(this.fd, buf, got, buf.length - got, this.readPos + got);
      if (n <= 0) break;
      got += n;
    }
    this.readPos += got;
    const text = this.partial + buf.toString('utf8', 0, got);
    const end = text.lastIndexOf('\n');
    this.partial = text.slice(end + 1);
    const out: ChangeEvent[] = [];
    if (end < 0) return out;
    for (const line of text.slice(0, end).split('\n')) {
      if (!line) continue;
      try {
        const e = JSON.parse(line) as ChangeEvent & { p?: number };
        if (e.p !== this.me) out.push(e);
      } catch {
        /* a torn line (cannot happen with O_APPEND writes of whole lines): skipped */
      }
    }
    return out;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}
