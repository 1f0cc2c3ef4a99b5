/**
 * What h5store learns from a file, and how long it lives: the one table of which state survives
 * which event (docs/architecture.md "What is learnt from a file, and for how long").
 *
 * Everything learnt from a domain file belongs to its domain entry (domainFile.ts), in one of
 * three parts, each replaced whole, never emptied field by field:
 *
 * - the object index (objectIndex.ts): the domain key, the addresses known to be objects and
 *   their kinds, address generations, the reserved group's layout, and `index` slots (storage
 *   kinds of datasets; client-id aliases, clientIds.ts);
 * - the kept state: what this process writes through to the reserved group (the ACL and the
 *   given state, `kept` slots): read once, then kept current by the code that writes it;
 * - the view (`FileView`): every cache derived from the file's content (`view` slots: link
 *   lists, attribute facts, remembered answers, alias paths; and, keyed by the view's
 *   `serial`, the decoded chunks and query columns of values/), replaced on every event.
 *
 * Links and attributes deleted while the server runs (410) belong to the domain name and outlive
 * every event; deleted objects answer 410 from their addresses' generations (the index).
 *
 * Only the file cache (files.ts) says what happened to a file (`FileEvent`), and tells every
 * entry of that file (`DomainFile.apply`); this table decides what each part becomes. A module
 * with a new cache declares a `StateSlot` with its lifetime next to the code that fills it and
 * reads it with `DomainFile.state(slot)`; it never empties it itself.
 */

/**
 * What happened to a file, as the file cache (files.ts) sees it.
 *
 * - `writing`: a write of this process began through this domain name (its journal transaction
 *   is open; the file's other names wait for the lock);
 * - `written`: that write was committed;
 * - `writtenElsewhere`: this process wrote the file through another domain name of it (a
 *   symlink, a hard link);
 * - `writeFailed`: a write of this process failed and was rolled back;
 * - `changed`: the file changed under us: another program or another h5store process wrote it
 *   (its stamp or the lock file's commit counter moved), a backup was restored over it in
 *   place, a repair changed it (an interrupted write rolled back, a crashed writer's flags
 *   cleared), libhdf5 wrote it in place as another file's virtual dataset source, or a mounted
 *   object has a new version;
 * - `appended`: a writer in SWMR mode appended to its datasets (it cannot create or delete
 *   objects nor change attributes then): a change of another program to a file read in SWMR
 *   mode before and after it (files.ts `prepareRead`, issue #26);
 * - `replaced`: another file is now at the domain's path (a new inode: restored from a backup by
 *   a move, deleted and created again). The file cache gives the domain a new entry.
 */
export type FileEvent = 'writing' | 'written' | 'writtenElsewhere' | 'writeFailed' | 'changed' | 'appended' | 'replaced';

/** The parts of what is learnt from a file, by lifetime. */
export type Lifetime = 'index' | 'kept' | 'view';

/** What an event leaves of each part: `keep` it, a `new` empty one, or (views) a `transient` one. */
export interface EventRow {
  index: 'keep' | 'new';
  kept: 'keep' | 'new';
  /** `transient`: a view that keeps nothing (a write sees the file as it changes it). */
  view: 'new' | 'transient';
  /**
   * The event as the file's other domain names see it; null: they are not told (they wait for
   * the file's lock meanwhile).
   */
  others: FileEvent | null;
}

/**
 * Which state survives which event: the one table (unit test per row:
 * test/store/file-state.test.ts).
 */
export const AFTER: Readonly<Record<FileEvent, Readonly<EventRow>>> = {
  writing: { index: 'keep', kept: 'keep', view: 'transient', others: null },
  written: { index: 'keep', kept: 'keep', view: 'new', others: 'writtenElsewhere' },
  writtenElsewhere: { index: 'new', kept: 'new', view: 'new', others: null },
  writeFailed: { index: 'new', kept: 'new', view: 'new', others: 'writeFailed' },
  changed: { index: 'new', kept: 'new', view: 'new', others: 'changed' },
  appended: { index: 'keep', kept: 'keep', view: 'new', others: 'appended' },
  replaced: { index: 'new', kept: 'new', view: 'new', others: 'replaced' },
};

/**
 * One piece of state learnt from a file, declared once by the module that owns it (a cache, the
 * kept ACL...): `create` makes it empty; where it lives, and so how long, is its `lifetime`.
 */
export class StateSlot<T> {
  constructor(
    /** For messages and tests. */
    readonly name: string,
    readonly lifetime: Lifetime,
    readonly create: () => T,
  ) {}
}

/** The slots of one part (one index, one kept state, one view): each made on first use. */
export class SlotStore {
  private readonly values = new Map<StateSlot<unknown>, unknown>();

  /** The slot's value in this part, made empty on first use. */
  get<T>(slot: StateSlot<T>): T {
    let v = this.values.get(slot as StateSlot<unknown>);
    if (v === undefined) this.values.set(slot as StateSlot<unknown>, (v = slot.create()));
    return v as T;
  }
}

let nextSerial = 1;

/**
 * A view of a file's content: the caches derived from it (`view` slots), replaced whole on
 * every event. `serial` keys the caches kept outside it (values/chunkCache.ts: decoded chunks,
 * query columns); a transient view (inside a write) has none and keeps nothing.
 */
export class FileView {
  /** Unique in this process; undefined for a transient view. */
  readonly serial: number | undefined;
  private readonly slots: SlotStore | undefined;

  constructor(transient = false) {
    this.serial = transient ? undefined : nextSerial++;
    this.slots = transient ? undefined : new SlotStore();
  }

  /** Whether this view keeps nothing (a write is changing the file). */
  get transient(): boolean {
    return this.slots === undefined;
  }

  /** The slot's cache in this view (in a transient view: a new empty one on every call). */
  get<T>(slot: StateSlot<T>): T {
    return this.slots ? this.slots.get(slot) : slot.create();
  }
}
