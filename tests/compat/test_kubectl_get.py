"""`kubectl get` in its everyday forms, against server-side Tables and plain JSON objects."""

from __future__ import annotations

import json

import httpx
import pytest
import yaml

from tests.compat.conftest import Kubectl, columns, event_for, pod, two_container_deployment


@pytest.fixture
def populated(api: httpx.Client, ns: str) -> str:
    """A namespace with two pods, a Deployment, an RC, a Service and a Job."""
    for body in (pod("web", labels={"app": "x"}), pod("other", labels={"app": "y"})):
        assert api.post(f"/api/v1/namespaces/{ns}/pods", json=body).status_code == 201
    assert (
        api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=two_container_deployment("d1")).status_code == 201
    )
    rc = {
        "metadata": {"name": "rc1"},
        "spec": {
            "replicas": 1,
            "selector": {"app": "rc1"},
            "template": {
                "metadata": {"labels": {"app": "rc1"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert api.post(f"/api/v1/namespaces/{ns}/replicationcontrollers", json=rc).status_code == 201
    svc = {"metadata": {"name": "s1"}, "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}}
    assert api.post(f"/api/v1/namespaces/{ns}/services", json=svc).status_code == 201
    job = {
        "metadata": {"name": "j1"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]}}},
    }
    assert api.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job).status_code == 201, "job"
    return ns


def test_get_pods_prints_the_pod_table(kubectl: Kubectl, populated: str) -> None:
    lines = kubectl.ok("get", "pods", "-n", populated).lines()
    assert columns(lines[0]) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    rows = {columns(line)[0]: columns(line) for line in lines[1:]}
    assert set(rows) == {"web", "other"}
    assert rows["web"][1:4] == ["0/1", "Pending", "0"]
    assert rows["web"][4].endswith("s")  # an age such as "0s"


def test_get_pods_wide_adds_ip_node_nominated_node_and_readiness_gates(kubectl: Kubectl, populated: str) -> None:
    lines = kubectl.ok("get", "pods", "web", "-o", "wide", "-n", populated).lines()
    assert columns(lines[0]) == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    row = columns(lines[1])
    assert row[0] == "web" and row[5:] == ["<none>", "<none>", "<none>", "<none>"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_get_pod_as_yaml_and_json_is_the_whole_object(kubectl: Kubectl, populated: str, fmt: str) -> None:
    out = kubectl.ok("get", "pod", "web", "-o", fmt, "-n", populated).out
    obj = yaml.safe_load(out) if fmt == "yaml" else json.loads(out)
    assert obj["apiVersion"] == "v1" and obj["kind"] == "Pod"
    assert obj["metadata"]["name"] == "web" and obj["metadata"]["namespace"] == populated
    assert obj["metadata"]["uid"] and obj["metadata"]["resourceVersion"]
    assert obj["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert obj["status"]["phase"] == "Pending"


def test_get_pods_as_json_list_is_a_v1_list(kubectl: Kubectl, populated: str) -> None:
    obj = json.loads(kubectl.ok("get", "pods", "-o", "json", "-n", populated).out)
    assert obj["kind"] == "List" and sorted(i["metadata"]["name"] for i in obj["items"]) == ["other", "web"]
    assert all(i["kind"] == "Pod" for i in obj["items"])


def test_get_output_name_is_kind_slash_name(kubectl: Kubectl, populated: str) -> None:
    assert sorted(kubectl.ok("get", "pods", "-o", "name", "-n", populated).lines()) == ["pod/other", "pod/web"]


def test_get_several_kinds_prints_one_table_each(kubectl: Kubectl, populated: str) -> None:
    out = kubectl.ok("get", "deploy,rc,svc", "-n", populated).out
    blocks = [b.splitlines() for b in out.strip().split("\n\n")]
    assert [columns(b[0]) for b in blocks] == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        ["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
        ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
    ]
    assert columns(blocks[0][1])[:2] == ["deployment.apps/d1", "0/2"]
    assert columns(blocks[1][1])[:2] == ["replicationcontroller/rc1", "1"]
    svc = columns(blocks[2][1])
    assert svc[0] == "service/s1" and svc[1] == "ClusterIP" and svc[4] == "80/TCP"


def test_get_all_covers_the_all_category(kubectl: Kubectl, populated: str) -> None:
    names = {columns(line)[0] for line in kubectl.ok("get", "all", "-n", populated).lines()}
    assert {
        "pod/web",
        "pod/other",
        "service/s1",
        "replicationcontroller/rc1",
        "deployment.apps/d1",
        "job.batch/j1",
    } <= names


def test_show_labels_adds_a_labels_column(kubectl: Kubectl, populated: str) -> None:
    lines = kubectl.ok("get", "pods", "--show-labels", "-n", populated).lines()
    assert columns(lines[0])[-1] == "LABELS"
    labels = {columns(line)[0]: columns(line)[-1] for line in lines[1:]}
    assert labels == {"web": "app=x", "other": "app=y"}


def test_label_selector_filters_rows(kubectl: Kubectl, populated: str) -> None:
    rows = kubectl.ok("get", "pods", "-l", "app=x", "-n", populated).lines()[1:]
    assert [columns(r)[0] for r in rows] == ["web"]
    rows = kubectl.ok("get", "pods", "-l", "app in (x,y),app!=x", "-n", populated).lines()[1:]
    assert [columns(r)[0] for r in rows] == ["other"]


def test_field_selector_filters_rows(kubectl: Kubectl, populated: str) -> None:
    rows = kubectl.ok("get", "pods", "--field-selector", "metadata.name=other", "-n", populated).lines()[1:]
    assert [columns(r)[0] for r in rows] == ["other"]
    rows = kubectl.ok(
        "get", "pods", "--field-selector", "status.phase=Pending,metadata.name!=other", "-n", populated
    ).lines()[1:]
    assert [columns(r)[0] for r in rows] == ["web"]
    r = kubectl("get", "pods", "--field-selector", "status.phase=Running", "-n", populated)
    assert r.rc == 0 and r.out == "" and f"No resources found in {populated} namespace." in r.err


def test_get_namespaces_lists_system_and_new_namespaces(kubectl: Kubectl, ns: str) -> None:
    lines = kubectl.ok("get", "ns").lines()
    assert columns(lines[0]) == ["NAME", "STATUS", "AGE"]
    rows = {columns(line)[0]: columns(line)[1] for line in lines[1:]}
    assert rows["default"] == "Active" and rows["kube-system"] == "Active" and rows[ns] == "Active"


def test_get_events_prints_the_event_table(kubectl: Kubectl, api: httpx.Client, populated: str) -> None:
    web = api.get(f"/api/v1/namespaces/{populated}/pods/web").json()
    ev = event_for(web, "web.1", "Scheduled", "Successfully assigned to node-1")
    assert api.post(f"/api/v1/namespaces/{populated}/events", json=ev).status_code == 201
    lines = kubectl.ok("get", "events", "-n", populated).lines()
    assert columns(lines[0]) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert columns(lines[1])[1:] == ["Normal", "Scheduled", "pod/web", "Successfully assigned to node-1"]


def test_get_missing_pod_is_not_found_with_exit_1(kubectl: Kubectl, ns: str) -> None:
    r = kubectl("get", "pod", "nope", "-n", ns)
    assert r.rc == 1 and r.out == ""
    assert r.err.strip() == 'Error from server (NotFound): pods "nope" not found'
    r = kubectl("get", "deploy", "nope", "-n", ns)
    assert r.rc == 1 and r.err.strip() == 'Error from server (NotFound): deployments.apps "nope" not found'
