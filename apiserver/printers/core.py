"""Rows for the core/v1 kinds other than pods and events: nodes, namespaces, services, endpoints,
configmaps, secrets, replication controllers, service accounts and resource quotas.

Most cells are a field copied as is; the interesting ones are summaries:
- node STATUS comes from the Ready condition only (`Ready`, `NotReady` — also when the
  condition is Unknown because the node stopped reporting — or `Unknown` when there is no Ready
  condition at all), plus `SchedulingDisabled` for a cordoned node;
- service PORT(S) is `port/protocol`, or `port:nodePort/protocol` once a node port is allocated;
- endpoints show at most three `ip:port` pairs and then `+ N more...`.
LimitRanges have no printer in Kubernetes: they get the default NAME / CREATED AT table.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from apiserver.printers.columns import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    NONE,
    Cells,
    Column,
    TablePrinter,
    dig,
    items,
    mapping,
    number,
    wide,
)
from apiserver.printers.duration import UNKNOWN, parse_time, since
from apiserver.printers.formatting import format_labels, layout_container_cells


def _name(obj: dict[str, Any]) -> str:
    return dig(obj, "metadata", "name", default="")


def _age(obj: dict[str, Any], now: datetime) -> str:
    return since(parse_time(dig(obj, "metadata", "creationTimestamp")), now)


# --- nodes -------------------------------------------------------------------------------------

NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
NODE_ROLE_LABEL = "kubernetes.io/role"


def node_roles(node: dict[str, Any]) -> list[str]:
    """Roles from `node-role.kubernetes.io/<role>` label keys and the older `kubernetes.io/role`."""
    roles: set[str] = set()
    for key, value in mapping(node, "metadata", "labels").items():
        if key.startswith(NODE_ROLE_PREFIX) and key[len(NODE_ROLE_PREFIX) :]:
            roles.add(key[len(NODE_ROLE_PREFIX) :])
        elif key == NODE_ROLE_LABEL and value:
            roles.add(value)
    return sorted(roles)


def _node_address(node: dict[str, Any], kind: str) -> str:
    for address in items(node, "status", "addresses"):
        if address.get("type") == kind:
            return address.get("address", "")
    return NONE


def node_cells(node: dict[str, Any], now: datetime) -> Cells:
    conditions = {c.get("type"): c for c in items(node, "status", "conditions")}
    ready = conditions.get("Ready")
    if ready is None:
        status = ["Unknown"]
    else:
        status = ["Ready" if ready.get("status") == "True" else "NotReady"]
    if dig(node, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    info = mapping(node, "status", "nodeInfo")
    return [
        _name(node),
        ",".join(status),
        ",".join(node_roles(node)) or NONE,
        _age(node, now),
        info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        info.get("osImage") or UNKNOWN,
        info.get("kernelVersion") or UNKNOWN,
        info.get("containerRuntimeVersion") or UNKNOWN,
    ]


NODE_COLUMNS = (
    NAME,
    Column("Status", description="The status of the node"),
    Column("Roles", description="The roles of the node"),
    AGE,
    Column("Version", description="Kubelet Version reported by the node."),
    wide("Internal-IP", "List of addresses reachable to the node."),
    wide("External-IP", "List of addresses reachable to the node."),
    wide("OS-Image", "OS Image reported by the node from /etc/os-release."),
    wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r'."),
    wide("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API."),
)

# --- services and endpoints ----------------------------------------------------------------------


def _load_balancer_ips(service: dict[str, Any]) -> str:
    found = {i.get("ip") or i.get("hostname") for i in items(service, "status", "loadBalancer", "ingress")}
    return ",".join(sorted(x for x in found if x))


def service_external_ip(service: dict[str, Any]) -> str:
    spec = mapping(service, "spec")
    external_ips = [str(ip) for ip in items(spec, "externalIPs")]
    kind = spec.get("type", "")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external_ips) or NONE
    if kind == "LoadBalancer":
        balancer = _load_balancer_ips(service)
        if external_ips:
            return ",".join(([balancer] if balancer else []) + external_ips)
        return balancer or "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName", "")
    return UNKNOWN


def service_ports(service: dict[str, Any]) -> str:
    pieces = []
    for port in items(service, "spec", "ports"):
        protocol = port.get("protocol") or "TCP"  # the API server defaults it to TCP
        node_port = number(port, "nodePort")
        if node_port > 0:
            pieces.append(f"{number(port, 'port')}:{node_port}/{protocol}")
        else:
            pieces.append(f"{number(port, 'port')}/{protocol}")
    return ",".join(pieces) or NONE


def service_cells(service: dict[str, Any], now: datetime) -> Cells:
    spec = mapping(service, "spec")
    cluster_ips = items(spec, "clusterIPs")
    cluster_ip = (cluster_ips[0] if cluster_ips else spec.get("clusterIP")) or NONE
    return [
        _name(service),
        spec.get("type", ""),
        cluster_ip,
        service_external_ip(service),
        service_ports(service),
        _age(service, now),
        format_labels(mapping(spec, "selector")),
    ]


SERVICE_COLUMNS = (
    NAME,
    Column("Type", description="type determines how the Service is exposed."),
    Column("Cluster-IP", description="clusterIP is the IP address of the service."),
    Column(
        "External-IP",
        description="externalIPs is a list of IP addresses for which nodes in the "
        "cluster will also accept traffic for this service.",
    ),
    Column("Port(s)", description="The list of ports that are exposed by this service."),
    AGE,
    wide("Selector", "Route service traffic to pods with label keys and values matching this selector."),
)


def _host_port(ip: str, port: int) -> str:
    """net.JoinHostPort: IPv6 addresses go in brackets."""
    try:
        if isinstance(ipaddress.ip_address(ip), ipaddress.IPv6Address):
            return f"[{ip}]:{port}"
    except ValueError:
        pass
    return f"{ip}:{port}"


def format_endpoints(endpoints: dict[str, Any], limit: int = 3) -> str:
    subsets = items(endpoints, "subsets")
    if not subsets:
        return NONE
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [a.get("ip", "") for a in items(subset, "addresses")]
        ports = items(subset, "ports")
        if not ports:  # a headless service without ports: bare addresses
            count += len(addresses)
            shown.extend(addresses[: max(0, limit - len(shown))])
            continue
        for port in ports:
            count += len(addresses)
            for ip in addresses[: max(0, limit - len(shown))]:
                shown.append(_host_port(ip, number(port, "port")))
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if count > limit else text


def endpoints_cells(endpoints: dict[str, Any], now: datetime) -> Cells:
    return [_name(endpoints), format_endpoints(endpoints), _age(endpoints, now)]


# --- the small ones -------------------------------------------------------------------------------


def replication_controller_cells(rc: dict[str, Any], now: datetime) -> Cells:
    names, images = layout_container_cells(items(rc, "spec", "template", "spec", "containers"))
    return [
        _name(rc),
        number(rc, "spec", "replicas", default=1),  # defaulted to 1 by the API server
        number(rc, "status", "replicas"),
        number(rc, "status", "readyReplicas"),
        _age(rc, now),
        names,
        images,
        format_labels(mapping(rc, "spec", "selector")),
    ]


def resource_quota_cells(quota: dict[str, Any], now: datetime) -> Cells:
    """`cpu: 500m/2, pods: 3/10` under REQUEST; the `limits.*` resources go under LIMIT."""
    hard = mapping(quota, "status", "hard")
    used = mapping(quota, "status", "used")
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        column = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        column.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [_name(quota), ", ".join(requests), ", ".join(limits), _age(quota, now)]


PRINTERS = {
    "nodes": TablePrinter(NODE_COLUMNS, node_cells),
    "namespaces": TablePrinter(
        (NAME, Column("Status", description="The status of the namespace"), AGE),
        lambda ns, now: [_name(ns), dig(ns, "status", "phase", default=""), _age(ns, now)],
    ),
    "services": TablePrinter(SERVICE_COLUMNS, service_cells),
    "endpoints": TablePrinter(
        (NAME, Column("Endpoints", description="The set of all endpoints is the union of all subsets."), AGE),
        endpoints_cells,
    ),
    "configmaps": TablePrinter(
        (NAME, Column("Data", description="Data contains the configuration data."), AGE),
        lambda cm, now: [_name(cm), len(mapping(cm, "data")) + len(mapping(cm, "binaryData")), _age(cm, now)],
    ),
    "secrets": TablePrinter(
        (
            NAME,
            Column("Type", description="Used to facilitate programmatic handling of secret data."),
            Column("Data", description="Data contains the secret data."),
            AGE,
        ),
        lambda s, now: [_name(s), s.get("type", ""), len(mapping(s, "data")), _age(s, now)],
    ),
    "replicationcontrollers": TablePrinter(
        (
            NAME,
            Column("Desired", "integer", "Replicas is the number of desired replicas."),
            Column("Current", "integer", "Replicas is the most recently observed number of replicas."),
            Column("Ready", "integer", "The number of ready replicas for this replication controller."),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "Selector is a label query over pods that should match the Replicas count."),
        ),
        replication_controller_cells,
    ),
    "serviceaccounts": TablePrinter(
        (NAME, Column("Secrets", description="Secrets is a list of the secrets in the same namespace."), AGE),
        lambda sa, now: [_name(sa), len(items(sa, "secrets")), _age(sa, now)],
    ),
    "resourcequotas": TablePrinter(
        (
            NAME,
            Column(
                "Request",
                description="Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            Column(
                "Limit",
                description="Limits control the maximum amount of cpu/memory that a container "
                "may use independent of contention on the node.",
            ),
            AGE,
        ),
        resource_quota_cells,
    ),
}
