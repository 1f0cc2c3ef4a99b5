/**
 * `GET /events?domain=D[&ids=id,id...]`: the change feed of a domain as Server-Sent Events
 * (issue #26 item 4; store/session/liveFeed.ts). Events:
 *
 * - `initial`: `{domain, lastModified, shapes, added, removed: [], truncated?}`, the domain now
 *   (every object in `added`, every dataset's shape in `shapes`);
 * - `change`: the same fields for what changed, with `event` (`written`: a write through this
 *   server; `changed`: another program or process changed the file; `appended`: a SWMR writer
 *   appended), once per change this server learns of (its own writes at once, other programs'
 *   within `eventPollMs`);
 * - `end`: `{reason}` (`deleted`: the domain went away; `closed`: the server shuts down), then
 *   the stream ends.
 *
 * `ids` limits the feed to these objects (a domain with more than 2,000 objects is followed only
 * so: its events say `truncated`). The route needs `read` on the domain; objects with an ACL of
 * their own that the requester may not read are left out of every event, as their routes
 * refuse them. A comment line every 15 s keeps proxies from closing a quiet stream.
 */
import type { Context } from 'koa';
import { badRequest } from '../../errors.js';
import type { FeedChange, Follower } from '../../store/session/liveFeed.js';
import type { Deps } from '../deps.js';
import { param, refOf } from '../request.js';
import type { AuthState } from '../routeTable.js';

/** An object id as the API gives them (objectIndex.ts). */
const ID = /^[gdt]-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{6}-[0-9a-f]{6}$/;
/** At most this many ids per feed. */
const MAX_IDS = 1000;
/** A comment line this often keeps an idle stream open through proxies (ms). */
const HEARTBEAT_MS = 15_000;

/** The `ids` parameter. @throws BadRequest for a malformed id or too many */
function idsParam(ctx: Context): string[] | undefined {
  const raw = param(ctx, 'ids');
  if (raw === undefined || raw === '') return undefined;
  const ids = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))].sort();
  if (ids.length > MAX_IDS) throw badRequest(`"ids" names ${ids.length} objects; at most ${MAX_IDS}`);
  for (const id of ids) if (!ID.test(id)) throw badRequest(`"ids": ${JSON.stringify(id.slice(0, 80))} is not an object id`);
  return ids;
}

/** `GET /events`: the domain's change feed (Server-Sent Events). */
export async function follow(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const ids = idsParam(ctx);
  const state = ctx.state as AuthState;
  const res = ctx.res;
  // objects with ACLs of their own are shown to those who may read them (as their routes do)
  const visible = async (id: string) => !state.acl?.hasObjectAcls || state.may(await d.store.aclView(ref.domain, { id }), 'read');
  const only = async (c: FeedChange): Promise<FeedChange> => {
    if (!state.acl?.hasObjectAcls) return c;
    const ok = new Map<string, boolean>();
    for (const id of new Set([...c.shapes.map((s) => s.id), ...c.added.map((a) => a.id), ...c.removed])) ok.set(id, await visible(id).catch(() => false));
    return { ...c, shapes: c.shapes.filter((s) => ok.get(s.id)), added: c.added.filter((a) => ok.get(a.id)), removed: c.removed.filter((id) => ok.get(id)) };
  };
  let open = false;
  let ended = false;
  const pending: (() => Promise<void>)[] = [];
  let chain = Promise.resolve();
  const write = (event: string, data: unknown) => {
    if (!ended && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const later = (job: () => Promise<void>) => {
    if (!open) pending.push(job);
    else chain = chain.then(job).catch(() => undefined);
  };
  let heartbeat: NodeJS.Timeout | undefined;
  let stop: (() => void) | undefined;
  const finish = () => {
    if (ended) return;
    ended = true;
    if (heartbeat) clearInterval(heartbeat);
    stop?.();
    if (!res.writableEnded) res.end();
  };
  const follower: Follower = {
    change: (c) => later(async () => write(c.event === 'initial' ? 'initial' : 'change', { domain: ref.domain, ...(await only(c)) })),
    end: (reason, message) =>
      later(async () => {
        write('end', { domain: ref.domain, reason, ...(message ? { message } : {}) });
        finish();
      }),
  };
  // errors before the stream starts (404, 503: too many feeds) are answered as any other
  stop = await d.store.follow(ref.domain, ids, follower);
  ctx.respond = false;
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  res.write('retry: 1000\n\n');
  open = true;
  for (const job of pending.splice(0)) chain = chain.then(job).catch(() => undefined);
  heartbeat = setInterval(() => !ended && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  res.once('close', finish);
  // a feed lasts as long as its client: it is not a request in flight (inflight.ts) after this
  (state as unknown as { leaveInFlight?: () => void }).leaveInFlight?.();
}
