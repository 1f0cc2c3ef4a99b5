/**
 * How many requests this process is serving right now (counted by the ops middleware, which
 * wraps every request). Streamed value reads pace themselves only when they are not alone
 * (routes/datasets.ts `streamPages`): a single large read goes at the speed of the link, and
 * small requests that arrive meanwhile still get the CPU.
 */
let active = 0;

/** A request started; call the returned function once when it is finished or aborted. */
export function requestStarted(): () => void {
  active++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    active--;
  };
}

/** Requests being served now (this one included). */
export function requestsInFlight(): number {
  return active;
}
