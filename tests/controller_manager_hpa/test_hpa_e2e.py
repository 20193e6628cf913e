"""The HorizontalPodAutoscaler end to end, with every part a real process (conftest.py).

Load comes from the simulated runtime's model (kubelet/simusage.py), so the numbers are known:
pods request 200m of CPU; a Service's `cpu-load` is spread over its ready pods, a pod's own
`cpu-usage` is what each pod of the template uses whatever their number.

    load                          pods   per pod   utilization   the HPA (target 50%)
    Service 400m                  1      400m      200%          ceil(1 × 200/50) = 4, at once
                                  4      100m       50%          stays
    none                          4        0         0%          1, after the stabilization window
    each pod 124m, maxReplicas 3  1..3   124m       62%          +1 per look up to 3: TooManyReplicas
    Service 800m, Pods 1 per 2s   1..4   800m/n    400%..100%    1 → 2 → 3 → 4, one step per period
    each pod 400m, Pods 1 / 600s  1..2   400m      200%          2, then ScaleUpLimit

and what goes wrong: a target that does not exist (AbleToScale False, FailedGetScale), and an API
server without the metrics API (ScalingActive False, FailedGetResourceMetric). Everything is
observed through the API and the real kubectl, and waited for with a deadline.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from api.quantity import parse_quantity
from tests.controller_manager_hpa.conftest import DOWNSCALE_STABILIZATION, HPA_FLAGS, SYNC_PERIOD, HPACluster
from tests.controller_manager_infra.conftest import start_manager
from tests.kubectl.conftest import Pair, cells, normalise
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]
CPU_LOAD = "simulation.mini-k8s.io/cpu-load"
CPU_USAGE = "simulation.mini-k8s.io/cpu-usage"
UTILIZATION = "cpu resource utilization (percentage of request)"
ABOVE_TARGET = f"reason: {UTILIZATION} above target"


# -- objects ------------------------------------------------------------------------------------
def deployment(name: str, *, usage: str | None = None) -> Obj:
    template_meta: Obj = {"labels": {"app": name}}
    if usage is not None:
        template_meta["annotations"] = {CPU_USAGE: usage}
    container = {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "200m"}}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": template_meta, "spec": {"containers": [container]}}},
    }  # fmt: skip


def service(name: str, load: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "annotations": {CPU_LOAD: load}},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}  # fmt: skip


def autoscaler(name: str, *, max_replicas: int, target: str | None = None, behavior: Obj | None = None) -> Obj:
    cpu = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}
    spec: Obj = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target or name},
        "minReplicas": 1, "maxReplicas": max_replicas, "metrics": [{"type": "Resource", "resource": cpu}],
    }  # fmt: skip
    if behavior is not None:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


# -- reading ------------------------------------------------------------------------------------
def condition(hpa: Obj, kind: str) -> tuple[str, str, str] | None:
    """(status, reason, message) of one of the HPA's conditions."""
    for c in (hpa.get("status") or {}).get("conditions") or []:
        if c["type"] == kind:
            return c["status"], c["reason"], c["message"]
    return None


def messages(c: HPACluster, ns: str, name: str, reason: str) -> list[str]:
    """The messages of the HPA's events with `reason`, oldest first."""
    events = [e for e in c.events(ns, reason) if e["involvedObject"]["name"] == name]
    events.sort(key=lambda e: (e.get("firstTimestamp") or "", int(e["metadata"]["resourceVersion"])))
    return [e["message"] for e in events]


def eventually(c: HPACluster, ns: str, name: str, reason: str, count: int = 1) -> list[str]:
    """messages(), once there are `count` of them: the controller posts its events in the
    background, a moment after the write they tell of."""
    return wait_for(lambda: (m := messages(c, ns, name, reason)) and len(m) >= count and m, timeout=20,
                    what=f"{count} {reason} event(s) of {name}")  # fmt: skip


def spec_replicas(c: HPACluster, ns: str, name: str) -> int:
    return int((c.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}") or {})["spec"]["replicas"])


def pod_cpu(c: HPACluster, ns: str, app: str) -> list[int]:
    """Millicores each pod of `app` uses, from the metrics API (through the API server)."""
    body = c.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods?labelSelector=app%3D{app}") or {}
    return [sum(parse_quantity(x["usage"]["cpu"]).milli_value() for x in i["containers"]) for i in body["items"]]


def create(c: HPACluster, ns: str, *objects: Obj) -> None:
    paths = {"Deployment": f"/apis/apps/v1/namespaces/{ns}/deployments", "Service": f"/api/v1/namespaces/{ns}/services",
             "HorizontalPodAutoscaler": f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"}  # fmt: skip
    for obj in objects:
        c.post(paths[obj["kind"]], obj)


def trajectory(c: HPACluster, ns: str, name: str, seen: list[tuple[float, int]], until: int,
               timeout: float) -> list[tuple[float, int]]:  # fmt: skip
    """`seen` ((when, spec.replicas) so far) with each change of the Deployment's replicas, until
    they are `until`."""
    deadline = time.monotonic() + timeout
    while seen[-1][1] != until:
        assert time.monotonic() < deadline, f"replicas went {[r for _, r in seen]}, never {until}"
        replicas = spec_replicas(c, ns, name)
        if replicas != seen[-1][1]:
            seen.append((time.monotonic(), replicas))
        time.sleep(0.05)
    return seen


# -- tests --------------------------------------------------------------------------------------
def test_under_load_it_scales_up_at_once_and_back_down_only_after_the_stabilization_window(
    hpa_cluster: HPACluster,
) -> None:
    c = hpa_cluster
    ns = new_namespace(c.http, "hpa-up")
    create(c, ns, deployment("web"), service("web", "400m"))
    # the HPA's first look should see the whole load: wait until metrics-server measures it
    wait_for(lambda: [m for m in pod_cpu(c, ns, "web") if 396 <= m <= 404], timeout=40, what="400m on web's pod")
    create(c, ns, autoscaler("web", max_replicas=10))

    # 400m on one pod is 200% of its request: ceil(1 × 200 / 50) = 4, in one step
    first = eventually(c, ns, "web", "SuccessfulRescale")
    assert first[0] == f"New size: 4; {ABOVE_TARGET}"
    wait_for(lambda: (c.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web") or {})["status"].get("readyReplicas")
             == 4, timeout=30, what="4 ready pods")  # fmt: skip

    def settled() -> bool:  # four pods share the 400m: 100m each, 50%, the target
        status = c.hpa(ns, "web")["status"]
        current = status["currentMetrics"][0]["resource"]["current"]
        # (a rate a hair above 100m counts as 101m: Kubernetes rounds milli-values up)
        return status["currentReplicas"] == 4 and current["averageUtilization"] == 50 and current[
            "averageValue"] in ("100m", "101m")  # fmt: skip

    wait_for(settled, timeout=30, what="cpu at 50% over 4 pods")
    assert condition(c.hpa(ns, "web"), "ScalingActive") == (
        "True", "ValidMetricFound", f"the HPA was able to successfully calculate a replica count from {UTILIZATION}"
    )  # fmt: skip

    # the load goes away: 0% recommends one pod, but the recommendations of 4 hold for the window
    c.patch(f"/api/v1/namespaces/{ns}/services/web", {"metadata": {"annotations": {CPU_LOAD: None}}})
    unloaded = time.monotonic()
    wait_for(lambda: (condition(c.hpa(ns, "web"), "AbleToScale") or ("", ""))[1] == "ScaleDownStabilized",
             timeout=20, interval=0.1, what="AbleToScale ScaleDownStabilized")  # fmt: skip  (a 2 s window)
    assert spec_replicas(c, ns, "web") == 4
    wait_for(lambda: spec_replicas(c, ns, "web") == 1, timeout=30, what="scaled down to 1")
    # the window counts from the HPA's last recommendation of 4, which may come from the sync just
    # before the load went (one sync period earlier at most), not from our patch
    assert time.monotonic() - unloaded >= DOWNSCALE_STABILIZATION - SYNC_PERIOD
    down = "New size: 1; reason: All metrics below target"
    wait_for(lambda: messages(c, ns, "web", "SuccessfulRescale")[-1] == down, timeout=20, what=down)
    assert messages(c, ns, "web", "SuccessfulRescale")[0] == first[0]


def test_at_max_replicas_it_is_scaling_limited_and_kubectl_get_hpa_shows_the_utilization(
    hpa_cluster: HPACluster, pair: Pair
) -> None:
    c = hpa_cluster
    ns = new_namespace(c.http, "hpa-max")
    # every pod uses 124m of its 200m: 62% whatever their number, so it always wants one more
    create(c, ns, deployment("cap", usage="124m"), autoscaler("cap", max_replicas=3))

    def limited() -> bool:
        hpa = c.hpa(ns, "cap")
        current = ((hpa["status"].get("currentMetrics") or [{}])[0].get("resource") or {}).get("current") or {}
        return condition(hpa, "ScalingLimited") == (
            "True", "TooManyReplicas", "the desired replica count is more than the maximum replica count"
        ) and current.get("averageUtilization") == 62 and hpa["status"]["currentReplicas"] == 3  # fmt: skip

    wait_for(limited, timeout=40, what="ScalingLimited TooManyReplicas at 62% on 3 pods")
    assert spec_replicas(c, ns, "cap") == 3
    rescales = eventually(c, ns, "cap", "SuccessfulRescale", 2)
    assert rescales == [f"New size: 2; {ABOVE_TARGET}", f"New size: 3; {ABOVE_TARGET}"]

    real, mini = pair.both("get", "hpa", "cap", "-n", ns)
    assert real.rc == 0, real.err
    assert cells(real.out) == [["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"],
                               ["cap", "Deployment/cap", "cpu: 62%/50%", "1", "3", "3", "<age>"]]  # fmt: skip
    assert (mini.rc, cells(mini.out)) == (0, cells(real.out))

    # describe: the same text from both. Each pod's rate is a hair over 124m, rounded up it can be
    # 125m, so the average the controller writes may flip at any sync, and an event's age may tick
    # between the two reads: a difference must be one of those, and go away on another try.
    def described() -> str | None:
        real, mini = pair.both("describe", "hpa", "cap", "-n", ns)
        assert real.rc == 0 and mini.rc == 0, real.err + mini.err
        assert normalise(re.sub(r"12[45]m", "", mini.out)) == normalise(re.sub(r"12[45]m", "", real.out)), (
            mini.out + real.out)  # fmt: skip
        return real.out if mini.out == real.out else None

    real_out = wait_for(described, timeout=20, what="the same description from both")
    assert re.search(r"^  resource cpu on pods  \(as a percentage of request\): +62% \(12[45]m\) / 50%$", real_out,
                     re.M)  # fmt: skip
    assert "Deployment pods:                                       3 current / 3 desired\n" in real_out
    assert f"New size: 3; {ABOVE_TARGET}" in real_out


def test_a_scale_up_policy_of_one_pod_per_period_adds_the_pods_one_at_a_time(hpa_cluster: HPACluster) -> None:
    c = hpa_cluster
    ns = new_namespace(c.http, "hpa-step")
    create(c, ns, deployment("step"), service("step", "800m"))
    wait_for(lambda: [m for m in pod_cpu(c, ns, "step") if 792 <= m <= 808], timeout=40, what="800m on step's pod")
    period = 2
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": period}]}}
    before = [(time.monotonic(), spec_replicas(c, ns, "step"))]
    # 400%: without the policy the first look would go to 4 at once (as in the test above)
    create(c, ns, autoscaler("step", max_replicas=4, behavior=behavior))
    seen = trajectory(c, ns, "step", before, until=4, timeout=40)

    assert [replicas for _, replicas in seen] == [1, 2, 3, 4]
    gaps = [later - earlier for (earlier, _), (later, _) in zip(seen[1:], seen[2:], strict=False)]
    assert all(gap >= period - 0.5 for gap in gaps), gaps  # one pod per period, never sooner
    assert eventually(c, ns, "step", "SuccessfulRescale", 3) == [f"New size: {n}; {ABOVE_TARGET}" for n in (2, 3, 4)]
    # at 4 (100% each) it would want 8: now it is maxReplicas that holds it
    wait_for(lambda: (condition(c.hpa(ns, "step"), "ScalingLimited") or ("", ""))[1] == "TooManyReplicas",
             timeout=20, what="ScalingLimited TooManyReplicas")  # fmt: skip


def test_a_policy_limited_step_is_reported_as_scale_up_limit(hpa_cluster: HPACluster) -> None:
    c = hpa_cluster
    ns = new_namespace(c.http, "hpa-limit")
    # a long period: after its first pod the HPA must wait, and says why
    create(c, ns, deployment("slow", usage="400m"))
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 600}]}}
    create(c, ns, autoscaler("slow", max_replicas=10, behavior=behavior))
    wait_for(lambda: condition(c.hpa(ns, "slow"), "ScalingLimited") == (
        "True", "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"),
        timeout=30, what="ScalingLimited ScaleUpLimit")  # fmt: skip
    assert spec_replicas(c, ns, "slow") == 2
    assert eventually(c, ns, "slow", "SuccessfulRescale") == [f"New size: 2; {ABOVE_TARGET}"]


def test_a_target_that_does_not_exist_makes_able_to_scale_false_with_failed_get_scale(hpa_cluster: HPACluster) -> None:
    c = hpa_cluster
    ns = new_namespace(c.http, "hpa-ghost")
    create(c, ns, autoscaler("ghost", max_replicas=3))
    message = 'deployments.apps "ghost" not found'
    wait_for(lambda: condition(c.hpa(ns, "ghost"), "AbleToScale") == (
        "False", "FailedGetScale", f"the HPA controller was unable to get the target's current scale: {message}"),
        timeout=20, what="AbleToScale False FailedGetScale")  # fmt: skip
    assert eventually(c, ns, "ghost", "FailedGetScale") == [message]
    [event] = [e for e in c.events(ns, "FailedGetScale") if e["involvedObject"]["name"] == "ghost"]
    assert event["type"] == "Warning" and event["source"]["component"] == "horizontal-pod-autoscaler"
    assert condition(c.hpa(ns, "ghost"), "ScalingActive") is None  # it never got as far as the metrics


@pytest.fixture
def no_metrics_api() -> Iterator[HPACluster]:
    """An API server without APIService v1beta1.metrics.k8s.io, and the HPA controller."""
    api = APIServerProcess().start()
    manager = None
    try:
        manager = start_manager(api, "horizontalpodautoscaling", *HPA_FLAGS)
        yield HPACluster(api, manager)
    finally:
        if manager is not None:
            manager.stop()
        api.cleanup()


def test_without_a_metrics_api_scaling_is_not_active_and_a_warning_says_why(no_metrics_api: HPACluster) -> None:
    c = no_metrics_api
    ns = new_namespace(c.http, "hpa-nometrics")
    create(c, ns, deployment("web"), autoscaler("web", max_replicas=5))
    assert c.http.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods").status_code == 404
    error = (
        "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource "
        "metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
    )
    wait_for(lambda: condition(c.hpa(ns, "web"), "ScalingActive") == (
        "False", "FailedGetResourceMetric", f"the HPA was unable to compute the replica count: {error}"),
        timeout=20, what="ScalingActive False FailedGetResourceMetric")  # fmt: skip
    assert eventually(c, ns, "web", "FailedGetResourceMetric") == [error]
    [event] = [e for e in c.events(ns, "FailedGetResourceMetric") if e["involvedObject"]["name"] == "web"]
    assert event["type"] == "Warning" and event["source"]["component"] == "horizontal-pod-autoscaler"
    computed = eventually(c, ns, "web", "FailedComputeMetricsReplicas")
    first = "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value"
    assert computed[0] == f"{first}: {error}"
    status = c.hpa(ns, "web")["status"]
    assert condition(c.hpa(ns, "web"), "AbleToScale")[:2] == ("True", "SucceededGetScale")  # type: ignore[index]
    # The replicas stay; the metric that could not be computed has an empty status, as Kubernetes
    # writes it (horizontal.go keeps one MetricStatus per spec.metrics entry, a failed one left zero).
    assert status["currentReplicas"] == 1 and status["currentMetrics"] == [{"type": ""}]
    assert spec_replicas(c, ns, "web") == 1
