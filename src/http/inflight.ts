/**
 * How many requests this process is serving right now (counted by the ops middleware, which
 * wraps every request). Streamed value reads pace themselves only when they are not alone
 * (valueAnswer.ts `streamSource`): a single large read goes at the speed of the link, and
 * small requests that arrive meanwhile still get the CPU.
 */
import type { FlightRecorder } from '../ops/flightRecorder.js';

let active = 0;
/** Where every request is recorded (ops/flightRecorder.ts), once the server made one. */
let recorder: FlightRecorder | undefined;

/** Record every request in `r` from now on (the process's flight record). */
export function recordRequestsIn(r: FlightRecorder | undefined): void {
  recorder = r;
}

/**
 * A request started (`METHOD url`, for the flight record); call the returned function once when
 * it is finished or aborted.
 */
export function requestStarted(method = '', url = ''): () => void {
  active++;
  const seq = recorder?.start(method, url);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    active--;
    if (seq !== undefined) recorder?.end(seq);
  };
}

/** Requests being served now (this one included). */
export function requestsInFlight(): number {
  return active;
}
