"""The real kubectl 1.32 with the course kinds: `create -f` a manifest of them, `get` them all at once
with kubectl's columns, and `kubectl autoscale` (which speaks autoscaling/v1)."""

from __future__ import annotations

import json

from tests.compat.conftest import Kubectl, columns

MANIFEST = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {ns}-high}}
value: 1000
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web, namespace: {ns}}}
spec: {{maxUnavailable: 1, selector: {{matchLabels: {{app: web}}}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: web, namespace: {ns}}}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {{name: {ns}-nginx}}
spec: {{controller: k8s.io/ingress-nginx}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: deny, namespace: {ns}}}
spec: {{podSelector: {{}}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {ns}-pv}}
spec: {{capacity: {{storage: 1Gi}}, accessModes: [ReadWriteOnce], hostPath: {{path: /tmp/pv}}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data, namespace: {ns}}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-sc}}
provisioner: example.com/disk
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {{name: web-1, namespace: {ns}}}
revision: 1
data: {{spec: {{}}}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-x, namespace: {ns}}}
addressType: IPv4
endpoints: [{{addresses: [10.0.0.9]}}]
ports: [{{port: 80}}]
"""

HEADERS = {
    "priorityclass.scheduling.k8s.io": ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
    "poddisruptionbudget.policy": ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"],
    "ingress.networking.k8s.io": ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
    "ingressclass.networking.k8s.io": ["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
    "networkpolicy.networking.k8s.io": ["NAME", "POD-SELECTOR", "AGE"],
    "persistentvolume": ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
                         "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"],
    "persistentvolumeclaim": ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS",
                              "VOLUMEATTRIBUTESCLASS", "AGE"],
    "storageclass.storage.k8s.io": ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                                    "ALLOWVOLUMEEXPANSION", "AGE"],
    "controllerrevision.apps": ["NAME", "CONTROLLER", "REVISION", "AGE"],
    "endpointslice.discovery.k8s.io": ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
}


def test_create_and_get_all_new_kinds(kubectl: Kubectl, ns: str) -> None:
    created = kubectl.ok("create", "-f", "-", stdin=MANIFEST.format(ns=ns)).lines()
    assert len(created) == 10
    out = kubectl.ok("get", "pc,pdb,ing,ingressclass,netpol,pv,pvc,sc,controllerrevisions,endpointslices",
                     "-n", ns).out
    blocks = [b.splitlines() for b in out.strip().split("\n\n")]
    seen = {}
    for block in blocks:
        header = columns(block[0])
        kind = columns(block[1])[0].split("/")[0]
        seen[kind] = (header, [columns(line) for line in block[1:]])
    for kind, header in HEADERS.items():
        assert seen[kind][0] == header, kind
    rows = {kind: {r[0].split("/", 1)[1]: r for r in found} for kind, (_, found) in seen.items()}
    assert rows["priorityclass.scheduling.k8s.io"][f"{ns}-high"][1:3] == ["1000", "false"]
    assert "system-node-critical" in rows["priorityclass.scheduling.k8s.io"]
    assert rows["poddisruptionbudget.policy"]["web"][1:4] == ["N/A", "1", "0"]
    assert rows["ingress.networking.k8s.io"]["web"][1:3] == ["<none>", "web.example.com"]
    assert rows["persistentvolume"][f"{ns}-pv"][1:5] == ["1Gi", "RWO", "Retain", "Pending"]
    assert rows["persistentvolumeclaim"]["data"][1] == "Pending"
    assert rows["endpointslice.discovery.k8s.io"]["web-x"][1:4] == ["IPv4", "80", "10.0.0.9"]
    described = kubectl.ok("describe", "pvc", "data", "-n", ns).out
    assert "Status:" in described and "Pending" in described
    refused = kubectl("create", "-f", "-", stdin=(
        f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: both, namespace: {ns}}}\n"
        "spec: {minAvailable: 1, maxUnavailable: 1}\n"))
    assert refused.rc != 0 and "minAvailable and maxUnavailable cannot be both set" in refused.err
    for kind in ("pv", "sc", "pc", "ingressclass"):
        # --wait=false: no controller-manager here to lift the volume's pv-protection finalizer
        kubectl.ok("delete", kind, {"pv": f"{ns}-pv", "sc": f"{ns}-sc", "pc": f"{ns}-high",
                                    "ingressclass": f"{ns}-nginx"}[kind], "--wait=false")


def test_kubectl_autoscale_creates_an_autoscaling_v1_hpa(kubectl: Kubectl, ns: str) -> None:
    kubectl.ok("create", "deployment", "x", "--image=nginx:1.25", "-n", ns)
    made = kubectl.ok("autoscale", "deployment", "x", "--min=1", "--max=3", "--cpu-percent=50", "-n", ns)
    assert "horizontalpodautoscaler.autoscaling/x autoscaled" in made.out
    row = columns(kubectl.ok("get", "hpa", "x", "-n", ns).lines()[1])
    assert row[:5] == ["x", "Deployment/x", "cpu: <unknown>/50%", "1", "3"]
    v1 = json.loads(kubectl.ok("get", "horizontalpodautoscalers.v1.autoscaling", "x", "-n", ns, "-o", "json").out)
    assert v1["apiVersion"] == "autoscaling/v1" and v1["spec"]["targetCPUUtilizationPercentage"] == 50
    v2 = json.loads(kubectl.ok("get", "hpa", "x", "-n", ns, "-o", "json").out)
    assert v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50


def test_kubectl_debug_adds_an_ephemeral_container(kubectl: Kubectl, ns: str) -> None:
    kubectl.ok("run", "app", "--image=nginx:1.25", "-n", ns)
    kubectl.ok("debug", "app", "--image=busybox:1.36", "-c", "debugger", "-n", ns)
    pod = json.loads(kubectl.ok("get", "pod", "app", "-n", ns, "-o", "json").out)
    (debugger,) = pod["spec"]["ephemeralContainers"]
    assert debugger["name"] == "debugger" and debugger["image"] == "busybox:1.36"
    assert debugger["terminationMessagePolicy"] == "File"
    again = kubectl("debug", "app", "--image=busybox:1.36", "-c", "app", "-n", ns)
    assert again.rc != 0 and "Duplicate value" in again.err
