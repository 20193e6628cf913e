"""The real kubectl's `port-forward` against mini-k8s where no process runs (no root needed):
discovery, the API server's checks, the kubelet's refusals and the simulated runtime's answer —
and mini-kubectl saying the same, word for word, with the same exit codes.

The cluster of tests/compat/test_exec_kubectl.py: simulated kubelets on HTTPS, one with
--client-ca-file and Webhook authorization, one without a client CA.
"""

from __future__ import annotations

import socket

import httpx

from tests.compat.test_exec_kubectl import Setup, same, setup  # noqa: F401  (fixture)
from tests.support.component import free_port


def test_discovery_lists_pods_portforward(setup: Setup) -> None:  # noqa: F811
    resources = {r["name"]: r for r in setup.api.get("/api/v1").json()["resources"]}
    assert resources["pods/portforward"]["verbs"] == ["create", "get"]
    assert resources["pods/portforward"]["kind"] == "PodPortForwardOptions"


def test_the_simulated_runtime_says_it_cannot_forward(setup: Setup) -> None:  # noqa: F811
    name = setup.pod("pf-sim", setup.node)
    local = free_port()  # not a fixed one: the user's own port-forward may hold it
    real, mini = setup.both("port-forward", f"pod/{name}", f"{local}:80")
    assert real.returncode == 1
    assert real.stderr == ("error: error upgrading connection: port-forward is not possible: the simulated runtime "
                           "runs no processes; start the cluster with --runtime process\n")  # fmt: skip
    same(real, mini)
    with socket.socket() as probe:  # nothing was left listening
        assert probe.connect_ex(("127.0.0.1", local)) != 0


def test_a_kubelet_without_a_client_ca_forwards_nothing(setup: Setup) -> None:  # noqa: F811
    name = setup.pod("pf-open", setup.open_node)
    real, mini = setup.both("port-forward", name, f"{free_port()}:80")
    assert real.returncode == 1
    assert real.stderr.startswith(f"error: error upgrading connection: kubelet on node {setup.open_node}: this "
                                  "kubelet runs commands only for callers it authenticates")  # fmt: skip
    same(real, mini)


def test_errors_before_any_connection(setup: Setup) -> None:  # noqa: F811
    pending = setup.pod("pf-pending", None, phase="Pending")
    local = f"{free_port()}:80"
    for args in (["port-forward", "missing", local], ["port-forward", f"pod/{pending}", local],
                 ["port-forward", "pod/missing"], ["port-forward", "svc/missing", "80"]):  # fmt: skip
        real, mini = setup.both(*args)
        assert real.returncode == 1, (args, real)
        same(real, mini)
    real, _ = setup.both("port-forward", f"pod/{pending}", local)
    assert real.stderr == "error: unable to forward port because pod is not running. Current status=Pending\n"


def test_the_legacy_spdy_upgrade_is_refused_with_a_status(setup: Setup) -> None:  # noqa: F811
    name = setup.pod("pf-legacy", setup.node)
    answer = httpx.post(f"{setup.server.url}/api/v1/namespaces/default/pods/{name}/portforward",
                        headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                 "X-Stream-Protocol-Version": "portforward.k8s.io"})  # fmt: skip
    assert answer.status_code == 400 and answer.json()["kind"] == "Status"
    assert "simulated runtime" in answer.json()["message"]
