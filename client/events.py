"""EventRecorder: the notes controllers leave on objects, the bottom of `kubectl describe`.

    Events:
      Type    Reason            Age                From                   Message
      ----    ------            ----               ----                   -------
      Normal  SuccessfulCreate  10s (x3 over 2m)   replicaset-controller  Created pod: web-7d9c-x2x

An Event is an ordinary core/v1 object in the involved object's namespace (`default` for
cluster-scoped objects such as Nodes), named `<object name>.<16 hex digits of the time in ns>`.
It points back with `involvedObject` (kind, namespace, name, uid, apiVersion, resourceVersion) -
`kubectl describe` finds them with `fieldSelector=involvedObject.uid=<uid>`.

Aggregation, as Kubernetes does it: a controller stuck in a loop would otherwise write the same
event thousands of times. Repeats of the same (object, type, reason, message, source) update one
Event instead - `count` goes up by one and `lastTimestamp` moves forward, by PATCH - which is what
"(x3 over 2m)" shows. (client-go additionally folds *similar* events with different messages
after 10 in 10 minutes, and rate-limits per object; we do neither yet.)

Recording must never hurt the caller: `event()` does not block and never raises. Events go on a
bounded queue; a background task writes them and logs and drops whatever fails (client-go's
broadcaster also drops when its queue is full). `await flush()` waits until all are written.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api.errors import NotFoundError
from api.timestamps import now_rfc3339
from client.rest import RESTClient

log = logging.getLogger("client.events")

NORMAL, WARNING = "Normal", "Warning"
QUEUE_SIZE = 1000
SEEN_CACHE_SIZE = 4096  # aggregation keys remembered, least recently used dropped first (as client-go)


@dataclass
class _Seen:
    """What we wrote last for one aggregation key."""

    name: str
    namespace: str
    count: int


def object_reference(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An ObjectReference to `obj`: what an Event's involvedObject carries."""
    meta = obj.get("metadata") or {}
    ref = {
        "kind": obj.get("kind"),
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "apiVersion": obj.get("apiVersion"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    return {k: v for k, v in ref.items() if v}


class EventRecorder:
    """`recorder.event(pod, "Normal", "Scheduled", "Successfully assigned default/web to node-1")`."""

    def __init__(self, client: RESTClient, component: str, host: str | None = None) -> None:
        self.client = client
        self.component = component
        self.host = host
        self._queue: asyncio.Queue[tuple[dict[str, Any], str, str, str, str]] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._seen: OrderedDict[tuple[Any, ...], _Seen] = OrderedDict()
        self._last_ns = 0
        self.dropped = 0  # events we could not write, for tests and metrics

    def event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        """Record an event about `obj` (a wire-form dict with kind, apiVersion, metadata).
        Returns at once; never raises."""
        try:
            if self._queue is None:
                self._queue = asyncio.Queue(QUEUE_SIZE)
            if self._worker is None or self._worker.done():
                self._worker = asyncio.get_running_loop().create_task(
                    self._run(), name=f"events:{self.component}"
                )
            self._queue.put_nowait((object_reference(obj), type_, reason, message, now_rfc3339()))
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("event queue full, dropping %s event %s: %s", type_, reason, message)
        except Exception:
            self.dropped += 1
            log.exception("could not record event %s: %s", reason, message)

    async def flush(self) -> None:
        """Wait until every recorded event has been written (or dropped)."""
        if self._queue is not None:
            await self._queue.join()

    async def aclose(self) -> None:
        await self.flush()
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
            self._worker = None

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            ref, type_, reason, message, at = await self._queue.get()
            try:
                await self._write(ref, type_, reason, message, at)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the server is down, the namespace is gone, ...: drop it
                self.dropped += 1
                log.warning(
                    "could not write event %s on %s %s: %s", reason, ref.get("kind"), ref.get("name"), exc
                )
            finally:
                self._queue.task_done()

    def _event_name(self, object_name: str) -> str:
        ns = max(time.time_ns(), self._last_ns + 1)  # unique even for two events in one tick
        self._last_ns = ns
        return f"{object_name}.{ns:x}"

    async def _write(self, ref: dict[str, Any], type_: str, reason: str, message: str, at: str) -> None:
        namespace = ref.get("namespace") or "default"
        key = (
            ref.get("kind"), ref.get("namespace"), ref.get("name"), ref.get("uid"), ref.get("apiVersion"),
            type_, reason, message, self.component, self.host,
        )  # fmt: skip
        seen = self._seen.get(key)
        if seen is not None:
            self._seen.move_to_end(key)
            patch = {"count": seen.count + 1, "lastTimestamp": at}
            try:
                await self.client.patch("events", seen.name, patch, seen.namespace)
                seen.count += 1
                return
            except NotFoundError:
                pass  # the Event expired or was deleted: start a new one
        source: dict[str, str] = {"component": self.component}
        if self.host:
            source["host"] = self.host
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": self._event_name(ref.get("name") or "unknown"), "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": source,
            "firstTimestamp": at,
            "lastTimestamp": at,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.host or "",
        }
        created = await self.client.create("events", body, namespace)
        self._seen[key] = _Seen(created["metadata"]["name"], namespace, 1)
        while len(self._seen) > SEEN_CACHE_SIZE:
            self._seen.popitem(last=False)
