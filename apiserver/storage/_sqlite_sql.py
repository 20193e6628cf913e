"""The embedded store's table layout and its read queries (plain, synchronous SQLite).

Why a log and not a key→value table: Kubernetes needs history. A `resourceVersion` must let a
client read "the state as of revision R" (consistent paging) and "every change after revision R"
(resumable watch). So, like kine (the SQL shim k3s uses instead of etcd), every write appends a
row and nothing is updated in place:

    id               the revision of this write (INTEGER PRIMARY KEY AUTOINCREMENT: AUTOINCREMENT
                     makes SQLite remember the highest id ever used, so ids never go back, not
                     even after compaction deleted the newest-but-one rows)
    name             the key, e.g. /registry/pods/default/web-0
    created          1 when this row created the key (its create_revision is then its own id)
    deleted          1 for a tombstone: the key was deleted at this revision
    create_revision  the revision that created this life of the key (0 on `created` rows)
    prev_revision    the id of the previous row of this key (0 for a brand-new key)
    value            the new value; on a tombstone, the last value before deletion
    old_value        the value this write replaced (watchers get it as `prev_value`)

A UNIQUE index on (name, prev_revision) is the compare-and-swap at the database level: two writes
that both claim to follow revision 5 of a key cannot both be inserted. An index on (name, id)
makes "the newest row of a key at or below revision R" a short index walk.

The functions here run on a connection owned by one thread (see `_sqlite_writer.py` for the
writer; the storage class keeps a second connection for reads). Each read that must be
consistent runs inside one read transaction: in WAL mode that is a snapshot, so "check the
compacted revision, then read" cannot be torn by a compaction committing in between.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

from apiserver.storage.interface import Compacted, KeyValue, StorageError, WatchEvent

SyncMode = Literal["normal", "full"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL,
    created         INTEGER NOT NULL DEFAULT 0,
    deleted         INTEGER NOT NULL DEFAULT 0,
    create_revision INTEGER NOT NULL DEFAULT 0,
    prev_revision   INTEGER NOT NULL DEFAULT 0,
    value           BLOB    NOT NULL,
    old_value       BLOB
);
CREATE UNIQUE INDEX IF NOT EXISTS kv_name_prev_revision ON kv (name, prev_revision);
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id);
-- Small durable facts: the compacted revision survives a restart.
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
-- "At wall-clock second `ts`, every revision <= `revision` had been written": sampled at most once
-- a second by the writer, so auto-compaction can honour a time window even across restarts.
CREATE TABLE IF NOT EXISTS revision_times (ts INTEGER PRIMARY KEY, revision INTEGER NOT NULL);
"""

# A created row has create_revision 0 because its own id is unknown before the INSERT.
CREATE_REV = "CASE WHEN created THEN id ELSE create_revision END"

# "This row is its key's newest at or below :rev, and not a tombstone" (with {where} on the key).
NEWEST_LIVE = (
    "{where} AND id <= :rev AND deleted = 0"
    " AND id = (SELECT MAX(newer.id) FROM kv AS newer WHERE newer.name = kv.name AND newer.id <= :rev)"
)

FUTURE_REVISION = "mvcc: required revision is a future revision"  # etcd's wording


def connect(path: Path, *, sync: SyncMode, readonly: bool = False) -> sqlite3.Connection:
    """Open `path` in WAL mode with explicit transactions (isolation_level=None).

    `check_same_thread=False` only because the connection is created in one thread and then
    handed to the one thread that uses it; no connection is ever shared between threads.
    """
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    conn.execute("PRAGMA busy_timeout = 10000")  # wait for a lock instead of "database is locked"
    if readonly:
        conn.execute("PRAGMA query_only = 1")
        return conn
    conn.execute("PRAGMA journal_mode = WAL")
    # WAL + NORMAL: a commit is in the WAL file (the OS page cache) before it returns, so a crashed
    # or SIGKILLed process loses nothing; only a power cut may drop the last commits. FULL also
    # fsyncs the WAL on every commit and survives power loss, at the price of one fsync per commit.
    conn.execute(f"PRAGMA synchronous = {'FULL' if sync == 'full' else 'NORMAL'}")
    conn.executescript(SCHEMA)
    return conn


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string that starts with `prefix` (None: no bound).

    SQLite compares TEXT bytewise in UTF-8, which is the same order as Python's code-point order,
    so "bump the last character" works exactly like etcd's "bump the last byte" range end.
    """
    chars = list(prefix)
    while chars:
        code = ord(chars[-1]) + 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates are not characters; skip to the next one
            code = 0xE000
        if code <= 0x10FFFF:
            chars[-1] = chr(code)
            return "".join(chars)
        chars.pop()
    return None


def head_revision(conn: sqlite3.Connection) -> int:
    """The highest revision ever written (kept by AUTOINCREMENT even when rows are deleted)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").fetchone()
    return int(row[0]) if row else 0


def compacted_revision(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE name = 'compact_revision'").fetchone()
    return int(row[0]) if row else 0


def latest_row(conn: sqlite3.Connection, key: str) -> tuple[int, bool, int, bytes] | None:
    """(revision, deleted, create_revision, value) of the newest row of `key`, or None."""
    row = conn.execute(
        f"SELECT id, deleted, {CREATE_REV}, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1",
        (key,),
    ).fetchone()
    return None if row is None else (row[0], bool(row[1]), row[2], row[3])


def get(conn: sqlite3.Connection, key: str) -> KeyValue | None:
    row = latest_row(conn, key)
    if row is None or row[1]:
        return None
    return KeyValue(key=key, value=row[3], revision=row[0], create_revision=row[2])


def _range_filter(prefix: str, after: str | None, params: dict[str, object]) -> str:
    """SQL conditions selecting the keys under `prefix`, strictly after `after`."""
    conds = ["name >= :lo"]
    params["lo"] = prefix
    end = prefix_end(prefix)
    if end is not None:
        conds.append("name < :hi")
        params["hi"] = end
    if after is not None:
        conds.append("name > :after")
        params["after"] = after
    return " AND ".join(conds)


def list_range(
    conn: sqlite3.Connection, prefix: str, *, after: str | None, limit: int, revision: int
) -> tuple[list[KeyValue], int, bool, int]:
    """(items, revision read at, more remain, how many remain) — all from one snapshot."""
    conn.execute("BEGIN")
    try:
        head = head_revision(conn)
        compacted = compacted_revision(conn)
        if revision == 0:
            revision = head
        elif revision < compacted:
            raise Compacted(revision, compacted)
        elif revision > head:
            raise StorageError(FUTURE_REVISION)
        params: dict[str, object] = {"rev": revision}
        where = _range_filter(prefix, after, params)
        # Walk the (name, id) index in key order and keep each key's newest row at or below the
        # revision, unless it is a tombstone. Walking in key order lets LIMIT stop early.
        newest = NEWEST_LIVE.format(where=where)
        query = f"SELECT name, value, id, {CREATE_REV} FROM kv WHERE {newest} ORDER BY name"
        if limit > 0:
            rows = conn.execute(query + " LIMIT :limit", {**params, "limit": limit + 1}).fetchall()
        else:
            rows = conn.execute(query, params).fetchall()
        more = limit > 0 and len(rows) > limit
        remaining = 0
        if more:
            rows = rows[:limit]
            count_params: dict[str, object] = {"rev": revision}
            where = _range_filter(prefix, rows[-1][0], count_params)
            remaining = conn.execute(
                f"SELECT COUNT(*) FROM kv WHERE {NEWEST_LIVE.format(where=where)}", count_params
            ).fetchone()[0]
        items = [KeyValue(key=r[0], value=r[1], revision=r[2], create_revision=r[3]) for r in rows]
        return items, revision, more, remaining
    finally:
        conn.execute("COMMIT")


def row_event(
    rev: int, key: str, created: int, deleted: int, value: bytes, old_value: bytes | None
) -> WatchEvent:
    """The watch event a log row stands for."""
    if deleted:
        return WatchEvent("DELETED", key, value, rev, prev_value=value)
    if created:
        return WatchEvent("ADDED", key, value, rev)
    return WatchEvent("MODIFIED", key, value, rev, prev_value=old_value)


def read_changes(
    conn: sqlite3.Connection, prefix: str, start: int, *, max_rows: int, max_bytes: int
) -> tuple[list[WatchEvent], bool]:
    """Rows under `prefix` with id >= `start`, oldest first: (events, page was cut short).

    Raises Compacted when `start` is below the compacted revision in the same snapshot, so a
    compaction running between two pages can never silently open a gap in a watch.
    """
    conn.execute("BEGIN")
    try:
        compacted = compacted_revision(conn)
        if start < compacted:
            raise Compacted(start, compacted)
        params: dict[str, object] = {"start": start}
        where = _range_filter(prefix, None, params)
        cursor = conn.execute(
            f"SELECT id, name, created, deleted, value, old_value FROM kv WHERE id >= :start AND {where}"
            " ORDER BY id",
            params,
        )
        events: list[WatchEvent] = []
        size = 0
        for row in cursor:
            events.append(row_event(*row))
            size += len(row[4]) + len(row[5] or b"")
            if len(events) >= max_rows or size >= max_bytes:
                cursor.close()
                return events, True
        return events, False
    finally:
        conn.execute("COMMIT")
