"""Server-side printing: turn objects into the meta.k8s.io/v1 Table that `kubectl get` prints.

Since Kubernetes 1.11 kubectl does not know how to print a Pod. It asks the server:

    GET /api/v1/namespaces/default/pods
    Accept: application/json;as=Table;v=v1;g=meta.k8s.io

and the server answers with column definitions and one row of ready-made cells per object.
kubectl only lays the cells out, hiding columns with priority > 0 unless `-o wide`. That is why a
new kind (or a CRD with additionalPrinterColumns) prints nicely with an old kubectl: the
knowledge lives in the server, here.

Each row also carries the object, in one of three forms chosen by `?includeObject=`:
  - "Metadata" (what kubectl asks for by default): a PartialObjectMetadata, just the metadata,
    enough for kubectl to know names, namespaces and labels (`--show-labels`);
  - "Object": the whole object;
  - "None": nothing.

Kinds without a printer get the default table of every API server: NAME and CREATED AT (the
creation time in RFC 3339, not an age). That is what `kubectl get roles` shows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from apiserver.printers import apps, batch, core, events, misc, networking, pods, storage
from apiserver.printers.columns import NAME, Cells, Column, TablePrinter, dig
from apiserver.printers.duration import parse_time, utc_now

INCLUDE_OBJECT_POLICIES = ("None", "Metadata", "Object")

PRINTERS: dict[str, TablePrinter] = {
    **pods.PRINTERS,
    **core.PRINTERS,
    **events.PRINTERS,
    **apps.PRINTERS,
    **batch.PRINTERS,
    **misc.PRINTERS,
    **storage.PRINTERS,
    **networking.PRINTERS,
}


def _created_at(obj: dict[str, Any], now: datetime) -> Cells:
    """The default row: the name and the creation time as RFC 3339 in UTC, e.g. 2024-05-01T10:00:00Z.

    A missing timestamp is Go's zero time, which is what Kubernetes prints for it."""
    created = parse_time(dig(obj, "metadata", "creationTimestamp")) or datetime(1, 1, 1, tzinfo=UTC)
    utc = created.astimezone(UTC)
    # strftime's %Y does not pad year 1 to four digits everywhere, so the year is padded by hand.
    return [dig(obj, "metadata", "name", default=""), f"{utc.year:04d}-{utc:%m-%dT%H:%M:%S}Z"]


DEFAULT_PRINTER = TablePrinter(
    (
        NAME,
        Column(
            "Created At",
            "date",
            "CreationTimestamp is a timestamp representing the server time when this object was created.",
        ),
    ),
    _created_at,
)


def printer_for(resource: str) -> TablePrinter:
    """The printer for a resource key (`pods`, `deployments.apps`...); the default one if none."""
    return PRINTERS.get(resource, DEFAULT_PRINTER)


def column_definitions(resource: str) -> list[dict[str, Any]]:
    """The columnDefinitions of the Table for `resource`."""
    return [column.definition() for column in printer_for(resource).columns]


def _row_object(obj: dict[str, Any], include_object: str) -> dict[str, Any] | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata") or {},
    }


def build_table(
    resource: str,
    objects: list[dict[str, Any]],
    *,
    include_object: str = "Metadata",
    list_meta: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """A meta.k8s.io/v1 Table of `objects` (all of kind `resource`), ages computed at `now`.

    For a watch, call it with one object per event: each event carries a one-row Table."""
    if include_object not in INCLUDE_OBJECT_POLICIES:
        raise ValueError(
            f"includeObject must be one of {', '.join(INCLUDE_OBJECT_POLICIES)}, not {include_object!r}"
        )
    printer = printer_for(resource)
    moment = now or utc_now()
    if moment.tzinfo is None:  # a naive time is taken to be UTC, like every wire timestamp
        moment = moment.replace(tzinfo=UTC)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": printer.cells(obj, moment)}
        if printer.conditions is not None:
            conditions = printer.conditions(obj)
            if conditions:
                row["conditions"] = conditions
        embedded = _row_object(obj, include_object)
        if embedded is not None:
            row["object"] = embedded
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_meta or {}),
        "columnDefinitions": [column.definition() for column in printer.columns],
        "rows": rows,
    }
