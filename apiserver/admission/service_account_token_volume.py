"""The ServiceAccount admission plugin's second half: the token volume every pod gets.

A program in a pod finds the API server the way client libraries' "in-cluster config" looks for
it: a token, the cluster CA and its namespace under /var/run/secrets/kubernetes.io/serviceaccount.
Kubernetes puts them there by adding, at admission, a projected volume `kube-api-access-<5>` to the
pod and a read-only mount of it to every container:

    serviceAccountToken  path token, expirationSeconds 3607   a TokenRequest bound to this pod
                                                                (the kubelet fetches and renews it)
    configMap            kube-root-ca.crt, key ca.crt           published in every namespace by the
                                                                root-ca-cert-publisher controller
    downwardAPI          namespace = metadata.namespace

Skipped, as in Kubernetes, when the pod or its ServiceAccount says
`automountServiceAccountToken: false`, or a container already mounts something at that path.
mini-k8s adds one condition: the API server must be able to issue tokens
(`--service-account-signing-key-file`); Kubernetes always can, while a mini-k8s API server
started without keys (a lesson on the API alone) would give every pod a volume no kubelet can fill.
"""

from __future__ import annotations

import secrets
from typing import Any

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_SECONDS = 3607  # an hour and a few seconds: Kubernetes' value, which marks such tokens
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the random suffix of generated names in Kubernetes


def projected_volume(name: str) -> dict[str, Any]:
    return {"name": name, "projected": {"defaultMode": 0o644, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}  # fmt: skip


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for key in ("initContainers", "containers") for c in spec.get(key) or [] if isinstance(c, dict)]


def wants_token(spec: dict[str, Any], account: dict[str, Any] | None) -> bool:
    """The pod's own setting wins, then its ServiceAccount's; a path already mounted is left alone."""
    automount = spec.get("automountServiceAccountToken")
    if automount is None and account is not None:
        automount = account.get("automountServiceAccountToken")
    if automount is False:
        return False
    return not any(m.get("mountPath") == MOUNT_PATH for c in _containers(spec) for m in c.get("volumeMounts") or [])


def add_token_volume(spec: dict[str, Any]) -> str:
    """Add the volume and every container's mount; returns the volume's name."""
    taken = {v.get("name") for v in spec.get("volumes") or []}
    name = ""
    while not name or name in taken:
        name = VOLUME_PREFIX + "".join(secrets.choice(ALPHABET) for _ in range(5))
    spec.setdefault("volumes", []).append(projected_volume(name))
    for container in _containers(spec):
        container.setdefault("volumeMounts", []).append({"name": name, "readOnly": True, "mountPath": MOUNT_PATH})
    return name
