"""A real API server per backend and a real controller-manager running the resourcequota controller."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port
from tests.support.fixtures import new_namespace

apiserver = fixtures.apiserver_per_backend


@pytest.fixture(scope="module")
def manager(apiserver: APIServerProcess) -> Iterator[ComponentProcess]:
    port = free_port()
    proc = ComponentProcess("controller_manager", [
        "--master", apiserver.url, "--port", str(port), "--controllers", "resourcequota",
        "--resource-quota-sync-period", "2s", "--informer-backoff-max", "1s",
    ], health_port=port).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def api(apiserver: APIServerProcess, manager: ComponentProcess) -> Iterator[httpx.Client]:
    with apiserver.client() as c:
        yield c


@pytest.fixture
def ns(api: httpx.Client) -> str:
    return new_namespace(api, "q")
