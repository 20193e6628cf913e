"""camelCase on the wire, including the names naive camelCase gets wrong (podIP, not podIp)."""

from __future__ import annotations

import importlib
import inspect

from pydantic import BaseModel

from api.models import K8sModel, from_dict, to_dict, wire_name
from api.models.apps_v1 import Deployment
from api.models.core_v1 import Node, Pod, Service
from api.models.meta import ListMeta, ObjectMeta

MODULES = ["meta", "core_v1", "apps_v1", "batch_v1", "autoscaling", "coordination_v1", "rbac_v1", "policy_v1"]


def test_wire_name_capitalises_initialisms_except_as_first_word() -> None:
    assert wire_name("restart_policy") == "restartPolicy"
    assert wire_name("pod_ip") == "podIP"
    assert wire_name("pod_ips") == "podIPs"
    assert wire_name("pod_cidrs") == "podCIDRs"
    assert wire_name("system_uuid") == "systemUUID"
    assert wire_name("non_resource_urls") == "nonResourceURLs"
    assert wire_name("ip_families") == "ipFamilies"
    assert wire_name("continue_") == "continue"


def test_pod_status_ip_fields_round_trip_with_kubernetes_spelling() -> None:
    wire = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostIP": "0.0.0.0"}]}],
                 "hostPID": True, "hostIPC": False, "setHostnameAsFQDN": True},
        "status": {"podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}], "hostIP": "192.168.1.2",
                   "hostIPs": [{"ip": "192.168.1.2"}],
                   "containerStatuses": [{
                       "name": "c", "containerID": "fake://1", "imageID": "sha256:x",
                       "state": {"terminated": {"exitCode": 0, "containerID": "fake://1"}}}]},
    }
    pod = from_dict(Pod, wire)
    assert pod.status.pod_ip == "10.0.0.5"
    assert pod.status.host_ips[0].ip == "192.168.1.2"
    assert pod.status.container_statuses[0].image_id == "sha256:x"
    assert pod.spec.set_hostname_as_fqdn is True
    assert to_dict(pod) == wire


def test_node_fields_with_initialisms_and_the_capitalised_port_round_trip() -> None:
    wire = {
        "apiVersion": "v1",
        "kind": "Node",
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"], "providerID": "mini://n1"},
        "status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "m", "systemUUID": "u", "bootID": "b", "kubeletVersion": "v1.32.0",
                         "kubeProxyVersion": "", "osImage": "mini",
                         "containerRuntimeVersion": "fake://1"},
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        },
    }
    node = from_dict(Node, wire)
    assert node.spec.pod_cidrs == ["10.244.1.0/24"]
    assert node.status.daemon_endpoints.kubelet_endpoint.port == 10250
    assert node.status.node_info.machine_id == "m"
    assert to_dict(node) == wire


def test_service_ip_fields_and_int_or_string_target_port_round_trip() -> None:
    wire = {
        "apiVersion": "v1",
        "kind": "Service",
        "spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "externalIPs": ["1.2.3.4"],
                 "loadBalancerIP": "5.6.7.8", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                 "ports": [{"port": 80, "targetPort": "http"}, {"port": 81, "targetPort": 8081}]},
    }
    svc = from_dict(Service, wire)
    assert [p.target_port for p in svc.spec.ports] == ["http", 8081]
    assert to_dict(svc) == wire


def test_list_meta_continue_token_uses_the_reserved_word_on_the_wire() -> None:
    meta = from_dict(ListMeta, {"continue": "abc", "resourceVersion": "7"})
    assert meta.continue_ == "abc"
    assert to_dict(meta) == {"continue": "abc", "resourceVersion": "7"}


def test_quantities_timestamps_and_percentages_are_kept_exactly_as_given() -> None:
    wire = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 3},
        "spec": {
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {"spec": {"containers": [{"name": "c", "resources": {
                "requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": 1, "memory": 0.5}}}]}},
        },
    }
    assert to_dict(from_dict(Deployment, wire)) == wire


def test_objects_built_in_python_serialise_to_camel_case_with_kind_and_api_version() -> None:
    pod = Pod(metadata=ObjectMeta(name="web", generate_name="web-"))
    assert to_dict(pod) == {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "generateName": "web-"}}


def _our_models() -> list[type[BaseModel]]:
    found = []
    for module_name in MODULES:
        module = importlib.import_module(f"api.models.{module_name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            generic_instance = "[" in cls.__name__  # K8sList[Pod], made by pydantic
            ours = cls.__module__.startswith("api.models.")
            if issubclass(cls, K8sModel) and ours and not generic_instance:
                found.append(cls)
    return sorted(set(found), key=lambda c: c.__name__)


def _client_class(cls: type[BaseModel]) -> type | None:
    import kubernetes.client as client  # the official client is a test dependency
    name = cls.__name__
    if cls.__module__.endswith(".autoscaling"):
        if name.endswith("V1") or name.startswith("Scale"):
            candidates = ["V1" + name.removesuffix("V1")]
        else:
            candidates = ["V2" + name]
    else:
        candidates = ["V1" + name, "CoreV1" + name, "RbacV1" + name]
    for candidate in candidates:
        if hasattr(client, candidate):
            return getattr(client, candidate)  # type: ignore[no-any-return]
    return None


def test_every_wire_name_matches_the_official_kubernetes_client() -> None:
    """Cross-check each model's aliases against the generated client's attribute maps."""
    mismatches, checked = [], 0
    for cls in _our_models():
        client_cls = _client_class(cls)
        if client_cls is None:
            continue
        known = set(client_cls.attribute_map.values())
        for name, info in cls.model_fields.items():
            checked += 1
            if (info.alias or name) not in known:
                mismatches.append(f"{cls.__name__}.{info.alias or name}")
    assert checked > 300
    assert mismatches == []


def test_list_envelopes_carry_kind_and_never_null_items() -> None:
    from api.models.core_v1 import PodList

    assert to_dict(PodList()) == {"apiVersion": "v1", "kind": "PodList", "items": []}
    wire = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "42", "continue": "t"},
            "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}]}
    decoded = from_dict(PodList, wire)
    assert decoded.items[0].metadata.name == "a"
    assert to_dict(decoded) == wire


def test_status_error_body_round_trips_with_causes() -> None:
    from api.models.meta import Status

    wire = {"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": 'Pod "x" is invalid: spec.containers[0].image: Required value', "reason": "Invalid",
            "details": {"name": "x", "kind": "Pod", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value",
                 "field": "spec.containers[0].image"}]},
            "code": 422}
    assert to_dict(from_dict(Status, wire)) == wire
