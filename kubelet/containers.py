"""One container as the kubelet tracks it: its state machine and the status it reports.

    waiting (ContainerCreating / PodInitializing)
        │ start
        ▼
    running ──(plan ends, or the kubelet stops it)──▶ terminated (Completed: 0 / Error: n)
        ▲                                                 │ restartPolicy says restart
        └──────── waiting (CrashLoopBackOff) ◀────────────┘ after the back-off

The back-off is the kubelet's: the first restart happens at once; after that the container waits
base (10 s), 2×base, 4×base, ... capped at max (5 min) before each start, and `kubectl get pods`
shows CrashLoopBackOff meanwhile. (Kubernetes also forgets the back-off once a container has run
10 minutes without trouble; containers here rarely live that long.)
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from api.timestamps import parse_time, rfc3339
from kubelet.logs import Run
from kubelet.runtime import Plan, image_id, qualified_image


@dataclass
class Container:
    name: str
    image: str
    plan: Plan
    is_init: bool = False
    is_ephemeral: bool = False  # spec.ephemeralContainers: never restarted, never ready, not in the phase
    state: str = "waiting"  # waiting | running | terminated
    reason: str = "ContainerCreating"
    message: str = ""
    container_id: str = ""
    started_at: float | None = None
    finish_at: float | None = None  # when the plan makes the running container exit
    finished_at: float | None = None
    exit_code: int = 0
    restart_count: int = 0
    last_terminated: dict[str, Any] | None = None
    backoff: float = 0.0  # the current back-off step (0: no restart has happened yet)
    backoff_until: float | None = None
    term_reason: str = ""  # the terminated reason when not Completed/Error (OOMKilled)
    stop_at: float | None = None  # the simulated runtime: when a stopping container has exited
    stopping: bool = False  # the kubelet sent SIGTERM (Killing) to this run
    probe_ready: bool | None = None  # the readiness probe's verdict (None: no readiness probe)
    startup_ok: bool = True  # False while a startup probe has not succeeded yet
    kill_reason: str = ""  # a liveness/startup probe failed: the Killing event's message
    prober: Any = field(default=None, repr=False)  # prober.Prober of the current run
    pre_stop: Any = field(default=None, repr=False)  # the asyncio task running its preStop hook, then SIGTERM
    spec: dict[str, Any] = field(default_factory=dict, repr=False)
    run: Run | None = field(default=None, repr=False)
    handle: Any = field(default=None, repr=False)  # what the runtime keeps per run

    # ------------------------------------------------------------------ transitions

    def start(self, now: float, container_id: str = "") -> None:
        self.state, self.reason, self.message = "running", "", ""
        self.container_id = container_id or "fake://" + secrets.token_hex(32)
        self.started_at = now
        self.stop_at, self.stopping, self.term_reason = None, False, ""
        self.probe_ready, self.startup_ok, self.kill_reason = None, True, ""
        self.finish_at = None if self.plan.seconds is None else now + self.plan.seconds
        self.finished_at = None
        self.backoff_until = None

    def terminate(self, at: float, exit_code: int, reason: str = "") -> None:
        self.state = "terminated"
        self.exit_code = exit_code
        self.term_reason = reason if reason not in ("Completed", "Error") else ""
        self.finished_at = at
        self.finish_at = None

    def restart_later(self, until: float, message: str) -> None:
        """Terminated -> waiting in CrashLoopBackOff: remember the run that ended."""
        self.last_terminated = self.terminated_state()
        self.state, self.reason, self.message = "waiting", "CrashLoopBackOff", message
        self.backoff_until = until

    def restart_now(self, now: float, container_id: str = "") -> None:
        if self.state == "terminated":
            self.last_terminated = self.terminated_state()
        self.restart_count += 1
        self.start(now, container_id)

    # ------------------------------------------------------------------ reporting

    @property
    def ready(self) -> bool:
        if self.state != "running":
            return False
        return self.startup_ok and self.probe_ready is not False  # no readiness probe: running is ready

    def terminated_state(self) -> dict[str, Any]:
        return {
            "terminated": {
                "exitCode": self.exit_code,
                "reason": self.term_reason or ("Completed" if self.exit_code == 0 else "Error"),
                "startedAt": rfc3339(self.started_at or 0),
                "finishedAt": rfc3339(self.finished_at or 0),
                "containerID": self.container_id,
            }
        }

    def status(self) -> dict[str, Any]:
        """The core/v1 ContainerStatus."""
        if self.state == "running":
            state: dict[str, Any] = {"running": {"startedAt": rfc3339(self.started_at or 0)}}
        elif self.state == "terminated":
            state = self.terminated_state()
        else:
            state = {"waiting": {"reason": self.reason}}
            if self.message:
                state["waiting"]["message"] = self.message
        out: dict[str, Any] = {
            "name": self.name,
            "state": state,
            "lastState": self.last_terminated or {},
            "ready": self.ready,
            "restartCount": self.restart_count,
            "image": qualified_image(self.image) if self.container_id else self.image,
            "imageID": image_id(self.image) if self.container_id else "",
            "started": self.state == "running" and self.startup_ok,
        }
        if self.is_ephemeral:  # the kubelet's prober never reports on them: no readiness, no `started`
            out["ready"] = False
            del out["started"]
        if self.container_id:
            out["containerID"] = self.container_id
        return out

    def adopt(self, status: dict[str, Any]) -> None:
        """Take over what a previous kubelet process reported (kubelet restart): the fake
        containers "kept running" while no kubelet was watching."""
        self.restart_count = int(status.get("restartCount") or 0)
        last = status.get("lastState") or {}
        self.last_terminated = last if last.get("terminated") else None
        state = status.get("state") or {}
        if self.restart_count:
            self.backoff = 0.0  # unknown: start the back-off afresh, like a rebooted kubelet
        if "running" in state:
            self.container_id = status.get("containerID") or "fake://" + secrets.token_hex(32)
            self.state, self.reason = "running", ""
            self.started_at = parse_time(state["running"].get("startedAt"))
            if self.plan.seconds is not None and self.started_at is not None:
                self.finish_at = self.started_at + self.plan.seconds
        elif "waiting" in state and self.last_terminated:  # caught in CrashLoopBackOff
            t = self.last_terminated["terminated"]
            self.container_id = status.get("containerID") or t.get("containerID") or ""
            self.state = "terminated"  # the restart logic takes it from here
            self.exit_code = int(t.get("exitCode") or 0)
            self.started_at = parse_time(t.get("startedAt"))
            self.finished_at = parse_time(t.get("finishedAt"))
        elif "terminated" in state:
            t = state["terminated"]
            self.container_id = t.get("containerID") or status.get("containerID") or ""
            self.state = "terminated"
            self.exit_code = int(t.get("exitCode") or 0)
            self.term_reason = t.get("reason") if t.get("reason") not in (None, "Completed", "Error") else ""
            self.started_at = parse_time(t.get("startedAt"))
            self.finished_at = parse_time(t.get("finishedAt"))
