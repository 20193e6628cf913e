"""Service validation.

A Service is a stable virtual address (clusterIP) plus ports in front of a changing set of pods.
What can go wrong: ports that collide (two entries for TCP/80 would make the proxy's job
ambiguous), a nodePort on a service type that opens no node ports, a name that is not a valid
DNS label (the name becomes `<name>.<ns>.svc`), and — on update — a changed clusterIP: clients
have already cached the old address, so it may never change once allocated.

Whether a requested nodePort/clusterIP is *free and in range* is not validation but allocation
(allocators.py), as in Kubernetes.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from api.errors import FieldError, duplicate, forbidden, invalid_value, not_supported, required
from apiserver.registry.validation.container import SUPPORTED_PORT_PROTOCOLS, validate_port_num_or_name
from apiserver.registry.validation.meta import validate_labels, validate_object_meta
from apiserver.registry.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_port_num,
    name_is_dns1035_label,
)

Obj = dict[str, Any]
Errors = list[FieldError]

SUPPORTED_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
SUPPORTED_SESSION_AFFINITY = ["ClientIP", "None"]
SUPPORTED_TRAFFIC_POLICIES = ["Cluster", "Local"]


def _is_headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None"


def validate_service_port(port: Obj, path: str, require_name: bool, names: set[str]) -> Errors:
    errs: Errors = []
    name = port.get("name") or ""
    if require_name and not name:
        # With several ports, names tell the Endpoints (and people) which port is which.
        errs.append(required(f"{path}.name", ""))
    elif name:
        errs += [invalid_value(f"{path}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port")
    errs += [invalid_value(f"{path}.port", number, m) for m in is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(required(f"{path}.protocol", ""))
    elif protocol not in SUPPORTED_PORT_PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, SUPPORTED_PORT_PROTOCOLS))
    errs += validate_port_num_or_name(port.get("targetPort"), f"{path}.targetPort")
    node_port = port.get("nodePort")
    if node_port:
        errs += [invalid_value(f"{path}.nodePort", node_port, m) for m in is_valid_port_num(node_port)]
    return errs


def validate_cluster_ips(spec: Obj) -> Errors:
    errs: Errors = []
    for i, ip in enumerate(spec.get("clusterIPs") or []):
        if ip == "None":
            if spec.get("type") in ("NodePort", "LoadBalancer"):
                errs.append(invalid_value(f"spec.clusterIPs[{i}]", ip,
                                          f"may not be set to 'None' for {spec.get('type')} services"))
            continue
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            errs.append(invalid_value(f"spec.clusterIPs[{i}]", ip,
                                      "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
    return errs


def validate_service_spec(spec: object) -> Errors:
    if not isinstance(spec, dict):
        return [required("spec", "")]
    errs: Errors = []
    svc_type = spec.get("type") or ""
    ports = spec.get("ports") or []
    if not ports and not _is_headless(spec) and svc_type != "ExternalName":
        errs.append(required("spec.ports", ""))
    if svc_type == "ExternalName":
        if spec.get("clusterIPs"):
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        cname = (spec.get("externalName") or "").removesuffix(".")
        if cname:
            errs += [invalid_value("spec.externalName", cname, m) for m in is_dns1123_subdomain(cname)]
        else:
            errs.append(required("spec.externalName", ""))
    else:
        errs += validate_cluster_ips(spec)
    names: set[str] = set()
    for i, port in enumerate(ports):
        if isinstance(port, dict):
            errs += validate_service_port(port, f"spec.ports[{i}]", len(ports) > 1, names)
    errs += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(required("spec.sessionAffinity", ""))
    elif affinity not in SUPPORTED_SESSION_AFFINITY:
        errs.append(not_supported("spec.sessionAffinity", affinity, SUPPORTED_SESSION_AFFINITY))
    if not svc_type:
        errs.append(required("spec.type", ""))
    elif svc_type not in SUPPORTED_SERVICE_TYPES:
        errs.append(not_supported("spec.type", svc_type, SUPPORTED_SERVICE_TYPES))
    if svc_type == "ClusterIP":
        for i, port in enumerate(ports):
            if isinstance(port, dict) and port.get("nodePort"):
                errs.append(forbidden(f"spec.ports[{i}].nodePort",
                                      "may not be used when `type` is 'ClusterIP'"))
    for key in ("externalTrafficPolicy", "internalTrafficPolicy"):
        value = spec.get(key)
        if value and value not in SUPPORTED_TRAFFIC_POLICIES:
            errs.append(not_supported(f"spec.{key}", value, SUPPORTED_TRAFFIC_POLICIES))
    seen_node_ports: set[tuple[str, int]] = set()
    seen_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        protocol = port.get("protocol") or ""
        node_port = port.get("nodePort")
        if node_port:
            if (protocol, node_port) in seen_node_ports:
                errs.append(duplicate(f"spec.ports[{i}].nodePort", node_port))
            seen_node_ports.add((protocol, node_port))
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        key = (port.get("protocol") or "", port.get("port"))
        if key in seen_ports:
            errs.append(duplicate(f"spec.ports[{i}]", {"port": key[1], "protocol": key[0]}))
        seen_ports.add(key)  # type: ignore[arg-type]
    return errs


def validate_service(obj: Obj) -> Errors:
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=name_is_dns1035_label)
    errs += validate_service_spec(obj.get("spec"))
    return errs


def validate_service_update(new: Obj, old: Obj) -> Errors:
    """The cluster IP is forever (unless the service changes to or from ExternalName, or the
    old object had none yet)."""
    errs: Errors = []
    new_spec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    if "ExternalName" in (new_spec.get("type"), old_spec.get("type")):
        return errs
    old_ips = old_spec.get("clusterIPs") or ([old_spec["clusterIP"]] if old_spec.get("clusterIP") else [])
    new_ips = new_spec.get("clusterIPs") or ([new_spec["clusterIP"]] if new_spec.get("clusterIP") else [])
    if old_ips and new_ips and old_ips[0] != new_ips[0]:
        errs.append(invalid_value("spec.clusterIPs[0]", new_ips, "may not change once set"))
    return errs
