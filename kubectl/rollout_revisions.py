"""`rollout status|history|undo` for DaemonSets and StatefulSets: history kept in ControllerRevisions.

A Deployment's old templates live in its old ReplicaSets (cmd_rollout.py). A DaemonSet or
StatefulSet has no such middle object; its controller keeps one apps/v1 ControllerRevision per
template it has had, owned by it, with a `revision` number and, as `data`, the patch that puts
that template back (`{"spec": {"template": {..., "$patch": "replace"}}}`). So here:

- history lists the owned revisions by number (CHANGE-CAUSE from the revision's
  `kubernetes.io/change-cause` annotation), and `--revision N` shows that revision's template;
- undo sends that revision's `data` as a strategic merge patch — the controller then sees its old
  template again and gives that revision the next number;
- status reads the status fields as kubectl's DaemonSet and StatefulSet status viewers do, with
  their messages ("partitioned roll out complete" is what kubectl says for any StatefulSet with a
  RollingUpdate strategy, partition 0 included).
"""

from __future__ import annotations

import copy
from typing import Any

from api import labels
from kubectl.cli import CmdError, Session

Obj = dict[str, Any]
CHANGE_CAUSE = "kubernetes.io/change-cause"
KINDS = ("daemonsets.apps", "statefulsets.apps")


async def owned_revisions(s: Session, owner: Obj) -> dict[int, Obj]:
    """The owner's revisions by number: those its selector matches that it controls, as kubectl finds them."""
    uid = owner["metadata"]["uid"]
    selector = str(labels.from_label_selector((owner.get("spec") or {}).get("selector")))
    namespace = owner["metadata"]["namespace"]
    items = (await s.client.list("controllerrevisions.apps", namespace, label_selector=selector)).get("items") or []
    owned = [
        r for r in items
        if any(ref.get("uid") == uid and ref.get("controller") for ref in r["metadata"].get("ownerReferences") or [])
    ]  # fmt: skip
    return {int(r.get("revision") or 0): r for r in owned}


def revision_template(revision: Obj) -> Obj:
    """The pod template a revision restores (its data, without the `$patch` directive)."""
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def change_cause(revision: Obj) -> str:
    return (revision["metadata"].get("annotations") or {}).get(CHANGE_CAUSE) or "<none>"


def daemonset_status(ds: Obj) -> tuple[str, bool]:
    name = ds["metadata"]["name"]
    if ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        raise CmdError("rollout status is only available for RollingUpdate strategy type")
    status = ds.get("status") or {}
    if int(ds["metadata"].get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return "Waiting for daemon set spec update to be observed...", False
    desired = int(status.get("desiredNumberScheduled") or 0)
    updated = int(status.get("updatedNumberScheduled") or 0)
    available = int(status.get("numberAvailable") or 0)
    if updated < desired:
        return (f'Waiting for daemon set "{name}" rollout to finish: {updated} out of {desired} new pods have '
                "been updated..."), False  # fmt: skip
    if available < desired:
        return (f'Waiting for daemon set "{name}" rollout to finish: {available} of {desired} updated pods are '
                "available..."), False  # fmt: skip
    return f'daemon set "{name}" successfully rolled out', True


def statefulset_status(sts: Obj) -> tuple[str, bool]:
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        raise CmdError("rollout status is only available for RollingUpdate strategy type")
    observed = int(status.get("observedGeneration") or 0)
    if observed == 0 or int(sts["metadata"].get("generation") or 0) > observed:
        return "Waiting for statefulset spec update to be observed...", False
    replicas = int(spec.get("replicas", 1))
    ready = int(status.get("readyReplicas") or 0)
    if ready < replicas:
        return f"Waiting for {replicas - ready} pods to be ready...", False
    updated = int(status.get("updatedReplicas") or 0)
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        partition = rolling.get("partition")
        if partition is not None and updated < replicas - int(partition):
            return (f"Waiting for partitioned roll out to finish: {updated} out of {replicas - int(partition)} "
                    "new pods have been updated..."), False  # fmt: skip
        return f"partitioned roll out complete: {updated} new pods have been updated...", True
    current, update = status.get("currentRevision"), status.get("updateRevision")
    if update != current:
        return f"waiting for statefulset rolling update to complete {updated} pods at revision {update}...", False
    return (f"statefulset rolling update complete {int(status.get('currentReplicas') or 0)} pods at revision "
            f"{current}..."), True  # fmt: skip


def status_message(obj: Obj) -> tuple[str, bool]:
    return daemonset_status(obj) if obj.get("kind") == "DaemonSet" else statefulset_status(obj)


def undo_patch(owner: Obj, revisions: dict[int, Obj], to_revision: int) -> tuple[int, Obj | None]:
    """(the revision rolled back to, the patch to send — None when the template already matches)."""
    if to_revision == 0:
        if len(revisions) <= 1:
            raise CmdError("no last revision to roll back to")
        to_revision = sorted(revisions)[-2]
    if to_revision not in revisions:
        raise CmdError(f"unable to find specified revision {to_revision} in history")
    revision = revisions[to_revision]
    if revision_template(revision) == (owner.get("spec") or {}).get("template"):
        return to_revision, None
    return to_revision, revision.get("data") or {}
