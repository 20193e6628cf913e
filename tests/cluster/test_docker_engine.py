"""docker-compose.yml on a real Docker engine, offline: build the images, `up`, the node-failure lab, `down`.

tests/cluster/test_compose.py proves every command of the compose file on one host without Docker;
this file proves the file itself on an engine: Debian's dockerd (docker.io) and docker-compose 1.29,
both started and driven exactly as a student would on a machine with no registry
(tests/support/dockerd.py says how the engine is kept private and how the images are made).

The compose file runs unchanged; the only inputs are the variables it documents
(`MINI_K8S_API_PORT`, `MINI_K8S_DNS_PORT`, so the test's stack never takes a port from a `make up`
cluster or a user's own compose stack) and a project name of its own. The cluster is the secure
one: kubectl gets admin.conf the way the compose file's header tells users to (`exec -T apiserver
cat …`) and speaks HTTPS with the admin certificate; the components run as themselves.

Skipped with the reason when the machine cannot run an engine; CI sets REQUIRE_DOCKER=1, where a
skip is a failure. The measures (build and run times, image size) are printed and recorded as
properties of the test in the JUnit report, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import dnslib
import pytest

from tests.support import dockerd
from tests.support.component import REPO, free_port, wait_for
from tests.support.kubectl import kubectl_binary

ETCD_IMAGE = "gcr.io/etcd-development/etcd:v3.5.17"  # the names docker-compose.yml uses
PROJECT_IMAGE = "mini-k8s:latest"
GRACE = 40.0  # the controller-manager's default --node-monitor-grace-period, which compose keeps


@pytest.fixture(scope="module")
def engine() -> Iterator[dockerd.Dockerd]:
    missing = dockerd.missing_tools()
    if missing:
        reason = "cannot run a Docker engine here: missing " + ", ".join(missing)
        if os.environ.get("REQUIRE_DOCKER") == "1":
            pytest.fail(reason + " (REQUIRE_DOCKER=1; .ci/run installs docker.io docker-compose debootstrap)")
        pytest.skip(reason)
    engine = dockerd.Dockerd().start()
    try:
        yield engine
    finally:
        engine.stop()
        engine.remove()


PKI_DIR = "/var/lib/mini-k8s/cluster"  # where docker-compose.yml mounts the `pki` volume


class Kubectl:
    def __init__(self, kubeconfig: str, home: Path) -> None:
        self.home = home  # its config holds the admin's private key: a tmp_path, which pytest removes
        (self.home / "config").write_text(kubeconfig)
        self.base = [kubectl_binary(), "--cache-dir", str(self.home / "cache")]
        self.env = {**os.environ, "KUBECONFIG": str(self.home / "config")}  # never the user's own config

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, env=self.env, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def json(self, *args: str) -> dict:  # type: ignore[type-arg]
        return json.loads(self(*args, "-o", "json").stdout)


def node_ready(kubectl: Kubectl) -> dict[str, str]:
    """Each node's Ready condition status ("True", "False", "Unknown")."""
    ready = {}
    for node in kubectl.json("get", "nodes")["items"]:
        conditions = node["status"].get("conditions", [])
        ready[node["metadata"]["name"]] = next((c["status"] for c in conditions if c["type"] == "Ready"), "")
    return ready


def ask_dns(port: int, name: str) -> list[str]:
    """A records for `name` from the cluster DNS published on 127.0.0.1:port (UDP)."""
    packet = dnslib.DNSRecord.question(name).send("127.0.0.1", port, timeout=2)
    return [str(rr.rdata) for rr in dnslib.DNSRecord.parse(packet).rr if rr.rtype == dnslib.QTYPE.A]


@pytest.mark.timeout(1200)
def test_compose_up_builds_offline_runs_the_seed_rc_and_the_node_failure_lab(
    engine: dockerd.Dockerd, record_property: pytest.RecordProperty, tmp_path: Path
) -> None:
    measures: dict[str, object] = {"storage_driver": engine.storage_driver}
    started = time.monotonic()
    dockerd.build_base_image(engine)
    dockerd.build_etcd_image(engine, ETCD_IMAGE)
    measures["base_and_etcd_images_s"] = round(time.monotonic() - started, 1)
    mark = time.monotonic()
    dockerd.build_project_image(engine, PROJECT_IMAGE)
    measures["project_image_build_s"] = round(time.monotonic() - mark, 1)
    measures["project_image_mb"] = round(dockerd.image_size(engine, PROJECT_IMAGE) / 1e6)

    api_port, dns_port = free_port(), free_port()
    env = {"MINI_K8S_API_PORT": str(api_port), "MINI_K8S_DNS_PORT": str(dns_port),
           "COMPOSE_PROJECT_NAME": f"mk-engine-test-{os.getpid()}"}  # fmt: skip
    engine.compose("config", "-q", env=env)
    mark = time.monotonic()
    try:
        engine.compose("up", "-d", "--no-build", env=env)
        # The one-shot `certs` made the CA, every certificate and kubeconfig, and admin.conf for the host.
        admin_conf = engine.compose("exec", "-T", "apiserver", "cat", f"{PKI_DIR}/admin.conf", env=env).stdout
        assert f"server: https://127.0.0.1:{api_port}" in admin_conf and "client-key-data" in admin_conf
        kubectl = Kubectl(admin_conf, tmp_path)

        # Only HTTPS is published, and there is no plain port (--port=0) to leave unpublished.
        api_cid = engine.compose("ps", "-q", "apiserver", env=env).stdout.strip()
        published = json.loads(engine.docker("inspect", "-f", "{{json .NetworkSettings.Ports}}", api_cid).stdout)
        assert {port for port, binding in published.items() if binding} == {"6443/tcp"}, published

        # Three nodes Ready, seen from the host through the published HTTPS port by the real kubectl.
        wait_for(lambda: node_ready(kubectl) == {f"kubelet-{i}": "True" for i in (1, 2, 3)}, timeout=180,
                 interval=1, what="three Ready nodes")  # fmt: skip
        measures["up_to_three_ready_nodes_s"] = round(time.monotonic() - mark, 1)

        # The seed's RC runs; `kubectl logs` reaches its kubelet by the container's name.
        kubectl("create", "-f", str(REPO / "examples" / "mysql-rc-svc.yaml"))
        wait_for(lambda: kubectl.json("get", "rc", "mysql")["status"].get("readyReplicas") == 1, timeout=180,
                 interval=0.5, what="the mysql RC's pod ready")  # fmt: skip
        pod = kubectl("get", "pods", "-l", "app=mysql", "-o", "name").stdout.split()[0]
        assert "Starting container mysql" in kubectl("logs", pod).stdout  # through the kubelet's HTTPS

        # Each component runs as itself: the scheduler's own kubeconfig, from inside its container,
        # is system:kube-scheduler, which RBAC lets schedule pods but not read Secrets.
        def in_scheduler(*args: str) -> subprocess.CompletedProcess[str]:
            return engine.compose("exec", "-T", "scheduler", "mini-kubectl", "--kubeconfig",
                                  f"{PKI_DIR}/kubeconfigs/scheduler.conf", *args, env=env, check=False)  # fmt: skip

        whoami = in_scheduler("auth", "whoami", "-o", "json")
        assert whoami.returncode == 0, whoami.stdout + whoami.stderr
        assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == "system:kube-scheduler"
        assert in_scheduler("auth", "can-i", "create", "pods", "--subresource=binding").stdout.strip() == "yes"
        assert in_scheduler("auth", "can-i", "list", "secrets", "-A").stdout.strip() == "no"
        refused = in_scheduler("get", "secrets", "-A")
        assert refused.returncode != 0 and "forbidden" in refused.stderr.lower(), refused.stdout + refused.stderr

        # The cluster DNS, published on the host, answers for the seed's Service with its ClusterIP.
        cluster_ip = kubectl.json("get", "svc", "mysql")["spec"]["clusterIP"]
        wait_for(lambda: ask_dns(dns_port, "mysql.default.svc.cluster.local") == [cluster_ip], timeout=30,
                 interval=0.5, what="the DNS answer for mysql")  # fmt: skip

        # The one-shot `addons` service ran and exited 0; the metrics API answers `kubectl top nodes`
        # through the API server's aggregator, and kube-dns has its tenth-address ClusterIP.
        def addons_state() -> str:
            cid = engine.compose("ps", "-q", "addons", env=env).stdout.strip()
            return engine.docker("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", cid).stdout.strip()

        wait_for(lambda: addons_state() == "exited 0", timeout=60, interval=1, what="the addons one-shot done")
        assert kubectl.json("get", "svc", "-n", "kube-system", "kube-dns")["spec"]["clusterIP"] == "10.96.0.10"
        assert ask_dns(dns_port, "kube-dns.kube-system.svc.cluster.local") == ["10.96.0.10"]

        def top_nodes() -> list[str]:
            done = kubectl("top", "nodes", "--no-headers", check=False)
            return sorted(line.split()[0] for line in done.stdout.splitlines()) if done.returncode == 0 else []

        wait_for(lambda: top_nodes() == ["kubelet-1", "kubelet-2", "kubelet-3"], timeout=90, interval=2,
                 what="kubectl top nodes")  # fmt: skip

        # kube-proxy's rules, in its container's network namespace, carry packets: kube-dns's
        # ClusterIP to the cluster-dns container, the `kubernetes` ClusterIP to the API server's.
        rules = engine.compose("exec", "-T", "kube-proxy", "nft", "list", "table", "ip", "mini-kube-proxy", env=env)
        assert "10.96.0.10" in rules.stdout and "service-ips" in rules.stdout, rules.stdout[:2000]
        through_services = (
            "import dnslib, ssl, urllib.request\n"
            "q = dnslib.DNSRecord.question('kubernetes.default.svc.cluster.local').send('10.96.0.10', 53, timeout=3)\n"
            "print(*[str(rr.rdata) for rr in dnslib.DNSRecord.parse(q).rr])\n"
            f"tls = ssl.create_default_context(cafile='{PKI_DIR}/pki/ca.crt')\n"
            "print(urllib.request.urlopen('https://10.96.0.1/readyz', timeout=3, context=tls).read().decode())\n"
        )

        def from_kube_proxy() -> list[str]:
            done = engine.compose("exec", "-T", "kube-proxy", "python", "-c", through_services, env=env, check=False)
            return done.stdout.split() if done.returncode == 0 else [done.stderr]

        wait_for(lambda: from_kube_proxy() == ["10.96.0.1", "ok"], timeout=60, interval=1,
                 what="DNS and the API server through kube-proxy's rules")  # fmt: skip

        # The lab: a stopped kubelet container stops heartbeating and its node goes NotReady (Unknown).
        engine.compose("stop", "kubelet-2", env=env)
        wait_for(lambda: node_ready(kubectl) == {"kubelet-1": "True", "kubelet-2": "Unknown", "kubelet-3": "True"},
                 timeout=GRACE + 60, interval=1, what="kubelet-2 NotReady")  # fmt: skip
        engine.compose("start", "kubelet-2", env=env)
        wait_for(lambda: node_ready(kubectl)["kubelet-2"] == "True", timeout=60, interval=1, what="kubelet-2 back")
    finally:
        engine.compose("down", "-v", env=env)
    assert engine.docker("ps", "-aq").stdout.strip() == ""
    assert engine.docker("volume", "ls", "-q").stdout.strip() == ""
    measures["test_s"] = round(time.monotonic() - started, 1)
    for key, value in measures.items():
        record_property(key, value)
    print("docker engine measures:", json.dumps(measures))


def test_stopping_the_engine_leaves_nothing_on_the_host(engine: dockerd.Dockerd) -> None:
    engine.stop()
    assert engine.leftovers() == []
