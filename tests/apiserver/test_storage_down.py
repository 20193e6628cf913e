"""A store that is down: 503 Status and a failing /readyz, then recovery by itself."""

from __future__ import annotations

import time

from tests.support.apiserver import APIServerProcess
from tests.support.etcd import EtcdProcess


def _wait(pred, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def test_etcd_down_gives_503_and_recovers(etcd_process: EtcdProcess) -> None:
    server = APIServerProcess(etcd_url=etcd_process.url).start()
    try:
        with server.client() as api:
            assert (
                api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "a"}}).status_code == 201
            )
            # A quota in another namespace: there the create fails in ResourceQuota admission,
            # which charges the quota before the object is stored.
            assert api.post("/api/v1/namespaces", json={"metadata": {"name": "quota"}}).status_code == 201
            quotas = "/api/v1/namespaces/quota/resourcequotas"
            hard = {"configmaps": "10"}
            q = api.post(quotas, json={"metadata": {"name": "q"}, "spec": {"hard": hard}}).json()
            status = {"hard": hard, "used": {"configmaps": "0"}}  # as the resourcequota controller would write it
            assert api.put(f"{quotas}/q/status", json={**q, "status": status}).status_code == 200
            etcd_process.stop()
            r = api.get("/api/v1/namespaces/default/configmaps/a")
            assert r.status_code == 503 and r.json()["reason"] == "ServiceUnavailable"
            r = api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "b"}})
            assert r.status_code == 503
            r = api.post("/api/v1/namespaces/quota/configmaps", json={"metadata": {"name": "b"}})
            assert r.status_code == 503 and r.json()["reason"] == "ServiceUnavailable", r.text
            assert api.get("/readyz").status_code == 503
            etcd_process.start()
            _wait(lambda: api.get("/readyz").status_code == 200)
            assert api.get("/api/v1/namespaces/default/configmaps/a").status_code == 200
            assert (
                api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "b"}}).status_code == 201
            )
            assert api.post("/api/v1/namespaces/quota/configmaps", json={"metadata": {"name": "b"}}).status_code == 201
            # charged once: for the create that was stored, not for the one refused while etcd was down
            assert api.get(f"{quotas}/q").json()["status"]["used"] == {"configmaps": "1"}
    finally:
        server.cleanup()
