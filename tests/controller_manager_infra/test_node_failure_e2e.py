"""End to end, the node-failure lab: real kubelets, scheduler and controller-manager.

SIGKILL one kubelet: after --node-monitor-grace-period its node is Unknown and tainted unreachable,
its pods are evicted once their (here 2 s) default toleration runs out, and the ReplicationController
replaces them on the surviving node. Restart the kubelet: the node is Ready again, its taints gone.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for


@pytest.fixture(scope="module")
def apiserver() -> Iterator[APIServerProcess]:
    api = APIServerProcess(args=["--default-unreachable-toleration-seconds", "2"]).start()
    try:
        yield api
    finally:
        api.cleanup()


def kubelet(api: APIServerProcess, name: str) -> ComponentProcess:
    port = free_port()
    args = [
        "--master",
        api.url,
        "--node-name",
        name,
        "--port",
        str(port),
        "--node-status-update-frequency",
        "0.5",
        "--node-lease-duration",
        "2",
        "--pod-startup-delay",
        "0.2s",
    ]
    return ComponentProcess("kubelet", args, health_port=port).start(timeout=40)


def test_killed_kubelet_node_goes_unknown_pods_are_evicted_and_replaced_and_it_recovers(apiserver):
    procs: list[ComponentProcess] = []
    try:
        alpha, beta = kubelet(apiserver, "alpha"), kubelet(apiserver, "beta")
        procs += [alpha, beta]
        sched_port = free_port()
        procs.append(
            ComponentProcess(
                "scheduler", ["--master", apiserver.url, "--port", str(sched_port)], health_port=sched_port
            ).start(timeout=40)
        )
        cm = start_manager(
            apiserver,
            "nodelifecycle,replicationcontroller",
            "--deleting-pods-qps",
            "10",
            "--deleting-pods-burst",
            "10",
        )
        procs.append(cm)
        c = Cluster(apiserver, cm)

        def node_ready(name: str) -> str | None:
            node = c.get(f"/api/v1/nodes/{name}") or {}
            return next(
                (x["status"] for x in node.get("status", {}).get("conditions") or [] if x["type"] == "Ready"),
                None,
            )

        wait_for(
            lambda: node_ready("alpha") == "True" and node_ready("beta") == "True", timeout=30, what="nodes"
        )
        c.post(
            "/api/v1/namespaces/default/replicationcontrollers",
            {
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 4,
                    "selector": {"app": "web"},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "containers": [{"name": "web", "image": "nginx"}],
                            "terminationGracePeriodSeconds": 1,
                        },
                    },
                },
            },
        )

        def web_pods() -> list[dict]:
            return c.items("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")

        def running_on(node: str) -> list[dict]:
            return [
                p
                for p in web_pods()
                if p["spec"].get("nodeName") == node
                and p.get("status", {}).get("phase") == "Running"
                and not p["metadata"].get("deletionTimestamp")
            ]

        wait_for(
            lambda: len(running_on("alpha")) + len(running_on("beta")) == 4 and running_on("beta"),
            timeout=40,
            what="4 replicas running, some on beta",
        )
        doomed = {p["metadata"]["name"] for p in running_on("beta")}

        beta.kill()  # SIGKILL: no goodbye, the Lease and the status just stop
        wait_for(lambda: node_ready("beta") == "Unknown", timeout=30, what="beta Unknown")
        wait_for(
            lambda: any(
                t["key"] == "node.kubernetes.io/unreachable"
                for t in c.get("/api/v1/nodes/beta")["spec"].get("taints") or []
            ),
            timeout=15,
            what="unreachable taint on beta",
        )

        def evicted() -> bool:
            live = {p["metadata"]["name"]: p for p in web_pods()}
            return all(n not in live or live[n]["metadata"].get("deletionTimestamp") for n in doomed)

        wait_for(evicted, timeout=30, what="beta's pods evicted")
        wait_for(lambda: len(running_on("alpha")) == 4, timeout=40, what="replacements running on alpha")
        assert any(
            e["reason"] == "TaintManagerEviction" for e in c.items("/api/v1/namespaces/default/events")
        )

        procs.append(beta.start(timeout=40))  # the machine comes back
        wait_for(lambda: node_ready("beta") == "True", timeout=30, what="beta Ready again")
        wait_for(
            lambda: not (c.get("/api/v1/nodes/beta")["spec"].get("taints") or []),
            timeout=15,
            what="beta's taints removed",
        )
    finally:
        for p in reversed(procs):
            p.stop()
