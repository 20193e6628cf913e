"""Small synchronous API helpers for the controller tests: paths, objects, and a simulated kubelet."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess

Obj = dict[str, Any]


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Cluster:
    api: APIServerProcess
    cm: ComponentProcess
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = self.api.client()

    # -- raw verbs ---------------------------------------------------------------------------
    def get(self, path: str) -> Obj | None:
        r = self.http.get(path)
        if r.status_code == 404:
            return None
        r.raise_for_status()
        return r.json()

    def items(self, path: str) -> list[Obj]:
        return (self.get(path) or {}).get("items") or []

    def post(self, path: str, body: Obj) -> Obj:
        r = self.http.post(path, json=body)
        assert r.status_code in (200, 201), r.text
        return r.json()

    def put(self, path: str, body: Obj) -> Obj:
        r = self.http.put(path, json=body)
        assert r.status_code == 200, r.text
        return r.json()

    def patch(self, path: str, body: Obj) -> Obj:
        r = self.http.patch(path, json=body, headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200, r.text
        return r.json()

    def delete(self, path: str, **options: Any) -> httpx.Response:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", **options}
        r = self.http.request("DELETE", path, json=body)
        assert r.status_code in (200, 202), r.text
        return r

    def events(self, namespace: str, reason: str) -> list[Obj]:
        return [e for e in self.items(f"/api/v1/namespaces/{namespace}/events") if e.get("reason") == reason]

    # -- objects -----------------------------------------------------------------------------
    def namespace(self, name: str) -> Obj:
        return self.post(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )

    def pod(
        self,
        name: str,
        *,
        namespace: str = "default",
        labels: dict[str, str] | None = None,
        node: str | None = None,
        owner: Obj | None = None,
        tolerations: list[Obj] | None = None,
        ports: list[Obj] | None = None,
        grace: int = 0,
    ) -> Obj:
        spec: Obj = {
            "containers": [{"name": "c", "image": "nginx", "ports": ports or []}],
            "terminationGracePeriodSeconds": grace,
        }
        if node:
            spec["nodeName"] = node
        if tolerations is not None:
            spec["tolerations"] = tolerations
        meta: Obj = {"name": name, "namespace": namespace, "labels": labels or {}}
        if owner:
            meta["ownerReferences"] = [owner]
        return self.post(
            f"/api/v1/namespaces/{namespace}/pods",
            {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec},
        )

    def set_pod_status(self, pod: Obj, *, ip: str | None, ready: bool, phase: str = "Running") -> Obj:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        live = self.get(f"/api/v1/namespaces/{ns}/pods/{name}")
        assert live is not None
        live["status"] = {
            "phase": phase,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now()}
            ],
        }
        if ip:
            live["status"]["podIP"] = ip
            live["status"]["podIPs"] = [{"ip": ip}]
        return self.put(f"/api/v1/namespaces/{ns}/pods/{name}/status", live)


def owner_ref(obj: Obj, *, block: bool = False, controller: bool = False) -> Obj:
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    if controller:
        ref["controller"] = True
    return ref


class FakeKubelet:
    """The writes a kubelet makes for its node: register the Node, renew the Lease, post Ready."""

    def __init__(self, cluster: Cluster, name: str, zone: str | None = None) -> None:
        self.c = cluster
        self.name = name
        self.zone = zone

    def register(self) -> Obj:
        labels = {"kubernetes.io/hostname": self.name}
        if self.zone is not None:
            labels["topology.kubernetes.io/zone"] = self.zone
        node = self.c.post(
            "/api/v1/nodes",
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": self.name, "labels": labels}},
        )
        self.post_status(True)
        self.renew()
        return node

    def post_status(self, ready: bool) -> None:
        node = self.c.get(f"/api/v1/nodes/{self.name}")
        assert node is not None
        stamp = now()
        conditions = [
            {
                "type": t,
                "status": "False",
                "reason": f"KubeletHas{r}",
                "message": "ok",
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": stamp,
            }
            for t, r in (
                ("MemoryPressure", "SufficientMemory"),
                ("DiskPressure", "NoDiskPressure"),
                ("PIDPressure", "SufficientPID"),
            )
        ]
        conditions.append(
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "KubeletReady" if ready else "KubeletNotReady",
                "message": "kubelet is posting ready status" if ready else "container runtime is down",
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": stamp,
            }
        )
        node["status"] = {"conditions": conditions}
        self.c.put(f"/api/v1/nodes/{self.name}/status", node)

    def renew(self) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.name}"
        lease = self.c.get(path)
        if lease is None:
            self.c.post(
                "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": "kube-node-lease"},
                    "spec": {
                        "holderIdentity": self.name,
                        "leaseDurationSeconds": 2,
                        "renewTime": now_micro(),
                    },
                },
            )
        else:
            lease["spec"]["renewTime"] = now_micro()
            self.c.put(path, lease)

    def node(self) -> Obj:
        node = self.c.get(f"/api/v1/nodes/{self.name}")
        assert node is not None
        return node

    def ready_status(self) -> str | None:
        for cond in (self.node().get("status") or {}).get("conditions") or []:
            if cond["type"] == "Ready":
                return cond["status"]
        return None

    def taints(self) -> set[str]:
        return {f"{t['key']}:{t['effect']}" for t in (self.node().get("spec") or {}).get("taints") or []}


class Heartbeat:
    """A background thread renewing the Leases of `alive` nodes every `period` s, like their kubelets.
    Remove a name from `alive` to make that kubelet go silent."""

    def __init__(self, cluster: Cluster, names: list[str], period: float = 0.3) -> None:
        import threading

        self.alive = set(names)
        self.period = period
        self._stop = threading.Event()
        self._cluster = Cluster.__new__(
            Cluster
        )  # an own HTTP client: httpx clients are not shared by threads
        self._cluster.api, self._cluster.cm = cluster.api, cluster.cm
        self._cluster.http = cluster.api.client()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._cluster.http.close()

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            for name in list(self.alive):
                try:
                    FakeKubelet(self._cluster, name).renew()
                except (httpx.HTTPError, AssertionError):
                    pass  # a conflict or a slow server: the next beat tries again
