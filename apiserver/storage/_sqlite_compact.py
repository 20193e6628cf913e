"""Compaction of the embedded log: forget history nobody may ask for any more.

Why compaction exists: every write appends a row, and some writes never stop — each kubelet renews
its node Lease every few seconds, forever. Without compaction the table, and every scan over it,
grows without bound. Kubernetes asks etcd to compact every five minutes; this store does the same
to its own log.

What "compact at revision R" means (the same as etcd): the state as of R, and every change from R
on, stay readable; anything older is gone, and asking for it raises `Compacted` (410 Gone for the
client, which then re-lists). So a row may be deleted when its id < R and either
  - it is a tombstone (the key was deleted before R, readers at R see no key), or
  - a newer row of the same key exists at or below R (readers at R see that one instead).
The newest row of a live key is never deleted, however old it is.

How it avoids the "database is locked" trap: the compacted revision is recorded first, in its own
short transaction (readers check it inside their snapshot, so from then on nobody reads below R),
then rows are deleted in small id ranges, each its own transaction on the single writer thread, so
ordinary writes slip in between chunks instead of waiting for one huge DELETE. Finally the WAL
file, which grew with all those deletions, is checkpointed and truncated.

The automatic policy keeps the newest `keep_revisions` revisions AND everything younger than
`min_age_seconds`: the target is the lower of the two bounds.
"""

from __future__ import annotations

import sqlite3

CHUNK = 2000  # ids per delete transaction: a few milliseconds of lock each


def begin(conn: sqlite3.Connection, revision: int) -> int:
    """Record `revision` as compacted (durably) and return the lowest id still in the log."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('compact_revision', ?)", (revision,))
        # Time samples below the new floor can never pick a future target again.
        conn.execute("DELETE FROM revision_times WHERE revision < ?", (revision,))
        lowest = conn.execute("SELECT MIN(id) FROM kv").fetchone()[0]
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(lowest or revision)


def delete_superseded(conn: sqlite3.Connection, lo: int, hi: int, revision: int) -> int:
    """Delete the forgettable rows with lo <= id < hi (hi <= revision); return how many."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        deleted = conn.execute(
            "DELETE FROM kv WHERE id >= :lo AND id < :hi AND (deleted = 1 OR EXISTS ("
            "SELECT 1 FROM kv AS newer"
            " WHERE newer.name = kv.name AND newer.id > kv.id AND newer.id <= :rev))",
            {"lo": lo, "hi": hi, "rev": revision},
        ).rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return deleted


def checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the WAL into the database file and truncate the WAL to zero bytes."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def old_enough_revision(conn: sqlite3.Connection, now: float, min_age_seconds: float) -> int:
    """The newest revision known to have been written at least `min_age_seconds` before `now`.

    A sample (ts, r) says every revision <= r existed during wall-clock second ts, i.e. before
    ts + 1. Revisions after the newest qualifying sample may be younger, so they are kept.
    """
    row = conn.execute(
        "SELECT MAX(revision) FROM revision_times WHERE ts + 1 <= ?", (now - min_age_seconds,)
    ).fetchone()
    return int(row[0] or 0)


def auto_target(head: int, keep_revisions: int, old_enough: int) -> int:
    """The revision to compact at under both policies (0 or less means "nothing to do")."""
    by_count = head - keep_revisions + 1  # keeps head-keep+1 .. head, i.e. `keep` revisions
    return min(by_count, old_enough)
