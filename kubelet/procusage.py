"""What a process-runtime container really uses, read from /proc (`mini-kubelet --runtime process`).

A real kubelet reads cgroup counters through cAdvisor or the CRI. Our memory cgroups exist only
where the machine lets us make them, and carry no CPU accounting, so the numbers come from the
processes themselves, which every Linux has. One pass over /proc per scrape (`begin`) gives each
process's parent, CPU ticks and resident pages; a container is then its process tree:

    processes     the container's main process (pid.json), every descendant of it, and whatever
                  else sits in its cgroup (a daemon that re-parented itself to init stays counted)
    CPU           sum of utime + stime, plus cutime + cstime (children they already waited for),
                  in clock ticks (SC_CLK_TCK, usually 100/s), as core-seconds
    working set   sum of their resident set sizes (RSS pages x page size). Pages two processes
                  share are counted twice; a cgroup's working set would count them once.

The counter can fall when a process of the tree exits without its parent in the tree waiting
for it (its time leaves with it); metrics-server skips such a decrease, as it does upstream.
The node is its pods plus the kubelet process itself (its own utime + stime and RSS, not its
children's: its children are the shims, whose containers are already counted in the pods).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelet.containers import Container
    from kubelet.podworker import PodWorker

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
PROC = Path("/proc")


@dataclass(frozen=True)
class ProcStat:
    """One line of /proc/<pid>/stat, the fields we need."""

    ppid: int
    ticks: int  # utime + stime + cutime + cstime
    own_ticks: int  # utime + stime
    rss_pages: int


def read_stat(pid: int | str) -> ProcStat | None:
    """Parse /proc/<pid>/stat (None when the process is gone). The command name, field 2, is in
    parentheses and may hold spaces and parentheses itself: the fields that follow start after
    the LAST `)`. Field n (1-based, as in proc(5)) is then rest[n - 3]."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2 :].split()
    utime, stime, cutime, cstime = (int(x) for x in rest[11:15])
    return ProcStat(int(rest[1]), utime + stime + cutime + cstime, utime + stime, int(rest[21]))


def process_table() -> dict[int, ProcStat]:
    table: dict[int, ProcStat] = {}
    for entry in os.scandir(PROC):
        if entry.name.isdigit():
            stat = read_stat(entry.name)
            if stat is not None:
                table[int(entry.name)] = stat
    return table


def _cgroup_pids(cgroup: str) -> list[int]:
    try:
        return [int(x) for x in Path(cgroup, "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


class ProcessUsage:
    """Usage of process-runtime containers: the module docstring's rules."""

    def __init__(self, kubelet: Any, started: float) -> None:
        self.kubelet = kubelet
        self.table: dict[int, ProcStat] = {}
        self.children: dict[int, list[int]] = {}

    def begin(self, now: float) -> None:
        """Snapshot the process table once for a whole scrape."""
        self.table = process_table()
        children: dict[int, list[int]] = defaultdict(list)
        for pid, stat in self.table.items():
            children[stat.ppid].append(pid)
        self.children = dict(children)

    def tree(self, pid: int, cgroup: str = "") -> set[int]:
        found: set[int] = set()
        todo = [pid, *(_cgroup_pids(cgroup) if cgroup else [])]
        while todo:
            p = todo.pop()
            if p in found or p not in self.table:
                continue
            found.add(p)
            todo.extend(self.children.get(p, ()))
        return found

    def container(self, worker: PodWorker, pod: dict[str, Any], c: Container, running: list[Container],
                  now: float) -> tuple[float, int] | None:  # fmt: skip
        handle = c.handle
        pid = handle.pid() if handle is not None else None
        if pid is None:
            return None  # the shim has not started it yet: nothing to measure
        procs = self.tree(pid, handle.meta.get("cgroup") or "")
        if not procs:
            return None
        ticks = sum(self.table[p].ticks for p in procs)
        pages = sum(self.table[p].rss_pages for p in procs)
        return ticks / CLOCK_TICKS, pages * PAGE_SIZE

    def node_overhead(self, now: float) -> tuple[float, int]:
        me = read_stat(os.getpid())
        if me is None:  # pragma: no cover - /proc/self always exists on Linux
            return 0.0, 0
        return me.own_ticks / CLOCK_TICKS, me.rss_pages * PAGE_SIZE

    def forget(self, key: tuple[str, str, float]) -> None:
        """Nothing is kept per run: the kernel keeps the counters."""
