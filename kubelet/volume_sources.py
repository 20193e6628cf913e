"""What each kind of pod volume holds, read from the API, in the kubelet volume plugins' words.

    configMap, secret     the object's keys (all, or `items`: key -> path, per-item `mode`),
                          `defaultMode` (0644), `optional` (a missing object: an empty volume)
    downwardAPI           `items` of fieldRef (metadata.name/namespace/uid/labels/annotations,
                          one label or annotation) and resourceFieldRef (with containerName)
    projected             configMap, secret, downwardAPI and serviceAccountToken sources in one
                          directory (the token from the TokenRequest API, bound to the pod)
    hostPath              the `type` checks (DirectoryOrCreate, Directory, FileOrCreate, File,
                          Socket, CharDevice, BlockDevice, "": none)
    persistentVolumeClaim the bound PersistentVolume's hostPath (or local) directory

Each builder returns a payload for the atomic writer (volume_atomic_writer.py) or a host path, or
raises SourceError with the message Kubernetes' plugin gives (`configmap "x" not found`), which
volumes.py turns into the FailedMount event.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import time
from typing import Any

from api.errors import NotFoundError, StatusError
from kubelet import env as envs
from kubelet.cri import StartError
from kubelet.volume_atomic_writer import Payload

DEFAULT_MODE = 0o644
TOKEN_SECONDS = 3600


class SourceError(Exception):
    """A volume that cannot be set up (yet): the message is the plugin's."""


class ClaimError(SourceError):
    """A claim that cannot be used yet (missing, unbound, being deleted)."""


async def _get(client: Any, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
    try:
        obj: dict[str, Any] = await client.get(kind, name, namespace)
        return obj
    except NotFoundError:
        return None


def _data(kind: str, obj: dict[str, Any]) -> dict[str, bytes]:
    if kind == "secrets":
        out = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        out.update({k: str(v).encode() for k, v in (obj.get("stringData") or {}).items()})
        return out
    out = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out


async def key_payload(client: Any, kind: str, source: dict[str, Any], namespace: str,
                      default_mode: int | None) -> Payload:  # fmt: skip
    """A configMap or secret volume (or projected source): its keys as files."""
    name = source.get("name") or (source.get("secretName") if kind == "secrets" else "") or ""
    optional = bool(source.get("optional"))
    mode = DEFAULT_MODE if default_mode is None else int(default_mode)
    obj = await _get(client, kind, name, namespace)
    singular = "configmap" if kind == "configmaps" else "secret"
    if obj is None:
        if optional:
            return {}
        raise SourceError(f'{singular} "{name}" not found')
    data = _data(kind, obj)
    items = source.get("items") or []
    if not items:
        return {key: (value, mode) for key, value in data.items()}
    out: Payload = {}
    for item in items:
        key = item.get("key") or ""
        if key not in data:
            if optional:
                continue
            if kind == "configmaps":
                raise SourceError(f"configmap references non-existent config key: {key}")
            raise SourceError(f"references non-existent secret key: {key}")
        out[item.get("path") or key] = (data[key], mode if item.get("mode") is None else int(item["mode"]))
    return out


def _format_map(values: dict[str, Any]) -> str:
    """Kubernetes' FormatMap: sorted `key="value"` lines (the value quoted), no final newline."""
    return "\n".join(f"{k}={json.dumps(str(v), ensure_ascii=False)}" for k, v in sorted(values.items()))


def downward_payload(pod: dict[str, Any], items: list[dict[str, Any]], default_mode: int | None,
                     allocatable: dict[str, str]) -> Payload:  # fmt: skip
    mode = DEFAULT_MODE if default_mode is None else int(default_mode)
    md = pod.get("metadata") or {}
    out: Payload = {}
    for item in items:
        path = item.get("path") or ""
        item_mode = mode if item.get("mode") is None else int(item["mode"])
        if item.get("fieldRef"):
            field = (item["fieldRef"] or {}).get("fieldPath") or ""
            if field in ("metadata.labels", "metadata.annotations"):
                text = _format_map(md.get(field.split(".")[1]) or {})
            elif field in ("metadata.name", "metadata.namespace", "metadata.uid") or field.startswith(
                ("metadata.labels[", "metadata.annotations[")
            ):
                text = envs.field_value(pod, field, "", "")
            else:
                raise SourceError(f'unsupported fieldRef fieldPath "{field}" in a downwardAPI volume')
        elif item.get("resourceFieldRef"):
            ref = item["resourceFieldRef"] or {}
            containers = (pod.get("spec") or {}).get("containers") or []
            container = next((c for c in containers if c.get("name") == ref.get("containerName")), None)
            if container is None:
                raise SourceError(f"cannot find container {ref.get('containerName')!r} of resourceFieldRef")
            try:
                text = envs.resource_value(container, ref, allocatable)
            except (StartError, ValueError) as exc:
                raise SourceError(str(exc)) from None
        else:
            continue
        out[path] = (text.encode(), item_mode)
    return out


async def token_payload(
    client: Any, pod: dict[str, Any], source: dict[str, Any], mode: int
) -> tuple[Payload, int]:
    """A projected serviceAccountToken: a TokenRequest bound to the pod (404 without a signing key),
    and the seconds it was issued for — the answer's, which the API server may have shortened
    (`--service-account-max-token-expiration`), as the kubelet's token manager reads it."""
    md, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    account = spec.get("serviceAccountName") or "default"
    request: dict[str, Any] = {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": int(source.get("expirationSeconds") or TOKEN_SECONDS),
                 "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": md.get("name"), "uid": md.get("uid")}},
    }  # fmt: skip
    if source.get("audience"):
        request["spec"]["audiences"] = [source["audience"]]
    try:
        answer = await client.create("serviceaccounts", request, md.get("namespace") or "default", name=account,
                                     subresource="token")  # fmt: skip
    except StatusError as exc:
        raise SourceError(f'failed to fetch token: serviceaccounts "{account}" token request failed: {exc}') from None
    token = ((answer or {}).get("status") or {}).get("token") or ""
    issued = ((answer or {}).get("spec") or {}).get("expirationSeconds") or request["spec"]["expirationSeconds"]
    return {source.get("path") or "token": (token.encode(), mode)}, int(issued)


async def projected_payload(client: Any, pod: dict[str, Any], volume: dict[str, Any],
                            allocatable: dict[str, str]) -> tuple[Payload, float | None]:  # fmt: skip
    """All sources in one payload, and when a token in it should be renewed (80% of its life)."""
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    default_mode = volume.get("defaultMode")
    mode = DEFAULT_MODE if default_mode is None else int(default_mode)
    out: Payload = {}
    renew: float | None = None
    errors: list[str] = []
    for source in volume.get("sources") or []:
        try:
            if source.get("configMap") is not None:
                out.update(await key_payload(client, "configmaps", source["configMap"], namespace, mode))
            elif source.get("secret") is not None:
                out.update(await key_payload(client, "secrets", source["secret"], namespace, mode))
            elif source.get("downwardAPI") is not None:
                out.update(downward_payload(pod, source["downwardAPI"].get("items") or [], mode, allocatable))
            elif source.get("serviceAccountToken") is not None:
                payload, life = await token_payload(client, pod, source["serviceAccountToken"], mode)
                out.update(payload)
                due = time.time() + 0.8 * life
                renew = due if renew is None else min(renew, due)
            else:
                errors.append(f"unsupported projected volume source: {sorted(source)}")
        except SourceError as exc:
            errors.append(str(exc))
    if errors:
        raise SourceError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return out, renew


# ---------------------------------------------------------------------------------- host paths


def check_host_path(path: str, kind: str) -> None:
    """hostPath `type`: create what *OrCreate asks for, refuse what is not of the type."""
    if kind == "DirectoryOrCreate" and not os.path.lexists(path):
        os.makedirs(path, 0o755, exist_ok=True)
    elif kind == "FileOrCreate" and not os.path.lexists(path):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        except OSError as exc:
            raise SourceError(f"hostPath type check failed: {path}: {exc.strerror}") from None
    if not kind:
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = 0
    checks = {
        "DirectoryOrCreate": (stat.S_ISDIR, "a directory"), "Directory": (stat.S_ISDIR, "a directory"),
        "FileOrCreate": (stat.S_ISREG, "a file"), "File": (stat.S_ISREG, "a file"),
        "Socket": (stat.S_ISSOCK, "a socket file"), "CharDevice": (stat.S_ISCHR, "a character device"),
        "BlockDevice": (stat.S_ISBLK, "a block device"),
    }  # fmt: skip
    if kind not in checks:
        raise SourceError(f"hostPath type check failed: unknown type {kind!r}")
    test, what = checks[kind]
    if not test(mode):
        raise SourceError(f"hostPath type check failed: {path} is not {what}")


async def claim_path(client: Any, namespace: str, claim_name: str) -> str:
    """The directory of the PersistentVolume bound to the claim (hostPath or local volumes)."""
    prefix = f"error processing PVC {namespace}/{claim_name}"
    claim = await _get(client, "persistentvolumeclaims", claim_name, namespace)
    if claim is None:
        raise ClaimError(f'{prefix}: failed to fetch PVC from API server: persistentvolumeclaims "{claim_name}" '
                         f"not found")  # fmt: skip
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        raise ClaimError(f"{prefix}: PVC is being deleted")
    if (claim.get("status") or {}).get("phase") != "Bound":
        raise ClaimError(f"{prefix}: PVC is not bound")
    volume_name = (claim.get("spec") or {}).get("volumeName") or ""
    if not volume_name:
        raise ClaimError(f"{prefix}: PVC has empty pvc.Spec.VolumeName")
    volume = await _get(client, "persistentvolumes", volume_name, "")
    if volume is None:
        raise ClaimError(f'{prefix}: failed to fetch PV {volume_name} from API server: persistentvolumes '
                         f'"{volume_name}" not found')  # fmt: skip
    spec = volume.get("spec") or {}
    if spec.get("hostPath"):
        path = spec["hostPath"].get("path") or ""
        check_host_path(path, spec["hostPath"].get("type") or "")
        return str(path)
    if spec.get("local"):
        return str(spec["local"].get("path") or "")
    raise SourceError(f"persistent volume {volume_name}: only hostPath and local volumes can be mounted here")
