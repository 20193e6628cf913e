"""docker-compose.yml, checked without Docker (test_docker_engine.py runs it on a real engine).

Three layers, each catching what the one before cannot:
1. structure: the services, one image for every component, the one-shot `certs` before everything
   (`condition: service_completed_successfully`), `depends_on` with `condition: service_healthy`,
   a healthcheck on each, the API server's secure flags exactly `mini-k8s up --secure`'s, only its
   HTTPS port published, each component with its own kubeconfig on the `pki` volume;
2. flags: every service's `command` is parsed by its own CLI (`python -m <pkg> <args> --help`):
   click rejects an unknown option while parsing, before `--help` is acted on;
3. the stack itself: etcd from the `etcd` binary, the one-shot `certs`, then every component started
   from the compose file's *own* command, rewritten for one host (rules below), until three nodes
   are Ready - and every service's healthcheck command, rewritten the same way, passes against it;
   then the admin kubeconfig `certs` made reaches the API server over HTTPS, and the scheduler's
   kubeconfig is the scheduler's identity.

Rewrite rules (containers have their own network namespace, DNS and volumes; one host has none):
- `http://etcd:2379`       -> the test etcd's URL;
- `https://apiserver:6443` and `https://127.0.0.1:${MINI_K8S_API_PORT:-6443}` (admin.conf's)
                           -> https://127.0.0.1:<the API server's free secure port>;
- `/var/lib/mini-k8s/cluster` (the `pki` volume's mount point) -> a temporary directory;
- `--port N`, `--health-port N`, `--secure-port N` -> free ports per service (three kubelets
  cannot all have 10250); `--port=0` (the API server's: no plain port) stays 0;
- `--bind-address 0.0.0.0` -> 127.0.0.1 (tests listen on loopback only);
- `--metric-resolution 15s` -> 1s (metrics-server needs two scrapes for a rate: half a minute as
  written; the real-engine test runs it unchanged);
- `--address <service>`    -> 127.0.0.1 (a service name resolves only inside the compose network);
- a healthcheck's `127.0.0.1:N` -> 127.0.0.1:<that service's free port>.
Nothing else changes: node names, pod CIDRs, certificates' names, --leader-elect and so on run
exactly as written (the certificates name 127.0.0.1 too, so loopback passes TLS verification).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dnslib
import httpx
import pytest
import yaml

from client.kubeconfig import load_kubeconfig
from cluster.plan import ClusterOptions, _secure_apiserver_args
from tests.support.component import REPO, ComponentProcess, free_port, wait_for
from tests.support.etcd import EtcdProcess, etcd_binary

COMPOSE = REPO / "docker-compose.yml"
SCRIPTS = {  # console script -> the package it runs (pyproject's [project.scripts])
    "mini-apiserver": "apiserver",
    "mini-controller-manager": "controller_manager",
    "mini-scheduler": "scheduler",
    "mini-kubelet": "kubelet",
    "mini-cluster-dns": "cluster_dns",
    "mini-metrics-server": "metrics_server",
    "mini-k8s": "cluster",
    "mini-kube-proxy": "kube_proxy",
}
KUBELETS = ["kubelet-1", "kubelet-2", "kubelet-3"]
COMPONENTS = ["apiserver", "controller-manager", "scheduler", "cluster-dns", "metrics-server", *KUBELETS]
# kube-proxy programs the kernel's tables of its network namespace: on loopback that would be the
# host's, so the stack test below leaves it out; test_docker_engine.py runs it in its container
KUBE_PROXY = "kube-proxy"
# `mini-k8s certs`: first of all, makes the certificates and kubeconfigs, then exits;
# `mini-k8s addons`: runs once the DNS and metrics-server are healthy, then exits
ONE_SHOTS = ["certs", "addons"]
MOUNT = "/var/lib/mini-k8s/cluster"  # the `pki` volume, at the same path in every container
API_URL, ADMIN_URL = "https://apiserver:6443", "https://127.0.0.1:${MINI_K8S_API_PORT:-6443}"
CERTS_DONE = {"certs": {"condition": "service_completed_successfully"}}


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text())  # safe_load understands the `<<:` merge key
    return dict(doc["services"])


def flag(command: list[str], name: str) -> str | None:
    """The value of `--name=value` or `--name value` in a command line."""
    for i, arg in enumerate(command):
        if arg == name and i + 1 < len(command):
            return command[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def health_port(service: dict[str, Any]) -> int:
    match = re.search(r"127\.0\.0\.1:(\d+)/", " ".join(service["healthcheck"]["test"]))
    assert match, service["healthcheck"]
    return int(match.group(1))


# ------------------------------------------------------------------ 1. structure


def test_compose_runs_etcd_and_every_component_from_one_image(services: dict[str, Any]) -> None:
    assert set(services) == {"etcd", *COMPONENTS, KUBE_PROXY, *ONE_SHOTS}
    etcd_image = r"(gcr\.io/etcd-development/etcd|quay\.io/coreos/etcd):v3\.5\.\d+"
    assert re.fullmatch(etcd_image, services["etcd"]["image"])
    images = {(services[name].get("build"), services[name].get("image"))
              for name in [*COMPONENTS, KUBE_PROXY, *ONE_SHOTS]}  # fmt: skip
    assert images == {(".", "mini-k8s:latest")}
    dockerfile = (REPO / "Dockerfile").read_text()
    # python:3.11-slim unless the build names another base (the offline path: test_docker_engine.py)
    assert "ARG BASE_IMAGE=python:3.11-slim" in dockerfile and dockerfile.count("FROM ${BASE_IMAGE}") == 2
    assert 'pip install --no-compile --root /staging "$@" .' in dockerfile  # the sources, never a stale wheel
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".venv", ".git", ".mini-k8s", "tests"} <= set(ignored)  # the image holds sources only
    assert {services[name]["command"][0] for name in [*COMPONENTS, KUBE_PROXY, *ONE_SHOTS]} == set(SCRIPTS)


def test_each_service_starts_after_its_dependency_is_healthy_and_has_a_healthcheck(
    services: dict[str, Any],
) -> None:
    assert services["apiserver"]["depends_on"] == {**CERTS_DONE, "etcd": {"condition": "service_healthy"}}
    for name in [*COMPONENTS[1:], KUBE_PROXY]:
        assert services[name]["depends_on"] == {**CERTS_DONE, "apiserver": {"condition": "service_healthy"}}, name
    assert "depends_on" not in services["certs"] and "healthcheck" not in services["certs"]
    assert services["etcd"]["healthcheck"]["test"][:2] == ["CMD", "etcdctl"]
    for name in [*COMPONENTS, KUBE_PROXY]:
        check = services[name]["healthcheck"]
        assert check["test"][0] == "CMD" and {"interval", "timeout", "retries"} <= set(check), name
        # the check asks the port the component really serves it on (the API server: HTTPS only)
        command = services[name]["command"]
        served = flag(command, "--health-port") or flag(command, "--port")
        if name == "apiserver":
            served = flag(command, "--secure-port")
        if name == KUBE_PROXY:
            served = (flag(command, "--healthz-bind-address") or "").rpartition(":")[2]
        assert health_port(services[name]) == int(served or 0), name
    assert "/readyz" in " ".join(services["apiserver"]["healthcheck"]["test"])
    assert services["addons"]["command"][:2] == ["mini-k8s", "addons"]
    assert services["addons"]["depends_on"] == {name: {"condition": "service_healthy"}
                                                for name in ("cluster-dns", "metrics-server")}  # fmt: skip


def test_the_apiserver_uses_etcd_and_only_its_https_port_is_published(services: dict[str, Any]) -> None:
    api = services["apiserver"]
    # 6443 unless the variable says otherwise, and no plain port (it would bypass authentication)
    assert api["ports"] == ["${MINI_K8S_API_PORT:-6443}:6443"]
    assert flag(api["command"], "--etcd-servers") == "http://etcd:2379"
    assert flag(api["command"], "--bind-address") == "0.0.0.0"
    assert flag(api["command"], "--port") == "0" and flag(api["command"], "--secure-port") == "6443"
    # the secure flags are exactly `mini-k8s up --secure`'s, with the pki volume's files
    want = _secure_apiserver_args(ClusterOptions(data_dir=Path(MOUNT), secure_port=6443))
    got = [part for arg in api["command"][1:] for part in arg.split("=", 1)]
    for name, value in zip(want[::2], want[1::2], strict=True):
        assert flag(api["command"], name) == value, name
    assert set(got[::2]) - set(want[::2]) == {"--etcd-servers", "--bind-address", "--port"}


def test_each_component_uses_its_own_kubeconfig_from_the_certs_volume(services: dict[str, Any]) -> None:
    certs = services["certs"]["command"]
    assert certs[:2] == ["mini-k8s", "certs"] and flag(certs, "--dir") == MOUNT
    assert flag(certs, "--server") == API_URL and flag(certs, "--admin-server") == ADMIN_URL
    assert flag(certs, "--apiserver-name") == "apiserver"  # the certificate names what the components dial
    assert [a.split("=", 1)[1] for a in certs if a.startswith("--kubelet=")] == KUBELETS
    assert services["certs"]["volumes"] == [f"pki:{MOUNT}"]
    for name in [*COMPONENTS, KUBE_PROXY, "addons"]:  # read-only everywhere else
        assert services[name]["volumes"] == [f"pki:{MOUNT}:ro"], name
    identity = {"controller-manager": "controller-manager", "scheduler": "scheduler", "cluster-dns": "cluster-dns",
                "metrics-server": "metrics-server", KUBE_PROXY: "kube-proxy",
                **{k: f"kubelet-{k}" for k in KUBELETS}}  # fmt: skip
    for name, who in identity.items():
        command = services[name]["command"]
        assert flag(command, "--kubeconfig") == f"{MOUNT}/kubeconfigs/{who}.conf", name
        assert flag(command, "--master") is None, name  # never the plain port
    cm = services["controller-manager"]["command"]
    assert "--use-service-account-credentials" in cm
    assert flag(cm, "--service-account-private-key-file") == f"{MOUNT}/pki/sa.key"
    assert flag(cm, "--root-ca-file") == f"{MOUNT}/pki/ca.crt"
    for name in KUBELETS:
        command = services[name]["command"]
        assert flag(command, "--tls-cert-file") == f"{MOUNT}/pki/kubelet-{name}.crt", name
        assert flag(command, "--tls-private-key-file") == f"{MOUNT}/pki/kubelet-{name}.key", name
        assert flag(command, "--client-ca-file") == f"{MOUNT}/pki/ca.crt", name
        assert flag(command, "--authorization-mode") == "Webhook", name
    # `mini-k8s addons` as the administrator, at the API server's address on the compose network
    addons = services["addons"]["command"]
    assert flag(addons, "--kubeconfig") == f"{MOUNT}/admin.conf" and flag(addons, "--master") == API_URL
    assert "pki" in yaml.safe_load(COMPOSE.read_text())["volumes"]


def test_kube_proxy_may_program_its_network_namespace(services: dict[str, Any]) -> None:
    """nftables and routes need CAP_NET_ADMIN, which a container grants only to root; /proc/sys is
    read-only inside, so Docker sets the two sysctls kube-proxy would (kube_proxy/host.py)."""
    proxy = services[KUBE_PROXY]
    assert proxy["user"] == "root" and proxy["cap_add"] == ["NET_ADMIN"]
    assert proxy["sysctls"] == {"net.ipv4.ip_forward": 1, "net.ipv4.conf.all.route_localnet": 1}
    pod_cidrs = [flag(services[k]["command"], "--pod-cidr") for k in KUBELETS]
    cluster_cidr = ipaddress.ip_network(flag(proxy["command"], "--cluster-cidr") or "")
    assert all(ipaddress.ip_network(c or "").subnet_of(cluster_cidr) for c in pod_cidrs)  # type: ignore[arg-type]
    assert "nft" in (REPO / "Dockerfile").read_text()  # the image carries the nft program


def test_each_kubelet_is_one_node_named_after_its_container(services: dict[str, Any]) -> None:
    cidrs = set()
    for name in KUBELETS:
        cmd = services[name]["command"]
        assert flag(cmd, "--node-name") == flag(cmd, "--address") == services[name]["hostname"] == name
        assert flag(cmd, "--nodes") in (None, "1")
        assert services[name].get("restart") == "no"  # `docker compose stop kubelet-2` must stay stopped
        cidrs.add(flag(cmd, "--pod-cidr"))
    assert len(cidrs) == 3 and None not in cidrs


# ------------------------------------------------------------------ 2. every flag exists


def test_every_command_is_accepted_by_its_cli(services: dict[str, Any]) -> None:
    procs = {}
    for name in [*COMPONENTS, KUBE_PROXY, *ONE_SHOTS]:
        script, *args = services[name]["command"]
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", SCRIPTS[script], *args, "--help"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
        )  # fmt: skip
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "No such option" not in out, f"{name}: {out}"


def test_the_etcd_command_uses_only_flags_etcd_knows(services: dict[str, Any]) -> None:
    help_text = subprocess.run([etcd_binary(), "--help"], capture_output=True, text=True, timeout=30)
    known = help_text.stdout + help_text.stderr
    assert services["etcd"]["command"][0] == "etcd"
    for arg in services["etcd"]["command"][1:]:
        assert arg.split("=", 1)[0] in known, arg


# ------------------------------------------------------------------ 3. the stack, on loopback


def rewrite(command: list[str], urls: dict[str, str], port: int, health: int = 0, secure: int = 0) -> list[str]:
    """A compose command, made runnable on this host (the rules in the module docstring)."""
    values = {"--port": str(port), "--health-port": str(health), "--secure-port": str(secure),
              "--bind-address": "127.0.0.1", "--address": "127.0.0.1", "--metric-resolution": "1s"}  # fmt: skip
    out = []
    for arg in command:
        for compose_url, local_url in urls.items():
            arg = arg.replace(compose_url, local_url)
        name, eq, value = arg.partition("=")
        if eq and name in values and value != "0":
            arg = f"{name}={values[name]}"
        out.append(arg)
    for i, arg in enumerate(out[:-1]):  # the `--flag value` spelling
        if arg in values and out[i + 1] != "0":
            out[i + 1] = values[arg]
    return out


def test_rewrite_handles_both_flag_spellings() -> None:
    urls = {"http://etcd:2379": "http://127.0.0.1:1234"}
    spaced = ["--etcd-servers", "http://etcd:2379", "--port", "10250", "--address", "kubelet-1"]
    assert rewrite(spaced, urls, 99) == [
        "--etcd-servers", "http://127.0.0.1:1234", "--port", "99", "--address", "127.0.0.1",
    ]  # fmt: skip
    assert rewrite(["--etcd-servers=http://etcd:2379", "--port=10250", "--node-name=kubelet-1"], urls, 99) == [
        "--etcd-servers=http://127.0.0.1:1234", "--port=99", "--node-name=kubelet-1",
    ]  # fmt: skip
    assert rewrite(["--port=0", "--port", "0"], urls, 99) == ["--port=0", "--port", "0"]  # off stays off
    urls = {MOUNT: "/tmp/x", API_URL: "https://127.0.0.1:5678"}
    assert rewrite([f"--kubeconfig={MOUNT}/kubeconfigs/scheduler.conf", "--secure-port", "6443"], urls, 1, 2, 3) == [
        "--kubeconfig=/tmp/x/kubeconfigs/scheduler.conf", "--secure-port", "3",
    ]  # fmt: skip


def test_certs_keeps_the_ca_and_reissues_a_serving_certificate_that_lacks_a_name(tmp_path: Path) -> None:
    from cluster.certs_command import make_certs, parse_kubelet
    from cluster.pki import subject_alt_names as _sans

    kubelets = [parse_kubelet("kubelet-1"), parse_kubelet("node-2=10.0.0.12")]
    make_certs(tmp_path, API_URL, "https://127.0.0.1:6443", ["apiserver"], kubelets, "10.96.0.1")
    pki = tmp_path / "pki"
    ca, scheduler = (pki / "ca.crt").read_bytes(), (pki / "scheduler-client.crt").read_bytes()
    assert {"apiserver", "kubernetes.default.svc", "127.0.0.1", "10.96.0.1"} <= _sans(pki / "apiserver.crt")
    assert _sans(pki / "kubelet-node-2.crt") == {"node-2", "localhost", "10.0.0.12", "127.0.0.1"}
    make_certs(tmp_path, API_URL, "https://127.0.0.1:6443", ["apiserver", "10.1.2.3"], kubelets, "10.96.0.1")
    assert {"apiserver", "10.1.2.3"} <= _sans(pki / "apiserver.crt")  # issued again, by the same CA
    assert (pki / "ca.crt").read_bytes() == ca and (pki / "scheduler-client.crt").read_bytes() == scheduler


@pytest.fixture
def etcd() -> Iterator[EtcdProcess]:
    proc = EtcdProcess(etcd_binary())  # skips without etcd; fails under REQUIRE_ETCD=1
    try:
        yield proc.start()
    finally:
        proc.cleanup()


def test_the_stack_comes_up_from_the_compose_commands(
    services: dict[str, Any], etcd: EtcdProcess, tmp_path: Path
) -> None:
    ports = {name: free_port() for name in COMPONENTS}
    health = {name: free_port() if flag(services[name]["command"], "--health-port") else ports[name]
              for name in COMPONENTS}  # fmt: skip
    secure_port = free_port()
    health["apiserver"] = secure_port  # its only port
    secure_url = f"https://127.0.0.1:{secure_port}"
    urls = {"http://etcd:2379": etcd.url, API_URL: secure_url, ADMIN_URL: secure_url, MOUNT: str(tmp_path)}
    started: list[ComponentProcess] = []

    # the one-shot `certs` first, as compose runs it; a second run keeps every file (a second `up`)
    def certs() -> dict[Path, bytes]:
        script, *args = services["certs"]["command"]
        done = subprocess.run([sys.executable, "-m", SCRIPTS[script], *rewrite(args, urls, 0)],
                              capture_output=True, text=True, cwd=REPO, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    made = certs()
    assert certs() == made
    assert {"pki/apiserver.crt", "pki/kubelet-kubelet-1.crt", "kubeconfigs/kubelet-kubelet-1.conf",
            "kubeconfigs/scheduler.conf", "admin.conf"} <= {str(p.relative_to(tmp_path)) for p in made}  # fmt: skip

    def start(name: str) -> ComponentProcess:
        script, *args = services[name]["command"]
        proc = ComponentProcess(SCRIPTS[script], rewrite(args, urls, ports[name], health[name], secure_port))
        started.append(proc.start())
        return proc

    def running(proc: ComponentProcess) -> None:
        assert proc.running, f"{proc.module} exited:\n{proc.log_tail()}"

    # the test reads the API as the administrator, over HTTPS (there is no plain port)
    admin_http = httpx.Client(base_url=secure_url, timeout=5, verify=_admin_ssl(tmp_path / "admin.conf"))
    try:
        api = start("apiserver")
        wait_for(lambda: running(api) or admin_http.get("/readyz", timeout=2).status_code == 200,
                 timeout=30, what="the API server /readyz")  # fmt: skip
        assert api.proc is not None  # --port=0: HTTPS is the one port it listens on
        assert listening_ports(api.proc.pid) == {secure_port}, "the API server must serve no plain HTTP port"
        others = [start(name) for name in COMPONENTS[1:]]

        def three_ready_nodes() -> bool:
            for proc in others:
                running(proc)
            nodes = admin_http.get("/api/v1/nodes").json()["items"]
            ready = {
                n["metadata"]["name"]
                for n in nodes
                for c in n["status"]["conditions"]
                if c["type"] == "Ready" and c["status"] == "True"
            }
            return ready == set(KUBELETS)

        wait_for(three_ready_nodes, timeout=45, what="kubelet-1..3 Ready")

        # each node reports the address compose gives it (here rewritten to loopback) and its port
        for node in admin_http.get("/api/v1/nodes").json()["items"]:
            name = node["metadata"]["name"]
            assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == ports[name]
            assert node["spec"]["podCIDR"] == flag(services[name]["command"], "--pod-cidr")

        # every healthcheck, run as Docker would run it inside the container, passes
        for name in COMPONENTS:
            test = services[name]["healthcheck"]["test"]
            assert test[:2] == ["CMD", "python"]
            compose_addr, local_addr = (
                f"127.0.0.1:{health_port(services[name])}/",
                f"127.0.0.1:{health[name]}/",
            )
            cmd = [sys.executable, *(arg.replace(compose_addr, local_addr).replace(MOUNT, str(tmp_path))
                                     for arg in test[2:])]  # fmt: skip
            check = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=_no_proxy())
            assert check.returncode == 0, f"{name} healthcheck: {check.stderr}"

        # the cluster DNS answers for the API server's own Service
        question = dnslib.DNSRecord.question("kubernetes.default.svc.cluster.local")
        answer = dnslib.DNSRecord.parse(question.send("127.0.0.1", ports["cluster-dns"], timeout=5))
        assert [str(rr.rdata) for rr in answer.rr] == [_cluster_ip(admin_http, "default", "kubernetes")]

        # the one-shot `addons` points the cluster at the DNS and metrics-server (rewritten to loopback)
        where = {f"{name}:{flag(services[name]['command'], '--port')}": f"127.0.0.1:{ports[name]}"
                 for name in ("cluster-dns", "metrics-server")}  # fmt: skip
        script, *args = services["addons"]["command"]
        done = subprocess.run([sys.executable, "-m", SCRIPTS[script], *rewrite(args, {**urls, **where}, 0)],
                              capture_output=True, text=True, cwd=REPO, timeout=90, env=_no_proxy())  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "✓ cluster DNS: Service kube-dns, Endpoints kube-dns" in done.stdout
        assert _cluster_ip(admin_http, "kube-system", "kube-dns") == "10.96.0.10"
        endpoints = admin_http.get("/api/v1/namespaces/kube-system/endpoints/kube-dns").json()
        assert {p["port"] for p in endpoints["subsets"][0]["ports"]} == {ports["cluster-dns"]}
        node_metrics = "/apis/metrics.k8s.io/v1beta1/nodes"  # through the aggregator to metrics-server
        wait_for(lambda: len(admin_http.get(node_metrics).json().get("items") or []) == 3, timeout=60,
                 interval=0.5, what="node metrics for kubelet-1..3")  # fmt: skip

        # the way a student checks it, over HTTPS: `mini-kubectl get nodes` with the admin kubeconfig
        # `certs` made (the host's); and the scheduler's, which is the scheduler's identity, allowed
        # to bind pods and refused Secrets
        def kubectl_as(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "kubectl", "--kubeconfig", str(kubeconfig), *args],
                                  capture_output=True, text=True, cwd=REPO, timeout=60, env=_no_proxy())  # fmt: skip

        admin = kubectl_as(tmp_path / "admin.conf", "get", "nodes")
        assert admin.returncode == 0, admin.stdout + admin.stderr
        lines = admin.stdout.splitlines()
        assert lines[0].split()[:2] == ["NAME", "STATUS"]
        assert sorted(line.split()[:2] for line in lines[1:]) == [[n, "Ready"] for n in KUBELETS]
        scheduler = tmp_path / "kubeconfigs" / "scheduler.conf"
        whoami = kubectl_as(scheduler, "auth", "whoami", "-o", "json")
        assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == "system:kube-scheduler"
        can_bind = kubectl_as(scheduler, "auth", "can-i", "create", "pods", "--subresource", "binding")
        assert can_bind.stdout.strip() == "yes", can_bind.stdout + can_bind.stderr
        refused = kubectl_as(scheduler, "get", "secrets", "-A")
        assert refused.returncode != 0 and "forbidden" in refused.stderr.lower(), refused.stdout + refused.stderr
        # `kubectl logs` through the kubelet's HTTPS (the API server presents apiserver-kubelet-client)
        applied = kubectl_as(tmp_path / "admin.conf", "create", "-f", str(REPO / "examples" / "mysql-rc-svc.yaml"))
        assert applied.returncode == 0, applied.stdout + applied.stderr

        def mysql_logs() -> bool:
            pods = kubectl_as(tmp_path / "admin.conf", "get", "pods", "-l", "app=mysql", "-o", "name").stdout.split()
            logs = kubectl_as(tmp_path / "admin.conf", "logs", pods[0]) if pods else None
            return logs is not None and "Starting container mysql" in logs.stdout

        wait_for(mysql_logs, timeout=60, interval=0.5, what="the mysql pod's logs through its kubelet")
    finally:
        admin_http.close()
        for proc in reversed(started):
            proc.stop()


def _admin_ssl(admin_conf: Path) -> ssl.SSLContext:
    """The CA to trust and the client certificate to present, from the admin kubeconfig `certs` wrote."""
    return load_kubeconfig(admin_conf).credentials().ssl_context()


def listening_ports(pid: int) -> set[int]:
    """The TCP ports a process listens on: its socket inodes (/proc/<pid>/fd) found in the kernel's
    tables in state LISTEN (0A)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _cluster_ip(http: httpx.Client, namespace: str, name: str) -> str:
    service = http.get(f"/api/v1/namespaces/{namespace}/services/{name}").json()
    return str(service["spec"]["clusterIP"])


def _no_proxy() -> dict[str, str]:
    proxies = ("http_proxy", "https_proxy", "all_proxy")
    return {k: v for k, v in os.environ.items() if k.lower() not in proxies}
