/**
 * What clients gave that an HDF5 file cannot express, kept so it can be reported back as given
 * (issue #12; docs/storage-format.md):
 *
 * - `creation`: parts of a dataset's `creationProperties` whose form the file loses: a fill value
 *   given as `"nan"`/`"inf"`/`"-inf"` or base64 (`fillValue_encoding`), the `initializer`, and the
 *   pipeline positions of blosc-codec filters given without a level (h5pyd then reports
 *   `compression_opts` None, as with HSDS);
 * - `unset`: attributes created without a value (they read `value: null`, as with HSDS; libhdf5
 *   itself stores zeros);
 * - `creation.extra` of groups: `creationProperties` keys other than `CreateOrder` (cprops.ts).
 *
 * Stored like the ACL state (acls.ts): the attribute `given` of the reserved group `/__h5store__`,
 * a scalar variable-length UTF-8 string holding JSON
 * `{"version": 1, "objects": {"<addr hex>.<gen>": {"creation": {...}, "unset": ["name", ...]}}}`,
 * keyed like per-object ACLs (an entry never passes to a later object at a reused address).
 * Written only when there is something to keep; the file's truth wins when the two disagree
 * (e.g. a fill value changed by another program is reported as the file has it).
 */
import type { DomainFile } from '../objects/domainFile.js';
import { StateSlot } from '../session/fileState.js';

/** What one object keeps. */
export interface GivenEntry {
  /** `creationProperties` entries to report as given (datasets). */
  creation?: GivenCreation;
  /** Names of attributes created without a value. */
  unset?: string[];
}

/** Dataset creation properties kept as given. */
export interface GivenCreation {
  fillValue?: unknown;
  fillValue_encoding?: string;
  initializer?: unknown[];
  /** Pipeline indices of blosc-codec filters given without a level. */
  noLevel?: number[];
  /** Groups: `creationProperties` keys other than `CreateOrder` (cprops.ts). */
  extra?: Record<string, unknown>;
}

/** The state of one file: entries by object key (objectIndex.ts `objectKey`). */
export interface GivenState {
  objects: Record<string, GivenEntry>;
}

/** Name of the attribute of the reserved group that holds the state. */
export const GIVEN_ATTR = 'given';

/** Parse a stored document; entries of unexpected shape are dropped. */
export function parseGiven(text: string): GivenState {
  const out: GivenState = { objects: {} };
  try {
    const doc = JSON.parse(text) as { objects?: Record<string, unknown> };
    for (const [k, v] of Object.entries(doc.objects ?? {})) {
      if (!v || typeof v !== 'object') continue;
      const e = v as Record<string, unknown>;
      const entry: GivenEntry = {};
      if (e.creation && typeof e.creation === 'object' && !Array.isArray(e.creation)) entry.creation = e.creation as GivenCreation;
      if (Array.isArray(e.unset)) entry.unset = e.unset.filter((n): n is string => typeof n === 'string');
      out.objects[k] = entry;
    }
  } catch {
    /* unreadable: nothing kept */
  }
  return out;
}

/**
 * A domain file's given state as read, undefined before it is read. Kept state (fileState.ts):
 * `writeGiven` keeps it current across this process's writes; every other event drops it.
 */
const GIVEN_STATE = new StateSlot('given', 'kept', () => ({ state: undefined as GivenState | undefined }));

/**
 * The state stored in an open domain file (empty when none). Read once, then kept
 * (`GIVEN_STATE`); costs nothing for files without the reserved group.
 */
export function readGiven(f: DomainFile): GivenState {
  const kept = f.state(GIVEN_STATE);
  if (kept.state !== undefined) return kept.state;
  const text = f.reserved.readText(GIVEN_ATTR);
  kept.state = text === undefined ? { objects: {} } : parseGiven(text);
  return kept.state;
}

/** The entry of one object (by address), if any. */
export function givenOf(f: DomainFile, addr: bigint): GivenEntry | undefined {
  if (!f.reserved.exists) return undefined;
  return readGiven(f).objects[f.objectKey(addr)];
}

function isEmpty(e: GivenEntry): boolean {
  return !e.creation && !(e.unset && e.unset.length);
}

/**
 * Change the entry of one object in an open, writable file (`change` edits it in place; an entry
 * left empty is removed). Entries of objects that no longer exist at their address and generation
 * are dropped; the attribute is removed when nothing is left (and the reserved group with it when
 * it becomes empty).
 */
export function updateGiven(f: DomainFile, addr: bigint, change: (e: GivenEntry) => void): void {
  const cur = readGiven(f);
  const key = f.objectKey(addr);
  const entry: GivenEntry = structuredClone(cur.objects[key] ?? {});
  change(entry);
  const before = JSON.stringify(cur.objects[key] ?? {});
  if (JSON.stringify(entry) === before) return;
  const objects: Record<string, GivenEntry> = {};
  for (const [k, v] of Object.entries(cur.objects)) if (k !== key && !isEmpty(v) && f.isCurrentObjectKey(k)) objects[k] = v;
  if (!isEmpty(entry)) objects[key] = entry;
  writeGiven(f, { objects });
}

function writeGiven(f: DomainFile, state: GivenState): void {
  const empty = Object.keys(state.objects).length === 0;
  f.reserved.writeText(GIVEN_ATTR, empty ? undefined : JSON.stringify({ version: 1, objects: state.objects }));
  f.state(GIVEN_STATE).state = state;
}

/** Mark an attribute as created without a value, or as holding one (`unset` false). */
export function markUnsetAttribute(f: DomainFile, addr: bigint, name: string, unset: boolean): void {
  if (!unset && !f.reserved.exists) return;
  if (!unset && !givenOf(f, addr)?.unset?.includes(name)) return;
  updateGiven(f, addr, (e) => {
    const names = new Set(e.unset ?? []);
    if (unset) names.add(name);
    else names.delete(name);
    if (names.size) e.unset = [...names].sort();
    else delete e.unset;
  });
}

/** Whether an attribute was created without a value (and not written since). */
export function isUnsetAttribute(f: DomainFile, addr: bigint, name: string): boolean {
  return givenOf(f, addr)?.unset?.includes(name) ?? false;
}
