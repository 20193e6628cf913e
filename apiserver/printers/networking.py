"""Rows for Ingress, IngressClass, NetworkPolicy, EndpointSlice, PodDisruptionBudget,
PriorityClass and ControllerRevision: the smaller kinds a Kubernetes course meets.

An Ingress lists at most three hosts (`*` when rules name none) and its ports: 80, plus 443 when
it has TLS. An EndpointSlice lists its ports and at most three addresses (`+ N more...`),
`<unset>` when there are none; that is how a Service with no ready pods looks. A PDB shows
`N/A` for the bound it does not set.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import AGE, NAME, NONE, Cells, Column, TablePrinter, dig, items, number
from apiserver.printers.duration import translate_timestamp_since
from apiserver.printers.formatting import format_label_selector

UNSET = "<unset>"


def _age(obj: dict[str, Any], now: datetime) -> str:
    return translate_timestamp_since(dig(obj, "metadata", "creationTimestamp"), now)


def _name(obj: dict[str, Any]) -> str:
    return str(dig(obj, "metadata", "name", default=""))


def ingress_hosts(rules: list[dict[str, Any]], limit: int = 3) -> str:
    hosts = [rule["host"] for rule in rules if rule.get("host")]
    if not hosts:
        return "*"
    text = ",".join(hosts[:limit])
    if len(rules) > limit and len(hosts) >= limit:
        return f"{text} + {len(rules) - limit} more..."
    return text


def load_balancer_addresses(obj: dict[str, Any]) -> str:
    out = []
    for entry in items(obj, "status", "loadBalancer", "ingress"):
        if entry.get("ip"):
            out.append(entry["ip"])
        elif entry.get("hostname"):
            out.append(entry["hostname"])
    return ",".join(out)


def ingress_cells(ing: dict[str, Any], now: datetime) -> Cells:
    return [
        _name(ing),
        dig(ing, "spec", "ingressClassName") or NONE,
        ingress_hosts(items(ing, "spec", "rules")),
        load_balancer_addresses(ing),
        "80, 443" if items(ing, "spec", "tls") else "80",
        _age(ing, now),
    ]


def ingress_class_cells(ic: dict[str, Any], now: datetime) -> Cells:
    params = dig(ic, "spec", "parameters")
    text = NONE
    if params:
        kind = params.get("kind", "")
        if params.get("apiGroup"):
            kind = f"{kind}.{params['apiGroup']}"
        text = f"{kind}/{params.get('name', '')}"
    return [_name(ic), dig(ic, "spec", "controller", default=""), text, _age(ic, now)]


def network_policy_cells(np: dict[str, Any], now: datetime) -> Cells:
    return [_name(np), format_label_selector(dig(np, "spec", "podSelector")), _age(np, now)]


def endpoint_slice_ports(slice_: dict[str, Any]) -> str:
    ports = items(slice_, "ports")
    if not ports:
        return UNSET
    return ",".join(str(p["port"]) if p.get("port") is not None else UNSET for p in ports)


def endpoint_slice_endpoints(slice_: dict[str, Any], limit: int = 3) -> str:
    addresses = [a for endpoint in items(slice_, "endpoints") for a in endpoint.get("addresses") or []]
    if not addresses:
        return UNSET
    text = ",".join(addresses[:limit])
    return f"{text} + {len(addresses) - limit} more..." if len(addresses) > limit else text


def endpoint_slice_cells(slice_: dict[str, Any], now: datetime) -> Cells:
    return [
        _name(slice_),
        slice_.get("addressType", ""),
        endpoint_slice_ports(slice_),
        endpoint_slice_endpoints(slice_),
        _age(slice_, now),
    ]


def pdb_cells(pdb: dict[str, Any], now: datetime) -> Cells:
    low, high = dig(pdb, "spec", "minAvailable"), dig(pdb, "spec", "maxUnavailable")
    return [
        _name(pdb),
        "N/A" if low is None else str(low),
        "N/A" if high is None else str(high),
        number(pdb, "status", "disruptionsAllowed"),
        _age(pdb, now),
    ]


def priority_class_cells(pc: dict[str, Any], now: datetime) -> Cells:
    return [
        _name(pc),
        pc.get("value", 0),
        bool(pc.get("globalDefault")),
        _age(pc, now),
        pc.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


def controller_revision_cells(rev: dict[str, Any], now: datetime) -> Cells:
    owner = next((o for o in items(rev, "metadata", "ownerReferences") if o.get("controller")), None)
    controller = NONE
    if owner:
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        kind = f"{owner.get('kind', '')}.{group}" if group else str(owner.get("kind", ""))
        controller = f"{kind}/{owner.get('name', '')}"
    return [_name(rev), controller, number(rev, "revision"), _age(rev, now)]


PRINTERS = {
    "ingresses.networking.k8s.io": TablePrinter(
        (
            NAME,
            Column("Class", description="The name of the IngressClass resource that should be used for "
                   "additional configuration"),
            Column("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
            Column("Address", description="Address is a list containing ingress points for the load-balancer"),
            Column("Ports", description="Ports of TLS configurations that open"),
            AGE,
        ),
        ingress_cells,
    ),
    "ingressclasses.networking.k8s.io": TablePrinter(
        (
            NAME,
            Column("Controller", description="Controller that is responsible for handling this class"),
            Column("Parameters", description="A reference to a resource with additional parameters"),
            AGE,
        ),
        ingress_class_cells,
    ),
    "networkpolicies.networking.k8s.io": TablePrinter(
        (
            NAME,
            Column("Pod-Selector", description="podSelector selects the pods to which this NetworkPolicy "
                   "object applies."),
            AGE,
        ),
        network_policy_cells,
    ),
    "endpointslices.discovery.k8s.io": TablePrinter(
        (
            NAME,
            Column("AddressType", description="addressType specifies the type of address carried by this "
                   "EndpointSlice."),
            Column("Ports", description="ports specifies the list of network ports exposed by each endpoint "
                   "in this slice."),
            Column("Endpoints", description="endpoints is a list of unique endpoints in this slice."),
            AGE,
        ),
        endpoint_slice_cells,
    ),
    "poddisruptionbudgets.policy": TablePrinter(
        (
            NAME,
            Column("Min Available", description="The minimum number of pods that must be available "
                   "simultaneously.  This can be either an integer or a string specifying a percentage, e.g. \"28%\"."),
            Column("Max Unavailable", description="The maximum number of pods that may be unavailable "
                   "simultaneously.  This can be either an integer or a string specifying a percentage, e.g. \"28%\"."),
            Column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at "
                   "this time."),
            AGE,
        ),
        pdb_cells,
    ),
    "priorityclasses.scheduling.k8s.io": TablePrinter(
        (
            NAME,
            Column("Value", "integer", "value represents the integer value of this priority class."),
            Column("Global-Default", "boolean", "globalDefault specifies whether this PriorityClass should "
                   "be considered as the default priority for pods that do not have any priority class."),
            AGE,
            Column("PreemptionPolicy", description="preemptionPolicy is the Policy for preempting pods with "
                   "lower priority."),
        ),
        priority_class_cells,
    ),
    "controllerrevisions.apps": TablePrinter(
        (
            NAME,
            Column("Controller", description="Controller of the object"),
            Column("Revision", description="Revision indicates the revision of the state represented by Data."),
            AGE,
        ),
        controller_revision_cells,
    ),
}
