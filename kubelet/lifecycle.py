"""Container lifecycle hooks: preStop, run before a container is told to stop.

Why it matters: when a pod is deleted, two things start at once - the kubelet stops its
containers, and the endpoints controller and kube-proxy take the pod out of its Services. The
second takes a moment; a server that exits at the first SIGTERM refuses the connections that
still arrive in that moment. A preStop hook (`sleep: {seconds: 5}`, or `exec: sleep 5` in older
manifests) keeps it serving until no new connection can reach it - the standard way to roll a
Deployment with no failed request (lab 10 watches one).

As the kubelet does it (kuberuntime_container.go): the hook runs first, within the pod's grace
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


def pre_stop_hook(spec: dict[str, Any]) -> dict[str, Any] | None:
    return ((spec.get("lifecycle") or {}).get("preStop")) or None


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
