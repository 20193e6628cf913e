"""Small API helpers shared by the workload tests (plain HTTP, as kubectl would do it)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

RC = "/api/v1/namespaces/default/replicationcontrollers"
RS = "/apis/apps/v1/namespaces/default/replicasets"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}


def pods(api: httpx.Client, selector: str) -> list[dict[str, Any]]:
    resp = api.get(PODS, params={"labelSelector": selector})
    resp.raise_for_status()
    return resp.json()["items"]  # type: ignore[no-any-return]


def active_pods(api: httpx.Client, selector: str) -> list[dict[str, Any]]:
    return [
        p
        for p in pods(api, selector)
        if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") not in ("Succeeded", "Failed")
    ]


def get(api: httpx.Client, path: str) -> dict[str, Any]:
    resp = api.get(path)
    resp.raise_for_status()
    return resp.json()  # type: ignore[no-any-return]


def patch(api: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = api.patch(path, json=body, headers=MERGE)
    resp.raise_for_status()
    return resp.json()  # type: ignore[no-any-return]


def create(api: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = api.post(path, json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()  # type: ignore[no-any-return]


def events_for(api: httpx.Client, uid: str) -> list[dict[str, Any]]:
    resp = api.get("/api/v1/namespaces/default/events", params={"fieldSelector": f"involvedObject.uid={uid}"})
    resp.raise_for_status()
    return resp.json()["items"]  # type: ignore[no-any-return]


def container(image: str = "nginx") -> dict[str, Any]:
    return {"name": "c", "image": image}


def rc_body(name: str, replicas: int, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": labels,
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container()]}},
            **spec,
        },
    }


def set_pod_status(api: httpx.Client, name: str, phase: str, ready: bool, since: str = "") -> None:
    """Play the kubelet: report a phase and the Ready condition."""
    pod = get(api, f"{PODS}/{name}")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cond = {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": since or now}
    pod["status"]["phase"] = phase
    pod["status"]["conditions"] = [cond]
    resp = api.put(f"{PODS}/{name}/status", json=pod)
    resp.raise_for_status()


def bind(api: httpx.Client, name: str, node: str) -> None:
    resp = api.post(f"{PODS}/{name}/binding", json={"target": {"kind": "Node", "name": node}})
    assert resp.status_code == 201, resp.text
