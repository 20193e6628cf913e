"""Fixtures many test packages share: one real API server per module and an HTTP client for it.

Import them into a package's conftest.py (`from tests.support.fixtures import api, apiserver`);
tests in a module share the server and keep out of each other's way with unique names.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.apiserver import APIServerProcess


@pytest.fixture(scope="module")
def apiserver() -> Iterator[APIServerProcess]:
    server = APIServerProcess().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="module")
def api(apiserver: APIServerProcess) -> Iterator[httpx.Client]:
    with apiserver.client() as c:
        yield c
