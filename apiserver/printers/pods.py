"""The pod row: the one table every Kubernetes user reads a hundred times a day.

STATUS is not a field of the Pod. It is a summary the printer computes, and it is worth reading
how, because it explains most of what people see in `kubectl get pods`:

1. Start from `status.phase` (Pending, Running, Succeeded, Failed, Unknown), or `status.reason`
   when the kubelet set one (Evicted, NodeLost...). A pod held back by scheduling gates says
   SchedulingGated.
2. Walk the init containers in order. The first one that has not finished successfully decides:
   `Init:<reason>` when it failed or waits for a reason (`Init:CrashLoopBackOff`), else
   `Init:<i>/<n>` (i init containers done out of n). Sidecars (init containers with
   restartPolicy Always) that have started count as ready containers instead.
3. Once initialised, walk the app containers from last to first; any container that waits
   (ContainerCreating, CrashLoopBackOff, ImagePullBackOff) or has terminated (Completed, Error,
   OOMKilled, or `ExitCode:N` / `Signal:N` without a reason) overrides the status. Running and
   ready containers count towards READY. A pod whose status reads Completed while one container
   still runs is shown as Running (or NotReady if the pod is not Ready).
4. A pod being deleted shows Terminating, unless it already finished, and Unknown when its node
   was lost (reason NodeLost).

RESTARTS sums the containers' restartCount and adds how long ago the most recent one died:
`3 (5m ago)`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import AGE, NAME, NONE, Cells, Column, TablePrinter, dig, items, number, wide
from apiserver.printers.duration import parse_time, since, translate_timestamp_since

# The reason the node lifecycle controller sets on pods of an unreachable node.
NODE_UNREACHABLE_POD_REASON = "NodeLost"

COLUMNS = (
    NAME,
    Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", description="The aggregate status of the containers in this pod."),
    Column(
        "Restarts",
        description="The number of times the containers in this pod have been restarted and when the "
        "last container in this pod has restarted.",
    ),
    AGE,
    wide("IP", "podIP address allocated to the pod. Routable at least within the cluster."),
    wide("Node", "NodeName indicates in which node this pod is scheduled."),
    wide("Nominated Node", "nominatedNodeName is set when this pod preempts other pods on the node."),
    wide("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."),
)


def _is_restartable_init(container: dict[str, Any] | None) -> bool:
    """A sidecar: an init container that keeps running (restartPolicy: Always)."""
    return container is not None and container.get("restartPolicy") == "Always"


def _has_condition(pod: dict[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in items(pod, "status", "conditions")
    )


def _last_finished(status: dict[str, Any]) -> datetime | None:
    """When the previous run of this container ended (lastState.terminated.finishedAt)."""
    return parse_time(dig(status, "lastState", "terminated", "finishedAt"))


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _terminated_reason(terminated: dict[str, Any], prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + terminated["reason"]
    signal = number(terminated, "signal")
    if signal:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{number(terminated, 'exitCode')}"


def pod_cells(pod: dict[str, Any], now: datetime) -> Cells:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    init_specs = items(spec, "initContainers")
    init_by_name = {c.get("name"): c for c in init_specs}

    total = len(items(spec, "containers")) + sum(1 for c in init_specs if _is_restartable_init(c))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for condition in items(status, "conditions"):
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    initializing = False
    for index, container in enumerate(items(status, "initContainerStatuses")):
        count = number(container, "restartCount")
        finished = _last_finished(container)
        restarts += count
        last_restart = _later(last_restart, finished)
        sidecar = _is_restartable_init(init_by_name.get(container.get("name")))
        if sidecar:
            sidecar_restarts += count
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        terminated = dig(container, "state", "terminated")
        waiting = dig(container, "state", "waiting")
        if terminated is not None and number(terminated, "exitCode") == 0:
            continue  # this init container finished successfully; look at the next one
        if sidecar and container.get("started"):
            if container.get("ready"):
                ready += 1
            continue
        if terminated is not None:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _has_condition(pod, "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for container in reversed(items(status, "containerStatuses")):
            restarts += number(container, "restartCount")
            last_restart = _later(last_restart, _last_finished(container))
            waiting = dig(container, "state", "waiting")
            terminated = dig(container, "state", "terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None:
                reason = _terminated_reason(terminated)
            elif container.get("ready") and dig(container, "state", "running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _has_condition(pod, "Ready") else "NotReady"

    deleting = dig(pod, "metadata", "deletionTimestamp") is not None
    if deleting and status.get("reason") == NODE_UNREACHABLE_POD_REASON:
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_text = f"{restarts} ({since(last_restart, now)} ago)"

    return [
        dig(pod, "metadata", "name", default=""),
        f"{ready}/{total}",
        reason,
        restarts_text,
        translate_timestamp_since(dig(pod, "metadata", "creationTimestamp"), now),
        *_wide_cells(spec, status),
    ]


def _wide_cells(spec: dict[str, Any], status: dict[str, Any]) -> Cells:
    # The first of status.podIPs; a wire object may carry only the older singular podIP.
    pod_ips = items(status, "podIPs")
    pod_ip = (pod_ips[0].get("ip") if pod_ips else status.get("podIP")) or NONE
    gates = items(spec, "readinessGates")
    readiness = NONE
    if gates:
        conditions = items(status, "conditions")
        passed = 0
        for gate in gates:
            for condition in conditions:
                if condition.get("type") == gate.get("conditionType"):
                    passed += condition.get("status") == "True"
                    break
        readiness = f"{passed}/{len(gates)}"
    return [
        pod_ip,
        spec.get("nodeName") or NONE,
        status.get("nominatedNodeName") or NONE,
        readiness,
    ]


def pod_conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """Finished pods carry a Completed row condition, as in Kubernetes."""
    phase = dig(pod, "status", "phase")
    if phase == "Succeeded":
        message = "The pod has completed successfully."
    elif phase == "Failed":
        message = "The pod failed."
    else:
        return []
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


PRINTERS = {"pods": TablePrinter(COLUMNS, pod_cells, pod_conditions)}
