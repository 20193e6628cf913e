"""What kubectl learns before it does anything: the server version and the resource catalogue."""

from __future__ import annotations

import json

from tests.compat.conftest import Kubectl, columns


def test_version_reports_server_1_32(kubectl: Kubectl) -> None:
    info = json.loads(kubectl.ok("version", "-o", "json").out)
    assert info["serverVersion"]["major"] == "1" and info["serverVersion"]["minor"] == "32"
    assert info["serverVersion"]["gitVersion"].startswith("v1.32.")


def test_api_versions_lists_every_group_version(kubectl: Kubectl) -> None:
    versions = set(kubectl.ok("api-versions").lines())
    assert {
        "v1",
        "apps/v1",
        "batch/v1",
        "autoscaling/v2",
        "coordination.k8s.io/v1",
        "rbac.authorization.k8s.io/v1",
    } <= versions


def test_api_resources_lists_names_short_names_and_scope(kubectl: Kubectl) -> None:
    lines = kubectl.ok("api-resources").lines()
    assert columns(lines[0]) == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = {columns(line)[0]: columns(line) for line in lines[1:]}
    assert rows["pods"] == ["pods", "po", "v1", "true", "Pod"]
    assert rows["deployments"] == ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    assert rows["replicationcontrollers"] == ["replicationcontrollers", "rc", "v1", "true", "ReplicationController"]
    assert rows["namespaces"] == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert rows["jobs"] == ["jobs", "batch/v1", "true", "Job"]  # no short name: an empty cell
    assert not any("/" in name for name in rows)  # subresources are not listed


def test_api_resources_by_group_and_scope(kubectl: Kubectl) -> None:
    names = [columns(line)[0] for line in kubectl.ok("api-resources", "--api-group=apps", "-o", "name").lines()]
    assert sorted(names) == ["controllerrevisions.apps", "daemonsets.apps", "deployments.apps", "replicasets.apps",
                            "statefulsets.apps"]
    cluster = [columns(line)[0] for line in kubectl.ok("api-resources", "--namespaced=false", "-o", "name").lines()]
    assert {"namespaces", "nodes", "clusterroles.rbac.authorization.k8s.io"} <= set(cluster)
    assert "pods" not in cluster
