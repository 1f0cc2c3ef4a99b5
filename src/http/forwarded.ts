/**
 * Requests another worker of `serve --workers N` forwarded (src/cluster.ts): the address of the
 * client that sent them. Only the listener of a worker's private socket fills it in (from a
 * header it removes); a header of that name from outside is never read.
 */
import type { IncomingMessage } from 'node:http';

export const forwardedClient = new WeakMap<IncomingMessage, string>();
