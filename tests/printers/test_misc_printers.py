"""Rows of HorizontalPodAutoscalers, Leases and RBAC objects."""

from typing import Any

from tests.printers.objects import meta, row


def hpa(
    metrics: list[dict[str, Any]] | None, current: list[dict[str, Any]] | None = None, **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": meta("web"),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            **spec,
        },
        "status": {"currentReplicas": 2},
    }
    if metrics is not None:
        body["spec"]["metrics"] = metrics
    if current is not None:
        body["status"]["currentMetrics"] = current
    return body


CPU_50 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}


def test_hpa_row_with_measured_cpu() -> None:
    current = [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 20}}}]
    assert list(row("horizontalpodautoscalers.autoscaling", hpa([CPU_50], current)).values()) == [
        "web",
        "Deployment/web",
        "cpu: 20%/50%",
        "1",
        10,
        2,
        "3d",
    ]


def test_hpa_before_first_measurement_shows_unknown() -> None:
    assert row("horizontalpodautoscalers.autoscaling", hpa([CPU_50]))["Targets"] == "cpu: <unknown>/50%"


def test_hpa_with_no_metrics_and_no_min_replicas() -> None:
    obj = hpa(None)
    del obj["spec"]["minReplicas"]
    cells = row("horizontalpodautoscalers.autoscaling", obj)
    assert (cells["Targets"], cells["MinPods"]) == ("<none>", "<unset>")


def test_hpa_shows_two_metrics_then_counts_the_rest() -> None:
    memory = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "200Mi"}},
    }
    pods = {
        "type": "Pods",
        "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}},
    }
    current = [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 70}}},
        {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "100Mi"}}},
    ]
    obj = hpa([CPU_50, memory, pods], current)
    assert row("horizontalpodautoscalers.autoscaling", obj)["Targets"] == (
        "cpu: 70%/50%, memory: 100Mi/200Mi + 1 more..."
    )
    assert row("horizontalpodautoscalers.autoscaling", hpa([pods]))["Targets"] == "<unknown>/1k"


def test_hpa_external_metric_average_and_value() -> None:
    avg = {
        "type": "External",
        "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "30"}},
    }
    value = {
        "type": "External",
        "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "5"}},
    }
    current = [
        {"type": "External", "external": {"current": {"averageValue": "12"}}},
        {"type": "External", "external": {"current": {"value": "4"}}},
    ]
    cells = row("horizontalpodautoscalers.autoscaling", hpa([avg, value], current))
    assert cells["Targets"] == "12/30 (avg), 4/5"


def test_autoscaling_v1_hpa_prints_its_cpu_target() -> None:
    obj = hpa(None, targetCPUUtilizationPercentage=80)
    obj["status"]["currentCPUUtilizationPercentage"] = 35
    assert row("horizontalpodautoscalers.autoscaling", obj)["Targets"] == "cpu: 35%/80%"


def test_lease_shows_its_holder() -> None:
    lease = {"metadata": meta("kube-controller-manager"), "spec": {"holderIdentity": "host_1a2b"}}
    assert list(row("leases.coordination.k8s.io", lease).values()) == [
        "kube-controller-manager",
        "host_1a2b",
        "3d",
    ]
    assert row("leases.coordination.k8s.io", {"metadata": meta("free"), "spec": {}})["Holder"] == ""


def test_role_binding_row_with_subjects() -> None:
    binding = {
        "metadata": meta("read-pods"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [
            {"kind": "User", "name": "jane"},
            {"kind": "User", "name": "joe"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "builder", "namespace": "ci"},
        ],
    }
    assert list(row("rolebindings.rbac.authorization.k8s.io", binding).values()) == [
        "read-pods",
        "Role/pod-reader",
        "3d",
        "jane, joe",
        "devs",
        "ci/builder",
    ]
    binding["roleRef"]["kind"] = "ClusterRole"
    cells = row("clusterrolebindings.rbac.authorization.k8s.io", binding)
    assert cells["Role"] == "ClusterRole/pod-reader"


def test_roles_and_cluster_roles_print_name_and_creation_time() -> None:
    role = {"metadata": meta("pod-reader", age="2025-02-26T09:15:30.5+01:00"), "rules": []}
    assert row("roles.rbac.authorization.k8s.io", role) == {
        "Name": "pod-reader",
        "Created At": "2025-02-26T08:15:30Z",
    }
    assert row("clusterroles.rbac.authorization.k8s.io", role)["Created At"] == "2025-02-26T08:15:30Z"
