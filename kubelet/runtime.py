"""The fake container runtime: what a container "does", decided from its command alone.

A real kubelet asks a container runtime (containerd, CRI-O) to run processes. mini-k8s runs
nothing: each container follows a *plan* read from its command and arguments, so the same
manifest always behaves the same way (deterministic, and cheap enough for 1,000 nodes):

    command + args (joined)                    the container ...
    -----------------------------------------  ------------------------------------------------
    sleep N   (N in seconds; 5s/2m/1h ok)      runs N seconds, exits 0
    sh -c "sleep N"  (sh, bash, /bin/sh ...)   the same: a shell running one modelled command
    sh -c "touch F; sleep N; rm -f F; ..."     a script simprobe.py models in full (touch, rm,
                                               mkdir, echo > F, sleep, exit): runs its sleeps'
                                               total, then exits 0 (or exit's code)
    exit N                                     exits with code N at once
    false / true                               exits 1 / 0 at once
    sleep infinity, or anything else           runs until the pod is deleted ...
      ... but in a Job's pod (ownerReference   ... completes with exit 0 after --job-run-time
      kind Job, or label job-name /                (e.g. the perl `pi` example)
      batch.kubernetes.io/job-name)
      ... or as an init container              ... the same: init containers exist to finish

Stopping (graceful deletion) is modelled as a process that honours SIGTERM: it exits with code 0
(reason Completed) after --container-stop-delay (0 by default), which is never longer than the
grace period. A container still running when the grace period ends would be SIGKILLed and report
137 in Kubernetes; our containers never ignore SIGTERM, so that does not happen here.

This module is pure: it turns a container spec into a Plan. Time and state live in the pod
worker (podworker.py); the synthetic log lines live in logs.py.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from typing import Any

from kubelet.simprobe import SHELLS, script_of

_SLEEP = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True)
class Plan:
    """What one run of a container does: run `seconds` (None: until stopped), then exit `exit_code`."""

    seconds: float | None
    exit_code: int = 0
    description: str = ""

    @property
    def forever(self) -> bool:
        return self.seconds is None


RUN_FOREVER = Plan(None, 0, "runs until stopped")


def argv(container: dict[str, Any]) -> list[str]:
    return [str(x) for x in (container.get("command") or [])] + [str(x) for x in (container.get("args") or [])]


def _model(words: list[str]) -> Plan | None:
    """The plan for a command we model, or None when we do not model it."""
    if not words:
        return None
    prog = words[0].rsplit("/", 1)[-1]
    if prog in SHELLS and len(words) >= 3 and words[1] == "-c":
        script = script_of(words[:3])
        if script is not None and script.complete and script.seconds:  # touch f; sleep 30; rm f; sleep 600
            return Plan(script.seconds, script.exit_code, script.description)
        try:
            inner = shlex.split(words[2])
        except ValueError:
            return None
        return _model(inner)
    if prog == "sleep" and len(words) == 2:
        if words[1] == "infinity":
            return RUN_FOREVER
        m = _SLEEP.match(words[1])
        if m:
            seconds = float(m.group(1)) * _SLEEP_UNITS[m.group(2)]
            return Plan(seconds, 0, f"sleep {words[1]}")
    if prog == "exit" and len(words) <= 2:
        code = int(words[1]) if len(words) == 2 and words[1].lstrip("-").isdigit() else 0
        return Plan(0.0, code % 256, f"exit {code}")
    if prog == "true" and len(words) == 1:
        return Plan(0.0, 0, "true")
    if prog == "false" and len(words) == 1:
        return Plan(0.0, 1, "false")
    return None


def is_job_pod(pod: dict[str, Any]) -> bool:
    md = pod.get("metadata") or {}
    labels = md.get("labels") or {}
    if "job-name" in labels or "batch.kubernetes.io/job-name" in labels:
        return True
    return any(ref.get("kind") == "Job" for ref in md.get("ownerReferences") or [])


def plan_for(container: dict[str, Any], *, finishes: bool, job_run_time: float) -> Plan:
    """The plan of `container`. `finishes` is true for Job pods and init containers: a command we
    do not model then completes (exit 0) after `job_run_time` instead of running forever."""
    plan = _model(argv(container))
    if plan is not None:
        return plan
    if finishes:
        return Plan(job_run_time, 0, "simulated run of an unmodelled command")
    return RUN_FOREVER


def fake_digest(image: str) -> str:
    """A stable sha256 per image name: `docker.io/library/nginx@sha256:<this>`."""
    return hashlib.sha256(image.encode()).hexdigest()


def image_id(image: str) -> str:
    """What containerd reports as imageID: the fully qualified repository with the digest."""
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo[: len(repo) - len(last)] + last.split(":", 1)[0]
    parts = repo.split("/")
    if len(parts) == 1:
        repo = f"docker.io/library/{repo}"
    elif "." not in parts[0] and ":" not in parts[0] and parts[0] != "localhost":
        repo = f"docker.io/{repo}"
    return f"{repo}@sha256:{fake_digest(image)}"


def qualified_image(image: str) -> str:
    """`nginx:1.25` -> `docker.io/library/nginx:1.25` (what containerd shows as status.image)."""
    if "@" in image:
        return image
    last = image.rsplit("/", 1)[-1]
    ref = image if ":" in last else f"{image}:latest"
    parts = ref.split("/")
    if len(parts) == 1:
        return f"docker.io/library/{ref}"
    if "." not in parts[0] and ":" not in parts[0] and parts[0] != "localhost":
        return f"docker.io/{ref}"
    return ref
