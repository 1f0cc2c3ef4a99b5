/**
 * A password flood in a process of its own (bench/attacks.ts starts it, so the flood's client
 * work does not delay the bench's own measures): `clients` loops of Basic logins with made-up
 * names from each of the given loopback addresses, for `seconds`; prints the answers by status
 * as one JSON line at the end.
 *
 *   node --import tsx bench/flood.ts URL CLIENTS SECONDS ADDRESS[,ADDRESS...]
 */
import { passwordFlood } from '../test/helpers/attacks.js';

const [url, clients, seconds, addresses] = process.argv.slice(2);
const floods = addresses!.split(',').map((a) => passwordFlood(url!, { clients: Number(clients), localAddress: a }));
setTimeout(async () => {
  const counts: Record<number, number> = {};
  for (const c of await Promise.all(floods.map((f) => f.stop()))) for (const [k, v] of Object.entries(c)) counts[Number(k)] = (counts[Number(k)] ?? 0) + v;
  console.log(JSON.stringify(counts));
}, Number(seconds) * 1000);
