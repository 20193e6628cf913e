"""The labs that need real pods (marked `<!-- runtime: process -->`: 09 probes, 10 Services and DNS,
13 the HPA with real CPU), command by command, on the cluster their text tells a student to start:
`mini-k8s up --classroom --secure --runtime process` (tests/labs/labcluster.py)."""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.labs.labcluster import PROCESS_LABS, LabCluster, lab_id, run_document, start_lab_cluster
from tests.support.component import free_port


@pytest.fixture(scope="module")
def process_lab_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    """The cluster labs 09, 10 and 13 tell a student to start (`--runtime process`, as root). Test-only flags
    keep it off whatever else runs here: its own Service and pod ranges (kube-proxy drops packets
    for unallocated addresses of its Service range) and its own nftables table."""
    if sys.platform != "linux" or os.geteuid() != 0 or not shutil.which("nft"):
        pytest.skip("the process runtime and kube-proxy need Linux, root and nft (Debian: nftables)")
    table = f"mkp-lab-{uuid.uuid4().hex[:6]}"
    # Outside /tmp, as a student's repository is: a container gets its own /tmp only when the data dir
    # is not under /tmp (kubelet/process.py), and lab 09 looks into a container's /tmp.
    workdir = Path(tempfile.mkdtemp(prefix="mini-k8s-labs-", dir="/var/tmp"))
    try:
        yield from start_lab_cluster(tmp_path_factory, [
            "--runtime", "process", "--kube-proxy-port", str(free_port()),
            "--service-cluster-ip-range", "10.120.0.0/16", "--cluster-cidr", f"10.{random.randint(208, 215)}.0.0/16",
            f"--kube-proxy-arg=--nftables-table={table}"], workdir=workdir)  # fmt: skip
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("lab_path", PROCESS_LABS, ids=lab_id)
def test_real_pod_lab_runs_as_written(lab_path: Path, process_lab_cluster: LabCluster) -> None:
    run_document(lab_path, process_lab_cluster)
