"""autoscaling/v1 HPAs carry what v1 cannot say in annotations, as Kubernetes does
(pkg/apis/autoscaling/v1/conversion.go): the other metrics, `behavior`, the current metrics and the
conditions, as JSON. A v1 client that GETs an HPA and PUTs it back keeps them all; the annotations
are read back into the v2 fields and never stored. On both backends."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.support.apiserver import APIServerProcess
from tests.support.kubectl import kubectl_binary

Obj = dict[str, Any]
PREFIX = "autoscaling.alpha.kubernetes.io/"
METRICS, BEHAVIOR = PREFIX + "metrics", PREFIX + "behavior"
CURRENT_METRICS, CONDITIONS = PREFIX + "current-metrics", PREFIX + "conditions"


def resource(name: str, **target: Any) -> Obj:
    """A v2 Resource metric: resource("cpu", averageUtilization=60)."""
    kind = "Utilization" if "averageUtilization" in target else "AverageValue"
    return {"type": "Resource", "resource": {"name": name, "target": {"type": kind, **target}}}


def v1_resource(name: str, **fields: Any) -> Obj:
    """The same in a v1 MetricSpec or MetricStatus (the annotations' shape)."""
    return {"type": "Resource", "resource": {"name": name, **fields}}


CPU, MEMORY = resource("cpu", averageUtilization=60), resource("memory", averageValue="100Mi")
PODS = {"type": "Pods", "pods": {"metric": {"name": "packets-per-second"},
                                 "target": {"type": "AverageValue", "averageValue": "1k"}}}  # fmt: skip
BEHAVIOR_V2 = {"scaleDown": {"stabilizationWindowSeconds": 60, "policies": [
    {"type": "Pods", "value": 2, "periodSeconds": 30}]}}  # fmt: skip
CURRENT = [
    {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 62, "averageValue": "124m"}}},
    {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "80Mi"}}},
]
CONDITION = {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2025-01-02T03:04:05Z",
             "reason": "ReadyForNewScale", "message": "recommended size matches current size"}  # fmt: skip


def urls(ns: str) -> tuple[str, str]:
    v1, v2 = (f"/apis/autoscaling/{v}/namespaces/{ns}/horizontalpodautoscalers" for v in ("v1", "v2"))
    return v1, v2


def make_v2(api: httpx.Client, ns: str, name: str = "h", metrics: list[Obj] | None = None) -> Obj:
    body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "annotations": {"team": "web"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4, "metrics": metrics or [CPU, MEMORY, PODS], "behavior": BEHAVIOR_V2}}  # fmt: skip
    made = api.post(urls(ns)[1], json=body)
    assert made.status_code == 201, made.text
    return made.json()


def decoded(obj: Obj, key: str) -> Any:
    return json.loads(obj["metadata"]["annotations"][key])


def round_trip_keys(obj: Obj) -> set[str]:
    return {k for k in obj["metadata"].get("annotations") or {} if k.startswith(PREFIX)}


def test_a_v1_get_then_put_keeps_the_other_metrics_and_behavior(api: httpx.Client, ns: str) -> None:
    v1, v2 = urls(ns)
    made = make_v2(api, ns)
    hpa = api.get(f"{v1}/h").json()
    assert hpa["apiVersion"] == "autoscaling/v1" and hpa["spec"]["targetCPUUtilizationPercentage"] == 60
    assert "metrics" not in hpa["spec"] and "behavior" not in hpa["spec"]
    assert hpa["metadata"]["annotations"]["team"] == "web"
    # v1 MetricSpecs (the old v2beta1 shape), the CPU utilization target left out: it is the v1 field
    assert decoded(hpa, METRICS) == [
        v1_resource("memory", targetAverageValue="100Mi"),
        {"type": "Pods", "pods": {"metricName": "packets-per-second", "targetAverageValue": "1k"}}]  # fmt: skip
    # Kubernetes' internal type, written with Go's field names; the defaults filled in on create
    assert decoded(hpa, BEHAVIOR) == {
        "ScaleUp": {"StabilizationWindowSeconds": 0, "SelectPolicy": "Max", "Policies": [
            {"Type": "Pods", "Value": 4, "PeriodSeconds": 15}, {"Type": "Percent", "Value": 100, "PeriodSeconds": 15}]},
        "ScaleDown": {"StabilizationWindowSeconds": 60, "SelectPolicy": "Max", "Policies": [
            {"Type": "Pods", "Value": 2, "PeriodSeconds": 30}]}}  # fmt: skip
    assert round_trip_keys(hpa) == {METRICS, BEHAVIOR}  # no status yet: no current metrics, no conditions

    hpa["spec"]["maxReplicas"] = 7
    put = api.put(f"{v1}/h", json=hpa)
    assert put.status_code == 200, put.text
    assert put.json()["apiVersion"] == "autoscaling/v1" and round_trip_keys(put.json()) == {METRICS, BEHAVIOR}
    stored = api.get(f"{v2}/h").json()
    assert stored["spec"]["maxReplicas"] == 7
    assert stored["spec"]["metrics"] == [MEMORY, PODS, CPU]  # as Kubernetes: the annotation's first, CPU last
    assert stored["spec"]["behavior"] == made["spec"]["behavior"]
    assert stored["metadata"]["annotations"] == {"team": "web"}  # the round-trip annotations are never stored


def test_status_current_metrics_and_conditions_ride_in_annotations(api: httpx.Client, ns: str) -> None:
    v1, v2 = urls(ns)
    made = make_v2(api, ns)
    status = {"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": CURRENT, "conditions": [CONDITION]}
    assert api.put(f"{v2}/h/status", json={**made, "status": status}).status_code == 200
    hpa = api.get(f"{v1}/h").json()
    assert hpa["status"]["currentCPUUtilizationPercentage"] == 62
    assert "currentMetrics" not in hpa["status"] and "conditions" not in hpa["status"]
    # all current metrics, the CPU one too (its raw value is not in the v1 field)
    assert decoded(hpa, CURRENT_METRICS) == [
        v1_resource("cpu", currentAverageUtilization=62, currentAverageValue="124m"),
        v1_resource("memory", currentAverageValue="80Mi")]  # fmt: skip
    assert decoded(hpa, CONDITIONS) == [CONDITION]

    hpa["status"]["desiredReplicas"] = 3
    put = api.put(f"{v1}/h/status", json=hpa)
    assert put.status_code == 200, put.text
    stored = api.get(f"{v2}/h").json()
    assert stored["status"]["desiredReplicas"] == 3
    assert stored["status"]["currentMetrics"] == CURRENT and stored["status"]["conditions"] == [CONDITION]
    assert stored["spec"]["metrics"] == made["spec"]["metrics"]  # the status PUT left the spec alone
    assert round_trip_keys(stored) == set()


def test_a_v1_list_and_watch_carry_the_annotations(api: httpx.Client, ns: str) -> None:
    v1, v2 = urls(ns)
    make_v2(api, ns)
    listed = api.get(v1).json()
    assert listed["apiVersion"] == "autoscaling/v1"
    (item,) = listed["items"]
    assert round_trip_keys(item) == {METRICS, BEHAVIOR} and len(decoded(item, METRICS)) == 2
    merge = {"Content-Type": "application/merge-patch+json"}
    params = {"watch": "1", "resourceVersion": listed["metadata"]["resourceVersion"], "timeoutSeconds": "5"}
    with api.stream("GET", v1, params=params) as events:
        assert api.patch(f"{v2}/h", json={"spec": {"maxReplicas": 6}}, headers=merge).status_code == 200
        for line in events.iter_lines():
            event = json.loads(line)
            if event["type"] == "MODIFIED":
                obj = event["object"]
                assert obj["apiVersion"] == "autoscaling/v1" and obj["spec"]["maxReplicas"] == 6
                assert decoded(obj, METRICS) == decoded(item, METRICS)
                assert decoded(obj, BEHAVIOR) == decoded(item, BEHAVIOR)
                break
        else:
            raise AssertionError("no MODIFIED event")


def test_a_cpu_average_value_target_is_not_the_v1_field(api: httpx.Client, ns: str) -> None:
    v1, v2 = urls(ns)
    cpu_value = resource("cpu", averageValue="200m")
    make_v2(api, ns, metrics=[cpu_value])
    hpa = api.get(f"{v1}/h").json()
    assert "targetCPUUtilizationPercentage" not in hpa["spec"]
    assert decoded(hpa, METRICS) == [v1_resource("cpu", targetAverageValue="200m")]
    assert api.put(f"{v1}/h", json=hpa).status_code == 200
    assert api.get(f"{v2}/h").json()["spec"]["metrics"] == [cpu_value]


def test_unreadable_or_missing_annotations_are_ignored_as_kubernetes_does(api: httpx.Client, ns: str) -> None:
    v1, v2 = urls(ns)
    make_v2(api, ns)
    hpa = api.get(f"{v1}/h").json()
    hpa["metadata"]["annotations"][METRICS] = "not json"
    hpa["metadata"]["annotations"][BEHAVIOR] = '["a list"]'
    put = api.put(f"{v1}/h", json=hpa)
    assert put.status_code == 200, put.text
    stored = api.get(f"{v2}/h").json()
    assert stored["spec"]["metrics"] == [CPU] and "behavior" not in stored["spec"]
    assert stored["metadata"]["annotations"] == {"team": "web"}

    make_v2(api, ns, name="fresh")  # a v1 manifest written by hand says nothing of the rest
    fresh = api.get(f"{v1}/fresh").json()
    fresh["metadata"]["annotations"] = {}
    assert api.put(f"{v1}/fresh", json=fresh).status_code == 200
    assert api.get(f"{v2}/fresh").json()["spec"]["metrics"] == [CPU]


def test_a_v1_patch_keeps_them_unless_it_removes_the_annotation(api: httpx.Client, ns: str) -> None:
    v1, v2 = urls(ns)
    make_v2(api, ns)
    merge = {"Content-Type": "application/merge-patch+json"}
    patched = api.patch(f"{v1}/h", json={"spec": {"targetCPUUtilizationPercentage": 70}}, headers=merge)
    assert patched.status_code == 200, patched.text
    assert round_trip_keys(patched.json()) == {METRICS, BEHAVIOR}
    cpu70 = resource("cpu", averageUtilization=70)
    assert api.get(f"{v2}/h").json()["spec"]["metrics"] == [MEMORY, PODS, cpu70]
    dropped = api.patch(f"{v1}/h", json={"metadata": {"annotations": {METRICS: None}}}, headers=merge)
    assert dropped.status_code == 200, dropped.text
    stored = api.get(f"{v2}/h").json()
    assert stored["spec"]["metrics"] == [cpu70] and "behavior" in stored["spec"]
    assert round_trip_keys(stored) == set()


def test_kubectl_get_v1_yaml_shows_the_annotations(apiserver: APIServerProcess, api: httpx.Client, ns: str,
                                                   tmp_path: Path) -> None:  # fmt: skip
    binary = kubectl_binary()
    make_v2(api, ns)
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("KUBE")},
           "KUBECONFIG": str(tmp_path / "kubeconfig"), "HOME": str(tmp_path)}  # fmt: skip
    v1 = "horizontalpodautoscalers.v1.autoscaling"  # `hpa.v1.autoscaling` came back as v2 (not looked into)
    shown = subprocess.run(
        [binary, "--server", apiserver.url, "get", v1, "h", "-n", ns, "-o", "yaml"],
        capture_output=True, text=True, env=env, timeout=60, check=False)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    hpa = yaml.safe_load(shown.stdout)
    assert hpa["apiVersion"] == "autoscaling/v1" and hpa["spec"]["targetCPUUtilizationPercentage"] == 60
    assert decoded(hpa, METRICS)[0] == v1_resource("memory", targetAverageValue="100Mi")
    assert round_trip_keys(hpa) == {METRICS, BEHAVIOR}
