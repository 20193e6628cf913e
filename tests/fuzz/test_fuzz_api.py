"""Property: no request, however malformed, makes the API server answer 5xx or a non-Status error.

Hypothesis generates method × path × query × headers × body (see strategies.py) and sends each to a
real server process. The run is derandomized (a fixed seed derived from the test, no example
database), so CI replays exactly the same requests every time; a failure prints the request and the
tail of the server log, and `test_regressions.py` keeps a deterministic copy of every bug found.
"""

from __future__ import annotations

import json
import uuid

import httpx
from hypothesis import HealthCheck, given, settings

from tests.fuzz.conftest import FuzzTarget, status_problems
from tests.fuzz.strategies import FuzzRequest, fuzz_request, watch_request

FUZZ = settings(
    max_examples=2500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
RESEED_EVERY = 40
WATCH_EVENT_TYPES = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"}


def _send(target: FuzzTarget, req: FuzzRequest) -> httpx.Response:
    return target.request(req.method, req.url(target.namespace), headers=req.headers, content=req.body)


def _explain(target: FuzzTarget, req: FuzzRequest, problems: list[str], response: httpx.Response) -> str:
    return (
        f"{'; '.join(problems)}\nrequest: {req.describe(target.namespace)}\n"
        f"response: {response.status_code} {response.content[:500]!r}\n"
        f"server log:\n{target.server.log_tail(30)}"
    )


@FUZZ
@given(req=fuzz_request())
def test_fuzzed_requests_get_no_server_error_and_every_error_is_a_status(target: FuzzTarget, req: FuzzRequest):
    target.sent = getattr(target, "sent", 0) + 1
    if target.sent % RESEED_EVERY == 0:
        target.reseed()
    response = _send(target, req)
    problems = status_problems(response)
    assert not problems, _explain(target, req, problems, response)


@settings(FUZZ, max_examples=15)
@given(req=watch_request())
def test_fuzzed_watches_stream_valid_events_or_fail_with_a_status(target: FuzzTarget, req: FuzzRequest):
    with target.client.stream("GET", req.url(target.namespace), headers=req.headers) as response:
        body = response.read()
    problems = status_problems(response, body)
    if response.status_code == 200 and "watch" in req.query:
        for line in body.splitlines():
            event = json.loads(line)
            if event.get("type") not in WATCH_EVENT_TYPES:
                problems.append(f"unknown watch event type in {line[:200]!r}")
            elif event["type"] == "ERROR":
                status = event.get("object") or {}
                if status.get("kind") != "Status" or not 400 <= int(status.get("code", 0)) < 500:
                    problems.append(f"ERROR event is not a 4xx Status: {line[:300]!r}")
    assert not problems, _explain(target, req, problems, response)


def test_server_is_still_healthy_and_serving_after_fuzzing(target: FuzzTarget):
    api = target.client
    assert api.get("/readyz").status_code == 200
    ns = f"after-{uuid.uuid4().hex[:6]}"
    assert api.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "still-ok"}, "data": {"k": "v"}}
    created = api.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm)
    assert created.status_code == 201, created.text
    got = api.get(f"/api/v1/namespaces/{ns}/configmaps/still-ok")
    assert got.status_code == 200 and got.json()["data"] == {"k": "v"}
    listed = api.get(f"/api/v1/namespaces/{ns}/configmaps")
    assert [o["metadata"]["name"] for o in listed.json()["items"]] == ["still-ok"]
