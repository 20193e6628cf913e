"""The course kinds (PV, PVC, StorageClass, Ingress, IngressClass, NetworkPolicy, PDB,
PriorityClass, ControllerRevision, EndpointSlice): stored, defaulted, validated with 422 causes
and served as Tables with kubectl's columns, on both backends."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def _body(api_version: str, kind: str, name: str, **rest: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **rest}


PV = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "hostPath": {"path": "/d"}}
PVC = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
INGRESS = {
    "ingressClassName": "nginx",
    "rules": [{"host": "a.example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}],
    "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
}

# (collection URL with {ns}, body, table columns, expected first cells, a bad body, field of its 422 cause)
CASES: list[tuple[str, dict[str, Any], list[str], list[Any], dict[str, Any], str]] = [
    ("/api/v1/persistentvolumes", _body("v1", "PersistentVolume", "{ns}-pv", spec=PV),
     ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
      "VolumeAttributesClass", "Reason", "Age", "VolumeMode"],
     ["{ns}-pv", "1Gi", "RWO,RWX", "Retain", "Pending", "", "", "<unset>", ""],
     _body("v1", "PersistentVolume", "{ns}-bad", spec={"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/"}}),
     "spec.capacity"),
    ("/api/v1/namespaces/{ns}/persistentvolumeclaims", _body("v1", "PersistentVolumeClaim", "data", spec=PVC),
     ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age",
      "VolumeMode"],
     ["data", "Pending", "", "", "", "", "<unset>"],
     _body("v1", "PersistentVolumeClaim", "bad", spec={"accessModes": ["ReadWriteOnce"]}),
     "spec.resources[storage]"),
    ("/apis/storage.k8s.io/v1/storageclasses",
     _body("storage.k8s.io/v1", "StorageClass", "{ns}-sc", provisioner="example.com/disk",
           metadata={"name": "{ns}-sc", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}),
     ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
     ["{ns}-sc (default)", "example.com/disk", "Delete", "Immediate", "false"],
     _body("storage.k8s.io/v1", "StorageClass", "{ns}-bad"), "provisioner"),
    ("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
     _body("networking.k8s.io/v1", "Ingress", "web", spec=INGRESS),
     ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
     ["web", "nginx", "a.example.com", "", "80, 443"],
     _body("networking.k8s.io/v1", "Ingress", "bad", spec={"rules": [{"http": {"paths": [
         {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}),
     "spec.rules[0].http.paths[0].pathType"),
    ("/apis/networking.k8s.io/v1/ingressclasses",
     _body("networking.k8s.io/v1", "IngressClass", "{ns}-ic", spec={"controller": "k8s.io/ingress-nginx"}),
     ["Name", "Controller", "Parameters", "Age"],
     ["{ns}-ic", "k8s.io/ingress-nginx", "<none>"],
     _body("networking.k8s.io/v1", "IngressClass", "{ns}-bad", spec={}), "spec.controller"),
    ("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
     _body("networking.k8s.io/v1", "NetworkPolicy", "deny", spec={"podSelector": {"matchLabels": {"app": "db"}}}),
     ["Name", "Pod-Selector", "Age"],
     ["deny", "app=db"],
     _body("networking.k8s.io/v1", "NetworkPolicy", "bad", spec={"podSelector": {}, "policyTypes": ["Sideways"]}),
     "spec.policyTypes[0]"),
    ("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
     _body("policy/v1", "PodDisruptionBudget", "web", spec={"minAvailable": 2,
                                                           "selector": {"matchLabels": {"app": "web"}}}),
     ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
     ["web", "2", "N/A", 0],
     _body("policy/v1", "PodDisruptionBudget", "bad", spec={"minAvailable": 1, "maxUnavailable": 1}), "spec"),
    ("/apis/scheduling.k8s.io/v1/priorityclasses",
     _body("scheduling.k8s.io/v1", "PriorityClass", "{ns}-high", value=1000),
     ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
     ["{ns}-high", 1000, False],
     _body("scheduling.k8s.io/v1", "PriorityClass", "{ns}-bad", value=2_000_000_000), "value"),
    ("/apis/apps/v1/namespaces/{ns}/controllerrevisions",
     _body("apps/v1", "ControllerRevision", "web-1", revision=1, data={"spec": {}}),
     ["Name", "Controller", "Revision", "Age"],
     ["web-1", "<none>", 1],
     _body("apps/v1", "ControllerRevision", "bad", revision=-1), "revision"),
    ("/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
     _body("discovery.k8s.io/v1", "EndpointSlice", "web-abc", addressType="IPv4",
           endpoints=[{"addresses": [f"10.0.0.{i}"]} for i in range(1, 6)], ports=[{"port": 80}]),
     ["Name", "AddressType", "Ports", "Endpoints", "Age"],
     ["web-abc", "IPv4", "80", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."],
     _body("discovery.k8s.io/v1", "EndpointSlice", "bad", addressType="IPv5"), "addressType"),
]


def _fill(value: Any, ns: str) -> Any:
    if isinstance(value, str):
        return value.replace("{ns}", ns)
    if isinstance(value, list | tuple):
        return [_fill(v, ns) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ns) for k, v in value.items()}
    return value


@pytest.mark.parametrize("case", CASES, ids=[c[0].rsplit("/", 1)[1] for c in CASES])
def test_crud_validation_and_table(api: httpx.Client, ns: str, case: tuple) -> None:
    url, body, columns, cells, bad, field = _fill(case, ns)
    created = api.post(url.format(ns=ns), json=body, params={"fieldValidation": "Strict"})
    assert created.status_code == 201, created.text
    name = body["metadata"]["name"]
    got = api.get(f"{url}/{name}")
    assert got.status_code == 200 and got.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
    table = api.get(url, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == columns
    row = next(r for r in table["rows"] if r["object"]["metadata"]["name"] == name)
    assert row["cells"][: len(cells)] == cells
    refused = api.post(url, json=bad)
    assert refused.status_code == 422, refused.text
    assert field in [c["field"] for c in refused.json()["details"]["causes"]]
    assert api.get(f"{url}/{bad['metadata']['name']}").status_code == 404
    assert api.delete(f"{url}/{name}").status_code == 200


def test_builtin_priority_classes_and_kubernetes_endpointslice(api: httpx.Client) -> None:
    pcs = {p["metadata"]["name"]: p for p in api.get("/apis/scheduling.k8s.io/v1/priorityclasses").json()["items"]}
    assert pcs["system-node-critical"]["value"] == 2000001000
    assert pcs["system-cluster-critical"]["value"] == 2000000000
    user = api.post("/apis/scheduling.k8s.io/v1/priorityclasses",
                    json=_body("scheduling.k8s.io/v1", "PriorityClass", "system-mine", value=5))
    assert user.status_code == 422 and user.json()["details"]["causes"][0]["field"] == "metadata.name"
    es = api.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes").json()
    assert es["metadata"]["labels"]["kubernetes.io/service-name"] == "kubernetes"
    assert es["addressType"] == "IPv4" and es["ports"][0]["name"] == "https"
    assert es["endpoints"][0]["conditions"]["ready"] is True


def test_status_subresources_and_immutable_fields(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    pvc = api.post(url, json=_body("v1", "PersistentVolumeClaim", "c", spec=PVC)).json()
    pvc["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}
    assert api.put(f"{url}/c/status", json=pvc).status_code == 200
    assert api.get(f"{url}/c").json()["status"]["phase"] == "Bound"
    changed = api.get(f"{url}/c").json()
    changed["spec"]["accessModes"] = ["ReadWriteMany"]
    refused = api.put(f"{url}/c", json=changed)
    assert refused.status_code == 422 and refused.json()["details"]["causes"][0]["field"] == "spec"
    pc_url = "/apis/scheduling.k8s.io/v1/priorityclasses"
    pc = api.post(pc_url, json=_body("scheduling.k8s.io/v1", "PriorityClass", f"{ns}-p", value=7)).json()
    pc["value"] = 8
    refused = api.put(f"{pc_url}/{ns}-p", json=pc)
    assert refused.status_code == 422 and refused.json()["details"]["causes"][0]["field"] == "value"


def test_discovery_lists_new_kinds(api: httpx.Client) -> None:
    core = {r["name"]: r for r in api.get("/api/v1").json()["resources"]}
    assert core["persistentvolumes"]["namespaced"] is False and core["persistentvolumes"]["shortNames"] == ["pv"]
    assert "persistentvolumeclaims/status" in core
    net = {r["name"]: r for r in api.get("/apis/networking.k8s.io/v1").json()["resources"]}
    assert net["ingresses"]["shortNames"] == ["ing"] and net["networkpolicies"]["shortNames"] == ["netpol"]
    groups = {g["name"] for g in api.get("/apis").json()["groups"]}
    assert {"networking.k8s.io", "policy", "storage.k8s.io", "scheduling.k8s.io", "discovery.k8s.io"} <= groups


def test_ephemeral_containers_may_only_be_added(api: httpx.Client, ns: str) -> None:
    pods = f"/api/v1/namespaces/{ns}/pods"
    api.post(pods, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}})
    url = f"{pods}/p/ephemeralcontainers"
    pod = api.get(url).json()
    pod["spec"]["ephemeralContainers"] = [{"name": "dbg", "image": "busybox:1.36", "targetContainerName": "c"}]
    assert api.put(url, json=pod).status_code == 200
    assert api.get(f"{pods}/p").json()["spec"]["ephemeralContainers"][0]["name"] == "dbg"
    gone = api.patch(url, json={"spec": {"ephemeralContainers": None}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert gone.status_code == 422 and "may not be removed" in gone.json()["message"]
    ported = api.patch(url, json={"spec": {"ephemeralContainers": [
        {"name": "x", "image": "busybox", "ports": [{"containerPort": 80}]}]}},
        headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert ported.status_code == 422
    fields = [c["field"] for c in ported.json()["details"]["causes"]]
    assert any(f.startswith("spec.ephemeralContainers[") and f.endswith("].ports") for f in fields), fields


def test_a_behavior_given_in_part_is_filled_in_with_kubernetes_defaults(api: httpx.Client, ns: str) -> None:
    url = f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}
    partial = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    made = api.post(url, json={"metadata": {"name": "partial"}, "spec": {**spec, "behavior": partial}})
    assert made.status_code == 201, made.text
    assert made.json()["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    }  # fmt: skip
    none = api.post(url, json={"metadata": {"name": "none"}, "spec": spec})
    assert "behavior" not in none.json()["spec"]  # no behavior: the controller's own defaults, nothing stored


def test_autoscaling_v1_is_served_from_the_stored_v2_object(api: httpx.Client, ns: str) -> None:
    v1 = f"/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers"
    body = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4, "targetCPUUtilizationPercentage": 60}}
    created = api.post(v1, json=body)
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["targetCPUUtilizationPercentage"] == 60
    stored = api.get(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/h").json()
    assert stored["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 60}
    listed = api.get(v1).json()
    assert listed["apiVersion"] == "autoscaling/v1" and listed["items"][0]["apiVersion"] == "autoscaling/v1"
    rv = listed["metadata"]["resourceVersion"]
    stored["status"] = {"currentReplicas": 1, "desiredReplicas": 1, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 33}}}]}
    api.put(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/h/status", json=stored)
    with api.stream("GET", v1, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}) as events:
        for line in events.iter_lines():
            event = httpx.Response(200, content=line).json()
            if event["type"] == "MODIFIED":
                assert event["object"]["apiVersion"] == "autoscaling/v1"
                assert event["object"]["status"]["currentCPUUtilizationPercentage"] == 33
                break
        else:
            raise AssertionError("no MODIFIED event")



def test_a_v1_patch_is_applied_to_the_v1_view_and_keeps_what_v1_cannot_say(api: httpx.Client, ns: str) -> None:
    v1, v2 = (f"/apis/autoscaling/{v}/namespaces/{ns}/horizontalpodautoscalers" for v in ("v1", "v2"))
    memory = {"type": "Resource", "resource": {
        "name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    created = api.post(v2, json={
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 4,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}, memory],
                 "behavior": behavior}})
    assert created.status_code == 201, created.text

    merge = {"Content-Type": "application/merge-patch+json"}
    patched = api.patch(
        f"{v1}/h", json={"spec": {"maxReplicas": 5, "targetCPUUtilizationPercentage": 70}}, headers=merge)
    assert patched.status_code == 200, patched.text
    assert patched.json()["apiVersion"] == "autoscaling/v1"
    assert (patched.json()["spec"]["maxReplicas"], patched.json()["spec"]["targetCPUUtilizationPercentage"]) == (5, 70)
    spec = api.get(f"{v2}/h").json()["spec"]  # v1's annotations keep the rest; as Kubernetes, the CPU one last
    assert spec["metrics"][0] == memory
    assert spec["metrics"][1]["resource"]["target"]["averageUtilization"] == 70
    assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60

    before = api.get(f"{v2}/h").json()
    dry = api.patch(f"{v1}/h", params={"dryRun": "All"}, json={"spec": {"maxReplicas": 9}}, headers=merge)
    assert (dry.status_code, dry.json()["spec"]["maxReplicas"]) == (200, 9)
    assert api.get(f"{v2}/h").json() == before
    bad = api.patch(f"{v1}/h", json={"spec": {"maxReplicas": 0}}, headers=merge)
    assert bad.status_code == 422, bad.text
    applied = api.patch(f"{v1}/h", params={"fieldManager": "me"}, content="spec: {maxReplicas: 6}",
                        headers={"Content-Type": "application/apply-patch+yaml"})
    assert applied.status_code == 405, applied.text


def test_quantities_are_stored_in_canonical_form(api: httpx.Client, ns: str) -> None:
    """As Kubernetes: `cpu: 0.5` is kept as 500m, `1024Mi` as 1Gi, a JSON number as a string."""
    container = {"name": "c", "image": "nginx",
                 "resources": {"requests": {"cpu": 0.5, "memory": "1024Mi"}, "limits": {"cpu": 2, "memory": "1.5Gi"}}}
    pods = f"/api/v1/namespaces/{ns}/pods"
    made = api.post(pods, json={"metadata": {"name": "q"}, "spec": {"containers": [container]}})
    assert made.status_code == 201, made.text
    assert made.json()["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1536Mi"}}
    quota = api.post(f"/api/v1/namespaces/{ns}/resourcequotas",
                     json={"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "1000m", "pods": 10}}})
    assert quota.json()["spec"]["hard"] == {"requests.cpu": "1", "pods": "10"}
    deployment = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [container]}}}}
    made = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment)
    assert made.json()["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    bad = dict(container, resources={"requests": {"cpu": "lots"}})
    refused = api.post(pods, json={"metadata": {"name": "bad"}, "spec": {"containers": [bad]}})
    assert refused.status_code == 400 and "quantities must match the regular expression" in refused.text
