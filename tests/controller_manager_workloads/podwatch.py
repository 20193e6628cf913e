"""PodWatch: follow every change to a set of pods through a real watch, and remember the extremes.

"Never more than replicas + maxSurge pods" and "never fewer than replicas ready" are claims about
*every moment* of a rollout, not about the end state; polling could miss the moment it was broken.
A watch sees every change the API server makes, so after each event we recount:

    active  pods that are neither finished nor being deleted (what a ReplicaSet counts)
    ready   active pods whose Ready condition is True
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx


def _active(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


class PodWatch:
    def __init__(self, base_url: str, namespace: str = "default", label_selector: str = "") -> None:
        self.url = f"{base_url}/api/v1/namespaces/{namespace}/pods"
        self.label_selector = label_selector
        self.state: dict[str, tuple[bool, bool, bool]] = {}  # name -> (active, ready, bound), for pods that exist
        self.seen: set[str] = set()  # every pod name that ever existed
        self.active = self.ready = self.bound = 0  # bound: active pods with a node
        self.max_active = 0
        self.max_existing = 0  # including pods that are terminating
        self.min_ready_after: int | None = None  # lowest ready count once `arm_ready_floor` was called
        self.events = 0
        self.broken = False
        self._armed = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PodWatch:
        self._thread.start()
        self._started.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def counts(self) -> tuple[int, int]:
        """(active, ready) right now, as far as the watch has told us."""
        with self._lock:
            return self.active, self.ready

    def arm_ready_floor(self) -> None:
        """From now on, track the lowest number of ready pods."""
        with self._lock:
            self._armed = True
            self.min_ready_after = self.ready

    def _run(self) -> None:
        params = {"watch": "1", "labelSelector": self.label_selector or None, "timeoutSeconds": "600"}
        try:
            with httpx.Client(timeout=httpx.Timeout(10.0, read=None)) as client:
                with client.stream("GET", self.url, params={k: v for k, v in params.items() if v}) as resp:
                    self._started.set()
                    for line in resp.iter_lines():
                        if self._stop.is_set():
                            return
                        if line.strip():
                            self._apply(json.loads(line))
        except httpx.HTTPError:
            self.broken = True  # the server went away (end of the test module); counts stay as they were

    def _apply(self, event: dict[str, Any]) -> None:
        pod = event.get("object") or {}
        name = (pod.get("metadata") or {}).get("name")
        if not name or event.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            return
        with self._lock:
            self.events += 1
            self.seen.add(name)
            was_active, was_ready, was_bound = self.state.pop(name, (False, False, False))
            self.active -= was_active
            self.ready -= was_ready
            self.bound -= was_bound
            if event["type"] != "DELETED":
                active = _active(pod)
                ready = active and _ready(pod)
                bound = active and bool((pod.get("spec") or {}).get("nodeName"))
                self.state[name] = (active, ready, bound)
                self.active += active
                self.ready += ready
                self.bound += bound
            self.max_active = max(self.max_active, self.active)
            self.max_existing = max(self.max_existing, len(self.state))
            if self._armed:
                floor = self.min_ready_after
                self.min_ready_after = self.ready if floor is None else min(floor, self.ready)
