"""Pruning unknown fields drops exactly what Kubernetes would not decode, and nothing it would.

The API server prunes unknown fields of built-in kinds before storing (as Kubernetes does), so
every real field of a kind must be in the models - these tests pin the ones easiest to forget.
"""

from __future__ import annotations

import copy
from typing import Any

from api import registry
from api.schema import prune_unknown_fields, type_errors, unknown_fields

PODS = registry.by_key("pods")
assert PODS is not None

VOLUME_SOURCES = [
    "emptyDir", "hostPath", "configMap", "secret", "persistentVolumeClaim", "downwardAPI", "projected", "nfs",
    "csi", "ephemeral", "image", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "iscsi", "glusterfs",
    "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "azureDisk", "vsphereVolume",
    "quobyte", "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos",
]  # fmt: skip


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}  # fmt: skip


def test_every_kubernetes_volume_source_is_a_known_field() -> None:
    volumes = [{"name": f"v{i}", source: {"anything": {"nested": 1}}} for i, source in enumerate(VOLUME_SOURCES)]
    pod = _pod(volumes=volumes)
    assert unknown_fields(PODS, pod) == []
    before = copy.deepcopy(pod)
    assert prune_unknown_fields(PODS, pod) == [] and pod == before


def test_container_status_fields_of_newer_kubelets_are_known() -> None:
    pod = _pod()
    pod["status"] = {"containerStatuses": [{
        "name": "c", "ready": True, "restartCount": 0, "stopSignal": "SIGTERM",
        "user": {"linux": {"uid": 0, "gid": 0}}, "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        "allocatedResourcesStatus": [{"name": "cpu", "resources": []}],
    }]}  # fmt: skip
    assert unknown_fields(PODS, pod) == []


def test_prune_drops_unknown_fields_at_every_depth_and_keeps_free_form_content() -> None:
    pod = _pod(volumes=[{"name": "v", "emptyDir": {"whatever": True}, "bogus": 1}])
    pod["spec"]["replica"] = 3
    pod["spec"]["containers"][0]["imagee"] = "x"
    pod["metadata"]["labels"] = {"free": "keys"}
    pruned = prune_unknown_fields(PODS, pod)
    assert pruned == ["spec.containers[0].imagee", "spec.volumes[0].bogus", "spec.replica"]
    assert pod["spec"]["volumes"] == [{"name": "v", "emptyDir": {"whatever": True}}]
    assert "replica" not in pod["spec"] and "imagee" not in pod["spec"]["containers"][0]
    assert pod["metadata"]["labels"] == {"free": "keys"}
    assert unknown_fields(PODS, pod) == []


def test_integers_past_their_go_type_are_decode_errors() -> None:
    deployments = registry.by_key("deployments.apps")
    assert deployments is not None
    errs = type_errors(deployments, {"spec": {"replicas": 2**31, "revisionHistoryLimit": -(2**31)}})
    assert errs == [("spec.replicas", "json: cannot unmarshal number 2147483648 into Go struct field "
                                      "DeploymentSpec.spec.replicas of type int32")]
    pod = _pod(terminationGracePeriodSeconds=2**40)
    assert type_errors(PODS, pod) == []
    probe = {"httpGet": {"port": 2**31}}
    pod["spec"]["containers"][0]["livenessProbe"] = probe
    [(path, message)] = type_errors(PODS, pod)
    assert path == "spec.containers[0].livenessProbe.httpGet.port"
    assert message.endswith("HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32")


def test_quantities_resource_quantity_refuses_are_decode_errors() -> None:
    for good in ("250m", "64Mi", 2, 0.5, "1e3", "1.5Gi"):
        pod = _pod()
        pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": good}}
        assert type_errors(PODS, pod) == [], good
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1ki"}}
    assert type_errors(PODS, pod) == [("spec.containers[0].resources.limits.cpu", "unable to parse quantity's suffix")]
