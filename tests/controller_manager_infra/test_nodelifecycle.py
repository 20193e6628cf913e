"""The node lifecycle controller against a real API server, with kubelets simulated by the test:
the test registers Nodes, renews their Leases (or stops) and posts their status."""

from __future__ import annotations

import time

from tests.controller_manager_infra.helpers import FakeKubelet, Heartbeat
from tests.support.component import wait_for

UNREACHABLE_NE = "node.kubernetes.io/unreachable:NoExecute"
UNREACHABLE_NS = "node.kubernetes.io/unreachable:NoSchedule"
NOT_READY_NE = "node.kubernetes.io/not-ready:NoExecute"
NOT_READY_NS = "node.kubernetes.io/not-ready:NoSchedule"


def tolerate_unreachable(seconds: int | None) -> list[dict]:
    t = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return [t]


def test_silent_node_goes_unknown_is_tainted_and_its_pods_are_evicted_at_the_configured_rate(cluster_factory):
    c = cluster_factory("nodelifecycle", "--deleting-pods-qps", "1", "--deleting-pods-burst", "1")
    n1, n2 = FakeKubelet(c, "node-1"), FakeKubelet(c, "node-2")
    n1.register(), n2.register()
    with Heartbeat(c, ["node-1", "node-2"]) as beat:
        wait_for(lambda: c.events("default", "RegisteredNode"), timeout=10, what="RegisteredNode events")
        msgs = {e["message"] for e in c.events("default", "RegisteredNode")}
        assert "Node node-1 event: Registered Node node-1 in Controller" in msgs
        doomed = [c.pod(f"short-{i}", node="node-1", tolerations=tolerate_unreachable(1)) for i in range(3)]
        c.set_pod_status(doomed[0], ip="10.0.0.1", ready=True)
        stays = c.pod("forever", node="node-1", tolerations=tolerate_unreachable(None))
        elsewhere = c.pod("elsewhere", node="node-2", tolerations=tolerate_unreachable(1))

        beat.alive.discard("node-1")  # SIGKILL, as far as the controller can tell
        wait_for(lambda: n1.ready_status() == "Unknown", timeout=15, what="node-1 Ready=Unknown")
        ready = next(x for x in n1.node()["status"]["conditions"] if x["type"] == "Ready")
        assert ready["reason"] == "NodeStatusUnknown"
        assert ready["message"] == "Kubelet stopped posting node status."
        assert all(x["status"] == "Unknown" for x in n1.node()["status"]["conditions"])
        wait_for(
            lambda: {UNREACHABLE_NE, UNREACHABLE_NS} <= n1.taints(), timeout=10, what="unreachable taints"
        )
        assert n2.ready_status() == "True" and not n2.taints()
        wait_for(lambda: c.events("default", "NodeNotReady"), timeout=10, what="NodeNotReady event")
        assert any(
            e["message"] == "Node node-1 status is now: NodeNotReady"
            for e in c.events("default", "NodeNotReady")
        )

        gone_at: dict[str, float] = {}

        def all_evicted() -> bool:
            for p in doomed:
                name = p["metadata"]["name"]
                if name not in gone_at and c.get(f"/api/v1/namespaces/default/pods/{name}") is None:
                    gone_at[name] = time.monotonic()
            return len(gone_at) == len(doomed)

        wait_for(all_evicted, timeout=20, interval=0.02, what="pods with a 1 s toleration evicted")
        # 3 deletions at 1/s with a burst of 1 cannot all happen within much less than 2 s.
        assert max(gone_at.values()) - min(gone_at.values()) >= 1.5, gone_at
        evictions = {e["message"] for e in c.events("default", "TaintManagerEviction")}
        assert {f"Marking for deletion Pod default/short-{i}" for i in range(3)} <= evictions
        assert c.get(f"/api/v1/namespaces/default/pods/{stays['metadata']['name']}") is not None
        assert c.get(f"/api/v1/namespaces/default/pods/{elsewhere['metadata']['name']}") is not None

        # The kubelet comes back: it renews its Lease and posts Ready; the taints go.
        beat.alive.add("node-1")
        n1.post_status(True)
        wait_for(lambda: not n1.taints(), timeout=10, what="taints removed from a Ready node")
        assert n1.ready_status() == "True"


def test_pods_on_an_unknown_node_are_marked_not_ready(cluster_factory):
    c = cluster_factory("nodelifecycle")
    n1, n2 = FakeKubelet(c, "node-1"), FakeKubelet(c, "node-2")
    n1.register(), n2.register()
    with Heartbeat(c, ["node-2"]):
        pod = c.pod("web", node="node-1")
        c.set_pod_status(pod, ip="10.0.0.9", ready=True)

        def pod_ready() -> str:
            live = c.get("/api/v1/namespaces/default/pods/web") or {}
            return next(x["status"] for x in live["status"]["conditions"] if x["type"] == "Ready")

        wait_for(lambda: pod_ready() == "False", timeout=15, what="pod Ready=False")
        wait_for(
            lambda: any(e["involvedObject"]["name"] == "web" for e in c.events("default", "NodeNotReady")),
            timeout=10,
            what="NodeNotReady event on the pod",
        )


def test_all_nodes_silent_enters_master_disruption_and_evicts_nothing(cluster_factory):
    c = cluster_factory("nodelifecycle", "--deleting-pods-qps", "100", "--deleting-pods-burst", "10")
    n1, n2 = FakeKubelet(c, "node-1"), FakeKubelet(c, "node-2")
    n1.register(), n2.register()
    with Heartbeat(c, ["node-1", "node-2"]) as beat:
        for node in ("node-1", "node-2"):
            # Three seconds of toleration, not zero: the two Leases fall silent together, but the
            # controller may notice node-1 one monitor pass before node-2. For that pass only one
            # node of two is down, the zone is Normal and node-1 is tainted NoExecute, as
            # Kubernetes would; the taint is lifted when the next pass enters master disruption,
            # and a pod that tolerates it for a few seconds is not evicted meanwhile.
            c.pod(f"p-{node}", node=node, tolerations=tolerate_unreachable(3))
        beat.alive.clear()  # the control plane lost the network, say
        wait_for(
            lambda: n1.ready_status() == "Unknown" and n2.ready_status() == "Unknown",
            timeout=15,
            what="both nodes Unknown",
        )
        wait_for(lambda: "Entering master disruption mode" in c.cm.log_tail(200), timeout=10, what="log line")
        wait_for(
            lambda: UNREACHABLE_NS in n1.taints() and UNREACHABLE_NS in n2.taints(),
            timeout=10,
            what="NoSchedule taints",
        )
        wait_for(lambda: UNREACHABLE_NE not in n1.taints() | n2.taints(), timeout=5, what="no NoExecute taints")
        # For a while (ten monitor periods) nothing is evicted and no NoExecute taint appears.
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            assert UNREACHABLE_NE not in n1.taints() | n2.taints()
            assert c.get("/api/v1/namespaces/default/pods/p-node-1") is not None
            assert c.get("/api/v1/namespaces/default/pods/p-node-2") is not None
            time.sleep(0.2)

        # node-2 comes back: the cluster is only partly down, node-1's pods must move now.
        beat.alive.add("node-2")
        n2.post_status(True)
        wait_for(lambda: "Exiting master disruption mode" in c.cm.log_tail(200), timeout=10, what="exit log")
        wait_for(lambda: UNREACHABLE_NE in n1.taints(), timeout=10, what="NoExecute taint on node-1")
        wait_for(
            lambda: c.get("/api/v1/namespaces/default/pods/p-node-1") is None,
            timeout=15,
            what="p-node-1 evicted once its toleration ran out",
        )
        assert c.get("/api/v1/namespaces/default/pods/p-node-2") is not None


def test_not_ready_node_is_tainted_not_ready_and_pods_leave_when_their_toleration_runs_out(cluster_factory):
    c = cluster_factory("nodelifecycle", "--deleting-pods-qps", "100", "--deleting-pods-burst", "10")
    n1, n2 = FakeKubelet(c, "node-1"), FakeKubelet(c, "node-2")
    n1.register(), n2.register()
    with Heartbeat(c, ["node-1", "node-2"]):
        zero = [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 0,
            }
        ]
        c.pod("zero-toleration", node="node-1", tolerations=zero)
        c.pod(
            "tolerant",
            node="node-1",
            tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
        )
        n1.post_status(False)  # the kubelet itself says NotReady (its lease keeps being renewed)
        wait_for(lambda: {NOT_READY_NE, NOT_READY_NS} <= n1.taints(), timeout=10, what="not-ready taints")
        timeadded = [t for t in n1.node()["spec"]["taints"] if t["effect"] == "NoExecute"][0].get("timeAdded")
        assert timeadded
        wait_for(
            lambda: c.get("/api/v1/namespaces/default/pods/zero-toleration") is None,
            timeout=10,
            what="eviction",
        )
        assert c.get("/api/v1/namespaces/default/pods/tolerant") is not None
        assert n1.ready_status() == "False"  # the kubelet is heard from: its own report stands
        n1.post_status(True)
        wait_for(lambda: not n1.taints(), timeout=10, what="taints gone")


def test_node_that_never_reports_becomes_unknown_after_the_startup_grace_period(cluster_factory):
    c = cluster_factory("nodelifecycle")
    c.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "mute"}})
    FakeKubelet(c, "other").register()
    with Heartbeat(c, ["other"]):
        mute = FakeKubelet(c, "mute")
        wait_for(lambda: mute.ready_status() == "Unknown", timeout=15, what="never-reporting node Unknown")
        ready = next(x for x in mute.node()["status"]["conditions"] if x["type"] == "Ready")
        assert ready["reason"] == "NodeStatusNeverUpdated"
        assert ready["message"] == "Kubelet never posted node status."
        wait_for(lambda: UNREACHABLE_NE in mute.taints(), timeout=10, what="unreachable taint")
