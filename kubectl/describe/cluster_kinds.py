"""`describe` layouts of the course kinds: PersistentVolume(Claim), StorageClass,
PodDisruptionBudget and PriorityClass, in kubectl's field order and words; and the
EndpointSlices of a Service turned into the `Endpoints:` lines kubectl prints for it.

kubectl 1.32 reads a Service's endpoints from its EndpointSlices (label
`kubernetes.io/service-name`), counting endpoints whose `ready` condition is true or unset.
"""

from __future__ import annotations

from typing import Any

from kubectl.describe.common import annotations_multiline, describe_events, format_label_selector, labels_multiline
from kubectl.describe.writer import LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3, PrefixWriter

Obj = dict[str, Any]
_ACCESS = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def slices_as_endpoints(slices: list[Obj]) -> Obj:
    """EndpointSlices as one Endpoints-shaped object (ready endpoints only), for the service layout."""
    subsets = []
    for slice_ in slices:
        addresses = [
            {"ip": address}
            for endpoint in slice_.get("endpoints") or []
            if (endpoint.get("conditions") or {}).get("ready") is not False
            for address in endpoint.get("addresses") or []
        ]
        if addresses:
            subset: Obj = {"addresses": addresses}
            if slice_.get("ports"):
                subset["ports"] = slice_["ports"]
            subsets.append(subset)
    return {"subsets": subsets}


def _modes(modes: list[str] | None) -> str:
    return ",".join(short for mode, short in _ACCESS if mode in (modes or []))


def _finalizers(w: PrefixWriter, meta: Obj) -> None:
    w.write(LEVEL_0, f"Finalizers:\t[{' '.join(meta.get('finalizers') or [])}]\n")


def persistent_volume_claim(pvc: Obj, used_by: list[str], events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec, status = pvc["metadata"], pvc.get("spec") or {}, pvc.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(LEVEL_0, f"StorageClass:\t{spec.get('storageClassName', '')}\n")
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    w.write(LEVEL_0, f"Status:\t{phase}\n")
    w.write(LEVEL_0, f"Volume:\t{spec.get('volumeName', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    _finalizers(w, meta)
    bound = bool(spec.get("volumeName"))
    w.write(LEVEL_0, f"Capacity:\t{(status.get('capacity') or {}).get('storage', '') if bound else ''}\n")
    w.write(LEVEL_0, f"Access Modes:\t{_modes(status.get('accessModes')) if bound else ''}\n")
    if spec.get("volumeMode"):
        w.write(LEVEL_0, f"VolumeMode:\t{spec['volumeMode']}\n")
    w.write(LEVEL_0, f"Used By:\t{used_by[0] if used_by else '<none>'}\n")
    for name in used_by[1:]:
        w.write(LEVEL_0, f"\t{name}\n")
    describe_events(w, events)
    return w.text()


_SOURCES = {
    "hostPath": "HostPath (bare host directory volume)",
    "nfs": "NFS (an NFS mount that lasts the lifetime of a pod)",
    "local": "LocalVolume (a persistent volume backed by local storage on a node)",
    "csi": "CSI (a Container Storage Interface (CSI) volume source)",
}


def persistent_volume(pv: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec, status = pv["metadata"], pv.get("spec") or {}, pv.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    _finalizers(w, meta)
    w.write(LEVEL_0, f"StorageClass:\t{spec.get('storageClassName', '')}\n")
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    w.write(LEVEL_0, f"Status:\t{phase}\n")
    claim = spec.get("claimRef")
    w.write(LEVEL_0, f"Claim:\t{claim.get('namespace', '')}/{claim.get('name', '')}\n" if claim else "Claim:\t\n")
    w.write(LEVEL_0, f"Reclaim Policy:\t{spec.get('persistentVolumeReclaimPolicy', '')}\n")
    w.write(LEVEL_0, f"Access Modes:\t{_modes(spec.get('accessModes'))}\n")
    if spec.get("volumeMode"):
        w.write(LEVEL_0, f"VolumeMode:\t{spec['volumeMode']}\n")
    w.write(LEVEL_0, f"Capacity:\t{(spec.get('capacity') or {}).get('storage', '')}\n")
    w.write(LEVEL_0, f"Node Affinity:\t{'<none>' if not spec.get('nodeAffinity') else ''}\n")
    w.write(LEVEL_0, f"Message:\t{status.get('message', '')}\n")
    w.write(LEVEL_0, "Source:\n")
    for source, title in _SOURCES.items():
        if spec.get(source) is not None:
            w.write(LEVEL_1, f"Type:\t{title}\n")
            fields = dict(spec.get(source) or {})
            host_path_type = fields.pop("type", None) if source == "hostPath" else None
            for key, value in fields.items():
                w.write(LEVEL_1, f"{key[:1].upper()}{key[1:]}:\t{value}\n")
            if source == "hostPath":
                w.write(LEVEL_1, f"HostPathType:\t{host_path_type or '<none>'}\n")
    describe_events(w, events)
    return w.text()


def storage_class(sc: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta = sc["metadata"]
    annotations = meta.get("annotations") or {}
    default = annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"IsDefaultClass:\t{'Yes' if default else 'No'}\n")
    annotations_multiline(w, "Annotations", annotations)
    w.write(LEVEL_0, f"Provisioner:\t{sc.get('provisioner', '')}\n")
    params = sc.get("parameters") or {}
    w.write(LEVEL_0, f"Parameters:\t{','.join(f'{k}={v}' for k, v in sorted(params.items())) or '<none>'}\n")
    expand = sc.get("allowVolumeExpansion")
    w.write(LEVEL_0, f"AllowVolumeExpansion:\t{'<unset>' if expand is None else str(expand)}\n")
    w.write(LEVEL_0, f"MountOptions:\t{', '.join(sc.get('mountOptions') or []) or '<none>'}\n")
    w.write(LEVEL_0, f"ReclaimPolicy:\t{sc.get('reclaimPolicy', '')}\n")
    w.write(LEVEL_0, f"VolumeBindingMode:\t{sc.get('volumeBindingMode', '')}\n")
    describe_events(w, events)
    return w.text()


def pod_disruption_budget(pdb: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec, status = pdb["metadata"], pdb.get("spec") or {}, pdb.get("status") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("minAvailable") is not None:
        w.write(LEVEL_0, f"Min available:\t{spec['minAvailable']}\n")
    if spec.get("maxUnavailable") is not None:
        w.write(LEVEL_0, f"Max unavailable:\t{spec['maxUnavailable']}\n")
    w.write(LEVEL_0, f"Selector:\t{format_label_selector(spec.get('selector'))}\n")
    w.write(LEVEL_0, "Status:\n")
    w.write(LEVEL_1, f"Allowed disruptions:\t{status.get('disruptionsAllowed', 0)}\n")
    w.write(LEVEL_1, f"Current:\t{status.get('currentHealthy', 0)}\n")
    w.write(LEVEL_1, f"Desired:\t{status.get('desiredHealthy', 0)}\n")
    w.write(LEVEL_1, f"Total:\t{status.get('expectedPods', 0)}\n")
    describe_events(w, events)
    return w.text()


def priority_class(pc: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta = pc["metadata"]
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Value:\t{pc.get('value', 0)}\n")
    w.write(LEVEL_0, f"GlobalDefault:\t{str(bool(pc.get('globalDefault'))).lower()}\n")
    w.write(LEVEL_0, f"PreemptionPolicy:\t{pc.get('preemptionPolicy', '')}\n")
    w.write(LEVEL_0, f"Description:\t{pc.get('description', '')}\n")
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    describe_events(w, events)
    return w.text()


def _unset(value: Any) -> str:
    if value is None or value == "":
        return "<unset>"
    return str(value).lower() if isinstance(value, bool) else str(value)


def endpoint_slice(es: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta = es["metadata"]
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"AddressType:\t{es.get('addressType', '')}\n")
    ports = es.get("ports") or []
    if not ports:
        w.write(LEVEL_0, "Ports: <unset>\n")
    else:
        w.write(LEVEL_0, "Ports:\n")
        w.write(LEVEL_1, "Name\tPort\tProtocol\n")
        w.write(LEVEL_1, "----\t----\t--------\n")
        for p in ports:
            w.write(LEVEL_1, f"{_unset(p.get('name'))}\t{_unset(p.get('port'))}\t{_unset(p.get('protocol'))}\n")
    endpoints = es.get("endpoints") or []
    if not endpoints:
        w.write(LEVEL_0, "Endpoints: <none>\n")
    else:
        w.write(LEVEL_0, "Endpoints:\n")
        for e in endpoints:
            conditions = e.get("conditions") or {}
            w.write(LEVEL_1, f"- Addresses:\t{','.join(e.get('addresses') or [])}\n")
            w.write(LEVEL_2, "Conditions:\n")
            w.write(LEVEL_3, f"Ready:\t{_unset(conditions.get('ready'))}\n")
            w.write(LEVEL_2, f"Hostname:\t{_unset(e.get('hostname'))}\n")
            ref = e.get("targetRef")
            if ref:
                w.write(LEVEL_2, f"TargetRef:\t{ref.get('kind', '')}/{ref.get('name', '')}\n")
            w.write(LEVEL_2, f"NodeName:\t{_unset(e.get('nodeName'))}\n")
            w.write(LEVEL_2, f"Zone:\t{_unset(e.get('zone'))}\n")
    describe_events(w, events)
    return w.text()


def ingress_class(ic: Obj, events: list[Obj] | None) -> str:
    w = PrefixWriter()
    meta, spec = ic["metadata"], ic.get("spec") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"Controller:\t{spec.get('controller', '')}\n")
    params = spec.get("parameters")
    if params:
        w.write(LEVEL_0, "Parameters:\n")
        if params.get("apiGroup"):
            w.write(LEVEL_1, f"APIGroup:\t{params['apiGroup']}\n")
        w.write(LEVEL_1, f"Kind:\t{params.get('kind', '')}\n")
        w.write(LEVEL_1, f"Name:\t{params.get('name', '')}\n")
    describe_events(w, events)
    return w.text()
