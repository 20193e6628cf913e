"""One describer per kind: Pod, ReplicationController, ReplicaSet, Deployment, Node, Service,
Namespace (kubectl's describe.go layouts, field by field; generic() for the rest).

Each takes the object plus whatever else kubectl fetches for it (its events, its pods, its
ReplicaSets, the node's Lease...) and returns the text. Fetching lives in describe/__init__.py.
"""

from __future__ import annotations

from typing import Any

from api.quantity import Quantity, parse_quantity
from kubectl.describe import quota_kinds
from kubectl.describe.common import (
    annotations_multiline,
    controller_of,
    describe_events,
    format_label_selector,
    format_labels,
    labels_multiline,
    rfc1123z,
    since,
    taints_multiline,
    tolerations_multiline,
)
from kubectl.describe.podtemplate import describe_containers, describe_pod_template, describe_volumes
from kubectl.describe.writer import LEVEL_0, LEVEL_1, PrefixWriter

Obj = dict[str, Any]


def qos_class(pod: Obj) -> str:
    if (pod.get("status") or {}).get("qosClass"):
        return str(pod["status"]["qosClass"])
    containers = (pod.get("spec") or {}).get("containers") or []
    res = [c.get("resources") or {} for c in containers]
    if all(not r.get("requests") and not r.get("limits") for r in res):
        return "BestEffort"
    for r in res:
        lim, req = r.get("limits") or {}, {**(r.get("limits") or {}), **(r.get("requests") or {})}
        for name in ("cpu", "memory"):
            if name not in lim or parse_quantity(lim[name]) != parse_quantity(req.get(name, "0")):
                return "Burstable"
    return "Guaranteed"


def pod(p: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec, status = p["metadata"], p.get("spec") or {}, p.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("priority") is not None:
        w.write(LEVEL_0, f"Priority:\t{spec['priority']}\n")
    if spec.get("priorityClassName"):
        w.write(LEVEL_0, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    if spec.get("runtimeClassName"):
        w.write(LEVEL_0, f"Runtime Class Name:\t{spec['runtimeClassName']}\n")
    if spec.get("serviceAccountName"):
        w.write(LEVEL_0, f"Service Account:\t{spec['serviceAccountName']}\n")
    node = spec.get("nodeName")
    w.write(LEVEL_0, f"Node:\t{node}/{status.get('hostIP', '')}\n" if node else "Node:\t<none>\n")
    if status.get("startTime"):
        w.write(LEVEL_0, f"Start Time:\t{rfc1123z(status['startTime'])}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Failed", "Succeeded"):
        from datetime import UTC, datetime

        from kubectl.describe.common import human_duration, parse_time

        until = parse_time(meta["deletionTimestamp"])
        left = (until - datetime.now(UTC)).total_seconds() if until else 0
        w.write(LEVEL_0, f"Status:\tTerminating (lasts {human_duration(left)})\n")
        w.write(LEVEL_0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s\n")
    else:
        w.write(LEVEL_0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("reason"):
        w.write(LEVEL_0, f"Reason:\t{status['reason']}\n")
    if status.get("message"):
        w.write(LEVEL_0, f"Message:\t{status['message']}\n")
    w.write(LEVEL_0, f"IP:\t{status.get('podIP', '')}\n")
    ips = status.get("podIPs") or []
    if not ips:
        w.write(LEVEL_0, "IPs:\t<none>\n")
    else:
        w.write(LEVEL_0, "IPs:\n")
        for ip in ips:
            w.write(LEVEL_1, f"IP:\t{ip.get('ip', '')}\n")
    if controller_of(p):
        w.write(LEVEL_0, f"Controlled By:\t{controller_of(p)}\n")
    if status.get("nominatedNodeName"):
        w.write(LEVEL_0, f"NominatedNodeName:\t{status['nominatedNodeName']}\n")
    if spec.get("initContainers"):
        describe_containers(
            w, "Init Containers", spec["initContainers"], status.get("initContainerStatuses"), ""
        )
    describe_containers(w, "Containers", spec.get("containers") or [], status.get("containerStatuses"), "")
    if status.get("conditions"):
        w.write(LEVEL_0, "Conditions:\n  Type\tStatus\n")
        for c in status["conditions"]:
            w.write(LEVEL_1, f"{c.get('type')} \t{c.get('status')} \n")
    describe_volumes(w, spec.get("volumes"), "")
    w.write(LEVEL_0, f"QoS Class:\t{qos_class(p)}\n")
    labels_multiline(w, "Node-Selectors", spec.get("nodeSelector"))
    tolerations_multiline(w, "Tolerations", spec.get("tolerations"))
    describe_events(w, events)
    return w.text()


def _conditions_table(w: PrefixWriter, conditions: list[Obj] | None) -> None:
    if conditions:
        w.write(LEVEL_0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(LEVEL_1, "----\t------\t------\n")
        for c in conditions:
            w.write(LEVEL_1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")


def _pods_status(counts: dict[str, int]) -> str:
    return (
        f"{counts.get('Running', 0)} Running / {counts.get('Pending', 0)} Waiting / "
        f"{counts.get('Succeeded', 0)} Succeeded / {counts.get('Failed', 0)} Failed"
    )


def _replicated(obj: Obj, selector: str, pod_phases: dict[str, int], events: list[Obj] | None) -> str:
    """The layout kubectl shares between ReplicationControllers and ReplicaSets."""
    w = PrefixWriter()
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(LEVEL_0, f"Selector:\t{selector}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    if controller_of(obj):
        w.write(LEVEL_0, f"Controlled By:\t{controller_of(obj)}\n")
    w.write(LEVEL_0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 1)} desired\n")
    w.write(LEVEL_0, f"Pods Status:\t{_pods_status(pod_phases)}\n")
    describe_pod_template(w, spec.get("template"))
    _conditions_table(w, status.get("conditions"))
    describe_events(w, events)
    return w.text()


def replication_controller(rc: Obj, pod_phases: dict[str, int], events: list[Obj] | None) -> str:
    return _replicated(rc, format_labels((rc.get("spec") or {}).get("selector")), pod_phases, events)


def replica_set(rs: Obj, pod_phases: dict[str, int], events: list[Obj] | None) -> str:
    return _replicated(rs, format_label_selector((rs.get("spec") or {}).get("selector")), pod_phases, events)


def _rs_list(sets: list[Obj]) -> str:
    text = ", ".join(
        f"{r['metadata']['name']} ({(r.get('status') or {}).get('replicas', 0)}/"
        f"{(r.get('spec') or {}).get('replicas', 1)} replicas created)"
        for r in sets
    )
    return text or "<none>"


def deployment(d: Obj, replica_sets: tuple[list[Obj], Obj | None] | None, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec, status = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(LEVEL_0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"Selector:\t{format_label_selector(spec.get('selector'))}\n")
    w.write(
        LEVEL_0,
        f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('updatedReplicas', 0)} updated | "
        f"{status.get('replicas', 0)} total | {status.get('availableReplicas', 0)} available | "
        f"{status.get('unavailableReplicas', 0)} unavailable\n",
    )
    strategy = spec.get("strategy") or {}
    w.write(LEVEL_0, f"StrategyType:\t{strategy.get('type', '')}\n")
    w.write(LEVEL_0, f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}\n")
    if strategy.get("rollingUpdate") is not None:
        ru = strategy["rollingUpdate"]
        w.write(
            LEVEL_0,
            f"RollingUpdateStrategy:\t{ru.get('maxUnavailable', '')} max unavailable, "
            f"{ru.get('maxSurge', '')} max surge\n",
        )
    describe_pod_template(w, spec.get("template"))
    _conditions_table(w, status.get("conditions"))
    if replica_sets is not None and (replica_sets[0] or replica_sets[1]):
        # kubectl 1.32 prints these two lines only when the Deployment owns some ReplicaSet.
        old, new = replica_sets
        w.write(LEVEL_0, f"OldReplicaSets:\t{_rs_list(old)}\n")
        w.write(LEVEL_0, f"NewReplicaSet:\t{_rs_list([new] if new else [])}\n")
    describe_events(w, events)
    return w.text()


def _roles(labels: dict[str, str]) -> list[str]:
    roles = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/") and k.split("/", 1)[1]:
            roles.add(k.split("/", 1)[1])
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return sorted(roles)


def _pct(part: Quantity, whole: Quantity, milli: bool) -> int:
    a, b = (part.milli_value(), whole.milli_value()) if milli else (part.value(), whole.value())
    return int(a / b * 100) if b else 0


def _pod_totals(p: Obj) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    req: dict[str, Quantity] = {}
    lim: dict[str, Quantity] = {}
    for c in (p.get("spec") or {}).get("containers") or []:
        r = c.get("resources") or {}
        for target, src in (
            (req, {**(r.get("limits") or {}), **(r.get("requests") or {})}),
            (lim, r.get("limits") or {}),
        ):
            for k, v in src.items():
                target[k] = target.get(k, Quantity(0)) + parse_quantity(v)
    return req, lim


def node(
    n: Obj, lease: Obj | None, lease_error: str, pods: list[Obj] | None, events: list[Obj] | None
) -> str:
    w = PrefixWriter()
    meta, spec, status = n["metadata"], n.get("spec") or {}, n.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Roles:\t{','.join(_roles(meta.get('labels') or {})) or '<none>'}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    taints_multiline(w, "Taints", spec.get("taints"))
    w.write(LEVEL_0, f"Unschedulable:\t{'true' if spec.get('unschedulable') else 'false'}\n")
    if lease is not None:
        ls = lease.get("spec") or {}
        w.write(LEVEL_0, "Lease:\n")
        w.write(LEVEL_1, f"HolderIdentity:\t{ls.get('holderIdentity') or '<unset>'}\n")
        w.write(
            LEVEL_1, f"AcquireTime:\t{rfc1123z(ls['acquireTime']) if ls.get('acquireTime') else '<unset>'}\n"
        )
        w.write(LEVEL_1, f"RenewTime:\t{rfc1123z(ls['renewTime']) if ls.get('renewTime') else '<unset>'}\n")
    else:
        w.write(LEVEL_0, f"Lease:\tFailed to get lease: {lease_error}\n")
    if status.get("conditions"):
        w.write(
            LEVEL_0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n"
        )
        w.write(LEVEL_1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in status["conditions"]:
            w.write(
                LEVEL_1,
                f"{c.get('type')} \t{c.get('status')} \t{rfc1123z(c.get('lastHeartbeatTime'))} \t"
                f"{rfc1123z(c.get('lastTransitionTime'))} \t{c.get('reason', '')} \t"
                f"{c.get('message', '')}\n",
            )
    w.write(LEVEL_0, "Addresses:\n")
    for a in status.get("addresses") or []:
        w.write(LEVEL_1, f"{a.get('type')}:\t{a.get('address')}\n")
    for field, title in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        if status.get(field):
            w.write(LEVEL_0, f"{title}:\n")
            for name in sorted(status[field]):
                w.write(LEVEL_0, f"  {name}:\t{status[field][name]}\n")
    info = status.get("nodeInfo") or {}
    w.write(LEVEL_0, "System Info:\n")
    for key, title in (
        ("machineID", "Machine ID"),
        ("systemUUID", "System UUID"),
        ("bootID", "Boot ID"),
        ("kernelVersion", "Kernel Version"),
        ("osImage", "OS Image"),
        ("operatingSystem", "Operating System"),
        ("architecture", "Architecture"),
        ("containerRuntimeVersion", "Container Runtime Version"),
        ("kubeletVersion", "Kubelet Version"),
        ("kubeProxyVersion", "Kube-Proxy Version"),
    ):
        w.write(LEVEL_0, f"  {title}:\t{info.get(key, '')}\n")
    if spec.get("podCIDR"):
        w.write(LEVEL_0, f"PodCIDR:\t{spec['podCIDR']}\n")
    if spec.get("podCIDRs"):
        w.write(LEVEL_0, f"PodCIDRs:\t{','.join(spec['podCIDRs'])}\n")
    if spec.get("providerID"):
        w.write(LEVEL_0, f"ProviderID:\t{spec['providerID']}\n")
    if pods is not None:
        _node_resources(w, n, pods)
    describe_events(w, events)
    return w.text()


def _node_resources(w: PrefixWriter, n: Obj, pods: list[Obj]) -> None:
    status = n.get("status") or {}
    alloc_src = status.get("allocatable") or status.get("capacity") or {}
    alloc = {k: parse_quantity(v) for k, v in alloc_src.items()}
    zero = Quantity(0)
    w.write(LEVEL_0, f"Non-terminated Pods:\t({len(pods)} in total)\n")
    w.write(LEVEL_1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
    w.write(LEVEL_1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
    total_req: dict[str, Quantity] = {}
    total_lim: dict[str, Quantity] = {}
    for p in pods:
        req, lim = _pod_totals(p)
        for src, dst in ((req, total_req), (lim, total_lim)):
            for k, v in src.items():
                dst[k] = dst.get(k, zero) + v
        cells = []
        for res_map in (req, lim):
            q = res_map.get("cpu", zero)
            cells.append(f"{q} ({_pct(q, alloc.get('cpu', zero), True)}%)")
        cpu_req, cpu_lim = cells
        cells = []
        for res_map in (req, lim):
            q = res_map.get("memory", zero)
            cells.append(f"{q} ({_pct(q, alloc.get('memory', zero), False)}%)")
        mem_req, mem_lim = cells
        meta = p["metadata"]
        w.write(
            LEVEL_1,
            f"{meta.get('namespace')}\t{meta['name']}\t\t{cpu_req}\t{cpu_lim}\t{mem_req}\t{mem_lim}\t"
            f"{since(meta.get('creationTimestamp'))}\n",
        )
    w.write(LEVEL_0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
    w.write(LEVEL_1, "Resource\tRequests\tLimits\n")
    w.write(LEVEL_1, "--------\t--------\t------\n")
    for name, milli in (("cpu", True), ("memory", False), ("ephemeral-storage", False)):
        r, lim_q = total_req.get(name, zero), total_lim.get(name, zero)
        a = alloc.get(name, zero)
        w.write(LEVEL_1, f"{name}\t{r} ({_pct(r, a, milli)}%)\t{lim_q} ({_pct(lim_q, a, milli)}%)\n")


def _endpoints_for(ep: Obj | None, port_name: str | None) -> str:
    subsets = (ep or {}).get("subsets") or []
    if not subsets:
        return "<none>"
    items: list[str] = []
    count, more = 0, False
    for ss in subsets:
        addresses = ss.get("addresses") or []
        if not ss.get("ports"):
            count += len(addresses)
            for a in addresses:
                if len(items) == 3:
                    more = True
                    break
                items.append(a.get("ip", ""))
            continue
        for port in ss["ports"]:
            if port_name is None or port.get("name", "") == port_name:
                count += len(addresses)
                for a in addresses:
                    if len(items) == 3:
                        more = True
                        break
                    items.append(f"{a.get('ip', '')}:{port.get('port')}")
    text = ",".join(items)
    return f"{text} + {count - 3} more..." if more else (text or "<none>")


def service(svc: Obj, endpoints: Obj | None, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec = svc["metadata"], svc.get("spec") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"Selector:\t{format_labels(spec.get('selector'))}\n")
    w.write(LEVEL_0, f"Type:\t{spec.get('type', '')}\n")
    if spec.get("ipFamilyPolicy"):
        w.write(LEVEL_0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}\n")
    w.write(LEVEL_0, f"IP Families:\t{','.join(spec.get('ipFamilies') or []) or '<none>'}\n")
    w.write(LEVEL_0, f"IP:\t{spec.get('clusterIP', '')}\n")
    w.write(LEVEL_0, f"IPs:\t{','.join(spec.get('clusterIPs') or []) or '<none>'}\n")
    if spec.get("externalIPs"):
        w.write(LEVEL_0, f"External IPs:\t{','.join(spec['externalIPs'])}\n")
    if spec.get("loadBalancerIP"):
        w.write(LEVEL_0, f"Desired LoadBalancer IP:\t{spec['loadBalancerIP']}\n")
    if spec.get("externalName"):
        w.write(LEVEL_0, f"External Name:\t{spec['externalName']}\n")
    for p in spec.get("ports") or []:
        name = p.get("name") or "<unset>"
        proto = p.get("protocol", "TCP")
        w.write(LEVEL_0, f"Port:\t{name}\t{p.get('port')}/{proto}\n")
        w.write(LEVEL_0, f"TargetPort:\t{p.get('targetPort', p.get('port'))}/{proto}\n")
        if p.get("nodePort"):
            w.write(LEVEL_0, f"NodePort:\t{name}\t{p['nodePort']}/{proto}\n")
        w.write(LEVEL_0, f"Endpoints:\t{_endpoints_for(endpoints, p.get('name', ''))}\n")
    if not spec.get("ports"):
        w.write(LEVEL_0, f"Endpoints:\t{_endpoints_for(endpoints, None)}\n")
    w.write(LEVEL_0, f"Session Affinity:\t{spec.get('sessionAffinity', '')}\n")
    if spec.get("externalTrafficPolicy"):
        w.write(LEVEL_0, f"External Traffic Policy:\t{spec['externalTrafficPolicy']}\n")
    if spec.get("internalTrafficPolicy"):
        w.write(LEVEL_0, f"Internal Traffic Policy:\t{spec['internalTrafficPolicy']}\n")
    if spec.get("healthCheckNodePort"):
        w.write(LEVEL_0, f"HealthCheck NodePort:\t{spec['healthCheckNodePort']}\n")
    describe_events(w, events)
    return w.text()


def namespace(ns: Obj, quotas: list[Obj], limit_ranges: list[Obj]) -> str:
    w = PrefixWriter()
    meta = ns["metadata"]
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"Status:\t{(ns.get('status') or {}).get('phase', '')}\n")
    w.write(LEVEL_0, "\n")
    if not quotas:
        w.write(LEVEL_0, "No resource quota.\n")
    else:
        w.write(LEVEL_0, "Resource Quotas\n")
        for q in sorted(quotas, key=lambda q: q["metadata"]["name"]):
            w.write(LEVEL_1, f"Name:\t{q['metadata']['name']}\n")
            scopes = sorted((q.get("spec") or {}).get("scopes") or [])
            if scopes:
                w.write(LEVEL_1, f"Scopes:\t{', '.join(scopes)}\n")
                for scope in scopes:
                    if scope in quota_kinds.SCOPE_HELP:
                        w.write(LEVEL_1, f"* {quota_kinds.SCOPE_HELP[scope]}\n")
            w.write(LEVEL_1, "Resource\tUsed\tHard\n")
            w.write(LEVEL_1, "--------\t---\t---\n")
            st = q.get("status") or {}
            hard, used = st.get("hard") or (q.get("spec") or {}).get("hard") or {}, st.get("used") or {}
            for name in sorted(hard):
                w.write(LEVEL_1, f"{name}\t{used.get(name, '0')}\t{hard[name]}\n")
    w.write(LEVEL_0, "\n")
    if not limit_ranges:
        w.write(LEVEL_0, "No LimitRange resource.\n")
    else:
        w.write(LEVEL_0, "Resource Limits\n " + quota_kinds.LIMIT_HEADER)
        w.write(LEVEL_0, " " + quota_kinds.LIMIT_RULE)
        for lr in limit_ranges:
            for row in quota_kinds.limit_rows(lr):
                w.write(LEVEL_0, " " + row)
    return w.text()


def generic(obj: Obj, events: list[Obj] | None) -> str:
    """Kinds without a describer of their own: name, namespace, labels, annotations, then the
    object's remaining fields as YAML (kubectl's generic describer does much the same)."""
    from kubectl.printing.output import to_yaml

    w = PrefixWriter()
    meta = obj["metadata"]
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    if meta.get("namespace"):
        w.write(LEVEL_0, f"Namespace:\t{meta['namespace']}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"API Version:\t{obj.get('apiVersion', '')}\n")
    w.write(LEVEL_0, f"Kind:\t{obj.get('kind', '')}\n")
    rest = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    for line in to_yaml(rest).splitlines() if rest else []:
        w.write(LEVEL_0, line + "\n")
    describe_events(w, events)
    return w.text()
