"""`mini-k8s up --etcd-servers a,b,c`: the whole cluster on a three-member etcd, surviving a member.

cluster/ hands the list to the API server unchanged; this proves the API server gets all three
members (its command line, read from /proc) and keeps serving when the member in use dies.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.cluster.test_up import OTHER_CONTEXT, Cluster, alive
from tests.support.component import wait_for
from tests.support.etcd import EtcdCluster


@pytest.fixture
def up_cluster(tmp_path: Path) -> Iterator[Cluster]:
    kubeconfig = tmp_path / "kube" / "config"
    kubeconfig.parent.mkdir()
    kubeconfig.write_text(yaml.safe_dump(OTHER_CONTEXT))
    c = Cluster(tmp_path / "data", kubeconfig)
    yield c
    if not (c.data_dir / "run" / "cluster.json").exists():
        return
    pids = c.pids().values()
    c.run("down", timeout=30)
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_up_with_three_etcd_members_serves_through_the_loss_of_the_first(
    etcd_cluster: EtcdCluster, up_cluster: Cluster
) -> None:
    result = up_cluster.up(1, "--etcd-servers", etcd_cluster.endpoints, "--etcd-prefix", "/up3")
    assert result.returncode == 0, result.stdout + result.stderr
    cmdline = Path(f"/proc/{up_cluster.pids()['apiserver']}/cmdline").read_bytes().split(b"\0")
    assert cmdline[cmdline.index(b"--etcd-servers") + 1].decode() == etcd_cluster.endpoints

    cm = f"{up_cluster.url}/api/v1/namespaces/default/configmaps"
    assert httpx.post(cm, json={"metadata": {"name": "before"}}, timeout=10).status_code == 201
    etcd_cluster.members[0].kill()  # the member the API server starts on

    def created() -> bool:
        return httpx.post(cm, json={"metadata": {"name": "after"}}, timeout=10).status_code in (201, 409)

    wait_for(created, timeout=30, what="a create after the first etcd member died")
    names = {i["metadata"]["name"] for i in httpx.get(cm, timeout=10).json()["items"]}
    assert {"before", "after"} <= names
