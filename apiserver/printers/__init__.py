"""Server-side printing: the Tables behind `kubectl get`.

Start at `table.py` (what a Table is and why the server builds it), then read the printer of the
kind you care about: `pods.py` (how STATUS is computed), `core.py`, `events.py`, `apps.py`,
`batch.py`, `misc.py`. `duration.py` holds the AGE format (`5m30s`, `3d4h`).

Objects are plain wire-form dicts, so this package depends on nothing but the standard library.
"""

from apiserver.printers.duration import human_duration, translate_timestamp_since
from apiserver.printers.table import build_table, column_definitions

__all__ = ["build_table", "column_definitions", "human_duration", "translate_timestamp_since"]
