"""ClusterIP and NodePort bookkeeping for Services, kept next to the allocators' state.

A Service's virtual IP comes from --service-cluster-ip-range and each NodePort from
--service-node-port-range. A requested value (the book's `nodePort: 30001`) is honoured if free;
a taken one is a 422 naming the field. Everything a Service held is released when it is deleted
or when an update stops needing it (NodePort → ClusterIP).

A dry run (`?dryRun=All`) gets the answer a real write would get — the IP and ports it would
receive, or the 422 for a taken one — and keeps nothing: what it took is given back before the
handler awaits anything, so no other request can ever see it taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import errors
from apiserver.registry.allocators import AllocationError

if TYPE_CHECKING:
    from apiserver.server import APIServer

NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def _invalid(svc: dict[str, Any], exc: AllocationError) -> errors.StatusError:
    return errors.invalid("Service", "", svc["metadata"].get("name", ""), [exc.field_error])


def allocate(
    server: APIServer, svc: dict[str, Any], old: dict[str, Any] | None = None, *, dry_run: bool = False
) -> list[tuple[str, Any]]:
    """Give `svc` its ClusterIP and NodePorts; returns what was newly taken (for rollback).

    With `dry_run` the values are filled in and released at once; nothing is returned."""
    taken: list[tuple[str, Any]] = []
    spec = svc.setdefault("spec", {})
    old_spec = (old or {}).get("spec") or {}
    try:
        if spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None":
            want = spec.get("clusterIP") or None
            if old_spec.get("clusterIP") and (want is None or want == old_spec["clusterIP"]):
                spec["clusterIP"] = old_spec["clusterIP"]
            else:
                ip = server.cluster_ips.allocate(want)
                taken.append(("ip", ip))
                spec["clusterIP"] = ip
            spec["clusterIPs"] = [spec["clusterIP"]]
        elif spec.get("clusterIP") == "None":
            spec["clusterIPs"] = ["None"]
        old_ports = {p.get("nodePort") for p in old_spec.get("ports") or [] if p.get("nodePort")}
        if spec.get("type") in NODE_PORT_TYPES:
            for i, p in enumerate(spec.get("ports") or []):
                want_port = p.get("nodePort")
                if want_port and want_port in old_ports:
                    continue
                port = server.node_ports.allocate(
                    int(want_port) if want_port else None, field=f"spec.ports[{i}].nodePort"
                )
                taken.append(("port", port))
                p["nodePort"] = port
        else:
            for p in spec.get("ports") or []:
                p.pop("nodePort", None)
    except AllocationError as exc:
        release_taken(server, taken)
        raise _invalid(svc, exc) from None
    if dry_run:
        release_taken(server, taken)
        return []
    return taken


def release_taken(server: APIServer, taken: list[tuple[str, Any]]) -> None:
    for what, value in taken:
        (server.cluster_ips if what == "ip" else server.node_ports).release(value)


def release_unused(server: APIServer, old: dict[str, Any], new: dict[str, Any] | None) -> None:
    """Release what `old` held and `new` (None = deleted) no longer holds."""
    old_spec, new_spec = old.get("spec") or {}, (new or {}).get("spec") or {}
    old_ip, new_ip = old_spec.get("clusterIP"), new_spec.get("clusterIP")
    if old_ip and old_ip != "None" and old_ip != new_ip:
        server.cluster_ips.release(old_ip)
    kept = {p.get("nodePort") for p in new_spec.get("ports") or [] if p.get("nodePort")}
    for p in old_spec.get("ports") or []:
        if p.get("nodePort") and p["nodePort"] not in kept:
            server.node_ports.release(int(p["nodePort"]))
