"""DisruptionController (`disruption`): every PodDisruptionBudget knows how many pods may go now.

Desired state: each PDB's status says how many of its pods are healthy (`currentHealthy`: Ready,
not being deleted, not just evicted), how many must stay healthy (`desiredHealthy`, from
`minAvailable` or `maxUnavailable`), how many pods there should be (`expectedPods`), and so how
many voluntary disruptions are allowed right now (`disruptionsAllowed`), with the condition
DisruptionAllowed and `observedGeneration` equal to the PDB's generation.
Current state: PDBs, pods, and the pods' controllers (ReplicationControllers, ReplicaSets,
Deployments, StatefulSets) from informers; `status.disruptedPods`, which the API server's eviction
handler fills in when it lets a pod go.
What it does about the difference: recount and write the status. It never evicts or deletes
anything: the eviction subresource (apiserver/handlers/eviction.py) reads this status to say yes or
429, and spends one allowed disruption per eviction itself, so two drains cannot both take the last.

How `desiredHealthy` is found, as in Kubernetes:
- `minAvailable: 3` — 3, and `expectedPods` is the number of matching pods;
- `minAvailable: 50%` or any `maxUnavailable` — a share of the scale of the pods' controllers
  (a Deployment's `spec.replicas`, not its ReplicaSet's), rounded up; a pod without a controller
  makes that impossible: the status is then written fail-safe, nothing allowed (SyncFailed).

A pod in `disruptedPods` is not counted healthy for two minutes (its deletion should have arrived
by then); after that the entry is dropped with a `NotDeleted` event. Like Kubernetes', this
controller has one worker and no `--concurrent-*-syncs` flag.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any

from api import errors, labels
from api.timestamps import now_rfc3339, parse_time
from client.informer import meta_namespace_key
from controller_manager.controller import Controller
from controller_manager.controllers.pod_util import is_ready

Obj = dict[str, Any]

PDB = "poddisruptionbudgets.policy"
DELETION_TIMEOUT = 120.0  # seconds an evicted pod may take to show its deletion
_PERCENT = re.compile(r"^(\d+)%$")


class CalculationError(Exception):
    """The expected number of pods cannot be known (e.g. a pod without a controller)."""


def scaled(value: int | str, total: int) -> int:
    """An IntOrString against `total`: 3 → 3, "50%" → ceil(total/2), as Kubernetes rounds up."""
    if isinstance(value, int):
        return value
    m = _PERCENT.match(str(value))
    if not m:
        raise CalculationError(f"invalid value for IntOrString: invalid value {value!r}")
    return math.ceil(int(m.group(1)) * total / 100)


def disruptions_allowed(current_healthy: int, desired_healthy: int, expected: int) -> int:
    """Nothing is allowed while no pods are expected: a PDB whose pods appear before its status
    is recounted must be safe, not generous."""
    if expected <= 0:
        return 0
    return max(0, current_healthy - desired_healthy)


def allowed_condition(allowed: int, generation: int, old: list[Obj], reason: str = "", message: str = "") -> list[Obj]:
    """The DisruptionAllowed condition (SufficientPods / InsufficientPods / SyncFailed)."""
    status = "True" if allowed > 0 and not reason else "False"
    reason = reason or ("SufficientPods" if allowed > 0 else "InsufficientPods")
    previous = next((c for c in old if c.get("type") == "DisruptionAllowed"), None)
    moved = previous is None or previous.get("status") != status
    cond = {
        "type": "DisruptionAllowed",
        "status": status,
        "observedGeneration": generation,
        "lastTransitionTime": now_rfc3339() if moved else previous.get("lastTransitionTime"),  # type: ignore[union-attr]
        "reason": reason,
        "message": message,
    }
    return [c for c in old if c.get("type") != "DisruptionAllowed"] + [cond]


class DisruptionController(Controller):
    name = "disruption"
    component = "controllermanager"  # Kubernetes records PDB events as "controllermanager"
    default_workers = 1

    def setup(self) -> None:
        f = self.ctx.informers
        self.pdbs = f.informer_for(PDB)
        self.pods = f.informer_for("pods")
        self.owners = {
            "ReplicationController": f.informer_for("replicationcontrollers"),
            "ReplicaSet": f.informer_for("replicasets.apps"),
            "Deployment": f.informer_for("deployments.apps"),
            "StatefulSet": f.informer_for("statefulsets.apps"),
        }
        self.pdbs.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new))
        self.pods.add_event_handler(self._pod_changed, lambda _old, new: self._pod_changed(new), self._pod_changed)
        for informer in self.owners.values():
            informer.add_event_handler(None, self._scale_changed, None)

    # -- which PDBs an event concerns ------------------------------------------------------------
    def _budgets_of(self, pod: Obj) -> list[Obj]:
        namespace = pod["metadata"].get("namespace") or ""
        pod_labels = pod["metadata"].get("labels") or {}
        found = [pdb for pdb in self.pdbs.by_index("namespace", namespace)
                 if labels.budget_selector((pdb.get("spec") or {}).get("selector")).matches(pod_labels)]  # fmt: skip
        return found

    def _pod_changed(self, pod: Obj) -> None:
        for pdb in self._budgets_of(pod):
            self.enqueue(pdb)

    def _scale_changed(self, old: Obj, new: Obj) -> None:
        if (old.get("spec") or {}).get("replicas") != (new.get("spec") or {}).get("replicas"):
            for pdb in self.pdbs.by_index("namespace", new["metadata"].get("namespace") or ""):
                self.enqueue(pdb)

    # -- counting --------------------------------------------------------------------------------
    def _pods_for(self, pdb: Obj) -> list[Obj]:
        selector = labels.budget_selector((pdb.get("spec") or {}).get("selector"))
        return [p for p in self.pods.by_index("namespace", pdb["metadata"]["namespace"]) if selector.matches(
            p["metadata"].get("labels") or {})]  # fmt: skip

    def _controller_scale(self, namespace: str, ref: Obj) -> tuple[str, int] | None:
        """(uid, replicas) of the workload that decides how many such pods there should be."""
        kind = ref.get("kind")
        informer = self.owners.get(kind or "")
        if informer is None:
            return None
        owner = informer.get(f"{namespace}/{ref.get('name')}")
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            return None
        if kind == "ReplicaSet":  # a Deployment's ReplicaSet: the Deployment's scale counts
            parent = next((r for r in owner["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
            if parent is not None and parent.get("kind") == "Deployment":
                return self._controller_scale(namespace, parent)
        return owner["metadata"]["uid"], int((owner.get("spec") or {}).get("replicas", 1))

    def expected_scale(self, pdb: Obj, pods: list[Obj]) -> int:
        scales: dict[str, int] = {}
        namespace = pdb["metadata"]["namespace"]
        for pod in pods:
            ref = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
            if ref is None:
                raise CalculationError(f'found no controller ref for pod "{pod["metadata"]["name"]}"')
            if ref.get("uid") in scales:
                continue
            found = self._controller_scale(namespace, ref)
            if found is None:
                raise CalculationError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values())

    def desired(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int]:
        """(expectedPods, desiredHealthy)."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected = self.expected_scale(pdb, pods)
            return expected, max(0, expected - scaled(spec["maxUnavailable"], expected))
        min_available = spec.get("minAvailable")
        if isinstance(min_available, int):
            return len(pods), min_available
        if min_available is not None:
            expected = self.expected_scale(pdb, pods)
            return expected, scaled(min_available, expected)
        return 0, 0

    # -- the loop ---------------------------------------------------------------------------------
    async def reconcile(self, key: str) -> None:
        pdb = self.pdbs.get(key)
        if pdb is None or pdb["metadata"].get("deletionTimestamp"):
            return
        pods = self._pods_for(pdb)
        if not pods:
            self.recorder.event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired_healthy = self.desired(pdb, pods)
        except CalculationError as exc:
            self.recorder.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {exc}")  # fmt: skip
            await self._write(pdb, self._fail_safe(pdb, str(exc)))
            return
        now = time.time()
        disrupted, recheck = self._still_disrupted(pdb, pods, now)
        healthy = sum(
            1 for p in pods if not p["metadata"].get("deletionTimestamp") and p["metadata"]["name"] not in disrupted
            and is_ready(p)
        )  # fmt: skip
        allowed = disruptions_allowed(healthy, desired_healthy, expected)
        generation = int(pdb["metadata"].get("generation") or 0)
        old = pdb.get("status") or {}
        status: Obj = {
            "observedGeneration": generation,
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired_healthy,
            "expectedPods": expected,
            "conditions": allowed_condition(allowed, generation, old.get("conditions") or []),
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        if recheck is not None:
            self.enqueue_after(key, max(0.0, recheck - now))
        if _same(old, status):
            return
        await self._write(pdb, status)

    def _still_disrupted(self, pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None]:
        """The `disruptedPods` entries still waiting for their deletion, and when to look again."""
        entries = (pdb.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") or name not in entries:
                continue
            due = (parse_time(entries[name]) or now) + DELETION_TIMEOUT
            if due < now:
                message = f"Pod was expected by PDB {meta_namespace_key(pdb)} to be deleted but it wasn't"
                self.recorder.event(pod, "Warning", "NotDeleted", message)
                continue
            kept[name] = entries[name]
            recheck = due if recheck is None else min(recheck, due)
        return kept, recheck

    def _fail_safe(self, pdb: Obj, message: str) -> Obj:
        """When the counts cannot be known, allow nothing: the eviction handler then says 429."""
        status = dict(pdb.get("status") or {})
        generation = int(status.get("observedGeneration") or 0)
        status["disruptionsAllowed"] = 0
        status["conditions"] = allowed_condition(0, generation, status.get("conditions") or [], "SyncFailed", message)
        return status

    async def _write(self, pdb: Obj, status: Obj) -> None:
        try:
            await self.client.update_status(PDB, {**pdb, "status": status})
        except errors.ConflictError:
            self.enqueue_after(meta_namespace_key(pdb), 0.1)  # an eviction spent one meanwhile: recount
        except errors.NotFoundError:
            pass


def _same(old: Obj, new: Obj) -> bool:
    def strip(status: Obj) -> Obj:
        conds = [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status.get("conditions") or []]
        return {**{k: v for k, v in status.items() if k != "conditions"}, "conditions": conds,
                "disruptedPods": status.get("disruptedPods") or {}}  # fmt: skip

    return strip(old) == strip(new)
