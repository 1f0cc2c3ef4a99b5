/**
 * The real h5pyd clients of ../shared/clients (see its README): 0.24 (`h5pyd/`) and the 1.0 line
 * (`h5pyd-1.0/` with the h5json library it needs in `h5pyd-1.0/h5json-src/`), run with Debian's
 * Python. Tests that need one skip with a message when it is absent, so a plain clone passes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseJsonBody } from '../../src/codec/json.js';
import { PYTHON } from './python.js';
import { REPO, tempRoot } from './server.js';

/** The two client lines in use (issue #25): 0.24 in existing installations, 1.0 for new ones. */
export type ClientLine = '0.24' | '1.0';
export const CLIENT_LINES: ClientLine[] = ['1.0', '0.24'];

const CLIENTS = path.resolve(REPO, '../shared/clients');
/** PYTHONPATH entries of each line. */
const PATHS: Record<ClientLine, string[]> = {
  '0.24': [path.join(CLIENTS, 'h5pyd')],
  '1.0': [path.join(CLIENTS, 'h5pyd-1.0'), path.join(CLIENTS, 'h5pyd-1.0', 'h5json-src')],
};

/** Whether a client line is here (and its package importable by path). */
export function haveClient(line: ClientLine): boolean {
  return fs.existsSync(path.join(PATHS[line][0]!, 'h5pyd', '__init__.py'));
}

/** The message a suite skips with when a line is absent. */
export function missingClient(line: ClientLine): string {
  return `(skipped: h5pyd ${line} is not in ${path.relative(REPO, CLIENTS)}; see its README)`;
}

/** A Python runner with one client line on the path, talking to one server as one user. */
export interface H5pydPython {
  line: ClientLine;
  /** Run a script (text) with arguments; stdout, or an error with stdout and the end of stderr. */
  run(code: string, args?: string[]): string;
  /** Run a script that prints one JSON document (NaN literals allowed). */
  json(code: string, args?: string[]): any;
  /** Run a Python file (a tool of test/tools, an app of the client) with arguments; stdout. */
  file(file: string, args?: string[]): string;
  /** The environment the runs get (PYTHONPATH, HS_ENDPOINT, HS_USERNAME, HS_PASSWORD, HOME). */
  env: NodeJS.ProcessEnv;
}

/**
 * A runner of `line` against the server at `url`; `user`/`password` become HS_USERNAME and
 * HS_PASSWORD (defaults: a user single-user mode accepts), HOME a fresh directory (no ~/.hscfg).
 */
export function h5pydPython(line: ClientLine, url: string, opts: { user?: string; password?: string } = {}): H5pydPython {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PYTHONPATH: PATHS[line].join(path.delimiter),
    HS_ENDPOINT: url,
    HS_USERNAME: opts.user ?? 'test_user1',
    HS_PASSWORD: opts.password ?? 'test',
    HOME: tempRoot('h5store-h5pyd-home-'),
  };
  const exec = (args: string[]): string => {
    try {
      return execFileSync(PYTHON, args, { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 << 20 });
    } catch (e) {
      const x = e as { status?: number; stdout?: string; stderr?: string };
      throw new Error(`python (h5pyd ${line}) exited with ${x.status}\n${(x.stdout ?? '').slice(-2000)}\n${(x.stderr ?? '').slice(-4000)}`);
    }
  };
  return {
    line,
    env,
    run: (code, args = []) => exec(['-c', code, ...args]),
    json: (code, args = []) => parseJsonBody(exec(['-c', code, ...args])),
    file: (file, args = []) => exec([file, ...args]),
  };
}
