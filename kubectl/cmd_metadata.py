"""`kubectl label` and `kubectl annotate`: edit metadata.labels / metadata.annotations.

    kubectl label pod web tier=front        pod/web labeled
    kubectl label pod web tier-             pod/web unlabeled
    kubectl label pod web tier=front        pod/web not labeled      (already so)
    kubectl label pod web tier=back         error: 'tier' already has a value (front), and --overwrite
                                            is false

A change is sent as a JSON merge patch of just that map (`null` removes a key), so nothing else
of the object is touched and no resourceVersion is needed.
"""

from __future__ import annotations

from typing import Any

from api.errors import StatusError
from kubectl import commandline as typer
from kubectl.cli import CmdError, Reporter, Session, echo, run
from kubectl.main import app
from kubectl.resources import parse_args, qualified


def split_updates(words: list[str], what: str) -> tuple[list[str], dict[str, str], list[str]]:
    """(resource args, key=value to set, keys to remove) from the command's positional words."""
    resources, setting, removing = [], {}, []
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            setting[k] = v
        elif w.endswith("-") and w != "-":  # kubectl's rule: `example.com/load-` too (no name ends in -)
            removing.append(w[:-1])
        else:
            resources.append(w)
    if not setting and not removing:
        raise CmdError(f"at least one {what} update is required")
    return resources, setting, removing


async def edit_map(
    s: Session,
    words: list[str],
    field: str,
    noun: str,
    verb: str,
    overwrite: bool,
    selector: str | None,
    all_: bool,
    all_namespaces: bool,
    dry_run: str = "none",
) -> int:
    from kubectl.dryrun import check_dry_run, patch_object, suffix

    check_dry_run(dry_run)
    args, setting, removing = split_updates(words, noun)
    sel = parse_args(args)
    report = Reporter()
    targets: list[dict[str, Any]] = []
    for rt, names in sel.groups:
        ns = None if (not rt.namespaced or all_namespaces) else s.namespace
        if names:
            for n in names:
                try:
                    targets.append(await s.client.get(rt, n, ns))
                except StatusError as exc:
                    report.status(exc)
        elif selector or all_:
            lst = await s.client.list(rt, ns, label_selector=selector)
            for item in lst.get("items") or []:
                item.setdefault("apiVersion", rt.api_version)
                item.setdefault("kind", rt.kind)
                targets.append(item)
        else:
            raise CmdError("resource(s) were provided, but no name was specified")
    for obj in targets:
        rt = next(rt for rt, _ in sel.groups if rt.kind == obj.get("kind"))
        meta = obj["metadata"]
        current: dict[str, str] = dict(meta.get(field) or {})
        if not overwrite:
            clashes = [k for k, v in setting.items() if k in current and current[k] != v]
            if clashes and noun == "label":
                msgs = [
                    f"'{k}' already has a value ({current[k]}), and --overwrite is false" for k in clashes
                ]
                raise CmdError(msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]")
            if clashes:  # annotate words it differently
                found = "; ".join(f"'{k}' already has a value ({current[k]})" for k in clashes)
                raise CmdError(
                    f"--overwrite is false but found the following declared annotation(s): {found}"
                )
        patch: dict[str, Any] = {}
        for k in removing:
            if k in current:
                patch[k] = None
            else:
                echo(f'{noun} "{k}" not found.')
        patch.update({k: v for k, v in setting.items() if current.get(k) != v})
        name = qualified(rt, meta["name"])
        if not patch:
            echo(f"{name} not {verb}" if noun == "label" else f"{name} {verb}{suffix(dry_run)}")
            continue
        try:
            await patch_object(s, rt, meta["name"], meta.get("namespace"), {"metadata": {field: patch}}, dry_run)
        except StatusError as exc:
            report.status(exc)
            continue
        if noun == "label" and all(v is None for v in patch.values()):
            echo(f"{name} un{verb}{suffix(dry_run)}")
        else:
            echo(f"{name} {verb}{suffix(dry_run)}")
    return 1 if report.failed else 0


_OVERWRITE = typer.Option(False, "--overwrite", help="Allow replacing an existing value.")
_SEL = typer.Option(None, "-l", "--selector")
_ALL = typer.Option(False, "--all")
_ALLNS = typer.Option(False, "-A", "--all-namespaces")
_DRY = typer.Option("none", "--dry-run", help='"none", "server", or "client".')


@app.command("label")
def label_command(
    words: list[str] = typer.Argument(..., help="TYPE NAME KEY=VAL ... | KEY-"),
    overwrite: bool = _OVERWRITE,
    selector: str = _SEL,
    all_: bool = _ALL,
    all_namespaces: bool = _ALLNS,
    dry_run: str = _DRY,
) -> None:
    """Update the labels on a resource."""
    run(
        lambda s: edit_map(
            s, words, "labels", "label", "labeled", overwrite, selector, all_, all_namespaces, dry_run
        )
    )


@app.command("annotate")
def annotate_command(
    words: list[str] = typer.Argument(..., help="TYPE NAME KEY=VAL ... | KEY-"),
    overwrite: bool = _OVERWRITE,
    selector: str = _SEL,
    all_: bool = _ALL,
    all_namespaces: bool = _ALLNS,
    dry_run: str = _DRY,
) -> None:
    """Update the annotations on a resource."""
    run(
        lambda s: edit_map(
            s, words, "annotations", "annotation", "annotated", overwrite, selector, all_, all_namespaces, dry_run
        )
    )
