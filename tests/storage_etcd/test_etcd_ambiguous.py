"""A write whose outcome is unknown is not reported as failed.

etcd frozen (SIGSTOP) after the request was sent: the answer never comes, the write may have been
committed → OutcomeUnknown (the API answers 504 Timeout). etcd not running at all: the request
never left → plain Unavailable (503). The API-level proof, with real kills, is test_etcd_failover.
"""

from __future__ import annotations

import pytest

from apiserver.storage.etcd import EtcdStorage
from apiserver.storage.interface import OutcomeUnknown, Unavailable
from tests.support.apiserver import APIServerProcess
from tests.support.etcd import EtcdProcess


async def test_a_write_to_a_frozen_etcd_has_an_unknown_outcome(etcd_process: EtcdProcess) -> None:
    storage = await EtcdStorage.connect(etcd_process.url, timeout=1.0)
    try:
        await storage.create("/registry/pods/a", b"a")
        etcd_process.freeze()
        try:
            with pytest.raises(OutcomeUnknown, match="context deadline exceeded"):
                await storage.create("/registry/pods/b", b"b")
            with pytest.raises(OutcomeUnknown):
                await storage.update("/registry/pods/a", b"a2", 1)
        finally:
            # An answer can only come from an etcd that something resumed: say so if it did.
            assert etcd_process.frozen(), f"etcd ran while frozen: {etcd_process.thread_states()}"
    finally:
        etcd_process.thaw()
        await storage.close()


async def test_a_write_to_a_stopped_etcd_is_known_not_done(etcd_process: EtcdProcess) -> None:
    storage = await EtcdStorage.connect(etcd_process.url, timeout=1.0)
    try:
        etcd_process.kill()
        # A read is never "unknown": it changed nothing. (It also lets the client see the connection
        # is gone: a write sent on the dying connection just before would rightly be "unknown".)
        with pytest.raises(Unavailable) as read_err:
            await storage.get("/registry/pods/b")
        assert not isinstance(read_err.value, OutcomeUnknown)
        with pytest.raises(Unavailable) as err:
            await storage.create("/registry/pods/b", b"b")
        assert not isinstance(err.value, OutcomeUnknown)
    finally:
        await storage.close()


def test_the_api_answers_504_timeout_for_an_unknown_outcome_and_503_when_etcd_is_down(
    etcd_process: EtcdProcess,
) -> None:
    api = APIServerProcess(etcd_url=etcd_process.url, args=["--etcd-request-timeout", "1"]).start()
    try:
        with api.client() as client:
            cm = "/api/v1/namespaces/default/configmaps"
            etcd_process.freeze()
            r = client.post(cm, json={"metadata": {"name": "frozen"}})
            assert r.status_code == 504, r.text
            body = r.json()
            assert (body["kind"], body["reason"], body["code"]) == ("Status", "Timeout", 504)
            assert body["message"].startswith(
                "Timeout: request did not complete within requested timeout - context deadline exceeded"
            )
            etcd_process.thaw()
            etcd_process.kill()
            # A read first, as in the storage test above: a write sent on the connection that is
            # dying under it is rightly "unknown" (504, seen as "Stream removed (sendmsg: Broken
            # pipe)"); a read is never unknown, and once it has failed the client knows etcd is gone.
            r = client.get(f"{cm}/frozen")
            assert r.status_code == 503, r.text
            r = client.post(cm, json={"metadata": {"name": "down"}})
            assert r.status_code == 503, r.text
            assert r.json()["reason"] == "ServiceUnavailable"
    finally:
        etcd_process.thaw()
        api.cleanup()
