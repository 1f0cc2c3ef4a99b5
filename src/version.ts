/**
 * h5store's own version, from package.json (one level above `src/` and `dist/`).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

function readVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The version of this h5store (package.json `version`). */
export const H5STORE_VERSION = readVersion();
