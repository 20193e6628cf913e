"""A container's environment and its `$(VAR)` expansion, as the kubelet computes them.

Order (later wins), as in Kubernetes: the Service variables (FOO_SERVICE_HOST ... for every
Service of the namespace with a cluster IP, unless spec.enableServiceLinks is false, and the
`kubernetes` Service's always), then `envFrom` sources in the order listed (configMapRef and
secretRef, each with its optional `prefix`), then `env` in order. An `env` value may refer to
variables defined before it as `$(NAME)`; `$$(NAME)` is a literal `$(NAME)`; a reference to
something undefined stays as written. `valueFrom` reads
  fieldRef           metadata.name/namespace/uid, metadata.labels['k'], metadata.annotations['k'],
                     spec.nodeName, spec.serviceAccountName, status.hostIP(s), status.podIP(s)
  resourceFieldRef   limits.cpu/memory, requests.cpu/memory (with `divisor`; a missing limit is
                     the node's allocatable, as in Kubernetes)
  configMapKeyRef, secretKeyRef   (`optional: true` skips a missing one)
The container's `command` and `args` are expanded with the final environment.

A missing ConfigMap, Secret or key fails the start with CreateContainerConfigError and
Kubernetes' message (e.g. `configmap "x" not found`); the pod worker retries it.
"""

from __future__ import annotations

import base64
import math
import re
from typing import Any

from api.errors import NotFoundError
from api.quantity import parse_quantity
from client.informer import NAMESPACE_INDEX, Informer
from kubelet.cri import StartError

_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.\-]*)\)")
_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion: `$$` is a literal `$`, unknown references stay as they are."""

    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env[name] if name in env else m.group(0)

    return _REF.sub(repl, text)


def field_value(pod: dict[str, Any], path: str, pod_ip: str, host_ip: str) -> str:
    md = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    m = _SUBSCRIPT.match(path)
    if m:
        return str((md.get(m.group(1)) or {}).get(m.group(2), ""))
    simple = {
        "metadata.name": md.get("name"),
        "metadata.namespace": md.get("namespace") or "default",
        "metadata.uid": md.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
    }
    if path in ("metadata.labels", "metadata.annotations"):
        return "\n".join(f'{k}="{v}"' for k, v in sorted((md.get(path.split(".")[1]) or {}).items()))
    if path not in simple:
        raise StartError("CreateContainerConfigError", f'unsupported fieldRef fieldPath "{path}"')
    return str(simple[path] or "")


def resource_value(container: dict[str, Any], ref: dict[str, Any], allocatable: dict[str, str]) -> str:
    resource = ref.get("resource") or ""
    kind, _, name = resource.partition(".")
    res = container.get("resources") or {}
    raw = (res.get(kind) or {}).get(name)
    if raw is None and kind == "requests":
        raw = (res.get("limits") or {}).get(name)
    if raw is None:
        raw = allocatable.get(name, "0")
    value = parse_quantity(str(raw)).as_decimal()
    divisor = parse_quantity(str(ref.get("divisor") or "1")).as_decimal()
    return str(math.ceil(value / divisor)) if divisor else str(value)


async def resolve(
    client: Any, pod: dict[str, Any], container: dict[str, Any], base: dict[str, str], *,
    pod_ip: str, host_ip: str, allocatable: dict[str, str],
) -> dict[str, str]:  # fmt: skip
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    cache: dict[tuple[str, str], dict[str, str] | None] = {}

    async def source(kind: str, name: str) -> dict[str, str] | None:
        if (kind, name) not in cache:
            try:
                obj = await client.get(kind, name, namespace)
            except NotFoundError:
                cache[(kind, name)] = None
            else:
                if kind == "secrets":
                    data = {k: base64.b64decode(v).decode(errors="replace") for k, v in (obj.get("data") or {}).items()}
                    data.update(obj.get("stringData") or {})
                else:
                    data = dict(obj.get("data") or {})
                cache[(kind, name)] = data
        return cache[(kind, name)]

    def missing(kind: str, name: str) -> StartError:
        return StartError("CreateContainerConfigError", f'{kind[:-1]} "{name}" not found')

    env = dict(base)
    for src in container.get("envFrom") or []:
        prefix = src.get("prefix") or ""
        for field, kind in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
            ref = src.get(field)
            if not ref:
                continue
            data = await source(kind, ref.get("name") or "")
            if data is None:
                if ref.get("optional"):
                    continue
                raise missing(kind, ref.get("name") or "")
            for k, v in data.items():
                env[prefix + k] = v
    for var in container.get("env") or []:
        name = var.get("name") or ""
        if "value" in var or "valueFrom" not in var:
            env[name] = expand(str(var.get("value") or ""), env)
            continue
        vf = var.get("valueFrom") or {}
        if "fieldRef" in vf:
            env[name] = field_value(pod, (vf["fieldRef"] or {}).get("fieldPath") or "", pod_ip, host_ip)
        elif "resourceFieldRef" in vf:
            env[name] = resource_value(container, vf["resourceFieldRef"] or {}, allocatable)
        else:
            for field, kind in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
                ref = vf.get(field)
                if not ref:
                    continue
                data = await source(kind, ref.get("name") or "")
                if data is None:
                    if ref.get("optional"):
                        break
                    raise missing(kind, ref.get("name") or "")
                key = ref.get("key") or ""
                if key not in data:
                    if ref.get("optional"):
                        break
                    what = "ConfigMap" if kind == "configmaps" else "Secret"
                    message = f"couldn't find key {key} in {what} {namespace}/{ref.get('name')}"
                    raise StartError("CreateContainerConfigError", message)
                env[name] = data[key]
                break
    return env


def _env_name(text: str) -> str:
    return text.upper().replace("-", "_").replace(".", "_")


def service_env(services: list[dict[str, Any]]) -> dict[str, str]:
    """The Docker-links-style variables Kubernetes gives every container for each Service with
    a cluster IP: FOO_SERVICE_HOST, FOO_SERVICE_PORT(_<name>), FOO_PORT, FOO_PORT_<p>_<PROTO>(...)."""
    env: dict[str, str] = {}
    for svc in services:
        spec = svc.get("spec") or {}
        ip, ports = spec.get("clusterIP"), spec.get("ports") or []
        if not ip or ip == "None" or not ports:
            continue
        name = _env_name(svc["metadata"]["name"])
        env[f"{name}_SERVICE_HOST"] = ip
        env[f"{name}_SERVICE_PORT"] = str(ports[0]["port"])
        env[f"{name}_PORT"] = f"{(ports[0].get('protocol') or 'TCP').lower()}://{ip}:{ports[0]['port']}"
        for p in ports:
            proto = p.get("protocol") or "TCP"
            if p.get("name"):
                env[f"{name}_SERVICE_PORT_{_env_name(p['name'])}"] = str(p["port"])
            prefix = f"{name}_PORT_{p['port']}_{proto.upper()}"
            env[prefix] = f"{proto.lower()}://{ip}:{p['port']}"
            env[f"{prefix}_PROTO"] = proto.lower()
            env[f"{prefix}_PORT"] = str(p["port"])
            env[f"{prefix}_ADDR"] = ip
    return env


SERVICES_WAIT = 5.0  # seconds a start waits for the services informer's first LIST


async def services_for(services: Informer, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The Services whose variables a container of `pod` gets: its namespace's (unless
    spec.enableServiceLinks is false), and always the API server's own `kubernetes` Service.

    Read from the kubelet's services informer, as the real kubelet reads its service lister: a
    container start costs no request. Until the informer has listed once, the variables cannot be
    known and the start fails with Kubernetes' message (the worker retries)."""
    if not services.has_synced() and not await services.wait_for_sync(SERVICES_WAIT):
        raise StartError("CreateContainerConfigError",
                         "services have not yet been read at least once, cannot construct envvars")  # fmt: skip
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    out: list[dict[str, Any]] = []
    if (pod.get("spec") or {}).get("enableServiceLinks", True):
        out = services.by_index(NAMESPACE_INDEX, namespace)
    if namespace != "default" or not out:
        master = services.get("default/kubernetes")
        if master is not None:
            out = [s for s in out if s["metadata"]["name"] != "kubernetes"] + [master]
    return out
