"""Storage: the one place objects are persisted. Two backends behind one interface.

See `interface.py` for the contract, `sqlite.py` for the embedded kine-style log (default) and
`etcd.py` for a real etcd v3 server.
"""

from apiserver.storage.interface import (
    MAX_VALUE_BYTES,
    Compacted,
    Conflict,
    KeyExists,
    KeyValue,
    ListResult,
    NotFound,
    OutcomeUnknown,
    ProgressRequests,
    Storage,
    StorageError,
    TooLarge,
    Unavailable,
    Update,
    WatchEvent,
)

__all__ = [
    "Compacted",
    "Conflict",
    "KeyExists",
    "KeyValue",
    "ListResult",
    "MAX_VALUE_BYTES",
    "NotFound",
    "OutcomeUnknown",
    "ProgressRequests",
    "Storage",
    "StorageError",
    "TooLarge",
    "Unavailable",
    "Update",
    "WatchEvent",
]
