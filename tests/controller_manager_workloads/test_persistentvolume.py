"""PersistentVolumes end to end: the binder matches claims to volumes, the host-path provisioner makes
volumes for a default StorageClass, and reclaim policies act when a claim goes.

Processes: an API server and a controller-manager running only persistentvolume-binder, with
`--enable-hostpath-provisioner` rooted in a temporary directory the test then inspects.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace
from tests.support.kubectl import kubectl_binary


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostpath_pv")


@pytest.fixture(scope="module")
def binder(start_manager: Callable[..., ComponentProcess], root: Path) -> ComponentProcess:
    return start_manager(
        "--enable-hostpath-provisioner", "--hostpath-provisioner-root", str(root), "--pvclaimbinder-sync-period", "1s",
        controllers="persistentvolume-binder,pvc-protection,pv-protection",
    )  # fmt: skip


def volume(name: str, size: str, *, cls: str = "manual", policy: str = "Retain", **extra: Any) -> dict[str, Any]:
    spec = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
            "persistentVolumeReclaimPolicy": policy, "hostPath": {"path": f"/mnt/{name}"}, **extra}  # fmt: skip
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def claim(name: str, size: str, **spec: Any) -> dict[str, Any]:
    want = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": want}


def get(api: httpx.Client, path: str) -> dict[str, Any]:
    r = api.get(path)
    return r.json() if r.status_code == 200 else {}


def phase(api: httpx.Client, path: str) -> str:
    return (get(api, path).get("status") or {}).get("phase", "")


def wait_phase(api: httpx.Client, path: str, want: str) -> dict[str, Any]:
    wait_for(lambda: phase(api, path) == want, timeout=20, what=f"{path} {want}")
    return get(api, path)


def events(api: httpx.Client, ns: str, name: str) -> list[tuple[str, str]]:
    items = api.get(f"/api/v1/namespaces/{ns}/events").json()["items"]
    return [(e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name]


def test_a_claim_binds_to_the_smallest_volume_that_fits(
    binder: ComponentProcess, api: httpx.Client, apiserver: APIServerProcess
) -> None:
    ns = new_namespace(api, "pv")
    for pv in (volume(f"{ns}-big", "5Gi"), volume(f"{ns}-small", "1Gi"), volume(f"{ns}-rwx", "1Gi",
               accessModes=["ReadWriteMany"])):  # fmt: skip
        assert api.post("/api/v1/persistentvolumes", json=pv).status_code == 201
    r = api.post(
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("data", "500Mi", storageClassName="manual")
    )
    assert r.status_code == 201, r.text
    pvc = wait_phase(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data", "Bound")
    assert pvc["spec"]["volumeName"] == f"{ns}-small"
    assert pvc["status"]["capacity"] == {"storage": "1Gi"} and pvc["status"]["accessModes"] == ["ReadWriteOnce"]
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    pv = wait_phase(api, f"/api/v1/persistentvolumes/{ns}-small", "Bound")
    ref = pv["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["uid"]) == (ns, "data", pvc["metadata"]["uid"])
    assert phase(api, f"/api/v1/persistentvolumes/{ns}-big") == "Available"

    out = subprocess.run([kubectl_binary(), "--server", apiserver.url, "get", "pvc", "-n", ns, "--no-headers"],
                         capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert out[:6] == ["data", "Bound", f"{ns}-small", "1Gi", "RWO", "manual"]

    # Retain: the claim goes, the volume stays Released with its data for an administrator
    assert api.delete(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data").status_code == 200
    released = wait_phase(api, f"/api/v1/persistentvolumes/{ns}-small", "Released")
    assert released["spec"]["claimRef"]["name"] == "data"
    # a new claim of the same name does not get the released volume
    api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("data", "500Mi", storageClassName="manual"))
    again = wait_phase(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data", "Bound")
    assert again["spec"]["volumeName"] == f"{ns}-big"


def test_a_claim_nothing_fits_waits_and_says_why(binder: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "pvwait")
    api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("huge", "1Ti", storageClassName=""))
    wait_for(lambda: events(api, ns, "huge"), timeout=20, what="an event on the claim")
    assert ("FailedBinding", "no persistent volumes available for this claim and no storage class is set") in events(
        api, ns, "huge")  # fmt: skip
    assert phase(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/huge") == "Pending"

    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": f"{ns}-ebs"},
          "provisioner": "ebs.csi.aws.com"}  # fmt: skip
    api.post("/apis/storage.k8s.io/v1/storageclasses", json=sc)
    api.post(
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("cloud", "1Gi", storageClassName=f"{ns}-ebs")
    )

    def annotated() -> bool:
        md = get(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/cloud").get("metadata") or {}
        return (md.get("annotations") or {}).get("volume.kubernetes.io/storage-provisioner") == "ebs.csi.aws.com"

    wait_for(annotated, timeout=20, what="the provisioner annotation")
    # the event is recorded after the annotation is written: wait for it too
    wait_for(lambda: "ExternalProvisioning" in [r for r, _ in events(api, ns, "cloud")], timeout=20,
             what="the ExternalProvisioning event")  # fmt: skip


def test_the_default_class_provisions_a_host_path_volume_and_delete_reclaims_it(
    binder: ComponentProcess, api: httpx.Client, root: Path
) -> None:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
          "provisioner": "kubernetes.io/host-path"}  # fmt: skip
    assert api.post("/apis/storage.k8s.io/v1/storageclasses", json=sc).status_code == 201
    ns = new_namespace(api, "pvdyn")
    r = api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("www", "2Gi"))
    assert r.status_code == 201 and r.json()["spec"]["storageClassName"] == "standard"  # DefaultStorageClass
    uid = r.json()["metadata"]["uid"]
    pvc = wait_phase(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/www", "Bound")
    assert pvc["spec"]["volumeName"] == f"pvc-{uid}"
    pv = get(api, f"/api/v1/persistentvolumes/pvc-{uid}")
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "kubernetes.io/host-path"
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete" and pv["spec"]["capacity"] == {"storage": "2Gi"}
    path = Path(pv["spec"]["hostPath"]["path"])
    assert path.parent == root and path.is_dir()
    provisioned = ("ProvisioningSucceeded", f"Successfully provisioned volume pvc-{uid} using kubernetes.io/host-path")
    wait_for(lambda: provisioned in events(api, ns, "www"), timeout=20, what="the ProvisioningSucceeded event")

    api.delete(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/www")
    wait_for(lambda: api.get(f"/api/v1/persistentvolumes/pvc-{uid}").status_code == 404, timeout=20,
             what="the provisioned volume deleted")  # fmt: skip
    assert not path.exists()
    # an explicit "" keeps a claim out of the default class
    r = api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("none", "1Gi", storageClassName=""))
    assert r.json()["spec"]["storageClassName"] == ""


def test_delete_policy_on_a_volume_we_did_not_make_fails_it(binder: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "pvfail")
    api.post("/api/v1/persistentvolumes", json=volume(f"{ns}-manual", "1Gi", cls="", policy="Delete"))
    api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("c", "1Gi", storageClassName=""))
    wait_phase(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/c", "Bound")
    api.delete(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/c")
    pv = wait_phase(api, f"/api/v1/persistentvolumes/{ns}-manual", "Failed")
    assert pv["status"]["message"] == (
        f'error getting deleter volume plugin for volume "{ns}-manual": no deletable volume plugin matched'
    )


def test_a_claim_in_use_stays_terminating_until_its_pod_goes(binder: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "pvcprot")
    api.post("/api/v1/persistentvolumes", json=volume(f"{ns}-disk", "1Gi", cls=""))
    r = api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("data", "1Gi", storageClassName=""))
    assert r.json()["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert api.get(f"/api/v1/persistentvolumes/{ns}-disk").json()["metadata"]["finalizers"] == [
        "kubernetes.io/pv-protection"]  # fmt: skip
    wait_phase(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data", "Bound")
    pod = {"metadata": {"name": "user"}, "spec": {"containers": [{"name": "c", "image": "busybox"}],
           "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}  # fmt: skip
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201
    r = api.delete(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data")
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]  # Terminating, not gone
    # the volume cannot be deleted from under its claim either
    assert api.delete(f"/api/v1/persistentvolumes/{ns}-disk").status_code == 200
    # pvc-protection looks at it (a pod event re-queues it) and keeps it while the pod uses it
    api.patch(f"/api/v1/namespaces/{ns}/pods/user", json={"metadata": {"labels": {"poke": "1"}}},
              headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    terminating = get(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data")
    assert terminating["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert terminating["status"]["phase"] == "Bound"
    assert api.delete(f"/api/v1/namespaces/{ns}/pods/user", params={"gracePeriodSeconds": "0"}).status_code == 200
    wait_for(lambda: api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data").status_code == 404,
             timeout=20, what="the claim gone with its last pod")  # fmt: skip
    wait_for(lambda: api.get(f"/api/v1/persistentvolumes/{ns}-disk").status_code == 404, timeout=20,
             what="the volume gone once released")  # fmt: skip
