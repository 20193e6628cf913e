"""What every task and thread is doing right now: Python's /debug/pprof/goroutine.

Go's `GET /debug/pprof/goroutine?debug=2` prints the stack of every goroutine; when a controller
"hangs", that page says where. The Python counterparts of goroutines are asyncio tasks (one per
informer, worker, watch, timer…) plus a few threads, so this dump lists both:

    task 12 "replicationcontroller-worker-0" [waiting]:
      File ".../client/workqueue.py", line 88, in get
        await self._cond.wait()

    thread 140230 "MainThread":
      File ".../asyncio/base_events.py", line 1949, in _run_once
        ...

`debug=2` gives every task and thread; `debug=1` folds identical stacks into one entry with a
count, as Go's debug=1 does. Plain text, readable in a browser. Pure standard library, so any
component can serve it; it must be called on the event loop's thread to see the tasks.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import traceback
from collections import Counter
from types import FrameType
from typing import Any


def _coroutine_frames(task: asyncio.Task[object]) -> tuple[list[FrameType], object]:
    """The frames of the await chain (outermost first) and what the innermost one waits on.
    Task.get_stack() stops at the task's own coroutine; the chain says *where* it is stuck."""
    frames: list[FrameType] = []
    obj: Any = task.get_coro()
    while obj is not None:
        frame = getattr(obj, "cr_frame", None) or getattr(obj, "gi_frame", None) or getattr(obj, "ag_frame", None)
        if frame is None:
            break
        frames.append(frame)
        nxt = getattr(obj, "cr_await", None) or getattr(obj, "gi_yieldfrom", None) or getattr(obj, "ag_await", None)
        if nxt is None or not (hasattr(nxt, "cr_frame") or hasattr(nxt, "gi_frame") or hasattr(nxt, "ag_frame")):
            return frames, nxt
        obj = nxt
    return frames, None


def _task_stack(task: asyncio.Task[object]) -> str:
    frames, waiting_on = _coroutine_frames(task)
    if not frames:
        return "  (no Python frame: not started or finished)\n"
    text = "".join(traceback.StackSummary.extract((f, f.f_lineno) for f in frames).format())
    if waiting_on is not None:
        text += f"  awaiting {repr(waiting_on)[:160]}\n"
    return text


def _state(task: asyncio.Task[object]) -> str:
    if task.done():
        return "done"
    return "running" if task is asyncio.current_task() else "waiting"


def entries() -> list[tuple[str, str]]:
    """(heading, stack text) for every asyncio task of the running loop and every thread."""
    out: list[tuple[str, str]] = []
    try:
        tasks = sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    except RuntimeError:  # no running loop in this thread
        tasks = []
    for i, task in enumerate(tasks, 1):
        out.append((f'task {i} "{task.get_name()}" [{_state(task)}]', _task_stack(task)))
    frames = sys._current_frames()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else "  (no frame)\n"
        out.append((f'thread {thread.ident} "{thread.name}"', stack))
    return out


def dump(debug: int = 2) -> str:
    """The whole dump as text; debug=1 groups identical stacks, debug=2 lists each one."""
    items = entries()
    tasks = sum(1 for h, _ in items if h.startswith("task"))
    header = f"{tasks} asyncio tasks, {len(items) - tasks} threads\n\n"
    if debug >= 2:
        return header + "\n".join(f"{h}:\n{s}" for h, s in items)
    counts = Counter(s for _, s in items)
    names: dict[str, list[str]] = {}
    for h, s in items:
        names.setdefault(s, []).append(h.split(" [")[0])
    blocks = [f"{n} @ {', '.join(names[s][:5])}{' …' if n > 5 else ''}\n{s}" for s, n in counts.most_common()]
    return header + "\n".join(blocks)
