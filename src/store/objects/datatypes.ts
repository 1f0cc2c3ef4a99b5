/**
 * Committed datatypes (wire-reference 2.5).
 */
import type { TypeJson } from '../../codec/types.js';
import { parseType } from '../../codec/types.js';
import * as io from '../../hdf5/io.js';
import type { Hid } from '../../hdf5/lib.js';
import * as h5 from '../../hdf5/objects.js';
import { type AttrValueOptions, attributesDict, committedType } from './attributes.js';
import type { DomainFile } from './domainFile.js';
import { type NewObjectPlace, linkNewObject, planObjectPlace } from './h5paths.js';
import { givenId } from './clientIds.js';

/** A committed datatype as GET /datatypes/<id> shows it (without hrefs). */
export interface DatatypeJson {
  id: string;
  root: string;
  type: TypeJson;
  attributeCount: number;
  created: number;
  lastModified: number;
  domain: string;
  attributes?: Record<string, unknown>;
  alias?: string[];
}

/** JSON of an open committed datatype. */
export function datatypeJsonOf(
  f: DomainFile,
  tid: Hid,
  addr: bigint,
  opts: { includeAttrs?: boolean; alias?: boolean; createOrder?: boolean; attrValues?: AttrValueOptions } = {},
): DatatypeJson {
  const info = h5.objectInfo(tid);
  const t = f.objectTimes(info);
  const out: DatatypeJson = {
    id: f.idOf(addr, 'datatype'),
    root: f.rootId,
    type: io.describeCommitted(tid),
    attributeCount: info.numAttrs,
    created: t.created,
    lastModified: t.lastModified,
    domain: f.domain,
  };
  if (opts.includeAttrs) out.attributes = attributesDict(f, tid, addr, !!opts.createOrder, opts.attrValues);
  if (opts.alias) out.alias = f.aliasOf(addr);
  return out;
}

/** GET /datatypes/<id>. */
export function getDatatype(f: DomainFile, id: string, opts: { includeAttrs?: boolean; alias?: boolean } = {}): DatatypeJson {
  return f.withId(id, 'datatype', (tid, addr) => datatypeJsonOf(f, tid, addr, opts));
}

/**
 * A datatype to commit (POST /datatypes; parsed by http/bodies.ts `datatypeBody`): its type JSON
 * (checked by codec/types.ts `parseType`: a committed type's id names a copy), the id its client
 * gave it, and where it goes.
 */
export type DatatypeCreate = NewObjectPlace & { id?: string; type: unknown };

/** POST /datatypes: commit a type, anonymous or linked. */
export function createDatatype(f: DomainFile, body: DatatypeCreate, implicit: boolean): DatatypeJson {
  const clientId = givenId(f, body, 'datatype');
  // Committing a copy of a committed type makes a new type: drop the source's id.
  const type: TypeJson = { ...parseType(body.type, (id) => committedType(f, id)) };
  delete type.id;
  const place = planObjectPlace(f, body, implicit);
  const tid: Hid = io.commitType(f.h, undefined, type);
  try {
    if (place) linkNewObject(f, tid, place);
    const { addr } = f.registerNew(tid, 'datatype', !!place, clientId);
    return datatypeJsonOf(f, tid, addr);
  } finally {
    io.closeType(tid);
  }
}
