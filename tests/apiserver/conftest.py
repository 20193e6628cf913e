"""Fixtures: a real mini-apiserver process per backend (embedded SQLite and a real etcd)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.etcd import EtcdProcess, etcd_process  # noqa: F401  (fixtures)
from tests.support.fixtures import new_namespace, server_for_backend


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def apiserver(request: pytest.FixtureRequest) -> Iterator[APIServerProcess]:
    """One API server per backend for a whole test module; tests use their own namespaces."""
    server = server_for_backend(request, request.param, ["--watch-bookmark-interval", "0.2"])
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def api(apiserver: APIServerProcess) -> Iterator[httpx.Client]:
    with apiserver.client() as c:
        yield c


@pytest.fixture
def ns(api: httpx.Client) -> str:
    """A fresh namespace for one test."""
    return new_namespace(api, "t")


def pod(name: str, *, image: str = "nginx:1.25", labels: dict[str, str] | None = None, **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}], **spec},
    }


def deployment(name: str, replicas: int = 2) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "nginx:1.7.9", "ports": [{"containerPort": 80}]},
                        {
                            "name": "sidecar",
                            "image": "busybox:1.36",
                            "ports": [{"containerPort": 9000, "name": "metrics"}],
                        },
                    ]
                },
            },
        },
    }
