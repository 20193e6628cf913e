"""The storage contract every backend honours, modelled on etcd v3's key-value API.

Why this shape: Kubernetes' `resourceVersion` *is* the storage revision. A single, monotonically
increasing revision counter shared by all keys gives optimistic concurrency (update only if the
key is still at the revision you read), consistent paging (read every page at the revision of the
first page) and resumable watches (replay everything after revision N). Both backends — a real
etcd and the embedded SQLite log — provide exactly these primitives, so the API server above them
never needs to know which one it talks to.

Revisions:
- every successful create/update/delete bumps the global revision by one; the new value is
  returned and recorded on the key as its `revision` (etcd's mod_revision);
- the counter never goes backwards, not even across a restart or a compaction;
- `compact(rev)` forgets history older than `rev`; reading at, or watching from, a revision below
  the compacted one raises `Compacted` (the API server turns that into 410 Gone).
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

# etcd refuses requests over 1.5 MiB by default; the embedded store applies the same limit so
# both backends behave alike.
MAX_VALUE_BYTES = 1536 * 1024

# PROGRESS is no change: "every change under the prefix up to `revision` has been yielded" — the
# answer to a ProgressRequests.request() (etcd's progress notification), with key "" and no value.
EventType = Literal["ADDED", "MODIFIED", "DELETED", "PROGRESS"]


class StorageError(Exception):
    """Base of every error a backend raises."""


class NotFound(StorageError):
    """The key does not exist (or is deleted)."""


class KeyExists(StorageError):
    """`create` found the key already present."""


class Conflict(StorageError):
    """The key is not at the expected revision: someone else wrote it first."""


class Compacted(StorageError):
    """The requested revision is older than the oldest retained history."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__(f"revision {requested} has been compacted (oldest retained: {compacted})")
        self.requested = requested
        self.compacted = compacted


class Unavailable(StorageError):
    """The store cannot be reached (etcd down, disk error). Callers may retry later."""


class OutcomeUnknown(Unavailable):
    """A write reached the store but no answer came back (a deadline, a connection lost after
    sending): it may or may not have been committed. The API answers 504 Timeout, not 503, so a
    client reads the object back before it concludes that its write failed."""


class TooLarge(StorageError):
    """The value exceeds MAX_VALUE_BYTES; nothing was written."""


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: bytes
    revision: int  # revision of the last write to this key (etcd: mod_revision)
    create_revision: int


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[KeyValue]
    revision: int  # the revision the list was read at; pass it back to read the next page
    continue_key: str | None  # the last key of this page when more remain, else None
    remaining: int = 0  # how many keys after this page (best effort, 0 when unknown or none)


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    key: str
    value: bytes | None  # the new value; for DELETED the last value before deletion
    revision: int  # the revision of this change
    prev_value: bytes | None = None  # the value before this change (always set for DELETED)


@dataclass(frozen=True, slots=True)
class Update:
    """One of `Storage.update_each`'s updates: `Storage.update`'s arguments."""

    key: str
    value: bytes
    expected_revision: int


class ProgressRequests:
    """A watcher's way to ask its stream "how far have you got?" — etcd's RequestProgress.

    After `request()`, the stream yields a PROGRESS event once everything committed so far under
    its prefix has been yielded, carrying the revision it has reached (the store's, not just the
    prefix's last change). The watch cache uses it to know that it is fresh enough to serve a
    consistent LIST (handlers/read.py). A stream given one may also yield PROGRESS unasked (etcd
    answers its keep-alive requests the same way); a stream given none never yields PROGRESS."""

    def __init__(self) -> None:
        self.wanted = asyncio.Event()
        self._listeners: set[Callable[[], None]] = set()

    def request(self) -> None:
        self.wanted.set()
        for wake in list(self._listeners):
            wake()

    def take(self) -> bool:
        """True (once) if progress was asked for since the last take()."""
        asked = self.wanted.is_set()
        self.wanted.clear()
        return asked

    def listen(self, wake: Callable[[], None]) -> None:
        self._listeners.add(wake)

    def unlisten(self, wake: Callable[[], None]) -> None:
        self._listeners.discard(wake)


class Storage(abc.ABC):
    """An async key-value store with a global revision, CAS writes, paging and watch."""

    # Whether a PROGRESS event really means "everything up to here was yielded". etcd before
    # 3.4.31 / 3.5.13 could send one ahead of events a lagging watcher had not been sent yet;
    # Kubernetes then serves no consistent LIST from its watch cache, and neither do we.
    supports_progress: bool = True

    @abc.abstractmethod
    async def get(self, key: str) -> KeyValue:
        """Return the current value of `key`, or raise NotFound."""

    @abc.abstractmethod
    async def list(
        self,
        prefix: str,
        *,
        limit: int = 0,
        continue_key: str | None = None,
        revision: int = 0,
    ) -> ListResult:
        """Keys under `prefix` in key order, at most `limit` of them (0 = all).

        `continue_key` starts the page strictly after that key; `revision` reads the state as
        of that revision (0 = now). Raises Compacted when `revision` is below the compacted one.
        """

    @abc.abstractmethod
    async def create(self, key: str, value: bytes) -> int:
        """Write `key` only if absent; return the new revision. Raises KeyExists, TooLarge."""

    @abc.abstractmethod
    async def update(self, key: str, value: bytes, expected_revision: int) -> int:
        """Overwrite `key` only if its revision is `expected_revision`; return the new revision.

        Raises NotFound if the key is gone, Conflict if its revision differs, TooLarge.
        """

    async def update_each(self, updates: Sequence[Update]) -> Sequence[int | Exception]:
        """Several `update`s at once, each judged on its own as if alone: per update, its new
        revision or what it raised. For a caller that has them all ready (ResourceQuota admission
        charging a namespace's quotas): a store may take them in one go instead of one task each."""

        async def one(u: Update) -> int | Exception:
            try:
                return await self.update(u.key, u.value, u.expected_revision)
            except Exception as exc:
                return exc

        return list(await asyncio.gather(*(one(u) for u in updates)))

    @abc.abstractmethod
    async def delete(self, key: str, expected_revision: int | None = None) -> int:
        """Delete `key` (only at `expected_revision` when given); return the deletion revision.

        Raises NotFound, Conflict.
        """

    @abc.abstractmethod
    def watch(
        self, prefix: str, start_revision: int, progress: ProgressRequests | None = None
    ) -> AsyncIterator[WatchEvent]:
        """Yield every change under `prefix` with revision >= `start_revision`, in order, once;
        and a PROGRESS event after each `progress.request()` (see ProgressRequests).

        `start_revision` 0 means "from now on". Raises Compacted (on first iteration) when
        `start_revision` is below the compacted revision, and Unavailable when the store goes
        away mid-stream: a watch never hangs on a dead store. Closing the async iterator
        (`aclose()`) releases its resources.
        """

    @abc.abstractmethod
    async def current_revision(self) -> int:
        """The newest revision of the store (0 for a never-written SQLite store; a new etcd starts at 1)."""

    @abc.abstractmethod
    async def compacted_revision(self) -> int:
        """The oldest revision still readable (history before it is gone)."""

    @abc.abstractmethod
    async def compact(self, revision: int) -> None:
        """Forget history older than `revision` (the newest value of every key is kept)."""

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise Unavailable unless the store answers (used by /readyz)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections and files; the data stays."""
