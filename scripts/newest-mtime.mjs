/**
 * The newest modification time (ms) of a file or of everything below a folder: what the build
 * scripts' `--if-stale` compares with their output (build-server.mjs, build-viewer.mjs).
 */
import fs from 'node:fs';
import path from 'node:path';

/** @param {string} p a file or folder @returns {number} */
export function newestMtime(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const n of fs.readdirSync(p)) m = Math.max(m, newestMtime(path.join(p, n)));
  return m;
}
