"""A watch from a resourceVersion the watch cache no longer holds is answered 410 Expired."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.apiserver import APIServerProcess


@pytest.fixture(scope="module")
def small_cache_server(request: pytest.FixtureRequest) -> Iterator[APIServerProcess]:
    server = APIServerProcess(args=["--watch-cache-size", "5"]).start()
    try:
        yield server
    finally:
        server.cleanup()


def test_too_old_resource_version_gets_an_expired_error_event(small_cache_server: APIServerProcess) -> None:
    with small_cache_server.client() as api:
        first = api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c0"}}).json()
        for i in range(1, 12):
            api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": f"c{i}"}})
        # The cache holds the last 5 events; wait until it has seen the last write.
        last_rv = api.get("/api/v1/namespaces/default/configmaps/c11").json()["metadata"]["resourceVersion"]
        with api.stream(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            params={"watch": "1", "resourceVersion": str(int(last_rv) - 1)},
        ) as r:
            line = next(ln for ln in r.iter_lines() if ln)
            assert json.loads(line)["object"]["metadata"]["name"] == "c11"
        with api.stream(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            params={"watch": "1", "resourceVersion": first["metadata"]["resourceVersion"]},
        ) as r:
            assert r.status_code == 200
            events = [json.loads(ln) for ln in r.iter_lines() if ln]
        assert len(events) == 1 and events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert status["code"] == 410 and status["reason"] == "Expired"
        assert status["message"].startswith("too old resource version")
