"""NamespaceController: a namespace being deleted is emptied, then let go.

Desired state: a namespace with a deletionTimestamp (phase Terminating — the API server set both
when it was deleted, and kept it because `spec.finalizers` still says `kubernetes`) contains
nothing and is gone.
Current state: the namespace from the informer; its contents by LIST, resource by resource.
What we do about the difference, in order:
1. delete everything in it — every namespaced resource type the API server serves (the kind
   registry lists them), by `deletecollection` where the type has it, else one DELETE per object,
   with propagation Background (the garbage collector would find the dependents gone anyway);
2. look again: while anything remains (a pod waiting for its kubelet to stop its containers, an
   object with finalizers), say so in the namespace's conditions and come back shortly;
3. when nothing remains, PUT `namespaces/<name>/finalize` with the `kubernetes` finalizer removed —
   the API server then deletes the namespace.

NamespaceLifecycle admission makes step 1 final: nothing new can be created in a Terminating
namespace, so "empty once" means "empty for good".
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from api import errors, registry
from api.registry import ResourceType
from api.timestamps import now_rfc3339
from client.rest import resource_path
from controller_manager.controller import Controller

log = logging.getLogger("controller_manager")
FINALIZER = "kubernetes"
RECHECK_SECONDS = (
    0.5  # how soon to look again while content remains (Kubernetes estimates from grace periods)
)


def namespaced_resources() -> list[ResourceType]:
    return [rt for rt in registry.all_resources() if rt.namespaced and {"list", "delete"} <= set(rt.verbs)]


def _condition(
    ctype: str, remaining: bool, reason_true: str, message_true: str, reason_false: str, message_false: str
) -> dict[str, Any]:
    return {
        "type": ctype,
        "status": "True" if remaining else "False",
        "reason": reason_true if remaining else reason_false,
        "message": message_true if remaining else message_false,
    }


def deletion_conditions(
    counts: dict[str, int], finalizers: dict[str, int], failures: list[str]
) -> list[dict]:
    """The five conditions Kubernetes' namespace deleter reports, in its wording."""
    content = ", ".join(f"{res} has {n} resource instances" for res, n in sorted(counts.items()))
    fins = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
    return [
        _condition(
            "NamespaceDeletionDiscoveryFailure",
            False,
            "",
            "",
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        _condition(
            "NamespaceDeletionGroupVersionParsingFailure",
            False,
            "",
            "",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        _condition(
            "NamespaceDeletionContentFailure",
            bool(failures),
            "ContentDeletionFailed",
            "; ".join(failures),
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        _condition(
            "NamespaceContentRemaining",
            bool(counts),
            "SomeResourcesRemain",
            f"Some resources are remaining: {content}",
            "ContentRemoved",
            "All content successfully removed",
        ),
        _condition(
            "NamespaceFinalizersRemaining",
            bool(finalizers),
            "SomeFinalizersRemain",
            f"Some content in the namespace has finalizers remaining: {fins}",
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished",
        ),
    ]


class NamespaceController(Controller):
    name = "namespace"
    component = "namespace-controller"
    default_workers = 10

    def setup(self) -> None:
        self.namespaces = self.ctx.informers.informer_for("namespaces")
        self.namespaces.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new))

    async def reconcile(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return  # finalized already; the API server removes it once its metadata.finalizers are done
        failures = await self._delete_content(key)
        counts, finalizers = await self._remaining(key)
        await self._set_conditions(ns, deletion_conditions(counts, finalizers, failures))
        if counts or failures:
            self.enqueue_after(key, RECHECK_SECONDS)
            return
        body = copy.deepcopy(ns)
        body["spec"]["finalizers"] = [f for f in body["spec"]["finalizers"] if f != FINALIZER]
        try:
            await self.client.raw("PUT", resource_path("namespaces", None, key, "finalize"), body=body)
        except errors.NotFoundError:
            return
        log.info("namespace %s: all content removed, finalized", key)

    async def _delete_content(self, namespace: str) -> list[str]:
        failures: list[str] = []
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        for rt in namespaced_resources():
            try:
                if "deletecollection" in rt.verbs:
                    await self.client.raw("DELETE", resource_path(rt, namespace), body=options)
                    continue
                for item in (await self.client.list(rt, namespace)).get("items") or []:
                    if not item["metadata"].get("deletionTimestamp"):
                        try:
                            await self.client.delete(
                                rt, item["metadata"]["name"], namespace, propagation_policy="Background"
                            )
                        except errors.NotFoundError:
                            pass
            except errors.StatusError as exc:
                failures.append(f"Failed to delete all resource types, 1 remaining: {rt.key}: {exc}")
        return failures

    async def _remaining(self, namespace: str) -> tuple[dict[str, int], dict[str, int]]:
        counts: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for rt in namespaced_resources():
            items = (await self.client.list(rt, namespace)).get("items") or []
            if items:
                counts[f"{rt.plural}.{rt.group}"] = len(items)  # "pods." as Kubernetes prints it
            for item in items:
                for f in item["metadata"].get("finalizers") or []:
                    finalizers[f] = finalizers.get(f, 0) + 1
        return counts, finalizers

    async def _set_conditions(self, ns: dict[str, Any], conditions: list[dict[str, Any]]) -> None:
        old = {c.get("type"): c for c in (ns.get("status") or {}).get("conditions") or []}
        same = all(
            (old.get(c["type"]) or {}).get(k) == c[k]
            for c in conditions
            for k in ("status", "reason", "message")
        )
        if same:
            return
        now = now_rfc3339()
        for c in conditions:
            prev = old.get(c["type"])
            c["lastTransitionTime"] = (
                prev.get("lastTransitionTime") if prev and prev.get("status") == c["status"] else now
            )
        body = copy.deepcopy(ns)
        body.setdefault("status", {})["conditions"] = conditions
        try:
            await self.client.update_status("namespaces", body)
        except (errors.ConflictError, errors.NotFoundError):
            pass  # cosmetic; the next pass writes them again
