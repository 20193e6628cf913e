"""`kubectl get`: list or read objects and print them as a table, or as yaml/json/name/jsonpath.

For tables kubectl asks the server for `meta.k8s.io/v1` Tables (Accept: ...;as=Table) and only
lays them out (printing/table.py). For -o yaml/json it asks for the objects themselves.

    get pods                     one table
    get deploy,svc / get all     one table per kind that has objects, a blank line between, and
                                 names as `deployment.apps/web` because several kinds are shown
    get pods web db              by name; each missing one is an error on stderr (exit 1)
    get pods -w                  the table, then one line per change, widths kept (see TabWriter)

Nothing found prints `No resources found in default namespace.` on stderr and exits 0.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from api.errors import NotFoundError
from api.registry import ResourceType
from client.rest import resource_path
from client.watch import decode_event
from kubectl.cli import TABLE_ACCEPT, CmdError, Reporter, Session, echo, warn
from kubectl.manifests import object_namespace, read_manifests
from kubectl.printing import output as out_fmt
from kubectl.printing.table import TableLayout, TabWriter
from kubectl.resources import Selection, kind_prefix, parse_args


def _ns(rt: ResourceType, s: Session, all_namespaces: bool) -> str | None:
    if not rt.namespaced or all_namespaces:
        return None
    return s.namespace


def no_resources_message(types: list[ResourceType], namespace: str, all_namespaces: bool) -> str:
    if all_namespaces or not any(rt.namespaced for rt in types):
        return "No resources found"
    return f"No resources found in {namespace} namespace."


async def fetch_table(
    s: Session,
    rt: ResourceType,
    namespace: str | None,
    name: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    include_object: str | None = None,
) -> dict[str, Any]:
    params = {"labelSelector": label_selector, "fieldSelector": field_selector, "includeObject": include_object}
    if not name:
        params["limit"] = "500"
    table: dict[str, Any] = await s.client.raw(
        "GET", resource_path(rt, namespace, name), params=params, headers={"Accept": TABLE_ACCEPT}
    )
    return table


async def fetch_objects(
    s: Session,
    rt: ResourceType,
    namespace: str | None,
    names: list[str],
    label_selector: str | None,
    field_selector: str | None,
    report: Reporter,
) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    if names:
        for name in names:
            try:
                objs.append(await s.client.get(rt, name, namespace))
            except NotFoundError as exc:
                report.status(exc)
        return objs
    lst = await s.client.list(rt, namespace, label_selector=label_selector, field_selector=field_selector)
    for item in lst.get("items") or []:
        item.setdefault("apiVersion", rt.api_version)
        item.setdefault("kind", rt.kind)
        objs.append(item)
    return objs


def _selection_from_files(files: list[str], s: Session, recursive: bool) -> tuple[Selection, dict[str, str]]:
    sel = Selection(by_name=True)
    namespaces: dict[str, str] = {}
    for m in read_manifests(files, recursive):
        ns = object_namespace(m, s.namespace, s.explicit_namespace)
        namespaces[f"{m.rt.key}/{m.name}"] = ns or ""
        for rt, names in sel.groups:
            if rt == m.rt:
                names.append(m.name)
                break
        else:
            sel.groups.append((m.rt, [m.name]))
    return sel, namespaces


async def get(
    s: Session,
    args: list[str],
    *,
    output: str | None,
    selector: str | None,
    field_selector: str | None,
    watch: bool,
    watch_only: bool,
    show_labels: bool,
    all_namespaces: bool,
    files: list[str],
    recursive: bool,
    label_columns: list[str],
    no_headers: bool,
    sort_by: str | None = None,
    raw: str | None = None,
    show_managed_fields: bool = False,
) -> int:
    if raw:
        return await get_raw(s, raw)
    out_fmt.check_format(output)
    if files:
        sel, _ = _selection_from_files(files, s, recursive)
    else:
        sel = parse_args(args)
    if sel.by_name and selector:
        raise CmdError("name cannot be provided when a selector is specified")
    if watch or watch_only:
        if len(sel.groups) != 1 or len(sel.groups[0][1]) > 1:
            raise CmdError(
                "watch is only supported on individual resources and resource collections, but "
                f"{sum(max(1, len(n)) for _, n in sel.groups)} resources were found"
            )
        rt, names = sel.groups[0]
        return await _watch(
            s,
            rt,
            names[0] if names else None,
            output,
            selector,
            field_selector,
            watch_only,
            show_labels,
            all_namespaces,
            label_columns,
        )
    report = Reporter()
    if output and output != "wide":
        objs: list[dict[str, Any]] = []
        for rt, names in sel.groups:
            objs += await fetch_objects(
                s, rt, _ns(rt, s, all_namespaces), names, selector, field_selector, report
            )
        single = sel.by_name and len(sel.groups) == 1 and len(sel.groups[0][1]) == 1
        if sort_by:
            objs = sort_objects(objs, sort_by, lambda o: o)
        if objs or sel.by_name:
            if objs or not single:
                sys.stdout.write(out_fmt.render(output, objs, single, show_managed_fields))
        if not objs and not sel.by_name:
            warn(no_resources_message(sel.types, s.namespace, all_namespaces))
        return 1 if report.failed else 0
    tables: list[tuple[ResourceType, dict[str, Any]]] = []
    for rt, names in sel.groups:
        ns = _ns(rt, s, all_namespaces)
        if names:
            for name in names:
                try:
                    tables.append((rt, await fetch_table(s, rt, ns, name)))
                except NotFoundError as exc:
                    report.status(exc)
        else:
            include = "Object" if sort_by else None
            tables.append((rt, await fetch_table(s, rt, ns, None, selector, field_selector, include)))
    if sort_by:
        for _, table in tables:
            table["rows"] = sort_objects(table.get("rows") or [], sort_by, lambda r: r.get("object") or {})
    _print_tables(tables, output == "wide", all_namespaces, show_labels, label_columns, no_headers)
    if not any(t.get("rows") for _, t in tables) and not sel.by_name:
        warn(no_resources_message(sel.types, s.namespace, all_namespaces))
    return 1 if report.failed else 0


def sort_objects(items: list[Any], sort_by: str, obj_of: Any) -> list[Any]:
    """`--sort-by={.metadata.name}` (braces optional): numbers by value, everything else as text;
    a stable sort, so equal keys keep the server's order."""
    from kubectl.printing import jsonpath

    path = sort_by.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    keys = []
    for item in items:
        found = jsonpath.evaluate(path, [obj_of(item)])
        keys.append(found[0] if found else None)
    numeric = all(isinstance(k, int | float) and not isinstance(k, bool) for k in keys if k is not None)

    def key(i: int) -> Any:
        k = keys[i]
        if k is None:
            return (0, 0 if numeric else "")
        return (1, k if numeric else (k if isinstance(k, str) else jsonpath._text(k)))

    return [items[i] for i in sorted(range(len(items)), key=key)]


async def get_raw(s: Session, path: str) -> int:
    """`get --raw /api/v1`: the body exactly as the server sent it."""
    if not path.startswith("/"):
        path = "/" + path
    resp = await s.client._http.request("GET", path, headers={}, body=None)  # the bytes, undecoded
    if resp.status_code >= 400:
        raise s.client._status_error(resp)
    sys.stdout.write(resp.content.decode(errors="replace"))
    return 0


def _label_column(key: str) -> tuple[str, Any]:
    def cell(row: dict[str, Any]) -> str:
        labels = ((row.get("object") or {}).get("metadata") or {}).get("labels") or {}
        return str(labels.get(key, ""))

    return (key.rsplit("/", 1)[-1].upper(), cell)


def _print_tables(
    tables: list[tuple[ResourceType, dict[str, Any]]],
    wide: bool,
    all_namespaces: bool,
    show_labels: bool,
    label_columns: list[str],
    no_headers: bool,
) -> None:
    # Tables of one kind (several names) print as one table; kinds are separated by a blank line.
    merged: list[tuple[ResourceType, dict[str, Any], list[dict[str, Any]]]] = []
    for rt, table in tables:
        if merged and merged[-1][0] == rt:
            merged[-1][2].extend(table.get("rows") or [])
        else:
            merged.append((rt, table, list(table.get("rows") or [])))
    shown = [m for m in merged if m[2]]
    show_kind = len({rt for rt, _, _ in shown}) > 1
    for i, (rt, table, rows) in enumerate(shown):
        if i:
            echo()
        layout = TableLayout(
            table,
            wide=wide,
            all_namespaces=all_namespaces and rt.namespaced,
            show_labels=show_labels,
            kind_prefix=kind_prefix(rt),
            show_kind=show_kind,
            extra_columns=[_label_column(k) for k in label_columns],
        )
        lines = ([] if no_headers else [layout.header()]) + [layout.row(r) for r in rows]
        for line in TabWriter().render(lines):
            echo(line)


async def _watch(
    s: Session,
    rt: ResourceType,
    name: str | None,
    output: str | None,
    selector: str | None,
    field_selector: str | None,
    watch_only: bool,
    show_labels: bool,
    all_namespaces: bool,
    label_columns: list[str],
) -> int:
    ns = _ns(rt, s, all_namespaces)
    if name:
        field_selector = ",".join(f for f in (field_selector, f"metadata.name={name}") if f)
    table = await fetch_table(s, rt, ns, None, selector, field_selector)
    writer = TabWriter()
    header_done = False
    structured = bool(output and output != "wide")

    def emit(tbl: dict[str, Any]) -> None:
        nonlocal header_done
        layout = TableLayout(
            tbl,
            wide=output == "wide",
            all_namespaces=all_namespaces and rt.namespaced,
            show_labels=show_labels,
            extra_columns=[_label_column(k) for k in label_columns],
        )
        rows = [layout.row(r) for r in tbl.get("rows") or []]
        if not rows:
            return
        if not header_done:
            rows.insert(0, layout.header())
            header_done = True
        for line in writer.render(rows):
            echo(line)

    if structured:
        objs = (
            []
            if watch_only
            else await fetch_objects(s, rt, ns, [name] if name else [], selector, field_selector, Reporter())
        )
        for o in objs:
            sys.stdout.write(out_fmt.render(output or "", [o], True))
    elif not watch_only:
        emit(table)
    params = {
        "watch": "1",
        "resourceVersion": (table.get("metadata") or {}).get("resourceVersion"),
        "labelSelector": selector,
        "fieldSelector": field_selector,
    }
    headers = None if structured else {"Accept": TABLE_ACCEPT}
    stream = _stream(s, resource_path(rt, ns), params, headers)
    async with contextlib.aclosing(stream) as events:
        async for ev in events:
            if ev.type == "BOOKMARK":
                continue
            if structured:
                sys.stdout.write(out_fmt.render(output or "", [ev.object], True))
                sys.stdout.flush()
            else:
                emit(ev.object)
    return 0


async def _stream(s: Session, path: str, params: dict[str, Any], headers: dict[str, str] | None) -> Any:
    """Watch events of `path`, with the Table Accept header when printing tables."""
    async with contextlib.aclosing(s.client.raw_stream("GET", path, params=params, headers=headers)) as lines:
        async for line in lines:
            ev = decode_event(line)
            if ev is not None:
                yield ev


# ---------------------------------------------------------------------------- the command

from kubectl import commandline as typer  # noqa: E402
from kubectl.cli import run  # noqa: E402
from kubectl.completion import complete_type_and_names  # noqa: E402
from kubectl.main import app  # noqa: E402


@app.command("get", context_settings={"ignore_unknown_options": False})
def get_command(
    args: list[str] = typer.Argument(
        None, help="TYPE[.VERSION][.GROUP] [NAME ...] | TYPE/NAME ...", shell_complete=complete_type_and_names
    ),
    output: str = typer.Option(
        None, "-o", "--output", help="json|yaml|wide|name|jsonpath=...|custom-columns=..."
    ),
    selector: str = typer.Option(None, "-l", "--selector", help="Label selector, e.g. app=web,tier!=db"),
    field_selector: str = typer.Option(
        None, "--field-selector", help="Field selector, e.g. status.phase=Running"
    ),
    watch: bool = typer.Option(False, "-w", "--watch", help="After listing, watch for changes."),
    watch_only: bool = typer.Option(False, "--watch-only", help="Watch for changes without listing first."),
    show_labels: bool = typer.Option(False, "--show-labels", help="Show all labels as the last column."),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="List across all namespaces."),
    filename: list[str] = typer.Option(None, "-f", "--filename", help="Objects named in these files."),
    recursive: bool = typer.Option(False, "-R", "--recursive"),
    label_columns: list[str] = typer.Option(None, "-L", "--label-columns", help="Labels to show as columns."),
    no_headers: bool = typer.Option(False, "--no-headers"),
    sort_by: str = typer.Option(None, "--sort-by", help="A JSONPath to sort by, e.g. {.metadata.name}."),
    raw: str = typer.Option(None, "--raw", help="GET this URL path and print the body as is."),
    show_managed_fields: bool = typer.Option(
        False, "--show-managed-fields", help="Keep metadata.managedFields in -o json|yaml output."
    ),
) -> None:
    """Display one or many resources."""
    cols = [c for spec in label_columns or [] for c in spec.split(",") if c]
    run(
        lambda s: get(
            s,
            list(args or []),
            output=output,
            selector=selector,
            field_selector=field_selector,
            watch=watch,
            watch_only=watch_only,
            show_labels=show_labels,
            all_namespaces=all_namespaces,
            files=list(filename or []),
            recursive=recursive,
            label_columns=cols,
            no_headers=no_headers,
            sort_by=sort_by,
            raw=raw,
            show_managed_fields=show_managed_fields,
        )
    )
