"""Fixtures for the Service (LoadBalancer) controller's tests: a real API server per storage backend
and, per test, a real controller-manager running `service-lb-controller` with the pool the test
chooses (`lb("127.1.0.9/32")`).

The pool is the controller's memory, so tests must not see each other's Services: when a test ends,
its LoadBalancer Services are deleted while its controller-manager still runs (it must release
them and lift their finalizers), and only then is the process stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for

FINALIZER = "service.kubernetes.io/load-balancer-cleanup"


apiserver = fixtures.apiserver_per_backend


def start_lb_manager(api: APIServerProcess, pool: str | None, *args: str) -> ComponentProcess:
    flags = ["--load-balancer-ip-pool", pool] if pool else []  # None: the default pool
    return start_manager(api, "service-lb-controller", *flags, *args)


@pytest.fixture
def lb(apiserver: APIServerProcess) -> Iterator[Callable[..., Cluster]]:
    """`lb("127.1.0.8/29")` → a Cluster whose controller-manager hands out that pool."""
    managers: list[ComponentProcess] = []

    def start(pool: str | None = None, *args: str) -> Cluster:
        cm = start_lb_manager(apiserver, pool, *args)
        managers.append(cm)
        return Cluster(apiserver, cm)

    yield start
    running = [cm for cm in managers if cm.running]
    if running:
        c = Cluster(apiserver, running[-1])
        for svc in c.items("/api/v1/services"):
            if (svc.get("spec") or {}).get("type") == "LoadBalancer" or FINALIZER in (
                svc["metadata"].get("finalizers") or []
            ):
                md = svc["metadata"]
                c.http.request("DELETE", f"/api/v1/namespaces/{md['namespace']}/services/{md['name']}")
        wait_for(
            lambda: not any(FINALIZER in (s["metadata"].get("finalizers") or []) for s in c.items("/api/v1/services")),
            what="every load balancer released",
        )
    for cm in managers:
        cm.stop()
