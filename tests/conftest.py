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

What touches the host is cleaned up, and `temp_dir_is_left_clean` lists what is left. In each test
process (each pytest-xdist worker, or the one process without -n) the temp dir becomes a fresh
directory of pytest's base temp dir for the session: for this process (`tempfile.tempdir`) and
for the API servers and components the test-support wrappers start (their TMPDIR). Anything named
`mini-k8s-*` still in it at the end was made by this session and not removed (a test's helper
without a cleanup, or a component SIGKILLed before its exit handlers ran), and fails the run as an
error in the teardown of the worker's last test. Looking in the private dir rather than comparing
/tmp before and after counts only this session's leftovers: a `make up` cluster, a benchmark or
another test run of the same user may be making and removing its own `mini-k8s-*` dirs in /tmp at
the same time. (Programs run directly with subprocess, such as kubectl, keep the real TMPDIR.)
The wrappers' own log and data dirs live beside it (tests/support/scratch.py): removed at the end
of a passing session, kept after a failure, and the failure's report says where.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Generator, Iterator

import pytest

from tests.support import scratch
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


@pytest.fixture(scope="session", autouse=True)
def temp_dir_is_left_clean(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    processes, temp = tmp_path_factory.mktemp("processes"), tmp_path_factory.mktemp("tmp")
    scratch.use(processes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(temp))
        yield
    scratch.use(None)
    if request.session.testsfailed == 0:
        shutil.rmtree(processes, ignore_errors=True)
    left = sorted(path.name for path in temp.glob("mini-k8s-*"))
    assert not left, f"the tests left {len(left)} mini-k8s-* entries in their temp dir {temp}: {left}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport() -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed and scratch.root() is not None:
        report.sections.append(("process logs", f"logs of the processes this test process started: {scratch.root()}"))
    return report
