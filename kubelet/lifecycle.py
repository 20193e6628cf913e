"""Container lifecycle hooks: postStart, run as a container starts, and preStop, run before it is
told to stop.

Why it matters: when a pod is deleted, two things start at once - the kubelet stops its
containers, and the endpoints controller and kube-proxy take the pod out of its Services. The
second takes a moment; a server that exits at the first SIGTERM refuses the connections that
still arrive in that moment. A preStop hook (`sleep: {seconds: 5}`, or `exec: sleep 5` in older
manifests) keeps it serving until no new connection can reach it - the standard way to roll a
Deployment with no failed request (lab 10 watches one).

postStart runs right after the container started (it is already running: the hook may race its
entrypoint, as in Kubernetes); the kubelet waits for it before it looks at the pod again, so the
pod stays ContainerCreating meanwhile. A hook that fails is a Warning `FailedPostStartHook` event
with what went wrong, and the container is killed (`Killing`: "FailedPostStartHook") and restarted
as its restartPolicy says.

preStop, as the kubelet does it (kuberuntime_container.go): the hook runs first, within the pod's grace
period; then SIGTERM with what is left of the grace period, but never less than 2 s; a hook that
fails is a Warning `FailedPreStopHook` event ("PreStopHook failed") and the stop goes on. The
handlers are the probes' (exec in the container's namespaces, httpGet, tcpSocket: prober.py) plus
`sleep`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from kubelet import prober

MIN_GRACE_AFTER_HOOK = 2.0
POST_START_TIMEOUT = 300.0  # Kubernetes sets none; a hook that hangs must not hold the pod forever


def pre_stop_hook(spec: dict[str, Any]) -> dict[str, Any] | None:
    return ((spec.get("lifecycle") or {}).get("preStop")) or None


def post_start_hook(spec: dict[str, Any]) -> dict[str, Any] | None:
    return ((spec.get("lifecycle") or {}).get("postStart")) or None


async def run_post_start(
    hook: dict[str, Any], spec: dict[str, Any], context: tuple[Callable[[], int | None], dict[str, str], str],
    pod: dict[str, Any],
) -> str | None:
    """Run the hook to its end; None, or the FailedPostStartHook event's message."""
    pid, env, host = context
    if "sleep" in hook:
        await asyncio.sleep(float((hook["sleep"] or {}).get("seconds") or 0))
        return None
    failure = await prober.run_handler({**hook, "timeoutSeconds": POST_START_TIMEOUT}, spec, pid(), env, host)
    if failure is None:
        return None
    md = pod.get("metadata") or {}
    who = f'Container "{spec.get("name")}" in Pod "{md.get("name")}_{md.get("namespace")}({md.get("uid")})"'
    if "exec" in hook:
        command = "[" + " ".join(str(x) for x in (hook["exec"] or {}).get("command") or []) + "]"
        return f'Exec lifecycle hook ({command}) for {who} failed - error: {failure}, message: ""'
    if "httpGet" in hook:
        return f"HTTP lifecycle hook ({(hook['httpGet'] or {}).get('path') or '/'}) for {who} failed - error: {failure}"
    return f"lifecycle hook for {who} failed - error: {failure}"


async def run_pre_stop(
    hook: dict[str, Any], spec: dict[str, Any], context: tuple[Callable[[], int | None], dict[str, str], str],
    grace: float,
) -> tuple[str | None, float]:
    """Run the hook for at most `grace` seconds: (its failure or None, the grace left for SIGTERM)."""
    started = time.monotonic()
    pid, env, host = context
    failure: str | None
    if "sleep" in hook:
        await asyncio.sleep(min(float((hook["sleep"] or {}).get("seconds") or 0), grace))
        failure = None
    else:
        failure = await prober.run_handler({**hook, "timeoutSeconds": max(grace, 1)}, spec, pid(), env, host)
    left = grace - (time.monotonic() - started)
    return failure, max(left, MIN_GRACE_AFTER_HOOK)
