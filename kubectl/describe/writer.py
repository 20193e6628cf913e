"""The describe layout engine: kubectl's PrefixWriter over Go's text/tabwriter.

kubectl's describers write lines like "Name:\\tweb\\n" or "    Image:\\tnginx\\n" and let a
tabwriter (minwidth 0, padding 2, spaces) align them. The alignment is Go's, and it is what
makes `describe` look the way it does, so it is reproduced exactly here:

- a *cell* is text ended by a tab; the text after a line's last tab is not a cell and is never
  padded;
- column k is aligned over a *block*: a run of consecutive lines that all have a cell k. A line
  without that cell (e.g. "Containers:" with no tab at all) ends the block, so the lines after
  it align among themselves;
- a cell is padded to the widest cell of its block plus the padding.

`flush()` ends all blocks at once (kubectl flushes before the Events table, so that table is
aligned on its own).
"""

from __future__ import annotations

LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3 = 0, 1, 2, 3


def tabwrite(text: str, padding: int = 2, minwidth: int = 0) -> str:
    """Go's tabwriter.Writer output for `text` (flags 0, pad character ' ')."""
    lines = [line.split("\t") for line in text.split("\n")]
    widths: list[int] = []
    out: list[str] = []

    def write_lines(line0: int, line1: int) -> None:
        for i in range(line0, line1):
            cells = lines[i]
            parts = []
            for j, cell in enumerate(cells):
                parts.append(cell.ljust(widths[j]) if j < len(widths) else cell)
            out.append("".join(parts))

    def fmt(line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column >= len(lines[this]) - 1:
                this += 1
                continue
            write_lines(line0, this)
            line0 = this
            width = minwidth
            while this < line1 and column < len(lines[this]) - 1:
                width = max(width, len(lines[this][column]) + padding)
                this += 1
            widths.append(width)
            fmt(line0, this)
            widths.pop()
            line0 = this
        write_lines(line0, line1)

    fmt(0, len(lines))
    return "\n".join(out)


class PrefixWriter:
    """kubectl's describe writer: `write(level, text)` indents by two spaces per level."""

    def __init__(self, raw: bool = False) -> None:
        self.raw = raw  # raw: leave the tabs in (`rollout history --revision` prints it so)
        self._done: list[str] = []
        self._buf: list[str] = []

    def write(self, level: int, text: str) -> None:
        self._buf.append("  " * level + text)

    def line(self, *parts: str) -> None:
        """kubectl's WriteLine: the parts joined by spaces, then a newline."""
        self._buf.append(" ".join(parts) + "\n")

    def flush(self) -> None:
        if self._buf:
            text = "".join(self._buf)
            self._done.append(text if self.raw else tabwrite(text))
            self._buf = []

    def text(self) -> str:
        self.flush()
        return "".join(self._done)
