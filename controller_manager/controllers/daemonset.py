"""DaemonSetController: exactly one pod of a DaemonSet on every node that should run it.

Desired state: on each node that matches the pod template's nodeSelector and required node
affinity and whose taints the daemon tolerates (`daemonset_util.node_should_run`), one running pod
from the current template — and none anywhere else. During a RollingUpdate, at most
`maxUnavailable` nodes without an available daemon pod at a time (or, with `maxSurge`, a new pod
next to the old one until it is available); with OnDelete, old pods stay until someone deletes them.
Current state: nodes, the DaemonSet's pods (claimed through ownerReferences and the selector, as
the replica manager does) grouped by the node they are for, and its ControllerRevisions.
What it does about the difference: record the template as a ControllerRevision
(`history.py`); create a pod with node affinity for each node that lacks one, letting the
scheduler bind it; delete pods on nodes that should not run them, failed pods (so they are
replaced), duplicates, and old-template pods within the rolling-update budget; write `status`
(desired, current, misscheduled, ready, up-to-date, available, unavailable). Events come
"From daemonset-controller":

    Normal   SuccessfulCreate  Created pod: fluentd-elasticsearch-x7d2k
    Normal   SuccessfulDelete  Deleted pod: fluentd-elasticsearch-4gq9m
    Warning  FailedDaemonPod   Found failed daemon pod kube-system/fluentd-x7d2k on node node-2, will try to kill it

A node joining, leaving, being labelled or tainted re-queues every DaemonSet: the answer to
"should this node run it?" may have changed for each of them.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from api import errors
from api.labels import Selector, from_label_selector
from client import NORMAL, WARNING, meta_namespace_key
from client.informer import index_by_owner_uid
from controller_manager.controller import Controller
from controller_manager.controllers import daemonset_util as du
from controller_manager.controllers import history
from controller_manager.controllers.controller_ref_manager import (
    ControllerRefManager,
    controller_of,
    owner_reference,
    recheck_owner,
)
from controller_manager.controllers.deployment_util import semantically_equal
from controller_manager.controllers.expectations import ControllerExpectations
from controller_manager.controllers.pod_util import is_available, is_ready, parse_time

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]
OWNER_INDEX = "owner-uid"
RESOURCE = "daemonsets.apps"


def _age(pod: Obj) -> tuple[float, str]:
    return parse_time(pod["metadata"].get("creationTimestamp")), pod["metadata"]["name"]


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


class DaemonSetController(Controller):
    name = "daemonset"
    component = "daemonset-controller"
    default_workers = 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.expectations = ControllerExpectations()

    def setup(self) -> None:
        f = self.ctx.informers
        self.daemonsets = f.informer_for(RESOURCE)
        self.pods = f.informer_for("pods")
        self.nodes = f.informer_for("nodes")
        self.revisions = f.informer_for(history.RESOURCE)
        self.pods.add_indexers({OWNER_INDEX: index_by_owner_uid})
        self.daemonsets.add_event_handler(self.enqueue, lambda _o, new: self.enqueue(new), self._ds_deleted)
        self.pods.add_event_handler(self._pod_added, lambda _o, new: self._pod_updated(new), self._pod_deleted)
        self.nodes.add_event_handler(self._node_changed, self._node_updated, self._node_changed)

    def _ds_deleted(self, ds: Obj) -> None:
        self.expectations.delete(meta_namespace_key(ds))

    def _owner_key(self, pod: Obj) -> str | None:
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "DaemonSet":
            return None
        return f"{pod['metadata'].get('namespace')}/{ref.get('name')}"

    def _pod_added(self, pod: Obj) -> None:
        if (key := self._owner_key(pod)) is not None:
            if pod["metadata"].get("deletionTimestamp"):
                self.expectations.deletion_observed(key, meta_namespace_key(pod))
            else:
                self.expectations.creation_observed(key)
            self.enqueue(key)

    def _pod_updated(self, pod: Obj) -> None:
        if (key := self._owner_key(pod)) is not None:
            if pod["metadata"].get("deletionTimestamp"):
                self.expectations.deletion_observed(key, meta_namespace_key(pod))
            self.enqueue(key)

    def _pod_deleted(self, pod: Obj) -> None:
        if (key := self._owner_key(pod)) is not None:
            self.expectations.deletion_observed(key, meta_namespace_key(pod))
            self.enqueue(key)

    def _node_changed(self, _node: Obj) -> None:
        for key in self.daemonsets.list_keys():
            self.enqueue(key)

    def _node_updated(self, old: Obj, new: Obj) -> None:
        def relevant(n: Obj) -> tuple[Any, ...]:
            conditions = (n.get("status") or {}).get("conditions") or []
            ready = [c.get("status") for c in conditions if c.get("type") == "Ready"]
            return (n["metadata"].get("labels"), (n.get("spec") or {}).get("taints"), ready)

        if relevant(old) != relevant(new):
            self._node_changed(new)

    # ------------------------------------------------------------------ the reconcile
    async def reconcile(self, key: str) -> None:
        ds = self.daemonsets.get(key)
        if ds is None:
            self.expectations.delete(key)
            return
        md, spec = ds["metadata"], ds.get("spec") or {}
        selector: Selector = from_label_selector(spec.get("selector"))
        candidates = {meta_namespace_key(p): p for p in self.pods.by_index(OWNER_INDEX, md["uid"])}
        for p in self.pods.by_index("namespace", md["namespace"]):
            if controller_of(p) is None and selector.matches(p["metadata"].get("labels") or {}):
                candidates.setdefault(meta_namespace_key(p), p)
        refs = ControllerRefManager(self.client, "pods", ds, selector, recheck_owner(self.client, RESOURCE, ds))
        pods = [p for p in await refs.claim(list(candidates.values())) if not p["metadata"].get("deletionTimestamp")]
        revisions = history.owned_revisions(ds, self.revisions.by_index("namespace", md["namespace"]))
        current, _ = await history.ensure_current(self.client, ds, revisions)

        by_node: dict[str, list[Obj]] = {}
        for p in pods:
            by_node.setdefault(du.target_node(p) or "", []).append(p)
        nodes = {n["metadata"]["name"]: n for n in self.nodes.list()}
        template_spec = (spec.get("template") or {}).get("spec") or {}
        daemon_spec = du.with_daemon_tolerations(template_spec)
        plan = {name: du.node_should_run(node, daemon_spec) for name, node in nodes.items()}

        if self.expectations.satisfied(key) and not md.get("deletionTimestamp"):
            create, delete = self._manage(ds, plan, by_node)
            if (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
                extra_create, extra_delete = self._rolling_update(ds, plan, by_node, current, delete)
                create += extra_create
                delete += [p for p in extra_delete if p not in delete]
            await self._act(key, ds, current, create, delete)
        await self._update_status(ds, plan, by_node, current)
        live = {(p["metadata"].get("labels") or {}).get(du.REVISION_HASH) for p in pods}
        await history.truncate(self.client, ds, revisions, {h for h in live if h} | {current})

    def _manage(
        self, ds: Obj, plan: dict[str, tuple[bool, bool]], by_node: dict[str, list[Obj]]
    ) -> tuple[list[str], list[Obj]]:
        """Nodes that need a pod, pods that must go (Kubernetes' podsShouldBeOnNode, per node)."""
        create: list[str] = []
        delete: list[Obj] = []
        for name, (should_run, keep) in plan.items():
            here = by_node.get(name, [])
            if not keep:
                delete += here
                continue
            failed = [p for p in here if _phase(p) == "Failed"]
            for p in failed:
                pod_ref = f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                message = f"Found failed daemon pod {pod_ref} on node {name}, will try to kill it"
                self.recorder.event(ds, WARNING, "FailedDaemonPod", message)
            delete += failed
            running = sorted((p for p in here if p not in failed), key=_age)
            if should_run and not running:
                create.append(name)
            elif len(running) > 1 and not self._surging(ds):
                delete += running[1:]  # keep the oldest
        for name, here in by_node.items():
            if name not in plan:  # a node that is gone (or a pod for no node at all)
                delete += here
        return create, delete

    def _surging(self, ds: Obj) -> bool:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        return strategy.get("type", "RollingUpdate") == "RollingUpdate" and du.rolling_budget(ds, 1)[0] > 0

    def _rolling_update(
        self, ds: Obj, plan: dict[str, tuple[bool, bool]], by_node: dict[str, list[Obj]], current: str,
        deleting: list[Obj],
    ) -> tuple[list[str], list[Obj]]:  # fmt: skip
        """Replace old-template pods within the budget (Kubernetes' rollingUpdate, both flavours)."""
        def new(p: Obj) -> bool:
            return (p["metadata"].get("labels") or {}).get(du.REVISION_HASH) == current

        create: list[str] = []
        delete: list[Obj] = []
        if all(new(p) for pods in by_node.values() for p in pods):
            return create, delete  # nothing to replace: the usual case between rollouts
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        wanted = [n for n, (run, _) in plan.items() if run]
        surge, max_unavailable = du.rolling_budget(ds, len(wanted))
        going = {id(p) for p in deleting}  # identity, not equality: comparing pods field by field is slow

        unavailable = sum(
            1 for n in wanted if not any(is_available(p, min_ready) and id(p) not in going for p in by_node.get(n, []))
        )
        surging = sum(
            1 for n in wanted if any(new(p) for p in by_node.get(n, [])) and any(not new(p) for p in by_node.get(n, []))
        )
        for name in wanted:
            here = [p for p in by_node.get(name, []) if id(p) not in going and _phase(p) != "Failed"]
            old = [p for p in here if not new(p)]
            if not old:
                continue
            fresh = [p for p in here if new(p)]
            old_available = [p for p in old if is_available(p, min_ready)]
            if not old_available:
                delete += old  # not serving anyway: replacing it costs nothing
                continue
            if surge > 0:
                if any(is_available(p, min_ready) for p in fresh):
                    delete += old
                elif not fresh and surging < surge:
                    create.append(name)
                    surging += 1
            elif unavailable < max_unavailable:
                delete += old
                unavailable += 1
        return create, delete

    async def _act(self, key: str, ds: Obj, current: str, create: list[str], delete: list[Obj]) -> None:
        if create:
            self.expectations.expect_creations(key, len(create))
        if delete:
            self.expectations.expect_deletions(key, [meta_namespace_key(p) for p in delete])
        results = await asyncio.gather(
            *(self._create(key, ds, current, n) for n in create), *(self._delete(key, ds, p) for p in delete),
            return_exceptions=True,
        )  # fmt: skip
        errs = [r for r in results if isinstance(r, Exception)]
        if errs:
            raise errs[0]

    async def _create(self, key: str, ds: Obj, current: str, node_name: str) -> None:
        md, template = ds["metadata"], (ds.get("spec") or {}).get("template") or {}
        tmd = template.get("metadata") or {}
        labels = {**(tmd.get("labels") or {}), du.REVISION_HASH: current,
                  du.TEMPLATE_GENERATION: str(md.get("generation", 1))}  # fmt: skip
        pod_md: Obj = {"generateName": f"{md['name']}-", "namespace": md["namespace"], "labels": labels,
                       "ownerReferences": [owner_reference(ds)]}  # fmt: skip
        if tmd.get("annotations"):
            pod_md["annotations"] = dict(tmd["annotations"])
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_md,
               "spec": du.for_node(copy.deepcopy(template.get("spec") or {}), node_name)}  # fmt: skip
        try:
            created = await self.client.create("pods", pod, md["namespace"])
        except Exception as exc:
            self.expectations.creation_observed(key)
            if isinstance(exc, errors.StatusError):
                self.recorder.event(ds, WARNING, "FailedCreate", f"Error creating: {exc}")
            raise
        self.recorder.event(ds, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")

    async def _delete(self, key: str, ds: Obj, pod: Obj) -> None:
        pmd = pod["metadata"]
        try:
            await self.client.delete("pods", pmd["name"], pmd["namespace"])
        except errors.NotFoundError:
            self.expectations.deletion_observed(key, meta_namespace_key(pod))
            return
        except Exception:
            self.expectations.deletion_observed(key, meta_namespace_key(pod))
            raise
        self.recorder.event(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {pmd['name']}")

    # ------------------------------------------------------------------ status
    async def _update_status(
        self, ds: Obj, plan: dict[str, tuple[bool, bool]], by_node: dict[str, list[Obj]], current: str
    ) -> None:
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        desired = scheduled = misscheduled = ready = available = updated = 0
        for name, (should_run, _keep) in plan.items():
            here = [p for p in by_node.get(name, []) if p["spec"].get("nodeName")]
            if should_run:
                desired += 1
                if here:
                    scheduled += 1
                    newest = here[0] if len(here) == 1 else max(
                        here, key=lambda p: parse_time(p["metadata"].get("creationTimestamp"))
                    )
                    ready += is_ready(newest)
                    available += is_available(newest, min_ready)
                    updated += (newest["metadata"].get("labels") or {}).get(du.REVISION_HASH) == current
            elif here:
                misscheduled += 1
        status = {
            **(ds.get("status") or {}),
            "currentNumberScheduled": scheduled,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        for zero_omitted in ("numberAvailable", "numberUnavailable", "updatedNumberScheduled"):
            if not status[zero_omitted]:
                status.pop(zero_omitted)
        if semantically_equal(ds.get("status") or {}, status):
            return
        try:
            await self.client.update_status(RESOURCE, {**ds, "status": status})
        except errors.NotFoundError:
            pass
        if min_ready and ready != available:
            self.enqueue_after(meta_namespace_key(ds), float(min_ready))
