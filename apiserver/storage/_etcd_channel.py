"""Opening the gRPC channel to one etcd endpoint.

A gRPC channel is not a single connection: it reconnects by itself whenever the server comes back.
Two defaults do not suit an API server, so we change them:
- message size caps (4 MiB received by default): a list of many objects is one Range response;
- reconnect backoff (grows to two minutes by default): after an etcd restart we want to be back
  within about a second, not after the backoff happens to expire.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import grpc
from aetcd.rpc import insecure_channel

_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


def target(endpoint: str) -> str:
    """`http://127.0.0.1:2379` → `127.0.0.1:2379` (gRPC's target syntax); bare host:port passes."""
    endpoint = endpoint.strip()
    if "://" not in endpoint:
        return endpoint
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "grpc"):
        raise ValueError(f"unsupported etcd endpoint {endpoint!r}: only plain http:// is supported")
    return f"{parts.hostname}:{parts.port or 2379}"


def open_channel(endpoint: str) -> grpc.aio.Channel:
    return insecure_channel(target(endpoint), options=_CHANNEL_OPTIONS)
