"""Applying strategic merge patches: merge keys, list ordering and every directive."""

import copy

import pytest

from api.patch import PatchError, merge_patch, strategic_merge_patch


def deployment() -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "finalizers": ["a.example.com/x", "b.example.com/y"]},
        "spec": {
            "replicas": 2,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.25",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}],
                            "env": [{"name": "A", "value": "1"}],
                        },
                        {"name": "sidecar", "image": "envoy:1", "ports": [{"containerPort": 9901}]},
                    ],
                    "tolerations": [{"key": "k1", "operator": "Exists"}],
                },
            },
        },
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }


def containers(obj: dict) -> list[dict]:
    return obj["spec"]["template"]["spec"]["containers"]


def test_patching_one_container_image_keeps_the_sidecar_and_all_ports():
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert [c["name"] for c in containers(result)] == ["app", "sidecar"]
    assert containers(result)[0]["image"] == "nginx:1.26"
    assert containers(result)[0]["ports"] == containers(deployment())[0]["ports"]
    assert containers(result)[1] == containers(deployment())[1]
    # The same patch as a plain merge patch loses the sidecar: the bug SMP exists to avoid.
    assert [c["name"] for c in containers(merge_patch(deployment(), patch))] == ["app"]


def test_adding_a_port_by_container_port_puts_the_new_item_first_without_set_element_order():
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 8080}]}]}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert containers(result)[0]["ports"] == [
        {"containerPort": 8080},
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 443},
    ]


def test_patching_an_existing_port_merges_into_it():
    patch = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 443, "name": "https"}]}]}}
        }
    }
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert containers(result)[0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 443, "name": "https"},
    ]


def test_patch_delete_item_removes_a_container_by_merge_key():
    patch = {"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "sidecar"}]}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert [c["name"] for c in containers(result)] == ["app"]


def test_patch_delete_item_without_the_merge_key_is_rejected():
    patch = {"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "image": "x"}]}}}}
    with pytest.raises(PatchError, match="does not contain declared merge key: name"):
        strategic_merge_patch(deployment(), patch, "deployments.apps")


def test_patch_replace_item_replaces_the_whole_list():
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "only", "image": "busybox"}, {"$patch": "replace"}]}}}
    }
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert containers(result) == [{"name": "only", "image": "busybox"}]


def test_patch_replace_on_a_map_replaces_it():
    patch = {"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "tier": "fe"}}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert result["spec"]["template"]["metadata"]["labels"] == {"tier": "fe"}


def test_patch_delete_on_a_map_empties_it():
    patch = {"spec": {"template": {"metadata": {"labels": {"$patch": "delete"}}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert result["spec"]["template"]["metadata"]["labels"] == {}


def test_patch_merge_on_a_map_is_the_default_merge():
    patch = {"spec": {"template": {"metadata": {"labels": {"$patch": "merge", "tier": "fe"}}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert result["spec"]["template"]["metadata"]["labels"] == {"app": "web", "tier": "fe"}


def test_unknown_patch_type_is_rejected():
    with pytest.raises(PatchError, match="unknown patch type: explode"):
        strategic_merge_patch(deployment(), {"spec": {"$patch": "explode"}}, "deployments.apps")
    with pytest.raises(PatchError, match="merging lists cannot yet be specified"):
        strategic_merge_patch(
            deployment(),
            {"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}},
            "deployments.apps",
        )


def test_set_element_order_reorders_a_merge_list():
    patch = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert [c["name"] for c in containers(result)] == ["sidecar", "app"]
    assert containers(result)[1] == containers(deployment())[0]


def test_set_element_order_places_new_items_and_keeps_server_only_items_in_live_order():
    live = {"spec": {"containers": [{"name": "x"}, {"name": "injected"}, {"name": "y"}]}}
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "x"}, {"name": "y"}, {"name": "z"}],
            "containers": [{"name": "z", "image": "new"}],
        }
    }
    result = strategic_merge_patch(live, patch, "pods")
    assert [c["name"] for c in result["spec"]["containers"]] == ["x", "injected", "y", "z"]


def test_set_element_order_that_contradicts_the_patch_list_is_rejected():
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "app"}],
                    "containers": [{"name": "sidecar", "image": "v2"}],
                }
            }
        }
    }
    with pytest.raises(PatchError, match="doesn't match \\$setElementOrder list"):
        strategic_merge_patch(deployment(), patch, "deployments.apps")


def test_set_element_order_that_is_not_a_list_is_rejected():
    with pytest.raises(PatchError, match="invalid patch format of setElementOrder list"):
        strategic_merge_patch(deployment(), {"metadata": {"$setElementOrder/finalizers": "a"}}, "deployments.apps")


def test_retain_keys_switching_strategy_to_recreate_drops_rolling_update():
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert result["spec"]["strategy"] == {"type": "Recreate"}
    # Without the directive the old rollingUpdate block would survive the merge.
    plain = strategic_merge_patch(deployment(), {"spec": {"strategy": {"type": "Recreate"}}}, "deployments.apps")
    assert "rollingUpdate" in plain["spec"]["strategy"]


def test_retain_keys_must_list_every_field_the_patch_sets():
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "RollingUpdate", "rollingUpdate": {}}}}
    with pytest.raises(PatchError, match="patch content doesn't match retainKeys list"):
        strategic_merge_patch(deployment(), patch, "deployments.apps")


def test_delete_from_primitive_list_removes_a_finalizer():
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert result["metadata"]["finalizers"] == ["b.example.com/y"]


def test_delete_from_primitive_list_must_be_a_list():
    with pytest.raises(PatchError, match="invalid patch format of primitive list"):
        strategic_merge_patch(
            deployment(), {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}, "deployments.apps"
        )


def test_finalizers_merge_as_a_set_union():
    patch = {"metadata": {"finalizers": ["b.example.com/y", "c.example.com/z"]}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert sorted(result["metadata"]["finalizers"]) == [
        "a.example.com/x",
        "b.example.com/y",
        "c.example.com/z",
    ]
    assert len(result["metadata"]["finalizers"]) == 3


def test_list_without_a_patch_strategy_is_replaced():
    patch = {"spec": {"template": {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}}}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert result["spec"]["template"]["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]


def test_status_conditions_merge_by_type():
    patch = {"status": {"conditions": [{"type": "Progressing", "status": "True"}]}}
    result = strategic_merge_patch(deployment(), patch, "deployments.apps")
    assert {c["type"] for c in result["status"]["conditions"]} == {"Available", "Progressing"}


def test_nested_pod_templates_resolve_for_cronjobs():
    cronjob = {
        "spec": {
            "jobTemplate": {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}}
                }
            }
        }
    }
    patch = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "2"}]}}}}}}
    result = strategic_merge_patch(cronjob, patch, "cronjobs.batch")
    assert result["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "1"},
        {"name": "b", "image": "2"},
    ]


def test_service_ports_merge_by_port():
    svc = {"spec": {"clusterIP": "10.0.0.5", "ports": [{"port": 80, "targetPort": 8080}]}}
    result = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 80, "nodePort": 30080}]}}, "services")
    assert result["spec"] == {
        "clusterIP": "10.0.0.5",
        "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080}],
    }


def test_unknown_resources_fall_back_to_merge_patch_semantics():
    obj = {"spec": {"items": [{"name": "a"}, {"name": "b"}], "m": {"x": 1}}}
    patch = {"spec": {"items": [{"name": "a", "v": 2}], "m": {"y": 2}}}
    assert strategic_merge_patch(obj, patch, "widgets.example.com") == merge_patch(obj, patch)


def test_null_deletes_and_unmatched_nulls_are_dropped():
    result = strategic_merge_patch({"a": 1, "b": {"c": 1}}, {"a": None, "x": None, "n": {"m": None}}, "pods")
    assert result == {"b": {"c": 1}, "n": {}}


def test_directives_never_leak_into_a_value_the_object_did_not_have():
    patch = {
        "spec": {
            "template": {"spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"$patch": "delete", "name": "gone"}]}}
        }
    }
    result = strategic_merge_patch({"spec": {"template": {"spec": {}}}}, patch, "deployments.apps")
    assert result["spec"]["template"]["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]


def test_unknown_dollar_key_is_rejected():
    with pytest.raises(PatchError, match="unknown patch directive: \\$frob"):
        strategic_merge_patch({}, {"$frob": 1}, "pods")


def test_strategic_merge_patch_does_not_modify_its_inputs():
    original = deployment()
    patch = {
        "spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "sidecar"}]}}},
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]},
    }
    before = copy.deepcopy((original, patch))
    strategic_merge_patch(original, patch, "deployments.apps")
    assert (original, patch) == before


def test_malformed_directives_are_bad_requests_and_unfit_patches_are_unprocessable():
    with pytest.raises(PatchError) as malformed:
        strategic_merge_patch(deployment(), {"spec": {"strategy": {"$retainKeys": "type"}}}, "deployments.apps")
    assert (str(malformed.value), malformed.value.code) == ("invalid patch format of retainKeys", 400)
    with pytest.raises(PatchError) as unfit:
        strategic_merge_patch(
            deployment(),
            {"spec": {"strategy": {"$retainKeys": [], "type": "Recreate"}}},
            "deployments.apps",
        )
    assert unfit.value.code == 422
