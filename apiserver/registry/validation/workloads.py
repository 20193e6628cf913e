"""Validation of the workload controllers: RC, ReplicaSet, Deployment, DaemonSet, StatefulSet.

The rule that matters most: a controller finds "its" pods by label selector, and it creates pods
from its template. If the template's labels did not match the selector, the controller would
create a pod, not see it, create another, forever. So Kubernetes refuses such an object
(`spec.template.metadata.labels: Invalid value: …: `selector` does not match template
`labels``). And in apps/v1 the selector is immutable: changing it would orphan every existing
pod at once.

Jobs and CronJobs live in batch.py; both use the selector helpers from here.
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError, forbidden, invalid_value, not_supported, required
from api.labels import from_label_selector, from_set
from apiserver.registry.validation.meta import validate_immutable, validate_labels
from apiserver.registry.validation.names import is_percent, regex_error
from apiserver.registry.validation.pod import validate_pod_template

Obj = dict[str, Any]
Errors = list[FieldError]

SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def nonnegative(value: object, path: str) -> Errors:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid_value(path, value, "must be greater than or equal to 0")]
    return []


def validate_label_selector(selector: object, path: str) -> Errors:
    """A metav1.LabelSelector: matchLabels plus matchExpressions (set-based)."""
    errs: Errors = []
    if not isinstance(selector, dict):
        return errs
    errs += validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        p = f"{path}.matchExpressions[{i}]"
        if not isinstance(expr, dict):
            continue
        op = expr.get("operator") or ""
        values = expr.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(f"{p}.values",
                                      "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid_value(f"{p}.operator", op, "not a valid selector operator"))
        errs += validate_labels({expr.get("key") or "": ""}, f"{p}.key")
    return errs


def selector_is_empty(selector: object) -> bool:
    if not isinstance(selector, dict):
        return True
    return not (selector.get("matchLabels") or selector.get("matchExpressions"))


def _template_labels(template: object) -> dict[str, str]:
    if not isinstance(template, dict):
        return {}
    return (template.get("metadata") or {}).get("labels") or {}


def selector_mismatch(selector_matches: bool, template: object, path: str) -> Errors:
    if selector_matches:
        return []
    return [invalid_value(f"{path}.metadata.labels", _template_labels(template),
                          "`selector` does not match template `labels`")]


def label_selector_matches(selector: Obj, labels: dict[str, str]) -> bool:
    try:
        return bool(from_label_selector(selector).matches(labels))
    except (ValueError, TypeError):
        return False  # an invalid selector was already reported; it matches nothing


def validate_always_restart(template: object, path: str, kind: str) -> Errors:
    """Pods of long-running controllers must restart: a pod that exits for good would leave the
    controller recreating it anyway, so Kubernetes insists on restartPolicy Always."""
    spec = (template or {}).get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return []
    errs: Errors = []
    policy = spec.get("restartPolicy")
    if policy and policy != "Always":
        errs.append(not_supported(f"{path}.spec.restartPolicy", policy, ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(f"{path}.spec.activeDeadlineSeconds",
                              f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


# ------------------------------------------------------------------ ReplicationController


def validate_rc_spec(spec: Obj) -> Errors:
    errs = nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    selector = spec.get("selector") or {}
    if not selector:
        errs.append(required("spec.selector", ""))
    errs += validate_labels(selector, "spec.selector")
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    template = spec.get("template")
    if not isinstance(template, dict):
        return errs + [required("spec.template", "")]
    if selector:
        try:
            matches = from_set(selector).matches(_template_labels(template))
        except ValueError:
            matches = True  # the selector itself is invalid and was reported above
        errs += selector_mismatch(matches, template, "spec.template")
    errs += validate_pod_template(template, "spec.template")
    errs += validate_always_restart(template, "spec.template", "ReplicationController")
    return errs


# ------------------------------------------------------------------ apps/v1 workloads


def validate_apps_selector_and_template(spec: Obj, kind: str) -> Errors:
    """apps/v1: selector required, non-empty, valid, matching the template labels."""
    errs: Errors = []
    selector = spec.get("selector")
    template = spec.get("template")
    if selector is None:
        errs.append(required("spec.selector", ""))
    else:
        errs += validate_label_selector(selector, "spec.selector")
        if selector_is_empty(selector):
            errs.append(invalid_value("spec.selector", selector,
                                      f"empty selector is invalid for {kind.lower()}"))
    if not isinstance(template, dict):
        return errs + [required("spec.template", "")]
    if isinstance(selector, dict) and not selector_is_empty(selector):
        errs += selector_mismatch(label_selector_matches(selector, _template_labels(template)), template,
                                  "spec.template")
    errs += validate_pod_template(template, "spec.template")
    errs += validate_always_restart(template, "spec.template", kind)
    return errs


def int_or_percent(value: object, path: str) -> tuple[Errors, int | None, bool]:
    """Validate an IntOrString like maxSurge; returns (errors, number, is_percent)."""
    if isinstance(value, str):
        if not is_percent(value):
            msg = regex_error("a valid percent string must be a numeric string followed by an ending '%'",
                              "[0-9]+%", "1%", "93%")
            return [invalid_value(path, value, msg)], None, True
        return [], int(value[:-1]), True
    if isinstance(value, int) and not isinstance(value, bool):
        return nonnegative(value, path), value, False
    return [], None, False


def validate_rolling_update(rolling: Obj, path: str, *, zero_msg: str) -> Errors:
    errs, unavailable, unavailable_pct = int_or_percent(rolling.get("maxUnavailable"),
                                                        f"{path}.maxUnavailable")
    surge_errs, surge, _ = int_or_percent(rolling.get("maxSurge"), f"{path}.maxSurge")
    errs += surge_errs
    if not unavailable and not surge:
        # Neither fewer nor more pods than desired: the rollout could never make progress.
        errs.append(invalid_value(f"{path}.maxUnavailable", rolling.get("maxUnavailable"), zero_msg))
    if unavailable_pct and unavailable is not None and unavailable > 100:
        errs.append(invalid_value(f"{path}.maxUnavailable", rolling.get("maxUnavailable"),
                                  "must not be greater than 100%"))
    return errs


def validate_deployment_spec(spec: Obj) -> Errors:
    errs = nonnegative(spec.get("replicas"), "spec.replicas")
    errs += validate_apps_selector_and_template(spec, "Deployment")
    strategy = spec.get("strategy") or {}
    stype = strategy.get("type")
    if stype == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.append(forbidden("spec.strategy.rollingUpdate",
                                  "may not be specified when strategy `type` is 'Recreate'"))
    elif stype == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            errs.append(required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil"))
        else:
            errs += validate_rolling_update(rolling, "spec.strategy.rollingUpdate",
                                            zero_msg="may not be 0 when `maxSurge` is 0")
    else:
        errs.append(not_supported("spec.strategy", strategy, ["Recreate", "RollingUpdate"]))
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errs += nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        errs += nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= (spec.get("minReadySeconds") or 0):
            errs.append(invalid_value("spec.progressDeadlineSeconds", deadline,
                                      "must be greater than minReadySeconds"))
    return errs


def validate_replica_set_spec(spec: Obj) -> Errors:
    errs = nonnegative(spec.get("replicas"), "spec.replicas")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errs += validate_apps_selector_and_template(spec, "ReplicaSet")
    return errs


def validate_daemon_set_spec(spec: Obj) -> Errors:
    errs = validate_apps_selector_and_template(spec, "DaemonSet")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    strategy = spec.get("updateStrategy") or {}
    stype = strategy.get("type")
    if stype == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            errs.append(required("spec.updateStrategy.rollingUpdate", ""))
        else:
            errs += validate_rolling_update(rolling, "spec.updateStrategy.rollingUpdate",
                                            zero_msg="cannot be 0 when maxSurge is 0")
    elif stype != "OnDelete":
        errs.append(not_supported("spec.updateStrategy", strategy, ["RollingUpdate", "OnDelete"]))
    errs += nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    return errs


def validate_stateful_set_spec(spec: Obj) -> Errors:
    errs: Errors = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(required("spec.podManagementPolicy", ""))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(invalid_value("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = spec.get("updateStrategy") or {}
    stype = strategy.get("type")
    if stype == "RollingUpdate":
        rolling = strategy.get("rollingUpdate") or {}
        errs += nonnegative(rolling.get("partition"), "spec.updateStrategy.rollingUpdate.partition")
    elif stype == "OnDelete":
        if strategy.get("rollingUpdate") is not None:
            errs.append(invalid_value("spec.updateStrategy.rollingUpdate", strategy["rollingUpdate"],
                                      "only allowed for updateStrategy 'RollingUpdate'"))
    elif not stype:
        errs.append(required("spec.updateStrategy", ""))
    else:
        errs.append(invalid_value("spec.updateStrategy", stype, "must be 'RollingUpdate' or 'OnDelete'"))
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errs += validate_apps_selector_and_template(_with_claim_volumes(spec), "StatefulSet")
    return errs


def _with_claim_volumes(spec: Obj) -> Obj:
    """The spec as its pods will be: each volumeClaimTemplate is a volume of the pod template, so
    `volumeMounts` may name it (Kubernetes validates the union of both)."""
    claims = [t for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
    template = spec.get("template")
    if not claims or not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return spec
    pod_spec = dict(template["spec"])
    volumes = list(pod_spec.get("volumes") or [])
    have = {v.get("name") for v in volumes if isinstance(v, dict)}
    for claim in claims:
        name = (claim.get("metadata") or {}).get("name")
        if name and name not in have:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": f"{name}-pod"}})
    pod_spec["volumes"] = volumes
    return {**spec, "template": {**template, "spec": pod_spec}}


STATEFUL_SET_UPDATABLE = ("replicas", "ordinals", "template", "updateStrategy",
                          "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


STATEFUL_SET_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)


def validate_apps_update(new_spec: Obj, old_spec: Obj, resource: str) -> Errors:
    """apps/v1 selectors are immutable; StatefulSets allow only a few spec changes at all."""
    errs = validate_immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector")
    if resource == "statefulsets.apps":
        strip_new = {k: v for k, v in new_spec.items() if k not in STATEFUL_SET_UPDATABLE}
        strip_old = {k: v for k, v in old_spec.items() if k not in STATEFUL_SET_UPDATABLE}
        if strip_new != strip_old:
            errs.append(forbidden("spec", STATEFUL_SET_UPDATE_FORBIDDEN))
    return errs
