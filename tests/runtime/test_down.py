"""`mini-k8s up --runtime process` runs real containers; `mini-k8s down` leaves none behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from tests.runtime.conftest import random_pod_cidr
from tests.runtime.test_process_runtime import CGROUP_ROOTS
from tests.support.component import REPO, free_port, wait_for
from tests.support.kubectl import kubectl_binary


def test_down_removes_every_container_process_and_cgroup(tmp_path: Path) -> None:
    kubectl = kubectl_binary()
    data, kubeconfig = tmp_path / "data", tmp_path / "kubeconfig"
    port = free_port()
    table = f"mkp-{uuid.uuid4().hex[:6]}"  # not the default table, which the user's own cluster may be using
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), NO_PROXY="127.0.0.1,localhost")
    up = [sys.executable, "-m", "cluster", "up", "-d", "--runtime", "process", "--data-dir", str(data),
          "--port", str(port), "--nodes", "1", "--controller-manager-port", str(free_port()),
          "--scheduler-port", str(free_port()), "--kubelet-port", str(free_port()), "--timeout", "45",
          "--dns-port", str(free_port()), "--dns-health-port", str(free_port()),
          "--metrics-server-port", str(free_port()), "--kube-proxy-port", str(free_port()),
          "--pod-startup-delay", "0", "--kubeconfig", str(kubeconfig),
          f"--kubelet-arg=--pod-cidr={random_pod_cidr()}", f"--kube-proxy-arg=--nftables-table={table}"]  # fmt: skip
    down = [sys.executable, "-m", "cluster", "down", "--data-dir", str(data)]
    out = subprocess.run(up, capture_output=True, text=True, env=env, cwd=REPO, timeout=90)
    try:
        assert out.returncode == 0, out.stdout + out.stderr
        url = f"http://127.0.0.1:{port}"
        run = subprocess.run([kubectl, "-s", url, "run", "keep", "--image=busybox", "--", "sh", "-c",
                              "sleep 3600 & sleep 3600"], capture_output=True, text=True, env=env)  # fmt: skip
        assert run.returncode == 0, run.stderr

        def running_id() -> str | None:
            pod = httpx.get(f"{url}/api/v1/namespaces/default/pods/keep").json()
            statuses = pod.get("status", {}).get("containerStatuses") or [{}]
            ok = statuses[0].get("state", {}).get("running")
            return statuses[0]["containerID"].split("://", 1)[1] if ok else None

        cid = wait_for(running_id, timeout=30, what="the pod running")
        node_root = data / "kubelet" / "node-1"
        root = node_root / "containers"
        assert json.loads((root / cid / "meta.json").read_text())["pod"] == "keep"
        uid = httpx.get(f"{url}/api/v1/namespaces/default/pods/keep").json()["metadata"]["uid"]
        veth = json.loads((node_root / "sandboxes" / f"{uid}.json").read_text())["veth"]
        bridge = json.loads((node_root / "bridge").read_text())["bridge"]
        network = [Path(f"/var/run/netns/mk-{uid}"), Path(f"/sys/class/net/{veth}"), Path(f"/sys/class/net/{bridge}")]
        assert all(p.exists() for p in network)
        listed = subprocess.run(["nft", "list", "table", "ip", table], capture_output=True, text=True)
        assert "rules for mini-kube-proxy" in listed.stdout, listed.stderr
        # a kube-proxy killed outright cannot remove its table: `down` must
        proxy = next(c for c in json.loads((data / "run" / "cluster.json").read_text())["components"]
                     if c["kind"] == "kube-proxy")  # fmt: skip
        os.kill(proxy["pid"], signal.SIGKILL)
    finally:
        stopped = subprocess.run(down, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert "removed 1 container(s)" in stopped.stdout
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    left = [line for line in ps.splitlines() if cid in line or str(data) in line]
    left += [str(p) for p in [root / cid, *(r / cid for r in CGROUP_ROOTS), *network] if p.exists()]
    assert left == []
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    assert f"table ip {table}" not in tables
