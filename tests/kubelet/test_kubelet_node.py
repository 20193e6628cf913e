"""The kubelet's Node and Lease: registration, heartbeats, crash and restart, many nodes in one process."""

from __future__ import annotations

import ipaddress
from datetime import datetime

import httpx

from tests.kubelet.conftest import condition, container_status, create_pod, get, pod_path, unique, wait_pod
from tests.support.component import wait_for

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"


def renew_time(api: httpx.Client, node: str) -> datetime | None:
    resp = api.get(f"{LEASES}/{node}")
    if resp.status_code != 200:
        return None
    return datetime.fromisoformat(resp.json()["spec"]["renewTime"].replace("Z", "+00:00"))


def test_node_registers_with_capacity_labels_cidr_addresses_taints_and_ready(api, start_kubelet):
    name = unique("reg")
    kubelet = start_kubelet(name, "--cpu", "2", "--memory", "4Gi", "--max-pods", "30",
                            "--node-labels", "disk=ssd,zone=a", "--register-with-taints", "dedicated=gpu:NoSchedule",
                            "--address", "127.0.0.1")  # fmt: skip
    node = wait_for(lambda: condition(get(api, f"/api/v1/nodes/{name}"), "Ready") and get(api, f"/api/v1/nodes/{name}"))
    status, spec, labels = node["status"], node["spec"], node["metadata"]["labels"]
    assert status["capacity"] == {"cpu": "2", "memory": "4Gi", "pods": "30", "ephemeral-storage": "100Gi"}
    assert status["allocatable"]["cpu"] == "2" and status["allocatable"]["pods"] == "30"
    assert labels["kubernetes.io/hostname"] == name and labels["kubernetes.io/os"] == "linux"
    assert labels["disk"] == "ssd" and labels["zone"] == "a" and "kubernetes.io/arch" in labels
    assert spec["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert ipaddress.ip_network(spec["podCIDR"]).prefixlen == 24 and spec["podCIDRs"] == [spec["podCIDR"]]
    assert {"type": "InternalIP", "address": "127.0.0.1"} in status["addresses"]
    assert {"type": "Hostname", "address": name} in status["addresses"]
    assert status["daemonEndpoints"]["kubeletEndpoint"]["Port"] == kubelet.health_port
    assert status["nodeInfo"]["kubeletVersion"] == "v1.32.0-mini"
    assert status["nodeInfo"]["containerRuntimeVersion"] == "mini-simulated://0.1"
    ready = condition(node, "Ready")
    assert ready["status"] == "True" and ready["reason"] == "KubeletReady"
    assert ready["message"] == "kubelet is posting ready status"
    assert condition(node, "MemoryPressure")["reason"] == "KubeletHasSufficientMemory"
    assert condition(node, "DiskPressure")["status"] == "False"
    assert condition(node, "PIDPressure")["reason"] == "KubeletHasSufficientPID"
    # an unchanged status is still posted every --node-status-report-frequency: lastHeartbeatTime moves on
    first = ready["lastHeartbeatTime"]
    wait_for(lambda: condition(get(api, f"/api/v1/nodes/{name}"), "Ready")["lastHeartbeatTime"] != first,
             timeout=10, what="a newer lastHeartbeatTime")  # fmt: skip


def test_status_is_posted_again_as_soon_as_the_node_object_says_otherwise(api, start_kubelet):
    """With a long report frequency the kubelet stays quiet, until the Node disagrees with it."""
    name = unique("quiet")
    start_kubelet(name, "--node-status-report-frequency", "10m")
    wait_for(lambda: condition(get(api, f"/api/v1/nodes/{name}"), "Ready")["status"] == "True", what="Ready")
    # what the node lifecycle controller does to a silent node
    conditions = [{**c, "status": "Unknown", "reason": "NodeStatusUnknown"} if c["type"] == "Ready" else c
                  for c in get(api, f"/api/v1/nodes/{name}")["status"]["conditions"]]  # fmt: skip
    r = api.patch(f"/api/v1/nodes/{name}/status", json={"status": {"conditions": conditions}},
                  headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200, r.text
    ready = wait_for(lambda: (c := condition(get(api, f"/api/v1/nodes/{name}"), "Ready"))["status"] == "True" and c,
                     timeout=10, what="the kubelet to post Ready again")  # fmt: skip
    assert ready["reason"] == "KubeletReady"


def test_lease_is_renewed_owned_by_the_node_and_stops_when_the_kubelet_dies(api, start_kubelet, apiserver):
    name = unique("lease")
    kubelet = start_kubelet(name)
    first = wait_for(lambda: renew_time(api, name), what="the node lease")
    lease = get(api, f"{LEASES}/{name}")
    node = get(api, f"/api/v1/nodes/{name}")
    assert lease["spec"]["holderIdentity"] == name and lease["spec"]["leaseDurationSeconds"] == 2
    assert lease["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]
    assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
    wait_for(lambda: renew_time(api, name) > first, timeout=10, what="renewTime to advance")

    # a pod running before the crash, and one bound while the kubelet is down
    before = unique("before")
    create_pod(api, before, name)
    running = wait_pod(api, before, lambda p: p["status"].get("phase") == "Running")
    kubelet.kill()
    dead_at = renew_time(api, name)
    during = unique("during")
    create_pod(api, during, name)
    # nobody renews any more: still the same renewTime well after two renew intervals (0.5 s each)
    wait_for(lambda: (datetime.now(dead_at.tzinfo) - dead_at).total_seconds() > 2.0, timeout=10)
    assert renew_time(api, name) == dead_at

    kubelet.start()
    wait_for(lambda: renew_time(api, name) > dead_at, timeout=15, what="renewals to resume")
    again = wait_pod(api, before, lambda p: p["status"].get("phase") == "Running")
    assert again["status"]["podIP"] == running["status"]["podIP"]  # adopted, not restarted
    assert container_status(again)["containerID"] == container_status(running)["containerID"]
    late = wait_pod(api, during, lambda p: p["status"].get("phase") == "Running", what="the pod bound while down")
    assert late["status"]["podIP"] != running["status"]["podIP"]


def test_many_nodes_in_one_process_get_distinct_pod_cidrs_and_run_their_pods(api, start_kubelet):
    base = unique("sim")
    start_kubelet(base, "--nodes", "3")
    names = [f"{base}-{i}" for i in range(3)]
    nodes = wait_for(lambda: all(condition(get(api, f"/api/v1/nodes/{n}"), "Ready") for n in names)
                     and [get(api, f"/api/v1/nodes/{n}") for n in names], what="3 nodes")  # fmt: skip
    cidrs = [n["spec"]["podCIDR"] for n in nodes]
    assert len(set(cidrs)) == 3
    pods = {}
    for node, cidr in zip(names, cidrs, strict=True):
        pod = unique("p")
        create_pod(api, pod, node)
        pods[pod] = cidr
    for pod, cidr in pods.items():
        p = wait_pod(api, pod, lambda p: p["status"].get("phase") == "Running")
        assert ipaddress.ip_address(p["status"]["podIP"]) in ipaddress.ip_network(cidr)


def test_a_deleted_node_is_registered_again(api, start_kubelet):
    name = unique("gone")
    start_kubelet(name)
    old = wait_for(lambda: get(api, f"/api/v1/nodes/{name}"))
    assert api.delete(f"/api/v1/nodes/{name}").status_code == 200
    new = wait_for(lambda: (n := get(api, f"/api/v1/nodes/{name}"))["metadata"]["uid"] != old["metadata"]["uid"]
                   and n, timeout=10, what="the node to come back")  # fmt: skip
    assert condition(new, "Ready")["status"] == "True"
    wait_for(lambda: get(api, f"{LEASES}/{name}")["metadata"]["ownerReferences"][0]["uid"] == new["metadata"]["uid"],
             timeout=10, what="the lease to point at the new node")  # fmt: skip


def test_pods_of_the_node_are_left_alone_by_other_kubelets(api, start_kubelet):
    mine, other = unique("mine"), unique("other")
    start_kubelet(mine)
    pod = unique("foreign")
    create_pod(api, pod, other)  # bound to a node nobody runs
    running = unique("own")
    create_pod(api, running, mine)
    wait_pod(api, running, lambda p: p["status"].get("phase") == "Running")
    assert get(api, pod_path(pod))["status"].get("phase") == "Pending"
    assert not get(api, pod_path(pod))["status"].get("containerStatuses")


def test_sigterm_stops_the_kubelet_cleanly_and_leaves_the_node(api, start_kubelet):
    name = unique("term")
    kubelet = start_kubelet(name)
    wait_for(lambda: renew_time(api, name), what="the node lease")
    kubelet.stop()
    assert kubelet.proc is not None and kubelet.proc.returncode == 0, kubelet.log_tail()
    assert get(api, f"/api/v1/nodes/{name}")["metadata"]["name"] == name  # a stopped kubelet does not deregister
