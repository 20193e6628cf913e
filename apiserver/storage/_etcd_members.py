"""Several etcd members behind one `EtcdStorage`: which one we talk to, and when to move on.

Why: `--etcd-servers a,b,c` names the members of one etcd cluster. Any member serves every
request (followers forward writes to the leader), so one connection is enough — but when that
member dies, the API server must move to another within moments instead of failing until the
member comes back. etcd's own Go client does the same: one "pinned" endpoint, switched on error.

How: one gRPC channel per member, opened up front (a channel costs nothing until used and
reconnects by itself). `current` is the member in use. `failed(member)` moves on to the next one
after an error that says "this member cannot serve right now" (UNAVAILABLE, a deadline); when
several requests fail on the same member at once, only the first moves the pointer (the others
see it has already moved). Reads then retry at once on the next member; writes retry only when
the error proves the request never reached etcd's log (see `_etcd_errors.not_sent`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc
from aetcd.rpc import KVStub, WatchStub

from apiserver.storage._etcd_channel import open_channel

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class Member:
    """One etcd endpoint and its stubs."""

    endpoint: str
    channel: grpc.aio.Channel
    kv: KVStub
    watch: WatchStub


class Members:
    """The endpoints of one etcd cluster, with one of them in use."""

    def __init__(self, endpoints: list[str]) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoint given")
        self.members: list[Member] = []
        for endpoint in endpoints:
            channel = open_channel(endpoint)
            self.members.append(Member(endpoint, channel, KVStub(channel), WatchStub(channel)))
        self._index = 0

    @property
    def current(self) -> Member:
        return self.members[self._index]

    def use(self, member: Member) -> None:
        self._index = self.members.index(member)

    def failed(self, member: Member) -> Member:
        """`member` could not serve a request: move on from it (once) and return the one in use."""
        if self.current is member and len(self.members) > 1:
            self._index = (self._index + 1) % len(self.members)
            log.warning("etcd member %s failed; now using %s", member.endpoint, self.current.endpoint)
        return self.current

    def __len__(self) -> int:
        return len(self.members)

    @property
    def endpoints(self) -> list[str]:
        return [m.endpoint for m in self.members]

    async def close(self) -> None:
        for member in self.members:
            await member.channel.close()
