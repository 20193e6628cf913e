"""One real mini-apiserver (embedded store) per fuzz module, plus the checks every response must pass.

The contract the fuzzer enforces is kube-apiserver's: whatever a client sends, the server answers
with a 2xx/4xx — never a 5xx — and every error is a `Status` object the client can read
(`kind: Status`, `status: Failure`, the HTTP code repeated in `code`, a machine-readable `reason`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.fuzz.kinds import KINDS
from tests.fuzz.strategies import SEEDED
from tests.support.apiserver import APIServerProcess


class FuzzTarget:
    """The server under fuzz and the namespace whose objects the generated paths point at."""

    def __init__(self, server: APIServerProcess) -> None:
        self.server = server
        self.client = httpx.Client(base_url=server.url, timeout=15.0)
        self.namespace = ""
        self._generation = 0

    def request(self, method: str, url: str, **kw: object) -> httpx.Response:
        """Send once, and once more if the pooled connection was already dead.

        After a 500, uvicorn closes the connection; the next request on that pooled keep-alive
        connection then fails before reaching the server. That is the earlier request's fault,
        so it is retried on a fresh connection instead of being blamed.
        """
        try:
            return self.client.request(method, url, **kw)  # type: ignore[arg-type]
        except (httpx.RemoteProtocolError, httpx.ReadError):
            return self.client.request(method, url, **kw)  # type: ignore[arg-type]

    def reseed(self) -> None:
        """Make sure the seeded namespace is usable and holds an object named `x` of every kind.

        Fuzzed DELETEs remove seeded objects, and a deleted namespace stays Terminating forever
        (no namespace controller runs here) — then the run moves on to a fresh namespace. So it
        does when a fuzzed ResourceQuota refuses a seed (no quota controller runs here either).
        """
        if not self.namespace or not self._namespace_usable():
            self._new_namespace()
        for kind in KINDS:
            r = self.request("POST", kind.collection_path(self.namespace), json=kind.object(SEEDED, self.namespace))
            if r.status_code == 403 and "quota" in r.text:
                self._new_namespace()
                return self.reseed()
            assert r.status_code in (201, 409), f"seeding {kind.plural}: {r.status_code} {r.text}"
        return None

    def _new_namespace(self) -> None:
        self._generation += 1
        self.namespace = f"fuzz-{self._generation}"
        r = self.request("POST", "/api/v1/namespaces", json={"metadata": {"name": self.namespace}})
        assert r.status_code == 201, r.text

    def _namespace_usable(self) -> bool:
        r = self.request("GET", f"/api/v1/namespaces/{self.namespace}")
        return r.status_code == 200 and "deletionTimestamp" not in r.json()["metadata"]

    def close(self) -> None:
        self.client.close()


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[APIServerProcess]:
    server = APIServerProcess(args=["--watch-bookmark-interval", "0.2"]).start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="module")
def target(fuzz_server: APIServerProcess) -> Iterator[FuzzTarget]:
    t = FuzzTarget(fuzz_server)
    t.reseed()
    try:
        yield t
    finally:
        t.close()


def _too_large_resource_version(status: object) -> bool:
    causes = ((status.get("details") or {}).get("causes") or []) if isinstance(status, dict) else []
    return any(c.get("reason") == "ResourceVersionTooLarge" for c in causes)


def _requested_timeout(status: object) -> bool:
    return isinstance(status, dict) and "within requested timeout" in str(status.get("message", ""))


def _no_kubelet(status: object) -> bool:
    # A fuzzed binding can put the seeded pod on the seeded node `x`, which has no kubelet address.
    return isinstance(status, dict) and "has no kubelet endpoint" in str(status.get("message", ""))


def status_problems(response: httpx.Response, body: bytes | None = None) -> list[str]:
    """What is wrong with this response by the API server's contract (empty list: nothing)."""
    code = response.status_code
    problems = []
    if code >= 500:
        problems.append(f"server error {code}")
    if code < 400 or response.request.method == "HEAD":
        return problems
    raw = response.content if body is None else body
    try:
        status = json.loads(raw)
    except ValueError:
        return [*problems, f"error body is not JSON: {raw[:200]!r}"]
    if code == 504 and (_too_large_resource_version(status) or _requested_timeout(status)):
        # Kubernetes' answers to a fuzzed resourceVersion from the future, and to a fuzzed ?timeout= so
        # short the request could not finish within it
        problems.remove("server error 504")
    if code == 503 and _no_kubelet(status):
        # logs, exec, attach or port-forward of a pod whose node has no kubelet to stream from: the
        # API server cannot reach what it would proxy to (Kubernetes answers 500 with "no preferred
        # addresses found")
        problems.remove("server error 503")
    if not isinstance(status, dict):
        return [*problems, f"error body is not an object: {raw[:200]!r}"]
    if status.get("kind") != "Status" or status.get("apiVersion") != "v1":
        problems.append(f"error body is not a v1 Status: {raw[:200]!r}")
    if status.get("status") != "Failure":
        problems.append(f"Status.status is {status.get('status')!r}, not 'Failure'")
    if status.get("code") != code:
        problems.append(f"Status.code {status.get('code')!r} != HTTP {code}")
    if not status.get("reason"):
        problems.append(f"Status has no reason: {raw[:200]!r}")
    return problems
