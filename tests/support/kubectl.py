"""The real `kubectl` for compatibility tests: found on PATH (or $KUBECTL_BINARY).

Missing, a test skips — except under REQUIRE_KUBECTL=1 (CI sets it), where it fails, so a machine
without kubectl can never turn the compatibility suite green by skipping it.
"""

from __future__ import annotations

import os
import shutil

import pytest


def kubectl_binary() -> str:
    path = os.environ.get("KUBECTL_BINARY") or shutil.which("kubectl")
    if path is None:
        if os.environ.get("REQUIRE_KUBECTL") == "1":
            pytest.fail("kubectl not installed but REQUIRE_KUBECTL=1 (apt-get install kubernetes-client)")
        pytest.skip("kubectl not installed")
    return path
