"""Fixtures for the endpointslicemirroring controller's tests: a real API server per storage backend
(module-scoped) and a real controller-manager running `endpointslicemirroring` next to `endpointslice`
(which takes over a Service that gains a selector), with the flags a test module names in
`MANAGER_FLAGS`. Tests share the server and keep out of each other's way with a namespace each.

Mirroring runs with one worker, so its queue is worked in order: `barrier()` mirrors one more
Endpoints and waits for it, after which every earlier change has been looked at. That is how a test
proves that something was *not* mirrored without sleeping.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for

Obj = dict[str, Any]
MIRRORED = "endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io"
CONTROLLERS = "endpointslicemirroring,endpointslice"

apiserver = fixtures.apiserver_per_backend


@pytest.fixture(scope="module")
def c(request: pytest.FixtureRequest, apiserver: APIServerProcess) -> Iterator[Cluster]:
    flags = getattr(request.module, "MANAGER_FLAGS", ())
    cm = start_manager(apiserver, CONTROLLERS, "--mirroring-concurrent-service-endpoint-syncs", "1", *flags)
    try:
        yield Cluster(apiserver, cm)
    finally:
        cm.stop()


@pytest.fixture
def ns(c: Cluster) -> str:
    name = f"mirror-{uuid.uuid4().hex[:8]}"
    c.namespace(name)
    return name


def service(c: Cluster, ns: str, name: str, selector: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}
    if selector is not None:
        spec["selector"] = selector
    return c.post(f"/api/v1/namespaces/{ns}/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns}, "spec": spec})  # fmt: skip


def endpoints(c: Cluster, ns: str, name: str, subsets: list[Obj], **meta: Any) -> Obj:
    return c.post(f"/api/v1/namespaces/{ns}/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns, **meta},
        "subsets": subsets})  # fmt: skip


def subset(*ips: str, not_ready: tuple[str, ...] = (), ports: list[Obj] | None = None) -> Obj:
    out: Obj = {"ports": [{"name": "http", "port": 8080, "protocol": "TCP"}] if ports is None else ports}
    if ips:
        out["addresses"] = [{"ip": ip} for ip in ips]
    if not_ready:
        out["notReadyAddresses"] = [{"ip": ip} for ip in not_ready]
    return out


def slices(c: Cluster, ns: str, name: str, managed_by: str = MIRRORED) -> list[Obj]:
    return c.items(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices"
                   f"?labelSelector=kubernetes.io/service-name={name},{managed_by}")  # fmt: skip


def addresses(c: Cluster, ns: str, name: str) -> dict[str, bool]:
    """Mirrored address -> its ready condition, over every slice of `name`."""
    return {e["addresses"][0]: e["conditions"]["ready"] for s in slices(c, ns, name) for e in s.get("endpoints") or []}


def barrier(c: Cluster, ns: str) -> None:
    """Mirror one more Endpoints and wait for it: every change made before has been synced."""
    name = f"barrier-{uuid.uuid4().hex[:6]}"
    service(c, ns, name)
    endpoints(c, ns, name, [subset("10.99.0.1")])
    wait_for(lambda: addresses(c, ns, name) == {"10.99.0.1": True}, timeout=15, what=f"barrier {name} mirrored")
