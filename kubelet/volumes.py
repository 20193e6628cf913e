"""Pod volumes in the process runtime: set up on the node, mounted inside the container only.

Desired state: every volume of a pod on this node exists before its first container starts, and
each container sees its `volumeMounts` (mountPath, subPath/subPathExpr, readOnly) - and nothing
of it ever shows on the host outside the data dir.
Current state, one directory per pod, laid out as the kubelet lays out /var/lib/kubelet/pods:

    --root-dir/pods/<pod uid>/volumes/kubernetes.io~empty-dir/<name>    emptyDir (a tmpfs: Memory)
                                     kubernetes.io~configmap/<name>     written by the atomic
                                     kubernetes.io~secret/<name>        writer: ..data -> ..<time>/
                                     kubernetes.io~downward-api/<name>
                                     kubernetes.io~projected/<name>

hostPath volumes are the host's path (after the `type` checks); a persistentVolumeClaim is the
bound volume's directory (the controller-manager's host-path provisioner makes one).
What it does about the difference:
  setup     (before the pod's first container, retried by the pod worker until it succeeds)
            makes the directories, writes the API objects' keys, checks host paths and claims;
            a failure is a FailedMount event in Kubernetes' words and the pod stays
            ContainerCreating;
  refresh   (every REFRESH seconds, the runtime's sweeper) rewrites configMap, secret,
            downwardAPI and projected volumes whose objects changed - as the kubelet does, with a
            short cache instead of a watch; a projected token is renewed at 80% of its life;
  mounts    the list the shim mounts for one container: (host source, mountPath, read-only).
            configMap, secret, downwardAPI and projected volumes are always read-only (as since
            Kubernetes 1.10);
  teardown  (the pod is gone, or `mini-k8s down`) unmounts a Memory emptyDir's tmpfs and removes
            the pod's directory. hostPath and claim directories are the host's: never removed.
The shim (shim.py) does the mounting, in the container's own mount namespace, on a per-container
overlay of the host's root: mountPaths that do not exist on the host are made in the overlay's
upper directory (in the container's directory), never on the host.
"""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api.quantity import parse_quantity
from kubelet import env as envs
from kubelet import volume_atomic_writer as writer
from kubelet import volume_sources as sources
from kubelet.cri import StartError

log = logging.getLogger("kubelet.volumes")
REFRESH = 3.0  # seconds between re-reads of the objects behind configMap/secret/... volumes
PLUGIN_DIRS = {
    "emptyDir": "kubernetes.io~empty-dir", "configMap": "kubernetes.io~configmap", "secret": "kubernetes.io~secret",
    "downwardAPI": "kubernetes.io~downward-api", "projected": "kubernetes.io~projected",
}  # fmt: skip
API_DATA = ("configMap", "secret", "downwardAPI", "projected")
MS_NOSUID, MS_NODEV = 2, 4
MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class Mounted:
    """One volume of a pod, ready on the node."""

    path: str
    kind: str  # emptyDir, configMap, ..., hostPath, persistentVolumeClaim
    read_only: bool = False
    host_type: str = ""  # hostPath's type


@dataclass
class PodVolumes:
    uid: str
    volumes: dict[str, Mounted] = field(default_factory=dict)
    renew_at: dict[str, float] = field(default_factory=dict)  # projected volume -> token renewal


def pod_dir(root: Path, uid: str) -> Path:
    return root / "pods" / uid


def recorded(root: Path) -> list[str]:
    """The pods that have a volume directory here (for the sweeper and `mini-k8s down`)."""
    base = root / "pods"
    return [p.name for p in base.iterdir() if p.is_dir()] if base.is_dir() else []


def mounts_under(base: Path) -> list[str]:
    """Mount points at or below `base` in this mount namespace, deepest first."""
    prefix = str(base)
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4]
            for escaped, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
                point = point.replace(escaped, char)
            if point == prefix or point.startswith(prefix + "/"):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def teardown(root: Path, uid: str) -> bool:
    """Unmount and remove everything of the pod's volumes here; False if a mount would not go."""
    base = pod_dir(root, uid)
    if not base.exists():
        return True
    for point in mounts_under(base):
        if _libc.umount2(point.encode(), MNT_DETACH) != 0:
            log.warning("unmounting %s failed: %s", point, os.strerror(ctypes.get_errno()))
    if mounts_under(base):
        return False  # never remove files through a mount that is still there
    shutil.rmtree(base, ignore_errors=True)
    return not base.exists()


def _mount_tmpfs(path: str, size: int | None) -> None:
    options = "mode=0777" + (f",size={size}" if size else "")
    if _libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) != 0:
        errno = ctypes.get_errno()
        raise sources.SourceError(f"mount tmpfs on {path}: {os.strerror(errno)}")


class VolumeManager:
    def __init__(self, root: Path, client: Any, allocatable: dict[str, str]) -> None:
        self.root = root
        self.client = client
        self.allocatable = allocatable
        self.pods: dict[str, PodVolumes] = {}  # pod uid -> its volumes that are set up

    # ------------------------------------------------------------------ setup

    async def setup(self, pod: dict[str, Any]) -> list[str]:
        """Set up every volume of the pod; returns the FailedMount messages ([]: all ready)."""
        md = pod.get("metadata") or {}
        uid = md.get("uid") or ""
        namespace = md.get("namespace") or "default"
        ready = PodVolumes(uid)
        failures: list[str] = []
        claims_failed: list[tuple[str, str]] = []
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            name = volume.get("name") or ""
            try:
                ready.volumes[name] = await self._setup_one(pod, namespace, volume, ready)
            except sources.ClaimError as exc:
                claims_failed.append((name, str(exc)))
            except (sources.SourceError, writer.PayloadError, OSError) as exc:
                failures.append(f'MountVolume.SetUp failed for volume "{name}" : {exc}')
        if claims_failed:
            names = "[" + " ".join(n for n, _ in claims_failed) + "]"
            lists = f"unmounted volumes={names}, unattached volumes={names}, failed to process volumes={names}"
            failures.append(f"Unable to attach or mount volumes: {lists}: " + "; ".join(m for _, m in claims_failed))
        self.pods[uid] = ready  # what is ready (the pod worker starts containers once all are, unless adopted)
        return failures

    async def _setup_one(self, pod: dict[str, Any], namespace: str, volume: dict[str, Any],
                         ready: PodVolumes) -> Mounted:  # fmt: skip
        name = volume.get("name") or ""
        uid = ready.uid
        kind = next((k for k in PLUGIN_DIRS if volume.get(k) is not None), "")
        if kind:
            path = pod_dir(self.root, uid) / "volumes" / PLUGIN_DIRS[kind] / name
            path.mkdir(parents=True, exist_ok=True)
        if kind == "emptyDir":
            source = volume["emptyDir"] or {}
            path.chmod(0o777)
            if source.get("medium") == "Memory" and not os.path.ismount(path):
                limit = source.get("sizeLimit")
                _mount_tmpfs(str(path), parse_quantity(str(limit)).value() if limit else None)
            return Mounted(str(path), kind)
        if kind in API_DATA:
            await self._write_api_data(pod, namespace, volume, kind, path, ready, fresh_token=True)
            return Mounted(str(path), kind, read_only=True)
        if volume.get("hostPath") is not None:
            host = volume["hostPath"] or {}
            host_path, host_type = str(host.get("path") or ""), str(host.get("type") or "")
            sources.check_host_path(host_path, host_type)
            return Mounted(host_path, "hostPath", host_type=host_type)
        if volume.get("persistentVolumeClaim") is not None:
            claim = volume["persistentVolumeClaim"] or {}
            path_ = await sources.claim_path(self.client, namespace, claim.get("claimName") or "")
            return Mounted(path_, "persistentVolumeClaim", read_only=bool(claim.get("readOnly")))
        other = next((k for k in volume if k != "name"), "unknown")
        raise sources.SourceError(f"the process runtime of mini-k8s cannot mount {other} volumes "
                                  "(emptyDir, configMap, secret, downwardAPI, projected, hostPath and "
                                  "persistentVolumeClaim it can)")  # fmt: skip

    async def _write_api_data(self, pod: dict[str, Any], namespace: str, volume: dict[str, Any], kind: str,
                              path: Path, ready: PodVolumes, *, fresh_token: bool) -> bool:  # fmt: skip
        source = volume[kind] or {}
        name = volume.get("name") or ""
        if kind == "configMap":
            payload = await sources.key_payload(self.client, "configmaps", source, namespace, source.get("defaultMode"))
        elif kind == "secret":
            payload = await sources.key_payload(self.client, "secrets", source, namespace, source.get("defaultMode"))
        elif kind == "downwardAPI":
            payload = sources.downward_payload(pod, source.get("items") or [], source.get("defaultMode"),
                                               self.allocatable)  # fmt: skip
        else:
            tokens = [s for s in source.get("sources") or [] if s.get("serviceAccountToken") is not None]
            keep = (writer.current(path) or {}) if tokens and not fresh_token else None
            if keep is not None:  # the token is not due: keep the one written, re-read the rest
                source = {**source, "sources": [s for s in source.get("sources") or [] if s not in tokens]}
            payload, renew = await sources.projected_payload(self.client, pod, source, self.allocatable)
            if keep is not None:
                for token in tokens:
                    token_path = token["serviceAccountToken"].get("path") or "token"
                    if token_path in keep:
                        payload[token_path] = keep[token_path]
            elif renew is not None:
                ready.renew_at[name] = renew
        return writer.write(path, payload)

    # ------------------------------------------------------------------ refresh

    async def refresh(self, pod: dict[str, Any]) -> None:
        """Rewrite the pod's API-data volumes whose objects changed (errors keep the old content)."""
        md = pod.get("metadata") or {}
        ready = self.pods.get(md.get("uid") or "")
        if ready is None or md.get("deletionTimestamp"):
            return
        namespace = md.get("namespace") or "default"
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            mounted = ready.volumes.get(volume.get("name") or "")
            if mounted is None or mounted.kind not in API_DATA:
                continue
            due = ready.renew_at.get(volume.get("name") or "")
            try:
                changed = await self._write_api_data(pod, namespace, volume, mounted.kind, Path(mounted.path), ready,
                                                     fresh_token=due is not None and time.time() >= due)  # fmt: skip
            except (sources.SourceError, writer.PayloadError, OSError) as exc:
                log.info("refreshing volume %s of pod %s failed: %s", volume.get("name"), md.get("name"), exc)
                continue
            if changed:
                log.info("volume %s of pod %s/%s updated", volume.get("name"), namespace, md.get("name"))

    def forget(self, uid: str) -> None:
        self.pods.pop(uid, None)

    # ------------------------------------------------------------------ one container's mounts

    def mounts(self, uid: str, container: dict[str, Any], env: dict[str, str]) -> list[tuple[str, str, bool]]:
        """(host source, mountPath, read-only) for each volumeMount of the container, in order."""
        ready = self.pods.get(uid)
        out: list[tuple[str, str, bool]] = []
        for vm in container.get("volumeMounts") or []:
            name = vm.get("name") or ""
            mounted = ready.volumes.get(name) if ready is not None else None
            if mounted is None:
                raise StartError("CreateContainerConfigError",
                                 f'cannot find volume "{name}" to mount into container "{container.get("name")}"')
            source = mounted.path
            sub = vm.get("subPath") or ""
            if vm.get("subPathExpr"):
                sub = envs.expand(str(vm["subPathExpr"]), env)
            if sub:
                source = self._sub_path(mounted, sub, name, container.get("name") or "")
            elif not os.path.lexists(source):
                raise StartError("RunContainerError", f'failed to mount "{source}" of volume "{name}": '
                                                      "no such file or directory")  # fmt: skip
            target = vm.get("mountPath") or ""
            out.append((source, target if target.startswith("/") else "/" + target,
                        bool(vm.get("readOnly")) or mounted.read_only))  # fmt: skip
        return out

    @staticmethod
    def _sub_path(mounted: Mounted, sub: str, volume: str, container: str) -> str:
        fail = f'failed to prepare subPath for volumeMount "{volume}" of container "{container}"'
        if sub.startswith("/") or ".." in sub.split("/"):
            raise StartError("CreateContainerConfigError", f"{fail}: {sub!r} must be a relative path without '..'")
        source = os.path.join(mounted.path, sub)
        if not os.path.lexists(source):
            if mounted.kind in API_DATA:
                raise StartError("CreateContainerConfigError", f"{fail}: {sub} does not exist in the volume")
            os.makedirs(source, 0o755, exist_ok=True)  # as the kubelet does: a missing subPath is a new directory
        real, base = os.path.realpath(source), os.path.realpath(mounted.path)
        if real != base and not real.startswith(base.rstrip("/") + "/"):
            raise StartError("CreateContainerConfigError", f"{fail}: {sub} leads out of the volume")
        return real
