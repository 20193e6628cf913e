"""EventRecorder: core/v1 Events as Kubernetes writes them, repeats aggregated into one."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

from client.events import EventRecorder
from client.rest import RESTClient


async def events_about(client: RESTClient, name: str, namespace: str = "default") -> list[dict]:
    items = (await client.list("events", namespace, field_selector=f"involvedObject.name={name}"))["items"]
    return items


async def test_repeats_aggregate_into_one_event_with_a_count(client: RESTClient) -> None:
    cm = await client.create("configmaps", {"metadata": {"name": "ev-cm"}})
    recorder = EventRecorder(client, "test-controller", host="host-1")
    recorder.event(cm, "Normal", "Synced", "Synced ev-cm")
    recorder.event(cm, "Normal", "Synced", "Synced ev-cm")
    await recorder.flush()
    first_second = datetime.now(UTC).replace(microsecond=0)
    while datetime.now(UTC).replace(microsecond=0) == first_second:  # Time has 1 s resolution
        await asyncio.sleep(0.02)
    recorder.event(cm, "Normal", "Synced", "Synced ev-cm")
    recorder.event(cm, "Warning", "Failed", "something else")  # a different event, not aggregated
    await recorder.flush()
    await recorder.aclose()

    events = await events_about(client, "ev-cm")
    synced = [e for e in events if e["reason"] == "Synced"]
    assert len(synced) == 1 and len(events) == 2
    ev = synced[0]
    assert ev["count"] == 3
    assert ev["lastTimestamp"] > ev["firstTimestamp"]
    assert ev["type"] == "Normal" and ev["message"] == "Synced ev-cm"
    assert ev["source"] == {"component": "test-controller", "host": "host-1"}
    assert ev["reportingComponent"] == "test-controller"
    assert re.fullmatch(r"ev-cm\.[0-9a-f]{16}", ev["metadata"]["name"])
    ref = ev["involvedObject"]
    assert ref == {
        "kind": "ConfigMap",
        "namespace": "default",
        "name": "ev-cm",
        "uid": cm["metadata"]["uid"],
        "apiVersion": "v1",
        "resourceVersion": cm["metadata"]["resourceVersion"],
    }
    # kubectl describe finds them by uid
    by_uid = await client.list(
        "events", "default", field_selector=f"involvedObject.uid={cm['metadata']['uid']}"
    )
    assert len(by_uid["items"]) == 2


async def test_events_about_cluster_scoped_objects_go_to_default(client: RESTClient) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ev-node", "uid": "u-1"}}
    recorder = EventRecorder(client, "node-controller")
    recorder.event(node, "Normal", "NodeNotReady", "Node ev-node status is now: NodeNotReady")
    await recorder.aclose()
    [ev] = await events_about(client, "ev-node")
    assert ev["metadata"]["namespace"] == "default"
    assert ev["count"] == 1 and "namespace" not in ev["involvedObject"]


async def test_recording_never_raises_when_the_server_is_down() -> None:
    async with RESTClient("http://127.0.0.1:1") as dead:
        recorder = EventRecorder(dead, "c")
        recorder.event({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}, "Normal", "R", "m")
        await asyncio.wait_for(recorder.aclose(), 5)
    assert recorder.dropped == 1


def test_recording_without_an_event_loop_drops_instead_of_raising() -> None:
    recorder = EventRecorder(RESTClient("http://127.0.0.1:1"), "c")
    recorder.event({"kind": "Pod", "metadata": {"name": "p"}}, "Normal", "R", "m")
    assert recorder.dropped == 1
