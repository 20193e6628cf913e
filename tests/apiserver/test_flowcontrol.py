"""API Priority and Fairness and slow-watcher dropping, against a real mini-apiserver.

Seats are held deterministically: a POST whose body never finishes keeps its seat (the handler is
waiting for the body), and the server's own flowcontrol gauges tell when the seat is taken and how
many requests wait, so no test sleeps and hopes.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.flowcontrol import HAND_SIZE, QUEUE_LENGTH, Raw, metric, until

HOG = "hog-script/1.0"


@pytest.fixture(scope="module")
def tiny() -> Iterator[APIServerProcess]:
    """Every priority level has one seat; a watcher may fall 4 events behind."""
    server = APIServerProcess(
        args=["--max-requests-inflight", "1", "--max-mutating-requests-inflight", "0", "--watch-buffer-events", "4"]
    ).start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
async def conns() -> AsyncIterator[list[Raw]]:
    opened: list[Raw] = []
    yield opened
    for c in opened:
        c.close()


def cm_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).encode()


async def test_full_level_answers_429_while_health_system_and_other_flows_are_served(
    tiny: APIServerProcess, conns: list[Raw]
) -> None:
    ns = "default"
    def executing() -> float:
        return metric(tiny, "apiserver_flowcontrol_current_executing_seats", priority_level="global-default")

    def queued() -> float:
        return metric(tiny, "apiserver_flowcontrol_current_inqueue_requests", priority_level="global-default")

    # The hog's first request takes global-default's only seat and keeps it: half a body.
    body = cm_body("held")
    holder = await Raw.open(tiny)
    conns.append(holder)
    holder.send("POST", f"/api/v1/namespaces/{ns}/configmaps", HOG, body[:5], length=len(body))
    await until(lambda: executing() == 1, "the hog to hold the seat")
    # Then it fills every queue of its hand.
    waiting = []
    for _ in range(HAND_SIZE * QUEUE_LENGTH):
        c = await Raw.open(tiny)
        conns.append(c)
        c.send("GET", f"/api/v1/namespaces/{ns}/configmaps", HOG)
        waiting.append(c)
    await until(lambda: queued() == HAND_SIZE * QUEUE_LENGTH, "the hog's queues to fill")
    # One more from the hog: turned away at once, with Kubernetes' Status and Retry-After.
    extra = await Raw.open(tiny)
    conns.append(extra)
    extra.send("GET", f"/api/v1/namespaces/{ns}/configmaps", HOG)
    code, headers, raw = await asyncio.wait_for(extra.response(), 10)
    status = json.loads(raw)
    assert code == 429 and headers["retry-after"] == "1"
    assert status["reason"] == "TooManyRequests" and status["message"] == "Too many requests, please try again later."
    assert status["details"]["retryAfterSeconds"] == 1
    # Exempt and other priority levels do not wait behind the hog.
    async with httpx.AsyncClient(base_url=tiny.url, timeout=10) as h:
        assert (await h.get("/readyz")).status_code == 200
        assert (await h.get("/healthz")).status_code == 200
        r = await h.get(f"/api/v1/namespaces/{ns}/configmaps", headers={"User-Agent": "mini-kubelet/v1.32 (linux)"})
        assert r.status_code == 200, r.text
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "n-fc"}}
        r = await h.post("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", json=lease)
        assert r.status_code == 201, r.text
    # Another flow of the same level is queued, not rejected, and is served long before the hog's
    # 300 queued requests: fair queuing takes queues in turn.
    other = await Raw.open(tiny)
    conns.append(other)
    other.send("GET", f"/api/v1/namespaces/{ns}/configmaps/held", "student-b/1.0")
    await until(lambda: queued() == HAND_SIZE * QUEUE_LENGTH + 1, "the other flow to be queued")
    finished: list[str] = []

    async def read(c: Raw, who: str) -> int:
        code, _, _ = await c.response()
        finished.append(who)
        return code

    tasks = [asyncio.create_task(read(c, "hog")) for c in waiting]
    tasks.append(asyncio.create_task(read(other, "other")))
    holder.writer.write(body[5:])  # the held request completes and frees the seat
    assert (await asyncio.wait_for(holder.response(), 10))[0] == 201
    codes = await asyncio.wait_for(asyncio.gather(*tasks), 30)
    assert all(c == 200 for c in codes[:-1]) and codes[-1] == 200  # the other flow GETs "held"
    assert finished.index("other") <= HAND_SIZE + 2, finished.index("other")


async def test_watcher_that_does_not_read_is_dropped(tiny: APIServerProcess) -> None:
    api = tiny.client()
    path = "/api/v1/namespaces/default/configmaps"
    r = api.post(path, json={"metadata": {"name": "big"}, "data": {"k": "0"}})
    assert r.status_code == 201, r.text
    rv = r.json()["metadata"]["resourceVersion"]
    def watchers() -> bool:
        return 'apiserver_registered_watchers{resource="configmaps"} 1.0' in httpx.get(tiny.url + "/metrics").text

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server must buffer
    sock.connect(("127.0.0.1", tiny.port))
    try:
        sock.sendall(f"GET {path}?watch=1&resourceVersion={rv} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await until(watchers, "the watch to be registered")
        payload = "x" * 400_000
        dropped = False
        for i in range(200):  # bounded: far more than socket buffers plus 4 events can hold
            r = api.put(f"{path}/big", json={"metadata": {"name": "big"}, "data": {"k": f"{i}-{payload}"}})
            assert r.status_code == 200, r.text
            if i % 5 == 4 and 'apiserver_registered_watchers{resource="configmaps"} 0.0' in api.get("/metrics").text:
                dropped = True
                break
        assert dropped, "the server still holds a watcher that never reads"
        # The connection is cut: reading what arrived ends in EOF or a reset, not in a hang.
        sock.settimeout(10)
        received = 0
        try:
            while chunk := sock.recv(1 << 20):
                received += len(chunk)
        except ConnectionResetError:
            pass
        assert received < (i + 1) * len(payload)  # the client did not get every event
        # The server is fine, and a new watch works.
        with api.stream("GET", f"{path}?watch=1&resourceVersion={rv}&timeoutSeconds=1") as w:
            first = next(w.iter_lines())
        assert json.loads(first)["type"] == "MODIFIED"
    finally:
        sock.close()
        api.close()


async def test_client_hanging_up_mid_body_is_no_internal_error(tiny: APIServerProcess) -> None:
    body = cm_body("never-finished")
    c = await Raw.open(tiny)
    c.send("POST", "/api/v1/namespaces/default/configmaps", "hang-up/1.0", body[:5], length=len(body))

    def seats() -> float:
        return metric(tiny, "apiserver_flowcontrol_current_executing_seats", priority_level="global-default")

    await until(lambda: seats() == 1, "the request to start")
    c.close()
    await until(lambda: seats() == 0, "the server to notice the client is gone")
    counted = metric(tiny, "apiserver_request_total", verb="create", resource="configmaps", code="0")
    assert counted >= 1  # recorded as "no answer", not as a 500
    log = tiny.log_path.read_text()
    assert "Traceback" not in log and "internal error" not in log, log[-2000:]
