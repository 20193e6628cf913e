"""The cluster the labs and the README's tour run on, and how a document is run on it.

The cluster is what a student starts: `make up`, that is `mini-k8s up --classroom --secure` (here with `-d`
and free ports), three kubelets, its own data dir and kubeconfig. A document runs in a scratch
directory laid out like the repository root (an `examples/` link, a `.venv` link to this Python's
virtualenv, the `.mini-k8s/` data dir), with `mini-kubectl` and `mini-k8s` on PATH as small wrappers
around `python -m kubectl` / `python -m cluster`, and the real `curl` and `kubectl`. See
tests/labs/labdoc.py for the format.

Before and after each document the cluster must be where it started — three Ready nodes, no pods in
`default` — so each lab's clean-up is tested too, and a lab cannot pass by leaning on the one before it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.labs.labdoc import parse_lab, run_lab
from tests.support.component import free_port, wait_for

REPO = Path(__file__).resolve().parents[2]
LAB_DIR = REPO / "docs" / "labs"
ALL_LABS = sorted(LAB_DIR.glob("[0-9][0-9]-*.md"))
# A lab marked `<!-- runtime: process -->` needs real pods (lab 09: probes and exec; lab 10: Services
# and DNS; lab 13: the HPA with real CPU): it runs on a cluster of its own, started with
# `--runtime process`, as its text tells a student to (tests/labs/test_real_pod_labs.py).
PROCESS_MARK = "<!-- runtime: process -->"
PROCESS_LABS = [p for p in ALL_LABS if PROCESS_MARK in p.read_text()]
LABS = [p for p in ALL_LABS if p not in PROCESS_LABS]
README = REPO / "README.md"

# What `make up` and the labs README start (test_the_cluster_flags_are_one_preset keeps them in step).
CLASSROOM_FLAGS = ["--classroom", "--secure"]

SHIMS = {"mini-kubectl": "kubectl", "mini-k8s": "cluster"}


@dataclass
class LabCluster:
    workdir: Path  # the labs' current directory: examples/ and .mini-k8s/ are here
    env: dict[str, str]
    server: str

    def get(self, path: str) -> dict:
        r = httpx.get(self.server + path, timeout=5.0)
        r.raise_for_status()
        return r.json()


def _write_shims(bindir: Path) -> None:
    bindir.mkdir()
    for name, module in SHIMS.items():
        shim = bindir / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m {module} "$@"\n')
        shim.chmod(0o755)


def _kill_leftovers(server: str) -> None:
    """Anything still pointed at this cluster's API server (a kubelet a lab restarted by hand, a
    watch a failed lab never stopped) goes with the cluster."""
    needle = re.compile(re.escape(server.encode()) + rb"(?![0-9])")  # :8080 must not match :80801
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle.search((proc / "cmdline").read_bytes()):
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


def start_lab_cluster(
    tmp_path_factory: pytest.TempPathFactory, extra: list[str], workdir: Path | None = None
) -> Iterator[LabCluster]:
    workdir = workdir or tmp_path_factory.mktemp("labs")
    (workdir / "examples").symlink_to(REPO / "examples")
    (workdir / ".venv").symlink_to(sys.prefix)  # the tour runs `.venv/bin/python`
    _write_shims(workdir / "bin")
    port = free_port()
    env = dict(
        os.environ,
        KUBECONFIG=str(workdir / "kubeconfig"),
        PATH=f"{workdir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=str(REPO),
        HOME=str(workdir),  # nothing a lab does may touch the real ~/.kube
        LC_ALL="C.UTF-8",
        NO_COLOR="1",
    )
    # Test-only flags: free ports, so the suite can run next to a student's cluster on 8080.
    ports = [
        "--port", str(port),
        "--controller-manager-port", str(free_port()),
        "--scheduler-port", str(free_port()),
        "--kubelet-port", str(free_port()),
        "--dns-port", str(free_port()),
        "--dns-health-port", str(free_port()),
        "--metrics-server-port", str(free_port()),
        "--secure-port", str(free_port()),
    ]  # fmt: skip
    if "--runtime" not in extra:  # as root `up` would pick real pods; these labs are written for simulated ones
        extra = [*extra, "--runtime", "simulated"]
    up = subprocess.run(
        [sys.executable, "-m", "cluster", "up", "-d", *CLASSROOM_FLAGS, *ports, *extra, "--timeout", "90"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    server = f"http://127.0.0.1:{port}"
    try:
        assert up.returncode == 0, f"mini-k8s up failed:\n{up.stdout}\n{up.stderr}"
        yield LabCluster(workdir, env, server)
    finally:
        subprocess.run([sys.executable, "-m", "cluster", "down"], cwd=workdir, env=env, capture_output=True, timeout=60)
        _kill_leftovers(server)


def settled(cluster: LabCluster) -> bool:
    """Three Ready nodes without taints, and no pods in `default`: the state every lab starts from."""
    nodes = cluster.get("/api/v1/nodes")["items"]
    ready = [
        n
        for n in nodes
        if not n["spec"].get("taints")
        and any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions", []))
    ]
    pods = cluster.get("/api/v1/namespaces/default/pods")["items"]
    return len(ready) == 3 and not pods


def lab_id(path: Path) -> str:
    return path.stem


def run_document(path: Path, cluster: LabCluster) -> None:
    wait_for(lambda: settled(cluster), timeout=60, what="three Ready nodes and no pods before it")
    lab = parse_lab(path.read_text(), str(path.relative_to(REPO)))
    run = run_lab(lab, cwd=cluster.workdir, env=cluster.env)
    assert run.ok, run.describe()
    wait_for(lambda: settled(cluster), timeout=30, what="its clean-up to leave the cluster as it was")
