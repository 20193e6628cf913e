"""The real kubectl's server dry runs and `kubectl diff` print what they print against Kubernetes
and leave every stored object byte-identical (and the storage revision where it was)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.compat.conftest import Kubectl, pod, two_container_deployment


@contextmanager
def untouched(api: httpx.Client, ns: str, *urls: str) -> Iterator[None]:
    """The objects' raw bytes and the list resourceVersion (a storage-wide revision) do not move."""
    before = [api.get(u).content for u in urls]
    rv = api.get(f"/api/v1/namespaces/{ns}/configmaps").json()["metadata"]["resourceVersion"]
    yield
    assert [api.get(u).content for u in urls] == before
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps").json()["metadata"]["resourceVersion"] == rv


def _cm(name: str, ns: str, **data: str) -> str:
    md = {"name": name, "namespace": ns}
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data})


def test_create_apply_and_delete_server_dry_run(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    kubectl.ok("apply", "-f", "-", stdin=_cm("live", ns, a="1"))
    with untouched(api, ns, f"{cms}/live", f"{cms}/new"):
        out = kubectl.ok("create", "--dry-run=server", "-f", "-", stdin=_cm("new", ns, a="1")).out
        assert out.strip() == "configmap/new created (server dry run)"
        out = kubectl.ok("apply", "--dry-run=server", "-f", "-", stdin=_cm("new", ns, a="1")).out
        assert out.strip() == "configmap/new created (server dry run)"
        out = kubectl.ok("apply", "--dry-run=server", "-f", "-", stdin=_cm("live", ns, a="2")).out
        assert out.strip() == "configmap/live configured (server dry run)"
        out = kubectl.ok("apply", "--dry-run=server", "-f", "-", stdin=_cm("live", ns, a="1")).out
        assert out.strip() == "configmap/live unchanged (server dry run)"
        out = kubectl.ok("apply", "--dry-run=server", "-o", "json", "-f", "-", stdin=_cm("live", ns, a="2")).out
        assert json.loads(out)["data"] == {"a": "2"}
        out = kubectl.ok("delete", "--dry-run=server", "configmap", "live", "-n", ns).out
        assert out.strip() == 'configmap "live" deleted (server dry run)'
        r = kubectl("create", "--dry-run=server", "-f", "-", stdin=_cm("live", ns, a="1"))
        assert r.rc == 1 and r.err.strip() == (
            'Error from server (AlreadyExists): error when creating "STDIN": configmaps "live" already exists'
        )
    assert api.get(f"{cms}/new").status_code == 404
    assert api.get(f"{cms}/live").json()["data"] == {"a": "1"}


def test_scale_and_label_server_dry_run(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    deploy = f"/apis/apps/v1/namespaces/{ns}/deployments/d"
    web = f"/api/v1/namespaces/{ns}/pods/web"
    assert api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=two_container_deployment("d")).status_code == 201
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("web")).status_code == 201
    with untouched(api, ns, deploy, web):
        out = kubectl.ok("scale", "--dry-run=server", "deployment", "d", "--replicas=5", "-n", ns).out
        assert out.strip() == "deployment.apps/d scaled (server dry run)"
        out = kubectl.ok("label", "--dry-run=server", "pod", "web", "tier=frontend", "-n", ns).out
        assert out.strip() == "pod/web labeled (server dry run)"
        out = kubectl.ok("annotate", "--dry-run=server", "pod", "web", "owner=alice", "-n", ns).out
        assert out.strip() == "pod/web annotated (server dry run)"
        r = kubectl("label", "--dry-run=server", "pod", "web", "bad key=x", "-n", ns)
        assert r.rc != 0
    assert api.get(deploy).json()["spec"]["replicas"] == 2


def test_diff_shows_changes_and_exits_1_or_0(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    deploy = f"/apis/apps/v1/namespaces/{ns}/deployments/d"
    manifest = {**two_container_deployment("d"), "metadata": {"name": "d", "namespace": ns}}
    kubectl.ok("apply", "-f", "-", stdin=json.dumps(manifest))
    changed = json.loads(json.dumps(manifest))
    changed["spec"]["replicas"] = 3
    with untouched(api, ns, deploy, f"/api/v1/namespaces/{ns}/configmaps/fresh"):
        r = kubectl("diff", "-f", "-", stdin=json.dumps(changed))
        assert r.rc == 1, r.err
        minus = [line for line in r.out.splitlines() if line.startswith("-") and not line.startswith("---")]
        plus = [line for line in r.out.splitlines() if line.startswith("+") and not line.startswith("+++")]
        assert [line.split() for line in minus] == [["-", "generation:", "1"], ["-", "replicas:", "2"]]
        assert [line.split() for line in plus] == [["+", "generation:", "2"], ["+", "replicas:", "3"]]
        r = kubectl("diff", "-f", "-", stdin=json.dumps(manifest))
        assert (r.rc, r.out) == (0, ""), r.err
        r = kubectl("diff", "-f", "-", stdin=_cm("fresh", ns, a="1"))  # a new object: all of it is added
        assert r.rc == 1 and "+  name: fresh" in r.out
    assert api.get(deploy).json()["spec"]["replicas"] == 2
