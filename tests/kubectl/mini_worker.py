"""Runs many mini-kubectl command lines in one long-lived process (test support).

Starting Python and importing the model classes costs about a second per command; a parity
suite runs a hundred commands. This worker is started once per test module and runs each command
line through the real entry point, `kubectl.main.main(argv)`, exactly as `python -m kubectl` would,
with its own stdin, stdout, stderr and environment. Protocol: one JSON request per line on stdin
({"argv": [...], "stdin": "...", "env": {...}}), one JSON reply per line on stdout
({"rc": 0, "out": "...", "err": "..."}).
"""

from __future__ import annotations

import io
import json
import os
import sys


def run_one(argv: list[str], stdin: str, env: dict[str, str]) -> dict[str, object]:
    from kubectl.main import main

    saved_env = dict(os.environ)
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    rc = 0
    try:
        main(argv)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # a crash is a test failure, reported as such
        err.write(f"CRASH: {type(exc).__name__}: {exc}\n")
        rc = 99
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.environ.clear()
        os.environ.update(saved_env)
    return {"rc": rc, "out": out.getvalue(), "err": err.getvalue()}


def serve() -> None:
    protocol_out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        reply = run_one(req["argv"], req.get("stdin") or "", req.get("env") or {})
        protocol_out.write(json.dumps(reply) + "\n")
        protocol_out.flush()


if __name__ == "__main__":
    serve()
