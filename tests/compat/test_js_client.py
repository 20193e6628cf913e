"""The JavaScript client (`@kubernetes/client-node`, pinned in tests/compat/js/package-lock.json)
against the real server: create, list by label, get, a watch resumed from a list's
resourceVersion, and server-side apply with a conflict and `force`.

Node and npm are needed; the package comes from the npm registry (`npm ci` on first use, into
tests/compat/js/node_modules). Missing, the test skips — except under REQUIRE_NODE=1 (CI sets it),
where it fails. The kubeconfig says `insecure-skip-tls-verify: true` because the client refuses a
plain-HTTP server without it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.apiserver import APIServerProcess

JS_DIR = Path(__file__).parent / "js"


def _require(reason: str) -> None:
    if os.environ.get("REQUIRE_NODE") == "1":
        pytest.fail(f"{reason} but REQUIRE_NODE=1")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def node() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _require("node and npm are not installed (apt-get install nodejs npm)")
    assert node is not None and npm is not None
    if not (JS_DIR / "node_modules" / "@kubernetes" / "client-node").is_dir():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=JS_DIR, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            _require(f"npm ci failed in {JS_DIR}: {done.stderr[-500:]}")
    return node


def test_javascript_client_crud_watch_and_server_side_apply(
    node: str, apiserver: APIServerProcess, ns: str, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: mini\n  cluster:\n    server: {apiserver.url}\n    insecure-skip-tls-verify: true\n"
        "users:\n- name: student\n  user: {}\n"
        "contexts:\n- name: mini\n  context:\n    cluster: mini\n    user: student\n"
        "current-context: mini\n"
    )
    done = subprocess.run(
        [node, str(JS_DIR / "flows.mjs"), str(kubeconfig), ns], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    steps = {line["step"]: line["value"] for line in map(json.loads, done.stdout.splitlines())}

    assert steps["list"] == ["a"]
    assert steps["get"] == {"k": "v"}
    assert steps["watch"] == ["DELETED", "b"]
    assert steps["apply"] == [["js-student", "Apply"]]
    code, reason, message = steps["conflict"]
    assert (code, reason) == (409, "Conflict")
    assert message == 'Apply failed with 1 conflict: conflict with "js-student": .data.a'
    data, managers = steps["force"]
    assert data == {"a": "2"}
    assert managers == ["js-other"]
