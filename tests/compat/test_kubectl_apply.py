"""`kubectl create -f`, `apply -f` and `delete -f` with manifests exactly as students write them."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from tests.compat.conftest import Kubectl, pod, two_container_deployment
from tests.support.examples import EXAMPLES_DIR

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


EXAMPLES = EXAMPLES_DIR
EXPECTED_CREATED = {
    "mysql-rc-svc.yaml": ["replicationcontroller/mysql created", "service/mysql created"],
    "myweb-nodeport.yaml": ["replicationcontroller/myweb created", "service/myweb created"],
    "nginx-deployment.yaml": ["deployment.apps/nginx-deployment created"],
    "nginx-rc.yaml": ["replicationcontroller/nginx-server created"],
    "pi-job.yaml": ["job.batch/pi created"],
}


def test_every_example_is_known_to_this_test() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.yaml")) == sorted(EXPECTED_CREATED)


@pytest.mark.parametrize("filename", sorted(EXPECTED_CREATED))
def test_create_f_accepts_every_example_unchanged(kubectl: Kubectl, api: httpx.Client, ns: str, filename: str) -> None:
    path = EXAMPLES / filename
    if not path.is_file():
        pytest.skip(f"{path} not found")
    r = kubectl("create", "-f", str(path), "-n", ns)
    assert r.rc == 0, r.err
    assert r.out.splitlines() == EXPECTED_CREATED[filename]
    assert "Warning" not in r.err, r.err
    if filename == "myweb-nodeport.yaml":
        svc = api.get(f"/api/v1/namespaces/{ns}/services/myweb").json()
        assert svc["spec"]["type"] == "NodePort" and svc["spec"]["ports"][0]["nodePort"] == 30001
        assert svc["spec"]["clusterIP"]


def _write(tmp_path: Path, name: str, obj: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def test_apply_changes_one_container_and_keeps_the_other(
    kubectl: Kubectl, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    v1 = _write(tmp_path, "v1.yaml", two_container_deployment("two"))
    v2 = _write(tmp_path, "v2.yaml", two_container_deployment("two", app_image="nginx:1.25"))
    assert kubectl.ok("apply", "-f", v1, "-n", ns).out.strip() == "deployment.apps/two created"
    assert kubectl.ok("apply", "-f", v2, "-n", ns).out.strip() == "deployment.apps/two configured"
    assert kubectl.ok("apply", "-f", v2, "-n", ns).out.strip() == "deployment.apps/two unchanged"

    d = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/two").json()
    containers = {c["name"]: c for c in d["spec"]["template"]["spec"]["containers"]}
    assert containers["app"]["image"] == "nginx:1.25"
    assert [p["containerPort"] for p in containers["app"]["ports"]] == [80]
    assert containers["sidecar"]["image"] == "busybox:1.36"
    assert containers["sidecar"]["ports"][0]["containerPort"] == 9000
    assert containers["sidecar"]["ports"][0]["name"] == "metrics"
    last = json.loads(d["metadata"]["annotations"][LAST_APPLIED])
    assert last["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert d["metadata"]["generation"] == 2  # the identical third apply changed nothing


def test_delete_f_removes_what_the_file_describes(kubectl: Kubectl, api: httpx.Client, ns: str, tmp_path: Path) -> None:
    path = _write(tmp_path, "d.yaml", two_container_deployment("gone"))
    kubectl.ok("create", "-f", path, "-n", ns)
    assert kubectl.ok("delete", "-f", path, "-n", ns).out.strip() == 'deployment.apps "gone" deleted'
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/gone").status_code == 404


def test_create_duplicate_is_already_exists(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    path = _write(tmp_path, "p.yaml", pod("dup"))
    kubectl.ok("create", "-f", path, "-n", ns)
    r = kubectl("create", "-f", path, "-n", ns)
    assert r.rc == 1
    assert (
        r.err.strip() == f'Error from server (AlreadyExists): error when creating "{path}": pods "dup" already exists'
    )


def test_create_invalid_pod_prints_the_invalid_message(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    bad = pod("x")
    del bad["spec"]["containers"][0]["image"]
    r = kubectl("create", "-f", _write(tmp_path, "bad.yaml", bad), "-n", ns)
    assert r.rc == 1
    assert r.err.strip() == 'The Pod "x" is invalid: spec.containers[0].image: Required value'


def test_create_from_stdin_with_namespace_in_the_file(kubectl: Kubectl, api: httpx.Client, ns: str) -> None:
    body = pod("fromstdin")
    body["metadata"]["namespace"] = ns
    assert kubectl.ok("create", "-f", "-", stdin=yaml.safe_dump(body)).out.strip() == "pod/fromstdin created"
    assert api.get(f"/api/v1/namespaces/{ns}/pods/fromstdin").status_code == 200
