"""Defaults for the workload controllers: RC, ReplicaSet, Deployment, DaemonSet, StatefulSet,
Job, CronJob and the HorizontalPodAutoscaler.

Each workload carries a Pod template; Kubernetes defaults that template like any PodSpec, so a
`kubectl get deploy -o yaml` shows `restartPolicy: Always`, `dnsPolicy: ClusterFirst` … in the
template even though nobody wrote them. The workload-level defaults below are the ones from
pkg/apis/{core,apps,batch,autoscaling}/v1/defaults.go in Kubernetes 1.32.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.registry.defaults.pod import default_pod_template

Obj = dict[str, Any]

# The label a Job's generated selector matches on; the other three are added to the template
# so people (and older tools) can find a job's pods by name.
JOB_CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _template_labels(spec: Obj) -> dict[str, str]:
    template = spec.get("template")
    if not isinstance(template, dict):
        return {}
    return (template.get("metadata") or {}).get("labels") or {}


def default_replication_controller(obj: Obj) -> None:
    # The core/v1 RC predates label selectors: an empty selector means "the template's labels",
    # and an RC with no labels of its own borrows them too.
    spec = _spec(obj)
    labels = _template_labels(spec)
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    default_pod_template(spec.get("template"))


def default_replica_set(obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    default_pod_template(spec.get("template"))


def default_deployment(obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.setdefault("strategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        # 25% each way: up to a quarter of the pods may be missing, a quarter extra may exist.
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    default_pod_template(spec.get("template"))


def default_daemon_set(obj: Obj) -> None:
    spec = _spec(obj)
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        # One node at a time, and never two daemon pods on a node (a surge would mean that).
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    default_pod_template(spec.get("template"))


def default_stateful_set(obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        rolling.setdefault("partition", 0)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    policy.setdefault("whenDeleted", "Retain")
    policy.setdefault("whenScaled", "Retain")
    default_pod_template(spec.get("template"))


def default_job(obj: Obj) -> None:
    """SetDefaults_Job plus the selector the Job strategy generates.

    Unless `spec.manualSelector` is true, Kubernetes ignores any user selector and makes one
    that can only ever match this Job's own pods: the Job's uid. So this must run after
    `metadata.uid` is set; without a uid the selector part is skipped.
    """
    spec = _spec(obj)
    meta = obj.setdefault("metadata", {})
    # A plain one-pod job: both unset means one completion, one at a time.
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    if not spec.get("completionMode"):
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if not spec.get("podReplacementPolicy"):
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    uid = meta.get("uid")
    if uid and spec.get("manualSelector") is not True:
        template = spec.setdefault("template", {})
        tmeta = template.get("metadata")
        if not isinstance(tmeta, dict):
            tmeta = template["metadata"] = {}
        labels = tmeta.get("labels")
        if not isinstance(labels, dict):
            labels = tmeta["labels"] = {}
        name = meta.get("name") or ""
        labels[LEGACY_CONTROLLER_UID_LABEL] = uid
        labels[LEGACY_JOB_NAME_LABEL] = name
        labels[JOB_CONTROLLER_UID_LABEL] = uid
        labels[JOB_NAME_LABEL] = name
        spec["selector"] = {"matchLabels": {JOB_CONTROLLER_UID_LABEL: uid}}
    labels = _template_labels(spec)
    if labels and not meta.get("labels"):
        meta["labels"] = dict(labels)
    default_pod_template(spec.get("template"))


def default_cron_job(obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
        default_pod_template(job_template["spec"].get("template"))


# autoscaling/v2's defaults for a `behavior` that is given in part: what the HPA did before
# `behavior` existed (scale up by 4 pods or 100% per 15 s, whichever is more; scale down by up
# to 100% per 15 s). scaleDown has no default window: the controller's
# --horizontal-pod-autoscaler-downscale-stabilization stands in for it.
HPA_SCALE_UP_RULES: Obj = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
HPA_SCALE_DOWN_RULES: Obj = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def _scaling_rules(given: Any, defaults: Obj) -> Obj:
    """The defaults, with every field the user set (not null) taking their place."""
    rules = copy.deepcopy(defaults)
    if isinstance(given, dict):
        rules.update({k: v for k, v in given.items() if v is not None})
    return rules


def default_horizontal_pod_autoscaler(obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        # autoscaling/v2: no metrics means "keep average CPU utilisation at 80%".
        spec["metrics"] = [{
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
        }]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):  # given at all: both directions filled in, as Kubernetes does
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), HPA_SCALE_UP_RULES)
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), HPA_SCALE_DOWN_RULES)
