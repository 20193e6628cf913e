"""cluster/addons.py against a real API server: what `up` and `mini-k8s addons` create, and what
they do on a cluster that has it already (`make up` again on the same data directory)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from client.rest import RESTClient
from cluster.addons import ensure_cluster_dns
from tests.support.apiserver import APIServerProcess
from tests.support.fixtures import apiserver  # noqa: F401  (fixture: one API server for the module)


@pytest.fixture
async def api(apiserver: APIServerProcess) -> AsyncIterator[RESTClient]:  # noqa: F811
    async with RESTClient(apiserver.url, qps=0, burst=1) as c:
        yield c


async def test_the_cluster_dns_is_created_once_then_brought_to_new_addresses(api: RESTClient) -> None:
    first = await ensure_cluster_dns(api, "10.96.0.10", ["10.244.0.1"], 10053)
    assert first and first[0].startswith("cluster DNS: Service kube-dns, Endpoints kube-dns")
    # Again, as `up` on the same data directory: the Service's fixed address is its own already,
    # which the API server refuses as Invalid before AlreadyExists. Nothing is created, nothing warned,
    # and the Endpoints follow the nodes' new addresses.
    again = await ensure_cluster_dns(api, "10.96.0.10", ["10.244.1.1", "10.244.2.1"], 10053)
    assert again == []
    endpoints = await api.get("endpoints", "kube-dns", "kube-system")
    assert [a["ip"] for a in endpoints["subsets"][0]["addresses"]] == ["10.244.1.1", "10.244.2.1"]


async def test_a_user_service_holding_the_dns_address_is_reported_not_overwritten(api: RESTClient) -> None:
    user = {"metadata": {"name": "mine"}, "spec": {"clusterIP": "10.96.0.11", "ports": [{"port": 80}]}}
    await api.create("services", user, "default")
    lines = await ensure_cluster_dns(api, "10.96.0.11", ["10.244.0.1"], 10053)
    assert len(lines) == 1 and lines[0].startswith("! no kube-dns Service, pods will not resolve names: ")
    assert "provided IP is already allocated" in lines[0]
    assert (await api.get("services", "mine", "default"))["spec"]["clusterIP"] == "10.96.0.11"
