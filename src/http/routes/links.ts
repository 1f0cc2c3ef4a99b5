/**
 * Link routes of groups (service spec 4.2-4.4; wire-reference 2.2): `/groups/:id/links` (list,
 * bulk read, bulk create, bulk delete) and `/groups/:id/links/:name`.
 */
import type { Context } from 'koa';
import { createHash } from 'node:crypto';
import { badRequest } from '../../errors.js';
import type { AclTarget } from '../../store/store.js';
import { type LinkListOptions, linkNameFromPath } from '../../store/objects/links.js';
import { groupIdsIn } from '../../store/objects/linkWrites.js';
import { linkBody, parseBody, parseLinksPost, parseLinksPut } from '../bodies.js';
import { onlyReadable } from '../visible.js';
import type { Deps } from '../deps.js';
import { ownedHrefs } from '../deps.js';
import { type Href, Hrefs, linkListBody, linkListKept, sendJson, sendJsonText, sendWithHrefs } from '../present.js';
import { bodyOf, emptyNameIs404, flag, globParam, jsonObject, limitParam, markerParam, param, refOf } from '../request.js';

/** The groups a bulk link body names (`grp_ids`), each checked as the route's object is (the table's `targets`). */
export function groupTargets(ctx: Context): AclTarget[] {
  return groupIdsIn(bodyOf(ctx)).map((id) => ({ id }));
}

/** `GET /groups/:id/links`: a page of links (`Limit`, `Marker`, `pattern`), or every link below (`follow_links`). */
export async function list(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'link');
  const ref = refOf(ctx);
  const id = ctx.params.id;
  const h = new Hrefs(ctx, d.config, ref);
  if (flag(ctx, 'follow_links')) {
    const all = await d.store.listLinksDeep(ref.domain, id, { limit: limitParam(ctx), pattern: globParam(ctx), createOrder: flag(ctx, 'CreateOrder') });
    sendJson(ctx, 200, { links: await onlyReadable(ctx, d.store, ref.domain, all), hrefs: ownedHrefs(h, `/groups/${id}/links`, `/groups/${id}`) });
    return;
  }
  const opts = { limit: limitParam(ctx), marker: markerParam(ctx), createOrder: flag(ctx, 'CreateOrder'), pattern: globParam(ctx) };
  const page = await d.store.listLinksPage(ref.domain, id, opts);
  sendJsonText(ctx, 200, linkListBody(page, h, id, ownedHrefs(h, `/groups/${id}/links`, `/groups/${id}`)));
  // the next page, unless its first link keeps its bytes for these hrefs already
  if (page.next !== undefined && !linkListKept(page.list, [page.after!], h, id)) readAheadLinks(d, ref.domain, id, { ...opts, marker: page.next }, h);
}

/** `POST /groups/:id/links`: links by title, of several groups (`grp_ids`), or of every group below (`follow_links`). */
export async function read(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'link');
  const ref = refOf(ctx);
  const req = parseLinksPost(bodyOf(ctx));
  const opts = { limit: limitParam(ctx), pattern: globParam(ctx), createOrder: flag(ctx, 'CreateOrder') };
  if (flag(ctx, 'follow_links')) {
    if (req.titles) throw badRequest('"titles" cannot be used with follow_links');
    const all = await d.store.listLinksDeep(ref.domain, ctx.params.id, opts);
    sendJson(ctx, 200, { links: await onlyReadable(ctx, d.store, ref.domain, all), hrefs: [] });
    return;
  }
  if (req.groups) {
    const byGroup = await d.store.linksOfGroups(ref.domain, req.groups, opts);
    // one group: its links as a plain list, as HSDS answers (issue #25)
    const links = req.groups.length === 1 ? byGroup[req.groups[0]!.id] : byGroup;
    sendJson(ctx, 200, { links, hrefs: [] });
    return;
  }
  if (!req.titles) throw badRequest('Give "titles", "grp_ids", or follow_links=1');
  sendJson(ctx, 200, { links: await d.store.linksByTitles(ref.domain, ctx.params.id, req.titles), hrefs: [] });
}

/** `PUT /groups/:id/links`: create several links `{"links": {title: {id}|{h5path}|{h5path,h5domain}}}`, optionally in several groups (`grp_ids`). */
export async function createMany(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'link');
  const ref = refOf(ctx);
  const r = await d.store.putLinksBulk(ref.domain, parseLinksPut(bodyOf(ctx), ctx.params.id));
  sendJson(ctx, r === 'created' ? 201 : 200, { hrefs: [] });
}

/** `DELETE /groups/:id/links?titles=a/b[&separator=|]`: delete several links, all or nothing. */
export async function removeMany(ctx: Context, d: Deps): Promise<void> {
  emptyNameIs404(ctx, 'link');
  const ref = refOf(ctx);
  const titles = param(ctx, 'titles');
  if (!titles) throw badRequest('"titles" is required');
  const sep = param(ctx, 'separator') || '/';
  await d.store.deleteLinks(ref.domain, ctx.params.id, titles.split(sep));
  sendJson(ctx, 200, { hrefs: [] });
}

/** `GET /groups/:id/links/:name`: one link, with a strong ETag of its content. */
export async function get(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const { id } = ctx.params;
  const name = linkNameFromPath(ctx.params.name);
  // r: {link, created, lastModified}, remembered until the file changes
  const r = await d.store.getLink(ref.domain, id, name);
  const h = new Hrefs(ctx, d.config, ref);
  const selfPath = `/groups/${id}/links/${encodeURIComponent(name)}`;
  const root = r.link.class === 'H5L_TYPE_UDLINK' ? await d.store.rootId(ref.domain) : undefined;
  const hrefsOf = (h: Hrefs): Href[] => {
    const hrefs = [h.rel('self', selfPath)];
    if (root !== undefined) hrefs.push(h.rel('root', `/groups/${root}`));
    hrefs.push(h.rel('home', '/'), h.rel('owner', `/groups/${id}`));
    if (r.link.id && r.link.collection) hrefs.push(h.rel('target', `/${r.link.collection}/${r.link.id}`));
    return hrefs;
  };
  ctx.set('ETag', etagOf(r.link));
  sendWithHrefs(ctx, 200, r, h, hrefsOf, { plain: true, hrefsKey: selfPath });
}

/** `PUT /groups/:id/links/:name`: create a link (hard, soft or external). */
export async function put(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  const name = linkNameFromPath(ctx.params.name);
  const spec = parseBody(linkBody, await jsonObject(ctx, d.config, { required: true }));
  const r = await d.store.putLink(ref.domain, ctx.params.id, name, spec);
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, r === 'created' ? 201 : 200, {
    hrefs: [h.rel('self', `/groups/${ctx.params.id}/links/${encodeURIComponent(ctx.params.name)}`), h.rel('owner', `/groups/${ctx.params.id}`)],
  });
}

/** `DELETE /groups/:id/links/:name`. */
export async function remove(ctx: Context, d: Deps): Promise<void> {
  const ref = refOf(ctx);
  await d.store.deleteLink(ref.domain, ctx.params.id, linkNameFromPath(ctx.params.name));
  const h = new Hrefs(ctx, d.config, ref);
  sendJson(ctx, 200, { hrefs: [h.rel('owner', `/groups/${ctx.params.id}`)] });
}

/**
 * Read-ahead of link pages (issue #9 target 7): a client listing a large group page by page
 * (Limit, then Marker) asks for the next page once it has received and parsed this one. The
 * next page's text is built as soon as this answer is on its way, while the client receives and parses it
 * (on the other core), and kept with its links (`keptListBody`): the next request copies it. At
 * most one page per request, not when the link after this page keeps its bytes already (a
 * listing of pages listed before); failures are left to the request that will meet them (a
 * write meanwhile makes the store list anew anyway).
 */
function readAheadLinks(d: Deps, domain: string, groupId: string, opts: LinkListOptions, h: Hrefs): void {
  setImmediate(() => {
    d.store.listLinksPage(domain, groupId, opts).then(
      (next) => {
        if (linkListKept(next.list, next.at, h, groupId)) return;
        linkListBody(next, h, groupId, []);
        linkPagesReadAhead++;
      },
      () => undefined,
    );
  });
}

let linkPagesReadAhead = 0;
/** Link pages built ahead of their request since the process started (for the metrics). */
export function linkPagesReadAheadCount(): number {
  return linkPagesReadAhead;
}

/** ETags of link JSON objects (remembered with them until the file changes; never mutated). */
const etags = new WeakMap<object, string>();

/** A strong ETag (quoted) of a link's content: a hash of its JSON, computed once per object. */
function etagOf(link: object): string {
  let tag = etags.get(link);
  if (tag === undefined) etags.set(link, (tag = `"${createHash('sha1').update(JSON.stringify(link)).digest('hex').slice(0, 20)}"`));
  return tag;
}
