"""Building strategic merge patches the way kubectl does (two-way for edit, three-way for apply)."""

import copy

from api.patch import create_three_way_merge_patch, create_two_way_merge_patch, strategic_merge_patch


def manifest(*container_names: str, replicas: int = 2) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": n, "image": f"{n}:1", "ports": [{"containerPort": 80}]} for n in container_names
                    ]
                },
            },
        },
    }


def live_from(applied: dict) -> dict:
    """What the server stores: the manifest plus defaults and status only the server sets."""
    live = copy.deepcopy(applied)
    live["metadata"].update({"uid": "u-1", "resourceVersion": "7"})
    live["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}
    for container in live["spec"]["template"]["spec"]["containers"]:
        container["imagePullPolicy"] = "IfNotPresent"
        container["ports"][0]["protocol"] = "TCP"
    live["status"] = {"replicas": 2, "conditions": [{"type": "Available", "status": "True"}]}
    return live


def without_server_fields(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    obj.pop("status")
    obj["spec"].pop("strategy")
    for key in ("uid", "resourceVersion"):
        obj["metadata"].pop(key)
    for container in obj["spec"]["template"]["spec"]["containers"]:
        container.pop("imagePullPolicy")
        container["ports"][0].pop("protocol")
    return obj


def test_three_way_patch_removes_a_container_dropped_from_the_manifest():
    last_applied = manifest("app", "sidecar")
    current = live_from(last_applied)
    modified = manifest("app")
    patch = create_three_way_merge_patch(last_applied, modified, current, "deployments.apps")
    assert patch == {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "app"}],
                    "containers": [{"$patch": "delete", "name": "sidecar"}],
                }
            }
        }
    }
    result = strategic_merge_patch(current, patch, "deployments.apps")
    assert without_server_fields(result) == modified
    assert result["status"] == current["status"]
    assert result["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"


def test_three_way_patch_changes_an_image_and_keeps_server_set_fields():
    last_applied = manifest("app", "sidecar")
    current = live_from(last_applied)
    modified = manifest("app", "sidecar", replicas=5)
    modified["spec"]["template"]["spec"]["containers"][0]["image"] = "app:2"
    patch = create_three_way_merge_patch(last_applied, modified, current, "deployments.apps")
    assert patch == {
        "spec": {
            "replicas": 5,
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                    "containers": [{"name": "app", "image": "app:2"}],
                }
            },
        }
    }
    result = strategic_merge_patch(current, patch, "deployments.apps")
    assert without_server_fields(result) == modified
    assert result["spec"]["strategy"] == current["spec"]["strategy"]


def test_three_way_patch_adds_reorders_and_deletes_in_one_go():
    last_applied = manifest("a", "b", "c")
    last_applied["metadata"]["annotations"] = {"note": "x"}
    current = live_from(last_applied)
    current["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "3"
    modified = manifest("c", "d", "a")
    modified["metadata"]["annotations"] = {"owner": "team-a"}
    result = strategic_merge_patch(
        current,
        create_three_way_merge_patch(last_applied, modified, current, "deployments.apps"),
        "deployments.apps",
    )
    assert [c["name"] for c in result["spec"]["template"]["spec"]["containers"]] == ["c", "d", "a"]
    # The annotation we stopped applying is gone; the one the server added stays.
    assert result["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "3", "owner": "team-a"}


def test_first_apply_without_last_applied_never_deletes():
    current = live_from(manifest("app", "sidecar"))
    modified = manifest("app")
    patch = create_three_way_merge_patch(None, modified, current, "deployments.apps")
    assert "$patch" not in str(patch)
    result = strategic_merge_patch(current, patch, "deployments.apps")
    assert [c["name"] for c in result["spec"]["template"]["spec"]["containers"]] == ["app", "sidecar"]


def test_three_way_patch_for_a_service_keeps_the_allocated_cluster_ip():
    applied = {"spec": {"selector": {"app": "db"}, "ports": [{"port": 3306, "targetPort": 3306}]}}
    current = copy.deepcopy(applied)
    current["spec"].update({"clusterIP": "10.96.0.12", "type": "ClusterIP"})
    current["spec"]["ports"][0]["protocol"] = "TCP"
    modified = {"spec": {"selector": {"app": "db"}, "ports": [{"port": 3306, "targetPort": 3307}]}}
    result = strategic_merge_patch(
        current, create_three_way_merge_patch(applied, modified, current, "services"), "services"
    )
    assert result["spec"] == {
        "selector": {"app": "db"},
        "ports": [{"port": 3306, "targetPort": 3307, "protocol": "TCP"}],
        "clusterIP": "10.96.0.12",
        "type": "ClusterIP",
    }


def test_three_way_patch_switching_to_recreate_sends_retain_keys():
    applied = {"spec": {"strategy": {"type": "RollingUpdate"}}}
    current = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}}}
    modified = {"spec": {"strategy": {"type": "Recreate"}}}
    patch = create_three_way_merge_patch(applied, modified, current, "deployments.apps")
    assert patch == {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert strategic_merge_patch(current, patch, "deployments.apps") == modified


def test_two_way_patch_for_finalizers_uses_delete_from_primitive_list_and_set_order():
    original = {"metadata": {"finalizers": ["a", "b", "c"]}}
    modified = {"metadata": {"finalizers": ["c", "a", "d"]}}
    patch = create_two_way_merge_patch(original, modified, "pods")
    assert patch == {
        "metadata": {
            "finalizers": ["d"],
            "$deleteFromPrimitiveList/finalizers": ["b"],
            "$setElementOrder/finalizers": ["c", "a", "d"],
        }
    }
    assert strategic_merge_patch(original, patch, "pods") == modified


def test_two_way_patch_round_trips_a_pod_edit():
    original = {
        "metadata": {"labels": {"a": "1"}, "ownerReferences": [{"uid": "1", "name": "rs"}]},
        "spec": {
            "containers": [{"name": "c", "image": "x", "env": [{"name": "E", "value": "1"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "tolerations": [{"key": "t"}],
        },
    }
    modified = {
        "metadata": {"labels": {"b": "2"}, "ownerReferences": [{"uid": "1", "name": "rs2"}]},
        "spec": {
            "containers": [{"name": "c", "image": "y", "env": [{"name": "F", "value": "2"}]}],
            "volumes": [{"name": "v", "configMap": {"name": "cm"}}],
            "tolerations": [],
        },
    }
    patch = create_two_way_merge_patch(original, modified, "pods")
    # retainKeys on volumes clears the old volume source when the type changes.
    assert patch["spec"]["volumes"] == [
        {"$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}, "emptyDir": None, "name": "v"}
    ]
    assert strategic_merge_patch(original, patch, "pods") == modified


def test_two_way_patch_of_identical_objects_is_empty():
    obj = manifest("a", "b")
    assert create_two_way_merge_patch(obj, copy.deepcopy(obj), "deployments.apps") == {}
