"""`describe hpa`, side by side with the real kubectl (tests/kubectl/conftest.py's Pair) on one API
server. No controller runs: each HPA's status is written through `/status` and its events are
posted, as the HPA controller would write them, so every kind of metric, target and behavior can
be shown - including the ones mini-k8s cannot compute (Pods, Object, External). Event times lie
minutes back, so the ages both print agree however long the commands take.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.kubectl.conftest import Pair, cells

Obj = dict[str, Any]
V2 = "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
UTILIZATION = "cpu resource utilization (percentage of request)"


def ago(minutes: float) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def target(kind: str, value: Any) -> Obj:
    field = {"Utilization": "averageUtilization", "AverageValue": "averageValue", "Value": "value"}[kind]
    return {"type": kind, field: value}


EVERY_METRIC: list[Obj] = [
    {"type": "Resource", "resource": {"name": "cpu", "target": target("Utilization", 50)}},
    {"type": "Resource", "resource": {"name": "memory", "target": target("AverageValue", "512Mi")}},
    {"type": "ContainerResource",
     "containerResource": {"name": "cpu", "container": "app", "target": target("Utilization", 60)}},
    {"type": "ContainerResource",
     "containerResource": {"name": "memory", "container": "side", "target": target("AverageValue", "64Mi")}},
    {"type": "Pods", "pods": {"metric": {"name": "packets-per-second"}, "target": target("AverageValue", "1k")}},
    {"type": "Object", "object": {"metric": {"name": "requests-per-second"}, "target": target("Value", "10k"),
                                  "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                                                      "name": "main-route"}}},
    {"type": "Object", "object": {"metric": {"name": "hits"}, "target": target("AverageValue", "1.5"),
                                  "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"}}},
    {"type": "External", "external": {"metric": {"name": "queue_messages_ready", "selector": {
        "matchLabels": {"queue": "worker_tasks"}}}, "target": target("AverageValue", "30")}},
    {"type": "External", "external": {"metric": {"name": "backlog"}, "target": target("Value", "2000m")}},
]  # fmt: skip
# What a controller that could read every metric but the last three would write.
CURRENT: list[Obj] = [
    {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 62, "averageValue": "124m"}}},
    {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "314572800"}}},
    {"type": "ContainerResource",
     "containerResource": {"name": "cpu", "container": "app", "current": {"averageUtilization": 48,
                                                                          "averageValue": "96m"}}},
    {"type": "ContainerResource",
     "containerResource": {"name": "memory", "container": "side", "current": {"averageValue": "32Mi"}}},
    {"type": "Pods", "pods": {"metric": {"name": "packets-per-second"}, "current": {"averageValue": "1200m"}}},
    {"type": "Object", "object": {"metric": {"name": "requests-per-second"}, "current": {"value": "9k"},
                                  "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                                                      "name": "main-route"}}},
    {"type": ""},
    {"type": ""},
    {"type": ""},
]  # fmt: skip
CONDITIONS = [
    {"type": "AbleToScale", "status": "True", "reason": "ScaleDownStabilized", "lastTransitionTime": ago(30),
     "message": "recent recommendations were higher than current one, applying the highest recent recommendation"},
    {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound", "lastTransitionTime": ago(30),
     "message": f"the HPA was able to successfully calculate a replica count from {UTILIZATION}"},
    {"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas", "lastTransitionTime": ago(20),
     "message": "the desired replica count is more than the maximum replica count"},
]  # fmt: skip
BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Min",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    "scaleDown": {"stabilizationWindowSeconds": 300},
}  # fmt: skip


def hpa(name: str, metrics: list[Obj], **spec: Any) -> Obj:
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": spec.pop("kind", "Deployment"), "name": name},
                 "maxReplicas": 10, "metrics": metrics, **spec},
    }  # fmt: skip


def create(api: httpx.Client, ns: str, obj: Obj, status: Obj | None = None) -> Obj:
    r = api.post(V2.format(ns=ns), json=obj)
    assert r.status_code == 201, r.text
    made = r.json()
    if status is not None:
        r = api.put(f"{V2.format(ns=ns)}/{made['metadata']['name']}/status", json={**made, "status": status})
        assert r.status_code == 200, r.text
        made = r.json()
    return made


def event(api: httpx.Client, ns: str, about: Obj, kind: str, reason: str, message: str, *, first: float,
          last: float, count: int = 1) -> None:  # fmt: skip
    meta = about["metadata"]
    body = {
        "metadata": {"name": f"{meta['name']}.{uuid.uuid4().hex[:12]}"},
        "involvedObject": {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "namespace": ns,
                           "name": meta["name"], "uid": meta["uid"], "resourceVersion": meta["resourceVersion"]},
        "reason": reason, "message": message, "type": kind, "count": count,
        "firstTimestamp": ago(first), "lastTimestamp": ago(last),
        "source": {"component": "horizontal-pod-autoscaler"},
    }  # fmt: skip
    r = api.post(f"/api/v1/namespaces/{ns}/events", json=body)
    assert r.status_code == 201, r.text


def test_describe_hpa_matches_kubectl_for_every_metric_type_behavior_condition_and_event(
    pair: Pair, api: httpx.Client, ns: str
) -> None:
    status = {"currentReplicas": 10, "desiredReplicas": 10, "lastScaleTime": ago(20), "currentMetrics": CURRENT,
              "conditions": CONDITIONS}  # fmt: skip
    labelled = {"labels": {"app": "web", "tier": "front"}, "annotations": {"team": "blue", "note": "x" * 150}}
    every = create(api, ns, {**hpa("every", EVERY_METRIC, minReplicas=2, behavior=BEHAVIOR),
                             "metadata": {"name": "every", **labelled}}, status)  # fmt: skip
    event(api, ns, every, "Normal", "SuccessfulRescale", f"New size: 10; reason: {UTILIZATION} above target",
          first=25, last=20, count=3)  # fmt: skip
    event(api, ns, every, "Warning", "FailedGetPodsMetric", "unable to get metric packets-per-second",
          first=40, last=40)  # fmt: skip
    # a StatefulSet, with only a scale-down rule; a spec without policies prints no Select Policy
    down = hpa("sts", EVERY_METRIC[:1], kind="StatefulSet",
               behavior={"scaleDown": {"selectPolicy": "Disabled", "stabilizationWindowSeconds": 60}})  # fmt: skip
    create(api, ns, down, {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [{"type": ""}]})
    # fresh: no status at all, no events, the target utilization the API server defaults (80%)
    create(api, ns, hpa("fresh", [], minReplicas=1))
    commands = [
        ("describe", "hpa", "every", "-n", ns),
        ("describe", "hpa", "sts", "-n", ns),
        ("describe", "horizontalpodautoscaler", "fresh", "-n", ns),
        ("describe", "hpa", "-n", ns),  # all three, in order
        ("describe", "hpa", "ev", "-n", ns),  # a name prefix
        ("describe", "hpa", "every", "-n", ns, "--show-events=false"),
        ("describe", "hpa", "nothere", "-n", ns),
    ]
    for command, (real, mini) in zip(commands, pair.many(commands), strict=True):
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), command
    # and the row `get` prints of each: TARGETS as current/target, <unknown> for a failed metric
    real, mini = pair.both("get", "hpa", "-n", ns)
    assert (mini.rc, cells(mini.out), mini.err) == (real.rc, cells(real.out), real.err)
    assert [row[2] for row in cells(real.out)[1:]] == [
        "cpu: 62%/50%, memory: 314572800/512Mi + 7 more...",
        "cpu: <unknown>/80%",
        "cpu: <unknown>/50%",
    ]
    shown = pair.real(*commands[0]).out
    assert re.search(r"^  resource cpu on pods  \(as a percentage of request\): +62% \(124m\) / 50%$", shown, re.M)
    assert re.search(r'^  "queue_messages_ready" \(target average value\): +<unknown> / 30$', shown, re.M)
    assert "      - Type: Pods     Value: 4    Period: 15 seconds\n" in shown
    assert re.search(r"^StatefulSet pods: +3 current / 3 desired$", pair.real(*commands[1]).out, re.M)


def test_describe_hpa_made_through_autoscaling_v1_matches_kubectl(pair: Pair, api: httpx.Client, ns: str) -> None:
    # `kubectl autoscale` (1.32) speaks autoscaling/v1; both describe the object as v2 shows it
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "old"},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "old"},
                   "maxReplicas": 4, "targetCPUUtilizationPercentage": 70}}  # fmt: skip
    r = api.post(f"/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers", json=v1)
    assert r.status_code == 201, r.text
    real, mini = pair.both("describe", "hpa", "old", "-n", ns)
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    assert "  resource cpu on pods  (as a percentage of request):  <unknown> / 70%\n" in real.out
    # the controller's status, written through v2
    made = api.get(f"{V2.format(ns=ns)}/old").json()
    status = {"currentReplicas": 2, "desiredReplicas": 3, "lastScaleTime": ago(1), "currentMetrics": CURRENT[:1],
              "conditions": CONDITIONS[:2]}  # fmt: skip
    assert api.put(f"{V2.format(ns=ns)}/old/status", json={**made, "status": status}).status_code == 200
    real, mini = pair.both("describe", "hpa", "old", "-n", ns)
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    assert "  resource cpu on pods  (as a percentage of request):  62% (124m) / 70%\n" in real.out
    assert "Deployment pods:                                       2 current / 3 desired\n" in real.out
