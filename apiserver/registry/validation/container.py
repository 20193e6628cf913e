"""Container validation: name, image, ports, env, volume mounts, resources, probes.

Kubernetes validates each container on its own path (`spec.containers[1]`), and Pods,
Deployments, Jobs … all reach this code through the PodSpec, so a template error reads
`spec.template.spec.containers[0].image: Required value`.
"""

from __future__ import annotations

from typing import Any

from api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid_value,
    not_found_value,
    not_supported,
    required,
)
from api.quantity import QuantityError, parse_quantity
from apiserver.registry.validation.names import (
    is_dns1123_label,
    is_env_var_name,
    is_valid_port_name,
    is_valid_port_num,
)

Obj = dict[str, Any]
Errors = list[FieldError]

SUPPORTED_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]
SUPPORTED_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
SUPPORTED_TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
# Only these may be asked for more (limit) than is reserved (request).
OVERCOMMITTABLE = {"cpu", "memory", "ephemeral-storage"}


def validate_container_ports(ports: object, path: str) -> Errors:
    errs: Errors = []
    if not isinstance(ports, list):
        return errs
    names: set[str] = set()
    for i, port in enumerate(ports):
        p = f"{path}[{i}]"
        if not isinstance(port, dict):
            errs.append(invalid_value(p, port, "must be an object"))
            continue
        name = port.get("name") or ""
        if name:
            msgs = is_valid_port_name(name)
            errs += [invalid_value(f"{p}.name", name, m) for m in msgs]
            if not msgs and name in names:
                errs.append(duplicate(f"{p}.name", name))
            names.add(name)
        container_port = port.get("containerPort")
        if not container_port:
            errs.append(required(f"{p}.containerPort", ""))
        else:
            errs += [invalid_value(f"{p}.containerPort", container_port, m)
                     for m in is_valid_port_num(container_port)]
        host_port = port.get("hostPort")
        if host_port:
            errs += [invalid_value(f"{p}.hostPort", host_port, m) for m in is_valid_port_num(host_port)]
        protocol = port.get("protocol") or ""
        if not protocol:
            errs.append(required(f"{p}.protocol", ""))
        elif protocol not in SUPPORTED_PORT_PROTOCOLS:
            errs.append(not_supported(f"{p}.protocol", protocol, SUPPORTED_PORT_PROTOCOLS))
    return errs


def validate_env(env: object, path: str) -> Errors:
    errs: Errors = []
    if not isinstance(env, list):
        return errs
    for i, var in enumerate(env):
        p = f"{path}[{i}]"
        if not isinstance(var, dict):
            continue
        name = var.get("name") or ""
        if not name:
            errs.append(required(f"{p}.name", ""))
        else:
            errs += [invalid_value(f"{p}.name", name, m) for m in is_env_var_name(name)]
        if var.get("valueFrom") is not None and var.get("value"):
            errs.append(invalid_value(f"{p}.valueFrom", "", "may not be specified when `value` is not empty"))
    return errs


def validate_volume_mounts(mounts: object, volume_names: set[str], path: str) -> Errors:
    errs: Errors = []
    if not isinstance(mounts, list):
        return errs
    mount_paths: set[str] = set()
    for i, mount in enumerate(mounts):
        p = f"{path}[{i}]"
        if not isinstance(mount, dict):
            continue
        name = mount.get("name") or ""
        if not name:
            errs.append(required(f"{p}.name", ""))
        elif name not in volume_names:
            # A mount can only refer to a volume the pod declares in spec.volumes.
            errs.append(not_found_value(f"{p}.name", name))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            errs.append(required(f"{p}.mountPath", ""))
        elif mount_path in mount_paths:
            errs.append(invalid_value(f"{p}.mountPath", mount_path, "must be unique"))
        mount_paths.add(mount_path)
        sub_path = mount.get("subPath") or ""
        if sub_path.startswith("/"):
            errs.append(invalid_value(f"{p}.subPath", sub_path, "must be a relative path"))
        elif ".." in sub_path.split("/"):
            errs.append(invalid_value(f"{p}.subPath", sub_path, "must not contain '..'"))
    return errs


def _quantity(value: object, path: str, errs: Errors) -> Any:
    try:
        q = parse_quantity(str(value))
    except QuantityError as exc:
        errs.append(invalid_value(path, str(value), str(exc)))
        return None
    if q.nanos < 0:
        errs.append(invalid_value(path, str(q), "must be greater than or equal to 0"))
    return q


def _validate_resource_name(name: str, path: str) -> Errors:
    if name in STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-") or "/" in name:
        return []
    return [invalid_value(path, name, "must be a standard resource for containers")]


def validate_resources(resources: object, path: str) -> Errors:
    """Quantities must parse and be non-negative; a request may not exceed its limit."""
    errs: Errors = []
    if not isinstance(resources, dict):
        return errs
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    parsed_limits: dict[str, Any] = {}
    for name, value in limits.items() if isinstance(limits, dict) else []:
        p = f"{path}.limits[{name}]"
        errs += _validate_resource_name(name, p)
        parsed_limits[name] = _quantity(value, p, errs)
    for name, value in requests.items() if isinstance(requests, dict) else []:
        p = f"{path}.requests[{name}]"
        errs += _validate_resource_name(name, p)
        req = _quantity(value, p, errs)
        limit = parsed_limits.get(name)
        if req is None or limit is None:
            continue
        if req != limit and name not in OVERCOMMITTABLE and "/" not in name:
            errs.append(invalid_value(f"{path}.requests", str(req),
                                      f"must be equal to {name} limit of {limit}"))
        elif req > limit:
            errs.append(invalid_value(f"{path}.requests", str(req),
                                      f"must be less than or equal to {name} limit of {limit}"))
    return errs


_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


def validate_probe(probe: object, path: str, *, liveness_like: bool) -> Errors:
    errs: Errors = []
    if not isinstance(probe, dict):
        return errs
    handlers = [h for h in _PROBE_HANDLERS if probe.get(h) is not None]
    if not handlers:
        errs.append(required(path, "must specify a handler type"))
    for h in handlers[1:]:
        errs.append(forbidden(f"{path}.{h}", "may not specify more than 1 handler type"))
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                "failureThreshold"):
        value = probe.get(key)
        if isinstance(value, int) and value < 0:
            errs.append(invalid_value(f"{path}.{key}", value, "must be greater than or equal to 0"))
    if liveness_like and probe.get("successThreshold") not in (None, 1):
        # Liveness and startup probes: a single success is all that can ever be meant.
        errs.append(invalid_value(f"{path}.successThreshold", probe.get("successThreshold"), "must be 1"))
    for h in ("httpGet", "tcpSocket"):
        action = probe.get(h)
        if isinstance(action, dict):
            errs += validate_port_num_or_name(action.get("port"), f"{path}.{h}.port")
    return errs


def validate_port_num_or_name(port: object, path: str) -> Errors:
    """An IntOrString port: a number 1-65535 or an IANA service name like "http"."""
    if isinstance(port, str) and not port.isdigit():
        return [invalid_value(path, port, m) for m in is_valid_port_name(port)]
    if isinstance(port, str):
        port = int(port)
    return [invalid_value(path, port, m) for m in is_valid_port_num(port)]


def validate_container(c: Obj, path: str, volume_names: set[str]) -> Errors:
    """Everything about one container except name uniqueness (the caller sees all names)."""
    errs: Errors = []
    name = c.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name", ""))
    else:
        errs += [invalid_value(f"{path}.name", name, m) for m in is_dns1123_label(name)]
    image = c.get("image") or ""
    if not image:
        errs.append(required(f"{path}.image", ""))
    elif image != image.strip():
        errs.append(invalid_value(f"{path}.image", image, "must not have leading or trailing whitespace"))
    errs += validate_container_ports(c.get("ports"), f"{path}.ports")
    errs += validate_env(c.get("env"), f"{path}.env")
    errs += validate_volume_mounts(c.get("volumeMounts"), volume_names, f"{path}.volumeMounts")
    errs += validate_resources(c.get("resources"), f"{path}.resources")
    errs += validate_probe(c.get("livenessProbe"), f"{path}.livenessProbe", liveness_like=True)
    errs += validate_probe(c.get("startupProbe"), f"{path}.startupProbe", liveness_like=True)
    errs += validate_probe(c.get("readinessProbe"), f"{path}.readinessProbe", liveness_like=False)
    policy = c.get("imagePullPolicy") or ""
    if not policy:
        errs.append(required(f"{path}.imagePullPolicy", ""))
    elif policy not in SUPPORTED_PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", policy, SUPPORTED_PULL_POLICIES))
    tmp = c.get("terminationMessagePolicy") or ""
    if not tmp:
        errs.append(required(f"{path}.terminationMessagePolicy", ""))
    elif tmp not in SUPPORTED_TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", tmp,
                                  SUPPORTED_TERMINATION_MESSAGE_POLICIES))
    return errs


def validate_containers(containers: object, path: str, volume_names: set[str], seen: set[str],
                        *, need_one: bool) -> Errors:
    """A list of containers; `seen` carries names across containers and initContainers."""
    errs: Errors = []
    if not isinstance(containers, list) or not containers:
        return [required(path, "")] if need_one else []
    for i, c in enumerate(containers):
        p = f"{path}[{i}]"
        if not isinstance(c, dict):
            errs.append(invalid_value(p, c, "must be an object"))
            continue
        errs += validate_container(c, p, volume_names)
        name = c.get("name") or ""
        if name and name in seen:
            errs.append(duplicate(f"{p}.name", name))
        seen.add(name)
    return errs
