"""Node maintenance: `cordon`, `uncordon`, `drain` (`top` is in cmd_top.py).

cordon sets `spec.unschedulable: true` (the scheduler's NodeUnschedulable filter then skips the
node); uncordon clears it. drain = cordon, then empty the node politely:

1. list the pods bound to it (`fieldSelector=spec.nodeName=<node>`);
2. refuse, unless told otherwise, to remove pods that would not come back or would lose data:
   pods with no controller (`--force`), DaemonSet pods (the DaemonSet would re-create them on
   the same node: `--ignore-daemonsets` skips them), pods with emptyDir volumes
   (`--delete-emptydir-data`); mirror pods are skipped silently;
3. evict each pod through `pods/<name>/eviction` (the API that honours PodDisruptionBudgets;
   429 means "not now", so retry), or delete it with `--disable-eviction`;
4. wait until each pod is gone (`--timeout`, 0 = forever).
"""

from __future__ import annotations

import asyncio
from typing import Any

from api.errors import NotFoundError, StatusError, TooManyRequestsError
from kubectl import commandline as typer
from kubectl.cli import CmdError, Reporter, Session, echo, run, warn
from kubectl.durations import parse_duration
from kubectl.main import app
from kubectl.waiting import wait_deleted

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


async def set_unschedulable(s: Session, name: str, value: bool) -> str:
    node = await s.client.get("nodes", name)
    word = "cordoned" if value else "uncordoned"
    if bool((node.get("spec") or {}).get("unschedulable")) == value:
        return f"node/{name} already {word}"
    await s.client.patch("nodes", name, {"spec": {"unschedulable": True if value else None}})
    return f"node/{name} {word}"


async def cordon(s: Session, names: list[str], value: bool, selector: str | None) -> int:
    if selector:
        names = [
            n["metadata"]["name"] for n in (await s.client.list("nodes", label_selector=selector))["items"]
        ]
    if not names:
        raise CmdError("USAGE: cordon NODE [flags]")
    report = Reporter()
    for name in names:
        try:
            echo(await set_unschedulable(s, name, value))
        except StatusError as exc:
            report.status(exc)
    return 1 if report.failed else 0


def _controller(pod: dict[str, Any]) -> dict[str, Any] | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def classify(
    pods: list[dict[str, Any]], force: bool, ignore_daemonsets: bool, delete_emptydir: bool
) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """(pods to evict, warnings, errors) - kubectl's drain filters, in its order: DaemonSet pods,
    mirror pods, local storage, then pods without a controller. A pod stops at its first error."""
    evict: list[dict[str, Any]] = []
    errors: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    for pod in pods:
        meta = pod["metadata"]
        ref = f"{meta.get('namespace')}/{meta['name']}"
        finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        owner = _controller(pod)
        if owner and owner.get("kind") == "DaemonSet" and not finished:
            if ignore_daemonsets:
                warnings.setdefault("ignoring DaemonSet-managed Pods", []).append(ref)
            else:
                errors.setdefault(
                    "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)", []
                ).append(ref)
            continue
        if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            continue
        if any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or []) and not finished:
            if not delete_emptydir:
                errors.setdefault(
                    "cannot delete Pods with local storage (use --delete-emptydir-data to override)", []
                ).append(ref)
                continue
            warnings.setdefault("deleting Pods with local storage", []).append(ref)
        if not owner and not finished:
            if not force:
                # (kubectl 1.32 really says "cannot delete" twice here)
                errors.setdefault(
                    "cannot delete cannot delete Pods that declare no controller (use --force to override)",
                    [],
                ).append(ref)
                continue
            warnings.setdefault("deleting Pods that declare no controller", []).append(ref)
        evict.append(pod)
    return (
        evict,
        [f"{k}: {', '.join(v)}" for k, v in warnings.items()],
        [f"{k}: {', '.join(v)}" for k, v in errors.items()],
    )


async def _evict(s: Session, pod: dict[str, Any], grace: int | None, disable_eviction: bool) -> None:
    meta = pod["metadata"]
    while True:
        try:
            if disable_eviction:
                await s.client.delete("pods", meta["name"], meta["namespace"], grace_period_seconds=grace)
            else:
                warn(f"evicting pod {meta['namespace']}/{meta['name']}")
                await s.client.evict(meta["namespace"], meta["name"], grace_period_seconds=grace)
            return
        except NotFoundError:
            return
        except TooManyRequestsError as exc:  # a disruption budget says "not now"
            warn(
                f'error when evicting pods/"{meta["name"]}" -n "{meta["namespace"]}" (will retry after '
                f"5s): {exc.message}"
            )
            await asyncio.sleep(5)


async def drain(
    s: Session,
    name: str,
    force: bool,
    ignore_daemonsets: bool,
    delete_emptydir: bool,
    grace: int,
    timeout: float,
    disable_eviction: bool,
) -> int:
    echo(await set_unschedulable(s, name, True))
    pods = (await s.client.list("pods", None, field_selector=f"spec.nodeName={name}"))["items"]
    evict, warnings, errors = classify(pods, force, ignore_daemonsets, delete_emptydir)
    if errors:
        message = f"[{', '.join(errors)}]" if len(errors) > 1 else errors[0]
        warn(f'error: unable to drain node "{name}" due to error: {message}, continuing command...')
        warn(f"There are pending nodes to be drained:\n {name}")
        for e in errors:  # kubectl ends with the errors themselves, one per line, no "error:" prefix
            warn(e)
        return 1
    for w in warnings:
        warn(f"Warning: {w}")
    g = grace if grace >= 0 else None

    async def one(pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        await _evict(s, pod, g, disable_eviction)
        await wait_deleted(s, _pods(), meta["namespace"], meta["name"], meta.get("uid"))
        echo(f"pod/{meta['name']} {'deleted' if disable_eviction else 'evicted'}")

    try:
        await asyncio.wait_for(asyncio.gather(*(one(p) for p in evict)), timeout or None)
    except TimeoutError:
        warn(
            f'error: unable to drain node "{name}" due to error: drain did not complete within {timeout:g}s, '
            "continuing command..."
        )
        warn(f"There are pending nodes to be drained:\n {name}")
        raise CmdError(f"drain did not complete within {timeout:g}s") from None
    echo(f"node/{name} drained")
    return 0


def _pods() -> Any:
    from api import registry

    return registry.by_key("pods")


@app.command("cordon")
def cordon_command(
    names: list[str] = typer.Argument(None), selector: str = typer.Option(None, "-l", "--selector")
) -> None:
    """Mark node as unschedulable."""
    run(lambda s: cordon(s, list(names or []), True, selector))


@app.command("uncordon")
def uncordon_command(
    names: list[str] = typer.Argument(None), selector: str = typer.Option(None, "-l", "--selector")
) -> None:
    """Mark node as schedulable."""
    run(lambda s: cordon(s, list(names or []), False, selector))


@app.command("drain")
def drain_command(
    name: str = typer.Argument(...),
    force: bool = typer.Option(False, "--force", help="Also delete pods that declare no controller."),
    ignore_daemonsets: bool = typer.Option(False, "--ignore-daemonsets"),
    delete_emptydir_data: bool = typer.Option(False, "--delete-emptydir-data"),
    grace_period: int = typer.Option(-1, "--grace-period"),
    timeout: str = typer.Option("0s", "--timeout", help="How long to wait (0: forever)."),
    disable_eviction: bool = typer.Option(False, "--disable-eviction", help="Delete instead of evict."),
) -> None:
    """Drain node in preparation for maintenance."""
    limit = parse_duration(timeout)
    run(
        lambda s: drain(
            s, name, force, ignore_daemonsets, delete_emptydir_data, grace_period, limit, disable_eviction
        )
    )
