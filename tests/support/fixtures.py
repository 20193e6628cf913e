"""Fixtures many test packages share: one real API server per module and an HTTP client for it.

Import them into a package's conftest.py (`from tests.support.fixtures import api, apiserver`);
tests in a module share the server and keep out of each other's way with unique names.
"""

from __future__ import annotations

import uuid
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


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def apiserver_per_backend(request: pytest.FixtureRequest) -> Iterator[APIServerProcess]:
    """The module's tests run twice, against one API server per storage backend. Use it as
    `apiserver = fixtures.apiserver_per_backend` in a conftest (the etcd is tests/conftest.py's)."""
    server = server_for_backend(request, request.param)
    try:
        yield server
    finally:
        server.cleanup()


def server_for_backend(request: pytest.FixtureRequest, backend: str, args: list[str] | None = None) -> APIServerProcess:
    """A started API server on `backend` ("sqlite", or "etcd" on the session's test etcd)."""
    etcd_url = request.getfixturevalue("etcd_server").url if backend == "etcd" else None
    return APIServerProcess(etcd_url=etcd_url, args=args).start()


def new_namespace(api: httpx.Client, prefix: str) -> str:
    """Create a namespace with a unique name, so tests sharing a server keep out of each other's way."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    r = api.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert r.status_code == 201, r.text
    return name
