"""Field sets, managedFields bookkeeping and the apply merge, as pure functions."""

from __future__ import annotations

import copy

import pytest

from api.apply import ApplyConflicts, apply
from api.errors import apply_conflict
from api.fieldpath import difference, intersection, path_string, paths, to_set, union
from api.managedfields import manager_name, record_update, root_type
from api.registry import ResourceType, by_key


def _rt(key: str) -> ResourceType:
    rt = by_key(key)
    assert rt is not None
    return rt


DEPLOY = _rt("deployments.apps")
PODS = _rt("pods")


def deployment(**spec: object) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "d", "uid": "u", "resourceVersion": "7", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "nginx", "image": "nginx", "command": ["a", "b"], "ports": [{"containerPort": 80}]}]}},
            **spec,
        },
        "status": {"replicas": 2},
    }


def test_fieldsv1_shape_follows_the_schema() -> None:
    s = to_set(deployment(), root_type(DEPLOY, None))
    # apiVersion, kind, name/namespace/uid/resourceVersion and (main resource) status are nobody's.
    assert set(s) == {"f:metadata", "f:spec"}
    assert s["f:metadata"] == {"f:labels": {"f:app": {}}}
    spec = s["f:spec"]
    assert spec["f:selector"] == {}  # LabelSelector is an atomic struct
    container = spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container["."] == {}  # the list item itself is owned
    assert container["f:command"] == {}  # an atomic list is one leaf
    # Container ports are keyed by containerPort *and* protocol, which defaults to TCP.
    assert set(container["f:ports"]) == {'k:{"containerPort":80,"protocol":"TCP"}'}


def test_set_lists_use_values() -> None:
    pod = {"metadata": {"name": "p", "finalizers": ["a.io/x"]}, "spec": {}}
    assert to_set(pod, root_type(PODS, None))["f:metadata"] == {"f:finalizers": {'v:"a.io/x"': {}}}


def test_set_algebra_keeps_membership_right() -> None:
    a = {"f:spec": {"f:a": {}, "f:b": {"f:c": {}}}}
    b = {"f:spec": {"f:a": {}}}
    assert difference(a, b) == {"f:spec": {"f:b": {"f:c": {}}}}
    assert intersection(a, b) == b
    assert union(difference(a, b), b) == {"f:spec": {"f:b": {"f:c": {}}, "f:a": {}}}
    item = {"f:l": {'k:{"name":"x"}': {".": {}, "f:name": {}}}}
    assert difference(item, {"f:l": {'k:{"name":"x"}': {"f:name": {}}}}) == {"f:l": {'k:{"name":"x"}': {}}}
    assert list(paths(item)) == [("f:l", 'k:{"name":"x"}'), ("f:l", 'k:{"name":"x"}', "f:name")]


def test_paths_print_as_kubernetes_prints_them() -> None:
    assert path_string(("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"nginx"}', "f:image")) == (
        '.spec.template.spec.containers[name="nginx"].image'
    )
    assert path_string(("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}')) == '.spec.ports[port=80,protocol="TCP"]'
    assert path_string(("f:metadata", "f:finalizers", 'v:"a"')) == '.metadata.finalizers[="a"]'


def test_update_moves_changed_fields_and_drops_removed_ones() -> None:
    old = deployment()
    record_update(DEPLOY, None, old, "creator", None, "T1")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    del new["metadata"]["labels"]
    record_update(DEPLOY, old, new, "scaler", None, "T2")
    by = {e["manager"]: e for e in new["metadata"]["managedFields"]}
    assert by["scaler"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}} and by["scaler"]["time"] == "T2"
    assert "f:replicas" not in by["creator"]["fieldsV1"]["f:spec"]
    assert "f:metadata" not in by["creator"]["fieldsV1"]
    assert by["creator"]["time"] == "T1"  # it changed nothing this time


def test_a_request_may_reset_managed_fields() -> None:
    old = deployment()
    record_update(DEPLOY, None, old, "creator", None, "T1")
    new = copy.deepcopy(old)
    new["metadata"]["managedFields"] = [{}]
    record_update(DEPLOY, old, new, "x", None, "T2")
    assert "managedFields" not in new["metadata"]


def test_default_manager_is_the_user_agent_program() -> None:
    assert manager_name(None, "kubectl/v1.32.0 (linux/amd64) kubernetes/abc") == "kubectl"
    assert manager_name("", "OpenAPI-Generator/31.0.0/python") == "OpenAPI-Generator"
    assert manager_name("mine", "kubectl/v1.32.0") == "mine"


def test_apply_conflicts_force_and_sharing() -> None:
    live = deployment()
    record_update(DEPLOY, None, live, "kubectl-client-side-apply", None, "T1")
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:2"}]}}}}
    with pytest.raises(ApplyConflicts) as exc:
        apply(DEPLOY, live, config, "ci", now="T2")
    assert sorted(p for _, p in exc.value.conflicts) == [
        ".spec.replicas", '.spec.template.spec.containers[name="nginx"].image']
    message = apply_conflict(exc.value.conflicts).message
    assert message.startswith(
        'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n- '
    )
    forced = apply(DEPLOY, live, config, "ci", force=True, now="T2")
    assert forced["spec"]["replicas"] == 5
    assert forced["spec"]["template"]["spec"]["containers"][0]["command"] == ["a", "b"]  # merged, not replaced
    # The same values as the live object: no conflict, shared ownership.
    same = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    shared = apply(DEPLOY, live, same, "ci", now="T3")
    entries = shared["metadata"]["managedFields"]
    owners = [e["manager"] for e in entries if "f:replicas" in e["fieldsV1"].get("f:spec", {})]
    assert sorted(owners) == ["ci", "kubectl-client-side-apply"]


def test_apply_removes_only_what_no_one_else_owns() -> None:
    base = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"}}
    first = {**base, "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}}
    obj = apply(PODS, base, first, "m1", now="T1")
    obj = apply(PODS, obj, {**base, "metadata": {"name": "p", "labels": {"b": "2"}}}, "m2", now="T2")
    obj = apply(PODS, obj, {**base, "metadata": {"name": "p"}}, "m1", now="T3")
    assert obj["metadata"]["labels"] == {"b": "2"}  # a: only m1's, gone; b: m2 still applies it


def test_kubectl_takes_over_its_client_side_apply_configuration() -> None:
    import json

    applied = deployment()
    for k in ("uid", "resourceVersion"):
        del applied["metadata"][k]
    del applied["status"]
    live = deployment()
    live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied)}
    record_update(DEPLOY, None, live, "kubectl-client-side-apply", None, "T1")
    config = copy.deepcopy(applied)
    config["spec"]["replicas"] = 4
    new = apply(DEPLOY, live, config, "kubectl", now="T2")  # no conflict raised
    assert new["spec"]["replicas"] == 4
    last = json.loads(new["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 4
    with pytest.raises(ApplyConflicts):
        apply(DEPLOY, live, config, "someone-else", now="T2")


def test_malformed_managed_fields_in_a_request_keep_the_stored_ones() -> None:
    old = deployment()
    record_update(DEPLOY, None, old, "creator", None, "T1")
    for bad in ([{"operation": "Update", "fieldsV1": {"f:spec": 1}}], [{"operation": "Update", "time": 5}],
                [{"operation": "Sideways"}], "nope"):
        new = copy.deepcopy(old)
        new["metadata"]["managedFields"] = bad
        record_update(DEPLOY, old, new, "x", None, "T2")
        assert new["metadata"]["managedFields"] == old["metadata"]["managedFields"]
