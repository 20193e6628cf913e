"""HorizontalController (`horizontalpodautoscaling`): workloads sized by the load on their pods.

Desired state: the target of each HorizontalPodAutoscaler (`spec.scaleTargetRef`: a Deployment,
ReplicaSet, StatefulSet or ReplicationController) has as many replicas as its metrics call for -
for "cpu at 50% of requests", enough pods that their average use is near half of what they
request - within [minReplicas, maxReplicas], and changing no faster than `spec.behavior` allows.
Current state: the target's `/scale` (spec.replicas and status.selector, the same autoscaling/v1
Scale for every kind), its pods from the pod informer, their CPU and memory use from the resource
metrics API (metrics.k8s.io, which the API server proxies to metrics-server), and what this
controller remembers of its recent recommendations and rescales.
What it does about the difference, every --horizontal-pod-autoscaler-sync-period (15s) and when an
HPA is created or its spec changes:

    1. GET the target's /scale                                  AbleToScale False FailedGetScale
    2. replicas 0: hands off (scaled to zero by someone else)   ScalingActive False ScalingDisabled
       outside [min, max]: back inside
       else: a proposal per metric, the largest wins            hpa_metric_specs, hpa_replica_calculator
             then stabilized and rate-limited                   hpa_behavior
    3. PUT the new size to /scale if it differs                 SucceededRescale / FailedUpdateScale
    4. PUT /status if it changed                                hpa_status

It never fails a sync for want of metrics: a missing metrics API (404) or a metrics-server that is
down (503) leaves the target as it is, with ScalingActive False and a Warning event saying why, and
the next period tries again. Events come "From horizontal-pod-autoscaler", as in Kubernetes:

    Normal   SuccessfulRescale             New size: 4; reason: cpu resource utilization (percentage of
                                           request) above target
    Warning  FailedGetResourceMetric       failed to get cpu utilization: unable to get metrics for resource cpu: ...
    Warning  FailedComputeMetricsReplicas  invalid metrics (1 invalid out of 1), first error is: failed to get cpu ...
    Warning  FailedGetScale / FailedRescale
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from api import errors, labels, registry
from api.registry import ResourceType
from client import NORMAL, WARNING, ConnectionFailed
from controller_manager.controller import Controller
from controller_manager.controllers import hpa_behavior as behavior
from controller_manager.controllers import hpa_status as hs
from controller_manager.controllers.hpa_metric_specs import (
    CONTAINER_RESOURCE,
    RESOURCE,
    MetricsResult,
    MetricsSnapshot,
    compute_replicas_for_metrics,
)
from controller_manager.controllers.hpa_metrics import MetricsUnavailable, fetch_pod_metrics
from controller_manager.controllers.hpa_replica_calculator import ReplicaCalculator, Tolerances

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

HPA = "horizontalpodautoscalers.autoscaling"
_FAILURES = (errors.StatusError, ConnectionFailed)


class ScaleTargetError(Exception):
    """The target's scale could not be read; the message is what Kubernetes reports."""


def scale_target_resources(ref: Mapping[str, Any]) -> list[ResourceType]:
    """The resources `scaleTargetRef` may name: by group (from apiVersion) and kind, any version,
    as Kubernetes' RESTMapper finds them."""
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    parts = api_version.split("/")
    if len(parts) > 2:
        raise ScaleTargetError(f"unexpected GroupVersion string: {api_version}")
    group = parts[0] if len(parts) == 2 else ""
    found = [rt for rt in registry.all_resources() if rt.group == group and rt.kind == kind]
    if not found:
        raise ScaleTargetError(f'no matches for kind "{kind}" in group "{group}"')
    return found


class HorizontalController(Controller):
    name = "horizontalpodautoscaling"
    component = "horizontal-pod-autoscaler"

    def setup(self) -> None:
        f = self.ctx.informers
        self.hpas = f.informer_for(HPA)
        self.pods = f.informer_for("pods")
        self.hpas.add_event_handler(self.enqueue, self._hpa_updated, self.enqueue)
        o = self.ctx.options
        self.calculator = ReplicaCalculator(
            o.horizontal_pod_autoscaler_cpu_initialization_period, o.horizontal_pod_autoscaler_initial_readiness_delay
        )
        self.tolerance = o.horizontal_pod_autoscaler_tolerance
        self.downscale_stabilization = o.horizontal_pod_autoscaler_downscale_stabilization
        self.histories: dict[str, behavior.ScalingHistory] = {}  # per HPA key, in memory only
        self.selectors: dict[str, labels.Selector] = {}  # per HPA key: its target's pod selector

    def resync(self) -> tuple[float, Callable[[], Iterable[Mapping[str, Any]]]]:
        return self.ctx.options.horizontal_pod_autoscaler_sync_period, self.hpas.list

    def _hpa_updated(self, old: Obj, new: Obj) -> None:
        if old.get("spec") != new.get("spec"):  # not our own status writes
            self.enqueue(new)

    async def reconcile(self, key: str) -> None:
        hpa = self.hpas.get(key)
        if hpa is None:  # deleted: forget it
            self.histories.pop(key, None)
            self.selectors.pop(key, None)
            return
        await self.reconcile_autoscaler(hpa, key, time.time())

    # -- one sync -------------------------------------------------------------------------------
    async def reconcile_autoscaler(self, hpa: Obj, key: str, now: float) -> None:
        st = hs.StatusBuilder(hpa, now)
        spec = hpa.get("spec") or {}
        namespace = hpa["metadata"]["namespace"]
        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{namespace}/{ref.get('name')}"
        try:
            rt, scale = await self._get_scale(namespace, ref)
        except ScaleTargetError as exc:
            self.recorder.event(hpa, WARNING, "FailedGetScale", str(exc))
            st.set_condition(hs.failed_get_scale(str(exc)))
            await self._write_status(hpa, st)
            log.info("hpa %s: failed to query scale subresource for %s: %s", key, reference, exc)
            return
        st.set_condition(hs.succeeded_get_scale())
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        history = self.histories.setdefault(key, behavior.ScalingHistory())
        history.record_initial_recommendation(current, now)
        min_replicas = 1 if spec.get("minReplicas") is None else int(spec["minReplicas"])
        max_replicas = int(spec.get("maxReplicas") or 0)
        statuses: Sequence[Mapping[str, Any]] | None = None
        desired, reason, rescale = 0, "", True
        if current == 0 and min_replicas != 0:
            rescale = False  # someone scaled it to zero: autoscaling is off until they scale it up
            st.set_condition(hs.scaling_disabled())
        elif current > max_replicas:
            desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_replicas:
            desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
        else:
            result = await self._compute_replicas(hpa, key, scale, current, now)
            statuses = result.statuses
            for why, message in result.events:
                self.recorder.event(hpa, WARNING, why, message)
            if result.condition is not None:
                st.set_condition(result.condition)
            if result.replicas == -1:
                st.set_current(current, statuses)
                await self._write_status(hpa, st)
                self.recorder.event(hpa, WARNING, "FailedComputeMetricsReplicas", result.error)
                log.info(
                    "hpa %s: failed to compute desired number of replicas for %s: %s", key, reference, result.error
                )
                return
            if result.error:  # some metrics failed, the others still scale up: go on
                log.info("hpa %s: %s", key, result.error)
            if result.replicas > desired:
                desired = result.replicas
            if desired > current:
                reason = f"{result.metric} above target"
            elif desired < current:
                reason = "All metrics below target"
            normalized = self._normalize(hpa, history, current, desired, min_replicas, max_replicas, now)
            st.set_condition(hs.Condition(hs.ABLE_TO_SCALE, hs.TRUE, normalized.able_reason, normalized.able_message))
            st.set_condition(hs.Condition(hs.SCALING_LIMITED, hs.TRUE if normalized.limited else hs.FALSE,
                                          normalized.limited_reason, normalized.limited_message))  # fmt: skip
            desired = normalized.replicas
            rescale = desired != current
        if rescale:
            try:
                await self.client.update(rt, {**scale, "spec": {**(scale.get("spec") or {}), "replicas": desired}},
                                         subresource="scale")  # fmt: skip
            except _FAILURES as exc:
                self.recorder.event(
                    hpa, WARNING, "FailedRescale", f"New size: {desired}; reason: {reason}; error: {exc}"
                )
                st.set_condition(hs.failed_update_scale(str(exc)))
                st.set_current(current, statuses)
                await self._write_status(hpa, st)
                log.info("hpa %s: failed to rescale %s: %s", key, reference, exc)
                return
            st.set_condition(hs.succeeded_rescale(desired))
            self.recorder.event(hpa, NORMAL, "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            if spec.get("behavior") is not None:
                up, down = behavior.behavior_rules(spec["behavior"], self.downscale_stabilization)
                history.record_scale(up, down, current, desired, now)
            log.info("hpa %s: rescaled %s from %d to %d: %s", key, reference, current, desired, reason)
        else:
            desired = current
        st.set_status(current, desired, statuses, rescale)
        await self._write_status(hpa, st)

    async def _get_scale(self, namespace: str, ref: Mapping[str, Any]) -> tuple[ResourceType, Obj]:
        """The target's Scale, from the first of its resources that answers (the first error if none)."""
        first: Exception | None = None
        for rt in scale_target_resources(ref):
            try:
                return rt, await self.client.get(rt, str(ref.get("name") or ""), namespace, subresource="scale")
            except _FAILURES as exc:
                first = first or exc
        raise ScaleTargetError(str(first or "unrecognized resource"))

    async def _compute_replicas(self, hpa: Obj, key: str, scale: Obj, current: int, now: float) -> MetricsResult:
        """Check the target's selector (Kubernetes' validateAndParseSelector), read the pods and
        their metrics, and evaluate spec.metrics."""
        namespace = hpa["metadata"]["namespace"]
        text = str((scale.get("status") or {}).get("selector") or "")
        if not text:
            cond = hs.Condition(
                hs.SCALING_ACTIVE, hs.FALSE, "InvalidSelector", "the HPA target's scale is missing a selector"
            )
            return MetricsResult(
                -1, "", [], "selector is required", cond, [("SelectorRequired", "selector is required")]
            )
        try:
            selector = labels.parse(text)
        except labels.SelectorParseError as exc:
            message = f"couldn't convert selector into a corresponding internal selector object: {exc}"
            cond = hs.Condition(hs.SCALING_ACTIVE, hs.FALSE, "InvalidSelector", message)
            return MetricsResult(-1, "", [], message, cond, [("InvalidSelector", message)])
        self.selectors[key] = selector
        pods = [p for p in self.pods.by_index("namespace", namespace) if selector.matches(p["metadata"].get("labels"))]
        selecting = self._hpas_selecting(namespace, pods)
        if len(selecting) > 1:
            message = f"pods by selector {text} are controlled by multiple HPAs: [{' '.join(selecting)}]"
            cond = hs.Condition(hs.SCALING_ACTIVE, hs.FALSE, "AmbiguousSelector", message)
            return MetricsResult(-1, "", [], message, cond, [("AmbiguousSelector", message)])
        specs = list((hpa.get("spec") or {}).get("metrics") or [])
        snapshot = MetricsSnapshot(pods, now=now)
        if any(s.get("type") in (RESOURCE, CONTAINER_RESOURCE) for s in specs):
            try:
                snapshot = MetricsSnapshot(
                    pods, await fetch_pod_metrics(self.client, namespace, str(selector)), now=now
                )
            except MetricsUnavailable as exc:
                snapshot = MetricsSnapshot(pods, None, str(exc), now)
        return compute_replicas_for_metrics(specs, current, namespace, snapshot, self.calculator, self._tolerances(hpa))

    def _hpas_selecting(self, namespace: str, pods: list[Obj]) -> list[str]:
        """The HPAs (as "ns/name") whose target's selector picks any of `pods`."""
        found = []
        for key, selector in self.selectors.items():
            if (
                key.startswith(f"{namespace}/")
                and self.hpas.get(key) is not None
                and any(selector.matches(p["metadata"].get("labels")) for p in pods)
            ):
                found.append(key)
        return sorted(found)

    def _tolerances(self, hpa: Obj) -> Tolerances:
        """--horizontal-pod-autoscaler-tolerance, unless spec.behavior sets one for a direction."""
        up = down = self.tolerance
        spec_behavior = (hpa.get("spec") or {}).get("behavior")
        if spec_behavior is not None:
            up_rules, down_rules = behavior.behavior_rules(spec_behavior, self.downscale_stabilization)
            up = self.tolerance if up_rules.tolerance is None else up_rules.tolerance
            down = self.tolerance if down_rules.tolerance is None else down_rules.tolerance
        return Tolerances(scale_down=down, scale_up=up)

    def _normalize(self, hpa: Obj, history: behavior.ScalingHistory, current: int, desired: int, min_replicas: int,
                   max_replicas: int, now: float) -> behavior.Normalized:  # fmt: skip
        spec_behavior = (hpa.get("spec") or {}).get("behavior")
        if spec_behavior is None:
            return behavior.normalize_desired_replicas(history, current, desired, min_replicas, max_replicas,
                                                       self.downscale_stabilization, now)  # fmt: skip
        up, down = behavior.behavior_rules(spec_behavior, self.downscale_stabilization)
        return behavior.normalize_desired_replicas_with_behaviors(history, up, down, current, desired, min_replicas,
                                                                  max_replicas, now)  # fmt: skip

    async def _write_status(self, hpa: Obj, st: hs.StatusBuilder) -> None:
        """PUT /status when it changed. A conflict is retried by the loop; other failures are
        reported and left to the next sync."""
        if not st.changed():
            return
        try:
            await self.client.update_status(HPA, {**hpa, "status": st.result()})
        except errors.ConflictError:
            raise
        except errors.NotFoundError:
            pass  # deleted meanwhile
        except _FAILURES as exc:
            self.recorder.event(hpa, WARNING, "FailedUpdateStatus", str(exc))
            log.info(
                "hpa %s/%s: failed to update status: %s", hpa["metadata"]["namespace"], hpa["metadata"]["name"], exc
            )
