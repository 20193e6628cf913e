"""Rows for the apps/v1 workload controllers: deployments, replica sets, daemon sets, stateful sets.

Each row is the controller's desired count next to what its status reports, which is the whole
control loop in one line: DESIRED is the spec, CURRENT/READY/UP-TO-DATE/AVAILABLE are what the
controller has observed so far. Deployments and stateful sets squeeze desired and ready into one
READY cell (`2/3`). The wide columns name the pod template's containers and images and the
controller's selector.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    Cells,
    Column,
    TablePrinter,
    dig,
    items,
    mapping,
    number,
    wide,
)
from apiserver.printers.duration import translate_timestamp_since
from apiserver.printers.formatting import (
    InvalidSelector,
    format_label_selector,
    format_labels,
    label_selector_string,
    layout_container_cells,
)


def _template_containers(obj: dict[str, Any]) -> tuple[str, str]:
    return layout_container_cells(items(obj, "spec", "template", "spec", "containers"))


def _common(obj: dict[str, Any], now: datetime) -> tuple[str, str]:
    return (
        dig(obj, "metadata", "name", default=""),
        translate_timestamp_since(dig(obj, "metadata", "creationTimestamp"), now),
    )


def _replicas(obj: dict[str, Any]) -> int:
    # apps/v1 defaults spec.replicas to 1, so a missing value means one.
    return number(obj, "spec", "replicas", default=1)


def deployment_cells(deployment: dict[str, Any], now: datetime) -> Cells:
    name, age = _common(deployment, now)
    try:
        selector = label_selector_string(mapping(deployment, "spec", "selector") or None)
    except InvalidSelector:
        selector = "<invalid>"
    names, images = _template_containers(deployment)
    return [
        name,
        f"{number(deployment, 'status', 'readyReplicas')}/{_replicas(deployment)}",
        number(deployment, "status", "updatedReplicas"),
        number(deployment, "status", "availableReplicas"),
        age,
        names,
        images,
        selector,
    ]


def replica_set_cells(rs: dict[str, Any], now: datetime) -> Cells:
    name, age = _common(rs, now)
    names, images = _template_containers(rs)
    return [
        name,
        _replicas(rs),
        number(rs, "status", "replicas"),
        number(rs, "status", "readyReplicas"),
        age,
        names,
        images,
        format_label_selector(dig(rs, "spec", "selector")),
    ]


def daemon_set_cells(ds: dict[str, Any], now: datetime) -> Cells:
    name, age = _common(ds, now)
    names, images = _template_containers(ds)
    return [
        name,
        number(ds, "status", "desiredNumberScheduled"),
        number(ds, "status", "currentNumberScheduled"),
        number(ds, "status", "numberReady"),
        number(ds, "status", "updatedNumberScheduled"),
        number(ds, "status", "numberAvailable"),
        format_labels(mapping(ds, "spec", "template", "spec", "nodeSelector")),
        age,
        names,
        images,
        format_label_selector(dig(ds, "spec", "selector")),
    ]


def stateful_set_cells(sts: dict[str, Any], now: datetime) -> Cells:
    name, age = _common(sts, now)
    names, images = _template_containers(sts)
    return [name, f"{number(sts, 'status', 'readyReplicas')}/{_replicas(sts)}", age, names, images]


READY_PODS = "Number of the pod with ready state"

PRINTERS = {
    "deployments.apps": TablePrinter(
        (
            NAME,
            Column("Ready", description=READY_PODS),
            Column(
                "Up-to-date",
                description="Total number of non-terminated pods targeted by this "
                "deployment that have the desired template spec.",
            ),
            Column(
                "Available",
                description="Total number of available pods (ready for at least "
                "minReadySeconds) targeted by this deployment.",
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "Label selector for pods."),
        ),
        deployment_cells,
    ),
    "replicasets.apps": TablePrinter(
        (
            NAME,
            Column("Desired", "integer", "Replicas is the number of desired replicas."),
            Column("Current", "integer", "Replicas is the most recently observed number of replicas."),
            Column("Ready", "integer", "The number of ready replicas for this replica set."),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "Selector is a label query over pods that should match the replica count."),
        ),
        replica_set_cells,
    ),
    "daemonsets.apps": TablePrinter(
        (
            NAME,
            Column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
            Column(
                "Current",
                "integer",
                "The number of nodes that are running at least 1 daemon pod and "
                "are supposed to run the daemon pod.",
            ),
            Column(
                "Ready",
                "integer",
                "The number of nodes that should be running the daemon pod and have "
                "one or more of the daemon pod running and ready.",
            ),
            Column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
            Column(
                "Available",
                "integer",
                "The number of nodes that should be running the daemon pod and "
                "have one or more of the daemon pod running and available.",
            ),
            Column(
                "Node Selector",
                description="NodeSelector is a selector which must be true for the pod to fit on a node.",
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "A label query over pods that are managed by the daemon set."),
        ),
        daemon_set_cells,
    ),
    "statefulsets.apps": TablePrinter(
        (NAME, Column("Ready", description=READY_PODS), AGE, CONTAINERS, IMAGES),
        stateful_set_cells,
    ),
}
