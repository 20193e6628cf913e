"""`describe quota` and `describe limits`, in kubectl's layout.

A ResourceQuota is shown as its sorted `status.hard` resources with what is used of each (0 when
the controller has not counted it yet), after its scopes and the sentence kubectl gives each
scope. A LimitRange is one row per limit type and resource; a bound it does not set is `-`. The
namespace describer prints the same limit rows, one space in.
"""

from __future__ import annotations

from typing import Any

from kubectl.describe.writer import LEVEL_0, PrefixWriter

Obj = dict[str, Any]

SCOPE_HELP = {
    "Terminating": "Matches all pods that have an active deadline. These pods have a limited lifespan on a node "
    "before being actively terminated by the system.",
    "NotTerminating": "Matches all pods that do not have an active deadline. These pods usually include long "
    "running pods whose container command is not expected to terminate.",
    "BestEffort": "Matches all pods that do not have resource requirements set. These pods have a best effort "
    "quality of service.",
    "NotBestEffort": "Matches all pods that have at least one resource requirement set. These pods have a "
    "burstable or guaranteed quality of service.",
}
LIMIT_HEADER = "Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n"
LIMIT_RULE = "----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n"
_LIMIT_FIELDS = ("min", "max", "defaultRequest", "default", "maxLimitRequestRatio")


def limit_rows(lr: Obj) -> list[str]:
    """`Container\tcpu\t50m\t1\t100m\t500m\t10\n`: one row per limit item and resource, sorted by resource."""
    rows = []
    for item in (lr.get("spec") or {}).get("limits") or []:
        for name in sorted({n for f in _LIMIT_FIELDS for n in (item.get(f) or {})}):
            values = [str((item.get(f) or {}).get(name, "-")) for f in _LIMIT_FIELDS]
            rows.append(f"{item.get('type', '')}\t{name}\t" + "\t".join(values) + "\n")
    return rows


def resource_quota(q: Obj, _events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec, status = q["metadata"], q.get("spec") or {}, q.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    scopes = sorted(spec.get("scopes") or [])
    if scopes:
        w.write(LEVEL_0, f"Scopes:\t{', '.join(scopes)}\n")
        for scope in scopes:
            if scope in SCOPE_HELP:
                w.write(LEVEL_0, f" * {SCOPE_HELP[scope]}\n")
    w.write(LEVEL_0, "Resource\tUsed\tHard\n")
    w.write(LEVEL_0, "--------\t----\t----\n")
    hard, used = status.get("hard") or {}, status.get("used") or {}
    for name in sorted(hard):
        w.write(LEVEL_0, f"{name}\t{used.get(name, '0')}\t{hard[name]}\n")
    return w.text()


def limit_range(lr: Obj, _events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta = lr["metadata"]
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(LEVEL_0, LIMIT_HEADER)
    w.write(LEVEL_0, LIMIT_RULE)
    for row in limit_rows(lr):
        w.write(LEVEL_0, row)
    return w.text()
