"""The DaemonSet controller end to end: a real API server, controller-manager (daemonset and the
garbage collector), scheduler and kubelets as processes, driven with the real kubectl.

The manifest is Kubernetes' documentation example, `fluentd-elasticsearch`, unchanged but for its
namespace: one log-collector pod per node, placed by the default scheduler through node affinity.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]
MERGE = {"Content-Type": "application/merge-patch+json"}
NODES = ["dsnode-0", "dsnode-1", "dsnode-2"]
OLD_IMAGE = "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"
FLUENTD: Obj = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "fluentd-elasticsearch", "labels": {"k8s-app": "fluentd-logging"}},
    "spec": {
        "selector": {"matchLabels": {"name": "fluentd-elasticsearch"}},
        "template": {
            "metadata": {"labels": {"name": "fluentd-elasticsearch"}},
            "spec": {
                "tolerations": [
                    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                ],
                "containers": [{
                    "name": "fluentd-elasticsearch",
                    "image": "quay.io/fluentd_elasticsearch/fluentd:v2.5.2",
                    "resources": {"limits": {"memory": "200Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}},
                    "volumeMounts": [{"name": "varlog", "mountPath": "/var/log"}],
                }],
                "terminationGracePeriodSeconds": 30,
                "volumes": [{"name": "varlog", "hostPath": {"path": "/var/log"}}],
            },
        },
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def ds_cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    manager = start_manager(controllers="daemonset,garbagecollector")
    with scheduler_and_kubelet(apiserver, "dsnode"):
        yield manager


def ds_path(ns: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{ns}/daemonsets" + (f"/{name}" if name else "")


def pods_by_node(api: httpx.Client, ns: str) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for p in api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]:
        if not p["metadata"].get("deletionTimestamp"):
            out.setdefault(p["spec"].get("nodeName") or "", []).append(p)
    return out


def running_on(api: httpx.Client, ns: str) -> dict[str, str] | None:
    """node → image of its one Running daemon pod, once every pod is Running and bound."""
    by_node = pods_by_node(api, ns)
    if "" in by_node or any(len(ps) != 1 or ps[0]["status"].get("phase") != "Running" for ps in by_node.values()):
        return None
    return {n: ps[0]["spec"]["containers"][0]["image"] for n, ps in by_node.items()}


def wait_running(api: httpx.Client, ns: str, until: Callable[[dict[str, str]], bool], what: str) -> dict[str, str]:
    """node → image, once `until` holds for it."""

    def check() -> dict[str, str] | None:
        got = running_on(api, ns)
        return got if got is not None and until(got) else None

    return wait_for(check, timeout=40, what=what)


def label_node(api: httpx.Client, node: str, labels: dict[str, str | None]) -> None:
    body = json.dumps({"metadata": {"labels": labels}})
    assert api.patch(f"/api/v1/nodes/{node}", content=body, headers=MERGE).status_code == 200


def test_one_pod_per_node_through_the_scheduler(
    ds_cluster: ComponentProcess, api: httpx.Client, kubectl: Callable[..., str]
) -> None:
    ns = new_namespace(api, "ds")
    assert api.post(ds_path(ns), json=FLUENTD).status_code == 201
    images = wait_running(api, ns, lambda r: len(r) == 3, "a pod on each node")
    assert sorted(images) == NODES
    pod = pods_by_node(api, ns)["dsnode-1"][0]
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["dsnode-1"]}]}
    ]
    added = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
    assert {("node.kubernetes.io/unreachable", "NoExecute"), ("node.kubernetes.io/unschedulable", "NoSchedule")} \
        <= added
    assert pod["metadata"]["labels"]["controller-revision-hash"]

    def settled() -> Obj | None:
        st = api.get(ds_path(ns, "fluentd-elasticsearch")).json().get("status") or {}
        return st if st.get("numberAvailable") == 3 else None

    st = wait_for(settled, what="status")
    assert (st["desiredNumberScheduled"], st["currentNumberScheduled"], st["numberReady"],
            st["updatedNumberScheduled"], st["numberMisscheduled"]) == (3, 3, 3, 3, 0)  # fmt: skip
    (row,) = kubectl("get", "ds", "-n", ns, "--no-headers").splitlines()
    assert row.split()[:6] == ["fluentd-elasticsearch", "3", "3", "3", "3", "3"]


def test_node_selector_and_taints_decide_where_it_runs(ds_cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "ds")
    ds = copy.deepcopy(FLUENTD)
    ds["metadata"]["name"] = "ssd-only"
    ds["spec"]["template"]["spec"]["nodeSelector"] = {f"disk-{ns}": "ssd"}
    assert api.post(ds_path(ns), json=ds).status_code == 201
    label_node(api, "dsnode-0", {f"disk-{ns}": "ssd"})
    wait_running(api, ns, lambda r: sorted(r) == ["dsnode-0"], "only the labelled node")
    label_node(api, "dsnode-2", {f"disk-{ns}": "ssd"})
    wait_running(api, ns, lambda r: sorted(r) == ["dsnode-0", "dsnode-2"], "a second node")
    label_node(api, "dsnode-0", {f"disk-{ns}": None})
    wait_running(api, ns, lambda r: sorted(r) == ["dsnode-2"], "the unlabelled node loses it")

    taint = {"spec": {"taints": [{"key": f"evict-{ns}", "value": "x", "effect": "NoExecute"}]}}
    assert api.patch("/api/v1/nodes/dsnode-2", content=json.dumps(taint), headers=MERGE).status_code == 200
    try:
        wait_for(lambda: not pods_by_node(api, ns), what="an untolerated NoExecute taint removes the pod")
    finally:
        api.patch("/api/v1/nodes/dsnode-2", content=json.dumps({"spec": {"taints": None}}), headers=MERGE)
        label_node(api, "dsnode-2", {f"disk-{ns}": None})


def test_rolling_update_history_and_undo(
    ds_cluster: ComponentProcess, api: httpx.Client, kubectl: Callable[..., str]
) -> None:
    ns = new_namespace(api, "ds")
    assert api.post(ds_path(ns), json=FLUENTD).status_code == 201
    wait_running(api, ns, lambda r: len(r) == 3, "three pods")
    kubectl("-n", ns, "rollout", "status", "ds/fluentd-elasticsearch", "--timeout=30s")
    kubectl("-n", ns, "set", "image", "ds/fluentd-elasticsearch", "fluentd-elasticsearch=fluentd:v3")
    out = kubectl("-n", ns, "rollout", "status", "ds/fluentd-elasticsearch", "--timeout=60s")
    assert 'daemon set "fluentd-elasticsearch" successfully rolled out' in out
    wait_running(api, ns, lambda r: set(r.values()) == {"fluentd:v3"}, "new pods")

    hist = kubectl("-n", ns, "rollout", "history", "ds/fluentd-elasticsearch")
    assert [ln.split()[0] for ln in hist.splitlines()[2:] if ln.strip()] == ["1", "2"]
    kubectl("-n", ns, "rollout", "undo", "ds/fluentd-elasticsearch")
    kubectl("-n", ns, "rollout", "status", "ds/fluentd-elasticsearch", "--timeout=60s")
    wait_running(api, ns, lambda r: set(r.values()) == {OLD_IMAGE}, "the old image back")
    hist = kubectl("-n", ns, "rollout", "history", "ds/fluentd-elasticsearch")
    assert [ln.split()[0] for ln in hist.splitlines()[2:] if ln.strip()] == ["2", "3"]  # revision 1 became 3


def test_on_delete_waits_for_someone_to_delete_the_old_pods(
    ds_cluster: ComponentProcess, api: httpx.Client, kubectl: Callable[..., str]
) -> None:
    ns = new_namespace(api, "ds")
    ds = copy.deepcopy(FLUENTD)
    ds["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert api.post(ds_path(ns), json=ds).status_code == 201
    wait_running(api, ns, lambda r: len(r) == 3, "three pods")
    kubectl("-n", ns, "set", "image", "ds/fluentd-elasticsearch", "fluentd-elasticsearch=fluentd:v3")
    wait_for(lambda: api.get(ds_path(ns, "fluentd-elasticsearch")).json()["status"].get("observedGeneration") == 2,
             what="the new generation seen")  # fmt: skip
    old = pods_by_node(api, ns)["dsnode-0"][0]["metadata"]["name"]
    assert set((running_on(api, ns) or {}).values()) == {OLD_IMAGE}
    kubectl("-n", ns, "delete", "pod", old)
    images = wait_running(api, ns, lambda r: r.get("dsnode-0") == "fluentd:v3", "v3 on the node whose pod went")
    assert images["dsnode-1"] == images["dsnode-2"] == OLD_IMAGE
