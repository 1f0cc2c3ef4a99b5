/**
 * Change feeds of domains (issue #26 item 4; `GET /events`): what changed in a domain file (the
 * shapes of its datasets, the objects made or deleted), told to every client that follows it as
 * soon as this process learns of it.
 *
 * What happened to a file is said by the file cache alone (files.ts `happened`, heard through
 * `FileCache.watch`): this process's writes at once, changes of other programs when a read
 * looks at the file. A followed domain is looked at every `pollMs` (a read: `FeedSource.check`)
 * so changes of other programs are heard without other requests. On each event the feed takes
 * one snapshot of the domain (objects, with the shapes of its datasets; at most `maxObjects`,
 * else only what its followers asked for by id) and tells its followers what differs from the
 * last one. One feed per domain and set of followed ids, shared by its followers; it stops with
 * its last follower.
 */
import type { ShapeJson } from '../../codec/shapes.js';
import { H5StoreError } from '../../errors.js';
import type { FileEvent } from './fileState.js';

/** An object of a snapshot. */
export interface FeedObject {
  id: string;
  collection: 'groups' | 'datasets' | 'datatypes';
  /** Datasets: the shape. */
  shape?: ShapeJson;
}

/** A domain's objects at one moment (`FeedSource.snapshot`). */
export interface FeedSnapshot {
  /** By id; empty when `truncated`. */
  objects: Map<string, FeedObject>;
  /** The domain had more objects than the feed follows (only asked-for ids are followed then). */
  truncated: boolean;
  /** The file's modification time (seconds since the epoch). */
  lastModified: number;
}

/** What a follower is told: the first snapshot (`initial`), then every change. */
export interface FeedChange {
  /** `initial`, or the file event (fileState.ts) that made the change. */
  event: 'initial' | FileEvent;
  lastModified: number;
  /** Datasets whose shape is new (every dataset in `initial`). */
  shapes: { id: string; shape: ShapeJson }[];
  /** Objects new since the last snapshot (every object in `initial`). */
  added: { id: string; collection: FeedObject['collection'] }[];
  /** Ids of objects gone since the last snapshot. */
  removed: string[];
  /** The domain has more objects than a feed follows: objects and shapes are only given for the followed ids. */
  truncated?: boolean;
}

/** What the feeds need from the store. */
export interface FeedSource {
  /**
   * The domain's objects now (at most `max`, else `truncated`), or only `ids` when given (those
   * that no longer exist are left out).
   * @throws H5StoreError NotFound/Gone when the domain went away
   */
  snapshot(domain: string, ids: string[] | undefined, max: number): Promise<FeedSnapshot>;
  /** Look at the domain's file (a read): a change is then heard through `watch`. @throws as `snapshot` */
  check(domain: string): Promise<void>;
  /** Be told every event a domain name hears. @returns the function that stops it */
  watch(listener: (domain: string, event: FileEvent) => void): () => void;
}

/** A follower: told each change, and once why the feed ended (`deleted`: the domain went away; `closed`: the server closes). */
export interface Follower {
  change(c: FeedChange): void;
  end(why: 'deleted' | 'closed' | 'failed', message?: string): void;
}

export interface FeedOptions {
  /** Look at a followed domain this often (ms). */
  pollMs: number;
  /** Follow at most this many objects of a domain (beyond: only ids asked for). */
  maxObjects: number;
  /** At most this many followers in this process (beyond: 503). */
  maxFollowers: number;
}

/** The events that change what a snapshot holds (a write being made, or undone, does not). */
const CHANGES: ReadonlySet<FileEvent> = new Set<FileEvent>(['written', 'writtenElsewhere', 'changed', 'appended', 'replaced']);

class Feed {
  readonly followers = new Set<Follower>();
  last: FeedSnapshot | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The events heard since the last snapshot (the last one is told). */
  pending: FileEvent | undefined;
  /** A snapshot is being taken. */
  busy = false;

  constructor(
    readonly domain: string,
    readonly ids: string[] | undefined,
  ) {}
}

export class DomainFeeds {
  private readonly feeds = new Map<string, Feed>();
  private followers = 0;
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly src: FeedSource,
    private readonly opts: FeedOptions,
  ) {}

  /** Followers in this process now. */
  get size(): number {
    return this.followers;
  }

  /**
   * Follow `domain` (only the objects `ids` when given): `f.change` is told the first snapshot
   * at once, then every change. @returns the function that stops following
   * @throws H5StoreError Unavailable (503) past `maxFollowers`; NotFound/Gone as `snapshot`
   */
  async follow(domain: string, ids: string[] | undefined, f: Follower): Promise<() => void> {
    if (this.followers >= this.opts.maxFollowers) {
      throw new H5StoreError('Unavailable', `This server follows ${this.followers} change feeds already (maxEventStreams); try again later`, { retryAfter: 10 });
    }
    const key = `${domain}\u0000${ids?.join(',') ?? ''}`;
    let feed = this.feeds.get(key);
    const fresh = !feed;
    if (!feed) feed = new Feed(domain, ids);
    const snap = feed.last ?? (await this.src.snapshot(domain, ids, this.opts.maxObjects));
    if (fresh) {
      // another follower may have made the same feed while the snapshot was taken
      feed = this.feeds.get(key) ?? feed;
      feed.last ??= snap;
      this.feeds.set(key, feed);
    }
    f.change(diff(undefined, snap, 'initial'));
    feed.followers.add(f);
    this.followers++;
    this.stopWatching ??= this.src.watch((d, e) => this.heard(d, e));
    if (!feed.timer) {
      const ff = feed;
      ff.timer = setInterval(() => this.poll(ff), this.opts.pollMs);
      ff.timer.unref();
    }
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.leave(key, feed!, f);
    };
  }

  /** End every feed (the server closes). */
  close(): void {
    for (const [key, feed] of [...this.feeds]) for (const f of [...feed.followers]) (this.leave(key, feed, f), f.end('closed'));
  }

  private leave(key: string, feed: Feed, f: Follower): void {
    if (!feed.followers.delete(f)) return;
    this.followers--;
    if (feed.followers.size > 0) return;
    if (feed.timer) clearInterval(feed.timer);
    feed.timer = undefined;
    if (this.feeds.get(key) === feed) this.feeds.delete(key);
    if (this.feeds.size === 0) {
      this.stopWatching?.();
      this.stopWatching = undefined;
    }
  }

  /** An event a domain name heard: its feeds take a new snapshot (after the event's work is done). */
  private heard(domain: string, event: FileEvent): void {
    if (!CHANGES.has(event)) return;
    for (const feed of this.feeds.values()) {
      if (feed.domain !== domain) continue;
      feed.pending = event;
      if (!feed.busy) setImmediate(() => void this.refresh(feed));
    }
  }

  /** Look at the followed file: a change another program made is heard (`heard`) if there is one. */
  private poll(feed: Feed): void {
    if (feed.busy) return;
    this.src.check(feed.domain).catch((e) => this.failed(feed, e));
  }

  private async refresh(feed: Feed): Promise<void> {
    if (feed.busy || feed.pending === undefined || feed.followers.size === 0) return;
    feed.busy = true;
    try {
      while (feed.pending !== undefined && feed.followers.size > 0) {
        const event = feed.pending;
        feed.pending = undefined;
        const snap = await this.src.snapshot(feed.domain, feed.ids, this.opts.maxObjects);
        const change = diff(feed.last, snap, event);
        feed.last = snap;
        for (const f of feed.followers) f.change(change);
      }
    } catch (e) {
      this.failed(feed, e);
    } finally {
      feed.busy = false;
    }
  }

  /** A look at the file failed: the domain went away (its followers are told), or it may pass. */
  private failed(feed: Feed, e: unknown): void {
    const code = e instanceof H5StoreError ? e.code : undefined;
    if (code === 'NotFound' || code === 'Gone') {
      for (const [key, ff] of [...this.feeds]) if (ff === feed) for (const f of [...feed.followers]) (this.leave(key, feed, f), f.end('deleted'));
    }
    // anything else (busy, momentarily inconsistent) passes: the next look tries again
  }
}

/** What differs between two snapshots, as told to followers. */
export function diff(before: FeedSnapshot | undefined, after: FeedSnapshot, event: FeedChange['event']): FeedChange {
  const shapes: FeedChange['shapes'] = [];
  const added: FeedChange['added'] = [];
  const removed: string[] = [];
  for (const [id, o] of after.objects) {
    const was = before?.objects.get(id);
    if (!was) added.push({ id, collection: o.collection });
    if (o.shape && (!was?.shape || JSON.stringify(was.shape) !== JSON.stringify(o.shape))) shapes.push({ id, shape: o.shape });
  }
  if (before) for (const id of before.objects.keys()) if (!after.objects.has(id)) removed.push(id);
  const c: FeedChange = { event, lastModified: after.lastModified, shapes, added, removed };
  if (after.truncated) c.truncated = true;
  return c;
}
