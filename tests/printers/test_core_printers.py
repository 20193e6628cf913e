"""Rows of the core/v1 kinds other than pods."""

from typing import Any

from tests.printers.objects import ago, meta, row


def node(
    *, ready: str | None = "True", unschedulable: bool = False, labels: dict[str, str] | None = None
) -> dict:
    conditions = [{"type": "MemoryPressure", "status": "False"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready})
    return {
        "kind": "Node",
        "metadata": {"name": "node-1", "creationTimestamp": ago(days=3, hours=5), "labels": labels or {}},
        "spec": {"unschedulable": unschedulable} if unschedulable else {},
        "status": {
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": "172.18.0.2"},
                {"type": "Hostname", "address": "n1"},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.32.0",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "kernelVersion": "6.1.0-18-amd64",
                "containerRuntimeVersion": "mini://0.1.0",
            },
        },
    }


def test_ready_node_row() -> None:
    assert list(row("nodes", node()).values()) == [
        "node-1",
        "Ready",
        "<none>",
        "3d5h",
        "v1.32.0",
        "172.18.0.2",
        "<none>",
        "Debian GNU/Linux 12 (bookworm)",
        "6.1.0-18-amd64",
        "mini://0.1.0",
    ]


def test_cordoned_node_shows_scheduling_disabled() -> None:
    assert row("nodes", node(unschedulable=True))["Status"] == "Ready,SchedulingDisabled"


def test_node_status_not_ready_and_unknown() -> None:
    assert row("nodes", node(ready="False"))["Status"] == "NotReady"
    # The node controller sets Ready=Unknown when heartbeats stop; kubectl still says NotReady.
    assert row("nodes", node(ready="Unknown"))["Status"] == "NotReady"
    assert row("nodes", node(ready=None))["Status"] == "Unknown"


def test_node_roles_come_from_role_labels_sorted() -> None:
    labels = {
        "node-role.kubernetes.io/worker": "",
        "node-role.kubernetes.io/control-plane": "",
        "kubernetes.io/role": "infra",
        "kubernetes.io/hostname": "node-1",
    }
    assert row("nodes", node(labels=labels))["Roles"] == "control-plane,infra,worker"


def test_node_without_system_info_prints_unknown_in_wide_columns() -> None:
    obj = node()
    obj["status"]["nodeInfo"] = {}
    cells = row("nodes", obj)
    assert (cells["Version"], cells["OS-Image"], cells["Kernel-Version"], cells["Container-Runtime"]) == (
        "",
        "<unknown>",
        "<unknown>",
        "<unknown>",
    )


def test_namespace_row() -> None:
    ns = {"metadata": {"name": "dev", "creationTimestamp": ago(hours=2)}, "status": {"phase": "Terminating"}}
    assert list(row("namespaces", ns).values()) == ["dev", "Terminating", "120m"]


def service(kind: str, ports: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"metadata": meta("myweb"), "spec": {"type": kind, "ports": ports, **spec}}


def test_cluster_ip_service_row() -> None:
    svc = service(
        "ClusterIP",
        [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
        clusterIP="10.96.0.10",
        clusterIPs=["10.96.0.10"],
        selector={"app": "nginx", "tier": "web"},
    )
    assert list(row("services", svc).values()) == [
        "myweb",
        "ClusterIP",
        "10.96.0.10",
        "<none>",
        "80/TCP",
        "3d",
        "app=nginx,tier=web",
    ]


def test_node_port_service_shows_port_and_node_port() -> None:
    svc = service(
        "NodePort",
        [{"port": 8080, "nodePort": 30001, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
        clusterIP="10.96.3.7",
    )
    cells = row("services", svc)
    assert (cells["Cluster-IP"], cells["Port(s)"], cells["Selector"]) == (
        "10.96.3.7",
        "8080:30001/TCP,53/UDP",
        "<none>",
    )


def test_service_external_ip_by_type() -> None:
    assert row("services", service("ClusterIP", [], externalIPs=["1.2.3.4"]))["External-IP"] == "1.2.3.4"
    assert row("services", service("LoadBalancer", []))["External-IP"] == "<pending>"
    balanced = service("LoadBalancer", [])
    balanced["status"] = {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example.com"}]}}
    assert row("services", balanced)["External-IP"] == "5.6.7.8,lb.example.com"
    external = service("ExternalName", [], externalName="db.example.com")
    cells = row("services", external)
    assert (cells["Cluster-IP"], cells["External-IP"], cells["Port(s)"]) == (
        "<none>",
        "db.example.com",
        "<none>",
    )


def test_headless_service_prints_none_as_cluster_ip() -> None:
    assert row("services", service("ClusterIP", [], clusterIP="None"))["Cluster-IP"] == "None"


def endpoints(*subsets: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": meta("myweb"), "subsets": list(subsets)}


def test_endpoints_list_ip_port_pairs() -> None:
    eps = endpoints({"addresses": [{"ip": "10.244.1.5"}, {"ip": "10.244.2.3"}], "ports": [{"port": 80}]})
    assert row("endpoints", eps)["Endpoints"] == "10.244.1.5:80,10.244.2.3:80"


def test_endpoints_beyond_three_are_counted_as_more() -> None:
    eps = endpoints({"addresses": [{"ip": f"10.244.{i}.5"} for i in range(1, 5)], "ports": [{"port": 80}]})
    assert row("endpoints", eps)["Endpoints"] == "10.244.1.5:80,10.244.2.5:80,10.244.3.5:80 + 1 more..."
    two_ports = endpoints(
        {
            "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        }
    )
    assert row("endpoints", two_ports)["Endpoints"] == "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."


def test_endpoints_without_subsets_or_ports() -> None:
    assert row("endpoints", endpoints())["Endpoints"] == "<none>"
    headless = endpoints({"addresses": [{"ip": "10.0.0.1"}]})
    assert row("endpoints", headless)["Endpoints"] == "10.0.0.1"
    ipv6 = endpoints({"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]})
    assert row("endpoints", ipv6)["Endpoints"] == "[fd00::1]:80"


def event(**fields: Any) -> dict[str, Any]:
    base = {
        "metadata": meta("web.17c3a9"),
        "involvedObject": {
            "kind": "Pod",
            "name": "web",
            "namespace": "default",
            "fieldPath": "spec.containers{nginx}",
        },
        "reason": "Pulled",
        "message": 'Successfully pulled image "nginx"\n',
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
    }
    base.update(fields)
    return base


def test_event_row_with_wide_columns() -> None:
    ev = event(firstTimestamp=ago(minutes=9), lastTimestamp=ago(minutes=2), count=4)
    assert list(row("events", ev).values()) == [
        "2m",
        "Normal",
        "Pulled",
        "pod/web",
        "spec.containers{nginx}",
        "kubelet, node-1",
        'Successfully pulled image "nginx"',
        "9m",
        4,
        "web.17c3a9",
    ]


def test_event_last_seen_falls_back_to_first_seen_then_event_time() -> None:
    assert row("events", event(firstTimestamp=ago(minutes=4)))["Last Seen"] == "4m"
    cells = row(
        "events", event(eventTime="2025-03-01T11:59:30.000000Z", reportingComponent="scheduler", source={})
    )
    assert (cells["Last Seen"], cells["First Seen"], cells["Count"], cells["Source"]) == (
        "30s",
        "30s",
        1,
        "scheduler",
    )
    assert row("events", event())["Last Seen"] == "<unknown>"


def test_event_series_sets_last_seen_and_count() -> None:
    ev = event(eventTime=ago(minutes=20), series={"count": 7, "lastObservedTime": ago(minutes=1)})
    cells = row("events", ev)
    assert (cells["Last Seen"], cells["First Seen"], cells["Count"]) == ("60s", "20m", 7)


def test_event_about_an_object_without_name_shows_only_kind() -> None:
    assert row("events", event(involvedObject={"kind": "Node"}))["Object"] == "node"


def test_configmap_secret_and_serviceaccount_rows() -> None:
    cm = {"metadata": meta("cfg"), "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}
    assert list(row("configmaps", cm).values()) == ["cfg", 3, "3d"]
    secret = {"metadata": meta("tls"), "type": "kubernetes.io/tls", "data": {"tls.crt": "x", "tls.key": "y"}}
    assert list(row("secrets", secret).values()) == ["tls", "kubernetes.io/tls", 2, "3d"]
    sa = {"metadata": meta("default")}
    assert list(row("serviceaccounts", sa).values()) == ["default", 0, "3d"]


def test_replication_controller_row() -> None:
    rc = {
        "metadata": meta("mysql"),
        "spec": {
            "replicas": 3,
            "selector": {"app": "mysql"},
            "template": {"spec": {"containers": [{"name": "mysql", "image": "mysql:8"}]}},
        },
        "status": {"replicas": 3, "readyReplicas": 2},
    }
    assert list(row("replicationcontrollers", rc).values()) == [
        "mysql",
        3,
        3,
        2,
        "3d",
        "mysql",
        "mysql:8",
        "app=mysql",
    ]


def test_resource_quota_splits_requests_and_limits() -> None:
    quota = {
        "metadata": meta("compute"),
        "status": {
            "hard": {"pods": "10", "requests.cpu": "1", "limits.memory": "2Gi", "cpu": "2"},
            "used": {"pods": "3", "requests.cpu": "500m", "limits.memory": "1Gi"},
        },
    }
    assert list(row("resourcequotas", quota).values()) == [
        "compute",
        "cpu: 0/2, pods: 3/10, requests.cpu: 500m/1",
        "limits.memory: 1Gi/2Gi",
        "3d",
    ]


def test_limit_range_uses_the_default_table() -> None:
    lr = {"metadata": meta("limits", age="2025-02-27T08:30:00Z")}
    assert row("limitranges", lr) == {"Name": "limits", "Created At": "2025-02-27T08:30:00Z"}
