"""`top node` and `top pod`: what nodes and pods use right now, from the Metrics API.

kubectl does not measure anything. It reads metrics.k8s.io/v1beta1 (NodeMetrics, PodMetrics),
which the API server proxies to metrics-server through API aggregation, and does a little
arithmetic on it:

1. discovery first: no `metrics.k8s.io` group with a version kubectl knows (v1beta1) in `/apis`
   is `error: Metrics API not available`;
2. `top node`: each node's usage, and that usage as a share of the node's allocatable (or
   capacity, `--show-capacity`), truncated to a whole percent. A node that is listed but has no
   metrics (its kubelet did not answer the last scrape) gets a row of `<unknown>`;
3. `top pod`: a pod's usage is the sum of its containers' (`--containers`: one row each);
   `--sum` adds a total row under a `________` rule.
   No metrics at all is explained from the pods themselves: no pods is "No resources found"
   (on stderr, exit 0), pods younger than two minutes is `metrics not available yet` (the
   pipeline needs two scrapes), an older pod is `Metrics not available for pod ns/name, age: ...`.

Units are fixed: CPU in millicores rounded up (`Quantity.MilliValue`), memory in whole Mi
rounded down. Rows are sorted by name (namespace first with -A), or by usage, largest first,
with `--sort-by cpu|memory`. The table goes through Go's tabwriter: every cell is tab-terminated,
so every column, the last one too, is padded, and kubectl's lines end in spaces.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from api import fields, labels
from api.quantity import Quantity, QuantityError
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run, warn
from kubectl.main import app
from kubectl.printing.table import tabwrite

GROUP = "metrics.k8s.io"
VERSIONS = ("v1beta1",)  # the versions kubectl 1.32 reads
BASE = f"/apis/{GROUP}/v1beta1"
RESOURCES = ("cpu", "memory")  # kubectl's MeasuredResources, in its order
NODE_COLUMNS = ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
POD_COLUMNS = ["NAME", "CPU(cores)", "MEMORY(bytes)"]
UNKNOWN = "<unknown>"
METRICS_DELAY = 120.0  # seconds: a pod older than this should have metrics by now
MIB = 1024 * 1024
GO_MIN_INT64 = -(2**63)  # what Go's int64(+Inf or NaN) gives on amd64: a percent of a zero allocatable


# ---------------------------------------------------------------- quantities and cells


def _quantity(resources: dict[str, Any] | None, name: str) -> Quantity:
    """A resource of a ResourceList; absent (or unreadable) is zero, as Go's map lookup gives."""
    try:
        return Quantity(str((resources or {}).get(name) or "0"))
    except QuantityError:
        return Quantity(0)


def _usage_text(resource: str, q: Quantity) -> str:
    return f"{q.milli_value()}m" if resource == "cpu" else f"{q.value() // MIB}Mi"


def _percent(used: Quantity, available: Quantity) -> str:
    total = float(available.milli_value())
    if total == 0:
        return f"{GO_MIN_INT64}%"
    return f"{int(float(used.milli_value()) / total * 100)}%"


def _usage_cells(usage: dict[str, Quantity], available: dict[str, Any] | None) -> list[str]:
    """CPU and memory, each followed by its percentage when the node has that resource."""
    cells = []
    for res in RESOURCES:
        cells.append(_usage_text(res, usage[res]))
        if available is not None and res in available:
            cells.append(_percent(usage[res], _quantity(available, res)))
    return cells


def _line(cells: list[str]) -> str:
    """One tabwriter line: every cell tab-terminated, as kubectl's printValue writes it."""
    return "".join(c + "\t" for c in cells) + "\n"


def _usage_of(obj: dict[str, Any]) -> dict[str, Quantity]:
    return {res: _quantity(obj.get("usage"), res) for res in RESOURCES}


def _pod_usage(pod: dict[str, Any]) -> dict[str, Quantity]:
    """The sum of the pod's containers, exactly (rounding happens once, when printed)."""
    total = {res: Quantity(0) for res in RESOURCES}
    for c in pod.get("containers") or []:
        for res, q in _usage_of(c).items():
            total[res] = total[res] + q
    return total


def _sort_key(sort_by: str, usage: dict[str, Quantity]) -> int:
    # largest first; ties keep the server's order (Go's sort is an insertion sort up to 12 rows)
    return -(usage["cpu"].milli_value() if sort_by == "cpu" else usage["memory"].value())


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _namespace(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


# ---------------------------------------------------------------- flags and discovery


def _check_sort_by(sort_by: str) -> None:
    if sort_by and sort_by not in ("cpu", "memory"):
        raise CmdError("--sort-by accepts only cpu or memory")


def _label_selector(text: str) -> str:
    try:
        return str(labels.parse(text)) if text else ""
    except ValueError as exc:
        raise CmdError(str(exc)) from None


def _field_selector(text: str) -> str:
    try:
        return str(fields.parse(text)) if text else ""
    except ValueError as exc:
        raise CmdError(str(exc)) from None


async def _require_metrics_api(s: Session) -> None:
    groups = await s.client.raw("GET", "/apis")
    for group in (groups.get("groups") or []) if isinstance(groups, dict) else []:
        if group.get("name") == GROUP and any(v.get("version") in VERSIONS for v in group.get("versions") or []):
            return
    raise CmdError("Metrics API not available")


def _usage_error(use: str, path: str) -> CmdError:
    return CmdError(f"{use}\nSee '{path} -h' for help and examples")


# ---------------------------------------------------------------- top node


def render_nodes(
    metrics: list[dict[str, Any]], available: dict[str, dict[str, Any] | None], no_headers: bool, sort_by: str
) -> str:
    """kubectl's node table: the nodes with metrics, then the listed nodes without (`<unknown>`)."""
    rows = [(m, _usage_of(m)) for m in metrics]
    if sort_by:
        rows.sort(key=lambda r: _sort_key(sort_by, r[1]))
    else:
        rows.sort(key=lambda r: _name(r[0]))
    text = "" if no_headers else _line(NODE_COLUMNS)
    missing = dict(available)
    for m, usage in rows:
        text += _line([_name(m), *_usage_cells(usage, available.get(_name(m)))])
        missing.pop(_name(m), None)
    for name in sorted(missing):  # (kubectl walks a Go map here: any order; we sort)
        text += _line([name] + [UNKNOWN] * (2 * len(RESOURCES)))
    return tabwrite(text)


async def top_nodes(s: Session, name: str, selector: str, sort_by: str, no_headers: bool, capacity: bool) -> int:
    _check_sort_by(sort_by)
    if name and selector:
        raise CmdError("only one of NAME or --selector can be provided")
    selector = _label_selector(selector)
    await _require_metrics_api(s)
    if name:
        metrics = [await s.client.raw("GET", f"{BASE}/nodes/{name}")]
    else:
        listed = await s.client.raw("GET", f"{BASE}/nodes", params={"labelSelector": selector or None})
        metrics = listed.get("items") or []
    if not metrics:
        raise CmdError("metrics not available yet")
    if name:
        nodes = [await s.client.get("nodes", name)]
    else:
        nodes = (await s.client.list("nodes", label_selector=selector or None)).get("items") or []
    field = "capacity" if capacity else "allocatable"
    available = {_name(n): (n.get("status") or {}).get(field) for n in nodes}
    out = render_nodes(metrics, available, no_headers, sort_by)
    if out:
        echo(out[:-1])
    return 0


# ---------------------------------------------------------------- top pod


def render_pods(
    metrics: list[dict[str, Any]], containers: bool, namespaces: bool, no_headers: bool, sort_by: str, total: bool
) -> str:
    """kubectl's pod table (PrintPodMetrics), the `--sum` rows included."""
    if not metrics:
        return ""
    width = len(POD_COLUMNS)  # counts the NAMESPACE and POD columns only when headers are printed
    head: list[str] = []
    if not no_headers:
        if namespaces:
            head.append("NAMESPACE")
        if containers:
            head.append("POD")
        width += len(head)
    text = "" if no_headers else _line([*head, *POD_COLUMNS])
    rows = [(m, _pod_usage(m)) for m in metrics]
    if sort_by:
        rows.sort(key=lambda r: _sort_key(sort_by, r[1]))
    else:
        rows.sort(key=lambda r: (_namespace(r[0]) if namespaces else "", _name(r[0])))
    for m, usage in rows:
        prefix = [_namespace(m)] if namespaces else []
        if not containers:
            text += _line([*prefix, _name(m), *_usage_cells(usage, None)])
            continue
        cs = [(c, _usage_of(c)) for c in m.get("containers") or []]
        if sort_by:
            cs.sort(key=lambda c: _sort_key(sort_by, c[1]))
        else:
            cs.sort(key=lambda c: str(c[0].get("name") or ""))
        for c, c_usage in cs:
            text += _line([*prefix, _name(m), str(c.get("name") or ""), *_usage_cells(c_usage, None)])
    if total:
        sums = {res: Quantity(0) for res in RESOURCES}
        for _, usage in rows:
            for res in RESOURCES:
                sums[res] = sums[res] + usage[res]
        text += _line([""] * (width - 2) + ["________", "________"])
        text += _line([""] * (width - 3) + ["", *_usage_cells(sums, None)])
    return tabwrite(text)


def go_duration(nanos: int) -> str:
    """Go's time.Duration.String() for a positive duration of a second or more: `2m3.456789s`."""
    seconds, frac = divmod(nanos, 10**9)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs}.{frac:09d}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{hours}h{minutes}m{text}"
    return f"{minutes}m{text}" if minutes else text


def check_pod_age(pod: dict[str, Any]) -> None:
    created = (pod.get("metadata") or {}).get("creationTimestamp")
    if not created:
        return
    born = datetime.fromisoformat(str(created).replace("Z", "+00:00")).timestamp()
    age = time.time_ns() - int(born) * 10**9
    if age > METRICS_DELAY * 10**9:
        raise CmdError(f"Metrics not available for pod {_namespace(pod)}/{_name(pod)}, age: {go_duration(age)}")


async def _explain_no_metrics(s: Session, name: str, selector: str, field_selector: str) -> None:
    """Why the Metrics API returned no pods: raises, unless there are simply no pods (kubectl
    asks the current namespace even with -A)."""
    if name:
        check_pod_age(await s.client.get("pods", name, s.namespace))
    else:
        pods = await s.client.list(
            "pods", s.namespace, label_selector=selector or None, field_selector=field_selector or None
        )
        if not pods.get("items"):
            return
        for pod in pods["items"]:
            check_pod_age(pod)
    raise CmdError("metrics not available yet")


async def top_pods(
    s: Session,
    name: str,
    all_namespaces: bool,
    selector: str,
    field_selector: str,
    containers: bool,
    no_headers: bool,
    sort_by: str,
    total: bool,
) -> int:
    _check_sort_by(sort_by)
    if name and (selector or field_selector):
        raise CmdError("only one of NAME or selector can be provided")
    selector, field_selector = _label_selector(selector), _field_selector(field_selector)
    await _require_metrics_api(s)
    where = f"{BASE}/pods" if all_namespaces else f"{BASE}/namespaces/{s.namespace}/pods"
    if name:
        metrics = [await s.client.raw("GET", f"{where}/{name}")]
    else:
        params = {"labelSelector": selector or None, "fieldSelector": field_selector or None}
        metrics = (await s.client.raw("GET", where, params=params)).get("items") or []
    if not metrics:
        await _explain_no_metrics(s, name, selector, field_selector)
        warn("No resources found" if all_namespaces else f"No resources found in {s.namespace} namespace.")
    out = render_pods(metrics, containers, all_namespaces, no_headers, sort_by, total)
    if out:
        echo(out[:-1])
    return 0


# ---------------------------------------------------------------- the commands

top_app = typer.Typer(help="Display resource (CPU/memory) usage.", no_args_is_help=True)
app.add_typer(top_app, name="top")

_SELECTOR_HELP = "Selector (label query) to filter on, supports '=', '==', and '!='."
_SORT_HELP = "Sort by 'cpu' or 'memory', largest first."


def _one_name(names: list[str] | None, use: str, path: str) -> str:
    names = list(names or [])
    if len(names) > 1:
        raise _usage_error(use, path)
    return names[0] if names else ""


@top_app.command("node")
@top_app.command("nodes", hidden=True)
@top_app.command("no", hidden=True)
def top_node(
    names: list[str] = typer.Argument(None),
    selector: str = typer.Option("", "-l", "--selector", help=_SELECTOR_HELP),
    sort_by: str = typer.Option("", "--sort-by", help=_SORT_HELP),
    no_headers: bool = typer.Option(False, "--no-headers", help="Print no header line."),
    show_capacity: bool = typer.Option(False, "--show-capacity", help="Percentages of capacity, not allocatable."),
    use_protocol_buffers: bool = typer.Option(True, "--use-protocol-buffers", hidden=True),
) -> None:
    """Display resource (CPU/memory) usage of nodes."""

    async def verb(s: Session) -> int:
        name = _one_name(names, "node [NAME | -l label]", "kubectl top node")
        return await top_nodes(s, name, selector, sort_by, no_headers, show_capacity)

    run(verb)


@top_app.command("pod")
@top_app.command("pods", hidden=True)
@top_app.command("po", hidden=True)
def top_pod(
    names: list[str] = typer.Argument(None),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces"),
    selector: str = typer.Option("", "-l", "--selector", help=_SELECTOR_HELP),
    field_selector: str = typer.Option("", "--field-selector", help="Selector (field query) to filter on."),
    containers: bool = typer.Option(False, "--containers", help="One row per container."),
    no_headers: bool = typer.Option(False, "--no-headers", help="Print no header line."),
    sort_by: str = typer.Option("", "--sort-by", help=_SORT_HELP),
    sum_: bool = typer.Option(False, "--sum", help="Add a row with the total usage."),
    use_protocol_buffers: bool = typer.Option(True, "--use-protocol-buffers", hidden=True),
) -> None:
    """Display resource (CPU/memory) usage of pods."""

    async def verb(s: Session) -> int:
        name = _one_name(names, "pod [NAME | -l label]", "kubectl top pod")
        return await top_pods(s, name, all_namespaces, selector, field_selector, containers, no_headers, sort_by, sum_)

    run(verb)
