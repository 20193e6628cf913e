"""pods/eviction: a delete that asks the pod's PodDisruptionBudget first.

`kubectl drain` evicts rather than deletes so that draining a node never takes an application
below what its owner said it needs. The API server is where that promise is kept, because only
here can the check and the delete be made one step for every client at once:

1. A pod that is not running yet or any more (Pending, Succeeded, Failed) or is already being
   deleted disrupts nothing: it is deleted at once.
2. Otherwise the PodDisruptionBudgets of its namespace whose selector matches it are found. None:
   delete. More than one: refused (500), as Kubernetes refuses — it would not know whose rule wins.
3. A pod that is not Ready does not count as healthy, so evicting it costs the budget nothing
   when the budget is met (`unhealthyPodEvictionPolicy: IfHealthyBudget`, the default) or always
   (`AlwaysAllow`); it is deleted with a resourceVersion precondition, so it cannot have become
   Ready in between.
4. A Ready pod spends one of `status.disruptionsAllowed`, which the disruption controller keeps.
   The budget's status is written first — the count down by one, the pod's name and the time in
   `status.disruptedPods`, so the controller does not count it as healthy while it goes — with a
   compare-and-swap, so two evictions racing for the last allowed disruption cannot both win. A
   budget with nothing left, or whose status the controller has not caught up with since its spec
   changed (`observedGeneration` behind `generation`), answers 429 TooManyRequests: drain waits
   and tries again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors, labels, registry
from api.timestamps import now_rfc3339
from apiserver.admission import Attributes
from apiserver.handlers import dryrun
from apiserver.handlers.common import json_response, read_object_body
from apiserver.handlers.delete import delete_object
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]

CANNOT_EVICT = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
# More entries than this in status.disruptedPods means the controller is not keeping up: refuse.
MAX_DISRUPTED_PODS = 2000

_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _still_processing(pdb_name: str) -> errors.TooManyRequestsError:
    return _budget_exhausted(f"The disruption budget {pdb_name} is still being processed by the server.", 10)


def _budget_exhausted(message: str, retry_after: int) -> errors.TooManyRequestsError:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.TooManyRequestsError(CANNOT_EVICT, details)


def _is_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _disrupts_nothing(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Pending", "Succeeded", "Failed") or bool(pod["metadata"].get("deletionTimestamp"))


def _with_rv_precondition(opts: Obj, pod: Obj) -> Obj:
    preconditions = dict(opts.get("preconditions") or {})
    preconditions.setdefault("resourceVersion", pod["metadata"]["resourceVersion"])
    return {**opts, "preconditions": preconditions}


async def _budgets_for(server: APIServer, pod: Obj) -> list[Obj]:
    rt = registry.by_key("poddisruptionbudgets.policy")
    assert rt is not None
    page = await server.store(rt).list(pod["metadata"]["namespace"])
    pod_labels = pod["metadata"].get("labels") or {}
    found = [pdb for pdb in page.items
             if labels.budget_selector((pdb.get("spec") or {}).get("selector")).matches(pod_labels)]  # fmt: skip
    return found


def _spend(pod_name: str, dry_run: bool) -> Callable[[Obj], Obj]:
    """The compare-and-swap step: one disruption less, or the 429/403 that says why not."""

    def spend(pdb: Obj) -> Obj:
        name = pdb["metadata"]["name"]
        status = pdb.setdefault("status", {})
        if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 0):
            raise _still_processing(name)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise errors.forbidden_error("poddisruptionbudget.policy", name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise errors.forbidden_error(
                "poddisruptionbudget.policy", name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            )  # fmt: skip
        if allowed == 0:
            raise _budget_exhausted(
                f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods "
                f"and has {int(status.get('currentHealthy') or 0)} currently",
                0,
            )
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            _mark_insufficient(pdb)
        if not dry_run:
            status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: now_rfc3339()}
        return pdb

    return spend


def _mark_insufficient(pdb: Obj) -> None:
    status = pdb["status"]
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
    old = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    changed = old is None or old.get("status") != "False"
    conditions.append({
        "type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "",
        "observedGeneration": status.get("observedGeneration", 0),
        "lastTransitionTime": now_rfc3339() if changed else old.get("lastTransitionTime"),  # type: ignore[union-attr]
    })  # fmt: skip
    status["conditions"] = conditions


async def handle_eviction(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    eviction = await read_object_body(request, server.config.max_request_bytes)
    named = (eviction.get("metadata") or {}).get("name")
    if named and named != info.name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    opts = eviction.get("deleteOptions") or {}
    if not isinstance(opts, dict):
        raise errors.bad_request("deleteOptions must be a JSON object")
    dry_run = dryrun.for_eviction(request, opts)
    # admission sees the Eviction itself (NodeRestriction: a kubelet evicts only its own pods)
    await server.admission.admit(Attributes("CREATE", info.rt, info.namespace, info.name, eviction, None, "eviction"))
    pods = server.store(info.rt)
    pod = await pods.get(info.namespace, info.name)

    if _disrupts_nothing(pod):
        # a Pending pod is deleted only as it was read: it must not have started meanwhile
        pending = (pod.get("status") or {}).get("phase") == "Pending" and not pod["metadata"].get("deletionTimestamp")
        how = _with_rv_precondition(opts, pod) if pending else opts
        await delete_object(server, info.rt, info.namespace, info.name, how)
        return json_response(_SUCCESS, 201)

    budgets = await _budgets_for(server, pod)
    if len(budgets) > 1:
        return json_response({**_SUCCESS, "status": "Failure", "code": 500, "message": MORE_THAN_ONE}, 500)
    if not budgets:
        await delete_object(server, info.rt, info.namespace, info.name, opts)
        return json_response(_SUCCESS, 201)

    pdb = budgets[0]
    pdb_name = pdb["metadata"]["name"]
    status = pdb.get("status") or {}
    if not _is_ready(pod):
        policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        healthy, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
        if policy == "AlwaysAllow" or (healthy >= desired and desired > 0):
            return await _delete_unready(server, info, opts, pod, pdb_name)

    pdb_rt = registry.by_key("poddisruptionbudgets.policy")
    assert pdb_rt is not None
    await server.store(pdb_rt).guaranteed_update(info.namespace, pdb_name, _spend(info.name, dry_run), dry_run=dry_run)
    await delete_object(server, info.rt, info.namespace, info.name, opts)
    return json_response(_SUCCESS, 201)


async def _delete_unready(server: APIServer, info: RequestInfo, opts: Obj, pod: Obj, pdb_name: str) -> Response:
    """An unready pod costs the budget nothing, provided it is still unready: its resourceVersion
    must not have moved, or the caller is told to try again (429)."""
    assert info.name is not None
    try:
        await delete_object(server, info.rt, info.namespace, info.name, _with_rv_precondition(opts, pod))
    except errors.ConflictError:
        if (opts.get("preconditions") or {}).get("resourceVersion"):
            raise
        raise _still_processing(pdb_name) from None
    return json_response(_SUCCESS, 201)
