"""api.schema: unknown fields (Warning header / fieldValidation=Strict) and wrong types (400)."""

from __future__ import annotations

import copy
import time
from typing import Any

from api import registry
from api.models import from_dict, to_dict
from api.schema import type_errors, unknown_fields

PODS = registry.by_key("pods")
DEPLOYMENTS = registry.by_key("deployments.apps")
assert PODS is not None and DEPLOYMENTS is not None


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "any-key/x": "y"},
                     "annotations": {"note": "free keys are never unknown"}},
        "spec": {
            "containers": [
                {"name": "nginx", "image": "nginx:1.7.9", "ports": [{"containerPort": 80}],
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
                {"name": "sidecar", "image": "busybox", "command": ["sleep", "3600"]},
            ],
            "nodeSelector": {"disktype": "ssd"},
            "volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}],
        },
    }


def test_a_well_formed_pod_has_no_unknown_fields_and_no_type_errors() -> None:
    assert unknown_fields(PODS, _pod()) == []
    assert type_errors(PODS, _pod()) == []


def test_unknown_fields_are_reported_with_kubernetes_style_paths() -> None:
    pod = _pod()
    pod["spec"]["containers"][1]["imagee"] = "typo"
    pod["spec"]["containers"][0]["ports"][0]["hostIp"] = "0.0.0.0"  # Kubernetes spells it hostIP
    pod["spec"]["foo"] = 1
    pod["metadata"]["colour"] = "blue"
    pod["extraTopLevel"] = {"nested": True}
    assert unknown_fields(PODS, pod) == [
        "metadata.colour",
        "spec.containers[0].ports[0].hostIp",
        "spec.containers[1].imagee",
        "spec.foo",
        "extraTopLevel",
    ]


def test_fields_inside_free_form_sub_objects_and_maps_are_never_unknown() -> None:
    pod = _pod()
    pod["spec"]["securityContext"] = {"runAsUser": 1000, "anything": {"goes": "here"}}
    pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = "1Gi"
    pod["metadata"]["labels"]["brand-new-label"] = "v"
    assert unknown_fields(PODS, pod) == []


def test_unknown_fields_are_preserved_on_round_trip_at_every_depth() -> None:
    pod = _pod()
    pod["spec"]["containers"][0]["futureField"] = {"x": [1, 2]}
    pod["status"] = {"phase": "Running", "newStatusThing": "kept"}
    pod["topLevelExtra"] = "kept"
    decoded = from_dict(PODS.model, pod)
    assert to_dict(decoded) == pod


def test_snake_case_spellings_of_known_fields_count_as_unknown_on_the_wire() -> None:
    pod = _pod()
    pod["spec"]["restart_policy"] = "Never"
    assert unknown_fields(PODS, pod) == ["spec.restart_policy"]


def test_a_string_replicas_is_a_type_error_in_go_decoder_words() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": "abc"}}
    assert type_errors(DEPLOYMENTS, deployment) == [
        ("spec.replicas",
         "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ]


def test_numeric_strings_and_booleans_are_not_coerced_like_go() -> None:
    deployment = {"spec": {"replicas": "3", "paused": "true"}}
    paths = [path for path, _ in type_errors(DEPLOYMENTS, deployment)]
    assert sorted(paths) == ["spec.paused", "spec.replicas"]


def test_type_errors_inside_lists_and_maps_carry_indexes_and_keys() -> None:
    pod = _pod()
    pod["spec"]["containers"][1]["env"] = [{"name": "PORT", "value": 3306}]  # unquoted number
    pod["metadata"]["labels"]["tier"] = 1
    errors = dict(type_errors(PODS, pod))
    assert errors["spec.containers[1].env[0].value"] == (
        "json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string")
    assert errors["metadata.labels.tier"] == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string")


def test_int_or_string_fields_accept_both_and_reject_anything_else() -> None:
    deployment = {"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}
    assert type_errors(DEPLOYMENTS, deployment) == []
    deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = [1]
    paths = [path for path, _ in type_errors(DEPLOYMENTS, deployment)]
    assert paths == ["spec.strategy.rollingUpdate.maxSurge"]


def test_an_object_where_a_list_belongs_is_a_type_error() -> None:
    pod = _pod()
    pod["spec"]["containers"] = {"name": "nginx"}
    assert [path for path, _ in type_errors(PODS, pod)] == ["spec.containers"]


def test_schema_checks_are_fast_enough_for_a_thousand_small_pods_a_second() -> None:
    pods = [copy.deepcopy(_pod()) for _ in range(1000)]
    start = time.perf_counter()
    for pod in pods:
        unknown_fields(PODS, pod)
        type_errors(PODS, pod)
    # Measured at ~0.05 s; the bound leaves room for a slow shared CI machine.
    assert time.perf_counter() - start < 1.0
