"""From the containers the kubelet tracks to the PodStatus the API shows.

The phase is a summary of the containers (Kubernetes' getPhase, simplified):
- Failed:    an init container failed and restartPolicy is Never, or every app container has
             terminated for good and at least one exited non-zero;
- Pending:   the sandbox is not up yet, init containers are still running, or an app container
             has never started;
- Succeeded: every app container terminated with exit code 0 and none will restart;
- Running:   otherwise (including a container waiting in CrashLoopBackOff between restarts).

The conditions, in the order `kubectl describe` lists them:
PodReadyToStartContainers (sandbox up), Initialized (init containers done), Ready and
ContainersReady (every app container running, started and not failing its readiness probe), PodScheduled (written by
the scheduler's binding; added here for pods created with spec.nodeName already set).
A condition keeps its lastTransitionTime until its status really changes.
"""

from __future__ import annotations

from typing import Any

from kubelet.containers import Container

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def restarts(policy: str, c: Container) -> bool:
    """Does this terminated container get started again? (An ephemeral container: never.)"""
    if c.is_ephemeral:
        return False
    if c.is_init:
        return c.exit_code != 0 and policy != "Never"
    return policy == "Always" or (policy == "OnFailure" and c.exit_code != 0)


def phase(policy: str, sandbox_ready: bool, inits: list[Container], mains: list[Container]) -> str:
    if any(c.state == "terminated" and c.exit_code != 0 and policy == "Never" for c in inits):
        return "Failed"
    if not sandbox_ready or not initialized(inits):
        return "Pending"
    if any(c.state == "waiting" and c.restart_count == 0 and c.last_terminated is None for c in mains):
        return "Pending"
    if all(c.state == "terminated" and not restarts(policy, c) for c in mains):
        return "Succeeded" if all(c.exit_code == 0 for c in mains) else "Failed"
    return "Running"


def final_phase(mains: list[Container]) -> str:
    """After a graceful deletion stopped everything (Kubernetes >= 1.27 marks such pods terminal)."""
    return "Succeeded" if all(c.state == "terminated" and c.exit_code == 0 for c in mains) else "Failed"


def initialized(inits: list[Container]) -> bool:
    return all(c.state == "terminated" and c.exit_code == 0 for c in inits)


def _condition(
    old: dict[str, dict[str, Any]], type_: str, ok: bool, now: str, reason: str = "", message: str = ""
) -> dict[str, Any]:
    status = "True" if ok else "False"
    prev = old.get(type_)
    since = prev["lastTransitionTime"] if prev and prev.get("status") == status and prev.get(
        "lastTransitionTime") else now  # fmt: skip
    cond: dict[str, Any] = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": since}
    if not ok and reason:
        cond["reason"] = reason
    if not ok and message:
        cond["message"] = message
    return cond


def conditions(
    old_list: list[dict[str, Any]],
    phase_: str,
    sandbox_ready: bool,
    inits: list[Container],
    mains: list[Container],
    now: str,
) -> list[dict[str, Any]]:
    old = {c.get("type"): c for c in old_list if c.get("type")}
    done = initialized(inits)
    unready = [c.name for c in mains if not c.ready]
    if phase_ == "Succeeded" or (phase_ == "Failed" and not any(c.ready for c in mains)):
        ready_reason, ready_msg = "PodCompleted", ""
    else:
        ready_reason = "ContainersNotReady"
        ready_msg = f"containers with unready status: [{' '.join(unready)}]"
    incomplete = " ".join(c.name for c in inits if c.state != "terminated" or c.exit_code)
    init_msg = f"containers with incomplete status: [{incomplete}]"
    mine = [
        _condition(old, "PodReadyToStartContainers", sandbox_ready, now),
        _condition(old, "Initialized", done, now, "ContainersNotInitialized", init_msg),
        _condition(old, "Ready", not unready, now, ready_reason, ready_msg),
        _condition(old, "ContainersReady", not unready, now, ready_reason, ready_msg),
    ]
    scheduled = old.get("PodScheduled") or {
        "type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now,
    }  # fmt: skip
    others = [c for t, c in old.items() if t not in KUBELET_CONDITIONS and t != "PodScheduled"]
    return [*mine, scheduled, *others]
