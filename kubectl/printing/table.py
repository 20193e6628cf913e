"""Laying out the server's Tables the way kubectl does.

The API server did the hard part (see apiserver/printers): it sent column definitions and one
row of cells per object. kubectl only decides *which* columns and how to align them:

- columns with `priority` 0 always, priority 1 only with `-o wide`; headers upper-cased;
- `-A` puts a NAMESPACE column first, `--show-labels` a LABELS column last;
- when one `get` prints several kinds, names become `kind.group/name` (`deployment.apps/web`);
- alignment is Go's tabwriter with padding 3: every cell but the last of a line is padded to the
  widest cell of its column plus 3 spaces; the last cell is never padded.

`get -w` keeps printing rows as changes arrive. kubectl keeps the column widths it has used so
far and only ever widens them, so later rows stay aligned with the header when they can. The
`TabWriter` below remembers widths across calls for exactly that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

NONE = "<none>"


def cell_text(value: Any) -> str:
    """A cell as Go's fmt.Sprint renders the decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + " ".join(cell_text(v) for v in value) + "]"
    return str(value)


def format_labels(labels: dict[str, str] | None) -> str:
    """`a=b,c=d` sorted by key, or `<none>` (k8s.io/apimachinery labels.FormatLabels)."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


class TabWriter:
    """Go's text/tabwriter (padding 3, spaces) whose column widths survive between flushes."""

    def __init__(self, padding: int = 3) -> None:
        self.padding = padding
        self.widths: list[int] = []

    def render(self, rows: Sequence[Sequence[str]]) -> list[str]:
        for row in rows:
            for i, cell in enumerate(row[:-1]):  # the last cell of a line is not a column
                if i == len(self.widths):
                    self.widths.append(0)
                self.widths[i] = max(self.widths[i], len(cell))
        out = []
        for row in rows:
            parts = [cell.ljust(self.widths[i] + self.padding) for i, cell in enumerate(row[:-1])]
            out.append("".join(parts) + (row[-1] if row else ""))
        return out


class TableLayout:
    """Which columns of a server Table to print, and how: one per `get` of one kind."""

    def __init__(
        self,
        table: dict[str, Any],
        *,
        wide: bool = False,
        all_namespaces: bool = False,
        show_labels: bool = False,
        kind_prefix: str = "",
        show_kind: bool = False,
        extra_columns: Sequence[tuple[str, Any]] = (),
    ) -> None:
        defs = table.get("columnDefinitions") or []
        self.indexes = [i for i, d in enumerate(defs) if wide or int(d.get("priority") or 0) == 0]
        self.headers = [str(defs[i].get("name", "")).upper() for i in self.indexes]
        self.name_index = next((n for n, i in enumerate(self.indexes) if defs[i].get("format") == "name"), 0)
        self.all_namespaces = all_namespaces
        self.show_labels = show_labels
        self.prefix = kind_prefix if show_kind else ""
        self.extra_columns = list(extra_columns)  # (HEADER, fn(row) -> str), e.g. -L columns

    def header(self) -> list[str]:
        head = list(self.headers)
        if self.all_namespaces:
            head.insert(0, "NAMESPACE")
        head += [h for h, _ in self.extra_columns]
        if self.show_labels:
            head.append("LABELS")
        return head

    def row(self, row: dict[str, Any]) -> list[str]:
        cells = row.get("cells") or []
        out = [cell_text(cells[i]) if i < len(cells) else "" for i in self.indexes]
        if self.prefix and out:
            out[self.name_index] = f"{self.prefix}/{out[self.name_index]}"
        meta = (row.get("object") or {}).get("metadata") or {}
        if self.all_namespaces:
            out.insert(0, str(meta.get("namespace") or ""))
        out += [fn(row) for _, fn in self.extra_columns]
        if self.show_labels:
            out.append(format_labels(meta.get("labels")))
        return out

    def rows(self, table: dict[str, Any]) -> Iterable[list[str]]:
        return (self.row(r) for r in table.get("rows") or [])


def tabwrite(text: str, *, minwidth: int = 6, padding: int = 3) -> str:
    """Go's text/tabwriter over a whole text, as cli-runtime's printers.GetNewTabWriter sets it up
    (minwidth 6, padding 3, spaces, no flags that matter here).

    Cells end with a tab; the text after a line's last tab is not a column and is never padded.
    A column's width is decided per *column block*: the run of consecutive lines that have a cell
    in that column. So a line with fewer cells (a `--sum` row, a node without percentages) ends the
    blocks of the columns it lacks, and the lines after it are aligned afresh. Every cell of a
    block, empty ones too, is padded to max(minwidth, widest cell + padding); trailing padding
    included, which is why kubectl's `top` lines end in spaces.
    """
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []

    def write(first: int, end: int, widths: list[int]) -> None:
        for i in range(first, end):
            cells = lines[i]
            out.append("".join(c.ljust(widths[j]) if j < len(widths) else c for j, c in enumerate(cells)))
            if i + 1 < len(lines):
                out.append("\n")

    def layout(first: int, end: int, widths: list[int]) -> None:
        column = len(widths)
        this = first
        while this < end:
            if column >= len(lines[this]) - 1:  # no cell in this column: not part of a block
                this += 1
                continue
            write(first, this, widths)  # the lines before the block, with the widths so far
            first = this
            width = minwidth
            while this < end and column < len(lines[this]) - 1:
                width = max(width, len(lines[this][column]) + padding)
                this += 1
            layout(first, this, [*widths, width])  # the block, and its columns further right
            first = this
        write(first, end, widths)

    layout(0, len(lines), [])
    return "".join(out)
