#!/usr/bin/env python3
"""A long-lived Python for the tests' h5py oracles (test/helpers/pyworker.ts): runs scripts and
test/tools scripts one after another without paying Python's, numpy's and h5py's start (~0.3 s
a run) each time.

usage: py_worker.py REQUEST_FIFO ANSWER_FIFO

Each request is one JSON line: {"script": text} or {"tool": path}, with "args". The script runs
as `python3 -c script args...` would (fresh globals, __name__ "__main__", sys.argv), its standard
output captured; then every HDF5 file it left open is closed, as the end of a process would.
Each answer is a line with the byte length of a JSON object {"status", "stdout", "stderr"}, then
that object. The environment is the one the worker started with (the caller keeps one worker per
environment). Ends at the end of its request stream.
"""
import contextlib
import gc
import io
import json
import runpy
import sys
import traceback

import h5py  # noqa: F401 (imported once, for every script)
import numpy  # noqa: F401


def close_open_files():
    gc.collect()
    for fid in h5py.h5f.get_obj_ids(types=h5py.h5f.OBJ_FILE):
        try:
            while fid.valid:
                fid.close()
        except Exception:
            pass


def run(req):
    out, err = io.StringIO(), io.StringIO()
    status = 0
    argv = sys.argv
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                if "tool" in req:
                    sys.argv = [req["tool"], *req["args"]]
                    runpy.run_path(req["tool"], run_name="__main__")
                else:
                    sys.argv = ["-c", *req["args"]]
                    exec(compile(req["script"], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
            except SystemExit as e:
                code = e.code
                status = 0 if code is None else code if isinstance(code, int) else 1
                if not isinstance(code, (int, type(None))):
                    print(code, file=sys.stderr)
            except BaseException:
                status = 1
                traceback.print_exc()
    finally:
        sys.argv = argv
        close_open_files()
    return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main():
    with open(sys.argv[1], "r", encoding="utf-8") as requests, open(sys.argv[2], "wb") as answers:
        for line in requests:
            if not line.strip():
                continue
            body = json.dumps(run(json.loads(line))).encode()
            answers.write(b"%d\n" % len(body) + body)
            answers.flush()


if __name__ == "__main__":
    main()
