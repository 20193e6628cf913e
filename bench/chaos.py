"""Chaos: SIGKILL every component of a running cluster in turn, mid-rollout, and check nothing breaks.

Run: `.venv/bin/python bench/chaos.py [--pods 500] [--backend etcd|sqlite]`. Prints one JSON
document and exits 1 when an invariant was broken. tests/chaos/test_chaos_short.py runs it small.

The cluster is real processes on free loopback ports (the test-support launchers): with the etcd
backend a three-member etcd cluster and `--etcd-servers a,b,c`; one API server; a
controller-manager and a scheduler (leader election on, short leases, as a real control plane
runs them); two kubelets simulating nodes. One Deployment of `--pods` replicas (maxSurge 25%).

For each victim in turn — API server, controller-manager, scheduler, a kubelet, an etcd member
(the leader) — we start a rolling update (a new image), wait until it is under way, SIGKILL the
victim, start it again at once, and time how long the rollout takes to complete from the kill
(`converged_s`). All along, checked continuously:
- active pods of the Deployment (neither finished nor being deleted) ≤ replicas + maxSurge, seen
  through a watch (every change, not samples), which re-lists when it has to;
- a writer creates ConfigMaps without pause; every create answered 201 must exist at the end
  (answers 503/504 while the API server or etcd is down are counted, not required to exist);
- every rollout completes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

import httpx  # noqa: E402

from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, free_port  # noqa: E402
from tests.support.etcd import EtcdCluster  # noqa: E402

NS = "default"
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
PODS = f"/api/v1/namespaces/{NS}/pods"
CM = f"/api/v1/namespaces/{NS}/configmaps"
NAME = "chaos"


def lease_flags(duration: float) -> list[str]:
    """Leader election with a lease of `duration` seconds (renew within 75%, retry every 15%).

    Short leases make a killed leader's successor take over sooner, but a leader that cannot renew
    in time (a busy machine, the API server down) exits: the supervisor restarts it, and counts.
    """
    return ["--leader-elect", "--leader-elect-lease-duration", f"{duration}s",
            "--leader-elect-renew-deadline", f"{duration * 0.75}s",
            "--leader-elect-retry-period", f"{duration * 0.15}s"]  # fmt: skip

KUBELET_FAST = ["--pod-startup-delay", "0.2", "--node-status-update-frequency", "0.5",
                "--container-stop-delay", "0.1"]  # fmt: skip


def _active(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


class PodCounter(threading.Thread):
    """Watches the Deployment's pods through every outage; remembers the most active at once."""

    def __init__(self, url: str, limit: int) -> None:
        super().__init__(daemon=True)
        self.url, self.limit = url, limit
        self.pods: dict[str, bool] = {}
        self.max_active = 0
        self.violations: list[str] = []
        self.relists = 0
        self.stop = threading.Event()

    def _count(self) -> None:
        active = sum(self.pods.values())
        self.max_active = max(self.max_active, active)
        if active > self.limit and len(self.violations) < 20:
            self.violations.append(f"{active} active pods > {self.limit}")

    def run(self) -> None:
        rv = ""
        with httpx.Client(base_url=self.url, timeout=httpx.Timeout(5.0, read=30.0)) as client:
            while not self.stop.is_set():
                try:
                    if not rv:
                        listed = client.get(PODS, params={"labelSelector": f"app={NAME}"}).raise_for_status().json()
                        self.pods = {p["metadata"]["name"]: _active(p) for p in listed["items"]}
                        rv = listed["metadata"]["resourceVersion"]
                        self.relists += 1
                        self._count()
                    params = {"watch": "1", "resourceVersion": rv, "labelSelector": f"app={NAME}",
                              "allowWatchBookmarks": "true", "timeoutSeconds": "30"}  # fmt: skip
                    with client.stream("GET", PODS, params=params) as resp:
                        resp.raise_for_status()
                        for line in resp.iter_lines():
                            if self.stop.is_set():
                                return
                            if not line:
                                continue
                            ev = json.loads(line)
                            if ev["type"] == "ERROR":  # 410: resume impossible, list again
                                rv = ""
                                break
                            obj = ev["object"]
                            rv = obj["metadata"]["resourceVersion"]
                            if ev["type"] == "BOOKMARK":
                                continue
                            if ev["type"] == "DELETED":
                                self.pods.pop(obj["metadata"]["name"], None)
                            else:
                                self.pods[obj["metadata"]["name"]] = _active(obj)
                            self._count()
                except (httpx.HTTPError, ValueError, KeyError):
                    time.sleep(0.1)  # the API server is down or restarting: try again shortly


class Writer(threading.Thread):
    """Creates ConfigMaps without pause; remembers which were acknowledged (201)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.acked: list[str] = []
        self.failed: dict[int, int] = {}  # status (0 = no answer) -> count
        self.stop = threading.Event()

    def run(self) -> None:
        i = 0
        with httpx.Client(base_url=self.url, timeout=10.0) as client:
            while not self.stop.is_set():
                name = f"w-{i}"
                i += 1
                try:
                    r = client.post(CM, json={"metadata": {"name": name}})
                    code = r.status_code
                except httpx.HTTPError:
                    code = 0
                if code == 201:
                    self.acked.append(name)
                else:
                    self.failed[code] = self.failed.get(code, 0) + 1
                    time.sleep(0.05)  # nobody answers (right now): do not spin
                time.sleep(0.02)


def wait_for(cond: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except (httpx.HTTPError, ValueError, KeyError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


class Cluster:
    def __init__(self, backend: str, pods: int, lease: float) -> None:
        self.etcd = EtcdCluster() if backend == "etcd" else None
        if self.etcd:
            self.etcd.start()
        self.api = APIServerProcess(etcd_url=self.etcd.endpoints if self.etcd else None,
                                    args=["--etcd-request-timeout", "2"] if self.etcd else [])
        self.api.start()
        url = self.api.url
        cm_port, sched_port = free_port(), free_port()
        self.manager = ComponentProcess("controller_manager", [
            "--master", url, "--port", str(cm_port), "--controllers", "replicaset,deployment",
            "--deployment-controller-sync-period", "1s", "--informer-backoff-max", "1s",
            "--kube-api-qps", "500", "--kube-api-burst", "1000", *lease_flags(lease)], health_port=cm_port)  # fmt: skip
        self.scheduler = ComponentProcess("scheduler", [
            "--master", url, "--port", str(sched_port), "--kube-api-qps", "500", "--kube-api-burst", "1000",
            *lease_flags(lease)], health_port=sched_port)  # fmt: skip
        nodes = max(2, math.ceil(pods * 1.5 / 100))  # two kubelets, 100 pods per node at most
        self.kubelets = []
        for k in range(2):
            port = free_port()
            self.kubelets.append(ComponentProcess("kubelet", [
                "--master", url, "--node-name", f"chaos{k}", "--nodes", str(nodes), "--port", str(port),
                "--kube-api-qps", "500", "--kube-api-burst", "1000", *KUBELET_FAST], health_port=port))  # fmt: skip
        for c in (self.manager, self.scheduler, *self.kubelets):
            c.start(timeout=60)
        # The supervisor (what systemd or the kubelet is to a real control plane): a component
        # that exits is started again. A controller-manager or scheduler exits by design when it
        # loses its lease, e.g. while the API server is down.
        self.lock = threading.Lock()
        self.supervisor_restarts: dict[str, int] = {}
        self.stopping = threading.Event()
        threading.Thread(target=self._supervise, daemon=True).start()

    def _supervise(self) -> None:
        while not self.stopping.wait(0.2):
            with self.lock:
                for c in (self.manager, self.scheduler, *self.kubelets):
                    if not c.running and not self.stopping.is_set():
                        self.supervisor_restarts[c.module] = self.supervisor_restarts.get(c.module, 0) + 1
                        try:
                            c.start(timeout=60)
                        except (RuntimeError, AssertionError):
                            pass  # exited again at once (API server still down): next round

    def cleanup(self) -> None:
        self.stopping.set()
        with self.lock:  # not while the supervisor is starting one
            for c in (*self.kubelets, self.scheduler, self.manager):
                c.stop()
        self.api.cleanup()
        if self.etcd:
            self.etcd.cleanup()


def rollout_done(client: httpx.Client, image: str, replicas: int) -> bool:
    d = client.get(f"{DEPLOY}/{NAME}").raise_for_status().json()
    st = d["status"]
    return bool(
        d["spec"]["template"]["spec"]["containers"][0]["image"] == image
        and st.get("observedGeneration") == d["metadata"]["generation"]
        and st.get("updatedReplicas") == st.get("availableReplicas") == st.get("replicas") == replicas
    )


def set_image(client: httpx.Client, image: str) -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}
    for _ in range(100):  # the API server may be restarting
        try:
            client.patch(f"{DEPLOY}/{NAME}", json=patch,
                         headers={"Content-Type": "application/strategic-merge-patch+json"}).raise_for_status()
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("could not update the Deployment's image")


def kill_and_restart(cluster: Cluster, victim: str) -> float:
    """SIGKILL `victim` and start it again; return the seconds until it serves again."""
    with cluster.lock:
        return _kill_and_restart(cluster, victim)


def _kill_and_restart(cluster: Cluster, victim: str) -> float:
    started = time.monotonic()
    if victim == "apiserver":
        cluster.api.kill()
        cluster.api.start()
    elif victim == "etcd":
        assert cluster.etcd is not None
        member = cluster.etcd.leader()
        member.kill()
        member.start()
    else:
        proc = {"controller-manager": cluster.manager, "scheduler": cluster.scheduler,
                "kubelet": cluster.kubelets[0]}[victim]  # fmt: skip
        proc.kill()
        proc.start(timeout=60)
    return time.monotonic() - started


def run(pods: int, backend: str, timeout: float, lease: float) -> dict[str, Any]:
    surge = math.ceil(pods * 0.25)
    cluster = Cluster(backend, pods, lease)
    counter = PodCounter(cluster.api.url, pods + surge)
    writer = Writer(cluster.api.url)
    report: dict[str, Any] = {"backend": backend, "pods": pods, "max_surge": surge, "lease_s": lease, "kills": []}
    try:
        with httpx.Client(base_url=cluster.api.url, timeout=10.0) as client:
            body = {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": NAME},
                "spec": {
                    "replicas": pods, "selector": {"matchLabels": {"app": NAME}},
                    "strategy": {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                    "template": {"metadata": {"labels": {"app": NAME}},
                                 "spec": {"containers": [{"name": "c", "image": "img:v0"}]}},
                },
            }  # fmt: skip
            client.post(DEPLOY, json=body).raise_for_status()
            counter.start()
            writer.start()
            t0 = time.monotonic()
            wait_for(lambda: rollout_done(client, "img:v0", pods), timeout, "the first rollout")
            report["initial_rollout_s"] = round(time.monotonic() - t0, 2)
            victims = ["apiserver", "controller-manager", "scheduler", "kubelet"]
            if backend == "etcd":
                victims.append("etcd")
            for k, victim in enumerate(victims, start=1):
                image = f"img:v{k}"
                set_image(client, image)
                # Mid-rollout: some new pods exist, the old ones are not all gone.
                wait_for(lambda: client.get(f"{DEPLOY}/{NAME}").json()["status"].get("updatedReplicas", 0)
                         >= max(1, pods // 5), timeout, f"the rollout to {image} to start")  # fmt: skip
                killed = time.monotonic()
                back = kill_and_restart(cluster, victim)
                wait_for(lambda i=image: rollout_done(client, i, pods), timeout, f"the rollout to {image}")
                report["kills"].append({"component": victim, "restart_s": round(back, 2),
                                        "converged_s": round(time.monotonic() - killed, 2)})  # fmt: skip
            writer.stop.set()
            writer.join(15)
            listed = client.get(CM).raise_for_status().json()["items"]
            present = {i["metadata"]["name"] for i in listed}
            lost = [n for n in writer.acked if n not in present]
            wait_for(lambda: counter.pods and sum(counter.pods.values()) == pods, 30, "the watch to settle")
        report.update({
            "limit_active": pods + surge,
            "max_active": counter.max_active,
            "surge_violations": counter.violations,
            "pod_watch_relists": counter.relists,
            "acknowledged_writes": len(writer.acked),
            "failed_writes_by_status": {str(k): v for k, v in sorted(writer.failed.items())},
            "lost_acknowledged_writes": lost[:20],
            "rollouts_completed": len(report["kills"]) + 1,
            "supervisor_restarts": cluster.supervisor_restarts,
        })
        report["ok"] = not counter.violations and not lost
        return report
    except Exception as exc:  # report what happened, and the component logs that explain it
        report["ok"] = False
        report["error"] = str(exc)
        report["logs"] = {"apiserver": cluster.api.log_tail(15), "controller-manager": cluster.manager.log_tail(15)}
        return report
    finally:
        counter.stop.set()
        writer.stop.set()
        cluster.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=500, help="replicas of the Deployment")
    parser.add_argument("--backend", choices=["etcd", "sqlite"], default="etcd")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds each rollout may take")
    parser.add_argument("--lease-duration", type=float, default=8.0, help="leader-election lease, seconds")
    args = parser.parse_args(argv)
    started = time.monotonic()
    report = run(args.pods, args.backend, args.timeout, args.lease_duration)
    report["total_s"] = round(time.monotonic() - started, 1)
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
