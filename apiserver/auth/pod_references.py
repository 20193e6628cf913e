"""Which other objects a pod names: the secrets, configmaps, claims and service account a kubelet
must read to run it.

The Node authorizer lets a kubelet read exactly these for the pods bound to its node, and the
NodeRestriction admission plugin refuses a mirror pod that names any of them (a kubelet must not
gain access to an object by writing a pod that points at it). Both ask this one function, which
walks the places Kubernetes' VisitPodSecretNames and VisitPodConfigmapNames walk:

- volumes: `secret`, `configMap`, `persistentVolumeClaim`, `ephemeral` (its claim is named
  `<pod>-<volume>`), `projected` sources, and the secret references of in-tree volume plugins
  (`rbd.secretRef`, `csi.nodePublishSecretRef`, …);
- every container, init container and ephemeral container: `env[].valueFrom.secretKeyRef` /
  `configMapKeyRef`, `envFrom[].secretRef` / `configMapRef`;
- `spec.imagePullSecrets` and `spec.serviceAccountName`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

# in-tree volume plugins that name a secret: volume field → where the secret's name is
_VOLUME_SECRET_REFS = {
    "azureFile": ("secretName",), "cephfs": ("secretRef", "name"), "cinder": ("secretRef", "name"),
    "flexVolume": ("secretRef", "name"), "iscsi": ("secretRef", "name"), "rbd": ("secretRef", "name"),
    "scaleIO": ("secretRef", "name"), "storageos": ("secretRef", "name"), "csi": ("nodePublishSecretRef", "name"),
}  # fmt: skip


@dataclass
class PodReferences:
    secrets: set[str] = field(default_factory=set)
    configmaps: set[str] = field(default_factory=set)
    persistentvolumeclaims: set[str] = field(default_factory=set)
    serviceaccount: str = ""

    def items(self) -> list[tuple[str, str]]:
        """(resource, name) pairs, the resource named as in a request path."""
        out = [("secrets", n) for n in self.secrets] + [("configmaps", n) for n in self.configmaps]
        out += [("persistentvolumeclaims", n) for n in self.persistentvolumeclaims]
        return out + ([("serviceaccounts", self.serviceaccount)] if self.serviceaccount else [])


def _dig(obj: Any, path: tuple[str, ...]) -> str:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, str) else ""


def _dig_list(obj: Any, path: tuple[str, ...]) -> list[Obj]:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return [x for x in obj if isinstance(x, dict)] if isinstance(obj, list) else []


def _add(names: set[str], name: str) -> None:
    if name:
        names.add(name)


def _volumes(pod: Obj, refs: PodReferences) -> None:
    pod_name = (pod.get("metadata") or {}).get("name") or ""
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        _add(refs.secrets, _dig(volume, ("secret", "secretName")))
        _add(refs.configmaps, _dig(volume, ("configMap", "name")))
        _add(refs.persistentvolumeclaims, _dig(volume, ("persistentVolumeClaim", "claimName")))
        if volume.get("ephemeral") is not None:
            _add(refs.persistentvolumeclaims, f"{pod_name}-{volume.get('name') or ''}")
        for source in _dig_list(volume, ("projected", "sources")):
            _add(refs.secrets, _dig(source, ("secret", "name")))
            _add(refs.configmaps, _dig(source, ("configMap", "name")))
        for plugin, path in _VOLUME_SECRET_REFS.items():
            _add(refs.secrets, _dig(volume, (plugin, *path)))


def _containers(pod: Obj, refs: PodReferences) -> None:
    spec = pod.get("spec") or {}
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(kind) or []:
            for env in container.get("env") or []:
                _add(refs.secrets, _dig(env, ("valueFrom", "secretKeyRef", "name")))
                _add(refs.configmaps, _dig(env, ("valueFrom", "configMapKeyRef", "name")))
            for source in container.get("envFrom") or []:
                _add(refs.secrets, _dig(source, ("secretRef", "name")))
                _add(refs.configmaps, _dig(source, ("configMapRef", "name")))


def pod_references(pod: Obj) -> PodReferences:
    refs = PodReferences()
    spec = pod.get("spec") or {}
    for pull in spec.get("imagePullSecrets") or []:
        _add(refs.secrets, (pull or {}).get("name") or "")
    _volumes(pod, refs)
    _containers(pod, refs)
    refs.serviceaccount = spec.get("serviceAccountName") or spec.get("serviceAccount") or ""
    return refs
