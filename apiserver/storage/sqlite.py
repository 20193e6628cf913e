"""The embedded storage backend: a kine-style log in one SQLite file (`<data-dir>/state.db`).

This is what `mini-apiserver` uses when no etcd is given, so that a laptop needs nothing but
Python. It keeps the same promises as etcd (see `interface.py`): one global revision, compare-
and-swap writes, consistent paging at a revision, resumable watches, compaction.

How the pieces fit (each in its own small module):
  _sqlite_sql.py      the table — one row per write, the row id IS the revision — and the reads
  _sqlite_writer.py   the single writer thread, with group commit
  _sqlite_watch.py    watch = replay from the table, then a live in-process broadcast
  _sqlite_compact.py  compaction: what may be forgotten, and the automatic policy

Threads: SQLite calls block, and the API server's event loop must not. All writes run on one
dedicated writer thread (one connection: no "database is locked" inside the process); ranges
(lists, watch replays, compaction's reads) run on a second thread with its own connection. In WAL
mode readers never wait for the writer and see only committed data. The one exception is `get`,
a read of one key by its index: it runs on the loop, on a third connection, because the hop to a
thread cost more than the read (measured: ~50 µs of CPU per GET, and on HTTPS more, as the TLS
calls hand the GIL to the waiting thread and back) — a GET served 15–20 % more per CPU second.

Durability (`sync`): every write is acknowledged only after its transaction committed.
  - "normal" (default): WAL + synchronous=NORMAL. A commit is in the WAL file before the write
    returns, so a crash or `kill -9` of the process loses nothing that was acknowledged. A power
    cut or kernel crash may lose the last few commits (never corrupt the database). That is the
    right trade for a learning cluster on a laptop: no fsync per write.
  - "full": WAL + synchronous=FULL. The WAL is fsynced at every commit, so acknowledged writes also
    survive power loss — what etcd does. Group commit keeps concurrent writers sharing fsyncs.

One process per data directory: the live watch broadcast only sees this process's writes, so
`open` takes an exclusive lock on `state.db.lock` and refuses a second opener (Unavailable). The
kernel drops the lock when the process dies, even by SIGKILL.
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from apiserver.storage import _sqlite_compact as compaction
from apiserver.storage import _sqlite_sql as sql
from apiserver.storage._sqlite_watch import Broadcast, watch_stream
from apiserver.storage._sqlite_writer import Outcome, WriteKind, WriteOp, Writer
from apiserver.storage.interface import (
    MAX_VALUE_BYTES,
    Compacted,
    KeyValue,
    ListResult,
    NotFound,
    ProgressRequests,
    Storage,
    StorageError,
    TooLarge,
    Unavailable,
    Update,
    WatchEvent,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

DB_FILE = "state.db"
WATCH_PAGE_ROWS = 500  # rows per replay read: bounded memory however far behind a watch starts
WATCH_PAGE_BYTES = 16 * 1024 * 1024


class SQLiteStorage(Storage):
    """The `Storage` contract on a SQLite log. Create it with `await SQLiteStorage.open(dir)`."""

    def __init__(
        self, data_dir: Path, *, sync: sql.SyncMode, compact_keep_revisions: int,
        compact_min_age_seconds: float, watch_queue_size: int,
    ) -> None:
        self.data_dir = data_dir
        self.path = data_dir / DB_FILE
        self._sync: sql.SyncMode = sync
        self._keep = compact_keep_revisions
        self._min_age = compact_min_age_seconds
        self._loop = asyncio.get_running_loop()
        self._broadcast = Broadcast(watch_queue_size)
        self._reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-read")
        self._rconn: sqlite3.Connection | None = None
        self._pconn: sqlite3.Connection | None = None  # point reads, on the loop (see above)
        self._writer: Writer | None = None
        self._lock_fd: int | None = None
        self._rev = 0  # newest revision published to watchers (and answered to its writer)
        self._compacted = 0
        self._compact_lock = asyncio.Lock()
        self._auto_task: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def open(
        cls,
        data_dir: str | Path,
        *,
        sync: sql.SyncMode = "normal",
        compact_keep_revisions: int = 10000,
        compact_min_age_seconds: float = 300.0,
        compact_interval_seconds: float | None = 60.0,
        watch_queue_size: int = 10000,
        max_batch: int = 256,
    ) -> SQLiteStorage:
        """Open (creating if needed) the store in `data_dir`.

        compact_keep_revisions / compact_min_age_seconds: the automatic compaction policy — keep
        at least the newest N revisions and everything younger than the window.
        compact_interval_seconds: run `compact_auto()` this often in the background (None: never;
        then call it yourself). watch_queue_size: live events buffered per watcher before it is
        sent back to read the table (see _sqlite_watch.py). max_batch: writes per group commit.
        """
        if sync not in ("normal", "full"):
            raise ValueError(f"sync must be 'normal' or 'full', not {sync!r}")
        store = cls(
            Path(data_dir), sync=sync, compact_keep_revisions=compact_keep_revisions,
            compact_min_age_seconds=compact_min_age_seconds, watch_queue_size=watch_queue_size,
        )
        try:
            store._take_lock()
            store._writer = Writer(store.path, sync, store._loop, store._deliver, max_batch=max_batch)
            store._rev, store._compacted = await store._writer.run(
                lambda conn: (sql.head_revision(conn), sql.compacted_revision(conn))
            )
            store._rconn = await store._loop.run_in_executor(
                store._reads, functools.partial(sql.connect, store.path, sync=sync, readonly=True)
            )
            store._pconn = sql.connect(store.path, sync=sync, readonly=True)
        except BaseException as exc:
            await store.close()
            if isinstance(exc, sqlite3.Error):
                raise Unavailable(f"cannot open {store.path}: {exc}") from exc
            raise
        if compact_interval_seconds:
            store._auto_task = asyncio.create_task(store._compact_periodically(compact_interval_seconds))
        return store

    def _take_lock(self) -> None:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._lock_fd = os.open(self.data_dir / f"{DB_FILE}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise Unavailable(f"{self.data_dir} is in use by another process (one per data dir)") from exc
        except OSError as exc:
            raise Unavailable(f"cannot use data dir {self.data_dir}: {exc}") from exc

    # -- plumbing ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise Unavailable("the storage is closed")

    async def _read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn(read_conn, ...)` on the read thread; database errors become Unavailable."""
        self._check_open()
        conn = self._rconn
        assert conn is not None

        def call() -> T:
            try:
                return fn(conn, *args, **kwargs)
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.rollback()
                raise Unavailable(f"sqlite: {exc}") from exc

        try:
            return await self._loop.run_in_executor(self._reads, call)
        except RuntimeError as exc:  # the executor was shut down by close()
            raise Unavailable("the storage is closed") from exc

    def _submit(self, kind: WriteKind, key: str, value: bytes | None, expected: int | None) -> asyncio.Future[int]:
        """Hand one write to the writer thread; its future gets the new revision."""
        self._check_open()
        if value is not None and len(value) > MAX_VALUE_BYTES:
            raise TooLarge(f"{key}: value of {len(value)} bytes exceeds {MAX_VALUE_BYTES}")
        assert self._writer is not None
        future: asyncio.Future[int] = self._loop.create_future()
        self._writer.write(WriteOp(kind, key, None if value is None else bytes(value), expected, future))
        return future

    def _deliver(self, events: list[WatchEvent], outcomes: list[Outcome]) -> None:
        """On the loop, after a commit: tell watchers first, then answer the writers."""
        if events:
            self._rev = max(self._rev, events[-1].revision)
            self._broadcast.publish(events)
        for future, result in outcomes:
            if future.done():  # the writer gave up waiting (cancelled); the write still happened
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    # -- the Storage contract ------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue:
        self._check_open()
        conn = self._pconn
        assert conn is not None
        try:
            kv = sql.get(conn, key)
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            raise Unavailable(f"sqlite: {exc}") from exc
        if kv is None:
            raise NotFound(key)
        return kv

    async def list(
        self, prefix: str, *, limit: int = 0, continue_key: str | None = None, revision: int = 0
    ) -> ListResult:
        while True:
            # "Now" is the newest revision answered to a writer when the call is made: a list
            # never shows a write whose writer has not heard back yet (read-your-writes, and no
            # surprises for a caller that starts writing right after asking for a list).
            at = revision or self._rev
            try:
                items, at, more, remaining = await self._read(
                    sql.list_range, prefix, after=continue_key, limit=max(limit, 0), revision=at
                )
            except Compacted:
                if revision:
                    raise
                continue  # a compaction overtook a read of "now": read the newer now instead
            return ListResult(items, at, items[-1].key if more else None, remaining)

    async def create(self, key: str, value: bytes) -> int:
        return await self._submit("create", key, value, None)

    async def update(self, key: str, value: bytes, expected_revision: int) -> int:
        return await self._submit("update", key, value, expected_revision)

    async def update_each(self, updates: Sequence[Update]) -> Sequence[int | Exception]:
        """All handed to the writer before the first is awaited: no task per update, and they usually share a commit."""
        submitted: list[asyncio.Future[int] | Exception] = []
        for u in updates:
            try:
                submitted.append(self._submit("update", u.key, u.value, u.expected_revision))
            except StorageError as exc:
                submitted.append(exc)
        results: list[int | Exception] = []
        for s in submitted:
            try:
                results.append(s if isinstance(s, Exception) else await s)
            except Exception as exc:
                results.append(exc)
        return results

    async def delete(self, key: str, expected_revision: int | None = None) -> int:
        return await self._submit("delete", key, None, expected_revision)

    def watch(
        self, prefix: str, start_revision: int, progress: ProgressRequests | None = None
    ) -> AsyncIterator[WatchEvent]:
        # "From now on" is fixed here, when the watch is asked for, not at its first iteration.
        start = start_revision if start_revision > 0 else self._rev + 1
        return watch_stream(self._broadcast, self._read_page, prefix, start, progress, lambda: self._rev)

    async def _read_page(self, prefix: str, start: int) -> tuple[list[WatchEvent], bool]:
        return await self._read(
            sql.read_changes, prefix, start, max_rows=WATCH_PAGE_ROWS, max_bytes=WATCH_PAGE_BYTES
        )

    async def current_revision(self) -> int:
        self._check_open()
        return self._rev

    async def compacted_revision(self) -> int:
        self._check_open()
        return self._compacted

    async def compact(self, revision: int) -> None:
        """Forget history below `revision`. Compacting at or below the current floor is a no-op."""
        async with self._compact_lock:
            self._check_open()
            if revision <= self._compacted:
                return
            if revision > self._rev:
                raise StorageError(sql.FUTURE_REVISION)
            writer = self._writer
            assert writer is not None
            lowest = await writer.run(lambda conn: compaction.begin(conn, revision))
            self._compacted = revision
            removed = 0
            for lo in range(lowest, revision, compaction.CHUNK):
                hi = min(lo + compaction.CHUNK, revision)
                removed += await writer.run(
                    lambda conn, lo=lo, hi=hi: compaction.delete_superseded(conn, lo, hi, revision)
                )
            await writer.run(compaction.checkpoint)
            log.info("compacted %s at revision %d: %d rows removed", self.path, revision, removed)

    async def compact_auto(self) -> int:
        """Compact as far as the policy allows (newest N revisions AND the time window are kept).

        Returns the compacted revision afterwards (unchanged when there was nothing to do).
        """
        old_enough = self._rev  # a window of 0 seconds: every revision is old enough
        if self._min_age > 0:
            old_enough = await self._read(compaction.old_enough_revision, time.time(), self._min_age)
        target = compaction.auto_target(self._rev, self._keep, old_enough)
        if target > self._compacted:
            await self.compact(target)
        return self._compacted

    async def _compact_periodically(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.compact_auto()
            except Unavailable:
                if self._closed:
                    return
                log.warning("auto-compaction of %s failed", self.path, exc_info=True)
            except StorageError:
                log.warning("auto-compaction of %s failed", self.path, exc_info=True)

    async def ping(self) -> None:
        """A read of one (absent) key, on the loop as `get` reads: /readyz must not wait in the
        read thread's queue behind LISTs (under 48 of them it took 1–1.5 s)."""
        self._check_open()
        assert self._pconn is not None
        try:
            sql.latest_row(self._pconn, "/registry/health")
        except sqlite3.Error as exc:
            raise Unavailable(f"sqlite: {exc}") from exc

    @property
    def live_watchers(self) -> int:
        """Watches currently following the live broadcast (for metrics and tests)."""
        return len(self._broadcast)

    async def close(self) -> None:
        """Finish queued writes, end every watch (Unavailable), close the connections."""
        if self._closed:
            return
        self._closed = True
        if self._auto_task is not None:
            self._auto_task.cancel()
            try:
                await self._auto_task
            except (asyncio.CancelledError, StorageError):
                pass
        self._broadcast.close()
        if self._writer is not None:
            self._writer.stop()
            await self._loop.run_in_executor(None, self._writer.join)
        if self._pconn is not None:
            self._pconn.close()
        rconn = self._rconn
        if rconn is not None:
            await self._loop.run_in_executor(self._reads, rconn.close)
        self._reads.shutdown(wait=False)
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None
