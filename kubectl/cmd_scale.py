"""`kubectl scale` and `kubectl set image`: the two everyday edits of a workload.

scale talks to the `/scale` subresource, not the object: a merge patch `{"spec":{"replicas":N}}`
on an `autoscaling/v1` Scale. Every scalable kind (Deployment, ReplicaSet, StatefulSet,
ReplicationController) answers the same Scale, which is why `kubectl scale` and the HPA need not
know the kinds apart.

set image changes containers of the pod template (or of a Pod) by name, with a strategic merge
patch keyed on the container name, so the other containers are left alone. A new template in a
Deployment is a new rollout.
"""

from __future__ import annotations

from typing import Any

from api.errors import StatusError
from kubectl import commandline as typer
from kubectl.cli import CmdError, Reporter, Session, echo, run
from kubectl.completion import complete_type_and_names
from kubectl.main import app
from kubectl.manifests import object_namespace, read_manifests
from kubectl.resources import parse_args, qualified

_SCALABLE = {"deployments.apps", "replicasets.apps", "statefulsets.apps", "replicationcontrollers"}


async def scale(
    s: Session,
    args: list[str],
    files: list[str],
    replicas: int,
    current: int,
    selector: str | None,
    all_: bool,
    dry_run: str = "none",
) -> int:
    from kubectl.dryrun import check_dry_run, patch_object, suffix

    check_dry_run(dry_run)
    if replicas < 0:
        raise CmdError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    targets = []
    if files:
        targets = [
            (m.rt, m.name, object_namespace(m, s.namespace, s.explicit_namespace))
            for m in read_manifests(files)
        ]
    else:
        sel = parse_args(args)
        for rt, names in sel.groups:
            ns = s.namespace if rt.namespaced else None
            if not names and (selector or all_):
                lst = await s.client.list(rt, ns, label_selector=selector)
                names = [i["metadata"]["name"] for i in lst.get("items") or []]
            elif not names:
                raise CmdError("resource(s) were provided, but no name was specified")
            targets += [(rt, n, ns) for n in names]
    report = Reporter()
    for rt, name, ns in targets:
        if rt.key not in _SCALABLE:
            raise CmdError(f"cannot use scale with {qualified(rt, name)}")
        try:
            if current >= 0:
                sc = await s.client.get(rt, name, ns, subresource="scale")
                have = int((sc.get("spec") or {}).get("replicas") or 0)
                if have != current:
                    report.error(f"error: Expected replicas to be {current}, was {have}")
                    continue
            if dry_run == "client":
                await s.client.get(rt, name, ns)
            else:
                await patch_object(s, rt, name, ns, {"spec": {"replicas": replicas}}, dry_run, "scale")
        except StatusError as exc:
            report.status(exc)
            continue
        echo(f"{qualified(rt, name)} scaled{suffix(dry_run)}")
    return 1 if report.failed else 0


def pod_spec_path(obj: dict[str, Any]) -> list[str]:
    """Where the pod spec of `obj` lives: ["spec"] for a Pod, ["spec","template","spec"] for the
    controllers, ["spec","jobTemplate","spec","template","spec"] for a CronJob."""
    kind = obj.get("kind")
    if kind == "Pod":
        return ["spec"]
    if kind == "CronJob":
        return ["spec", "jobTemplate", "spec", "template", "spec"]
    return ["spec", "template", "spec"]


def _nest(path: list[str], value: Any) -> dict[str, Any]:
    out: Any = value
    for key in reversed(path):
        out = {key: out}
    return out


async def set_image(s: Session, args: list[str], all_: bool, selector: str | None) -> int:
    resources = [a for a in args if "=" not in a]
    images = dict(a.split("=", 1) for a in args if "=" in a)
    if not images:
        raise CmdError("at least one image update is required")
    sel = parse_args(resources)
    report = Reporter()
    for rt, names in sel.groups:
        ns = s.namespace if rt.namespaced else None
        if not names:
            lst = await s.client.list(rt, ns, label_selector=selector)
            names = [i["metadata"]["name"] for i in lst.get("items") or []]
        for name in names:
            try:
                obj = await s.client.get(rt, name, ns)
            except StatusError as exc:
                report.status(exc)
                continue
            spec: Any = obj
            for key in pod_spec_path(obj):
                spec = spec.get(key) or {}
            changes, found = {}, set()
            for field in ("initContainers", "containers"):
                for c in spec.get(field) or []:
                    new = images.get(c["name"], images.get("*"))
                    if new is not None:
                        found.add(c["name"])
                        if c.get("image") != new:
                            changes.setdefault(field, []).append({"name": c["name"], "image": new})
            missing = [n for n in images if n != "*" and n not in found]
            if missing:
                report.error(f'error: unable to find container named "{missing[0]}"')
                continue
            if changes:
                try:
                    await s.client.patch(
                        rt, name, _nest(pod_spec_path(obj), changes), ns, patch_type="strategic"
                    )
                except StatusError as exc:
                    report.status(exc)
                    continue
                echo(f"{qualified(rt, name)} image updated")
    return 1 if report.failed else 0


@app.command("scale")
def scale_command(
    args: list[str] = typer.Argument(None, help="TYPE NAME | TYPE/NAME", shell_complete=complete_type_and_names),
    replicas: int = typer.Option(-1, "--replicas", help="The new desired number of replicas."),
    current_replicas: int = typer.Option(-1, "--current-replicas", help="Precondition for the current size."),
    filename: list[str] = typer.Option(None, "-f", "--filename"),
    selector: str = typer.Option(None, "-l", "--selector"),
    all_: bool = typer.Option(False, "--all"),
    dry_run: str = typer.Option("none", "--dry-run", help='"none", "server", or "client".'),
) -> None:
    """Set a new size for a deployment, replica set, replication controller, or stateful set."""
    run(
        lambda s: scale(
            s, list(args or []), list(filename or []), replicas, current_replicas, selector, all_, dry_run
        )
    )


set_app = typer.Typer(help="Configure application resources.", no_args_is_help=True)
app.add_typer(set_app, name="set")


@set_app.command("image")
def set_image_command(
    args: list[str] = typer.Argument(..., help="TYPE NAME CONTAINER=IMAGE ... (or *=IMAGE)"),
    all_: bool = typer.Option(False, "--all"),
    selector: str = typer.Option(None, "-l", "--selector"),
) -> None:
    """Update the image of a pod template."""
    run(lambda s: set_image(s, list(args), all_, selector))
