"""The one thread that writes the embedded store, with group commit.

Why one writer: SQLite allows a single writer at a time; several writing connections would queue
on the database lock and, under load, fail with "database is locked" (the classic kine trap).
With exactly one connection doing every write, the lock is never contended inside the process,
the compare-and-swap check and the INSERT cannot interleave with another write, and the order of
commits is the order of revisions, which is what the watch broadcast relies on.

Group commit: callers queue their writes; the thread takes everything queued (up to `max_batch`)
and applies it in ONE transaction. A commit is the expensive part (with sync="full" it is an
fsync), so a burst of concurrent writers shares one. Each write is still judged on its own: a
failed check (KeyExists, Conflict, NotFound) or a constraint violation only skips that write; a
database error fails the whole batch with Unavailable and nothing of it is published.

After a commit the thread hands the new events and the results back to the event loop in one
`call_soon_threadsafe` callback, so watchers hear about a write before its writer is answered.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from apiserver.storage import _sqlite_sql as sql
from apiserver.storage.interface import (
    Conflict,
    KeyExists,
    NotFound,
    StorageError,
    Unavailable,
    WatchEvent,
)

log = logging.getLogger(__name__)

WriteKind = Literal["create", "update", "delete"]


@dataclass(slots=True)
class WriteOp:
    kind: WriteKind
    key: str
    value: bytes | None
    expected: int | None
    future: asyncio.Future[int]


@dataclass(slots=True)
class Job:
    """Any other work for the writer connection (setup, compaction steps, checkpoint)."""

    fn: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]


Outcome = tuple[asyncio.Future[int], int | StorageError]
OnCommit = Callable[[list[WatchEvent], list[Outcome]], None]


def apply_write(conn: sqlite3.Connection, op: WriteOp) -> WatchEvent:
    """Check the write against the key's newest row and append the new row. Raises on refusal."""
    latest = sql.latest_row(conn, op.key)
    live = latest is not None and not latest[1]
    if op.kind == "create":
        if live:
            raise KeyExists(op.key)
        # A re-create after a delete follows the tombstone; a brand-new key follows nothing (0).
        prev = latest[0] if latest is not None else 0
        rev = conn.execute(
            "INSERT INTO kv (name, created, prev_revision, value) VALUES (?, 1, ?, ?)",
            (op.key, prev, op.value),
        ).lastrowid
        assert rev is not None
        return WatchEvent("ADDED", op.key, op.value, rev)
    if latest is None or not live:
        raise NotFound(op.key)
    current, _, create_rev, old = latest
    if op.expected is not None and op.expected != current:
        raise Conflict(f"{op.key}: expected revision {op.expected}, found {current}")
    if op.kind == "update":
        rev = conn.execute(
            "INSERT INTO kv (name, create_revision, prev_revision, value, old_value) VALUES (?, ?, ?, ?, ?)",
            (op.key, create_rev, current, op.value, old),
        ).lastrowid
        assert rev is not None
        return WatchEvent("MODIFIED", op.key, op.value, rev, prev_value=old)
    # A tombstone keeps the last value: a DELETED event carries what was deleted.
    rev = conn.execute(
        "INSERT INTO kv (name, deleted, create_revision, prev_revision, value) VALUES (?, 1, ?, ?, ?)",
        (op.key, create_rev, current, old),
    ).lastrowid
    assert rev is not None
    return WatchEvent("DELETED", op.key, old, rev, prev_value=old)


class Writer:
    """Owns the writing connection and the thread that uses it."""

    def __init__(
        self, path: Path, sync: sql.SyncMode, loop: asyncio.AbstractEventLoop, on_commit: OnCommit,
        *, max_batch: int = 256,
    ) -> None:
        self._path = path
        self._sync: sql.SyncMode = sync
        self._loop = loop
        self._on_commit = on_commit
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[WriteOp | Job | None] = queue.SimpleQueue()
        self._conn: sqlite3.Connection | None = None
        self._sampled_second = 0
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="sqlite-writer", daemon=True)
        self._thread.start()

    # -- called from the event loop ------------------------------------------------------------

    def write(self, op: WriteOp) -> None:
        if self._stopped:
            op.future.set_exception(Unavailable("the storage is closed"))
            return
        self._queue.put(op)

    def run(self, fn: Callable[[sqlite3.Connection], Any]) -> asyncio.Future[Any]:
        """Run `fn(conn)` on the writer thread, alone (not inside a write batch)."""
        future: asyncio.Future[Any] = self._loop.create_future()
        if self._stopped:
            future.set_exception(Unavailable("the storage is closed"))
        else:
            self._queue.put(Job(fn, future))
        return future

    def stop(self) -> None:
        """Finish what is queued, close the connection, end the thread (join it elsewhere)."""
        self._stopped = True
        self._queue.put(None)

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    # -- the writer thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._conn = sql.connect(self._path, sync=self._sync)
        except sqlite3.Error as exc:
            log.error("cannot open %s: %s", self._path, exc)
        while True:
            item = self._queue.get()
            if item is None:
                break
            if isinstance(item, Job):
                self._run_job(item)
                continue
            batch = [item]
            stop = False
            while len(batch) < self._max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if isinstance(nxt, WriteOp):
                    batch.append(nxt)
                    continue
                self._commit_batch(batch)  # keep queue order: the batch goes before the job
                batch = []
                if nxt is None:
                    stop = True
                else:
                    self._run_job(nxt)
                break
            if batch:
                self._commit_batch(batch)
            if stop:
                break
        if self._conn is not None:
            self._conn.close()

    def _call_soon(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    def _run_job(self, job: Job) -> None:
        try:
            if self._conn is None:
                raise Unavailable(f"cannot open the database {self._path}")
            result: Any = job.fn(self._conn)
        except sqlite3.Error as exc:
            result = Unavailable(f"sqlite: {exc}")
        except StorageError as exc:
            result = exc
        self._call_soon(_settle, job.future, result)

    def _commit_batch(self, batch: list[WriteOp]) -> None:
        events: list[WatchEvent] = []
        outcomes: list[Outcome] = []
        conn = self._conn
        try:
            if conn is None:
                raise sqlite3.OperationalError(f"cannot open the database {self._path}")
            conn.execute("BEGIN IMMEDIATE")
            self._sample_time(conn)
            for op in batch:
                try:
                    event = apply_write(conn, op)
                except StorageError as exc:
                    outcomes.append((op.future, exc))
                    continue
                except sqlite3.IntegrityError:
                    # The UNIQUE (name, prev_revision) index refused a second successor of the
                    # same revision. The check above makes this unreachable with one writer; the
                    # index is the guarantee if that ever changes. Only this statement is undone.
                    refused = KeyExists(op.key) if op.kind == "create" else Conflict(op.key)
                    outcomes.append((op.future, refused))
                    continue
                events.append(event)
                outcomes.append((op.future, event.revision))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            log.error("write batch failed: %s", exc)
            if conn is not None and conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            events = []
            outcomes = [(op.future, Unavailable(f"sqlite: {exc}")) for op in batch]
        self._call_soon(self._on_commit, events, outcomes)

    def _sample_time(self, conn: sqlite3.Connection) -> None:
        """Once per wall-clock second, note "everything up to the current head is written by now"."""
        second = int(time.time())
        if second != self._sampled_second:
            self._sampled_second = second
            conn.execute(
                "INSERT OR IGNORE INTO revision_times (ts, revision) VALUES (?, ?)",
                (second, sql.head_revision(conn)),
            )


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if future.done():
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)
