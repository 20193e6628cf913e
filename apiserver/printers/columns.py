"""The building blocks every printer shares: a column, a printer, and safe field access.

A printer is two things that must agree: the column definitions (the table header) and a function
that turns one object into one row of cells. The API server always computes *every* column,
including the `-o wide` ones; a column's `priority` tells the client which to hide. Priority 0 is
shown by plain `kubectl get`, priority 1 only with `-o wide`. So `kubectl get pods -o wide` costs
the server nothing extra: the cells were already there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# The descriptions of ObjectMeta.name and ObjectMeta.creationTimestamp, as Kubernetes puts them
# into the Name and Age column definitions.
NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATION_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
    "system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

NONE = "<none>"


@dataclass(frozen=True)
class Column:
    """One metav1.TableColumnDefinition."""

    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def wide(name: str, description: str = "", type: str = "string") -> Column:
    """A column kubectl shows only with `-o wide`."""
    return Column(name, type, description, priority=1)


NAME = Column("Name", "string", NAME_DESCRIPTION, format="name")
AGE = Column("Age", "string", CREATION_DESCRIPTION)
CONTAINERS = wide("Containers", "Names of each container in the template.")
IMAGES = wide("Images", "Images referenced by each container in the template.")

Cells = list[Any]


@dataclass(frozen=True)
class TablePrinter:
    """Columns plus the function that fills them for one object (at time `now`).

    `conditions`, when set, returns the row's metav1.TableRowCondition list (pods mark finished
    rows as Completed, so a client may choose to grey them out)."""

    columns: tuple[Column, ...]
    cells: Callable[[dict[str, Any], datetime], Cells]
    conditions: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None


def dig(obj: Any, *path: str, default: Any = None) -> Any:
    """obj[path[0]][path[1]]..., or `default` where a step is missing or null.

    Wire objects omit empty fields, so every printer reads through this instead of indexing."""
    current = obj
    for key in path:
        if not isinstance(current, dict):
            return default
        current = current.get(key)
        if current is None:
            return default
    return current


def items(obj: Any, *path: str) -> list[Any]:
    """A list field (containers, ports, conditions...), [] when absent."""
    value = dig(obj, *path, default=[])
    return value if isinstance(value, list) else []


def mapping(obj: Any, *path: str) -> dict[str, Any]:
    """A map field (labels, data, selector...), {} when absent."""
    value = dig(obj, *path, default={})
    return value if isinstance(value, dict) else {}


def number(obj: Any, *path: str, default: int = 0) -> int:
    """An integer field; Go's zero value (0) when absent."""
    value = dig(obj, *path, default=default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default
