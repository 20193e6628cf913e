"""`mini-apiserver --sqlite-synchronous`: normal (the default) or full; anything else is refused."""

from __future__ import annotations

import subprocess
import sys

from tests.support.apiserver import APIServerProcess
from tests.support.component import REPO


def test_an_unknown_synchronous_mode_is_refused_before_anything_starts() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "apiserver", "--sqlite-synchronous", "extra", "--port", "1"],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--sqlite-synchronous" in done.stderr and "must be full or normal" in done.stderr


def test_full_serves_and_keeps_what_it_acknowledged_across_a_sigkill() -> None:
    api = APIServerProcess(args=["--sqlite-synchronous", "full"]).start()
    try:
        with api.client() as client:
            cm = "/api/v1/namespaces/default/configmaps"
            assert client.post(cm, json={"metadata": {"name": "durable"}}).status_code == 201
            api.kill()
            api.start()
            assert client.get(f"{cm}/durable").status_code == 200
    finally:
        api.cleanup()
