"""The real kubectl's server-side apply: `apply --server-side`, conflicts, `--force-conflicts`,
the upgrade from client-side apply, and `get -o yaml --show-managed-fields`."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import yaml

from tests.compat.conftest import Kubectl, two_container_deployment


def _write(tmp_path: Path, doc: dict) -> str:
    path = tmp_path / "deploy.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _managers(kubectl: Kubectl, ns: str, name: str) -> dict[str, dict]:
    out = kubectl.ok("get", "deployment", name, "-n", ns, "-o", "yaml", "--show-managed-fields").out
    return {e["manager"]: e for e in yaml.safe_load(out)["metadata"]["managedFields"]}


def test_server_side_apply_conflict_and_force(kubectl: Kubectl, api: httpx.Client, ns: str, tmp_path: Path) -> None:
    manifest = _write(tmp_path, two_container_deployment("web", replicas=2))
    r = kubectl.ok("apply", "--server-side", "-f", manifest, "-n", ns)
    assert r.out.strip() == "deployment.apps/web serverside-applied"
    # Hidden by default, as in kubectl; shown with the flag.
    plain = yaml.safe_load(kubectl.ok("get", "deployment", "web", "-n", ns, "-o", "yaml").out)
    assert "managedFields" not in plain["metadata"]
    mine = _managers(kubectl, ns, "web")["kubectl"]
    assert mine["operation"] == "Apply" and "f:replicas" in mine["fieldsV1"]["f:spec"]

    kubectl.ok("patch", "deployment", "web", "-n", ns, "-p", json.dumps({"spec": {"replicas": 5}}))
    assert _managers(kubectl, ns, "web")["kubectl-patch"]["operation"] == "Update"
    changed = two_container_deployment("web", replicas=3)
    r = kubectl("apply", "--server-side", "-f", _write(tmp_path, changed), "-n", ns)
    assert r.rc != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl-patch" using apps/v1: .spec.replicas' in r.err
    assert "--force-conflicts" in r.err  # kubectl's advice, printed from our 409
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()["spec"]["replicas"] == 5

    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", _write(tmp_path, changed), "-n", ns)
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()["spec"]["replicas"] == 3
    assert "kubectl-patch" not in _managers(kubectl, ns, "web")


def test_client_side_apply_upgrades_to_server_side(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    manifest = _write(tmp_path, two_container_deployment("web", replicas=2))
    kubectl.ok("apply", "-f", manifest, "-n", ns)
    assert _managers(kubectl, ns, "web")["kubectl-client-side-apply"]["operation"] == "Update"
    changed = two_container_deployment("web", app_image="nginx:1.9.1", replicas=4)
    r = kubectl.ok("apply", "--server-side", "-f", _write(tmp_path, changed), "-n", ns)
    assert r.out.strip() == "deployment.apps/web serverside-applied"
    managers = _managers(kubectl, ns, "web")
    assert managers["kubectl"]["operation"] == "Apply"
    assert "f:replicas" in managers["kubectl"]["fieldsV1"]["f:spec"]
    got = yaml.safe_load(kubectl.ok("get", "deployment", "web", "-n", ns, "-o", "yaml").out)
    assert got["spec"]["replicas"] == 4
    assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.9.1"


def test_lightkube_apply_creates_updates_and_reports_conflicts(api: httpx.Client, ns: str, tmp_path: Path) -> None:
    from lightkube import ApiError, KubeConfig
    from lightkube import Client as LightClient
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    server = str(api.base_url).rstrip("/")
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: mini\n  cluster:\n    server: {server}\n"
        "users:\n- name: student\n  user: {}\n"
        "contexts:\n- name: mini\n  context:\n    cluster: mini\n    user: student\n"
        "current-context: mini\n"
    )
    c = LightClient(config=KubeConfig.from_file(path), namespace=ns, field_manager="course-tool")
    made = c.apply(ConfigMap(metadata=ObjectMeta(name="cfg"), data={"mode": "a", "level": "1"}))
    assert made.data == {"mode": "a", "level": "1"}
    assert [(e.manager, e.operation) for e in made.metadata.managedFields] == [("course-tool", "Apply")]
    # Dropping a key from the applied configuration removes it from the object.
    again = c.apply(ConfigMap(metadata=ObjectMeta(name="cfg"), data={"mode": "b"}))
    assert again.data == {"mode": "b"}
    try:
        c.apply(ConfigMap(metadata=ObjectMeta(name="cfg"), data={"mode": "c"}), field_manager="other")
        raise AssertionError("a conflicting apply succeeded")
    except ApiError as exc:
        assert exc.status.code == 409
        assert exc.status.message == 'Apply failed with 1 conflict: conflict with "course-tool": .data.mode'
    forced = c.apply(ConfigMap(metadata=ObjectMeta(name="cfg"), data={"mode": "c"}), field_manager="other", force=True)
    assert forced.data == {"mode": "c"}
