"""`kubectl rollout status|history|undo|pause|resume|restart` for Deployments (DaemonSets and
StatefulSets keep their history differently: rollout_revisions.py).

A Deployment's history is not stored in the Deployment. It is its ReplicaSets: every pod
template the Deployment ever had got its own ReplicaSet (owned by the Deployment through a
controller ownerReference), annotated with `deployment.kubernetes.io/revision: "N"`. So:

- history lists the revisions of the owned ReplicaSets, with the `kubernetes.io/change-cause`
  annotation as CHANGE-CAUSE;
- undo copies the pod template of the ReplicaSet with the wanted revision (minus its
  `pod-template-hash` label) back into the Deployment - the deployment controller then sees a
  "new" template that matches an old ReplicaSet, and scales that one up again;
- restart changes the template (annotation `kubectl.kubernetes.io/restartedAt`), which is a new
  rollout with the same images;
- status watches the Deployment and reads its status fields, printing kubectl's messages until
  `deployment "web" successfully rolled out` (exit 0), or a timeout / ProgressDeadlineExceeded
  (exit 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from datetime import UTC, datetime
from typing import Any

from api.registry import ResourceType
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run
from kubectl.main import app
from kubectl.printing.table import TabWriter
from kubectl.resources import parse_args, qualified
from kubectl.rollout_revisions import KINDS as REVISION_KINDS
from kubectl.rollout_revisions import owned_revisions, revision_template, undo_patch
from kubectl.rollout_revisions import status_message as revisions_status_message

REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# Annotations of a ReplicaSet that are the controller's bookkeeping, not the user's: undo does not copy them.
_SKIP_ANNOTATIONS = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
}

rollout_app = typer.Typer(help="Manage the rollout of one or many resources.", no_args_is_help=True)
app.add_typer(rollout_app, name="rollout")


def _targets(args: list[str], *, unsupported_for_revisions: str = "") -> list[tuple[ResourceType, str]]:
    """The objects named. DaemonSets and StatefulSets too, except for what only a Deployment can do
    (`unsupported_for_revisions` is then the verb kubectl names: "pausing", "resuming")."""
    sel = parse_args(args)
    out = []
    for rt, names in sel.groups:
        if rt.key in REVISION_KINDS and unsupported_for_revisions:
            raise CmdError(f'{rt.key} "{names[0] if names else ""}" {unsupported_for_revisions} is not supported')
        if rt.key != "deployments.apps" and rt.key not in REVISION_KINDS:
            raise CmdError(
                f'no rollout support for kind "{rt.kind}"'
                if rt.key != "replicasets.apps"
                else f'no history viewer has been implemented for "{rt.kind}"'
            )
        if not names:
            raise CmdError("required resource not specified")
        out += [(rt, n) for n in names]
    return out


async def owned_replicasets(s: Session, deployment: dict[str, Any]) -> list[dict[str, Any]]:
    uid = deployment["metadata"]["uid"]
    items = (await s.client.list("replicasets.apps", deployment["metadata"]["namespace"])).get("items") or []
    return [
        rs
        for rs in items
        if any(
            r.get("uid") == uid and r.get("controller") for r in rs["metadata"].get("ownerReferences") or []
        )
    ]


def revision_of(obj: dict[str, Any]) -> int:
    try:
        return int((obj["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


# ------------------------------------------------------------------------------ status


def status_message(d: dict[str, Any]) -> tuple[str, bool]:
    """kubectl's DeploymentStatusViewer: (message, done). Raises CmdError when the rollout failed."""
    name = d["metadata"]["name"]
    spec, status = d.get("spec") or {}, d.get("status") or {}
    if int(d["metadata"].get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return "Waiting for deployment spec update to be observed...", False
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            raise CmdError(f'deployment "{name}" exceeded its progress deadline')
    want = int(spec.get("replicas", 1))
    updated = int(status.get("updatedReplicas") or 0)
    replicas = int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    if updated < want:
        return (
            f'Waiting for deployment "{name}" rollout to finish: {updated} out of {want} new replicas '
            "have been updated..."
        ), False
    if replicas > updated:
        return (
            f'Waiting for deployment "{name}" rollout to finish: {replicas - updated} old replicas are '
            "pending termination..."
        ), False
    if available < updated:
        return (
            f'Waiting for deployment "{name}" rollout to finish: {available} of {updated} updated replicas '
            "are available..."
        ), False
    return f'deployment "{name}" successfully rolled out', True


async def status(s: Session, args: list[str], watch: bool, timeout: float) -> int:
    ((rt, name),) = _targets(args)

    async def follow() -> None:
        viewer = revisions_status_message if rt.key in REVISION_KINDS else status_message
        lst = await s.client.list(rt, s.namespace, field_selector=f"metadata.name={name}")
        if not lst.get("items"):
            raise CmdError(f'{rt.key} "{name}" not found')
        message, done = viewer({"kind": rt.kind, **lst["items"][0]})
        echo(message)
        if done or not watch:
            return
        stream = s.client.watch(
            rt,
            s.namespace,
            resource_version=lst["metadata"]["resourceVersion"],
            field_selector=f"metadata.name={name}",
        )
        async with contextlib.aclosing(stream) as events:
            async for ev in events:
                if ev.type == "DELETED":
                    raise CmdError("object has been deleted")
                if ev.type not in ("ADDED", "MODIFIED"):
                    continue
                message, done = viewer({"kind": rt.kind, **ev.object})
                echo(message)
                if done:
                    return

    try:
        await asyncio.wait_for(follow(), timeout or None)
    except TimeoutError:
        raise CmdError("timed out waiting for the condition") from None
    return 0


# ------------------------------------------------------------------------------ history, undo


async def history(s: Session, args: list[str], revision: int) -> int:
    for rt, name in _targets(args):
        d = await s.client.get(rt, name, s.namespace)
        if rt.key in REVISION_KINDS:
            sets = await owned_revisions(s, d)
        else:
            sets = {revision_of(rs): rs for rs in await owned_replicasets(s, d)}
        if revision > 0:
            if revision not in sets:
                raise CmdError("unable to find the specified revision")
            from kubectl.describe.podtemplate import describe_template

            echo(f"{qualified(rt, name)} with revision #{revision}")
            if rt.key in REVISION_KINDS:
                template = revision_template(sets[revision])
            else:
                template = copy.deepcopy(sets[revision]["spec"]["template"])
                cause = (sets[revision]["metadata"].get("annotations") or {}).get(CHANGE_CAUSE)
                if cause:  # for a Deployment kubectl shows the change-cause as a template annotation
                    template.setdefault("metadata", {}).setdefault("annotations", {})[CHANGE_CAUSE] = cause
            for line in describe_template(template):
                echo(line)
            echo()
            continue
        echo(f"{qualified(rt, name)} ")
        if not sets:
            echo("No rollout history found.")
            continue
        rows = [["REVISION", "CHANGE-CAUSE"]]
        for rev in sorted(sets):
            cause = (sets[rev]["metadata"].get("annotations") or {}).get(CHANGE_CAUSE) or "<none>"
            rows.append([str(rev), cause])
        for line in TabWriter(padding=2).render(rows):
            echo(line)
        echo()
    return 0


def _template_without_hash(template: dict[str, Any]) -> dict[str, Any]:
    t = copy.deepcopy(template)
    labels = (t.get("metadata") or {}).get("labels") or {}
    labels.pop("pod-template-hash", None)
    return t


async def undo(s: Session, args: list[str], to_revision: int) -> int:
    for rt, name in _targets(args):
        d = await s.client.get(rt, name, s.namespace)
        if rt.key in REVISION_KINDS:
            revision, patch = undo_patch(d, await owned_revisions(s, d), to_revision)
            if patch is None:
                echo(f"{qualified(rt, name)} skipped rollback (current template already matches revision "
                     f"{revision})")  # fmt: skip
                continue
            await s.client.patch(rt, name, patch, s.namespace, patch_type="strategic")
            echo(f"{qualified(rt, name)} rolled back")
            continue
        if (d.get("spec") or {}).get("paused"):
            raise CmdError(
                f"you cannot rollback a paused deployment; resume it first with 'kubectl rollout "
                f"resume deployment/{name}' and try again"
            )
        sets = {revision_of(rs): rs for rs in await owned_replicasets(s, d)}
        if to_revision == 0:
            revs = sorted(sets)
            if len(revs) < 2:
                raise CmdError(f'no rollout history found for deployment "{name}"')
            to_revision = revs[-2]
        if to_revision not in sets:
            raise CmdError(f"unable to find specified revision {to_revision} in history")
        rs = sets[to_revision]
        template = _template_without_hash(rs["spec"]["template"])
        if template == d["spec"]["template"]:
            echo(
                f"{qualified(rt, name)} skipped rollback (current template already matches revision "
                f"{to_revision})"
            )
            continue
        annotations = dict(d["metadata"].get("annotations") or {})
        annotations.update(
            {k: v for k, v in (rs["metadata"].get("annotations") or {}).items() if k not in _SKIP_ANNOTATIONS}
        )
        patch = [
            {"op": "replace", "path": "/spec/template", "value": template},
            {"op": "add", "path": "/metadata/annotations", "value": annotations},
        ]  # add: also when absent
        await s.client.patch(rt, name, patch, s.namespace, patch_type="json")
        echo(f"{qualified(rt, name)} rolled back")
    return 0


# ------------------------------------------------------------------------------ pause, resume, restart


async def pause(s: Session, args: list[str], paused: bool) -> int:
    for rt, name in _targets(args, unsupported_for_revisions="pausing" if paused else "resuming"):
        d = await s.client.get(rt, name, s.namespace)
        if bool((d.get("spec") or {}).get("paused")) == paused:
            raise CmdError(f'{rt.key} "{name}" is {"already paused" if paused else "not paused"}')
        await s.client.patch(rt, name, {"spec": {"paused": True if paused else None}}, s.namespace)
        echo(f"{qualified(rt, name)} {'paused' if paused else 'resumed'}")
    return 0


async def restart(s: Session, args: list[str]) -> int:
    for rt, name in _targets(args):
        d = await s.client.get(rt, name, s.namespace)
        if (d.get("spec") or {}).get("paused"):
            raise CmdError(f'{rt.key} "{name}" can\'t restart paused deployment (run rollout resume first)')
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        patch = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}}}
        await s.client.patch(rt, name, patch, s.namespace, patch_type="strategic")
        echo(f"{qualified(rt, name)} restarted")
    return 0


_ARGS = typer.Argument(..., help="deployment/NAME | daemonset/NAME | statefulset/NAME")


@rollout_app.command("status")
def status_command(
    args: list[str] = _ARGS,
    watch: bool = typer.Option(True, "-w", "--watch/--no-watch", help="Watch until done."),
    timeout: str = typer.Option("0s", "--timeout", help="Give up after this long (0: never)."),
) -> None:
    """Show the status of the rollout."""
    from kubectl.durations import parse_duration

    limit = parse_duration(timeout)
    run(lambda s: status(s, args, watch, limit))


@rollout_app.command("history")
def history_command(
    args: list[str] = _ARGS,
    revision: int = typer.Option(0, "--revision", help="Show the pod template of one revision."),
) -> None:
    """View rollout history."""
    run(lambda s: history(s, args, revision))


@rollout_app.command("undo")
def undo_command(
    args: list[str] = _ARGS,
    to_revision: int = typer.Option(0, "--to-revision", help="0: the previous revision."),
) -> None:
    """Undo a previous rollout."""
    run(lambda s: undo(s, args, to_revision))


@rollout_app.command("pause")
def pause_command(args: list[str] = _ARGS) -> None:
    """Mark the provided resource as paused."""
    run(lambda s: pause(s, args, True))


@rollout_app.command("resume")
def resume_command(args: list[str] = _ARGS) -> None:
    """Resume a paused resource."""
    run(lambda s: pause(s, args, False))


@rollout_app.command("restart")
def restart_command(args: list[str] = _ARGS) -> None:
    """Restart a resource (a new rollout with the same template)."""
    run(lambda s: restart(s, args))
