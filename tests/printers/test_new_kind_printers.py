"""Printers of the course kinds: kubectl 1.32's columns (priority 1 marked "*") and cells."""

from __future__ import annotations

from datetime import UTC, datetime

from apiserver.printers import build_table

NOW = datetime(2024, 1, 1, tzinfo=UTC)

NEW_KIND_COLUMNS: dict[str, list[str]] = {
    "persistentvolumes": ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
                          "VolumeAttributesClass", "Reason", "Age", "*VolumeMode"],
    "persistentvolumeclaims": ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
                               "VolumeAttributesClass", "Age", "*VolumeMode"],
    "storageclasses.storage.k8s.io": ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode",
                                      "AllowVolumeExpansion", "Age"],
    "ingresses.networking.k8s.io": ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
    "ingressclasses.networking.k8s.io": ["Name", "Controller", "Parameters", "Age"],
    "networkpolicies.networking.k8s.io": ["Name", "Pod-Selector", "Age"],
    "endpointslices.discovery.k8s.io": ["Name", "AddressType", "Ports", "Endpoints", "Age"],
    "poddisruptionbudgets.policy": ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
    "priorityclasses.scheduling.k8s.io": ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
    "controllerrevisions.apps": ["Name", "Controller", "Revision", "Age"],
    "apiservices.apiregistration.k8s.io": ["Name", "Service", "Available", "Age"],
}


def cells(resource: str, obj: dict) -> list:
    obj = {"metadata": {"name": "x", "creationTimestamp": "2023-12-31T23:00:00Z"}, **obj}
    return list(build_table(resource, [obj], now=NOW)["rows"][0]["cells"])


def test_bound_claim_and_volume() -> None:
    pv = {"spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"],
                   "persistentVolumeReclaimPolicy": "Delete", "claimRef": {"namespace": "ns", "name": "data"},
                   "storageClassName": "fast", "volumeMode": "Block"},
          "status": {"phase": "Bound"}}
    assert cells("persistentvolumes", pv) == ["x", "5Gi", "ROX,RWOP", "Delete", "Bound", "ns/data", "fast",
                                              "<unset>", "", "60m", "Block"]
    pvc = {"spec": {"volumeName": "pv1", "storageClassName": "fast"},
           "status": {"phase": "Bound", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"]}}
    assert cells("persistentvolumeclaims", pvc) == ["x", "Bound", "pv1", "5Gi", "RWO", "fast", "<unset>", "60m",
                                                    "<unset>"]


def test_ingress_hosts_and_tls_ports_and_class_parameters() -> None:
    ing = {"spec": {"rules": [{"host": h} for h in ("a", "b", "c", "d")], "tls": [{}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "lb.example"}]}}}
    assert cells("ingresses.networking.k8s.io", ing) == ["x", "<none>", "a,b,c + 1 more...",
                                                         "1.2.3.4,lb.example", "80, 443", "60m"]
    assert cells("ingresses.networking.k8s.io", {"spec": {"rules": [{}]}})[2] == "*"
    ic = {"spec": {"controller": "c", "parameters": {"apiGroup": "k8s.example.com", "kind": "P", "name": "n"}}}
    assert cells("ingressclasses.networking.k8s.io", ic)[2] == "P.k8s.example.com/n"


def test_endpoint_slice_pdb_priority_class_and_revision() -> None:
    empty = cells("endpointslices.discovery.k8s.io", {"addressType": "IPv4"})
    assert empty[1:4] == ["IPv4", "<unset>", "<unset>"]
    assert cells("poddisruptionbudgets.policy", {"spec": {"minAvailable": "50%"},
                                                 "status": {"disruptionsAllowed": 2}})[1:4] == ["50%", "N/A", 2]
    assert cells("priorityclasses.scheduling.k8s.io", {"value": 5, "globalDefault": True})[1:] == [
        5, True, "60m", "PreemptLowerPriority"]
    rev = {"metadata": {"name": "x", "creationTimestamp": "2023-12-31T23:00:00Z", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True}]}, "revision": 3}
    assert cells("controllerrevisions.apps", rev)[1:3] == ["StatefulSet.apps/web", 3]


def test_api_service_names_its_service_or_local_and_says_why_it_is_unavailable() -> None:
    local = {"spec": {"group": "apps", "version": "v1"},
             "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]}}
    assert cells("apiservices.apiregistration.k8s.io", local) == ["x", "Local", "True", "60m"]
    down = {"spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
            "status": {"conditions": [{"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck"}]}}
    assert cells("apiservices.apiregistration.k8s.io", down) == ["x", "kube-system/metrics-server",
                                                                 "False (FailedDiscoveryCheck)", "60m"]
