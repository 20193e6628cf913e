"""Suite-wide collection order: the longest test files first.

`make test` runs three workers with `--dist loadfile`: a file stays on one worker, because its module
fixtures start one cluster for all its tests. Workers take files in collection order, so a long file
that happens to sort late (the labs, the Docker engine) would start when the other workers are
nearly done, and run on alone while they sit idle. Starting the few longest files first lets the
many short ones fill in around them. The list comes from `pytest --durations=0` (seconds of one
worker on two cores, in brackets); a file not in it keeps its usual place.

Each test also gets its own kubectl discovery cache. kubectl keys that cache by host and port only,
and test servers listen on free ports that the next server may reuse: a cache that another test's
server filled would make kubectl skip discovery, so what it prints (and which request fails first)
would depend on which tests ran before on that worker.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.etcd import etcd_server  # noqa: F401  (one etcd per worker, for every directory)

LONGEST_FIRST = [
    "tests/labs/test_labs.py",  # [~200] the tour and ten labs on one simulated cluster
    "tests/cluster/test_docker_engine.py",  # [~125] images built offline, compose up, a node failure
    "tests/labs/test_real_pod_labs.py",  # [~130] three labs on real pods
    "tests/kubelet/test_simulated_probes.py",  # [43]
    "tests/controller_manager_service/test_service_lb.py",  # [40]
    "tests/kube_proxy/test_kube_proxy.py",  # [39]
    "tests/chaos/test_chaos_short.py",  # [37]
    "tests/fuzz/test_fuzz_api.py",  # [31]
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: files keep their order


@pytest.fixture(scope="module", autouse=True)
def module_kubectl_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Module fixtures run kubectl before any test's own cache exists: one cache for them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KUBECACHEDIR", str(tmp_path_factory.mktemp("kubectl-cache")))
        yield


@pytest.fixture(autouse=True)
def own_kubectl_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECACHEDIR", str(tmp_path_factory.mktemp("kubectl-cache")))
